// Batched LAPACK-style routines: LU factorisation (getrf), inversion from LU (getri), solves from
// LU (getrs), small-matrix inversion (matinv), Householder QR (geqrf) and least squares (gels).
// Factorisations are written here (unblocked, LAPACK's conventions: 1-based pivots, info = the
// first zero pivot); the triangular solves use OpenBLAS's trsm. Pointer arrays are device memory,
// read when the work runs; a NULL entry is skipped.
#include "cblas_table.h"

namespace mublas_sim {

namespace {

// LAPACK's |re| + |im| pivot measure.
template <class T>
RealOf<T> abs1(T v) {
  if constexpr (kIsComplex<T>)
    return std::abs(v.real()) + std::abs(v.imag());
  else
    return std::abs(v);
}

// In-place LU of the n x n matrix A: P A = L U with unit L. ipiv (1-based, may be NULL for no
// pivoting). Returns 0 or the 1-based index of the first exactly-zero pivot.
template <class T>
int lu(int n, T* A, int lda, int* ipiv) {
  int info = 0;
  for (int j = 0; j < n; ++j) {
    int p = j;
    if (ipiv != nullptr) {
      for (int i = j + 1; i < n; ++i)
        if (abs1(A[idx(i, j, lda)]) > abs1(A[idx(p, j, lda)])) p = i;
      ipiv[j] = p + 1;
      if (p != j)
        for (int c = 0; c < n; ++c) std::swap(A[idx(j, c, lda)], A[idx(p, c, lda)]);
    }
    const T piv = A[idx(j, j, lda)];
    if (piv == T(0)) {
      if (info == 0) info = j + 1;
      continue;
    }
    for (int i = j + 1; i < n; ++i) A[idx(i, j, lda)] /= piv;
    for (int c = j + 1; c < n; ++c) {
      const T f = A[idx(j, c, lda)];
      if (f == T(0)) continue;
      for (int i = j + 1; i < n; ++i) A[idx(i, c, lda)] -= A[idx(i, j, lda)] * f;
    }
  }
  return info;
}

// 1-based index of the first zero on U's diagonal, or 0.
template <class T>
int zero_pivot(int n, const T* A, int lda) {
  for (int j = 0; j < n; ++j)
    if (A[idx(j, j, lda)] == T(0)) return j + 1;
  return 0;
}

// Applies the row interchanges of ipiv to the n x nrhs matrix B (forward or backward order).
template <class T>
void swap_rows(int n, int nrhs, T* B, int ldb, const int* ipiv, bool forward) {
  if (ipiv == nullptr) return;
  for (int s = 0; s < n; ++s) {
    const int j = forward ? s : n - 1 - s;
    const int p = ipiv[j] - 1;
    if (p != j && p >= 0 && p < n)
      for (int c = 0; c < nrhs; ++c) std::swap(B[idx(j, c, ldb)], B[idx(p, c, ldb)]);
  }
}

// Solves op(A) X = B with A = P L U from lu(); X overwrites B.
template <class T>
void lu_solve(mublasOperation_t trans, int n, int nrhs, const T* LU, int lda, const int* ipiv, T* B,
              int ldb) {
  const T one(1);
  if (is_n(trans)) {
    swap_rows(n, nrhs, B, ldb, ipiv, true);
    Cb<T>::trsm(kCol, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, nrhs, sv(one), LU, lda, B,
                ldb);
    Cb<T>::trsm(kCol, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, nrhs, sv(one), LU, lda,
                B, ldb);
  } else {
    const CBLAS_TRANSPOSE t = cb_op<T>(trans);
    Cb<T>::trsm(kCol, CblasLeft, CblasUpper, t, CblasNonUnit, n, nrhs, sv(one), LU, lda, B, ldb);
    Cb<T>::trsm(kCol, CblasLeft, CblasLower, t, CblasUnit, n, nrhs, sv(one), LU, lda, B, ldb);
    swap_rows(n, nrhs, B, ldb, ipiv, false);
  }
}

// C = inverse of P L U (C must not overlap LU).
template <class T>
void lu_inverse(int n, const T* LU, int lda, const int* ipiv, T* C, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) C[idx(i, j, ldc)] = T(i == j ? 1 : 0);
  lu_solve(MUBLAS_OP_N, n, n, LU, lda, ipiv, C, ldc);
}

// Householder QR of the m x n matrix A (LAPACK geqr2): R on and above the diagonal, the
// reflectors' vectors (v(0) = 1 implied) below, H(k) = I - tau(k) v v^H.
template <class T>
void householder_qr(int m, int n, T* A, int lda, T* tau) {
  using R = RealOf<T>;
  const int kmax = std::min(m, n);
  for (int k = 0; k < kmax; ++k) {
    T* col = A + idx(k, k, lda);
    const int len = m - k;  // col[0] is alpha, col[1..len-1] is x
    R xnorm2 = 0;
    for (int i = 1; i < len; ++i) xnorm2 += std::norm(std::complex<R>(col[i]));
    const T alpha = col[0];
    R alpha_im = 0;
    if constexpr (kIsComplex<T>) alpha_im = alpha.imag();
    if (xnorm2 == 0 && alpha_im == 0) {
      tau[k] = T(0);
      continue;
    }
    const R beta =
        -std::copysign(std::sqrt(std::norm(std::complex<R>(alpha)) + xnorm2), real_of(alpha));
    tau[k] = (T(beta) - alpha) / T(beta);
    const T scale = T(1) / (alpha - T(beta));
    for (int i = 1; i < len; ++i) col[i] *= scale;
    col[0] = T(beta);
    // Apply H(k)^H = I - conj(tau) v v^H to the trailing columns.
    const T ct = conj_if(tau[k], true);
    for (int j = k + 1; j < n; ++j) {
      T* cj = A + idx(k, j, lda);
      T w = cj[0];
      for (int i = 1; i < len; ++i) w += conj_if(col[i], true) * cj[i];
      w *= ct;
      cj[0] -= w;
      for (int i = 1; i < len; ++i) cj[i] -= col[i] * w;
    }
  }
}

// B = Q^H B for Q from householder_qr (m x nrhs B).
template <class T>
void apply_qh(int m, int n, const T* A, int lda, const T* tau, int nrhs, T* B, int ldb) {
  const int kmax = std::min(m, n);
  for (int k = 0; k < kmax; ++k) {
    const T* v = A + idx(k, k, lda);
    const T ct = conj_if(tau[k], true);
    for (int j = 0; j < nrhs; ++j) {
      T* bj = B + idx(k, j, ldb);
      T w = bj[0];
      for (int i = 1; i < m - k; ++i) w += conj_if(v[i], true) * bj[i];
      w *= ct;
      bj[0] -= w;
      for (int i = 1; i < m - k; ++i) bj[i] -= v[i] * w;
    }
  }
}

// Host-side info for invalid arguments of getrs / geqrf / gels: -(position), counting the handle
// as position 1.
mublasStatus_t fail_info(int* info, int position, mublasStatus_t st) {
  if (info != nullptr) *info = -position;
  return st;
}

}  // namespace

template <class T>
mublasStatus_t getrf_batched(mublasHandle_t h, int n, T* const* A, int lda, int* P, int* info,
                             int batch) {
  Check c(h);
  c.dim(n).ld(lda, n).dim(batch);
  MUBLAS_TRY(c.status());
  if (batch == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(A, info).status());
  return enqueue(h, [=] {
    for (int i = 0; i < batch; ++i)
      if (A[i] != nullptr)
        info[i] = lu(n, A[i], lda, P != nullptr ? P + static_cast<std::ptrdiff_t>(i) * n : nullptr);
  });
}

template <class T>
mublasStatus_t getri_batched(mublasHandle_t h, int n, const T* const* A, int lda, const int* P,
                             T* const* C, int ldc, int* info, int batch) {
  Check c(h);
  c.dim(n).ld(lda, n).ld(ldc, n).dim(batch);
  MUBLAS_TRY(c.status());
  if (batch == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(A, C, info).status());
  return enqueue(h, [=] {
    for (int i = 0; i < batch; ++i) {
      if (A[i] == nullptr || C[i] == nullptr) continue;
      info[i] = zero_pivot(n, A[i], lda);
      if (info[i] == 0)
        lu_inverse(n, A[i], lda, P != nullptr ? P + static_cast<std::ptrdiff_t>(i) * n : nullptr,
                   C[i], ldc);
    }
  });
}

// info is a host pointer: 0, or -(position of the invalid argument).
template <class T>
mublasStatus_t getrs_batched(mublasHandle_t h, mublasOperation_t trans, int n, int nrhs,
                             const T* const* A, int lda, const int* P, T* const* B, int ldb,
                             int* info, int batch) {
  if (h == nullptr) return MUBLAS_STATUS_INVALID_HANDLE;
  if (info == nullptr) return MUBLAS_STATUS_INVALID_POINTER;
  if (!valid(trans)) return fail_info(info, 2, MUBLAS_STATUS_INVALID_VALUE);
  if (n < 0) return fail_info(info, 3, MUBLAS_STATUS_INVALID_SIZE);
  if (nrhs < 0) return fail_info(info, 4, MUBLAS_STATUS_INVALID_SIZE);
  if (lda < std::max(1, n)) return fail_info(info, 6, MUBLAS_STATUS_INVALID_SIZE);
  if (ldb < std::max(1, n)) return fail_info(info, 9, MUBLAS_STATUS_INVALID_SIZE);
  if (batch < 0) return fail_info(info, 11, MUBLAS_STATUS_INVALID_SIZE);
  *info = 0;
  if (n == 0 || nrhs == 0 || batch == 0) return MUBLAS_STATUS_SUCCESS;
  if (A == nullptr) return fail_info(info, 5, MUBLAS_STATUS_INVALID_POINTER);
  if (B == nullptr) return fail_info(info, 8, MUBLAS_STATUS_INVALID_POINTER);
  return enqueue(h, [=] {
    for (int i = 0; i < batch; ++i)
      if (A[i] != nullptr && B[i] != nullptr)
        lu_solve(trans, n, nrhs, A[i], lda,
                 P != nullptr ? P + static_cast<std::ptrdiff_t>(i) * n : nullptr, B[i], ldb);
  });
}

// Inverse of each n x n matrix (n <= 32, as in cuBLAS); info[i] = first zero pivot or 0.
template <class T>
mublasStatus_t matinv_batched(mublasHandle_t h, int n, const T* const* A, int lda, T* const* Ainv,
                              int lda_inv, int* info, int batch) {
  Check c(h);
  c.dim(n).size_if(n > 32).ld(lda, n).ld(lda_inv, n).dim(batch);
  MUBLAS_TRY(c.status());
  if (batch == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(A, Ainv, info).status());
  return enqueue(h, [=] {
    std::vector<T> lu_buf(static_cast<size_t>(n) * n);
    std::vector<int> piv(static_cast<size_t>(n));
    for (int i = 0; i < batch; ++i) {
      if (A[i] == nullptr || Ainv[i] == nullptr) continue;
      for (int j = 0; j < n; ++j)
        std::copy_n(A[i] + idx(0, j, lda), n, lu_buf.data() + idx(0, j, n));
      info[i] = lu(n, lu_buf.data(), std::max(1, n), piv.data());
      if (info[i] == 0) lu_inverse(n, lu_buf.data(), std::max(1, n), piv.data(), Ainv[i], lda_inv);
    }
  });
}

template <class T>
mublasStatus_t geqrf_batched(mublasHandle_t h, int m, int n, T* const* A, int lda, T* const* tau,
                             int* info, int batch) {
  if (h == nullptr) return MUBLAS_STATUS_INVALID_HANDLE;
  if (info == nullptr) return MUBLAS_STATUS_INVALID_POINTER;
  if (m < 0) return fail_info(info, 2, MUBLAS_STATUS_INVALID_SIZE);
  if (n < 0) return fail_info(info, 3, MUBLAS_STATUS_INVALID_SIZE);
  if (lda < std::max(1, m)) return fail_info(info, 5, MUBLAS_STATUS_INVALID_SIZE);
  if (batch < 0) return fail_info(info, 8, MUBLAS_STATUS_INVALID_SIZE);
  *info = 0;
  if (m == 0 || n == 0 || batch == 0) return MUBLAS_STATUS_SUCCESS;
  if (A == nullptr) return fail_info(info, 4, MUBLAS_STATUS_INVALID_POINTER);
  if (tau == nullptr) return fail_info(info, 6, MUBLAS_STATUS_INVALID_POINTER);
  return enqueue(h, [=] {
    for (int i = 0; i < batch; ++i)
      if (A[i] != nullptr && tau[i] != nullptr) householder_qr(m, n, A[i], lda, tau[i]);
  });
}

// Least squares min ||A_i X - C_i|| for full-rank A_i (m >= n, trans N only, as in cuBLAS). A_i is
// overwritten by its QR factors, the first n rows of C_i by X. devInfo[i] = 0, or j when R(j, j)
// is zero (rank deficient, C_i left as Q^H C_i).
template <class T>
mublasStatus_t gels_batched(mublasHandle_t h, mublasOperation_t trans, int m, int n, int nrhs,
                            T* const* A, int lda, T* const* C, int ldc, int* info, int* devInfo,
                            int batch) {
  if (h == nullptr) return MUBLAS_STATUS_INVALID_HANDLE;
  if (info == nullptr) return MUBLAS_STATUS_INVALID_POINTER;
  if (!valid(trans)) return fail_info(info, 2, MUBLAS_STATUS_INVALID_VALUE);
  if (!is_n(trans)) return fail_info(info, 2, MUBLAS_STATUS_NOT_IMPLEMENTED);
  if (m < 0) return fail_info(info, 3, MUBLAS_STATUS_INVALID_SIZE);
  if (n < 0 || n > m) return fail_info(info, 4, MUBLAS_STATUS_INVALID_SIZE);
  if (nrhs < 0) return fail_info(info, 5, MUBLAS_STATUS_INVALID_SIZE);
  if (lda < std::max(1, m)) return fail_info(info, 7, MUBLAS_STATUS_INVALID_SIZE);
  if (ldc < std::max(1, m)) return fail_info(info, 9, MUBLAS_STATUS_INVALID_SIZE);
  if (batch < 0) return fail_info(info, 12, MUBLAS_STATUS_INVALID_SIZE);
  *info = 0;
  if (batch == 0) return MUBLAS_STATUS_SUCCESS;
  if (A == nullptr) return fail_info(info, 6, MUBLAS_STATUS_INVALID_POINTER);
  if (C == nullptr) return fail_info(info, 8, MUBLAS_STATUS_INVALID_POINTER);
  return enqueue(h, [=] {
    std::vector<T> tau(static_cast<size_t>(std::max(1, n)));
    for (int i = 0; i < batch; ++i) {
      if (A[i] == nullptr || C[i] == nullptr) continue;
      householder_qr(m, n, A[i], lda, tau.data());
      apply_qh(m, n, A[i], lda, tau.data(), nrhs, C[i], ldc);
      const int z = zero_pivot(n, A[i], lda);
      if (devInfo != nullptr) devInfo[i] = z;
      if (z == 0 && n > 0 && nrhs > 0) {
        const T one(1);
        Cb<T>::trsm(kCol, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, nrhs, sv(one), A[i],
                    lda, C[i], ldc);
      }
    }
  });
}

}  // namespace mublas_sim

using namespace mublas_sim;

// clang-format off
#define MUBLAS_LAPACK(P, T)                                                                     \
  MUBLAS_C(mublasStatus_t) mublas##P##getrfBatched(mublasHandle_t h, int n, T* const A[],       \
      int lda, int* P_, int* info, int batchSize) {                                             \
    return call(MUBLAS_IMPL(getrf_batched), h, n, A, lda, P_, info, batchSize);                \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##getriBatched(mublasHandle_t h, int n, const T* const A[], \
      int lda, const int* P_, T* const C[], int ldc, int* info, int batchSize) {                \
    return call(MUBLAS_IMPL(getri_batched), h, n, A, lda, P_, C, ldc, info, batchSize);        \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##getrsBatched(mublasHandle_t h, mublasOperation_t trans,   \
      int n, int nrhs, const T* const Aarray[], int lda, const int* devIpiv,                    \
      T* const Barray[], int ldb, int* info, int batchSize) {                                   \
    return call(MUBLAS_IMPL(getrs_batched), h, trans, n, nrhs, Aarray, lda, devIpiv, Barray,   \
                ldb, info, batchSize);                                                          \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##matinvBatched(mublasHandle_t h, int n,                    \
      const T* const A[], int lda, T* const Ainv[], int lda_inv, int* info, int batchSize) {    \
    return call(MUBLAS_IMPL(matinv_batched), h, n, A, lda, Ainv, lda_inv, info, batchSize);    \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##geqrfBatched(mublasHandle_t h, int m, int n,              \
      T* const Aarray[], int lda, T* const TauArray[], int* info, int batchSize) {              \
    return call(MUBLAS_IMPL(geqrf_batched), h, m, n, Aarray, lda, TauArray, info, batchSize);  \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##P##gelsBatched(mublasHandle_t h, mublasOperation_t trans,    \
      int m, int n, int nrhs, T* const Aarray[], int lda, T* const Carray[], int ldc,           \
      int* info, int* devInfoArray, int batchSize) {                                            \
    return call(MUBLAS_IMPL(gels_batched), h, trans, m, n, nrhs, Aarray, lda, Carray, ldc,     \
                info, devInfoArray, batchSize);                                                 \
  }
MUBLAS_SDCZ(MUBLAS_LAPACK)
// clang-format on
