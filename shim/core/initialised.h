// Whether CUDA is initialised in this process, as NVIDIA's driver tracks it: cuInit succeeded, or
// a CUDA runtime function that initialises NVIDIA's runtime (and with it the driver) was called.
// Until then the driver API answers CUDA_ERROR_NOT_INITIALIZED (shim/gen/driver_exports.cc), as
// NVIDIA's does. The runtime's exports note the first call (shim/gen/cudart*_exports.cc: the cold
// path of the gated exports, whose fast path waits for the flag, and the entry of the others).
#pragma once

#include <atomic>

namespace torchada {
namespace detail {
extern std::atomic<bool> g_cuda_initialised __attribute__((visibility("hidden")));
void note_cuda_initialised_slow();  // sets the flag, then lets the gated exports go fast
}  // namespace detail

[[gnu::always_inline]] inline void note_cuda_initialised() {
  if (__builtin_expect(!detail::g_cuda_initialised.load(std::memory_order_relaxed), 0))
    detail::note_cuda_initialised_slow();
}
inline bool cuda_initialised() {
  return detail::g_cuda_initialised.load(std::memory_order_acquire);
}

}  // namespace torchada
