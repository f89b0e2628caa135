// The device-code executor: musaSimLaunchKernel (musa_sim_kernel.h).
//
// A launch is stream work. When it runs, its blocks are claimed one at a time from an atomic
// counter by the thread running the stream's work and by the executor's helper threads (one per
// further CPU), so a grid spreads over the machine. Each OS thread runs whole blocks: `static
// thread_local` storage in kernel code (musa_sim_device.h's __shared__) is then exactly the
// block's shared memory. A block whose kernel synchronises runs one fiber per thread (fiber.h);
// a fiber that reaches a barrier switches back to the block's scheduler, which resumes the next
// runnable fiber and releases a barrier's waiters when the last live thread of the block (or
// warp) arrives. A memory fault (SIGSEGV/SIGBUS) raised by kernel code is caught on the thread
// that ran it and ends the launch with musaErrorIllegalAddress, sticky on the device.
#include "executor.h"

#include "fiber.h"
#include "graph.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kFiberStack = 256 << 10;  // instrumented frames are several times larger
#else
constexpr size_t kFiberStack = 64 << 10;
#endif

namespace sim {
namespace {

constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kWarpSize = 128;             // musaDevAttrWarpSize (device.cc)
constexpr size_t kMaxDynamicShared = 96 << 10;  // sharedMemPerBlockOptin (device.cc)
// Launches with fewer thread-iterations than this run on one thread: waking a helper costs more.
constexpr unsigned long long kParallelThreads = 8192;

// ---- faults -------------------------------------------------------------------------------

thread_local sigjmp_buf* t_fault_jump = nullptr;
thread_local void* t_fault_address = nullptr;
thread_local const char* t_trap_message = nullptr;  // a failed device-side assertion's
struct sigaction g_previous[2];                     // SIGSEGV, SIGBUS

void on_fault(int sig, siginfo_t* info, void* context) {
  if (t_fault_jump != nullptr) {
    t_fault_address = info != nullptr ? info->si_addr : nullptr;
    sigjmp_buf* jump = t_fault_jump;
    t_fault_jump = nullptr;
    siglongjmp(*jump, t_trap_message != nullptr ? 2 : 1);
  }
  // Not kernel code: the handler installed before ours (Python's faulthandler, a sanitizer), or
  // the default action, which the faulting instruction meets again on return.
  const struct sigaction& prev = g_previous[sig == SIGSEGV ? 0 : 1];
  if ((prev.sa_flags & SA_SIGINFO) != 0 && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, context);
  } else if (prev.sa_handler == SIG_IGN) {
    return;
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != nullptr) {
    prev.sa_handler(sig);
  } else {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
  }
}

// A failed device-side assertion (musaSimThread::trap): leaves the block exactly as a memory
// fault does, through the fault handler (which runs on its own stack, so that the sanitizers'
// view of the fiber and thread stacks stays right), marked as an assertion.
void trap(musaSimThread*, const char* message) {
  if (t_fault_jump == nullptr) std::abort();  // kernel code outside a launch: nothing to end
  t_trap_message = message;
  raise(SIGSEGV);
  std::abort();  // not reached: the handler jumps back to the block's launcher
}

void install_fault_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous[0]);
    sigaction(SIGBUS, &sa, &g_previous[1]);
  });
}

// A fiber that overflows its stack faults on the guard page: the handler needs a stack of its
// own. A thread that already has one (Python's faulthandler gives the main thread one) keeps it.
class AltStack {
 public:
  AltStack() {
    stack_t old{};
    if (sigaltstack(nullptr, &old) == 0 && (old.ss_flags & SS_DISABLE) == 0) return;
    mem_.reset(new (std::nothrow) unsigned char[kSize]);
    if (!mem_) return;
    stack_t s{};
    s.ss_sp = mem_.get();
    s.ss_size = kSize;
    if (sigaltstack(&s, nullptr) == 0) ours_ = true;
  }
  ~AltStack() {
    if (!ours_) return;
    stack_t s{};
    s.ss_flags = SS_DISABLE;
    sigaltstack(&s, nullptr);
  }
  AltStack(const AltStack&) = delete;
  AltStack& operator=(const AltStack&) = delete;

 private:
  static constexpr size_t kSize = 64 << 10;
  std::unique_ptr<unsigned char[]> mem_;
  bool ours_ = false;
};

// ---- one block ----------------------------------------------------------------------------

enum class Wait : unsigned char { kRunnable, kBlock, kWarp, kDone };

// Per OS thread: what running blocks needs, kept from one block to the next.
struct Worker {
  AltStack alt;
  Fiber scheduler;
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<std::unique_ptr<FiberStack>> stacks;
  std::vector<musaSimThread> threads;
  std::vector<Wait> wait;
  std::vector<unsigned> queue;  // runnable fibers, a ring of threads.size() entries
  std::vector<unsigned> warp_live, warp_arrived;
  std::vector<unsigned long long> slots;
  std::vector<max_align_t> shared;
};

Worker& worker() {
  thread_local Worker w;
  return w;
}

// The block being run on this OS thread.
struct BlockRun {
  Worker* w = nullptr;
  const KernelLaunch* k = nullptr;
  unsigned n = 0;
  unsigned live = 0;
  unsigned block_arrived = 0;
  size_t head = 0, count = 0;
  bool misuse = false;  // a barrier in a barrier-free launch

  void push(unsigned i) {
    w->queue[(head + count) % n] = i;
    ++count;
  }
  unsigned pop() {
    const unsigned i = w->queue[head];
    head = (head + 1) % n;
    --count;
    return i;
  }
};

unsigned linear(const musaSimThread& t) {
  return t.threadIdx.x + t.blockDim.x * (t.threadIdx.y + t.blockDim.y * t.threadIdx.z);
}

void sync_threads(musaSimThread* t) {
  auto* b = static_cast<BlockRun*>(t->executor);
  const unsigned i = linear(*t);
  b->w->wait[i] = Wait::kBlock;
  Fiber::switch_to(*b->w->fibers[i], b->w->scheduler);
}

void sync_warp(musaSimThread* t) {
  auto* b = static_cast<BlockRun*>(t->executor);
  const unsigned i = linear(*t);
  b->w->wait[i] = Wait::kWarp;
  Fiber::switch_to(*b->w->fibers[i], b->w->scheduler);
}

void barrier_in_loop(musaSimThread* t) { static_cast<BlockRun*>(t->executor)->misuse = true; }

void fiber_entry(void* arg) {
  auto* t = static_cast<musaSimThread*>(arg);
  auto* b = static_cast<BlockRun*>(t->executor);
  b->k->kernel.thread(t, b->k->args);
  const unsigned i = linear(*t);
  b->w->wait[i] = Wait::kDone;
  Fiber::switch_to(*b->w->fibers[i], b->w->scheduler, /*from_ends=*/true);
}

void release_block(BlockRun& b) {
  if (b.block_arrived == 0 || b.block_arrived != b.live) return;
  for (unsigned j = 0; j < b.n; ++j)
    if (b.w->wait[j] == Wait::kBlock) b.w->wait[j] = Wait::kRunnable, b.push(j);
  b.block_arrived = 0;
}

void release_warp(BlockRun& b, unsigned warp) {
  Worker& w = *b.w;
  if (w.warp_arrived[warp] == 0 || w.warp_arrived[warp] != w.warp_live[warp]) return;
  const unsigned end = std::min(b.n, (warp + 1) * kWarpSize);
  for (unsigned j = warp * kWarpSize; j < end; ++j)
    if (w.wait[j] == Wait::kWarp) w.wait[j] = Wait::kRunnable, b.push(j);
  w.warp_arrived[warp] = 0;
}

// Prepares the worker for a block of `n` threads; false when memory for fibers cannot be had.
bool prepare(Worker& w, const KernelLaunch& k, unsigned n, bool fibers) {
  const unsigned warps = (n + kWarpSize - 1) / kWarpSize;
  if (w.threads.size() < n) w.threads.resize(n);
  if (w.slots.size() < static_cast<size_t>(warps) * kWarpSize)
    w.slots.resize(static_cast<size_t>(warps) * kWarpSize);
  const size_t shared_words = (k.shared + sizeof(max_align_t) - 1) / sizeof(max_align_t);
  if (w.shared.size() < shared_words) w.shared.resize(shared_words);
  if (!fibers) return true;
  w.wait.resize(n);
  w.queue.resize(n);
  w.warp_live.assign(warps, 0);
  w.warp_arrived.assign(warps, 0);
  while (w.fibers.size() < n) {
    auto stack = std::make_unique<FiberStack>();
    if (!stack->allocate(kFiberStack)) return false;
    w.stacks.push_back(std::move(stack));
    w.fibers.push_back(std::make_unique<Fiber>());
  }
  return true;
}

// Runs block `index` of `k` on this thread.
musaError_t run_block(const KernelLaunch& k, unsigned long long index) {
  Worker& w = worker();
  const musaSimDim3 bd = k.block;
  const unsigned n = bd.x * bd.y * bd.z;
  const bool fibers = k.kernel.block == nullptr;
  if (!prepare(w, k, n, fibers)) return musaErrorLaunchOutOfResources;

  BlockRun b;
  b.w = &w;
  b.k = &k;
  b.n = n;
  musaSimThread base{};
  base.blockIdx.x = static_cast<unsigned>(index % k.grid.x);
  base.blockIdx.y = static_cast<unsigned>(index / k.grid.x % k.grid.y);
  base.blockIdx.z =
      static_cast<unsigned>(index / (static_cast<unsigned long long>(k.grid.x) * k.grid.y));
  base.blockDim = bd;
  base.gridDim = k.grid;
  base.warpSize = kWarpSize;
  base.dynamicShared = w.shared.data();
  base.executor = &b;
  base.trap = &trap;

  if (!fibers) {
    base.syncThreads = &barrier_in_loop;
    base.syncWarp = &barrier_in_loop;
    base.warpSlots = w.slots.data();
    k.kernel.block(&base, k.args);  // loops over threadIdx itself
    return b.misuse ? musaErrorLaunchFailure : musaSuccess;
  }

  base.syncThreads = &sync_threads;
  base.syncWarp = &sync_warp;
  b.live = n;
  for (unsigned i = 0; i < n; ++i) {
    musaSimThread& t = w.threads[i];
    t = base;
    t.threadIdx.x = i % bd.x;
    t.threadIdx.y = i / bd.x % bd.y;
    t.threadIdx.z = i / (bd.x * bd.y);
    t.laneId = i % kWarpSize;
    t.warpId = i / kWarpSize;
    t.warpSlots = w.slots.data() + static_cast<size_t>(t.warpId) * kWarpSize;
    w.wait[i] = Wait::kRunnable;
    ++w.warp_live[t.warpId];
    w.fibers[i]->start(w.stacks[i].get(), &fiber_entry, &t, i);
    b.push(i);
  }
  while (b.count > 0) {
    const unsigned i = b.pop();
    Fiber::switch_to(w.scheduler, *w.fibers[i]);
    const unsigned warp = i / kWarpSize;
    switch (w.wait[i]) {
      case Wait::kDone:
        --b.live;
        --w.warp_live[warp];
        release_warp(b, warp);
        release_block(b);
        break;
      case Wait::kBlock:
        ++b.block_arrived;
        release_block(b);
        break;
      case Wait::kWarp:
        ++w.warp_arrived[warp];
        release_warp(b, warp);
        break;
      case Wait::kRunnable:
        break;
    }
  }
  // Threads still waiting: some wait at the block's barrier and others at a warp barrier, or a
  // warp barrier's lanes never all arrive. A GPU hangs or faults; the launch fails.
  return b.live == 0 ? musaSuccess : musaErrorLaunchFailure;
}

// ---- spreading blocks over threads ----------------------------------------------------------

struct Job {
  const KernelLaunch* k = nullptr;
  unsigned long long total = 0;
  std::atomic<unsigned long long> next{0};
  std::atomic<unsigned long long> finished{0};
  std::atomic<int> error{musaSuccess};
  std::mutex mu;
  std::condition_variable cv;
};

void note_error(Job& job, musaError_t e) {
  int expected = musaSuccess;
  job.error.compare_exchange_strong(expected, e);
}

// Claims and runs blocks until none are left. Faults are caught here, per block.
void run_blocks(Job& job) {
  static thread_local bool altstack_ready = false;
  if (!altstack_ready) {
    (void)worker();  // its AltStack first, before any kernel code runs here
    altstack_ready = true;
  }
  for (;;) {
    const unsigned long long i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= job.total) return;
    if (job.error.load(std::memory_order_relaxed) == musaSuccess) {
      sigjmp_buf jump;
      const int jumped = sigsetjmp(jump, 1);
      if (jumped == 0) {
        t_fault_jump = &jump;
        const musaError_t e = run_block(*job.k, i);
        t_fault_jump = nullptr;
        if (e != musaSuccess) note_error(job, e);
      } else {
        // Back from on_fault or trap, possibly from a fiber's stack: this thread is on its own
        // again.
        t_fault_jump = nullptr;
        Fiber::resume_thread_after_jump(worker().scheduler);
        const char* assertion = t_trap_message;
        t_trap_message = nullptr;
        if (jumped == 2) {
          note_error(job, musaErrorAssert);
          std::fprintf(stderr,
                       "[torchada sim] kernel %s: device-side assertion failed in block %llu: %s "
                       "(musaErrorAssert)\n",
                       job.k->name.c_str(), i, assertion ? assertion : "");
        } else {
          note_error(job, musaErrorIllegalAddress);
          std::fprintf(stderr,
                       "[torchada sim] kernel %s: illegal address %p in block %llu: launch failed "
                       "(musaErrorIllegalAddress)\n",
                       job.k->name.c_str(), t_fault_address, i);
        }
      }
    }
    if (job.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == job.total) {
      std::lock_guard<std::mutex> lock(job.mu);
      job.cv.notify_all();
    }
  }
}

// Helper threads, one per CPU beyond the first, started on the first launch that wants them.
class Helpers {
 public:
  static Helpers& get() {
    static Helpers* h = new Helpers;  // never destroyed: helpers may be parked at exit
    return *h;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    start_locked();
    return threads_;
  }
  void post(const std::shared_ptr<Job>& job, size_t copies) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      start_locked();
      for (size_t i = 0; i < copies; ++i) jobs_.push_back(job);
    }
    cv_.notify_all();
  }
  void after_fork_in_child() {
    new (&mu_) std::mutex;
    new (&cv_) std::condition_variable;
    jobs_.clear();
    threads_ = 0;
    started_ = false;
  }

 private:
  void start_locked() {
    if (started_) return;
    started_ = true;
    const int cpus = usable_cpus();
    for (int i = 1; i < cpus; ++i) {
      try {
        std::thread([this] { loop(); }).detach();
        ++threads_;
      } catch (...) {
        break;
      }
    }
  }
  void loop() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      run_blocks(*job);
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> jobs_;
  size_t threads_ = 0;
  bool started_ = false;
};

void helpers_after_fork_child() { Helpers::get().after_fork_in_child(); }

}  // namespace

musaError_t run_kernel(const KernelLaunch& k) {
  install_fault_handler();
  static std::once_flag fork_once;
  std::call_once(fork_once, [] { pthread_atfork(nullptr, nullptr, &helpers_after_fork_child); });

  auto job = std::make_shared<Job>();
  job->k = &k;
  job->total = static_cast<unsigned long long>(k.grid.x) * k.grid.y * k.grid.z;
  const unsigned long long threads =
      job->total * (static_cast<unsigned long long>(k.block.x) * k.block.y * k.block.z);
  if (job->total > 1 && threads >= kParallelThreads) {
    Helpers& h = Helpers::get();
    const size_t helpers = std::min<unsigned long long>(h.size(), job->total - 1);
    if (helpers > 0) h.post(job, helpers);
  }
  run_blocks(*job);
  if (job->finished.load(std::memory_order_acquire) != job->total) {
    if (!spin_until([&] { return job->finished.load(std::memory_order_acquire) == job->total; },
                    kWaitSpin)) {
      std::unique_lock<std::mutex> lock(job->mu);
      job->cv.wait(lock,
                   [&] { return job->finished.load(std::memory_order_acquire) == job->total; });
    }
  }
  const auto e = static_cast<musaError_t>(job->error.load());
  if (e == musaErrorIllegalAddress || e == musaErrorAssert) {
    int expected = musaSuccess;
    device(k.device).fault.compare_exchange_strong(expected, e);
  }
  return e;
}

}  // namespace sim

using namespace sim;

namespace {

bool valid_dims(musaSimDim3 grid, musaSimDim3 block, size_t shared) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0)
    return false;
  if (grid.x > 2147483647u || grid.y > 65535u || grid.z > 65535u) return false;
  if (block.x > 1024u || block.y > 1024u || block.z > 64u) return false;
  const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
  return threads <= kMaxThreadsPerBlock && shared <= kMaxDynamicShared;
}

// The launch's stream work: the result of a kernel is known only when it has run, as on a GPU,
// so it surfaces through the sticky error at the next synchronisation, or here when the launch
// ran at once on the caller's thread.
struct Pending {
  std::shared_ptr<KernelLaunch> launch;
  musaError_t result = musaSuccess;
};

void run_pending(void* p) {
  auto* w = static_cast<Pending*>(p);
  w->result = run_kernel(*w->launch);
  if (w->result != musaSuccess && w->result != musaErrorIllegalAddress &&
      w->result != musaErrorAssert)
    std::fprintf(stderr, "[torchada sim] kernel %s: launch failed (%s)\n", w->launch->name.c_str(),
                 w->result == musaErrorLaunchFailure
                     ? "barrier misuse: threads waiting at different barriers, or a barrier in "
                       "a kernel launched as barrier-free"
                     : "out of resources for its threads");
}

}  // namespace

extern "C" {

musaError_t musaSimLaunchKernel(const musaSimKernel* kernel, musaSimDim3 grid, musaSimDim3 block,
                                size_t sharedMem, musaStream_t stream, void* args,
                                void (*releaseArgs)(void*)) {
  // Owned from the start: refused launches release the arguments too.
  auto launch = std::make_shared<KernelLaunch>();
  launch->args = args;
  launch->release = releaseArgs;
  return api([&] {
    if (kernel == nullptr || kernel->thread == nullptr) return musaErrorInvalidValue;
    if (!valid_dims(grid, block, sharedMem)) return musaErrorInvalidConfiguration;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    const int fault = device(s->device).fault.load();
    if (fault != musaSuccess) return static_cast<musaError_t>(fault);
    launch->kernel = *kernel;
    launch->name = kernel->name != nullptr ? kernel->name : "(unnamed kernel)";
    launch->kernel.name = launch->name.c_str();
    launch->grid = grid;
    launch->block = block;
    launch->shared = sharedMem;
    launch->device = s->device;

    NodeParams p;
    p.type = musaGraphNodeTypeKernel;
    p.kernel = launch;
    musaError_t err = musaSuccess;
    if (capture_node(*s, p, &err)) return err;

    Pending now{launch};
    if (run_if_idle(*s, &run_pending, &now)) return now.result;
    auto queued = std::make_shared<Pending>(Pending{launch});
    return submit(
        *s, [queued] { run_pending(queued.get()); }, {}, nullptr);
  });
}

}  // extern "C"
