// One tensor's step of the fused Adam / AdamW optimizer (torch.optim.AdamW(fused=True)): the
// arithmetic of PyTorch's fused CUDA kernel, element by element: the gradient unscaled by
// grad_scale (and stored back then), the whole step skipped when found_inf is 1, weight decay
// (decoupled for AdamW), both moments, AMSGrad's running maximum, the bias corrections of the
// step count, hyper-parameters in double and values in the compute type.
#include "memory.cuh"
#include "portable.cuh"
#include "training.h"

#include <cmath>

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

using memory::load;
using memory::store;
using training::Adam;
using training::Compute;

template <class T>
__global__ void adam_kernel(TORCHADA_PARAM(Adam) a) {
  if (a.found_inf && *a.found_inf == 1.f) return;
  const double lr = a.lr_ptr ? static_cast<double>(*a.lr_ptr) : a.lr;
  const double step = static_cast<double>(*a.step);
  const T bias_correction1 = static_cast<T>(1 - std::pow(a.beta1, step));
  const T bias_correction2_sqrt = static_cast<T>(std::sqrt(1 - std::pow(a.beta2, step)));
  const int es = memory::size_of(a.kind);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
       i += stride) {
    const int64_t off = i * es;
    T param = load<T>(a.param + off, a.kind);
    T grad = load<T>(a.grad + off, a.kind);
    if (a.grad_scale) grad /= static_cast<double>(*a.grad_scale);
    const T grad_to_store = grad;
    if (a.maximize) grad = -grad;
    T exp_avg = load<T>(a.exp_avg + off, a.kind);
    T exp_avg_sq = load<T>(a.exp_avg_sq + off, a.kind);
    if (a.weight_decay != 0) {
      if (a.adamw)
        param -= lr * a.weight_decay * param;
      else
        grad += param * a.weight_decay;
    }
    exp_avg = a.beta1 * exp_avg + (1 - a.beta1) * grad;
    exp_avg_sq = a.beta2 * exp_avg_sq + (1 - a.beta2) * grad * grad;
    const T step_size = lr / bias_correction1;
    T second = exp_avg_sq;
    if (a.amsgrad) {
      const T previous = load<T>(a.max_exp_avg_sq + off, a.kind);
      second = previous > exp_avg_sq ? previous : exp_avg_sq;
      store<T>(a.max_exp_avg_sq + off, a.kind, second);
    }
    const T denom = (std::sqrt(second) / bias_correction2_sqrt) + a.eps;
    param -= step_size * exp_avg / denom;
    store<T>(a.param + off, a.kind, param);
    if (a.grad_scale) store<T>(a.grad + off, a.kind, grad_to_store);
    store<T>(a.exp_avg + off, a.kind, exp_avg);
    store<T>(a.exp_avg_sq + off, a.kind, exp_avg_sq);
  }
}

}  // namespace

const char* adam_step(const Adam& a, void* stream) {
  if (a.n == 0) return nullptr;
  if (a.compute == Compute::kInt64) return "adam: integral compute type";
  auto s = static_cast<gpuStream_t>(stream);
  int64_t blocks = (a.n + 255) / 256;
  if (blocks > 65535) blocks = 65535;
  const unsigned grid = static_cast<unsigned>(blocks);
  if (a.compute == Compute::kDouble)
    TORCHADA_LAUNCH_PLAIN(grid, 256, 0, s, adam_kernel<double>)(a);
  else
    TORCHADA_LAUNCH_PLAIN(grid, 256, 0, s, adam_kernel<float>)(a);
  return last_error();
}

}  // namespace torchada::TORCHADA_KERNELS_NS
