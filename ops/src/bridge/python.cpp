// Python code run from the kernel bridge's installation (exit_drain.cpp, torch_patches.cpp).
//
// No Python is linked: the C API is looked up in the process (absent: a C++ program, nothing to
// do). The code runs through Py_AddPendingCall, which any thread may call, since the installation
// runs on the shim's helper thread while the main thread may hold the GIL: the main thread runs
// it at its next check, with the GIL, in a dictionary of its own (the user's __main__ is never
// touched). A failure there is logged and cleared, never raised in the user's code.
#include <dlfcn.h>

#include <mutex>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

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

const PyApi* api() {
  static PyApi a{};
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] { ok = load(a); });
  return ok ? &a : nullptr;
}

constexpr int kPyFileInput = 257;  // Py_file_input (Include/compile.h), stable since Python 2

struct Snippet {
  const char* code;
  const char* what;
};

// Runs on the main thread with the GIL held (a pending call). Returns 0: a failure here must not
// raise in the user's code, so the error is cleared and logged.
int run(void* arg) {
  const auto* s = static_cast<const Snippet*>(arg);
  const PyApi& py = *api();
  void* globals = py.dict_new();
  void* builtins = py.import_module("builtins");
  void* result = nullptr;
  if (globals != nullptr && builtins != nullptr &&
      py.dict_set_item_string(globals, "__builtins__", builtins) == 0)
    result = py.run_string_flags(s->code, kPyFileInput, globals, globals, nullptr);
  if (result == nullptr) {
    py.err_clear();
    log("warn", "could not set up %s", s->what);
  } else {
    py.dec_ref(result);
  }
  if (builtins != nullptr) py.dec_ref(builtins);
  if (globals != nullptr) py.dec_ref(globals);
  delete s;
  return 0;
}

}  // namespace

void run_python_soon(const char* code, const char* what) {
  const PyApi* py = api();
  if (py == nullptr || py->is_initialized() == 0) return;  // no Python in this process
  auto* s = new Snippet{code, what};
  if (py->add_pending_call(run, s) != 0) {
    delete s;
    log("warn", "could not set up %s (Python's pending calls are full)", what);
  }
}

}  // namespace torchada::ops::bridge
