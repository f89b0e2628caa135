// The lazy resolver of a replacement library's forwarding stubs (see replgen.cc for which names
// get one and lazy_x86_64.S for the calling side).
//
// A stub's target is libtorchada.so's definition of the same name in this library's version node
// (cudaMemAdvise@libcudart.so.12). It is looked up with dlvsym on libtorchada.so's own handle:
// a lookup through the global scope would find this library's stub first (same name, same
// version) whenever libtorchada.so is not preloaded, and call itself forever.
//
// Compiled once per replacement library with its generated <soname>.names.h. No constructor, no
// C++ runtime: this runs on the first call of each stub only.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include TORCHADA_REPL_NAMES_HEADER

extern "C" {
extern void* torchada_repl_slots[];
__attribute__((visibility("hidden"))) void* torchada_repl_resolve(unsigned index);
}

namespace {

void say(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

[[noreturn]] void fatal(const char* what, const char* name) {
  say("[torchada] " TORCHADA_REPL_SONAME " (torchada's replacement library): ");
  say(what);
  if (name != nullptr) {
    say(" ");
    say(name);
    say("@" TORCHADA_REPL_NODE);
  }
  say(". The replacement libraries and libtorchada.so come from different builds: reinstall "
      "torchada, or rebuild it.\n");
  std::abort();
}

// A function, not an inline comparison: with no stubs the count is 0 and `index >= 0u` would be
// a constant the compiler warns about.
bool in_range(unsigned index, unsigned count) { return index < count; }

void* torchada_handle() {
  static void* handle = nullptr;
  void* h = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
  if (h == nullptr) {
    // Already loaded: it is this library's DT_NEEDED entry, matched here by its SONAME.
    h = dlopen("libtorchada.so", RTLD_NOW | RTLD_NOLOAD);
    if (h != nullptr) __atomic_store_n(&handle, h, __ATOMIC_RELEASE);
  }
  return h;
}

}  // namespace

void* torchada_repl_resolve(unsigned index) {
  if (!in_range(index, TORCHADA_REPL_COUNT))
    fatal("internal error: stub index out of range", nullptr);
  void* lib = torchada_handle();
  if (lib == nullptr)
    fatal("libtorchada.so is not loaded; cannot resolve", kTorchadaReplNames[index]);
  void* fn = dlvsym(lib, kTorchadaReplNames[index], TORCHADA_REPL_NODE);
  if (fn == nullptr) fatal("libtorchada.so does not define", kTorchadaReplNames[index]);
  // Racing first calls store the same value; the stub's plain load of the slot sees either the
  // lazy entry (and comes here again) or the target.
  __atomic_store_n(&torchada_repl_slots[index], fn, __ATOMIC_RELEASE);
  return fn;
}
