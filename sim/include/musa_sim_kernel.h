/* The simulator's device-code executor: kernels written in portable CUDA/MUSA C++, compiled a
 * second time for the host CPU against musa_sim_device.h, and launched on a simulated stream.
 *
 * Not part of MUSA's API (a real MUSA runtime runs the same kernels compiled by mcc): the
 * simulator's libmusart exports these for code built for it. A launch is stream work like a copy:
 * queued in stream order (or run at once on the caller's thread when the stream is idle),
 * captured into a graph as a kernel node, its blocks spread over the CPU's cores. A block's
 * threads run as a plain loop when the kernel declares it never synchronises, otherwise as
 * fibers, one per thread, switched at __syncthreads() and at warp collectives (warps are
 * musaDevAttrWarpSize wide: 128). A memory fault inside a kernel ends the launch with
 * musaErrorIllegalAddress, a failed device-side assertion with musaErrorAssert, both sticky on
 * the device as on a GPU, and the process lives on.
 */
#ifndef TORCHADA_MUSA_SIM_KERNEL_H
#define TORCHADA_MUSA_SIM_KERNEL_H

#include <musa_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct musaSimDim3 {
  unsigned int x, y, z;
} musaSimDim3;

/* One simulated thread, as its kernel sees it. The executor owns it; the kernel reads it through
 * musa_sim_device.h (threadIdx, blockIdx, ...) and calls the barriers through it, so kernel code
 * links against nothing of the simulator's. */
typedef struct musaSimThread {
  musaSimDim3 threadIdx, blockIdx, blockDim, gridDim;
  unsigned int warpSize;
  unsigned int laneId;           /* linear thread index % warpSize */
  unsigned int warpId;           /* linear thread index / warpSize */
  void* dynamicShared;           /* the block's `extern __shared__` memory (sharedMem bytes) */
  unsigned long long* warpSlots; /* warpSize 8-byte slots shared by this thread's warp */
  /* Barriers. Both return once every live thread of the block (of the warp) has arrived; a
   * thread that has returned from the kernel counts as arrived. */
  void (*syncThreads)(struct musaSimThread* self);
  void (*syncWarp)(struct musaSimThread* self);
  void* executor; /* the executor's own state */
  /* A failed device-side assertion (CUDA's assert() in kernel code): ends the launch with
   * musaErrorAssert, sticky on the device as on a GPU; `message` names the condition. Does not
   * return. */
  void (*trap)(struct musaSimThread* self, const char* message);
} musaSimThread;

/* Runs one thread of the kernel (`thread`), or every thread of `t`'s block as a loop over
 * threadIdx (`block`: the kernel never synchronises; its barriers then fail the launch). */
typedef void (*musaSimKernelFn)(musaSimThread* t, void* args);

typedef struct musaSimKernel {
  const char* name; /* for messages */
  musaSimKernelFn thread;
  musaSimKernelFn block; /* NULL when the kernel synchronises: fibers */
} musaSimKernel;

/* Launches `kernel` on `stream` with `args` (the kernel's arguments, owned from now on by the
 * launch: `releaseArgs(args)` is called once no launch or graph node needs them, also when the
 * launch is refused). Errors: musaErrorInvalidValue (NULL kernel or thread function),
 * musaErrorInvalidConfiguration (a zero or oversized dimension, more than 1024 threads per
 * block, more dynamic shared memory than the device allows), the sticky fault of an earlier
 * launch, and a stream's own errors. */
MUSA_RT_API musaError_t musaSimLaunchKernel(const musaSimKernel* kernel, musaSimDim3 grid,
                                            musaSimDim3 block, size_t sharedMem,
                                            musaStream_t stream, void* args,
                                            void (*releaseArgs)(void*));

#ifdef __cplusplus
}
#endif

#endif /* TORCHADA_MUSA_SIM_KERNEL_H */
