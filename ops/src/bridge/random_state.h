// Where a bridged random operator's numbers come from while the device's random kernels are
// installed (host_exec.cpp): a CPU generator seeded with this mix of the CUDA generator's seed and
// philox offset, the offset then moving on by 4. A CUDA graph's host node (capture.cpp) derives
// its generator the same way from the graph's seed and offset at each replay.
#pragma once

#include <cstdint>

namespace torchada::ops::bridge {

// splitmix64's finaliser over both words: neighbouring offsets give unrelated CPU streams.
inline std::uint64_t bridged_draw_seed(std::uint64_t seed, std::uint64_t offset) {
  std::uint64_t z = seed ^ (offset * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The philox offset one bridged draw uses up (PyTorch's unit).
constexpr std::uint64_t kBridgedDrawIncrement = 4;

}  // namespace torchada::ops::bridge
