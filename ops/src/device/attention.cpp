// Scaled dot-product attention on the device: the overrideable fused-attention pair that the
// bridge routes attention to (src/bridge/sdpa.cpp), composed of batched matrix products (cuBLAS
// through the shim) and the fused softmax rows (kernels/softmax.cu: scale, causal mask, softmax
// and log-sum-exp in one launch), in the accumulation type (float for half and bfloat16). The
// forward saves each query row's log-sum-exp, as flash attention does; the backward recomputes
// the probabilities instead of keeping them. Grouped-query attention expands the key and value
// heads and sums their gradients back.
// Dropout and the debug mask are not composed here: those calls take the host kernel.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <array>
#include <vector>
#include <cmath>
#include <limits>
#include <optional>

#include "device.h"
#include "kernel_table.h"

namespace torchada::ops::device {
namespace {

// q, k, v of one floating dtype on one device, [..., Hq, L, E] / [..., Hk, S, E] /
// [..., Hk, S, Ev], with Hq a multiple of Hk (grouped-query attention: query head h reads key and
// value head h / (Hq / Hk)).
void require_qkv(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  if (!floating_cuda(q) || !floating_cuda(k) || !floating_cuda(v)) throw NotServed();
  if (k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type() ||
      k.device() != q.device() || v.device() != q.device())
    throw NotServed();
  if (q.dim() < 3 || k.dim() != q.dim() || v.dim() != q.dim()) throw NotServed();
  for (int64_t d = 0; d + 3 < q.dim(); ++d)
    if (k.size(d) != q.size(d) || v.size(d) != q.size(d)) throw NotServed();
  if (k.size(-3) != v.size(-3) || k.size(-3) == 0 || q.size(-3) % k.size(-3) != 0)
    throw NotServed();
}

// Key or value heads repeated for each query head of their group: [..., Hk * groups, S, E].
at::Tensor expand_heads(const at::Tensor& t, int64_t groups) {
  if (groups == 1) return t;
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  sizes.insert(sizes.end() - 2, groups);
  std::vector<int64_t> merged(t.sizes().begin(), t.sizes().end());
  merged[merged.size() - 3] *= groups;
  return t.unsqueeze(-3).expand(sizes).reshape(merged);
}

// The gradient of expand_heads: each key or value head sums its group's.
at::Tensor sum_heads(const at::Tensor& t, int64_t groups) {
  if (groups == 1) return t;
  std::vector<int64_t> split(t.sizes().begin(), t.sizes().end());
  split[split.size() - 3] /= groups;
  split.insert(split.end() - 2, groups);
  return t.reshape(split).sum(-3);
}

double softmax_scale(const at::Tensor& q, std::optional<double> scale) {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
}

// An operand of the GEMMs: in `acc` and contiguous, made so once (a batched GEMM of a strided
// operand, such as heads split out of one projection, would copy it at every product).
at::Tensor operand(const at::Tensor& t, at::ScalarType acc) { return t.to(acc).contiguous(); }

// The attention probabilities softmax(q k^T * scale + bias) of operand()s q and k, [..., L, S]
// contiguous: a batched GEMM, then one fused launch for the scale, the causal mask (aligned
// top-left, as PyTorch's is_causal is) and the softmax, with each row's log-sum-exp into `lse`
// when defined. A bias (additive, or boolean: -inf where false) is added to the scaled scores
// first.
at::Tensor probabilities(const at::Tensor& q, const at::Tensor& k, const at::Tensor& bias,
                         bool is_causal, double scale, const at::Tensor& lse = {}) {
  at::Tensor s = at::matmul(q, k.transpose(-2, -1)).contiguous();
  double kernel_scale = scale;
  if (bias.defined()) {
    s.mul_(scale);
    kernel_scale = 1;
    if (bias.scalar_type() == at::kBool)
      s.masked_fill_(bias.logical_not(), -std::numeric_limits<double>::infinity());
    else
      s.add_(bias.to(s.scalar_type()));
  }
  at::Tensor p = at::empty_like(s, at::MemoryFormat::Contiguous);
  softmax_rows(s, p, /*log=*/false, kernel_scale, is_causal ? s.size(-2) : 0, lse);
  return p;
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
  // The log-sum-exp of each query row, as flash attention saves it (float).
  std::vector<int64_t> lse_shape(query.sizes().begin(), query.sizes().end() - 1);
  at::Tensor lse = at::empty(lse_shape, query.options().dtype(at::kFloat));
  const int64_t groups = query.size(-3) / key.size(-3);
  const at::Tensor p = probabilities(operand(query, acc), operand(expand_heads(key, groups), acc),
                                     bias, is_causal, softmax_scale(query, scale), lse);
  // The output in the query's layout (what PyTorch's meta function gives it, which a traced graph
  // relies on when it views the result).
  at::Tensor out = at::empty_like(query);
  out.copy_(at::matmul(p, operand(expand_heads(value, groups), acc)));
  const at::Tensor none = at::empty({0}, query.options());
  const at::Tensor none_long = at::empty({0}, query.options().dtype(at::kLong));
  return {out,       lse,       none, none, c10::SymInt(query.size(-2)), c10::SymInt(key.size(-2)),
          none_long, none_long, none};
}

// The probabilities are recomputed from q and k (one GEMM and one launch) rather than saved.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> attention_backward(
    const at::Tensor& grad_out, const at::Tensor& query, const at::Tensor& key,
    const at::Tensor& value, const at::Tensor& attn_bias, std::array<bool, 4> mask,
    const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, c10::SymInt,
    c10::SymInt, double dropout_p, bool is_causal, const at::Tensor&, const at::Tensor&,
    std::optional<double> scale) {
  require_qkv(query, key, value);
  if (dropout_p != 0.0 || !floating_cuda(grad_out) ||
      (attn_bias.defined() && !attn_bias.is_cuda()) ||
      (mask[3] && attn_bias.defined() && attn_bias.scalar_type() != at::kBool))
    throw NotServed();  // a bias that wants its gradient: the host kernel
  c10::OptionalDeviceGuard g(at::device_of(query));
  const auto acc = accumulation(query.scalar_type());
  const double sc = softmax_scale(query, scale);
  const int64_t groups = query.size(-3) / key.size(-3);
  const at::Tensor q = operand(query, acc);
  const at::Tensor k = operand(expand_heads(key, groups), acc);
  const at::Tensor v = operand(expand_heads(value, groups), acc);
  const at::Tensor p = probabilities(q, k, attn_bias, is_causal, sc);
  const at::Tensor dout = operand(grad_out, acc);
  at::Tensor dq, dk, dv;
  if (mask[2]) dv = sum_heads(at::matmul(p.transpose(-2, -1), dout), groups);
  if (mask[0] || mask[1]) {
    const at::Tensor dp = at::matmul(dout, v.transpose(-2, -1)).contiguous();
    at::Tensor ds = at::empty_like(dp, at::MemoryFormat::Contiguous);
    softmax_rows_backward(dp, p, ds, /*log=*/false);
    if (mask[0]) dq = at::matmul(ds, k).mul_(sc);
    if (mask[1]) dk = sum_heads(at::matmul(ds.transpose(-2, -1), q).mul_(sc), groups);
  }
  // Each gradient in its input's layout, as PyTorch's meta function gives it.
  const auto like = [](const at::Tensor& input, const at::Tensor& grad) {
    if (!grad.defined()) return grad;
    at::Tensor laid_out = at::empty_like(input);
    laid_out.copy_(grad);
    return laid_out;
  };
  return {like(query, dq), like(key, dk), like(value, dv), at::Tensor()};
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
