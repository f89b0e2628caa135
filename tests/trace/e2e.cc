// A CUDA program run under the preloaded shim with TORCHADA_TRACE and TORCHADA_STATS set: the
// calls are found with dlsym, as the shim is the only cudart in the process.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace {

template <class F>
F find(const char* name) {
  F f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  if (f == nullptr) std::printf("missing %s\n", name);
  return f;
}

}  // namespace

int main() {
  std::printf("pid %d\n", static_cast<int>(getpid()));
  auto count = find<int (*)(int*)>("cudaGetDeviceCount");
  auto alloc = find<int (*)(void**, size_t)>("cudaMalloc");
  auto copy = find<int (*)(void*, const void*, size_t, int)>("cudaMemcpy");
  auto release = find<int (*)(void*)>("cudaFree");
  if (!count || !alloc || !copy || !release) return 1;
  int n = 0;
  if (count(&n) != 0 || n < 1) return 2;
  void* d = nullptr;
  if (alloc(&d, 4096) != 0) return 3;
  char in[4096], out[4096] = {};
  std::memset(in, 7, sizeof in);
  if (copy(d, in, sizeof in, 1) != 0 || copy(out, d, sizeof out, 2) != 0) return 4;
  if (std::memcmp(in, out, sizeof in) != 0) return 5;
  if (release(d) != 0) return 6;
  // An invalid pointer: an error the trace and the statistics must show.
  if (release(reinterpret_cast<void*>(0x10)) == 0) return 7;
  return 0;
}
