// Internal to libmublas: the handle, argument checks, scalars and the stream hand-off every
// routine shares. Matrices are column-major; element types are float, double, cf and cd
// (std::complex, layout-compatible with muComplex / muDoubleComplex).
#pragma once

#include <mublas.h>

#include "../enum_value.h"

#include <algorithm>
#include <complex>
#include <condition_variable>
#include <cstring>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

namespace mublas_sim {

using cf = std::complex<float>;
using cd = std::complex<double>;

// A unit of work queued on a stream (see enqueue.cc).
struct Task;

}  // namespace mublas_sim

struct _mublasHandle_t {
  musaStream_t stream = nullptr;
  mublasPointerMode_t pointer_mode = MUBLAS_POINTER_MODE_HOST;
  mublasAtomicsMode_t atomics = MUBLAS_ATOMICS_NOT_ALLOWED;
  mublasMath_t math = MUBLAS_DEFAULT_MATH;
  int sm_count_target = 0;
  void* workspace = nullptr;
  size_t workspace_size = 0;
  // Work enqueued while the stream was being captured belongs to the graph, which may replay it:
  // it lives until the handle is destroyed.
  std::mutex captured_mu;
  std::vector<std::unique_ptr<mublas_sim::Task>> captured;
  // Out of line, where Task is complete.
  _mublasHandle_t();
  ~_mublasHandle_t();
};

namespace mublas_sim {

// ---- Element types

template <class T>
struct Traits {
  using Real = T;
  static constexpr bool kComplex = false;
};
template <class R>
struct Traits<std::complex<R>> {
  using Real = R;
  static constexpr bool kComplex = true;
};
template <class T>
using RealOf = typename Traits<T>::Real;
template <class T>
constexpr bool kIsComplex = Traits<T>::kComplex;

template <class T>
inline T conj_if(T v, bool c) {
  if constexpr (kIsComplex<T>)
    return c ? std::conj(v) : v;
  else
    return v;
}
template <class T>
inline RealOf<T> real_of(T v) {
  if constexpr (kIsComplex<T>)
    return v.real();
  else
    return v;
}

// muBLAS's C types to the element types used inside.
inline float* in(float* p) { return p; }
inline const float* in(const float* p) { return p; }
inline double* in(double* p) { return p; }
inline const double* in(const double* p) { return p; }
inline cf* in(muComplex* p) { return reinterpret_cast<cf*>(p); }
inline const cf* in(const muComplex* p) { return reinterpret_cast<const cf*>(p); }
inline cd* in(muDoubleComplex* p) { return reinterpret_cast<cd*>(p); }
inline const cd* in(const muDoubleComplex* p) { return reinterpret_cast<const cd*>(p); }
// The 16-bit storage types (defined in convert.h) of __half and __mt_bfloat16 data.
struct half_t;
struct bf16_t;
inline half_t* in(__half* p) { return reinterpret_cast<half_t*>(p); }
inline const half_t* in(const __half* p) { return reinterpret_cast<const half_t*>(p); }
inline bf16_t* in(__mt_bfloat16* p) { return reinterpret_cast<bf16_t*>(p); }
inline const bf16_t* in(const __mt_bfloat16* p) { return reinterpret_cast<const bf16_t*>(p); }
// Pointer arrays of the batched routines.
template <class M>
inline auto in(M* const* p) {
  using E = std::remove_pointer_t<decltype(in(static_cast<M*>(nullptr)))>;
  return reinterpret_cast<E* const*>(p);
}
// Everything else (handles, enumerators, sizes, other pointers) passes unchanged.
template <class V>
inline V in(V v) {
  return v;
}

static_assert(sizeof(muComplex) == sizeof(cf) && alignof(muComplex) >= alignof(cf));
static_assert(sizeof(muDoubleComplex) == sizeof(cd) && alignof(muDoubleComplex) >= alignof(cd));

// ---- Enumerations

using simenum::enum_value;  // sim/enum_value.h

inline bool valid(const mublasOperation_t& e) {
  const int v = enum_value(e);
  return v == MUBLAS_OP_N || v == MUBLAS_OP_T || v == MUBLAS_OP_C;
}
// Upper or lower: MUBLAS_FILL_MODE_FULL is accepted by no routine here.
inline bool valid(const mublasFillMode_t& e) {
  const int v = enum_value(e);
  return v == MUBLAS_FILL_MODE_UPPER || v == MUBLAS_FILL_MODE_LOWER;
}
inline bool valid(const mublasDiagType_t& e) {
  const int v = enum_value(e);
  return v == MUBLAS_DIAG_NON_UNIT || v == MUBLAS_DIAG_UNIT;
}
// Left or right: MUBLAS_SIDE_BOTH is accepted by no routine here.
inline bool valid(const mublasSideMode_t& e) {
  const int v = enum_value(e);
  return v == MUBLAS_SIDE_LEFT || v == MUBLAS_SIDE_RIGHT;
}

inline bool is_n(mublasOperation_t v) { return v == MUBLAS_OP_N; }
inline bool is_upper(mublasFillMode_t v) { return v == MUBLAS_FILL_MODE_UPPER; }
inline bool is_unit(mublasDiagType_t v) { return v == MUBLAS_DIAG_UNIT; }
inline bool is_left(mublasSideMode_t v) { return v == MUBLAS_SIDE_LEFT; }

// ---- Argument checks: the first failing check decides the status, in the order they are made
// (handle, then each argument in turn).
class Check {
 public:
  explicit Check(mublasHandle_t h)
      : st_(h == nullptr ? MUBLAS_STATUS_INVALID_HANDLE : MUBLAS_STATUS_SUCCESS) {}
  Check() : st_(MUBLAS_STATUS_SUCCESS) {}

  // An enumerator (checked without loading it: see enum_value).
  template <class E>
  Check& e(const E& v) {
    return fail_if(!valid(v), MUBLAS_STATUS_INVALID_VALUE);
  }
  // A dimension or count: >= 0.
  Check& dim(long long v) { return fail_if(v < 0, MUBLAS_STATUS_INVALID_SIZE); }
  // A leading dimension: >= max(1, rows).
  Check& ld(long long ld, long long rows) {
    return fail_if(ld < std::max(1LL, rows), MUBLAS_STATUS_INVALID_SIZE);
  }
  Check& inc(int v) { return fail_if(v == 0, MUBLAS_STATUS_INVALID_SIZE); }
  Check& size_if(bool bad) { return fail_if(bad, MUBLAS_STATUS_INVALID_SIZE); }
  Check& value_if(bool bad) { return fail_if(bad, MUBLAS_STATUS_INVALID_VALUE); }
  // A pointer that the call needs: non-NULL.
  Check& ptr(const void* p) { return fail_if(p == nullptr, MUBLAS_STATUS_INVALID_POINTER); }
  template <class... P>
  Check& ptrs(const P*... p) {
    (ptr(p), ...);
    return *this;
  }
  bool ok() const { return st_ == MUBLAS_STATUS_SUCCESS; }
  mublasStatus_t status() const { return st_; }

 private:
  Check& fail_if(bool bad, mublasStatus_t s) {
    if (ok() && bad) st_ = s;
    return *this;
  }
  mublasStatus_t st_;
};

// ---- Operands in device memory

// Bytes a column-major rows x cols matrix with leading dimension ld spans (0 when empty).
inline size_t matrix_bytes(long long rows, long long cols, long long ld, size_t esize) {
  if (rows <= 0 || cols <= 0) return 0;
  return static_cast<size_t>((cols - 1) * ld + rows) * esize;
}

// Bytes `batch` entries of `one` bytes each, `stride` elements apart, span from the first
// (negative strides: the first entry alone is checked).
inline size_t strided_bytes(size_t one, long long stride, long long batch, size_t esize) {
  if (one == 0 || batch <= 0) return 0;
  if (stride < 0) return one;
  return static_cast<size_t>((batch - 1) * stride) * esize + one;
}

// Where a routine's work faults: the device of the handle's stream (taken when the routine is
// called) and the routine's name for the log line.
struct FaultSite {
  int device = 0;
  const char* routine = "";
};
FaultSite fault_site(mublasHandle_t h, const char* routine);

// Whether the `bytes` bytes from `p` lie in device memory. When not, what a GPU kernel reading
// or writing them does: the device takes the sticky musaErrorIllegalAddress (reported by the next
// synchronisation) and one line names the routine, the operand and its span; the caller skips
// the work. Called from the work itself, in stream order, when a kernel would touch the operand.
bool operand_ok(const FaultSite& site, const char* operand, const void* p, size_t bytes);

#define MUBLAS_TRY(expr)                                        \
  do {                                                          \
    const mublasStatus_t mublas_st_ = (expr);                   \
    if (mublas_st_ != MUBLAS_STATUS_SUCCESS) return mublas_st_; \
  } while (0)

// ---- Scalars: read at call time in host pointer mode, when the work runs in device mode.
template <class T>
class Scalar {
 public:
  Scalar() = default;
  Scalar(mublasHandle_t h, const T* p) {
    if (h->pointer_mode == MUBLAS_POINTER_MODE_DEVICE)
      p_ = p;
    else
      v_ = *p;
  }
  static Scalar of(T v) {
    Scalar s;
    s.v_ = v;
    return s;
  }
  T operator()() const { return p_ != nullptr ? *p_ : v_; }
  // Known to be zero at call time (host pointer mode only).
  bool host_zero() const { return p_ == nullptr && v_ == T(0); }

 private:
  T v_{};
  const T* p_ = nullptr;
};

// ---- Stream hand-off

enum class Wait {
  kNo,          // asynchronous
  kIfHostMode,  // a result written through a pointer: synchronous in host pointer mode
};

// Queues fn on the handle's stream (musaLaunchHostFunc). With Wait::kIfHostMode in host pointer
// mode, returns once fn has run (refused while the stream is being captured).
mublasStatus_t enqueue(mublasHandle_t h, std::function<void()> fn, Wait wait = Wait::kNo);

// Runs an API body, turning an escaping exception into a status (nothing crosses the C ABI).
template <class F>
mublasStatus_t guard(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return MUBLAS_STATUS_MEMORY_ERROR;
  } catch (...) {
    return MUBLAS_STATUS_INTERNAL_ERROR;
  }
}

// ---- Indexing helpers

// Start of a strided vector of n elements for BLAS's negative-increment convention.
template <class T>
inline T* vec_start(T* p, int n, int inc) {
  return inc < 0 ? p - static_cast<std::ptrdiff_t>(n - 1) * inc : p;
}
inline std::ptrdiff_t idx(long long i, long long j, long long ld) { return i + j * ld; }

}  // namespace mublas_sim

namespace mublas_sim {

// Calls an implementation with the C arguments converted by in(), under guard().
template <class F, class... A>
mublasStatus_t call(F f, A... a) noexcept {
  return guard([&] { return f(in(a)...); });
}

}  // namespace mublas_sim

// The C entry points: thin wrappers, one macro a routine instantiated for its precisions, e.g.
//   #define AXPY(P, T) MUBLAS_C(mublasStatus_t) mublas##P##axpy(...) {
//     return call(MUBLAS_IMPL(axpy), h, n, alpha, x, incx, y, incy); }
//   MUBLAS_SDCZ(AXPY)
#define MUBLAS_C(ret) extern "C" MUBLAS_API ret
#define MUBLAS_IMPL(fn) [](auto... mublas_args_) { return ::mublas_sim::fn(mublas_args_...); }
#define MUBLAS_SD(M) M(S, float) M(D, double)
#define MUBLAS_CZ(M) M(C, muComplex) M(Z, muDoubleComplex)
#define MUBLAS_SDCZ(M) MUBLAS_SD(M) MUBLAS_CZ(M)
