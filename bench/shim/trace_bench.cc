// Cost of tracing an intercepted call (shim/core/trace.h), as differences within one run:
//   Baseline         the call's body alone
//   Off              the export's shape with tracing and statistics off: one relaxed load and a
//                    compare, then the body
//   Traced           Span + 3 arguments + finish around the body (an "empty traced call")
//   TracedBackend    the same with the nested BackendSpan a forwarder adds
//   TracedProcessCpu Traced in process CPU time: with the grower thread that extends the file
// Figures are CPU time per call (medians of 5), wall time counts waiting for a core too.
// And a whole-lifetime figure, the one the goal is about (measured first): forked children make
// kLifetimeCalls traced (or untraced) calls into a fresh trace file and exit; the parent reads each
// child's CPU time from wait4 (user + sys, every thread of the child: the callers, the
// "torchada-trace" thread, the work exit() does to finish the file: the JSON made from the binary
// log), and the trace's bytes per event. The call's pointer and kind repeat from one call to the
// next (a short binary event leaves such values out); a last figure has the pointer change every
// call too. Tracing writes to a file under /dev/shm (else $TMPDIR or /tmp) that is unlinked at
// once; set TORCHADA_TRACE to choose another, TORCHADA_STATS=1 to add statistics to the traced
// runs, TORCHADA_TRACE_FORMAT=binary to measure the binary log alone (no JSON made at exit). Goal:
// whole-process CPU per traced call <= 50 ns. Run: build/bin/bench_trace [--lifetime_only]
// [benchmark flags]
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/trace.h"

namespace trace = torchada::trace;
using torchada::Fn;

namespace {

constexpr std::int64_t kIterations = 1 << 20;  // bounds the log (16-60 bytes per call)

__attribute__((noinline)) int body(void* p, unsigned long long n) {
  benchmark::DoNotOptimize(p);
  return n == 1 ? 1 : 0;
}

// The call's shape: no backend call (kPlain); a generated forwarder's (kForwarder: the backend
// call ends the call, BackendSpan::kEndsCall); a backend call with the body's own work after it
// (kInside: the call's end is a clock read of its own).
enum Shape { kPlain, kForwarder, kInside };

// What symbols/generate.py emits around a forwarded call.
template <Shape kShape>
__attribute__((noinline)) int exported(void* dst, unsigned long long count, int kind) {
  if (__builtin_expect(trace::active(), 0) && trace::enabled_slow()) {
    trace::Span s(Fn::k_cudaMemcpy);
    s.args().ptr("dst", dst);
    s.args().u64("count", count);
    s.args().enum_value("kind", kind, "cudaMemcpyHostToDevice");
    int r;
    if (kShape != kPlain) {
      trace::BackendSpan b("musaMemcpy", kShape == kForwarder ? trace::BackendSpan::kEndsCall
                                                              : trace::BackendSpan::kInsideCall);
      r = body(dst, count);
    } else {
      r = body(dst, count);
    }
    s.finish(r);
    return r;
  }
  return body(dst, count);
}

void BM_Baseline(benchmark::State& state) {
  int x = 0;
  unsigned long long n = 4096;
  for (auto _ : state) benchmark::DoNotOptimize(body(&x, n++));
}

void BM_Off(benchmark::State& state) {
  // The state an export sees once the environment said "off" (this process traces, so the
  // decision is set aside for this benchmark and restored after).
  const int saved = trace::detail::g_state.exchange(1);
  int x = 0;
  unsigned long long n = 4096;
  for (auto _ : state) benchmark::DoNotOptimize(exported<kPlain>(&x, n++, 1));
  trace::detail::g_state.store(saved);
}

void BM_Traced(benchmark::State& state) {
  int x = 0;
  unsigned long long n = 4096;
  for (auto _ : state) benchmark::DoNotOptimize(exported<kPlain>(&x, n++, 1));
}

void BM_TracedBackend(benchmark::State& state) {
  int x = 0;
  unsigned long long n = 4096;
  for (auto _ : state) benchmark::DoNotOptimize(exported<kForwarder>(&x, n++, 1));
}

BENCHMARK(BM_Baseline)->Iterations(kIterations)->Repetitions(5);
BENCHMARK(BM_Off)->Iterations(kIterations)->Repetitions(5);
BENCHMARK(BM_Traced)->Iterations(kIterations)->Repetitions(5);
BENCHMARK(BM_TracedBackend)->Iterations(kIterations)->Repetitions(5);
BENCHMARK(BM_Traced)->Iterations(kIterations)->Repetitions(5)->Threads(2);
// Process CPU time: with the grower thread's work (writing, mapping the file's next segments).
BENCHMARK(BM_Traced)
    ->Name("BM_TracedProcessCpu")
    ->Iterations(kIterations)
    ->Repetitions(5)
    ->MeasureProcessCPUTime();

// Keeps each benchmark's median CPU time per iteration for the summary: CPU time, as wall time
// also counts the time the thread waits for a core on a busy machine.
class Summary : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
        median_[r.run_name.function_name + "/threads:" + std::to_string(r.threads)] =
            r.GetAdjustedCPUTime();
    ConsoleReporter::ReportRuns(runs);
  }
  double get(const std::string& name) const {
    auto it = median_.find(name);
    return it == median_.end() ? -1 : it->second;
  }

 private:
  std::map<std::string, double> median_;
};

struct ChildCost {
  double user_ns = -1, sys_ns = -1;  // per call
  long long bytes = -1;              // the child's trace file, after it ended
};

// A forked child makes `calls` calls (traced unless `off`) and ends with exit() (the trace is
// finished) or _exit() (nothing runs), with or without the nested backend span; its CPU time per
// call, and its trace file's size.
// `vary`: the pointer argument changes every call too (the count always does; the kind does not).
ChildCost child_cost(const std::string& base, int calls, bool off, bool quick_exit, Shape shape,
                     bool vary) {
  ChildCost c;
  const pid_t pid = fork();
  if (pid < 0) return c;
  if (pid == 0) {
    if (off) trace::detail::g_state.store(1);
    int x = 0;
    for (int i = 0; i < calls; ++i) {
      void* dst = vary ? reinterpret_cast<void*>(std::uintptr_t{0x100000} + 64u * i) : &x;
      benchmark::DoNotOptimize(shape == kForwarder ? exported<kForwarder>(dst, 4096u + i, 1)
                               : shape == kInside  ? exported<kInside>(dst, 4096u + i, 1)
                                                   : exported<kPlain>(dst, 4096u + i, 1));
    }
    if (quick_exit) _exit(0);
    std::exit(0);
  }
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return c;
  auto ns = [](const timeval& tv) { return tv.tv_sec * 1e9 + tv.tv_usec * 1e3; };
  c.user_ns = ns(ru.ru_utime) / calls;
  c.sys_ns = ns(ru.ru_stime) / calls;
  // The child's file: ".<pid>" before the extension (trace.h); the log it leaves after _exit.
  const std::size_t slash = base.rfind('/'), dot = base.rfind('.');
  std::string path = base + "." + std::to_string(pid);
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1))
    path = base.substr(0, dot) + "." + std::to_string(pid) + base.substr(dot);
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) c.bytes = static_cast<long long>(st.st_size);
  unlink(path.c_str());
  unlink((path + ".tdtrace").c_str());
  return c;
}

double rdtsc_ns() {
#if defined(__x86_64__)
  timespec a{}, b{};
  constexpr int kN = 1 << 22;
  std::uint64_t sum = 0;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  for (int i = 0; i < kN; ++i) sum += __rdtsc();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  benchmark::DoNotOptimize(sum);
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / kN;
#else
  return -1;
#endif
}

constexpr int kLifetimeCalls = 1 << 20;

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  if (std::getenv("TORCHADA_TRACE") == nullptr) {
    const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : std::getenv("TMPDIR");
    path = std::string(dir ? dir : "/tmp") + "/torchada-bench-trace-" + std::to_string(getpid()) +
           ".json";
    setenv("TORCHADA_TRACE", path.c_str(), 1);
  }
  if (std::getenv("TORCHADA_TRACE_MAX_MB") == nullptr) setenv("TORCHADA_TRACE_MAX_MB", "16384", 1);
  if (!trace::enabled_slow()) {
    std::fprintf(stderr, "bench_trace: tracing did not start (TORCHADA_TRACE=%s)\n",
                 std::getenv("TORCHADA_TRACE"));
    return 1;
  }
  if (!path.empty()) {  // the mapping keeps the log until exit
    unlink(path.c_str());
    unlink((path + ".tdtrace").c_str());
  }

  // First (before the benchmarks fill memory with their trace): whole-process CPU over a traced
  // process's lifetime, medians of 5 children each. --lifetime_only: nothing else.
  bool lifetime_only = false;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--lifetime_only") == 0) {
      lifetime_only = true;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  const std::string trace_path = std::getenv("TORCHADA_TRACE");
  auto median5 = [&](bool untraced, bool quick, Shape shape = kPlain, bool vary = false) {
    ChildCost r[5];
    for (auto& c : r) c = child_cost(trace_path, kLifetimeCalls, untraced, quick, shape, vary);
    std::sort(r, r + 5, [](const ChildCost& a, const ChildCost& b) {
      return a.user_ns + a.sys_ns < b.user_ns + b.sys_ns;
    });
    return r[2];
  };
  const ChildCost off_c = median5(true, false), exit_c = median5(false, false),
                  quick_c = median5(false, true), backend_c = median5(false, false, kForwarder),
                  inside_c = median5(false, false, kInside),
                  vary_c = median5(false, false, kPlain, true);

  benchmark::Initialize(&argc, argv);
  Summary summary;
  if (!lifetime_only) benchmark::RunSpecifiedBenchmarks(&summary);
  benchmark::Shutdown();

  const double base = summary.get("BM_Baseline/threads:1");
  const double off = summary.get("BM_Off/threads:1");
  const double traced = summary.get("BM_Traced/threads:1");
  const double backend = summary.get("BM_TracedBackend/threads:1");
  const double process = summary.get("BM_TracedProcessCpu/threads:1");
  if (base > 0 && off > 0 && traced > 0 && backend > 0 && process > 0) {
    std::printf(
        "\nCPU per call (medians): baseline %.2f ns, off %+.2f ns, traced %+.2f ns (x%.1f), "
        "traced with backend span %+.2f ns, traced counting the grower thread %+.2f ns\n",
        base, off - base, traced - base, traced / base, backend - base, process - base);
  }
  if (off_c.user_ns >= 0 && exit_c.user_ns >= 0 && quick_c.user_ns >= 0) {
    const double off_total = off_c.user_ns + off_c.sys_ns;
    const double whole = exit_c.user_ns + exit_c.sys_ns - off_total;
    std::printf(
        "whole-process CPU per traced call over a process's life (%d calls, every thread, "
        "exit() finishing the file): %+.2f ns (user %+.2f, sys %+.2f); ended by _exit (no "
        "finishing): %+.2f ns; %.1f bytes of trace per call; rdtsc %.2f ns\n",
        kLifetimeCalls, whole, exit_c.user_ns - off_c.user_ns, exit_c.sys_ns - off_c.sys_ns,
        quick_c.user_ns + quick_c.sys_ns - off_total,
        exit_c.bytes > 0 ? static_cast<double>(exit_c.bytes) / kLifetimeCalls : -1.0, rdtsc_ns());
    std::printf(
        "the same with the nested backend span of a forwarded call: %+.2f ns (user %+.2f, sys "
        "%+.2f), %.1f bytes of trace per call; with work after the backend call (its own end "
        "read): %+.2f ns\n",
        backend_c.user_ns + backend_c.sys_ns - off_total, backend_c.user_ns - off_c.user_ns,
        backend_c.sys_ns - off_c.sys_ns,
        backend_c.bytes > 0 ? static_cast<double>(backend_c.bytes) / kLifetimeCalls : -1.0,
        inside_c.user_ns + inside_c.sys_ns - off_total);
    std::printf(
        "the same with the pointer argument changing every call too: %+.2f ns, %.1f bytes of "
        "trace per call\n",
        vary_c.user_ns + vary_c.sys_ns - off_total,
        vary_c.bytes > 0 ? static_cast<double>(vary_c.bytes) / kLifetimeCalls : -1.0);
    const char* fmt = std::getenv("TORCHADA_TRACE_FORMAT");
    std::printf("goal: whole-process CPU per traced call <= 50 ns (%s output): %s\n",
                fmt && std::strcmp(fmt, "binary") == 0 ? "binary" : "JSON",
                whole <= 50 ? "met" : "NOT met");
  }
  // Not exit(): this process's own log (every benchmark's calls) would be turned into JSON.
  std::fflush(stdout);
  _exit(0);
}
