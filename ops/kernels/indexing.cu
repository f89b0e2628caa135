// Indexing kernels of a training step: arange, gather (which index_select and the embedding's
// forward are), the embedding's gradient and the NLL loss with its gradient. Indices are checked
// on the device (TORCHADA_DEVICE_ASSERT), as PyTorch's kernels check them.
#include "memory.cuh"
#include "portable.cuh"
#include "training.h"

#include <type_traits>

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

using memory::load;
using memory::store;
using training::Compute;
using training::Kind;

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t load_index(const char* p, bool index32, int64_t i) {
  return index32 ? reinterpret_cast<const int32_t*>(p)[i] : reinterpret_cast<const int64_t*>(p)[i];
}

// ---- arange ---------------------------------------------------------------------------------

template <class T>
__global__ void arange_kernel(TORCHADA_PARAM(training::Arange) a) {
  const int esize = memory::size_of(a.kind);
  TORCHADA_GRID_STRIDE(i, a.n) {
    T v;
    if constexpr (std::is_integral_v<T>)
      v = a.istart + a.istep * i;
    else
      v = static_cast<T>(a.start) + static_cast<T>(a.step) * static_cast<T>(i);
    store<T>(a.out + i * esize, a.kind, v);
  }
}

// ---- gather ---------------------------------------------------------------------------------

template <int Size>
struct Bytes {
  unsigned char b[Size];
};

template <int Size>
__global__ void gather_kernel(TORCHADA_PARAM(training::Gather) g) {
  TORCHADA_GRID_STRIDE(i, g.numel) {
    int64_t rest = i, out_off = 0, self_off = 0, index_off = 0, along = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t c = rest % g.sizes[d];
      rest /= g.sizes[d];
      out_off += c * g.out_strides[d];
      index_off += c * g.index_strides[d];
      if (d != g.dim) self_off += c * g.self_strides[d];
    }
    along = load_index(g.index, g.index32, index_off);
    TORCHADA_DEVICE_ASSERT(along >= 0 && along < g.self_dim_size);
    self_off += along * g.self_strides[g.dim];
    reinterpret_cast<Bytes<Size>*>(g.out)[out_off] =
        reinterpret_cast<const Bytes<Size>*>(g.self)[self_off];
  }
}

// ---- the embedding's gradient ---------------------------------------------------------------

// Thread (column, part) owns the rows r of the accumulator with r % parts == part in its column:
// no two threads write one element, and each adds its rows' gradients in the order of the
// indices (deterministic, unlike atomics).
template <class T>
__global__ void embedding_backward_kernel(TORCHADA_PARAM(training::EmbeddingBackward) e,
                                          int64_t parts) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t part = blockIdx.y;
  if (col >= e.dim) return;
  T* acc = static_cast<T*>(e.acc);
  const int esize = memory::size_of(e.grad_kind);
  for (int64_t i = 0; i < e.n; ++i) {
    const int64_t r = load_index(e.indices, e.index32, i);
    if (r == e.padding_idx || r % parts != part) continue;
    TORCHADA_DEVICE_ASSERT(r >= 0 && r < e.num_weights);
    acc[r * e.dim + col] +=
        load<T>(e.grad + (i * e.grad_row_stride + col * e.grad_col_stride) * esize, e.grad_kind);
  }
}

#if defined(TORCHADA_KERNELS_HOST)
// The executor's shape of the same sums: thread `part` walks the indices once and adds each of
// its rows' gradients whole, the inner loop over the columns (which the compiler vectorises)
// instead of a thread per column rescanning every index. Each element still sums its gradients
// in the order of the indices, so the result is the GPU shape's, bit for bit.
template <class T>
__global__ void embedding_backward_rows_kernel(TORCHADA_PARAM(training::EmbeddingBackward) e,
                                               int64_t parts) {
  const int64_t part = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (part >= parts) return;
  T* acc = static_cast<T*>(e.acc);
  const int esize = memory::size_of(e.grad_kind);
  const bool plain = e.grad_col_stride == 1 &&
                     e.grad_kind == (std::is_same_v<T, float> ? Kind::kFloat32 : Kind::kFloat64);
  for (int64_t i = 0; i < e.n; ++i) {
    const int64_t r = load_index(e.indices, e.index32, i);
    if (r == e.padding_idx || r % parts != part) continue;
    TORCHADA_DEVICE_ASSERT(r >= 0 && r < e.num_weights);
    T* row = acc + r * e.dim;
    const char* g = e.grad + i * e.grad_row_stride * esize;
    if (plain) {
      const T* gt = reinterpret_cast<const T*>(g);
      for (int64_t c = 0; c < e.dim; ++c) row[c] += gt[c];
    } else {
      for (int64_t c = 0; c < e.dim; ++c)
        row[c] += load<T>(g + c * e.grad_col_stride * esize, e.grad_kind);
    }
  }
}
#endif

// ---- NLL loss ---------------------------------------------------------------------------------

template <class T>
__device__ __forceinline__ T class_weight(const training::NllLoss& l, int64_t t) {
  return l.weight ? load<T>(l.weight + t * memory::size_of(l.kind), l.kind) : T(1);
}

// reduction none: one thread per row.
template <class T>
__global__ void nll_loss_rows_kernel(TORCHADA_PARAM(training::NllLoss) l) {
  const int esize = memory::size_of(l.kind);
  TORCHADA_GRID_STRIDE(i, l.batch) {
    const int64_t t = load_index(l.target, l.target32, i * l.target_stride);
    T loss = T(0);
    if (t != l.ignore_index) {
      TORCHADA_DEVICE_ASSERT(t >= 0 && t < l.classes);
      loss = -load<T>(l.input + (i * l.in_row_stride + t * l.in_col_stride) * esize, l.kind) *
             class_weight<T>(l, t);
    }
    store<T>(l.out + i * l.out_stride * esize, l.kind, loss);
  }
}

// Sum or mean: one block, its threads striding over the rows, then a tree (fixed order).
template <class T>
__global__ void nll_loss_reduce_kernel(TORCHADA_PARAM(training::NllLoss) l) {
  __shared__ T loss_part[kThreads];
  __shared__ T weight_part[kThreads];
  const int esize = memory::size_of(l.kind);
  T loss = T(0), weight = T(0);
  for (int64_t i = threadIdx.x; i < l.batch; i += blockDim.x) {
    const int64_t t = load_index(l.target, l.target32, i * l.target_stride);
    if (t == l.ignore_index) continue;
    TORCHADA_DEVICE_ASSERT(t >= 0 && t < l.classes);
    const T w = class_weight<T>(l, t);
    loss -= load<T>(l.input + (i * l.in_row_stride + t * l.in_col_stride) * esize, l.kind) * w;
    weight += w;
  }
  loss_part[threadIdx.x] = loss;
  weight_part[threadIdx.x] = weight;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) {
      loss_part[threadIdx.x] += loss_part[threadIdx.x + s];
      weight_part[threadIdx.x] += weight_part[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const T total = loss_part[0], tw = weight_part[0];
    store<T>(l.out, l.kind, l.reduction == 1 ? total / tw : total);
    store<T>(l.total_weight, l.kind, tw);
  }
}

// grad_input[i, target[i]] = -weight[target[i]] * grad (zeros elsewhere: the caller's).
template <class T>
__global__ void nll_loss_backward_kernel(TORCHADA_PARAM(training::NllLoss) l) {
  const int esize = memory::size_of(l.kind);
  TORCHADA_GRID_STRIDE(i, l.batch) {
    const int64_t t = load_index(l.target, l.target32, i * l.target_stride);
    if (t == l.ignore_index) continue;
    TORCHADA_DEVICE_ASSERT(t >= 0 && t < l.classes);
    T g = l.reduction == 0 ? load<T>(l.grad_output + i * l.grad_output_stride * esize, l.kind)
                           : load<T>(l.grad_output, l.kind);
    if (l.reduction == 1) g /= load<T>(l.total_weight, l.kind);
    store<T>(l.out + (i * l.out_stride + t * l.out_col_stride) * esize, l.kind,
             -class_weight<T>(l, t) * g);
  }
}

// Launches kernel<float>, kernel<double> or kernel<int64_t>(arg) as `c` says.
#define TORCHADA_LAUNCH_BY_COMPUTE(c, grid, block, s, kernel, arg)      \
  do {                                                                  \
    switch (c) {                                                        \
      case Compute::kFloat:                                             \
        TORCHADA_LAUNCH_PLAIN(grid, block, 0, s, kernel<float>)(arg);   \
        break;                                                          \
      case Compute::kDouble:                                            \
        TORCHADA_LAUNCH_PLAIN(grid, block, 0, s, kernel<double>)(arg);  \
        break;                                                          \
      case Compute::kInt64:                                             \
        TORCHADA_LAUNCH_PLAIN(grid, block, 0, s, kernel<int64_t>)(arg); \
        break;                                                          \
    }                                                                   \
  } while (0)

Compute floating(Kind k) { return k == Kind::kFloat64 ? Compute::kDouble : Compute::kFloat; }

}  // namespace

const char* arange(const training::Arange& a, void* stream) {
  if (a.n == 0) return nullptr;
  auto s = static_cast<gpuStream_t>(stream);
  TORCHADA_LAUNCH_BY_COMPUTE(a.compute, grid_for(a.n, kThreads), kThreads, s, arange_kernel, a);
  return last_error();
}

const char* gather(const training::Gather& g, void* stream) {
  if (g.numel == 0) return nullptr;
  if (g.ndim < 1 || g.ndim > training::Gather::kMaxDims) return "gather: unsupported rank";
  auto s = static_cast<gpuStream_t>(stream);
  const unsigned grid = grid_for(g.numel, kThreads);
  switch (g.elem_size) {
    case 1:
      TORCHADA_LAUNCH_PLAIN(grid, kThreads, 0, s, gather_kernel<1>)(g);
      break;
    case 2:
      TORCHADA_LAUNCH_PLAIN(grid, kThreads, 0, s, gather_kernel<2>)(g);
      break;
    case 4:
      TORCHADA_LAUNCH_PLAIN(grid, kThreads, 0, s, gather_kernel<4>)(g);
      break;
    case 8:
      TORCHADA_LAUNCH_PLAIN(grid, kThreads, 0, s, gather_kernel<8>)(g);
      break;
    default:
      return "gather: unsupported element size";
  }
  return last_error();
}

const char* embedding_backward(const training::EmbeddingBackward& e, void* stream) {
  if (e.n == 0 || e.dim == 0) return nullptr;
  const int64_t parts = e.num_weights < 16 ? (e.num_weights < 1 ? 1 : e.num_weights) : 16;
  auto s = static_cast<gpuStream_t>(stream);
#if defined(TORCHADA_KERNELS_HOST)
  if (e.acc_double)
    TORCHADA_LAUNCH_PLAIN(static_cast<unsigned>(parts), 1, 0, s,
                          embedding_backward_rows_kernel<double>)
    (e, parts);
  else
    TORCHADA_LAUNCH_PLAIN(static_cast<unsigned>(parts), 1, 0, s,
                          embedding_backward_rows_kernel<float>)
    (e, parts);
  return last_error();
#endif
  const dim3 grid(grid_for(e.dim, 128), static_cast<unsigned>(parts));
  if (e.acc_double)
    TORCHADA_LAUNCH_PLAIN(grid, 128, 0, s, embedding_backward_kernel<double>)(e, parts);
  else
    TORCHADA_LAUNCH_PLAIN(grid, 128, 0, s, embedding_backward_kernel<float>)(e, parts);
  return last_error();
}

const char* nll_loss_forward(const training::NllLoss& l, void* stream) {
  auto s = static_cast<gpuStream_t>(stream);
  const Compute c = floating(l.kind);
  if (l.reduction == 0) {
    if (l.batch == 0) return nullptr;
    if (c == Compute::kDouble)
      TORCHADA_LAUNCH_PLAIN(grid_for(l.batch, kThreads), kThreads, 0, s,
                            nll_loss_rows_kernel<double>)
    (l);
    else TORCHADA_LAUNCH_PLAIN(grid_for(l.batch, kThreads), kThreads, 0, s,
                               nll_loss_rows_kernel<float>)(l);
    return last_error();
  }
  if (c == Compute::kDouble)
    TORCHADA_LAUNCH(1, kThreads, 0, s, nll_loss_reduce_kernel<double>)(l);
  else
    TORCHADA_LAUNCH(1, kThreads, 0, s, nll_loss_reduce_kernel<float>)(l);
  return last_error();
}

const char* nll_loss_backward(const training::NllLoss& l, void* stream) {
  if (l.batch == 0) return nullptr;
  auto s = static_cast<gpuStream_t>(stream);
  if (floating(l.kind) == Compute::kDouble)
    TORCHADA_LAUNCH_PLAIN(grid_for(l.batch, kThreads), kThreads, 0, s,
                          nll_loss_backward_kernel<double>)
  (l);
  else TORCHADA_LAUNCH_PLAIN(grid_for(l.batch, kThreads), kThreads, 0, s,
                             nll_loss_backward_kernel<float>)(l);
  return last_error();
}

}  // namespace torchada::TORCHADA_KERNELS_NS
