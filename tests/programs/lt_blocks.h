// Host references and buffers shared by the cuBLASLt FP8 / FP4 programs (cublaslt_fp8,
// cublaslt_mxfp8_out, cublaslt_fp8_blockwise, cublaslt_nvfp4): FP8 decoded and rounded by
// definition, cuBLASLt's 128 x 4 tile layout of block-scale factors, device uploads.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "check.h"

namespace lt_blocks {

// FP8 by definition: (-1)^s 2^(e - bias) (1 + m / 2^mbits), subnormals 2^(1 - bias) m / 2^mbits.
inline double fp8_value(uint8_t code, bool e5m2) {
  const int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7, emax = e5m2 ? 31 : 15;
  const int e = (code & 0x7f) >> mbits, m = code & ((1 << mbits) - 1);
  const double sign = (code & 0x80) != 0 ? -1.0 : 1.0;
  if (e5m2 && e == emax) return m == 0 ? sign * INFINITY : NAN;
  if (!e5m2 && (code & 0x7f) == 0x7f) return NAN;
  if (e == 0) return sign * std::ldexp(m, 1 - bias - mbits);
  return sign * std::ldexp((1 << mbits) + m, e - bias - mbits);
}

// Nearest FP8 value by search, ties to the even code; beyond the largest finite value: that value
// (cuBLASLt saturates FP8 outputs).
inline uint8_t fp8_round(double x, bool e5m2) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t max_code = e5m2 ? 0x7b : 0x7e;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(x);
  uint8_t best = 0;
  for (int c = 1; c <= max_code; ++c) {
    const double err = std::fabs(fp8_value(static_cast<uint8_t>(c), e5m2) - a);
    const double best_err = std::fabs(fp8_value(best, e5m2) - a);
    if (err < best_err || (err == best_err && c % 2 == 0)) best = static_cast<uint8_t>(c);
  }
  return static_cast<uint8_t>(sign | best);
}

// cuBLASLt's 128 x 4 tiles: the factor of row `outer` (of op(A), column of op(B) or of D) and
// block `c`, with `blocks` blocks per row; and the bytes of such a factor tensor.
inline size_t tiled(int outer, int c, int blocks) {
  const int tile = (outer / 128) * ((blocks + 3) / 4) + c / 4;
  return size_t(tile) * 512 + size_t(outer % 32) * 16 + size_t(outer % 128 / 32) * 4 +
         size_t(c % 4);
}
inline size_t tiled_bytes(int outer, int blocks) {
  return size_t((outer + 127) / 128) * size_t((blocks + 3) / 4) * 512;
}

inline void* upload(const void* h, size_t bytes) {
  void* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, bytes));
  CUDA_CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  return d;
}
template <typename T>
void* upload(const std::vector<T>& h) {
  return upload(h.data(), h.size() * sizeof(T));
}
inline std::vector<uint8_t> download(const void* d, size_t bytes) {
  std::vector<uint8_t> h(bytes);
  CUDA_CHECK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace lt_blocks
