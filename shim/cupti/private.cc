// The ops library's way in (node TORCHADA_PRIVATE_1 of libtorchada.so, symbols/gen_cupti.py):
// its device kernels and the kernel bridge bracket each operator's work with these, found by
// dlsym, so that torch.profiler shows them on the device's rows.
#include <cstdint>

#include "cupti/activity.h"

#define TORCHADA_PRIVATE_EXPORT extern "C" __attribute__((visibility("default")))

// The flag to test before calling begin (true while a CUPTI client records device work).
TORCHADA_PRIVATE_EXPORT const std::atomic<bool>* torchada_activity_flag() {
  return &torchada::activity::detail::g_recording;
}

// work: 0 a device kernel (timed by events on `stream`), 1 work the host runs for `stream` (timed
// on the host). name: what the device row shows. Its runtime record is a cudaLaunchKernel.
TORCHADA_PRIVATE_EXPORT std::uint64_t torchada_activity_begin(int work, const char* name,
                                                              void* stream) {
  torchada::activity::Launch l;
  l.work = work == 1 ? torchada::activity::Work::kHost : torchada::activity::Work::kKernel;
  l.name = name;
  l.stream = stream;
  return torchada::activity::begin(l);
}

// keep = 0: the work did not happen (a device kernel declined the call): no record.
TORCHADA_PRIVATE_EXPORT void torchada_activity_end(std::uint64_t token, int keep) {
  torchada::activity::end(token, keep != 0);
}
