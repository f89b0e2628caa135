// BLAS-like extensions: geam (matrix addition / transposition), dgmm (diagonal scaling) and the
// packed <-> full triangular conversions.
#include "common.h"

namespace mublas_sim {

namespace {

// Element (i, j) of op(A).
template <class T>
T op_at(mublasOperation_t op, const T* A, int lda, int i, int j) {
  if (is_n(op)) return A[idx(i, j, lda)];
  return conj_if(A[idx(j, i, lda)], op == MUBLAS_OP_C);
}

// Offset of (i, j), i, j in the uplo triangle, in packed column-major storage of order n.
inline std::ptrdiff_t packed_idx(bool upper, int n, int i, int j) {
  const std::ptrdiff_t J = j;
  return upper ? i + J * (J + 1) / 2
               : (i - J) + J * (2 * static_cast<std::ptrdiff_t>(n) - J + 1) / 2;
}

}  // namespace

// C = alpha op(A) + beta op(B). In place is allowed as C == A with transa N and lda == ldc, or
// C == B with transb N and ldb == ldc. A (B) is not read, and may be NULL, when alpha (beta) is
// zero in host pointer mode.
template <class T>
mublasStatus_t geam(mublasHandle_t h, mublasOperation_t ta, mublasOperation_t tb, int m, int n,
                    const T* alpha, const T* A, int lda, const T* beta, const T* B, int ldb, T* C,
                    int ldc) {
  Check c(h);
  c.e(ta).e(tb).dim(m).dim(n);
  if (c.ok()) c.ld(lda, is_n(ta) ? m : n).ld(ldb, is_n(tb) ? m : n).ld(ldc, m);
  MUBLAS_TRY(c.status());
  c.value_if(A == C && A != nullptr && (!is_n(ta) || lda != ldc));
  c.value_if(B == C && B != nullptr && (!is_n(tb) || ldb != ldc));
  MUBLAS_TRY(c.status());
  if (m == 0 || n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(alpha, beta, C).status());
  const Scalar<T> a(h, alpha), b(h, beta);
  if (!a.host_zero()) c.ptr(A);
  if (!b.host_zero()) c.ptr(B);
  MUBLAS_TRY(c.status());
  return enqueue(h, [=] {
    const T av = a(), bv = b();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        T v(0);
        if (av != T(0)) v += av * op_at(ta, A, lda, i, j);
        if (bv != T(0)) v += bv * op_at(tb, B, ldb, i, j);
        C[idx(i, j, ldc)] = v;
      }
  });
}

// C = A diag(x) (side right, x of n) or diag(x) A (side left, x of m). C may be A if lda == ldc.
template <class T>
mublasStatus_t dgmm(mublasHandle_t h, mublasSideMode_t mode, int m, int n, const T* A, int lda,
                    const T* x, int incx, T* C, int ldc) {
  Check c(h);
  c.e(mode).dim(m).dim(n).ld(lda, m).ld(ldc, m);
  c.value_if(A == C && A != nullptr && lda != ldc);
  MUBLAS_TRY(c.status());
  if (m == 0 || n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(A, x, C).status());
  const bool left = is_left(mode);
  return enqueue(h, [=] {
    const T* xs = vec_start(x, left ? m : n, incx);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        C[idx(i, j, ldc)] =
            A[idx(i, j, lda)] * xs[static_cast<std::ptrdiff_t>(left ? i : j) * incx];
  });
}

// Packed <-> full triangle (the other triangle of the full matrix is not touched).
template <class T>
mublasStatus_t tp_tr(mublasHandle_t h, mublasFillMode_t uplo, int n, const T* src, T* dst, int lda,
                     bool to_full) {
  Check c(h);
  c.e(uplo).dim(n).ld(lda, n);
  MUBLAS_TRY(c.status());
  if (n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(src, dst).status());
  const bool upper = is_upper(uplo);
  return enqueue(h, [=] {
    for (int j = 0; j < n; ++j) {
      const int lo = upper ? 0 : j, hi = upper ? j : n - 1;
      for (int i = lo; i <= hi; ++i) {
        const std::ptrdiff_t p = packed_idx(upper, n, i, j), f = idx(i, j, lda);
        if (to_full)
          dst[f] = src[p];
        else
          dst[p] = src[f];
      }
    }
  });
}

}  // namespace mublas_sim

using namespace mublas_sim;

// clang-format off
#define MUBLAS_EXT(P, T)                                                                        \
  MUBLAS_C(mublasStatus_t) mublas##P##geam(mublasHandle_t h, mublasOperation_t transa,          \
      mublasOperation_t transb, int m, int n, const T* alpha, const T* A, int lda,              \
      const T* beta, const T* B, int ldb, T* C, int ldc) {                                      \
    return call(MUBLAS_IMPL(geam), h, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C,    \
                ldc);                                                                           \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##dgmm(mublasHandle_t h, mublasSideMode_t mode, int m,      \
      int n, const T* A, int lda, const T* x, int incx, T* C, int ldc) {                        \
    return call(MUBLAS_IMPL(dgmm), h, mode, m, n, A, lda, x, incx, C, ldc);                    \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##tpttr(mublasHandle_t h, mublasFillMode_t uplo, int n,     \
      const T* AP, T* A, int lda) {                                                             \
    return call(MUBLAS_IMPL(tp_tr), h, uplo, n, AP, A, lda, true);                             \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##trttp(mublasHandle_t h, mublasFillMode_t uplo, int n,     \
      const T* A, int lda, T* AP) {                                                             \
    return call(MUBLAS_IMPL(tp_tr), h, uplo, n, A, AP, lda, false);                            \
  }
MUBLAS_SDCZ(MUBLAS_EXT)
// clang-format on
