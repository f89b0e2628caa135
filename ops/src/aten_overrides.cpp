// Kernels that replace aten::neg, aten::silu and aten::gelu for the backend key chosen at load
// time (see registration.cpp). They take contiguous float32/float16/bfloat16 tensors; every other
// input goes to the stock kernel, so an override never narrows what the operator accepts.
// aten::neg is the worked example from the original torchada docs; silu and gelu are the
// activations whose stock kernels compute in the storage type's vector units on some backends.
#include <ATen/Parallel.h>
#include <c10/util/string_view.h>  // the generated *_dispatch.h headers use it without including it
#include <ATen/ops/gelu_cpu_dispatch.h>
#include <ATen/ops/neg_cpu_dispatch.h>
#include <ATen/ops/silu_cpu_dispatch.h>
#if defined(TORCHADA_OPS_WITH_CUDA_TORCH)
#include <ATen/ops/gelu_cuda_dispatch.h>
#include <ATen/ops/neg_cuda_dispatch.h>
#include <ATen/ops/silu_cuda_dispatch.h>
#endif

#include <cmath>

#include "common.h"
#include "ops.h"
#include "../kernels/launch.h"  // the enums, also without GPU kernels
#if defined(TORCHADA_OPS_WITH_GPU)
#include "gpu.h"
#endif

namespace torchada::ops {
namespace {

using kernels::Unary;

bool ours_can_take(const at::Tensor& t) {
  return is_supported_float(t.scalar_type()) && t.is_contiguous();
}

float apply(Unary f, float x) {
  switch (f) {
    case Unary::kNeg:
      return -x;
    case Unary::kSilu:
      return x / (1.f + std::exp(-x));
    case Unary::kGeluExact:
      return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
    case Unary::kGeluTanh: {
      const float k = 0.79788456080286536f;  // sqrt(2 / pi)
      return 0.5f * x * (1.f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
  }
  return x;
}

template <typename T>
void unary_cpu(Unary f, T* out, const T* in, int64_t n) {
  at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = static_cast<T>(apply(f, static_cast<float>(in[i])));
  });
}

at::Tensor run(Backend b, Op id, Unary f, const at::Tensor& self) {
  at::Tensor out = at::empty_like(self);
  if (b == Backend::kCPU) {
    note_call(id, "torchada CPU kernel", self);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "unary_cpu", [&] {
      unary_cpu(f, out.data_ptr<scalar_t>(), self.const_data_ptr<scalar_t>(), self.numel());
    });
    return out;
  }
#if defined(TORCHADA_OPS_WITH_GPU)
  const c10::DeviceGuard guard(self.device());
  note_call(id, "torchada GPU kernel", self);
  gpu::check_launch(op_name(id), TORCHADA_KERNEL(unary)(gpu::dtype(self), f, out.data_ptr(),
                                                        self.const_data_ptr(), self.numel(),
                                                        gpu::stream_for(self)));
  return out;
#else
  TORCH_CHECK(false, op_name(id), ": this build of libtorchada_ops has no GPU kernels");
#endif
}

// The stock kernels. CPU and CUDA have direct entry points that bypass the dispatcher (which
// would route back here); a PrivateUse1 backend's kernels cannot be named from here, so its
// fallback is a composition of other aten ops, which are not overridden.
at::Tensor stock_neg(Backend b, const at::Tensor& self) {
  if (b == Backend::kCPU) return at::cpu::neg(self);
#if defined(TORCHADA_OPS_WITH_CUDA_TORCH)
  if (b == Backend::kCUDA) return at::cuda::neg(self);
#endif
  TORCH_CHECK(self.scalar_type() != at::kBool,
              "Negation, the `-` operator, on a bool tensor is not supported.");
  return at::mul(self, -1);
}

at::Tensor stock_silu(Backend b, const at::Tensor& self) {
  if (b == Backend::kCPU) return at::cpu::silu(self);
#if defined(TORCHADA_OPS_WITH_CUDA_TORCH)
  if (b == Backend::kCUDA) return at::cuda::silu(self);
#endif
  return at::mul(self, at::sigmoid(self));
}

at::Tensor stock_gelu(Backend b, const at::Tensor& self, std::string_view approximate) {
  if (b == Backend::kCPU) return at::cpu::gelu(self, approximate);
#if defined(TORCHADA_OPS_WITH_CUDA_TORCH)
  if (b == Backend::kCUDA) return at::cuda::gelu(self, approximate);
#endif
  if (approximate == "tanh")
    return 0.5 * self * (1 + at::tanh(0.79788456080286536 * (self + 0.044715 * self.pow(3))));
  return 0.5 * self * (1 + at::erf(self * 0.70710678118654752));
}

}  // namespace

at::Tensor neg_override(Backend b, const at::Tensor& self) {
  if (!ours_can_take(self)) {
    note_call(Op::kNeg, "stock kernel (dtype or layout not handled)", self, /*ours=*/false);
    return stock_neg(b, self);
  }
  return run(b, Op::kNeg, Unary::kNeg, self);
}

at::Tensor silu_override(Backend b, const at::Tensor& self) {
  if (!ours_can_take(self)) {
    note_call(Op::kSilu, "stock kernel (dtype or layout not handled)", self, false);
    return stock_silu(b, self);
  }
  return run(b, Op::kSilu, Unary::kSilu, self);
}

at::Tensor gelu_override(Backend b, const at::Tensor& self, std::string_view approximate) {
  const bool known = approximate == "none" || approximate == "tanh";
  if (!ours_can_take(self) || !known) {
    // Unknown approximate strings go to the stock kernel too, which raises its usual error.
    note_call(Op::kGelu, "stock kernel (dtype, layout or approximate not handled)", self, false);
    return stock_gelu(b, self, approximate);
  }
  return run(b, Op::kGelu, approximate == "tanh" ? Unary::kGeluTanh : Unary::kGeluExact, self);
}

}  // namespace torchada::ops
