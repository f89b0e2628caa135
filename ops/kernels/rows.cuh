// Row kernels' two shapes, shared by layer norm and softmax: a row per thread (short rows, many of
// them; what the simulator runs, where a barrier costs more than a row) or a row per block (long
// rows on a GPU), written once: Row<Block> says which row and which of its elements a thread
// takes, row_sum / row_max combine the thread's partial result with its row's other owners.
#pragma once

#include "portable.cuh"

namespace torchada::TORCHADA_KERNELS_NS {
namespace rows {

// v combined over the row's owners by `f` (associative): the value itself for one thread, a
// tree over the block otherwise (every thread gets the result; blockDim.x a power of two, at most
// 1024).
template <class T, bool Block, class F>
__device__ __forceinline__ T row_reduce(T v, F f) {
  if constexpr (!Block) {
    return v;
  } else {
    __shared__ T part[1024];
    const int t = threadIdx.x;
    part[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (t < s) part[t] = f(part[t], part[t + s]);
      __syncthreads();
    }
    const T r = part[0];
    __syncthreads();  // part is reused by the next reduction
    return r;
  }
}

template <class T, bool Block>
__device__ __forceinline__ T row_sum(T v) {
  return row_reduce<T, Block>(v, [](T a, T b) { return a + b; });
}

// The maximum (NaN propagates).
template <class T, bool Block>
__device__ __forceinline__ T row_max(T v) {
  return row_reduce<T, Block>(v, [](T a, T b) { return b > a || b != b ? b : a; });
}

template <bool Block>
struct Row {
  int64_t row, first, step;
  __device__ Row() {
    if constexpr (Block) {
      row = blockIdx.x;
      first = threadIdx.x;
      step = blockDim.x;
    } else {
      row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
      first = 0;
      step = 1;
    }
  }
};

// A block per row where a GPU profits from it: long rows, or too few rows to fill the device.
// The simulator runs every row on one thread.
inline bool per_block(int64_t nrows, int64_t ncols) {
#if defined(TORCHADA_KERNELS_HOST)
  (void)nrows;
  (void)ncols;
  return false;
#else
  return ncols >= 512 || nrows < 64;
#endif
}

}  // namespace rows
}  // namespace torchada::TORCHADA_KERNELS_NS
