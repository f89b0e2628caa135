// cublasXtDgemm through libtorchada.so (shim/cublas/xt.cc: a host-side tiling layer over muBLAS)
// on an N x N problem whose matrices are in host memory, against the same work done by hand on
// the simulator (ByHand): musaMalloc of A, B and C, musaMemcpy of the three to the device, one
// mublasDgemm, musaMemcpy of C back, musaFree, synchronised; ByHandPreallocated is the same with
// the device buffers allocated once, outside the timing. All compute C = A B + 0.5 C
// (NoTrans/NoTrans, leading dimension N) from the same host matrices; cublasXt on a handle that
// selected device 0, with the implementation's default block dimension (the counter "block"),
// and at 4096 also with blocks of 2048 and 4096; its first call, which makes the staging
// buffers, is outside the timing. Each iteration is one complete call, copies included.
// Goal: none is fixed by the issue beyond the comparison itself; what is reported is the ratio
// Xt / ByHand per size: the cost of tiling (each A and B tile is staged once per output tile
// that needs it, N/block times, and the GEMM is N^3/block^3 smaller ones on two streams)
// against one GEMM and whole-matrix copies.
// Measured 2026-11-26 on the quiet 2-core VM (lanes on threads of their own, aaa6c9d), three
// rounds of alternating processes, wall time, default block 1024, Xt / ByHand: N = 1024 (one tile)
// 1.07-1.18; N = 2048: 1.30-1.40; N = 4096: 1.72-1.91 (1.56-1.72 s against 0.90-0.92 s). On the
// simulator the staging copies are CPU work competing with the GEMMs for the two cores (a GPU's
// copy engines would not), and at 4096 each A and B tile is staged four times.
// Run: build/bin/bench_xt_gemm --benchmark_repetitions=3 --benchmark_report_aggregates_only
// (sizes 1024, 2048 and 4096, the figure: one iteration at 4096 takes 2-4 s here;
// --benchmark_filter='_(CopyDgemmCopy|Dgemm)/(1024|2048)/' leaves 4096 out,
// --benchmark_filter='_(CopyDgemmCopy|Dgemm)/4096/' runs it alone). On a loaded machine
// alternate --benchmark_filter=ByHand_, --benchmark_filter=ByHandPre and --benchmark_filter=Xt
// in separate processes and compare.
#include <benchmark/benchmark.h>
#include <cublasXt.h>
#include <dlfcn.h>
#include <mublas.h>
#include <musa_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

namespace {

struct Libs {
  void* shim = nullptr;
  void* mublas = nullptr;
  void* musart = nullptr;
  decltype(&cublasXtCreate) xt_create = nullptr;
  decltype(&cublasXtDeviceSelect) xt_select = nullptr;
  decltype(&cublasXtGetBlockDim) xt_get_block = nullptr;
  decltype(&cublasXtSetBlockDim) xt_set_block = nullptr;
  decltype(&cublasXtDgemm) xt_dgemm = nullptr;
  decltype(&musaMalloc) malloc_device = nullptr;
  decltype(&musaFree) free_device = nullptr;
  decltype(&musaMemcpy) copy = nullptr;
  decltype(&musaDeviceSynchronize) sync = nullptr;
  decltype(&mublasDgemm) dgemm = nullptr;
  cublasXtHandle_t xt = nullptr;
  mublasHandle_t musa_handle = nullptr;
  int block = 0;

  template <class F>
  static F shim_fn(void* lib, const char* name) {
    return reinterpret_cast<F>(dlvsym(lib, name, "libcublas.so.13"));
  }
  template <class F>
  static F fn(void* lib, const char* name) {
    return reinterpret_cast<F>(dlsym(lib, name));
  }
  Libs() {
    setenv("TORCHADA_BACKEND", "sim", 1);
    setenv("TORCHADA_SIM_LIB_DIR", TORCHADA_SIM_DIR, 1);
    shim = dlopen(TORCHADA_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
    mublas = dlopen(TORCHADA_SIM_DIR "/libmublas.so.1", RTLD_NOW | RTLD_LOCAL);
    musart = dlopen(TORCHADA_SIM_DIR "/libmusart.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!shim || !mublas || !musart) {
      std::fprintf(stderr, "bench: cannot load the shim, muBLAS or the runtime: %s\n", dlerror());
      std::exit(1);
    }
    xt_create = shim_fn<decltype(xt_create)>(shim, "cublasXtCreate");
    xt_select = shim_fn<decltype(xt_select)>(shim, "cublasXtDeviceSelect");
    xt_get_block = shim_fn<decltype(xt_get_block)>(shim, "cublasXtGetBlockDim");
    xt_set_block = shim_fn<decltype(xt_set_block)>(shim, "cublasXtSetBlockDim");
    xt_dgemm = shim_fn<decltype(xt_dgemm)>(shim, "cublasXtDgemm");
    malloc_device = fn<decltype(malloc_device)>(musart, "musaMalloc");
    free_device = fn<decltype(free_device)>(musart, "musaFree");
    copy = fn<decltype(copy)>(musart, "musaMemcpy");
    sync = fn<decltype(sync)>(musart, "musaDeviceSynchronize");
    dgemm = fn<decltype(dgemm)>(mublas, "mublasDgemm");
    auto mcreate = fn<decltype(&mublasCreate)>(mublas, "mublasCreate");
    if (!xt_create || !xt_select || !xt_get_block || !xt_set_block || !xt_dgemm || !malloc_device ||
        !free_device || !copy || !sync || !dgemm || !mcreate) {
      std::fprintf(stderr, "bench: a symbol is missing\n");
      std::exit(1);
    }
    if (mcreate(&musa_handle) != MUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "bench: cannot create the muBLAS handle\n");
      std::exit(1);
    }
  }
  // The cublasXt handle, over device 0, made on first use; false when the shim refuses it.
  bool xt_ready() {
    if (xt) return true;
    int device0[] = {0};
    if (xt_create(&xt) != CUBLAS_STATUS_SUCCESS) return false;
    return xt_select(xt, 1, device0) == CUBLAS_STATUS_SUCCESS &&
           xt_get_block(xt, &block) == CUBLAS_STATUS_SUCCESS;
  }
};
Libs& libs() {
  static Libs l;
  return l;
}

// The host matrices per size, shared by both benchmarks (the same memory, so that neither gets
// fresher pages or caches than the other).
struct Host {
  std::vector<double> A, B, C;
  explicit Host(size_t n) : A(n * n), B(n * n), C(n * n) {
    for (size_t i = 0; i < n * n; ++i) {
      A[i] = double(i % 17) / 16.0 - 0.5;
      B[i] = double(i % 13) / 12.0 - 0.5;
      C[i] = double(i % 7) / 6.0 - 0.5;
    }
  }
};
Host& host(size_t n) {
  static std::map<size_t, Host> sets;
  auto it = sets.find(n);
  if (it == sets.end()) it = sets.emplace(n, Host(n)).first;
  return it->second;
}

const double kAlpha = 1.0, kBeta = 0.5;

void BM_ByHand_CopyDgemmCopy(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  const int ni = int(n);
  Host& h = host(n);
  Libs& l = libs();
  const size_t bytes = n * n * sizeof(double);
  for (auto _ : state) {
    void *a = nullptr, *b = nullptr, *c = nullptr;
    if (l.malloc_device(&a, bytes) != musaSuccess || l.malloc_device(&b, bytes) != musaSuccess ||
        l.malloc_device(&c, bytes) != musaSuccess) {
      state.SkipWithError("musaMalloc failed");
      break;
    }
    l.copy(a, h.A.data(), bytes, musaMemcpyHostToDevice);
    l.copy(b, h.B.data(), bytes, musaMemcpyHostToDevice);
    l.copy(c, h.C.data(), bytes, musaMemcpyHostToDevice);
    if (l.dgemm(l.musa_handle, MUBLAS_OP_N, MUBLAS_OP_N, ni, ni, ni, &kAlpha,
                static_cast<double*>(a), ni, static_cast<double*>(b), ni, &kBeta,
                static_cast<double*>(c), ni) != MUBLAS_STATUS_SUCCESS)
      state.SkipWithError("mublasDgemm failed");
    l.copy(h.C.data(), c, bytes, musaMemcpyDeviceToHost);
    l.sync();
    l.free_device(a), l.free_device(b), l.free_device(c);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

// The same with the device buffers allocated once, outside the timed loop (cublasXt keeps its
// staging buffers from call to call too): the copies and the GEMM alone.
void BM_ByHandPreallocated_CopyDgemmCopy(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  const int ni = int(n);
  Host& h = host(n);
  Libs& l = libs();
  const size_t bytes = n * n * sizeof(double);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  if (l.malloc_device(&a, bytes) != musaSuccess || l.malloc_device(&b, bytes) != musaSuccess ||
      l.malloc_device(&c, bytes) != musaSuccess) {
    state.SkipWithError("musaMalloc failed");
    return;
  }
  for (auto _ : state) {
    l.copy(a, h.A.data(), bytes, musaMemcpyHostToDevice);
    l.copy(b, h.B.data(), bytes, musaMemcpyHostToDevice);
    l.copy(c, h.C.data(), bytes, musaMemcpyHostToDevice);
    if (l.dgemm(l.musa_handle, MUBLAS_OP_N, MUBLAS_OP_N, ni, ni, ni, &kAlpha,
                static_cast<double*>(a), ni, static_cast<double*>(b), ni, &kBeta,
                static_cast<double*>(c), ni) != MUBLAS_STATUS_SUCCESS)
      state.SkipWithError("mublasDgemm failed");
    l.copy(h.C.data(), c, bytes, musaMemcpyDeviceToHost);
    l.sync();
  }
  l.free_device(a), l.free_device(b), l.free_device(c);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

// Arguments: N and the block dimension (0: the implementation's default, left as it is).
void BM_Xt_Dgemm(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  Host& h = host(n);
  Libs& l = libs();
  if (!l.xt_ready()) {
    state.SkipWithError("cublasXtCreate/DeviceSelect/GetBlockDim failed");
    return;
  }
  const int block = state.range(1) > 0 ? int(state.range(1)) : l.block;
  if (l.xt_set_block(l.xt, block) != CUBLAS_STATUS_SUCCESS) {
    state.SkipWithError("cublasXtSetBlockDim failed");
    return;
  }
  // One call outside the timing: the handle's staging buffers grow to the block size at the
  // first call that needs them, once per handle (the preallocated by-hand variant's musaMalloc).
  if (l.xt_dgemm(l.xt, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kAlpha, h.A.data(), n, h.B.data(), n,
                 &kBeta, h.C.data(), n) != CUBLAS_STATUS_SUCCESS) {
    state.SkipWithError("cublasXtDgemm failed");
    return;
  }
  l.sync();
  for (auto _ : state) {
    if (l.xt_dgemm(l.xt, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kAlpha, h.A.data(), n, h.B.data(), n,
                   &kBeta, h.C.data(), n) != CUBLAS_STATUS_SUCCESS) {
      state.SkipWithError("cublasXtDgemm failed");
      break;
    }
    l.sync();
  }
  state.counters["block"] = block;
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

BENCHMARK(BM_ByHand_CopyDgemmCopy)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ByHandPreallocated_CopyDgemmCopy)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// The default block at each size, then larger blocks at 4096 (fewer, larger tiles).
BENCHMARK(BM_Xt_Dgemm)
    ->Args({1024, 0})
    ->Args({2048, 0})
    ->Args({4096, 0})
    ->Args({4096, 2048})
    ->Args({4096, 4096})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
