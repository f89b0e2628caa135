// torchada-check's output: a human-readable table (default) or one JSON document (--json) whose
// shape tools/check/schema.json describes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "classify.h"
#include "tables.h"

namespace torchada::check {

struct RunSummary {
  std::vector<FileReport> files;
  uint64_t skipped = 0;  // non-ELF files met while walking directories
  Verdict overall = Verdict::kNotCuda;
};

struct TextOptions {
  bool summary_only = false;  // one line per file
};

std::string RenderText(const RunSummary& run, const Tables& tables, const TextOptions& opts);
std::string RenderJson(const RunSummary& run, const Tables& tables);
std::string RenderTables(const Tables& tables);  // --list-tables

// For output: bytes that are not printable UTF-8 become \xNN (text) / U+FFFD (JSON).
std::string Printable(const std::string& s);
std::string JsonString(const std::string& s);

}  // namespace torchada::check
