// CPU kernels for operators PyTorch implements only for CUDA, so that the bridge can run them.
//
// The fused RNN cells: ATen's LSTM/GRU layers call them for CUDA inputs (RNN.cpp), with the
// autograd formulas of derivatives.yaml calling their *_backward_impl. The workspace layouts are
// those of the CUDA kernels (aten/src/ATen/native/cuda/RNN.cu):
//   LSTM  workspace [B, 4H] = activated gates i, f, g, o
//   GRU   workspace [B, 5H] = r, z, n, hx, hn (hn with the hidden bias)
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

}  // namespace

std::vector<std::string> register_cpu_kernels() {
  std::vector<std::string> names;
  static auto* lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::CPU,
                                        __FILE__, __LINE__);  // live until exit
  auto add = [&](const char* name, auto fn) {
    auto op = c10::Dispatcher::singleton().findOp({std::string("aten::") + name, ""});
    if (!op || op->hasKernelForDispatchKey(c10::DispatchKey::CPU)) return;  // PyTorch has one
    lib->impl(name, std::move(fn));
    names.push_back(std::string("aten::") + name);
  };
  add("_thnn_fused_lstm_cell", TORCH_FN(lstm_cell));
  add("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(lstm_cell_backward));
  add("_thnn_fused_gru_cell", TORCH_FN(gru_cell));
  add("_thnn_fused_gru_cell_backward", TORCH_FN(gru_cell_backward));
  add("_fused_rms_norm_backward", TORCH_FN(rms_norm_backward));
  return names;
}

}  // namespace torchada::ops::bridge
