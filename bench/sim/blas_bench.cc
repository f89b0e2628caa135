// bench_sim_blas: SGEMM through the simulated muBLAS against OpenBLAS directly, in one run.
//
// Each iteration multiplies two n x n matrices twice: once with cblas_sgemm on this thread (the
// baseline), once with mublasSgemm on a stream followed by musaStreamSynchronize (the simulated
// library: argument checks, the hand-off to the stream's worker thread, the same OpenBLAS call,
// the wait). The two alternate so that both see the same machine state. Reported per size:
// cblas_ms and mublas_ms (mean per call) and ratio = cblas time / mublas time (1.0 = no overhead;
// the goal is >= 0.9). The iteration time is the muBLAS call's. The simulator's GEMMs are
// pinned to OpenBLAS (TORCHADA_SIM_GEMM=openblas, unless set) so that both sides run the same
// library and the ratio is the simulator's overhead alone.
//
//   bench_sim_blas [--benchmark_filter=...] [--benchmark_repetitions=N]
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <mublas.h>
#include <musa_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void fail(const char* what) {
  std::fprintf(stderr, "bench_sim_blas: %s failed\n", what);
  std::exit(1);
}

void BM_Sgemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const size_t elems = static_cast<size_t>(n) * n;
  float *A = nullptr, *B = nullptr, *C = nullptr;
  if (musaMalloc(reinterpret_cast<void**>(&A), elems * sizeof(float)) != musaSuccess ||
      musaMalloc(reinterpret_cast<void**>(&B), elems * sizeof(float)) != musaSuccess ||
      musaMalloc(reinterpret_cast<void**>(&C), elems * sizeof(float)) != musaSuccess)
    fail("musaMalloc");
  std::vector<float> host(elems), ref(elems);
  std::mt19937 g(1);
  std::uniform_real_distribution<float> d(-1, 1);
  for (float& v : host) v = d(g);
  musaMemcpy(A, host.data(), elems * sizeof(float), musaMemcpyHostToDevice);
  for (float& v : host) v = d(g);
  musaMemcpy(B, host.data(), elems * sizeof(float), musaMemcpyHostToDevice);

  mublasHandle_t h = nullptr;
  musaStream_t s = nullptr;
  if (mublasCreate(&h) != MUBLAS_STATUS_SUCCESS || musaStreamCreate(&s) != musaSuccess ||
      mublasSetStream(h, s) != MUBLAS_STATUS_SUCCESS)
    fail("handle / stream setup");
  const float one = 1, zero = 0;
  // Warm-up: OpenBLAS's thread pool and buffers, the stream's worker thread.
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, one, A, n, B, n, zero, ref.data(),
              n);
  if (mublasSgemm(h, MUBLAS_OP_N, MUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n) !=
      MUBLAS_STATUS_SUCCESS)
    fail("mublasSgemm");
  musaStreamSynchronize(s);

  double t_cblas = 0, t_mublas = 0;
  for (auto _ : state) {
    Clock::time_point t0 = Clock::now();
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, one, A, n, B, n, zero,
                ref.data(), n);
    t_cblas += seconds_since(t0);
    t0 = Clock::now();
    if (mublasSgemm(h, MUBLAS_OP_N, MUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n) !=
        MUBLAS_STATUS_SUCCESS)
      fail("mublasSgemm");
    if (musaStreamSynchronize(s) != musaSuccess) fail("musaStreamSynchronize");
    const double tm = seconds_since(t0);
    t_mublas += tm;
    state.SetIterationTime(tm);
  }
  // Same inputs, same library: the results must agree.
  std::vector<float> got(elems);
  musaMemcpy(got.data(), C, elems * sizeof(float), musaMemcpyDeviceToHost);
  for (size_t i = 0; i < elems; ++i)
    if (got[i] != ref[i]) fail("result check (muBLAS and OpenBLAS differ)");

  const double iters = static_cast<double>(state.iterations());
  state.counters["cblas_ms"] = 1e3 * t_cblas / iters;
  state.counters["mublas_ms"] = 1e3 * t_mublas / iters;
  state.counters["ratio"] = t_cblas / t_mublas;
  state.counters["mublas_GFLOPs"] = 2.0 * n * n * static_cast<double>(n) * iters / t_mublas / 1e9;
  mublasDestroy(h);
  musaStreamDestroy(s);
  musaFree(A);
  musaFree(B);
  musaFree(C);
}

BENCHMARK(BM_Sgemm)->Arg(1024)->Arg(2048)->MinTime(3.0)->UseManualTime()->Unit(
    benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  setenv("TORCHADA_SIM_GEMM", "openblas", /*overwrite=*/0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
