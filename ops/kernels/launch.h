// Launch entry points of the GPU kernels. This header is the boundary between the device code
// (kernels/*.cu, compiled by nvcc or mcc without any PyTorch header, which keeps the device
// compile fast and portable) and the host code in src/ (which includes libtorch).
//
// Every launcher takes raw pointers to contiguous data, the sizes, and an opaque stream handle
// (cudaStream_t / musaStream_t); it returns nullptr on success or a static error string.
#pragma once

#include <cstdint>

#include "elementwise.h"
#include "random.h"
#include "reduce.h"
#include "training.h"

// Each kernel source is compiled for the GPU (nvcc or mcc: torchada::kernels) and, in builds for
// a CUDA PyTorch, a second time for the host, run by the simulator's executor
// (torchada::host_kernels). The host code picks one per call (src/device_kernels.h).
#if defined(TORCHADA_KERNELS_HOST)
#define TORCHADA_KERNELS_NS host_kernels
#else
#define TORCHADA_KERNELS_NS kernels
#endif

namespace torchada::kernel_types {

enum class DType : int { kFloat32, kFloat16, kBFloat16 };
enum class Act : int { kSilu, kGeluExact, kGeluTanh };
enum class Unary : int { kNeg, kSilu, kGeluExact, kGeluTanh };

}  // namespace torchada::kernel_types

namespace torchada::TORCHADA_KERNELS_NS {
#include "launchers.inc"
}  // namespace torchada::TORCHADA_KERNELS_NS
