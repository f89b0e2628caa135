// A cuBLASLt application: matrix products the way PyTorch's CUDA backend issues them
// (at::cuda::blas gemm / bgemm / gemm_and_bias): a handle, a matmul descriptor with TRANSA/TRANSB,
// layouts with strided batches, a preference with a workspace limit and buffer alignments, one
// heuristic result, cublasLtMatmul on a stream; fp32, fp16 and bf16 data with fp32 compute;
// bias, ReLU and GELU epilogues. Every result is checked against a host reference computed here
// in double from the same (rounded) inputs. Nothing in it knows about torchada: under the shim it
// runs on the simulator's muBLASLt, and it is correct on NVIDIA hardware too.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check_cublaslt.h"

namespace {

std::mt19937 rng(20240611);

// Element types and their conversions (host-side; the device only sees bytes).
template <class T>
struct Type;
template <>
struct Type<float> {
  static constexpr cudaDataType_t kCuda = CUDA_R_32F;
  static constexpr const char* kName = "fp32";
  static float from(double v) { return static_cast<float>(v); }
  static double to(float v) { return v; }
  static constexpr double kTolerance = 1e-5;
};
template <>
struct Type<__half> {
  static constexpr cudaDataType_t kCuda = CUDA_R_16F;
  static constexpr const char* kName = "fp16";
  static __half from(double v) { return __float2half(static_cast<float>(v)); }
  static double to(__half v) { return __half2float(v); }
  static constexpr double kTolerance = 4e-3;  // one rounding to 11 significant bits, and some
};
template <>
struct Type<__nv_bfloat16> {
  static constexpr cudaDataType_t kCuda = CUDA_R_16BF;
  static constexpr const char* kName = "bf16";
  static __nv_bfloat16 from(double v) { return __float2bfloat16(static_cast<float>(v)); }
  static double to(__nv_bfloat16 v) { return __bfloat162float(v); }
  static constexpr double kTolerance = 3e-2;  // 8 significant bits
};

// Values on a 1/16 grid in [-1, 1]: exact in every type used here.
template <class T>
std::vector<T> random_matrix(size_t n) {
  std::uniform_int_distribution<int> d(-16, 16);
  std::vector<T> v(n);
  for (auto& x : v) x = Type<T>::from(d(rng) / 16.0);
  return v;
}

template <class T>
T* to_device(const std::vector<T>& host) {
  T* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, host.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

enum class Epilogue { kNone, kBias, kRelu, kReluBias, kGelu, kGeluBias };

const char* epilogue_name(Epilogue e) {
  switch (e) {
    case Epilogue::kNone:
      return "default";
    case Epilogue::kBias:
      return "bias";
    case Epilogue::kRelu:
      return "relu";
    case Epilogue::kReluBias:
      return "relu+bias";
    case Epilogue::kGelu:
      return "gelu";
    case Epilogue::kGeluBias:
      return "gelu+bias";
  }
  return "?";
}

cublasLtEpilogue_t lt_epilogue(Epilogue e) {
  switch (e) {
    case Epilogue::kNone:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::kBias:
      return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::kRelu:
      return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::kReluBias:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::kGelu:
      return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::kGeluBias:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

bool has_bias(Epilogue e) {
  return e == Epilogue::kBias || e == Epilogue::kReluBias || e == Epilogue::kGeluBias;
}

// cuBLASLt's GELU is the tanh approximation.
double gelu(double x) {
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

double apply(Epilogue e, double x, double bias) {
  if (has_bias(e)) x += bias;
  switch (e) {
    case Epilogue::kRelu:
    case Epilogue::kReluBias:
      return x > 0 ? x : 0;
    case Epilogue::kGelu:
    case Epilogue::kGeluBias:
      return gelu(x);
    default:
      return x;
  }
}

struct Problem {
  bool ta = false, tb = false;
  int m = 0, n = 0, k = 0;
  int batch = 1;
  float alpha = 1.0f, beta = 0.0f;
  Epilogue epilogue = Epilogue::kNone;
};

// The handle and workspace a PyTorch process keeps per device/stream.
struct Context {
  cublasLtHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  size_t workspace_size = 1 << 20;
};

// Alignment PyTorch reports for a buffer: the largest power of two (up to 256) dividing it.
uint32_t alignment(const void* p) {
  uint32_t a = 1;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  while (a < 256 && addr % (a * 2) == 0) a *= 2;
  return a;
}

template <class T>
void run(Context& ctx, const Problem& p) {
  const std::string what = std::string(Type<T>::kName) + (p.ta ? " T" : " N") + (p.tb ? "T" : "N") +
                           " m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
                           " k=" + std::to_string(p.k) + " batch=" + std::to_string(p.batch) +
                           " epilogue=" + epilogue_name(p.epilogue);
  std::printf("%s\n", what.c_str());
  // Column-major storage; op(A) is m x k, op(B) is k x n, C/D m x n. Leading dimensions padded
  // like views of larger tensors.
  const int a_rows = p.ta ? p.k : p.m, a_cols = p.ta ? p.m : p.k;
  const int b_rows = p.tb ? p.n : p.k, b_cols = p.tb ? p.k : p.n;
  const int lda = a_rows + 3, ldb = b_rows + 1, ldc = p.m + 2;
  // Batch strides with a gap, kept to multiples of 8 elements (16-byte aligned batches, as
  // tensors' storage offsets usually are).
  auto padded = [](int64_t n) { return (n + 8 + 7) / 8 * 8; };
  const int64_t stride_a = padded(static_cast<int64_t>(lda) * a_cols);
  const int64_t stride_b = padded(static_cast<int64_t>(ldb) * b_cols);
  const int64_t stride_c = padded(static_cast<int64_t>(ldc) * p.n);
  const std::vector<T> A = random_matrix<T>(stride_a * p.batch);
  const std::vector<T> B = random_matrix<T>(stride_b * p.batch);
  const std::vector<T> C0 = random_matrix<T>(stride_c * p.batch);
  const std::vector<T> bias = random_matrix<T>(p.m);
  T* dA = to_device(A);
  T* dB = to_device(B);
  T* dC = to_device(C0);
  T* dbias = to_device(bias);

  // at::cuda::blas::bgemm_internal_cublaslt / gemm_and_bias: fp32 compute and scale.
  cublasLtMatmulDesc_t desc = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transa = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t transb = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  LT_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  LT_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  const cublasLtEpilogue_t epilogue = lt_epilogue(p.epilogue);
  if (p.epilogue != Epilogue::kNone) {
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                            sizeof(epilogue)));
  }
  if (has_bias(p.epilogue)) {
    const void* bias_ptr = dbias;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
                                            sizeof(bias_ptr)));
    const cudaDataType_t bias_type = Type<T>::kCuda;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                            sizeof(bias_type)));
  }
  // Read back what was set, as libraries that cache descriptors do.
  int32_t got_transa = -1;
  size_t written = 0;
  LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &got_transa,
                                          sizeof(got_transa), &written));
  EXPECT(got_transa == transa && written == sizeof(int32_t));
  uint32_t got_epilogue = 0;
  LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &got_epilogue,
                                          sizeof(got_epilogue), &written));
  EXPECT(got_epilogue == static_cast<uint32_t>(epilogue));

  cublasLtMatrixLayout_t Adesc = nullptr, Bdesc = nullptr, Cdesc = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&Adesc, Type<T>::kCuda, a_rows, a_cols, lda));
  LT_CHECK(cublasLtMatrixLayoutCreate(&Bdesc, Type<T>::kCuda, b_rows, b_cols, ldb));
  LT_CHECK(cublasLtMatrixLayoutCreate(&Cdesc, Type<T>::kCuda, p.m, p.n, ldc));
  if (p.batch > 1) {
    const int64_t strides[3] = {stride_a, stride_b, stride_c};
    cublasLtMatrixLayout_t layouts[3] = {Adesc, Bdesc, Cdesc};
    for (int i = 0; i < 3; ++i) {
      LT_CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                &p.batch, sizeof(p.batch)));
      LT_CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i],
                                                CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &strides[i], sizeof(strides[i])));
    }
  }
  int32_t order = -1;
  LT_CHECK(cublasLtMatrixLayoutGetAttribute(Adesc, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                            sizeof(order), &written));
  EXPECT(order == CUBLASLT_ORDER_COL);

  cublasLtMatmulPreference_t pref = nullptr;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t max_workspace = ctx.workspace_size;
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &max_workspace, sizeof(max_workspace)));
  const uint32_t align_a = alignment(dA), align_b = alignment(dB), align_c = alignment(dC);
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                &align_a, sizeof(align_a)));
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                &align_b, sizeof(align_b)));
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                &align_c, sizeof(align_c)));
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                &align_c, sizeof(align_c)));

  cublasLtMatmulHeuristicResult_t heuristic = {};
  int returned = 0;
  LT_CHECK(cublasLtMatmulAlgoGetHeuristic(ctx.handle, desc, Adesc, Bdesc, Cdesc, Cdesc, pref, 1,
                                          &heuristic, &returned));
  EXPECT(returned == 1);
  EXPECT(heuristic.state == CUBLAS_STATUS_SUCCESS);
  EXPECT(heuristic.workspaceSize <= ctx.workspace_size);
  if (returned == 1) {
    // D = C in place, as PyTorch's addmm does.
    LT_CHECK(cublasLtMatmul(ctx.handle, desc, &p.alpha, dA, Adesc, dB, Bdesc, &p.beta, dC, Cdesc,
                            dC, Cdesc, &heuristic.algo, ctx.workspace, ctx.workspace_size,
                            ctx.stream));
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const std::vector<T> D = to_host(dC, C0.size());
    double worst = 0;
    bool untouched = true;
    for (int b = 0; b < p.batch; ++b) {
      for (int j = 0; j < p.n; ++j) {
        for (int i = 0; i < p.m; ++i) {
          double acc = 0;
          for (int l = 0; l < p.k; ++l) {
            const double a =
                Type<T>::to(A[b * stride_a + (p.ta ? i * static_cast<int64_t>(lda) + l
                                                   : l * static_cast<int64_t>(lda) + i)]);
            const double bv =
                Type<T>::to(B[b * stride_b + (p.tb ? l * static_cast<int64_t>(ldb) + j
                                                   : j * static_cast<int64_t>(ldb) + l)]);
            acc += a * bv;
          }
          const int64_t ci = b * stride_c + j * static_cast<int64_t>(ldc) + i;
          const double x = p.alpha * acc + p.beta * Type<T>::to(C0[ci]);
          const double want = apply(p.epilogue, x, Type<T>::to(bias[i]));
          const double got = Type<T>::to(D[ci]);
          const double err = std::fabs(got - want) / (1.0 + std::fabs(want));
          if (err > worst) worst = err;
        }
        // Rows between m and ldc (the padding) are not part of D.
        for (int i = p.m; i < ldc; ++i) {
          const int64_t ci = b * stride_c + j * static_cast<int64_t>(ldc) + i;
          if (std::memcmp(&D[ci], &C0[ci], sizeof(T)) != 0) untouched = false;
        }
      }
    }
    // NVIDIA's GELU may use a faster tanh than the host's: a looser bound for fp32 there.
    const bool gelu_epilogue = p.epilogue == Epilogue::kGelu || p.epilogue == Epilogue::kGeluBias;
    const double tolerance =
        gelu_epilogue && Type<T>::kTolerance < 1e-4 ? 1e-4 : Type<T>::kTolerance;
    std::printf("  max relative error %.3g (tolerance %.3g)\n", worst, tolerance);
    EXPECT(worst <= tolerance);
    EXPECT(untouched);
  }
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  LT_CHECK(cublasLtMatrixLayoutDestroy(Cdesc));
  LT_CHECK(cublasLtMatrixLayoutDestroy(Bdesc));
  LT_CHECK(cublasLtMatrixLayoutDestroy(Adesc));
  LT_CHECK(cublasLtMatmulDescDestroy(desc));
  CUDA_CHECK(cudaFree(dbias));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dA));
}

}  // namespace

int main() {
  std::printf("cuBLASLt %zu (header %d), CUDA runtime %zu\n", cublasLtGetVersion(), CUBLAS_VERSION,
              cublasLtGetCudartVersion());
  EXPECT(cublasLtGetVersion() / 10000 == CUBLAS_VER_MAJOR);

  Context ctx;
  LT_CHECK(cublasLtCreate(&ctx.handle));
  CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaMalloc(&ctx.workspace, ctx.workspace_size));

  Problem p;
  // Plain products in every transpose combination PyTorch issues (row-major tensors are
  // transposed column-major matrices).
  for (int t = 0; t < 4; ++t) {
    p = Problem{};
    p.ta = (t & 1) != 0;
    p.tb = (t & 2) != 0;
    p.m = 37;
    p.n = 23;
    p.k = 19;
    p.alpha = 1.5f;
    p.beta = 0.5f;
    run<float>(ctx, p);
  }
  p = Problem{};
  p.ta = true;
  p.m = 64;
  p.n = 48;
  p.k = 40;
  run<__half>(ctx, p);
  p.ta = false;
  p.tb = true;
  p.beta = 1.0f;
  run<__nv_bfloat16>(ctx, p);

  // Strided batches (bmm / baddbmm).
  p = Problem{};
  p.tb = true;
  p.m = 17;
  p.n = 29;
  p.k = 13;
  p.batch = 3;
  p.beta = 0.25f;
  run<float>(ctx, p);
  p.ta = true;
  p.tb = false;
  run<__half>(ctx, p);
  run<__nv_bfloat16>(ctx, p);

  // Epilogues (addmm with bias, the fused linear + activation paths).
  const Epilogue epilogues[] = {Epilogue::kBias, Epilogue::kRelu, Epilogue::kReluBias,
                                Epilogue::kGelu, Epilogue::kGeluBias};
  for (Epilogue e : epilogues) {
    p = Problem{};
    p.ta = true;
    p.m = 33;
    p.n = 21;
    p.k = 27;
    p.epilogue = e;
    run<float>(ctx, p);
    run<__half>(ctx, p);
    run<__nv_bfloat16>(ctx, p);
  }

  CUDA_CHECK(cudaFree(ctx.workspace));
  CUDA_CHECK(cudaStreamDestroy(ctx.stream));
  LT_CHECK(cublasLtDestroy(ctx.handle));
  return check::Report("cublaslt_matmul");
}
