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
//                         While the process runs, events go to a binary log FILE.tdtrace; exit()
//                         and fatal signals turn it into FILE and remove it. A forked child that
//                         ends with _exit() leaves its log: the parent converts it at its own
//                         exit, or `torchada-trace convert FILE.tdtrace` does (as for a process
//                         killed by SIGKILL: its log is complete up to its last call).
//   TORCHADA_TRACE_FORMAT binary: keep only the binary log (FILE itself, per-pid names as above;
//                         also chosen by a FILE ending in ".tdtrace"); `torchada-trace convert`
//                         writes the same JSON later. The cheapest way to trace.
//   TORCHADA_STATS=1      at exit, a table per function: calls, errors, total and mean time, by
//                         total time, through the logger (stderr or TORCHADA_LOG_FILE).
//   TORCHADA_TRACE_MAX_MB largest trace file, binary log and JSON each (default 2048); later
//                         events are dropped and counted.
//   TORCHADA_TRACE_CLOCK  tsc (default where the kernel's clocksource is the TSC) or monotonic.
//
// The hot path formats nothing: a call records raw values (argument name pointers, 8-byte values,
// ticks) and, when it ends, copies one binary record (16 bytes + 8 per argument value that differs
// from its function's previous call) into a chunk of the mapped log that belongs to its thread;
// strings (function, argument and enum names) and a call's signature (its names and argument
// kinds) are logged once per thread. The backend call a forwarder makes (a BackendSpan directly
// inside the Span) is logged in its call's record, when the call ends (with its own start and end
// times, most often in no more bytes than the call alone): nothing of it is written while it
// runs. The log is valid at
// every instant but while a record is being copied; a fatal signal (SEGV, ABRT, BUS, FPE, ILL)
// completes the crashing thread's open calls (with "signal":"SIGSEGV"), waits for other threads to
// finish the record they are copying, converts, then chains to the previous handler or the default
// action. Once the log passes half a MiB, a thread named "torchada-trace" extends it ahead of the
// callers. shim/core/trace_log.h describes the format.
//
// Cost (bench_trace, 2-core VM, trace on tmpfs): with tracing and statistics off, an export pays
// one relaxed load and a compare (active()). Traced (the README's bench_trace row has the figures):
// on the calling thread ~37 ns, two rdtsc (~7.5 ns each) the largest part; over the process's life
// ~45-57 ns with the binary format (with the kernel's page work for 24-32 bytes of log per call,
// ~0.45 ns a byte), ~210 ns with JSON output (the text made at exit, ~190 bytes per event). A
// generated forwarder's call with its backend event: ~65 ns with the binary format (the backend
// call's start read, ~5 ns of bookkeeping over the call alone, no more bytes; its end is the
// call's, BackendSpan::kEndsCall), ~72 ns where the call has work of its own after the backend
// call (a clock read more), ~320 ns with JSON (two events' text).
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
  bool traced;   // on its thread's stack of open events, written when it ends
  bool backend;  // BackendSpan: no result, cat "backend"
  // The backend call made directly inside this api event, kept here rather than on the stack of
  // open events and logged in this event's record (one record, one reservation for the pair):
  // kNoChild, kChildOpen (child_start set), kChildDone (child_end set too), kChildOrphan (this
  // event ended first: the BackendSpan logs its own record).
  std::uint8_t child;
  // The backend call ends this api call (BackendSpan's kEndsCall): its end time is the call's.
  bool child_ends_call;
  std::int64_t start;     // clock ticks
  const char* name;       // a string literal
  const ArgWriter* args;  // may be null
  const char* child_name;
  std::int64_t child_start;
  std::int64_t child_end;
};
enum ChildState : std::uint8_t { kNoChild = 0, kChildOpen, kChildDone, kChildOrphan };
}  // namespace detail

// One relaxed load; the exports test it. True when undecided or on: the cold path then decides.
inline bool active() { return detail::g_state.load(std::memory_order_relaxed) != 1; }

// Decides from the environment once (thread-safe); true if tracing or statistics is on.
bool enabled_slow();

// The argument summary of one call, recorded raw: up to kMaxArgs (name, kind, value) triples and
// the bytes of string values. Names and enum labels must be string literals (their pointers are
// kept; the text is read when the call ends). The JSON is made later, exactly as a 120-byte
// summary of `"name":value` members: an argument that does not fit is dropped (a long string is
// shortened, ending in "...") and the event carries "truncated":true, as do calls with more than
// kMaxArgs arguments. Does nothing when the call is not being traced (statistics only).
class ArgWriter {
 public:
  static constexpr int kCapacity = 120;  // of the JSON summary
  static constexpr int kMaxArgs = 8;
  static constexpr int kStrBytes = 128;  // string values' bytes kept (more never fit)
  enum Kind : std::uint8_t { kPtr = 1, kU64, kI64, kStr, kNull, kLabel };

  void ptr(const char* name, const void* p) {
    add(name, kPtr, reinterpret_cast<std::uintptr_t>(p));
  }
  void u64(const char* name, unsigned long long v) { add(name, kU64, v); }
  void i64(const char* name, long long v) { add(name, kI64, static_cast<std::uint64_t>(v)); }
  void str(const char* name, const char* v);                     // v may be null -> null
  void enum_value(const char* name, int v, const char* label) {  // label may be null -> number
    if (label)
      add(name, kLabel, reinterpret_cast<std::uintptr_t>(label));
    else
      i64(name, v);
  }

 private:
  friend class detail::ArgAccess;
  void add(const char* name, Kind k, std::uint64_t v) {
    if (!on_) return;
    if (n_ == kMaxArgs) {
      truncated_ = true;
      return;
    }
    names_[n_] = name;
    kinds_[n_] = k;
    values_[n_++] = v;
  }
  const char* names_[kMaxArgs];
  std::uint64_t values_[kMaxArgs];  // kStr: the length kept in str_ (bit 63: cut short)
  Kind kinds_[kMaxArgs];
  std::uint8_t n_ = 0;
  std::uint8_t str_len_ = 0;
  bool on_ = false;
  bool truncated_ = false;
  char str_[kStrBytes];
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
// unless tracing is on. `backend_function_name` must outlive the process (a string literal).
// Directly inside a traced Span (a forwarder's case), its times are kept in the Span's event and
// logged with it; elsewhere (no Span, nested in another backend call, a second backend call of
// one Span) it is an event of its own.
class BackendSpan {
 public:
  // kEndsCall: the Span finishes right after this backend call, with nothing but returning its
  // (already translated) result in between, so the call's end is this call's end: one clock read
  // fewer. The generated forwarders' promise (abi/export.h, abi/library.h); nothing of the shim's
  // own work goes untimed, only the tracer's.
  enum Position : bool { kInsideCall = false, kEndsCall = true };
  explicit BackendSpan(const char* backend_function_name, Position position = kInsideCall);
  BackendSpan(const BackendSpan&) = delete;
  BackendSpan& operator=(const BackendSpan&) = delete;
  ~BackendSpan();

 private:
  detail::OpenEvent* parent_;  // the Span's event this call is folded into, or null
  detail::OpenEvent ev_;       // its own event otherwise
  detail::ThreadState* ts_;
  std::uint32_t gen_;
};

}  // namespace torchada::trace
