// Names by number, generated from NVIDIA's CUPTI headers (shim/gen/cupti_cbids.cc).
#pragma once

namespace torchada::cupti {

struct CallbackName {
  unsigned id;
  const char* name;
};
// Sorted by id. Runtime and driver callback ids keep NVIDIA's _vNNNN suffix
// ("cudaLaunchKernel_v7000"), as cuptiGetCallbackName answers them.
extern const CallbackName kRuntimeCallbacks[];
extern const unsigned kRuntimeCallbacksCount;
extern const CallbackName kDriverCallbacks[];
extern const unsigned kDriverCallbacksCount;
// CUptiResult's enumerators ("CUPTI_ERROR_NOT_SUPPORTED").
extern const CallbackName kResultNames[];
extern const unsigned kResultNamesCount;

// The name of `id` in a sorted table, or null.
const char* find_name(const CallbackName* table, unsigned count, unsigned id);

}  // namespace torchada::cupti
