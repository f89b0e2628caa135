// Level 1 and its mixed-precision (Ex) forms. As in BLAS and cuBLAS, n <= 0 (and, for the
// reductions and scal, incx <= 0) means nothing to do, and reductions then give 0. Results
// returned through a pointer block in host pointer mode and are written in stream order in
// device pointer mode.
#include <array>

#include "cblas_table.h"
#include "convert.h"

namespace mublas_sim {

namespace {

// Writes f() to *out on the stream.
template <class R, class F>
mublasStatus_t produce(mublasHandle_t h, R* out, F f) {
  return enqueue(
      h, [=] { *out = f(); }, Wait::kIfHostMode);
}

template <class T>
void rot_complex(int n, T* x, int incx, T* y, int incy, RealOf<T> c, T s) {
  x = vec_start(x, n, incx);
  y = vec_start(y, n, incy);
  for (int i = 0; i < n; ++i) {
    T& xi = x[static_cast<std::ptrdiff_t>(i) * incx];
    T& yi = y[static_cast<std::ptrdiff_t>(i) * incy];
    const T nx = c * xi + s * yi;
    yi = c * yi - std::conj(s) * xi;
    xi = nx;
  }
}

// Applies a plane rotation: real c and s (CBLAS), or complex s (rot_complex).
template <class T, class S>
void apply_rot(int n, T* x, int incx, T* y, int incy, RealOf<T> c, S s) {
  if constexpr (kIsComplex<S>)
    rot_complex(n, x, incx, y, incy, c, s);
  else if constexpr (std::is_same_v<T, float>)
    cblas_srot(n, x, incx, y, incy, c, s);
  else if constexpr (std::is_same_v<T, double>)
    cblas_drot(n, x, incx, y, incy, c, s);
  else if constexpr (std::is_same_v<T, cf>)
    cblas_csrot(n, x, incx, y, incy, c, s);
  else
    cblas_zdrot(n, x, incx, y, incy, c, s);
}

template <class T>
void apply_rotg(T* a, T* b, RealOf<T>* c, T* s) {
  if constexpr (std::is_same_v<T, float>)
    cblas_srotg(a, b, c, s);
  else if constexpr (std::is_same_v<T, double>)
    cblas_drotg(a, b, c, s);
  else if constexpr (std::is_same_v<T, cf>)
    cblas_crotg(a, b, c, s);
  else
    cblas_zrotg(a, b, c, s);
}

template <class T>
void apply_rotm(int n, T* x, int incx, T* y, int incy, const T* p) {
  if constexpr (std::is_same_v<T, float>)
    cblas_srotm(n, x, incx, y, incy, p);
  else
    cblas_drotm(n, x, incx, y, incy, p);
}

template <class T>
void apply_rotmg(T* d1, T* d2, T* x1, T y1, T* param) {
  if constexpr (std::is_same_v<T, float>)
    cblas_srotmg(d1, d2, x1, y1, param);
  else
    cblas_drotmg(d1, d2, x1, y1, param);
}

template <class T, class A>
void apply_scal(int n, A a, T* x, int incx) {
  if constexpr (std::is_same_v<A, T>)
    Cb<T>::scal(n, sv(a), x, incx);
  else if constexpr (std::is_same_v<T, cf>)
    cblas_csscal(n, a, x, incx);
  else
    cblas_zdscal(n, a, x, incx);
}

// The five parameters of rotm: copied at call time in host pointer mode.
template <class T>
class RotmParams {
 public:
  RotmParams(mublasHandle_t h, const T* p) : p_(p) {
    if (h->pointer_mode == MUBLAS_POINTER_MODE_HOST) {
      std::copy(p, p + 5, v_.begin());
      p_ = nullptr;
    }
  }
  const T* get() const { return p_ != nullptr ? p_ : v_.data(); }

 private:
  std::array<T, 5> v_{};
  const T* p_;
};

}  // namespace

template <class T>
mublasStatus_t nrm2(mublasHandle_t h, int n, const T* x, int incx, RealOf<T>* result) {
  MUBLAS_TRY(Check(h).ptr(result).ptr(n > 0 ? x : static_cast<const void*>(result)).status());
  return produce(h, result,
                 [=] { return n > 0 && incx > 0 ? Cb<T>::nrm2(n, x, incx) : RealOf<T>(0); });
}

template <class T>
mublasStatus_t asum(mublasHandle_t h, int n, const T* x, int incx, RealOf<T>* result) {
  MUBLAS_TRY(Check(h).ptr(result).ptr(n > 0 ? x : static_cast<const void*>(result)).status());
  return produce(h, result,
                 [=] { return n > 0 && incx > 0 ? Cb<T>::asum(n, x, incx) : RealOf<T>(0); });
}

template <class T>
mublasStatus_t dot(mublasHandle_t h, int n, const T* x, int incx, const T* y, int incy, T* result,
                   bool conj) {
  Check c(h);
  c.ptr(result);
  if (n > 0) c.ptrs(x, y);
  MUBLAS_TRY(c.status());
  return produce(h, result, [=] { return n > 0 ? cb_dot(n, x, incx, y, incy, conj) : T(0); });
}

// iamax / iamin: 1-based index of the first element of largest / smallest |re| + |im|.
template <class T>
mublasStatus_t iamax(mublasHandle_t h, int n, const T* x, int incx, int* result, bool min) {
  MUBLAS_TRY(Check(h).ptr(result).ptr(n > 0 ? x : static_cast<const void*>(result)).status());
  return produce(h, result, [=] {
    if (n <= 0 || incx <= 0) return 0;
    const size_t i = min ? Cb<T>::iamin(n, x, incx) : Cb<T>::iamax(n, x, incx);
    return static_cast<int>(i) + 1;
  });
}

template <class T, class A>
mublasStatus_t scal(mublasHandle_t h, int n, const A* alpha, T* x, int incx) {
  Check c(h);
  c.ptr(alpha);
  if (n > 0) c.ptr(x);
  MUBLAS_TRY(c.status());
  if (n <= 0 || incx <= 0) return MUBLAS_STATUS_SUCCESS;
  const Scalar<A> a(h, alpha);
  return enqueue(h, [=] { apply_scal(n, a(), x, incx); });
}

template <class T>
mublasStatus_t axpy(mublasHandle_t h, int n, const T* alpha, const T* x, int incx, T* y, int incy) {
  Check c(h);
  c.ptr(alpha);
  if (n > 0) c.ptrs(x, y);
  MUBLAS_TRY(c.status());
  if (n <= 0) return MUBLAS_STATUS_SUCCESS;
  const Scalar<T> a(h, alpha);
  return enqueue(h, [=] {
    const T av = a();
    Cb<T>::axpy(n, sv(av), x, incx, y, incy);
  });
}

template <class T>
mublasStatus_t copy(mublasHandle_t h, int n, const T* x, int incx, T* y, int incy) {
  Check c(h);
  if (n > 0) c.ptrs(x, y);
  MUBLAS_TRY(c.status());
  if (n <= 0) return MUBLAS_STATUS_SUCCESS;
  return enqueue(h, [=] { Cb<T>::copy(n, x, incx, y, incy); });
}

template <class T>
mublasStatus_t swap(mublasHandle_t h, int n, T* x, int incx, T* y, int incy) {
  Check c(h);
  if (n > 0) c.ptrs(x, y);
  MUBLAS_TRY(c.status());
  if (n <= 0) return MUBLAS_STATUS_SUCCESS;
  return enqueue(h, [=] { Cb<T>::swap(n, x, incx, y, incy); });
}

// Plane rotation with cosine c (real) and sine s (real, or complex for Crot / Zrot).
template <class T, class S>
mublasStatus_t rot(mublasHandle_t h, int n, T* x, int incx, T* y, int incy, const RealOf<T>* c,
                   const S* s) {
  Check ck(h);
  ck.ptrs(c, s);
  if (n > 0) ck.ptrs(x, y);
  MUBLAS_TRY(ck.status());
  if (n <= 0) return MUBLAS_STATUS_SUCCESS;
  const Scalar<RealOf<T>> cv(h, c);
  const Scalar<S> sn(h, s);
  return enqueue(h, [=] { apply_rot(n, x, incx, y, incy, cv(), sn()); });
}

// rotg: a, b, c, s are all host pointers (host mode, blocking) or all device pointers.
template <class T>
mublasStatus_t rotg(mublasHandle_t h, T* a, T* b, RealOf<T>* c, T* s) {
  MUBLAS_TRY(Check(h).ptrs(a, b, c, s).status());
  return enqueue(
      h, [=] { apply_rotg(a, b, c, s); }, Wait::kIfHostMode);
}

// Modified Givens rotation; param[0] is the flag, param[1..4] h11, h21, h12, h22.
template <class T>
mublasStatus_t rotm(mublasHandle_t h, int n, T* x, int incx, T* y, int incy, const T* param) {
  Check c(h);
  c.ptr(param);
  if (n > 0) c.ptrs(x, y);
  MUBLAS_TRY(c.status());
  if (n <= 0) return MUBLAS_STATUS_SUCCESS;
  const RotmParams<T> p(h, param);
  return enqueue(h, [=] { apply_rotm(n, x, incx, y, incy, p.get()); });
}

template <class T>
mublasStatus_t rotmg(mublasHandle_t h, T* d1, T* d2, T* x1, const T* y1, T* param) {
  MUBLAS_TRY(Check(h).ptrs(d1, d2, x1, y1, param).status());
  return enqueue(
      h, [=] { apply_rotmg(d1, d2, x1, *y1, param); }, Wait::kIfHostMode);
}

// ---- Mixed precision. Data of type D is converted to the execution type E (float for the
// 16-bit types), the operation runs in E, and results are converted back.

namespace {

// Accepted (data type, execution type) pairs.
bool data_exec_ok(musaDataType_t d, musaDataType_t e) {
  switch (d) {
    case MUSA_R_16F:
    case MUSA_R_16BF:
    case MUSA_R_32F:
      return e == MUSA_R_32F;
    case MUSA_R_64F:
    case MUSA_C_32F:
    case MUSA_C_64F:
      return e == d;
    default:
      return false;
  }
}

// The real type of a complex type (a real type is its own).
musaDataType_t real_type(musaDataType_t t) {
  if (t == MUSA_C_32F) return MUSA_R_32F;
  if (t == MUSA_C_64F) return MUSA_R_64F;
  return t;
}

// The real result type of nrm2 / asum for data type d.
musaDataType_t norm_type(musaDataType_t d) { return real_type(d); }

// A strided vector of MUSA type t, as a contiguous E buffer while the work runs.
template <class E>
struct Staged {
  Staged(musaDataType_t t_, void* p_, int n_, int inc_)
      : t(t_), p(p_), n(n_), inc(inc_), buf(static_cast<size_t>(n_)) {
    gather(t, p, n, inc, buf.data());
  }
  void write_back() { scatter(t, buf.data(), n, p, inc); }
  musaDataType_t t;
  void* p;
  int n, inc;
  std::vector<E> buf;
};

}  // namespace

mublasStatus_t nrm2_ex(mublasHandle_t h, int n, const void* x, musaDataType_t xt, int incx,
                       void* result, musaDataType_t rt, musaDataType_t et, bool asum_) {
  MUBLAS_TRY(Check(h).ptr(result).ptr(n > 0 ? x : static_cast<const void*>(result)).status());
  // Complex data: the execution type may be given as the real type (as rocBLAS documents).
  if (is_complex_type(xt) && et == real_type(xt)) et = xt;
  if (!data_exec_ok(xt, et) || rt != norm_type(xt)) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  return with_exec(et, [&](auto tag) {
    using E = typename decltype(tag)::type;
    return enqueue(
        h,
        [=] {
          RealOf<E> r = 0;
          if (n > 0 && incx > 0) {
            Staged<E> v(xt, const_cast<void*>(x), n, incx);
            r = asum_ ? Cb<E>::asum(n, v.buf.data(), 1) : Cb<E>::nrm2(n, v.buf.data(), 1);
          }
          store_one(rt, result, r);
        },
        Wait::kIfHostMode);
  });
}

mublasStatus_t dot_ex(mublasHandle_t h, int n, const void* x, musaDataType_t xt, int incx,
                      const void* y, musaDataType_t yt, int incy, void* result, musaDataType_t rt,
                      musaDataType_t et, bool conj) {
  Check c(h);
  c.ptr(result);
  if (n > 0) c.ptrs(x, y);
  MUBLAS_TRY(c.status());
  if (!data_exec_ok(xt, et) || yt != xt || rt != xt) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  return with_exec(et, [&](auto tag) {
    using E = typename decltype(tag)::type;
    return enqueue(
        h,
        [=] {
          E r(0);
          if (n > 0) {
            Staged<E> a(xt, const_cast<void*>(x), n, incx), b(yt, const_cast<void*>(y), n, incy);
            r = cb_dot(n, a.buf.data(), 1, b.buf.data(), 1, conj);
          }
          store_one(rt, result, r);
        },
        Wait::kIfHostMode);
  });
}

mublasStatus_t scal_ex(mublasHandle_t h, int n, const void* alpha, musaDataType_t at, void* x,
                       musaDataType_t xt, int incx, musaDataType_t et) {
  Check c(h);
  c.ptr(alpha);
  if (n > 0) c.ptr(x);
  MUBLAS_TRY(c.status());
  // alpha of the execution type, or real alpha for complex data.
  if (!data_exec_ok(xt, et) || (at != et && at != real_type(et)))
    return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (n <= 0 || incx <= 0) return MUBLAS_STATUS_SUCCESS;
  return with_exec(et, [&](auto tag) {
    using E = typename decltype(tag)::type;
    const AnyScalar<E> a(h, at, alpha);
    return enqueue(h, [=] {
      Staged<E> v(xt, x, n, incx);
      const E av = a();
      Cb<E>::scal(n, sv(av), v.buf.data(), 1);
      v.write_back();
    });
  });
}

mublasStatus_t axpy_ex(mublasHandle_t h, int n, const void* alpha, musaDataType_t at, const void* x,
                       musaDataType_t xt, int incx, void* y, musaDataType_t yt, int incy,
                       musaDataType_t et) {
  Check c(h);
  c.ptr(alpha);
  if (n > 0) c.ptrs(x, y);
  MUBLAS_TRY(c.status());
  if (!data_exec_ok(xt, et) || yt != xt || at != et) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (n <= 0) return MUBLAS_STATUS_SUCCESS;
  return with_exec(et, [&](auto tag) {
    using E = typename decltype(tag)::type;
    const AnyScalar<E> a(h, at, alpha);
    return enqueue(h, [=] {
      Staged<E> xs(xt, const_cast<void*>(x), n, incx), ys(yt, y, n, incy);
      const E av = a();
      Cb<E>::axpy(n, sv(av), xs.buf.data(), 1, ys.buf.data(), 1);
      ys.write_back();
    });
  });
}

// Copy / swap: element by element in the storage type, no conversion.
mublasStatus_t copy_ex(mublasHandle_t h, int n, const void* x, musaDataType_t xt, int incx, void* y,
                       musaDataType_t yt, int incy, bool swap_) {
  Check c(h);
  if (n > 0) c.ptrs(x, y);
  MUBLAS_TRY(c.status());
  if (xt != yt || !visit_type(xt, [](auto) {})) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (n <= 0) return MUBLAS_STATUS_SUCCESS;
  return enqueue(h, [=] {
    visit_type(xt, [&](auto tag) {
      using S = typename decltype(tag)::type;
      S* a = vec_start(static_cast<S*>(const_cast<void*>(x)), n, incx);
      S* b = vec_start(static_cast<S*>(y), n, incy);
      for (int i = 0; i < n; ++i) {
        S& xi = a[static_cast<std::ptrdiff_t>(i) * incx];
        S& yi = b[static_cast<std::ptrdiff_t>(i) * incy];
        if (swap_)
          std::swap(xi, yi);
        else
          yi = xi;
      }
    });
  });
}

mublasStatus_t iamax_ex(mublasHandle_t h, int n, const void* x, musaDataType_t xt, int incx,
                        int* result, bool min) {
  MUBLAS_TRY(Check(h).ptr(result).ptr(n > 0 ? x : static_cast<const void*>(result)).status());
  musaDataType_t et = xt == MUSA_R_16F || xt == MUSA_R_16BF ? MUSA_R_32F : xt;
  if (!data_exec_ok(xt, et)) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  return with_exec(et, [&](auto tag) {
    using E = typename decltype(tag)::type;
    return produce(h, result, [=] {
      if (n <= 0 || incx <= 0) return 0;
      Staged<E> v(xt, const_cast<void*>(x), n, incx);
      const E* b = v.buf.data();
      return static_cast<int>(min ? Cb<E>::iamin(n, b, 1) : Cb<E>::iamax(n, b, 1)) + 1;
    });
  });
}

// RotEx: c and s of type cst: real (c, s) or, for complex data, complex s with real c.
mublasStatus_t rot_ex(mublasHandle_t h, int n, void* x, musaDataType_t xt, int incx, void* y,
                      musaDataType_t yt, int incy, const void* c, const void* s, musaDataType_t cst,
                      musaDataType_t et) {
  Check ck(h);
  ck.ptrs(c, s);
  if (n > 0) ck.ptrs(x, y);
  MUBLAS_TRY(ck.status());
  if (!data_exec_ok(xt, et) || yt != xt || (cst != et && cst != real_type(et)))
    return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (n <= 0) return MUBLAS_STATUS_SUCCESS;
  return with_exec(et, [&](auto tag) {
    using E = typename decltype(tag)::type;
    using R = RealOf<E>;
    const AnyScalar<R> cv(h, real_type(cst), c);
    const AnyScalar<E> sn(h, cst, s);
    const bool complex_s = cst != real_type(cst);
    return enqueue(h, [=] {
      Staged<E> xs(xt, x, n, incx), ys(yt, y, n, incy);
      if (complex_s)
        apply_rot(n, xs.buf.data(), 1, ys.buf.data(), 1, cv(), sn());
      else
        apply_rot(n, xs.buf.data(), 1, ys.buf.data(), 1, cv(), real_of(sn()));
      xs.write_back();
      ys.write_back();
    });
  });
}

// RotgEx, RotmEx, RotmgEx: all data of the execution type (float or double; complex for rotg).
mublasStatus_t rotg_ex(mublasHandle_t h, void* a, void* b, musaDataType_t abt, void* c, void* s,
                       musaDataType_t cst, musaDataType_t et) {
  MUBLAS_TRY(Check(h).ptrs(a, b, c, s).status());
  if (abt != et || cst != et || !data_exec_ok(et, et)) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  return with_exec(et, [&](auto tag) {
    using E = typename decltype(tag)::type;
    return rotg(h, static_cast<E*>(a), static_cast<E*>(b), static_cast<RealOf<E>*>(c),
                static_cast<E*>(s));
  });
}

mublasStatus_t rotm_ex(mublasHandle_t h, int n, void* x, musaDataType_t xt, int incx, void* y,
                       musaDataType_t yt, int incy, const void* param, musaDataType_t pt,
                       musaDataType_t et) {
  const bool ok = xt == et && yt == et && pt == et && (et == MUSA_R_32F || et == MUSA_R_64F);
  if (h != nullptr && !ok) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (et == MUSA_R_64F)
    return rotm(h, n, static_cast<double*>(x), incx, static_cast<double*>(y), incy,
                static_cast<const double*>(param));
  return rotm(h, n, static_cast<float*>(x), incx, static_cast<float*>(y), incy,
              static_cast<const float*>(param));
}

mublasStatus_t rotmg_ex(mublasHandle_t h, void* d1, musaDataType_t d1t, void* d2,
                        musaDataType_t d2t, void* x1, musaDataType_t x1t, const void* y1,
                        musaDataType_t y1t, void* param, musaDataType_t pt, musaDataType_t et) {
  const bool ok = d1t == et && d2t == et && x1t == et && y1t == et && pt == et &&
                  (et == MUSA_R_32F || et == MUSA_R_64F);
  if (h != nullptr && !ok) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (et == MUSA_R_64F)
    return rotmg(h, static_cast<double*>(d1), static_cast<double*>(d2), static_cast<double*>(x1),
                 static_cast<const double*>(y1), static_cast<double*>(param));
  return rotmg(h, static_cast<float*>(d1), static_cast<float*>(d2), static_cast<float*>(x1),
               static_cast<const float*>(y1), static_cast<float*>(param));
}

}  // namespace mublas_sim

using namespace mublas_sim;

// ---- C entry points

// nrm2 / asum: Snrm2, Dnrm2, Scnrm2, Dznrm2 (P: the name's prefix, R: the result type).
#define MUBLAS_NORMS(P, T, R)                                                 \
  MUBLAS_C(mublasStatus_t)                                                    \
  mublas##P##nrm2(mublasHandle_t h, int n, const T* x, int incx, R* result) { \
    return call(MUBLAS_IMPL(nrm2), h, n, x, incx, result);                    \
  }                                                                           \
  MUBLAS_C(mublasStatus_t)                                                    \
  mublas##P##asum(mublasHandle_t h, int n, const T* x, int incx, R* result) { \
    return call(MUBLAS_IMPL(asum), h, n, x, incx, result);                    \
  }
MUBLAS_NORMS(S, float, float)
MUBLAS_NORMS(D, double, double)
MUBLAS_NORMS(Sc, muComplex, float)
MUBLAS_NORMS(Dz, muDoubleComplex, double)

// iamax / iamin: Isamax, Idamax, Icamax, Izamax (p: the lower-case precision letter).
#define MUBLAS_IAMAX(p, T)                                                       \
  MUBLAS_C(mublasStatus_t)                                                       \
  mublasI##p##amax(mublasHandle_t h, int n, const T* x, int incx, int* result) { \
    return call(MUBLAS_IMPL(iamax), h, n, x, incx, result, false);               \
  }                                                                              \
  MUBLAS_C(mublasStatus_t)                                                       \
  mublasI##p##amin(mublasHandle_t h, int n, const T* x, int incx, int* result) { \
    return call(MUBLAS_IMPL(iamax), h, n, x, incx, result, true);                \
  }
MUBLAS_IAMAX(s, float)
MUBLAS_IAMAX(d, double)
MUBLAS_IAMAX(c, muComplex)
MUBLAS_IAMAX(z, muDoubleComplex)

#define MUBLAS_L1(P, T)                                                                            \
  MUBLAS_C(mublasStatus_t)                                                                         \
  mublas##P##scal(mublasHandle_t h, int n, const T* alpha, T* x, int incx) {                       \
    return call(MUBLAS_IMPL(scal), h, n, alpha, x, incx);                                          \
  }                                                                                                \
  MUBLAS_C(mublasStatus_t)                                                                         \
  mublas##P##axpy(mublasHandle_t h, int n, const T* alpha, const T* x, int incx, T* y, int incy) { \
    return call(MUBLAS_IMPL(axpy), h, n, alpha, x, incx, y, incy);                                 \
  }                                                                                                \
  MUBLAS_C(mublasStatus_t)                                                                         \
  mublas##P##copy(mublasHandle_t h, int n, const T* x, int incx, T* y, int incy) {                 \
    return call(MUBLAS_IMPL(copy), h, n, x, incx, y, incy);                                        \
  }                                                                                                \
  MUBLAS_C(mublasStatus_t)                                                                         \
  mublas##P##swap(mublasHandle_t h, int n, T* x, int incx, T* y, int incy) {                       \
    return call(MUBLAS_IMPL(swap), h, n, x, incx, y, incy);                                        \
  }
MUBLAS_SDCZ(MUBLAS_L1)

#define MUBLAS_DOT(P, T, NAME, CONJ)                                                   \
  MUBLAS_C(mublasStatus_t)                                                             \
  mublas##P##NAME(mublasHandle_t h, int n, const T* x, int incx, const T* y, int incy, \
                  T* result) {                                                         \
    return call(MUBLAS_IMPL(dot), h, n, x, incx, y, incy, result, CONJ);               \
  }
MUBLAS_DOT(S, float, dot, false)
MUBLAS_DOT(D, double, dot, false)
MUBLAS_DOT(C, muComplex, dotu, false)
MUBLAS_DOT(C, muComplex, dotc, true)
MUBLAS_DOT(Z, muDoubleComplex, dotu, false)
MUBLAS_DOT(Z, muDoubleComplex, dotc, true)

// Complex vectors scaled by a real alpha.
MUBLAS_C(mublasStatus_t)
mublasCsscal(mublasHandle_t h, int n, const float* alpha, muComplex* x, int incx) {
  return call(MUBLAS_IMPL(scal), h, n, alpha, x, incx);
}
MUBLAS_C(mublasStatus_t)
mublasZdscal(mublasHandle_t h, int n, const double* alpha, muDoubleComplex* x, int incx) {
  return call(MUBLAS_IMPL(scal), h, n, alpha, x, incx);
}

// rot: P names the vectors' type, S the sine's.
#define MUBLAS_ROT(P, T, R, S)                                                        \
  MUBLAS_C(mublasStatus_t)                                                            \
  mublas##P##rot(mublasHandle_t h, int n, T* x, int incx, T* y, int incy, const R* c, \
                 const S* s) {                                                        \
    return call(MUBLAS_IMPL(rot), h, n, x, incx, y, incy, c, s);                      \
  }
MUBLAS_ROT(S, float, float, float)
MUBLAS_ROT(D, double, double, double)
MUBLAS_ROT(C, muComplex, float, muComplex)
MUBLAS_ROT(Cs, muComplex, float, float)
MUBLAS_ROT(Z, muDoubleComplex, double, muDoubleComplex)
MUBLAS_ROT(Zd, muDoubleComplex, double, double)

#define MUBLAS_ROTG(P, T, R)                                                           \
  MUBLAS_C(mublasStatus_t) mublas##P##rotg(mublasHandle_t h, T* a, T* b, R* c, T* s) { \
    return call(MUBLAS_IMPL(rotg), h, a, b, c, s);                                     \
  }
MUBLAS_ROTG(S, float, float)
MUBLAS_ROTG(D, double, double)
MUBLAS_ROTG(C, muComplex, float)
MUBLAS_ROTG(Z, muDoubleComplex, double)

#define MUBLAS_ROTM(P, T)                                                                    \
  MUBLAS_C(mublasStatus_t)                                                                   \
  mublas##P##rotm(mublasHandle_t h, int n, T* x, int incx, T* y, int incy, const T* param) { \
    return call(MUBLAS_IMPL(rotm), h, n, x, incx, y, incy, param);                           \
  }                                                                                          \
  MUBLAS_C(mublasStatus_t)                                                                   \
  mublas##P##rotmg(mublasHandle_t h, T* d1, T* d2, T* x1, const T* y1, T* param) {           \
    return call(MUBLAS_IMPL(rotmg), h, d1, d2, x1, y1, param);                               \
  }
MUBLAS_SD(MUBLAS_ROTM)

// ---- Ex entry points

MUBLAS_C(mublasStatus_t)
mublasNrm2Ex(mublasHandle_t h, int n, const void* x, musaDataType_t xType, int incx, void* result,
             musaDataType_t resultType, musaDataType_t executionType) {
  return call(MUBLAS_IMPL(nrm2_ex), h, n, x, xType, incx, result, resultType, executionType, false);
}
MUBLAS_C(mublasStatus_t)
mublasAsumEx(mublasHandle_t h, int n, const void* x, musaDataType_t xType, int incx, void* result,
             musaDataType_t resultType, musaDataType_t executiontype) {
  return call(MUBLAS_IMPL(nrm2_ex), h, n, x, xType, incx, result, resultType, executiontype, true);
}
MUBLAS_C(mublasStatus_t)
mublasDotEx(mublasHandle_t h, int n, const void* x, musaDataType_t xType, int incx, const void* y,
            musaDataType_t yType, int incy, void* result, musaDataType_t resultType,
            musaDataType_t executionType) {
  return call(MUBLAS_IMPL(dot_ex), h, n, x, xType, incx, y, yType, incy, result, resultType,
              executionType, false);
}
MUBLAS_C(mublasStatus_t)
mublasDotcEx(mublasHandle_t h, int n, const void* x, musaDataType_t xType, int incx, const void* y,
             musaDataType_t yType, int incy, void* result, musaDataType_t resultType,
             musaDataType_t executionType) {
  return call(MUBLAS_IMPL(dot_ex), h, n, x, xType, incx, y, yType, incy, result, resultType,
              executionType, true);
}
MUBLAS_C(mublasStatus_t)
mublasScalEx(mublasHandle_t h, int n, const void* alpha, musaDataType_t alphaType, void* x,
             musaDataType_t xType, int incx, musaDataType_t executionType) {
  return call(MUBLAS_IMPL(scal_ex), h, n, alpha, alphaType, x, xType, incx, executionType);
}
MUBLAS_C(mublasStatus_t)
mublasAxpyEx(mublasHandle_t h, int n, const void* alpha, musaDataType_t alphaType, const void* x,
             musaDataType_t xType, int incx, void* y, musaDataType_t yType, int incy,
             musaDataType_t executiontype) {
  return call(MUBLAS_IMPL(axpy_ex), h, n, alpha, alphaType, x, xType, incx, y, yType, incy,
              executiontype);
}
MUBLAS_C(mublasStatus_t)
mublasCopyEx(mublasHandle_t h, int n, const void* x, musaDataType_t xType, int incx, void* y,
             musaDataType_t yType, int incy) {
  return call(MUBLAS_IMPL(copy_ex), h, n, x, xType, incx, y, yType, incy, false);
}
MUBLAS_C(mublasStatus_t)
mublasSwapEx(mublasHandle_t h, int n, void* x, musaDataType_t xType, int incx, void* y,
             musaDataType_t yType, int incy) {
  return call(MUBLAS_IMPL(copy_ex), h, n, static_cast<const void*>(x), xType, incx, y, yType, incy,
              true);
}
MUBLAS_C(mublasStatus_t)
mublasIamaxEx(mublasHandle_t h, int n, const void* x, musaDataType_t xType, int incx, int* result) {
  return call(MUBLAS_IMPL(iamax_ex), h, n, x, xType, incx, result, false);
}
MUBLAS_C(mublasStatus_t)
mublasIaminEx(mublasHandle_t h, int n, const void* x, musaDataType_t xType, int incx, int* result) {
  return call(MUBLAS_IMPL(iamax_ex), h, n, x, xType, incx, result, true);
}
MUBLAS_C(mublasStatus_t)
mublasRotEx(mublasHandle_t h, int n, void* x, musaDataType_t xType, int incx, void* y,
            musaDataType_t yType, int incy, const void* c, const void* s, musaDataType_t csType,
            musaDataType_t executiontype) {
  return call(MUBLAS_IMPL(rot_ex), h, n, x, xType, incx, y, yType, incy, c, s, csType,
              executiontype);
}
MUBLAS_C(mublasStatus_t)
mublasRotgEx(mublasHandle_t h, void* a, void* b, musaDataType_t abType, void* c, void* s,
             musaDataType_t csType, musaDataType_t executiontype) {
  return call(MUBLAS_IMPL(rotg_ex), h, a, b, abType, c, s, csType, executiontype);
}
MUBLAS_C(mublasStatus_t)
mublasRotmEx(mublasHandle_t h, int n, void* x, musaDataType_t xType, int incx, void* y,
             musaDataType_t yType, int incy, const void* param, musaDataType_t paramType,
             musaDataType_t executiontype) {
  return call(MUBLAS_IMPL(rotm_ex), h, n, x, xType, incx, y, yType, incy, param, paramType,
              executiontype);
}
MUBLAS_C(mublasStatus_t)
mublasRotmgEx(mublasHandle_t h, void* d1, musaDataType_t d1Type, void* d2, musaDataType_t d2Type,
              void* x1, musaDataType_t x1Type, const void* y1, musaDataType_t y1Type, void* param,
              musaDataType_t paramType, musaDataType_t executiontype) {
  return call(MUBLAS_IMPL(rotmg_ex), h, d1, d1Type, d2, d2Type, x1, x1Type, y1, y1Type, param,
              paramType, executiontype);
}
