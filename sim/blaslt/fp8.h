// The two 8-bit floating-point formats of cuBLASLt's FP8 matmuls (MUSA_R_8F_E4M3, MUSA_R_8F_E5M2;
// OCP FP8, as NVIDIA's cuda_fp8.h and PyTorch's float8_e4m3fn / float8_e5m2 store them):
//   E4M3 (E4M3FN): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, S.1111.111 is NaN;
//                  largest 448 (0x7e), smallest subnormal 2^-9.
//   E5M2:          1 sign, 5 exponent (bias 15), 2 mantissa bits, IEEE-like: S.11111.00 is
//                  infinity, S.11111.xx (xx != 0) NaN; largest 57344 (0x7b), smallest 2^-16.
// Decoding is a 256-entry table per format (every value is exact in float). Encoding rounds to
// nearest, ties to even, and saturates: a finite value or infinity beyond the largest finite value
// becomes that value with its sign (cuBLASLt's FP8 outputs, cuda_fp8.h's __NV_SATFINITE); NaN
// stays NaN (0x7f with the input's sign).
#ifndef TORCHADA_SIM_BLASLT_FP8_H
#define TORCHADA_SIM_BLASLT_FP8_H

#include <array>
#include <cstdint>
#include <limits>

#include "half.h"

namespace lt {

struct Fp8Format {
  int man_bits;
  int bias;
  bool has_inf;      // E5M2: exponent all ones is infinity / NaN; E4M3: only S.1111.111 is NaN
  uint8_t max_code;  // the largest finite magnitude
};
constexpr Fp8Format kE4M3{3, 7, false, 0x7e};
constexpr Fp8Format kE5M2{2, 15, true, 0x7b};

namespace fp8_detail {

constexpr float pow2(int e) {
  float v = 1.0f;
  for (; e > 0; --e) v *= 2.0f;
  for (; e < 0; ++e) v *= 0.5f;
  return v;
}

constexpr float decode(uint8_t code, Fp8Format f) {
  const int exp_bits = 7 - f.man_bits;
  const int exp_max = (1 << exp_bits) - 1;
  const int e = (code >> f.man_bits) & exp_max;
  const int man = code & ((1 << f.man_bits) - 1);
  const float sign = (code & 0x80) != 0 ? -1.0f : 1.0f;
  if (f.has_inf && e == exp_max) {
    return man == 0 ? sign * std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::quiet_NaN();
  }
  if (!f.has_inf && (code & 0x7f) == 0x7f) return std::numeric_limits<float>::quiet_NaN();
  if (e == 0) return sign * static_cast<float>(man) * pow2(1 - f.bias - f.man_bits);
  return sign * static_cast<float>((1 << f.man_bits) + man) * pow2(e - f.bias - f.man_bits);
}

struct Table {
  std::array<float, 256> v{};
  constexpr explicit Table(Fp8Format f) {
    for (int i = 0; i < 256; ++i) v[static_cast<size_t>(i)] = decode(static_cast<uint8_t>(i), f);
  }
};
constexpr Table kE4M3Table{kE4M3};
constexpr Table kE5M2Table{kE5M2};

}  // namespace fp8_detail

inline float fp8_e4m3_to_float(uint8_t v) { return fp8_detail::kE4M3Table.v[v]; }
inline float fp8_e5m2_to_float(uint8_t v) { return fp8_detail::kE5M2Table.v[v]; }

// float -> FP8, round to nearest even, saturating (see above).
inline uint8_t float_to_fp8(float x, Fp8Format f) {
  const uint32_t u = float_bits(x);
  const auto sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);        // NaN
  if (abs >= 0x7f800000u) return static_cast<uint8_t>(sign | f.max_code);  // infinity saturates
  if (abs < 0x00800000u) return sign;  // zero, float subnormals: far below half of 2^-16
  // x = mant * 2^(exp - 23), mant with its leading one. Keep man_bits bits after the leading one,
  // or fewer below the smallest normal exponent (1 - bias): the FP8 subnormals.
  const int exp = static_cast<int>(abs >> 23) - 127;
  const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
  const int emin = 1 - f.bias;
  const int shift = 23 - f.man_bits + (exp < emin ? emin - exp : 0);
  if (shift > 31) return sign;  // below a quarter of the smallest subnormal
  uint32_t q = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u) != 0)) ++q;  // may carry into the exponent
  // Normal: exponent field and mantissa (q holds the leading one, which adds 1 to the exponent
  // field: subtract it). Subnormal: q is the code itself (q == 2^man_bits is the smallest normal).
  const int64_t code = exp < emin ? static_cast<int64_t>(q)
                                  : (static_cast<int64_t>(exp + f.bias) << f.man_bits) +
                                        static_cast<int64_t>(q) - (int64_t{1} << f.man_bits);
  return static_cast<uint8_t>(sign | (code > f.max_code ? f.max_code : code));
}

}  // namespace lt

#endif  // TORCHADA_SIM_BLASLT_FP8_H
