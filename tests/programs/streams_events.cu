// Stream and event semantics that real pipelines depend on: in-stream ordering of copies and
// host functions, cross-stream dependencies through events, query results while work is blocked,
// legacy default stream vs non-blocking streams, the per-thread default stream, and device-wide
// synchronisation.
//
// Work is held back with a "gate": a host function that waits until main() opens it. The wait is
// bounded, so a runtime that runs host functions at enqueue time makes checks fail instead of
// hanging the test.
#include "check.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> timed_out{false};
};

void CUDART_CB WaitGate(void* arg) {
  auto* gate = static_cast<Gate*>(arg);
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!gate->open.load()) {
    if (Clock::now() > deadline) {
      gate->timed_out = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

bool AllBytes(const unsigned char* p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != v) return false;
  return true;
}

// Per-stream state for the ordering test. Host functions must not call CUDA, so they only look
// at pinned host memory and record what they saw.
struct Lane {
  static constexpr size_t kBytes = 1 << 16;
  cudaStream_t stream{};
  unsigned char* src = nullptr;  // pinned
  unsigned char* dst = nullptr;  // pinned
  unsigned char* d = nullptr;
  unsigned char pattern = 0;
  std::atomic<int> step{0};
  bool host_fn_saw_copy = false;
  bool callback_saw_memset = false;
  bool callback_status_ok = false;
  bool order_ok = true;
};

void CUDART_CB AfterFirstCopy(void* arg) {
  auto* lane = static_cast<Lane*>(arg);
  lane->order_ok = lane->order_ok && lane->step.fetch_add(1) == 0;
  lane->host_fn_saw_copy = AllBytes(lane->dst, Lane::kBytes, lane->pattern);
  // The next copy in this stream reads src: it must run after this function returns.
  std::memset(lane->src, lane->pattern ^ 0xFF, Lane::kBytes);
}

void CUDART_CB AfterSecondCopy(cudaStream_t, cudaError_t status, void* arg) {
  auto* lane = static_cast<Lane*>(arg);
  lane->order_ok = lane->order_ok && lane->step.fetch_add(1) == 1;
  lane->callback_status_ok = status == cudaSuccess;
  lane->callback_saw_memset = AllBytes(lane->dst, Lane::kBytes, 0x11);
}

void CheckInStreamOrdering() {
  std::printf("in-stream ordering across 4 streams\n");
  std::vector<Lane> lanes(4);
  for (size_t i = 0; i < lanes.size(); ++i) {
    Lane& l = lanes[i];
    l.pattern = static_cast<unsigned char>(0x40 + i);
    CUDA_CHECK(cudaStreamCreate(&l.stream));
    CUDA_CHECK(cudaMallocHost(&l.src, Lane::kBytes));
    CUDA_CHECK(cudaMallocHost(&l.dst, Lane::kBytes));
    CUDA_CHECK(cudaMalloc(&l.d, Lane::kBytes));
    std::memset(l.src, l.pattern, Lane::kBytes);
    std::memset(l.dst, 0, Lane::kBytes);
  }
  for (Lane& l : lanes) {
    CUDA_CHECK(cudaMemsetAsync(l.d, 0, Lane::kBytes, l.stream));
    CUDA_CHECK(cudaMemcpyAsync(l.d, l.src, Lane::kBytes, cudaMemcpyHostToDevice, l.stream));
    CUDA_CHECK(cudaMemcpyAsync(l.dst, l.d, Lane::kBytes, cudaMemcpyDeviceToHost, l.stream));
    CUDA_CHECK(cudaLaunchHostFunc(l.stream, AfterFirstCopy, &l));
    CUDA_CHECK(cudaMemsetAsync(l.d, 0x11, Lane::kBytes, l.stream));
    CUDA_CHECK(cudaMemcpyAsync(l.dst, l.d, Lane::kBytes, cudaMemcpyDeviceToHost, l.stream));
    CUDA_CHECK(cudaStreamAddCallback(l.stream, AfterSecondCopy, &l, 0));
    // Copies src again: sees the bytes AfterFirstCopy wrote.
    CUDA_CHECK(cudaMemcpyAsync(l.d, l.src, Lane::kBytes, cudaMemcpyHostToDevice, l.stream));
  }
  for (Lane& l : lanes) {
    CUDA_CHECK(cudaStreamSynchronize(l.stream));
    std::vector<unsigned char> back(Lane::kBytes);
    CUDA_CHECK(cudaMemcpy(back.data(), l.d, Lane::kBytes, cudaMemcpyDeviceToHost));
    EXPECT(l.step.load() == 2 && l.order_ok);
    EXPECT(l.host_fn_saw_copy);
    EXPECT(l.callback_status_ok);
    EXPECT(l.callback_saw_memset);
    EXPECT(AllBytes(back.data(), Lane::kBytes, l.pattern ^ 0xFF));
    CUDA_CHECK(cudaStreamDestroy(l.stream));
    CUDA_CHECK(cudaFreeHost(l.src));
    CUDA_CHECK(cudaFreeHost(l.dst));
    CUDA_CHECK(cudaFree(l.d));
  }
}

// Stream B waits on an event recorded in stream A behind a closed gate: B's copy must see the
// value A uploads only after the gate opens, and queries report "not ready" meanwhile.
void CheckCrossStreamWait() {
  std::printf("cudaStreamWaitEvent across streams\n");
  const size_t n = 4096;
  cudaStream_t a, b;
  CUDA_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  cudaEvent_t ready;
  CUDA_CHECK(cudaEventCreate(&ready));
  unsigned char *h_in, *h_out, *d;
  CUDA_CHECK(cudaMallocHost(&h_in, n));
  CUDA_CHECK(cudaMallocHost(&h_out, n));
  CUDA_CHECK(cudaMalloc(&d, n));
  std::memset(h_in, 0x77, n);
  std::memset(h_out, 0, n);
  CUDA_CHECK(cudaMemset(d, 0, n));

  Gate gate;
  CUDA_CHECK(cudaLaunchHostFunc(a, WaitGate, &gate));
  CUDA_CHECK(cudaMemcpyAsync(d, h_in, n, cudaMemcpyHostToDevice, a));
  CUDA_CHECK(cudaEventRecord(ready, a));
  CUDA_CHECK(cudaStreamWaitEvent(b, ready, 0));
  CUDA_CHECK(cudaMemcpyAsync(h_out, d, n, cudaMemcpyDeviceToHost, b));

  EXPECT_ERR(cudaStreamQuery(a), cudaErrorNotReady);
  EXPECT_ERR(cudaEventQuery(ready), cudaErrorNotReady);
  EXPECT_ERR(cudaStreamQuery(b), cudaErrorNotReady);
  EXPECT(AllBytes(h_out, n, 0));
  gate.open = true;
  CUDA_CHECK(cudaStreamSynchronize(b));
  EXPECT(!gate.timed_out);
  EXPECT(AllBytes(h_out, n, 0x77));
  CUDA_CHECK(cudaStreamSynchronize(a));
  EXPECT_ERR(cudaStreamQuery(a), cudaSuccess);
  EXPECT_ERR(cudaStreamQuery(b), cudaSuccess);
  EXPECT_ERR(cudaEventQuery(ready), cudaSuccess);
  (void)cudaGetLastError();

  CUDA_CHECK(cudaEventDestroy(ready));
  CUDA_CHECK(cudaStreamDestroy(a));
  CUDA_CHECK(cudaStreamDestroy(b));
  CUDA_CHECK(cudaFreeHost(h_in));
  CUDA_CHECK(cudaFreeHost(h_out));
  CUDA_CHECK(cudaFree(d));
}

void CheckEventTiming() {
  std::printf("event timing\n");
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  cudaEvent_t start, stop, untimed;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
  CUDA_CHECK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  void* d;
  CUDA_CHECK(cudaMalloc(&d, 1 << 22));
  CUDA_CHECK(cudaEventRecord(start, s));
  CUDA_CHECK(cudaMemsetAsync(d, 1, 1 << 22, s));
  CUDA_CHECK(cudaEventRecord(untimed, s));
  CUDA_CHECK(cudaEventRecord(stop, s));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = -1;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("  memset of 4 MiB: %.3f ms\n", ms);
  EXPECT(ms >= 0);
  // Events created without timing cannot be measured.
  EXPECT_ERR(cudaEventElapsedTime(&ms, start, untimed), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaEventDestroy(untimed));
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(d));
}

// A blocking stream held by the gate makes the legacy default stream wait; a non-blocking stream
// runs regardless.
void CheckDefaultStreamSemantics() {
  std::printf("legacy default stream vs non-blocking stream\n");
  cudaStream_t blocking, nonblocking;
  CUDA_CHECK(cudaStreamCreate(&blocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
  unsigned flags = 99;
  CUDA_CHECK(cudaStreamGetFlags(nonblocking, &flags));
  EXPECT(flags == cudaStreamNonBlocking);
  CUDA_CHECK(cudaStreamGetFlags(blocking, &flags));
  EXPECT(flags == cudaStreamDefault);

  const size_t n = 4096;
  unsigned char *d0, *d1, *h;
  CUDA_CHECK(cudaMalloc(&d0, n));
  CUDA_CHECK(cudaMalloc(&d1, n));
  CUDA_CHECK(cudaMallocHost(&h, n));
  Gate gate;
  CUDA_CHECK(cudaLaunchHostFunc(blocking, WaitGate, &gate));
  CUDA_CHECK(cudaMemsetAsync(d0, 0x22, n, 0));  // legacy default stream: waits for `blocking`
  CUDA_CHECK(cudaMemsetAsync(d1, 0x33, n, nonblocking));
  CUDA_CHECK(cudaMemcpyAsync(h, d1, n, cudaMemcpyDeviceToHost, nonblocking));
  CUDA_CHECK(cudaStreamSynchronize(nonblocking));  // must not wait for the gate
  EXPECT(!gate.open && !gate.timed_out);
  EXPECT(AllBytes(h, n, 0x33));
  EXPECT_ERR(cudaStreamQuery(0), cudaErrorNotReady);
  gate.open = true;
  CUDA_CHECK(cudaStreamSynchronize(0));
  CUDA_CHECK(cudaMemcpy(h, d0, n, cudaMemcpyDeviceToHost));
  EXPECT(AllBytes(h, n, 0x22));
  EXPECT(!gate.timed_out);
  (void)cudaGetLastError();

  int least = 0, greatest = 0, prio = 12345;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t urgent;
  CUDA_CHECK(cudaStreamCreateWithPriority(&urgent, cudaStreamNonBlocking, greatest));
  CUDA_CHECK(cudaStreamGetPriority(urgent, &prio));
  std::printf("  priorities: least %d, greatest %d, got %d\n", least, greatest, prio);
  EXPECT(prio == greatest);
  CUDA_CHECK(cudaStreamDestroy(urgent));

  CUDA_CHECK(cudaStreamDestroy(blocking));
  CUDA_CHECK(cudaStreamDestroy(nonblocking));
  CUDA_CHECK(cudaFree(d0));
  CUDA_CHECK(cudaFree(d1));
  CUDA_CHECK(cudaFreeHost(h));
}

// Each host thread gets its own cudaStreamPerThread.
void CheckPerThreadStream() {
  std::printf("cudaStreamPerThread from 4 threads\n");
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      const size_t n = 1 << 16;
      const unsigned char v = static_cast<unsigned char>(0x80 + t);
      unsigned char *d = nullptr, *h = nullptr;
      if (cudaMalloc(&d, n) != cudaSuccess || cudaMallocHost(&h, n) != cudaSuccess) return;
      bool good =
          cudaMemsetAsync(d, v, n, cudaStreamPerThread) == cudaSuccess &&
          cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, cudaStreamPerThread) == cudaSuccess &&
          cudaStreamSynchronize(cudaStreamPerThread) == cudaSuccess &&
          cudaStreamQuery(cudaStreamPerThread) == cudaSuccess && AllBytes(h, n, v);
      good = cudaFree(d) == cudaSuccess && cudaFreeHost(h) == cudaSuccess && good;
      ok[t] = good;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT(ok[t]);
}

void CUDART_CB SlowIncrement(void* arg) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  static_cast<std::atomic<int>*>(arg)->fetch_add(1);
}

void CheckDeviceSynchronize() {
  std::printf("cudaDeviceSynchronize waits for every stream\n");
  std::atomic<int> done{0};
  cudaStream_t s[3];
  for (auto& st : s) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CUDA_CHECK(cudaLaunchHostFunc(st, SlowIncrement, &done));
    CUDA_CHECK(cudaLaunchHostFunc(st, SlowIncrement, &done));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT(done.load() == 6);
  for (auto& st : s) CUDA_CHECK(cudaStreamDestroy(st));
}

}  // namespace

int main() {
  CUDA_CHECK(cudaSetDevice(0));
  CheckInStreamOrdering();
  CheckCrossStreamWait();
  CheckEventTiming();
  CheckDefaultStreamSemantics();
  CheckPerThreadStream();
  CheckDeviceSynchronize();
  return check::Report("streams_events");
}
