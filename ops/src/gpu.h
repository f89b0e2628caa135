// Host glue for the GPU kernels: stream, device guard, dtype mapping, launch error handling.
// Only compiled when the library is built with GPU kernels (TORCHADA_OPS_WITH_GPU).
#pragma once

#include <ATen/ATen.h>

#include "device_kernels.h"

namespace torchada::ops::gpu {

// Current stream of t's device, as the vendor's native handle (cudaStream_t / musaStream_t).
void* stream_for(const at::Tensor& t);

inline kernels::DType dtype(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kHalf:
      return kernels::DType::kFloat16;
    case at::kBFloat16:
      return kernels::DType::kBFloat16;
    default:
      return kernels::DType::kFloat32;
  }
}

inline void check_launch(const char* op, const char* err) {
  TORCH_CHECK(err == nullptr, op, ": kernel launch failed: ", err);
}

}  // namespace torchada::ops::gpu
