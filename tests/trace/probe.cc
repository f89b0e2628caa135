// Drives the tracing API the way the generated exports do, one scenario per process (tracing is
// decided once per process from the environment). check_trace.py runs it and checks the files and
// the log with Python's json module.
//
//   probe calls N          N calls (each with a nested backend call), return from main
//   probe exit N           N calls, then exit(0) from inside a helper
//   probe fork N           N calls, fork; the child makes N+1 calls and _exit(0)s
//   probe crash SIG        one call, then a SIG (segv bus fpe ill abort) inside a nested call
//   probe chain            a handler installed before tracing runs after the trace is finished
//   probe threads T M      T threads make M calls each, all at once
//   probe stats            known call, error and time profile (see check_trace.py)
//   probe args             argument summaries at their limits
//   probe unsupported      the policy's refusal path (backtrace at debug level)
//   probe exec N           N calls, then runs `probe calls N` while this process still traces
//   probe many N           N calls without nesting (file growth, size limit)
//   probe busy_exit T      T threads make calls without end; main exit()s while they do
//   probe kill N           N calls, then SIGKILL (nothing runs: the binary log stays)
//   probe chdir N          N calls, then chdir("/") and return (a relative FILE still lands where
//                          it was meant to)
//   probe pairs            backend calls in the shapes a forwarder does not make (see pairs())
//   probe crash_after      one call, then a SIGSEGV in a call whose backend call has returned
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/policy.h"
#include "core/trace.h"

namespace trace = torchada::trace;
using torchada::Fn;

namespace {

// What a generated export does: the one-branch test, a span with three arguments, the backend
// call inside a BackendSpan, the result.
__attribute__((noinline)) int traced_call(Fn fn, const char* backend, int result, void* p,
                                          unsigned long long n) {
  if (__builtin_expect(trace::active(), 0) && trace::enabled_slow()) {
    trace::Span s(fn);
    s.args().ptr("ptr", p);
    s.args().u64("count", n);
    s.args().enum_value("kind", 1, "cudaMemcpyHostToDevice");
    if (backend != nullptr) {
      trace::BackendSpan b(backend);
      asm volatile("" ::: "memory");
    }
    s.finish(result);
    return result;
  }
  return result;
}

int calls(int n) {
  int errors = 0;
  for (int i = 0; i < n; ++i)
    errors +=
        traced_call(Fn::k_cudaMalloc, "musaMalloc", 0, &errors, static_cast<unsigned>(i)) != 0;
  return errors;
}

__attribute__((noinline)) void exit_from_helper() {
  std::fflush(stdout);
  std::exit(0);
}

// A call whose backend call dies of `sig`.
__attribute__((noinline)) void crash_inside_call(const std::string& sig) {
  trace::enabled_slow();
  trace::Span s(Fn::k_cudaMemcpy);
  s.args().str("what", sig.c_str());
  trace::BackendSpan b("musaMemcpy");
  if (sig == "segv") {
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *static_cast<volatile int*>(page) = 1;
  } else if (sig == "bus") {
    char path[] = "/tmp/torchada-probe-bus-XXXXXX";
    int fd = mkstemp(path);
    unlink(path);
    if (fd < 0 || ftruncate(fd, 4096) != 0) std::abort();
    void* m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED || ftruncate(fd, 0) != 0) std::abort();
    *static_cast<volatile int*>(m) = 1;  // past the end of the file now
  } else if (sig == "fpe") {
#if defined(__x86_64__)
    int zero = 0, out = 0;
    asm volatile("cltd; idivl %2" : "=a"(out) : "a"(1), "r"(zero) : "edx");
    (void)out;
#else
    raise(SIGFPE);
#endif
  } else if (sig == "ill") {
    __builtin_trap();
  } else if (sig == "abort") {
    std::abort();
  }
  std::printf("no signal for %s\n", sig.c_str());
}

void previous_handler(int) {
  static const char msg[] = "previous SIGSEGV handler ran\n";
  ssize_t ignored = write(2, msg, sizeof msg - 1);
  (void)ignored;
  _exit(3);
}

int threads(int t, int m) {
  std::atomic<int> ready{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < t; ++i)
    pool.emplace_back([&, i] {
      std::string name = "probe-worker-" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      ready.fetch_add(1);
      while (ready.load() < t) std::this_thread::yield();
      for (int k = 0; k < m; ++k)
        if (traced_call(k % 2 ? Fn::k_cudaMemcpy : Fn::k_cudaFree,
                        k % 2 ? "musaMemcpy" : "musaFree", 0, nullptr,
                        static_cast<unsigned>(k)) != 0)
          errors.fetch_add(1);
    });
  for (auto& th : pool) th.join();
  return errors.load();
}

// cudaStreamSynchronize: 3 calls of ~3 ms (largest total), cudaMalloc: 7 calls, 2 failing;
// cudaFree: 5 calls, 5 failing; cudaGetDeviceCount: 1 call never finished (counts as an error).
void stats() {
  trace::enabled_slow();
  for (int i = 0; i < 3; ++i) {
    trace::Span s(Fn::k_cudaStreamSynchronize);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    s.finish(0);
  }
  for (int i = 0; i < 7; ++i) {
    trace::Span s(Fn::k_cudaMalloc);
    s.finish(i < 2 ? 2 : 0);
  }
  for (int i = 0; i < 5; ++i) {
    trace::Span s(Fn::k_cudaFree);
    s.finish(1);
  }
  trace::Span unfinished(Fn::k_cudaGetDeviceCount);
}

// A forwarder's backend call is logged with its call (one record); these are the other shapes:
// a call too long for a short record, a result too large for one, two backend calls in one call,
// a backend call outside any call, a call made inside a backend call, a backend call still running
// when its call finishes, and a forwarder whose backend function changes.
void pairs() {
  trace::enabled_slow();
  auto forwarded = [](Fn fn, const char* backend, unsigned long long n, int result) {
    trace::Span s(fn);
    s.args().u64("n", n);
    {
      trace::BackendSpan b(backend);
      asm volatile("" ::: "memory");
    }
    s.finish(result);
  };
  {
    trace::Span s(Fn::k_cudaStreamSynchronize);
    s.args().u64("n", 1);
    {
      trace::BackendSpan b("musaStreamSynchronize");
      std::this_thread::sleep_for(std::chrono::milliseconds(12));
    }
    s.finish(0);
  }
  forwarded(Fn::k_cudaMalloc, "musaMalloc", 2, 100000);
  {
    trace::Span s(Fn::k_cudaMemcpy);
    { trace::BackendSpan b("musaMemcpy"); }
    { trace::BackendSpan b("musaMemcpyAsync"); }
    s.finish(0);
  }
  { trace::BackendSpan b("musaFree"); }
  {
    trace::Span s(Fn::k_cudaLaunchKernel);
    {
      trace::BackendSpan b("musaLaunchKernel");
      forwarded(Fn::k_cudaGetDevice, "musaGetDevice", 3, 0);
    }
    s.finish(0);
  }
  {
    trace::Span s(Fn::k_cudaEventRecord);
    trace::BackendSpan b("musaEventRecord");
    s.finish(0);
  }
  forwarded(Fn::k_cudaMalloc, "musaMalloc", 4, 0);
  forwarded(Fn::k_cudaMalloc, "musaMallocAsync", 5, 0);
  forwarded(Fn::k_cudaMalloc, "musaMallocAsync", 6, 0);
  forwarded(Fn::k_cudaMalloc, "musaMalloc", 7, 0);
  {  // a generated forwarder: its backend call ends the call
    trace::Span s(Fn::k_cudaDeviceSynchronize);
    s.args().u64("n", 8);
    {
      trace::BackendSpan b("musaDeviceSynchronize", trace::BackendSpan::kEndsCall);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    s.finish(0);
  }
  {  // work after the backend call (a result written back): the call's own
    trace::Span s(Fn::k_cudaStreamQuery);
    s.args().u64("n", 9);
    { trace::BackendSpan b("musaStreamQuery"); }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    s.finish(0);
  }
}

void args() {
  trace::enabled_slow();
  {
    trace::Span s(Fn::k_cudaMalloc);
    s.args().ptr("null", nullptr);
    s.args().ptr("p", reinterpret_cast<void*>(0xdeadbeefULL));
    s.args().u64("big", 18446744073709551615ULL);
    s.args().i64("neg", -9223372036854775807LL - 1);
    s.args().str("none", nullptr);
    s.finish(0);
  }
  {
    trace::Span s(Fn::k_cudaStreamSynchronize);
    s.args().str("quote", "a\"b\\c\nd\te\x01\xff");
    s.args().enum_value("unlabelled", 7, nullptr);
    s.args().enum_value("labelled", 2, "cudaMemcpyDeviceToHost");
    s.finish(5);
  }
  {
    trace::Span s(Fn::k_cudaMemcpy);
    s.args().str("long", std::string(300, 'x').c_str());
    s.args().u64("after", 1);
    s.finish(0);
  }
  {
    trace::Span s(Fn::k_cudaFree);
    // Names are string literals (the API keeps their pointers).
    static const char* const kNames[] = {
        "arg0",  "arg1",  "arg2",  "arg3",  "arg4",  "arg5",  "arg6",  "arg7",  "arg8",  "arg9",
        "arg10", "arg11", "arg12", "arg13", "arg14", "arg15", "arg16", "arg17", "arg18", "arg19"};
    for (const char* name : kNames) s.args().u64(name, 123456789);
    s.finish(0);
  }
  {
    trace::Span s(Fn::k_cudaGetDeviceCount);
    static const char kLongName[] =
        "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
        "nnnnnnnnnn";
    s.args().str(kLongName, "v");  // a name that cannot fit
    s.finish(0);
  }
  {
    // Spaces and a newline inside strings survive the compaction at exit; the parent's slot keeps
    // padding after its text (its child reserved the bytes after it), which does not.
    trace::Span s(Fn::k_cudaMemset);
    s.args().str("spaced", "  two  spaces,\n{\"ph\":  ");
    s.args().str("a  name ", " ");
    {
      trace::BackendSpan b("musaMemset");
      asm volatile("" ::: "memory");
    }
    s.finish(0);
  }
}

int run_child(const char* self, const char* scenario, const char* n) {
  pid_t pid = fork();
  if (pid == 0) {
    execl(self, self, scenario, n, static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("exec child %d status %d\n", static_cast<int>(pid), status);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

}  // namespace

// Call sites the backtrace test looks for (external linkage: dladdr finds them too).
__attribute__((noinline)) void probe_unsupported_call_site() {
  torchada::note_unsupported(Fn::k_cudaMemPoolCreate);
  asm volatile("" ::: "memory");  // not a tail call: this frame stays on the stack
}
__attribute__((noinline)) void probe_failed_call_site() {
  torchada::note_error(Fn::k_cudaMalloc);
  asm volatile("" ::: "memory");
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string what = argv[1];
  const int n = argc > 2 ? std::atoi(argv[2]) : 10;
  const int m = argc > 3 ? std::atoi(argv[3]) : 10;
  setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the checker even if the probe dies
  std::printf("pid %d\n", static_cast<int>(getpid()));
  if (what == "calls") return calls(n);
  if (what == "many") {
    int e = 0;
    for (int i = 0; i < n; ++i)
      e += traced_call(Fn::k_cudaFree, nullptr, 0, nullptr, static_cast<unsigned>(i)) != 0;
    return e;
  }
  if (what == "chdir") {
    const int e = calls(n);
    return chdir("/") == 0 ? e : 1;
  }
  if (what == "kill") {
    calls(n);
    raise(SIGKILL);
  }
  if (what == "exit") {
    calls(n);
    exit_from_helper();
  }
  if (what == "fork") {
    calls(n);
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      calls(n + 1);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    calls(n);
    std::printf("child %d status %d\n", static_cast<int>(pid), status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  if (what == "crash") {
    calls(1);
    crash_inside_call(argc > 2 ? argv[2] : "segv");
    return 1;
  }
  if (what == "crash_after") {
    calls(1);
    trace::Span s(Fn::k_cudaMemcpy);
    s.args().str("what", "after");
    { trace::BackendSpan b("musaMemcpy"); }
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *static_cast<volatile int*>(page) = 1;
    return 1;
  }
  if (what == "chain") {
    struct sigaction sa = {};
    sa.sa_handler = previous_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    calls(2);
    crash_inside_call("segv");
    return 1;
  }
  if (what == "threads") return threads(n, m);
  if (what == "busy_exit") {
    std::atomic<int> started{0};
    for (int i = 0; i < n; ++i)
      std::thread([&started] {
        for (unsigned k = 0;; ++k) {
          traced_call(k % 2 ? Fn::k_cudaMemcpy : Fn::k_cudaFree, k % 2 ? "musaMemcpy" : "musaFree",
                      0, nullptr, k);
          if (k == 0) started.fetch_add(1);
        }
      }).detach();
    while (started.load() < n) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    exit_from_helper();
  }
  if (what == "stats") {
    stats();
    return 0;
  }
  if (what == "args") {
    args();
    return 0;
  }
  if (what == "pairs") {
    pairs();
    return 0;
  }
  if (what == "unsupported") {
    calls(1);
    probe_unsupported_call_site();
    probe_failed_call_site();
    return 0;
  }
  if (what == "exec") {
    calls(n);
    int rc = run_child(argv[0], "calls", argv[2]);
    calls(n);
    return rc;
  }
  return 2;
}
