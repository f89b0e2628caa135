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
// No Python is linked: the C API is looked up in the process (absent: a C++ program, nothing
// to do). Registration goes through Py_AddPendingCall, which any thread may call, since the
// installation runs on the shim's helper thread while the main thread may hold the GIL.
#include <dlfcn.h>

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

struct PyApi {
  int (*is_initialized)();
  int (*add_pending_call)(int (*)(void*), void*);
  void* (*dict_new)();
  void* (*import_module)(const char*);
  int (*dict_set_item_string)(void*, const char*, void*);
  void* (*run_string_flags)(const char*, int, void*, void*, void*);
  void (*dec_ref)(void*);
  void (*err_clear)();
};

template <class F>
bool find(F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  return f != nullptr;
}

bool load(PyApi& api) {
  return find(api.is_initialized, "Py_IsInitialized") &&
         find(api.add_pending_call, "Py_AddPendingCall") && find(api.dict_new, "PyDict_New") &&
         find(api.import_module, "PyImport_ImportModule") &&
         find(api.dict_set_item_string, "PyDict_SetItemString") &&
         find(api.run_string_flags, "PyRun_StringFlags") && find(api.dec_ref, "Py_DecRef") &&
         find(api.err_clear, "PyErr_Clear");
}

PyApi g_api;
constexpr int kPyFileInput = 257;  // Py_file_input (Include/compile.h), stable since Python 2

// Runs on the main thread with the GIL held (a pending call). Returns 0: a failure here must not
// raise in the user's code, so the error is cleared and the drain simply not registered.
int register_drain(void*) {
  const PyApi& py = g_api;
  void* globals = py.dict_new();
  void* builtins = py.import_module("builtins");
  void* result = nullptr;
  if (globals != nullptr && builtins != nullptr &&
      py.dict_set_item_string(globals, "__builtins__", builtins) == 0)
    result = py.run_string_flags(kRegister, kPyFileInput, globals, globals, nullptr);
  if (result == nullptr) {
    py.err_clear();
    log("warn", "could not register the autograd drain at Python's exit");
  } else {
    py.dec_ref(result);
  }
  if (builtins != nullptr) py.dec_ref(builtins);
  if (globals != nullptr) py.dec_ref(globals);
  return 0;
}

}  // namespace

void register_exit_drain() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  if (!load(g_api) || g_api.is_initialized() == 0) return;  // no Python in this process
  if (g_api.add_pending_call(register_drain, nullptr) != 0)
    log("warn", "could not register the autograd drain at Python's exit (pending calls full)");
}

}  // namespace torchada::ops::bridge
