// fork() from a process that already uses cudart, as multiprocessing data loaders and launchers
// do. A second thread keeps calling the runtime while the parent forks, so a lock held at that
// moment is inherited by the child: the child must still work (pthread_atfork handling). The
// parent keeps using its allocation and stream afterwards.
#include "check.h"
#include "roundtrip.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

// Returns the child's exit status: 0 when every call succeeded.
int ChildWork() {
  alarm(10);  // a deadlocked child dies with SIGALRM instead of hanging the test
  int count = -1;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) return 10;
  if (loadpath::RoundTrip(1 << 16, 21) != 0) return 11;
  cudaStream_t s = nullptr;
  if (cudaStreamCreate(&s) != cudaSuccess) return 12;
  if (loadpath::RoundTrip(1 << 16, 22, s) != 0) return 13;
  if (cudaStreamDestroy(s) != cudaSuccess) return 14;
  return 0;
}

// Waits up to 20 s; a child still running then is killed and reported.
int WaitChild(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      std::printf("  child %d timed out\n", pid);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFSIGNALED(status)) {
    std::printf("  child %d killed by signal %d\n", pid, WTERMSIG(status));
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

int main() {
  int count = -1;
  if (!EXPECT_OK(cudaGetDeviceCount(&count))) return loadpath::Report("fork");
  void* kept = nullptr;
  cudaStream_t stream = nullptr;
  EXPECT_OK(cudaMalloc(&kept, 1 << 20));
  EXPECT_OK(cudaStreamCreate(&stream));
  EXPECT_OK(loadpath::RoundTrip(1 << 16, 1, stream));

  std::atomic<bool> stop{false};
  std::atomic<int> busy_failures{0};
  std::thread busy([&] {
    cudaStream_t s = nullptr;
    if (cudaStreamCreate(&s) != cudaSuccess) ++busy_failures;
    while (!stop) busy_failures += loadpath::RoundTrip(4096, 2, s) != 0;
    if (cudaStreamDestroy(s) != cudaSuccess) ++busy_failures;
  });

  const int kForks = 5;
  for (int i = 0; i < kForks; ++i) {
    std::fflush(stdout);  // the child must not repeat buffered output
    const pid_t pid = fork();
    if (pid == 0) {
      const int status = ChildWork();
      std::printf("  child %d: exit status %d\n", static_cast<int>(getpid()), status);
      std::fflush(stdout);
      _exit(status);
    }
    EXPECT(pid > 0);
    const bool child_ok = pid > 0 && WaitChild(pid) == 0;
    EXPECT(child_ok);
    if (!child_ok) break;  // one diagnosis is enough; keep the test well inside its timeout
  }
  stop = true;
  busy.join();
  EXPECT(busy_failures == 0);

  std::printf("parent after fork\n");
  EXPECT_OK(cudaMemset(kept, 0x42, 1 << 20));
  EXPECT_OK(loadpath::RoundTrip(1 << 16, 3, stream));
  EXPECT_OK(cudaStreamDestroy(stream));
  EXPECT_OK(cudaFree(kept));
  return loadpath::Report("fork");
}
