// Elementwise kernels behind the aten::neg / aten::silu / aten::gelu overrides: 16-byte accesses,
// a grid-stride loop, float math.
#include "activations.cuh"

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

template <int F>
inline __device__ float apply(float x) {
  if constexpr (F == static_cast<int>(Unary::kNeg))
    return -x;
  else if constexpr (F == static_cast<int>(Unary::kSilu))
    return silu(x);
  else if constexpr (F == static_cast<int>(Unary::kGeluExact))
    return gelu_exact(x);
  else
    return gelu_tanh(x);
}

template <typename T, int N, int F>
__global__ void unary_kernel(T* __restrict__ out, const T* __restrict__ in, int64_t n) {
  using P = Pack<T, N>;
  const int64_t nvec = n / N;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int64_t i = first; i < nvec; i += stride) {
    const P p = reinterpret_cast<const P*>(in)[i];
    P o;
#pragma unroll
    for (int j = 0; j < N; ++j) o.v[j] = from_float<T>(apply<F>(to_float(p.v[j])));
    reinterpret_cast<P*>(out)[i] = o;
  }
  // Tail that does not fill a pack.
  for (int64_t i = nvec * N + first; i < n; i += stride)
    out[i] = from_float<T>(apply<F>(to_float(in[i])));
}

template <typename T, int F>
const char* launch_f(void* out, const void* in, int64_t n, gpuStream_t stream) {
  constexpr int N = kPack<T>;
  const bool vec = aligned16(out) && aligned16(in);
  const int threads = 256;
  const int64_t items = vec ? n / N + 1 : n;
  int64_t blocks = (items + threads - 1) / threads;
  if (blocks > 65535 * 4) blocks = 65535 * 4;  // grid-stride beyond this: enough to fill any GPU
  if (vec)
    TORCHADA_LAUNCH_PLAIN(static_cast<unsigned>(blocks), threads, 0, stream, unary_kernel<T, N, F>)
  (static_cast<T*>(out), static_cast<const T*>(in), n);
  else TORCHADA_LAUNCH_PLAIN(static_cast<unsigned>(blocks), threads, 0, stream,
                             unary_kernel<T, 1, F>)(static_cast<T*>(out), static_cast<const T*>(in),
                                                    n);
  return last_error();
}

template <typename T>
const char* launch(Unary f, void* out, const void* in, int64_t n, gpuStream_t s) {
  switch (f) {
    case Unary::kNeg:
      return launch_f<T, static_cast<int>(Unary::kNeg)>(out, in, n, s);
    case Unary::kSilu:
      return launch_f<T, static_cast<int>(Unary::kSilu)>(out, in, n, s);
    case Unary::kGeluExact:
      return launch_f<T, static_cast<int>(Unary::kGeluExact)>(out, in, n, s);
    case Unary::kGeluTanh:
      return launch_f<T, static_cast<int>(Unary::kGeluTanh)>(out, in, n, s);
  }
  return "unary: unsupported function";
}

}  // namespace

const char* unary(DType t, Unary f, void* out, const void* in, int64_t n, void* stream) {
  if (n == 0) return nullptr;
  auto s = static_cast<gpuStream_t>(stream);
  switch (t) {
    case DType::kFloat32:
      return launch<float>(f, out, in, n, s);
    case DType::kFloat16:
      return launch<__half>(f, out, in, n, s);
    case DType::kBFloat16:
      return launch<bf16_t>(f, out, in, n, s);
  }
  return "unary: unsupported dtype";
}

}  // namespace torchada::TORCHADA_KERNELS_NS
