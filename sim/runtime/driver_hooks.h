// What the simulated MUSA driver (sim/driver, libmusa.so.1) needs from the simulated runtime so
// that memory it maps with muMemMap behaves like device memory everywhere (musaMemcpy, memsets,
// pointer attributes, musaMemGetInfo). Exported from libmusart.so (the version script exports
// musa*) but not MUSA API: nothing outside the simulator calls these.
#ifndef TORCHADA_SIM_RUNTIME_DRIVER_HOOKS_H
#define TORCHADA_SIM_RUNTIME_DRIVER_HOOKS_H

#include <musa_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

// Charges `bytes` against the device's memory (musaErrorMemoryAllocation when it does not fit,
// musaErrorInvalidDevice for a bad ordinal) / gives them back.
MUSA_RT_API musaError_t musaSimChargeDeviceMemory(int device, size_t bytes);
MUSA_RT_API void musaSimReleaseDeviceMemory(int device, size_t bytes);

// Device memory the runtime did not allocate (musaFree refuses it): ranges the driver maps.
struct musaSimRange {
  void* base;
  size_t size;
  int device;
};
// Atomically forgets the ranges registered at each of remove[0..n_remove) and registers
// add[0..n_add), so a range can grow or split without a moment where it is unknown. With `drain`
// set, first waits for the work queued on every device (the removed memory may still be in use).
// musaErrorInvalidValue (and nothing changed) if a removed base is not a registered range or an
// added range overlaps an allocation that stays.
MUSA_RT_API musaError_t musaSimUpdateDeviceRanges(void* const* remove, size_t n_remove,
                                                  const struct musaSimRange* add, size_t n_add,
                                                  int drain);

// The allocation containing `p`: its base, size, device and whether it is device memory
// (musaMalloc, musaMallocManaged or a registered range) rather than host memory.
// musaErrorInvalidValue when `p` is in no allocation.
MUSA_RT_API musaError_t musaSimFindAllocation(const void* p, void** base, size_t* size, int* device,
                                              int* is_device);

#ifdef __cplusplus
}
#endif

#endif  // TORCHADA_SIM_RUNTIME_DRIVER_HOOKS_H
