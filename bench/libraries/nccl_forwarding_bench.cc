// Cost of an NCCL call through libtorchada.so, as ratios within one run: the shim's export (the
// communicator checked against the live ones, shim/nccl/comms.cc, then forwarded) against the
// same MCCL call made directly on the simulator. The calls do almost no work so that the
// forwarding shows:
//   ncclCommCount     vs mcclCommCount
//   ncclCommUserRank  vs mcclCommUserRank
// Run: build/bin/bench_nccl_forwarding
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <mccl.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

#include "load.h"

namespace {

struct Libs {
  void* shim = nullptr;
  void* mccl = nullptr;
  ncclComm_t cuda_comm = nullptr;
  mcclComm_t musa_comm = nullptr;
  Libs() {
    shim = bench::load(TORCHADA_SHIM_PATH);
    mccl = bench::load(TORCHADA_SIM_DIR "/libmccl.so.2");
    auto init = reinterpret_cast<decltype(&ncclCommInitAll)>(dlsym(shim, "ncclCommInitAll"));
    auto minit = reinterpret_cast<decltype(&mcclCommInitAll)>(dlsym(mccl, "mcclCommInitAll"));
    const int device = 0;
    if (!init || !minit || init(&cuda_comm, 1, &device) != ncclSuccess ||
        minit(&musa_comm, 1, &device) != mcclSuccess) {
      std::fprintf(stderr, "bench: cannot create the communicators\n");
      std::exit(1);
    }
  }
  template <class F>
  F shim_fn(const char* name) {
    return reinterpret_cast<F>(dlsym(shim, name));
  }
  template <class F>
  F musa_fn(const char* name) {
    return reinterpret_cast<F>(dlsym(mccl, name));
  }
};
Libs& libs() {
  static Libs l;
  return l;
}

void BM_Direct_mcclCommCount(benchmark::State& state) {
  auto f = libs().musa_fn<decltype(&mcclCommCount)>("mcclCommCount");
  int n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(libs().musa_comm, &n));
}
void BM_Shim_ncclCommCount(benchmark::State& state) {
  auto f = libs().shim_fn<decltype(&ncclCommCount)>("ncclCommCount");
  int n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(libs().cuda_comm, &n));
}
void BM_Direct_mcclCommUserRank(benchmark::State& state) {
  auto f = libs().musa_fn<decltype(&mcclCommUserRank)>("mcclCommUserRank");
  int r = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(libs().musa_comm, &r));
}
void BM_Shim_ncclCommUserRank(benchmark::State& state) {
  auto f = libs().shim_fn<decltype(&ncclCommUserRank)>("ncclCommUserRank");
  int r = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(libs().cuda_comm, &r));
}

BENCHMARK(BM_Direct_mcclCommCount);
BENCHMARK(BM_Shim_ncclCommCount);
BENCHMARK(BM_Direct_mcclCommUserRank);
BENCHMARK(BM_Shim_ncclCommUserRank);

}  // namespace

BENCHMARK_MAIN();
