// The simulated muBLASLt's FP8 codecs (sim/blaslt/fp8.h): the decoding tables against the
// formats' definitions, and the encoder's rounding (to nearest, ties to the even code) at every
// midpoint between neighbouring codes, saturation, NaN, zeros and subnormals. Then the FP8 matmul
// rules of mublasLt.h through the API (the numbers are checked through the shim by
// tests/programs/cublaslt_fp8.cc).
#include "fp8.h"
#include "lt_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

namespace {

struct Format {
  const char* name;
  lt::Fp8Format f;
  float (*decode)(uint8_t);
  int man_bits, bias;
  double largest, smallest;  // largest finite, smallest subnormal
};
const Format kFormats[] = {
    {"e4m3", lt::kE4M3, lt::fp8_e4m3_to_float, 3, 7, 448.0, std::ldexp(1.0, -9)},
    {"e5m2", lt::kE5M2, lt::fp8_e5m2_to_float, 2, 15, 57344.0, std::ldexp(1.0, -16)},
};

// The value of `code` by the format's definition (NaN for both kinds of NaN, infinities for E5M2).
double definition(const Format& fm, uint8_t code) {
  const int e = (code & 0x7f) >> fm.man_bits, m = code & ((1 << fm.man_bits) - 1);
  const int exp_max = (1 << (7 - fm.man_bits)) - 1;
  const double sign = (code & 0x80) != 0 ? -1.0 : 1.0;
  if (fm.f.has_inf && e == exp_max) return m == 0 ? sign * HUGE_VAL : NAN;
  if (!fm.f.has_inf && (code & 0x7f) == 0x7f) return NAN;
  const double mant = e == 0 ? m : (1 << fm.man_bits) + m;
  return sign * std::ldexp(mant, (e == 0 ? 1 : e) - fm.bias - fm.man_bits);
}

float f(double v) { return static_cast<float>(v); }

TEST(Fp8, TablesMatchTheDefinition) {
  for (const Format& fm : kFormats) {
    SCOPED_TRACE(fm.name);
    for (int c = 0; c < 256; ++c) {
      const double want = definition(fm, static_cast<uint8_t>(c));
      const float got = fm.decode(static_cast<uint8_t>(c));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << c;
      } else {
        EXPECT_EQ(got, want) << c;
        EXPECT_EQ(std::signbit(got), (c & 0x80) != 0) << c;  // -0 included
      }
    }
    EXPECT_EQ(fm.decode(fm.f.max_code), fm.largest);
    EXPECT_EQ(fm.decode(1), fm.smallest);
  }
  EXPECT_EQ(lt::fp8_e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(lt::fp8_e5m2_to_float(0x3c), 1.0f);
  EXPECT_TRUE(std::isnan(lt::fp8_e4m3_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(lt::fp8_e4m3_to_float(0xff)));
  EXPECT_EQ(lt::fp8_e4m3_to_float(0x7c), 384.0f);  // E4M3 has no infinity: S.1111.100 is finite
  EXPECT_EQ(lt::fp8_e5m2_to_float(0x7c), HUGE_VALF);
  EXPECT_EQ(lt::fp8_e5m2_to_float(0xfc), -HUGE_VALF);
  EXPECT_TRUE(std::isnan(lt::fp8_e5m2_to_float(0x7d)));
}

TEST(Fp8, EveryFiniteCodeRoundTrips) {
  for (const Format& fm : kFormats) {
    SCOPED_TRACE(fm.name);
    for (int c = 0; c < 256; ++c) {
      const float v = fm.decode(static_cast<uint8_t>(c));
      if (!std::isfinite(v)) continue;
      EXPECT_EQ(lt::float_to_fp8(v, fm.f), c) << v;
    }
  }
}

// Between neighbouring codes c and c + 1 (same sign): the midpoint goes to the even code, a hair
// either side to the nearer one.
TEST(Fp8, RoundsToNearestTiesToEven) {
  for (const Format& fm : kFormats) {
    SCOPED_TRACE(fm.name);
    for (int sign = 0; sign <= 0x80; sign += 0x80) {
      for (int c = 0; c < fm.f.max_code; ++c) {
        const auto lo = static_cast<uint8_t>(sign | c), hi = static_cast<uint8_t>(sign | (c + 1));
        const double a = fm.decode(lo), b = fm.decode(hi);
        const double mid = (a + b) / 2;  // exact in float: one more bit than the format's
        const uint8_t even = (c % 2 == 0) ? lo : hi;
        EXPECT_EQ(lt::float_to_fp8(f(mid), fm.f), even) << mid;
        const double towards_a = std::nextafter(f(mid), f(a));
        const double towards_b = std::nextafter(f(mid), f(b));
        EXPECT_EQ(lt::float_to_fp8(f(towards_a), fm.f), lo) << towards_a;
        EXPECT_EQ(lt::float_to_fp8(f(towards_b), fm.f), hi) << towards_b;
      }
    }
  }
  // Two examples spelled out: E4M3 1.0625 lies between 1.0 (0x38) and 1.125 (0x39): 0x38;
  // 1.1875 between 1.125 and 1.25 (0x3a): 0x3a.
  EXPECT_EQ(lt::float_to_fp8(1.0625f, lt::kE4M3), 0x38);
  EXPECT_EQ(lt::float_to_fp8(1.1875f, lt::kE4M3), 0x3a);
}

TEST(Fp8, SaturatesBeyondTheLargestFiniteValue) {
  for (const Format& fm : kFormats) {
    SCOPED_TRACE(fm.name);
    const auto pos = fm.f.max_code, neg = static_cast<uint8_t>(0x80 | fm.f.max_code);
    EXPECT_EQ(lt::float_to_fp8(f(fm.largest), fm.f), pos);
    // Half a step above the largest value would round to infinity (E5M2) or to the NaN code
    // (E4M3) without saturation.
    const double step = fm.largest - fm.decode(static_cast<uint8_t>(fm.f.max_code - 1));
    EXPECT_EQ(lt::float_to_fp8(f(fm.largest + step / 2), fm.f), pos);
    EXPECT_EQ(lt::float_to_fp8(f(fm.largest + step), fm.f), pos);
    EXPECT_EQ(lt::float_to_fp8(1e30f, fm.f), pos);
    EXPECT_EQ(lt::float_to_fp8(-1e30f, fm.f), neg);
    EXPECT_EQ(lt::float_to_fp8(HUGE_VALF, fm.f), pos);
    EXPECT_EQ(lt::float_to_fp8(-HUGE_VALF, fm.f), neg);
  }
}

TEST(Fp8, NanZerosAndSubnormals) {
  for (const Format& fm : kFormats) {
    SCOPED_TRACE(fm.name);
    EXPECT_TRUE(std::isnan(fm.decode(lt::float_to_fp8(NAN, fm.f))));
    EXPECT_TRUE(std::isnan(fm.decode(lt::float_to_fp8(-NAN, fm.f))));
    EXPECT_EQ(lt::float_to_fp8(0.0f, fm.f), 0x00);
    EXPECT_EQ(lt::float_to_fp8(-0.0f, fm.f), 0x80);
    // Half the smallest subnormal is a tie between 0 and code 1: 0 (even); above it: code 1.
    EXPECT_EQ(lt::float_to_fp8(f(fm.smallest / 2), fm.f), 0x00);
    EXPECT_EQ(lt::float_to_fp8(f(fm.smallest / 2 * 1.001), fm.f), 0x01);
    EXPECT_EQ(lt::float_to_fp8(f(-fm.smallest / 2 * 1.001), fm.f), 0x81);
    // Far below: signed zero. Float subnormals too.
    EXPECT_EQ(lt::float_to_fp8(1e-30f, fm.f), 0x00);
    EXPECT_EQ(lt::float_to_fp8(-1e-30f, fm.f), 0x80);
    EXPECT_EQ(lt::float_to_fp8(1e-40f, fm.f), 0x00);
    // The largest subnormal rounds up into the smallest normal at their midpoint (even code).
    const uint8_t smallest_normal = static_cast<uint8_t>(1 << fm.man_bits);
    const double largest_sub = fm.decode(static_cast<uint8_t>(smallest_normal - 1));
    const double mid = (largest_sub + fm.decode(smallest_normal)) / 2;
    EXPECT_EQ(lt::float_to_fp8(f(mid), fm.f), smallest_normal);
  }
}

using lt_test::Desc;
using lt_test::Handle;
using lt_test::Layout;
using lt_test::Pref;

// D = A (m x k) B (k x n), column-major, with the given types.
struct Fp8Problem {
  Handle h;
  Desc desc{MUBLAS_COMPUTE_32F, MUSA_R_32F};
  Layout a, b, c, d;
  Pref pref;
  Fp8Problem(musaDataType at, musaDataType bt, musaDataType ct, musaDataType dt)
      : a(at, 2, 2, 2), b(bt, 2, 1, 2), c(ct, 2, 1, 2), d(dt, 2, 1, 2) {}
  mublasStatus_t heuristic(mublasLtMatmulHeuristicResult_t* r) {
    int count = -1;
    const mublasStatus_t st =
        mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, a.l, b.l, c.l, d.l, pref.p, 1, r, &count);
    EXPECT_EQ(count, st == MUBLAS_STATUS_SUCCESS ? 1 : 0);
    return st;
  }
};

TEST(Fp8Matmul, TypeCombinations) {
  mublasLtMatmulHeuristicResult_t r;
  for (musaDataType d : {MUSA_R_16BF, MUSA_R_16F, MUSA_R_32F, MUSA_R_8F_E4M3, MUSA_R_8F_E5M2}) {
    Fp8Problem p(MUSA_R_8F_E4M3, MUSA_R_8F_E5M2, MUSA_R_16BF, d);
    EXPECT_LT_OK(p.heuristic(&r)) << d;
  }
  {  // PyTorch's fp32 output with a bf16 bias: C has the bias's type.
    Fp8Problem p(MUSA_R_8F_E5M2, MUSA_R_8F_E4M3, MUSA_R_16BF, MUSA_R_32F);
    ASSERT_LT_OK(p.heuristic(&r));
    uint64_t flags = 0;
    ASSERT_LT_OK(mublasLtMatmulAlgoCapGetAttribute(&r.algo, MUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS,
                                                   &flags, sizeof(flags), nullptr));
    EXPECT_NE(0u, flags & MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E5M2);
  }
  for (auto [a, b, c] : {std::tuple{MUSA_R_8F_E5M2, MUSA_R_8F_E5M2, MUSA_R_16BF},  // as cuBLASLt
                         std::tuple{MUSA_R_8F_E4M3, MUSA_R_16BF, MUSA_R_16BF},
                         std::tuple{MUSA_R_8F_E4M3, MUSA_R_8F_E4M3, MUSA_R_8F_E4M3}}) {
    Fp8Problem p(a, b, c, MUSA_R_16BF);
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(&r)) << a << " " << b << " " << c;
  }
  {  // compute and scale type 32F only
    Fp8Problem p(MUSA_R_8F_E4M3, MUSA_R_8F_E4M3, MUSA_R_16BF, MUSA_R_16BF);
    ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_COMPUTE_TYPE, int32_t{MUBLAS_COMPUTE_16F}));
    ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_SCALE_TYPE, int32_t{MUSA_R_16F}));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(&r));
  }
}

TEST(Fp8Matmul, ScalingRules) {
  mublasLtMatmulHeuristicResult_t r;
  float one = 1.0f;
  const void* ptr = &one;
  {  // scale pointers and AMAX_D belong to FP8 problems
    Fp8Problem p(MUSA_R_16BF, MUSA_R_16BF, MUSA_R_16BF, MUSA_R_16BF);
    ASSERT_LT_OK(p.heuristic(&r));
    ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_A_SCALE_POINTER, ptr));
    EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.heuristic(&r));
    ASSERT_LT_OK(
        p.desc.set(MUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(nullptr)));
    ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_AMAX_D_POINTER, const_cast<void*>(ptr)));
    EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.heuristic(&r));
  }
  Fp8Problem p(MUSA_R_8F_E4M3, MUSA_R_8F_E4M3, MUSA_R_16BF, MUSA_R_8F_E4M3);
  for (auto attr : {MUBLASLT_MATMUL_DESC_A_SCALE_POINTER, MUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                    MUBLASLT_MATMUL_DESC_C_SCALE_POINTER, MUBLASLT_MATMUL_DESC_D_SCALE_POINTER}) {
    ASSERT_LT_OK(p.desc.set(attr, ptr));
  }
  ASSERT_LT_OK(p.heuristic(&r));
  // Outer vectors: A and B only.
  const int32_t vec = MUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_A_SCALE_MODE, vec));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_B_SCALE_MODE, vec));
  ASSERT_LT_OK(p.heuristic(&r));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_C_SCALE_MODE, vec));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.heuristic(&r));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_C_SCALE_MODE,
                          int32_t{MUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F}));
  // MXFP8 block factors: A and B only, stored K innermost (op(A) = A^T: TN).
  const int32_t mx = MUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_D_SCALE_MODE, mx));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.heuristic(&r));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_D_SCALE_MODE,
                          int32_t{MUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F}));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_A_SCALE_MODE, mx));
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(&r));  // op(A) = A: M innermost
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_TRANSA, int32_t{MUBLAS_OP_T}));
  ASSERT_LT_OK(p.heuristic(&r));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_B_SCALE_MODE, mx));
  ASSERT_LT_OK(p.heuristic(&r));
  ASSERT_LT_OK(p.b.set(MUBLASLT_MATRIX_LAYOUT_ORDER, int32_t{MUBLASLT_ORDER_ROW}));
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(&r));  // row-major B: N innermost
  ASSERT_LT_OK(p.b.set(MUBLASLT_MATRIX_LAYOUT_ORDER, int32_t{MUBLASLT_ORDER_COL}));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_TRANSA, int32_t{MUBLAS_OP_N}));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_A_SCALE_MODE, vec));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_B_SCALE_MODE, vec));
  // Modes the simulator does not declare (cuBLASLt's other block-scaled values + 16) are refused.
  for (int32_t mode : {17, 20, 21, -1}) {
    EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.desc.set(MUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode));
  }
  // Epilogues with aux or bias-gradient outputs are not implemented for FP8.
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_GELU_BIAS}));
  ASSERT_LT_OK(p.heuristic(&r));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_GELU_AUX}));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t{8}));
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(&r));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_BGRADA}));
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(&r));
  // An FP8 bias is not implemented either.
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_BIAS}));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t{MUSA_R_8F_E4M3}));
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(&r));
}

// One small product by hand: A = [[1, 2], [3, -4]] (e4m3), B = [1.5, 0.5] (e5m2), scales 2 and
// 0.5: x = [2.5, 2.5]; with D's scale 256 both saturate at 448; AMAX_D is 2.5.
TEST(Fp8Matmul, ScalesAmaxAndSaturation) {
  Fp8Problem p(MUSA_R_8F_E4M3, MUSA_R_8F_E5M2, MUSA_R_16BF, MUSA_R_8F_E4M3);
  lt_test::DeviceBuffer a(4), b(2), d(2), scales(4 * sizeof(float)), amax(sizeof(float));
  const auto code4 = [](float v) { return lt::float_to_fp8(v, lt::kE4M3); };
  const auto code5 = [](float v) { return lt::float_to_fp8(v, lt::kE5M2); };
  a.upload({code4(1), code4(3), code4(2), code4(-4)});  // column-major
  b.upload({code5(1.5f), code5(0.5f)});
  const float s[4] = {2.0f, 0.5f, 1.0f, 256.0f};
  std::vector<uint8_t> sb(sizeof(s));
  std::memcpy(sb.data(), s, sizeof(s));
  scales.upload(sb);
  const auto* sp = static_cast<const float*>(scales.get());
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(sp)));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(sp + 1)));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_D_SCALE_POINTER, static_cast<const void*>(sp + 3)));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_AMAX_D_POINTER, amax.get()));
  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_LT_OK(mublasLtMatmul(p.h.h, p.desc.d, &alpha, a.get(), p.a.l, b.get(), p.b.l, &beta,
                              nullptr, p.c.l, d.get(), p.d.l, nullptr, nullptr, 0, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  // x = A B * 2 * 0.5 = [1 * 1.5 + 2 * 0.5, 3 * 1.5 - 4 * 0.5] = [2.5, 2.5]; D = 640 -> 448.
  const std::vector<uint8_t> out = d.download();
  EXPECT_EQ(0x7e, out[0]);
  EXPECT_EQ(0x7e, out[1]);
  const std::vector<uint8_t> m = amax.download();
  float got = 0;
  std::memcpy(&got, m.data(), sizeof(got));
  EXPECT_EQ(2.5f, got);
}

// PER_BATCH_SCALAR_32F: instance b of a strided batch takes scale[b]. A = I (e4m3), B = [1, 3]
// per instance, A's scales 2 and 4, fp32 D: D_b = scale[b] * B_b.
TEST(Fp8Matmul, PerBatchScales) {
  Fp8Problem p(MUSA_R_8F_E4M3, MUSA_R_8F_E4M3, MUSA_R_32F, MUSA_R_32F);
  for (Layout* l : {&p.a, &p.b, &p.c, &p.d}) {
    ASSERT_LT_OK(l->set(MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t{2}));
  }
  ASSERT_LT_OK(p.a.set(MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t{4}));
  for (Layout* l : {&p.b, &p.c, &p.d}) {
    ASSERT_LT_OK(l->set(MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t{2}));
  }
  lt_test::DeviceBuffer a(8), b(4), d(4 * sizeof(float)), scales(2 * sizeof(float));
  const uint8_t one = lt::float_to_fp8(1.0f, lt::kE4M3), three = lt::float_to_fp8(3.0f, lt::kE4M3);
  a.upload({one, 0, 0, one, one, 0, 0, one});
  b.upload({one, three, three, one});
  const float s[2] = {2.0f, 4.0f};
  std::vector<uint8_t> sb(sizeof(s));
  std::memcpy(sb.data(), s, sizeof(s));
  scales.upload(sb);
  ASSERT_LT_OK(
      p.desc.set(MUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(scales.get())));
  ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                          int32_t{MUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F}));
  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_LT_OK(mublasLtMatmul(p.h.h, p.desc.d, &alpha, a.get(), p.a.l, b.get(), p.b.l, &beta,
                              nullptr, p.c.l, d.get(), p.d.l, nullptr, nullptr, 0, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  const std::vector<uint8_t> out = d.download();
  float got[4];
  std::memcpy(got, out.data(), sizeof(got));
  EXPECT_EQ(2.0f, got[0]);
  EXPECT_EQ(6.0f, got[1]);
  EXPECT_EQ(12.0f, got[2]);
  EXPECT_EQ(4.0f, got[3]);
}

}  // namespace
