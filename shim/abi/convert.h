// Argument and result conversion between a CUDA ABI and MUSA, for generated forwarders.
//
// Each CUDA type a forwarded call passes has a Pair<> specialisation generated from NVIDIA's
// header (shim/gen/cudart<abi>_types.h): a handle, an enum (with its value table) or a struct
// (with static_asserts proving an identical layout). convert<To>(v) accepts only what a Pair or
// a layout-identical pointer allows, so a MUSA signature that differs is a compile error here,
// never a silent reinterpretation.
#pragma once

#include <climits>
#include <cstddef>
#include <cstring>
#include <type_traits>

#ifndef TORCHADA_ABI_NS
#error "TORCHADA_ABI_NS (abi12 / abi13) must be defined: this header is compiled once per CUDA ABI"
#endif

#define TORCHADA_EXPORT __attribute__((visibility("default")))
#define TORCHADA_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace torchada {
inline namespace TORCHADA_ABI_NS {

// Primary template: no pair known for this CUDA type.
template <class Cuda>
struct Pair {
  static constexpr bool kDefined = false;
};

template <class T, class = void>
struct HasPair : std::false_type {};
template <class T>
struct HasPair<T, std::void_t<typename Pair<T>::Musa>> : std::true_type {};

struct EnumEntry {
  int cuda;
  int musa;
};
inline constexpr int kPassRaw = -0x7fffffff;

template <std::size_t N>
constexpr bool enum_table_is_identity(const EnumEntry (&table)[N]) {
  for (const auto& e : table)
    if (e.cuda != e.musa) return false;
  return true;
}
// Unknown values pass through unchanged so the backend rejects them with its own error.
template <std::size_t N>
constexpr int enum_to_musa(const EnumEntry (&table)[N], int v) {
  for (const auto& e : table)
    if (e.cuda == v) return e.musa;
  return v;
}
// True when v's value has a counterpart (library enums refuse the others instead of passing them).
template <std::size_t N>
constexpr bool enum_known(const EnumEntry (&table)[N], int v) {
  for (const auto& e : table)
    if (e.cuda == v) return true;
  return false;
}
template <std::size_t N>
constexpr int enum_to_cuda(const EnumEntry (&table)[N], int v, int unknown) {
  for (const auto& e : table)
    if (e.musa == v) return e.cuda;
  return unknown == kPassRaw ? v : unknown;
}

// The linear helpers above, turned into compile-time lookups for one table (the generated
// Pair<>s' per-call translation; the results are those of enum_known / enum_to_musa /
// enum_to_cuda, which stay the reference): when the keys span at most 1024 values, a bounds check
// and one load from a dense array, or, when every key of the span is present and maps to key + a
// constant (cuBLAS's 0,1,2 -> muBLAS's 111,112,113), a bounds check and an add. Sparse tables keep
// the linear walk.
namespace enum_codec {

inline constexpr long long kMaxSpan = 1024;  // 4 KiB at most, per direction
inline constexpr int kNone = INT_MIN;        // no counterpart (no enumerator is INT_MIN)

struct Range {
  int lo, hi;
};
template <bool kMusaKeys, std::size_t N>
constexpr Range key_range(const EnumEntry (&table)[N]) {
  Range r{INT_MAX, INT_MIN};
  for (const auto& e : table) {
    const int k = kMusaKeys ? e.musa : e.cuda;
    r.lo = k < r.lo ? k : r.lo;
    r.hi = k > r.hi ? k : r.hi;
  }
  return r;
}
template <long long kSpan>
struct Dense {
  int v[kSpan];
};
// keys -> values, the first pair with a given key winning (as the linear helpers' walk does).
template <bool kMusaKeys, long long kSpan, std::size_t N>
constexpr Dense<kSpan> dense(const EnumEntry (&table)[N], int lo, bool fill) {
  Dense<kSpan> a{};
  for (auto& x : a.v) x = kNone;
  if (!fill) return a;
  for (const auto& e : table) {
    const int k = kMusaKeys ? e.musa : e.cuda;
    int& slot = a.v[k - lo];
    if (slot == kNone) slot = kMusaKeys ? e.cuda : e.musa;
  }
  return a;
}
// Every key of the span present, each value key + the first one's offset.
template <long long kSpan>
constexpr bool affine(const Dense<kSpan>& a, int lo) {
  for (long long i = 0; i < kSpan; ++i)
    if (a.v[i] == kNone || a.v[i] - (lo + i) != static_cast<long long>(a.v[0]) - lo) return false;
  return true;
}

// One direction of a table.
template <const auto& kTable, bool kMusaKeys>
struct Map {
  static constexpr Range kRange = key_range<kMusaKeys>(kTable);
  static constexpr long long kSpan = static_cast<long long>(kRange.hi) - kRange.lo + 1;
  static constexpr bool kDense = kSpan <= kMaxSpan;
  static constexpr Dense<kDense ? kSpan : 1> kArray = dense < kMusaKeys,
                                             kDense ? kSpan : 1 > (kTable, kRange.lo, kDense);
  static constexpr bool kAffine = kDense && affine(kArray, kRange.lo);
  static constexpr long long kOffset = static_cast<long long>(kArray.v[0]) - kRange.lo;

  // The value of key `k`, or `unknown` when `k` is no key.
  [[gnu::always_inline]] static int get(int k, int unknown) {
    if constexpr (kDense) {
      const unsigned long long i =
          static_cast<unsigned long long>(static_cast<long long>(k) - kRange.lo);
      if (i >= static_cast<unsigned long long>(kSpan)) return unknown;
      if constexpr (kAffine) {
        return static_cast<int>(k + kOffset);
      } else {
        const int v = kArray.v[i];
        return v == kNone ? unknown : v;
      }
    } else {
      for (const auto& e : kTable)
        if ((kMusaKeys ? e.musa : e.cuda) == k) return kMusaKeys ? e.cuda : e.musa;
      return unknown;
    }
  }
  [[gnu::always_inline]] static bool known(int k) {
    if constexpr (kDense) {
      return get(k, kNone) != kNone;
    } else {
      for (const auto& e : kTable)
        if ((kMusaKeys ? e.musa : e.cuda) == k) return true;
      return false;
    }
  }
};

}  // namespace enum_codec

template <const auto& kTable>
struct EnumCodec {
  using ToMusa = enum_codec::Map<kTable, false>;
  using ToCuda = enum_codec::Map<kTable, true>;
  // enum_known(kTable, v)
  [[gnu::always_inline]] static bool known(int v) { return ToMusa::known(v); }
  // enum_to_musa(kTable, v): unknown values unchanged.
  [[gnu::always_inline]] static int to_musa(int v) { return ToMusa::get(v, v); }
  // enum_to_cuda(kTable, v, unknown)
  [[gnu::always_inline]] static int to_cuda(int v, int unknown) {
    return ToCuda::get(v, unknown == kPassRaw ? v : unknown);
  }
};

// A refused call's output, cleared so callers never read stale values.
template <class T>
inline void zero_out(T* p) {
  if (p) std::memset(static_cast<void*>(p), 0, sizeof(T));
}

template <class To, class From>
To bit_copy(const From& from) {
  static_assert(sizeof(To) == sizeof(From) && std::is_trivially_copyable_v<From>);
  To to;
  std::memcpy(static_cast<void*>(&to), &from, sizeof to);
  return to;
}

// True when a value of Cuda may be reinterpreted in place as Musa: the same type, a pair proven
// identical, or pointers/arrays to such with the same constness.
template <class Cuda, class Musa>
constexpr bool layout_compatible() {
  using C = std::remove_cv_t<Cuda>;
  using M = std::remove_cv_t<Musa>;
  if constexpr (std::is_const_v<Cuda> != std::is_const_v<Musa>) {
    return false;
  } else if constexpr (std::is_same_v<C, M>) {
    return true;
  } else if constexpr (HasPair<C>::value) {
    return std::is_same_v<typename Pair<C>::Musa, M> && Pair<C>::kIdentical;
  } else if constexpr (std::is_pointer_v<C> && std::is_pointer_v<M>) {
    return layout_compatible<std::remove_pointer_t<C>, std::remove_pointer_t<M>>();
  } else if constexpr (std::is_array_v<C> && std::is_array_v<M>) {
    return std::extent_v<C> == std::extent_v<M> &&
           layout_compatible<std::remove_extent_t<C>, std::remove_extent_t<M>>();
  } else if constexpr (std::is_integral_v<C> && std::is_integral_v<M>) {
    // e.g. size_t vs unsigned long: same width and signedness is the same ABI.
    return sizeof(C) == sizeof(M) && std::is_signed_v<C> == std::is_signed_v<M>;
  } else {
    return false;
  }
}

// A CUDA argument converted to the MUSA parameter type To.
template <class To, class From>
[[gnu::always_inline]] inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (HasPair<From>::value) {
    static_assert(std::is_same_v<typename Pair<From>::Musa, To>,
                  "the MUSA parameter type is not the pair of this CUDA type");
    return Pair<From>::to_musa(v);
  } else if constexpr (std::is_pointer_v<From> && std::is_pointer_v<To>) {
    static_assert(layout_compatible<std::remove_pointer_t<From>, std::remove_pointer_t<To>>(),
                  "pointer to a type whose MUSA layout is not proven identical: make the row "
                  "'translate' in symbols/cudart.txt");
    return reinterpret_cast<To>(v);
  } else {
    static_assert(layout_compatible<From, To>(),
                  "no conversion from this CUDA argument type to the MUSA parameter type");
    return static_cast<To>(v);
  }
}

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
