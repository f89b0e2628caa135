// Launch entry points of the GPU kernels. This header is the boundary between the device code
// (kernels/*.cu, compiled by nvcc or mcc without any PyTorch header, which keeps the device
// compile fast and portable) and the host code in src/ (which includes libtorch).
//
// Every launcher takes raw pointers to contiguous data, the sizes, and an opaque stream handle
// (cudaStream_t / musaStream_t); it returns nullptr on success or a static error string.
#pragma once

#include <cstdint>

namespace torchada::kernels {

enum class DType : int { kFloat32, kFloat16, kBFloat16 };

// Warp width of the current device, read from the device (32 on NVIDIA, 128 on MUSA mp_21/mp_22).
// Cached per device; launch geometry is a multiple of it.
int device_warp_size();

// out[r, :] = in[r, :] * rsqrt(mean(in[r, :]^2) + eps) * weight
const char* rms_norm(DType t, void* out, const void* in, const void* weight, int64_t rows,
                     int64_t hidden, float eps, void* stream);

// residual += input; input = rms_norm(residual) * weight   (both in place)
const char* fused_add_rms_norm(DType t, void* input, void* residual, const void* weight,
                               int64_t rows, int64_t hidden, float eps, void* stream);

enum class Act : int { kSilu, kGeluExact, kGeluTanh };

// out[r, :d] = act(in[r, :d]) * in[r, d:2d]
const char* act_and_mul(DType t, Act act, void* out, const void* in, int64_t rows, int64_t d,
                        void* stream);

enum class Unary : int { kNeg, kSilu, kGeluExact, kGeluTanh };

// out[i] = f(in[i]) over n contiguous elements
const char* unary(DType t, Unary f, void* out, const void* in, int64_t n, void* stream);

// In-place rotary embedding on query [tokens, q_heads, head_size] and key [tokens, k_heads,
// head_size]; cache[pos, :rot/2] = cos, cache[pos, rot/2:] = sin. neox: rotate halves (GPT-NeoX),
// otherwise interleaved pairs (GPT-J).
const char* rotary_embedding(DType t, const int64_t* positions, void* query, void* key,
                             const void* cos_sin_cache, int64_t tokens, int64_t q_heads,
                             int64_t k_heads, int64_t head_size, int64_t rot_dim, bool neox,
                             void* stream);

}  // namespace torchada::kernels
