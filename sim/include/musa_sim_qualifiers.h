// The CUDA/MUSA function and variable qualifiers as host C++, for kernel source compiled for the
// simulator's executor (musa_sim_device.h has the rest). Include it before any CUDA header: those
// keep qualifiers that are already defined.
#ifndef TORCHADA_MUSA_SIM_QUALIFIERS_H
#define TORCHADA_MUSA_SIM_QUALIFIERS_H

#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static thread_local
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __grid_constant__

#endif  // TORCHADA_MUSA_SIM_QUALIFIERS_H
