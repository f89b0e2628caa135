// Element kernels of the collectives, written once as templates over the element type and the
// reduction: copy with a PreMulSum scale, and an n-way reduction into one or two destinations.
//
// Arithmetic: integers wrap (computed in the unsigned type), Avg divides the sum by nranks
// (integer division for integers); fp16 and bf16 are widened to float, reduced across all
// sources in float and rounded once (round to nearest even). Sources are combined in the order
// given (rank order), so every rank gets the same bits. A PreMulSum contribution is scaled and
// rounded to the element type before it is summed, wherever it comes from.
#ifndef TORCHADA_SIM_CCL_REDUCE_H
#define TORCHADA_SIM_CCL_REDUCE_H

#include <mccl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mccl_sim {

// ---- Copies into receive buffers --------------------------------------------------------------
// Large results go to the user's buffers with non-temporal stores (as memcpy does for large
// copies): they bypass the cache, which keeps the stage buffers in it, and skip the read for
// ownership. stream_fence() orders them before the operation completes.
inline void copy_nt(void* dst, const void* src, size_t bytes) {
#if defined(__SSE2__)
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  if (head > bytes) head = bytes;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), x0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), x1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), x2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), x3);
  }
  std::memcpy(d, s, bytes);
#else
  std::memcpy(dst, src, bytes);
#endif
}

inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// Copies `bytes` unless source and destination are the same (in-place forms).
inline void put(void* dst, const void* src, size_t bytes, bool stream) {
  if (dst == src || bytes == 0) return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst), b = reinterpret_cast<uintptr_t>(src);
  if (stream && (a + bytes <= b || b + bytes <= a))
    copy_nt(dst, src, bytes);
  else
    std::memmove(dst, src, bytes);
}

// A destination of a reduction: where, and whether to stream to it.
struct Out {
  void* p = nullptr;
  bool stream = false;
};

// ---- 16-bit floating point ----------------------------------------------------------------------
struct Half {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float f32_from(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  const uint32_t m = h & 0x3ffu;
  if (e == 0) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24
    return sign ? -v : v;
  }
  if (e == 31) return f32_from(sign | 0x7f800000u | (m << 13));
  return f32_from(sign | ((e + 112) << 23) | (m << 13));
}

inline uint16_t float_to_half(float f) {
  uint32_t x = f32_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // inf, nan (kept quiet, payload truncated)
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (x > 0x7f800000u ? 0x200u | ((x >> 13) & 0x3ffu) : 0u));
  }
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (x < 0x38800000u) {                                               // below 2^-14: subnormal
    const uint32_t e = x >> 23;
    if (e < 102) return static_cast<uint16_t>(sign);  // below 2^-25: zero
    const uint32_t m = (x & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t h = (x - 0x38000000u) >> 13;
  const uint32_t rem = x & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float bf16_to_float(uint16_t b) { return f32_from(static_cast<uint32_t>(b) << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// ---- Element traits: the type arithmetic is done in, and conversions -------------------------
template <class T>
struct Num {
  using Acc = T;
  static Acc load(T v) { return v; }
  static T store(Acc a) { return a; }
};
template <>
struct Num<Half> {
  using Acc = float;
  static float load(Half v) { return half_to_float(v.bits); }
  static Half store(float a) { return Half{float_to_half(a)}; }
};
template <>
struct Num<BF16> {
  using Acc = float;
  static float load(BF16 v) { return bf16_to_float(v.bits); }
  static BF16 store(float a) { return BF16{float_to_bf16(a)}; }
};

template <class A>
inline A add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <class A>
inline A mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    // Promote below int to unsigned int so the product cannot overflow a signed int.
    using U = std::conditional_t<(sizeof(A) < sizeof(unsigned)), unsigned, std::make_unsigned_t<A>>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

template <Red K>
struct Fn {
  template <class A>
  static A apply(A a, A b) {
    if constexpr (K == Red::Prod)
      return mul(a, b);
    else if constexpr (K == Red::Max)
      return b > a ? b : a;
    else if constexpr (K == Red::Min)
      return b < a ? b : a;
    else
      return add(a, b);  // Sum, Avg (and PreMulSum, whose inputs come scaled)
  }
};

template <class T>
inline typename Num<T>::Acc scalar_of(const RedSpec& r) {
  T v;
  std::memcpy(&v, r.scalar, sizeof(T));
  return Num<T>::load(v);
}

// dst[i] = T(src[i] * scale), the PreMulSum contribution of this rank.
template <class T>
void copy_scaled_t(void* dst, const void* src, size_t n, const RedSpec& r) {
  using A = typename Num<T>::Acc;
  const A s = scalar_of<T>(r);
  const T* in = static_cast<const T*>(src);
  T* out = static_cast<T*>(dst);
  for (size_t i = 0; i < n; ++i) out[i] = Num<T>::store(mul(Num<T>::load(in[i]), s));
}

// o0 (and o1 if set) = reduce over srcs[0..nsrc) in order (PreMulSum contributions come scaled
// already: copy_scaled). A destination may alias a source element for element (in-place forms).
template <class T, Red K>
void reduce_t(const void* const* srcs, int nsrc, int nranks, Out o0, Out o1, size_t n) {
  using A = typename Num<T>::Acc;
  constexpr size_t kTile = 1024;
  A acc[kTile];
  [[maybe_unused]] T out[std::is_same_v<T, A> ? 1 : kTile];
  for (size_t base = 0; base < n; base += kTile) {
    const size_t m = std::min(kTile, n - base);
    for (int k = 0; k < nsrc; ++k) {
      const T* in = static_cast<const T*>(srcs[k]) + base;
      if (k == 0) {
        for (size_t i = 0; i < m; ++i) acc[i] = Num<T>::load(in[i]);
      } else {
        for (size_t i = 0; i < m; ++i) acc[i] = Fn<K>::apply(acc[i], Num<T>::load(in[i]));
      }
    }
    if constexpr (K == Red::Avg) {
      if constexpr (std::is_integral_v<A>) {
        using W = std::conditional_t<std::is_signed_v<A>, int64_t, uint64_t>;
        const W d = static_cast<W>(nranks);
        for (size_t i = 0; i < m; ++i) acc[i] = static_cast<A>(static_cast<W>(acc[i]) / d);
      } else {
        const A d = static_cast<A>(nranks);
        for (size_t i = 0; i < m; ++i) acc[i] = acc[i] / d;
      }
    }
    const T* res;
    if constexpr (std::is_same_v<T, A>) {
      res = acc;
    } else {
      for (size_t i = 0; i < m; ++i) out[i] = Num<T>::store(acc[i]);
      res = out;
    }
    for (const Out& o : {o0, o1})
      if (o.p != nullptr) put(static_cast<T*>(o.p) + base, res, m * sizeof(T), o.stream);
  }
}

// ---- Dispatch on the data type and the reduction ------------------------------------------------
template <class F>
void with_type(mcclDataType_t t, F&& f) {
  switch (t) {
    case mcclInt8:
      return f(int8_t{});
    case mcclUint8:
      return f(uint8_t{});
    case mcclInt32:
      return f(int32_t{});
    case mcclUint32:
      return f(uint32_t{});
    case mcclInt64:
      return f(int64_t{});
    case mcclUint64:
      return f(uint64_t{});
    case mcclFloat16:
      return f(Half{});
    case mcclFloat32:
      return f(float{});
    case mcclFloat64:
      return f(double{});
    case mcclBfloat16:
      return f(BF16{});
    default:
      return;  // validated at the API
  }
}

inline void copy_scaled(mcclDataType_t t, void* dst, const void* src, size_t n, const RedSpec& r) {
  if (r.kind != Red::PreMulSum) {
    if (dst != src && n != 0) std::memmove(dst, src, n * dtype_size(t));
    return;
  }
  with_type(t, [&](auto tag) { copy_scaled_t<decltype(tag)>(dst, src, n, r); });
}

inline void reduce(mcclDataType_t t, Red kind, int nranks, const void* const* srcs, int nsrc,
                   Out dst0, Out dst1, size_t n) {
  with_type(t, [&](auto tag) {
    using T = decltype(tag);
    switch (kind) {
      case Red::Sum:
      case Red::PreMulSum:
        return reduce_t<T, Red::Sum>(srcs, nsrc, nranks, dst0, dst1, n);
      case Red::Prod:
        return reduce_t<T, Red::Prod>(srcs, nsrc, nranks, dst0, dst1, n);
      case Red::Max:
        return reduce_t<T, Red::Max>(srcs, nsrc, nranks, dst0, dst1, n);
      case Red::Min:
        return reduce_t<T, Red::Min>(srcs, nsrc, nranks, dst0, dst1, n);
      case Red::Avg:
        return reduce_t<T, Red::Avg>(srcs, nsrc, nranks, dst0, dst1, n);
    }
  });
}

}  // namespace mccl_sim

#endif  // TORCHADA_SIM_CCL_REDUCE_H
