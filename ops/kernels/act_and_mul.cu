// Gated activations of LLM MLPs: out[r, :] = act(in[r, :d]) * in[r, d:]. Reads 2d, writes d per
// row in one pass; the eager composition (chunk, act, mul) writes and re-reads an intermediate.
#include "activations.cuh"

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

template <typename T, int N, int A>
__global__ void act_and_mul_kernel(T* __restrict__ out, const T* __restrict__ in, int64_t d) {
  using P = Pack<T, N>;
  const int64_t row = blockIdx.y;
  const int64_t nvec = d / N;
  const P* gate = reinterpret_cast<const P*>(in + row * 2 * d);
  const P* up = reinterpret_cast<const P*>(in + row * 2 * d + d);
  P* y = reinterpret_cast<P*>(out + row * d);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < nvec;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const P g = gate[i];
    const P u = up[i];
    P o;
#pragma unroll
    for (int j = 0; j < N; ++j)
      o.v[j] = from_float<T>(activate<A>(to_float(g.v[j])) * to_float(u.v[j]));
    y[i] = o;
  }
}

template <typename T, int A>
const char* launch_act(void* out, const void* in, int64_t rows, int64_t d, gpuStream_t stream) {
  constexpr int N = kPack<T>;
  // The up half starts d elements in, so it is 16-byte aligned only if d is a multiple of N.
  const bool vec = d % N == 0 && aligned16(out) && aligned16(in);
  const int64_t items = vec ? d / N : d;
  const int threads = block_threads(items, 256);
  const int64_t chunks = (items + threads - 1) / threads;
  const dim3 grid(static_cast<unsigned>(chunks < 65535 ? chunks : 65535),
                  static_cast<unsigned>(rows));
  if (vec) TORCHADA_LAUNCH_PLAIN(grid, threads, 0, stream, act_and_mul_kernel<T, N, A>)
  (static_cast<T*>(out), static_cast<const T*>(in), d);
  else TORCHADA_LAUNCH_PLAIN(grid, threads, 0, stream, act_and_mul_kernel<T, 1, A>)(
      static_cast<T*>(out), static_cast<const T*>(in), d);
  return last_error();
}

template <typename T>
const char* launch(Act a, void* out, const void* in, int64_t rows, int64_t d, gpuStream_t s) {
  switch (a) {
    case Act::kSilu:
      return launch_act<T, static_cast<int>(Act::kSilu)>(out, in, rows, d, s);
    case Act::kGeluExact:
      return launch_act<T, static_cast<int>(Act::kGeluExact)>(out, in, rows, d, s);
    case Act::kGeluTanh:
      return launch_act<T, static_cast<int>(Act::kGeluTanh)>(out, in, rows, d, s);
  }
  return "act_and_mul: unsupported activation";
}

}  // namespace

const char* act_and_mul(DType t, Act a, void* out, const void* in, int64_t rows, int64_t d,
                        void* stream) {
  if (rows == 0 || d == 0) return nullptr;
  // gridDim.y is limited to 65535 on both vendors; larger inputs are launched in row slabs.
  auto s = static_cast<gpuStream_t>(stream);
  constexpr int64_t kMaxRows = 65535;
  for (int64_t r0 = 0; r0 < rows; r0 += kMaxRows) {
    const int64_t n = rows - r0 < kMaxRows ? rows - r0 : kMaxRows;
    const char* err = "act_and_mul: unsupported dtype";
    switch (t) {
      case DType::kFloat32:
        err = launch<float>(a, static_cast<float*>(out) + r0 * d,
                            static_cast<const float*>(in) + r0 * 2 * d, n, d, s);
        break;
      case DType::kFloat16:
        err = launch<__half>(a, static_cast<__half*>(out) + r0 * d,
                             static_cast<const __half*>(in) + r0 * 2 * d, n, d, s);
        break;
      case DType::kBFloat16:
        err = launch<bf16_t>(a, static_cast<bf16_t*>(out) + r0 * d,
                             static_cast<const bf16_t*>(in) + r0 * 2 * d, n, d, s);
        break;
    }
    if (err) return err;
  }
  return nullptr;
}

}  // namespace torchada::TORCHADA_KERNELS_NS
