// A cuBLASLt application using pointer-array batches (CUBLASLT_MATRIX_LAYOUT_BATCH_MODE =
// CUBLASLT_BATCH_MODE_POINTER_ARRAY: A, B, C and D are device arrays of device pointers, one
// matrix each per instance), built twice: against NVIDIA's CUDA 13 and CUDA 12 headers and
// libraries (libcublasLt.so.13 / .12, libcudart.so.13 / .12), so each ABI's exports serve it.
// Instances in separate allocations (no common stride), transposed A, alpha and beta in host
// pointer mode, on a non-default stream, written into D apart from C and in place (C == D);
// every result checked against a host reference. Also: the mode reads back, algorithms report
// pointer-array support, a layout set back to strided works as before, a bias batch stride
// without a bias is ignored, mixing pointer-array and strided layouts is an invalid value, and an
// AMAX_D pointer on an fp32 matmul is an invalid value. Nothing in it knows about torchada: under
// the shim it runs on the simulator's muBLASLt.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "check_cublaslt.h"

namespace {

std::mt19937 rng(2024);

// D_i = alpha op(A_i) B_i + beta C_i, column-major: op(A) m x k (A is k x m when transposed),
// B k x n, C and D m x n.
constexpr int kM = 7, kN = 5, kK = 4, kBatch = 3;
constexpr int kLda = 6, kLdb = 4, kLdc = 9;  // A (transposed) is k x m: lda >= k
constexpr float kAlpha = 1.5f, kBeta = -0.5f;

std::vector<float> random_matrix(size_t n) {
  std::uniform_int_distribution<int> d(-8, 8);  // small integers: exact in fp32 sums
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(d(rng)) * 0.25f;
  return v;
}

void* upload(const std::vector<float>& h) {
  void* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

std::vector<float> download(const void* d, size_t n) {
  std::vector<float> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

void* upload_pointers(const std::vector<void*>& p) {
  void* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, p.size() * sizeof(void*)));
  CUDA_CHECK(cudaMemcpy(d, p.data(), p.size() * sizeof(void*), cudaMemcpyHostToDevice));
  return d;
}

std::vector<float> reference(const std::vector<float>& A, const std::vector<float>& B,
                             const std::vector<float>& C) {
  std::vector<float> D(C);
  for (int j = 0; j < kN; ++j)
    for (int i = 0; i < kM; ++i) {
      double acc = 0;
      for (int q = 0; q < kK; ++q)
        acc += double(A[q + size_t(i) * kLda]) * double(B[q + size_t(j) * kLdb]);
      D[i + size_t(j) * kLdc] = float(kAlpha * acc + kBeta * double(C[i + size_t(j) * kLdc]));
    }
  return D;
}

// The m x n matrices of two ldc-strided buffers (the rows past m are not D's).
bool equal(const std::vector<float>& got, const std::vector<float>& want) {
  for (int j = 0; j < kN; ++j)
    for (int i = 0; i < kM; ++i) {
      const size_t at = i + size_t(j) * kLdc;
      if (std::fabs(got[at] - want[at]) > 1e-5f * (1.0f + std::fabs(want[at]))) {
        std::printf("  D(%d, %d): %g, expected %g\n", i, j, double(got[at]), double(want[at]));
        return false;
      }
    }
  return true;
}

// Every element, padding included.
bool identical(const std::vector<float>& got, const std::vector<float>& want) {
  return got == want;
}

struct Layouts {
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  Layouts() {
    LT_CHECK(cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, kK, kM, kLda));
    LT_CHECK(cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, kK, kN, kLdb));
    LT_CHECK(cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, kM, kN, kLdc));
    for (cublasLtMatrixLayout_t l : {a, b, c}) {
      const int32_t batch = kBatch;
      LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                sizeof(batch)));
    }
  }
  ~Layouts() {
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
  }
  void set_mode(cublasLtMatrixLayout_t l, uint32_t mode) {
    LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode,
                                              sizeof(mode)));
  }
};

uint32_t mode_of(cublasLtMatrixLayout_t l) {
  uint32_t mode = 99;
  size_t written = 0;
  LT_CHECK(cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode,
                                            sizeof(mode), &written));
  return written == sizeof(mode) ? mode : 98;
}

}  // namespace

int main() {
  cublasLtHandle_t handle = nullptr;
  LT_CHECK(cublasLtCreate(&handle));
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cublasLtMatmulDesc_t desc = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t trans = CUBLAS_OP_T;
  LT_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));

  // Each instance in allocations of its own.
  std::vector<std::vector<float>> A, B, C;
  std::vector<void*> dA, dB, dC, dD;
  for (int i = 0; i < kBatch; ++i) {
    A.push_back(random_matrix(size_t(kLda) * kM));
    B.push_back(random_matrix(size_t(kLdb) * kN));
    C.push_back(random_matrix(size_t(kLdc) * kN));
    dA.push_back(upload(A.back()));
    dB.push_back(upload(B.back()));
    dC.push_back(upload(C.back()));
    dD.push_back(upload(std::vector<float>(size_t(kLdc) * kN, -77.0f)));
  }
  void* pA = upload_pointers(dA);
  void* pB = upload_pointers(dB);
  void* pC = upload_pointers(dC);
  void* pD = upload_pointers(dD);

  Layouts l;
  cublasLtMatrixLayout_t d_layout = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&d_layout, CUDA_R_32F, kM, kN, kLdc));
  const int32_t batch = kBatch;
  LT_CHECK(cublasLtMatrixLayoutSetAttribute(d_layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                            sizeof(batch)));
  EXPECT(mode_of(l.a) == CUBLASLT_BATCH_MODE_STRIDED);
  for (cublasLtMatrixLayout_t x : {l.a, l.b, l.c, d_layout})
    l.set_mode(x, CUBLASLT_BATCH_MODE_POINTER_ARRAY);
  EXPECT_TRUE_MSG(mode_of(l.a) == CUBLASLT_BATCH_MODE_POINTER_ARRAY &&
                      mode_of(d_layout) == CUBLASLT_BATCH_MODE_POINTER_ARRAY,
                  "the layouts read back CUBLASLT_BATCH_MODE_POINTER_ARRAY");

  // An algorithm for the problem, which reports pointer-array support.
  cublasLtMatmulPreference_t pref = nullptr;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t result = {};
  int returned = 0;
  LT_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, desc, l.a, l.b, l.c, d_layout, pref, 1, &result,
                                          &returned));
  EXPECT(returned == 1);
  int32_t supported = -1;
  size_t written = 0;
  LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&result.algo,
                                             CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT,
                                             &supported, sizeof(supported), &written));
  EXPECT_TRUE_MSG(supported == 1, "CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT is 1");

  // D_i = alpha A_i^T B_i + beta C_i, with the algorithm, on the stream.
  LT_CHECK(cublasLtMatmul(handle, desc, &kAlpha, pA, l.a, pB, l.b, &kBeta, pC, l.c, pD, d_layout,
                          &result.algo, nullptr, 0, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < kBatch; ++i) {
    const std::vector<float> want = reference(A[i], B[i], C[i]);
    EXPECT_TRUE_MSG(equal(download(dD[i], want.size()), want),
                    "out of place: D_i = alpha A_i^T B_i + beta C_i for every instance");
    EXPECT_TRUE_MSG(identical(download(dC[i], C[i].size()), C[i]), "out of place: C_i untouched");
  }

  // In place (C == D), without an algorithm, on the default stream.
  LT_CHECK(cublasLtMatmul(handle, desc, &kAlpha, pA, l.a, pB, l.b, &kBeta, pC, l.c, pC, l.c,
                          nullptr, nullptr, 0, nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < kBatch; ++i) {
    const std::vector<float> want = reference(A[i], B[i], C[i]);
    EXPECT_TRUE_MSG(equal(download(dC[i], want.size()), want),
                    "in place: C_i = alpha A_i^T B_i + beta C_i for every instance");
  }

  // A bias batch stride with no bias in the epilogue takes no part in the call: cuBLASLt ignores
  // it (an H200's cuBLASLt 13.1 computes the product), and so does the emulation.
  const int64_t bias_stride = kM;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE,
                                          &bias_stride, sizeof(bias_stride)));
  std::vector<std::vector<float>> now(kBatch);  // C after the in-place call above
  for (int i = 0; i < kBatch; ++i) {
    now[i] = download(dC[i], C[i].size());
    CUDA_CHECK(cudaMemset(dD[i], 0, size_t(kLdc) * kN * sizeof(float)));
  }
  LT_CHECK(cublasLtMatmul(handle, desc, &kAlpha, pA, l.a, pB, l.b, &kBeta, pC, l.c, pD, d_layout,
                          nullptr, nullptr, 0, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < kBatch; ++i)
    EXPECT_TRUE_MSG(equal(download(dD[i], size_t(kLdc) * kN), reference(A[i], B[i], now[i])),
                    "a bias batch stride without a bias epilogue is ignored");
  const int64_t no_stride = 0;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &no_stride,
                                          sizeof(no_stride)));

  // AMAX_D belongs to FP8 matmuls: on this fp32 one it is an invalid value (cuBLASLt's answer on an
  // H200).
  void* amax = dD[0];
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &amax,
                                          sizeof(amax)));
  const cublasStatus_t amax_status =
      cublasLtMatmul(handle, desc, &kAlpha, pA, l.a, pB, l.b, &kBeta, pD, l.c, pD, d_layout,
                     nullptr, nullptr, 0, stream);
  EXPECT_TRUE_MSG(amax_status == CUBLAS_STATUS_INVALID_VALUE,
                  "AMAX_D on an fp32 pointer-array matmul is CUBLAS_STATUS_INVALID_VALUE");
  amax = nullptr;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &amax,
                                          sizeof(amax)));

  // Pointer arrays for some matrices and strides for others: CUBLAS_STATUS_INVALID_VALUE (an
  // H200's cuBLASLt 13.1 answers that), nothing written.
  l.set_mode(d_layout, CUBLASLT_BATCH_MODE_STRIDED);
  EXPECT(mode_of(d_layout) == CUBLASLT_BATCH_MODE_STRIDED);
  const std::vector<float> before = download(dD[0], size_t(kLdc) * kN);
  const cublasStatus_t mixed = cublasLtMatmul(handle, desc, &kAlpha, pA, l.a, pB, l.b, &kBeta, pC,
                                              l.c, dD[0], d_layout, nullptr, nullptr, 0, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE_MSG(mixed == CUBLAS_STATUS_INVALID_VALUE,
                  "mixing pointer-array and strided layouts is CUBLAS_STATUS_INVALID_VALUE");
  EXPECT_TRUE_MSG(identical(download(dD[0], before.size()), before),
                  "the refused mix wrote nothing");

  // Back to strided everywhere: an ordinary strided batch over one allocation.
  for (cublasLtMatrixLayout_t x : {l.a, l.b, l.c}) l.set_mode(x, CUBLASLT_BATCH_MODE_STRIDED);
  std::vector<float> sa, sb, sc;
  for (int i = 0; i < kBatch; ++i) {
    sa.insert(sa.end(), A[i].begin(), A[i].end());
    sb.insert(sb.end(), B[i].begin(), B[i].end());
    sc.insert(sc.end(), C[i].begin(), C[i].end());
  }
  const int64_t strides[3] = {int64_t(kLda) * kM, int64_t(kLdb) * kN, int64_t(kLdc) * kN};
  const cublasLtMatrixLayout_t strided[4] = {l.a, l.b, l.c, d_layout};
  for (int k = 0; k < 4; ++k)
    LT_CHECK(cublasLtMatrixLayoutSetAttribute(strided[k],
                                              CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &strides[k < 3 ? k : 2], sizeof(int64_t)));
  void* sA = upload(sa);
  void* sB = upload(sb);
  void* sC = upload(sc);
  void* sD = upload(std::vector<float>(sc.size(), 0.0f));
  LT_CHECK(cublasLtMatmul(handle, desc, &kAlpha, sA, l.a, sB, l.b, &kBeta, sC, l.c, sD, d_layout,
                          nullptr, nullptr, 0, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<float> sd = download(sD, sc.size());
  bool ok = true;
  for (int i = 0; i < kBatch; ++i) {
    const std::vector<float> want = reference(A[i], B[i], C[i]);
    const std::vector<float> got(sd.begin() + i * strides[2], sd.begin() + (i + 1) * strides[2]);
    ok = ok && equal(got, want);
  }
  EXPECT_TRUE_MSG(ok, "after CUBLASLT_BATCH_MODE_STRIDED again: a strided batch as before");

  for (void* p : {sA, sB, sC, sD, pA, pB, pC, pD}) CUDA_CHECK(cudaFree(p));
  for (int i = 0; i < kBatch; ++i)
    for (void* p : {dA[i], dB[i], dC[i], dD[i]}) CUDA_CHECK(cudaFree(p));
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  LT_CHECK(cublasLtMatrixLayoutDestroy(d_layout));
  LT_CHECK(cublasLtMatmulDescDestroy(desc));
  CUDA_CHECK(cudaStreamDestroy(stream));
  LT_CHECK(cublasLtDestroy(handle));
  return check::Report("cublaslt_pointer_array");
}
