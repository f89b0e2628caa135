// Environment translation, done once before the backend initialises: CUDA_VISIBLE_DEVICES ->
// MUSA_VISIBLE_DEVICES and CUDA_LAUNCH_BLOCKING -> MUSA_LAUNCH_BLOCKING, each only when the MUSA
// variable is unset (an explicit MUSA setting wins).
#pragma once

namespace torchada {

void translate_cuda_environment();

// The shim's sink for settings/settings.h: a malformed value or an unknown TORCHADA_* name is
// one warning line in the shim's log.
void settings_warn(const char* message);

// Start-up, once per process: warns about TORCHADA_* names no component knows and about the
// shim's own variables whose values are malformed (settings/settings.h).
void check_settings();

}  // namespace torchada
