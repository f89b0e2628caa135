// The device-code executor (executor.cc): host-compiled kernels (musa_sim_kernel.h) run block by
// block over the CPU's cores.
#ifndef TORCHADA_SIM_RUNTIME_EXECUTOR_H
#define TORCHADA_SIM_RUNTIME_EXECUTOR_H

#include <musa_sim_kernel.h>

#include <string>

namespace sim {

// One launch: what a stream runs, and what a captured graph keeps for each replay.
struct KernelLaunch {
  musaSimKernel kernel{};
  std::string name;
  musaSimDim3 grid{}, block{};
  size_t shared = 0;
  int device = 0;
  void* args = nullptr;
  void (*release)(void*) = nullptr;

  KernelLaunch() = default;
  KernelLaunch(const KernelLaunch&) = delete;
  KernelLaunch& operator=(const KernelLaunch&) = delete;
  ~KernelLaunch() {
    if (release != nullptr) release(args);
  }
};

// Runs every block of `k` on this thread and the executor's helpers; returns when all are done.
// A memory fault in the kernel returns musaErrorIllegalAddress, a failed device-side assertion
// musaErrorAssert, each made the device's sticky error; a barrier misuse (a barrier in a kernel
// launched as barrier-free, threads waiting at different barriers) returns musaErrorLaunchFailure.
musaError_t run_kernel(const KernelLaunch& k);

}  // namespace sim

#endif  // TORCHADA_SIM_RUNTIME_EXECUTOR_H
