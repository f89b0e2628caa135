// Child process of bench_forwarding. With an argument: times its first cudaGetDeviceCount (found
// through the global scope, i.e. the preloaded shim) and prints the nanoseconds. Without: exits.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>

int main(int argc, char**) {
  if (argc < 2) return 0;
  auto count = reinterpret_cast<int (*)(int*)>(dlsym(RTLD_DEFAULT, "cudaGetDeviceCount"));
  if (count == nullptr) return 1;
  int n = 0;
  auto t0 = std::chrono::steady_clock::now();
  int rc = count(&n);
  auto t1 = std::chrono::steady_clock::now();
  std::printf("%lld\n", static_cast<long long>(
                            std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
  return rc;
}
