#include "core/policy.h"

#include <atomic>
#include <cstdlib>

#include "core/env.h"
#include "core/kernels.h"
#include "core/log.h"

namespace torchada {
namespace {

struct Counter {
  std::atomic<unsigned long long> unsupported{0};
  std::atomic<unsigned long long> missing{0};
  std::atomic<unsigned long long> kernel_refused{0};
  std::atomic<unsigned long long> errors{0};
};

// Zero-initialised static storage: no constructor runs, so counting works from any constructor.
Counter g_counters[kFnCount];

thread_local int t_shim_error = 0;

bool strict() {
  static const bool s = env_flag("TORCHADA_STRICT");
  return s;
}

}  // namespace

void note_unsupported(Fn fn) {
  auto i = static_cast<std::size_t>(fn);
  if (g_counters[i].unsupported.fetch_add(1, std::memory_order_relaxed) == 0)
    TORCHADA_LOG(kWarn, "%s is not supported on MUSA; returning cudaErrorNotSupported",
                 kFnNames[i]);
  if (strict()) {
    TORCHADA_LOG(kError, "TORCHADA_STRICT=1: aborting at the unsupported call %s", kFnNames[i]);
    std::abort();
  }
}

void note_missing(Fn fn) {
  auto i = static_cast<std::size_t>(fn);
  if (g_counters[i].missing.fetch_add(1, std::memory_order_relaxed) == 0)
    TORCHADA_LOG(kWarn,
                 "%s: the loaded MUSA runtime does not export its counterpart; returning "
                 "cudaErrorNotSupported",
                 kFnNames[i]);
  if (strict()) {
    TORCHADA_LOG(kError, "TORCHADA_STRICT=1: aborting at %s", kFnNames[i]);
    std::abort();
  }
}

bool note_kernel_refused(Fn fn, const void* func) {
  auto i = static_cast<std::size_t>(fn);
  g_counters[i].kernel_refused.fetch_add(1, std::memory_order_relaxed);
  KernelInfo k = lookup_kernel(func);
  if (k.first_refusal) {
    if (k.name)
      TORCHADA_LOG(kWarn,
                   "%s: kernel %s is NVIDIA device code and cannot run on MUSA "
                   "(port it, or use torchada's ops library)",
                   kFnNames[i], k.name);
    else
      TORCHADA_LOG(kWarn, "%s: %p is not a kernel registered with the runtime", kFnNames[i], func);
  }
  if (strict()) {
    TORCHADA_LOG(kError, "TORCHADA_STRICT=1: aborting at %s", kFnNames[i]);
    std::abort();
  }
  return k.name != nullptr;
}

void note_error(Fn fn) {
  g_counters[static_cast<std::size_t>(fn)].errors.fetch_add(1, std::memory_order_relaxed);
}

int take_shim_error() {
  int e = t_shim_error;
  t_shim_error = 0;
  return e;
}
int peek_shim_error() { return t_shim_error; }
void set_shim_error(int code) { t_shim_error = code; }

FnCounters counters(Fn fn) {
  const Counter& c = g_counters[static_cast<std::size_t>(fn)];
  return {c.unsupported.load(), c.missing.load(), c.kernel_refused.load()};
}

}  // namespace torchada
