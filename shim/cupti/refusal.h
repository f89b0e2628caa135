// What the generated CUPTI stubs (shim/gen/cupti_exports.cc) jump to besides torchada's own
// functions: NVIDIA's libcupti.so.13 under the pass-through backend, or a refusal.
#pragma once

#include "gen/fn_ids.h"

namespace torchada::cupti {

// NVIDIA's function `name` (TORCHADA_BACKEND=cuda); the refusal when NVIDIA's CUPTI is missing.
void* nvidia_or_refusal(const char* name, Fn fn);
// A function returning CUPTI_ERROR_NOT_SUPPORTED, after naming `fn` once in the log.
void* refusal(Fn fn);

}  // namespace torchada::cupti
