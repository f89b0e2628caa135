// The reduction engine: every reduction of reduce.h's list, one accumulator layout (Acc) and a
// reducer per operator (init, step over one element, merge of two partial results, finish into
// the outputs). Two kernels share them:
//   per-thread: one thread reduces one output entirely (many outputs, short reductions; also
//               what the simulator runs as a plain loop);
//   per-block:  one block reduces one output, its threads striding over the reduced elements,
//               then a tree in shared memory (long reductions).
#include "memory.cuh"
#include "portable.cuh"
#include "reduce.h"

#include <cmath>
#include <type_traits>

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

using memory::load;
using memory::store;
using reduce::Args;
using reduce::Compute;
using reduce::Op;

template <class T>
struct Acc {  // plain data: it lives in shared memory
  T a;        // sum, product, extreme value, mean
  T b;        // Welford's m2
  int64_t i;  // index of the extreme value (-1: none yet), Welford's count
};

template <class T>
__device__ __forceinline__ bool nan(T v) {
  if constexpr (std::is_integral_v<T>)
    return false;
  else
    return v != v;
}
template <class T>
__device__ __forceinline__ T magnitude(T v) {
  if constexpr (std::is_integral_v<T>)
    return v < 0 ? -v : v;
  else
    return std::fabs(v);
}
template <class T>
__device__ __forceinline__ T lowest() {
  if constexpr (std::is_integral_v<T>)
    return T(-0x7fffffffffffffffLL - 1);
  else
    return -INFINITY;
}
template <class T>
__device__ __forceinline__ T highest() {
  if constexpr (std::is_integral_v<T>)
    return T(0x7fffffffffffffffLL);
  else
    return INFINITY;
}

// Which of two candidates of an extreme wins: NaN first, then the larger (smaller) value, then
// the lower index.
template <bool Max, class T>
__device__ __forceinline__ bool better(T v, int64_t vi, T cur, int64_t ci) {
  if (ci < 0) return vi >= 0;
  if (vi < 0) return false;
  if (nan(cur)) return nan(v) && vi < ci;
  if (nan(v)) return true;
  if (v == cur) return vi < ci;
  return Max ? v > cur : v < cur;
}

__host__ __device__ constexpr bool is_max(Op o) { return o == Op::kMax || o == Op::kArgMax; }

template <Op O, class T>
struct Reducer {
  static constexpr bool kExtreme =
      O == Op::kMax || O == Op::kMin || O == Op::kArgMax || O == Op::kArgMin;

  __device__ static Acc<T> init(const Args& a) {
    Acc<T> r;
    r.b = T(0);
    r.i = kExtreme ? -1 : 0;
    if constexpr (O == Op::kProd || O == Op::kAll) {
      r.a = T(1);
    } else if constexpr (O == Op::kNorm) {
      r.a = a.c[0] == -INFINITY ? highest<T>() : T(0);
    } else {
      r.a = T(0);
    }
    return r;
  }

  __device__ static void step(Acc<T>& r, T x, int64_t index, const Args& a) {
    if constexpr (O == Op::kSum) {
      if constexpr (std::is_integral_v<T>)
        r.a = static_cast<T>(static_cast<uint64_t>(r.a) + static_cast<uint64_t>(x));
      else
        r.a += x;
    } else if constexpr (O == Op::kProd) {
      if constexpr (std::is_integral_v<T>)
        r.a = static_cast<T>(static_cast<uint64_t>(r.a) * static_cast<uint64_t>(x));
      else
        r.a *= x;
    } else if constexpr (kExtreme) {
      if (better<is_max(O)>(x, index, r.a, r.i)) r.a = x, r.i = index;
    } else if constexpr (O == Op::kNorm) {
      const double p = a.c[0];
      const T m = magnitude(x);
      if (p == INFINITY) {
        if (nan(m) || m > r.a) r.a = m;
      } else if (p == -INFINITY) {
        if (nan(m) || m < r.a) r.a = m;
      } else if (p == 0) {
        r.a += x != T(0) ? T(1) : T(0);
      } else if (p == 1) {
        r.a += m;
      } else if (p == 2) {
        r.a += m * m;
      } else {
        r.a += static_cast<T>(std::pow(m, static_cast<T>(p)));
      }
    } else if constexpr (O == Op::kVar) {
      r.i += 1;
      const T d = x - r.a;
      r.a += d / static_cast<T>(r.i);
      r.b += d * (x - r.a);
    } else if constexpr (O == Op::kAny) {
      if (x != T(0)) r.a = T(1);
    } else if constexpr (O == Op::kAll) {
      if (x == T(0)) r.a = T(0);
    }
  }

  // `s` holds a partial result over other elements.
  __device__ static void merge(Acc<T>& r, const Acc<T>& s, const Args& a) {
    if constexpr (O == Op::kVar) {
      if (s.i == 0) return;
      if (r.i == 0) {
        r = s;
        return;
      }
      const int64_t n = r.i + s.i;
      const T d = s.a - r.a;
      const T sn = static_cast<T>(s.i), rn = static_cast<T>(r.i), nn = static_cast<T>(n);
      r.a += d * sn / nn;
      r.b += s.b + d * d * rn * sn / nn;
      r.i = n;
    } else if constexpr (kExtreme) {
      if (better<is_max(O)>(s.a, s.i, r.a, r.i)) r.a = s.a, r.i = s.i;
    } else if constexpr (O == Op::kNorm) {
      const double p = a.c[0];
      if (p == INFINITY) {
        if (nan(s.a) || s.a > r.a) r.a = s.a;
      } else if (p == -INFINITY) {
        if (nan(s.a) || s.a < r.a) r.a = s.a;
      } else {
        r.a += s.a;
      }
    } else if constexpr (O == Op::kProd) {
      Acc<T> t = s;
      step(r, t.a, 0, a);
    } else if constexpr (O == Op::kAny) {
      if (s.a != T(0)) r.a = T(1);
    } else if constexpr (O == Op::kAll) {
      if (s.a == T(0)) r.a = T(0);
    } else {
      step(r, s.a, 0, a);
    }
  }

  __device__ static void finish(const Acc<T>& r, const Args& a, int64_t off0, int64_t off1) {
    if constexpr (O == Op::kArgMax || O == Op::kArgMin) {
      store(a.out[0] + off0, a.out_kind[0], r.i < 0 ? int64_t(0) : r.i);
    } else if constexpr (kExtreme) {
      store(a.out[0] + off0, a.out_kind[0], r.a);
      if (a.with_index) store(a.out[1] + off1, a.out_kind[1], r.i < 0 ? int64_t(0) : r.i);
    } else if constexpr (O == Op::kSum) {
      if constexpr (std::is_integral_v<T>)
        store(a.out[0] + off0, a.out_kind[0], r.a);
      else
        store(a.out[0] + off0, a.out_kind[0], a.c[0] == 1.0 ? r.a : r.a * static_cast<T>(a.c[0]));
    } else if constexpr (O == Op::kNorm) {
      const double p = a.c[0];
      T v = r.a;
      if (p == 2)
        v = std::sqrt(v);
      else if (p != 0 && p != 1 && p != INFINITY && p != -INFINITY)
        v = static_cast<T>(std::pow(v, static_cast<T>(1.0 / p)));
      store(a.out[0] + off0, a.out_kind[0], v);
    } else if constexpr (O == Op::kVar) {
      const T divisor = static_cast<T>(r.i) - static_cast<T>(a.c[0]);
      T v = r.b / (divisor > T(0) ? divisor : T(0));
      if (a.c[1] != 0) v = std::sqrt(v);
      store(a.out[0] + off0, a.out_kind[0], v);
    } else {
      store(a.out[0] + off0, a.out_kind[0], r.a);
    }
  }
};

// Offsets of output `o`: the input's first element and each output's element.
__device__ __forceinline__ void locate(const Args& a, int64_t o, int64_t* in, int64_t* out0,
                                       int64_t* out1) {
  *in = *out0 = *out1 = 0;
  for (int d = 0; d < a.nkept; ++d) {
    const int64_t idx = o % a.kept_sizes[d];
    o /= a.kept_sizes[d];
    *in += idx * a.in_kept_strides[d];
    *out0 += idx * a.out_strides[0][d];
    *out1 += idx * a.out_strides[1][d];
  }
}

__device__ __forceinline__ int64_t reduced_offset(const Args& a, int64_t r) {
  if (a.nred == 1) return r * a.in_red_strides[0];
  int64_t off = 0;
  for (int d = 0; d < a.nred; ++d) {
    off += (r % a.red_sizes[d]) * a.in_red_strides[d];
    r /= a.red_sizes[d];
  }
  return off;
}

template <Op O, class T>
__global__ void reduce_per_thread(TORCHADA_PARAM(Args) a) {
  using R = Reducer<O, T>;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= a.numel_out) return;
  int64_t in, out0, out1;
  locate(a, o, &in, &out0, &out1);
  Acc<T> acc = R::init(a);
  for (int64_t r = 0; r < a.numel_red; ++r)
    R::step(acc, load<T>(a.in + in + reduced_offset(a, r), a.in_kind), r, a);
  R::finish(acc, a, out0, out1);
}

constexpr int kMaxBlock = 512;

template <Op O, class T>
__global__ void reduce_per_block(TORCHADA_PARAM(Args) a) {
  using R = Reducer<O, T>;
  __shared__ Acc<T> partial[kMaxBlock];
  const int64_t o = blockIdx.x;
  int64_t in, out0, out1;
  locate(a, o, &in, &out0, &out1);
  Acc<T> acc = R::init(a);
  for (int64_t r = threadIdx.x; r < a.numel_red; r += blockDim.x)
    R::step(acc, load<T>(a.in + in + reduced_offset(a, r), a.in_kind), r, a);
  const int t = threadIdx.x;
  partial[t] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) R::merge(partial[t], partial[t + s], a);
    __syncthreads();
  }
  if (t == 0) R::finish(partial[0], a, out0, out1);
}

int64_t magnitude64(int64_t v) { return v < 0 ? -v : v; }

template <Op O, class T>
const char* launch_op(const Args& a, gpuStream_t stream) {
  // A thread per output when the reductions are short, or when outputs are the fast-moving
  // dimension (neighbouring threads then read neighbouring elements: coalesced on a GPU, one
  // cache line after another on the simulator), or when outputs alone fill the device. Otherwise
  // a block per output, each thread taking about 128 elements before the tree (the tree's
  // barriers are what the simulator pays most for).
  const bool rows_contiguous =
      a.nkept == 0 || magnitude64(a.in_red_strides[0]) <= magnitude64(a.in_kept_strides[0]);
  const bool per_thread = a.numel_red <= 128 || (!rows_contiguous && a.numel_out >= 64) ||
                          (a.numel_out >= 8192 && a.numel_red <= 1024);
  if (per_thread) {
    const int threads = 256;
    const int64_t blocks = (a.numel_out + threads - 1) / threads;
    if (blocks > 0x7fffffff) return "reduce: too many outputs";
    TORCHADA_LAUNCH_PLAIN(static_cast<unsigned>(blocks), threads, 0, stream,
                          reduce_per_thread<O, T>)
    (a);
  } else {
    if (a.numel_out > 0x7fffffff) return "reduce: too many outputs";
    const int threads = block_threads((a.numel_red + 127) / 128, kMaxBlock);
    TORCHADA_LAUNCH(static_cast<unsigned>(a.numel_out), threads, 0, stream, reduce_per_block<O, T>)
    (a);
  }
  return last_error();
}

template <class T>
const char* dispatch(Op op, const Args& a, gpuStream_t s) {
  switch (op) {
    case Op::kSum:
      return launch_op<Op::kSum, T>(a, s);
    case Op::kProd:
      return launch_op<Op::kProd, T>(a, s);
    case Op::kMax:
      return launch_op<Op::kMax, T>(a, s);
    case Op::kMin:
      return launch_op<Op::kMin, T>(a, s);
    case Op::kArgMax:
      return launch_op<Op::kArgMax, T>(a, s);
    case Op::kArgMin:
      return launch_op<Op::kArgMin, T>(a, s);
    case Op::kAny:
      return launch_op<Op::kAny, T>(a, s);
    case Op::kAll:
      return launch_op<Op::kAll, T>(a, s);
    case Op::kNorm:
    case Op::kVar:
      if constexpr (std::is_integral_v<T>) {
        return "reduce: norms and variances are computed in floating point";
      } else {
        return op == Op::kNorm ? launch_op<Op::kNorm, T>(a, s) : launch_op<Op::kVar, T>(a, s);
      }
  }
  return "reduce: unknown operator";
}

}  // namespace

const char* reduce_launch(reduce::Op op, reduce::Compute compute, const reduce::Args& args,
                          void* stream) {
  if (args.numel_out == 0) return nullptr;
  if (args.nkept < 0 || args.nkept > Args::kMaxDims || args.nred < 0 ||
      args.nred > Args::kMaxDims || args.nout < 1 || args.nout > 2)
    return "reduce: malformed arguments";
  auto s = static_cast<gpuStream_t>(stream);
  switch (compute) {
    case Compute::kFloat:
      return dispatch<float>(op, args, s);
    case Compute::kDouble:
      return dispatch<double>(op, args, s);
    case Compute::kInt64:
      return dispatch<int64_t>(op, args, s);
  }
  return "reduce: unknown compute type";
}

}  // namespace torchada::TORCHADA_KERNELS_NS
