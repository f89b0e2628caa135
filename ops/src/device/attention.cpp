// Scaled dot-product attention on the device: the overrideable fused-attention pair that the
// bridge routes attention to (src/bridge/sdpa.cpp), composed of batched matrix products (cuBLAS
// through the shim) and the device kernels' softmax arithmetic, in the accumulation type (float
// for half and bfloat16). The forward saves the log-sum-exp of each query row, as flash attention
// does, and the backward recomputes the probabilities from it instead of keeping them.
// Dropout and the debug mask are not composed here: those calls take the host kernel.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "device.h"
#include "kernel_table.h"

namespace torchada::ops::device {
namespace {

bool floating_cuda(const at::Tensor& t) {
  return t.defined() && t.is_cuda() && t.layout() == at::kStrided &&
         (t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble ||
          t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
}

at::ScalarType accumulation(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}

// q, k, v of one floating dtype on one device, [..., L, E] / [..., S, E] / [..., S, Ev], the
// same number of heads (grouped-query attention takes the host kernel).
void require_qkv(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  if (!floating_cuda(q) || !floating_cuda(k) || !floating_cuda(v)) throw NotServed();
  if (k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type() ||
      k.device() != q.device() || v.device() != q.device())
    throw NotServed();
  if (q.dim() < 2 || k.dim() != q.dim() || v.dim() != q.dim()) throw NotServed();
  for (int64_t d = 0; d + 2 < q.dim(); ++d)
    if (k.size(d) != q.size(d) || v.size(d) != q.size(d)) throw NotServed();
}

double softmax_scale(const at::Tensor& q, std::optional<double> scale) {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
}

// The scaled scores q k^T * scale (+ bias, or -inf where a boolean mask is false, or above the
// diagonal for causal attention, aligned top-left as PyTorch's is_causal is), in `acc`.
at::Tensor scores(const at::Tensor& q, const at::Tensor& k, const at::Tensor& bias, bool is_causal,
                  double scale, at::ScalarType acc) {
  at::Tensor s = at::matmul(q.to(acc), k.to(acc).transpose(-2, -1)).mul_(scale);
  const double inf = std::numeric_limits<double>::infinity();
  if (bias.defined()) {
    if (bias.scalar_type() == at::kBool)
      s.masked_fill_(bias.logical_not(), -inf);
    else
      s.add_(bias.to(acc));
  }
  if (is_causal) {
    const int64_t rows = s.size(-2), cols = s.size(-1);
    const auto index = s.options().dtype(at::kLong);
    const at::Tensor above =
        at::arange(cols, index).unsqueeze(0).gt(at::arange(rows, index).unsqueeze(1));
    s.masked_fill_(above, -inf);
  }
  return s;
}

using Forward = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt,
                           at::Tensor, at::Tensor, at::Tensor>;

Forward attention_forward(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                          const std::optional<at::Tensor>& attn_bias, double dropout_p,
                          bool is_causal, bool return_debug_mask, std::optional<double> scale) {
  require_qkv(query, key, value);
  const at::Tensor bias = attn_bias && attn_bias->defined() ? *attn_bias : at::Tensor();
  if (dropout_p != 0.0 || return_debug_mask || (bias.defined() && !bias.is_cuda()))
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(query));
  const auto acc = accumulation(query.scalar_type());
  const double inf = std::numeric_limits<double>::infinity();
  const at::Tensor s = scores(query, key, bias, is_causal, softmax_scale(query, scale), acc);
  // A row whose every score is -inf (fully masked) gets probabilities 0 and log-sum-exp -inf.
  const at::Tensor row_max = at::amax(s, {-1}, true);
  const at::Tensor shift = row_max.masked_fill(row_max.eq(-inf), 0);
  const at::Tensor e = at::exp(s - shift);
  const at::Tensor total = at::sum(e, {-1}, true);
  const at::Tensor p = e / total.masked_fill(total.eq(0), 1);
  const at::Tensor lse = (shift + at::log(total)).squeeze(-1);
  const at::Tensor out = at::matmul(p, value.to(acc)).to(query.scalar_type());
  const at::Tensor none = at::empty({0}, query.options());
  const at::Tensor none_long = at::empty({0}, query.options().dtype(at::kLong));
  return {out,       lse,       none, none, c10::SymInt(query.size(-2)), c10::SymInt(key.size(-2)),
          none_long, none_long, none};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> attention_backward(
    const at::Tensor& grad_out, const at::Tensor& query, const at::Tensor& key,
    const at::Tensor& value, const at::Tensor& attn_bias, std::array<bool, 4> mask,
    const at::Tensor& out, const at::Tensor& logsumexp, const at::Tensor&, const at::Tensor&,
    c10::SymInt, c10::SymInt, double dropout_p, bool is_causal, const at::Tensor&,
    const at::Tensor&, std::optional<double> scale) {
  require_qkv(query, key, value);
  if (dropout_p != 0.0 || !floating_cuda(grad_out) || !floating_cuda(out) ||
      !floating_cuda(logsumexp) || (attn_bias.defined() && !attn_bias.is_cuda()) ||
      (mask[3] && attn_bias.defined() && attn_bias.scalar_type() != at::kBool))
    throw NotServed();  // a bias that wants its gradient: the host kernel
  c10::OptionalDeviceGuard g(at::device_of(query));
  const auto acc = accumulation(query.scalar_type());
  const double inf = std::numeric_limits<double>::infinity();
  const double sc = softmax_scale(query, scale);
  const at::Tensor s = scores(query, key, attn_bias, is_causal, sc, acc);
  // The forward's probabilities, from its log-sum-exp (+inf for fully masked rows: p = 0).
  const at::Tensor lse = logsumexp.to(acc).unsqueeze(-1);
  const at::Tensor p = at::exp(s - lse.masked_fill(lse.eq(-inf), inf));
  const at::Tensor dout = grad_out.to(acc);
  at::Tensor dq, dk, dv;
  if (mask[2]) dv = at::matmul(p.transpose(-2, -1), dout).to(value.scalar_type());
  if (mask[0] || mask[1]) {
    const at::Tensor dp = at::matmul(dout, value.to(acc).transpose(-2, -1));
    const at::Tensor delta = at::sum(dout * out.to(acc), {-1}, true);
    const at::Tensor ds = p * (dp - delta);
    if (mask[0]) dq = at::matmul(ds, key.to(acc)).mul_(sc).to(query.scalar_type());
    if (mask[1])
      dk = at::matmul(ds.transpose(-2, -1), query.to(acc)).mul_(sc).to(key.scalar_type());
  }
  return {dq, dk, dv, at::Tensor()};
}

}  // namespace

std::vector<Kernel> attention_kernels() {
  std::vector<Kernel> v;
  v.push_back(kernel<&attention_forward>("aten::_scaled_dot_product_fused_attention_overrideable"));
  v.push_back(kernel<&attention_backward>(
      "aten::_scaled_dot_product_fused_attention_overrideable_backward"));
  return v;
}

}  // namespace torchada::ops::device
