// The device-code executor (sim/runtime/executor.cc) through its C API and the device-emulation
// layer (musa_sim_device.h): kernels written as CUDA source, compiled here for the host.
#include <musa_sim_device.h>  // first: it defines the CUDA qualifiers

#include <musa_runtime.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <numeric>
#include <vector>

#define ASSERT_OK(x) ASSERT_EQ(musaSuccess, (x))
#define EXPECT_OK(x) EXPECT_EQ(musaSuccess, (x))

namespace {

// kernel<<<grid, block, shared, stream>>>(args...): `plain` for a kernel that never
// synchronises (a loop over the block), `synced` for one with barriers (fibers).
template <auto K, class... A>
musaError_t plain(musaSimDim3 grid, musaSimDim3 block, size_t shared, musaStream_t s, A... a) {
  return musa_sim::Launch<K, false>{"plain", grid, block, shared, s}(a...);
}
template <auto K, class... A>
musaError_t synced(musaSimDim3 grid, musaSimDim3 block, size_t shared, musaStream_t s, A... a) {
  return musa_sim::Launch<K, true>{"synced", grid, block, shared, s}(a...);
}
musaSimDim3 d1(unsigned x) { return {x, 1, 1}; }

// ---- kernels, as a CUDA programmer writes them ----------------------------------------------

__global__ void axpy(float* y, const float* x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] += a * x[i];
}

// Tree reduction in shared memory, one partial sum per block.
__global__ void block_sums(float* out, const float* in, int n) {
  __shared__ float buf[1024];
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  buf[t] = i < n ? in[i] : 0.f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}

// Butterfly reduction over the warp, as NVIDIA's code does with 32 (here warpSize wide).
__global__ void warp_sums(int* out, int* width_seen) {
  int v = static_cast<int>(threadIdx.x);
  for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if (threadIdx.x % warpSize == 0) out[threadIdx.x / warpSize] = v;
  if (threadIdx.x == 0) *width_seen = warpSize;
}

__global__ void shuffles(int* down, int* up, int* idx, int* any, int* all) {
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  const int t = static_cast<int>(threadIdx.x);
  down[t] = __shfl_down_sync(0xffffffffu, lane * 10, 3);
  up[t] = __shfl_up_sync(0xffffffffu, lane * 10, 5, 16);
  idx[t] = __shfl_sync(0xffffffffu, lane * 10, 7);
  any[t] = __any_sync(0xffffffffu, lane == 77);
  all[t] = __all_sync(0xffffffffu, lane < 1000);
}

__global__ void count_all(unsigned long long* n, float* f) {
  atomicAdd(n, 1ull);
  atomicAdd(f, 0.5f);
}

__global__ void grid_indices(unsigned* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[block * blockDim.x * blockDim.y * blockDim.z + thread] = block * 1000 + thread;
}

__global__ void reverse_in_dynamic_shared(int* data, int n) {
  int* s = musa_sim::dynamic_shared<int>();
  const int t = threadIdx.x;
  s[t] = data[t];
  __syncthreads();
  data[t] = s[n - 1 - t];
}

__global__ void write_to(int* p) {
  if (threadIdx.x == 5) *p = 1;
}

__global__ void barrier_anyway(int* p) {
  __syncthreads();
  *p = 1;
}

// Half the block waits at the block's barrier while the rest ends: the ended threads count as
// arrived (what NVIDIA's hardware does for exited threads).
__global__ void early_exit(int* out) {
  if (threadIdx.x % 2 == 1) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

// Half of the first warp waits at the warp's barrier, the rest of the block at the block's: no
// barrier can complete (a GPU hangs).
__global__ void divergent_barriers(int* p) {
  if (threadIdx.x < 64)
    __syncwarp();
  else
    __syncthreads();
  *p = 1;
}

__global__ void add_one(int* p) { *p += 1; }

// Each thread checks its element, as CUDA's assert() in kernel code does; one element fails.
__global__ void assert_non_negative(const int* v, int* checked) {
  if (v[threadIdx.x] < 0) musa_sim::device_assert_fail("v[threadIdx.x] >= 0");
  atomicAdd(checked, 1);
}

template <class T>
struct Device {
  T* p = nullptr;
  explicit Device(size_t n) { EXPECT_OK(musaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T))); }
  ~Device() { musaFree(p); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
};

TEST(SimExecutor, GridStrideKernelOverManyBlocks) {
  const int n = 100000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i), y[i] = 1.f;
  Device<float> dx(n), dy(n);
  ASSERT_OK(musaMemcpy(dx.p, x.data(), n * sizeof(float), musaMemcpyHostToDevice));
  ASSERT_OK(musaMemcpy(dy.p, y.data(), n * sizeof(float), musaMemcpyHostToDevice));
  musaStream_t s;
  ASSERT_OK(musaStreamCreate(&s));
  ASSERT_OK(plain<axpy>(d1(64), d1(256), 0, s, dy.p, dx.p, 2.f, n));
  ASSERT_OK(musaMemcpyAsync(y.data(), dy.p, n * sizeof(float), musaMemcpyDeviceToHost, s));
  ASSERT_OK(musaStreamSynchronize(s));
  for (int i = 0; i < n; i += 997) ASSERT_EQ(1.f + 2.f * i, y[i]) << i;
  EXPECT_EQ(1.f + 2.f * (n - 1), y[n - 1]);
  ASSERT_OK(musaStreamDestroy(s));
}

TEST(SimExecutor, SharedMemoryAndBarriersPerBlock) {
  const int n = 5000, threads = 512, blocks = (n + threads - 1) / threads;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 17);
  Device<float> din(n), dout(blocks);
  ASSERT_OK(musaMemcpy(din.p, in.data(), n * sizeof(float), musaMemcpyHostToDevice));
  ASSERT_OK(synced<block_sums>(d1(blocks), d1(threads), 0, nullptr, dout.p, din.p, n));
  std::vector<float> out(blocks);
  ASSERT_OK(musaMemcpy(out.data(), dout.p, blocks * sizeof(float), musaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    float want = 0.f;
    for (int i = b * threads; i < std::min(n, (b + 1) * threads); ++i) want += in[i];
    EXPECT_EQ(want, out[b]) << "block " << b;
  }
}

TEST(SimExecutor, WarpShuffleReductionAtTheDevicesWarpWidth) {
  int attr = 0;
  ASSERT_OK(musaDeviceGetAttribute(&attr, musaDevAttrWarpSize, 0));
  const int threads = 512, warps = threads / attr;
  Device<int> dout(warps), dwidth(1);
  ASSERT_OK(synced<warp_sums>(d1(1), d1(threads), 0, nullptr, dout.p, dwidth.p));
  std::vector<int> out(warps);
  int width = 0;
  ASSERT_OK(musaMemcpy(out.data(), dout.p, warps * sizeof(int), musaMemcpyDeviceToHost));
  ASSERT_OK(musaMemcpy(&width, dwidth.p, sizeof(int), musaMemcpyDeviceToHost));
  EXPECT_EQ(attr, width);
  for (int w = 0; w < warps; ++w) {
    int want = 0;
    for (int t = w * attr; t < (w + 1) * attr; ++t) want += t;
    EXPECT_EQ(want, out[w]) << "warp " << w;
  }
}

TEST(SimExecutor, ShuffleVariantsAndVotesFollowCudasLaneRules) {
  const int threads = 256, ws = 128;
  Device<int> down(threads), up(threads), idx(threads), any(threads), all(threads);
  ASSERT_OK(synced<shuffles>(d1(1), d1(threads), 0, nullptr, down.p, up.p, idx.p, any.p, all.p));
  std::vector<int> d(threads), u(threads), x(threads), a(threads), l(threads);
  ASSERT_OK(musaMemcpy(d.data(), down.p, threads * sizeof(int), musaMemcpyDeviceToHost));
  ASSERT_OK(musaMemcpy(u.data(), up.p, threads * sizeof(int), musaMemcpyDeviceToHost));
  ASSERT_OK(musaMemcpy(x.data(), idx.p, threads * sizeof(int), musaMemcpyDeviceToHost));
  ASSERT_OK(musaMemcpy(a.data(), any.p, threads * sizeof(int), musaMemcpyDeviceToHost));
  ASSERT_OK(musaMemcpy(l.data(), all.p, threads * sizeof(int), musaMemcpyDeviceToHost));
  for (int t = 0; t < threads; ++t) {
    const int lane = t % ws;
    EXPECT_EQ(lane + 3 < ws ? (lane + 3) * 10 : lane * 10, d[t]) << t;
    EXPECT_EQ(lane % 16 >= 5 ? (lane - 5) * 10 : lane * 10, u[t]) << t;  // 16-lane segments
    EXPECT_EQ(70, x[t]) << t;
    EXPECT_EQ(1, a[t]) << t;  // lane 77 exists in both warps
    EXPECT_EQ(1, l[t]) << t;
  }
}

TEST(SimExecutor, AtomicsFromBlocksRunningInParallel) {
  Device<unsigned long long> n(1);
  Device<float> f(1);
  ASSERT_OK(musaMemset(n.p, 0, sizeof(unsigned long long)));
  ASSERT_OK(musaMemset(f.p, 0, sizeof(float)));
  ASSERT_OK(plain<count_all>(d1(200), d1(256), 0, nullptr, n.p, f.p));
  unsigned long long got = 0;
  float sum = 0;
  ASSERT_OK(musaMemcpy(&got, n.p, sizeof got, musaMemcpyDeviceToHost));
  ASSERT_OK(musaMemcpy(&sum, f.p, sizeof sum, musaMemcpyDeviceToHost));
  EXPECT_EQ(200ull * 256, got);
  EXPECT_EQ(0.5f * 200 * 256, sum);
}

TEST(SimExecutor, ThreeDimensionalGridsAndBlocksBothWays) {
  const musaSimDim3 grid{3, 2, 2}, block{4, 3, 2};
  const unsigned total = 3 * 2 * 2 * 4 * 3 * 2;
  for (bool fibers : {false, true}) {
    Device<unsigned> out(total);
    const musaError_t e = fibers ? synced<grid_indices>(grid, block, 0, nullptr, out.p)
                                 : plain<grid_indices>(grid, block, 0, nullptr, out.p);
    ASSERT_OK(e);
    std::vector<unsigned> h(total);
    ASSERT_OK(musaMemcpy(h.data(), out.p, total * sizeof(unsigned), musaMemcpyDeviceToHost));
    for (unsigned i = 0; i < total; ++i) EXPECT_EQ(i / 24 * 1000 + i % 24, h[i]) << i;
  }
}

TEST(SimExecutor, DynamicSharedMemory) {
  const int n = 300;
  std::vector<int> h(n);
  std::iota(h.begin(), h.end(), 0);
  Device<int> d(n);
  ASSERT_OK(musaMemcpy(d.p, h.data(), n * sizeof(int), musaMemcpyHostToDevice));
  ASSERT_OK(synced<reverse_in_dynamic_shared>(d1(1), d1(n), n * sizeof(int), nullptr, d.p, n));
  ASSERT_OK(musaMemcpy(h.data(), d.p, n * sizeof(int), musaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT_EQ(n - 1 - i, h[i]);
}

TEST(SimExecutor, ExitedThreadsCountAsArrivedAtTheBarrier) {
  Device<int> d(256);
  ASSERT_OK(musaMemset(d.p, 0, 256 * sizeof(int)));
  ASSERT_OK(synced<early_exit>(d1(1), d1(256), 0, nullptr, d.p));
  std::vector<int> h(256);
  ASSERT_OK(musaMemcpy(h.data(), d.p, 256 * sizeof(int), musaMemcpyDeviceToHost));
  for (int i = 0; i < 256; ++i) EXPECT_EQ(i % 2 == 0 ? 1 : 0, h[i]) << i;
}

TEST(SimExecutor, RunsInStreamOrderAndQueuesBehindEarlierWork) {
  musaStream_t s;
  ASSERT_OK(musaStreamCreate(&s));
  Device<int> d(1);
  ASSERT_OK(musaMemsetAsync(d.p, 0, sizeof(int), s));
  for (int i = 0; i < 50; ++i) ASSERT_OK(plain<add_one>(d1(1), d1(1), 0, s, d.p));
  int h = 0;
  ASSERT_OK(musaMemcpyAsync(&h, d.p, sizeof h, musaMemcpyDeviceToHost, s));
  ASSERT_OK(musaStreamSynchronize(s));
  EXPECT_EQ(50, h);
  ASSERT_OK(musaStreamDestroy(s));
}

TEST(SimExecutor, CapturedIntoAGraphAndReplayed) {
  musaStream_t s;
  ASSERT_OK(musaStreamCreate(&s));
  Device<int> d(1);
  ASSERT_OK(musaMemset(d.p, 0, sizeof(int)));
  ASSERT_OK(musaStreamBeginCapture(s, musaStreamCaptureModeGlobal));
  ASSERT_OK(plain<add_one>(d1(1), d1(1), 0, s, d.p));
  ASSERT_OK(plain<add_one>(d1(1), d1(1), 0, s, d.p));
  musaGraph_t g;
  ASSERT_OK(musaStreamEndCapture(s, &g));
  int h = -1;
  ASSERT_OK(musaMemcpy(&h, d.p, sizeof h, musaMemcpyDeviceToHost));
  EXPECT_EQ(0, h) << "captured launches do not run";
  size_t nodes = 0;
  ASSERT_OK(musaGraphGetNodes(g, nullptr, &nodes));
  EXPECT_EQ(2u, nodes);
  musaGraphExec_t x;
  ASSERT_OK(musaGraphInstantiate(&x, g, nullptr, nullptr, 0));
  ASSERT_OK(musaGraphLaunch(x, s));
  ASSERT_OK(musaGraphLaunch(x, s));
  ASSERT_OK(musaStreamSynchronize(s));
  ASSERT_OK(musaMemcpy(&h, d.p, sizeof h, musaMemcpyDeviceToHost));
  EXPECT_EQ(4, h);
  ASSERT_OK(musaGraphExecDestroy(x));
  ASSERT_OK(musaGraphDestroy(g));
  ASSERT_OK(musaStreamDestroy(s));
}

std::atomic<int> g_released{0};
void count_release(void*) { g_released.fetch_add(1); }
void noop_thread(musaSimThread*, void*) {}

TEST(SimExecutor, RefusesBadConfigurationsAndReleasesTheirArguments) {
  const musaSimKernel k{"noop", &noop_thread, nullptr};
  const musaSimDim3 one{1, 1, 1};
  g_released = 0;
  EXPECT_EQ(musaErrorInvalidConfiguration,
            musaSimLaunchKernel(&k, one, {2048, 1, 1}, 0, nullptr, nullptr, &count_release));
  EXPECT_EQ(musaErrorInvalidConfiguration,
            musaSimLaunchKernel(&k, {0, 1, 1}, one, 0, nullptr, nullptr, &count_release));
  EXPECT_EQ(musaErrorInvalidConfiguration,
            musaSimLaunchKernel(&k, one, {32, 32, 2}, 0, nullptr, nullptr, &count_release));
  EXPECT_EQ(musaErrorInvalidConfiguration,
            musaSimLaunchKernel(&k, one, one, 1u << 20, nullptr, nullptr, &count_release));
  EXPECT_EQ(musaErrorInvalidValue,
            musaSimLaunchKernel(nullptr, one, one, 0, nullptr, nullptr, &count_release));
  EXPECT_EQ(musaErrorInvalidResourceHandle,
            musaSimLaunchKernel(&k, one, one, 0, reinterpret_cast<musaStream_t>(0x1234), nullptr,
                                &count_release));
  EXPECT_EQ(6, g_released.load());
  EXPECT_OK(musaSimLaunchKernel(&k, one, one, 0, nullptr, nullptr, &count_release));
  EXPECT_OK(musaDeviceSynchronize());
  EXPECT_EQ(7, g_released.load());
  (void)musaGetLastError();
}

TEST(SimExecutor, BarrierMisuseFailsTheLaunchInsteadOfHanging) {
  Device<int> d(1);
  EXPECT_EQ(musaErrorLaunchFailure, plain<barrier_anyway>(d1(1), d1(64), 0, nullptr, d.p));
  EXPECT_EQ(musaErrorLaunchFailure, synced<divergent_barriers>(d1(1), d1(256), 0, nullptr, d.p));
  (void)musaGetLastError();
  EXPECT_OK(musaDeviceSynchronize()) << "not a fault: the device stays usable";
}

// A wild store: on a GPU an illegal address, reported at once or at the next synchronisation,
// sticky until the device is reset; the process goes on.
TEST(SimExecutor, MemoryFaultIsAStickyIllegalAddress) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot follow the executor's siglongjmp out of its SIGSEGV "
                  "handler (it reports its own bookkeeping there as signal-unsafe calls); the "
                  "plain and ASan builds run this test";
#endif
  for (bool fibers : {false, true}) {
    int* wild = reinterpret_cast<int*>(uintptr_t{16});
    musaStream_t s;
    ASSERT_OK(musaStreamCreate(&s));
    Device<int> d(1);
    const musaError_t launched = fibers ? synced<write_to>(d1(4), d1(256), 0, s, wild)
                                        : plain<write_to>(d1(4), d1(256), 0, s, wild);
    EXPECT_TRUE(launched == musaSuccess || launched == musaErrorIllegalAddress) << launched;
    EXPECT_EQ(musaErrorIllegalAddress, musaStreamSynchronize(s));
    EXPECT_EQ(musaErrorIllegalAddress, musaDeviceSynchronize());
    EXPECT_EQ(musaErrorIllegalAddress, musaGetLastError());
    EXPECT_EQ(musaErrorIllegalAddress, musaGetLastError()) << "sticky";
    EXPECT_EQ(musaErrorIllegalAddress, plain<add_one>(d1(1), d1(1), 0, nullptr, d.p));
    musaStreamDestroy(s);
    ASSERT_OK(musaDeviceReset());
    (void)musaGetLastError();
    Device<int> e(1);
    ASSERT_OK(musaMemset(e.p, 0, sizeof(int)));
    EXPECT_OK(plain<add_one>(d1(1), d1(1), 0, nullptr, e.p));
    int h = 0;
    ASSERT_OK(musaMemcpy(&h, e.p, sizeof h, musaMemcpyDeviceToHost));
    EXPECT_EQ(1, h) << (fibers ? "fibers" : "loop");
  }
}

TEST(SimExecutor, DeviceAssertionIsAStickyAssert) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the assertion leaves the block through the executor's SIGSEGV handler, which "
                  "ThreadSanitizer cannot follow (see MemoryFaultIsAStickyIllegalAddress)";
#endif
  for (bool fibers : {false, true}) {
    std::vector<int> values(256, 1);
    values[77] = -1;
    Device<int> v(256), checked(1);
    ASSERT_OK(musaMemcpy(v.p, values.data(), 256 * sizeof(int), musaMemcpyHostToDevice));
    ASSERT_OK(musaMemset(checked.p, 0, sizeof(int)));
    musaStream_t s;
    ASSERT_OK(musaStreamCreate(&s));
    const musaError_t launched =
        fibers ? synced<assert_non_negative>(d1(1), d1(256), 0, s, v.p, checked.p)
               : plain<assert_non_negative>(d1(1), d1(256), 0, s, v.p, checked.p);
    EXPECT_TRUE(launched == musaSuccess || launched == musaErrorAssert) << launched;
    EXPECT_EQ(musaErrorAssert, musaStreamSynchronize(s));
    EXPECT_EQ(musaErrorAssert, musaDeviceSynchronize());
    EXPECT_EQ(musaErrorAssert, musaGetLastError());
    EXPECT_EQ(musaErrorAssert, musaGetLastError()) << "sticky";
    musaStreamDestroy(s);
    ASSERT_OK(musaDeviceReset());
    (void)musaGetLastError();
    Device<int> e(1);
    ASSERT_OK(musaMemset(e.p, 0, sizeof(int)));
    EXPECT_OK(plain<add_one>(d1(1), d1(1), 0, nullptr, e.p));
    int h = 0;
    ASSERT_OK(musaMemcpy(&h, e.p, sizeof h, musaMemcpyDeviceToHost));
    EXPECT_EQ(1, h) << (fibers ? "fibers" : "loop");
  }
}

}  // namespace
