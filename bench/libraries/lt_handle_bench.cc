// What resolving a cublasLtHandle_t costs (shim/core/blas_handles.h: every cuBLASLt call taking a
// handle looks it up, to accept cuBLAS handles as PyTorch passes them), as ratios within one run:
//
//   cublasLtMatmulAlgoGetIds through the shim, with a cublasLtCreate handle and with a cublasCreate
//   handle (cast), against mublasLtMatmulAlgoGetIds called directly on the simulator; also with
//   256 more handles of each kind alive (a fuller table)
//   cublasLtHeuristicsCacheGetCapacity against mublasLtHeuristicsCacheGetCapacity: a plain
//   forward (no handle), the shim's fixed cost without the lookup
//   LookupAlone: blas_handles::lt_fast itself (this file compiles core/blas_handles.cc), a hit and
//   a miss, in a table of 16 and of 512 handles
//
// Run: build/bin/bench_lt_handle (BENCH_SHIM_PATH=/other/libtorchada.so compares another build)
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <mublasLt.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/blas_handles.h"
#include "core/library_tables.h"
#include "core/log.h"
#include "load.h"

// What core/blas_handles.cc needs from the rest of the shim, for LookupAlone (the shim's own copy
// is the one the other cases measure).
namespace torchada {
namespace detail {
std::atomic<const LibraryBackend<MublasLtTable>*> g_mublasLt_backend{nullptr};
const LibraryBackend<MublasLtTable>& mublasLt_backend_slow() {
  static const LibraryBackend<MublasLtTable> none{};
  return none;
}
}  // namespace detail
bool log_enabled(LogLevel) { return false; }
void log(LogLevel, const char*, ...) {}
}  // namespace torchada

namespace {

struct Libs {
  void* shim = nullptr;
  void* lt = nullptr;
  cublasHandle_t cublas_handle = nullptr;
  cublasLtHandle_t lt_handle = nullptr;
  mublasLtHandle_t musa_handle = nullptr;
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasLtCreate) lt_create = nullptr;
  Libs() {
    const char* path = std::getenv("BENCH_SHIM_PATH");
    shim = bench::load(path ? path : TORCHADA_SHIM_PATH);
    lt = bench::load(TORCHADA_SIM_DIR "/libmublasLt.so.1");
    create = reinterpret_cast<decltype(create)>(dlvsym(shim, "cublasCreate_v2", "libcublas.so.13"));
    lt_create =
        reinterpret_cast<decltype(lt_create)>(dlvsym(shim, "cublasLtCreate", "libcublasLt.so.13"));
    auto mcreate = reinterpret_cast<decltype(&mublasLtCreate)>(dlsym(lt, "mublasLtCreate"));
    if (create(&cublas_handle) != CUBLAS_STATUS_SUCCESS ||
        lt_create(&lt_handle) != CUBLAS_STATUS_SUCCESS || mcreate(&musa_handle) != 0) {
      std::fprintf(stderr, "bench: cannot create the handles\n");
      std::exit(1);
    }
  }
  template <class F>
  F shim_fn(const char* name) {
    return reinterpret_cast<F>(dlvsym(shim, name, "libcublasLt.so.13"));
  }
  template <class F>
  F musa_fn(const char* name) {
    return reinterpret_cast<F>(dlsym(lt, name));
  }
};
Libs& libs() {
  static Libs l;
  return l;
}

void BM_Direct_mublasLtMatmulAlgoGetIds(benchmark::State& state) {
  auto f = libs().musa_fn<decltype(&mublasLtMatmulAlgoGetIds)>("mublasLtMatmulAlgoGetIds");
  int ids[1];
  int n = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(f(libs().musa_handle, MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F,
                               MUSA_R_32F, MUSA_R_32F, MUSA_R_32F, 1, ids, &n));
}

void shim_get_ids(benchmark::State& state, cublasLtHandle_t h) {
  auto f = libs().shim_fn<decltype(&cublasLtMatmulAlgoGetIds)>("cublasLtMatmulAlgoGetIds");
  int ids[1];
  int n = 0;
  if (f(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 1, ids,
        &n) != CUBLAS_STATUS_SUCCESS) {
    state.SkipWithError("cublasLtMatmulAlgoGetIds refused the handle");
    return;
  }
  for (auto _ : state)
    benchmark::DoNotOptimize(f(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                               CUDA_R_32F, CUDA_R_32F, 1, ids, &n));
}
void BM_Shim_cublasLtMatmulAlgoGetIds_LtHandle(benchmark::State& state) {
  shim_get_ids(state, libs().lt_handle);
}
void BM_Shim_cublasLtMatmulAlgoGetIds_CublasHandle(benchmark::State& state) {
  shim_get_ids(state, reinterpret_cast<cublasLtHandle_t>(libs().cublas_handle));
}
// 256 more of each kind, kept alive: the table grows to 1024 slots.
void more_handles() {
  static const bool done = [] {
    for (int i = 0; i < 256; ++i) {
      cublasHandle_t h;
      cublasLtHandle_t l;
      libs().create(&h);
      libs().lt_create(&l);
    }
    return true;
  }();
  (void)done;
}
void BM_Shim_cublasLtMatmulAlgoGetIds_LtHandle_Among512(benchmark::State& state) {
  more_handles();
  shim_get_ids(state, libs().lt_handle);
}
void BM_Shim_cublasLtMatmulAlgoGetIds_CublasHandle_Among512(benchmark::State& state) {
  more_handles();
  shim_get_ids(state, reinterpret_cast<cublasLtHandle_t>(libs().cublas_handle));
}

void BM_Direct_mublasLtHeuristicsCacheGetCapacity(benchmark::State& state) {
  auto f = libs().musa_fn<decltype(&mublasLtHeuristicsCacheGetCapacity)>(
      "mublasLtHeuristicsCacheGetCapacity");
  size_t c = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(&c));
}
void BM_Shim_cublasLtHeuristicsCacheGetCapacity(benchmark::State& state) {
  auto f = libs().shim_fn<decltype(&cublasLtHeuristicsCacheGetCapacity)>(
      "cublasLtHeuristicsCacheGetCapacity");
  size_t c = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(&c));
}

// The lookup alone, on this file's own table (not the shim's).
void BM_LookupAlone(benchmark::State& state) {
  namespace bh = torchada::blas_handles;
  static std::vector<std::vector<int>> keys;  // distinct heap addresses, as handles are
  const auto n = static_cast<std::size_t>(state.range(0));
  static std::size_t added = 0;
  for (; added < n; ++added) {
    keys.emplace_back(8);
    bh::add(keys.back().data(), added % 2 ? bh::Kind::kLt : bh::Kind::kCublas);
  }
  const bool hit = state.range(1) != 0;
  int other = 0;
  const void* key = hit ? static_cast<const void*>(keys[1].data()) : &other;  // keys[1]: kLt
  for (auto _ : state) benchmark::DoNotOptimize(bh::lt_fast(key));
}

BENCHMARK(BM_Direct_mublasLtMatmulAlgoGetIds);
BENCHMARK(BM_Shim_cublasLtMatmulAlgoGetIds_LtHandle);
BENCHMARK(BM_Shim_cublasLtMatmulAlgoGetIds_CublasHandle);
BENCHMARK(BM_Direct_mublasLtHeuristicsCacheGetCapacity);
BENCHMARK(BM_Shim_cublasLtHeuristicsCacheGetCapacity);
BENCHMARK(BM_Shim_cublasLtMatmulAlgoGetIds_LtHandle_Among512);
BENCHMARK(BM_Shim_cublasLtMatmulAlgoGetIds_CublasHandle_Among512);
BENCHMARK(BM_LookupAlone)
    ->ArgNames({"handles", "hit"})
    ->Args({16, 1})
    ->Args({16, 0})
    ->Args({512, 1})
    ->Args({512, 0});

}  // namespace

BENCHMARK_MAIN();
