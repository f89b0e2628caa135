#include "core/kernels.h"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "core/log.h"

namespace torchada {
namespace {

struct Kernel {
  std::string name;
  bool refused = false;
};

struct Registry {
  std::mutex mu;
  std::unordered_map<const void*, Kernel> kernels;
  unsigned fat_binaries = 0;
};

// Leaked on purpose: registrations and unregistrations run in static constructors/destructors of
// other libraries, in any order relative to ours.
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

std::string demangle(const char* mangled) {
  if (mangled == nullptr) return "?";
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return mangled;
  std::string out(d);
  std::free(d);
  return out;
}

}  // namespace

void** register_fat_binary(const void* fat_cubin) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  ++r.fat_binaries;
  // The handle only has to be unique and dereferenceable as void*: nvcc code stores it.
  void** handle = new (std::nothrow) void*[1];
  if (handle) handle[0] = const_cast<void*>(fat_cubin);
  TORCHADA_LOG(kDebug, "fat binary %p registered (NVIDIA device code: recorded, not loaded)",
               fat_cubin);
  return handle;
}

void unregister_fat_binary(void** handle) {
  (void)handle;  // kept: kernels registered under it may still be named in late log lines
}

void register_kernel(void** fat_handle, const void* host_fun, const char* device_name) {
  (void)fat_handle;
  Registry& r = registry();
  std::string name = demangle(device_name);
  std::lock_guard<std::mutex> lock(r.mu);
  r.kernels[host_fun].name = std::move(name);
}

KernelInfo lookup_kernel(const void* host_fun) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.kernels.find(host_fun);
  if (it == r.kernels.end()) return {nullptr, true};
  bool first = !it->second.refused;
  it->second.refused = true;
  return {it->second.name.c_str(), first};
}

const char* kernel_name(const void* host_fun) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.kernels.find(host_fun);
  return it == r.kernels.end() ? nullptr : it->second.name.c_str();
}

void kernels_before_fork() { registry().mu.lock(); }
void kernels_after_fork(bool child) {
  Registry& r = registry();
  if (child)
    new (&r.mu) std::mutex();  // the child has one thread: a fresh, unlocked mutex
  else
    r.mu.unlock();
}

}  // namespace torchada
