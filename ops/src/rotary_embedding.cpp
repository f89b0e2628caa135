// torchada::rotary_embedding(Tensor positions, Tensor(a!) query, Tensor(b!) key, int head_size,
//                            Tensor cos_sin_cache, bool is_neox=True) -> ()
// Rotates query and key in place by the angles of each token's position.
//   positions      int64 (int32 accepted), any shape L
//   query / key    L + [heads * head_size] or L + [heads, head_size]
//   cos_sin_cache  [max_position, rot_dim]: cos in [:, :rot_dim/2], sin in [:, rot_dim/2:];
//                  rot_dim <= head_size (partial rotary leaves the tail of each head untouched)
//   is_neox        True: GPT-NeoX (rotate halves), False: GPT-J (rotate interleaved pairs)
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include "common.h"
#include "ops.h"
#if defined(TORCHADA_OPS_WITH_GPU)
#include "gpu.h"
#endif

namespace torchada::ops {
namespace {

constexpr const char* kOp = "torchada::rotary_embedding";

// Number of heads in t, after checking that t's shape is positions' shape + [..., head_size].
c10::SymInt heads_of(const char* name, const at::Tensor& positions, const at::Tensor& t,
                     int64_t head_size) {
  const int64_t pd = positions.dim();
  TORCH_CHECK(t.dim() > pd, kOp, ": ", name, " must have the shape of positions ",
              positions.sym_sizes(), " followed by [heads * head_size] or [heads, head_size], got ",
              t.sym_sizes());
  for (int64_t i = 0; i < pd; ++i)
    TORCH_CHECK(t.sym_size(i) == positions.sym_size(i), kOp, ": ", name,
                " must start with the shape of positions ", positions.sym_sizes(), ", got ",
                t.sym_sizes());
  c10::SymInt trail = 1;
  for (int64_t i = pd; i < t.dim(); ++i) trail = trail * t.sym_size(i);
  TORCH_CHECK(trail % head_size == 0, kOp, ": the trailing dimensions of ", name, " (",
              t.sym_sizes(), ") do not hold a whole number of heads of size ", head_size);
  return trail / head_size;
}

struct Geometry {
  int64_t tokens, q_heads, k_heads, rot_dim;
};

void check_args(const at::Tensor& positions, const at::Tensor& query, const at::Tensor& key,
                int64_t head_size, const at::Tensor& cache) {
  TORCH_CHECK(positions.scalar_type() == at::kLong || positions.scalar_type() == at::kInt, kOp,
              ": positions must be int64 or int32, got ", positions.scalar_type());
  check_float(kOp, "query", query);
  check_same_dtype(kOp, query, "query", key, "key");
  check_same_dtype(kOp, query, "query", cache, "cos_sin_cache");
  check_same_device(kOp, query, "query", key, "key");
  check_same_device(kOp, query, "query", cache, "cos_sin_cache");
  check_same_device(kOp, query, "query", positions, "positions");
  TORCH_CHECK(head_size > 0, kOp, ": head_size must be positive, got ", head_size);
  TORCH_CHECK(cache.dim() == 2, kOp, ": cos_sin_cache must be 2-D [max_position, rot_dim], got ",
              cache.sym_sizes());
  TORCH_CHECK(cache.sym_size(1) % 2 == 0 && cache.sym_size(1) <= head_size, kOp,
              ": cos_sin_cache's rot_dim must be even and at most head_size (", head_size,
              "), got ", cache.sym_size(1));
  heads_of("query", positions, query, head_size);
  heads_of("key", positions, key, head_size);
}

Geometry geometry(const at::Tensor& positions, const at::Tensor& query, const at::Tensor& key,
                  int64_t head_size, const at::Tensor& cache) {
  Geometry g{};
  g.tokens = positions.numel();
  g.q_heads = heads_of("query", positions, query, head_size).expect_int();
  g.k_heads = heads_of("key", positions, key, head_size).expect_int();
  g.rot_dim = cache.size(1);
  return g;
}

template <typename T>
void rotary_cpu(const int64_t* pos, T* q, T* k, const T* cache, const Geometry& g,
                int64_t head_size, bool neox) {
  const int64_t half = g.rot_dim / 2;
  at::parallel_for(0, g.tokens, 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const T* cos = cache + pos[t] * g.rot_dim;
      const T* sin = cos + half;
      auto rotate = [&](T* head) {
        for (int64_t i = 0; i < half; ++i) {
          const int64_t xi = neox ? i : 2 * i;
          const int64_t yi = neox ? i + half : 2 * i + 1;
          const float c = static_cast<float>(cos[i]);
          const float s = static_cast<float>(sin[i]);
          const float x = static_cast<float>(head[xi]);
          const float y = static_cast<float>(head[yi]);
          head[xi] = static_cast<T>(x * c - y * s);
          head[yi] = static_cast<T>(y * c + x * s);
        }
      };
      for (int64_t h = 0; h < g.q_heads; ++h) rotate(q + (t * g.q_heads + h) * head_size);
      for (int64_t h = 0; h < g.k_heads; ++h) rotate(k + (t * g.k_heads + h) * head_size);
    }
  });
}

}  // namespace

void rotary_embedding_cpu(const at::Tensor& positions, at::Tensor& query, at::Tensor& key,
                          int64_t head_size, const at::Tensor& cos_sin_cache, bool is_neox) {
  check_args(positions, query, key, head_size, cos_sin_cache);
  TORCH_CHECK(query.device().is_cpu(), kOp, ": CPU kernel called with a ", query.device(),
              " tensor");
  const Geometry g = geometry(positions, query, key, head_size, cos_sin_cache);
  const at::Tensor pos = positions.to(at::kLong).contiguous();
  const at::Tensor cache = cos_sin_cache.contiguous();
  if (g.tokens > 0) {
    // An out-of-range position would read outside the cache: refuse it (cheap on the CPU).
    const int64_t lo = pos.min().item<int64_t>();
    const int64_t hi = pos.max().item<int64_t>();
    TORCH_CHECK(lo >= 0 && hi < cache.size(0), kOp, ": positions must be in [0, ", cache.size(0),
                "), got values in [", lo, ", ", hi, "]");
  }
  note_call(Op::kRotaryEmbedding, "torchada CPU kernel", query);
  with_contiguous_inplace(query, [&](at::Tensor& q) {
    with_contiguous_inplace(key, [&](at::Tensor& k) {
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, q.scalar_type(), "rotary_cpu", [&] {
        rotary_cpu(pos.const_data_ptr<int64_t>(), q.data_ptr<scalar_t>(), k.data_ptr<scalar_t>(),
                   cache.const_data_ptr<scalar_t>(), g, head_size, is_neox);
      });
    });
  });
}

#if defined(TORCHADA_OPS_WITH_GPU)
void rotary_embedding_gpu(const at::Tensor& positions, at::Tensor& query, at::Tensor& key,
                          int64_t head_size, const at::Tensor& cos_sin_cache, bool is_neox) {
  check_args(positions, query, key, head_size, cos_sin_cache);
  const c10::DeviceGuard guard(query.device());
  const Geometry g = geometry(positions, query, key, head_size, cos_sin_cache);
  // Positions are not range-checked here: that would need a device-to-host sync per call.
  const at::Tensor pos = positions.to(at::kLong).contiguous();
  const at::Tensor cache = cos_sin_cache.contiguous();
  note_call(Op::kRotaryEmbedding, "torchada GPU kernel", query);
  with_contiguous_inplace(query, [&](at::Tensor& q) {
    with_contiguous_inplace(key, [&](at::Tensor& k) {
      gpu::check_launch(kOp, TORCHADA_KERNEL(rotary_embedding)(
                                 gpu::dtype(q), pos.const_data_ptr<int64_t>(), q.data_ptr(),
                                 k.data_ptr(), cache.const_data_ptr(), g.tokens, g.q_heads,
                                 g.k_heads, head_size, g.rot_dim, is_neox, gpu::stream_for(q)));
    });
  });
}
#endif

void rotary_embedding_meta(const at::Tensor& positions, at::Tensor& query, at::Tensor& key,
                           int64_t head_size, const at::Tensor& cos_sin_cache, bool /*is_neox*/) {
  check_args(positions, query, key, head_size, cos_sin_cache);
}

}  // namespace torchada::ops
