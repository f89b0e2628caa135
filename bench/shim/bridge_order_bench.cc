// How the kernel bridge (ops/src/bridge/host_exec.cpp) orders a host computation after the work
// queued on the current stream, through libtorchada.so on the simulator, as ratios in one run:
//   sync       cudaStreamQuery; cudaStreamSynchronize only when the stream is busy; the work on
//              the calling thread (what the bridge does)
//   host_fn    the work as a host function on the stream (cudaLaunchHostFunc), then
//              cudaStreamSynchronize: the bridge must have the results (their shapes) before it
//              returns, so it has to wait either way
// each on an idle stream and behind a queued 64 KiB memset. The work itself is a counter
// increment: what is measured is the ordering.
// Run: build/bin/bench_bridge_order --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace {

struct Runtime {
  decltype(&::cudaStreamQuery) query = nullptr;
  decltype(&::cudaStreamSynchronize) synchronize = nullptr;
  decltype(&::cudaLaunchHostFunc) launch_host_func = nullptr;
  decltype(&::cudaMemsetAsync) memset_async = nullptr;
  decltype(&::cudaMalloc) malloc = nullptr;
  void* buffer = nullptr;

  Runtime() {
    setenv("TORCHADA_BACKEND", "sim", 1);
    setenv("TORCHADA_SIM_LIB_DIR", TORCHADA_SIM_DIR, 1);
    void* shim = dlopen(TORCHADA_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
    if (shim == nullptr) {
      std::fprintf(stderr, "bench_bridge_order: cannot load the shim: %s\n", dlerror());
      std::exit(1);
    }
    bind(shim, "cudaStreamQuery", &query);
    bind(shim, "cudaStreamSynchronize", &synchronize);
    bind(shim, "cudaLaunchHostFunc", &launch_host_func);
    bind(shim, "cudaMemsetAsync", &memset_async);
    bind(shim, "cudaMalloc", &malloc);
    if (malloc(&buffer, kBusyBytes) != cudaSuccess) {
      std::fprintf(stderr, "bench_bridge_order: cudaMalloc failed\n");
      std::exit(1);
    }
  }

  template <typename F>
  static void bind(void* lib, const char* name, F* out) {
    *out = reinterpret_cast<F>(dlvsym(lib, name, "libcudart.so.13"));
    if (*out == nullptr) {
      std::fprintf(stderr, "bench_bridge_order: %s not exported\n", name);
      std::exit(1);
    }
  }

  static constexpr size_t kBusyBytes = 64 << 10;
};

Runtime& rt() {
  static Runtime r;
  return r;
}

unsigned long g_work = 0;
void work(void*) { ++g_work; }

void make_busy(benchmark::State& state, cudaStream_t s) {
  if (state.range(0) != 0 && rt().memset_async(rt().buffer, 1, Runtime::kBusyBytes, s) != 0)
    state.SkipWithError("cudaMemsetAsync failed");
}

// range(0): 0 = idle stream, 1 = behind a queued memset. Stream 0, as PyTorch's default stream.
void BM_OrderBySync(benchmark::State& state) {
  cudaStream_t s = nullptr;
  Runtime& r = rt();
  for (auto _ : state) {
    make_busy(state, s);
    if (r.query(s) != cudaSuccess && r.synchronize(s) != cudaSuccess)
      state.SkipWithError("cudaStreamSynchronize failed");
    work(nullptr);
  }
  benchmark::DoNotOptimize(g_work);
}

void BM_OrderByHostFunc(benchmark::State& state) {
  cudaStream_t s = nullptr;
  Runtime& r = rt();
  for (auto _ : state) {
    make_busy(state, s);
    if (r.launch_host_func(s, work, nullptr) != cudaSuccess || r.synchronize(s) != cudaSuccess)
      state.SkipWithError("cudaLaunchHostFunc + cudaStreamSynchronize failed");
  }
  benchmark::DoNotOptimize(g_work);
}

BENCHMARK(BM_OrderBySync)->ArgName("busy")->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_OrderByHostFunc)->ArgName("busy")->Arg(0)->Arg(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
