// The simulator's device memory (sim/runtime/memory.cc, ipc.cc), as ratios within one run:
//   BM_MallocFree / BM_HostMallocFree   musaMalloc + musaFree (a private mapping of whole pages,
//                                       which IPC can share in place) against posix_memalign +
//                                       free of the same size (what device memory was before)
//   BM_Export / BM_Copy                 musaIpcGetMemHandle of a fresh, fully written allocation
//                                       (its pages moved into a memfd at the same address)
//                                       against one memcpy of the same bytes
#include <benchmark/benchmark.h>
#include <musa_runtime.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void BM_MallocFree(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = nullptr;
    if (musaMalloc(&p, n) != musaSuccess) state.SkipWithError("musaMalloc failed");
    benchmark::DoNotOptimize(p);
    musaFree(p);
  }
}
BENCHMARK(BM_MallocFree)->Arg(256)->Arg(64 << 10)->Arg(2 << 20)->Arg(20 << 20);

void BM_HostMallocFree(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = nullptr;
    if (posix_memalign(&p, 256, n) != 0) state.SkipWithError("posix_memalign failed");
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}
BENCHMARK(BM_HostMallocFree)->Arg(256)->Arg(64 << 10)->Arg(2 << 20)->Arg(20 << 20);

void BM_Export(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    void* p = nullptr;
    musaMalloc(&p, n);
    musaMemset(p, 0x5a, n);
    musaDeviceSynchronize();
    state.ResumeTiming();
    musaIpcMemHandle_t h;
    if (musaIpcGetMemHandle(&h, p) != musaSuccess) state.SkipWithError("export failed");
    state.PauseTiming();
    musaFree(p);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
BENCHMARK(BM_Export)->Arg(2 << 20)->Arg(20 << 20);

void BM_Copy(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<unsigned char> a(n, 0x5a), b(n);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
BENCHMARK(BM_Copy)->Arg(2 << 20)->Arg(20 << 20);

}  // namespace

BENCHMARK_MAIN();
