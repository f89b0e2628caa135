// The math functions that kernels evaluate per element (exp, erf), called as device_math::exp(x)
// for float and double. On a GPU they are the toolkit's own device functions. For the simulator's
// executor (TORCHADA_KERNELS_HOST) the float versions are written here: glibc's scalar expf and
// erff cost 5 and 22 ns an element on the 2-core machine, a third of a training step's kernel
// time, and a call into libm keeps the compiler from vectorising the loop around it. These are
// branch-free polynomials (within 2 ulp of the exact value over all floats:
// tests/sim/device_math_test.cc), which the compiler vectorises like any arithmetic. A GPU's
// erff and expf are themselves within 2 ulp, not correctly rounded, so the simulator stays inside
// the device's contract. Double precision keeps libm, as PyTorch's double kernels do.
//
// Self-contained (no CUDA header): the simulator's test includes it alone.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace torchada::device_math {

#if defined(TORCHADA_KERNELS_HOST)

namespace detail {

// a * b + c. Not std::fma: without an FMA instruction in the baseline ISA that is a call into
// libm, which is slow and stops vectorisation; the compiler contracts this where it can.
inline float mad(float a, float b, float c) { return a * b + c; }

// 2^n for an integral n in [-126, 127], from its exponent bits.
inline float pow2(int32_t n) {
  const uint32_t bits = static_cast<uint32_t>(n + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace detail

// e^x: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so r is exact), e^r by a degree-6
// polynomial fitted on that interval, and 2^n applied as two factors so that results in the
// subnormal range and beyond the float range come out as 0 and inf by plain multiplication.
inline float exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // 16 bits: n * kLn2Hi is exact
  constexpr float kLn2Lo = 1.42860682030941723e-06f;
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer
  // Clamped so that n fits the scaling below; NaN goes to -150 (its result is chosen at the end).
  const float clamped = x > -150.f ? (x < 128.f ? x : 128.f) : -150.f;
  const float n = (clamped * kLog2e + kRound) - kRound;
  const float r = (clamped - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.38294208e-3f;
  p = detail::mad(p, r, 8.37477110e-3f);
  p = detail::mad(p, r, 4.16683592e-2f);
  p = detail::mad(p, r, 1.66664213e-1f);
  p = detail::mad(p, r, 4.99999911e-1f);
  p = detail::mad(p, r, 1.f);
  p = detail::mad(p, r, 1.f);
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t half = ni / 2;
  const float result = p * detail::pow2(half) * detail::pow2(ni - half);
  return x != x ? x : result;
}

// erf(x): for |x| < 0.875, x + x P(x^2); above, 1 - e^Q(|x|) with Q fitted to log(erfc) on
// [0.875, 4] (erff(4) is 1.0f exactly). Both are evaluated and one is chosen, which vectorises.
inline float erf(float x) {
  const float a = std::fabs(x);
  const float s = x * x;
  float p = -6.25429326e-4f;
  p = detail::mad(p, s, 5.04235132e-3f);
  p = detail::mad(p, s, -2.67986730e-2f);
  p = detail::mad(p, s, 1.12826705e-1f);
  p = detail::mad(p, s, -3.76125753e-1f);
  p = detail::mad(p, s, 1.28379166e-1f);
  const float small = detail::mad(x, p, x);
  const float t = a > 4.f ? 4.f : a;
  float q = -2.16004725e-8f;
  q = detail::mad(q, t, 2.07929247e-6f);
  q = detail::mad(q, t, -4.99165253e-5f);
  q = detail::mad(q, t, 6.15497876e-4f);
  q = detail::mad(q, t, -4.81435424e-3f);
  q = detail::mad(q, t, 2.65198667e-2f);
  q = detail::mad(q, t, -1.10185876e-1f);
  q = detail::mad(q, t, -6.31766379e-1f);
  q = detail::mad(q, t, -1.13024461f);
  q = detail::mad(q, t, 3.18241073e-4f);
  const float large = std::copysign(1.f - exp(q), x);
  const float result = a < 0.875f ? small : large;
  return x != x ? x : result;
}

inline double exp(double x) { return std::exp(x); }
inline double erf(double x) { return std::erf(x); }

#else

__device__ __forceinline__ float exp(float x) { return expf(x); }
__device__ __forceinline__ double exp(double x) { return ::exp(x); }
__device__ __forceinline__ float erf(float x) { return erff(x); }
__device__ __forceinline__ double erf(double x) { return ::erf(x); }

#endif

}  // namespace torchada::device_math
