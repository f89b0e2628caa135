// One row per exported CUDA runtime function (generated into gen/contract<abi>.cc from
// symbols/cudart.txt): how to call it and what the MUSA side must observe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

using Lookup = void* (*)(const char* name, const char* version);

// A word the mock cannot compare (a struct passed by value).
inline constexpr std::uint64_t kAny = 0xA11A11A11A11A11AULL;

struct ContractRow {
  const char* name;
  const char* disposition;           // forward, translate, shim, kernel, unsupported
  const char* target;                // the musa* function for forward/translate rows
  int out_params;                    // typed pointer outputs
  bool per_thread_stream;            // a _ptsz export
  int (*call_zero)(Lookup);          // every argument value-initialised (NULL pointers)
  int (*call_sentinel)(Lookup);      // distinct sentinel arguments
  std::vector<std::uint64_t> words;  // the sentinels as raw words, as a forwarder passes them
};

namespace contract12 {
extern const ContractRow kRows[];
extern const std::size_t kRowCount;
}  // namespace contract12
namespace contract13 {
extern const ContractRow kRows[];
extern const std::size_t kRowCount;
}  // namespace contract13

template <class T>
T zero() {
  return T{};
}
