// bench_sim_ccl: the simulated MCCL's latency and bandwidth against shared-memory baselines
// measured in the same run.
//
// Ranks are threads of this process (mode "threads": one stream each) or processes (mode
// "processes": this program re-executed as ranks 1..N-1; the benchmark process is rank 0).
//
// BM_Bandwidth: every iteration, all ranks first copy `bytes` from a private buffer into their own
// region of a shared segment (the memcpy baseline), then run one fp32 all-reduce of `bytes`; each
// phase starts after a barrier and is timed as the slowest rank's time. Reported: allreduce_GBps
// and memcpy_GBps (bytes per rank per second), ratio = allreduce / memcpy, and cpu_ratio, the same
// ratio in CPU time summed over the ranks (steadier on a busy machine).
//
// BM_Latency: 8-byte all-reduce / broadcast / all-gather, each enqueued and synchronised on the
// stream (what a caller sees), averaged over a batch; the time is the slowest rank's.
//
// BM_PingPong: the baseline for BM_Latency: a round trip between two threads or processes over
// two words of shared memory (spin up to ~20 us, then futex wait; the round trip is the unit an
// all-reduce between two ranks needs at the least).
//
//   bench_sim_ccl [--benchmark_filter=...]       (MCCL_SIM_CHUNK_BYTES tunes the stage size)
#include <fcntl.h>
#include <linux/futex.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <benchmark/benchmark.h>
#include <mccl.h>
#include <musa_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
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

enum Command { kStop = 0, kBandwidth = 1, kAllReduce = 2, kBroadcast = 3, kAllGather = 4 };
constexpr int kLatencyBatch = 200;

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
        musaMalloc(reinterpret_cast<void**>(&small_), 64) != musaSuccess ||
        musaMalloc(reinterpret_cast<void**>(&gather_), 8 * n) != musaSuccess)
      std::exit(1);
    musaMemset(small_, 0, 64);
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
    musaFree(gather_);
    munmap(shm_, bytes_ * n_);
    musaStreamDestroy(stream_);
  }

  struct Times {
    double memcpy_s = 0, allreduce_s = 0;      // the slowest rank's wall time
    double memcpy_cpu = 0, allreduce_cpu = 0;  // CPU time of all ranks together
  };

  // Rank 0 tells the others what follows (its `go` wins): kStop, kBandwidth or a latency kind.
  int command(int go) {
    musaMemcpy(small_, &go, sizeof go, musaMemcpyHostToDevice);
    OK(mcclBroadcast(small_, small_, 1, mcclInt32, 0, comm_, stream_));
    musaStreamSynchronize(stream_);
    musaMemcpy(&go, small_, sizeof go, musaMemcpyDeviceToHost);
    return go;
  }

  // Runs what `cmd` says (not kStop); returns the time of one operation (the slowest rank's).
  double run(int cmd, Times* t) {
    if (cmd == kBandwidth) {
      *t = iteration();
      return t->allreduce_s;
    }
    return latency(cmd);
  }

  // kLatencyBatch small operations of one kind, each synchronised; seconds per operation.
  double latency(int kind) {
    barrier();
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < kLatencyBatch; ++i) {
      switch (kind) {
        case kAllReduce:
          OK(mcclAllReduce(small_ + 8, small_ + 16, 2, mcclFloat32, mcclSum, comm_, stream_));
          break;
        case kBroadcast:
          OK(mcclBroadcast(small_ + 8, small_ + 16, 2, mcclFloat32, 0, comm_, stream_));
          break;
        default:  // all-gather of 8 bytes per rank
          OK(mcclAllGather(small_ + 8, gather_, 2, mcclFloat32, comm_, stream_));
          break;
      }
      musaStreamSynchronize(stream_);
    }
    return combine(seconds(t0) / kLatencyBatch, mcclMax);
  }

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
  char* gather_ = nullptr;
};

void rank_loop(int rank, int n, mcclUniqueId id, size_t bytes, std::string shm_name) {
  Rank r(rank, n, id, bytes, shm_name.c_str());
  Rank::Times t;
  for (int cmd; (cmd = r.command(kStop)) != kStop;) r.run(cmd, &t);
}

int worker(int argc, char** argv) {
  // --ccl-worker rank n id bytes shm-name
  if (argc != 7) return 2;
  mcclUniqueId id;
  if (!unhex(argv[4], &id)) return 2;
  rank_loop(std::atoi(argv[2]), std::atoi(argv[3]), id, std::strtoull(argv[5], nullptr, 10),
            argv[6]);
  return 0;
}

// Starts ranks 1..n-1 (threads or processes), runs rank 0 through `body`, then stops them.
template <typename Body>
void with_ranks(benchmark::State& state, int n, bool threads, size_t bytes, Body body) {
  static int serial = 0;
  const std::string shm_name =
      "/mccl-bench-" + std::to_string(getpid()) + "-" + std::to_string(serial++);
  int fd = shm_open(shm_name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes * n)) != 0) {
    state.SkipWithError("cannot create the memcpy segment");
    return;
  }
  close(fd);
  mcclUniqueId id;
  OK(mcclGetUniqueId(&id));
  std::vector<pid_t> pids;
  std::vector<std::thread> ths;
  for (int r = 1; r < n; ++r) {
    if (threads) {
      ths.emplace_back(rank_loop, r, n, id, bytes, shm_name);
      continue;
    }
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
  {
    Rank r0(0, n, id, bytes, shm_name.c_str());
    shm_unlink(shm_name.c_str());
    body(r0);
    r0.command(kStop);
  }
  for (std::thread& t : ths) t.join();
  for (pid_t p : pids) waitpid(p, nullptr, 0);
}

// Args: ranks, MiB, threads (1) or processes (0).
void BM_Bandwidth(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const size_t bytes = static_cast<size_t>(state.range(1)) << 20;
  Rank::Times sum;
  with_ranks(state, n, state.range(2) != 0, bytes, [&](Rank& r0) {
    Rank::Times t;
    r0.command(kBandwidth);
    r0.run(kBandwidth, &t);  // warm-up: page faults, caches
    for (auto _ : state) {
      r0.command(kBandwidth);
      state.SetIterationTime(r0.run(kBandwidth, &t));
      sum.memcpy_s += t.memcpy_s;
      sum.allreduce_s += t.allreduce_s;
      sum.memcpy_cpu += t.memcpy_cpu;
      sum.allreduce_cpu += t.allreduce_cpu;
    }
  });
  const double it = static_cast<double>(state.iterations());
  state.counters["allreduce_GBps"] = bytes * it / sum.allreduce_s / 1e9;
  state.counters["memcpy_GBps"] = bytes * it / sum.memcpy_s / 1e9;
  state.counters["ratio"] = sum.memcpy_s / sum.allreduce_s;
  // The same comparison in CPU time (all ranks): less sensitive to other load on the machine.
  state.counters["cpu_ratio"] = sum.memcpy_cpu / sum.allreduce_cpu;
  state.SetBytesProcessed(static_cast<int64_t>(bytes * it));
}

// Args: ranks, threads (1) or processes (0), operation (kAllReduce, kBroadcast, kAllGather).
void BM_Latency(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int kind = static_cast<int>(state.range(2));
  double total = 0;
  with_ranks(state, n, state.range(1) != 0, 4096, [&](Rank& r0) {
    Rank::Times t;
    r0.command(kind);
    r0.run(kind, &t);  // warm-up
    for (auto _ : state) {
      r0.command(kind);
      const double s = r0.run(kind, &t);
      state.SetIterationTime(s);
      total += s;
    }
  });
  state.counters["us"] = total / static_cast<double>(state.iterations()) * 1e6;
}

// The shared-memory ping-pong: two words, each written by one side; a side waits for the other's
// word to reach the round number (spinning up to ~20 us, then futex wait).
struct alignas(64) PingWord {
  std::atomic<uint32_t> v{0};
  std::atomic<uint32_t> sleeping{0};
  char pad[56];
};

void ping_wait(PingWord* w, uint32_t want) {
  const Clock::time_point t0 = Clock::now();
  for (unsigned i = 0; w->v.load(std::memory_order_acquire) < want; ++i) {
    if (i < 100000 && (i & 255) != 0) continue;
    if (Clock::now() - t0 < std::chrono::microseconds(20)) {
      std::this_thread::yield();
      continue;
    }
    w->sleeping.store(1, std::memory_order_seq_cst);
    const uint32_t seen = w->v.load(std::memory_order_seq_cst);
    if (seen < want)
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&w->v), FUTEX_WAIT, seen, nullptr, nullptr, 0);
    w->sleeping.store(0, std::memory_order_relaxed);
  }
}

void ping_post(PingWord* w, uint32_t v) {
  w->v.store(v, std::memory_order_seq_cst);
  if (w->sleeping.load(std::memory_order_seq_cst) != 0)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&w->v), FUTEX_WAKE, INT_MAX, nullptr, nullptr,
            0);
}

// Args: threads (1) or processes (0).
void BM_PingPong(benchmark::State& state) {
  void* m = mmap(nullptr, 2 * sizeof(PingWord), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  if (m == MAP_FAILED) {
    state.SkipWithError("mmap");
    return;
  }
  PingWord* w = new (m) PingWord[2];
  constexpr uint32_t kRounds = 2000;
  constexpr uint32_t kStopWord = UINT32_MAX;  // the pong side answers until it reads this
  auto pong = [w] {
    for (uint32_t i = 1;; ++i) {
      ping_wait(&w[0], i);
      if (w[0].v.load(std::memory_order_acquire) == kStopWord) break;
      ping_post(&w[1], i);
    }
  };
  std::thread th;
  pid_t pid = -1;
  if (state.range(0) != 0) {
    th = std::thread(pong);
  } else {
    pid = fork();
    if (pid == 0) {
      pong();
      _exit(0);
    }
  }
  uint32_t i = 0;
  double total = 0;
  for (auto _ : state) {
    const Clock::time_point t0 = Clock::now();
    for (uint32_t k = 0; k < kRounds; ++k) {
      ++i;
      ping_post(&w[0], i);
      ping_wait(&w[1], i);
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count() / kRounds;
    state.SetIterationTime(s);
    total += s;
  }
  state.counters["us"] = total / static_cast<double>(state.iterations()) * 1e6;
  if (th.joinable()) {
    ping_post(&w[0], kStopWord);
    th.join();
  } else if (pid > 0) {
    ping_post(&w[0], kStopWord);
    waitpid(pid, nullptr, 0);
  }
  munmap(m, 2 * sizeof(PingWord));
}

BENCHMARK(BM_PingPong)
    ->ArgNames({"threads"})
    ->Arg(1)
    ->Arg(0)
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_Latency)
    ->ArgNames({"ranks", "threads", "op"})  // op: 2 all-reduce, 3 broadcast, 4 all-gather
    ->ArgsProduct({{2, 4}, {1, 0}, {kAllReduce, kBroadcast, kAllGather}})
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_Bandwidth)
    ->ArgNames({"ranks", "MiB", "threads"})
    ->ArgsProduct({{2, 4}, {64}, {1, 0}})
    ->Args({2, 4, 0})
    ->Args({4, 4, 0})
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
