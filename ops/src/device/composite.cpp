// Operators served as compositions of the device kernels (the elementwise and reduction engines),
// every step on the device: softmax and log-softmax with their backward, the _foreach_
// arithmetic of optimizers and gradient clipping, addmm where PyTorch would copy its bias itself.
// Each computes in the accumulation type PyTorch's CUDA kernel uses (float for half and bfloat16)
// and rounds once into the result's type. Several launches where PyTorch's CUDA kernel makes one:
// correct and PCIe-free now; fused kernels of their own are the next step for speed on a GPU.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <array>
#include <vector>

#include "../device_kernels.h"
#include "device.h"
#include "kernel_table.h"

namespace torchada::ops::device {

training::Softmax describe_rows(const at::Tensor& in, const at::Tensor& out, bool log) {
  training::Softmax a;
  a.cols = in.dim() == 0 ? 1 : in.size(-1);
  a.rows = a.cols == 0 ? 0 : in.numel() / a.cols;
  a.compute = in.scalar_type() == at::kDouble || out.scalar_type() == at::kDouble
                  ? training::Compute::kDouble
                  : training::Compute::kFloat;
  a.in_kind = *kind_of(in.scalar_type());
  a.out_kind = *kind_of(out.scalar_type());
  a.log = log;
  a.in = static_cast<const char*>(in.const_data_ptr());
  a.out = static_cast<char*>(out.data_ptr());
  return a;
}

void* current_stream(const at::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

void softmax_rows(const at::Tensor& in, const at::Tensor& out, bool log, double scale,
                  int64_t causal_rows, const at::Tensor& lse) {
  training::Softmax a = describe_rows(in, out, log);
  a.scale = scale;
  a.causal = causal_rows > 0;
  a.rows_per_matrix = causal_rows > 0 ? causal_rows : 1;
  a.lse = lse.defined() ? lse.data_ptr<float>() : nullptr;
  check_launch("softmax", TORCHADA_KERNEL(softmax_forward)(a, current_stream(in)));
}

void softmax_rows_backward(const at::Tensor& grad, const at::Tensor& output,
                           const at::Tensor& grad_input, bool log) {
  training::Softmax a = describe_rows(output, grad_input, log);
  a.grad = static_cast<const char*>(grad.const_data_ptr());
  check_launch("softmax backward", TORCHADA_KERNEL(softmax_backward)(a, current_stream(grad)));
}

namespace {

void require_floating(const at::Tensor& t) {
  if (!floating_cuda(t)) throw NotServed();
}

// float for half and bfloat16, the type itself otherwise (PyTorch's acc_type on CUDA).

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
  if (self.dim() == 0 || (wrapped.d[0] == self.dim() - 1 && self.is_contiguous())) {
    // Along contiguous rows: one fused launch.
    at::Tensor out =
        at::empty_like(self, self.options().dtype(out_type), at::MemoryFormat::Contiguous);
    softmax_rows(self, out, Log);
    return out;
  }
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

// The backward of softmax_of<Log>: grad * y - y * sum(grad * y) (softmax), grad - exp(y) *
// sum(grad) (log-softmax), y being the forward's output.
template <bool Log>
at::Tensor softmax_backward_of(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                               at::ScalarType input_dtype) {
  require_floating(grad);
  require_floating(output);
  c10::OptionalDeviceGuard g(at::device_of(grad));
  if (grad.numel() == 0) return at::empty_like(grad, grad.options().dtype(input_dtype));
  const Dim wrapped = wrap(dim, grad);
  if (grad.dim() == 0 ||
      (wrapped.d[0] == grad.dim() - 1 && grad.is_contiguous() && output.is_contiguous() &&
       grad.scalar_type() == output.scalar_type() && grad.sizes().equals(output.sizes()))) {
    at::Tensor gi =
        at::empty_like(grad, grad.options().dtype(input_dtype), at::MemoryFormat::Contiguous);
    softmax_rows_backward(grad, output, gi, Log);
    return gi;
  }
  const at::IntArrayRef d = wrapped;
  const auto acc = accumulation(input_dtype);
  const at::Tensor go = grad.to(acc), y = output.to(acc);
  if constexpr (Log)
    return (go - at::exp(y) * at::sum(go, d, true)).to(input_dtype);
  else
    return (y * (go - at::sum(go * y, d, true))).to(input_dtype);
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
std::vector<at::Tensor> foreach_add_list(at::TensorList self, at::TensorList other,
                                         const at::Scalar& alpha) {
  require_list(self);
  require_list(other);
  TORCH_CHECK(self.size() == other.size(),
              "Tensor lists must have the same number of tensors, got ", self.size(), " and ",
              other.size());
  std::vector<at::Tensor> r;
  for (size_t i = 0; i < self.size(); ++i) r.push_back(self[i].add(other[i], alpha));
  return r;
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

// Any other _foreach_ operator: PyTorch's own per-tensor loop (the "slow" kernel it registers as
// CompositeExplicitAutograd, which calls the single-tensor operator on each element of the lists)
// run on the CUDA tensors, so that each single-tensor call takes its device kernel. One launch per
// tensor where PyTorch's CUDA kernel makes one per chunk of tensors: correct and on the device.
bool all_served(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    return !t.defined() || (t.is_cuda() && t.layout() == at::kStrided && kind_of(t.scalar_type()));
  }
  if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList().vec())
      if (!all_served(c10::IValue(t))) return false;
  }
  if (v.isList() && !v.isTensorList()) {
    for (const c10::IValue& e : v.toListRef())
      if ((e.isTensor() || e.isTensorList()) && !all_served(e)) return false;
  }
  return true;
}

void foreach_per_tensor(const c10::OperatorHandle& op, c10::DispatchKeySet,
                        torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();
  for (size_t i = stack->size() - n; i < stack->size(); ++i)
    if (!all_served((*stack)[i])) throw NotServed();
  // The CPU entry of the dispatch table is the CompositeExplicitAutograd kernel (foreach_kernels
  // takes only operators without a CPU kernel of their own).
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
}

}  // namespace

std::vector<Kernel> foreach_kernels() {
  std::vector<Kernel> v;
  auto& d = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : d.getAllOpNames()) {
    if (name.name.rfind("aten::_foreach_", 0) != 0) continue;
    auto op = d.findOp(name);
    if (!op || !op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
        op->hasKernelForDispatchKey(c10::DispatchKey::CPU) ||
        !op->hasKernelForDispatchKey(c10::DispatchKey::CUDA))
      continue;
    const std::string full =
        name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
    v.push_back({full, c10::KernelFunction::makeFromBoxedFunction<&foreach_per_tensor>(), nullptr});
  }
  return v;
}

namespace {

// ---- addmm whose bias PyTorch copies into the result -----------------------------------------
// PyTorch's CUDA addmm fuses a 1-D bias into cuBLASLt's epilogue when it can (beta 1, every
// matrix dimension above 1); otherwise it copies the broadcast bias into the result with its own
// copy kernel, called directly rather than through the dispatcher, and runs cuBLAS with beta on
// it. That copy is what the bridge would have to serve. Here the copy goes through the dispatcher
// (the device's copy_) and cuBLAS runs as PyTorch runs it, on a result that is the bias
// (addmm.out with self == out: no copy). The fused case stays PyTorch's own.
at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  if (!floating_cuda(self) || !floating_cuda(mat1) || !floating_cuda(mat2) || mat1.dim() != 2 ||
      mat2.dim() != 2 || mat1.size(1) != mat2.size(0) || mat1.scalar_type() != mat2.scalar_type() ||
      self.scalar_type() != mat1.scalar_type() || self.device() != mat1.device() ||
      mat2.device() != mat1.device())
    throw NotServed();  // PyTorch's checks and messages
  const int64_t m = mat1.size(0), k = mat1.size(1), n = mat2.size(1);
  const bool fused = self.dim() == 1 && beta.toComplexDouble() == 1.0 && m > 1 && k > 1 && n > 1;
  if (fused || !at::is_expandable_to(self.sizes(), {m, n})) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(mat1));
  at::Tensor result = at::empty({m, n}, mat1.options());
  if (beta.toComplexDouble() != 0.0) result.copy_(self.expand({m, n}));
  at::addmm_out(result, result, mat1, mat2, beta, alpha);
  return result;
}

// equal: same sizes and every element equal, as PyTorch's CUDA operator answers it (an
// elementwise comparison and a reduction on the device, then the one flag read).
bool equal(const at::Tensor& self, const at::Tensor& other) {
  if (!self.is_cuda() || !other.is_cuda() || self.device() != other.device() ||
      self.layout() != at::kStrided || other.layout() != at::kStrided ||
      !kind_of(self.scalar_type()) || !kind_of(other.scalar_type()) || self.is_neg() ||
      other.is_neg() || self.is_conj() || other.is_conj())
    throw NotServed();  // PyTorch's checks and messages
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  // The same elements (so NaN equals itself here, as in PyTorch's operator).
  if (self.is_alias_of(other) && self.storage_offset() == other.storage_offset() &&
      self.dtype() == other.dtype() && self.strides() == other.strides())
    return true;
  c10::OptionalDeviceGuard g(at::device_of(self));
  return at::eq(self, other).all().item<bool>();
}

}  // namespace

std::vector<Kernel> composite_kernels() {
  std::vector<Kernel> v;
  v.push_back(kernel<&softmax_of<false>>("aten::_softmax"));
  v.push_back(kernel<&softmax_of<true>>("aten::_log_softmax"));
  v.push_back(kernel<&softmax_backward_of<false>>("aten::_softmax_backward_data"));
  v.push_back(kernel<&softmax_backward_of<true>>("aten::_log_softmax_backward_data"));
  v.push_back(kernel<&foreach_add_scalar_>("aten::_foreach_add_.Scalar"));
  v.push_back(kernel<&foreach_add_scalar>("aten::_foreach_add.Scalar"));
  v.push_back(kernel<&foreach_add_list_>("aten::_foreach_add_.List"));
  v.push_back(kernel<&foreach_add_list>("aten::_foreach_add.List"));
  v.push_back(kernel<&foreach_mul_scalar_>("aten::_foreach_mul_.Scalar"));
  v.push_back(kernel<&foreach_mul_tensor_>("aten::_foreach_mul_.Tensor"));
  v.push_back(kernel<&foreach_mul_list_>("aten::_foreach_mul_.List"));
  v.push_back(kernel<&foreach_norm>("aten::_foreach_norm.Scalar"));
  v.push_back(kernel<&addmm>("aten::addmm"));
  v.push_back(kernel<&equal>("aten::equal"));
  return v;
}

}  // namespace torchada::ops::device
