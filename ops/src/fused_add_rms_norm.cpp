// torchada::fused_add_rms_norm(Tensor(a!) input, Tensor(b!) residual, Tensor weight, float eps)
//   residual = input + residual;  input = rms_norm(residual, weight, eps)   (both in place)
// The pre-norm residual step of every transformer layer in one pass instead of add + rms_norm.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <cmath>

#include "common.h"
#include "ops.h"
#if defined(TORCHADA_OPS_WITH_GPU)
#include "gpu.h"
#endif

namespace torchada::ops {
namespace {

constexpr const char* kOp = "torchada::fused_add_rms_norm";

void check_args(const at::Tensor& input, const at::Tensor& residual, const at::Tensor& weight) {
  TORCH_CHECK(input.dim() >= 1, kOp, ": input must have at least one dimension");
  check_float(kOp, "input", input);
  check_same_dtype(kOp, input, "input", residual, "residual");
  check_same_dtype(kOp, input, "input", weight, "weight");
  check_same_device(kOp, input, "input", residual, "residual");
  check_same_device(kOp, input, "input", weight, "weight");
  TORCH_CHECK(input.sym_sizes() == residual.sym_sizes(), kOp,
              ": input and residual must have the same shape, got ", input.sym_sizes(), " and ",
              residual.sym_sizes());
  TORCH_CHECK(weight.dim() == 1 && weight.sym_size(0) == input.sym_size(-1), kOp,
              ": weight must have shape [", input.sym_size(-1),
              "] (the last dimension of input), got ", weight.sym_sizes());
}

template <typename T>
void fused_rows(T* in, T* res, const T* weight, int64_t rows, int64_t h, float eps) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(h, 1));
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T* x = in + r * h;
      T* z = res + r * h;
      float acc[8] = {};
      int64_t j = 0;
      // The sum of squares is taken over the residual as stored (rounded to T), so the result
      // equals rms_norm of the updated residual tensor.
      for (; j + 8 <= h; j += 8)
        for (int k = 0; k < 8; ++k) {
          z[j + k] = static_cast<T>(static_cast<float>(x[j + k]) + static_cast<float>(z[j + k]));
          const float f = static_cast<float>(z[j + k]);
          acc[k] += f * f;
        }
      for (; j < h; ++j) {
        z[j] = static_cast<T>(static_cast<float>(x[j]) + static_cast<float>(z[j]));
        acc[0] += static_cast<float>(z[j]) * static_cast<float>(z[j]);
      }
      float ss = 0.f;
      for (float a : acc) ss += a;
      const float rstd = 1.f / std::sqrt(ss / static_cast<float>(h) + eps);
      for (j = 0; j < h; ++j)
        x[j] = static_cast<T>(static_cast<float>(z[j]) * rstd * static_cast<float>(weight[j]));
    }
  });
}

// Both tensors must be updated in place even when they are strided views, and the kernels want
// contiguous rows: work on contiguous copies and write back only when a copy was made.
template <typename Kernel>
void run(at::Tensor& input, at::Tensor& residual, Kernel&& kernel) {
  with_contiguous_inplace(input, [&](at::Tensor& x) {
    with_contiguous_inplace(residual, [&](at::Tensor& r) { kernel(x, r); });
  });
}

}  // namespace

void fused_add_rms_norm_cpu(at::Tensor& input, at::Tensor& residual, const at::Tensor& weight,
                            double eps) {
  check_args(input, residual, weight);
  TORCH_CHECK(input.device().is_cpu(), kOp, ": CPU kernel called with a ", input.device(),
              " tensor");
  const at::Tensor w = weight.contiguous();
  note_call(Op::kFusedAddRmsNorm, "torchada CPU kernel", input);
  run(input, residual, [&](at::Tensor& x, at::Tensor& r) {
    const int64_t h = x.size(-1);
    const int64_t rows = h == 0 ? 0 : x.numel() / h;
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, x.scalar_type(), "fused_add_rms_norm", [&] {
          fused_rows(x.data_ptr<scalar_t>(), r.data_ptr<scalar_t>(), w.const_data_ptr<scalar_t>(),
                     rows, h, static_cast<float>(eps));
        });
  });
}

#if defined(TORCHADA_OPS_WITH_GPU)
void fused_add_rms_norm_gpu(at::Tensor& input, at::Tensor& residual, const at::Tensor& weight,
                            double eps) {
  check_args(input, residual, weight);
  const c10::DeviceGuard guard(input.device());
  const at::Tensor w = weight.contiguous();
  note_call(Op::kFusedAddRmsNorm, "torchada GPU kernel", input);
  run(input, residual, [&](at::Tensor& x, at::Tensor& r) {
    const int64_t h = x.size(-1);
    const int64_t rows = h == 0 ? 0 : x.numel() / h;
    gpu::check_launch(kOp, TORCHADA_KERNEL(fused_add_rms_norm)(
                               gpu::dtype(x), x.data_ptr(), r.data_ptr(), w.const_data_ptr(), rows,
                               h, static_cast<float>(eps), gpu::stream_for(x)));
  });
}
#endif

void fused_add_rms_norm_meta(at::Tensor& input, at::Tensor& residual, const at::Tensor& weight,
                             double /*eps*/) {
  check_args(input, residual, weight);
}

}  // namespace torchada::ops
