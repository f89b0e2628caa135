// Python's exit against PyTorch's autograd device threads.
//
// PyTorch (2.15) stashes a Python object (a contextvars.Context) in the thread-local state that
// every backward pass captures; a CUDA backward runs on the device's autograd thread, and that
// thread drops its last reference to the finished pass (and so the Python object) a moment after
// waking the caller. When the script ends right after a backward, that moment can come after the
// interpreter has begun to finalize: the decref waits for the GIL, Python makes the thread exit
// (pthread_exit), the unwinding meets a noexcept destructor and the process aborts with
// "terminate called without an active exception" after the script's own output. A loaded CPU
// (the simulator's work shares the cores) widens the window; NVIDIA GPUs have it too.
//
// The drain: a Python atexit callback, registered once the kernel bridge is installed, that runs
// one tiny backward on each CUDA device already holding memory, through the engine directly (no
// Python object stashed). A device thread takes it only after finishing its previous pass, so
// when it returns every earlier pass has been released, while the interpreter is intact.
//
// The registration runs through run_python_soon (python.cpp): nothing without Python.
#include <atomic>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

// The Python code run (in a dictionary of its own, so the user's __main__ is never touched).
constexpr const char* kRegister = R"PY(
import atexit

def _torchada_drain_autograd_threads():
    try:
        import torch
        if not torch.cuda.is_initialized():
            return
        from torch.autograd.variable import Variable
        for d in range(torch.cuda.device_count()):
            if torch.cuda.memory_reserved(d) == 0:
                continue
            with torch.enable_grad():
                x = torch.zeros((), device=d, requires_grad=True)
                Variable._execution_engine.run_backward(
                    (x * 1,), (torch.ones((), device=d),), False, False, (), True, True)
    except Exception:
        pass

atexit.register(_torchada_drain_autograd_threads)
)PY";

}  // namespace

void register_exit_drain() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  run_python_soon(kRegister, "the autograd drain at Python's exit");
}

}  // namespace torchada::ops::bridge
