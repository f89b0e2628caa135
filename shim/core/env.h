// Environment translation, done once before the backend initialises: CUDA_VISIBLE_DEVICES ->
// MUSA_VISIBLE_DEVICES and CUDA_LAUNCH_BLOCKING -> MUSA_LAUNCH_BLOCKING, each only when the MUSA
// variable is unset (an explicit MUSA setting wins).
#pragma once

namespace torchada {

void translate_cuda_environment();

// "1", "true", "yes", "on" (any case) are true; unset or anything else is false.
bool env_flag(const char* name);

}  // namespace torchada
