// A cuBLASLt application doing FP8 matmuls the way PyTorch's torch._scaled_mm and Transformer
// Engine do (A and B in CUDA_R_8F_E4M3 / _E5M2, fp32 compute, per-tensor or outer-vector scales in
// device memory, AMAX_D with an FP8 D, FP8 or 16/32-bit D, a bias epilogue), built twice: against
// NVIDIA's CUDA 13 and CUDA 12 headers and libraries (libcublasLt.so.13 / .12), so each ABI's
// exports serve it. Every result is checked bit for bit against a host reference that decodes the
// FP8 inputs by their definition and rounds D by searching the format's values (independent of the
// library's tables and bit arithmetic): the inputs are multiples of 1/8 small enough that every sum
// is exact in fp32, so the only rounding is D's. Also: the heuristic offers an algorithm for FP8,
// FAST_ACCUM is accepted, MXFP8 block factors (VEC32_UE8M0) apply per 32 K elements, E5M2 x E5M2 is
// refused as cuBLASLt refuses it, and NVFP4's scale mode (VEC16_UE4M3) is taken on the descriptor.
// Under the shim it runs on the simulator's muBLASLt; it runs natively on NVIDIA GPUs too (checked
// on an H100), where MXFP8 needs compute capability 10.0 and NVFP4's mode is taken on the
// descriptor.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "check_cublaslt.h"
#include "lt_blocks.h"

namespace {

using lt_blocks::download;
using lt_blocks::fp8_round;
using lt_blocks::fp8_value;
using lt_blocks::upload;

std::mt19937 rng(8);

// ---- Host codecs

uint16_t bf16_round(double x) {  // exact x in float here (see the file comment), then RNE
  const float f = static_cast<float>(x);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

double bf16_value(uint16_t b) {
  const uint32_t u = uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

size_t type_size(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F:
      return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    default:
      return 1;
  }
}

// Element i of a host buffer of type t, and the nearest value of type t.
double value_at(const std::vector<uint8_t>& buf, cudaDataType_t t, size_t i) {
  const uint8_t* p = buf.data() + i * type_size(t);
  switch (t) {
    case CUDA_R_32F: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case CUDA_R_16F: {
      _Float16 h;
      std::memcpy(&h, p, 2);
      return static_cast<double>(h);
    }
    case CUDA_R_16BF: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return bf16_value(b);
    }
    default:
      return fp8_value(*p, t == CUDA_R_8F_E5M2);
  }
}

void put(std::vector<uint8_t>& buf, cudaDataType_t t, size_t i, double v) {
  uint8_t* p = buf.data() + i * type_size(t);
  switch (t) {
    case CUDA_R_32F: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case CUDA_R_16F: {
      const _Float16 h = static_cast<_Float16>(v);
      std::memcpy(p, &h, 2);
      break;
    }
    case CUDA_R_16BF: {
      const uint16_t b = bf16_round(v);
      std::memcpy(p, &b, 2);
      break;
    }
    default:
      *p = fp8_round(v, t == CUDA_R_8F_E5M2);
      break;
  }
}

// n random values of type t that are multiples of 1/8 with |v| <= 8 (exact in every type here).
std::vector<uint8_t> random_values(cudaDataType_t t, size_t n) {
  std::uniform_int_distribution<int> d(-64, 64);
  std::vector<uint8_t> buf(n * type_size(t));
  for (size_t i = 0; i < n; ++i) {
    for (;;) {
      const double v = d(rng) / 8.0;
      put(buf, t, i, v);
      if (value_at(buf, t, i) == v) break;  // representable: keep it
    }
  }
  return buf;
}

// ---- Device buffers

// ---- One FP8 matmul and its reference

struct Case {
  const char* name;
  cudaDataType_t a_type, b_type, c_type, d_type;
  bool ta, tb;  // op(A) = A^T: A stored k x m; op(B) = B^T: B stored n x k
  int m, n, k, batch;
  float alpha, beta;
  // Scales: empty = not set; one value = SCALAR_32F; m (A) or n (B) values = OUTER_VEC_32F.
  std::vector<float> scale_a, scale_b, scale_c, scale_d;
  cublasLtEpilogue_t epilogue;
  cudaDataType_t bias_type;  // with a bias epilogue
  bool alpha_on_device;      // CUBLASLT_POINTER_MODE_DEVICE (PyTorch's alpha tensors)
  bool fast_accum;
  bool mx;  // MXFP8: A and B scaled per 32 K elements by UE8M0 factors (VEC32_UE8M0)
};

// MXFP8 block factors of an operand with `outer` rows (of op(A), or columns of op(B)) and k
// elements each: random exponents around 2^0, placed in cuBLASLt's 128 x 4 tiles (documented with
// the mode; PyTorch's to_blocked() builds the same layout).
struct BlockFactors {
  int outer = 0, k_blocks = 0;
  std::vector<uint8_t> tiled;
  BlockFactors(int outer_, int k) : outer(outer_), k_blocks((k + 31) / 32) {
    const int row_tiles = (outer + 127) / 128, col_tiles = (k_blocks + 3) / 4;
    tiled.assign(size_t(row_tiles) * col_tiles * 512, 127);
    std::uniform_int_distribution<int> e(126, 128);
    for (int r = 0; r < outer; ++r)
      for (int c = 0; c < k_blocks; ++c) tiled[offset(r, c)] = static_cast<uint8_t>(e(rng));
  }
  size_t offset(int r, int c) const {
    const int tile = (r / 128) * ((k_blocks + 3) / 4) + c / 4;  // tiles of 128 rows x 4 blocks
    return size_t(tile) * 512 + size_t(r % 32) * 16 + size_t(r % 128 / 32) * 4 + size_t(c % 4);
  }
  double factor(int r, int q) const { return std::ldexp(1.0, tiled[offset(r, q / 32)] - 127); }
};

cublasLtMatrixLayout_t layout(cudaDataType_t t, int rows, int cols, int batch) {
  cublasLtMatrixLayout_t l = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&l, t, rows, cols, rows));
  const int32_t count = batch;
  const int64_t stride = int64_t{rows} * cols;
  LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                            sizeof(count)));
  LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                            sizeof(stride)));
  return l;
}

bool is_fp8(cudaDataType_t t) { return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2; }

void set_scale(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t ptr_attr,
               cublasLtMatmulDescAttributes_t mode_attr, const std::vector<float>& s,
               size_t vec_len, std::vector<void*>& allocations) {
  if (s.empty()) return;
  void* d = upload(s);
  allocations.push_back(d);
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, ptr_attr, &d, sizeof(d)));
  const int32_t mode = s.size() == vec_len && vec_len > 1
                           ? CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
                           : CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, mode_attr, &mode, sizeof(mode)));
}

// What NVIDIA's cuBLASLt refuses with CUBLAS_STATUS_NOT_SUPPORTED before compute capability 10.0
// (seen on an H100, cuBLAS 13.1), where torchada computes it: FP8 other than TN, MXFP8 block
// scaling, outer-vector scales with a batch. The check's text, or nullptr.
const char* nvidia_refuses(const Case& c) {
  if (!check::NvidiaDevice() || check::ComputeCapability() >= 100) return nullptr;
  if (c.mx) return "MXFP8 before compute capability 10.0: CUBLAS_STATUS_NOT_SUPPORTED";
  if (!c.ta || c.tb) return "FP8 other than TN before 10.0: CUBLAS_STATUS_NOT_SUPPORTED";
  if (c.batch > 1 && (c.scale_a.size() > 1 || c.scale_b.size() > 1))
    return "outer-vector scales with a batch before 10.0: CUBLAS_STATUS_NOT_SUPPORTED";
  return nullptr;
}

void run(cublasLtHandle_t handle, cudaStream_t stream, const Case& c) {
  std::printf("%s\n", c.name);
  const int a_rows = c.ta ? c.k : c.m, a_cols = c.ta ? c.m : c.k;
  const int b_rows = c.tb ? c.n : c.k, b_cols = c.tb ? c.k : c.n;
  const size_t a_n = size_t(a_rows) * a_cols * c.batch, b_n = size_t(b_rows) * b_cols * c.batch;
  const size_t d_n = size_t(c.m) * c.n * c.batch;
  const std::vector<uint8_t> A = random_values(c.a_type, a_n), B = random_values(c.b_type, b_n);
  const std::vector<uint8_t> C = random_values(c.c_type, d_n);
  const bool bias_on = c.epilogue != CUBLASLT_EPILOGUE_DEFAULT;
  const std::vector<uint8_t> bias = random_values(c.bias_type, size_t(c.m));
  std::vector<void*> allocations;
  void* dA = upload(A);
  void* dB = upload(B);
  void* dC = upload(C);
  void* dD = upload(std::vector<uint8_t>(d_n * type_size(c.d_type), 0x5a));
  void* dBias = upload(bias);
  float* dAmax = static_cast<float*>(upload(std::vector<float>{-1.0f}));
  allocations = {dA, dB, dC, dD, dBias, dAmax};

  cublasLtMatmulDesc_t desc = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t opa = c.ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = c.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
  const BlockFactors fa(c.m, c.k), fb(c.n, c.k);
  if (c.mx) {
    const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    void* da = upload(fa.tiled);
    void* db = upload(fb.tiled);
    allocations.push_back(da);
    allocations.push_back(db);
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &da,
                                            sizeof(da)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &db,
                                            sizeof(db)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode,
                                            sizeof(mode)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode,
                                            sizeof(mode)));
  }
  set_scale(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
            c.scale_a, size_t(c.m), allocations);
  set_scale(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
            c.scale_b, size_t(c.n), allocations);
  set_scale(desc, CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_C_SCALE_MODE,
            c.scale_c, 1, allocations);
  set_scale(desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_MODE,
            c.scale_d, 1, allocations);
  // AMAX_D (and a D scale) only with an FP8 D: cuBLASLt answers CUBLAS_STATUS_INVALID_VALUE
  // otherwise (seen on an H100), and PyTorch sets neither for a 16/32-bit result.
  if (is_fp8(c.d_type))
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &dAmax,
                                            sizeof(dAmax)));
  const int8_t fast = c.fast_accum ? 1 : 0;
  LT_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
  if (bias_on) {
    const uint32_t epi = c.epilogue;
    const int32_t bt = c.bias_type;
    LT_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dBias,
                                            sizeof(dBias)));
    LT_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)));
  }
  const void* alpha = &c.alpha;
  const void* beta = &c.beta;
  if (c.alpha_on_device) {
    const int32_t mode = CUBLASLT_POINTER_MODE_DEVICE;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode,
                                            sizeof(mode)));
    alpha = upload(std::vector<float>{c.alpha});
    beta = upload(std::vector<float>{c.beta});
    allocations.push_back(const_cast<void*>(alpha));
    allocations.push_back(const_cast<void*>(beta));
  }
  cublasLtMatrixLayout_t la = layout(c.a_type, a_rows, a_cols, c.batch);
  cublasLtMatrixLayout_t lb = layout(c.b_type, b_rows, b_cols, c.batch);
  cublasLtMatrixLayout_t lc = layout(c.c_type, c.m, c.n, c.batch);
  cublasLtMatrixLayout_t ld = layout(c.d_type, c.m, c.n, c.batch);

  cublasLtMatmulPreference_t pref = nullptr;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t result = {};
  int returned = 0;
  const cublasStatus_t heuristic =
      cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, ld, pref, 1, &result, &returned);
  if (const char* refused = nvidia_refuses(c)) {
    EXPECT_TRUE_MSG(heuristic == CUBLAS_STATUS_NOT_SUPPORTED && returned == 0, refused);
    for (cublasLtMatrixLayout_t l : {la, lb, lc, ld}) LT_CHECK(cublasLtMatrixLayoutDestroy(l));
    LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    LT_CHECK(cublasLtMatmulDescDestroy(desc));
    for (void* p : allocations) CUDA_CHECK(cudaFree(p));
    return;
  }
  LT_CHECK(heuristic);
  EXPECT_TRUE_MSG(returned == 1, "the heuristic offers an algorithm");
  LT_CHECK(cublasLtMatmul(handle, desc, alpha, dA, la, dB, lb, beta, dC, lc, dD, ld, &result.algo,
                          nullptr, 0, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<uint8_t> D = download(dD, d_n * type_size(c.d_type));
  float amax = 0;
  CUDA_CHECK(cudaMemcpy(&amax, dAmax, sizeof(amax), cudaMemcpyDeviceToHost));

  // Reference: x = alpha (sA op(A)) (sB op(B)) + beta sC C + bias, amax = max |x|, D = sD x.
  const auto scalar = [](const std::vector<float>& s) { return s.empty() ? 1.0 : double(s[0]); };
  const bool a_vec = c.scale_a.size() > 1, b_vec = c.scale_b.size() > 1;
  double want_amax = 0;
  int mismatches = 0, saturated = 0;
  for (int bi = 0; bi < c.batch; ++bi)
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.m; ++i) {
        double acc = 0;
        for (int q = 0; q < c.k; ++q) {
          const size_t ai = size_t(bi) * a_rows * a_cols +
                            (c.ta ? q + size_t(i) * a_rows : i + size_t(q) * a_rows);
          const size_t bj = size_t(bi) * b_rows * b_cols +
                            (c.tb ? j + size_t(q) * b_rows : q + size_t(j) * b_rows);
          const double f = c.mx ? fa.factor(i, q) * fb.factor(j, q) : 1.0;
          acc += value_at(A, c.a_type, ai) * value_at(B, c.b_type, bj) * f;
        }
        const size_t di = size_t(bi) * c.m * c.n + i + size_t(j) * c.m;
        const double sa = a_vec ? c.scale_a[size_t(i)] : scalar(c.scale_a);
        const double sb = b_vec ? c.scale_b[size_t(j)] : scalar(c.scale_b);
        double x = c.alpha * sa * sb * acc;
        if (c.beta != 0) x += c.beta * scalar(c.scale_c) * value_at(C, c.c_type, di);
        if (bias_on) x += value_at(bias, c.bias_type, size_t(i));
        if (c.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS && x < 0) x = 0;
        want_amax = std::fmax(want_amax, std::fabs(x));
        if (is_fp8(c.d_type)) x *= scalar(c.scale_d);
        std::vector<uint8_t> one(type_size(c.d_type));
        put(one, c.d_type, 0, x);
        const double want = value_at(one, c.d_type, 0), got = value_at(D, c.d_type, di);
        const double largest = c.d_type == CUDA_R_8F_E5M2 ? 57344.0 : 448.0;
        if (is_fp8(c.d_type) && std::fabs(x) > largest) ++saturated;
        if (!(got == want)) {
          if (++mismatches <= 5)
            std::printf("    D(%d,%d,%d): got %g, want %g (x = %g)\n", bi, i, j, got, want, x);
        }
      }
  EXPECT_TRUE_MSG(mismatches == 0, "D equals the host reference bit for bit");
  if (is_fp8(c.d_type))
    EXPECT_TRUE_MSG(amax == float(want_amax), "AMAX_D is max |D| before D's scale");
  if (is_fp8(c.d_type) && !c.scale_d.empty() && c.scale_d[0] > 64)
    EXPECT_TRUE_MSG(saturated > 0, "some outputs saturated at the format's largest value");

  for (cublasLtMatrixLayout_t l : {la, lb, lc, ld}) LT_CHECK(cublasLtMatrixLayoutDestroy(l));
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  LT_CHECK(cublasLtMatmulDescDestroy(desc));
  for (void* p : allocations) CUDA_CHECK(cudaFree(p));
}

// Refusals: E5M2 x E5M2 (cuBLASLt has no such kernel); NVFP4's scale mode (VEC16_UE4M3) taken on
// the descriptor.
void refusals(cublasLtHandle_t handle) {
  std::printf("refusals\n");
  cublasLtMatmulDesc_t desc = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t la = layout(CUDA_R_8F_E5M2, 32, 16, 1);
  cublasLtMatrixLayout_t lb = layout(CUDA_R_8F_E5M2, 32, 16, 1);
  cublasLtMatrixLayout_t lc = layout(CUDA_R_16BF, 16, 16, 1);
  const int32_t t = CUBLAS_OP_T;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));
  cublasLtMatmulPreference_t pref = nullptr;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t result = {};
  int returned = -1;
  const cublasStatus_t s =
      cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, lc, pref, 1, &result, &returned);
  std::printf("  E5M2 x E5M2: the heuristic answers %s, %d algorithm(s)\n",
              cublasLtGetStatusName(s), returned);
  // No algorithm: torchada's count is 0, NVIDIA's cuBLASLt leaves it as it was (-1 here).
  EXPECT_TRUE_MSG(s == CUBLAS_STATUS_NOT_SUPPORTED && returned <= 0,
                  "E5M2 x E5M2: CUBLAS_STATUS_NOT_SUPPORTED, no algorithm");
  // NVFP4's mode is taken on the descriptor and read back as set (as NVIDIA's cuBLASLt does; the
  // NVFP4 matmuls themselves are cublaslt_nvfp4's).
  const int32_t nv = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
  LT_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &nv, sizeof(nv)));
  int32_t mode = -1;
  LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode,
                                          sizeof(mode), nullptr));
  EXPECT_TRUE_MSG(mode == CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3,
                  "CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 reads back as set");
  for (cublasLtMatrixLayout_t l : {la, lb, lc}) LT_CHECK(cublasLtMatrixLayoutDestroy(l));
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  LT_CHECK(cublasLtMatmulDescDestroy(desc));
}

}  // namespace

int main() {
  cublasLtHandle_t handle = nullptr;
  LT_CHECK(cublasLtCreate(&handle));
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const auto kNone = CUBLASLT_EPILOGUE_DEFAULT;
  // Fields: name; A, B, C, D types; op(A) = A^T, op(B) = B^T; m, n, k, batch; alpha, beta;
  // scales of A, B, C, D; epilogue, bias type; alpha in device memory, FAST_ACCUM, MXFP8.
  // The TN cases keep every leading dimension a multiple of 16 bytes, as NVIDIA's FP8 kernels
  // need (seen on an H100: m = 17 with an FP8 D is CUBLAS_STATUS_NOT_SUPPORTED there).
  // clang-format off
  const Case cases[] = {
      // PyTorch's tensorwise _scaled_mm: TN, bf16 out, device scales.
      {"e4m3 x e4m3 -> bf16, TN, scalar scales",
       CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF, true, false, 24, 16, 32, 1,
       1.0f, 0.0f, {0.5f}, {4.0f}, {}, {}, kNone, CUDA_R_16BF, false, false, false},
      // The same with FAST_ACCUM (PyTorch's use_fast_accum=True): the same bits.
      {"e4m3 x e4m3 -> bf16, FAST_ACCUM",
       CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF, true, false, 24, 16, 32, 1,
       1.0f, 0.0f, {0.5f}, {4.0f}, {}, {}, kNone, CUDA_R_16BF, false, true, false},
      // FP8 out with a D scale that saturates, C scaled and added, an fp16 bias.
      {"e4m3 x e5m2 -> e4m3 (saturating), C fp16 scaled, bias fp16, TN",
       CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_16F, CUDA_R_8F_E4M3, true, false, 32, 9, 16, 1,
       1.0f, 1.0f, {2.0f}, {0.25f}, {0.5f}, {128.0f}, CUBLASLT_EPILOGUE_BIAS, CUDA_R_16F, false,
       false, false},
      // E5M2 out: saturation at 57344 and values below its smallest normal; NN (not TN).
      {"e5m2 x e4m3 -> e5m2, NN, D scale",
       CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_8F_E5M2, false, false, 8, 12, 8, 1,
       1.0f, 0.0f, {}, {}, {}, {1024.0f}, kNone, CUDA_R_16BF, false, false, false},
      {"e5m2 x e4m3 -> e5m2, tiny D scale (subnormals)",
       CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_8F_E5M2, false, false, 8, 12, 8, 1,
       1.0f, 0.0f, {}, {}, {}, {1.0f / 65536}, kNone, CUDA_R_16BF, false, false, false},
      // PyTorch's rowwise _scaled_mm: outer-vector scales, fp32 out, ReLU + bf16 bias, batched,
      // alpha in device memory.
      {"e5m2 x e4m3 -> fp32, outer-vector scales, RELU_BIAS bf16, TN, device alpha",
       CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_32F, CUDA_R_32F, true, false, 8, 5, 16, 1,
       0.75f, 0.0f, {0.5f, 1.0f, 2.0f, 0.25f, 4.0f, 1.0f, 0.5f, 2.0f},
       {2.0f, 0.5f, 1.0f, 8.0f, 0.125f}, {}, {}, CUBLASLT_EPILOGUE_RELU_BIAS, CUDA_R_16BF, true,
       false, false},
      {"e5m2 x e4m3 -> fp32, outer-vector scales, RELU_BIAS bf16, batch 2, TN, device alpha",
       CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_32F, CUDA_R_32F, true, false, 8, 5, 16, 2,
       0.75f, 0.0f, {0.5f, 1.0f, 2.0f, 0.25f, 4.0f, 1.0f, 0.5f, 2.0f},
       {2.0f, 0.5f, 1.0f, 8.0f, 0.125f}, {}, {}, CUBLASLT_EPILOGUE_RELU_BIAS, CUDA_R_16BF, true,
       false, false},
      // MXFP8 (PyTorch's float8_e8m0fnu block scales): TN, more than 128 rows (two row tiles),
      // K blocks not a multiple of 4 (padded tiles), bf16 out.
      {"mxfp8: e4m3 x e4m3 -> bf16, VEC32_UE8M0 block factors, TN",
       CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF, true, false, 136, 40, 96, 1,
       1.0f, 0.0f, {}, {}, {}, {}, kNone, CUDA_R_16BF, false, false, true},
  };
  // clang-format on
  for (const Case& c : cases) run(handle, stream, c);
  refusals(handle);
  CUDA_CHECK(cudaStreamDestroy(stream));
  LT_CHECK(cublasLtDestroy(handle));
  return check::Report("cublaslt_fp8");
}
