// The stream hand-off: every routine's work runs as a host function on the handle's stream
// (musaLaunchHostFunc; on the caller's thread when the stream is idle, musaSimLaunchHostFuncOrRun),
// so it is ordered with the kernels, copies and events around it exactly as a GPU library's
// kernels would be. Device memory is host memory in the simulator, so the
// work uses the pointers directly.
#include "common.h"

#include "../runtime/sim_ext.h"


namespace mublas_sim {

struct Task {
  enum class Owner {
    kSelf,    // frees itself once run
    kCaller,  // the caller waits for it, then frees it
    kHandle,  // captured into a graph, which may run it many times: freed with the handle
  };
  explicit Task(std::function<void()> f, Owner o) : fn(std::move(f)), owner(o) {}

  std::function<void()> fn;
  Owner owner;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

namespace {

void run_task(void* p) {
  auto* t = static_cast<Task*>(p);
  try {
    t->fn();
  } catch (...) {  // the routines do not throw; nothing may unwind into the runtime
  }
  switch (t->owner) {
    case Task::Owner::kSelf:
      delete t;
      break;
    case Task::Owner::kCaller: {
      std::lock_guard<std::mutex> lock(t->mu);
      t->done = true;
      t->cv.notify_all();  // under the lock: the waiter frees the task once it holds it
      break;
    }
    case Task::Owner::kHandle:
      break;
  }
}

}  // namespace

FaultSite fault_site(mublasHandle_t h, const char* routine) {
  FaultSite f;
  f.routine = routine;
  if (h == nullptr || h->stream == nullptr ||
      musaStreamGetDevice(h->stream, &f.device) != musaSuccess)
    musaGetDevice(&f.device);
  return f;
}

bool operand_ok(const FaultSite& site, const char* operand, const void* p, size_t bytes) {
  return bytes == 0 ||
         musaSimCheckOperand(site.device, site.routine, operand, p, bytes) == musaSuccess;
}

mublasStatus_t enqueue(mublasHandle_t h, std::function<void()> fn, Wait wait) {
  musaStreamCaptureStatus cs = musaStreamCaptureStatusNone;
  if (musaStreamIsCapturing(h->stream, &cs) != musaSuccess) return MUBLAS_STATUS_INTERNAL_ERROR;
  const bool capturing = cs != musaStreamCaptureStatusNone;
  const bool sync = wait == Wait::kIfHostMode && h->pointer_mode == MUBLAS_POINTER_MODE_HOST;
  // A result for the host cannot come from work that only runs when a graph is launched.
  if (sync && capturing) return MUBLAS_STATUS_NOT_IMPLEMENTED;

  const auto owner =
      capturing ? Task::Owner::kHandle : (sync ? Task::Owner::kCaller : Task::Owner::kSelf);
  auto task = std::make_unique<Task>(std::move(fn), owner);
  Task* raw = task.get();
  if (capturing) {
    std::lock_guard<std::mutex> lock(h->captured_mu);
    h->captured.push_back(std::move(task));
  }
  // A self-owned task may run (and free itself) before the launch returns, on this thread when
  // the stream is idle (musaSimLaunchHostFuncOrRun): ownership passes to run_task first.
  if (owner == Task::Owner::kSelf) task.release();
  const musaError_t launched = capturing ? musaLaunchHostFunc(h->stream, run_task, raw)
                                         : musaSimLaunchHostFuncOrRun(h->stream, run_task, raw);
  if (launched != musaSuccess) {
    if (capturing) {
      std::lock_guard<std::mutex> lock(h->captured_mu);
      auto& c = h->captured;
      c.erase(std::find_if(c.begin(), c.end(), [raw](const auto& t) { return t.get() == raw; }));
    }
    if (owner == Task::Owner::kSelf) delete raw;  // never ran
    return MUBLAS_STATUS_INTERNAL_ERROR;          // otherwise `task` (not captured) is freed here
  }
  if (owner == Task::Owner::kCaller) {
    std::unique_lock<std::mutex> lock(raw->mu);
    raw->cv.wait(lock, [raw] { return raw->done; });
  }
  return MUBLAS_STATUS_SUCCESS;
}

}  // namespace mublas_sim

_mublasHandle_t::_mublasHandle_t() = default;
_mublasHandle_t::~_mublasHandle_t() = default;
