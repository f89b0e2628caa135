// Random kernels: the distributions of a tensor's in-place random fill and dropout, drawing from
// Philox4x32-10 as curand defines it (curand_init(seed, subsequence, offset), curand4 and its
// uniform and Box-Muller conversions) and spending its outputs on the elements in PyTorch's CUDA
// order, so that a generator's seed and offset give the numbers PyTorch's own kernels give on a
// GPU of the same geometry (grid and block come from the host, computed as PyTorch computes them).
//
// Every thread t of a launch of S threads owns Philox subsequence t, starting at the generator's
// offset. PyTorch's distribution kernels (and dropout's unvectorised kernel) spend one 128-bit
// output a loop iteration on elements t + k*S*U + i*S (i < U, U = 4, or 2 for 64-bit values);
// dropout's vectorised kernel spends ceil(V/4) outputs on the V consecutive elements
// (t + k*S)*V + j. The roundings follow nvcc's default (multiply-add contracted into fma), which
// is why the conversions below call fma explicitly.
#include "memory.cuh"
#include "portable.cuh"
#include "random.h"

#include <cfloat>
#include <cmath>

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

using memory::load;
using memory::store;
using random::Draw;

struct Words {
  uint32_t x, y, z, w;
};

// One Philox4x32-10 block: ten rounds of the two multiplications, the key bumped between rounds.
__device__ __forceinline__ Words philox_block(Words c, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c.x;
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c.z;
    c = Words{static_cast<uint32_t>(p1 >> 32) ^ c.y ^ k0, static_cast<uint32_t>(p1),
              static_cast<uint32_t>(p0 >> 32) ^ c.w ^ k1, static_cast<uint32_t>(p0)};
  }
  return c;
}

// A thread's Philox stream: curand's curandStatePhilox4_32_10 semantics. The counter's low 64
// bits count 128-bit outputs, its high 64 bits are the subsequence; an offset that is not a
// multiple of 4 starts inside an output (`phase` words into it).
class PhiloxStream {
 public:
  __device__ PhiloxStream(const random::Philox& p, uint64_t subsequence) {
    uint64_t seed = p.seed, offset = p.offset;
    if (p.captured) {
      seed = static_cast<uint64_t>(*p.seed_ptr);
      offset = static_cast<uint64_t>(*p.offset_ptr) + p.offset_intragraph;
    }
    k0_ = static_cast<uint32_t>(seed);
    k1_ = static_cast<uint32_t>(seed >> 32);
    hi_ = subsequence;
    phase_ = static_cast<unsigned>(offset & 3);
    lo_ = offset / 4;
    out_ = block();
  }

  // curand4: the next four 32-bit words.
  __device__ Words next4() {
    const Words prev = out_;
    if (++lo_ == 0) ++hi_;
    out_ = block();
    switch (phase_) {
      case 1:
        return Words{prev.y, prev.z, prev.w, out_.x};
      case 2:
        return Words{prev.z, prev.w, out_.x, out_.y};
      case 3:
        return Words{prev.w, out_.x, out_.y, out_.z};
      default:
        return prev;
    }
  }

 private:
  __device__ Words block() const {
    const Words c{static_cast<uint32_t>(lo_), static_cast<uint32_t>(lo_ >> 32),
                  static_cast<uint32_t>(hi_), static_cast<uint32_t>(hi_ >> 32)};
    return philox_block(c, k0_, k1_);
  }

  uint32_t k0_, k1_;
  uint64_t lo_, hi_;
  unsigned phase_;
  Words out_;
};

// curand's conversions: a 32-bit word to a float in (0, 1]; two words to a double in (0, 1].
constexpr float kInv2Pow32 = 2.3283064e-10f;
constexpr double kInv2Pow53 = 1.1102230246251565e-16;

__device__ __forceinline__ float uniform_float(uint32_t x) {
  return fmaf(static_cast<float>(x), kInv2Pow32, kInv2Pow32 / 2.0f);
}

__device__ __forceinline__ uint64_t bits53(uint32_t x, uint32_t y) {
  return static_cast<uint64_t>(x) ^ (static_cast<uint64_t>(y) << (53 - 32));
}

__device__ __forceinline__ double uniform_double(uint32_t x, uint32_t y) {
  return fma(static_cast<double>(bits53(x, y)), kInv2Pow53, kInv2Pow53 / 2.0);
}

// Box-Muller on two words: two normal floats (curand_normal4 takes two such pairs).
__device__ __forceinline__ void box_muller(uint32_t x, uint32_t y, float* out) {
  constexpr float kInv2Pow32x2Pi = kInv2Pow32 * 6.2831855f;
  const float u = fmaf(static_cast<float>(x), kInv2Pow32, kInv2Pow32 / 2.0f);
  const float v = fmaf(static_cast<float>(y), kInv2Pow32x2Pi, kInv2Pow32x2Pi / 2.0f);
  const float s = sqrtf(-2.0f * logf(u));
  out[0] = sinf(v) * s;
  out[1] = cosf(v) * s;
}

// Box-Muller on four words: two normal doubles (curand_normal2_double).
__device__ __forceinline__ void box_muller_double(const Words& r, double* out) {
  constexpr double kPi = 3.1415926535897932;
  const double u = fma(static_cast<double>(bits53(r.x, r.y)), kInv2Pow53, kInv2Pow53 / 2.0);
  const double v = fma(static_cast<double>(bits53(r.z, r.w)), kInv2Pow53 * 2.0, kInv2Pow53);
  const double s = sqrt(-2.0 * log(u));
  out[0] = sin(v * kPi) * s;
  out[1] = cos(v * kPi) * s;
}

__device__ __forceinline__ float fma_of(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_of(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ float log_of(float x) { return logf(x); }
__device__ __forceinline__ double log_of(double x) { return log(x); }
__device__ __forceinline__ float epsilon_of(float) { return FLT_EPSILON; }
__device__ __forceinline__ double epsilon_of(double) { return DBL_EPSILON; }

// The U values of one Philox output in the compute type T (float: four, double: two).
template <class T>
__device__ __forceinline__ void floating_draws(Draw draw, const Words& r, T* v) {
  if constexpr (sizeof(T) == sizeof(double)) {
    if (draw == Draw::kNormal) {
      box_muller_double(r, v);
    } else {
      v[0] = uniform_double(r.x, r.y);
      v[1] = uniform_double(r.z, r.w);
    }
  } else {
    if (draw == Draw::kNormal) {
      box_muller(r.x, r.y, v);
      box_muller(r.z, r.w, v + 2);
    } else {
      v[0] = uniform_float(r.x);
      v[1] = uniform_float(r.y);
      v[2] = uniform_float(r.z);
      v[3] = uniform_float(r.w);
    }
  }
}

// One element of a floating draw, transformed as PyTorch's distribution transforms do.
template <class T>
__device__ __forceinline__ void store_draw(const random::Fill& f, char* p, T rand) {
  switch (f.draw) {
    case Draw::kUniform: {
      // [from, to): the (0, 1] draw scaled, and a value that rounds to `to` becomes `from`.
      store<T>(p, f.kind, fma_of(rand, static_cast<T>(f.c), static_cast<T>(f.a)));
      if (load<T>(p, f.kind) == static_cast<T>(f.b)) store<T>(p, f.kind, static_cast<T>(f.a));
      return;
    }
    case Draw::kNormal:
      store<T>(p, f.kind, fma_of(rand, static_cast<T>(f.b), static_cast<T>(f.a)));
      return;
    case Draw::kBernoulli:
      store<T>(p, f.kind, rand < static_cast<T>(f.a) ? T(1) : T(0));
      return;
    case Draw::kExponential: {
      // log(1) would be 0: a draw within half an epsilon of 1 takes -epsilon/2 instead.
      const T eps = epsilon_of(rand);
      const T lg = rand >= T(1) - eps / T(2) ? -eps / T(2) : log_of(rand);
      store<T>(p, f.kind, static_cast<T>(-1.0) / static_cast<T>(f.a) * lg);
      return;
    }
    default:
      return;
  }
}

template <class T>
__global__ void fill_kernel(TORCHADA_PARAM(random::Fill) f) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const bool integral = f.draw == Draw::kRandom32 || f.draw == Draw::kRandom64;
  const int unroll = f.wide ? 2 : 4;
  const int esize = memory::size_of(f.kind);
  PhiloxStream stream(f.philox, static_cast<uint64_t>(t));
  const int64_t span = threads * unroll;
  const int64_t rounded = ((f.n - 1) / span + 1) * span;
  for (int64_t first = t; first < rounded; first += span) {
    const Words r = stream.next4();
    uint64_t ints[4] = {r.x, r.y, r.z, r.w};
    T vals[4] = {};
    if (f.draw == Draw::kRandom64) {
      ints[0] = (static_cast<uint64_t>(r.x) << 32) | r.y;
      ints[1] = (static_cast<uint64_t>(r.z) << 32) | r.w;
    } else if (!integral) {
      floating_draws<T>(f.draw, r, vals);
    }
    for (int i = 0; i < unroll; ++i) {
      const int64_t e = first + threads * i;
      if (e >= f.n) continue;
      char* p = f.out + e * esize;
      if (integral)
        store<int64_t>(p, f.kind, static_cast<int64_t>(ints[i] % f.range + f.base));
      else
        store_draw<T>(f, p, vals[i]);
    }
  }
}

// T: PyTorch's accumulation type (double for double, float otherwise).
template <class T>
__global__ void dropout_kernel(TORCHADA_PARAM(random::Dropout) d) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int esize = memory::size_of(d.kind);
  const T keep = static_cast<T>(d.keep), scale = static_cast<T>(d.scale);
  PhiloxStream stream(d.philox, static_cast<uint64_t>(t));
  auto apply = [&](int64_t e, float u) {
    const T flag = static_cast<T>(u) < keep ? T(1) : T(0);
    store<T>(d.out + e * esize, d.kind, load<T>(d.in + e * esize, d.kind) * flag * scale);
    d.mask[e] = flag != T(0);
  };
  if (d.vec == 1) {
    const int64_t span = threads * 4;
    const int64_t rounded = ((d.n - 1) / span + 1) * span;
    for (int64_t first = t; first < rounded; first += span) {
      const Words r = stream.next4();
      const uint32_t w[4] = {r.x, r.y, r.z, r.w};
      for (int i = 0; i < 4; ++i) {
        const int64_t e = first + threads * i;
        if (e < d.n) apply(e, uniform_float(w[i]));
      }
    }
    return;
  }
  for (int64_t first = t * d.vec; first < d.n; first += threads * d.vec) {
    for (int j = 0; j < d.vec; j += 4) {
      const Words r = stream.next4();
      const uint32_t w[4] = {r.x, r.y, r.z, r.w};
      for (int i = 0; i < 4 && j + i < d.vec; ++i) apply(first + j + i, uniform_float(w[i]));
    }
  }
}

}  // namespace

const char* random_fill(const random::Fill& f, void* stream) {
  if (f.n == 0) return nullptr;
  if (f.block == 0 || f.grid == 0) return "random_fill: empty launch geometry";
  if ((f.draw == Draw::kRandom32 || f.draw == Draw::kRandom64) && f.range == 0)
    return "random_fill: empty range";
  auto s = static_cast<gpuStream_t>(stream);
  if (f.wide)
    TORCHADA_LAUNCH_PLAIN(f.grid, f.block, 0, s, fill_kernel<double>)(f);
  else
    TORCHADA_LAUNCH_PLAIN(f.grid, f.block, 0, s, fill_kernel<float>)(f);
  return last_error();
}

const char* dropout(const random::Dropout& d, void* stream) {
  if (d.n == 0) return nullptr;
  if (d.block == 0 || d.grid == 0) return "dropout: empty launch geometry";
  if (d.vec != 1 && d.vec != 2 && d.vec != 4 && d.vec != 8)
    return "dropout: vector of 1, 2, 4 or 8";
  auto s = static_cast<gpuStream_t>(stream);
  if (d.kind == random::Kind::kFloat64)
    TORCHADA_LAUNCH_PLAIN(d.grid, d.block, 0, s, dropout_kernel<double>)(d);
  else
    TORCHADA_LAUNCH_PLAIN(d.grid, d.block, 0, s, dropout_kernel<float>)(d);
  return last_error();
}

}  // namespace torchada::TORCHADA_KERNELS_NS
