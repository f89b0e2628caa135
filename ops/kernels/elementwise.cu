// The elementwise engine: one kernel template for every operator in elementwise.h's list, a
// functor each. The host side (src/device/elementwise.cpp) has already done what PyTorch's
// TensorIterator does (broadcasting, type promotion, output allocation, dimension coalescing);
// the kernel maps a linear index to each operand's offset, converts loads to the compute type,
// applies the functor and converts the result to the output's type.
//
// Work split: a block covers kItems * blockDim.x consecutive elements. On a GPU thread t takes the
// elements t, t + blockDim.x, ... of them (coalesced). On the simulator, where a block's threads
// run one after the other on one core, thread t takes a run of kItems consecutive elements, and a
// strided launch advances its operands' offsets along the fastest dimension instead of dividing
// the index for every element.
#include "device_math.cuh"
#include "elementwise.h"
#include "memory.cuh"
#include "portable.cuh"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

using elementwise::Args;
using elementwise::Compute;
using elementwise::Kind;
using elementwise::Op;
using memory::load;
using memory::store;

#if defined(TORCHADA_KERNELS_HOST)
constexpr int kItems = 64;
#else
constexpr int kItems = 4;
#endif
constexpr int kThreads = 256;

template <class T>
constexpr bool kIntegral = std::is_integral_v<T>;

// A constant of the operator in the compute type: integral computations take the exact form.
template <class T>
__host__ T constant(const Args& a, int i) {
  if constexpr (kIntegral<T>)
    return static_cast<T>(a.ic[i]);
  else
    return static_cast<T>(a.c[i]);
}

// Wrapping integer arithmetic (the narrow types' own overflow behaviour, without C++'s UB).
template <class T>
__device__ __forceinline__ T wrap_add(T a, T b) {
  if constexpr (kIntegral<T>)
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return a + b;
}
template <class T>
__device__ __forceinline__ T wrap_mul(T a, T b) {
  if constexpr (kIntegral<T>)
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    return a * b;
}
template <class T>
__device__ __forceinline__ bool is_nan(T v) {
  if constexpr (kIntegral<T>)
    return false;
  else
    return v != v;
}

// Integer division and remainder as a GPU answers the cases C++ leaves undefined: a zero divisor
// gives -1 (NVIDIA's quotient) and remainder 0... never a trap in the simulator's process.
__device__ __forceinline__ int64_t idiv(int64_t a, int64_t b) {
  if (b == 0) return -1;
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  return a / b;
}
__device__ __forceinline__ int64_t imod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}
__device__ __forceinline__ int64_t ipow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  while (exp) {
    if (exp & 1) result *= b;
    exp >>= 1;
    b *= b;
  }
  return static_cast<int64_t>(result);
}

// Gelu and its derivative, exact (through erf) and with the tanh approximation: separate
// operators rather than a flag, so that each loop is branch-free and the executor's compiler
// vectorises it.
template <class T>
__device__ __forceinline__ T gelu(T x) {
  return x * T(0.5) * (T(1) + device_math::erf(x * T(M_SQRT1_2)));
}

template <class T>
__device__ __forceinline__ T gelu_tanh(T x) {
  const T k_beta = T(M_SQRT2 * M_2_SQRTPI * 0.5);
  const T k_kappa = T(0.044715);
  const T inner = k_beta * (x + k_kappa * x * x * x);
  return T(0.5) * x * (T(1) + std::tanh(inner));
}

template <class T>
__device__ __forceinline__ T gelu_backward(T dy, T x) {
  const T cdf = T(0.5) * (T(1) + device_math::erf(x * T(M_SQRT1_2)));
  const T pdf = device_math::exp(T(-0.5) * x * x) * T(M_2_SQRTPI * M_SQRT1_2 * 0.5);
  return dy * (cdf + x * pdf);
}

template <class T>
__device__ __forceinline__ T gelu_tanh_backward(T dy, T x) {
  const T k_beta = T(M_SQRT2 * M_2_SQRTPI * 0.5);
  const T k_kappa = T(0.044715);
  const T x_sq = x * x;
  const T inner = k_beta * (x + k_kappa * x_sq * x);
  const T t = std::tanh(inner);
  const T left = T(0.5) * x;
  const T right = T(1) + t;
  const T left_derivative = T(0.5) * right;
  const T right_derivative = left * (T(1) - t * t) * k_beta * (T(1) + T(3) * k_kappa * x_sq);
  return dy * (left_derivative + right_derivative);
}

// ---- the functors: Fn<Op, T>, each with its arity and the constants it reads ----------------

template <Op O, class T>
struct Fn;

#define TORCHADA_FN0(name, body)                                   \
  template <class T>                                               \
  struct Fn<Op::k##name, T> {                                      \
    static constexpr int kArity = 0;                               \
    T c0;                                                          \
    __host__ explicit Fn(const Args& a) : c0(constant<T>(a, 0)) {} \
    __device__ __forceinline__ auto operator()() const { body; }   \
  };
#define TORCHADA_FN1(name, body)                                    \
  template <class T>                                                \
  struct Fn<Op::k##name, T> {                                       \
    static constexpr int kArity = 1;                                \
    T c0, c1, c2, c3;                                               \
    __host__ explicit Fn(const Args& a)                             \
        : c0(constant<T>(a, 0)),                                    \
          c1(constant<T>(a, 1)),                                    \
          c2(constant<T>(a, 2)),                                    \
          c3(constant<T>(a, 3)) {}                                  \
    __device__ __forceinline__ auto operator()(T x) const { body; } \
  };
#define TORCHADA_FN2(name, body)                                         \
  template <class T>                                                     \
  struct Fn<Op::k##name, T> {                                            \
    static constexpr int kArity = 2;                                     \
    T c0, c1, c2, c3;                                                    \
    __host__ explicit Fn(const Args& a)                                  \
        : c0(constant<T>(a, 0)),                                         \
          c1(constant<T>(a, 1)),                                         \
          c2(constant<T>(a, 2)),                                         \
          c3(constant<T>(a, 3)) {}                                       \
    __device__ __forceinline__ auto operator()(T x, T y) const { body; } \
  };
#define TORCHADA_FN3(name, body)                                              \
  template <class T>                                                          \
  struct Fn<Op::k##name, T> {                                                 \
    static constexpr int kArity = 3;                                          \
    T c0, c1, c2, c3;                                                         \
    __host__ explicit Fn(const Args& a)                                       \
        : c0(constant<T>(a, 0)),                                              \
          c1(constant<T>(a, 1)),                                              \
          c2(constant<T>(a, 2)),                                              \
          c3(constant<T>(a, 3)) {}                                            \
    __device__ __forceinline__ auto operator()(T x, T y, T z) const { body; } \
  };

TORCHADA_FN0(Fill, return c0)

TORCHADA_FN1(Copy, return x)
TORCHADA_FN1(Neg, return static_cast<T>(wrap_mul(x, T(-1))))
TORCHADA_FN1(Abs, if constexpr (kIntegral<T>) return x < 0 ? wrap_mul(x, T(-1)) : x;
             else return std::fabs(x))
TORCHADA_FN1(Sign, return static_cast<T>((T(0) < x) - (x < T(0))))
TORCHADA_FN1(BitwiseNot, if constexpr (kIntegral<T>) return static_cast<T>(~x); else return x)
TORCHADA_FN1(LogicalNot, return x == T(0))
TORCHADA_FN1(Clamp, if (is_nan(x)) return x; if (is_nan(c0)) return c0; if (is_nan(c1)) return c1;
             const T lo = x < c0 ? c0 : x; return lo > c1 ? c1 : lo)
TORCHADA_FN1(Exp, return device_math::exp(x))
TORCHADA_FN1(Exp2, return std::exp2(x))
TORCHADA_FN1(Expm1, return std::expm1(x))
TORCHADA_FN1(Log, return std::log(x))
TORCHADA_FN1(Log2, return std::log2(x))
TORCHADA_FN1(Log1p, return std::log1p(x))
TORCHADA_FN1(Sqrt, return std::sqrt(x))
TORCHADA_FN1(Rsqrt, return T(1) / std::sqrt(x))
TORCHADA_FN1(Reciprocal, return T(1) / x)
TORCHADA_FN1(Sin, return std::sin(x))
TORCHADA_FN1(Cos, return std::cos(x))
TORCHADA_FN1(Tanh, return std::tanh(x))
TORCHADA_FN1(Sigmoid, return T(1) / (T(1) + device_math::exp(-x)))
TORCHADA_FN1(Erf, return device_math::erf(x))
TORCHADA_FN1(Floor, if constexpr (kIntegral<T>) return x; else return std::floor(x))
TORCHADA_FN1(Ceil, if constexpr (kIntegral<T>) return x; else return std::ceil(x))
TORCHADA_FN1(Round, if constexpr (kIntegral<T>) return x; else return std::nearbyint(x))
TORCHADA_FN1(Trunc, if constexpr (kIntegral<T>) return x; else return std::trunc(x))
TORCHADA_FN1(Relu, if (is_nan(x)) return x; return x > T(0) ? x : T(0))
TORCHADA_FN1(Gelu, return gelu(x))
TORCHADA_FN1(GeluTanh, return gelu_tanh(x))
TORCHADA_FN1(Silu, return x / (T(1) + device_math::exp(-x)))
TORCHADA_FN1(Mish, return x * std::tanh(std::log1p(std::exp(x))))
TORCHADA_FN1(Softplus, return x * c0 > c1 ? x : std::log1p(std::exp(x * c0)) / c0)
TORCHADA_FN1(Elu, return x <= T(0) ? std::expm1(x * c2) * c0 * c1 : x * c1)
TORCHADA_FN1(LeakyRelu, return x > T(0) ? x : x * c0)
TORCHADA_FN1(Hardsigmoid, const T s = x + T(3); const T r = s < T(0) ? T(0) : (s > T(6) ? T(6) : s);
             return r / T(6))
TORCHADA_FN1(Hardswish, const T s = x + T(3); const T r = s < T(0) ? T(0) : (s > T(6) ? T(6) : s);
             return x * r / T(6))
TORCHADA_FN1(
    PowScalar, if constexpr (kIntegral<T>) return ipow(x, c0); else {
      if (c0 == T(2)) return x * x;
      if (c0 == T(3)) return x * x * x;
      if (c0 == T(0.5)) return std::sqrt(x);
      if (c0 == T(-0.5)) return T(1) / std::sqrt(x);
      if (c0 == T(-1)) return T(1) / x;
      if (c0 == T(-2)) return T(1) / (x * x);
      return std::pow(x, c0);
    })
TORCHADA_FN1(NanToNum, if (x != x) return c0; if (std::isinf(x)) return x > T(0) ? c1 : c2;
             return x)

TORCHADA_FN2(Add, return wrap_add(x, wrap_mul(c0, y)))
TORCHADA_FN2(Mul, return wrap_mul(x, y))
TORCHADA_FN2(Div, return x / y)
TORCHADA_FN2(DivTrunc, if constexpr (kIntegral<T>) return idiv(x, y); else return std::trunc(x / y))
TORCHADA_FN2(
    DivFloor,
    if constexpr (kIntegral<T>) {
      if (y == 0) return T(-1);
      const T q = idiv(x, y);
      return ((x < 0) != (y < 0)) && imod(x, y) != 0 ? T(q - 1) : q;
    } else {
      if (y == T(0)) return x / y;
      const T mod = std::fmod(x, y);
      T div = (x - mod) / y;
      if (mod != T(0) && (y < T(0)) != (mod < T(0))) div -= T(1);
      T floordiv;
      if (div != T(0)) {
        floordiv = std::floor(div);
        if (div - floordiv > T(0.5)) floordiv += T(1);
      } else {
        floordiv = std::copysign(T(0), x / y);
      }
      return floordiv;
    })
TORCHADA_FN2(
    Remainder,
    if constexpr (kIntegral<T>) {
      T r = imod(x, y);
      if (r != 0 && (r < 0) != (y < 0)) r += y;
      return r;
    } else {
      T m = std::fmod(x, y);
      if (m != T(0) && (y < T(0)) != (m < T(0))) m += y;
      return m;
    })
TORCHADA_FN2(Fmod, if constexpr (kIntegral<T>) return imod(x, y); else return std::fmod(x, y))
TORCHADA_FN2(Pow, if constexpr (kIntegral<T>) return ipow(x, y); else return std::pow(x, y))
TORCHADA_FN2(Atan2, return std::atan2(x, y))
TORCHADA_FN2(Maximum, if (is_nan(x)) return x; if (is_nan(y)) return y; return x > y ? x : y)
TORCHADA_FN2(Minimum, if (is_nan(x)) return x; if (is_nan(y)) return y; return x < y ? x : y)
TORCHADA_FN2(Eq, return x == y)
TORCHADA_FN2(Ne, return x != y)
TORCHADA_FN2(Lt, return x < y)
TORCHADA_FN2(Le, return x <= y)
TORCHADA_FN2(Gt, return x > y)
TORCHADA_FN2(Ge, return x >= y)
TORCHADA_FN2(LogicalAnd, return x != T(0) && y != T(0))
TORCHADA_FN2(LogicalOr, return x != T(0) || y != T(0))
TORCHADA_FN2(BitwiseAnd, if constexpr (kIntegral<T>) return static_cast<T>(x & y); else return x)
TORCHADA_FN2(BitwiseOr, if constexpr (kIntegral<T>) return static_cast<T>(x | y); else return x)
TORCHADA_FN2(BitwiseXor, if constexpr (kIntegral<T>) return static_cast<T>(x ^ y); else return x)
TORCHADA_FN2(Threshold, return x <= c0 ? c1 : y)
TORCHADA_FN2(MaskedFill, return y != T(0) ? c0 : x)
TORCHADA_FN2(GeluBackward, return gelu_backward(x, y))
TORCHADA_FN2(GeluTanhBackward, return gelu_tanh_backward(x, y))
TORCHADA_FN2(SiluBackward, const T s = T(1) / (T(1) + device_math::exp(-y));
             return x * s * (T(1) + y * (T(1) - s)))
TORCHADA_FN2(SigmoidBackward, return x * (T(1) - y) * y)
TORCHADA_FN2(TanhBackward, return x * (T(1) - y * y))
TORCHADA_FN2(LeakyReluBackward, return x > T(0) ? y : y * c0)
TORCHADA_FN2(SoftplusBackward, const T z = std::exp(y * c0);
             return y * c0 > c1 ? x : x * z / (z + T(1)))
TORCHADA_FN2(HardsigmoidBackward, return (y > T(-3) && y < T(3)) ? x / T(6) : T(0))
TORCHADA_FN2(HardswishBackward, if (y < T(-3)) return T(0);
             if (y <= T(3)) return x * ((y / T(3)) + T(0.5)); return x)
TORCHADA_FN2(HardtanhBackward, return (y <= c0 || y >= c1) ? T(0) : x)
TORCHADA_FN2(EluBackward, if (c3 != T(0)) return y <= T(0) ? x * c2 * (y + c0 * c1) : x * c1;
             return y <= T(0) ? x * c2 * c0 * c1 * std::exp(y * c2) : x * c1)
TORCHADA_FN2(LerpScalar, return c0 < T(0.5) ? x + c0 * (y - x) : y - (y - x) * (T(1) - c0))

TORCHADA_FN3(MseBackward, return c0 * (x - y) * z)
TORCHADA_FN3(LerpTensor, return z < T(0.5) ? x + z * (y - x) : y - (y - x) * (T(1) - z))
TORCHADA_FN3(Where, return x != T(0) ? y : z)
TORCHADA_FN3(Addcmul, return wrap_add(x, wrap_mul(c0, wrap_mul(y, z))))
TORCHADA_FN3(Addcdiv, return x + c0 * (y / z))

#undef TORCHADA_FN0
#undef TORCHADA_FN1
#undef TORCHADA_FN2
#undef TORCHADA_FN3

// ---- the kernel -----------------------------------------------------------------------------

// The functor's result type: bool for comparisons and logic, the compute type otherwise.
template <Op O, class T>
using ResultOf = std::conditional_t<O == Op::kEq || O == Op::kNe || O == Op::kLt || O == Op::kLe ||
                                        O == Op::kGt || O == Op::kGe || O == Op::kLogicalNot ||
                                        O == Op::kLogicalAnd || O == Op::kLogicalOr,
                                    bool, T>;

template <class T>
__device__ __forceinline__ T input(const Args& a, int k, int64_t offset) {
  if (a.is_value[k]) {
    if constexpr (kIntegral<T>)
      return static_cast<T>(a.ivalue[k]);
    else
      return static_cast<T>(a.value[k]);
  }
  return load<T>(a.data[k] + offset, a.kind[k]);
}

// The functor on arguments of one value (its result type is what matters).
template <class F, class T>
__device__ __forceinline__ auto call(const F& f, T v) {
  if constexpr (F::kArity == 0) {
    (void)v;
    return f();
  } else if constexpr (F::kArity == 1) {
    return f(v);
  } else if constexpr (F::kArity == 2) {
    return f(v, v);
  } else {
    return f(v, v, v);
  }
}

// Operand k's element i of a dense launch: every array operand contiguous and stored in the type
// of its value (the compute type for inputs, the functor's result for the output), so loads and
// stores are plain and the compiler sees through them.
template <class S>
__device__ __forceinline__ S dense_input(const Args& a, int k, int64_t i) {
  if (a.is_value[k]) {
    if constexpr (kIntegral<S>)
      return static_cast<S>(a.ivalue[k]);
    else
      return static_cast<S>(a.value[k]);
  }
  return reinterpret_cast<const S*>(a.data[k])[i];
}

// How a launch addresses its operands: dense (contiguous, every array operand in its value type),
// native (strided, value types), or generic (strided, any types: converted on load and store).
enum class Access { kGeneric, kNative, kDense };

template <class S>
__device__ __forceinline__ S native_input(const Args& a, int k, int64_t offset) {
  if (a.is_value[k]) {
    if constexpr (kIntegral<S>)
      return static_cast<S>(a.ivalue[k]);
    else
      return static_cast<S>(a.value[k]);
  }
  return *reinterpret_cast<const S*>(a.data[k] + offset);
}

// Each operand's byte offset of element i of a strided launch.
__device__ __forceinline__ void offsets_of(const Args& a, int64_t i, int64_t* off) {
  for (int k = 0; k < a.noperands; ++k) off[k] = 0;
  if (a.contiguous) {
    for (int k = 0; k < a.noperands; ++k) off[k] = i * a.strides[k][0];
  } else if (a.index32) {
    uint32_t rest = static_cast<uint32_t>(i);
    for (int d = 0; d < a.ndim; ++d) {
      const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(rest) * a.magic[d]) >> 32);
      const uint32_t q = (hi + rest) >> a.shift[d];
      const uint32_t idx = rest - q * static_cast<uint32_t>(a.sizes[d]);
      rest = q;
      for (int k = 0; k < a.noperands; ++k) off[k] += static_cast<int64_t>(idx) * a.strides[k][d];
    }
  } else {
    int64_t rest = i;
    for (int d = 0; d < a.ndim; ++d) {
      const int64_t size = a.sizes[d];
      const int64_t idx = rest % size;
      rest /= size;
      for (int k = 0; k < a.noperands; ++k) off[k] += idx * a.strides[k][d];
    }
  }
}

// The functor at the operands' offsets `off` (a strided launch).
template <class T, class R, class F, Access M>
__device__ __forceinline__ void apply_at(const Args& a, const F& f, const int64_t* off) {
  if constexpr (M == Access::kNative) {
    R* out = reinterpret_cast<R*>(a.data[0] + off[0]);
    if constexpr (F::kArity == 0)
      *out = f();
    else if constexpr (F::kArity == 1)
      *out = f(native_input<T>(a, 1, off[1]));
    else if constexpr (F::kArity == 2)
      *out = f(native_input<T>(a, 1, off[1]), native_input<T>(a, 2, off[2]));
    else
      *out = f(native_input<T>(a, 1, off[1]), native_input<T>(a, 2, off[2]),
               native_input<T>(a, 3, off[3]));
  } else if constexpr (F::kArity == 0) {
    store(a.data[0] + off[0], a.kind[0], f());
  } else if constexpr (F::kArity == 1) {
    store(a.data[0] + off[0], a.kind[0], f(input<T>(a, 1, off[1])));
  } else if constexpr (F::kArity == 2) {
    store(a.data[0] + off[0], a.kind[0], f(input<T>(a, 1, off[1]), input<T>(a, 2, off[2])));
  } else {
    store(a.data[0] + off[0], a.kind[0],
          f(input<T>(a, 1, off[1]), input<T>(a, 2, off[2]), input<T>(a, 3, off[3])));
  }
}

// The functor at element i.
template <class T, class R, class F, Access M>
__device__ __forceinline__ void apply(const Args& a, const F& f, int64_t i) {
  if constexpr (M == Access::kDense) {
    static_assert(std::is_same_v<R, std::remove_cv_t<decltype(call(f, T()))>>,
                  "ResultOf<> disagrees with the functor's result");
    R* out = reinterpret_cast<R*>(a.data[0]);
    if constexpr (F::kArity == 0)
      out[i] = f();
    else if constexpr (F::kArity == 1)
      out[i] = f(dense_input<T>(a, 1, i));
    else if constexpr (F::kArity == 2)
      out[i] = f(dense_input<T>(a, 1, i), dense_input<T>(a, 2, i));
    else
      out[i] = f(dense_input<T>(a, 1, i), dense_input<T>(a, 2, i), dense_input<T>(a, 3, i));
  } else {
    int64_t off[Args::kMaxOperands];
    offsets_of(a, i, off);
    apply_at<T, R, F, M>(a, f, off);
  }
}

#if defined(TORCHADA_KERNELS_HOST)
// A dense launch's elements [first, last) with the operands held in locals: stores through
// a.data could, as far as the compiler knows, change `a` itself, so reading the operands from it
// in the loop keeps the loop scalar. Each combination of array and value inputs is its own loop,
// which the compiler vectorises.
template <class T, class R, class F>
void dense_run(const Args& a, const F& functor, int64_t first, int64_t last) {
  const F f = functor;
  R* __restrict__ out = reinterpret_cast<R*>(a.data[0]);
  const auto array = [&](int k) -> const T* {
    return a.is_value[k] ? nullptr : reinterpret_cast<const T*>(a.data[k]);
  };
  const auto value = [&](int k) { return dense_input<T>(a, k, 0); };
  if constexpr (F::kArity == 0) {
    for (int64_t i = first; i < last; ++i) out[i] = f();
  } else if constexpr (F::kArity == 1) {
    if (const T* __restrict__ x = array(1)) {
      for (int64_t i = first; i < last; ++i) out[i] = f(x[i]);
    } else {
      const R r = f(value(1));
      for (int64_t i = first; i < last; ++i) out[i] = r;
    }
  } else if constexpr (F::kArity == 2) {
    const T* __restrict__ x = array(1);
    const T* __restrict__ y = array(2);
    if (x && y) {
      for (int64_t i = first; i < last; ++i) out[i] = f(x[i], y[i]);
    } else if (x) {
      const T vy = value(2);
      for (int64_t i = first; i < last; ++i) out[i] = f(x[i], vy);
    } else if (y) {
      const T vx = value(1);
      for (int64_t i = first; i < last; ++i) out[i] = f(vx, y[i]);
    } else {
      const R r = f(value(1), value(2));
      for (int64_t i = first; i < last; ++i) out[i] = r;
    }
  } else {
    const T* __restrict__ x = array(1);
    const T* __restrict__ y = array(2);
    const T* __restrict__ z = array(3);
    const T vx = value(1), vy = value(2), vz = value(3);
    if (x && y && z) {
      for (int64_t i = first; i < last; ++i) out[i] = f(x[i], y[i], z[i]);
    } else {
      for (int64_t i = first; i < last; ++i)
        out[i] = f(x ? x[i] : vx, y ? y[i] : vy, z ? z[i] : vz);
    }
  }
}

// `n` elements of a strided launch along dimension 0 from the byte offsets `off`: native access
// with the operands' base pointers and steps in locals, generic access through apply_at.
template <class T, class R, class F, Access M>
void strided_run(const Args& a, const F& functor, const int64_t* off, int64_t n) {
  if constexpr (M == Access::kNative) {
    const F f = functor;
    char* out = a.data[0] + off[0];
    const int64_t os = a.strides[0][0];
    const char* in[3] = {};
    int64_t step[3] = {};
    T value[3] = {};
    for (int k = 0; k < F::kArity; ++k) {
      if (a.is_value[k + 1]) {
        value[k] = native_input<T>(a, k + 1, 0);
      } else {
        in[k] = a.data[k + 1] + off[k + 1];
        step[k] = a.strides[k + 1][0];
      }
    }
    const auto arg = [&](int k, int64_t j) {
      return in[k] ? *reinterpret_cast<const T*>(in[k] + j * step[k]) : value[k];
    };
    for (int64_t j = 0; j < n; ++j) {
      R* o = reinterpret_cast<R*>(out + j * os);
      if constexpr (F::kArity == 0)
        *o = f();
      else if constexpr (F::kArity == 1)
        *o = f(arg(0, j));
      else if constexpr (F::kArity == 2)
        *o = f(arg(0, j), arg(1, j));
      else
        *o = f(arg(0, j), arg(1, j), arg(2, j));
    }
  } else {
    int64_t at[Args::kMaxOperands];
    for (int k = 0; k < a.noperands; ++k) at[k] = off[k];
    for (int64_t j = 0; j < n; ++j) {
      apply_at<T, R, F, M>(a, functor, at);
      for (int k = 0; k < a.noperands; ++k) at[k] += a.strides[k][0];
    }
  }
}
#endif

template <class T, class R, class F, Access M>
__global__ void elementwise_kernel(TORCHADA_PARAM(Args) a, F f) {
#if defined(TORCHADA_KERNELS_HOST)
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kItems;
  const int64_t last = first + kItems < a.numel ? first + kItems : a.numel;
  if (first >= last) return;
  if constexpr (M == Access::kDense) {
    dense_run<T, R, F>(a, f, first, last);
    return;
  }
  if (a.contiguous || a.ndim == 0) {
    for (int64_t i = first; i < last; ++i) apply<T, R, F, M>(a, f, i);
    return;
  }
  // An odometer over the dimensions (0 fastest) that moves a run of elements along dimension 0 at
  // a time: the offsets move by strides, and a dimension that wraps carries into the next, so no
  // element costs a division (short inner dimensions, such as attention's heads, wrap every few
  // elements).
  int64_t off[Args::kMaxOperands];
  int64_t idx[Args::kMaxDims];
  offsets_of(a, first, off);
  int64_t rest = first;
  for (int d = 0; d < a.ndim; ++d) {
    idx[d] = rest % a.sizes[d];
    rest /= a.sizes[d];
  }
  for (int64_t i = first; i < last;) {
    const int64_t left = a.sizes[0] - idx[0];
    const int64_t run = left < last - i ? left : last - i;
    strided_run<T, R, F, M>(a, f, off, run);
    i += run;
    idx[0] += run;
    for (int k = 0; k < a.noperands; ++k) off[k] += a.strides[k][0] * run;
    if (idx[0] < a.sizes[0]) continue;
    idx[0] = 0;
    for (int k = 0; k < a.noperands; ++k) off[k] -= a.strides[k][0] * a.sizes[0];
    for (int d = 1; d < a.ndim; ++d) {
      if (++idx[d] < a.sizes[d]) {
        for (int k = 0; k < a.noperands; ++k) off[k] += a.strides[k][d];
        break;
      }
      idx[d] = 0;
      for (int k = 0; k < a.noperands; ++k) off[k] -= a.strides[k][d] * (a.sizes[d] - 1);
    }
  }
#else
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x * kItems + threadIdx.x;
  const int64_t step = blockDim.x;
  for (int j = 0; j < kItems; ++j) {
    const int64_t i = first + j * step;
    if (i >= a.numel) return;
    apply<T, R, F, M>(a, f, i);
  }
#endif
}

// The element kind a value of type S is stored in, when it has one.
template <class S>
constexpr int kind_of_type() {
  if constexpr (std::is_same_v<S, bool>) return static_cast<int>(Kind::kBool);
  if constexpr (std::is_same_v<S, float>) return static_cast<int>(Kind::kFloat32);
  if constexpr (std::is_same_v<S, double>) return static_cast<int>(Kind::kFloat64);
  if constexpr (std::is_same_v<S, int64_t>) return static_cast<int>(Kind::kInt64);
  return -1;
}

template <class T, Op O>
const char* launch_op(const Args& a, gpuStream_t stream) {
  using F = Fn<O, T>;
  using R = ResultOf<O, T>;
  if (a.noperands != F::kArity + 1) return "elementwise: operand count does not match the operator";
  const int64_t tile = static_cast<int64_t>(kThreads) * kItems;
  const int64_t blocks = (a.numel + tile - 1) / tile;
  if (blocks > 0x7fffffff) return "elementwise: more than 2^31-1 blocks";
  bool native = static_cast<int>(a.kind[0]) == kind_of_type<R>();
  for (int k = 1; k < a.noperands && native; ++k)
    native = a.is_value[k] || static_cast<int>(a.kind[k]) == kind_of_type<T>();
  bool dense = native && a.contiguous && a.strides[0][0] == static_cast<int64_t>(sizeof(R));
  for (int k = 1; k < a.noperands && dense; ++k)
    dense = a.is_value[k] || a.strides[k][0] == static_cast<int64_t>(sizeof(T));
  const auto grid = static_cast<unsigned>(blocks);
  if (dense)
    TORCHADA_LAUNCH_PLAIN(grid, kThreads, 0, stream, elementwise_kernel<T, R, F, Access::kDense>)
  (a, F(a));
  else if (native) TORCHADA_LAUNCH_PLAIN(grid, kThreads, 0, stream,
                                         elementwise_kernel<T, R, F, Access::kNative>)(a, F(a));
  else TORCHADA_LAUNCH_PLAIN(grid, kThreads, 0, stream,
                             elementwise_kernel<T, R, F, Access::kGeneric>)(a, F(a));
  return last_error();
}

template <class T>
const char* dispatch(Op op, const Args& a, gpuStream_t stream) {
  constexpr Compute kCompute = std::is_same_v<T, float>    ? Compute::kFloat
                               : std::is_same_v<T, double> ? Compute::kDouble
                                                           : Compute::kInt64;
  switch (op) {
#define TORCHADA_ELEMENTWISE_CASE(name, domain)                 \
  case Op::k##name:                                             \
    if constexpr (elementwise::supports(Op::k##name, kCompute)) \
      return launch_op<T, Op::k##name>(a, stream);              \
    else                                                        \
      return "elementwise: " #name " has no kernel for this compute type";
    TORCHADA_ELEMENTWISE_OPS(TORCHADA_ELEMENTWISE_CASE)
#undef TORCHADA_ELEMENTWISE_CASE
  }
  return "elementwise: unknown operator";
}

}  // namespace

// The host build (the simulator's executor) compiles this file three times, one compute type
// each (TORCHADA_ELEMENTWISE_SHARD 0: float and the entry point, 1: double, 2: int64), so that
// its instantiations, most of the library's build time in one file, compile in parallel. Device
// builds (nvcc, mcc) compile it once, whole.
const char* elementwise_dispatch_float(Op op, const Args& a, gpuStream_t stream);
const char* elementwise_dispatch_double(Op op, const Args& a, gpuStream_t stream);
const char* elementwise_dispatch_int64(Op op, const Args& a, gpuStream_t stream);

#if !defined(TORCHADA_ELEMENTWISE_SHARD) || TORCHADA_ELEMENTWISE_SHARD == 0
const char* elementwise_dispatch_float(Op op, const Args& a, gpuStream_t stream) {
  return dispatch<float>(op, a, stream);
}
#endif
#if !defined(TORCHADA_ELEMENTWISE_SHARD) || TORCHADA_ELEMENTWISE_SHARD == 1
const char* elementwise_dispatch_double(Op op, const Args& a, gpuStream_t stream) {
  return dispatch<double>(op, a, stream);
}
#endif
#if !defined(TORCHADA_ELEMENTWISE_SHARD) || TORCHADA_ELEMENTWISE_SHARD == 2
const char* elementwise_dispatch_int64(Op op, const Args& a, gpuStream_t stream) {
  return dispatch<int64_t>(op, a, stream);
}
#endif

#if !defined(TORCHADA_ELEMENTWISE_SHARD) || TORCHADA_ELEMENTWISE_SHARD == 0
namespace {
// The fast divisor of d (1 <= d < 2^31): shift = ceil(log2 d), magic = 2^32 * (2^shift - d) / d
// + 1.
void fast_divisor(uint32_t d, uint32_t* magic, uint32_t* shift) {
  uint32_t s = 0;
  while ((uint64_t{1} << s) < d) ++s;
  *shift = s;
  *magic = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << s) - d)) / d + 1);
}
}  // namespace

const char* elementwise_launch(elementwise::Op op, elementwise::Compute compute,
                               const elementwise::Args& in, void* stream) {
  if (in.numel == 0) return nullptr;
  Args args = in;
  args.index32 = !args.contiguous && args.numel < (int64_t{1} << 31);
  for (int d = 0; d < args.ndim && args.index32; ++d) {
    if (args.sizes[d] < 1 || args.sizes[d] >= (int64_t{1} << 31))
      args.index32 = false;
    else
      fast_divisor(static_cast<uint32_t>(args.sizes[d]), &args.magic[d], &args.shift[d]);
  }
  if (args.noperands < 1 || args.noperands > Args::kMaxOperands || args.ndim < 0 ||
      args.ndim > Args::kMaxDims)
    return "elementwise: malformed arguments";
  auto s = static_cast<gpuStream_t>(stream);
  switch (compute) {
    case Compute::kFloat:
      return elementwise_dispatch_float(op, args, s);
    case Compute::kDouble:
      return elementwise_dispatch_double(op, args, s);
    case Compute::kInt64:
      return elementwise_dispatch_int64(op, args, s);
  }
  return "elementwise: unknown compute type";
}
#endif

}  // namespace torchada::TORCHADA_KERNELS_NS
