// What every library bench does first: the simulator selected for the shim, then libtorchada.so
// and the simulator's own libraries (for the direct calls compared with it) loaded with dlopen.
// A library that cannot be loaded ends the bench with a line naming it.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace bench {

inline void* load(const char* path) {
  setenv("TORCHADA_BACKEND", "sim", 1);
  setenv("TORCHADA_SIM_LIB_DIR", TORCHADA_SIM_DIR, 1);
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "bench: cannot load %s: %s\n", path, dlerror());
    std::exit(1);
  }
  return h;
}

}  // namespace bench
