// The operators of a convolutional network's step on the device: convolution and its backward
// (im2col / col2im of kernels/vision.cu around batched GEMMs, which cuBLAS computes through the
// shim), max pooling with indices and its backward (kernels/vision.cu, after PyTorch's own meta
// functions: shapes, ceil_mode, checks), and batch normalisation in training and evaluation with
// its backward (composed of the reduction and elementwise engines, in the accumulation type).
// Channels-last tensors, transposed and 3-D convolutions take the bridge.
#include <ATen/ATen.h>
#include <ATen/ops/max_pool2d_with_indices_backward_meta.h>
#include <ATen/ops/max_pool2d_with_indices_meta.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <array>
#include <vector>

#include "../device_kernels.h"
#include "device.h"
#include "kernel_table.h"
#include "structured.h"

namespace torchada::ops::device {
namespace {

using training::Compute;

// The i-th of a 2-D parameter given as one value or two.
int64_t pick(at::IntArrayRef v, size_t i, int64_t fallback) {
  return v.empty() ? fallback : v.size() == 1 ? v[0] : v[i];
}
int64_t pick(c10::SymIntArrayRef v, size_t i, int64_t fallback) {
  if (v.empty()) return fallback;
  return (v.size() == 1 ? v[0] : v[i]).guard_int(__FILE__, __LINE__);
}

// ---- convolution --------------------------------------------------------------------------

struct ConvShape {
  int64_t n, c, h, w, o, kh, kw, oh, ow, groups;
  training::Im2Col geometry;  // with n, channels... filled; pointers left to the caller
};

// The shape of a plain 1-D or 2-D convolution (NotServed for anything else); `x` and `weight`
// viewed 4-D.
ConvShape conv_shape(const at::Tensor& x, const at::Tensor& weight, c10::SymIntArrayRef stride,
                     c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation, bool transposed,
                     c10::SymInt groups_s) {
  if (transposed || x.dim() != 4 || weight.dim() != 4) throw NotServed();
  const int64_t groups = groups_s.guard_int(__FILE__, __LINE__);
  ConvShape s{};
  s.n = x.size(0);
  s.c = x.size(1);
  s.h = x.size(2);
  s.w = x.size(3);
  s.o = weight.size(0);
  s.kh = weight.size(2);
  s.kw = weight.size(3);
  s.groups = groups;
  if (groups < 1 || s.c % groups != 0 || s.o % groups != 0 || weight.size(1) * groups != s.c)
    throw NotServed();  // PyTorch's checks and messages
  training::Im2Col& g = s.geometry;
  g.n = s.n;
  g.channels = s.c;
  g.height = s.h;
  g.width = s.w;
  g.kernel_h = s.kh;
  g.kernel_w = s.kw;
  g.stride_h = pick(stride, 0, 1);
  g.stride_w = pick(stride, 1, 1);
  g.pad_h = pick(padding, 0, 0);
  g.pad_w = pick(padding, 1, 0);
  g.dilation_h = pick(dilation, 0, 1);
  g.dilation_w = pick(dilation, 1, 1);
  s.oh = (s.h + 2 * g.pad_h - g.dilation_h * (s.kh - 1) - 1) / g.stride_h + 1;
  s.ow = (s.w + 2 * g.pad_w - g.dilation_w * (s.kw - 1) - 1) / g.stride_w + 1;
  if (g.stride_h < 1 || g.stride_w < 1 || g.dilation_h < 1 || g.dilation_w < 1 || g.pad_h < 0 ||
      g.pad_w < 0 || s.oh < 1 || s.ow < 1)
    throw NotServed();
  g.out_h = s.oh;
  g.out_w = s.ow;
  g.kind = *kind_of(x.scalar_type());
  g.compute = floating_compute(x.scalar_type());
  return s;
}

// 1-D convolutions as 2-D ones of height 1.
at::Tensor as_4d(const at::Tensor& t) { return t.dim() == 3 ? t.unsqueeze(2) : t; }
std::vector<c10::SymInt> as_2d(c10::SymIntArrayRef v, int64_t fill) {
  std::vector<c10::SymInt> r{c10::SymInt(fill)};
  for (const auto& x : v) r.push_back(x);
  return r;
}

// The im2col columns of contiguous x: [n, c * kh * kw, oh * ow].
at::Tensor columns(const at::Tensor& x, const ConvShape& s) {
  at::Tensor cols = at::empty({s.n, s.c * s.kh * s.kw, s.oh * s.ow}, x.options());
  training::Im2Col g = s.geometry;
  g.in = static_cast<const char*>(x.const_data_ptr());
  g.out = static_cast<char*>(cols.data_ptr());
  check_launch("im2col", TORCHADA_KERNEL(im2col)(g, current_stream(x)));
  return cols;
}

// A convolution's operands as the kernels take them: 4-D contiguous input and weight (1-D
// convolutions as 2-D ones of height 1) and the geometry.
struct Conv {
  bool one_d;
  at::Tensor x, w;
  ConvShape s;
};
Conv prepare(const at::Tensor& input, const at::Tensor& weight, c10::SymIntArrayRef stride,
             c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation, bool transposed,
             c10::SymInt groups) {
  const bool one_d = input.dim() == 3;
  const auto st = one_d ? as_2d(stride, 1) : stride.vec();
  const auto pad = one_d ? as_2d(padding, 0) : padding.vec();
  const auto dil = one_d ? as_2d(dilation, 1) : dilation.vec();
  at::Tensor x = as_4d(input).contiguous(), w = as_4d(weight).contiguous();
  ConvShape s = conv_shape(x, w, st, pad, dil, transposed, std::move(groups));
  return {one_d, std::move(x), std::move(w), s};
}

void require_conv(const at::Tensor& input, const at::Tensor& weight) {
  if (!floating_cuda(input) || !floating_cuda(weight) ||
      input.scalar_type() != weight.scalar_type() || input.device() != weight.device() ||
      (input.dim() != 3 && input.dim() != 4))
    throw NotServed();
}

// The memory format PyTorch's CUDA convolution gives its results: channels-last when the input
// or the weight is (the kernels compute on contiguous copies; the results are laid out after).
at::MemoryFormat conv_format(const at::Tensor& input, const at::Tensor& weight) {
  const bool channels_last =
      input.dim() == 4 && (input.suggest_memory_format() == at::MemoryFormat::ChannelsLast ||
                           weight.suggest_memory_format() == at::MemoryFormat::ChannelsLast);
  return channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias_opt, c10::SymIntArrayRef stride,
                       c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation, bool transposed,
                       c10::SymIntArrayRef output_padding, c10::SymInt groups) {
  (void)output_padding;
  require_conv(input, weight);
  const at::Tensor* bias = present(bias_opt);
  if (bias && (!floating_cuda(*bias) || bias->scalar_type() != input.scalar_type()))
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(input));
  const Conv c = prepare(input, weight, stride, padding, dilation, transposed, groups);
  const bool one_d = c.one_d;
  const at::Tensor &x = c.x, &w = c.w;
  const ConvShape& s = c.s;
  const at::Tensor cols = columns(x, s);
  const int64_t og = s.o / s.groups, kg = s.c / s.groups * s.kh * s.kw;
  const at::Tensor wm = w.view({s.groups, og, kg});
  at::Tensor out;
  if (s.groups == 1) {
    out = at::matmul(wm[0], cols);  // [n, o, oh * ow]
  } else {
    std::vector<at::Tensor> parts;
    for (int64_t k = 0; k < s.groups; ++k)
      parts.push_back(at::matmul(wm[k], cols.narrow(1, k * kg, kg)));
    out = at::cat(parts, 1);
  }
  out = out.view({s.n, s.o, s.oh, s.ow});
  if (bias) out.add_(bias->view({1, s.o, 1, 1}));
  return one_d ? out.squeeze(2) : out.contiguous(conv_format(input, weight));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::OptionalSymIntArrayRef bias_sizes, c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
    c10::SymIntArrayRef dilation, bool transposed, c10::SymIntArrayRef output_padding,
    c10::SymInt groups, std::array<bool, 3> mask) {
  (void)bias_sizes;
  (void)output_padding;
  require_conv(input, weight);
  if (!floating_cuda(grad_output) || grad_output.scalar_type() != input.scalar_type())
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(input));
  const Conv c = prepare(input, weight, stride, padding, dilation, transposed, groups);
  const bool one_d = c.one_d;
  const at::Tensor &x = c.x, &w = c.w;
  const ConvShape& s = c.s;
  const int64_t og = s.o / s.groups, kg = s.c / s.groups * s.kh * s.kw;
  const at::Tensor dy = as_4d(grad_output).contiguous().view({s.n, s.o, s.oh * s.ow});
  const at::Tensor wm = w.view({s.groups, og, kg});
  at::Tensor grad_input, grad_weight, grad_bias;
  if (mask[0]) {
    // d columns = W^T dy per group, then col2im sums each column entry back into the image.
    std::vector<at::Tensor> parts;
    for (int64_t k = 0; k < s.groups; ++k)
      parts.push_back(at::matmul(wm[k].t(), dy.narrow(1, k * og, og)));
    const at::Tensor dcols = (s.groups == 1 ? parts[0] : at::cat(parts, 1)).contiguous();
    grad_input = at::empty_like(x, at::MemoryFormat::Contiguous);
    training::Im2Col geo = s.geometry;
    geo.in = static_cast<const char*>(dcols.const_data_ptr());
    geo.out = static_cast<char*>(grad_input.data_ptr());
    check_launch("col2im", TORCHADA_KERNEL(col2im)(geo, current_stream(x)));
    if (one_d) grad_input = grad_input.squeeze(2);
  }
  if (mask[1]) {
    // dW = sum over the batch of dy columns^T, per group.
    const at::Tensor cols = columns(x, s);
    const auto acc = accumulation(x.scalar_type());
    std::vector<at::Tensor> parts;
    for (int64_t k = 0; k < s.groups; ++k)
      parts.push_back(
          at::matmul(dy.narrow(1, k * og, og), cols.narrow(1, k * kg, kg).transpose(1, 2))
              .to(acc)
              .sum(0));
    grad_weight =
        (s.groups == 1 ? parts[0] : at::cat(parts, 0)).to(weight.scalar_type()).view(w.sizes());
    if (one_d) grad_weight = grad_weight.squeeze(2);
  }
  if (mask[2]) grad_bias = dy.to(accumulation(dy.scalar_type())).sum({0, 2}).to(dy.scalar_type());
  if (!one_d) {
    const at::MemoryFormat format = conv_format(input, weight);
    if (grad_input.defined()) grad_input = grad_input.contiguous(format);
    if (grad_weight.defined()) grad_weight = grad_weight.contiguous(format);
  }
  return {grad_input, grad_weight, grad_bias};
}

// ---- max pooling --------------------------------------------------------------------------

training::MaxPool pool_geometry(const at::Tensor& x, const at::Tensor& out, at::IntArrayRef kernel,
                                at::IntArrayRef stride, at::IntArrayRef padding,
                                at::IntArrayRef dilation) {
  training::MaxPool p;
  p.height = x.size(-2);
  p.width = x.size(-1);
  p.planes = x.numel() / std::max<int64_t>(p.height * p.width, 1);
  p.out_h = out.size(-2);
  p.out_w = out.size(-1);
  p.kernel_h = pick(kernel, 0, 1);
  p.kernel_w = pick(kernel, 1, 1);
  p.stride_h = pick(stride, 0, p.kernel_h);
  p.stride_w = pick(stride, 1, p.kernel_w);
  p.pad_h = pick(padding, 0, 0);
  p.pad_w = pick(padding, 1, 0);
  p.dilation_h = pick(dilation, 0, 1);
  p.dilation_w = pick(dilation, 1, 1);
  p.kind = *kind_of(x.scalar_type());
  p.compute = floating_compute(x.scalar_type());
  return p;
}

void require_pool(const at::Tensor& self) {
  if (!floating_cuda(self) || (self.dim() != 3 && self.dim() != 4)) throw NotServed();
}

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  require_pool(self);
  c10::OptionalDeviceGuard g(at::device_of(self));
  structured::Functional<at::meta::structured_max_pool2d_with_indices, 2> m;
  m.meta(self, kernel_size, stride, padding, dilation, ceil_mode);
  const at::Tensor x = self.contiguous();
  at::Tensor& out = m.out[0];
  at::Tensor& indices = m.out[1];
  // The kernel writes contiguous planes; a channels-last result (PyTorch's for a channels-last
  // input) takes them by a copy. Indices count within a plane either way.
  const bool direct = out.is_contiguous() && indices.is_contiguous();
  at::Tensor o = direct ? out : at::empty(out.sizes(), out.options());
  at::Tensor i = direct ? indices : at::empty(indices.sizes(), indices.options());
  training::MaxPool p = pool_geometry(x, o, kernel_size, stride, padding, dilation);
  p.in = static_cast<const char*>(x.const_data_ptr());
  p.out = static_cast<char*>(o.data_ptr());
  p.indices = i.data_ptr<int64_t>();
  check_launch("max_pool2d", TORCHADA_KERNEL(max_pool_forward)(p, current_stream(x)));
  if (!direct) {
    out.copy_(o);
    indices.copy_(i);
  }
  return {std::move(out), std::move(indices)};
}

at::Tensor max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                            at::IntArrayRef padding, at::IntArrayRef dilation,
                                            bool ceil_mode, const at::Tensor& indices) {
  require_pool(self);
  if (!floating_cuda(grad_output) || grad_output.scalar_type() != self.scalar_type() ||
      indices.scalar_type() != at::kLong || !indices.is_cuda())
    throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  structured::Functional<at::meta::structured_max_pool2d_with_indices_backward, 1> m;
  m.meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  at::Tensor& grad_input = m.out[0];
  const bool direct = grad_input.is_contiguous();
  at::Tensor gi = direct ? grad_input : at::empty(grad_input.sizes(), grad_input.options());
  const at::Tensor dy = grad_output.contiguous(), idx = indices.contiguous();
  training::MaxPool p = pool_geometry(self, dy, kernel_size, stride, padding, dilation);
  p.in = static_cast<const char*>(dy.const_data_ptr());
  p.out = static_cast<char*>(gi.data_ptr());
  p.indices = const_cast<int64_t*>(idx.const_data_ptr<int64_t>());
  check_launch("max_pool2d_backward", TORCHADA_KERNEL(max_pool_backward)(p, current_stream(dy)));
  if (!direct) grad_input.copy_(gi);
  return std::move(grad_input);
}

// ---- batch normalisation --------------------------------------------------------------------

struct Channels {
  std::vector<int64_t> reduce;  // every dimension but 1
  std::vector<int64_t> shape;   // [1, C, 1, ...]: a per-channel value broadcast over the input
  int64_t per_channel = 1;      // elements each channel's statistics cover
};

Channels channels_of(const at::Tensor& x) {
  TORCH_CHECK(x.dim() >= 2, "batch norm expects an input of at least 2 dimensions, got ", x.dim());
  Channels c;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d != 1) {
      c.reduce.push_back(d);
      c.per_channel *= x.size(d);
    }
    c.shape.push_back(d == 1 ? x.size(1) : 1);
  }
  return c;
}

void require_bn(const at::Tensor& input, std::initializer_list<const at::Tensor*> others) {
  if (!floating_cuda(input)) throw NotServed();
  for (const at::Tensor* t : others)
    if (t && (!floating_cuda(*t) || t->device() != input.device())) throw NotServed();
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight_opt,
    const std::optional<at::Tensor>& bias_opt, const std::optional<at::Tensor>& mean_opt,
    const std::optional<at::Tensor>& var_opt, bool training, double momentum, double eps) {
  const at::Tensor *weight = present(weight_opt), *bias = present(bias_opt);
  const at::Tensor *running_mean = present(mean_opt), *running_var = present(var_opt);
  require_bn(input, {weight, bias, running_mean, running_var});
  if (!training && (!running_mean || !running_var)) throw NotServed();  // PyTorch's message
  c10::OptionalDeviceGuard g(at::device_of(input));
  const Channels ch = channels_of(input);
  const auto acc = accumulation(input.scalar_type());
  const at::Tensor x = input.to(acc);
  at::Tensor mean, invstd, save_mean, save_invstd;
  if (training) {
    TORCH_CHECK(ch.per_channel > 1,
                "Expected more than 1 value per channel when training, got input size ",
                input.sizes());
    mean = at::mean(x, ch.reduce);
    const at::Tensor var = at::var(x, ch.reduce, /*correction=*/0, /*keepdim=*/false);
    invstd = at::rsqrt(var + eps);
    save_mean = mean;
    save_invstd = invstd;
    // Running statistics: the unbiased variance, blended by momentum (in place, no autograd).
    if (running_mean)
      const_cast<at::Tensor&>(*running_mean)
          .mul_(1 - momentum)
          .add_(mean.to(running_mean->scalar_type()), momentum);
    if (running_var) {
      const double n = static_cast<double>(ch.per_channel);
      const_cast<at::Tensor&>(*running_var)
          .mul_(1 - momentum)
          .add_((var * (n / (n - 1))).to(running_var->scalar_type()), momentum);
    }
  } else {
    mean = running_mean->to(acc);
    invstd = at::rsqrt(running_var->to(acc) + eps);
    save_mean = at::empty({0}, input.options().dtype(acc));
    save_invstd = at::empty({0}, input.options().dtype(acc));
  }
  at::Tensor y = (x - mean.view(ch.shape)) * invstd.view(ch.shape);
  if (weight) y.mul_(weight->to(acc).view(ch.shape));
  if (bias) y.add_(bias->to(acc).view(ch.shape));
  return {y.to(input.scalar_type()), save_mean, save_invstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input,
    const std::optional<at::Tensor>& weight_opt, const std::optional<at::Tensor>& mean_opt,
    const std::optional<at::Tensor>& var_opt, const std::optional<at::Tensor>& save_mean_opt,
    const std::optional<at::Tensor>& save_invstd_opt, bool train, double eps,
    std::array<bool, 3> mask) {
  const at::Tensor* weight = present(weight_opt);
  const at::Tensor *running_mean = present(mean_opt), *running_var = present(var_opt);
  const at::Tensor *save_mean = present(save_mean_opt), *save_invstd = present(save_invstd_opt);
  require_bn(input, {&grad_out, weight, running_mean, running_var, save_mean, save_invstd});
  if (train ? (!save_mean || !save_invstd) : (!running_mean || !running_var)) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(input));
  const Channels ch = channels_of(input);
  const auto acc = accumulation(input.scalar_type());
  const at::Tensor mean = (train ? *save_mean : *running_mean).to(acc).view(ch.shape);
  const at::Tensor invstd =
      (train ? save_invstd->to(acc) : at::rsqrt(running_var->to(acc) + eps)).view(ch.shape);
  const at::Tensor dy = grad_out.to(acc);
  const at::Tensor x_hat = (input.to(acc) - mean) * invstd;
  at::Tensor grad_input, grad_weight, grad_bias;
  const bool need_sums = mask[1] || mask[2] || (mask[0] && train);
  at::Tensor sum_dy, sum_dy_xhat;
  if (need_sums) {
    sum_dy = at::sum(dy, ch.reduce);
    sum_dy_xhat = at::sum(dy * x_hat, ch.reduce);
  }
  if (mask[0]) {
    at::Tensor scale = weight ? invstd * weight->to(acc).view(ch.shape) : invstd;
    if (train) {
      const double n = static_cast<double>(ch.per_channel);
      grad_input =
          (dy - sum_dy.view(ch.shape) / n - x_hat * (sum_dy_xhat.view(ch.shape) / n)) * scale;
    } else {
      grad_input = dy * scale;
    }
    grad_input = grad_input.to(input.scalar_type());
  }
  const auto param_type = weight ? weight->scalar_type() : input.scalar_type();
  if (mask[1]) grad_weight = sum_dy_xhat.to(param_type);
  if (mask[2]) grad_bias = sum_dy.to(param_type);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

std::vector<Kernel> vision_kernels() {
  std::vector<Kernel> v;
  v.push_back(kernel<&convolution>("aten::convolution"));
  v.push_back(kernel<&convolution_backward>("aten::convolution_backward"));
  v.push_back(kernel<&max_pool2d_with_indices>("aten::max_pool2d_with_indices"));
  v.push_back(kernel<&max_pool2d_with_indices_backward>("aten::max_pool2d_with_indices_backward"));
  v.push_back(kernel<&batch_norm>("aten::native_batch_norm"));
  v.push_back(kernel<&batch_norm_backward>("aten::native_batch_norm_backward"));
  return v;
}

}  // namespace torchada::ops::device
