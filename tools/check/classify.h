// One file's verdict: each CUDA import bound to its library and version node and classified by
// the symbols/ tables; a statically linked CUDA runtime and embedded device code detected.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "elf_scan.h"
#include "tables.h"

namespace torchada::check {

enum class Category { kForwarded, kTranslated, kUnsupported, kKernel, kUnknown };
constexpr size_t kCategoryCount = 5;
const char* CategoryName(Category c);
// forward, shim -> forwarded; translate, narrow -> translated; unsupported; kernel; any other
// word -> unknown.
Category CategoryForDisposition(const std::string& disposition);

// Ordered by how much they stand in the way; the overall verdict is the maximum. will-not-load: a
// (non-weak) import torchada's replacement does not define, so the dynamic loader refuses the file
// under torchada (at once with RTLD_NOW, as Python loads extensions; else at the first call).
enum class Verdict { kNotCuda, kReplaced, kOk, kPartial, kNeedsPort, kWillNotLoad, kError };
constexpr size_t kVerdictCount = 7;
const char* VerdictName(Verdict v);
// Exit status for a verdict: 0 not-cuda/replaced/ok, 1 partial, 2 needs-port, 3 error,
// 5 will-not-load (4: usage error).
int ExitStatus(Verdict v);

struct ImportReport {
  std::string name;
  std::string library;  // soname it binds to; empty when unknown
  std::string version;  // version node; empty when unversioned
  std::string binding;  // "version": .gnu.version_r; "needed": unversioned, matched to a
                        // DT_NEEDED library by name; "none": no library could be named
  bool weak = false;
  bool undefined = false;   // libtorchada.so defines no such function in this library (version):
                            // a non-weak import of it makes the file fail to load
  std::string table;        // table file that decided, empty when none
  int line = 0;             // its row's line
  std::string abi;          // library version used to pick the row, empty when unknown
  std::string disposition;  // the row's disposition, empty when no row
  std::string target;
  std::string note;
  Category category = Category::kUnknown;
  std::string reason;  // why, for unsupported / kernel / unknown
};

struct StaticRuntime {
  bool detected = false;
  std::vector<std::string> evidence;
};

struct DeviceCode {
  bool present = false;
  uint64_t modules = 0;  // .nvFatBinSegment registration wrappers
  uint64_t kernels = 0;  // distinct kernel names in readable cubins
  bool kernels_exact = true;
  std::vector<std::string> kernel_names;  // sorted
  std::vector<std::string> architectures;
  std::vector<DeviceSection> sections;
};

struct FileReport {
  std::string path;
  Verdict verdict = Verdict::kNotCuda;
  std::string error;                 // set for kError
  std::vector<std::string> reasons;  // why this verdict, most important first
  std::string provides;              // kReplaced: the CUDA library whose ABI the file exports
  ElfScan scan;
  std::vector<ImportReport> imports;
  std::array<uint64_t, kCategoryCount> counts{};
  StaticRuntime static_runtime;
  DeviceCode device;
};

FileReport Classify(const std::string& path, ElfScan scan, const Tables& tables);
FileReport ErrorReport(const std::string& path, const std::string& error);

}  // namespace torchada::check
