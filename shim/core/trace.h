// Tracing and per-function statistics of the intercepted calls.
//
//   TORCHADA_TRACE=FILE   Chrome trace-event JSON (Perfetto, chrome://tracing): one complete event
//                         ("ph":"X") per intercepted call (name, pid, tid, ts/dur in microseconds
//                         of CLOCK_MONOTONIC, args: result and the call's arguments), the backend
//                         call a forwarder makes as a nested "X" event (cat "backend"), thread and
//                         process names as "M" events. A forked child that makes traced calls
//                         writes FILE with ".<pid>" inserted before the extension (trace.json ->
//                         trace.1234.json); so does a process that finds FILE in use by another
//                         live process (an exec'd child inheriting the environment).
//   TORCHADA_STATS=1      at exit, a table per function: calls, errors, total and mean time, by
//                         total time, through the logger (stderr or TORCHADA_LOG_FILE).
//   TORCHADA_TRACE_MAX_MB largest trace file (default 2048); later events are dropped and counted.
//   TORCHADA_TRACE_CLOCK  tsc (default where the kernel's clocksource is the TSC) or monotonic.
//
// The file is valid JSON at every instant except while an event is being copied into it: it is
// mapped, each thread writes an event when its call ends straight into chunks of its own, unused
// bytes are spaces and the last byte is always ']'. exit() squeezes the unused space out; a fatal
// signal (SEGV, ABRT, BUS, FPE, ILL) completes the crashing thread's open calls (with
// "signal":"SIGSEGV"), waits for other threads to finish the event they are copying, then chains
// to the previous handler or the default action; _exit() needs nothing (the unused space stays as
// spaces). Once the trace passes half a MiB, a thread named "torchada-trace" extends the file
// ahead of the callers.
//
// Cost: with tracing and statistics off, an export pays one relaxed load and a compare (active()).
// Traced (bench_trace, 2-core VM, trace on tmpfs): ~80 ns on the calling thread (two rdtsc of
// ~10 ns each, the text), ~260 ns of process CPU per call over a process's life counting the
// "torchada-trace" thread and the work at exit, ~350-400 ns for a forwarded call with its backend
// event; most of it is the kernel's page-cache work for the ~190 (~290) bytes each call adds.
#pragma once

#include <atomic>
#include <cstdint>

#include "gen/fn_ids.h"

namespace torchada::trace {

class ArgWriter;

namespace detail {
// 0 = not decided yet, 1 = off, 2 = on (tracing or statistics).
extern std::atomic<int> g_state __attribute__((visibility("hidden")));
struct ThreadState;
class ArgAccess;

// What a signal handler needs to complete an event that is still open on its thread.
struct OpenEvent {
  bool traced;         // on its thread's stack of open events, written when it ends
  std::int64_t start;  // clock ticks
  const char* name;    // not NUL-terminated
  std::uint32_t name_len;
  bool backend;           // BackendSpan: no result, cat "backend"
  const ArgWriter* args;  // may be null
};
}  // namespace detail

// One relaxed load; the exports test it. True when undecided or on: the cold path then decides.
inline bool active() { return detail::g_state.load(std::memory_order_relaxed) != 1; }

// Decides from the environment once (thread-safe); true if tracing or statistics is on.
bool enabled_slow();

// The argument summary of one call: JSON members `"name":value` in a fixed 120-byte buffer. An
// argument that does not fit is dropped (a long string is shortened, ending in "...") and the
// event then carries "truncated":true; the output is always valid JSON. Names are escaped too.
// Does nothing when the call is not being traced (statistics only).
class ArgWriter {
 public:
  static constexpr int kCapacity = 120;

  void ptr(const char* name, const void* p);  // "0x7f..." (a string: JSON has no hex numbers)
  void u64(const char* name, unsigned long long v);
  void i64(const char* name, long long v);
  void str(const char* name, const char* v);                    // v may be null -> null
  void enum_value(const char* name, int v, const char* label);  // label may be null -> number

 private:
  friend class detail::ArgAccess;
  bool begin(const char* name, int value_room);
  char buf_[kCapacity];
  std::uint8_t len_ = 0;
  bool on_ = false;
  bool truncated_ = false;
};

// One intercepted call. Construct only after enabled_slow() returned true.
class Span {
 public:
  explicit Span(Fn fn);  // start time
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ArgWriter& args() { return args_; }
  // result 0 = success; anything else counts as an error in the statistics. Once only.
  void finish(int result);
  ~Span() {
    if (!done_) finish(-1);
  }

 private:
  detail::OpenEvent ev_;
  detail::ThreadState* ts_;
  std::uint32_t gen_;
  Fn fn_;
  bool done_ = false;
  ArgWriter args_;
};

// The backend call a forwarder makes, nested in the current Span (a child event). Does nothing
// unless tracing is on. `backend_function_name` must outlive the object (a string literal).
class BackendSpan {
 public:
  explicit BackendSpan(const char* backend_function_name);
  BackendSpan(const BackendSpan&) = delete;
  BackendSpan& operator=(const BackendSpan&) = delete;
  ~BackendSpan();

 private:
  detail::OpenEvent ev_;
  detail::ThreadState* ts_;
  std::uint32_t gen_;
};

}  // namespace torchada::trace
