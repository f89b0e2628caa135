// Level 3. Sizes are checked as reference BLAS does; m == 0 or n == 0 is a successful no-op, and
// A / B may be NULL when k == 0. Complex syrk-type routines take OP_N / OP_T, Hermitian ones
// OP_N / OP_C; real ones accept all three. trmm is cuBLAS's out-of-place form.
#include "kernels.h"

namespace mublas_sim {

namespace {

// Sgemm under MUBLAS_TF32_TENSOR_OP_MATH rounds its inputs to TF32, like a tensor core.
template <class T>
bool tf32_math(mublasHandle_t h) {
  return std::is_same_v<T, float> &&
         (static_cast<int>(h->math) & ~MUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) ==
             MUBLAS_TF32_TENSOR_OP_MATH;
}

}  // namespace

template <class T>
mublasStatus_t gemm(mublasHandle_t h, mublasOperation_t ta, mublasOperation_t tb, int m, int n,
                    int k, const T* alpha, const T* A, int lda, const T* B, int ldb, const T* beta,
                    T* C, int ldc) {
  Check c(h);
  MUBLAS_TRY(check_gemm(c, ta, tb, m, n, k, lda, ldb, ldc).status());
  if (m == 0 || n == 0) return MUBLAS_STATUS_SUCCESS;
  c.ptrs(alpha, beta, C);
  if (k > 0) c.ptrs(A, B);
  MUBLAS_TRY(c.status());
  const Scalar<T> a(h, alpha), b(h, beta);
  const bool tf32 = tf32_math<T>(h);
  const FaultSite site = fault_site(h, "gemm");
  const size_t sa = k > 0 ? matrix_bytes(is_n(ta) ? m : k, is_n(ta) ? k : m, lda, sizeof(T)) : 0;
  const size_t sb = k > 0 ? matrix_bytes(is_n(tb) ? k : n, is_n(tb) ? n : k, ldb, sizeof(T)) : 0;
  const size_t sc = matrix_bytes(m, n, ldc, sizeof(T));
  return enqueue(h, [=] {
    if (!operand_ok(site, "A", A, sa) || !operand_ok(site, "B", B, sb) ||
        !operand_ok(site, "C", C, sc))
      return;
    gemm_run<T>(ta, tb, m, n, k, a(), A, lda, B, ldb, b(), C, ldc, tf32);
  });
}

// symm / hemm: C = alpha A B + beta C (side left) or alpha B A + beta C (right).
template <class T>
mublasStatus_t symm(mublasHandle_t h, mublasSideMode_t side, mublasFillMode_t uplo, int m, int n,
                    const T* alpha, const T* A, int lda, const T* B, int ldb, const T* beta, T* C,
                    int ldc, bool hermitian) {
  Check c(h);
  c.e(side).e(uplo).dim(m).dim(n);
  if (c.ok()) c.ld(lda, is_left(side) ? m : n).ld(ldb, m).ld(ldc, m);
  MUBLAS_TRY(c.status());
  if (m == 0 || n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(alpha, beta, A, B, C).status());
  const Scalar<T> a(h, alpha), b(h, beta);
  const CBLAS_SIDE s = cb_side(side);
  const CBLAS_UPLO u = cb_uplo(uplo);
  return enqueue(h, [=] {
    const T av = a(), bv = b();
    (hermitian ? Cb<T>::hemm : Cb<T>::symm)(kCol, s, u, m, n, sv(av), A, lda, B, ldb, sv(bv), C,
                                            ldc);
  });
}

// The rank-k family on the uplo triangle of C (n x n). Scalars: alpha of type TA, beta of type
// TB (real for the Hermitian forms' beta, and herk's alpha).
enum class RankK { kSyrk, kHerk, kSyr2k, kHer2k, kSyrkx, kHerkx };

template <class T, class TA, class TB>
mublasStatus_t rank_k(mublasHandle_t h, mublasFillMode_t uplo, mublasOperation_t trans, int n,
                      int k, const TA* alpha, const T* A, int lda, const T* B, int ldb,
                      const TB* beta, T* C, int ldc, RankK kind) {
  const bool herm = kind == RankK::kHerk || kind == RankK::kHer2k || kind == RankK::kHerkx;
  const bool two = kind != RankK::kSyrk && kind != RankK::kHerk;
  Check c(h);
  c.e(uplo).e(trans);
  if (kIsComplex<T> && c.ok()) c.value_if(trans == (herm ? MUBLAS_OP_T : MUBLAS_OP_C));
  c.dim(n).dim(k);
  if (c.ok()) {
    c.ld(lda, is_n(trans) ? n : k);
    if (two) c.ld(ldb, is_n(trans) ? n : k);
    c.ld(ldc, n);
  }
  MUBLAS_TRY(c.status());
  if (n == 0) return MUBLAS_STATUS_SUCCESS;
  c.ptrs(alpha, beta, C);
  if (k > 0) c.ptr(A);
  if (k > 0 && two) c.ptr(B);
  MUBLAS_TRY(c.status());
  const Scalar<TA> a(h, alpha);
  const Scalar<TB> b(h, beta);
  const CBLAS_UPLO u = cb_uplo(uplo);
  const CBLAS_TRANSPOSE t = cb_op<T>(trans);
  return enqueue(h, [=] {
    const TA av = a();
    const TB bv = b();
    if (kind == RankK::kSyrkx || kind == RankK::kHerkx) {
      // op(A) op(B)^T (syrkx) or op(A) op(B)^H (herkx).
      const mublasOperation_t tb = is_n(trans) ? (herm ? MUBLAS_OP_C : MUBLAS_OP_T) : MUBLAS_OP_N;
      gemmt_run<T>(is_upper(uplo), trans, tb, n, k, T(av), A, lda, B, ldb, T(bv), C, ldc, herm);
    } else if constexpr (std::is_same_v<TA, T> && std::is_same_v<TB, T>) {
      if (two)
        Cb<T>::syr2k(kCol, u, t, n, k, sv(av), A, lda, B, ldb, sv(bv), C, ldc);
      else
        Cb<T>::syrk(kCol, u, t, n, k, sv(av), A, lda, sv(bv), C, ldc);
    } else if constexpr (std::is_same_v<TA, T>) {
      Cb<T>::her2k(kCol, u, t, n, k, sv(av), A, lda, B, ldb, bv, C, ldc);
    } else {
      Cb<T>::herk(kCol, u, t, n, k, av, A, lda, bv, C, ldc);
    }
  });
}

// cuBLAS's trmm: C = alpha op(A) B (left) or alpha B op(A) (right); B is left unchanged unless
// C is B (then ldb must equal ldc).
template <class T>
mublasStatus_t trmm(mublasHandle_t h, mublasSideMode_t side, mublasFillMode_t uplo,
                    mublasOperation_t trans, mublasDiagType_t diag, int m, int n, const T* alpha,
                    const T* A, int lda, const T* B, int ldb, T* C, int ldc) {
  Check c(h);
  check_tri_side(c, side, uplo, trans, diag, m, n, lda, ldb).ld(ldc, m);
  c.size_if(B == C && ldb != ldc);
  MUBLAS_TRY(c.status());
  if (m == 0 || n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(alpha, A, B, C).status());
  const Scalar<T> a(h, alpha);
  const TriSide<T> tri(side, uplo, trans, diag);
  return enqueue(h, [=] {
    if (B != C)
      for (int j = 0; j < n; ++j) std::copy_n(B + idx(0, j, ldb), m, C + idx(0, j, ldc));
    tri.trmm(m, n, a(), A, lda, C, ldc);
  });
}

// Solves op(A) X = alpha B (left) or X op(A) = alpha B (right); X overwrites B.
template <class T>
mublasStatus_t trsm(mublasHandle_t h, mublasSideMode_t side, mublasFillMode_t uplo,
                    mublasOperation_t trans, mublasDiagType_t diag, int m, int n, const T* alpha,
                    const T* A, int lda, T* B, int ldb) {
  Check c(h);
  MUBLAS_TRY(check_tri_side(c, side, uplo, trans, diag, m, n, lda, ldb).status());
  if (m == 0 || n == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(alpha, A, B).status());
  const Scalar<T> a(h, alpha);
  const TriSide<T> tri(side, uplo, trans, diag);
  return enqueue(h, [=] { tri.trsm(m, n, a(), A, lda, B, ldb); });
}

}  // namespace mublas_sim

using namespace mublas_sim;

// clang-format off
// C = alpha op(A) op(B) + beta C: gemm, and the 3M complex forms (the same product here).
#define MUBLAS_GEMM(NAME, T)                                                                    \
  MUBLAS_C(mublasStatus_t) NAME(mublasHandle_t h, mublasOperation_t transa,                     \
      mublasOperation_t transb, int m, int n, int k, const T* alpha, const T* A, int lda,       \
      const T* B, int ldb, const T* beta, T* C, int ldc) {                                      \
    return call(MUBLAS_IMPL(gemm), h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, \
                ldc);                                                                           \
  }
// symm / hemm.
#define MUBLAS_SYMM(NAME, T, HERM)                                                              \
  MUBLAS_C(mublasStatus_t) NAME(mublasHandle_t h, mublasSideMode_t side,                        \
      mublasFillMode_t uplo, int m, int n, const T* alpha, const T* A, int lda, const T* B,     \
      int ldb, const T* beta, T* C, int ldc) {                                                  \
    return call(MUBLAS_IMPL(symm), h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc,   \
                HERM);                                                                          \
  }
// syrk / herk (alpha and beta of type S).
#define MUBLAS_RANK_K(NAME, T, S, KIND)                                                         \
  MUBLAS_C(mublasStatus_t) NAME(mublasHandle_t h, mublasFillMode_t uplo,                        \
      mublasOperation_t trans, int n, int k, const S* alpha, const T* A, int lda,               \
      const S* beta, T* C, int ldc) {                                                           \
    return call(MUBLAS_IMPL(rank_k), h, uplo, trans, n, k, alpha, A, lda,                      \
                static_cast<const T*>(nullptr), 1, beta, C, ldc, KIND);                         \
  }
// syr2k / her2k / syrkx / herkx (beta of type BT).
#define MUBLAS_RANK_2K(NAME, T, BT, KIND)                                                       \
  MUBLAS_C(mublasStatus_t) NAME(mublasHandle_t h, mublasFillMode_t uplo,                        \
      mublasOperation_t trans, int n, int k, const T* alpha, const T* A, int lda, const T* B,   \
      int ldb, const BT* beta, T* C, int ldc) {                                                 \
    return call(MUBLAS_IMPL(rank_k), h, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C,     \
                ldc, KIND);                                                                     \
  }

#define MUBLAS_L3(P, T)                                                                         \
  MUBLAS_GEMM(mublas##P##gemm, T)                                                               \
  MUBLAS_SYMM(mublas##P##symm, T, false)                                                        \
  MUBLAS_RANK_K(mublas##P##syrk, T, T, RankK::kSyrk)                                            \
  MUBLAS_RANK_2K(mublas##P##syr2k, T, T, RankK::kSyr2k)                                         \
  MUBLAS_RANK_2K(mublas##P##syrkx, T, T, RankK::kSyrkx)                                         \
  MUBLAS_C(mublasStatus_t) mublas##P##trmm(mublasHandle_t h, mublasSideMode_t side,             \
      mublasFillMode_t uplo, mublasOperation_t trans, mublasDiagType_t diag, int m, int n,      \
      const T* alpha, const T* A, int lda, const T* B, int ldb, T* C, int ldc) {                \
    return call(MUBLAS_IMPL(trmm), h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C, \
                ldc);                                                                           \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##trsm(mublasHandle_t h, mublasSideMode_t side,             \
      mublasFillMode_t uplo, mublasOperation_t trans, mublasDiagType_t diag, int m, int n,      \
      const T* alpha, const T* A, int lda, T* B, int ldb) {                                     \
    return call(MUBLAS_IMPL(trsm), h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);   \
  }
MUBLAS_SDCZ(MUBLAS_L3)

// Hermitian and 3M forms (R: the real scalar type).
#define MUBLAS_L3_HE(P, T, R)                                                                   \
  MUBLAS_SYMM(mublas##P##hemm, T, true)                                                         \
  MUBLAS_RANK_K(mublas##P##herk, T, R, RankK::kHerk)                                            \
  MUBLAS_RANK_2K(mublas##P##her2k, T, R, RankK::kHer2k)                                         \
  MUBLAS_RANK_2K(mublas##P##herkx, T, R, RankK::kHerkx)                                         \
  MUBLAS_GEMM(mublas##P##gemm3m, T)
MUBLAS_L3_HE(C, muComplex, float)
MUBLAS_L3_HE(Z, muDoubleComplex, double)
// clang-format on
