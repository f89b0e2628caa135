// Self-check helpers for the load-path programs. They print error codes as numbers only: some of
// these programs do not link cudart at all, so the header must not call into it.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace loadpath {

inline int& Failures() {
  static int failures = 0;
  return failures;
}

inline void Expect(bool ok, const char* what, const char* file, int line) {
  std::printf("  %s %s", ok ? "ok  " : "FAIL", what);
  if (!ok) {
    std::printf(" (%s:%d)", file, line);
    ++Failures();
  }
  std::printf("\n");
  std::fflush(stdout);
}

// Checks that a runtime call returned 0 (cudaSuccess); returns whether it did.
inline bool ExpectOk(int rc, const char* expr, const char* file, int line) {
  if (rc == 0) {
    std::printf("  ok   %s\n", expr);
  } else {
    std::printf("  FAIL %s returned %d (%s:%d)\n", expr, rc, file, line);
    ++Failures();
  }
  std::fflush(stdout);
  return rc == 0;
}

inline int Report(const char* program) {
  std::printf("%s: %s\n", program, Failures() == 0 ? "all checks passed" : "checks FAILED");
  return Failures() == 0 ? 0 : 1;
}

}  // namespace loadpath

#define EXPECT(cond) loadpath::Expect(static_cast<bool>(cond), #cond, __FILE__, __LINE__)
#define EXPECT_OK(expr) loadpath::ExpectOk(static_cast<int>(expr), #expr, __FILE__, __LINE__)
