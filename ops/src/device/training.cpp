// Fused operators of a training step on the device: layer norm and its backward
// (kernels/layer_norm.cu), the fused Adam / AdamW step (kernels/adam.cu), with the checks
// PyTorch's CUDA operators make first; the fused LSTM and GRU cells and GradScaler's
// operators, composed of the elementwise engine.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <array>
#include <limits>
#include <vector>

#include "../device_kernels.h"
#include "device.h"
#include "kernel_table.h"

namespace torchada::ops::device {
namespace {

using training::Compute;

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
    check_launch("layer_norm", TORCHADA_KERNEL(layer_norm_forward)(l, current_stream(x)));
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
    check_launch("layer_norm_backward", TORCHADA_KERNEL(layer_norm_backward)(l, current_stream(x)));
  }
  return {dx, dw, db};
}

// ---- RMS norm ---------------------------------------------------------------------------------
// nn.RMSNorm / F.rms_norm (_fused_rms_norm and its backward), composed of the reduction and
// elementwise engines in the accumulation type; rstd saved in that type, shaped as layer norm's.

std::vector<int64_t> normalized_dims(const at::Tensor& input, at::IntArrayRef normalized_shape) {
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - static_cast<int64_t>(normalized_shape.size()); d < input.dim();
       ++d)
    dims.push_back(d);
  return dims;
}

std::tuple<at::Tensor, at::Tensor> rms_norm(const at::Tensor& input,
                                            at::IntArrayRef normalized_shape,
                                            const std::optional<at::Tensor>& w,
                                            std::optional<double> eps) {
  const at::Tensor* weight = present(w);
  require_params(input, weight, nullptr);
  c10::OptionalDeviceGuard g(at::device_of(input));
  (void)check_layer_norm(input, normalized_shape, weight, nullptr);
  const auto acc = accumulation(input.scalar_type());
  // PyTorch's default: the machine epsilon of the accumulation type.
  const double e = eps ? *eps
                       : (acc == at::kDouble ? std::numeric_limits<double>::epsilon()
                                             : std::numeric_limits<float>::epsilon());
  const at::Tensor x = input.to(acc);
  const at::Tensor rstd =
      at::rsqrt(at::mean(x * x, normalized_dims(input, normalized_shape), true) + e);
  at::Tensor y = x * rstd;
  if (weight) y.mul_(weight->to(acc));
  return {y.to(input.scalar_type()), rstd};
}

std::tuple<at::Tensor, at::Tensor> rms_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
    const at::Tensor& rstd, const std::optional<at::Tensor>& w, std::array<bool, 2> mask) {
  const at::Tensor* weight = present(w);
  require_params(input, weight, nullptr);
  if (!floating_cuda(grad_out) || !floating_cuda(rstd)) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(input));
  const Split s = check_layer_norm(input, normalized_shape, weight, nullptr);
  const auto acc = accumulation(input.scalar_type());
  const auto dims = normalized_dims(input, normalized_shape);
  const at::Tensor dy = grad_out.to(acc);
  const at::Tensor x_hat = input.to(acc) * rstd.to(acc);
  at::Tensor grad_input, grad_weight;
  if (mask[0]) {
    const at::Tensor gw = weight ? dy * weight->to(acc) : dy;
    grad_input =
        (rstd.to(acc) * (gw - x_hat * at::mean(gw * x_hat, dims, true))).to(input.scalar_type());
  }
  if (mask[1] && weight) {
    std::vector<int64_t> outer;
    for (int64_t d = 0; d < input.dim() - static_cast<int64_t>(dims.size()); ++d)
      outer.push_back(d);
    grad_weight = (outer.empty() ? dy * x_hat : at::sum(dy * x_hat, outer))
                      .to(weight->scalar_type())
                      .view(weight->sizes());
  }
  (void)s;
  return {grad_input, grad_weight};
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
    check_launch("fused adam", TORCHADA_KERNEL(adam_step)(a, stream));
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

// ---- recurrent cells ------------------------------------------------------------------------
// The fused LSTM and GRU cells nn.LSTM / nn.GRU run on CUDA without cuDNN, composed of the
// elementwise engine in the accumulation type; the workspace keeps what PyTorch's CUDA kernels
// keep (the activated gates), so either side's backward can take the other's forward.

void require_cell(std::initializer_list<const at::Tensor*> ts) {
  for (const at::Tensor* t : ts)
    if (t && !floating_cuda(*t)) throw NotServed();
}

// Gates plus their biases, in the accumulation type, split into `n` chunks along dimension 1.
std::vector<at::Tensor> gate_chunks(const at::Tensor& gates, const at::Tensor* bias, int64_t n) {
  at::Tensor g = gates.to(accumulation(gates.scalar_type()));
  if (bias) g = g + bias->to(g.scalar_type());
  return g.chunk(n, 1);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  const at::Tensor *ib = present(input_bias), *hb = present(hidden_bias);
  require_cell({&input_gates, &hidden_gates, &cx, ib, hb});
  c10::OptionalDeviceGuard g(at::device_of(cx));
  const auto in = gate_chunks(input_gates, ib, 4), hid = gate_chunks(hidden_gates, hb, 4);
  const at::Tensor i = at::sigmoid(in[0] + hid[0]), f = at::sigmoid(in[1] + hid[1]);
  const at::Tensor c = at::tanh(in[2] + hid[2]), o = at::sigmoid(in[3] + hid[3]);
  const auto type = input_gates.scalar_type();
  const at::Tensor cy = f * cx.to(i.scalar_type()) + i * c;
  const at::Tensor hy = o * at::tanh(cy);
  return {hy.to(type), cy.to(type), at::cat({i, f, c, o}, 1).to(type)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(
    const std::optional<at::Tensor>& grad_hy_opt, const std::optional<at::Tensor>& grad_cy_opt,
    const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  const at::Tensor *grad_hy = present(grad_hy_opt), *grad_cy = present(grad_cy_opt);
  require_cell({grad_hy, grad_cy, &cx, &cy, &workspace});
  if (!grad_hy && !grad_cy) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(cx));
  const auto type = workspace.scalar_type(), acc = accumulation(type);
  const auto gates = workspace.to(acc).chunk(4, 1);
  const at::Tensor &i = gates[0], &f = gates[1], &c = gates[2], &o = gates[3];
  const at::Tensor tanh_cy = at::tanh(cy.to(acc));
  at::Tensor gcx = at::zeros_like(tanh_cy), go = at::zeros_like(tanh_cy);
  if (grad_hy) {
    const at::Tensor gh = grad_hy->to(acc);
    gcx = gh * o * (1 - tanh_cy * tanh_cy);
    go = gh * tanh_cy * o * (1 - o);
  }
  if (grad_cy) gcx = gcx + grad_cy->to(acc);
  const at::Tensor gi = gcx * c * i * (1 - i), gf = gcx * cx.to(acc) * f * (1 - f);
  const at::Tensor gc = gcx * i * (1 - c * c);
  const at::Tensor grad_gates = at::cat({gi, gf, gc, go}, 1);
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0).to(type) : at::Tensor();
  return {grad_gates.to(type), (gcx * f).to(cx.scalar_type()), grad_bias};
}

std::tuple<at::Tensor, at::Tensor> gru_cell(const at::Tensor& input_gates,
                                            const at::Tensor& hidden_gates, const at::Tensor& hx,
                                            const std::optional<at::Tensor>& input_bias,
                                            const std::optional<at::Tensor>& hidden_bias) {
  const at::Tensor *ib = present(input_bias), *hb = present(hidden_bias);
  require_cell({&input_gates, &hidden_gates, &hx, ib, hb});
  c10::OptionalDeviceGuard g(at::device_of(hx));
  const auto in = gate_chunks(input_gates, ib, 3), hid = gate_chunks(hidden_gates, hb, 3);
  const at::Tensor r = at::sigmoid(in[0] + hid[0]), z = at::sigmoid(in[1] + hid[1]);
  const at::Tensor& hn = hid[2];
  const at::Tensor n = at::tanh(in[2] + r * hn);
  const at::Tensor h = hx.to(r.scalar_type());
  const at::Tensor hy = n + z * (h - n);
  const auto type = input_gates.scalar_type();
  return {hy.to(type), at::cat({r, z, n, hn, h}, 1).to(type)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  require_cell({&grad_hy, &workspace});
  c10::OptionalDeviceGuard g(at::device_of(grad_hy));
  const auto type = workspace.scalar_type(), acc = accumulation(type);
  const auto w = workspace.to(acc).chunk(5, 1);
  const at::Tensor &r = w[0], &z = w[1], &n = w[2], &hn = w[3], &hx = w[4];
  const at::Tensor go = grad_hy.to(acc);
  const at::Tensor gz = go * (hx - n) * (1 - z) * z;
  const at::Tensor ghx = go * z;
  const at::Tensor gn = go * (1 - z) * (1 - n * n);
  const at::Tensor ghn = gn * r;
  const at::Tensor gr = gn * hn * (1 - r) * r;
  const at::Tensor grad_input = at::cat({gr, gz, gn}, 1), grad_hidden = at::cat({gr, gz, ghn}, 1);
  at::Tensor bi, bh;
  if (has_bias) {
    bi = grad_input.sum(0).to(type);
    bh = grad_hidden.sum(0).to(type);
  }
  return {grad_input.to(type), grad_hidden.to(type), ghx.to(grad_hy.scalar_type()), bi, bh};
}

// ---- dropout's backward (the mask is drawn in random.cpp) -------------------------------------

at::Tensor dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask, double scale) {
  if (!floating_cuda(grad_output) || !mask.is_cuda() || mask.scalar_type() != at::kBool)
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(grad_output));
  return grad_output * mask * scale;
}

// ---- losses: mean squared error, log-sigmoid (binary cross-entropy with logits) ---------------

at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  if (!floating_cuda(self) || !floating_cuda(target) || self.device() != target.device())
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  const auto type = at::result_type(self, target);
  const auto acc = accumulation(type);
  const at::Tensor d = self.to(acc) - target.to(acc);
  const at::Tensor sq = d * d;
  if (reduction == at::Reduction::None) return sq.to(type);
  return (reduction == at::Reduction::Mean ? sq.mean() : sq.sum()).to(type);
}

at::Tensor& mse_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                  const at::Tensor& target, int64_t reduction,
                                  at::Tensor& grad_input) {
  if (!floating_cuda(grad_output) || !floating_cuda(self) || !floating_cuda(target) ||
      !floating_cuda(grad_input))
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  const double norm =
      reduction == at::Reduction::Mean ? 2.0 / static_cast<double>(self.numel()) : 2.0;
  const auto acc = accumulation(grad_input.scalar_type());
  const at::Tensor r = (self.to(acc) - target.to(acc)).mul_(norm) * grad_output.to(acc);
  at::native::resize_output(grad_input, r.sizes());
  grad_input.copy_(r);
  return grad_input;
}

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable at both ends; the buffer is empty, as
// PyTorch's CUDA kernel leaves it (only its CPU kernel uses one).
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& self) {
  if (!floating_cuda(self)) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  const at::Tensor x = self.to(accumulation(self.scalar_type()));
  const at::Tensor out = at::clamp_max(x, 0) - at::log1p(at::exp(-at::abs(x)));
  return {out.to(self.scalar_type()), at::empty({0}, self.options())};
}

// d/dx log(sigmoid(x)) = sigmoid(-x).
at::Tensor log_sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                const at::Tensor& buffer) {
  (void)buffer;
  if (!floating_cuda(grad_output) || !floating_cuda(self)) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  const auto acc = accumulation(self.scalar_type());
  return (at::sigmoid(-self.to(acc)) * grad_output.to(acc)).to(self.scalar_type());
}

// ---- automatic mixed precision: GradScaler's two operators ----------------------------------
// Composed of device kernels so that no value leaves the device (the scale is never read on the
// host, as in PyTorch's CUDA kernels).

bool amp_scalar(const at::Tensor& t, at::ScalarType type) {
  return t.defined() && t.is_cuda() && t.numel() == 1 && t.scalar_type() == type;
}

// Each tensor multiplied by inv_scale in place; found_inf set to 1 when any element of any of
// them is infinite or NaN (the largest magnitude is then not finite: max propagates NaN).
void amp_unscale(at::TensorList self, at::Tensor& found_inf, const at::Tensor& inv_scale) {
  if (!amp_scalar(found_inf, at::kFloat) || !amp_scalar(inv_scale, at::kFloat) ||
      found_inf.device() != inv_scale.device())
    throw NotServed();
  for (const at::Tensor& t : self)
    if (!floating_cuda(t) || t.device() != inv_scale.device()) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(inv_scale));
  std::vector<at::Tensor> largest;  // each tensor's, then one test for all
  for (const at::Tensor& t : self)
    if (t.numel() > 0) largest.push_back(at::amax(at::abs(t)).to(at::kFloat));
  if (!largest.empty()) {
    const at::Tensor all = at::stack(largest).amax();
    found_inf.copy_(at::where(at::isfinite(all), found_inf, 1.0));
  }
  for (const at::Tensor& t : self) const_cast<at::Tensor&>(t).mul_(inv_scale);
}

// GradScaler's update: back off after an overflow, grow after growth_interval clean steps (when
// the grown scale is finite), as PyTorch's _amp_update_scale_ kernel computes it.
at::Tensor& amp_update_scale(at::Tensor& scale, at::Tensor& growth_tracker,
                             const at::Tensor& found_inf, double growth_factor,
                             double backoff_factor, int64_t growth_interval) {
  if (!amp_scalar(scale, at::kFloat) || !amp_scalar(growth_tracker, at::kInt) ||
      !amp_scalar(found_inf, at::kFloat) || growth_tracker.device() != scale.device() ||
      found_inf.device() != scale.device())
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(scale));
  const at::Tensor overflow = found_inf.ne(0);
  const at::Tensor successful = growth_tracker + 1;
  const at::Tensor grow = successful.eq(growth_interval);
  const at::Tensor wide = scale.to(at::kDouble);
  const at::Tensor grown = (wide * growth_factor).to(at::kFloat);
  const at::Tensor backed_off = (wide * backoff_factor).to(at::kFloat);
  const at::Tensor kept = at::where(grow, at::where(at::isfinite(grown), grown, scale), scale);
  const at::Tensor new_scale = at::where(overflow, backed_off, kept);
  const at::Tensor zero = at::zeros_like(successful);
  const at::Tensor new_tracker = at::where(overflow, zero, at::where(grow, zero, successful));
  scale.copy_(new_scale);
  growth_tracker.copy_(new_tracker);
  return scale;
}

}  // namespace

std::vector<Kernel> training_kernels() {
  std::vector<Kernel> v;
  v.push_back(kernel<&layer_norm>("aten::native_layer_norm"));
  v.push_back(kernel<&layer_norm_backward>("aten::native_layer_norm_backward"));
  v.push_back(kernel<&rms_norm>("aten::_fused_rms_norm"));
  v.push_back(kernel<&rms_norm_backward>("aten::_fused_rms_norm_backward"));
  v.push_back(kernel<&fused_adam<true>>("aten::_fused_adamw_"));
  v.push_back(kernel<&fused_adam_tensor_lr<true>>("aten::_fused_adamw_.tensor_lr"));
  v.push_back(kernel<&fused_adam<false>>("aten::_fused_adam_"));
  v.push_back(kernel<&fused_adam_tensor_lr<false>>("aten::_fused_adam_.tensor_lr"));
  v.push_back(kernel<&lstm_cell>("aten::_thnn_fused_lstm_cell"));
  v.push_back(kernel<&lstm_cell_backward>("aten::_thnn_fused_lstm_cell_backward_impl"));
  v.push_back(kernel<&gru_cell>("aten::_thnn_fused_gru_cell"));
  v.push_back(kernel<&gru_cell_backward>("aten::_thnn_fused_gru_cell_backward"));
  v.push_back(kernel<&mse_loss>("aten::mse_loss"));
  v.push_back(kernel<&mse_loss_backward_out>("aten::mse_loss_backward.grad_input"));
  v.push_back(kernel<&log_sigmoid_forward>("aten::log_sigmoid_forward"));
  v.push_back(kernel<&log_sigmoid_backward>("aten::log_sigmoid_backward"));
  v.push_back(kernel<&dropout_backward>("aten::native_dropout_backward"));
  v.push_back(kernel<&amp_unscale>("aten::_amp_foreach_non_finite_check_and_unscale_"));
  v.push_back(kernel<&amp_update_scale>("aten::_amp_update_scale_"));
  return v;
}

}  // namespace torchada::ops::device
