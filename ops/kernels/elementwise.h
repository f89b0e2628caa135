// The elementwise engine's interface: what the host code (src/device/elementwise.cpp, which builds
// PyTorch's TensorIterator) hands the kernel (kernels/elementwise.cu, which loops). Included by
// both sides, so it holds only plain data and the list of operators.
#pragma once

#include <cstdint>

namespace torchada::elementwise {

// Element types as stored in memory. Each operand keeps its own: loads convert to the compute
// type and stores convert from it, so mixed dtypes (a float output of half inputs, a bool
// condition among floats) need no copies.
enum class Kind : int8_t {
  kBool,
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

// What the functor computes in: float for float, half and bfloat16 (PyTorch's opmath on CUDA),
// double for double, int64 for every integral type and bool (then truncated on store, which gives
// the wrap-around of the narrow type's own arithmetic).
enum class Compute : int8_t { kFloat, kDouble, kInt64 };

// Which compute types an operator has: every one, floating only, integral only.
enum class Domain : int8_t { kAll, kFloating, kIntegral };

// X(name, domain). Operand order is TensorIterator's: the output, then the inputs as the
// operator's meta function adds them. c[i] / ic[i] are the operator's constants (double and exact
// integer forms of the same Scalar).
#define TORCHADA_ELEMENTWISE_OPS(X)                                                          \
  /* nullary */                                                                              \
  X(Fill, kAll) /* c0 */                                                                     \
  /* unary */                                                                                \
  X(Copy, kAll)                                                                              \
  X(Neg, kAll)                                                                               \
  X(Abs, kAll)                                                                               \
  X(Sign, kAll)                                                                              \
  X(BitwiseNot, kIntegral)                                                                   \
  X(LogicalNot, kAll)                                                                        \
  X(Clamp, kAll) /* c0 = lower bound, c1 = upper (+-inf / limits: none) */                   \
  X(Exp, kFloating)                                                                          \
  X(Exp2, kFloating)                                                                         \
  X(Expm1, kFloating)                                                                        \
  X(Log, kFloating)                                                                          \
  X(Log2, kFloating)                                                                         \
  X(Log1p, kFloating)                                                                        \
  X(Sqrt, kFloating)                                                                         \
  X(Rsqrt, kFloating)                                                                        \
  X(Reciprocal, kFloating)                                                                   \
  X(Sin, kFloating)                                                                          \
  X(Cos, kFloating)                                                                          \
  X(Tanh, kFloating)                                                                         \
  X(Sigmoid, kFloating)                                                                      \
  X(Erf, kFloating)                                                                          \
  X(Floor, kAll)                                                                             \
  X(Ceil, kAll)                                                                              \
  X(Round, kAll)                                                                             \
  X(Trunc, kAll)                                                                             \
  X(Relu, kAll)                                                                              \
  X(Gelu, kFloating)     /* exact: x Phi(x) */                                               \
  X(GeluTanh, kFloating) /* the tanh approximation */                                        \
  X(Silu, kFloating)                                                                         \
  X(Mish, kFloating)                                                                         \
  X(Softplus, kFloating)  /* c0 = beta, c1 = threshold */                                    \
  X(Elu, kFloating)       /* c0 = alpha, c1 = scale, c2 = input_scale */                     \
  X(LeakyRelu, kFloating) /* c0 = negative slope */                                          \
  X(Hardsigmoid, kFloating)                                                                  \
  X(Hardswish, kFloating)                                                                    \
  X(PowScalar, kAll)     /* c0 = exponent */                                                 \
  X(NanToNum, kFloating) /* c0 = nan, c1 = posinf, c2 = neginf */                            \
  /* binary */                                                                               \
  X(Add, kAll) /* a + c0 * b */                                                              \
  X(Mul, kAll)                                                                               \
  X(Div, kFloating)                                                                          \
  X(DivTrunc, kAll)                                                                          \
  X(DivFloor, kAll)                                                                          \
  X(Remainder, kAll)                                                                         \
  X(Fmod, kAll)                                                                              \
  X(Pow, kAll)                                                                               \
  X(Atan2, kFloating)                                                                        \
  X(Maximum, kAll)                                                                           \
  X(Minimum, kAll)                                                                           \
  X(Eq, kAll)                                                                                \
  X(Ne, kAll)                                                                                \
  X(Lt, kAll)                                                                                \
  X(Le, kAll)                                                                                \
  X(Gt, kAll)                                                                                \
  X(Ge, kAll)                                                                                \
  X(LogicalAnd, kAll)                                                                        \
  X(LogicalOr, kAll)                                                                         \
  X(BitwiseAnd, kIntegral)                                                                   \
  X(BitwiseOr, kIntegral)                                                                    \
  X(BitwiseXor, kIntegral)                                                                   \
  X(Threshold, kAll)                /* (x, other): x <= c0 ? c1 : other */                   \
  X(MaskedFill, kAll)               /* (x, mask): mask ? c0 : x */                           \
  X(GeluBackward, kFloating)        /* (grad, x) */                                          \
  X(GeluTanhBackward, kFloating)    /* (grad, x) */                                          \
  X(SiluBackward, kFloating)        /* (grad, x) */                                          \
  X(SigmoidBackward, kFloating)     /* (grad, y) */                                          \
  X(TanhBackward, kFloating)        /* (grad, y) */                                          \
  X(LeakyReluBackward, kFloating)   /* (x, grad), c0 = negative slope */                     \
  X(SoftplusBackward, kFloating)    /* (grad, x), c0 = beta, c1 = threshold */               \
  X(HardsigmoidBackward, kFloating) /* (grad, x) */                                          \
  X(HardswishBackward, kFloating)   /* (grad, x) */                                          \
  X(HardtanhBackward, kFloating)    /* (grad, x), c0 = min, c1 = max */                      \
  X(EluBackward, kFloating)         /* (grad, x or result), c0..c2 as Elu, c3 = is_result */ \
  X(MseBackward, kFloating)         /* (x, target, grad), c0 = 2 / n or 2 */                 \
  X(LerpScalar, kFloating)          /* (a, b), c0 = weight */                                \
  /* ternary */                                                                              \
  X(LerpTensor, kFloating) /* (a, b, weight) */                                              \
  X(Where, kAll)           /* (condition, a, b) */                                           \
  X(Addcmul, kAll)         /* (x, t1, t2): x + c0 * t1 * t2 */                               \
  X(Addcdiv, kFloating)    /* (x, t1, t2): x + c0 * t1 / t2 */

enum class Op : int16_t {
#define TORCHADA_ELEMENTWISE_ENUM(name, domain) k##name,
  TORCHADA_ELEMENTWISE_OPS(TORCHADA_ELEMENTWISE_ENUM)
#undef TORCHADA_ELEMENTWISE_ENUM
};

constexpr Domain domain_of(Op op) {
  switch (op) {
#define TORCHADA_ELEMENTWISE_DOMAIN(name, domain) \
  case Op::k##name:                               \
    return Domain::domain;
    TORCHADA_ELEMENTWISE_OPS(TORCHADA_ELEMENTWISE_DOMAIN)
#undef TORCHADA_ELEMENTWISE_DOMAIN
  }
  return Domain::kAll;
}

constexpr bool supports(Op op, Compute c) {
  switch (domain_of(op)) {
    case Domain::kFloating:
      return c != Compute::kInt64;
    case Domain::kIntegral:
      return c == Compute::kInt64;
    case Domain::kAll:
      break;
  }
  return true;
}

// One launch's operands, laid out by TensorIterator: dimension 0 varies fastest.
struct Args {
  static constexpr int kMaxDims = 8;
  static constexpr int kMaxOperands = 4;  // the output and up to three inputs
  static constexpr int kMaxConstants = 4;

  int ndim = 0;
  int noperands = 0;  // operand 0 is the output
  int64_t numel = 0;
  bool contiguous = false;  // one dimension, every array operand dense: offset = i * strides[k][0]
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};  // bytes
  char* data[kMaxOperands] = {};
  Kind kind[kMaxOperands] = {};
  // A CPU scalar among the inputs (PyTorch's wrapped numbers): no data, this value.
  bool is_value[kMaxOperands] = {};
  double value[kMaxOperands] = {};
  int64_t ivalue[kMaxOperands] = {};
  double c[kMaxConstants] = {};
  int64_t ic[kMaxConstants] = {};
  // Filled by the launcher: when every index fits 32 bits, each dimension's size as a fast
  // divisor (n / size = (umulhi(n, magic) + n) >> shift), so that the offset calculation of a
  // strided launch costs multiplies instead of 64-bit divisions.
  bool index32 = false;
  uint32_t magic[kMaxDims] = {};
  uint32_t shift[kMaxDims] = {};
};

}  // namespace torchada::elementwise
