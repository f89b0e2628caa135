// Every kernel entry point the registration file wires into the dispatcher. Per op: the CPU
// implementation, the GPU one (only with TORCHADA_OPS_WITH_GPU), a meta (fake) implementation
// for torch.compile, and for ops with a backward an autograd wrapper.
#pragma once

#include <ATen/ATen.h>

#include <string_view>

namespace torchada::ops {

at::Tensor rms_norm_cpu(const at::Tensor& input, const at::Tensor& weight, double eps);
at::Tensor rms_norm_gpu(const at::Tensor& input, const at::Tensor& weight, double eps);
at::Tensor rms_norm_meta(const at::Tensor& input, const at::Tensor& weight, double eps);
at::Tensor rms_norm_autograd(const at::Tensor& input, const at::Tensor& weight, double eps);

void fused_add_rms_norm_cpu(at::Tensor& input, at::Tensor& residual, const at::Tensor& weight,
                            double eps);
void fused_add_rms_norm_gpu(at::Tensor& input, at::Tensor& residual, const at::Tensor& weight,
                            double eps);
void fused_add_rms_norm_meta(at::Tensor& input, at::Tensor& residual, const at::Tensor& weight,
                             double eps);

at::Tensor silu_and_mul_cpu(const at::Tensor& input);
at::Tensor silu_and_mul_gpu(const at::Tensor& input);
at::Tensor silu_and_mul_meta(const at::Tensor& input);
at::Tensor silu_and_mul_autograd(const at::Tensor& input);

at::Tensor gelu_and_mul_cpu(const at::Tensor& input, std::string_view approximate);
at::Tensor gelu_and_mul_gpu(const at::Tensor& input, std::string_view approximate);
at::Tensor gelu_and_mul_meta(const at::Tensor& input, std::string_view approximate);

void rotary_embedding_cpu(const at::Tensor& positions, at::Tensor& query, at::Tensor& key,
                          int64_t head_size, const at::Tensor& cos_sin_cache, bool is_neox);
void rotary_embedding_gpu(const at::Tensor& positions, at::Tensor& query, at::Tensor& key,
                          int64_t head_size, const at::Tensor& cos_sin_cache, bool is_neox);
void rotary_embedding_meta(const at::Tensor& positions, at::Tensor& query, at::Tensor& key,
                           int64_t head_size, const at::Tensor& cos_sin_cache, bool is_neox);

// aten overrides. `Backend` says which stock kernel to fall back to for inputs ours do not take.
enum class Backend { kCPU, kCUDA, kPrivateUse1 };
at::Tensor neg_override(Backend b, const at::Tensor& self);
at::Tensor silu_override(Backend b, const at::Tensor& self);
at::Tensor gelu_override(Backend b, const at::Tensor& self, std::string_view approximate);

}  // namespace torchada::ops
