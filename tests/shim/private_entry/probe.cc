// Calls a private cuBLASLt entry point (cublasLtLegacyGemmSSS: exported by NVIDIA's library for
// libcublas, declared by no header) through libtorchada.so, preloaded, from two threads.
//   probe passthrough   TORCHADA_BACKEND=cuda with a stand-in NVIDIA library first on the path:
//                       the stand-in's checksum of the arguments must come back (every argument
//                       register and the stack arguments handed on untouched)
//   probe refused       any MUSA backend: CUBLAS_STATUS_NOT_SUPPORTED (15), named in the log
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "checksum.h"

using Private = int (*)(int, long, double, const void*, int, float, int, double, long, long, int);

namespace {

const char g_marker[32] = {};  // its address is one of the arguments

int call(Private f, int seed) {
  return f(seed, 1234567890123L + seed, 2.5 + seed, g_marker + seed, -7, 0.25f, 42 + seed, -3.75,
           -98765432109L, 555555555555L + seed, 9 + seed);
}

int expected(int seed) {
  return private_entry_checksum(seed, 1234567890123L + seed, 2.5 + seed, g_marker + seed, -7, 0.25f,
                                42 + seed, -3.75, -98765432109L, 555555555555L + seed, 9 + seed);
}

}  // namespace

int main(int argc, char** argv) {
  const bool passthrough = argc > 1 && std::strcmp(argv[1], "passthrough") == 0;
  auto f = reinterpret_cast<Private>(dlsym(RTLD_DEFAULT, "cublasLtLegacyGemmSSS"));
  Dl_info info{};
  if (f == nullptr || dladdr(reinterpret_cast<void*>(f), &info) == 0 ||
      std::strstr(info.dli_fname, "libtorchada.so") == nullptr) {
    std::printf("FAIL cublasLtLegacyGemmSSS does not resolve to libtorchada.so (%s)\n",
                f ? info.dli_fname : "not found");
    return 1;
  }
  int failures = 0;
  auto check = [&](int seed) {
    const int got = call(f, seed);
    const int want = passthrough ? expected(seed) : 15;
    if (got != want) {
      std::printf("FAIL seed %d: %d, expected %d\n", seed, got, want);
      ++failures;
    }
  };
  check(0);
  check(3);
  std::thread t([&] { check(11); });
  t.join();
  if (failures == 0) std::printf("private_entry %s: all checks passed\n", argv[1]);
  return failures == 0 ? 0 : 1;
}
