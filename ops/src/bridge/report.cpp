// Statistics of the kernel bridge and its log lines.
//
// Counts per operator and path are always kept (relaxed atomics); times only under
// TORCHADA_STATS=1. At exit, TORCHADA_STATS=1 prints the table; copy mode (a MUSA GPU, where
// the bridge costs two copies per call) prints one warning line saying how many operators took
// the bridge and how to list them.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "bridge.h"
#include "settings/settings.h"

namespace torchada::ops::bridge {
namespace {

std::mutex& states_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::vector<OpState*>& states() {
  static auto* v = new std::vector<OpState*>;
  return *v;
}

int level_of(const char* l) {
  if (!l) return 1;
  if (std::strcmp(l, "error") == 0) return 0;
  if (std::strcmp(l, "warn") == 0) return 1;
  if (std::strcmp(l, "info") == 0) return 2;
  if (std::strcmp(l, "debug") == 0) return 3;
  return 1;
}

int configured_level() {
  // The shim's variable (it reports a malformed value); the words are error, warn, info, debug.
  static const int l = settings::word(settings::Id::kLogLevel, nullptr);
  return l;
}

}  // namespace

const char* path_name(Path p) {
  switch (p) {
    case Path::kNative:
      return "native";
    case Path::kDevice:
      return "device";
    case Path::kDirect:
      return "bridge-direct";
    case Path::kCopy:
      return "bridge-copy";
    case Path::kCount:
      break;
  }
  return "?";
}

bool log_enabled(const char* level) { return level_of(level) <= configured_level(); }

namespace {
void write_line(const char* level, const char* fmt, va_list ap) {
  char buf[2048];
  int n = std::snprintf(buf, sizeof buf,
                        "[torchada %d:%ld %s] kernel bridge: ", static_cast<int>(::getpid()),
                        static_cast<long>(::syscall(SYS_gettid)), level);
  std::vsnprintf(buf + n, sizeof buf - static_cast<size_t>(n) - 1, fmt, ap);
  std::strncat(buf, "\n", sizeof buf - std::strlen(buf) - 1);
  FILE* f = stderr;
  const char* file = settings::text(settings::Id::kLogFile);
  FILE* opened = file ? std::fopen(file, "a") : nullptr;
  if (opened) f = opened;
  std::fputs(buf, f);
  if (opened) std::fclose(opened);
}

// A line of the report TORCHADA_STATS=1 asked for: always written, and labelled as the
// information it is (as the shim's call statistics are), whatever TORCHADA_LOG_LEVEL says.
__attribute__((format(printf, 1, 2))) void report_line(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  write_line("info", fmt, ap);
  va_end(ap);
}
}  // namespace

void log(const char* level, const char* fmt, ...) {
  if (!log_enabled(level)) return;
  va_list ap;
  va_start(ap, fmt);
  write_line(level, fmt, ap);
  va_end(ap);
}

void settings_warn(const char* message) { log("warn", "%s", message); }

void register_state(OpState* s) {
  std::lock_guard<std::mutex> lock(states_mutex());
  states().push_back(s);
}

const std::vector<OpState*>& all_states() { return states(); }

std::vector<ReportRow> report_rows() {
  std::vector<ReportRow> rows;
  std::lock_guard<std::mutex> lock(states_mutex());
  for (const OpState* s : states())
    for (int p = 0; p < static_cast<int>(Path::kCount); ++p) {
      const uint64_t c = s->stats[p].calls.load(std::memory_order_relaxed);
      if (c == 0) continue;
      rows.push_back(
          {s->name, path_name(static_cast<Path>(p)), c,
           static_cast<double>(s->stats[p].nanos.load(std::memory_order_relaxed)) * 1e-9});
    }
  std::sort(rows.begin(), rows.end(), [](const ReportRow& a, const ReportRow& b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.calls > b.calls;
  });
  return rows;
}

void print_report() {
  const auto rows = report_rows();
  size_t bridged = 0;
  for (const auto& r : rows)
    if (r.path.rfind("bridge-", 0) == 0) ++bridged;
  report_line("%zu operator(s) ran on the bridge (%s mode); per operator and path:", bridged,
              mode_name(mode()));
  if (mode() == Mode::kCopy)
    report_line("copy mode moved %.3f MB between device and host", 1e-6 * moved_bytes());
  report_line("  %-52s %-14s %10s %12s %10s", "operator", "path", "calls", "total ms", "mean us");
  for (const auto& r : rows)
    report_line("  %-52s %-14s %10llu %12.3f %10.2f", r.op.c_str(), r.path.c_str(),
                static_cast<unsigned long long>(r.calls), r.seconds * 1e3,
                r.calls ? r.seconds * 1e6 / static_cast<double>(r.calls) : 0.0);
}

namespace {
void at_exit() {
  if (settings::flag(settings::Id::kStats, nullptr)) {
    print_report();
    return;
  }
  if (mode() != Mode::kCopy) return;
  size_t bridged = 0;
  for (const auto& r : report_rows())
    if (r.path.rfind("bridge-", 0) == 0) ++bridged;
  if (bridged)
    log("warn",
        "%zu operator(s) ran on the CPU through the kernel bridge (copy mode: two copies per "
        "call, %.3f MB moved); TORCHADA_STATS=1 or torch.ops.torchada.bridge_report() lists "
        "them",
        bridged, 1e-6 * moved_bytes());
}
}  // namespace

void arm_exit_reporting() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(&at_exit); });
}

}  // namespace torchada::ops::bridge
