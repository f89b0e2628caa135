// Batched GEMM, GEMV and TRSM: pointer-array forms (the arrays are device memory, read when the
// work runs; an entry that is NULL is skipped) and strided forms (stride 0 shares one operand).
#include "batched.h"

namespace mublas_sim {

template <class T>
mublasStatus_t gemm_batched(mublasHandle_t h, mublasOperation_t ta, mublasOperation_t tb, int m,
                            int n, int k, const T* alpha, const T* const* A, int lda,
                            const T* const* B, int ldb, const T* beta, T* const* C, int ldc,
                            int batch) {
  return gemm_batched_core<T, T>(h, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc, batch,
                                 PtrArrays<const T, const T, T>{A, B, C}, gemm_job<T>(h));
}

template <class T>
mublasStatus_t gemm_strided(mublasHandle_t h, mublasOperation_t ta, mublasOperation_t tb, int m,
                            int n, int k, const T* alpha, const T* A, int lda, long long sa,
                            const T* B, int ldb, long long sb, const T* beta, T* C, int ldc,
                            long long sc, int batch) {
  return gemm_batched_core<T, T>(h, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc, batch,
                                 Strided3<const T, const T, T>{A, sa, B, sb, C, sc},
                                 gemm_job<T>(h));
}

template <class T>
mublasStatus_t gemv_batched(mublasHandle_t h, mublasOperation_t trans, int m, int n, const T* alpha,
                            const T* const* A, int lda, const T* const* x, int incx, const T* beta,
                            T* const* y, int incy, int batch) {
  return gemv_batched_core<T>(h, trans, m, n, alpha, lda, incx, beta, incy, batch,
                              PtrArrays<const T, const T, T>{A, x, y}, gemv_job<T, T, T>());
}

template <class T>
mublasStatus_t gemv_strided(mublasHandle_t h, mublasOperation_t trans, int m, int n, const T* alpha,
                            const T* A, int lda, long long sa, const T* x, int incx, long long sx,
                            const T* beta, T* y, int incy, long long sy, int batch) {
  return gemv_batched_core<T>(h, trans, m, n, alpha, lda, incx, beta, incy, batch,
                              Strided3<const T, const T, T>{A, sa, x, sx, y, sy},
                              gemv_job<T, T, T>());
}

// Solves op(A_i) X_i = alpha B_i (left) or X_i op(A_i) = alpha B_i (right) for each i.
template <class T>
mublasStatus_t trsm_batched(mublasHandle_t h, mublasSideMode_t side, mublasFillMode_t uplo,
                            mublasOperation_t trans, mublasDiagType_t diag, int m, int n,
                            const T* alpha, const T* const* A, int lda, T* const* B, int ldb,
                            int batch) {
  Check c(h);
  MUBLAS_TRY(check_tri_side(c, side, uplo, trans, diag, m, n, lda, ldb).dim(batch).status());
  if (m == 0 || n == 0 || batch == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(alpha, A, B).status());
  const Scalar<T> a(h, alpha);
  const TriSide<T> tri(side, uplo, trans, diag);
  return enqueue(h, [=] {
    const T av = a();
    for (int i = 0; i < batch; ++i)
      if (A[i] != nullptr && B[i] != nullptr) tri.trsm(m, n, av, A[i], lda, B[i], ldb);
  });
}

}  // namespace mublas_sim

using namespace mublas_sim;

// clang-format off
// The batched GEMMs; G is gemm, or gemm3m for the 3M complex forms (the same product here).
#define MUBLAS_GEMM_BATCHED(P, T, G)                                                            \
  MUBLAS_C(mublasStatus_t) mublas##P##G##Batched(mublasHandle_t h, mublasOperation_t transa,    \
      mublasOperation_t transb, int m, int n, int k, const T* alpha, const T* const Aarray[],   \
      int lda, const T* const Barray[], int ldb, const T* beta, T* const Carray[], int ldc,     \
      int batchCount) {                                                                         \
    return call(MUBLAS_IMPL(gemm_batched), h, transa, transb, m, n, k, alpha, Aarray, lda,     \
                Barray, ldb, beta, Carray, ldc, batchCount);                                    \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##G##StridedBatched(mublasHandle_t h,                       \
      mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k, const T* alpha,  \
      const T* A, int lda, long long strideA, const T* B, int ldb, long long strideB,           \
      const T* beta, T* C, int ldc, long long strideC, int batchCount) {                        \
    return call(MUBLAS_IMPL(gemm_strided), h, transa, transb, m, n, k, alpha, A, lda, strideA, \
                B, ldb, strideB, beta, C, ldc, strideC, batchCount);                            \
  }

#define MUBLAS_BATCHED(P, T)                                                                    \
  MUBLAS_GEMM_BATCHED(P, T, gemm)                                                               \
  MUBLAS_C(mublasStatus_t) mublas##P##gemvBatched(mublasHandle_t h, mublasOperation_t trans,    \
      int m, int n, const T* alpha, const T* const Aarray[], int lda, const T* const xarray[],  \
      int incx, const T* beta, T* const yarray[], int incy, int batchCount) {                   \
    return call(MUBLAS_IMPL(gemv_batched), h, trans, m, n, alpha, Aarray, lda, xarray, incx,   \
                beta, yarray, incy, batchCount);                                                \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##gemvStridedBatched(mublasHandle_t h,                      \
      mublasOperation_t trans, int m, int n, const T* alpha, const T* A, int lda,               \
      long long strideA, const T* x, int incx, long long stridex, const T* beta, T* y,          \
      int incy, long long stridey, int batchCount) {                                            \
    return call(MUBLAS_IMPL(gemv_strided), h, trans, m, n, alpha, A, lda, strideA, x, incx,    \
                stridex, beta, y, incy, stridey, batchCount);                                   \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##trsmBatched(mublasHandle_t h, mublasSideMode_t side,      \
      mublasFillMode_t uplo, mublasOperation_t trans, mublasDiagType_t diag, int m, int n,      \
      const T* alpha, const T* const A[], int lda, T* const B[], int ldb, int batchCount) {     \
    return call(MUBLAS_IMPL(trsm_batched), h, side, uplo, trans, diag, m, n, alpha, A, lda, B, \
                ldb, batchCount);                                                               \
  }
MUBLAS_SDCZ(MUBLAS_BATCHED)
MUBLAS_GEMM_BATCHED(C, muComplex, gemm3m)
// clang-format on
