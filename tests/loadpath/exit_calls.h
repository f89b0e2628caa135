// Checks for cudart calls made while the process exits. NVIDIA's runtime may already have torn
// itself down at that point and then answers cudaErrorCudartUnloading (4); anything else but
// success is a failure. Exit paths cannot return an error, so they end the process with a
// distinct status instead.
#pragma once

#include <unistd.h>

#include <cstdio>

namespace loadpath {

constexpr int kCudartUnloading = 4;

inline void ExitCall(int rc, const char* where, const char* expr, int fail_status) {
  std::printf("  %s: %s -> %d\n", where, expr, rc);
  std::fflush(stdout);
  if (rc != 0 && rc != kCudartUnloading) {
    std::printf("FAIL %s: %s returned %d\n", where, expr, rc);
    std::fflush(stdout);
    _exit(fail_status);
  }
}

}  // namespace loadpath

#define EXIT_CALL(where, expr, status) \
  loadpath::ExitCall(static_cast<int>(expr), where, #expr, status)
