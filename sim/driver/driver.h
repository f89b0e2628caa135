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

// The device of the calling thread's current context (MUSA_ERROR_INVALID_CONTEXT when none is
// current): the driver's calls that work in the current context check it first.
MUresult current_context_device(int* device);

// The muMemMap mapping containing `p` (vmm.cc).
bool find_mapping(uintptr_t p, uintptr_t* base, size_t* size);

// The muMemAddressReserve reservation containing `p` and, when mapped there, its mapping and the
// allocation behind it (vmm.cc). False when `p` is in no reservation.
struct VmmInfo {
  uintptr_t reserve_base = 0;
  size_t reserve_size = 0;
  bool mapped = false;
  uintptr_t map_base = 0;
  size_t map_size = 0;
  unsigned long long handle_types = 0;  // MUmemAllocationHandleType bits it may be exported as
  unsigned long long alloc_id = 0;      // the allocation handle's value, unique in the process
};
bool find_vmm(uintptr_t p, VmmInfo* out);

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
