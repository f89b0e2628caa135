// Cost of tracing an intercepted call (shim/core/trace.h), as differences within one run:
//   Baseline         the call's body alone
//   Off              the export's shape with tracing and statistics off: one relaxed load and a
//                    compare, then the body
//   Traced           Span + 3 arguments + finish around the body (an "empty traced call")
//   TracedBackend    the same with the nested BackendSpan a forwarder adds
//   TracedProcessCpu Traced in process CPU time: with the grower thread that extends the file
// Figures are CPU time per call (medians of 5), wall time counts waiting for a core too.
// Tracing writes to a file under /dev/shm (else $TMPDIR or /tmp) that is unlinked at once; set
// TORCHADA_TRACE to choose another, TORCHADA_STATS=1 to add statistics to the traced runs.
// Goal: Traced - Baseline <= 50 ns per call.   Run: build/bin/bench_trace
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/trace.h"

namespace trace = torchada::trace;
using torchada::Fn;

namespace {

constexpr std::int64_t kIterations = 1 << 20;  // bounds the trace file (~0.2-0.6 KB per call)

__attribute__((noinline)) int body(void* p, unsigned long long n) {
  benchmark::DoNotOptimize(p);
  return n == 1 ? 1 : 0;
}

// What symbols/generate.py emits around a forwarded call.
template <bool kBackend>
__attribute__((noinline)) int exported(void* dst, unsigned long long count, int kind) {
  if (__builtin_expect(trace::active(), 0) && trace::enabled_slow()) {
    trace::Span s(Fn::k_cudaMemcpy);
    s.args().ptr("dst", dst);
    s.args().u64("count", count);
    s.args().enum_value("kind", kind, "cudaMemcpyHostToDevice");
    int r;
    if (kBackend) {
      trace::BackendSpan b("musaMemcpy");
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
  for (auto _ : state) benchmark::DoNotOptimize(exported<false>(&x, n++, 1));
  trace::detail::g_state.store(saved);
}

void BM_Traced(benchmark::State& state) {
  int x = 0;
  unsigned long long n = 4096;
  for (auto _ : state) benchmark::DoNotOptimize(exported<false>(&x, n++, 1));
}

void BM_TracedBackend(benchmark::State& state) {
  int x = 0;
  unsigned long long n = 4096;
  for (auto _ : state) benchmark::DoNotOptimize(exported<true>(&x, n++, 1));
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
  if (!path.empty()) unlink(path.c_str());  // the mapping keeps it until exit

  benchmark::Initialize(&argc, argv);
  Summary summary;
  benchmark::RunSpecifiedBenchmarks(&summary);
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
    std::printf("goal: traced - baseline <= 50 ns: %s\n", traced - base <= 50 ? "met" : "NOT met");
  }
  return 0;
}
