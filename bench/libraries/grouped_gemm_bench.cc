// Grouped GEMM through libtorchada.so, which emulates it with one muBLAS batched GEMM per group
// (shim/cublas/grouped_gemm.cc), against the same eight mublasSgemmBatched calls made by hand on
// the simulator: what the emulation adds (argument checks, per-group offsets, the export's
// translation). 8 groups of different shapes (n = size, size + 8, ... per group; alternating
// transposes), 4 GEMMs each, host scalars, each iteration synchronised. Goal: the ratio
// Shim / Direct at most 1.05.
// Run: build/bin/bench_grouped_gemm --benchmark_repetitions=3 --benchmark_report_aggregates_only
// (on a loaded machine the second benchmark of a run can catch the load: alternate
// --benchmark_filter=Direct and --benchmark_filter=Shim in separate processes and compare).
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <mublas.h>
#include <musa_runtime_api.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <vector>

#include "load.h"

namespace {

constexpr int kGroups = 8;
constexpr int kPerGroup = 4;

struct Libs {
  void* shim = nullptr;
  void* mublas = nullptr;
  void* musart = nullptr;
  cublasHandle_t cuda_handle = nullptr;
  mublasHandle_t musa_handle = nullptr;
  decltype(&musaDeviceSynchronize) sync = nullptr;
  decltype(&musaMalloc) malloc_device = nullptr;
  Libs() {
    shim = bench::load(TORCHADA_SHIM_PATH);
    mublas = bench::load(TORCHADA_SIM_DIR "/libmublas.so.1");
    musart = bench::load(TORCHADA_SIM_DIR "/libmusart.so.5");
    sync = reinterpret_cast<decltype(sync)>(dlsym(musart, "musaDeviceSynchronize"));
    malloc_device = reinterpret_cast<decltype(malloc_device)>(dlsym(musart, "musaMalloc"));
    auto create = reinterpret_cast<decltype(&cublasCreate_v2)>(
        dlvsym(shim, "cublasCreate_v2", "libcublas.so.13"));
    auto mcreate = reinterpret_cast<decltype(&mublasCreate)>(dlsym(mublas, "mublasCreate"));
    if (!sync || !malloc_device || create(&cuda_handle) != CUBLAS_STATUS_SUCCESS ||
        mcreate(&musa_handle) != MUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "bench: cannot create the handles\n");
      std::exit(1);
    }
  }
};
Libs& libs() {
  static Libs l;
  return l;
}

// The problem set: per group an operation pair, sizes, scalars; the matrices on the device and
// the concatenated pointer arrays (also on the device, as cuBLAS requires).
struct Problems {
  std::vector<cublasOperation_t> ta, tb;
  std::vector<mublasOperation_t> mta, mtb;
  std::vector<int> m, n, k, size;
  std::vector<float> alpha, beta;
  const float** A = nullptr;
  const float** B = nullptr;
  float** C = nullptr;

  explicit Problems(int base) {
    std::vector<void*> a, b, c;
    for (int g = 0; g < kGroups; ++g) {
      const bool t = g % 2 == 1;
      ta.push_back(t ? CUBLAS_OP_T : CUBLAS_OP_N), tb.push_back(CUBLAS_OP_N);
      mta.push_back(t ? MUBLAS_OP_T : MUBLAS_OP_N), mtb.push_back(MUBLAS_OP_N);
      const int s = base + 8 * g;
      m.push_back(s), n.push_back(s), k.push_back(s), size.push_back(kPerGroup);
      alpha.push_back(1.0f + 0.1f * g), beta.push_back(0.5f);
      for (int p = 0; p < kPerGroup; ++p) {
        a.push_back(device(std::size_t(s) * s)), b.push_back(device(std::size_t(s) * s));
        c.push_back(device(std::size_t(s) * s));
      }
    }
    A = static_cast<const float**>(device_array(a));
    B = static_cast<const float**>(device_array(b));
    C = static_cast<float**>(device_array(c));
  }
  static void* device(std::size_t floats) {
    void* d = nullptr;
    if (libs().malloc_device(&d, floats * sizeof(float)) != musaSuccess) std::exit(1);
    std::vector<float> init(floats, 0.25f);
    std::copy(init.begin(), init.end(), static_cast<float*>(d));  // simulator: host-visible
    return d;
  }
  static void* device_array(const std::vector<void*>& v) {
    void* d = nullptr;
    if (libs().malloc_device(&d, v.size() * sizeof(void*)) != musaSuccess) std::exit(1);
    std::copy(v.begin(), v.end(), static_cast<void**>(d));
    return d;
  }
};

// One problem set per size, shared by both benchmarks: the same memory, so that neither gets
// fresher pages or caches than the other.
Problems& problems(int base) {
  static std::map<int, Problems> sets;
  auto it = sets.find(base);
  if (it == sets.end()) it = sets.emplace(base, Problems(base)).first;
  return it->second;
}

void BM_Direct_8xSgemmBatched(benchmark::State& state) {
  auto f =
      reinterpret_cast<decltype(&mublasSgemmBatched)>(dlsym(libs().mublas, "mublasSgemmBatched"));
  Problems& p = problems(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    for (int g = 0, at = 0; g < kGroups; at += p.size[g], ++g) {
      const int lda = p.mta[g] == MUBLAS_OP_N ? p.m[g] : p.k[g];
      if (f(libs().musa_handle, p.mta[g], p.mtb[g], p.m[g], p.n[g], p.k[g], &p.alpha[g], p.A + at,
            lda, p.B + at, p.k[g], &p.beta[g], p.C + at, p.m[g], p.size[g]) != 0)
        state.SkipWithError("mublasSgemmBatched failed");
    }
    libs().sync();
  }
}

void BM_Shim_SgemmGroupedBatched(benchmark::State& state) {
  auto f = reinterpret_cast<decltype(&cublasSgemmGroupedBatched)>(
      dlvsym(libs().shim, "cublasSgemmGroupedBatched", "libcublas.so.13"));
  Problems& p = problems(static_cast<int>(state.range(0)));
  std::vector<int> lda, ldb, ldc;
  for (int g = 0; g < kGroups; ++g) {
    lda.push_back(p.ta[g] == CUBLAS_OP_N ? p.m[g] : p.k[g]);
    ldb.push_back(p.k[g]), ldc.push_back(p.m[g]);
  }
  for (auto _ : state) {
    if (f(libs().cuda_handle, p.ta.data(), p.tb.data(), p.m.data(), p.n.data(), p.k.data(),
          p.alpha.data(), p.A, lda.data(), p.B, ldb.data(), p.beta.data(), p.C, ldc.data(), kGroups,
          p.size.data()) != CUBLAS_STATUS_SUCCESS)
      state.SkipWithError("cublasSgemmGroupedBatched failed");
    libs().sync();
  }
}

// Base sizes: tiny (the per-call cost shows) and moderate (the GEMMs dominate).
BENCHMARK(BM_Direct_8xSgemmBatched)->Arg(8)->Arg(64)->UseRealTime();
BENCHMARK(BM_Shim_SgemmGroupedBatched)->Arg(8)->Arg(64)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
