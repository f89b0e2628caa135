// bench_sim_ccl: the simulated MCCL's all-reduce bandwidth against a plain shared-memory memcpy.
//
// Each benchmark starts N processes (this program re-executed as ranks 1..N-1, the benchmark
// process is rank 0). Every iteration, all ranks first copy `bytes` from a private buffer into
// their own region of a shared segment (the memcpy baseline), then run one fp32 all-reduce of
// `bytes`; each phase starts after a barrier and is timed as the slowest rank's time. Reported:
// allreduce_GBps and memcpy_GBps (bytes per rank per second), ratio = allreduce / memcpy, and
// cpu_ratio, the same ratio in CPU time summed over the ranks (steadier on a busy machine).
//
//   bench_sim_ccl [--benchmark_filter=...]       (MCCL_SIM_CHUNK_BYTES tunes the stage size)
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <benchmark/benchmark.h>
#include <mccl.h>
#include <musa_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

std::string hex(const mcclUniqueId& id) {
  std::string s;
  char b[3];
  for (char c : id.internal) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(c));
    s += b;
  }
  return s;
}

bool unhex(const char* s, mcclUniqueId* id) {
  if (std::strlen(s) != 2 * sizeof id->internal) return false;
  for (size_t i = 0; i < sizeof id->internal; ++i) {
    unsigned v = 0;
    if (std::sscanf(s + 2 * i, "%2x", &v) != 1) return false;
    id->internal[i] = static_cast<char>(v);
  }
  return true;
}

#define OK(call)                                                           \
  do {                                                                     \
    mcclResult_t r_ = (call);                                              \
    if (r_ != mcclSuccess) {                                               \
      std::fprintf(stderr, "%s: %s (%s)\n", #call, mcclGetErrorString(r_), \
                   mcclGetLastError(nullptr));                             \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

// One rank's side of the benchmark; rank 0 is driven by Google Benchmark, the others by a loop.
class Rank {
 public:
  Rank(int rank, int n, const mcclUniqueId& id, size_t bytes, const char* shm_name)
      : rank_(rank), n_(n), bytes_(bytes) {
    if (musaStreamCreateWithFlags(&stream_, musaStreamNonBlocking) != musaSuccess) std::exit(1);
    // Mapped before joining: rank 0 unlinks the segment once every rank has joined.
    int fd = shm_open(shm_name, O_RDWR, 0);
    if (fd < 0) std::exit(1);
    shm_ = static_cast<char*>(mmap(nullptr, bytes * n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    if (shm_ == MAP_FAILED) std::exit(1);
    OK(mcclCommInitRank(&comm_, n, id, rank));
    src_.assign(bytes, static_cast<char>(rank + 1));
    if (musaMalloc(reinterpret_cast<void**>(&send_), bytes) != musaSuccess ||
        musaMalloc(reinterpret_cast<void**>(&recv_), bytes) != musaSuccess ||
        musaMalloc(reinterpret_cast<void**>(&small_), 64) != musaSuccess)
      std::exit(1);
    std::vector<float> init(bytes / sizeof(float), 1.0f + rank);
    musaMemcpy(send_, init.data(), bytes, musaMemcpyHostToDevice);
    musaMemcpy(recv_, init.data(), bytes, musaMemcpyHostToDevice);
    std::memset(shm_ + rank * bytes, 0, bytes);
  }
  ~Rank() {
    OK(mcclCommDestroy(comm_));
    musaFree(send_);
    musaFree(recv_);
    musaFree(small_);
    munmap(shm_, bytes_ * n_);
    musaStreamDestroy(stream_);
  }

  // Rank 0 tells the others whether another iteration follows (its `go` wins).
  bool command(int go) {
    musaMemcpy(small_, &go, sizeof go, musaMemcpyHostToDevice);
    OK(mcclBroadcast(small_, small_, 1, mcclInt32, 0, comm_, stream_));
    musaStreamSynchronize(stream_);
    musaMemcpy(&go, small_, sizeof go, musaMemcpyDeviceToHost);
    return go != 0;
  }

  struct Times {
    double memcpy_s = 0, allreduce_s = 0;      // the slowest rank's wall time
    double memcpy_cpu = 0, allreduce_cpu = 0;  // CPU time of all ranks together
  };

  // One iteration: memcpy, then all-reduce.
  Times iteration() {
    Times t;
    barrier();
    double c0 = cpu_seconds();
    Clock::time_point t0 = Clock::now();
    std::memcpy(shm_ + rank_ * bytes_, src_.data(), bytes_);
    const double tm = seconds(t0), cm = cpu_seconds() - c0;
    barrier();
    c0 = cpu_seconds();
    t0 = Clock::now();
    OK(mcclAllReduce(send_, recv_, bytes_ / sizeof(float), mcclFloat32, mcclSum, comm_, stream_));
    musaStreamSynchronize(stream_);
    const double ta = seconds(t0), ca = cpu_seconds() - c0;
    t.memcpy_s = combine(tm, mcclMax);
    t.allreduce_s = combine(ta, mcclMax);
    t.memcpy_cpu = combine(cm, mcclSum);
    t.allreduce_cpu = combine(ca, mcclSum);
    return t;
  }

 private:
  static double seconds(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
  void barrier() {
    OK(mcclAllReduce(small_, small_, 1, mcclInt32, mcclSum, comm_, stream_));
    musaStreamSynchronize(stream_);
  }
  // Process CPU time: the copy runs on this thread, the all-reduce on the stream's.
  static double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  double combine(double t, mcclRedOp_t op) {
    double* d = reinterpret_cast<double*>(small_);
    musaMemcpy(d, &t, sizeof t, musaMemcpyHostToDevice);
    OK(mcclAllReduce(d, d, 1, mcclFloat64, op, comm_, stream_));
    musaStreamSynchronize(stream_);
    musaMemcpy(&t, d, sizeof t, musaMemcpyDeviceToHost);
    return t;
  }

  int rank_, n_;
  size_t bytes_;
  mcclComm_t comm_ = nullptr;
  musaStream_t stream_ = nullptr;
  char* shm_ = nullptr;
  std::vector<char> src_;
  char* send_ = nullptr;
  char* recv_ = nullptr;
  char* small_ = nullptr;
};

int worker(int argc, char** argv) {
  // --ccl-worker rank n id bytes shm-name
  if (argc != 7) return 2;
  mcclUniqueId id;
  if (!unhex(argv[4], &id)) return 2;
  Rank r(std::atoi(argv[2]), std::atoi(argv[3]), id, std::strtoull(argv[5], nullptr, 10), argv[6]);
  while (r.command(0)) r.iteration();
  return 0;
}

void BM_AllReduceVsMemcpy(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const size_t bytes = static_cast<size_t>(state.range(1)) << 20;
  const std::string shm_name = "/mccl-bench-" + std::to_string(getpid());
  int fd = shm_open(shm_name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes * n)) != 0) {
    state.SkipWithError("cannot create the memcpy segment");
    return;
  }
  close(fd);
  mcclUniqueId id;
  OK(mcclGetUniqueId(&id));
  std::vector<pid_t> pids;
  for (int r = 1; r < n; ++r) {
    std::vector<std::string> args = {"/proc/self/exe",  "--ccl-worker", std::to_string(r),
                                     std::to_string(n), hex(id),        std::to_string(bytes),
                                     shm_name};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(&a[0]);
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) == 0)
      pids.push_back(pid);
  }
  Rank::Times sum;
  {
    Rank r0(0, n, id, bytes, shm_name.c_str());
    shm_unlink(shm_name.c_str());
    r0.command(1);
    r0.iteration();  // warm-up: page faults, caches
    for (auto _ : state) {
      r0.command(1);
      const Rank::Times t = r0.iteration();
      state.SetIterationTime(t.allreduce_s);
      sum.memcpy_s += t.memcpy_s;
      sum.allreduce_s += t.allreduce_s;
      sum.memcpy_cpu += t.memcpy_cpu;
      sum.allreduce_cpu += t.allreduce_cpu;
    }
    r0.command(0);
  }
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  const double it = static_cast<double>(state.iterations());
  state.counters["allreduce_GBps"] = bytes * it / sum.allreduce_s / 1e9;
  state.counters["memcpy_GBps"] = bytes * it / sum.memcpy_s / 1e9;
  state.counters["ratio"] = sum.memcpy_s / sum.allreduce_s;
  // The same comparison in CPU time (all ranks): less sensitive to other load on the machine.
  state.counters["cpu_ratio"] = sum.memcpy_cpu / sum.allreduce_cpu;
  state.SetBytesProcessed(static_cast<int64_t>(bytes * it));
}

BENCHMARK(BM_AllReduceVsMemcpy)
    ->ArgNames({"ranks", "MiB"})
    ->Args({2, 64})
    ->Args({4, 64})
    ->Args({2, 4})
    ->Args({4, 4})
    ->UseManualTime()
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--ccl-worker") == 0) return worker(argc, argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
