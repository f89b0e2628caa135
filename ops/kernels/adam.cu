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

// Element loads and stores: plain for float tensors (the common case), converting otherwise.
template <class T, bool Float>
__device__ __forceinline__ T get(const char* p, training::Kind k) {
  if constexpr (Float)
    return static_cast<T>(*reinterpret_cast<const float*>(p));
  else
    return load<T>(p, k);
}
template <class T, bool Float>
__device__ __forceinline__ void put(char* p, training::Kind k, T v) {
  if constexpr (Float)
    *reinterpret_cast<float*>(p) = static_cast<float>(v);
  else
    store<T>(p, k, v);
}

// The bias corrections of step `step`: 1 - beta1^step and sqrt(1 - beta2^step).
template <class T>
struct BiasCorrections {
  T first, second_sqrt;
};
template <class T>
__device__ __forceinline__ BiasCorrections<T> bias_corrections(double beta1, double beta2,
                                                               double step) {
  return {static_cast<T>(1 - std::pow(beta1, step)),
          static_cast<T>(std::sqrt(1 - std::pow(beta2, step)))};
}

template <class T, bool Float>
__global__ void adam_kernel(TORCHADA_PARAM(Adam) params) {
#if defined(TORCHADA_KERNELS_HOST)
  // A local copy: stores through the tensors' pointers cannot change it, so the compiler keeps
  // the hyper-parameters in registers.
  const Adam a = params;
#else
  const Adam& a = params;
#endif
  if (a.found_inf && *a.found_inf == 1.f) return;
  // Per thread, not per element: the step count and the learning rate live on the device.
  const double lr = a.lr_ptr ? static_cast<double>(*a.lr_ptr) : a.lr;
  const double step = static_cast<double>(*a.step);
#if defined(TORCHADA_KERNELS_HOST)
  // Two pow() per thread cost more than the thread's elements on a CPU: each executor thread
  // keeps the last step's corrections (the same values, computed once).
  static thread_local double cached[3] = {-1, 0, 0};
  static thread_local BiasCorrections<T> corrections{};
  if (cached[0] != step || cached[1] != a.beta1 || cached[2] != a.beta2) {
    corrections = bias_corrections<T>(a.beta1, a.beta2, step);
    cached[0] = step;
    cached[1] = a.beta1;
    cached[2] = a.beta2;
  }
#else
  const BiasCorrections<T> corrections = bias_corrections<T>(a.beta1, a.beta2, step);
#endif
  const T bias_correction1 = corrections.first;
  const T bias_correction2_sqrt = corrections.second_sqrt;
  const T step_size = lr / bias_correction1;
  const double grad_scale = a.grad_scale ? static_cast<double>(*a.grad_scale) : 1.0;
  const int es = memory::size_of(a.kind);
#if defined(TORCHADA_KERNELS_HOST)
  // The executor: a contiguous run of elements per thread (the grid-stride order would touch a
  // new cache line of every operand for every element).
  const int64_t threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t per_thread = (a.n + threads - 1) / threads;
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * per_thread;
  const int64_t last = first + per_thread < a.n ? first + per_thread : a.n;
  for (int64_t i = first; i < last; ++i) {
#else
  TORCHADA_GRID_STRIDE(i, a.n) {
#endif
    const int64_t off = i * es;
    T param = get<T, Float>(a.param + off, a.kind);
    T grad = get<T, Float>(a.grad + off, a.kind);
    if (a.grad_scale) grad /= grad_scale;
    const T grad_to_store = grad;
    if (a.maximize) grad = -grad;
    T exp_avg = get<T, Float>(a.exp_avg + off, a.kind);
    T exp_avg_sq = get<T, Float>(a.exp_avg_sq + off, a.kind);
    if (a.weight_decay != 0) {
      if (a.adamw)
        param -= lr * a.weight_decay * param;
      else
        grad += param * a.weight_decay;
    }
    exp_avg = a.beta1 * exp_avg + (1 - a.beta1) * grad;
    exp_avg_sq = a.beta2 * exp_avg_sq + (1 - a.beta2) * grad * grad;
    T second = exp_avg_sq;
    if (a.amsgrad) {
      const T previous = get<T, Float>(a.max_exp_avg_sq + off, a.kind);
      second = previous > exp_avg_sq ? previous : exp_avg_sq;
      put<T, Float>(a.max_exp_avg_sq + off, a.kind, second);
    }
    const T denom = (std::sqrt(second) / bias_correction2_sqrt) + a.eps;
    param -= step_size * exp_avg / denom;
    put<T, Float>(a.param + off, a.kind, param);
    if (a.grad_scale) put<T, Float>(a.grad + off, a.kind, grad_to_store);
    put<T, Float>(a.exp_avg + off, a.kind, exp_avg);
    put<T, Float>(a.exp_avg_sq + off, a.kind, exp_avg_sq);
  }
}

// Elements per thread (at least): the bias corrections cost two pow() a thread.
#if defined(TORCHADA_KERNELS_HOST)
constexpr int64_t kPerThread = 64;
#else
constexpr int64_t kPerThread = 8;
#endif

}  // namespace

const char* adam_step(const Adam& a, void* stream) {
  if (a.n == 0) return nullptr;
  if (a.compute == Compute::kInt64) return "adam: integral compute type";
  auto s = static_cast<gpuStream_t>(stream);
  int64_t blocks = (a.n + 256 * kPerThread - 1) / (256 * kPerThread);
  if (blocks > 65535) blocks = 65535;
  const unsigned grid = static_cast<unsigned>(blocks);
  if (a.compute == Compute::kDouble)
    TORCHADA_LAUNCH_PLAIN(grid, 256, 0, s, adam_kernel<double, false>)(a);
  else if (a.kind == training::Kind::kFloat32)
    TORCHADA_LAUNCH_PLAIN(grid, 256, 0, s, adam_kernel<float, true>)(a);
  else
    TORCHADA_LAUNCH_PLAIN(grid, 256, 0, s, adam_kernel<float, false>)(a);
  return last_error();
}

}  // namespace torchada::TORCHADA_KERNELS_NS
