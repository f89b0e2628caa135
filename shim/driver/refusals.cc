// What the CUDA driver exports answer when MUSA cannot serve a call: a function libmusa lacks, an
// unsupported row of symbols/driver.txt, NVIDIA device code. Each is logged (the first few times
// per function), counted for TORCHADA_STATS and the exit summary, and aborts under
// TORCHADA_STRICT=1 (core/policy.cc).
#include <atomic>
#include <cstdio>

#include "core/log.h"
#include "driver/driver.h"

namespace torchada {
namespace drv {
namespace {

// How many refusals of one kernel-loading function name their module: enough to see a pattern.
constexpr unsigned kNamedPerFunction = 8;
std::atomic<unsigned> g_named[kFnCount];

}  // namespace

CUresult missing(Fn fn) {
  note_missing(fn);
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult refuse(Fn fn, const char* why) {
  note_unsupported(fn, why);
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult no_binary(Fn fn, const char* what) {
  const auto i = static_cast<std::size_t>(fn);
  if (g_named[i].fetch_add(1, std::memory_order_relaxed) < kNamedPerFunction)
    TORCHADA_LOG(kWarn,
                 "%s(%s%s%s): NVIDIA device code (cubin/PTX/fatbinary) cannot run on MUSA; refused "
                 "with CUDA_ERROR_NO_BINARY_FOR_GPU",
                 kFnNames[i], what ? "\"" : "", what ? what : "an in-memory image or handle",
                 what ? "\"" : "");
  note_unsupported(fn, "NVIDIA device code cannot be loaded or run on MUSA");
  return CUDA_ERROR_NO_BINARY_FOR_GPU;
}

}  // namespace drv
}  // namespace torchada
