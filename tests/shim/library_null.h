// One row per status-returning cuBLAS / cuBLASLt / NCCL export (generated into
// gen/libraries_null<abi>.cc from symbols/): how to call it with every argument value-initialised.
#pragma once

#include <cstddef>

using Lookup = void* (*)(const char* name, const char* version);

struct NullRow {
  const char* name;
  const char* node;         // the version node it is looked up in
  const char* disposition;  // forward, narrow, translate, unsupported
  int params;
  int (*call_zero)(Lookup);  // NULL handles and pointers, zero sizes and enum values
};

namespace null12 {
extern const NullRow kRows[];
extern const std::size_t kRowCount;
}  // namespace null12
namespace null13 {
extern const NullRow kRows[];
extern const std::size_t kRowCount;
}  // namespace null13
