// The plain-data arguments of the random kernels (kernels/random.cu): the distributions that fill
// a tensor (uniform_, normal_, bernoulli_, exponential_, random_) and dropout's mask. They draw
// from Philox4x32-10 the way curand defines it and lay the draws out over the elements the way
// PyTorch's CUDA kernels do (see random.cu), so that a seed gives the numbers it gives there.
#pragma once

#include <cstdint>

#include "elementwise.h"

namespace torchada::random {

using elementwise::Kind;

// Where a launch's Philox key (the seed) and starting offset come from: values, or, inside a CUDA
// graph capture, device pointers the graph's replays update (PyTorch's PhiloxCudaState), read by
// the kernel when it runs.
struct Philox {
  uint64_t seed = 0, offset = 0;
  const int64_t* seed_ptr = nullptr;    // set when captured
  const int64_t* offset_ptr = nullptr;  // set when captured
  uint64_t offset_intragraph = 0;       // added to *offset_ptr
  bool captured = false;
};

enum class Draw : int {
  kUniform,      // [from, to): a = from, b = to, c = to - from (the values in the element type)
  kNormal,       // a = mean, b = std
  kBernoulli,    // 1 where the draw < a (the probability)
  kExponential,  // a = lambda
  kRandom32,     // (32-bit draw % range) + base: random_ with a range below 2^28
  kRandom64,     // (64-bit draw % range) + base
};

// Fills n elements of `out`, laid out contiguously in the order PyTorch's TensorIterator visits
// them, with one draw each. The geometry (grid x block threads) and `wide` decide which Philox
// output lands on which element, as in PyTorch's distribution kernels: wide (double values,
// 64-bit integers) spends a 128-bit Philox output on two elements, otherwise on four.
struct Fill {
  char* out = nullptr;
  Kind kind = Kind::kFloat32;
  int64_t n = 0;
  Draw draw = Draw::kUniform;
  bool wide = false;
  double a = 0, b = 0, c = 0;
  uint64_t range = 0;
  int64_t base = 0;
  Philox philox;
  unsigned grid = 1, block = 256;
};

// out = in * (draw < keep) / keep and mask = (draw < keep) over n elements (floating `kind`,
// mask bool), as PyTorch's CUDA dropout: vec == 1 walks the elements in the unrolled
// grid-stride order, vec of 2, 4 or 8 in vectors of that many elements a thread.
struct Dropout {
  const char* in = nullptr;
  char* out = nullptr;
  bool* mask = nullptr;
  Kind kind = Kind::kFloat32;
  int64_t n = 0;
  double keep = 1;   // the probability of keeping an element, in the accumulation type
  double scale = 1;  // 1 / keep, in the accumulation type
  int vec = 1;
  Philox philox;
  unsigned grid = 1, block = 256;
};

}  // namespace torchada::random
