// Cost of a cuBLAS call through libtorchada.so, as ratios within one run: the shim's export with
// its enum translation (operation, pointer mode) against the same muBLAS call made directly on
// the simulator. The calls are chosen to do almost no work so the forwarding shows:
//   cublasSetPointerMode_v2     vs mublasSetPointerMode   (one enum in)
//   cublasGetPointerMode_v2     vs mublasGetPointerMode   (one enum out)
//   cublasSgemm_v2 with m=n=k=0 vs mublasSgemm           (two enums, a size check, no work)
// Run: build/bin/bench_blas_forwarding
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <mublas.h>

#include <cstdio>
#include <cstdlib>

#include "load.h"

namespace {

struct Libs {
  void* shim = nullptr;
  void* mublas = nullptr;
  cublasHandle_t cuda_handle = nullptr;
  mublasHandle_t musa_handle = nullptr;
  Libs() {
    shim = bench::load(TORCHADA_SHIM_PATH);
    mublas = bench::load(TORCHADA_SIM_DIR "/libmublas.so.1");
    auto create = reinterpret_cast<decltype(&cublasCreate_v2)>(
        dlvsym(shim, "cublasCreate_v2", "libcublas.so.13"));
    auto mcreate = reinterpret_cast<decltype(&mublasCreate)>(dlsym(mublas, "mublasCreate"));
    if (create(&cuda_handle) != CUBLAS_STATUS_SUCCESS || mcreate(&musa_handle) != 0) {
      std::fprintf(stderr, "bench: cannot create the handles\n");
      std::exit(1);
    }
  }
  template <class F>
  F shim_fn(const char* name) {
    return reinterpret_cast<F>(dlvsym(shim, name, "libcublas.so.13"));
  }
  template <class F>
  F musa_fn(const char* name) {
    return reinterpret_cast<F>(dlsym(mublas, name));
  }
};
Libs& libs() {
  static Libs l;
  return l;
}

void BM_Direct_mublasSetPointerMode(benchmark::State& state) {
  auto f = libs().musa_fn<decltype(&mublasSetPointerMode)>("mublasSetPointerMode");
  for (auto _ : state) benchmark::DoNotOptimize(f(libs().musa_handle, MUBLAS_POINTER_MODE_HOST));
}
void BM_Shim_cublasSetPointerMode(benchmark::State& state) {
  auto f = libs().shim_fn<decltype(&cublasSetPointerMode_v2)>("cublasSetPointerMode_v2");
  for (auto _ : state) benchmark::DoNotOptimize(f(libs().cuda_handle, CUBLAS_POINTER_MODE_HOST));
}
void BM_Direct_mublasGetPointerMode(benchmark::State& state) {
  auto f = libs().musa_fn<decltype(&mublasGetPointerMode)>("mublasGetPointerMode");
  mublasPointerMode_t m;
  for (auto _ : state) benchmark::DoNotOptimize(f(libs().musa_handle, &m));
}
void BM_Shim_cublasGetPointerMode(benchmark::State& state) {
  auto f = libs().shim_fn<decltype(&cublasGetPointerMode_v2)>("cublasGetPointerMode_v2");
  cublasPointerMode_t m;
  for (auto _ : state) benchmark::DoNotOptimize(f(libs().cuda_handle, &m));
}
void BM_Direct_mublasSgemm_empty(benchmark::State& state) {
  auto f = libs().musa_fn<decltype(&mublasSgemm)>("mublasSgemm");
  const float one = 1, zero = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(f(libs().musa_handle, MUBLAS_OP_N, MUBLAS_OP_T, 0, 0, 0, &one, nullptr,
                               1, nullptr, 1, &zero, nullptr, 1));
}
void BM_Shim_cublasSgemm_empty(benchmark::State& state) {
  auto f = libs().shim_fn<decltype(&cublasSgemm_v2)>("cublasSgemm_v2");
  const float one = 1, zero = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(f(libs().cuda_handle, CUBLAS_OP_N, CUBLAS_OP_T, 0, 0, 0, &one, nullptr,
                               1, nullptr, 1, &zero, nullptr, 1));
}

BENCHMARK(BM_Direct_mublasSetPointerMode);
BENCHMARK(BM_Shim_cublasSetPointerMode);
BENCHMARK(BM_Direct_mublasGetPointerMode);
BENCHMARK(BM_Shim_cublasGetPointerMode);
BENCHMARK(BM_Direct_mublasSgemm_empty);
BENCHMARK(BM_Shim_cublasSgemm_empty);

}  // namespace

BENCHMARK_MAIN();
