// What emulating cuBLASLt's IMMA orders costs (shim/cublasLt/emulated_layouts.cc): the int8 GEMM
// D = A B^T (int32 out, compute 32I) through libtorchada.so on the simulator, twice in one run:
//   Col   A, B, C/D column-major: forwarded to muBLASLt as it is
//   Imma  A COL32, B COL32_2R_4R4, C/D COL32 (FasterTransformer's Ampere layouts): the shim copies
//         A and B into column-major matrices with muBLASLt transforms (1 + 33 of them; C is not
//         read with beta 0), runs the same GEMM and copies D back (1): 35 transforms, scratch
//         memory allocated and freed
//   and the ratio Imma / Col. Each iteration is synchronised.
// Run: build/bin/bench_lt_layouts --benchmark_repetitions=3 --benchmark_report_aggregates_only
// Measured (2-core VM, medians of 3 in one run): Imma / Col 1.95 at n = 256 (1.76 vs 0.90 ms),
// 1.28 at n = 1024 (67 vs 52 ms).
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <dlfcn.h>
#include <musa_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "load.h"

namespace {

#define TORCHADA_LT_FN(name) decltype(&::name) name = sym<decltype(&::name)>(#name)

// Loads the shim first: the function members below are looked up when they are initialised.
struct Libs {
  void* shim = bench::load(TORCHADA_SHIM_PATH);
  void* musart = bench::load(TORCHADA_SIM_DIR "/libmusart.so.5");
  template <class F>
  F sym(const char* name) {
    void* p = dlvsym(shim, name, "libcublasLt.so.13");
    if (p == nullptr) {
      std::fprintf(stderr, "bench: the shim does not export %s\n", name);
      std::exit(1);
    }
    return reinterpret_cast<F>(p);
  }
  decltype(&musaDeviceSynchronize) sync =
      reinterpret_cast<decltype(&musaDeviceSynchronize)>(dlsym(musart, "musaDeviceSynchronize"));
  decltype(&musaMalloc) malloc_device =
      reinterpret_cast<decltype(&musaMalloc)>(dlsym(musart, "musaMalloc"));
  TORCHADA_LT_FN(cublasLtCreate);
  TORCHADA_LT_FN(cublasLtMatmul);
  TORCHADA_LT_FN(cublasLtMatmulDescCreate);
  TORCHADA_LT_FN(cublasLtMatmulDescSetAttribute);
  TORCHADA_LT_FN(cublasLtMatrixLayoutCreate);
  TORCHADA_LT_FN(cublasLtMatrixLayoutSetAttribute);
  cublasLtHandle_t handle = nullptr;
  Libs() {
    if (!sync || !malloc_device || cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "bench: cannot create the handle\n");
      std::exit(1);
    }
  }
};
Libs& libs() {
  static Libs l;
  return l;
}

void* device(size_t bytes, int fill) {
  void* p = nullptr;
  if (libs().malloc_device(&p, bytes) != musaSuccess) std::exit(1);
  std::vector<int8_t> h(bytes, static_cast<int8_t>(fill));
  std::memcpy(p, h.data(), bytes);  // the simulator's device memory is host memory
  return p;
}

cublasLtMatrixLayout_t layout(cudaDataType t, int64_t rows, int64_t cols, int64_t ld,
                              int32_t order) {
  Libs& l = libs();
  cublasLtMatrixLayout_t x = nullptr;
  if (l.cublasLtMatrixLayoutCreate(&x, t, rows, cols, ld) != CUBLAS_STATUS_SUCCESS ||
      l.cublasLtMatrixLayoutSetAttribute(x, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof(order)) !=
          CUBLAS_STATUS_SUCCESS)
    std::exit(1);
  return x;
}

void run(benchmark::State& state, bool imma) {
  Libs& l = libs();
  const int64_t n = state.range(0);  // m = n = k
  const int64_t ld32 = 32 * n;
  void* A = device(static_cast<size_t>(n * n), 1);
  void* B = device(static_cast<size_t>(n * n), 2);
  void* C = device(static_cast<size_t>(n * n) * 4, 0);
  void* D = device(static_cast<size_t>(n * n) * 4, 0);
  const int32_t col = CUBLASLT_ORDER_COL;
  cublasLtMatrixLayout_t a =
      imma ? layout(CUDA_R_8I, n, n, ld32, CUBLASLT_ORDER_COL32) : layout(CUDA_R_8I, n, n, n, col);
  cublasLtMatrixLayout_t b = imma ? layout(CUDA_R_8I, n, n, ld32, CUBLASLT_ORDER_COL32_2R_4R4)
                                  : layout(CUDA_R_8I, n, n, n, col);
  cublasLtMatrixLayout_t c = imma ? layout(CUDA_R_32I, n, n, ld32, CUBLASLT_ORDER_COL32)
                                  : layout(CUDA_R_32I, n, n, n, col);
  cublasLtMatmulDesc_t desc = nullptr;
  const int32_t opT = CUBLAS_OP_T;
  if (l.cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32I, CUDA_R_32I) != CUBLAS_STATUS_SUCCESS ||
      l.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opT, sizeof(opT)) !=
          CUBLAS_STATUS_SUCCESS)
    std::exit(1);
  const int32_t alpha = 1, beta = 0;
  for (auto _ : state) {
    if (l.cublasLtMatmul(l.handle, desc, &alpha, A, a, B, b, &beta, C, c, D, c, nullptr, nullptr, 0,
                         nullptr) != CUBLAS_STATUS_SUCCESS) {
      state.SkipWithError("cublasLtMatmul failed");
      break;
    }
    l.sync();
  }
}

void BM_Col(benchmark::State& state) { run(state, false); }
void BM_Imma(benchmark::State& state) { run(state, true); }

}  // namespace

BENCHMARK(BM_Col)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Imma)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
