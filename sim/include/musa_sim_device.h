// The device-emulation layer: what portable CUDA/MUSA kernel source needs to compile as host
// C++ and run on the simulator's executor (musa_sim_kernel.h). Include it first, before any CUDA
// or MUSA header, in a translation unit compiled for the host (or, where those headers are
// needed, musa_sim_qualifiers.h first, then them, then this).
//
//   __global__ / __device__ / __host__     plain C++ functions
//   __shared__                             `static thread_local`: one executor thread runs one
//                                          block at a time, so this is the block's memory
//   threadIdx, blockIdx, blockDim,         the running simulated thread's, read from the
//   gridDim, warpSize                      executor's per-thread record
//   __syncthreads, __syncwarp              fiber switches through the executor
//   __shfl*_sync, __any_sync, __all_sync   collectives of the warp's live lanes (warpSize wide,
//                                          128 on the simulator); the lane mask is not modelled:
//                                          every live lane of the warp must take part
//   atomic*                                host atomics on the same memory
//   launch<kernel, synchronises>(...)      what <<<grid, block, shmem, stream>>> becomes
#ifndef TORCHADA_MUSA_SIM_DEVICE_H
#define TORCHADA_MUSA_SIM_DEVICE_H

#include <musa_sim_kernel.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include <musa_sim_qualifiers.h>

namespace musa_sim {

// The simulated thread running on this OS thread. Fibers of one block share the OS thread, so
// every barrier sets it again when its fiber resumes.
inline thread_local musaSimThread* t_self = nullptr;
inline musaSimThread* self() { return t_self; }
// The block's dynamic shared memory (`extern __shared__ T name[];` on a GPU).
template <class T>
T* dynamic_shared() {
  return static_cast<T*>(t_self->dynamicShared);
}

template <class F>
struct ArgsOf;
template <class... P>
struct ArgsOf<void (*)(P...)> {
  using type = std::tuple<std::decay_t<P>...>;
};

template <auto Kernel, class Args>
void run_thread(musaSimThread* t, void* args) {
  t_self = t;
  std::apply(Kernel, *static_cast<Args*>(args));
}

// A kernel that never synchronises: its block is a loop over threadIdx, no fibers.
template <auto Kernel, class Args>
void run_block(musaSimThread* t, void* args) {
  Args& a = *static_cast<Args*>(args);
  t_self = t;
  const musaSimDim3 d = t->blockDim;
  unsigned i = 0;
  for (unsigned z = 0; z < d.z; ++z)
    for (unsigned y = 0; y < d.y; ++y)
      for (unsigned x = 0; x < d.x; ++x, ++i) {
        t->threadIdx = {x, y, z};
        t->laneId = i % t->warpSize;
        t->warpId = i / t->warpSize;
        std::apply(Kernel, a);
      }
}

// A function of the simulator's runtime, from the libmusart.so.5 loaded in the process
// (torchada's shim loads it for TORCHADA_BACKEND=sim), or null when the simulator is not there.
inline void* runtime_symbol(const char* name) {
  void* h = dlopen("libmusart.so.5", RTLD_LAZY | RTLD_NOLOAD);
  void* sym = h != nullptr ? dlsym(h, name) : nullptr;
  if (h != nullptr) dlclose(h);  // NOLOAD took a reference
  return sym != nullptr ? sym : dlsym(RTLD_DEFAULT, name);
}

using LaunchFunction = decltype(&::musaSimLaunchKernel);
inline LaunchFunction launch_function() {
  static const auto f = reinterpret_cast<LaunchFunction>(runtime_symbol("musaSimLaunchKernel"));
  return f;
}

// The error of this thread's latest launch as text, cleared (nullptr: none), like
// cudaGetLastError after <<<>>>.
inline thread_local musaError_t t_launch_error = musaSuccess;
inline const char* take_launch_error() {
  const musaError_t e = t_launch_error;
  t_launch_error = musaSuccess;
  if (e == musaSuccess) return nullptr;
  if (e == musaErrorNotSupported && launch_function() == nullptr)
    return "the simulator's runtime (libmusart.so.5 with musaSimLaunchKernel) is not loaded";
  using ErrorString = decltype(&::musaGetErrorString);
  static const auto text = reinterpret_cast<ErrorString>(runtime_symbol("musaGetErrorString"));
  return text != nullptr ? text(e) : "kernel launch failed";
}

inline musaSimDim3 dims(unsigned x) { return {x, 1, 1}; }
inline musaSimDim3 dims(int x) { return {static_cast<unsigned>(x), 1, 1}; }
template <class D, class = decltype(std::declval<D>().z)>
musaSimDim3 dims(const D& d) {
  return {static_cast<unsigned>(d.x), static_cast<unsigned>(d.y), static_cast<unsigned>(d.z)};
}

// kernel<<<grid, block, shared, stream>>>(args...) for the simulator; `Synchronises`: the kernel
// may call a barrier or warp collective (its threads then run as fibers). Returns the launch's
// error; musaErrorNotSupported when no simulator is loaded.
template <auto Kernel, bool Synchronises>
struct Launch {
  const char* name;
  musaSimDim3 grid, block;
  size_t shared;
  void* stream;

  template <class... A>
  musaError_t operator()(A&&... a) const {
    using Args = typename ArgsOf<decltype(Kernel)>::type;
    static const musaSimKernel kernel = {name, &run_thread<Kernel, Args>,
                                         Synchronises ? nullptr : &run_block<Kernel, Args>};
    const LaunchFunction launch = launch_function();
    if (launch == nullptr) return t_launch_error = musaErrorNotSupported;
    auto* args = new Args(std::forward<A>(a)...);
    const musaError_t e = launch(&kernel, grid, block, shared, static_cast<musaStream_t>(stream),
                                 args, [](void* p) { delete static_cast<Args*>(p); });
    // A kernel's own fault (a memory fault, a failed assertion: sticky on the device) is not
    // the launch's error: a GPU reports it at the next synchronisation, where PyTorch reports
    // it. The return value still tells a caller that wants to know.
    if (e != musaSuccess && e != musaErrorIllegalAddress && e != musaErrorAssert)
      t_launch_error = e;
    return e;
  }
};

// ---- barriers and warp collectives ---------------------------------------------------------

inline void sync_threads() {
  musaSimThread* t = t_self;
  t->syncThreads(t);
  t_self = t;
}

inline void sync_warp() {
  musaSimThread* t = t_self;
  t->syncWarp(t);
  t_self = t;
}

// Every live lane of the warp publishes `v`; each returns lane `src`'s (its own when `src` is
// not a lane of the warp).
template <class T>
T warp_exchange(T v, int src) {
  static_assert(sizeof(T) <= sizeof(unsigned long long) && std::is_trivially_copyable_v<T>,
                "warp collectives move at most 8 bytes a lane");
  musaSimThread* t = t_self;
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  t->warpSlots[t->laneId] = bits;
  sync_warp();
  if (src >= 0 && static_cast<unsigned>(src) < t->warpSize) bits = t->warpSlots[src];
  sync_warp();
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

// Lanes of the calling thread's warp that exist in its block.
inline unsigned warp_lanes() {
  const musaSimThread* t = t_self;
  const unsigned n = t->blockDim.x * t->blockDim.y * t->blockDim.z;
  const unsigned first = t->warpId * t->warpSize;
  return n - first < t->warpSize ? n - first : t->warpSize;
}

inline int vote(int predicate, bool all) {
  musaSimThread* t = t_self;
  t->warpSlots[t->laneId] = predicate != 0;
  sync_warp();
  const unsigned lanes = warp_lanes();
  int r = all ? 1 : 0;
  for (unsigned l = 0; l < lanes; ++l) {
    const bool p = t_self->warpSlots[l] != 0;
    if (all && !p) r = 0;
    if (!all && p) r = 1;
  }
  sync_warp();
  return r;
}

// A failed device-side assertion: the launch ends with musaErrorAssert (sticky).
[[noreturn]] inline void device_assert_fail(const char* message) {
  t_self->trap(t_self, message);
  __builtin_unreachable();
}

template <class T>
T atomic_float_add(T* p, T v) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  auto* b = reinterpret_cast<Bits*>(p);
  Bits old = __atomic_load_n(b, __ATOMIC_RELAXED);
  for (;;) {
    T f;
    std::memcpy(&f, &old, sizeof f);
    const T sum = f + v;
    Bits next;
    std::memcpy(&next, &sum, sizeof next);
    if (__atomic_compare_exchange_n(b, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return f;
  }
}

}  // namespace musa_sim

#define threadIdx (::musa_sim::t_self->threadIdx)
#define blockIdx (::musa_sim::t_self->blockIdx)
#define blockDim (::musa_sim::t_self->blockDim)
#define gridDim (::musa_sim::t_self->gridDim)
#define warpSize (static_cast<int>(::musa_sim::t_self->warpSize))

inline void __syncthreads() { ::musa_sim::sync_threads(); }
inline void __syncwarp(unsigned = 0xffffffffu) { ::musa_sim::sync_warp(); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

template <class T>
T __shfl_sync(unsigned, T v, int src, int width = warpSize) {
  const int lane = static_cast<int>(::musa_sim::t_self->laneId);
  return ::musa_sim::warp_exchange(v, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int mask, int width = warpSize) {
  const int lane = static_cast<int>(::musa_sim::t_self->laneId);
  const int src = lane ^ mask;
  return ::musa_sim::warp_exchange(v, (src & ~(width - 1)) == (lane & ~(width - 1)) ? src : lane);
}
template <class T>
T __shfl_down_sync(unsigned, T v, unsigned delta, int width = warpSize) {
  const int lane = static_cast<int>(::musa_sim::t_self->laneId);
  const int d = static_cast<int>(delta);
  return ::musa_sim::warp_exchange(v, (lane & (width - 1)) + d < width ? lane + d : lane);
}
template <class T>
T __shfl_up_sync(unsigned, T v, unsigned delta, int width = warpSize) {
  const int lane = static_cast<int>(::musa_sim::t_self->laneId);
  const int d = static_cast<int>(delta);
  return ::musa_sim::warp_exchange(v, (lane & (width - 1)) >= d ? lane - d : lane);
}
inline int __any_sync(unsigned, int predicate) { return ::musa_sim::vote(predicate, false); }
inline int __all_sync(unsigned, int predicate) { return ::musa_sim::vote(predicate, true); }

// Atomics: the same memory, shared by the executor's threads.
#define TORCHADA_SIM_ATOMIC_INT(T)                                                                 \
  inline T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }             \
  inline T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }             \
  inline T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }             \
  inline T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }               \
  inline T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }             \
  inline T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }           \
  inline T atomicCAS(T* p, T expected, T desired) {                                                \
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
    return expected;                                                                               \
  }                                                                                                \
  inline T atomicMax(T* p, T v) {                                                                  \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                  \
    while (old < v &&                                                                              \
           !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))     \
      ;                                                                                            \
    return old;                                                                                    \
  }                                                                                                \
  inline T atomicMin(T* p, T v) {                                                                  \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                  \
    while (v < old &&                                                                              \
           !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))     \
      ;                                                                                            \
    return old;                                                                                    \
  }
TORCHADA_SIM_ATOMIC_INT(int)
TORCHADA_SIM_ATOMIC_INT(unsigned int)
TORCHADA_SIM_ATOMIC_INT(long long)
TORCHADA_SIM_ATOMIC_INT(unsigned long long)
#undef TORCHADA_SIM_ATOMIC_INT
inline float atomicAdd(float* p, float v) { return ::musa_sim::atomic_float_add(p, v); }
inline double atomicAdd(double* p, double v) { return ::musa_sim::atomic_float_add(p, v); }
inline float atomicExch(float* p, float v) {
  float old;
  __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED);
  return old;
}

// Device math the host library lacks, or spells differently.
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
template <class T>
T __ldg(const T* p) {
  return *p;
}

#endif  // TORCHADA_MUSA_SIM_DEVICE_H
