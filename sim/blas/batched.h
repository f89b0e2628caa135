// Internal to libmublas: the loops of the batched GEMM / GEMV routines, shared by the typed
// forms (batched.cc) and the half / bfloat16 forms (mixed.cc).
#pragma once

#include "kernels.h"

namespace mublas_sim {

// Operands of batch entry i: from pointer arrays (read when the work runs) ...
template <class A, class B, class C>
struct PtrArrays {
  A* const* a;
  B* const* b;
  C* const* c;
  bool arrays_present() const { return a != nullptr && b != nullptr && c != nullptr; }
  // The arrays themselves in device memory (read by the work); each entry is checked as it
  // comes.
  bool extents_ok(const FaultSite& site, int batch, size_t, size_t, size_t) const {
    const size_t n = static_cast<size_t>(batch) * sizeof(void*);
    return operand_ok(site, "A array", a, n) && operand_ok(site, "B array", b, n) &&
           operand_ok(site, "C array", c, n);
  }
  A* ai(int i) const { return a[i]; }
  B* bi(int i) const { return b[i]; }
  C* ci(int i) const { return c[i]; }
};

// ... or from a base pointer and a stride in elements.
template <class A, class B, class C>
struct Strided3 {
  A* a;
  long long sa;
  B* b;
  long long sb;
  C* c;
  long long sc;
  bool arrays_present() const { return a != nullptr && b != nullptr && c != nullptr; }
  // Every entry of each operand, from its base: one_* bytes an entry.
  bool extents_ok(const FaultSite& site, int batch, size_t one_a, size_t one_b,
                  size_t one_c) const {
    return operand_ok(site, "A", a, strided_bytes(one_a, sa, batch, sizeof(A))) &&
           operand_ok(site, "B", b, strided_bytes(one_b, sb, batch, sizeof(B))) &&
           operand_ok(site, "C", c, strided_bytes(one_c, sc, batch, sizeof(C)));
  }
  A* ai(int i) const { return a + i * sa; }
  B* bi(int i) const { return b + i * sb; }
  C* ci(int i) const { return c + i * sc; }
};

// C_i = alpha op(A_i) op(B_i) + beta C_i with scalars of type S; job(...) computes one entry.
template <class E, class S, class Src, class Job>
mublasStatus_t gemm_batched_core(mublasHandle_t h, mublasOperation_t ta, mublasOperation_t tb,
                                 int m, int n, int k, const S* alpha, int lda, int ldb,
                                 const S* beta, int ldc, int batch, Src src, Job job) {
  Check c(h);
  check_gemm(c, ta, tb, m, n, k, lda, ldb, ldc).dim(batch);
  MUBLAS_TRY(c.status());
  if (m == 0 || n == 0 || batch == 0) return MUBLAS_STATUS_SUCCESS;
  c.ptrs(alpha, beta);
  c.ptr(src.arrays_present() ? alpha : nullptr);
  MUBLAS_TRY(c.status());
  const Scalar<S> a(h, alpha), b(h, beta);
  const FaultSite site = fault_site(h, "gemm (batched)");
  const size_t sa = k > 0 ? matrix_bytes(is_n(ta) ? m : k, is_n(ta) ? k : m, lda, sizeof(E)) : 0;
  const size_t sb = k > 0 ? matrix_bytes(is_n(tb) ? k : n, is_n(tb) ? n : k, ldb, sizeof(E)) : 0;
  const size_t sc = matrix_bytes(m, n, ldc, sizeof(E));
  return enqueue(h, [=] {
    if (!src.extents_ok(site, batch, sa, sb, sc)) return;
    const S av = a(), bv = b();
    for (int i = 0; i < batch; ++i) {
      const E* A = src.ai(i);
      const E* B = src.bi(i);
      E* C = src.ci(i);
      if (C == nullptr || (k > 0 && (A == nullptr || B == nullptr))) continue;
      if (!operand_ok(site, "A", A, sa) || !operand_ok(site, "B", B, sb) ||
          !operand_ok(site, "C", C, sc))
        return;  // the device has faulted: the rest of the batch is not run
      job(ta, tb, m, n, k, av, A, lda, B, ldb, bv, C, ldc);
    }
  });
}

// One typed GEMM (TF32 inputs for float under MUBLAS_TF32_TENSOR_OP_MATH).
template <class T>
auto gemm_job(mublasHandle_t h) {
  // A null handle is reported by the caller's checks; it must not be read here first.
  const bool tf32 =
      std::is_same_v<T, float> && h != nullptr &&
      (static_cast<int>(h->math) & ~MUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) ==
          MUBLAS_TF32_TENSOR_OP_MATH;
  return [tf32](mublasOperation_t ta, mublasOperation_t tb, int m, int n, int k, T alpha,
                const T* A, int lda, const T* B, int ldb, T beta, T* C, int ldc) {
    gemm_run<T>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, tf32);
  };
}

// y_i = alpha op(A_i) x_i + beta y_i with scalars of type S.
template <class S, class Src, class Job>
mublasStatus_t gemv_batched_core(mublasHandle_t h, mublasOperation_t trans, int m, int n,
                                 const S* alpha, int lda, int incx, const S* beta, int incy,
                                 int batch, Src src, Job job) {
  Check c(h);
  c.e(trans).dim(m).dim(n).ld(lda, m).inc(incx).inc(incy).dim(batch);
  MUBLAS_TRY(c.status());
  if (m == 0 || n == 0 || batch == 0) return MUBLAS_STATUS_SUCCESS;
  c.ptrs(alpha, beta);
  c.ptr(src.arrays_present() ? alpha : nullptr);
  MUBLAS_TRY(c.status());
  const Scalar<S> a(h, alpha), b(h, beta);
  return enqueue(h, [=] {
    const S av = a(), bv = b();
    for (int i = 0; i < batch; ++i) {
      const auto* A = src.ai(i);
      const auto* x = src.bi(i);
      auto* y = src.ci(i);
      if (A != nullptr && x != nullptr && y != nullptr)
        job(trans, m, n, av, A, lda, x, incx, bv, y, incy);
    }
  });
}

// One GEMV with matrix / x of type TA and y of type TY, computed in the scalar type S: CBLAS
// directly when all types agree, else through S buffers.
template <class S, class TA, class TY>
auto gemv_job() {
  return [](mublasOperation_t trans, int m, int n, S alpha, const TA* A, int lda, const TA* x,
            int incx, S beta, TY* y, int incy) {
    if constexpr (std::is_same_v<TA, S> && std::is_same_v<TY, S>) {
      Cb<S>::gemv(kCol, cb_op<S>(trans), m, n, sv(alpha), A, lda, x, incx, sv(beta), y, incy);
    } else {
      const int xn = is_n(trans) ? n : m, yn = is_n(trans) ? m : n;
      std::vector<S> a(static_cast<size_t>(m) * n), xs(static_cast<size_t>(xn)),
          ys(static_cast<size_t>(yn), S(0));
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i)
          a[static_cast<size_t>(idx(i, j, m))] = load_as<S>(A[idx(i, j, lda)]);
      const TA* xp = vec_start(x, xn, incx);
      for (int i = 0; i < xn; ++i)
        xs[static_cast<size_t>(i)] = load_as<S>(xp[std::ptrdiff_t{i} * incx]);
      TY* yp = vec_start(y, yn, incy);
      if (beta != S(0))
        for (int i = 0; i < yn; ++i)
          ys[static_cast<size_t>(i)] = load_as<S>(yp[std::ptrdiff_t{i} * incy]);
      Cb<S>::gemv(kCol, cb_op<S>(trans), m, n, sv(alpha), a.data(), std::max(1, m), xs.data(), 1,
                  sv(beta), ys.data(), 1);
      for (int i = 0; i < yn; ++i)
        yp[std::ptrdiff_t{i} * incy] = store_as<TY>(ys[static_cast<size_t>(i)]);
    }
  };
}

}  // namespace mublas_sim
