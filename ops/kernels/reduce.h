// The reduction engine's interface: the host side (src/device/reduce.cpp) builds PyTorch's
// reduction TensorIterator (outputs with stride 0 along the reduced dimensions) and splits its
// dimensions into kept and reduced ones; the kernel (kernels/reduce.cu) reduces.
#pragma once

#include <cstdint>

#include "elementwise.h"

namespace torchada::reduce {

using elementwise::Compute;
using elementwise::Kind;

// Values outputs are written in the output's type; index outputs are int64.
enum class Op : int8_t {
  kSum,  // out = sum * c0 (c0: 1, or 1/n for a mean)
  kProd,
  kMax,  // NaN wins, as in PyTorch
  kMin,
  kArgMax,  // the first index of the maximum (NaN counts as the maximum)
  kArgMin,
  kNorm,  // c0 = p: 0 (count of non-zeros), inf, -inf, 1, 2, or any other p
  kVar,   // Welford; c0 = correction, c1 = 1 for the standard deviation
  kAny,
  kAll,
};

struct Args {
  static constexpr int kMaxDims = 8;
  int nkept = 0, nred = 0;
  int64_t kept_sizes[kMaxDims] = {};  // fastest first
  int64_t red_sizes[kMaxDims] = {};
  int64_t in_kept_strides[kMaxDims] = {};  // bytes
  int64_t in_red_strides[kMaxDims] = {};
  int64_t out_strides[2][kMaxDims] = {};  // over the kept dimensions
  int64_t numel_out = 0, numel_red = 0;
  // Up to two outputs: the value (or the index alone for kArgMax/kArgMin), then the index.
  int nout = 1;
  bool with_index = false;  // kMax/kMin: a second output with the index (max.dim, min.dim)
  char* out[2] = {};
  Kind out_kind[2] = {};
  const char* in = nullptr;
  Kind in_kind = Kind::kFloat32;
  double c[2] = {};
};

}  // namespace torchada::reduce
