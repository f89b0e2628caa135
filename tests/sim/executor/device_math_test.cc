// The simulator's device math (ops/kernels/device_math.cuh): the float exp and erf that kernels
// run by the executor evaluate, against libm's double results, in units in the last place of the
// float result. A GPU's expf and erff promise 2 ulp; so must these. The sweeps step through every
// float bit pattern with a stride, and walk every float near the places where the formulas
// change: the switch between erf's two approximations, the ends of exp's range.
#define TORCHADA_KERNELS_HOST 1
#include "../../../ops/kernels/device_math.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

namespace dm = torchada::device_math;

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// |got - want| in ulps of the float nearest `want` (the spacing below it where that is smaller,
// as at powers of two); infinities and NaN must match exactly.
double ulps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e30;
  const float w = static_cast<float>(want);
  if (std::isinf(w) || std::isinf(got)) return got == w ? 0 : 1e30;
  double up = std::nextafter(w, std::numeric_limits<float>::infinity()) - static_cast<double>(w);
  const double down = static_cast<double>(w) - std::nextafter(w, -1.f / 0.f);
  if (down > 0 && down < up) up = down;
  return std::fabs(static_cast<double>(got) - want) / up;
}

struct Worst {
  double ulps = 0;
  float at = 0;
  void see(float x, double e) {
    if (e > ulps) {
      ulps = e;
      at = x;
    }
  }
};

// Every float in [lo, hi] (same sign), and a stride through all bit patterns.
template <class F>
void walk(float lo, float hi, F f) {
  for (float x = lo; x <= hi; x = std::nextafter(x, 1.f / 0.f)) f(x);
}
template <class F>
void sweep(uint32_t stride, F f) {
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += stride) f(from_bits(static_cast<uint32_t>(b)));
}

constexpr double kBound = 2.0;

// Every 251st bit pattern (17M floats) where the test is optimised; the sanitizer jobs' unoptimised
// builds take every 4099th (1M), enough to catch a wrong coefficient.
#if defined(__OPTIMIZE__)
constexpr uint32_t kStride = 251;
#else
constexpr uint32_t kStride = 4099;
#endif

TEST(DeviceMath, ExpIsWithinTwoUlpsOfTheExactValue) {
  Worst w;
  const auto check = [&](float x) { w.see(x, ulps(dm::exp(x), std::exp(static_cast<double>(x)))); };
  sweep(kStride, check);
  walk(88.f, 89.f, check);            // the last finite results, then overflow to inf
  walk(-104.5f, -86.f, check);        // subnormal results, then underflow to 0
  walk(-0x1p-20f, -0x1p-22f, check);  // near 1, where the reduction is trivial
  EXPECT_LE(w.ulps, kBound) << "worst at x = " << w.at;
}

TEST(DeviceMath, ErfIsWithinTwoUlpsOfTheExactValue) {
  Worst w;
  const auto check = [&](float x) { w.see(x, ulps(dm::erf(x), std::erf(static_cast<double>(x)))); };
  sweep(kStride, check);
  walk(0.86f, 0.89f, check);        // where the small-argument polynomial hands over
  walk(3.9f, 4.1f, check);          // where erf rounds to 1
  walk(0x1p-30f, 0x1p-28f, check);  // tiny: erf(x) = 2x / sqrt(pi)
  EXPECT_LE(w.ulps, kBound) << "worst at x = " << w.at;
}

TEST(DeviceMath, SpecialValuesAreThoseOfTheCFunctions) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(dm::exp(0.f), 1.f);
  EXPECT_EQ(dm::exp(-0.f), 1.f);
  EXPECT_EQ(dm::exp(inf), inf);
  EXPECT_EQ(dm::exp(-inf), 0.f);
  EXPECT_EQ(dm::exp(89.f), inf);
  EXPECT_EQ(dm::exp(-104.f), 0.f);
  EXPECT_GT(dm::exp(-100.f), 0.f);  // a subnormal, not flushed
  EXPECT_TRUE(std::isnan(dm::exp(nan)));
  EXPECT_EQ(dm::erf(0.f), 0.f);
  EXPECT_TRUE(std::signbit(dm::erf(-0.f)));
  EXPECT_EQ(dm::erf(inf), 1.f);
  EXPECT_EQ(dm::erf(-inf), -1.f);
  EXPECT_EQ(dm::erf(10.f), 1.f);
  EXPECT_TRUE(std::isnan(dm::erf(nan)));
  // erf is odd, bit for bit.
  for (float x : {1e-3f, 0.5f, 0.874f, 0.875f, 0.9f, 2.f, 3.5f})
    EXPECT_EQ(dm::erf(-x), -dm::erf(x)) << x;
  // Double precision is libm's.
  EXPECT_EQ(dm::exp(0.5), std::exp(0.5));
  EXPECT_EQ(dm::erf(0.5), std::erf(0.5));
}

}  // namespace
