// Internal to the simulated MUSA driver (libmusa.so.1): initialisation state, the translation of
// the simulated runtime's errors into MUresult, and the guard every entry point runs in.
#ifndef TORCHADA_SIM_DRIVER_DRIVER_H
#define TORCHADA_SIM_DRIVER_DRIVER_H

#include <musa.h>
#include <musa_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace simdrv {

// True once muInit(0) succeeded in this process.
bool initialized();

// The driver result for a runtime error (the codes the two APIs share have equal values).
MUresult from_runtime(musaError_t e);

bool valid_device(int ordinal);

// Device d's primary context (null for an ordinal out of range), and the device of a context
// (-1 for anything that is not a primary context).
MUcontext primary_context(int device);
int context_device(MUcontext ctx);

// The muMemMap mapping containing `p` (vmm.cc).
bool find_mapping(uintptr_t p, uintptr_t* base, size_t* size);

// Runs an entry point's body: MUSA_ERROR_NOT_INITIALIZED before muInit, exceptions mapped to
// result codes (nothing escapes through the C ABI).
template <class F>
MUresult api(F&& body) noexcept {
  if (!initialized()) return MUSA_ERROR_NOT_INITIALIZED;
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return MUSA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return MUSA_ERROR_UNKNOWN;
  }
}

}  // namespace simdrv

#endif  // TORCHADA_SIM_DRIVER_DRIVER_H
