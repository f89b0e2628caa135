// 32 threads make their process's first cudart calls at the same moment, the way a thread pool
// touching the GPU at start-up does: lazy initialisation inside the shim must be race-free.
// main() makes no cudart call before the threads are released.
#include "check.h"
#include "roundtrip.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 32;

struct Result {
  std::atomic<bool> done{false};
  int count_rc = -1, count = -1, set_rc = -1, malloc_rc = -1, stream_rc = -1;
  int roundtrip_rc = -1, destroy_rc = -1, free_rc = -1;
};

bool AllOk(const Result& r) {
  return r.count_rc == 0 && r.count >= 1 && r.set_rc == 0 && r.malloc_rc == 0 && r.stream_rc == 0 &&
         r.roundtrip_rc == 0 && r.destroy_rc == 0 && r.free_rc == 0;
}

void Worker(int id, std::atomic<int>* ready, std::atomic<bool>* go, Result* r) {
  ready->fetch_add(1);
  while (!go->load(std::memory_order_acquire)) std::this_thread::yield();
  r->count_rc = cudaGetDeviceCount(&r->count);
  r->set_rc = cudaSetDevice(r->count > 0 ? id % r->count : 0);
  void* p = nullptr;
  r->malloc_rc = cudaMalloc(&p, 1 << 16);
  cudaStream_t s = nullptr;
  r->stream_rc = cudaStreamCreate(&s);
  r->roundtrip_rc = loadpath::RoundTrip(4096, static_cast<unsigned char>(id), s);
  r->destroy_rc = cudaStreamDestroy(s);
  r->free_rc = cudaFree(p);
  r->done = true;
}

// A deadlock in the shim's lazy initialisation would otherwise only show as a test timeout.
void WaitOrDie(const std::vector<Result>& results) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (size_t i = 0; i < results.size(); ++i) {
    while (!results[i].done) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::printf("FAIL thread %zu has not finished after 60 s (deadlock?)\n", i);
        std::fflush(stdout);
        _exit(2);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

}  // namespace

int main() {
  std::vector<Result> results(kThreads);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(Worker, i, &ready, &go, &results[i]);
  while (ready.load() < kThreads) std::this_thread::yield();
  go.store(true, std::memory_order_release);  // released together
  WaitOrDie(results);
  for (auto& t : threads) t.join();

  int ok = 0;
  for (int i = 0; i < kThreads; ++i) {
    const Result& r = results[i];
    if (AllOk(r)) {
      ++ok;
      continue;
    }
    std::printf(
        "  thread %d: count %d (rc %d), set %d, malloc %d, stream %d, copy %d, "
        "destroy %d, free %d\n",
        i, r.count, r.count_rc, r.set_rc, r.malloc_rc, r.stream_rc, r.roundtrip_rc, r.destroy_rc,
        r.free_rc);
  }
  std::printf("%d of %d threads succeeded\n", ok, kThreads);
  EXPECT(ok == kThreads);
  bool same_count = true;
  for (const Result& r : results) same_count = same_count && r.count == results[0].count;
  EXPECT(same_count);
  return loadpath::Report("threads");
}
