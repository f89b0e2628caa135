// Cost of going through libtorchada.so, as ratios within one run:
//   plain forward   cudaGetDevice            vs musaGetDevice called directly on the simulator
//   translated      cudaDeviceGetAttribute   vs musaDeviceGetAttribute called directly
//   first call      a fresh process's first cudaGetDeviceCount (backend loading included)
//   start-up        a process start with the shim preloaded vs without
// Run: build/bin/bench_forwarding   (goal: <= 1 ns added per plain call, <= 5 ns per translated)
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

extern char** environ;

namespace {

struct Libs {
  void* shim = nullptr;
  void* sim = nullptr;
  Libs() {
    setenv("TORCHADA_BACKEND", "sim", 1);
    setenv("TORCHADA_SIM_LIB_DIR", TORCHADA_SIM_DIR, 1);
    shim = dlopen(TORCHADA_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
    sim = dlopen(TORCHADA_SIM_DIR "/libmusart.so", RTLD_NOW | RTLD_LOCAL);
    if (!shim || !sim) {
      std::fprintf(stderr, "bench: cannot load the shim or the simulator: %s\n", dlerror());
      std::exit(1);
    }
  }
};
Libs& libs() {
  static Libs l;
  return l;
}

using GetDevice = int (*)(int*);
using GetAttribute = int (*)(int*, int, int);

void BM_Direct_musaGetDevice(benchmark::State& state) {
  auto f = reinterpret_cast<GetDevice>(dlsym(libs().sim, "musaGetDevice"));
  int d = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(&d));
}
void BM_Shim_cudaGetDevice(benchmark::State& state) {
  auto f = reinterpret_cast<GetDevice>(dlvsym(libs().shim, "cudaGetDevice", "libcudart.so.13"));
  int d = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(&d));
}
void BM_Direct_musaDeviceGetAttribute(benchmark::State& state) {
  auto f = reinterpret_cast<GetAttribute>(dlsym(libs().sim, "musaDeviceGetAttribute"));
  int v = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(&v, cudaDevAttrMultiProcessorCount, 0));
}
void BM_Shim_cudaDeviceGetAttribute(benchmark::State& state) {
  auto f = reinterpret_cast<GetAttribute>(
      dlvsym(libs().shim, "cudaDeviceGetAttribute", "libcudart.so.13"));
  int v = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f(&v, cudaDevAttrMultiProcessorCount, 0));
}

// Spawns the probe program; returns the nanoseconds it reports (its first call), or the wall
// time of the whole process when `whole` is set.
double run_probe(bool preload, bool whole) {
  std::string pre = std::string("LD_PRELOAD=") + (preload ? TORCHADA_SHIM_PATH : "");
  std::string backend = "TORCHADA_BACKEND=sim";
  std::string simdir = std::string("TORCHADA_SIM_LIB_DIR=") + TORCHADA_SIM_DIR;
  char* envp[] = {pre.data(), backend.data(), simdir.data(), nullptr};
  int fds[2];
  if (pipe(fds) != 0) return 0;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  char arg0[] = TORCHADA_PROBE_PATH;
  char arg1[] = "probe";
  // Start-up runs compare bare process starts (no CUDA call); the first-call run makes one.
  char* argv[] = {arg0, whole ? nullptr : arg1, nullptr};
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  posix_spawn(&pid, TORCHADA_PROBE_PATH, &fa, nullptr, argv, envp);
  close(fds[1]);
  char buf[64] = {};
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  auto t1 = std::chrono::steady_clock::now();
  posix_spawn_file_actions_destroy(&fa);
  if (whole) return std::chrono::duration<double>(t1 - t0).count();
  return n > 0 ? std::atof(buf) * 1e-9 : 0;
}

void BM_FirstCall_cudaGetDeviceCount(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(run_probe(true, false));
}
void BM_Startup_Plain(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(run_probe(false, true));
}
void BM_Startup_Preloaded(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(run_probe(true, true));
}

BENCHMARK(BM_Direct_musaGetDevice);
BENCHMARK(BM_Shim_cudaGetDevice);
BENCHMARK(BM_Direct_musaDeviceGetAttribute);
BENCHMARK(BM_Shim_cudaDeviceGetAttribute);
BENCHMARK(BM_FirstCall_cudaGetDeviceCount)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(50);
BENCHMARK(BM_Startup_Plain)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(50);
BENCHMARK(BM_Startup_Preloaded)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(50);

}  // namespace

BENCHMARK_MAIN();
