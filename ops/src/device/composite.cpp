// Operators served as compositions of the device kernels (the elementwise and reduction engines),
// every step on the device: softmax and log-softmax with their backward, and the _foreach_
// arithmetic of optimizers and gradient clipping. Each computes in
// the accumulation type PyTorch's CUDA kernel uses (float for half and bfloat16) and rounds once
// into the result's type. Several launches where PyTorch's CUDA kernel makes one: correct and
// PCIe-free now; fused kernels of their own are the next step for speed on a GPU.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <array>
#include <vector>

#include "device.h"
#include "kernel_table.h"

namespace torchada::ops::device {
namespace {

void require_floating(const at::Tensor& t) {
  if (!t.is_cuda() || t.layout() != at::kStrided ||
      !(t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble ||
        t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16))
    throw NotServed();
}

// float for half and bfloat16, the type itself otherwise (PyTorch's acc_type on CUDA).
at::ScalarType accumulation(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}

// One dimension, as the reductions' dimension lists take it.
struct Dim {
  std::array<int64_t, 1> d;
  operator at::IntArrayRef() const { return d; }
};
Dim wrap(int64_t dim, const at::Tensor& t) { return {{c10::maybe_wrap_dim(dim, t.dim())}}; }

// softmax (Log: log_softmax) along `dim`, computed in the accumulation type.
template <bool Log>
at::Tensor softmax_of(const at::Tensor& self, int64_t dim, bool half_to_float) {
  require_floating(self);
  c10::OptionalDeviceGuard g(at::device_of(self));
  if (half_to_float)
    TORCH_CHECK(self.scalar_type() == at::kHalf, "conversion is supported for Half type only");
  const auto out_type = half_to_float ? at::kFloat : self.scalar_type();
  if (self.numel() == 0) return at::empty_like(self, self.options().dtype(out_type));
  const Dim wrapped = wrap(dim, self);
  const at::IntArrayRef d = wrapped;
  const at::Tensor x = self.to(accumulation(self.scalar_type()));
  const at::Tensor shifted = x - at::amax(x, d, true);
  if constexpr (Log) {
    return (shifted - at::log(at::sum(at::exp(shifted), d, true))).to(out_type);
  } else {
    const at::Tensor e = at::exp(shifted);
    return (e / at::sum(e, d, true)).to(out_type);
  }
}

at::Tensor softmax_backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                            at::ScalarType input_dtype) {
  require_floating(grad);
  require_floating(output);
  c10::OptionalDeviceGuard g(at::device_of(grad));
  if (grad.numel() == 0) return at::empty_like(grad, grad.options().dtype(input_dtype));
  const Dim wrapped = wrap(dim, grad);
  const at::IntArrayRef d = wrapped;
  const auto acc = accumulation(input_dtype);
  const at::Tensor go = grad.to(acc), y = output.to(acc);
  return (y * (go - at::sum(go * y, d, true))).to(input_dtype);
}

at::Tensor log_softmax_backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                at::ScalarType input_dtype) {
  require_floating(grad);
  require_floating(output);
  c10::OptionalDeviceGuard g(at::device_of(grad));
  if (grad.numel() == 0) return at::empty_like(grad, grad.options().dtype(input_dtype));
  const Dim wrapped = wrap(dim, grad);
  const at::IntArrayRef d = wrapped;
  const auto acc = accumulation(input_dtype);
  const at::Tensor go = grad.to(acc);
  return (go - at::exp(output.to(acc)) * at::sum(go, d, true)).to(input_dtype);
}

// ---- _foreach_: one launch per tensor ------------------------------------------------------

void require_list(at::TensorList list) {
  for (const auto& t : list) {
    if (!t.is_cuda() || t.layout() != at::kStrided || !kind_of(t.scalar_type())) throw NotServed();
  }
}

void foreach_add_scalar_(at::TensorList self, const at::Scalar& s) {
  require_list(self);
  for (const auto& t : self) const_cast<at::Tensor&>(t).add_(s);
}
std::vector<at::Tensor> foreach_add_scalar(at::TensorList self, const at::Scalar& s) {
  require_list(self);
  std::vector<at::Tensor> r;
  for (const auto& t : self) r.push_back(t.add(s));
  return r;
}
void foreach_add_list_(at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
  require_list(self);
  require_list(other);
  TORCH_CHECK(self.size() == other.size(),
              "Tensor lists must have the same number of tensors, got ", self.size(), " and ",
              other.size());
  for (size_t i = 0; i < self.size(); ++i) const_cast<at::Tensor&>(self[i]).add_(other[i], alpha);
}
void foreach_mul_scalar_(at::TensorList self, const at::Scalar& s) {
  require_list(self);
  for (const auto& t : self) const_cast<at::Tensor&>(t).mul_(s);
}
void foreach_mul_tensor_(at::TensorList self, const at::Tensor& other) {
  require_list(self);
  TORCH_CHECK(other.dim() == 0 && other.numel() == 1,
              "scalar tensor expected to be 0 dim but it has ", other.dim(), " dimensions and ",
              other.numel(), " elements.");
  for (const auto& t : self) const_cast<at::Tensor&>(t).mul_(other);
}
void foreach_mul_list_(at::TensorList self, at::TensorList other) {
  require_list(self);
  require_list(other);
  TORCH_CHECK(self.size() == other.size(),
              "Tensor lists must have the same number of tensors, got ", self.size(), " and ",
              other.size());
  for (size_t i = 0; i < self.size(); ++i) const_cast<at::Tensor&>(self[i]).mul_(other[i]);
}
std::vector<at::Tensor> foreach_norm(at::TensorList self, const at::Scalar& ord,
                                     std::optional<at::ScalarType> dtype) {
  require_list(self);
  std::vector<at::Tensor> r;
  for (const auto& t : self)
    r.push_back(at::linalg_vector_norm(t, ord, at::OptionalIntArrayRef{}, false, dtype));
  return r;
}

}  // namespace

std::vector<Kernel> composite_kernels() {
  std::vector<Kernel> v;
  v.push_back(kernel<&softmax_of<false>>("aten::_softmax"));
  v.push_back(kernel<&softmax_of<true>>("aten::_log_softmax"));
  v.push_back(kernel<&softmax_backward>("aten::_softmax_backward_data"));
  v.push_back(kernel<&log_softmax_backward>("aten::_log_softmax_backward_data"));
  v.push_back(kernel<&foreach_add_scalar_>("aten::_foreach_add_.Scalar"));
  v.push_back(kernel<&foreach_add_scalar>("aten::_foreach_add.Scalar"));
  v.push_back(kernel<&foreach_add_list_>("aten::_foreach_add_.List"));
  v.push_back(kernel<&foreach_mul_scalar_>("aten::_foreach_mul_.Scalar"));
  v.push_back(kernel<&foreach_mul_tensor_>("aten::_foreach_mul_.Tensor"));
  v.push_back(kernel<&foreach_mul_list_>("aten::_foreach_mul_.List"));
  v.push_back(kernel<&foreach_norm>("aten::_foreach_norm.Scalar"));
  return v;
}

}  // namespace torchada::ops::device
