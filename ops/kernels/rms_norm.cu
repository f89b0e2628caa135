// RMSNorm: one block per row. The row is read twice (sum of squares, then normalise); the second
// read hits L2 for the hidden sizes LLMs use, so HBM traffic is one read of input and weight and
// one write of output, the minimum.
#include "portable.cuh"

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

template <typename T, int N>
__global__ void rms_norm_kernel(T* __restrict__ out, const T* __restrict__ in,
                                const T* __restrict__ weight, int64_t hidden, float eps) {
  using P = Pack<T, N>;
  const int64_t row = blockIdx.x;
  const int64_t nvec = hidden / N;
  const P* x = reinterpret_cast<const P*>(in + row * hidden);
  const P* w = reinterpret_cast<const P*>(weight);
  P* y = reinterpret_cast<P*>(out + row * hidden);

  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const P p = x[i];
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const float f = to_float(p.v[j]);
      ss += f * f;
    }
  }
  const float rstd = rsqrtf(block_sum(ss) / static_cast<float>(hidden) + eps);
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const P p = x[i];
    const P q = w[i];
    P o;
#pragma unroll
    for (int j = 0; j < N; ++j) o.v[j] = from_float<T>(to_float(p.v[j]) * rstd * to_float(q.v[j]));
    y[i] = o;
  }
}

template <typename T>
const char* launch(void* out, const void* in, const void* weight, int64_t rows, int64_t hidden,
                   float eps, gpuStream_t stream) {
  constexpr int N = kPack<T>;
  const bool vec = hidden % N == 0 && aligned16(out) && aligned16(in) && aligned16(weight);
  const int threads = block_threads(vec ? hidden / N : hidden);
  const dim3 grid(static_cast<unsigned>(rows));
  if (vec) TORCHADA_LAUNCH(grid, threads, 0, stream, rms_norm_kernel<T, N>)
  (static_cast<T*>(out), static_cast<const T*>(in), static_cast<const T*>(weight), hidden, eps);
  else TORCHADA_LAUNCH(grid, threads, 0, stream, rms_norm_kernel<T, 1>)(
      static_cast<T*>(out), static_cast<const T*>(in), static_cast<const T*>(weight), hidden, eps);
  return last_error();
}

}  // namespace

const char* rms_norm(DType t, void* out, const void* in, const void* weight, int64_t rows,
                     int64_t hidden, float eps, void* stream) {
  if (rows == 0 || hidden == 0) return nullptr;
  if (rows > 0x7fffffff) return "rms_norm: more than 2^31-1 rows";
  auto s = static_cast<gpuStream_t>(stream);
  switch (t) {
    case DType::kFloat32:
      return launch<float>(out, in, weight, rows, hidden, eps, s);
    case DType::kFloat16:
      return launch<__half>(out, in, weight, rows, hidden, eps, s);
    case DType::kBFloat16:
      return launch<bf16_t>(out, in, weight, rows, hidden, eps, s);
  }
  return "rms_norm: unsupported dtype";
}

}  // namespace torchada::TORCHADA_KERNELS_NS
