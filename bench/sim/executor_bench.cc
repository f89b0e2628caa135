// The simulator's device-code executor (sim/runtime/executor.cc), as ratios within one run:
//   BM_Launch / BM_Memset           a launch of a one-thread kernel against the simulator's
//                                   cheapest stream work (a 4-byte musaMemsetAsync, run at once
//                                   on the caller's thread when its stream is idle), per call
//   BM_Axpy / BM_HostAxpy           a grid of plain (barrier-free) blocks over n floats against
//                                   the same loop on the host: the per-element overhead
//   BM_Barriers / BM_NoBarriers     a block of 256 threads passing 8 barriers (fibers) against
//                                   the same kernel launched as plain: the cost of a thread's
//                                   barrier
#include <musa_sim_device.h>  // first: the CUDA qualifiers

#include <benchmark/benchmark.h>
#include <musa_runtime.h>

#include <vector>

namespace {

__global__ void nothing(int* p) { (void)p; }

__global__ void axpy(float* y, const float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

template <bool Sync>
__global__ void steps(float* out) {
  float v = static_cast<float>(threadIdx.x);
  for (int k = 0; k < 8; ++k) {
    v = v * 0.5f + 1.0f;
    if (Sync) __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

void BM_Memset(benchmark::State& state) {
  musaStream_t s;
  musaStreamCreate(&s);
  int* p = nullptr;
  musaMalloc(reinterpret_cast<void**>(&p), sizeof(int));
  for (auto _ : state) musaMemsetAsync(p, 0, sizeof(int), s);
  musaStreamSynchronize(s);
  musaFree(p);
  musaStreamDestroy(s);
}
BENCHMARK(BM_Memset);

void BM_Launch(benchmark::State& state) {
  musaStream_t s;
  musaStreamCreate(&s);
  for (auto _ : state)
    musa_sim::Launch<nothing, false>{"nothing", {1, 1, 1}, {1, 1, 1}, 0, s}(nullptr);
  musaStreamSynchronize(s);
  musaStreamDestroy(s);
}
BENCHMARK(BM_Launch);

struct Buffers {
  float* x = nullptr;
  float* y = nullptr;
  explicit Buffers(size_t n) {
    musaMalloc(reinterpret_cast<void**>(&x), n * sizeof(float));
    musaMalloc(reinterpret_cast<void**>(&y), n * sizeof(float));
    musaMemset(x, 0, n * sizeof(float));
    musaMemset(y, 0, n * sizeof(float));
  }
  ~Buffers() {
    musaFree(x);
    musaFree(y);
  }
};

void BM_HostAxpy(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Buffers b(n);
  for (auto _ : state) {
    for (int i = 0; i < n; ++i) b.y[i] += 2.0f * b.x[i];
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_HostAxpy)->Arg(1 << 16)->Arg(1 << 20);

void BM_Axpy(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Buffers b(n);
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  for (auto _ : state)
    musa_sim::Launch<axpy, false>{"axpy", {blocks, 1, 1}, {256, 1, 1}, 0, nullptr}(b.y, b.x, 2.0f,
                                                                                   n);
  musaDeviceSynchronize();
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Axpy)->Arg(1 << 16)->Arg(1 << 20)->UseRealTime();

template <bool Sync>
void run_steps(benchmark::State& state) {
  const unsigned blocks = static_cast<unsigned>(state.range(0));
  Buffers b(blocks * 256);
  for (auto _ : state)
    musa_sim::Launch<steps<Sync>, Sync>{"steps", {blocks, 1, 1}, {256, 1, 1}, 0, nullptr}(b.y);
  musaDeviceSynchronize();
  state.SetItemsProcessed(state.iterations() * blocks * 256);  // threads
}
void BM_Barriers(benchmark::State& state) { run_steps<true>(state); }
void BM_NoBarriers(benchmark::State& state) { run_steps<false>(state); }
BENCHMARK(BM_Barriers)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK(BM_NoBarriers)->Arg(1)->Arg(64)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
