// CPU kernels for operators PyTorch implements only for CUDA, so that the bridge can run them.
//
// The fused RNN cells: ATen's LSTM/GRU layers call them for CUDA inputs (RNN.cpp), with the
// autograd formulas of derivatives.yaml calling their *_backward_impl. The workspace layouts are
// those of the CUDA kernels (aten/src/ATen/native/cuda/RNN.cu):
//   LSTM  workspace [B, 4H] = activated gates i, f, g, o
//   GRU   workspace [B, 5H] = r, z, n, hx, hn (hn with the hidden bias)
// SyncBatchNorm's kernels (batch_norm_stats, _elemt, _gather_stats[_with_counts], _backward_reduce,
// _backward_elemt): the same statistics composed of CPU operators.
// install.cpp lists every other operator with a CUDA kernel and no CPU one
// (torch.ops.torchada.bridge_uncovered()).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <memory>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

at::Tensor with_bias(at::Tensor g, const std::optional<at::Tensor>& b) {
  if (b && b->defined()) return g + *b;
  return g;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(const at::Tensor& input_gates,
                                                         const at::Tensor& hidden_gates,
                                                         const at::Tensor& cx,
                                                         const std::optional<at::Tensor>& ib,
                                                         const std::optional<at::Tensor>& hb) {
  at::Tensor gates = with_bias(with_bias(input_gates + hidden_gates, ib), hb);
  auto c = gates.chunk(4, 1);
  at::Tensor i = c[0].sigmoid(), f = c[1].sigmoid(), g = c[2].tanh(), o = c[3].sigmoid();
  at::Tensor cy = f * cx + i * g;
  at::Tensor hy = o * cy.tanh();
  at::Tensor workspace = at::cat({i, f, g, o}, 1);
  return {hy, cy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(
    const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy,
    const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  auto w = workspace.chunk(4, 1);
  const at::Tensor &i = w[0], &f = w[1], &g = w[2], &o = w[3];
  at::Tensor ghy = grad_hy && grad_hy->defined() ? *grad_hy : at::zeros_like(cx);
  at::Tensor gcy = grad_cy && grad_cy->defined() ? *grad_cy : at::zeros_like(cx);
  at::Tensor tcy = cy.tanh();
  at::Tensor gc = ghy * o * (1 - tcy * tcy) + gcy;
  at::Tensor gi = gc * g * (1 - i) * i;
  at::Tensor gf = gc * cx * (1 - f) * f;
  at::Tensor gg = gc * i * (1 - g * g);
  at::Tensor go = ghy * tcy * (1 - o) * o;
  at::Tensor grad_gates = at::cat({gi, gf, gg, go}, 1);
  at::Tensor grad_cx = gc * f;
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0, /*keepdim=*/false) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> gru_cell(const at::Tensor& input_gates,
                                            const at::Tensor& hidden_gates, const at::Tensor& hx,
                                            const std::optional<at::Tensor>& ib,
                                            const std::optional<at::Tensor>& hb) {
  auto ig = with_bias(input_gates, ib).chunk(3, 1);
  auto hg = with_bias(hidden_gates, hb).chunk(3, 1);
  at::Tensor r = (ig[0] + hg[0]).sigmoid();
  at::Tensor z = (ig[1] + hg[1]).sigmoid();
  at::Tensor hn = hg[2];
  at::Tensor n = (ig[2] + r * hn).tanh();
  at::Tensor hy = n + z * (hx - n);
  at::Tensor workspace = at::cat({r, z, n, hx, hn}, 1);
  return {hy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  auto w = workspace.chunk(5, 1);
  const at::Tensor &r = w[0], &z = w[1], &n = w[2], &hx = w[3], &hn = w[4];
  at::Tensor gz = grad_hy * (hx - n) * (1 - z) * z;
  at::Tensor ghx = grad_hy * z;
  at::Tensor gn = grad_hy * (1 - z) * (1 - n * n);
  at::Tensor ghn = gn * r;
  at::Tensor gr = gn * hn * (1 - r) * r;
  at::Tensor grad_input_gates = at::cat({gr, gz, gn}, 1);
  at::Tensor grad_hidden_gates = at::cat({gr, gz, ghn}, 1);
  at::Tensor gib = has_bias ? grad_input_gates.sum(0, false) : at::Tensor();
  at::Tensor ghb = has_bias ? grad_hidden_gates.sum(0, false) : at::Tensor();
  return {grad_input_gates, grad_hidden_gates, ghx, gib, ghb};
}

// RMSNorm's backward (nn.RMSNorm, F.rms_norm on CUDA go to _fused_rms_norm). rstd has one value
// per normalised row; computed in float, returned in the input's dtype.
std::tuple<at::Tensor, at::Tensor> rms_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight, std::array<bool, 2> mask) {
  const int64_t n = static_cast<int64_t>(normalized_shape.size());
  const int64_t axis = input.dim() - n;
  std::vector<int64_t> rshape(input.sizes().begin(), input.sizes().begin() + axis);
  rshape.insert(rshape.end(), static_cast<size_t>(n), 1);
  std::vector<int64_t> norm_dims, lead_dims;
  for (int64_t d = axis; d < input.dim(); ++d) norm_dims.push_back(d);
  for (int64_t d = 0; d < axis; ++d) lead_dims.push_back(d);
  at::Tensor x = input.to(at::kFloat), go = grad_out.to(at::kFloat);
  at::Tensor r = rstd.to(at::kFloat).reshape(rshape);
  at::Tensor xhat = x * r;
  at::Tensor grad_input, grad_weight;
  if (mask[0]) {
    at::Tensor g = weight && weight->defined() ? go * weight->to(at::kFloat) : go;
    grad_input = (r * (g - xhat * (g * xhat).mean(norm_dims, /*keepdim=*/true))).to(input.dtype());
  }
  if (mask[1] && weight && weight->defined())
    grad_weight = (go * xhat).sum(lead_dims).to(weight->dtype());
  return {grad_input, grad_weight};
}

// SyncBatchNorm's kernels (torch/nn/modules/_functions.py): per-rank statistics, their
// all-gathered combination, the normalisation, and the two backward passes. Channels are dim 1;
// statistics of reduced-precision inputs are kept in float, as the CUDA kernels keep them.
std::vector<int64_t> bn_reduce_dims(const at::Tensor& x) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}

at::Tensor bn_channel(const at::Tensor& v, const at::Tensor& x) {  // [C] -> [1, C, 1, ...]
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[1] = -1;
  return v.reshape(shape);
}

at::ScalarType bn_stat_type(const at::Tensor& x) {
  const at::ScalarType t = x.scalar_type();
  return (t == at::kHalf || t == at::kBFloat16) ? at::kFloat : t;
}

std::tuple<at::Tensor, at::Tensor> bn_stats(const at::Tensor& input, double eps) {
  at::Tensor x = input.to(bn_stat_type(input));
  const auto dims = bn_reduce_dims(x);
  at::Tensor mean = x.mean(dims);
  at::Tensor var = (x - bn_channel(mean, x)).square().mean(dims);
  return {mean, (var + eps).rsqrt()};
}

at::Tensor bn_elemt(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                    const std::optional<at::Tensor>& bias, const at::Tensor& mean,
                    const at::Tensor& invstd, double /*eps: folded into invstd*/) {
  at::Tensor x = input.to(mean.scalar_type());
  at::Tensor y = (x - bn_channel(mean, x)) * bn_channel(invstd, x);
  if (weight && weight->defined()) y = y * bn_channel(weight->to(y.scalar_type()), x);
  if (bias && bias->defined()) y = y + bn_channel(bias->to(y.scalar_type()), x);
  return y.to(input.scalar_type());
}

at::Tensor& bn_elemt_out(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                         const std::optional<at::Tensor>& bias, const at::Tensor& mean,
                         const at::Tensor& invstd, double eps, at::Tensor& out) {
  at::Tensor y = bn_elemt(input, weight, bias, mean, invstd, eps);
  out.resize_(y.sizes());
  out.copy_(y);
  return out;
}

std::tuple<at::Tensor, at::Tensor> bn_gather_stats_with_counts(
    const at::Tensor& /*input*/, const at::Tensor& mean, const at::Tensor& invstd,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    double momentum, double eps, const at::Tensor& counts) {
  // mean, invstd: [ranks, C]; counts: [ranks] elements per channel on each rank.
  at::Tensor n = counts.to(mean.scalar_type()).reshape({-1, 1});
  at::Tensor total = n.sum(0);
  at::Tensor global_mean = (n * mean).sum(0) / total;
  at::Tensor var_i = invstd.square().reciprocal() - eps;
  at::Tensor var = (n * (var_i + (mean - global_mean).square())).sum(0) / total;
  at::NoGradGuard no_grad;
  if (running_mean && running_mean->defined())
    running_mean->mul_(1 - momentum).add_(global_mean.to(running_mean->scalar_type()), momentum);
  if (running_var && running_var->defined()) {
    at::Tensor unbiased = var * total / (total - 1);
    running_var->mul_(1 - momentum).add_(unbiased.to(running_var->scalar_type()), momentum);
  }
  return {global_mean, (var + eps).rsqrt()};
}

std::tuple<at::Tensor, at::Tensor> bn_gather_stats(const at::Tensor& input, const at::Tensor& mean,
                                                   const at::Tensor& invstd,
                                                   const std::optional<at::Tensor>& running_mean,
                                                   const std::optional<at::Tensor>& running_var,
                                                   double momentum, double eps, int64_t count) {
  at::Tensor counts = at::full({mean.size(0)}, static_cast<double>(count), mean.options());
  return bn_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps,
                                     counts);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> bn_backward_reduce(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean,
    const at::Tensor& invstd, const std::optional<at::Tensor>& weight, bool input_g, bool weight_g,
    bool bias_g) {
  at::Tensor x = input.to(mean.scalar_type()), dy = grad_out.to(mean.scalar_type());
  const auto dims = bn_reduce_dims(x);
  at::Tensor sum_dy = dy.sum(dims);
  at::Tensor sum_dy_xmu = (dy * (x - bn_channel(mean, x))).sum(dims);
  at::Tensor grad_weight, grad_bias;
  if (weight_g && weight && weight->defined())
    grad_weight = (sum_dy_xmu * invstd).to(weight->scalar_type());
  if (bias_g && weight && weight->defined()) grad_bias = sum_dy.to(weight->scalar_type());
  if (!input_g) sum_dy = sum_dy_xmu = at::Tensor();
  return {sum_dy, sum_dy_xmu, grad_weight, grad_bias};
}

at::Tensor bn_backward_elemt(const at::Tensor& grad_out, const at::Tensor& input,
                             const at::Tensor& mean, const at::Tensor& invstd,
                             const std::optional<at::Tensor>& weight, const at::Tensor& sum_dy,
                             const at::Tensor& sum_dy_xmu, const at::Tensor& count) {
  // sum_dy, sum_dy_xmu: all-reduced over the ranks; count: elements per channel of each rank.
  at::Tensor x = input.to(mean.scalar_type()), dy = grad_out.to(mean.scalar_type());
  at::Tensor total = count.to(mean.scalar_type()).sum();
  at::Tensor mean_dy = bn_channel(sum_dy / total, x);
  at::Tensor mean_dy_xmu = bn_channel(sum_dy_xmu / total, x);
  at::Tensor is = bn_channel(invstd, x);
  at::Tensor scale = is;
  if (weight && weight->defined()) scale = scale * bn_channel(weight->to(x.scalar_type()), x);
  at::Tensor grad_in =
      (dy - mean_dy - (x - bn_channel(mean, x)) * is.square() * mean_dy_xmu) * scale;
  return grad_in.to(input.scalar_type());
}

}  // namespace

std::vector<std::string> register_cpu_kernels() {
  std::vector<std::string> names;
  static auto* lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::CPU,
                                        __FILE__, __LINE__);  // live until exit
  auto add = [&](const char* name, auto fn) {                 // name: "op" or "op.overload"
    const std::string full(name);
    const size_t dot = full.find('.');
    auto op = c10::Dispatcher::singleton().findOp(
        {"aten::" + full.substr(0, dot), dot == std::string::npos ? "" : full.substr(dot + 1)});
    if (!op || op->hasKernelForDispatchKey(c10::DispatchKey::CPU)) return;  // PyTorch has one
    lib->impl(name, std::move(fn));
    names.push_back(std::string("aten::") + name);
  };
  add("_thnn_fused_lstm_cell", TORCH_FN(lstm_cell));
  add("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(lstm_cell_backward));
  add("_thnn_fused_gru_cell", TORCH_FN(gru_cell));
  add("_thnn_fused_gru_cell_backward", TORCH_FN(gru_cell_backward));
  add("_fused_rms_norm_backward", TORCH_FN(rms_norm_backward));
  add("batch_norm_stats", TORCH_FN(bn_stats));
  add("batch_norm_elemt", TORCH_FN(bn_elemt));
  add("batch_norm_elemt.out", TORCH_FN(bn_elemt_out));
  add("batch_norm_gather_stats", TORCH_FN(bn_gather_stats));
  add("batch_norm_gather_stats_with_counts", TORCH_FN(bn_gather_stats_with_counts));
  add("batch_norm_backward_reduce", TORCH_FN(bn_backward_reduce));
  add("batch_norm_backward_elemt", TORCH_FN(bn_backward_elemt));
  return names;
}

}  // namespace torchada::ops::bridge
