// residual += input; input = RMSNorm(residual) * weight, both in place, one block per row.
// The sum of squares is taken over the residual as stored (rounded to T), so the result equals
// rms_norm applied to the updated residual tensor.
#include "portable.cuh"

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

template <typename T, int N>
__global__ void fused_add_rms_norm_kernel(T* __restrict__ input, T* __restrict__ residual,
                                          const T* __restrict__ weight, int64_t hidden, float eps) {
  using P = Pack<T, N>;
  const int64_t row = blockIdx.x;
  const int64_t nvec = hidden / N;
  P* x = reinterpret_cast<P*>(input + row * hidden);
  P* r = reinterpret_cast<P*>(residual + row * hidden);
  const P* w = reinterpret_cast<const P*>(weight);

  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const P a = x[i];
    const P b = r[i];
    P z;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      z.v[j] = from_float<T>(to_float(a.v[j]) + to_float(b.v[j]));
      const float f = to_float(z.v[j]);
      ss += f * f;
    }
    r[i] = z;
  }
  const float rstd = rsqrtf(block_sum(ss) / static_cast<float>(hidden) + eps);
  // Each thread re-reads only the packs it wrote itself, so no barrier is needed for them.
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
    const P z = r[i];
    const P q = w[i];
    P o;
#pragma unroll
    for (int j = 0; j < N; ++j) o.v[j] = from_float<T>(to_float(z.v[j]) * rstd * to_float(q.v[j]));
    x[i] = o;
  }
}

template <typename T>
const char* launch(void* input, void* residual, const void* weight, int64_t rows, int64_t hidden,
                   float eps, gpuStream_t stream) {
  constexpr int N = kPack<T>;
  const bool vec = hidden % N == 0 && aligned16(input) && aligned16(residual) && aligned16(weight);
  const int threads = block_threads(vec ? hidden / N : hidden);
  const dim3 grid(static_cast<unsigned>(rows));
  if (vec) TORCHADA_LAUNCH(grid, threads, 0, stream, fused_add_rms_norm_kernel<T, N>)
  (static_cast<T*>(input), static_cast<T*>(residual), static_cast<const T*>(weight), hidden, eps);
  else TORCHADA_LAUNCH(grid, threads, 0, stream, fused_add_rms_norm_kernel<T, 1>)(
      static_cast<T*>(input), static_cast<T*>(residual), static_cast<const T*>(weight), hidden,
      eps);
  return last_error();
}

}  // namespace

const char* fused_add_rms_norm(DType t, void* input, void* residual, const void* weight,
                               int64_t rows, int64_t hidden, float eps, void* stream) {
  if (rows == 0 || hidden == 0) return nullptr;
  if (rows > 0x7fffffff) return "fused_add_rms_norm: more than 2^31-1 rows";
  auto s = static_cast<gpuStream_t>(stream);
  switch (t) {
    case DType::kFloat32:
      return launch<float>(input, residual, weight, rows, hidden, eps, s);
    case DType::kFloat16:
      return launch<__half>(input, residual, weight, rows, hidden, eps, s);
    case DType::kBFloat16:
      return launch<bf16_t>(input, residual, weight, rows, hidden, eps, s);
  }
  return "fused_add_rms_norm: unsupported dtype";
}

}  // namespace torchada::TORCHADA_KERNELS_NS
