// Indexing operators of a training step on the device (kernels/indexing.cu): arange, gather,
// index_select (and so the embedding's forward), the embedding's gradient, the NLL loss with its
// gradient, and cat (slices of the output filled by the elementwise engine's copy). Each applies
// the checks PyTorch's CUDA operator applies, with PyTorch's messages, before it launches.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/gather_meta.h>
#include <ATen/ops/nll_loss_backward_meta.h>
#include <ATen/ops/nll_loss_forward_meta.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cmath>
#include <limits>

#include "../device_kernels.h"
#include "device.h"
#include "kernel_table.h"
#include "structured.h"

namespace torchada::ops::device {
namespace {

using training::Compute;

// A strided CUDA tensor of a dtype the kernels have (NotServed otherwise: the bridge's path).
void require(const at::Tensor& t) {
  if (!t.defined() || !t.is_cuda() || t.layout() != at::kStrided || !kind_of(t.scalar_type()))
    throw NotServed();
}
void require_index(const at::Tensor& t) {
  require(t);
  if (t.scalar_type() != at::kLong && t.scalar_type() != at::kInt) throw NotServed();
}

// ---- arange ---------------------------------------------------------------------------------

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step,
                       at::Tensor& out) {
  require(out);
  if (out.scalar_type() == at::kBool) throw NotServed();  // PyTorch refuses it: its message
  c10::OptionalDeviceGuard g(at::device_of(out));
  const auto type = out.scalar_type();
  const bool integral = at::isIntegralType(type, /*includeBool=*/false);
  const bool is_long = type == at::kLong;
  double size_d;
  if (is_long) {
    const int64_t s = start.to<int64_t>(), e = end.to<int64_t>(), st = step.to<int64_t>();
    TORCH_CHECK(st != 0, "step must be nonzero");
    TORCH_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
                "upper bound and larger bound inconsistent with step sign");
    const int64_t sgn = (st > 0) - (st < 0);
    size_d = static_cast<double>((e - s + st - sgn) / st);  // integer division, as PyTorch
  } else {
    const double s = integral ? static_cast<double>(start.to<int64_t>())
                              : (type == at::kDouble ? start.to<double>() : start.to<float>());
    const double e = integral ? static_cast<double>(end.to<int64_t>())
                              : (type == at::kDouble ? end.to<double>() : end.to<float>());
    const double st = integral ? static_cast<double>(step.to<int64_t>())
                               : (type == at::kDouble ? step.to<double>() : step.to<float>());
    size_d = std::ceil((end.to<double>() - start.to<double>()) / step.to<double>());
    TORCH_CHECK(st > 0 || st < 0, "step must be nonzero");
    TORCH_CHECK(std::isfinite(s) && std::isfinite(e), "unsupported range: ", s, " -> ", e);
    TORCH_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
                "upper bound and larger bound inconsistent with step sign");
  }
  TORCH_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
              "invalid size, possible overflow?");
  const auto size = static_cast<int64_t>(size_d);
  if (out.numel() != size) {
    if (out.numel() > 0) {
      TORCH_WARN("The number of elements in the out tensor of shape ", out.sizes(), " is ",
                 out.numel(), " which does not match the computed number of elements ", size,
                 ". Note that this may occur as a result of rounding error. "
                 "The out tensor will be resized to a tensor of shape (",
                 size, ",).");
    }
    out.resize_({size});
  }
  const bool contiguous = out.is_contiguous();
  at::Tensor r = contiguous ? out : at::empty_like(out, at::MemoryFormat::Contiguous);
  training::Arange a;
  a.out = static_cast<char*>(r.data_ptr());
  a.kind = *kind_of(type);
  a.n = size;
  if (integral) {
    a.compute = Compute::kInt64;
    a.istart = start.to<int64_t>();
    a.istep = step.to<int64_t>();
  } else {
    a.compute = floating_compute(type);
    a.start = type == at::kDouble ? start.to<double>() : start.to<float>();
    a.step = type == at::kDouble ? step.to<double>() : step.to<float>();
  }
  check_launch("arange", TORCHADA_KERNEL(arange)(a, current_stream(r)));
  if (!contiguous) out.copy_(r);
  return out;
}

// ---- gather and index_select ------------------------------------------------------------------

// Launches out[c] = self[c with c[dim] = index[...]]; index_strides as training::Gather says.
void launch_gather(const at::Tensor& out, const at::Tensor& self, const at::Tensor& index,
                   int64_t dim, at::IntArrayRef index_strides) {
  if (out.numel() == 0) return;
  training::Gather g;
  const int64_t nd = std::max<int64_t>(out.dim(), 1);
  if (nd > training::Gather::kMaxDims) throw NotServed();
  g.ndim = static_cast<int>(nd);
  g.dim = static_cast<int>(dim);
  for (int64_t d = 0; d < nd; ++d) {
    const bool scalar = out.dim() == 0;
    g.sizes[d] = scalar ? 1 : out.size(d);
    g.out_strides[d] = scalar ? 0 : out.stride(d);
    g.self_strides[d] = self.dim() == 0 ? 0 : self.stride(d);
    g.index_strides[d] = index_strides.empty() ? 0 : index_strides[d];
  }
  g.numel = out.numel();
  g.self_dim_size = self.dim() == 0 ? 1 : self.size(dim);
  g.elem_size = static_cast<int>(self.element_size());
  g.index32 = index.scalar_type() == at::kInt;
  g.out = static_cast<char*>(out.data_ptr());
  g.self = static_cast<const char*>(self.const_data_ptr());
  g.index = static_cast<const char*>(index.const_data_ptr());
  check_launch("gather", TORCHADA_KERNEL(gather)(g, current_stream(out)));
}

void gather_impl(const at::Tensor& result, const at::Tensor& self, int64_t dim,
                 const at::Tensor& index) {
  if (index.numel() == 0) return;
  at::assert_no_internal_overlap(result);
  at::assert_no_overlap(result, self);
  at::assert_no_partial_overlap(result, index);
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> strides(std::max<int64_t>(index.dim(), 1), 0);
  for (int64_t i = 0; i < index.dim(); ++i) strides[i] = index.stride(i);
  launch_gather(result, self, index, d, strides);
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse_grad) {
  require(self);
  require_index(index);
  if (index.scalar_type() != at::kLong) throw NotServed();  // PyTorch's message for the rest
  c10::OptionalDeviceGuard g(at::device_of(self));
  structured::Functional<at::meta::structured_gather, 1> m;
  m.meta(self, dim, index, sparse_grad);
  gather_impl(m.out[0], self, dim, index);
  return std::move(m.out[0]);
}

at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       bool sparse_grad, at::Tensor& out) {
  require(self);
  require_index(index);
  require(out);
  if (index.scalar_type() != at::kLong) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  structured::Out<at::meta::structured_gather, 1> m(out);
  m.meta(self, dim, index, sparse_grad);
  gather_impl(out, self, dim, index);
  return out;
}

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             at::Tensor& out) {
  require(self);
  require_index(index);
  require(out);
  if (self.dim() == 0) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  TORCH_CHECK(self.device() == out.device() && self.device() == index.device(),
              "Input, output and indices must be on the current device");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
  dim = at::maybe_wrap_dim(dim, self);
  TORCH_CHECK(index.dim() <= 1, "Index is supposed to be a vector");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "index_select(): self and out must have the same scalar type");
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  sizes[dim] = index.numel();
  at::native::resize_output(out, sizes);
  std::vector<int64_t> strides(self.dim(), 0);
  strides[dim] = index.dim() == 0 ? 0 : index.stride(0);
  launch_gather(out, self, index, dim, strides);
  return out;
}

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  require(self);
  at::Tensor out = at::empty({0}, self.options());
  return index_select_out(self, dim, index, out);
}

// ---- the embedding's gradient -----------------------------------------------------------------

at::Tensor embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices,
                                    c10::SymInt num_weights_s, c10::SymInt padding_idx_s,
                                    bool scale_grad_by_freq) {
  require(grad_output);
  require_index(indices);
  if (scale_grad_by_freq || !at::isFloatingType(grad_output.scalar_type())) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(grad_output));
  const int64_t num_weights = num_weights_s.guard_int(__FILE__, __LINE__);
  const int64_t dim = grad_output.size(-1);
  const at::Tensor idx = indices.contiguous();
  const at::Tensor grad = grad_output.reshape({idx.numel(), dim});
  const bool dbl = grad_output.scalar_type() == at::kDouble;
  at::Tensor acc =
      at::zeros({num_weights, dim}, grad_output.options().dtype(dbl ? at::kDouble : at::kFloat));
  training::EmbeddingBackward e;
  e.grad = static_cast<const char*>(grad.const_data_ptr());
  e.grad_kind = *kind_of(grad.scalar_type());
  e.grad_row_stride = grad.stride(0);
  e.grad_col_stride = grad.stride(1);
  e.indices = static_cast<const char*>(idx.const_data_ptr());
  e.index32 = idx.scalar_type() == at::kInt;
  e.n = idx.numel();
  e.dim = dim;
  e.num_weights = num_weights;
  e.padding_idx = padding_idx_s.guard_int(__FILE__, __LINE__);
  e.acc = acc.data_ptr();
  e.acc_double = dbl;
  check_launch("embedding_backward", TORCHADA_KERNEL(embedding_backward)(e, current_stream(acc)));
  return acc.scalar_type() == grad_output.scalar_type() ? acc : acc.to(grad_output.scalar_type());
}

// ---- NLL loss -----------------------------------------------------------------------------

at::OptionalTensorRef optional_ref(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? at::OptionalTensorRef(*t) : at::OptionalTensorRef();
}

// What both directions describe: a 2-D input (1-D inputs take the bridge), the target, the
// weights.
training::NllLoss describe(const at::Tensor& self, const at::Tensor& target,
                           const at::Tensor& weight, int64_t reduction, int64_t ignore_index) {
  training::NllLoss l;
  l.input = static_cast<const char*>(self.const_data_ptr());
  l.kind = *kind_of(self.scalar_type());
  l.batch = self.size(0);
  l.classes = self.size(1);
  l.in_row_stride = self.stride(0);
  l.in_col_stride = self.stride(1);
  l.target = static_cast<const char*>(target.const_data_ptr());
  l.target32 = target.scalar_type() == at::kInt;
  l.target_stride = target.dim() == 0 ? 0 : target.stride(0);
  l.weight = weight.defined() ? static_cast<const char*>(weight.const_data_ptr()) : nullptr;
  l.ignore_index = ignore_index;
  l.reduction = static_cast<int>(reduction);
  return l;
}

void require_nll(const at::Tensor& self, const at::Tensor& target,
                 const std::optional<at::Tensor>& weight) {
  require(self);
  require_index(target);
  if (self.dim() != 2 || !at::isFloatingType(self.scalar_type())) throw NotServed();
  if (weight && weight->defined()) {
    require(*weight);
    if (weight->scalar_type() != self.scalar_type()) throw NotServed();
  }
}

void nll_loss_forward_impl(const at::Tensor& self, const at::Tensor& target,
                           const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                           int64_t ignore_index, const at::Tensor& output,
                           const at::Tensor& total_weight) {
  const at::Tensor weight =
      weight_opt && weight_opt->defined() ? weight_opt->contiguous() : at::Tensor();
  if (reduction == at::Reduction::None) {
    at::native::resize_output(output, {self.size(0)});
    total_weight.zero_();
    if (self.size(0) == 0) return;
  } else {
    at::native::resize_output(output, {});
    total_weight.resize_({});
    if (target.numel() == 0) {
      if (reduction == at::Reduction::Mean)
        output.fill_(std::numeric_limits<double>::quiet_NaN());
      else
        output.zero_();
      total_weight.zero_();
      return;
    }
  }
  training::NllLoss l = describe(self, target, weight, reduction, ignore_index);
  l.out = static_cast<char*>(output.data_ptr());
  l.out_stride = output.dim() == 0 ? 0 : output.stride(0);
  l.total_weight = static_cast<char*>(total_weight.data_ptr());
  check_launch("nll_loss", TORCHADA_KERNEL(nll_loss_forward)(l, current_stream(self)));
}

std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self,
                                                    const at::Tensor& target,
                                                    const std::optional<at::Tensor>& weight,
                                                    int64_t reduction, c10::SymInt ignore_index) {
  require_nll(self, target, weight);
  c10::OptionalDeviceGuard g(at::device_of(self));
  const int64_t ignore = ignore_index.guard_int(__FILE__, __LINE__);
  structured::Functional<at::meta::structured_nll_loss_forward, 2> m;
  m.meta(self, target, optional_ref(weight), reduction, ignore);
  nll_loss_forward_impl(self, target, weight, reduction, ignore, m.out[0], m.out[1]);
  return {std::move(m.out[0]), std::move(m.out[1])};
}

at::Tensor nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, const std::optional<at::Tensor>& weight_opt,
                             int64_t reduction, c10::SymInt ignore_index,
                             const at::Tensor& total_weight) {
  require_nll(self, target, weight_opt);
  require(grad_output);
  require(total_weight);
  if (grad_output.scalar_type() != self.scalar_type() ||
      total_weight.scalar_type() != self.scalar_type())
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  const int64_t ignore = ignore_index.guard_int(__FILE__, __LINE__);
  structured::Functional<at::meta::structured_nll_loss_backward, 1> m;
  m.meta(grad_output, self, target, optional_ref(weight_opt), reduction, ignore, total_weight);
  at::Tensor& grad_input = m.out[0];
  grad_input.zero_();
  const at::Tensor weight =
      weight_opt && weight_opt->defined() ? weight_opt->contiguous() : at::Tensor();
  training::NllLoss l = describe(self, target, weight, reduction, ignore);
  l.out = static_cast<char*>(grad_input.data_ptr());
  l.out_stride = grad_input.stride(0);
  l.out_col_stride = grad_input.stride(1);
  l.total_weight = const_cast<char*>(static_cast<const char*>(total_weight.const_data_ptr()));
  l.grad_output = static_cast<const char*>(grad_output.const_data_ptr());
  l.grad_output_stride = grad_output.dim() == 0 ? 0 : grad_output.stride(0);
  check_launch("nll_loss_backward", TORCHADA_KERNEL(nll_loss_backward)(l, current_stream(self)));
  return std::move(grad_input);
}

// ---- cat ----------------------------------------------------------------------------------

// Tensors of shape [0] take no part in a cat, whatever the dimension (PyTorch's legacy rule).
bool skipped(const at::Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

at::Tensor cat(at::TensorList tensors, int64_t dim) {
  // The common case only: every tensor a strided CUDA tensor on one device, of one rank.
  // Anything else (mixed devices, ranks, layouts) takes the bridge and its checks.
  const at::Tensor* ref = nullptr;
  for (const at::Tensor& t : tensors) {
    require(t);
    if (!skipped(t) && ref == nullptr) ref = &t;
  }
  if (ref == nullptr) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(*ref));
  const int64_t d = at::maybe_wrap_dim(dim, ref->dim());
  std::vector<int64_t> sizes(ref->sizes().begin(), ref->sizes().end());
  int64_t total = 0;
  auto format = ref->suggest_memory_format();
  for (const at::Tensor& t : tensors) {
    if (skipped(t)) continue;
    if (t.device() != ref->device() || t.dim() != ref->dim()) throw NotServed();
    for (int64_t i = 0; i < t.dim(); ++i)
      if (i != d && t.size(i) != sizes[i]) throw NotServed();
    total += t.size(d);
    if (t.suggest_memory_format() != format) format = at::MemoryFormat::Contiguous;
  }
  sizes[d] = total;
  const auto type = at::native::result_type(at::ITensorListRef(tensors));
  at::Tensor out = at::empty(sizes, ref->options().dtype(type).memory_format(format));
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) {
    if (skipped(t) || t.size(d) == 0) continue;
    out.narrow(d, offset, t.size(d)).copy_(t);
    offset += t.size(d);
  }
  return out;
}

// ---- flip ---------------------------------------------------------------------------------

// A copy whose source walks the flipped dimensions backwards: the elementwise engine's copy with
// the source's first element at the flipped end and those strides negated.
at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  require(self);
  if (self.dim() > elementwise::Args::kMaxDims) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  const auto flipped = at::dim_list_to_bitset(dims, self.dim());  // PyTorch's checks
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  if (self.numel() == 0) return out;
  const int64_t es = static_cast<int64_t>(self.element_size());
  elementwise::Args a;
  a.ndim = static_cast<int>(self.dim());
  a.noperands = 2;
  a.numel = self.numel();
  a.contiguous = false;
  const char* src = static_cast<const char*>(self.const_data_ptr());
  for (int64_t d = 0; d < self.dim(); ++d) {
    const int k = static_cast<int>(self.dim() - 1 - d);  // dimension 0 varies fastest
    a.sizes[k] = self.size(d);
    a.strides[0][k] = out.stride(d) * es;
    a.strides[1][k] = self.stride(d) * es;
    if (flipped[d]) {
      src += (self.size(d) - 1) * self.stride(d) * es;
      a.strides[1][k] = -a.strides[1][k];
    }
  }
  a.data[0] = static_cast<char*>(out.data_ptr());
  a.data[1] = const_cast<char*>(src);
  a.kind[0] = a.kind[1] = *kind_of(self.scalar_type());
  const auto compute = compute_of(self.scalar_type());
  if (!compute) throw NotServed();
  check_launch("flip", TORCHADA_KERNEL(elementwise_launch)(elementwise::Op::kCopy, *compute, a,
                                                           current_stream(self)));
  return out;
}

}  // namespace

std::vector<Kernel> indexing_kernels() {
  std::vector<Kernel> v;
  v.push_back(kernel<&arange_out>("aten::arange.start_out"));
  v.push_back(kernel<&gather>("aten::gather"));
  v.push_back(kernel<&gather_out>("aten::gather.out"));
  v.push_back(kernel<&index_select>("aten::index_select"));
  v.push_back(kernel<&index_select_out>("aten::index_select.out"));
  v.push_back(kernel<&embedding_dense_backward>("aten::embedding_dense_backward"));
  v.push_back(kernel<&nll_loss_forward>("aten::nll_loss_forward"));
  v.push_back(kernel<&nll_loss_backward>("aten::nll_loss_backward"));
  v.push_back(kernel<&cat>("aten::cat"));
  v.push_back(kernel<&flip>("aten::flip"));
  return v;
}

}  // namespace torchada::ops::device
