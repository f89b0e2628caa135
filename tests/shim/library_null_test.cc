// Every cuBLAS, cuBLASLt and NCCL export of both ABIs, called through the preloaded shim on the
// simulator with NULL handles and pointers and zero sizes: none may crash, none may report
// success (a NULL handle or output can never be a completed call), and refused calls give the
// library's "not supported" code.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "library_null.h"

namespace {

void* lookup(const char* name, const char* node) { return dlvsym(RTLD_DEFAULT, name, node); }

bool ends_with(const char* s, const char* suffix) {
  const std::size_t n = std::strlen(s), m = std::strlen(suffix);
  return n >= m && std::strcmp(s + n - m, suffix) == 0;
}

// Calls for which all-zero arguments are a complete, valid request.
bool may_succeed_with_zeros(const NullRow& row) {
  // cuBLASLt's logger: a NULL callback or file, level 0 and mask 0 turn logging off, and
  // ForceDisable takes nothing (OpenFile needs a name).
  if (std::strncmp(row.name, "cublasLtLogger", 14) == 0)
    return std::strcmp(row.name, "cublasLtLoggerOpenFile") != 0;
  if (row.params == 0) return std::strstr(row.name, "Group") != nullptr;  // ncclGroupStart/End
  // Destroying or freeing nothing is a no-op, like free(NULL) (cuBLASLt descriptors, ncclMemFree).
  if (std::strncmp(row.name, "cublasLt", 8) == 0 && ends_with(row.name, "Destroy")) return true;
  if (ends_with(row.name, "ncclMemFree")) return true;
  // NCCL answers success for destroying or aborting a NULL communicator (its own tests say so).
  if (ends_with(row.name, "ncclCommDestroy") || ends_with(row.name, "ncclCommAbort")) return true;
  // A capacity of 0 is a valid setting, and there is no pointer to check.
  return std::strcmp(row.name, "cublasLtHeuristicsCacheSetCapacity") == 0;
}

bool is_nccl(const NullRow& row) { return std::strstr(row.node, "nccl") != nullptr; }

void run(const NullRow* rows, std::size_t n) {
  ASSERT_GT(n, 100u);
  for (std::size_t i = 0; i < n; ++i) {
    const NullRow& row = rows[i];
    SCOPED_TRACE(row.name);
    ASSERT_NE(lookup(row.name, row.node), nullptr) << row.name << "@" << row.node;
    const int status = row.call_zero(&lookup);
    if (may_succeed_with_zeros(row)) continue;  // it did not crash
    EXPECT_NE(status, 0) << row.name << " reported success with NULL arguments";
    if (std::strcmp(row.disposition, "unsupported") == 0) {
      // cuBLAS: CUBLAS_STATUS_NOT_SUPPORTED (15); NCCL: ncclInvalidUsage (5).
      EXPECT_EQ(status, is_nccl(row) ? 5 : 15) << row.name;
    }
  }
}

TEST(LibraryNull, Cuda13AbiExports) { run(null13::kRows, null13::kRowCount); }
TEST(LibraryNull, Cuda12AbiExports) { run(null12::kRows, null12::kRowCount); }

}  // namespace
