// ELF destructor that uses cudart. The loader runs destructors in the reverse order of the
// constructors, so this one runs after the preloaded shim's destructor: the shim must not have
// torn down what its entry points use.
#include "exit_calls.h"

#include <cuda_runtime_api.h>

namespace {

void* g_buffer = nullptr;

__attribute__((destructor)) void UseCudartInDestructor() {
  const char* where = "library destructor";
  int count = -1;
  EXIT_CALL(where, cudaGetDeviceCount(&count), 6);
  if (g_buffer) EXIT_CALL(where, cudaFree(g_buffer), 6);
  std::printf("  %s: done\n", where);
  std::fflush(stdout);
}

}  // namespace

// Hands the library a device buffer to free at unload.
extern "C" __attribute__((visibility("default"))) void LoadpathFreeAtUnload(void* p) {
  g_buffer = p;
}
