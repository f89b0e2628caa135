// The checksum both sides of shim.private_entry compute over the arguments of the private call.
#pragma once

#include <cstdint>

inline int private_entry_checksum(int a, long b, double c, const void* d, int e, float f, int g,
                                  double h, long i, long j, int k) {
  std::uint64_t x = 1469598103934665603ull;
  const std::uint64_t parts[] = {static_cast<std::uint64_t>(a),
                                 static_cast<std::uint64_t>(b),
                                 static_cast<std::uint64_t>(static_cast<std::int64_t>(c * 1000.0)),
                                 static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(d)),
                                 static_cast<std::uint64_t>(e),
                                 static_cast<std::uint64_t>(static_cast<std::int64_t>(f * 1000.0f)),
                                 static_cast<std::uint64_t>(g),
                                 static_cast<std::uint64_t>(static_cast<std::int64_t>(h * 1000.0)),
                                 static_cast<std::uint64_t>(i),
                                 static_cast<std::uint64_t>(j),
                                 static_cast<std::uint64_t>(k)};
  for (std::uint64_t p : parts) x = (x ^ p) * 1099511628211ull;
  return static_cast<int>((x >> 33) & 0x3fffffff) + 1000;  // never a cuBLAS status
}
