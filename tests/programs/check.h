// Tiny self-check helpers for the CUDA programs in this folder.
//
// These programs are ordinary CUDA applications: they include only NVIDIA's headers, so that
// what runs under the shim is exactly what a user's binary would do. A failed CUDA call aborts
// the program (later steps depend on it); a failed comparison is counted so that one run
// reports every mismatch, and main() returns Report().
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace check {

inline int& Failures() {
  static int failures = 0;
  return failures;
}

[[noreturn]] inline void CudaFailed(const char* expr, cudaError_t err, const char* file, int line) {
  std::fprintf(stderr, "FAIL %s:%d: %s returned %d (%s: %s)\n", file, line, expr,
               static_cast<int>(err), cudaGetErrorName(err), cudaGetErrorString(err));
  std::exit(1);
}

inline void Expect(bool ok, const char* what, const char* file, int line) {
  if (ok) {
    std::printf("  ok   %s\n", what);
  } else {
    std::printf("  FAIL %s (%s:%d)\n", what, file, line);
    ++Failures();
  }
}

// Expects a specific error code; prints both names so a mismatch is readable.
inline void ExpectErr(cudaError_t got, cudaError_t want, const char* expr, const char* file,
                      int line) {
  if (got == want) {
    std::printf("  ok   %s == %s\n", expr, cudaGetErrorName(want));
  } else {
    std::printf("  FAIL %s returned %d (%s), expected %d (%s) (%s:%d)\n", expr,
                static_cast<int>(got), cudaGetErrorName(got), static_cast<int>(want),
                cudaGetErrorName(want), file, line);
    ++Failures();
  }
}

// Whether device 0 is NVIDIA's (its name starts with "NVIDIA"): the program runs natively, or on
// torchada's cuda pass-through, and NVIDIA's libraries answer. A few checks are of torchada's own
// answers where NVIDIA's libraries differ by design or define none (a refusal that MUSA's interface
// forces, a buffer NVIDIA would need and the test cannot give); those are skipped there, saying
// why, so that every other check is also checked against NVIDIA.
inline bool NvidiaDevice() {
  cudaDeviceProp p{};
  return cudaGetDeviceProperties(&p, 0) == cudaSuccess && std::strncmp(p.name, "NVIDIA", 6) == 0;
}

// Device 0's compute capability as major * 10 + minor (0 if it cannot be read).
inline int ComputeCapability() {
  cudaDeviceProp p{};
  return cudaGetDeviceProperties(&p, 0) == cudaSuccess ? p.major * 10 + p.minor : 0;
}

inline void Skip(const char* what, const char* why) { std::printf("  skip %s: %s\n", what, why); }

inline int Report(const char* program) {
  if (Failures() == 0) {
    std::printf("%s: all checks passed\n", program);
    return 0;
  }
  std::printf("%s: %d check(s) FAILED\n", program, Failures());
  return 1;
}

}  // namespace check

#define CUDA_CHECK(expr)                                                                     \
  do {                                                                                       \
    cudaError_t check_err_ = (expr);                                                         \
    if (check_err_ != cudaSuccess) check::CudaFailed(#expr, check_err_, __FILE__, __LINE__); \
  } while (0)

#define EXPECT(cond) check::Expect(static_cast<bool>(cond), #cond, __FILE__, __LINE__)
// The same with a description of its own instead of the condition's text.
#define EXPECT_TRUE_MSG(cond, what) check::Expect(static_cast<bool>(cond), what, __FILE__, __LINE__)
#define EXPECT_ERR(expr, want) check::ExpectErr((expr), (want), #expr, __FILE__, __LINE__)
