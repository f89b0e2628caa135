// Internal to libmublas: the storage types of the mixed-precision routines (IEEE binary16,
// bfloat16, int8, complex int8) and their conversions, written at bit level, plus TF32 rounding.
// `visit_type(t, f)` calls f with a value-initialised object of the C++ type stored for the MUSA
// data type t, so that one template serves every storage type.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common.h"

namespace mublas_sim {

struct half_t {
  uint16_t bits;
};
struct bf16_t {
  uint16_t bits;
};
struct ci8_t {
  int8_t re, im;
};

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// binary16 -> binary32: exact.
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return float_of(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  if (exp != 0) return float_of(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return float_of(sign);  // +-0
  // Subnormal: value = mant * 2^-24.
  int e = -1;
  do {
    ++e;
    mant <<= 1;
  } while ((mant & 0x400u) == 0);
  return float_of(sign | static_cast<uint32_t>(112 - e) << 23 | ((mant & 0x3ffu) << 13));
}

// binary32 -> binary16, round to nearest even; overflow to infinity, NaN stays NaN.
inline uint16_t float_to_half(float f) {
  const uint32_t u = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t exp = (u >> 23) & 0xffu;
  const uint32_t mant = u & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant != 0 ? 0x200u : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;  // biased half exponent
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t m = mant | (exp != 0 ? 0x800000u : 0u);  // 24-bit significand
  int shift;                                        // bits to drop from m
  uint32_t he;
  if (e <= 0) {  // subnormal half (or zero)
    shift = 14 - e;
    he = 0;
    if (shift > 25) return sign;
  } else {
    shift = 13;
    he = static_cast<uint32_t>(e);
    m &= 0x7fffffu;
  }
  const uint32_t kept = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  uint32_t r = (he << 10) + kept;  // mantissa carry propagates into the exponent
  if (rest > halfway || (rest == halfway && (kept & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

inline float bf16_to_float(uint16_t b) { return float_of(static_cast<uint32_t>(b) << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN
  const uint32_t lsb = (u >> 16) & 1u;
  return static_cast<uint16_t>((u + 0x7fffu + lsb) >> 16);
}

// TF32: float with a 10-bit mantissa, round to nearest even (the tensor-core input format).
inline float round_tf32(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;
  const uint32_t lsb = (u >> 13) & 1u;
  return float_of((u + 0xfffu + lsb) & ~0x1fffu);
}
inline float round_half(float f) { return half_to_float(float_to_half(f)); }
inline float round_bf16(float f) { return bf16_to_float(float_to_bf16(f)); }

// ---- Loads and stores between a storage type S and a compute type E.

template <class E, class S>
inline E load_as(const S& s) {
  if constexpr (std::is_same_v<S, half_t>)
    return E(half_to_float(s.bits));
  else if constexpr (std::is_same_v<S, bf16_t>)
    return E(bf16_to_float(s.bits));
  else if constexpr (std::is_same_v<S, ci8_t> && kIsComplex<E>)
    return E(RealOf<E>(s.re), RealOf<E>(s.im));
  else if constexpr (std::is_same_v<S, ci8_t>)
    return E(s.re);
  else if constexpr (kIsComplex<S> && kIsComplex<E>)
    return E(static_cast<RealOf<E>>(s.real()), static_cast<RealOf<E>>(s.imag()));
  else if constexpr (kIsComplex<S>)
    return static_cast<E>(s.real());
  else
    return static_cast<E>(s);
}

template <class S, class E>
inline S store_as(E v) {
  if constexpr (std::is_same_v<S, ci8_t>)
    return ci8_t{};  // never a destination (GemmEx writes no complex int8)
  else if constexpr (std::is_same_v<S, half_t>)
    return half_t{float_to_half(static_cast<float>(real_of(v)))};
  else if constexpr (std::is_same_v<S, bf16_t>)
    return bf16_t{float_to_bf16(static_cast<float>(real_of(v)))};
  else if constexpr (std::is_same_v<S, int32_t>) {
    const double r = std::nearbyint(static_cast<double>(real_of(v)));
    return static_cast<int32_t>(std::fmax(-2147483648.0, std::fmin(2147483647.0, r)));
  } else if constexpr (kIsComplex<S> && kIsComplex<E>)
    return S(static_cast<RealOf<S>>(v.real()), static_cast<RealOf<S>>(v.imag()));
  else
    return static_cast<S>(real_of(v));
}

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<S>{}) for the storage type S of t; returns false for a type it does not know.
template <class F>
bool visit_type(musaDataType_t t, F&& f) {
  switch (t) {
    case MUSA_R_16F:
      f(Tag<half_t>{});
      return true;
    case MUSA_R_16BF:
      f(Tag<bf16_t>{});
      return true;
    case MUSA_R_32F:
      f(Tag<float>{});
      return true;
    case MUSA_R_64F:
      f(Tag<double>{});
      return true;
    case MUSA_C_32F:
      f(Tag<cf>{});
      return true;
    case MUSA_C_64F:
      f(Tag<cd>{});
      return true;
    case MUSA_R_8I:
      f(Tag<int8_t>{});
      return true;
    case MUSA_C_8I:
      f(Tag<ci8_t>{});
      return true;
    case MUSA_R_32I:
      f(Tag<int32_t>{});
      return true;
    default:
      return false;
  }
}

inline bool is_complex_type(musaDataType_t t) {
  return t == MUSA_C_32F || t == MUSA_C_64F || t == MUSA_C_8I || t == MUSA_C_16F ||
         t == MUSA_C_16BF || t == MUSA_C_32I || t == MUSA_C_8U || t == MUSA_C_32U;
}

// Strided vector <-> contiguous compute-type buffer (n elements, BLAS negative-increment rule).
template <class E>
void gather(musaDataType_t t, const void* x, int n, int inc, E* out) {
  visit_type(t, [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S* p = vec_start(static_cast<const S*>(x), n, inc);
    for (int i = 0; i < n; ++i) out[i] = load_as<E>(p[static_cast<std::ptrdiff_t>(i) * inc]);
  });
}
template <class E>
void scatter(musaDataType_t t, const E* in_, int n, void* x, int inc) {
  visit_type(t, [&](auto tag) {
    using S = typename decltype(tag)::type;
    S* p = vec_start(static_cast<S*>(x), n, inc);
    for (int i = 0; i < n; ++i) p[static_cast<std::ptrdiff_t>(i) * inc] = store_as<S>(in_[i]);
  });
}
// One value (a scalar or a reduction result).
template <class E>
E load_one(musaDataType_t t, const void* p) {
  E v{};
  gather(t, p, 1, 1, &v);
  return v;
}
template <class E>
void store_one(musaDataType_t t, void* p, E v) {
  scatter(t, &v, 1, p, 1);
}

// Calls f(Tag<E>{}) for execution type e.
template <class F>
inline mublasStatus_t with_exec(musaDataType_t e, F&& f) {
  switch (e) {
    case MUSA_R_32F:
      return f(Tag<float>{});
    case MUSA_R_64F:
      return f(Tag<double>{});
    case MUSA_C_32F:
      return f(Tag<cf>{});
    case MUSA_C_64F:
      return f(Tag<cd>{});
    default:
      return MUBLAS_STATUS_NOT_IMPLEMENTED;
  }
}

// A scalar of MUSA type t read as E: at call time in host mode, when the work runs otherwise.
template <class E>
class AnyScalar {
 public:
  AnyScalar(mublasHandle_t h, musaDataType_t t, const void* p) : t_(t), p_(p) {
    if (h->pointer_mode == MUBLAS_POINTER_MODE_HOST) {
      v_ = load_one<E>(t, p);
      p_ = nullptr;
    }
  }
  E operator()() const { return p_ != nullptr ? load_one<E>(t_, p_) : v_; }

 private:
  musaDataType_t t_;
  const void* p_;
  E v_{};
};

}  // namespace mublas_sim
