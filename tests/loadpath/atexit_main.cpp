// cudart calls from every exit path a program has: an atexit handler, the destructor of a static
// object, and (in libloadpath_atexit_lib.so) an ELF destructor. PyTorch frees memory from the
// first two. Nothing may crash and the exit status must stay 0.
#include "check.h"
#include "exit_calls.h"

#include <cuda_runtime_api.h>

#include <cstdlib>

extern "C" void LoadpathFreeAtUnload(void* p);

namespace {

void* g_for_handler = nullptr;
void* g_for_static = nullptr;
cudaStream_t g_stream = nullptr;
bool g_handler_ran = false;

void AtExitHandler() {
  const char* where = "atexit handler";
  int count = -1;
  EXIT_CALL(where, cudaGetDeviceCount(&count), 3);
  EXIT_CALL(where, cudaStreamSynchronize(g_stream), 3);
  EXIT_CALL(where, cudaStreamDestroy(g_stream), 3);
  EXIT_CALL(where, cudaFree(g_for_handler), 3);
  void* p = nullptr;
  EXIT_CALL(where, cudaMalloc(&p, 4096), 3);
  if (p) EXIT_CALL(where, cudaFree(p), 3);
  EXIT_CALL(where, cudaDeviceSynchronize(), 3);
  g_handler_ran = true;
}

// Constructed before main(), i.e. before the runtime initialises, so it is destroyed after
// everything registered later, the atexit handler included.
struct StaticUser {
  ~StaticUser() {
    const char* where = "static destructor";
    if (!g_handler_ran) {
      std::printf("FAIL %s: the atexit handler did not run first\n", where);
      std::fflush(stdout);
      _exit(5);
    }
    int count = -1;
    EXIT_CALL(where, cudaGetDeviceCount(&count), 4);
    EXIT_CALL(where, cudaFree(g_for_static), 4);
    std::printf("  %s: done\n", where);
    std::fflush(stdout);
  }
} g_static_user;

}  // namespace

int main() {
  int count = -1;
  EXPECT_OK(cudaGetDeviceCount(&count));
  EXPECT_OK(cudaMalloc(&g_for_handler, 1 << 16));
  EXPECT_OK(cudaMalloc(&g_for_static, 1 << 16));
  void* for_library = nullptr;
  EXPECT_OK(cudaMalloc(&for_library, 1 << 16));
  LoadpathFreeAtUnload(for_library);
  EXPECT_OK(cudaStreamCreate(&g_stream));
  EXPECT_OK(cudaMemsetAsync(g_for_handler, 1, 1 << 16, g_stream));
  EXPECT(std::atexit(AtExitHandler) == 0);
  return loadpath::Report("atexit");
}
