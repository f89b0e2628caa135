// Gated MLP activations:
//   torchada::silu_and_mul(Tensor input) -> Tensor              out = silu(x[..., :d]) * x[..., d:]
//   torchada::gelu_and_mul(Tensor input, str approximate) -> Tensor   (gelu exact or tanh)
// One kernel family, so both ops live in this file. The eager composition (chunk, act, mul)
// writes and re-reads an intermediate of size d; the fused kernel reads 2d and writes d.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <cmath>

#include "common.h"
#include "ops.h"
#include "../kernels/launch.h"  // the enums, also without GPU kernels
#if defined(TORCHADA_OPS_WITH_GPU)
#include "gpu.h"
#endif

namespace torchada::ops {
namespace {

using kernels::Act;

void check_args(const char* op, const at::Tensor& input) {
  TORCH_CHECK(input.dim() >= 1, op, ": input must have at least one dimension");
  check_float(op, "input", input);
  TORCH_CHECK(input.sym_size(-1) % 2 == 0, op,
              ": the last dimension of input holds [gate, up] and must be even, got ",
              input.sym_size(-1));
}

Act parse_gelu(std::string_view approximate) {
  if (approximate == "none") return Act::kGeluExact;
  if (approximate == "tanh") return Act::kGeluTanh;
  TORCH_CHECK(false, "torchada::gelu_and_mul: approximate must be 'none' or 'tanh', got '",
              std::string(approximate), "'");
}

c10::SymDimVector out_shape(const at::Tensor& input) {
  c10::SymDimVector shape(input.sym_sizes().begin(), input.sym_sizes().end());
  shape.back() = shape.back() / 2;
  return shape;
}

inline float act(Act a, float x) {
  switch (a) {
    case Act::kSilu:
      return x / (1.f + std::exp(-x));
    case Act::kGeluExact:
      return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
    case Act::kGeluTanh: {
      const float k = 0.79788456080286536f;  // sqrt(2 / pi)
      return 0.5f * x * (1.f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
  }
  return x;
}

template <typename T>
void act_rows(Act a, T* out, const T* in, int64_t rows, int64_t d) {
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(d, 1));
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* gate = in + r * 2 * d;
      const T* up = gate + d;
      T* y = out + r * d;
      for (int64_t j = 0; j < d; ++j)
        y[j] = static_cast<T>(act(a, static_cast<float>(gate[j])) * static_cast<float>(up[j]));
    }
  });
}

at::Tensor run_cpu(const char* op, Op id, Act a, const at::Tensor& input) {
  check_args(op, input);
  TORCH_CHECK(input.device().is_cpu(), op, ": CPU kernel called with a ", input.device(),
              " tensor");
  const at::Tensor x = input.contiguous();
  const int64_t d = x.size(-1) / 2;
  auto shape = x.sizes().vec();
  shape.back() = d;
  at::Tensor out = at::empty(shape, x.options());
  const int64_t rows = d == 0 ? 0 : out.numel() / d;
  note_call(id, "torchada CPU kernel", x);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, x.scalar_type(), "act_and_mul_cpu",
      [&] { act_rows(a, out.data_ptr<scalar_t>(), x.const_data_ptr<scalar_t>(), rows, d); });
  return out;
}

#if defined(TORCHADA_OPS_WITH_GPU)
at::Tensor run_gpu(const char* op, Op id, Act a, const at::Tensor& input) {
  check_args(op, input);
  const c10::DeviceGuard guard(input.device());
  const at::Tensor x = input.contiguous();
  const int64_t d = x.size(-1) / 2;
  auto shape = x.sizes().vec();
  shape.back() = d;
  at::Tensor out = at::empty(shape, x.options());
  const int64_t rows = d == 0 ? 0 : out.numel() / d;
  note_call(id, "torchada GPU kernel", x);
  gpu::check_launch(
      op, TORCHADA_KERNEL(act_and_mul)(gpu::dtype(x), a, out.data_ptr(), x.const_data_ptr(), rows,
                                       d, gpu::stream_for(x)));
  return out;
}
#endif

class SiluAndMulFunction : public torch::autograd::Function<SiluAndMulFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input) {
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("torchada::silu_and_mul", "")
                         .typed<at::Tensor(const at::Tensor&)>();
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({input});
    return op.call(input);
  }

  // d/da silu(a) = s * (1 + a * (1 - s)) with s = sigmoid(a); d/db = silu(a).
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor input = ctx->get_saved_variables()[0];
    const auto halves = input.to(at::kFloat).chunk(2, -1);
    const at::Tensor& a = halves[0];
    const at::Tensor& b = halves[1];
    const at::Tensor g = grads[0].to(at::kFloat);
    const at::Tensor s = at::sigmoid(a);
    const at::Tensor ga = g * b * (s * (1 + a * (1 - s)));
    const at::Tensor gb = g * (a * s);
    return {at::cat({ga, gb}, -1).to(input.scalar_type())};
  }
};

}  // namespace

at::Tensor silu_and_mul_cpu(const at::Tensor& input) {
  return run_cpu("torchada::silu_and_mul", Op::kSiluAndMul, Act::kSilu, input);
}
at::Tensor gelu_and_mul_cpu(const at::Tensor& input, std::string_view approximate) {
  return run_cpu("torchada::gelu_and_mul", Op::kGeluAndMul, parse_gelu(approximate), input);
}

#if defined(TORCHADA_OPS_WITH_GPU)
at::Tensor silu_and_mul_gpu(const at::Tensor& input) {
  return run_gpu("torchada::silu_and_mul", Op::kSiluAndMul, Act::kSilu, input);
}
at::Tensor gelu_and_mul_gpu(const at::Tensor& input, std::string_view approximate) {
  return run_gpu("torchada::gelu_and_mul", Op::kGeluAndMul, parse_gelu(approximate), input);
}
#endif

at::Tensor silu_and_mul_meta(const at::Tensor& input) {
  check_args("torchada::silu_and_mul", input);
  return at::empty_symint(out_shape(input), input.options());
}
at::Tensor gelu_and_mul_meta(const at::Tensor& input, std::string_view approximate) {
  check_args("torchada::gelu_and_mul", input);
  parse_gelu(approximate);
  return at::empty_symint(out_shape(input), input.options());
}

at::Tensor silu_and_mul_autograd(const at::Tensor& input) {
  return SiluAndMulFunction::apply(input);
}

}  // namespace torchada::ops
