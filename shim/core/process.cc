#include "core/process.h"

#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/env.h"
#include "core/kernels.h"
#include "core/log.h"
#include "core/policy.h"
#include "gen/fn_ids.h"
#include "settings/settings.h"

namespace torchada {
namespace {

std::atomic<bool> g_installed{false};

void before_fork() { kernels_before_fork(); }
void after_fork_parent() { kernels_after_fork(false); }
void after_fork_child() { kernels_after_fork(true); }

void at_exit() { print_exit_summary(); }

// PyTorch (2.10+) replaces some CUDA operators (norms, reductions, topk, scatter_add, bmm...) with
// Python-registered Triton kernels (torch._native): NVIDIA code, installed over the kernel bridge.
// Its switch, TORCH_DISABLE_NATIVE_JIT, is read through os.environ, which Python copies from the
// process environment at start-up, long before the backend is chosen inside `import torch`: so it
// is set here, at load, unless the user set it or torchada is off, in pass-through (cuda) or
// without the kernel bridge. Only a variable that PyTorch reads; trivial work for a constructor.
__attribute__((constructor)) void steer_pytorch_to_aten_kernels() {
  // Quiet reads (no log from a constructor): malformed values are reported at start-up.
  using settings::Id;
  if (std::getenv("TORCH_DISABLE_NATIVE_JIT") != nullptr || settings::flag(Id::kDisable, nullptr) ||
      settings::word(Id::kBackend, nullptr) == 3 /* cuda */ ||
      settings::word(Id::kKernelBridge, nullptr) == 3 /* off */)
    return;
  setenv("TORCH_DISABLE_NATIVE_JIT", "1", /*overwrite=*/0);
}

}  // namespace

void install_process_hooks() {
  if (g_installed.exchange(true)) return;
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  std::atexit(at_exit);
}

void print_exit_summary() {
  const bool stats = settings::flag(settings::Id::kStats, settings_warn);
  unsigned long long refused = 0;
  for (std::size_t i = 0; i < kFnCount; ++i) {
    FnCounters c = counters(static_cast<Fn>(i));
    // Kernels the kernel bridge served are not failures: its own report lists them.
    refused += c.unsupported + c.missing + c.backend_refused +
               (kernel_bridge_active() ? 0 : c.kernel_refused);
  }
  if (refused == 0 && !stats) return;
  TORCHADA_LOG(kWarn, "exit summary: %llu call(s) refused", refused);
  for (std::size_t i = 0; i < kFnCount; ++i) {
    FnCounters c = counters(static_cast<Fn>(i));
    if (c.unsupported + c.missing + c.kernel_refused + c.backend_refused == 0) continue;
    TORCHADA_LOG(kWarn,
                 "  %-44s unsupported %llu  missing-in-backend %llu  kernel %llu  "
                 "refused-by-backend %llu",
                 kFnNames[i], c.unsupported, c.missing, c.kernel_refused, c.backend_refused);
  }
}

}  // namespace torchada
