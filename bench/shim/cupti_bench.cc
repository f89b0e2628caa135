// Cost of torchada's CUPTI (shim/cupti/), as ratios within one run, on the simulator:
//   off        cudaMemsetAsync through the shim with no CUPTI client vs musaMemsetAsync called
//              directly: what every copy and fill pays for being recordable (one relaxed load)
//   recording  the same call while a client records MEMSET, RUNTIME and EXTERNAL_CORRELATION:
//              two events, a correlation, the records built at each flush (every 1024 calls)
//   push/pop   cuptiActivityPushExternalCorrelationId + Pop: what PyTorch's profiler adds to each
//              operator while it profiles
// Run: build/bin/bench_cupti
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>

#include <cstdlib>

#include "load.h"

namespace {

struct Libs {
  void* shim = bench::load(TORCHADA_SHIM_PATH);
  void* sim = bench::load(TORCHADA_SIM_DIR "/libmusart.so");
  template <class F>
  F cuda(const char* name, const char* node = "libcudart.so.13") const {
    return reinterpret_cast<F>(dlvsym(shim, name, node));
  }
};
Libs& libs() {
  static Libs l;
  return l;
}

using MemsetAsync = int (*)(void*, int, size_t, void*);
using Malloc = int (*)(void**, size_t);
using Sync = int (*)();

void* device_buffer() {
  static void* p = [] {
    void* d = nullptr;
    libs().cuda<Malloc>("cudaMalloc")(&d, 4096);
    return d;
  }();
  return p;
}

void CUPTIAPI request(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}
void CUPTIAPI complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

template <class F>
F cupti(const char* name) {
  return reinterpret_cast<F>(dlvsym(libs().shim, name, "libcupti.so.13"));
}

void BM_Direct_musaMemsetAsync(benchmark::State& state) {
  auto f = reinterpret_cast<MemsetAsync>(dlsym(libs().sim, "musaMemsetAsync"));
  void* d = device_buffer();
  for (auto _ : state) benchmark::DoNotOptimize(f(d, 0, 64, nullptr));
  libs().cuda<Sync>("cudaDeviceSynchronize")();
}

void BM_Shim_cudaMemsetAsync_NotRecording(benchmark::State& state) {
  auto f = libs().cuda<MemsetAsync>("cudaMemsetAsync");
  void* d = device_buffer();
  for (auto _ : state) benchmark::DoNotOptimize(f(d, 0, 64, nullptr));
  libs().cuda<Sync>("cudaDeviceSynchronize")();
}

void BM_Shim_cudaMemsetAsync_Recording(benchmark::State& state) {
  auto f = libs().cuda<MemsetAsync>("cudaMemsetAsync");
  auto enable = cupti<decltype(&cuptiActivityEnable)>("cuptiActivityEnable");
  auto disable = cupti<decltype(&cuptiActivityDisable)>("cuptiActivityDisable");
  auto flush = cupti<decltype(&cuptiActivityFlushAll)>("cuptiActivityFlushAll");
  cupti<decltype(&cuptiActivityRegisterCallbacks)>("cuptiActivityRegisterCallbacks")(request,
                                                                                     complete);
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
  for (auto k : kinds) enable(k);
  void* d = device_buffer();
  int n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f(d, 0, 64, nullptr));
    if (++n % 1024 == 0) flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  for (auto k : kinds) disable(k);
  flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void BM_Cupti_PushPopExternalCorrelation(benchmark::State& state) {
  auto push = cupti<decltype(&cuptiActivityPushExternalCorrelationId)>(
      "cuptiActivityPushExternalCorrelationId");
  auto pop = cupti<decltype(&cuptiActivityPopExternalCorrelationId)>(
      "cuptiActivityPopExternalCorrelationId");
  uint64_t id = 0;
  for (auto _ : state) {
    push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, ++id);
    pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr);
  }
}

}  // namespace

BENCHMARK(BM_Direct_musaMemsetAsync);
BENCHMARK(BM_Shim_cudaMemsetAsync_NotRecording);
BENCHMARK(BM_Shim_cudaMemsetAsync_Recording);
BENCHMARK(BM_Cupti_PushPopExternalCorrelation);
BENCHMARK_MAIN();
