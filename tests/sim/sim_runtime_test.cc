// Tests of the CPU MUSA runtime simulator, called directly through musa_runtime_api.h.
// The simulator reads TORCHADA_SIM_DEVICES / TORCHADA_SIM_MEMORY_MB on first use; the tests pin
// them (2 devices of 1 GiB) before any test runs.
#include <musa_runtime.h>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#define ASSERT_OK(x) ASSERT_EQ(musaSuccess, (x))
#define EXPECT_OK(x) EXPECT_EQ(musaSuccess, (x))

namespace {

const bool kEnvPinned = [] {
  setenv("TORCHADA_SIM_DEVICES", "2", 1);
  setenv("TORCHADA_SIM_MEMORY_MB", "1024", 1);
  return true;
}();

struct Slot {
  std::atomic<int> value{0};
};

void sleep_ms(void* ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(reinterpret_cast<intptr_t>(ms)));
}

TEST(SimDevice, CountPropertiesAndAttributes) {
  ASSERT_TRUE(kEnvPinned);
  int n = 0;
  ASSERT_OK(musaGetDeviceCount(&n));
  ASSERT_EQ(2, n);
  musaDeviceProp p0, p1;
  ASSERT_OK(musaGetDeviceProperties(&p0, 0));
  ASSERT_OK(musaGetDeviceProperties(&p1, 1));
  EXPECT_STREQ("MTT S4000", p0.name);
  EXPECT_EQ(2, p0.major);
  EXPECT_EQ(2, p0.minor);
  EXPECT_EQ(128, p0.warpSize);
  EXPECT_EQ(1024ull << 20, p0.totalGlobalMem);
  EXPECT_NE(p0.pciBusID, p1.pciBusID);
  int v = 0;
  ASSERT_OK(musaDeviceGetAttribute(&v, musaDevAttrWarpSize, 0));
  EXPECT_EQ(p0.warpSize, v);
  ASSERT_OK(musaDeviceGetAttribute(&v, musaDevAttrMultiProcessorCount, 1));
  EXPECT_EQ(p1.multiProcessorCount, v);
  ASSERT_OK(musaDeviceGetAttribute(&v, musaDevAttrPciBusId, 1));
  EXPECT_EQ(p1.pciBusID, v);
  EXPECT_EQ(musaErrorInvalidValue, musaDeviceGetAttribute(&v, static_cast<musaDeviceAttr>(0), 0));
  EXPECT_EQ(musaErrorInvalidDevice, musaDeviceGetAttribute(&v, musaDevAttrWarpSize, 2));
  EXPECT_EQ(musaErrorInvalidDevice, musaSetDevice(7));
  EXPECT_EQ(musaErrorInvalidValue, musaGetDeviceProperties(nullptr, 0));
  char bus[32];
  ASSERT_OK(musaDeviceGetPCIBusId(bus, sizeof(bus), 1));
  int d = -1;
  ASSERT_OK(musaDeviceGetByPCIBusId(&d, bus));
  EXPECT_EQ(1, d);
  int rv = 0, dv = 0;
  ASSERT_OK(musaRuntimeGetVersion(&rv));
  ASSERT_OK(musaDriverGetVersion(&dv));
  EXPECT_EQ(5010, rv);
  EXPECT_EQ(5, dv / 10000);
  EXPECT_EQ(1, (dv % 10000) / 100);
  musaGetLastError();
}

TEST(SimDevice, CurrentDeviceIsPerThread) {
  ASSERT_OK(musaSetDevice(1));
  int other = -1;
  std::thread([&] { musaGetDevice(&other); }).join();
  int mine = -1;
  ASSERT_OK(musaGetDevice(&mine));
  EXPECT_EQ(1, mine);
  EXPECT_EQ(0, other);
  ASSERT_OK(musaSetDevice(0));
}

TEST(SimErrors, LastErrorAndStrings) {
  musaGetLastError();
  EXPECT_EQ(musaErrorInvalidValue, musaMalloc(nullptr, 16));
  EXPECT_EQ(musaErrorInvalidValue, musaPeekAtLastError());
  EXPECT_EQ(musaErrorInvalidValue, musaGetLastError());
  EXPECT_EQ(musaSuccess, musaGetLastError());
  EXPECT_STREQ("musaErrorNotReady", musaGetErrorName(musaErrorNotReady));
  EXPECT_STREQ("musaErrorMusartUnloading", musaGetErrorName(musaErrorMusartUnloading));
  EXPECT_STRNE("", musaGetErrorString(musaErrorMemoryAllocation));
  EXPECT_STREQ("unrecognized error code", musaGetErrorName(static_cast<musaError_t>(12345)));
  // Another thread's error is not ours.
  std::thread([] { musaSetDevice(99); }).join();
  EXPECT_EQ(musaSuccess, musaPeekAtLastError());
}

TEST(SimErrors, NullAndInvalidHandles) {
  EXPECT_EQ(musaErrorInvalidValue, musaGetDeviceCount(nullptr));
  EXPECT_EQ(musaErrorInvalidValue, musaStreamCreate(nullptr));
  EXPECT_EQ(musaErrorInvalidValue, musaEventCreate(nullptr));
  EXPECT_EQ(musaErrorInvalidValue, musaMemGetInfo(nullptr, nullptr));
  EXPECT_EQ(musaErrorInvalidValue, musaPointerGetAttributes(nullptr, nullptr));
  EXPECT_EQ(musaErrorInvalidValue, musaGraphCreate(nullptr, 0));
  EXPECT_EQ(musaErrorInvalidValue, musaStreamEndCapture(nullptr, nullptr));
  int bogus = 0;
  auto fake_stream = reinterpret_cast<musaStream_t>(&bogus);
  auto fake_event = reinterpret_cast<musaEvent_t>(&bogus);
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaStreamSynchronize(fake_stream));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaStreamDestroy(fake_stream));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaEventRecord(fake_event, nullptr));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaEventDestroy(nullptr));
  EXPECT_EQ(musaErrorInvalidValue, musaGraphDestroy(reinterpret_cast<musaGraph_t>(&bogus)));
  EXPECT_EQ(musaErrorInvalidValue, musaFree(&bogus));
  EXPECT_EQ(musaSuccess, musaFree(nullptr));
  musaStream_t s;
  ASSERT_OK(musaStreamCreate(&s));
  ASSERT_OK(musaStreamDestroy(s));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaStreamQuery(s));
  musaGetLastError();
}

TEST(SimMemory, RegistryAndPointerAttributes) {
  char* d = nullptr;
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&d), 1000));
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(d) % 256);
  musaPointerAttributes a;
  ASSERT_OK(musaPointerGetAttributes(&a, d + 999));
  EXPECT_EQ(musaMemoryTypeDevice, a.type);
  EXPECT_EQ(0, a.device);
  EXPECT_EQ(d + 999, a.devicePointer);
  int local = 0;
  ASSERT_OK(musaPointerGetAttributes(&a, &local));
  EXPECT_EQ(musaMemoryTypeUnregistered, a.type);
  void* h = nullptr;
  ASSERT_OK(musaMallocHost(&h, 64));
  ASSERT_OK(musaPointerGetAttributes(&a, h));
  EXPECT_EQ(musaMemoryTypeHost, a.type);
  void* m = nullptr;
  ASSERT_OK(musaMallocManaged(&m, 64, musaMemAttachGlobal));
  ASSERT_OK(musaPointerGetAttributes(&a, m));
  EXPECT_EQ(musaMemoryTypeManaged, a.type);
  std::vector<char> reg(4096);
  ASSERT_OK(musaHostRegister(reg.data(), reg.size(), musaHostRegisterDefault));
  EXPECT_EQ(musaErrorHostMemoryAlreadyRegistered,
            musaHostRegister(reg.data() + 10, 10, musaHostRegisterDefault));
  ASSERT_OK(musaPointerGetAttributes(&a, reg.data() + 100));
  EXPECT_EQ(musaMemoryTypeHost, a.type);
  void* dp = nullptr;
  ASSERT_OK(musaHostGetDevicePointer(&dp, reg.data(), 0));
  EXPECT_EQ(reg.data(), dp);
  ASSERT_OK(musaHostUnregister(reg.data()));
  EXPECT_EQ(musaErrorHostMemoryNotRegistered, musaHostUnregister(reg.data()));
  EXPECT_EQ(musaErrorInvalidValue, musaFree(d + 1));  // not the start of an allocation
  EXPECT_EQ(musaErrorInvalidValue, musaFree(h));      // pinned memory goes to musaFreeHost
  ASSERT_OK(musaFree(d));
  ASSERT_OK(musaFreeHost(h));
  ASSERT_OK(musaFree(m));
  ASSERT_OK(musaPointerGetAttributes(&a, d));
  EXPECT_EQ(musaMemoryTypeUnregistered, a.type);
  musaGetLastError();
}

TEST(SimMemory, MemGetInfoAndOverAllocation) {
  size_t free0 = 0, total = 0;
  ASSERT_OK(musaMemGetInfo(&free0, &total));
  EXPECT_EQ(1024ull << 20, total);
  void* p = nullptr;
  ASSERT_OK(musaMalloc(&p, 64 << 20));
  size_t free1 = 0;
  ASSERT_OK(musaMemGetInfo(&free1, &total));
  EXPECT_EQ(free0 - (64 << 20), free1);
  void* q = nullptr;
  EXPECT_EQ(musaErrorMemoryAllocation, musaMalloc(&q, 2048ull << 20));
  EXPECT_EQ(musaErrorMemoryAllocation, musaGetLastError());
  ASSERT_OK(musaFree(p));
  ASSERT_OK(musaMemGetInfo(&free1, &total));
  EXPECT_EQ(free0, free1);
}

TEST(SimMemory, CopiesInEveryDirectionAndKindChecks) {
  std::vector<int> host(256), back(256, 0);
  for (int i = 0; i < 256; ++i) host[i] = i * 3;
  int *d1, *d2;
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&d1), 1024));
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&d2), 1024));
  ASSERT_OK(musaMemcpy(d1, host.data(), 1024, musaMemcpyHostToDevice));
  ASSERT_OK(musaMemcpy(d2, d1, 1024, musaMemcpyDeviceToDevice));
  ASSERT_OK(musaMemcpy(back.data(), d2, 1024, musaMemcpyDefault));
  EXPECT_EQ(host, back);
  // Kinds that contradict the pointers.
  EXPECT_EQ(musaErrorInvalidValue, musaMemcpy(d1, host.data(), 1024, musaMemcpyDeviceToDevice));
  EXPECT_EQ(musaErrorInvalidValue, musaMemcpy(back.data(), d1, 1024, musaMemcpyHostToHost));
  // 7: inside the enum's value range (so loading it is defined behaviour) but no kind at all.
  EXPECT_EQ(musaErrorInvalidMemcpyDirection, musaMemcpy(d1, d2, 4, static_cast<musaMemcpyKind>(7)));
  // Out of the allocation's bounds.
  EXPECT_EQ(musaErrorInvalidValue, musaMemcpy(d1, host.data(), 1025, musaMemcpyHostToDevice));
  ASSERT_OK(musaMemset(d1, 0x7f, 1024));
  ASSERT_OK(musaMemcpy(back.data(), d1, 1024, musaMemcpyDeviceToHost));
  EXPECT_EQ(0x7f7f7f7f, back[17]);
  ASSERT_OK(musaFree(d1));
  ASSERT_OK(musaFree(d2));
  musaGetLastError();
}

TEST(SimMemory, TwoAndThreeDimensionalCopies) {
  const size_t w = 10, h = 4;
  char* d = nullptr;
  size_t pitch = 0;
  ASSERT_OK(musaMallocPitch(reinterpret_cast<void**>(&d), &pitch, w, h));
  EXPECT_GE(pitch, w);
  std::vector<char> src(w * h), out(w * h, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i + 1);
  ASSERT_OK(musaMemcpy2D(d, pitch, src.data(), w, w, h, musaMemcpyHostToDevice));
  ASSERT_OK(musaMemset2D(d + 2, pitch, 0, 3, h));  // clear columns 2..4
  ASSERT_OK(musaMemcpy2D(out.data(), w, d, pitch, w, h, musaMemcpyDeviceToHost));
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x)
      EXPECT_EQ((x >= 2 && x < 5) ? 0 : src[y * w + x], out[y * w + x]) << x << "," << y;
  EXPECT_EQ(musaErrorInvalidPitchValue,
            musaMemcpy2D(d, 4, src.data(), w, w, h, musaMemcpyHostToDevice));

  musaExtent ext{8, 3, 2};
  musaPitchedPtr pp;
  ASSERT_OK(musaMalloc3D(&pp, ext));
  ASSERT_OK(musaMemset3D(pp, 1, ext));
  std::vector<unsigned char> vol(8 * 3 * 2, 0xee);
  musaMemcpy3DParms p{};
  p.srcPtr = pp;
  p.dstPtr = musaPitchedPtr{vol.data(), 8, 8, 3};
  p.extent = ext;
  p.kind = musaMemcpyDeviceToHost;
  ASSERT_OK(musaMemcpy3D(&p));
  for (unsigned char c : vol) EXPECT_EQ(1, c);
  ASSERT_OK(musaFree(d));
  ASSERT_OK(musaFree(pp.ptr));
  musaGetLastError();
}

// Sizes near SIZE_MAX and spans that wrap the address space are refused, never performed, and
// the allocation next to the one named stays intact.
TEST(SimMemory, SpansThatOverflowAreRefused) {
  unsigned char *a = nullptr, *b = nullptr;
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&a), 4096));
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&b), 4096));
  ASSERT_OK(musaMemset(b, 0x5a, 4096));
  std::vector<unsigned char> host(64, 1);
  const size_t huge = SIZE_MAX - 16;
  EXPECT_EQ(musaErrorInvalidValue, musaMemset(a + 100, 0, huge));
  EXPECT_EQ(musaErrorInvalidValue, musaMemsetAsync(a + 100, 0, SIZE_MAX, nullptr));
  EXPECT_EQ(musaErrorInvalidValue, musaMemcpy(a + 100, host.data(), huge, musaMemcpyHostToDevice));
  EXPECT_EQ(musaErrorInvalidValue, musaMemcpy(host.data(), a + 4000, huge, musaMemcpyDefault));
  EXPECT_EQ(musaErrorInvalidValue, musaMemcpy(a, a + 8, SIZE_MAX, musaMemcpyDeviceToDevice));
  // 2D: a height whose span wraps; 3D: a position whose offset wraps.
  EXPECT_EQ(musaErrorInvalidValue, musaMemset2D(a, 64, 0, 64, SIZE_MAX / 32));
  EXPECT_EQ(musaErrorInvalidValue,
            musaMemcpy2D(a, 64, host.data(), 64, 64, SIZE_MAX / 32, musaMemcpyHostToDevice));
  musaMemcpy3DParms p{};
  p.srcPtr = musaPitchedPtr{host.data(), 64, 64, 1};
  p.dstPtr = musaPitchedPtr{a, 64, 64, 1};
  p.dstPos = musaPos{0, 0, SIZE_MAX / 2};
  p.extent = musaExtent{8, 1, 1};
  p.kind = musaMemcpyHostToDevice;
  EXPECT_EQ(musaErrorInvalidValue, musaMemcpy3D(&p));
  // One byte past the end still fails; the exact end still works.
  EXPECT_EQ(musaErrorInvalidValue, musaMemset(a + 4000, 0, 97));
  EXPECT_OK(musaMemset(a + 4000, 0, 96));
  std::vector<unsigned char> check(4096);
  ASSERT_OK(musaMemcpy(check.data(), b, 4096, musaMemcpyDeviceToHost));
  for (unsigned char c : check) ASSERT_EQ(0x5a, c) << "the neighbouring allocation changed";
  ASSERT_OK(musaFree(a));
  ASSERT_OK(musaFree(b));
  musaGetLastError();
}

TEST(SimStreams, HostCallbackObservesPriorCopy) {
  musaStream_t s;
  ASSERT_OK(musaStreamCreateWithFlags(&s, musaStreamNonBlocking));
  int* pinned = nullptr;
  int* d = nullptr;
  ASSERT_OK(musaMallocHost(reinterpret_cast<void**>(&pinned), sizeof(int) * 2));
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&d), sizeof(int)));
  pinned[0] = 42;
  pinned[1] = 0;
  ASSERT_OK(musaLaunchHostFunc(s, sleep_ms, reinterpret_cast<void*>(50)));
  ASSERT_OK(musaMemcpyAsync(d, pinned, sizeof(int), musaMemcpyHostToDevice, s));
  ASSERT_OK(musaMemcpyAsync(pinned + 1, d, sizeof(int), musaMemcpyDeviceToHost, s));
  struct Ctx {
    int* p;
    int seen;
  } ctx{pinned, -1};
  ASSERT_OK(musaLaunchHostFunc(
      s, [](void* c) { static_cast<Ctx*>(c)->seen = static_cast<Ctx*>(c)->p[1]; }, &ctx));
  EXPECT_EQ(musaErrorNotReady, musaStreamQuery(s));
  ASSERT_OK(musaStreamSynchronize(s));
  EXPECT_OK(musaStreamQuery(s));
  EXPECT_EQ(42, ctx.seen);
  ASSERT_OK(musaStreamDestroy(s));
  ASSERT_OK(musaFree(d));
  ASSERT_OK(musaFreeHost(pinned));
}

TEST(SimStreams, LegacyStreamWaitsForBlockingStreams) {
  musaStream_t blocking, nonblocking;
  ASSERT_OK(musaStreamCreate(&blocking));
  ASSERT_OK(musaStreamCreateWithFlags(&nonblocking, musaStreamNonBlocking));
  Slot order;
  ASSERT_OK(musaLaunchHostFunc(blocking, sleep_ms, reinterpret_cast<void*>(100)));
  ASSERT_OK(musaLaunchHostFunc(
      blocking, [](void* o) { static_cast<Slot*>(o)->value.store(1); }, &order));
  // Legacy-stream work runs after the blocking stream's work.
  int seen = -1;
  struct Ctx {
    Slot* o;
    int* seen;
  } ctx{&order, &seen};
  ASSERT_OK(musaLaunchHostFunc(
      nullptr, [](void* c) { *static_cast<Ctx*>(c)->seen = static_cast<Ctx*>(c)->o->value.load(); },
      &ctx));
  // A non-blocking stream is not held back.
  ASSERT_OK(musaStreamSynchronize(nonblocking));
  ASSERT_OK(musaStreamSynchronize(nullptr));
  EXPECT_EQ(1, seen);
  // Blocking-stream work waits for earlier legacy work.
  Slot legacy_done;
  ASSERT_OK(musaLaunchHostFunc(nullptr, sleep_ms, reinterpret_cast<void*>(50)));
  ASSERT_OK(musaLaunchHostFunc(
      nullptr, [](void* o) { static_cast<Slot*>(o)->value.store(7); }, &legacy_done));
  int after = -1;
  struct Ctx2 {
    Slot* o;
    int* seen;
  } c2{&legacy_done, &after};
  ASSERT_OK(musaLaunchHostFunc(
      blocking,
      [](void* c) { *static_cast<Ctx2*>(c)->seen = static_cast<Ctx2*>(c)->o->value.load(); }, &c2));
  ASSERT_OK(musaDeviceSynchronize());
  EXPECT_EQ(7, after);
  ASSERT_OK(musaStreamDestroy(blocking));
  ASSERT_OK(musaStreamDestroy(nonblocking));
}

TEST(SimStreams, DestroyCompletesPendingWork) {
  musaStream_t s;
  ASSERT_OK(musaStreamCreate(&s));
  Slot done;
  ASSERT_OK(musaLaunchHostFunc(s, sleep_ms, reinterpret_cast<void*>(30)));
  ASSERT_OK(musaLaunchHostFunc(
      s, [](void* o) { static_cast<Slot*>(o)->value.store(1); }, &done));
  ASSERT_OK(musaStreamDestroy(s));
  EXPECT_EQ(1, done.value.load());
}

// musaDeviceReset ends the device's context, and with it the streams and events made in it:
// their handles answer musaErrorInvalidResourceHandle afterwards (no false success), the
// pending work having completed first; new ones work.
TEST(SimStreams, StreamsAndEventsEndWithADeviceReset) {
  musaStream_t s = nullptr;
  musaEvent_t e = nullptr;
  ASSERT_EQ(musaSuccess, musaStreamCreate(&s));
  ASSERT_EQ(musaSuccess, musaEventCreate(&e));
  ASSERT_EQ(musaSuccess, musaEventRecord(e, s));
  ASSERT_EQ(musaSuccess, musaDeviceReset());
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaStreamSynchronize(s));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaStreamQuery(s));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaEventRecord(e, nullptr));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaEventSynchronize(e));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaStreamDestroy(s));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaEventDestroy(e));
  musaGetLastError();
  ASSERT_EQ(musaSuccess, musaStreamCreate(&s));
  ASSERT_EQ(musaSuccess, musaEventCreate(&e));
  EXPECT_EQ(musaSuccess, musaEventRecord(e, s));
  EXPECT_EQ(musaSuccess, musaStreamSynchronize(s));
  EXPECT_EQ(musaSuccess, musaEventDestroy(e));
  EXPECT_EQ(musaSuccess, musaStreamDestroy(s));
}

TEST(SimEvents, TimingIsMonotonicAndWaitOrdersStreams) {
  musaEvent_t a, b, c, nt;
  ASSERT_OK(musaEventCreate(&a));
  ASSERT_OK(musaEventCreate(&b));
  ASSERT_OK(musaEventCreate(&c));
  ASSERT_OK(musaEventCreateWithFlags(&nt, musaEventDisableTiming));
  musaStream_t s1, s2;
  ASSERT_OK(musaStreamCreateWithFlags(&s1, musaStreamNonBlocking));
  ASSERT_OK(musaStreamCreateWithFlags(&s2, musaStreamNonBlocking));
  ASSERT_OK(musaEventRecord(a, s1));
  ASSERT_OK(musaLaunchHostFunc(s1, sleep_ms, reinterpret_cast<void*>(60)));
  ASSERT_OK(musaEventRecord(b, s1));
  ASSERT_OK(musaEventRecord(nt, s1));
  float ms = -1;
  EXPECT_EQ(musaErrorNotReady, musaEventQuery(b));
  EXPECT_EQ(musaErrorNotReady, musaEventElapsedTime(&ms, a, b));
  ASSERT_OK(musaStreamWaitEvent(s2, b, 0));
  ASSERT_OK(musaEventRecord(c, s2));
  ASSERT_OK(musaEventSynchronize(c));
  EXPECT_OK(musaEventQuery(b));  // s2 could only pass after b
  ASSERT_OK(musaEventElapsedTime(&ms, a, b));
  EXPECT_GE(ms, 50.0f);
  float ms2 = -1;
  ASSERT_OK(musaEventElapsedTime(&ms2, a, c));
  EXPECT_GE(ms2, ms);
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaEventElapsedTime(&ms, a, nt));
  musaEvent_t never;
  ASSERT_OK(musaEventCreate(&never));
  EXPECT_OK(musaEventQuery(never));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaEventElapsedTime(&ms, a, never));
  for (musaEvent_t e : {a, b, c, nt, never}) ASSERT_OK(musaEventDestroy(e));
  ASSERT_OK(musaStreamDestroy(s1));
  ASSERT_OK(musaStreamDestroy(s2));
  musaGetLastError();
}

void add_one(void* p) { ++*static_cast<int*>(p); }

TEST(SimGraphs, CaptureForkJoinInstantiateLaunch) {
  musaStream_t s, side;
  ASSERT_OK(musaStreamCreateWithFlags(&s, musaStreamNonBlocking));
  ASSERT_OK(musaStreamCreateWithFlags(&side, musaStreamNonBlocking));
  musaEvent_t fork, join;
  ASSERT_OK(musaEventCreateWithFlags(&fork, musaEventDisableTiming));
  ASSERT_OK(musaEventCreateWithFlags(&join, musaEventDisableTiming));
  int *src, *dst, *dst2;
  ASSERT_OK(musaMallocHost(reinterpret_cast<void**>(&src), 64));
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&dst), 64));
  ASSERT_OK(musaMallocHost(reinterpret_cast<void**>(&dst2), 64));
  int counter = 0;

  ASSERT_OK(musaStreamBeginCapture(s, musaStreamCaptureModeGlobal));
  musaStreamCaptureStatus st;
  ASSERT_OK(musaStreamIsCapturing(s, &st));
  EXPECT_EQ(musaStreamCaptureStatusActive, st);
  ASSERT_OK(musaMemcpyAsync(dst, src, 64, musaMemcpyHostToDevice, s));
  ASSERT_OK(musaEventRecord(fork, s));
  ASSERT_OK(musaStreamWaitEvent(side, fork, 0));
  ASSERT_OK(musaLaunchHostFunc(side, add_one, &counter));
  ASSERT_OK(musaEventRecord(join, side));
  ASSERT_OK(musaStreamWaitEvent(s, join, 0));
  ASSERT_OK(musaMemcpyAsync(dst2, dst, 64, musaMemcpyDeviceToHost, s));
  unsigned long long id = 0;
  const musaGraphNode_t* deps = nullptr;
  size_t ndeps = 0;
  musaGraph_t cg = nullptr;
  ASSERT_OK(musaStreamGetCaptureInfo_v2(s, &st, &id, &cg, &deps, &ndeps));
  EXPECT_NE(0u, id);
  EXPECT_EQ(1u, ndeps);
  // Synchronous calls are illegal now and invalidate nothing else in relaxed mode.
  EXPECT_EQ(0, counter);  // nothing ran during capture
  musaGraph_t g = nullptr;
  ASSERT_OK(musaStreamEndCapture(s, &g));
  ASSERT_NE(nullptr, g);
  ASSERT_OK(musaStreamIsCapturing(side, &st));
  EXPECT_EQ(musaStreamCaptureStatusNone, st);
  size_t n = 0;
  ASSERT_OK(musaGraphGetNodes(g, nullptr, &n));
  EXPECT_EQ(3u, n);
  size_t edges = 0;
  ASSERT_OK(musaGraphGetEdges(g, nullptr, nullptr, &edges));
  EXPECT_EQ(3u, edges);  // copy->host, copy->copy, host->copy

  musaGraphExec_t x;
  ASSERT_OK(musaGraphInstantiate(&x, g, nullptr, nullptr, 0));
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < 16; ++i) src[i] = round * 100 + i;
    ASSERT_OK(musaGraphLaunch(x, s));
    ASSERT_OK(musaStreamSynchronize(s));
    for (int i = 0; i < 16; ++i) ASSERT_EQ(round * 100 + i, dst2[i]);
    EXPECT_EQ(round, counter);
  }
  ASSERT_OK(musaGraphExecDestroy(x));
  ASSERT_OK(musaGraphDestroy(g));
  ASSERT_OK(musaFree(dst));
  ASSERT_OK(musaFreeHost(src));
  ASSERT_OK(musaFreeHost(dst2));
  ASSERT_OK(musaEventDestroy(fork));
  ASSERT_OK(musaEventDestroy(join));
  ASSERT_OK(musaStreamDestroy(s));
  ASSERT_OK(musaStreamDestroy(side));
}

TEST(SimGraphs, IllegalSyncCallInvalidatesCapture) {
  musaStream_t s;
  ASSERT_OK(musaStreamCreate(&s));
  void* d = nullptr;
  ASSERT_OK(musaMalloc(&d, 64));
  ASSERT_OK(musaStreamBeginCapture(s, musaStreamCaptureModeGlobal));
  EXPECT_EQ(musaErrorIllegalState, musaStreamBeginCapture(s, musaStreamCaptureModeGlobal));
  EXPECT_EQ(musaErrorStreamCaptureUnsupported, musaMemset(d, 0, 64));
  musaStreamCaptureStatus st;
  ASSERT_OK(musaStreamIsCapturing(s, &st));
  EXPECT_EQ(musaStreamCaptureStatusInvalidated, st);
  musaGraph_t g = reinterpret_cast<musaGraph_t>(0x1234);
  EXPECT_EQ(musaErrorStreamCaptureInvalidated, musaStreamEndCapture(s, &g));
  EXPECT_EQ(nullptr, g);
  // Relaxed mode on this thread allows the call.
  ASSERT_OK(musaStreamBeginCapture(s, musaStreamCaptureModeGlobal));
  musaStreamCaptureMode mode = musaStreamCaptureModeRelaxed;
  ASSERT_OK(musaThreadExchangeStreamCaptureMode(&mode));
  EXPECT_EQ(musaStreamCaptureModeGlobal, mode);
  void* tmp = nullptr;
  // Still prohibited: the capture was begun on this thread in global mode? No: relaxed threads
  // may make any call.
  EXPECT_OK(musaMalloc(&tmp, 16));
  EXPECT_OK(musaFree(tmp));
  ASSERT_OK(musaThreadExchangeStreamCaptureMode(&mode));
  ASSERT_OK(musaMemsetAsync(d, 1, 64, s));
  ASSERT_OK(musaStreamEndCapture(s, &g));
  ASSERT_OK(musaGraphDestroy(g));
  ASSERT_OK(musaFree(d));
  ASSERT_OK(musaStreamDestroy(s));
  musaGetLastError();
}

TEST(SimGraphs, ExplicitGraphCloneUpdateAndDot) {
  int* d = nullptr;
  int* h = nullptr;
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&d), 16 * sizeof(int)));
  ASSERT_OK(musaMallocHost(reinterpret_cast<void**>(&h), 16 * sizeof(int)));
  musaGraph_t g;
  ASSERT_OK(musaGraphCreate(&g, 0));
  musaGraphNode_t ms, cp, host, empty;
  musaMemsetParams mp{};
  mp.dst = d;
  mp.elementSize = 4;
  mp.value = 0x01020304;
  mp.width = 16;
  mp.height = 1;
  ASSERT_OK(musaGraphAddMemsetNode(&ms, g, nullptr, 0, &mp));
  ASSERT_OK(
      musaGraphAddMemcpyNode1D(&cp, g, &ms, 1, h, d, 16 * sizeof(int), musaMemcpyDeviceToHost));
  int counter = 0;
  musaHostNodeParams hp{add_one, &counter};
  ASSERT_OK(musaGraphAddHostNode(&host, g, &cp, 1, &hp));
  musaHostNodeParams got{};
  ASSERT_OK(musaGraphHostNodeGetParams(host, &got));
  EXPECT_EQ(hp.fn, got.fn);
  EXPECT_EQ(hp.userData, got.userData);
  EXPECT_EQ(musaErrorInvalidValue, musaGraphHostNodeGetParams(host, nullptr));
  EXPECT_NE(musaSuccess, musaGraphHostNodeGetParams(cp, &got)) << "a memcpy node is no host node";
  ASSERT_OK(musaGraphAddEmptyNode(&empty, g, nullptr, 0));
  size_t roots = 0;
  ASSERT_OK(musaGraphGetRootNodes(g, nullptr, &roots));
  EXPECT_EQ(2u, roots);
  musaGraphNodeType t;
  ASSERT_OK(musaGraphNodeGetType(cp, &t));
  EXPECT_EQ(musaGraphNodeTypeMemcpy, t);
  size_t nd = 0;
  ASSERT_OK(musaGraphNodeGetDependentNodes(ms, nullptr, &nd));
  EXPECT_EQ(1u, nd);

  // A cycle cannot be instantiated.
  ASSERT_OK(musaGraphAddDependencies(g, &host, &ms, 1));
  musaGraphExec_t x;
  char log[128];
  EXPECT_NE(musaSuccess, musaGraphInstantiate(&x, g, nullptr, log, sizeof(log)));
  ASSERT_OK(musaGraphRemoveDependencies(g, &host, &ms, 1));

  musaGraph_t clone;
  ASSERT_OK(musaGraphClone(&clone, g));
  musaGraphNode_t ms_clone;
  ASSERT_OK(musaGraphNodeFindInClone(&ms_clone, ms, clone));
  EXPECT_NE(ms, ms_clone);

  ASSERT_OK(musaGraphInstantiate(&x, g, nullptr, nullptr, 0));
  musaStream_t s;
  ASSERT_OK(musaStreamCreate(&s));
  ASSERT_OK(musaGraphLaunch(x, s));
  ASSERT_OK(musaStreamSynchronize(s));
  EXPECT_EQ(0x01020304, h[15]);
  EXPECT_EQ(1, counter);

  // Exec node params and enable/disable.
  mp.value = 7;
  ASSERT_OK(musaGraphExecMemsetNodeSetParams(x, ms, &mp));
  ASSERT_OK(musaGraphNodeSetEnabled(x, host, 0));
  unsigned en = 1;
  ASSERT_OK(musaGraphNodeGetEnabled(x, host, &en));
  EXPECT_EQ(0u, en);
  ASSERT_OK(musaGraphLaunch(x, s));
  ASSERT_OK(musaStreamSynchronize(s));
  EXPECT_EQ(7, h[3]);
  EXPECT_EQ(1, counter);

  // Update from the clone with new memset params.
  mp.value = 9;
  ASSERT_OK(musaGraphMemsetNodeSetParams(ms_clone, &mp));
  musaGraphNode_t err_node;
  musaGraphExecUpdateResult res;
  ASSERT_OK(musaGraphExecUpdate(x, clone, &err_node, &res));
  EXPECT_EQ(musaGraphExecUpdateSuccess, res);
  ASSERT_OK(musaGraphLaunch(x, s));
  ASSERT_OK(musaStreamSynchronize(s));
  EXPECT_EQ(9, h[0]);
  // A different topology is refused.
  musaGraphNode_t extra;
  ASSERT_OK(musaGraphAddEmptyNode(&extra, clone, nullptr, 0));
  EXPECT_EQ(musaErrorGraphExecUpdateFailure, musaGraphExecUpdate(x, clone, &err_node, &res));
  EXPECT_EQ(musaGraphExecUpdateErrorTopologyChanged, res);

  const std::string path = ::testing::TempDir() + "sim_graph.dot";
  ASSERT_OK(musaGraphDebugDotPrint(g, path.c_str(), 0));
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(std::string::npos, text.find("digraph"));
  EXPECT_NE(std::string::npos, text.find("MEMSET"));
  EXPECT_NE(std::string::npos, text.find("->"));

  ASSERT_OK(musaGraphExecDestroy(x));
  EXPECT_EQ(musaErrorInvalidResourceHandle, musaGraphLaunch(x, s));
  ASSERT_OK(musaGraphDestroy(clone));
  ASSERT_OK(musaGraphDestroy(g));
  ASSERT_OK(musaStreamDestroy(s));
  ASSERT_OK(musaFree(d));
  ASSERT_OK(musaFreeHost(h));
  musaGetLastError();
}

TEST(SimGraphs, ChildGraphAndEventNodesAndUserObjects) {
  musaGraph_t child, g;
  ASSERT_OK(musaGraphCreate(&child, 0));
  ASSERT_OK(musaGraphCreate(&g, 0));
  int counter = 0;
  musaHostNodeParams hp{add_one, &counter};
  musaGraphNode_t h1, h2, c, rec;
  ASSERT_OK(musaGraphAddHostNode(&h1, child, nullptr, 0, &hp));
  ASSERT_OK(musaGraphAddHostNode(&h2, child, &h1, 1, &hp));
  ASSERT_OK(musaGraphAddChildGraphNode(&c, g, nullptr, 0, child));
  musaEvent_t e;
  ASSERT_OK(musaEventCreate(&e));
  ASSERT_OK(musaGraphAddEventRecordNode(&rec, g, &c, 1, e));
  musaGraph_t inner;
  ASSERT_OK(musaGraphChildGraphNodeGetGraph(c, &inner));
  size_t n = 0;
  ASSERT_OK(musaGraphGetNodes(inner, nullptr, &n));
  EXPECT_EQ(2u, n);

  static std::atomic<int> destroyed{0};
  musaUserObject_t obj;
  ASSERT_OK(musaUserObjectCreate(
      &obj, nullptr, [](void*) { destroyed.fetch_add(1); }, 1, musaUserObjectNoDestructorSync));
  ASSERT_OK(musaGraphRetainUserObject(g, obj, 1, musaGraphUserObjectMove));

  musaGraphExec_t x;
  ASSERT_OK(musaGraphInstantiateWithFlags(&x, g, 0));
  ASSERT_OK(musaGraphLaunch(x, nullptr));
  ASSERT_OK(musaEventSynchronize(e));
  EXPECT_EQ(2, counter);
  ASSERT_OK(musaGraphDestroy(g));
  EXPECT_EQ(0, destroyed.load());  // the exec still holds a reference
  ASSERT_OK(musaGraphExecDestroy(x));
  EXPECT_EQ(1, destroyed.load());
  ASSERT_OK(musaGraphDestroy(child));
  ASSERT_OK(musaEventDestroy(e));
}

TEST(SimDevice, MultiDevicePeerCopy) {
  int* a = nullptr;
  int* b = nullptr;
  ASSERT_OK(musaSetDevice(0));
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&a), 64));
  ASSERT_OK(musaSetDevice(1));
  ASSERT_OK(musaMalloc(reinterpret_cast<void**>(&b), 64));
  musaPointerAttributes attr;
  ASSERT_OK(musaPointerGetAttributes(&attr, b));
  EXPECT_EQ(1, attr.device);
  int can = 0;
  ASSERT_OK(musaDeviceCanAccessPeer(&can, 1, 0));
  EXPECT_EQ(1, can);
  ASSERT_OK(musaDeviceEnablePeerAccess(0, 0));
  EXPECT_EQ(musaErrorPeerAccessAlreadyEnabled, musaDeviceEnablePeerAccess(0, 0));
  ASSERT_OK(musaDeviceDisablePeerAccess(0));
  std::vector<int> v(16, 5), out(16, 0);
  ASSERT_OK(musaMemcpy(a, v.data(), 64, musaMemcpyHostToDevice));
  ASSERT_OK(musaMemcpyPeer(b, 1, a, 0, 64));
  ASSERT_OK(musaMemcpy(out.data(), b, 64, musaMemcpyDeviceToHost));
  EXPECT_EQ(v, out);
  musaStream_t s;
  ASSERT_OK(musaStreamCreate(&s));
  int dev = -1;
  ASSERT_OK(musaStreamGetDevice(s, &dev));
  EXPECT_EQ(1, dev);
  ASSERT_OK(musaStreamDestroy(s));
  ASSERT_OK(musaFree(b));
  ASSERT_OK(musaSetDevice(0));
  ASSERT_OK(musaFree(a));
  musaGetLastError();
}

TEST(SimFork, ChildStartsClean) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "TSan cannot start threads in the child of a multi-threaded fork";
#endif
  musaStream_t s;
  ASSERT_OK(musaStreamCreate(&s));
  int* h = nullptr;
  ASSERT_OK(musaMallocHost(reinterpret_cast<void**>(&h), 64));
  h[0] = 1234;
  ASSERT_OK(musaLaunchHostFunc(s, sleep_ms, reinterpret_cast<void*>(1)));
  ASSERT_OK(musaStreamSynchronize(s));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int code = 0;
    if (h[0] != 1234) code = 1;  // memory stays readable
    musaStream_t cs;
    if (musaStreamCreate(&cs) != musaSuccess) code = 2;
    void* d = nullptr;
    int x = 5, y = 0;
    if (musaMalloc(&d, 4) != musaSuccess) code = 3;
    if (musaMemcpyAsync(d, &x, 4, musaMemcpyHostToDevice, cs) != musaSuccess) code = 4;
    if (musaMemcpyAsync(&y, d, 4, musaMemcpyDeviceToHost, cs) != musaSuccess) code = 5;
    if (musaStreamSynchronize(cs) != musaSuccess || y != 5) code = 6;
    if (musaStreamSynchronize(s) != musaErrorInvalidResourceHandle) code = 7;  // parent's handle
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status));
  ASSERT_OK(musaStreamDestroy(s));
  ASSERT_OK(musaFreeHost(h));
  musaGetLastError();
}

// In a fresh runtime (a forked child: the simulator starts again there): without
// TORCHADA_SIM_MEMORY_MB a device offers at most half the host's memory (shared by the devices)
// and at most an MTT S4000's 48 GiB; malformed settings fall back to the default with a warning.
TEST(SimSettings, DefaultMemoryFitsTheHostAndMalformedValuesAreNamed) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "TSan cannot start threads in the child of a multi-threaded fork";
#endif
  unsigned long long mem_total = 0;
  {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    unsigned long long kb = 0;
    while (meminfo >> key >> kb)
      if (key == "MemTotal:") mem_total = kb << 10;
  }
  ASSERT_GT(mem_total, 0u);
  int pipe_fd[2];
  ASSERT_EQ(0, pipe(pipe_fd));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(pipe_fd[1], 2);  // the warnings, for the parent to read
    unsetenv("TORCHADA_SIM_MEMORY_MB");
    setenv("TORCHADA_SIM_DEVICES", "two", 1);
    int n = 0;
    size_t free_b = 0, total = 0;
    int code = 0;
    if (musaGetDeviceCount(&n) != musaSuccess || n != 1) code = 1;
    if (musaMemGetInfo(&free_b, &total) != musaSuccess) code = 2;
    if (total > mem_total / 2 || total > (49152ull << 20) || total < (256ull << 20)) code = 3;
    _exit(code);
  }
  close(pipe_fd[1]);
  std::string err;
  char buf[512];
  for (ssize_t k; (k = read(pipe_fd[0], buf, sizeof buf)) > 0;) err.append(buf, k);
  close(pipe_fd[0]);
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << err;
  EXPECT_NE(std::string::npos, err.find("TORCHADA_SIM_DEVICES=two")) << err;
}

TEST(SimThreads, ManyThreadsCopyOnTheirOwnStreams) {
  constexpr int kThreads = 8;
  std::atomic<int> failures{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([t, &failures] {
      musaStream_t s;
      if (musaStreamCreate(&s) != musaSuccess) {
        failures++;
        return;
      }
      std::vector<int> in(256), out(256);
      void* d = nullptr;
      if (musaMalloc(&d, 1024) != musaSuccess) failures++;
      for (int round = 0; round < 20; ++round) {
        for (int i = 0; i < 256; ++i) in[i] = t * 100000 + round * 1000 + i;
        musaMemcpyAsync(d, in.data(), 1024, musaMemcpyHostToDevice, s);
        musaMemcpyAsync(out.data(), d, 1024, musaMemcpyDeviceToHost, s);
        musaStreamSynchronize(s);
        if (out != in) failures++;
        musaEvent_t e;
        musaEventCreate(&e);
        musaEventRecord(e, musaStreamPerThread);
        musaEventSynchronize(e);
        musaEventDestroy(e);
      }
      musaFree(d);
      musaStreamDestroy(s);
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(0, failures.load());
}

}  // namespace
