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

// What the runtime knows of the allocation containing `p` (musaErrorInvalidValue when none).
enum musaSimAllocationKind {
  musaSimAllocDevice = 0,      // musaMalloc, or a range the driver maps
  musaSimAllocHost = 1,        // musaHostAlloc / musaMallocHost
  musaSimAllocRegistered = 2,  // musaHostRegister
  musaSimAllocManaged = 3      // musaMallocManaged
};
struct musaSimAllocation {
  void* base;
  size_t size;
  int device;
  int kind;  // musaSimAllocationKind
  unsigned flags;
  unsigned long long id;  // unique over the process's life: never reused after a free
  int external;           // a range the driver registered (musaSimUpdateDeviceRanges)
};
MUSA_RT_API musaError_t musaSimGetAllocation(const void* p, struct musaSimAllocation* out);

// Primary contexts. The runtime initialises a device (CUDA: creates and retains its primary
// context) on musaSetDevice or on any call that works on it (allocation, stream creation,
// musaFree(0)...); musaDeviceReset undoes it. *active: whether device `d` is initialised.
MUSA_RT_API musaError_t musaSimDeviceContextActive(int d, int* active);
// The device whose primary context the runtime has bound to the calling thread: its current
// device once initialised, -1 before that or after musaSimBindDevice(-1).
MUSA_RT_API musaError_t musaSimThreadContext(int* d);
// The driver made a context of device `d` current on the calling thread: the runtime's current
// device becomes d without initialising it (CUDA's runtime adopts the current context). d = -1:
// the thread's context was unbound; the runtime's next call on the device binds it again.
MUSA_RT_API musaError_t musaSimBindDevice(int d);
// musaDeviceReset of device `d`, whatever the calling thread's current device.
MUSA_RT_API musaError_t musaSimResetDevice(int d);

#ifdef __cplusplus
}
#endif

#endif  // TORCHADA_SIM_RUNTIME_DRIVER_HOOKS_H
