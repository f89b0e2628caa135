// Convolution's data movement (im2col and its adjoint col2im: a convolution is then a batched
// GEMM, which cuBLAS computes) and max pooling with its backward, over contiguous NCHW batches.
// Every output element is one thread's, written once: col2im and the pooling backward gather what
// reaches an input element instead of scattering with atomics, so results do not depend on
// scheduling.
#include "memory.cuh"
#include "portable.cuh"
#include "training.h"

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

using memory::load;
using memory::store;
using training::Compute;
using training::Im2Col;
using training::MaxPool;

constexpr int kThreads = 256;

template <int Size>
struct Bytes {
  unsigned char b[Size];
};

// columns[b, (c * kh + i) * kw + j, oh * out_w + ow] = image[b, c, oh * sh - ph + i * dh,
// ow * sw - pw + j * dw], 0 outside the image.
template <int Size>
__global__ void im2col_kernel(TORCHADA_PARAM(Im2Col) c) {
  using E = Bytes<Size>;
  const int64_t cols = c.out_h * c.out_w;
  const int64_t rows = c.channels * c.kernel_h * c.kernel_w;
  const E* in = reinterpret_cast<const E*>(c.in);
  E* out = reinterpret_cast<E*>(c.out);
  TORCHADA_GRID_STRIDE(idx, c.n * rows * cols) {
    const int64_t col = idx % cols, row = idx / cols % rows, b = idx / cols / rows;
    const int64_t j = row % c.kernel_w, i = row / c.kernel_w % c.kernel_h;
    const int64_t ch = row / c.kernel_w / c.kernel_h;
    const int64_t h = col / c.out_w * c.stride_h - c.pad_h + i * c.dilation_h;
    const int64_t w = col % c.out_w * c.stride_w - c.pad_w + j * c.dilation_w;
    E v{};
    if (h >= 0 && h < c.height && w >= 0 && w < c.width)
      v = in[((b * c.channels + ch) * c.height + h) * c.width + w];
    out[idx] = v;
  }
}

// image[b, c, h, w] = the sum of every column entry im2col took from it.
template <class T>
__global__ void col2im_kernel(TORCHADA_PARAM(Im2Col) c) {
  const int es = memory::size_of(c.kind);
  const int64_t cols = c.out_h * c.out_w;
  const int64_t rows = c.channels * c.kernel_h * c.kernel_w;
  TORCHADA_GRID_STRIDE(idx, c.n * c.channels * c.height * c.width) {
    const int64_t w = idx % c.width, h = idx / c.width % c.height;
    const int64_t ch = idx / c.width / c.height % c.channels,
                  b = idx / c.width / c.height / c.channels;
    T sum = T(0);
    for (int64_t i = 0; i < c.kernel_h; ++i) {
      const int64_t hs = h + c.pad_h - i * c.dilation_h;
      if (hs < 0 || hs % c.stride_h != 0 || hs / c.stride_h >= c.out_h) continue;
      for (int64_t j = 0; j < c.kernel_w; ++j) {
        const int64_t ws = w + c.pad_w - j * c.dilation_w;
        if (ws < 0 || ws % c.stride_w != 0 || ws / c.stride_w >= c.out_w) continue;
        const int64_t row = (ch * c.kernel_h + i) * c.kernel_w + j;
        const int64_t col = hs / c.stride_h * c.out_w + ws / c.stride_w;
        sum += load<T>(c.in + ((b * rows + row) * cols + col) * es, c.kind);
      }
    }
    store<T>(c.out + idx * es, c.kind, sum);
  }
}

template <class T>
__global__ void max_pool_forward_kernel(TORCHADA_PARAM(MaxPool) p) {
  const int es = memory::size_of(p.kind);
  TORCHADA_GRID_STRIDE(idx, p.planes * p.out_h * p.out_w) {
    const int64_t ow = idx % p.out_w, oh = idx / p.out_w % p.out_h, plane = idx / p.out_w / p.out_h;
    int64_t hs = oh * p.stride_h - p.pad_h, ws = ow * p.stride_w - p.pad_w;
    const int64_t he = hs + (p.kernel_h - 1) * p.dilation_h + 1 < p.height
                           ? hs + (p.kernel_h - 1) * p.dilation_h + 1
                           : p.height;
    const int64_t we = ws + (p.kernel_w - 1) * p.dilation_w + 1 < p.width
                           ? ws + (p.kernel_w - 1) * p.dilation_w + 1
                           : p.width;
    while (hs < 0) hs += p.dilation_h;
    while (ws < 0) ws += p.dilation_w;
    const char* base = p.in + plane * p.height * p.width * es;
    T best = -INFINITY;
    int64_t at = hs * p.width + ws;
    for (int64_t h = hs; h < he; h += p.dilation_h)
      for (int64_t w = ws; w < we; w += p.dilation_w) {
        const T v = load<T>(base + (h * p.width + w) * es, p.kind);
        if (v > best || v != v) {
          best = v;
          at = h * p.width + w;
        }
      }
    store<T>(p.out + idx * es, p.kind, best);
    p.indices[idx] = at;
  }
}

template <class T>
__global__ void max_pool_backward_kernel(TORCHADA_PARAM(MaxPool) p) {
  const int es = memory::size_of(p.kind);
  const int64_t span_h = (p.kernel_h - 1) * p.dilation_h + 1;
  const int64_t span_w = (p.kernel_w - 1) * p.dilation_w + 1;
  TORCHADA_GRID_STRIDE(idx, p.planes * p.height * p.width) {
    const int64_t w = idx % p.width, h = idx / p.width % p.height, plane = idx / p.width / p.height;
    // The outputs whose window can contain (h, w).
    const int64_t ph0 = h + p.pad_h < span_h ? 0 : (h + p.pad_h - span_h) / p.stride_h + 1;
    const int64_t pw0 = w + p.pad_w < span_w ? 0 : (w + p.pad_w - span_w) / p.stride_w + 1;
    const int64_t ph1 =
        (h + p.pad_h) / p.stride_h + 1 < p.out_h ? (h + p.pad_h) / p.stride_h + 1 : p.out_h;
    const int64_t pw1 =
        (w + p.pad_w) / p.stride_w + 1 < p.out_w ? (w + p.pad_w) / p.stride_w + 1 : p.out_w;
    const int64_t self = h * p.width + w;
    const int64_t plane_out = plane * p.out_h * p.out_w;
    T sum = T(0);
    for (int64_t ph = ph0; ph < ph1; ++ph)
      for (int64_t pw = pw0; pw < pw1; ++pw) {
        const int64_t o = plane_out + ph * p.out_w + pw;
        if (p.indices[o] == self) sum += load<T>(p.in + o * es, p.kind);
      }
    store<T>(p.out + idx * es, p.kind, sum);
  }
}

}  // namespace

const char* im2col(const Im2Col& c, void* stream) {
  const int64_t total = c.n * c.channels * c.kernel_h * c.kernel_w * c.out_h * c.out_w;
  if (total == 0) return nullptr;
  auto s = static_cast<gpuStream_t>(stream);
  switch (memory::size_of(c.kind)) {
    case 1:
      TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s, im2col_kernel<1>)(c);
      break;
    case 2:
      TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s, im2col_kernel<2>)(c);
      break;
    case 4:
      TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s, im2col_kernel<4>)(c);
      break;
    default:
      TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s, im2col_kernel<8>)(c);
      break;
  }
  return last_error();
}

const char* col2im(const Im2Col& c, void* stream) {
  const int64_t total = c.n * c.channels * c.height * c.width;
  if (total == 0) return nullptr;
  if (c.compute == Compute::kInt64) return "col2im: integral compute type";
  auto s = static_cast<gpuStream_t>(stream);
  if (c.compute == Compute::kDouble)
    TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s, col2im_kernel<double>)(c);
  else
    TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s, col2im_kernel<float>)(c);
  return last_error();
}

const char* max_pool_forward(const MaxPool& p, void* stream) {
  const int64_t total = p.planes * p.out_h * p.out_w;
  if (total == 0) return nullptr;
  auto s = static_cast<gpuStream_t>(stream);
  switch (p.compute) {
    case Compute::kDouble:
      TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s,
                            max_pool_forward_kernel<double>)
      (p);
      break;
    case Compute::kFloat:
      TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s,
                            max_pool_forward_kernel<float>)
      (p);
      break;
    case Compute::kInt64:
      return "max_pool: integral compute type";
  }
  return last_error();
}

const char* max_pool_backward(const MaxPool& p, void* stream) {
  const int64_t total = p.planes * p.height * p.width;
  if (total == 0) return nullptr;
  auto s = static_cast<gpuStream_t>(stream);
  switch (p.compute) {
    case Compute::kDouble:
      TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s,
                            max_pool_backward_kernel<double>)
      (p);
      break;
    case Compute::kFloat:
      TORCHADA_LAUNCH_PLAIN(grid_for(total, kThreads), kThreads, 0, s,
                            max_pool_backward_kernel<float>)
      (p);
      break;
    case Compute::kInt64:
      return "max_pool_backward: integral compute type";
  }
  return last_error();
}

}  // namespace torchada::TORCHADA_KERNELS_NS
