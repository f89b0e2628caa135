// What the kernels need from the GPU toolchain, written once for CUDA (nvcc) and MUSA (mcc), and
// for the simulator's executor (the same source compiled for the host, TORCHADA_KERNELS_HOST).
// Kernels include only this header and launch.h: no inline PTX, no vendor intrinsic outside this
// file, and the warp width is always read from the device (warpSize), never assumed to be 32.
// Launches are written TORCHADA_LAUNCH(grid, block, shmem, stream, kernel)(args...) (a kernel
// that synchronises: barriers, warp collectives) or TORCHADA_LAUNCH_PLAIN(...) (one that never
// does, which the simulator then runs as a loop over each block's threads).
#pragma once

#if defined(TORCHADA_KERNELS_HOST)
#include <musa_sim_qualifiers.h>  // first: CUDA's headers keep qualifiers already defined
#endif

#include <cstdint>

#if defined(__MUSACC__)
#include <musa_runtime.h>
#include <musa_fp16.h>
#include <musa_bf16.h>
using gpuStream_t = musaStream_t;
using gpuError_t = musaError_t;
using bf16_t = __mt_bfloat16;
#define TORCHADA_GPU_SUCCESS musaSuccess
#define torchadaGetLastError musaGetLastError
#define torchadaGetErrorString musaGetErrorString
#define torchadaGetDevice musaGetDevice
#define torchadaDeviceGetAttribute musaDeviceGetAttribute
#define TORCHADA_ATTR_WARP_SIZE musaDevAttrWarpSize
#define TORCHADA_ATTR_SM_COUNT musaDevAttrMultiProcessorCount
#else
#if defined(TORCHADA_KERNELS_HOST)
// The halves' host implementations, dim3, and the process's CUDA runtime (torchada's shim, which
// answers device queries from the simulator).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <vector_types.h>
#include <cuda_runtime_api.h>
#include <musa_sim_device.h>  // after them: threadIdx, warpSize... are names in their headers
#else
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
// NVIDIA warps are 32 wide, so a full-warp shuffle is safe there. MUSA (128-wide warps on
// mp_21/mp_22, mask semantics unconfirmed) takes the shared-memory path in block_sum instead.
#define TORCHADA_HAS_WARP_SHUFFLE 1
#endif
using gpuStream_t = cudaStream_t;
using gpuError_t = cudaError_t;
using bf16_t = __nv_bfloat16;
#define TORCHADA_GPU_SUCCESS cudaSuccess
#define torchadaGetLastError cudaGetLastError
#define torchadaGetErrorString cudaGetErrorString
#define torchadaGetDevice cudaGetDevice
#define torchadaDeviceGetAttribute cudaDeviceGetAttribute
#define TORCHADA_ATTR_WARP_SIZE cudaDevAttrWarpSize
#define TORCHADA_ATTR_SM_COUNT cudaDevAttrMultiProcessorCount
#endif

#if defined(TORCHADA_KERNELS_HOST)
#define TORCHADA_LAUNCH(grid, block, shmem, stream, ...)                                \
  ::musa_sim::Launch<__VA_ARGS__, true> {                                               \
#__VA_ARGS__, ::musa_sim::dims(grid), ::musa_sim::dims(block), shmem, (void*)stream \
  }
#define TORCHADA_LAUNCH_PLAIN(grid, block, shmem, stream, ...)                          \
  ::musa_sim::Launch<__VA_ARGS__, false> {                                              \
#__VA_ARGS__, ::musa_sim::dims(grid), ::musa_sim::dims(block), shmem, (void*)stream \
  }
// `extern __shared__ T name[]`
#define TORCHADA_DYNAMIC_SHARED(T, name) T* name = ::musa_sim::dynamic_shared<T>()
// A large kernel parameter, read-only: the simulator hands every thread the launch's copy.
#define TORCHADA_PARAM(T) const T&
#else
#define TORCHADA_LAUNCH(grid, block, shmem, stream, ...) __VA_ARGS__<<<grid, block, shmem, stream>>>
#define TORCHADA_LAUNCH_PLAIN TORCHADA_LAUNCH
#define TORCHADA_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
// A large kernel parameter, read-only: NVIDIA's __grid_constant__ keeps it in parameter memory
// (no per-thread copy when its address is taken).
#if defined(__MUSACC__)
#define TORCHADA_PARAM(T) const T
#else
#define TORCHADA_PARAM(T) __grid_constant__ const T
#endif
#endif

// A device-side assertion, kept in release builds (PyTorch's CUDA_KERNEL_ASSERT): a failure ends
// the launch with cudaErrorAssert / musaErrorAssert, sticky on the device, as an out-of-range
// index does in PyTorch's own kernels.
#define TORCHADA_STRINGIFY_(x) #x
#define TORCHADA_STRINGIFY(x) TORCHADA_STRINGIFY_(x)
#if defined(TORCHADA_KERNELS_HOST)
#define TORCHADA_DEVICE_ASSERT(cond)                                                            \
  do {                                                                                          \
    if (!(cond))                                                                                \
      ::musa_sim::device_assert_fail(#cond " (" __FILE__ ":" TORCHADA_STRINGIFY(__LINE__) ")"); \
  } while (0)
#elif defined(__MUSACC__)
#define TORCHADA_DEVICE_ASSERT(cond) \
  do {                               \
    if (!(cond)) __trap();           \
  } while (0)
#else
#define TORCHADA_DEVICE_ASSERT(cond)                                 \
  do {                                                               \
    if (!(cond)) __assert_fail(#cond, __FILE__, __LINE__, __func__); \
  } while (0)
#endif

#include "launch.h"

namespace torchada::TORCHADA_KERNELS_NS {

// Conversions: all arithmetic is done in float; storage types only load and store.
inline __device__ float to_float(float v) { return v; }
inline __device__ float to_float(__half v) { return __half2float(v); }
inline __device__ float to_float(bf16_t v) { return __bfloat162float(v); }
template <typename T>
inline __device__ T from_float(float v);
template <>
inline __device__ float from_float<float>(float v) {
  return v;
}
template <>
inline __device__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
inline __device__ bf16_t from_float<bf16_t>(float v) {
  return __float2bfloat16_rn(v);
}

// 16 bytes of T, loaded and stored as one access when the address allows it.
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};
template <typename T>
constexpr int kPack = 16 / sizeof(T);

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

#if defined(TORCHADA_HAS_WARP_SHUFFLE)
inline __device__ float warp_sum(float v) {
  for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}
#endif

// Sum of v over the block, returned to every thread. blockDim.x <= 1024.
inline __device__ float block_sum(float v) {
  __shared__ float partial[1024];
  __shared__ float total;
  const int t = threadIdx.x;
  const int n = blockDim.x;
#if defined(TORCHADA_HAS_WARP_SHUFFLE)
  const int ws = warpSize;
  const int lane = t % ws;
  const int nwarps = (n + ws - 1) / ws;
  v = warp_sum(v);
  if (lane == 0) partial[t / ws] = v;
  __syncthreads();
  if (t < ws) {
    float w = t < nwarps ? partial[t] : 0.f;
    w = warp_sum(w);
    if (t == 0) total = w;
  }
#else
  // Portable tree reduction: no warp-width assumption at all.
  partial[t] = v;
  __syncthreads();
  int span = 1;
  while (span < n) span <<= 1;
  for (int s = span / 2; s > 0; s >>= 1) {
    if (t < s && t + s < n) partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0) total = partial[0];
#endif
  __syncthreads();
  return total;
}

#if defined(TORCHADA_KERNELS_HOST)
// The simulator's launches report their error to the launcher (musa_sim::Launch records it).
inline const char* last_error() { return ::musa_sim::take_launch_error(); }
#else
inline const char* last_error() {
  gpuError_t e = torchadaGetLastError();
  return e == TORCHADA_GPU_SUCCESS ? nullptr : torchadaGetErrorString(e);
}
#endif

// A grid-stride loop over [0, n): each thread's elements of a launch of any size.
#define TORCHADA_GRID_STRIDE(i, n)                                                       \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Blocks of `threads` for n items of a grid-stride loop: one item a thread, capped (the loop takes
// the rest), at least one block.
inline unsigned grid_for(int64_t n, int64_t threads) {
  constexpr int64_t kMaxBlocks = 65535LL * 32;
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b < kMaxBlocks ? b : kMaxBlocks));
}

// Threads per block for work items spread across one block: a power of two, a multiple of the
// device's warp width, at most 1024.
inline int block_threads(int64_t items, int max_threads = 1024) {
  const int ws = device_warp_size();
  int t = ws;
  while (t < max_threads && t < items) t <<= 1;
  return t < ws ? ws : t;
}

}  // namespace torchada::TORCHADA_KERNELS_NS
