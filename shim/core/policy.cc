#include "core/policy.h"

#include <atomic>
#include <cstdlib>

#include "core/backtrace.h"
#include "core/env.h"
#include "core/kernels.h"
#include "core/log.h"
#include "settings/settings.h"

namespace torchada {
namespace {

struct Counter {
  std::atomic<unsigned long long> unsupported{0};
  std::atomic<unsigned long long> missing{0};
  std::atomic<unsigned long long> kernel_refused{0};
  std::atomic<unsigned long long> backend_refused{0};
  std::atomic<unsigned long long> errors{0};
};

// Zero-initialised static storage: no constructor runs, so counting works from any constructor.
Counter g_counters[kFnCount];

thread_local int t_shim_error = 0;

std::atomic<bool> g_kernel_bridge{false};
std::atomic<int (*)()> g_bridge_attempting{nullptr};

// At TORCHADA_LOG_LEVEL=debug, where the program made a refused or failed call: a backtrace for
// each of the first few such calls per function.
constexpr unsigned long long kBacktracesPerFunction = 16;

bool strict() {
  static const bool s = settings::flag(settings::Id::kStrict, settings_warn);
  return s;
}

}  // namespace

void note_unsupported(Fn fn, const char* why, bool logged) {
  auto i = static_cast<std::size_t>(fn);
  const unsigned long long n = g_counters[i].unsupported.fetch_add(1, std::memory_order_relaxed);
  if (n == 0 && !logged)
    TORCHADA_LOG(kWarn,
                 "%s is not supported on MUSA%s%s; refused with the library's not-supported code",
                 kFnNames[i], why ? ": " : "", why ? why : "");
  if (n < kBacktracesPerFunction) log_backtrace(0, "%s: unsupported call", kFnNames[i]);
  if (strict()) {
    TORCHADA_LOG(kError, "TORCHADA_STRICT=1: aborting at the unsupported call %s", kFnNames[i]);
    std::abort();
  }
}

void note_missing(Fn fn) {
  auto i = static_cast<std::size_t>(fn);
  const unsigned long long n = g_counters[i].missing.fetch_add(1, std::memory_order_relaxed);
  if (n == 0)
    TORCHADA_LOG(kWarn,
                 "%s: the loaded MUSA library does not export its counterpart; refused with the "
                 "library's not-supported code",
                 kFnNames[i]);
  if (n < kBacktracesPerFunction) log_backtrace(0, "%s: missing in the MUSA runtime", kFnNames[i]);
  if (strict()) {
    TORCHADA_LOG(kError, "TORCHADA_STRICT=1: aborting at %s", kFnNames[i]);
    std::abort();
  }
}

bool note_kernel_refused(Fn fn, const void* func) {
  auto i = static_cast<std::size_t>(fn);
  const unsigned long long n = g_counters[i].kernel_refused.fetch_add(1, std::memory_order_relaxed);
  KernelInfo k = lookup_kernel(func);
  const bool bridged = g_kernel_bridge.load(std::memory_order_relaxed);
  // Served: launched by a PyTorch operator the bridge is trying natively (it then runs the
  // operator on the host). A kernel of the program's own (a C++/CUDA extension) is not.
  const bool served = kernel_bridge_serving();
  if (k.first_refusal) {
    if (k.name && served)
      TORCHADA_LOG(kDebug, "%s: kernel %s is NVIDIA device code; the kernel bridge serves it",
                   kFnNames[i], k.name);
    else if (k.name)
      TORCHADA_LOG(kWarn,
                   "%s: kernel %s is NVIDIA device code and cannot run on MUSA "
                   "(port it, or use torchada's ops library)",
                   kFnNames[i], k.name);
    else
      TORCHADA_LOG(kWarn, "%s: %p is not a kernel registered with the runtime", kFnNames[i], func);
  }
  if (n < kBacktracesPerFunction)
    log_backtrace(0, "%s: kernel %s refused", kFnNames[i], k.name ? k.name : "(unknown)");
  if (strict() && !bridged) {
    TORCHADA_LOG(kError, "TORCHADA_STRICT=1: aborting at %s", kFnNames[i]);
    std::abort();
  }
  return k.name != nullptr;
}

void note_error(Fn fn) {
  const auto i = static_cast<std::size_t>(fn);
  if (g_counters[i].errors.fetch_add(1, std::memory_order_relaxed) < kBacktracesPerFunction)
    log_backtrace(0, "%s: failed", kFnNames[i]);
}

void note_backend_refusal(Fn fn, const char* backend, const char* why, bool logged) {
  const auto i = static_cast<std::size_t>(fn);
  const unsigned long long n =
      g_counters[i].backend_refused.fetch_add(1, std::memory_order_relaxed);
  if (n == 0 && !logged)
    TORCHADA_LOG(
        kWarn, "%s: %s does not support this call%s%s (its not-supported code; logged once)",
        kFnNames[i], backend ? backend : "the MUSA library", why ? ": " : "", why ? why : "");
}

bool kernel_bridge_serving() {
  if (!g_kernel_bridge.load(std::memory_order_relaxed)) return false;
  int (*const attempting)() = g_bridge_attempting.load(std::memory_order_relaxed);
  return attempting == nullptr || attempting() != 0;
}

void set_kernel_bridge_active(bool active, int (*attempting)()) {
  g_bridge_attempting.store(attempting, std::memory_order_relaxed);
  g_kernel_bridge.store(active, std::memory_order_relaxed);
}

bool kernel_bridge_active() { return g_kernel_bridge.load(std::memory_order_relaxed); }

int take_shim_error() {
  int e = t_shim_error;
  t_shim_error = 0;
  return e;
}
int peek_shim_error() { return t_shim_error; }
void set_shim_error(int code) { t_shim_error = code; }

FnCounters counters(Fn fn) {
  const Counter& c = g_counters[static_cast<std::size_t>(fn)];
  return {c.unsupported.load(), c.missing.load(), c.kernel_refused.load(),
          c.backend_refused.load()};
}

}  // namespace torchada
