// Layer norm, forward and backward, fused: one pass computes a row's statistics and its output
// (forward) or its input gradient (backward); the weight and bias gradients are column sums over
// the rows. Two shapes of the same row code:
//   per-thread: one thread owns a row (short rows, many of them; what the simulator runs, where a
//               barrier costs more than the row);
//   per-block:  a block owns a row, its threads striding over it, sums through shared memory
//               (long rows on a GPU).
// Everything is computed in the accumulation type (float for half, bfloat16 and float; double for
// double) and rounded once into the result's type.
#include "memory.cuh"
#include "portable.cuh"
#include "rows.cuh"
#include "training.h"

#include <cmath>
#include <type_traits>

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

using memory::load;
using memory::store;
using rows::Row;
using rows::row_sum;
using training::Compute;
using training::Kind;
using training::LayerNorm;

template <class T>
__device__ __forceinline__ T reciprocal_sqrt(T v) {
  return T(1) / std::sqrt(v);
}

#if defined(TORCHADA_KERNELS_HOST)
// The executor's rows when every tensor is stored as T (the common case): the same sweeps over
// plain pointers, which the compiler vectorises where they are not sums (sums keep element
// order, so the results are the general sweeps').
template <class T>
constexpr Kind kStored = std::is_same_v<T, float> ? Kind::kFloat32 : Kind::kFloat64;

template <class T>
bool stored_as(const LayerNorm& l) {
  return l.kind == kStored<T> && l.param_kind == kStored<T> && l.stat_kind == kStored<T>;
}

template <class T>
bool forward_row_stored(const LayerNorm& l, int64_t row) {
  if (!stored_as<T>(l)) return false;
  const int64_t n = l.cols;
  const T* x = reinterpret_cast<const T*>(l.input) + row * n;
  T* y = reinterpret_cast<T*>(l.output) + row * n;
  const T* w = reinterpret_cast<const T*>(l.weight);
  const T* b = reinterpret_cast<const T*>(l.bias);
  T sum = T(0);
  for (int64_t j = 0; j < n; ++j) sum += x[j];
  const T mean = sum / static_cast<T>(n);
  T squares = T(0);
  for (int64_t j = 0; j < n; ++j) squares += (x[j] - mean) * (x[j] - mean);
  const T rstd = reciprocal_sqrt(squares / static_cast<T>(n) + static_cast<T>(l.eps));
  if (w && b) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * rstd * w[j] + b[j];
  } else if (w) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * rstd * w[j];
  } else if (b) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * rstd + b[j];
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * rstd;
  }
  reinterpret_cast<T*>(l.mean)[row] = mean;
  reinterpret_cast<T*>(l.rstd)[row] = rstd;
  return true;
}

template <class T>
bool backward_row_stored(const LayerNorm& l, int64_t row) {
  if (!stored_as<T>(l)) return false;
  const int64_t n = l.cols;
  const T* x = reinterpret_cast<const T*>(l.input) + row * n;
  const T* dy = reinterpret_cast<const T*>(l.grad_output) + row * n;
  T* dx = reinterpret_cast<T*>(l.grad_input) + row * n;
  const T* w = reinterpret_cast<const T*>(l.weight);
  const T mean = reinterpret_cast<const T*>(l.mean)[row];
  const T rstd = reinterpret_cast<const T*>(l.rstd)[row];
  T sum_g = T(0), sum_gx = T(0);
  for (int64_t j = 0; j < n; ++j) {
    const T g = w ? dy[j] * w[j] : dy[j];
    sum_g += g;
    sum_gx += g * (x[j] - mean) * rstd;
  }
  const T inv_cols = T(1) / static_cast<T>(n);
  const T mean_g = sum_g * inv_cols;
  const T mean_gx = sum_gx * inv_cols;
  if (w) {
    for (int64_t j = 0; j < n; ++j)
      dx[j] = rstd * (dy[j] * w[j] - mean_g - (x[j] - mean) * rstd * mean_gx);
  } else {
    for (int64_t j = 0; j < n; ++j)
      dx[j] = rstd * (dy[j] - mean_g - (x[j] - mean) * rstd * mean_gx);
  }
  return true;
}

// The weight and bias gradients with the rows in the outer loop: each column still sums its rows
// in order, and the inner loop over columns vectorises.
template <class T>
__global__ void backward_params_rows_kernel(TORCHADA_PARAM(LayerNorm) l, int64_t chunk) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * chunk;
  if (first >= l.cols) return;
  const int64_t last = first + chunk < l.cols ? first + chunk : l.cols;
  const int64_t n = l.cols;
  const T* dy = reinterpret_cast<const T*>(l.grad_output);
  const T* x = reinterpret_cast<const T*>(l.input);
  const T* mean = reinterpret_cast<const T*>(l.mean);
  const T* rstd = reinterpret_cast<const T*>(l.rstd);
  T* dw = reinterpret_cast<T*>(l.grad_weight);
  T* db = reinterpret_cast<T*>(l.grad_bias);
  for (int64_t j = first; j < last; ++j) {
    if (dw) dw[j] = T(0);
    if (db) db[j] = T(0);
  }
  for (int64_t i = 0; i < l.rows; ++i) {
    const T m = mean[i], rs = rstd[i];
    if (dw)
      for (int64_t j = first; j < last; ++j) dw[j] += dy[i * n + j] * ((x[i * n + j] - m) * rs);
    if (db)
      for (int64_t j = first; j < last; ++j) db[j] += dy[i * n + j];
  }
}
#endif

template <class T, bool Block>
__global__ void forward_kernel(TORCHADA_PARAM(LayerNorm) l) {
  const Row<Block> r;
  if (r.row >= l.rows) return;
#if defined(TORCHADA_KERNELS_HOST)
  if constexpr (!Block) {
    if (forward_row_stored<T>(l, r.row)) return;
  }
#endif
  const int es = memory::size_of(l.kind), ps = memory::size_of(l.param_kind);
  const char* x = l.input + r.row * l.cols * es;
  char* y = l.output + r.row * l.cols * es;
  T sum = T(0);
  for (int64_t j = r.first; j < l.cols; j += r.step) sum += load<T>(x + j * es, l.kind);
  const T mean = row_sum<T, Block>(sum) / static_cast<T>(l.cols);
  T squares = T(0);
  for (int64_t j = r.first; j < l.cols; j += r.step) {
    const T d = load<T>(x + j * es, l.kind) - mean;
    squares += d * d;
  }
  const T var = row_sum<T, Block>(squares) / static_cast<T>(l.cols);
  const T rstd = reciprocal_sqrt(var + static_cast<T>(l.eps));
  for (int64_t j = r.first; j < l.cols; j += r.step) {
    T v = (load<T>(x + j * es, l.kind) - mean) * rstd;
    if (l.weight) v *= load<T>(l.weight + j * ps, l.param_kind);
    if (l.bias) v += load<T>(l.bias + j * ps, l.param_kind);
    store<T>(y + j * es, l.kind, v);
  }
  if (r.first == 0) {
    const int ss = memory::size_of(l.stat_kind);
    store<T>(l.mean + r.row * ss, l.stat_kind, mean);
    store<T>(l.rstd + r.row * ss, l.stat_kind, rstd);
  }
}

// grad_input = rstd * (g - mean(g) - x_hat * mean(g * x_hat)), g = grad_output * weight.
template <class T, bool Block>
__global__ void backward_input_kernel(TORCHADA_PARAM(LayerNorm) l) {
  const Row<Block> r;
  if (r.row >= l.rows) return;
#if defined(TORCHADA_KERNELS_HOST)
  if constexpr (!Block) {
    if (backward_row_stored<T>(l, r.row)) return;
  }
#endif
  const int es = memory::size_of(l.kind), ps = memory::size_of(l.param_kind),
            ss = memory::size_of(l.stat_kind);
  const char* x = l.input + r.row * l.cols * es;
  const char* dy = l.grad_output + r.row * l.cols * es;
  char* dx = l.grad_input + r.row * l.cols * es;
  const T mean = load<T>(l.mean + r.row * ss, l.stat_kind);
  const T rstd = load<T>(l.rstd + r.row * ss, l.stat_kind);
  T sum_g = T(0), sum_gx = T(0);
  for (int64_t j = r.first; j < l.cols; j += r.step) {
    T g = load<T>(dy + j * es, l.kind);
    if (l.weight) g *= load<T>(l.weight + j * ps, l.param_kind);
    sum_g += g;
    sum_gx += g * (load<T>(x + j * es, l.kind) - mean) * rstd;
  }
  const T inv_cols = T(1) / static_cast<T>(l.cols);
  const T mean_g = row_sum<T, Block>(sum_g) * inv_cols;
  const T mean_gx = row_sum<T, Block>(sum_gx) * inv_cols;
  for (int64_t j = r.first; j < l.cols; j += r.step) {
    T g = load<T>(dy + j * es, l.kind);
    if (l.weight) g *= load<T>(l.weight + j * ps, l.param_kind);
    const T x_hat = (load<T>(x + j * es, l.kind) - mean) * rstd;
    store<T>(dx + j * es, l.kind, rstd * (g - mean_g - x_hat * mean_gx));
  }
}

// grad_weight[j] = sum over rows of grad_output * x_hat; grad_bias[j] = sum of grad_output. One
// thread per column, rows in order.
template <class T>
__global__ void backward_params_kernel(TORCHADA_PARAM(LayerNorm) l) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= l.cols) return;
  const int es = memory::size_of(l.kind), ps = memory::size_of(l.param_kind),
            ss = memory::size_of(l.stat_kind);
  T dw = T(0), db = T(0);
  for (int64_t i = 0; i < l.rows; ++i) {
    const T dy = load<T>(l.grad_output + (i * l.cols + j) * es, l.kind);
    if (l.grad_weight) {
      const T x_hat = (load<T>(l.input + (i * l.cols + j) * es, l.kind) -
                       load<T>(l.mean + i * ss, l.stat_kind)) *
                      load<T>(l.rstd + i * ss, l.stat_kind);
      dw += dy * x_hat;
    }
    db += dy;
  }
  if (l.grad_weight) store<T>(l.grad_weight + j * ps, l.param_kind, dw);
  if (l.grad_bias) store<T>(l.grad_bias + j * ps, l.param_kind, db);
}

template <class T>
const char* launch_rows(const LayerNorm& l, bool backward, gpuStream_t s) {
  if (rows::per_block(l.rows, l.cols)) {
    const int threads = block_threads(l.cols);
    const dim3 grid(static_cast<unsigned>(l.rows));
    if (backward)
      TORCHADA_LAUNCH(grid, threads, 0, s, backward_input_kernel<T, true>)(l);
    else
      TORCHADA_LAUNCH(grid, threads, 0, s, forward_kernel<T, true>)(l);
  } else {
    const unsigned grid = static_cast<unsigned>((l.rows + 127) / 128);
    if (backward)
      TORCHADA_LAUNCH_PLAIN(grid, 128, 0, s, backward_input_kernel<T, false>)(l);
    else
      TORCHADA_LAUNCH_PLAIN(grid, 128, 0, s, forward_kernel<T, false>)(l);
  }
  return last_error();
}

const char* check(const LayerNorm& l) {
  if (l.rows > 0x7fffffffLL) return "layer_norm: more than 2^31-1 rows";
  if (l.compute == Compute::kInt64) return "layer_norm: integral compute type";
  return nullptr;
}

}  // namespace

const char* layer_norm_forward(const LayerNorm& l, void* stream) {
  if (l.rows == 0) return nullptr;
  if (const char* e = check(l)) return e;
  auto s = static_cast<gpuStream_t>(stream);
  return l.compute == Compute::kDouble ? launch_rows<double>(l, false, s)
                                       : launch_rows<float>(l, false, s);
}

const char* layer_norm_backward(const LayerNorm& l, void* stream) {
  if (const char* e = check(l)) return e;
  auto s = static_cast<gpuStream_t>(stream);
  if (l.grad_input && l.rows > 0 && l.cols > 0) {
    const char* e = l.compute == Compute::kDouble ? launch_rows<double>(l, true, s)
                                                  : launch_rows<float>(l, true, s);
    if (e) return e;
  }
  if ((l.grad_weight || l.grad_bias) && l.cols > 0) {
#if defined(TORCHADA_KERNELS_HOST)
    if (l.compute == Compute::kFloat ? stored_as<float>(l) : stored_as<double>(l)) {
      constexpr int64_t kChunk = 256;  // columns a thread
      const unsigned threads = static_cast<unsigned>((l.cols + kChunk - 1) / kChunk);
      if (l.compute == Compute::kDouble)
        TORCHADA_LAUNCH_PLAIN(threads, 1, 0, s, backward_params_rows_kernel<double>)(l, kChunk);
      else
        TORCHADA_LAUNCH_PLAIN(threads, 1, 0, s, backward_params_rows_kernel<float>)(l, kChunk);
      return last_error();
    }
#endif
    const unsigned grid = static_cast<unsigned>((l.cols + 127) / 128);
    if (l.compute == Compute::kDouble)
      TORCHADA_LAUNCH_PLAIN(grid, 128, 0, s, backward_params_kernel<double>)(l);
    else
      TORCHADA_LAUNCH_PLAIN(grid, 128, 0, s, backward_params_kernel<float>)(l);
    return last_error();
  }
  return nullptr;
}

}  // namespace torchada::TORCHADA_KERNELS_NS
