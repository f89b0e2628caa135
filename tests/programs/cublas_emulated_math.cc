// A cuBLAS application that opts into CUDA 13's emulated math, written from NVIDIA's cuBLAS
// documentation: the math modes CUBLAS_FP32_EMULATED_BF16X9_MATH and (CUDA 13)
// CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH, alone, together and with
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, read back as set; the emulated compute types
// CUBLAS_COMPUTE_32F_EMULATED_16BFX9 and CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT through GemmEx,
// GemmBatchedEx, GemmStridedBatchedEx and GemmEx_64; and an accuracy-grading loop over sizes that
// compares every result with a long double host reference against the componentwise bound of a
// native FP32 / FP64 dot product, |c - c*| <= (k + 2) u (sum |a||b| + |beta c|): the promise of
// the emulation (at least native accuracy). A TF32 or BF16 shortcut would miss it by orders of
// magnitude. Built against CUDA 13's and CUDA 12's headers and libraries (12 has no FP64
// emulation).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "check_cublas.h"

namespace {

std::mt19937 rng(24);

template <class T>
std::vector<T> random_matrix(size_t n) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

template <class T>
T* upload(const std::vector<T>& h) {
  T* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> download(const T* d, size_t n) {
  std::vector<T> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// The largest error of C = alpha A B + beta C0 (column-major, no transposes) in units of the
// componentwise bound (k + 2) u (|alpha| sum |a||b| + |beta c0|): at most 1 for a result as
// accurate as native arithmetic of unit roundoff u.
template <class T>
double graded_error(int m, int n, int k, T alpha, const std::vector<T>& A, const std::vector<T>& B,
                    T beta, const std::vector<T>& C0, const std::vector<T>& C, double u) {
  double worst = 0;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      long double exact = 0, mag = 0;
      for (int p = 0; p < k; ++p) {
        const long double prod =
            static_cast<long double>(A[i + size_t(p) * m]) * B[p + size_t(j) * k];
        exact += prod;
        mag += std::fabs(prod);
      }
      const long double c0 = C0[i + size_t(j) * m];
      exact = exact * alpha + beta * c0;
      mag = mag * std::fabs(static_cast<long double>(alpha)) + std::fabs(beta * c0);
      const long double err = std::fabs(static_cast<long double>(C[i + size_t(j) * m]) - exact);
      const long double bound = (k + 2) * u * mag + 1e-300L;
      worst = std::fmax(worst, static_cast<double>(err / bound));
    }
  }
  return worst;
}

void test_math_modes(cublasHandle_t h) {
  cublasMath_t mode = CUBLAS_PEDANTIC_MATH;
  CUBLAS_CHECK(cublasGetMathMode(h, &mode));
  EXPECT_TRUE_MSG(mode == CUBLAS_DEFAULT_MATH, "math mode: CUBLAS_DEFAULT_MATH before any set");
  std::vector<int> modes = {
      CUBLAS_FP32_EMULATED_BF16X9_MATH,
      CUBLAS_FP32_EMULATED_BF16X9_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
      CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
      CUBLAS_PEDANTIC_MATH};
#if CUBLAS_VER_MAJOR >= 13
  modes.push_back(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH);
  modes.push_back(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH |
                  CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  modes.push_back(CUBLAS_FP32_EMULATED_BF16X9_MATH | CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH);
#endif
  for (int m : modes) {
    char what[128];
    std::snprintf(what, sizeof(what), "cublasSetMathMode(%d) is taken and reads back as set", m);
    const cublasStatus_t s = cublasSetMathMode(h, static_cast<cublasMath_t>(m));
    cublasMath_t back = CUBLAS_DEFAULT_MATH;
    CUBLAS_CHECK(cublasGetMathMode(h, &back));
    EXPECT_TRUE_MSG(s == CUBLAS_STATUS_SUCCESS && static_cast<int>(back) == m, what);
  }
  // A value that is no mode: refused, the mode unchanged.
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_FP32_EMULATED_BF16X9_MATH));
  EXPECT_TRUE_MSG(
      cublasSetMathMode(h, static_cast<cublasMath_t>(0x40)) == CUBLAS_STATUS_INVALID_VALUE,
      "cublasSetMathMode(0x40): INVALID_VALUE");
  CUBLAS_CHECK(cublasGetMathMode(h, &mode));
  EXPECT_TRUE_MSG(mode == CUBLAS_FP32_EMULATED_BF16X9_MATH, "a refused mode changes nothing");
  // The mode belongs to its handle.
  cublasHandle_t other = nullptr;
  CUBLAS_CHECK(cublasCreate(&other));
  CUBLAS_CHECK(cublasGetMathMode(other, &mode));
  EXPECT_TRUE_MSG(mode == CUBLAS_DEFAULT_MATH, "a second handle has its own math mode");
  CUBLAS_CHECK(cublasDestroy(other));
}

// One size of the grading loop, FP32: Sgemm under the emulated math mode, GemmEx (and _64) with
// the emulated compute type, a strided batch of 2 and a pointer batch of 2.
double grade_fp32(cublasHandle_t h, int m, int n, int k) {
  const float alpha = 0.75f, beta = -0.5f;
  const auto A = random_matrix<float>(size_t(m) * k), B = random_matrix<float>(size_t(k) * n),
             C0 = random_matrix<float>(size_t(m) * n);
  const size_t cn = C0.size();
  float *dA = upload(A), *dB = upload(B);
  double worst = 0;
  const double u = std::ldexp(1.0, -24);
  auto grade = [&](const std::vector<float>& got) {
    worst = std::fmax(worst, graded_error(m, n, k, alpha, A, B, beta, C0, got, u));
  };
  // Sgemm under CUBLAS_FP32_EMULATED_BF16X9_MATH.
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_FP32_EMULATED_BF16X9_MATH));
  float* dC = upload(C0);
  CUBLAS_CHECK(
      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m, dB, k, &beta, dC, m));
  grade(download(dC, cn));
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  // GemmEx / GemmEx_64 with the emulated compute type.
  CUDA_CHECK(cudaMemcpy(dC, C0.data(), cn * sizeof(float), cudaMemcpyHostToDevice));
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_32F, m, dB,
                            CUDA_R_32F, k, &beta, dC, CUDA_R_32F, m,
                            CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUBLAS_GEMM_DEFAULT));
  grade(download(dC, cn));
  CUDA_CHECK(cudaMemcpy(dC, C0.data(), cn * sizeof(float), cudaMemcpyHostToDevice));
  CUBLAS_CHECK(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_32F, m, dB,
                               CUDA_R_32F, k, &beta, dC, CUDA_R_32F, m,
                               CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUBLAS_GEMM_DEFAULT));
  grade(download(dC, cn));
  // Strided batch of two: the same problem twice.
  float* dC2 = nullptr;
  CUDA_CHECK(cudaMalloc(&dC2, 2 * cn * sizeof(float)));
  for (int b = 0; b < 2; ++b)
    CUDA_CHECK(cudaMemcpy(dC2 + b * cn, C0.data(), cn * sizeof(float), cudaMemcpyHostToDevice));
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA,
                                          CUDA_R_32F, m, 0, dB, CUDA_R_32F, k, 0, &beta, dC2,
                                          CUDA_R_32F, m, static_cast<long long>(cn), 2,
                                          CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUBLAS_GEMM_DEFAULT));
  const auto both = download(dC2, 2 * cn);
  grade(std::vector<float>(both.begin(), both.begin() + cn));
  grade(std::vector<float>(both.begin() + cn, both.end()));
  // Pointer batch of two.
  for (int b = 0; b < 2; ++b)
    CUDA_CHECK(cudaMemcpy(dC2 + b * cn, C0.data(), cn * sizeof(float), cudaMemcpyHostToDevice));
  const void* hA[2] = {dA, dA};
  const void* hB[2] = {dB, dB};
  void* hC[2] = {dC2, dC2 + cn};
  const void** dAp = nullptr;
  const void** dBp = nullptr;
  void** dCp = nullptr;
  CUDA_CHECK(cudaMalloc(&dAp, sizeof(hA)));
  CUDA_CHECK(cudaMalloc(&dBp, sizeof(hB)));
  CUDA_CHECK(cudaMalloc(&dCp, sizeof(hC)));
  CUDA_CHECK(cudaMemcpy(dAp, hA, sizeof(hA), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dBp, hB, sizeof(hB), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dCp, hC, sizeof(hC), cudaMemcpyHostToDevice));
  CUBLAS_CHECK(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dAp, CUDA_R_32F, m,
                                   dBp, CUDA_R_32F, k, &beta, dCp, CUDA_R_32F, m, 2,
                                   CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUBLAS_GEMM_DEFAULT));
  const auto both2 = download(dC2, 2 * cn);
  grade(std::vector<float>(both2.begin(), both2.begin() + cn));
  grade(std::vector<float>(both2.begin() + cn, both2.end()));
  for (void* p : {static_cast<void*>(dA), static_cast<void*>(dB), static_cast<void*>(dC),
                  static_cast<void*>(dC2), static_cast<void*>(dAp), static_cast<void*>(dBp),
                  static_cast<void*>(dCp)})
    CUDA_CHECK(cudaFree(p));
  return worst;
}

#if CUBLAS_VER_MAJOR >= 13
// FP64: Dgemm under CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH and GemmEx with the emulated compute type.
double grade_fp64(cublasHandle_t h, int m, int n, int k) {
  const double alpha = 1.25, beta = 0.5;
  const auto A = random_matrix<double>(size_t(m) * k), B = random_matrix<double>(size_t(k) * n),
             C0 = random_matrix<double>(size_t(m) * n);
  double *dA = upload(A), *dB = upload(B), *dC = upload(C0);
  const double u = std::ldexp(1.0, -53);
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH));
  CUBLAS_CHECK(
      cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m, dB, k, &beta, dC, m));
  double worst = graded_error(m, n, k, alpha, A, B, beta, C0, download(dC, C0.size()), u);
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  CUDA_CHECK(cudaMemcpy(dC, C0.data(), C0.size() * sizeof(double), cudaMemcpyHostToDevice));
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_64F, m, dB,
                            CUDA_R_64F, k, &beta, dC, CUDA_R_64F, m,
                            CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, CUBLAS_GEMM_DEFAULT));
  worst =
      std::fmax(worst, graded_error(m, n, k, alpha, A, B, beta, C0, download(dC, C0.size()), u));
  for (double* p : {dA, dB, dC}) CUDA_CHECK(cudaFree(p));
  return worst;
}
#endif

}  // namespace

int main() {
  cublasHandle_t h = nullptr;
  CUBLAS_CHECK(cublasCreate(&h));
  test_math_modes(h);
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  // The grading loop: sizes from a single element to blocks with ragged edges and long sums.
  const int sizes[][3] = {{1, 1, 1},    {3, 5, 7},     {16, 16, 16},
                          {33, 17, 65}, {64, 48, 200}, {96, 80, 511}};
  std::printf("  %-14s %12s %12s   (largest error / (k+2) u sum|a||b|)\n", "m x n x k", "fp32",
              "fp64");
  for (const auto& s : sizes) {
    const double e32 = grade_fp32(h, s[0], s[1], s[2]);
    double e64 = 0;
#if CUBLAS_VER_MAJOR >= 13
    e64 = grade_fp64(h, s[0], s[1], s[2]);
#endif
    std::printf("  %4d x%4d x%4d %12.4g %12.4g\n", s[0], s[1], s[2], e32, e64);
    char what[160];
    std::snprintf(what, sizeof(what),
                  "%dx%dx%d: every emulated-precision result within the native bound", s[0], s[1],
                  s[2]);
    EXPECT_TRUE_MSG(e32 <= 1.0 && e64 <= 1.0, what);
  }
  CUBLAS_CHECK(cublasDestroy(h));
  return check::Report("cublas_emulated_math");
}
