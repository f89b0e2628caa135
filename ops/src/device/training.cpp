// Fused operators of a training step on the device: layer norm and its backward
// (kernels/layer_norm.cu) and the fused Adam / AdamW step (kernels/adam.cu), with the checks
// PyTorch's CUDA operators make first.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <array>
#include <vector>

#include "../device_kernels.h"
#include "device.h"
#include "kernel_table.h"

namespace torchada::ops::device {
namespace {

using training::Compute;

void* current_stream(const at::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

bool floating_cuda(const at::Tensor& t) {
  return t.defined() && t.is_cuda() && t.layout() == at::kStrided &&
         (t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble ||
          t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
}
const at::Tensor* present(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? &*t : nullptr;
}
at::ScalarType accumulation(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}
char* data(const at::Tensor& t) { return t.defined() ? static_cast<char*>(t.data_ptr()) : nullptr; }

// ---- layer norm ---------------------------------------------------------------------------

struct Split {
  int64_t rows = 1, cols = 1;
  std::vector<int64_t> stat_shape;  // input.shape[:axis] + [1] * len(normalized_shape)
};

// PyTorch's _check_layer_norm_inputs, with its messages.
Split check_layer_norm(const at::Tensor& input, at::IntArrayRef normalized_shape,
                       const at::Tensor* weight, const at::Tensor* bias) {
  const int64_t n = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(n >= 1,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
              "least one element, but got normalized_shape = ",
              normalized_shape);
  TORCH_CHECK(!weight || weight->sizes().equals(normalized_shape),
              "Expected weight to be of same shape as normalized_shape, but got ",
              "weight of shape ", weight ? weight->sizes() : at::IntArrayRef{},
              " and normalized_shape = ", normalized_shape);
  TORCH_CHECK(!bias || bias->sizes().equals(normalized_shape),
              "Expected bias to be of same shape as normalized_shape, but got ", "bias of shape ",
              bias ? bias->sizes() : at::IntArrayRef{},
              " and normalized_shape = ", normalized_shape);
  const int64_t axis = input.dim() - n;
  TORCH_CHECK(axis >= 0 && input.sizes().slice(axis).equals(normalized_shape),
              "Given normalized_shape=", normalized_shape, ", expected input with shape [*, ",
              c10::Join(", ", normalized_shape), "], but got input of size", input.sizes());
  Split s;
  for (int64_t i = 0; i < input.dim(); ++i) {
    (i < axis ? s.rows : s.cols) *= input.size(i);
    s.stat_shape.push_back(i < axis ? input.size(i) : 1);
  }
  return s;
}

training::LayerNorm describe(const Split& s, const at::Tensor& x, const at::Tensor* weight,
                             const at::Tensor* bias) {
  training::LayerNorm l;
  l.rows = s.rows;
  l.cols = s.cols;
  l.compute = x.scalar_type() == at::kDouble ? Compute::kDouble : Compute::kFloat;
  l.kind = *kind_of(x.scalar_type());
  const at::Tensor* param = weight ? weight : bias;
  l.param_kind = param ? *kind_of(param->scalar_type()) : l.kind;
  l.input = static_cast<const char*>(x.const_data_ptr());
  return l;
}

void require_params(const at::Tensor& input, const at::Tensor* weight, const at::Tensor* bias) {
  if (!floating_cuda(input)) throw NotServed();
  for (const at::Tensor* p : {weight, bias})
    if (p && !floating_cuda(*p)) throw NotServed();
  if (weight && bias && weight->scalar_type() != bias->scalar_type()) throw NotServed();
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm(const at::Tensor& input,
                                                          c10::SymIntArrayRef normalized_shape,
                                                          const std::optional<at::Tensor>& w,
                                                          const std::optional<at::Tensor>& b,
                                                          double eps) {
  const at::Tensor *weight = present(w), *bias = present(b);
  require_params(input, weight, bias);
  c10::OptionalDeviceGuard g(at::device_of(input));
  const Split s = check_layer_norm(input, C10_AS_INTARRAYREF_SLOW(normalized_shape), weight, bias);
  const at::Tensor x = input.contiguous();
  const at::Tensor wc = weight ? weight->contiguous() : at::Tensor();
  const at::Tensor bc = bias ? bias->contiguous() : at::Tensor();
  at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  const auto stat = x.options().dtype(accumulation(x.scalar_type()));
  at::Tensor mean = at::empty({s.rows}, stat), rstd = at::empty({s.rows}, stat);
  if (s.rows > 0 && s.cols > 0) {
    training::LayerNorm l = describe(s, x, weight, bias);
    l.stat_kind = *kind_of(mean.scalar_type());
    l.eps = eps;
    l.weight = data(wc);
    l.bias = data(bc);
    l.output = data(y);
    l.mean = data(mean);
    l.rstd = data(rstd);
    const char* err = TORCHADA_KERNEL(layer_norm_forward)(l, current_stream(x));
    TORCH_CHECK(err == nullptr, "torchada device kernel (layer_norm): ", err);
  } else if (s.rows > 0) {
    mean.fill_(std::numeric_limits<double>::quiet_NaN());
    rstd.fill_(std::numeric_limits<double>::quiet_NaN());
  }
  return {y, mean.view(s.stat_shape), rstd.view(s.stat_shape)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
    const at::Tensor& mean, const at::Tensor& rstd, const std::optional<at::Tensor>& w,
    const std::optional<at::Tensor>& b, std::array<bool, 3> mask) {
  const at::Tensor *weight = present(w), *bias = present(b);
  require_params(input, weight, bias);
  if (!floating_cuda(grad_out) || grad_out.scalar_type() != input.scalar_type() ||
      !floating_cuda(mean) || mean.scalar_type() != rstd.scalar_type())
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(input));
  const Split s = check_layer_norm(input, C10_AS_INTARRAYREF_SLOW(normalized_shape), weight, bias);
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous();
  const at::Tensor mc = mean.contiguous(), rc = rstd.contiguous();
  const at::Tensor wc = weight ? weight->contiguous() : at::Tensor();
  at::Tensor dx, dw, db;
  if (mask[0]) dx = at::empty_like(x, at::MemoryFormat::Contiguous);
  if (mask[1] && weight) dw = at::empty_like(wc, at::MemoryFormat::Contiguous);
  if (mask[2] && bias) db = at::empty_like(*bias, at::MemoryFormat::Contiguous);
  if (s.cols > 0 && (dx.defined() || dw.defined() || db.defined())) {
    training::LayerNorm l = describe(s, x, weight, bias);
    l.stat_kind = *kind_of(mc.scalar_type());
    l.weight = data(wc);
    l.mean = const_cast<char*>(static_cast<const char*>(mc.const_data_ptr()));
    l.rstd = const_cast<char*>(static_cast<const char*>(rc.const_data_ptr()));
    l.grad_output = static_cast<const char*>(dy.const_data_ptr());
    l.grad_input = data(dx);
    l.grad_weight = data(dw);
    l.grad_bias = data(db);
    const char* err = TORCHADA_KERNEL(layer_norm_backward)(l, current_stream(x));
    TORCH_CHECK(err == nullptr, "torchada device kernel (layer_norm_backward): ", err);
  }
  return {dx, dw, db};
}

// ---- fused Adam / AdamW ---------------------------------------------------------------------

bool float_scalar_on(const at::Tensor& t, const at::Device& d) {
  return t.defined() && t.device() == d && t.scalar_type() == at::kFloat && t.numel() == 1;
}

template <bool AdamW>
void fused_adam_step(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                     at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                     at::TensorList state_steps, double lr, const at::Tensor* lr_tensor,
                     double beta1, double beta2, double weight_decay, double eps, bool amsgrad,
                     bool maximize, const std::optional<at::Tensor>& grad_scale,
                     const std::optional<at::Tensor>& found_inf) {
  const size_t n = params.size();
  if (n == 0) return;
  const at::Device device = params[0].device();
  // The common case only (the bridge and PyTorch's checks take the rest): every list as long
  // as params, each tensor contiguous, of params[i]'s dtype, shape and device; float step
  // counts and scalars on that device.
  if (grads.size() != n || exp_avgs.size() != n || exp_avg_sqs.size() != n ||
      state_steps.size() != n || (amsgrad && max_exp_avg_sqs.size() != n))
    throw NotServed();
  for (size_t i = 0; i < n; ++i) {
    const at::Tensor& p = params[i];
    if (!floating_cuda(p) || p.device() != device || !p.is_contiguous()) throw NotServed();
    std::vector<at::Tensor> same = {grads[i], exp_avgs[i], exp_avg_sqs[i]};
    if (amsgrad) same.push_back(max_exp_avg_sqs[i]);
    for (const at::Tensor& t : same)
      if (!t.defined() || t.device() != device || t.scalar_type() != p.scalar_type() ||
          !t.sizes().equals(p.sizes()) || !t.is_contiguous())
        throw NotServed();
    if (!float_scalar_on(state_steps[i], device)) throw NotServed();
  }
  const at::Tensor* scale = present(grad_scale);
  const at::Tensor* inf = present(found_inf);
  if ((scale && !float_scalar_on(*scale, device)) || (inf && !float_scalar_on(*inf, device)))
    throw NotServed();
  if (lr_tensor && !float_scalar_on(*lr_tensor, device)) throw NotServed();
  c10::OptionalDeviceGuard g(device);
  void* stream = current_stream(params[0]);
  for (size_t i = 0; i < n; ++i) {
    const at::Tensor& p = params[i];
    training::Adam a;
    a.n = p.numel();
    a.kind = *kind_of(p.scalar_type());
    a.compute = p.scalar_type() == at::kDouble ? Compute::kDouble : Compute::kFloat;
    a.param = data(p);
    a.grad = data(grads[i]);
    a.exp_avg = data(exp_avgs[i]);
    a.exp_avg_sq = data(exp_avg_sqs[i]);
    a.max_exp_avg_sq = amsgrad ? data(max_exp_avg_sqs[i]) : nullptr;
    a.step = state_steps[i].const_data_ptr<float>();
    a.lr_ptr = lr_tensor ? lr_tensor->const_data_ptr<float>() : nullptr;
    a.grad_scale = scale ? scale->const_data_ptr<float>() : nullptr;
    a.found_inf = inf ? inf->const_data_ptr<float>() : nullptr;
    a.lr = lr;
    a.beta1 = beta1;
    a.beta2 = beta2;
    a.weight_decay = weight_decay;
    a.eps = eps;
    a.amsgrad = amsgrad;
    a.maximize = maximize;
    a.adamw = AdamW;
    const char* err = TORCHADA_KERNEL(adam_step)(a, stream);
    TORCH_CHECK(err == nullptr, "torchada device kernel (fused adam): ", err);
  }
}

template <bool AdamW>
void fused_adam(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                at::TensorList state_steps, double lr, double beta1, double beta2,
                double weight_decay, double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf) {
  fused_adam_step<AdamW>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr,
                         nullptr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale,
                         found_inf);
}

template <bool AdamW>
void fused_adam_tensor_lr(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                          at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                          at::TensorList state_steps, const at::Tensor& lr, double beta1,
                          double beta2, double weight_decay, double eps, bool amsgrad,
                          bool maximize, const std::optional<at::Tensor>& grad_scale,
                          const std::optional<at::Tensor>& found_inf) {
  // A CPU learning rate is read once, as PyTorch's CUDA operator reads it.
  const bool on_host = lr.defined() && lr.device().is_cpu();
  fused_adam_step<AdamW>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                         on_host ? lr.item<double>() : 0.0, on_host ? nullptr : &lr, beta1, beta2,
                         weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

}  // namespace

std::vector<Kernel> training_kernels() {
  std::vector<Kernel> v;
  v.push_back(kernel<&layer_norm>("aten::native_layer_norm"));
  v.push_back(kernel<&layer_norm_backward>("aten::native_layer_norm_backward"));
  v.push_back(kernel<&fused_adam<true>>("aten::_fused_adamw_"));
  v.push_back(kernel<&fused_adam_tensor_lr<true>>("aten::_fused_adamw_.tensor_lr"));
  v.push_back(kernel<&fused_adam<false>>("aten::_fused_adam_"));
  v.push_back(kernel<&fused_adam_tensor_lr<false>>("aten::_fused_adam_.tensor_lr"));
  return v;
}

}  // namespace torchada::ops::device
