// Activation functions in float, shared by the fused gate kernels and the elementwise overrides.
#pragma once

#include "portable.cuh"

namespace torchada::TORCHADA_KERNELS_NS {

inline __device__ float silu(float x) { return x / (1.f + expf(-x)); }
inline __device__ float gelu_exact(float x) {
  return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
}
inline __device__ float gelu_tanh(float x) {
  const float k = 0.79788456080286536f;  // sqrt(2 / pi)
  return 0.5f * x * (1.f + tanhf(k * (x + 0.044715f * x * x * x)));
}

// The activation is a template parameter so each kernel instance has it inlined, not branched on.
template <int A>
inline __device__ float activate(float x) {
  if constexpr (A == static_cast<int>(Act::kSilu))
    return silu(x);
  else if constexpr (A == static_cast<int>(Act::kGeluExact))
    return gelu_exact(x);
  else
    return gelu_tanh(x);
}

}  // namespace torchada::TORCHADA_KERNELS_NS
