// A cuBLAS application: the v2 API the way libraries use it (a handle bound to a stream, host and
// device pointer modes, level 1/2/3 routines, the GemmEx family with half and bfloat16 inputs,
// batched LU, a _64 entry point), every result checked against a host reference computed here.
// Nothing in it knows about torchada: under the shim it runs on the simulator's muBLAS.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "check_cublas.h"

namespace {

std::mt19937 rng(1234);

template <class T>
std::vector<T> random_vector(size_t n) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
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

// Column-major reference: C = alpha op(A) op(B) + beta C.
template <class T>
void ref_gemm(bool ta, bool tb, int m, int n, int k, double alpha, const std::vector<T>& A, int lda,
              const std::vector<T>& B, int ldb, double beta, std::vector<double>& C, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        double a = ta ? double(A[p + i * lda]) : double(A[i + p * lda]);
        double b = tb ? double(B[j + p * ldb]) : double(B[p + j * ldb]);
        acc += a * b;
      }
      C[i + j * ldc] = alpha * acc + beta * C[i + j * ldc];
    }
}

template <class T>
double max_error(const std::vector<T>& got, const std::vector<double>& want) {
  double e = 0;
  for (size_t i = 0; i < got.size(); ++i) e = std::fmax(e, std::fabs(double(got[i]) - want[i]));
  return e;
}

void test_sgemm(cublasHandle_t h) {
  const int m = 37, n = 29, k = 41;
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    const int lda = ta ? k : m, ldb = tb ? n : k, ldc = m;
    auto A = random_vector<float>(size_t(lda) * (ta ? m : k));
    auto B = random_vector<float>(size_t(ldb) * (tb ? k : n));
    auto C = random_vector<float>(size_t(ldc) * n);
    std::vector<double> want(C.begin(), C.end());
    const float alpha = 1.5f, beta = -0.5f;
    ref_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, want, ldc);
    float *dA = to_device(A), *dB = to_device(B), *dC = to_device(C);
    CUBLAS_CHECK(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m,
                             n, k, &alpha, dA, lda, dB, ldb, &beta, dC, ldc));
    auto got = to_host(dC, C.size());
    char what[64];
    std::snprintf(what, sizeof what, "sgemm %c%c matches the reference", ta ? 'T' : 'N',
                  tb ? 'T' : 'N');
    EXPECT_TRUE_MSG(max_error(got, want) < 1e-4, what);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
  }
}

void test_dgemm_64(cublasHandle_t h) {
  const int64_t m = 16, n = 12, k = 8;
  auto A = random_vector<double>(m * k), B = random_vector<double>(k * n);
  std::vector<double> C(m * n, 0.0), want(m * n, 0.0);
  ref_gemm(false, false, int(m), int(n), int(k), 1.0, A, int(m), B, int(k), 0.0, want, int(m));
  double *dA = to_device(A), *dB = to_device(B), *dC = to_device(C);
  const double one = 1.0, zero = 0.0;
  CUBLAS_CHECK(
      cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dC, m));
  EXPECT_TRUE_MSG(max_error(to_host(dC, C.size()), want) < 1e-12, "dgemm_64 matches the reference");
  // A size beyond 32 bits cannot reach muBLAS: refused, nothing written.
  cublasStatus_t s = cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, int64_t(1) << 33, n, k, &one, dA,
                                    int64_t(1) << 33, dB, k, &zero, dC, m);
  EXPECT_TRUE_MSG(s != CUBLAS_STATUS_SUCCESS, "dgemm_64 with m = 2^33 is not reported as done");
  cudaFree(dA), cudaFree(dB), cudaFree(dC);
}

void test_level1(cublasHandle_t h, cudaStream_t stream) {
  const int n = 1000;
  auto x = random_vector<float>(n), y = random_vector<float>(n);
  double dot = 0, nrm = 0;
  int amax = 0;
  for (int i = 0; i < n; ++i) {
    dot += double(x[i]) * y[i];
    nrm += double(x[i]) * x[i];
    if (std::fabs(x[i]) > std::fabs(x[amax])) amax = i;
  }
  float *dx = to_device(x), *dy = to_device(y);
  float result = 0;
  CUBLAS_CHECK(cublasSdot(h, n, dx, 1, dy, 1, &result));  // host pointer mode: blocking
  EXPECT_TRUE_MSG(std::fabs(result - dot) < 1e-3, "sdot (host pointer mode)");
  CUBLAS_CHECK(cublasSnrm2(h, n, dx, 1, &result));
  EXPECT_TRUE_MSG(std::fabs(result - std::sqrt(nrm)) < 1e-3, "snrm2");
  int idx = 0;
  CUBLAS_CHECK(cublasIsamax(h, n, dx, 1, &idx));
  EXPECT_TRUE_MSG(idx == amax + 1, "isamax (1-based)");
  int64_t idx64 = 0;
  CUBLAS_CHECK(cublasIsamax_64(h, n, dx, 1, &idx64));
  EXPECT_TRUE_MSG(idx64 == amax + 1, "isamax_64 widens the 32-bit result");

  // Device pointer mode: the result lands in device memory, in stream order.
  float* d_result = nullptr;
  CUDA_CHECK(cudaMalloc(&d_result, sizeof(float)));
  CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  CUBLAS_CHECK(cublasGetPointerMode(h, &mode));
  EXPECT_TRUE_MSG(mode == CUBLAS_POINTER_MODE_DEVICE, "pointer mode reads back as set");
  CUBLAS_CHECK(cublasSdot(h, n, dx, 1, dy, 1, d_result));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  float dev_dot = 0;
  CUDA_CHECK(cudaMemcpy(&dev_dot, d_result, sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_TRUE_MSG(std::fabs(dev_dot - dot) < 1e-3, "sdot (device pointer mode)");
  CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));

  const float alpha = 0.25f;
  CUBLAS_CHECK(cublasSaxpy(h, n, &alpha, dx, 1, dy, 1));
  auto got = to_host(dy, n);
  double err = 0;
  for (int i = 0; i < n; ++i) err = std::fmax(err, std::fabs(got[i] - (y[i] + alpha * x[i])));
  EXPECT_TRUE_MSG(err < 1e-6, "saxpy");
  cudaFree(dx), cudaFree(dy), cudaFree(d_result);
}

void test_gemv_and_trsm(cublasHandle_t h) {
  const int m = 20, n = 15;
  auto A = random_vector<double>(m * n), x = random_vector<double>(m);
  std::vector<double> want(n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) want[j] += A[i + j * m] * x[i];  // y = A^T x
  double *dA = to_device(A), *dx = to_device(x), *dy = nullptr;
  CUDA_CHECK(cudaMalloc(&dy, n * sizeof(double)));
  const double one = 1.0, zero = 0.0;
  CUBLAS_CHECK(cublasDgemv(h, CUBLAS_OP_T, m, n, &one, dA, m, dx, 1, &zero, dy, 1));
  EXPECT_TRUE_MSG(max_error(to_host(dy, n), want) < 1e-12, "dgemv transposed");

  // Lower-triangular solve L X = B (left side), L well conditioned.
  const int s = 8, nrhs = 3;
  std::vector<double> L(s * s, 0.0), X = random_vector<double>(s * nrhs), Bm(s * nrhs, 0.0);
  for (int j = 0; j < s; ++j)
    for (int i = j; i < s; ++i) L[i + j * s] = i == j ? 2.0 + i : 0.1 * (i - j);
  for (int c = 0; c < nrhs; ++c)
    for (int i = 0; i < s; ++i)
      for (int p = 0; p <= i; ++p) Bm[i + c * s] += L[i + p * s] * X[p + c * s];
  double *dL = to_device(L), *dB = to_device(Bm);
  CUBLAS_CHECK(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                           CUBLAS_DIAG_NON_UNIT, s, nrhs, &one, dL, s, dB, s));
  EXPECT_TRUE_MSG(max_error(to_host(dB, Bm.size()), X) < 1e-10, "dtrsm lower/left recovers X");
  cudaFree(dA), cudaFree(dx), cudaFree(dy), cudaFree(dL), cudaFree(dB);
}

void test_gemm_ex(cublasHandle_t h) {
  const int m = 24, n = 16, k = 32;
  auto Af = random_vector<float>(m * k), Bf = random_vector<float>(k * n);
  std::vector<__half> Ah(Af.size()), Bh(Bf.size());
  for (size_t i = 0; i < Af.size(); ++i) Ah[i] = __float2half(Af[i]), Af[i] = __half2float(Ah[i]);
  for (size_t i = 0; i < Bf.size(); ++i) Bh[i] = __float2half(Bf[i]), Bf[i] = __half2float(Bh[i]);
  std::vector<double> want(m * n, 0.0);
  ref_gemm(false, false, m, n, k, 1.0, Af, m, Bf, k, 0.0, want, m);
  __half *dA = to_device(Ah), *dB = to_device(Bh);
  float* dC = nullptr;
  CUDA_CHECK(cudaMalloc(&dC, m * n * sizeof(float)));
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, CUDA_R_16F, m, dB,
                            CUDA_R_16F, k, &zero, dC, CUDA_R_32F, m, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  EXPECT_TRUE_MSG(max_error(to_host(dC, m * n), want) < 1e-3, "GemmEx fp16 x fp16 -> fp32");

  // Strided batches of bfloat16 with a numbered algorithm (a hint muBLAS does not have).
  const int batch = 3;
  auto A2 = random_vector<float>(m * k * batch), B2 = random_vector<float>(k * n * batch);
  std::vector<__nv_bfloat16> Ab(A2.size()), Bb(B2.size());
  for (size_t i = 0; i < A2.size(); ++i)
    Ab[i] = __float2bfloat16(A2[i]), A2[i] = __bfloat162float(Ab[i]);
  for (size_t i = 0; i < B2.size(); ++i)
    Bb[i] = __float2bfloat16(B2[i]), B2[i] = __bfloat162float(Bb[i]);
  __nv_bfloat16 *dA2 = to_device(Ab), *dB2 = to_device(Bb);
  float* dC2 = nullptr;
  CUDA_CHECK(cudaMalloc(&dC2, size_t(m) * n * batch * sizeof(float)));
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA2, CUDA_R_16BF, m, (long long)m * k, dB2,
      CUDA_R_16BF, k, (long long)k * n, &zero, dC2, CUDA_R_32F, m, (long long)m * n, batch,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_ALGO3));
  auto got = to_host(dC2, size_t(m) * n * batch);
  double err = 0;
  for (int b = 0; b < batch; ++b) {
    std::vector<float> Ab_(A2.begin() + b * m * k, A2.begin() + (b + 1) * m * k);
    std::vector<float> Bb_(B2.begin() + b * k * n, B2.begin() + (b + 1) * k * n);
    std::vector<double> w(m * n, 0.0);
    ref_gemm(false, false, m, n, k, 1.0, Ab_, m, Bb_, k, 0.0, w, m);
    std::vector<float> g(got.begin() + b * m * n, got.begin() + (b + 1) * m * n);
    err = std::fmax(err, max_error(g, w));
  }
  EXPECT_TRUE_MSG(err < 1e-3, "GemmStridedBatchedEx bf16, 3 batches, ALGO3 hint");

  // An operation value cuBLAS itself rejects stays rejected.
  cublasStatus_t s = cublasGemmEx(h, static_cast<cublasOperation_t>(77), CUBLAS_OP_N, m, n, k, &one,
                                  dA, CUDA_R_16F, m, dB, CUDA_R_16F, k, &zero, dC, CUDA_R_32F, m,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  EXPECT_TRUE_MSG(s == CUBLAS_STATUS_INVALID_VALUE,
                  "GemmEx with an unknown operation: INVALID_VALUE");
  cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dA2), cudaFree(dB2), cudaFree(dC2);
}

void test_getrf_batched(cublasHandle_t h) {
  const int n = 6, batch = 2;
  std::vector<float> A = random_vector<float>(n * n * batch);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i) A[b * n * n + i + i * n] += 4.0f;  // diagonally dominant
  float* dA = to_device(A);
  float* ptrs[batch] = {dA, dA + n * n};
  float** dptrs = nullptr;
  int *dpiv = nullptr, *dinfo = nullptr;
  CUDA_CHECK(cudaMalloc(&dptrs, sizeof ptrs));
  CUDA_CHECK(cudaMemcpy(dptrs, ptrs, sizeof ptrs, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMalloc(&dpiv, n * batch * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dinfo, batch * sizeof(int)));
  CUBLAS_CHECK(cublasSgetrfBatched(h, n, dptrs, n, dpiv, dinfo, batch));
  auto LU = to_host(dA, A.size());
  auto piv = to_host(dpiv, n * batch);
  auto info = to_host(dinfo, batch);
  // Rebuild P A from L U and compare.
  double err = 0;
  for (int b = 0; b < batch; ++b) {
    std::vector<double> PA(A.begin() + b * n * n, A.begin() + (b + 1) * n * n);
    for (int i = 0; i < n; ++i) {
      int p = piv[b * n + i] - 1;
      if (p != i)
        for (int c = 0; c < n; ++c) std::swap(PA[i + c * n], PA[p + c * n]);
    }
    const float* lu = LU.data() + b * n * n;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int p = 0; p <= std::min(i, j); ++p)
          acc += (p == i ? 1.0 : double(lu[i + p * n])) * double(lu[p + j * n]);
        err = std::fmax(err, std::fabs(acc - PA[i + j * n]));
      }
  }
  EXPECT_TRUE_MSG(info[0] == 0 && info[1] == 0 && err < 1e-4, "sgetrfBatched: P A = L U");
  cudaFree(dA), cudaFree(dptrs), cudaFree(dpiv), cudaFree(dinfo);
}

}  // namespace

int main() {
  std::printf("cublas_ops\n");
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t h = nullptr;
  CUBLAS_CHECK(cublasCreate(&h));
  CUBLAS_CHECK(cublasSetStream(h, stream));
  cudaStream_t bound = nullptr;
  CUBLAS_CHECK(cublasGetStream(h, &bound));
  EXPECT_TRUE_MSG(bound == stream, "the handle's stream reads back");
  int version = 0;
  CUBLAS_CHECK(cublasGetVersion(h, &version));
  // The release torchada serves (13.4, the pinned PyTorch's), which a program built against an
  // older CUDA 13 toolkit's header sees as NVIDIA's newer library would answer it.
  EXPECT_TRUE_MSG(version >= CUBLAS_VERSION && version / 10000 == CUBLAS_VERSION / 10000,
                  "cublasGetVersion answers cuBLAS of the header's major version, not older");

  test_sgemm(h);
  test_dgemm_64(h);
  test_level1(h, stream);
  test_gemv_and_trsm(h);
  test_gemm_ex(h);
  test_getrf_batched(h);

  EXPECT_TRUE_MSG(cublasSgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, nullptr, nullptr, 1,
                              nullptr, 1, nullptr, nullptr, 1) != CUBLAS_STATUS_SUCCESS,
                  "a NULL handle is an error");
  EXPECT_TRUE_MSG(std::strcmp(cublasGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED),
                              "CUBLAS_STATUS_NOT_SUPPORTED") == 0,
                  "cublasGetStatusName");
  CUBLAS_CHECK(cublasDestroy(h));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return check::Report("cublas_ops");
}
