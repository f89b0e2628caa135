// Softmax and log-softmax along contiguous rows, forward and backward, each in one launch: the
// row's maximum, its sum of exponentials and the result in three sweeps of the row (a thread per
// row or a block per row: rows.cuh). The forward also serves attention: the scores' scale, the
// causal mask and each row's log-sum-exp (what flash attention saves) in the same sweeps.
#include <cmath>
#include <type_traits>

#include "device_math.cuh"
#include "memory.cuh"
#include "portable.cuh"
#include "rows.cuh"
#include "training.h"

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

using memory::load;
using memory::store;
using rows::Row;
using rows::row_max;
using rows::row_sum;
using training::Compute;
using training::Kind;
using training::Softmax;

#if defined(TORCHADA_KERNELS_HOST)
// The executor's rows whose every operand is stored as T: each sweep a loop over plain pointers,
// so that the compiler vectorises the exponentials and the scaling (sums keep element order, so
// the results are those of the general sweeps). Not for a log-softmax written over its own
// input, which reads the input again after the exponentials are stored.
template <class T>
constexpr Kind kStored = std::is_same_v<T, float> ? Kind::kFloat32 : Kind::kFloat64;

template <class T>
bool forward_row_stored(const Softmax& a, int64_t row) {
  if (a.in_kind != kStored<T> || a.out_kind != kStored<T> || (a.log && a.in == a.out)) return false;
  const T* x = reinterpret_cast<const T*>(a.in) + row * a.cols;
  T* y = reinterpret_cast<T*>(a.out) + row * a.cols;
  const T scale = static_cast<T>(a.scale);
  const int64_t unmasked = a.causal ? row % a.rows_per_matrix + 1 : a.cols;
  const int64_t n = unmasked < a.cols ? unmasked : a.cols;
  // The maximum without a branch per element (a NaN anywhere makes it NaN, as in the sweeps).
  T m = -INFINITY;
  bool nan = false;
  for (int64_t j = 0; j < n; ++j) {
    const T v = x[j] * scale;
    nan |= v != v;
    m = v > m ? v : m;
  }
  if (nan) m = NAN;
  const T shift = m == -INFINITY ? T(0) : m;
  for (int64_t j = 0; j < n; ++j) y[j] = device_math::exp(x[j] * scale - shift);
  T sum = T(0);
  for (int64_t j = 0; j < n; ++j) sum += y[j];
  const T log_sum = std::log(sum);
  if (a.log) {
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] * scale - shift - log_sum;
  } else {
    const T inv = sum > T(0) ? T(1) / sum : T(0);
    for (int64_t j = 0; j < n; ++j) y[j] *= inv;
  }
  for (int64_t j = n; j < a.cols; ++j) y[j] = a.log ? -INFINITY : T(0);
  if (a.lse) a.lse[row] = static_cast<float>(shift + log_sum);
  return true;
}

template <class T>
bool backward_row_stored(const Softmax& a, int64_t row) {
  if (a.in_kind != kStored<T> || a.out_kind != kStored<T>) return false;
  const T* y = reinterpret_cast<const T*>(a.in) + row * a.cols;
  const T* g = reinterpret_cast<const T*>(a.grad) + row * a.cols;
  T* dx = reinterpret_cast<T*>(a.out) + row * a.cols;
  T sum = T(0);
  if (a.log) {
    for (int64_t j = 0; j < a.cols; ++j) sum += g[j];
    for (int64_t j = 0; j < a.cols; ++j) dx[j] = g[j] - device_math::exp(y[j]) * sum;
  } else {
    for (int64_t j = 0; j < a.cols; ++j) sum += g[j] * y[j];
    for (int64_t j = 0; j < a.cols; ++j) dx[j] = y[j] * (g[j] - sum);
  }
  return true;
}
#endif

template <class T, bool Block>
__global__ void forward_kernel(TORCHADA_PARAM(Softmax) a) {
  const Row<Block> r;
  if (r.row >= a.rows) return;
#if defined(TORCHADA_KERNELS_HOST)
  if constexpr (!Block) {
    if (forward_row_stored<T>(a, r.row)) return;
  }
#endif
  const int is = memory::size_of(a.in_kind), os = memory::size_of(a.out_kind);
  const char* x = a.in + r.row * a.cols * is;
  char* y = a.out + r.row * a.cols * os;
  const T scale = static_cast<T>(a.scale);
  // Columns past `last` are masked (the causal mask); none are otherwise.
  const int64_t last = a.causal ? r.row % a.rows_per_matrix : a.cols - 1;
  const auto value = [&](int64_t j) { return load<T>(x + j * is, a.in_kind) * scale; };
  T m = -INFINITY;
  for (int64_t j = r.first; j < a.cols && j <= last; j += r.step) {
    const T v = value(j);
    if (v > m || v != v) m = v;
  }
  m = row_max<T, Block>(m);
  const T shift = m == -INFINITY ? T(0) : m;  // a fully masked row: every exponential is 0
  T sum = T(0);
  // A softmax whose output holds T exactly keeps each exponential there between the sweeps
  // instead of computing it twice.
  const bool keep =
      !a.log && os == static_cast<int>(sizeof(T)) &&
      (a.out_kind == training::Kind::kFloat32 || a.out_kind == training::Kind::kFloat64);
  for (int64_t j = r.first; j < a.cols && j <= last; j += r.step) {
    const T e = device_math::exp(value(j) - shift);
    sum += e;
    if (keep) *reinterpret_cast<T*>(y + j * os) = e;
  }
  sum = row_sum<T, Block>(sum);
  const T log_sum = std::log(sum);
  const T inv = sum > T(0) ? T(1) / sum : T(0);
  for (int64_t j = r.first; j < a.cols; j += r.step) {
    T out;
    if (j > last)
      out = a.log ? -INFINITY : T(0);
    else if (keep)
      out = *reinterpret_cast<const T*>(y + j * os) * inv;
    else
      out = a.log ? value(j) - shift - log_sum : device_math::exp(value(j) - shift) * inv;
    store<T>(y + j * os, a.out_kind, out);
  }
  if (a.lse && r.first == 0) a.lse[r.row] = static_cast<float>(shift + log_sum);
}

template <class T, bool Block>
__global__ void backward_kernel(TORCHADA_PARAM(Softmax) a) {
  const Row<Block> r;
  if (r.row >= a.rows) return;
#if defined(TORCHADA_KERNELS_HOST)
  if constexpr (!Block) {
    if (backward_row_stored<T>(a, r.row)) return;
  }
#endif
  const int is = memory::size_of(a.in_kind), os = memory::size_of(a.out_kind);
  const char* y = a.in + r.row * a.cols * is;
  const char* g = a.grad + r.row * a.cols * is;
  char* dx = a.out + r.row * a.cols * os;
  T sum = T(0);
  for (int64_t j = r.first; j < a.cols; j += r.step) {
    const T gj = load<T>(g + j * is, a.in_kind);
    sum += a.log ? gj : gj * load<T>(y + j * is, a.in_kind);
  }
  sum = row_sum<T, Block>(sum);
  for (int64_t j = r.first; j < a.cols; j += r.step) {
    const T gj = load<T>(g + j * is, a.in_kind), yj = load<T>(y + j * is, a.in_kind);
    store<T>(dx + j * os, a.out_kind, a.log ? gj - device_math::exp(yj) * sum : yj * (gj - sum));
  }
}

template <class T>
const char* launch(const Softmax& a, bool backward, gpuStream_t s) {
  if (rows::per_block(a.rows, a.cols)) {
    const int threads = block_threads(a.cols);
    const dim3 grid(static_cast<unsigned>(a.rows));
    if (backward)
      TORCHADA_LAUNCH(grid, threads, 0, s, backward_kernel<T, true>)(a);
    else
      TORCHADA_LAUNCH(grid, threads, 0, s, forward_kernel<T, true>)(a);
  } else {
    const unsigned grid = static_cast<unsigned>((a.rows + 127) / 128);
    if (backward)
      TORCHADA_LAUNCH_PLAIN(grid, 128, 0, s, backward_kernel<T, false>)(a);
    else
      TORCHADA_LAUNCH_PLAIN(grid, 128, 0, s, forward_kernel<T, false>)(a);
  }
  return last_error();
}

const char* run(const Softmax& a, bool backward, void* stream) {
  if (a.rows == 0 || a.cols == 0) return nullptr;
  if (a.rows > 0x7fffffffLL * 128) return "softmax: too many rows";
  if (a.compute == Compute::kInt64) return "softmax: integral compute type";
  auto s = static_cast<gpuStream_t>(stream);
  return a.compute == Compute::kDouble ? launch<double>(a, backward, s)
                                       : launch<float>(a, backward, s);
}

}  // namespace

const char* softmax_forward(const Softmax& a, void* stream) { return run(a, false, stream); }
const char* softmax_backward(const Softmax& a, void* stream) { return run(a, true, stream); }

}  // namespace torchada::TORCHADA_KERNELS_NS
