// Level 2. Sizes are checked as reference BLAS does (negative sizes, short leading dimensions and
// zero increments are errors); m == 0 or n == 0 is a successful no-op. Complex symmetric
// routines (Csymv, Csyr, Csyr2 and the Z forms), which CBLAS lacks, are computed here.
#include "cblas_table.h"

namespace mublas_sim {

namespace {

// Element i of a strided vector of n elements (BLAS negative-increment rule).
template <class T>
struct Strided {
  Strided(T* p, int n, int inc_) : base(vec_start(p, n, inc_)), inc(inc_) {}
  T& operator[](int i) const { return base[static_cast<std::ptrdiff_t>(i) * inc]; }
  T* base;
  int inc;
};

// y = alpha A x + beta y with A complex symmetric (uplo triangle stored).
template <class T>
void symv_complex(bool upper, int n, T alpha, const T* A, int lda, const T* xp, int incx, T beta,
                  T* yp, int incy) {
  Strided<const T> x(xp, n, incx);
  Strided<T> y(yp, n, incy);
  std::vector<T> acc(static_cast<size_t>(n), T(0));
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      const bool stored = upper ? i <= j : i >= j;
      const T a = stored ? A[idx(i, j, lda)] : A[idx(j, i, lda)];
      acc[static_cast<size_t>(i)] += a * x[j];
    }
  }
  for (int i = 0; i < n; ++i)
    y[i] = alpha * acc[static_cast<size_t>(i)] + (beta == T(0) ? T(0) : beta * y[i]);
}

// A += alpha (x y^T + y x^T) on the uplo triangle; with y == nullptr, A += alpha x x^T.
template <class T>
void syr2_complex(bool upper, int n, T alpha, const T* xp, int incx, const T* yp, int incy, T* A,
                  int lda) {
  Strided<const T> x(xp, n, incx);
  for (int j = 0; j < n; ++j) {
    const int lo = upper ? 0 : j, hi = upper ? j : n - 1;
    for (int i = lo; i <= hi; ++i) {
      T v;
      if (yp == nullptr) {
        v = x[i] * x[j];
      } else {
        Strided<const T> y(yp, n, incy);
        v = x[i] * y[j] + y[i] * x[j];
      }
      A[idx(i, j, lda)] += alpha * v;
    }
  }
}

// y = alpha A x + beta y, A Hermitian (symmetric for real T) in full storage. OpenBLAS 0.3.21's
// zhemv (SKYLAKEX) reads past the end of a unit-stride y for an upper-stored A, which faults when
// y ends at an unmapped page: that case goes through a padded copy of y.
template <class T>
void hemv_full(CBLAS_UPLO u, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta,
               T* y, int incy) {
  if constexpr (std::is_same_v<T, cd>) {
    if (u == CblasUpper) {
      constexpr int kPad = 8;
      std::vector<T> buf(static_cast<size_t>(n) + kPad);
      Strided<T> ys(y, n, incy);
      for (int i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = ys[i];
      cblas_zhemv(kCol, u, n, &alpha, A, lda, x, incx, &beta, buf.data(), 1);
      for (int i = 0; i < n; ++i) ys[i] = buf[static_cast<size_t>(i)];
      return;
    }
  }
  Cb<T>::hemv(kCol, u, n, sv(alpha), A, lda, x, incx, sv(beta), y, incy);
}

}  // namespace

template <class T>
mublasStatus_t gemv(mublasHandle_t h, mublasOperation_t trans, int m, int n, const T* alpha,
                    const T* A, int lda, const T* x, int incx, const T* beta, T* y, int incy) {
  Check c(h);
  c.e(trans).dim(m).dim(n).ld(lda, m).inc(incx).inc(incy);
  MUBLAS_TRY(c.status());
  if (m == 0 || n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(alpha, beta, A, x, y).status());
  const Scalar<T> a(h, alpha), b(h, beta);
  const CBLAS_TRANSPOSE t = cb_op<T>(trans);
  return enqueue(h, [=] {
    const T av = a(), bv = b();
    Cb<T>::gemv(kCol, t, m, n, sv(av), A, lda, x, incx, sv(bv), y, incy);
  });
}

template <class T>
mublasStatus_t gbmv(mublasHandle_t h, mublasOperation_t trans, int m, int n, int kl, int ku,
                    const T* alpha, const T* A, int lda, const T* x, int incx, const T* beta, T* y,
                    int incy) {
  Check c(h);
  c.e(trans).dim(m).dim(n).dim(kl).dim(ku).ld(lda, 1LL + kl + ku).inc(incx).inc(incy);
  MUBLAS_TRY(c.status());
  if (m == 0 || n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(alpha, beta, A, x, y).status());
  const Scalar<T> a(h, alpha), b(h, beta);
  const CBLAS_TRANSPOSE t = cb_op<T>(trans);
  return enqueue(h, [=] {
    const T av = a(), bv = b();
    Cb<T>::gbmv(kCol, t, m, n, kl, ku, sv(av), A, lda, x, incx, sv(bv), y, incy);
  });
}

// Triangular products and solves. Storage: full (lda >= n), band (k, lda >= k + 1) or packed.
enum class Tri { kFull, kBand, kPacked };

template <class T>
mublasStatus_t tri_mv(mublasHandle_t h, mublasFillMode_t uplo, mublasOperation_t trans,
                      mublasDiagType_t diag, int n, int k, const T* A, int lda, T* x, int incx,
                      Tri storage, bool solve) {
  Check c(h);
  c.e(uplo).e(trans).e(diag).dim(n);
  if (storage == Tri::kBand) c.dim(k).ld(lda, 1LL + k);
  if (storage == Tri::kFull) c.ld(lda, n);
  c.inc(incx);
  MUBLAS_TRY(c.status());
  if (n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(A, x).status());
  const CBLAS_UPLO u = cb_uplo(uplo);
  const CBLAS_TRANSPOSE t = cb_op<T>(trans);
  const CBLAS_DIAG d = cb_diag(diag);
  return enqueue(h, [=] {
    switch (storage) {
      case Tri::kFull:
        (solve ? Cb<T>::trsv : Cb<T>::trmv)(kCol, u, t, d, n, A, lda, x, incx);
        break;
      case Tri::kBand:
        (solve ? Cb<T>::tbsv : Cb<T>::tbmv)(kCol, u, t, d, n, k, A, lda, x, incx);
        break;
      case Tri::kPacked:
        (solve ? Cb<T>::tpsv : Cb<T>::tpmv)(kCol, u, t, d, n, A, x, incx);
        break;
    }
  });
}

// Hermitian (symmetric for real T) matrix-vector products: full, band and packed storage;
// `complex_symmetric` selects the complex symmetric product (full storage only).
template <class T>
mublasStatus_t he_mv(mublasHandle_t h, mublasFillMode_t uplo, int n, int k, const T* alpha,
                     const T* A, int lda, const T* x, int incx, const T* beta, T* y, int incy,
                     Tri storage, bool complex_symmetric = false) {
  Check c(h);
  c.e(uplo).dim(n);
  if (storage == Tri::kBand) c.dim(k).ld(lda, 1LL + k);
  if (storage == Tri::kFull) c.ld(lda, n);
  c.inc(incx).inc(incy);
  MUBLAS_TRY(c.status());
  if (n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(alpha, beta, A, x, y).status());
  const Scalar<T> a(h, alpha), b(h, beta);
  const CBLAS_UPLO u = cb_uplo(uplo);
  const bool upper = is_upper(uplo);
  return enqueue(h, [=] {
    const T av = a(), bv = b();
    if (complex_symmetric)
      symv_complex(upper, n, av, A, lda, x, incx, bv, y, incy);
    else if (storage == Tri::kFull)
      hemv_full(u, n, av, A, lda, x, incx, bv, y, incy);
    else if (storage == Tri::kBand)
      Cb<T>::hbmv(kCol, u, n, k, sv(av), A, lda, x, incx, sv(bv), y, incy);
    else
      Cb<T>::hpmv(kCol, u, n, sv(av), A, x, incx, sv(bv), y, incy);
  });
}

// A += alpha x y^T (conj: y^H).
template <class T>
mublasStatus_t ger(mublasHandle_t h, int m, int n, const T* alpha, const T* x, int incx, const T* y,
                   int incy, T* A, int lda, bool conj) {
  Check c(h);
  c.dim(m).dim(n).inc(incx).inc(incy).ld(lda, m);
  MUBLAS_TRY(c.status());
  if (m == 0 || n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(alpha, x, y, A).status());
  const Scalar<T> a(h, alpha);
  return enqueue(h, [=] {
    const T av = a();
    (conj ? Cb<T>::gerc : Cb<T>::geru)(kCol, m, n, sv(av), x, incx, y, incy, A, lda);
  });
}

// Rank-1 / rank-2 updates of a Hermitian (symmetric for real T) matrix, full or packed:
// her / hpr take a real alpha (R), her2 / hpr2 a T alpha; y == nullptr selects rank 1.
// `complex_symmetric`: Csyr / Csyr2 (complex alpha, no conjugation).
template <class T, class A_>
mublasStatus_t he_rank(mublasHandle_t h, mublasFillMode_t uplo, int n, const A_* alpha, const T* x,
                       int incx, const T* y, int incy, T* A, int lda, bool packed, bool rank2,
                       bool complex_symmetric = false) {
  Check c(h);
  c.e(uplo).dim(n).inc(incx);
  if (rank2) c.inc(incy);
  if (!packed) c.ld(lda, n);
  MUBLAS_TRY(c.status());
  if (n == 0) return MUBLAS_STATUS_SUCCESS;
  c.ptrs(alpha, x, A);
  if (rank2) c.ptr(y);
  MUBLAS_TRY(c.status());
  const Scalar<A_> a(h, alpha);
  const CBLAS_UPLO u = cb_uplo(uplo);
  const bool upper = is_upper(uplo);
  return enqueue(h, [=] {
    const A_ av = a();
    if (complex_symmetric) {
      if constexpr (kIsComplex<T> && std::is_same_v<A_, T>)
        syr2_complex(upper, n, av, x, incx, rank2 ? y : nullptr, incy, A, lda);
    } else if (rank2) {
      if constexpr (std::is_same_v<A_, T>) {
        if (packed)
          Cb<T>::hpr2(kCol, u, n, sv(av), x, incx, y, incy, A);
        else
          Cb<T>::her2(kCol, u, n, sv(av), x, incx, y, incy, A, lda);
      }
    } else if constexpr (std::is_same_v<A_, RealOf<T>>) {
      if (packed)
        Cb<T>::hpr(kCol, u, n, av, x, incx, A);
      else
        Cb<T>::her(kCol, u, n, av, x, incx, A, lda);
    }
  });
}

}  // namespace mublas_sim

using namespace mublas_sim;

// clang-format off
// Triangular products (SOLVE false) and solves (true) in full, band and packed storage.
#define MUBLAS_TRI_FULL(NAME, T, SOLVE)                                                         \
  MUBLAS_C(mublasStatus_t) NAME(mublasHandle_t h, mublasFillMode_t uplo,                        \
      mublasOperation_t trans, mublasDiagType_t diag, int n, const T* A, int lda, T* x,         \
      int incx) {                                                                               \
    return call(MUBLAS_IMPL(tri_mv), h, uplo, trans, diag, n, 0, A, lda, x, incx, Tri::kFull,  \
                SOLVE);                                                                         \
  }
#define MUBLAS_TRI_BAND(NAME, T, SOLVE)                                                         \
  MUBLAS_C(mublasStatus_t) NAME(mublasHandle_t h, mublasFillMode_t uplo,                        \
      mublasOperation_t trans, mublasDiagType_t diag, int n, int k, const T* A, int lda, T* x,  \
      int incx) {                                                                               \
    return call(MUBLAS_IMPL(tri_mv), h, uplo, trans, diag, n, k, A, lda, x, incx, Tri::kBand,  \
                SOLVE);                                                                         \
  }
#define MUBLAS_TRI_PACKED(NAME, T, SOLVE)                                                       \
  MUBLAS_C(mublasStatus_t) NAME(mublasHandle_t h, mublasFillMode_t uplo,                        \
      mublasOperation_t trans, mublasDiagType_t diag, int n, const T* AP, T* x, int incx) {     \
    return call(MUBLAS_IMPL(tri_mv), h, uplo, trans, diag, n, 0, AP, 1, x, incx,               \
                Tri::kPacked, SOLVE);                                                           \
  }

#define MUBLAS_L2(P, T)                                                                         \
  MUBLAS_C(mublasStatus_t) mublas##P##gemv(mublasHandle_t h, mublasOperation_t trans, int m,    \
      int n, const T* alpha, const T* A, int lda, const T* x, int incx, const T* beta, T* y,    \
      int incy) {                                                                               \
    return call(MUBLAS_IMPL(gemv), h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);     \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##gbmv(mublasHandle_t h, mublasOperation_t trans, int m,    \
      int n, int kl, int ku, const T* alpha, const T* A, int lda, const T* x, int incx,         \
      const T* beta, T* y, int incy) {                                                          \
    return call(MUBLAS_IMPL(gbmv), h, trans, m, n, kl, ku, alpha, A, lda, x, incx, beta, y,    \
                incy);                                                                          \
  }                                                                                             \
  MUBLAS_TRI_FULL(mublas##P##trmv, T, false)                                                    \
  MUBLAS_TRI_FULL(mublas##P##trsv, T, true)                                                     \
  MUBLAS_TRI_BAND(mublas##P##tbmv, T, false)                                                    \
  MUBLAS_TRI_BAND(mublas##P##tbsv, T, true)                                                     \
  MUBLAS_TRI_PACKED(mublas##P##tpmv, T, false)                                                  \
  MUBLAS_TRI_PACKED(mublas##P##tpsv, T, true)
MUBLAS_SDCZ(MUBLAS_L2)

// Symmetric (S, D) and Hermitian (C, Z) products: PRE is "sy" / "he" in the names.
#define MUBLAS_HE_MV(P, T, SY, SB, SP)                                                          \
  MUBLAS_C(mublasStatus_t) mublas##P##SY##mv(mublasHandle_t h, mublasFillMode_t uplo, int n,    \
      const T* alpha, const T* A, int lda, const T* x, int incx, const T* beta, T* y,           \
      int incy) {                                                                               \
    return call(MUBLAS_IMPL(he_mv), h, uplo, n, 0, alpha, A, lda, x, incx, beta, y, incy,      \
                Tri::kFull, false);                                                             \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##SB##mv(mublasHandle_t h, mublasFillMode_t uplo, int n,    \
      int k, const T* alpha, const T* A, int lda, const T* x, int incx, const T* beta, T* y,    \
      int incy) {                                                                               \
    return call(MUBLAS_IMPL(he_mv), h, uplo, n, k, alpha, A, lda, x, incx, beta, y, incy,      \
                Tri::kBand, false);                                                             \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##SP##mv(mublasHandle_t h, mublasFillMode_t uplo, int n,    \
      const T* alpha, const T* AP, const T* x, int incx, const T* beta, T* y, int incy) {       \
    return call(MUBLAS_IMPL(he_mv), h, uplo, n, 0, alpha, AP, 1, x, incx, beta, y, incy,       \
                Tri::kPacked, false);                                                           \
  }
MUBLAS_HE_MV(S, float, sy, sb, sp)
MUBLAS_HE_MV(D, double, sy, sb, sp)
MUBLAS_HE_MV(C, muComplex, he, hb, hp)
MUBLAS_HE_MV(Z, muDoubleComplex, he, hb, hp)

// Rank updates: S/D syr, spr, syr2, spr2 and C/Z her, hpr, her2, hpr2 (R: rank-1 alpha type).
#define MUBLAS_HE_RANK(P, T, R, SY, SP)                                                         \
  MUBLAS_C(mublasStatus_t) mublas##P##SY##r(mublasHandle_t h, mublasFillMode_t uplo, int n,     \
      const R* alpha, const T* x, int incx, T* A, int lda) {                                    \
    return call(MUBLAS_IMPL(he_rank), h, uplo, n, alpha, x, incx,                              \
                static_cast<const T*>(nullptr), 1, A, lda, false, false);                       \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##SP##r(mublasHandle_t h, mublasFillMode_t uplo, int n,     \
      const R* alpha, const T* x, int incx, T* AP) {                                            \
    return call(MUBLAS_IMPL(he_rank), h, uplo, n, alpha, x, incx,                              \
                static_cast<const T*>(nullptr), 1, AP, 1, true, false);                         \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##SY##r2(mublasHandle_t h, mublasFillMode_t uplo, int n,    \
      const T* alpha, const T* x, int incx, const T* y, int incy, T* A, int lda) {              \
    return call(MUBLAS_IMPL(he_rank), h, uplo, n, alpha, x, incx, y, incy, A, lda, false,      \
                true);                                                                          \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##SP##r2(mublasHandle_t h, mublasFillMode_t uplo, int n,    \
      const T* alpha, const T* x, int incx, const T* y, int incy, T* AP) {                      \
    return call(MUBLAS_IMPL(he_rank), h, uplo, n, alpha, x, incx, y, incy, AP, 1, true, true); \
  }
MUBLAS_HE_RANK(S, float, float, sy, sp)
MUBLAS_HE_RANK(D, double, double, sy, sp)
MUBLAS_HE_RANK(C, muComplex, float, he, hp)
MUBLAS_HE_RANK(Z, muDoubleComplex, double, he, hp)

#define MUBLAS_GER(P, T, NAME, CONJ)                                                            \
  MUBLAS_C(mublasStatus_t) mublas##P##NAME(mublasHandle_t h, int m, int n, const T* alpha,      \
      const T* x, int incx, const T* y, int incy, T* A, int lda) {                              \
    return call(MUBLAS_IMPL(ger), h, m, n, alpha, x, incx, y, incy, A, lda, CONJ);             \
  }
MUBLAS_GER(S, float, ger, false)
MUBLAS_GER(D, double, ger, false)
MUBLAS_GER(C, muComplex, geru, false)
MUBLAS_GER(C, muComplex, gerc, true)
MUBLAS_GER(Z, muDoubleComplex, geru, false)
MUBLAS_GER(Z, muDoubleComplex, gerc, true)

// Complex symmetric: Csymv, Csyr, Csyr2 and the Z forms.
#define MUBLAS_CSY(P, T)                                                                        \
  MUBLAS_C(mublasStatus_t) mublas##P##symv(mublasHandle_t h, mublasFillMode_t uplo, int n,      \
      const T* alpha, const T* A, int lda, const T* x, int incx, const T* beta, T* y,           \
      int incy) {                                                                               \
    return call(MUBLAS_IMPL(he_mv), h, uplo, n, 0, alpha, A, lda, x, incx, beta, y, incy,      \
                Tri::kFull, true);                                                              \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##syr(mublasHandle_t h, mublasFillMode_t uplo, int n,       \
      const T* alpha, const T* x, int incx, T* A, int lda) {                                    \
    return call(MUBLAS_IMPL(he_rank), h, uplo, n, alpha, x, incx,                              \
                static_cast<const T*>(nullptr), 1, A, lda, false, false, true);                 \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##syr2(mublasHandle_t h, mublasFillMode_t uplo, int n,      \
      const T* alpha, const T* x, int incx, const T* y, int incy, T* A, int lda) {              \
    return call(MUBLAS_IMPL(he_rank), h, uplo, n, alpha, x, incx, y, incy, A, lda, false,      \
                true, true);                                                                    \
  }
MUBLAS_CZ(MUBLAS_CSY)
// clang-format on
