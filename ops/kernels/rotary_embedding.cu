// Rotary position embedding, in place on query and key. One block per token; each thread rotates
// (x, y) pairs of any head of query or key, so both tensors are done in a single launch.
//   GPT-NeoX: pair (i, i + rot/2)     GPT-J: pair (2i, 2i + 1)
#include "portable.cuh"

namespace torchada::TORCHADA_KERNELS_NS {
namespace {

template <typename T, bool kNeox>
__global__ void rotary_kernel(const int64_t* __restrict__ positions, T* __restrict__ query,
                              T* __restrict__ key, const T* __restrict__ cache, int64_t q_heads,
                              int64_t k_heads, int64_t head_size, int64_t rot_dim) {
  const int64_t token = blockIdx.x;
  const int64_t half = rot_dim / 2;
  const T* cos = cache + positions[token] * rot_dim;
  const T* sin = cos + half;
  const int64_t pairs = (q_heads + k_heads) * half;
  for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int64_t head = p / half;
    const int64_t i = p % half;
    T* h = head < q_heads ? query + (token * q_heads + head) * head_size
                          : key + (token * k_heads + (head - q_heads)) * head_size;
    const int64_t xi = kNeox ? i : 2 * i;
    const int64_t yi = kNeox ? i + half : 2 * i + 1;
    const float c = to_float(cos[i]);
    const float s = to_float(sin[i]);
    const float x = to_float(h[xi]);
    const float y = to_float(h[yi]);
    h[xi] = from_float<T>(x * c - y * s);
    h[yi] = from_float<T>(y * c + x * s);
  }
}

template <typename T>
const char* launch(const int64_t* positions, void* query, void* key, const void* cache,
                   int64_t tokens, int64_t q_heads, int64_t k_heads, int64_t head_size,
                   int64_t rot_dim, bool neox, gpuStream_t stream) {
  const int threads = block_threads((q_heads + k_heads) * (rot_dim / 2), 512);
  const dim3 grid(static_cast<unsigned>(tokens));
  auto q = static_cast<T*>(query);
  auto k = static_cast<T*>(key);
  auto c = static_cast<const T*>(cache);
  if (neox) TORCHADA_LAUNCH_PLAIN(grid, threads, 0, stream, rotary_kernel<T, true>)
  (positions, q, k, c, q_heads, k_heads, head_size, rot_dim);
  else TORCHADA_LAUNCH_PLAIN(grid, threads, 0, stream, rotary_kernel<T, false>)(
      positions, q, k, c, q_heads, k_heads, head_size, rot_dim);
  return last_error();
}

}  // namespace

const char* rotary_embedding(DType t, const int64_t* positions, void* query, void* key,
                             const void* cos_sin_cache, int64_t tokens, int64_t q_heads,
                             int64_t k_heads, int64_t head_size, int64_t rot_dim, bool neox,
                             void* stream) {
  if (tokens == 0 || rot_dim == 0 || q_heads + k_heads == 0) return nullptr;
  if (tokens > 0x7fffffff) return "rotary_embedding: more than 2^31-1 tokens";
  auto s = static_cast<gpuStream_t>(stream);
  switch (t) {
    case DType::kFloat32:
      return launch<float>(positions, query, key, cos_sin_cache, tokens, q_heads, k_heads,
                           head_size, rot_dim, neox, s);
    case DType::kFloat16:
      return launch<__half>(positions, query, key, cos_sin_cache, tokens, q_heads, k_heads,
                            head_size, rot_dim, neox, s);
    case DType::kBFloat16:
      return launch<bf16_t>(positions, query, key, cos_sin_cache, tokens, q_heads, k_heads,
                            head_size, rot_dim, neox, s);
  }
  return "rotary_embedding: unsupported dtype";
}

}  // namespace torchada::TORCHADA_KERNELS_NS
