// Test helpers for the simulated MCCL: element types, inputs every rank can compute for every
// other rank, and reference results computed here, independently of the library (wide integer
// arithmetic, double precision, the compiler's own _Float16).
#ifndef TORCHADA_TESTS_SIM_CCL_COMMON_H
#define TORCHADA_TESTS_SIM_CCL_COMMON_H

#include <mccl.h>
#include <musa_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace ccltest {

struct BF16 {
  uint16_t bits;
};

// Nearest bfloat16 to x (ties to even), found by comparing the two neighbouring candidates in
// double precision rather than by the bit trick the library uses.
inline uint16_t bf16_nearest(double x) {
  float f = static_cast<float>(x);  // exact for every value the tests use
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
  float flo, fhi;
  std::memcpy(&flo, &lo, 4);
  std::memcpy(&fhi, &hi, 4);
  const double dlo = std::fabs(x - flo), dhi = std::fabs(x - fhi);
  if (dlo < dhi) return static_cast<uint16_t>(lo >> 16);
  if (dhi < dlo) return static_cast<uint16_t>(hi >> 16);
  return static_cast<uint16_t>(((lo >> 16) & 1u) ? hi >> 16 : lo >> 16);
}
inline double bf16_value(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Test traits per element type.
template <class T>
struct TT;
#define CCLTEST_INT(T, DT)                   \
  template <>                                \
  struct TT<T> {                             \
    static constexpr mcclDataType_t dt = DT; \
    static constexpr bool is_float = false;  \
    static constexpr const char* name = #T;  \
  };
CCLTEST_INT(int8_t, mcclInt8)
CCLTEST_INT(uint8_t, mcclUint8)
CCLTEST_INT(int32_t, mcclInt32)
CCLTEST_INT(uint32_t, mcclUint32)
CCLTEST_INT(int64_t, mcclInt64)
CCLTEST_INT(uint64_t, mcclUint64)
#undef CCLTEST_INT
template <>
struct TT<_Float16> {
  static constexpr mcclDataType_t dt = mcclFloat16;
  static constexpr bool is_float = true;
  static constexpr const char* name = "float16";
  static _Float16 enc(double x) { return static_cast<_Float16>(static_cast<float>(x)); }
  static double dec(_Float16 v) { return static_cast<double>(v); }
};
template <>
struct TT<float> {
  static constexpr mcclDataType_t dt = mcclFloat32;
  static constexpr bool is_float = true;
  static constexpr const char* name = "float32";
  static float enc(double x) { return static_cast<float>(x); }
  static double dec(float v) { return v; }
};
template <>
struct TT<double> {
  static constexpr mcclDataType_t dt = mcclFloat64;
  static constexpr bool is_float = true;
  static constexpr const char* name = "float64";
  static double enc(double x) { return x; }
  static double dec(double v) { return v; }
};
template <>
struct TT<BF16> {
  static constexpr mcclDataType_t dt = mcclBfloat16;
  static constexpr bool is_float = true;
  static constexpr const char* name = "bfloat16";
  static BF16 enc(double x) { return BF16{bf16_nearest(x)}; }
  static double dec(BF16 v) { return bf16_value(v.bits); }
};

// Calls f(T{}) for every MCCL data type.
template <class F>
void for_each_type(F&& f) {
  f(int8_t{});
  f(uint8_t{});
  f(int32_t{});
  f(uint32_t{});
  f(int64_t{});
  f(uint64_t{});
  f(_Float16{});
  f(float{});
  f(double{});
  f(BF16{});
}

enum Op { kSum = 0, kProd, kMax, kMin, kAvg, kPreMulHost, kPreMulDevice, kNumTestOps };
inline const char* op_name(int op) {
  static const char* const n[] = {
      "sum", "prod", "max", "min", "avg", "premulsum(host)", "premulsum(device)"};
  return n[op];
}

// Input element i of `rank` for collective number `salt`. Floats are small integers so that
// every sum, product (of up to 4 ranks), average and PreMulSum is exact in every float type.
template <class T>
T input(int rank, size_t i, int salt) {
  if constexpr (TT<T>::is_float) {
    const int v = static_cast<int>((static_cast<size_t>(rank) * 7 + i * 3 + salt * 5) % 9) - 4;
    return TT<T>::enc(v);
  } else {
    const uint64_t v = static_cast<uint64_t>(rank) * 1000003u + i * 7919u +
                       static_cast<uint64_t>(salt) * 104729u + 12345u;
    return static_cast<T>(v * 0x9e3779b97f4a7c15ull >> 17);
  }
}

// The PreMulSum scalar each rank uses.
template <class T>
T scalar(int rank) {
  if constexpr (TT<T>::is_float)
    return TT<T>::enc(0.5 * (rank + 1));
  else
    return static_cast<T>(rank + 2);
}

// Reference reduction of element i over ranks 0..n-1. Returns true when `got` matches.
template <class T>
bool check_reduced(int op, int n, size_t i, int salt, T got, std::string* why) {
  if constexpr (TT<T>::is_float) {
    double acc = 0;
    for (int k = 0; k < n; ++k) {
      double v = TT<T>::dec(input<T>(k, i, salt));
      if (op == kPreMulHost || op == kPreMulDevice) v *= TT<T>::dec(scalar<T>(k));
      if (k == 0)
        acc = v;
      else if (op == kProd)
        acc *= v;
      else if (op == kMax)
        acc = std::max(acc, v);
      else if (op == kMin)
        acc = std::min(acc, v);
      else
        acc += v;
    }
    if (op == kAvg) acc /= n;
    const double g = TT<T>::dec(got);
    if (g == acc) return true;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s %s element %zu: got %.17g, expected %.17g", TT<T>::name,
                  op_name(op), i, g, acc);
    *why = buf;
    return false;
  } else {
    // Integers wrap: keep the exact value modulo 2^64 and truncate to T at the end.
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    uint64_t acc = 0;
    W best = 0;
    for (int k = 0; k < n; ++k) {
      T v = input<T>(k, i, salt);
      if (op == kPreMulHost || op == kPreMulDevice)
        v = static_cast<T>(static_cast<uint64_t>(v) * static_cast<uint64_t>(scalar<T>(k)));
      const uint64_t u = static_cast<uint64_t>(static_cast<W>(v));
      if (k == 0) {
        acc = u;
        best = static_cast<W>(v);
      } else if (op == kProd) {
        acc *= u;
      } else if (op == kMax) {
        best = std::max<W>(best, static_cast<W>(v));
      } else if (op == kMin) {
        best = std::min<W>(best, static_cast<W>(v));
      } else {
        acc += u;
      }
    }
    T want;
    if (op == kMax || op == kMin)
      want = static_cast<T>(best);
    else
      want = static_cast<T>(acc);
    if (op == kAvg) want = static_cast<T>(static_cast<W>(want) / static_cast<W>(n));
    if (got == want) return true;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s %s element %zu: got %lld, expected %lld", TT<T>::name,
                  op_name(op), i, static_cast<long long>(got), static_cast<long long>(want));
    *why = buf;
    return false;
  }
}

template <class T>
bool same(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Device buffers of the simulator (host memory behind musaMalloc).
template <class T>
struct DevBuf {
  T* p = nullptr;
  size_t n = 0;
  explicit DevBuf(size_t count) : n(count) {
    if (musaMalloc(reinterpret_cast<void**>(&p), (count ? count : 1) * sizeof(T)) != musaSuccess)
      p = nullptr;
  }
  ~DevBuf() { musaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void fill(const std::vector<T>& v) {
    musaMemcpy(p, v.data(), v.size() * sizeof(T), musaMemcpyHostToDevice);
  }
  std::vector<T> get() const {
    std::vector<T> v(n);
    musaMemcpy(v.data(), p, n * sizeof(T), musaMemcpyDeviceToHost);
    return v;
  }
};

inline std::string id_to_hex(const mcclUniqueId& id) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (char c : id.internal) {
    const unsigned char u = static_cast<unsigned char>(c);
    s += d[u >> 4];
    s += d[u & 15];
  }
  return s;
}
inline bool id_from_hex(const std::string& s, mcclUniqueId* id) {
  if (s.size() != 2 * sizeof id->internal) return false;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < sizeof id->internal; ++i) {
    const int hi = nib(s[2 * i]), lo = nib(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    id->internal[i] = static_cast<char>(hi << 4 | lo);
  }
  return true;
}

}  // namespace ccltest

#endif  // TORCHADA_TESTS_SIM_CCL_COMMON_H
