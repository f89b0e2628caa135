// torchada::rms_norm(Tensor input, Tensor weight, float eps) -> Tensor
//   out = input * rsqrt(mean(input^2, -1) + eps) * weight, computed in float32 and rounded once.
// The eager composition it replaces makes five passes over memory (pow, mean, add+rsqrt, two
// muls); this is one read of input and one write of output.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <cmath>

#include "common.h"
#include "ops.h"
#if defined(TORCHADA_OPS_WITH_GPU)
#include "gpu.h"
#endif

namespace torchada::ops {
namespace {

constexpr const char* kOp = "torchada::rms_norm";

// Shared by the real and the meta implementation, so it uses symbolic sizes only.
void check_args(const at::Tensor& input, const at::Tensor& weight) {
  TORCH_CHECK(input.dim() >= 1, kOp, ": input must have at least one dimension");
  check_float(kOp, "input", input);
  check_same_dtype(kOp, input, "input", weight, "weight");
  check_same_device(kOp, input, "input", weight, "weight");
  TORCH_CHECK(weight.dim() == 1 && weight.sym_size(0) == input.sym_size(-1), kOp,
              ": weight must have shape [", input.sym_size(-1),
              "] (the last dimension of input), got ", weight.sym_sizes());
}

template <typename T>
void rms_norm_rows(T* out, const T* in, const T* weight, int64_t rows, int64_t h, float eps) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(h, 1));
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* x = in + r * h;
      // Eight independent partial sums let the compiler vectorise without -ffast-math.
      float acc[8] = {};
      int64_t j = 0;
      for (; j + 8 <= h; j += 8)
        for (int k = 0; k < 8; ++k) {
          const float f = static_cast<float>(x[j + k]);
          acc[k] += f * f;
        }
      for (; j < h; ++j) acc[0] += static_cast<float>(x[j]) * static_cast<float>(x[j]);
      float ss = 0.f;
      for (float a : acc) ss += a;
      const float rstd = 1.f / std::sqrt(ss / static_cast<float>(h) + eps);
      T* y = out + r * h;
      for (j = 0; j < h; ++j)
        y[j] = static_cast<T>(static_cast<float>(x[j]) * rstd * static_cast<float>(weight[j]));
    }
  });
}

// Backward by composition of ATen ops: it runs on every device, traces under torch.compile,
// and training is not the hot path this library targets.
class RmsNormFunction : public torch::autograd::Function<RmsNormFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input,
                            const at::Tensor& weight, double eps) {
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("torchada::rms_norm", "")
                         .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({input, weight});
    ctx->saved_data["eps"] = eps;
    return op.call(input, weight, eps);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& input = saved[0];
    const at::Tensor& weight = saved[1];
    const double eps = ctx->saved_data["eps"].toDouble();
    const at::Tensor x = input.to(at::kFloat);
    const at::Tensor g = grads[0].to(at::kFloat);
    const at::Tensor rstd = at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps);
    const at::Tensor xhat = x * rstd;
    at::Tensor grad_input, grad_weight;
    if (ctx->needs_input_grad(0)) {
      const at::Tensor gw = g * weight.to(at::kFloat);
      grad_input = (rstd * (gw - xhat * (gw * xhat).mean(-1, true))).to(input.scalar_type());
    }
    if (ctx->needs_input_grad(1)) {
      // Sum over every leading dimension; dims are listed explicitly so symbolic shapes work.
      std::vector<int64_t> lead;
      for (int64_t d = 0; d + 1 < x.dim(); ++d) lead.push_back(d);
      at::Tensor gxh = g * xhat;
      grad_weight = (lead.empty() ? gxh : gxh.sum(lead)).to(weight.scalar_type());
    }
    return {grad_input, grad_weight, at::Tensor()};
  }
};

}  // namespace

at::Tensor rms_norm_cpu(const at::Tensor& input, const at::Tensor& weight, double eps) {
  check_args(input, weight);
  TORCH_CHECK(input.device().is_cpu(), kOp, ": CPU kernel called with a ", input.device(),
              " tensor");
  const at::Tensor x = input.contiguous();
  const at::Tensor w = weight.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  const int64_t h = x.size(-1);
  const int64_t rows = h == 0 ? 0 : x.numel() / h;
  note_call(Op::kRmsNorm, "torchada CPU kernel", x);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_cpu", [&] {
    rms_norm_rows(out.data_ptr<scalar_t>(), x.const_data_ptr<scalar_t>(),
                  w.const_data_ptr<scalar_t>(), rows, h, static_cast<float>(eps));
  });
  return out;
}

#if defined(TORCHADA_OPS_WITH_GPU)
at::Tensor rms_norm_gpu(const at::Tensor& input, const at::Tensor& weight, double eps) {
  check_args(input, weight);
  const c10::DeviceGuard guard(input.device());
  const at::Tensor x = input.contiguous();
  const at::Tensor w = weight.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  const int64_t h = x.size(-1);
  const int64_t rows = h == 0 ? 0 : x.numel() / h;
  note_call(Op::kRmsNorm, "torchada GPU kernel", x);
  gpu::check_launch(kOp, TORCHADA_KERNEL(rms_norm)(gpu::dtype(x), out.data_ptr(),
                                                   x.const_data_ptr(), w.const_data_ptr(), rows, h,
                                                   static_cast<float>(eps), gpu::stream_for(x)));
  return out;
}
#endif

at::Tensor rms_norm_meta(const at::Tensor& input, const at::Tensor& weight, double /*eps*/) {
  check_args(input, weight);
  return at::empty_symint(input.sym_sizes(), input.options());
}

at::Tensor rms_norm_autograd(const at::Tensor& input, const at::Tensor& weight, double eps) {
  return RmsNormFunction::apply(input, weight, eps);
}

}  // namespace torchada::ops
