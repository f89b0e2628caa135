// Internal to libmublas: computations shared by several routine families, run on the stream
// (no argument checks here), and the checks of a GEMM's arguments.
#pragma once

#include "cblas_table.h"
#include "convert.h"

namespace mublas_sim {

// The checks cuBLAS makes of a GEMM: operations, sizes, leading dimensions.
inline Check& check_gemm(Check& c, mublasOperation_t ta, mublasOperation_t tb, int m, int n, int k,
                         long long lda, long long ldb, long long ldc) {
  c.e(ta).e(tb).dim(m).dim(n).dim(k);
  if (c.ok()) c.ld(lda, is_n(ta) ? m : k).ld(ldb, is_n(tb) ? k : n).ld(ldc, m);
  return c;
}

// The checks of trmm / trsm: enumerators, sizes, A (m x m on the left, n x n on the right) and B.
inline Check& check_tri_side(Check& c, mublasSideMode_t side, mublasFillMode_t uplo,
                             mublasOperation_t trans, mublasDiagType_t diag, int m, int n,
                             long long lda, long long ldb) {
  c.e(side).e(uplo).e(trans).e(diag).dim(m).dim(n);
  if (c.ok()) c.ld(lda, is_left(side) ? m : n).ld(ldb, m);
  return c;
}

// A triangular operand's side, fill, operation and diagonal in CBLAS's terms, for trmm / trsm.
template <class T>
struct TriSide {
  TriSide(mublasSideMode_t side, mublasFillMode_t uplo, mublasOperation_t trans,
          mublasDiagType_t diag)
      : s(cb_side(side)), u(cb_uplo(uplo)), t(cb_op<T>(trans)), d(cb_diag(diag)) {}
  // B = alpha op(A) B or alpha B op(A), in place.
  void trmm(int m, int n, T alpha, const T* A, int lda, T* B, int ldb) const {
    Cb<T>::trmm(kCol, s, u, t, d, m, n, sv(alpha), A, lda, B, ldb);
  }
  // B = alpha op(A)^-1 B or alpha B op(A)^-1, in place.
  void trsm(int m, int n, T alpha, const T* A, int lda, T* B, int ldb) const {
    Cb<T>::trsm(kCol, s, u, t, d, m, n, sv(alpha), A, lda, B, ldb);
  }
  CBLAS_SIDE s;
  CBLAS_UPLO u;
  CBLAS_TRANSPOSE t;
  CBLAS_DIAG d;
};

// Rounds the rows x cols matrix A (leading dimension lda) with `round` into a packed copy.
template <class T, class F>
std::vector<T> rounded_copy(const T* A, int rows, int cols, int lda, F round) {
  std::vector<T> out(static_cast<size_t>(rows) * static_cast<size_t>(cols));
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i)
      out[static_cast<size_t>(idx(i, j, rows))] = round(A[idx(i, j, lda)]);
  return out;
}

// C = alpha op(A) op(B) + beta C. `tf32`: inputs rounded to TF32 first (float only), as a
// tensor core would under MUBLAS_TF32_TENSOR_OP_MATH or MUBLAS_COMPUTE_32F_FAST_TF32.
template <class T>
void gemm_run(mublasOperation_t ta, mublasOperation_t tb, int m, int n, int k, T alpha, const T* A,
              int lda, const T* B, int ldb, T beta, T* C, int ldc, bool tf32 = false) {
  if constexpr (std::is_same_v<T, float>) {
    if (tf32 && k > 0) {
      const int ar = is_n(ta) ? m : k, ac = is_n(ta) ? k : m;
      const int br = is_n(tb) ? k : n, bc = is_n(tb) ? n : k;
      const std::vector<float> a = rounded_copy(A, ar, ac, lda, round_tf32);
      const std::vector<float> b = rounded_copy(B, br, bc, ldb, round_tf32);
      sim_gemm::table().s(kCol, cb_op<T>(ta), cb_op<T>(tb), m, n, k, alpha, a.data(),
                          std::max(1, ar), b.data(), std::max(1, br), beta, C, ldc);
      return;
    }
  }
  Cb<T>::gemm()(kCol, cb_op<T>(ta), cb_op<T>(tb), m, n, k, sv(alpha), A, lda, B, ldb, sv(beta), C,
                ldc);
}

// The uplo triangle of C = alpha op(A) op(B) + beta C, C n x n, op(A) n x k, op(B) k x n
// (BLAS's gemmt; cuBLAS's syrkx / herkx). `hermitian`: the diagonal's imaginary parts are set
// to zero, as herk does. Off-diagonal blocks go to GEMM directly, diagonal blocks through a
// small buffer.
template <class T>
void gemmt_run(bool upper, mublasOperation_t ta, mublasOperation_t tb, int n, int k, T alpha,
               const T* A, int lda, const T* B, int ldb, T beta, T* C, int ldc, bool hermitian) {
  constexpr int kBlock = 128;
  // Rows r.. of op(A) and columns c.. of op(B) (A and B may be NULL when k == 0).
  auto a_rows = [&](int r) {
    return A == nullptr ? A : is_n(ta) ? A + r : A + static_cast<std::ptrdiff_t>(r) * lda;
  };
  auto b_cols = [&](int c) {
    return B == nullptr ? B : is_n(tb) ? B + static_cast<std::ptrdiff_t>(c) * ldb : B + c;
  };
  std::vector<T> tmp(static_cast<size_t>(std::min(n, kBlock)) * std::min(n, kBlock));
  for (int j0 = 0; j0 < n; j0 += kBlock) {
    const int jb = std::min(kBlock, n - j0);
    T* cblk = C + idx(j0, j0, ldc);
    gemm_run<T>(ta, tb, jb, jb, k, T(1), a_rows(j0), lda, b_cols(j0), ldb, T(0), tmp.data(), jb);
    for (int j = 0; j < jb; ++j) {
      const int lo = upper ? 0 : j, hi = upper ? j : jb - 1;
      for (int i = lo; i <= hi; ++i) {
        T& cij = cblk[idx(i, j, ldc)];
        T v = alpha * tmp[static_cast<size_t>(idx(i, j, jb))];
        if (beta != T(0)) v += beta * cij;
        if (hermitian && i == j) v = T(real_of(v));
        cij = v;
      }
    }
    // The rest of the block's columns: rows above it (upper) or below it (lower).
    const int r0 = upper ? 0 : j0 + jb, rows = upper ? j0 : n - j0 - jb;
    if (rows > 0)
      gemm_run<T>(ta, tb, rows, jb, k, alpha, a_rows(r0), lda, b_cols(j0), ldb, beta,
                  C + idx(r0, j0, ldc), ldc);
  }
}

}  // namespace mublas_sim
