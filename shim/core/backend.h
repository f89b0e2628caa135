// The backend behind the exported entry points, chosen once per process.
//
//   TORCHADA_BACKEND=auto  the MUSA runtime when one is found, else NVIDIA's own runtime when an
//                          NVIDIA driver is present (pass-through), else every call fails with one
//                          message saying what was searched. Never the simulator.
//   TORCHADA_BACKEND=musa  the MUSA runtime (TORCHADA_MUSA_LIB_DIR, $MUSA_HOME/lib, $MUSA_PATH/lib,
//                          /usr/local/musa/lib, /opt/musa/lib, then the loader's path)
//   TORCHADA_BACKEND=sim   this project's CPU MUSA runtime (TORCHADA_SIM_LIB_DIR, else sim/ next
//                          to libtorchada.so)
//   TORCHADA_BACKEND=cuda  NVIDIA's libcudart of the caller's ABI, unchanged (pass-through)
#pragma once

#include <atomic>

#include "gen/musart_table.h"

namespace torchada {

enum class BackendKind : int { kNone = 0, kMusa, kSim, kCuda };

struct Runtime {
  BackendKind kind = BackendKind::kNone;
  bool passthrough = false;
  void* musa_handle = nullptr;
  MusartTable musa{};  // all null unless kind is kMusa or kSim
  int musa_runtime_version = 0;
  int musa_driver_version = 0;
  char library_path[512] = {};
};

namespace detail {
// Hidden: the exports read them PC-relative, without a GOT load.
extern std::atomic<const Runtime*> g_runtime __attribute__((visibility("hidden")));
const Runtime& init_runtime_slow();
// While the kernel bridge is being loaded by its helper thread (backend.cc): calls wait for it
// once it is past the loader lock, so that no PyTorch operator runs before it is installed.
extern std::atomic<bool> g_kernel_bridge_pending __attribute__((visibility("hidden")));
void kernel_bridge_wait();
// runtime() before initialisation (init_runtime_slow) or while the bridge loads (waits for it).
const Runtime& runtime_slow();
// The runtime when a forwarded call may go straight to MUSA (fast_runtime()), else null.
extern std::atomic<const Runtime*> g_fast_runtime __attribute__((visibility("hidden")));
// Recomputes g_fast_runtime after one of its conditions changed (initialisation finished, the
// kernel bridge loaded, tracing decided). The conditions only ever move towards "fast", and the
// recomputations are serialised, so the last one sees the final state.
void refresh_fast_runtime();
}  // namespace detail

// The process's runtime, initialised on first use. After that: one acquire load (and a relaxed
// one while the kernel bridge is loading).
// Both slow cases go through one call (detail::runtime_slow), so that a caller keeps nothing
// across it on its own path.
inline const Runtime& runtime() {
  const Runtime* rt = detail::g_runtime.load(std::memory_order_acquire);
  if (__builtin_expect(
          rt != nullptr && !detail::g_kernel_bridge_pending.load(std::memory_order_relaxed), 1))
    return *rt;
  return detail::runtime_slow();
}
// The runtime, when a generated forward may call MUSA without any other check: initialised, the
// kernel bridge not loading, not the pass-through, tracing and statistics off. One load; null
// otherwise, and the export takes its slow path (runtime(), the trace decision...).
[[gnu::always_inline]] inline const Runtime* fast_runtime() {
  return detail::g_fast_runtime.load(std::memory_order_acquire);
}
inline bool passthrough() { return runtime().passthrough; }
inline const MusartTable& musart() { return runtime().musa; }

// True when no backend could be loaded (the reason has been logged once).
bool backend_failed();
const char* backend_name(BackendKind kind);

// NVIDIA's own library `soname` (one that exports `probe`), for the cuda pass-through backend:
// by name, then by full path (LD_LIBRARY_PATH, $CUDA_HOME, /usr/local/cuda), never libtorchada.so
// or one of torchada's replacement libraries. Null (logged) when missing.
void* open_nvidia_library(const char* soname, const char* probe);

// NVIDIA's own libcudart.so.<abi> symbol, for the cuda pass-through backend; null if missing.
void* cuda_symbol(int abi, const char* name);

// Directory holding libtorchada.so itself (for sim/ next to it), without a trailing slash.
const char* self_directory();

}  // namespace torchada
