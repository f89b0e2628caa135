// A cuBLASLt application doing MXFP8 matmuls that produce an MXFP8 result: A and B in
// CUDA_R_8F_E4M3 / _E5M2 with UE8M0 block factors per 32 K elements (VEC32_UE8M0), D in FP8 with
// its own UE8M0 output scales (CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE = VEC32_UE8M0,
// CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER), built against the CUDA 13 and CUDA 12 headers.
// Checked bit for bit against a host reference:
//   x = alpha * sum_l (fa * a)(fb * b) + beta * C, exact here (inputs are multiples of 1/8 no
//       larger than 4, factors 2^-1 .. 2^1, so every sum is exact in fp32 in any order);
//   y = scaleD * x; per 32 consecutive elements of a column of D (a last short block when m is not
//   a multiple of 32): the scale is the smallest power of two 2^s >= amax / Qmax (the fp32
//   quotient; Qmax 448 for E4M3, 57344 for E5M2), its UE8M0 code s + 127 goes to the scale tensor
//   in cuBLASLt's 128 x 4 tiles (the columns of D as tile rows), and D = y / 2^s rounded to the
//   nearest FP8 value (found by search, ties to the even code, saturating).
// Entries of partial tiles past D are left as they were. Also: the attributes read back as set,
// NVFP4's output mode (VEC16_UE4M3) is refused as unsupported, and a non-FP8 D with output scales
// is an invalid value. Under the shim the simulator's muBLASLt computes the FP32 product and the
// shim the output scales (shim/cublasLt/block_scaled.cc).
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

using lt_blocks::fp8_round;
using lt_blocks::fp8_value;
using lt_blocks::tiled;
using lt_blocks::tiled_bytes;
using lt_blocks::upload;

std::mt19937 rng(24);
int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL %s\n", what);
    ++failures;
  }
}

// Random FP8 codes whose values are multiples of 1/8 no larger than 4.
std::vector<uint8_t> random_fp8(size_t n, bool e5m2) {
  std::vector<uint8_t> v(n);
  std::uniform_int_distribution<int> code(0, 255);
  for (auto& x : v) {
    for (;;) {
      const auto c = static_cast<uint8_t>(code(rng));
      const double f = fp8_value(c, e5m2);
      if (std::isfinite(f) && std::fabs(f) <= 4.0 && f * 8 == std::floor(f * 8)) {
        x = c;
        break;
      }
    }
  }
  return v;
}

uint16_t bf16_of(double x) {  // x exact in bf16 here
  const float f = static_cast<float>(x);
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof(u));
  return static_cast<uint16_t>(u >> 16);
}

struct Case {
  const char* name;
  bool b_e5m2, d_e5m2;
  int m, n, k, ldd;
  float alpha, beta, scale_d;  // scale_d 0: D_SCALE_POINTER not set
};

void run(cublasLtHandle_t handle, cudaStream_t stream, const Case& c) {
  std::printf("%s\n", c.name);
  const int kb = (c.k + 31) / 32, db = (c.m + 31) / 32;
  // TN: A stored k x m, B stored k x n (K innermost, as MXFP8 needs).
  const std::vector<uint8_t> A = random_fp8(size_t(c.k) * c.m, false);
  const std::vector<uint8_t> B = random_fp8(size_t(c.k) * c.n, c.b_e5m2);
  std::vector<uint8_t> fa(tiled_bytes(c.m, kb), 127), fb(tiled_bytes(c.n, kb), 127);
  std::uniform_int_distribution<int> e(126, 128);
  for (int r = 0; r < c.m; ++r)
    for (int q = 0; q < kb; ++q) fa[tiled(r, q, kb)] = static_cast<uint8_t>(e(rng));
  for (int r = 0; r < c.n; ++r)
    for (int q = 0; q < kb; ++q) fb[tiled(r, q, kb)] = static_cast<uint8_t>(e(rng));
  std::vector<uint16_t> C(size_t(c.m) * c.n);
  std::uniform_int_distribution<int> cv(-64, 64);
  for (auto& x : C) x = bf16_of(cv(rng) / 8.0);
  const size_t d_bytes = size_t(c.ldd) * c.n, s_bytes = tiled_bytes(c.n, db);
  const std::vector<uint8_t> d_init(d_bytes, 0x5a), s_init(s_bytes, 0xee);

  void* dA = upload(A);
  void* dB = upload(B);
  void* dFa = upload(fa);
  void* dFb = upload(fb);
  void* dC = upload(C);
  void* dD = upload(d_init);
  void* dS = upload(s_init);
  void* dScaleD = upload(std::vector<float>{c.scale_d});

  cublasLtMatmulDesc_t desc = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t opt = CUBLAS_OP_T, opn = CUBLAS_OP_N;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opt, sizeof(opt)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opn, sizeof(opn)));
  const int32_t vec32 = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &dFa,
                                          sizeof(dFa)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &dFb,
                                          sizeof(dFb)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &vec32,
                                          sizeof(vec32)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &vec32,
                                          sizeof(vec32)));
  if (c.scale_d != 0.0f)
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &dScaleD,
                                            sizeof(dScaleD)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, &vec32,
                                          sizeof(vec32)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, &dS,
                                          sizeof(dS)));
  // Read back as set.
  int32_t mode_back = -1;
  void* ptr_back = nullptr;
  size_t written = 0;
  LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, &mode_back,
                                          sizeof(mode_back), &written));
  expect(mode_back == vec32 && written == sizeof(mode_back), "D_OUT_SCALE_MODE reads back");
  LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, &ptr_back,
                                          sizeof(ptr_back), &written));
  expect(ptr_back == dS, "D_OUT_SCALE_POINTER reads back");

  const cudaDataType_t bt = c.b_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
  const cudaDataType_t dt = c.d_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr, ld = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, c.k, c.m, c.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lb, bt, c.k, c.n, c.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, c.m, c.n, c.m));
  LT_CHECK(cublasLtMatrixLayoutCreate(&ld, dt, c.m, c.n, c.ldd));
  // As PyTorch does: the heuristic's first algorithm, then the matmul with it.
  cublasLtMatmulPreference_t pref = nullptr;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  LT_CHECK(
      cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, ld, pref, 1, &heuristic, &found));
  expect(found == 1, "the heuristic offers an algorithm");
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  LT_CHECK(cublasLtMatmul(handle, desc, &c.alpha, dA, la, dB, lb, &c.beta, dC, lc, dD, ld,
                          &heuristic.algo, nullptr, 0, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<uint8_t> D(d_bytes), S(s_bytes);
  CUDA_CHECK(cudaMemcpy(D.data(), dD, d_bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(S.data(), dS, s_bytes, cudaMemcpyDeviceToHost));

  // The reference.
  const double qmax = c.d_e5m2 ? 57344.0 : 448.0;
  const float scale_d = c.scale_d != 0.0f ? c.scale_d : 1.0f;
  std::vector<char> touched(s_bytes, 0);
  int bad_d = 0, bad_s = 0, nonzero_codes = 0;
  for (int j = 0; j < c.n; ++j) {
    std::vector<float> y(size_t(c.m));
    for (int i = 0; i < c.m; ++i) {
      double sum = 0;
      for (int l = 0; l < c.k; ++l)
        sum += fp8_value(A[size_t(i) * c.k + l], false) *
               std::ldexp(1.0, fa[tiled(i, l / 32, kb)] - 127) *
               fp8_value(B[size_t(j) * c.k + l], c.b_e5m2) *
               std::ldexp(1.0, fb[tiled(j, l / 32, kb)] - 127);
      uint32_t u = uint32_t{C[size_t(j) * c.m + i]} << 16;
      float cval = 0;
      std::memcpy(&cval, &u, sizeof(cval));
      const float x = static_cast<float>(c.alpha * sum + c.beta * double(cval));  // exact
      y[size_t(i)] = scale_d * x;
    }
    for (int b = 0; b < db; ++b) {
      float amax = 0;
      for (int i = b * 32; i < c.m && i < b * 32 + 32; ++i)
        amax = std::fmax(amax, std::fabs(y[size_t(i)]));
      const float q = amax / static_cast<float>(qmax);
      int s = -127;
      while (s < 127 && std::ldexp(1.0, s) < double(q)) ++s;
      const uint8_t code = static_cast<uint8_t>(s + 127);
      const size_t at = tiled(j, b, db);
      touched[at] = 1;
      if (S[at] != code) ++bad_s;
      if (code != 0) ++nonzero_codes;
      for (int i = b * 32; i < c.m && i < b * 32 + 32; ++i) {
        const uint8_t want = fp8_round(std::ldexp(double(y[size_t(i)]), -s), c.d_e5m2);
        if (D[size_t(j) * c.ldd + i] != want && bad_d++ < 3)
          std::printf("  D(%d, %d) = 0x%02x, want 0x%02x (y %g, s %d)\n", i, j,
                      D[size_t(j) * c.ldd + i], want, double(y[size_t(i)]), s);
      }
    }
    for (int i = c.m; i < c.ldd; ++i)
      if (D[size_t(j) * c.ldd + i] != 0x5a) ++bad_d;  // past the rows: untouched
  }
  int bad_pad = 0;
  for (size_t i = 0; i < s_bytes; ++i)
    if (!touched[i] && S[i] != 0xee) ++bad_pad;
  expect(bad_d == 0, "D matches the reference bit for bit");
  expect(bad_s == 0, "the UE8M0 output scales match the reference");
  expect(bad_pad == 0, "padding entries of the scale tensor are left as they were");
  expect(nonzero_codes > 0, "the output scales are not all zero");
  std::printf("  %d x %d: D and %d output scales checked\n", c.m, c.n, c.n * db);

  for (auto* l : {la, lb, lc, ld}) LT_CHECK(cublasLtMatrixLayoutDestroy(l));
  LT_CHECK(cublasLtMatmulDescDestroy(desc));
  for (void* p : {dA, dB, dFa, dFb, dC, dD, dS, dScaleD}) CUDA_CHECK(cudaFree(p));
}

void refusals(cublasLtHandle_t handle, cudaStream_t stream) {
  std::printf("refusals\n");
  cublasLtMatmulDesc_t desc = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t vec16 = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
  expect(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, &vec16,
                                        sizeof(vec16)) == CUBLAS_STATUS_NOT_SUPPORTED,
         "NVFP4's output mode (VEC16_UE4M3) is unsupported");
  int32_t mode_back = -1;
  LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, &mode_back,
                                          sizeof(mode_back), nullptr));
  expect(mode_back == CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
         "the default output mode reads back");
  // Output scales with a bf16 D: an invalid value.
  const int32_t vec32 = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
  void* dS = upload(std::vector<uint8_t>(512, 0));
  void* dA = upload(std::vector<uint8_t>(32 * 32, 0x38));
  void* dD = upload(std::vector<uint16_t>(32 * 32, 0));
  const int32_t opt = CUBLAS_OP_T;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opt, sizeof(opt)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, &vec32,
                                          sizeof(vec32)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, &dS,
                                          sizeof(dS)));
  cublasLtMatrixLayout_t l8 = nullptr, l16 = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&l8, CUDA_R_8F_E4M3, 32, 32, 32));
  LT_CHECK(cublasLtMatrixLayoutCreate(&l16, CUDA_R_16BF, 32, 32, 32));
  const float one = 1.0f, zero = 0.0f;
  expect(cublasLtMatmul(handle, desc, &one, dA, l8, dA, l8, &zero, dD, l16, dD, l16, nullptr,
                        nullptr, 0, stream) != CUBLAS_STATUS_SUCCESS,
         "output scales with a bf16 D are refused");
  LT_CHECK(cublasLtMatrixLayoutDestroy(l8));
  LT_CHECK(cublasLtMatrixLayoutDestroy(l16));
  LT_CHECK(cublasLtMatmulDescDestroy(desc));
  for (void* p : {dS, dA, dD}) CUDA_CHECK(cudaFree(p));
}

}  // namespace

int main() {
  cublasLtHandle_t handle = nullptr;
  LT_CHECK(cublasLtCreate(&handle));
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // Fields: name; B E5M2, D E5M2; m, n, k, ldd; alpha, beta, D scale (0: unset).
  const Case cases[] = {
      // Two tile rows of D's columns (n > 128), a short last block (m % 32 = 8), K blocks not a
      // multiple of 4.
      {"mxfp8 e4m3 x e4m3 -> e4m3 with UE8M0 output scales", false, false, 168, 136, 96, 168, 1.0f,
       0.0f, 0.0f},
      // E5M2 D, a D scale, alpha, beta * bf16 C, D's leading dimension past its rows.
      {"mxfp8 e4m3 x e5m2 -> e5m2, D scale, alpha 2, beta 1 (bf16 C), ldd > m", true, true, 64, 40,
       64, 80, 2.0f, 1.0f, 0.25f},
  };
  for (const Case& c : cases) run(handle, stream, c);
  refusals(handle, stream);
  LT_CHECK(cublasLtDestroy(handle));
  CUDA_CHECK(cudaStreamDestroy(stream));
  if (failures != 0) {
    std::printf("FAIL cublaslt_mxfp8_out: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("cublaslt_mxfp8_out: all checks passed\n");
  return 0;
}
