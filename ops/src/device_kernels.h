// Which build of the device kernels a call runs: the GPU build (nvcc or mcc, torchada::kernels)
// or the host build the simulator's executor runs (torchada::host_kernels), chosen once per
// process: the host build when the simulator's runtime is loaded.
//
//   TORCHADA_KERNEL(rms_norm)(dtype, out, in, ...)
#pragma once

#include "../kernels/launch.h"

#if defined(TORCHADA_OPS_WITH_HOST_KERNELS)
namespace torchada::host_kernels {
#include "../kernels/launchers.inc"
}  // namespace torchada::host_kernels
#endif

#if defined(TORCHADA_OPS_WITH_GPU) || defined(TORCHADA_OPS_WITH_HOST_KERNELS)
#define TORCHADA_OPS_WITH_DEVICE 1
#endif

namespace torchada::ops {

// True when the host build serves the launches (the simulator is loaded in this process).
bool host_kernels_active();

}  // namespace torchada::ops

#if defined(TORCHADA_OPS_WITH_HOST_KERNELS) && defined(TORCHADA_OPS_WITH_GPU)
#define TORCHADA_KERNEL(f) \
  (::torchada::ops::host_kernels_active() ? &::torchada::host_kernels::f : &::torchada::kernels::f)
#elif defined(TORCHADA_OPS_WITH_HOST_KERNELS)
#define TORCHADA_KERNEL(f) (&::torchada::host_kernels::f)
#elif defined(TORCHADA_OPS_WITH_GPU)
#define TORCHADA_KERNEL(f) (&::torchada::kernels::f)
#endif
