// TORCHADA_BACKEND=cuda: the driver exports call NVIDIA's own libcuda.so.1, opened by full path
// (the name "libcuda.so.1" answers with torchada's replacement once that is loaded), each function
// resolved once by its exported name.
#include <atomic>
#include <mutex>

#include "core/backend.h"
#include "core/libraries.h"
#include "driver/driver.h"

namespace torchada {
namespace drv {
namespace {

std::atomic<void*> g_symbols[kFnCount];

void* nvidia_driver() {
  static void* handle = nullptr;
  static std::once_flag once;
  std::call_once(once, [] { handle = open_nvidia_library("libcuda.so.1", "cuInit"); });
  return handle;
}

}  // namespace

void* nvidia_driver_symbol(Fn id) {
  const auto i = static_cast<std::size_t>(id);
  if (void* p = g_symbols[i].load(std::memory_order_acquire)) return p;
  void* h = nvidia_driver();
  if (h == nullptr) return nullptr;
  void* p = library_lookup(h, kFnNames[i]);
  if (p != nullptr) g_symbols[i].store(p, std::memory_order_release);
  return p;
}

CUresult no_nvidia_driver(Fn id) {
  if (nvidia_driver() == nullptr) return CUDA_ERROR_NO_DEVICE;  // logged when opening
  return missing(id);
}

}  // namespace drv
}  // namespace torchada
