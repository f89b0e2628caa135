// Tests of the simulated MUSA driver's device, context, memory, stream and event calls (the ones a
// CUDA program makes through the driver), checked against the simulated runtime they run on.
// Also: every device attribute id CUDA 13's headers define yields a value from the simulator
// itself (runtime and driver), before the shim's translation.
// The process runs with 2 devices of 1 GiB (pinned in main before the runtime starts). Steps that
// need a runtime nobody used yet run in a forked child (the simulator starts again after fork).
#include <musa.h>
#include <musa_runtime.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#define ASSERT_MU(x) ASSERT_EQ(MUSA_SUCCESS, (x))
#define EXPECT_MU(x) EXPECT_EQ(MUSA_SUCCESS, (x))
#define ASSERT_RT(x) ASSERT_EQ(musaSuccess, (x))

namespace {

constexpr size_t kMiB = size_t{1} << 20;

MUdeviceptr dp(const void* p) { return static_cast<MUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }
void* hp(MUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

// Runs `steps` in a forked child; the child's exit status is the number of the first step that
// failed (0: all passed).
int in_child(const std::function<int()>& steps) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) _exit(steps());
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -2;
  return WEXITSTATUS(status);
}

int active(int dev) {
  unsigned flags = 0;
  int a = -1;
  return muDevicePrimaryCtxGetState(dev, &flags, &a) == MUSA_SUCCESS ? a : -1;
}

// A host function that holds its stream until the test opens the gate (at most 30 s).
void wait_gate(void* gate) {
  auto* open = static_cast<std::atomic<bool>*>(gate);
  for (int i = 0; i < 30000 && !open->load(std::memory_order_acquire); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void bump(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }

class DriverApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_MU(muInit(0));
    ASSERT_MU(muDevicePrimaryCtxRetain(&ctx0_, 0));
    ASSERT_MU(muDevicePrimaryCtxRetain(&ctx1_, 1));
    ASSERT_RT(musaSetDevice(0));  // the runtime's context of device 0 is current
  }
  void TearDown() override {
    MUcontext c = nullptr;
    while (muCtxPopCurrent_v2(&c) == MUSA_SUCCESS && c != nullptr) {
    }
    EXPECT_MU(muDevicePrimaryCtxRelease_v2(0));
    EXPECT_MU(muDevicePrimaryCtxRelease_v2(1));
    musaSetDevice(0);
    musaGetLastError();
  }
  MUcontext ctx0_ = nullptr, ctx1_ = nullptr;
};

// ---- Primary contexts -------------------------------------------------------------------------

TEST(DriverApiFresh, PrimaryContextIsActiveOnceRetainedOrUsedByTheRuntime) {
  ASSERT_MU(muInit(0));
  const int failed = in_child([] {
    MUcontext c = reinterpret_cast<MUcontext>(1);
    MUdevice d = -1;
    MUdeviceptr p = 0;
    MUstream s = nullptr;
    MUevent e = nullptr;
    size_t f = 0, t = 0;
    // Nothing used a device yet: no context anywhere, and calls that need one say so.
    if (active(0) != 0 || active(1) != 0) return 1;
    if (muCtxGetCurrent(&c) != MUSA_SUCCESS || c != nullptr) return 2;
    if (muCtxGetDevice(&d) != MUSA_ERROR_INVALID_CONTEXT) return 3;
    if (muMemAlloc_v2(&p, 64) != MUSA_ERROR_INVALID_CONTEXT) return 4;
    if (muStreamCreate(&s, 0) != MUSA_ERROR_INVALID_CONTEXT) return 5;
    if (muEventCreate(&e, 0) != MUSA_ERROR_INVALID_CONTEXT) return 6;
    if (muMemGetInfo_v2(&f, &t) != MUSA_ERROR_INVALID_CONTEXT) return 7;
    if (muCtxSynchronize() != MUSA_ERROR_INVALID_CONTEXT) return 8;
    // Retained: active until the last release; an extra release is an error.
    MUcontext r1 = nullptr, r2 = nullptr;
    if (muDevicePrimaryCtxRetain(&r1, 1) != MUSA_SUCCESS || active(1) != 1) return 10;
    if (muDevicePrimaryCtxRetain(&r2, 1) != MUSA_SUCCESS || r1 != r2) return 11;
    if (muDevicePrimaryCtxRelease_v2(1) != MUSA_SUCCESS || active(1) != 1) return 12;
    if (muDevicePrimaryCtxRelease_v2(1) != MUSA_SUCCESS || active(1) != 0) return 13;
    if (muDevicePrimaryCtxRelease_v2(1) != MUSA_ERROR_INVALID_CONTEXT) return 14;
    // The runtime's first real use of a device (musaFree(0)) makes its context, and current.
    if (musaFree(nullptr) != musaSuccess || active(0) != 1 || active(1) != 0) return 20;
    MUcontext p0 = nullptr;
    if (muDevicePrimaryCtxRetain(&p0, 0) != MUSA_SUCCESS) return 21;
    if (muCtxGetCurrent(&c) != MUSA_SUCCESS || c != p0) return 22;
    if (muCtxGetDevice(&d) != MUSA_SUCCESS || d != 0) return 23;
    if (muDevicePrimaryCtxRelease_v2(0) != MUSA_SUCCESS || active(0) != 1) return 24;
    // musaSetDevice initialises the device (CUDA 12+); musaDeviceReset destroys the context.
    if (musaSetDevice(1) != musaSuccess || active(1) != 1) return 30;
    if (muCtxGetCurrent(&c) != MUSA_SUCCESS || c != r1) return 31;
    if (musaDeviceReset() != musaSuccess || active(1) != 0 || active(0) != 1) return 32;
    // A stream created through the runtime on another device initialises that one.
    musaStream_t rs = nullptr;
    if (musaStreamCreate(&rs) != musaSuccess || active(1) != 1) return 33;
    if (musaStreamDestroy(rs) != musaSuccess) return 34;
    return 0;
  });
  EXPECT_EQ(0, failed) << "first failed step";
}

TEST_F(DriverApi, PrimaryContextHandlesFlagsAndErrors) {
  MUcontext again = nullptr;
  ASSERT_MU(muDevicePrimaryCtxRetain(&again, 0));
  EXPECT_EQ(ctx0_, again);
  EXPECT_NE(ctx0_, ctx1_);
  EXPECT_NE(nullptr, ctx0_);
  ASSERT_MU(muDevicePrimaryCtxRelease_v2(0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDevicePrimaryCtxRetain(nullptr, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDevicePrimaryCtxRetain(&again, 2));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDevicePrimaryCtxRetain(&again, -1));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDevicePrimaryCtxRelease_v2(2));

  unsigned flags = 99;
  int act = -1;
  ASSERT_MU(muDevicePrimaryCtxGetState(1, &flags, &act));
  EXPECT_EQ(1, act);
  EXPECT_EQ(0u, flags);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDevicePrimaryCtxGetState(1, nullptr, &act));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDevicePrimaryCtxGetState(1, &flags, nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDevicePrimaryCtxGetState(2, &flags, &act));

  // _v2 sets flags while the context is active; one scheduling policy at most.
  ASSERT_MU(muDevicePrimaryCtxSetFlags_v2(1, MU_CTX_SCHED_BLOCKING_SYNC | MU_CTX_SYNC_MEMOPS));
  ASSERT_MU(muDevicePrimaryCtxGetState(1, &flags, &act));
  EXPECT_EQ(unsigned{MU_CTX_SCHED_BLOCKING_SYNC | MU_CTX_SYNC_MEMOPS}, flags);
  ASSERT_MU(muCtxPushCurrent_v2(ctx1_));
  unsigned cur = 0;
  ASSERT_MU(muCtxGetFlags(&cur));
  EXPECT_EQ(flags, cur);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muCtxGetFlags(nullptr));
  ASSERT_MU(muCtxPopCurrent_v2(nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muDevicePrimaryCtxSetFlags_v2(1, MU_CTX_SCHED_SPIN | MU_CTX_SCHED_YIELD));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDevicePrimaryCtxSetFlags_v2(1, 0x100));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDevicePrimaryCtxSetFlags_v2(2, 0));
  ASSERT_MU(muDevicePrimaryCtxGetState(1, &flags, &act));
  EXPECT_EQ(unsigned{MU_CTX_SCHED_BLOCKING_SYNC | MU_CTX_SYNC_MEMOPS}, flags) << "unchanged";
  ASSERT_MU(muDevicePrimaryCtxSetFlags_v2(1, 0));
}

TEST_F(DriverApi, PrimaryContextResetFreesTheDeviceAndKeepsFlags) {
  ASSERT_MU(muDevicePrimaryCtxSetFlags_v2(1, MU_CTX_SCHED_YIELD));
  ASSERT_MU(muCtxPushCurrent_v2(ctx1_));
  MUdeviceptr p = 0;
  ASSERT_MU(muMemAlloc_v2(&p, kMiB));
  ASSERT_MU(muCtxPopCurrent_v2(nullptr));
  int dev = -1;
  ASSERT_MU(muPointerGetAttribute(&dev, MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
  EXPECT_EQ(1, dev);
  ASSERT_MU(muDevicePrimaryCtxReset_v2(1));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muPointerGetAttribute(&dev, MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p))
      << "the reset freed the allocation";
  EXPECT_EQ(0, active(1));
  unsigned flags = 0;
  int act = 0;
  ASSERT_MU(muDevicePrimaryCtxGetState(1, &flags, &act));
  EXPECT_EQ(unsigned{MU_CTX_SCHED_YIELD}, flags);
  int cur = -1;
  ASSERT_RT(musaGetDevice(&cur));
  EXPECT_EQ(0, cur) << "the calling thread's device is unchanged";
  EXPECT_EQ(1, active(0)) << "other devices keep their context";
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDevicePrimaryCtxReset_v2(2));
  ASSERT_MU(muDevicePrimaryCtxSetFlags_v2(1, 0));
  ASSERT_MU(muDevicePrimaryCtxRetain(&ctx1_, 1));  // the reset dropped the fixture's retain
}

// ---- The current context ----------------------------------------------------------------------

TEST_F(DriverApi, SetPushPopMoveTheRuntimeDevice) {
  MUcontext c = nullptr;
  MUdevice d = -1;
  int rd = -1;
  ASSERT_MU(muCtxGetCurrent(&c));
  EXPECT_EQ(ctx0_, c) << "the runtime's context";

  ASSERT_MU(muCtxSetCurrent(ctx1_));
  ASSERT_MU(muCtxGetCurrent(&c));
  EXPECT_EQ(ctx1_, c);
  ASSERT_MU(muCtxGetDevice(&d));
  EXPECT_EQ(1, d);
  ASSERT_RT(musaGetDevice(&rd));
  EXPECT_EQ(1, rd) << "the runtime works in the current context";

  ASSERT_MU(muCtxPushCurrent_v2(ctx0_));
  ASSERT_MU(muCtxGetDevice(&d));
  EXPECT_EQ(0, d);
  ASSERT_RT(musaGetDevice(&rd));
  EXPECT_EQ(0, rd);
  ASSERT_MU(muCtxSetCurrent(ctx1_));  // replaces the top
  ASSERT_MU(muCtxGetDevice(&d));
  EXPECT_EQ(1, d);

  c = nullptr;
  ASSERT_MU(muCtxPopCurrent_v2(&c));
  EXPECT_EQ(ctx1_, c);
  ASSERT_MU(muCtxGetCurrent(&c));
  EXPECT_EQ(ctx1_, c);
  // Null pops the top: the set context replaced the runtime's, so none is current now.
  ASSERT_MU(muCtxSetCurrent(nullptr));
  ASSERT_MU(muCtxGetCurrent(&c));
  EXPECT_EQ(nullptr, c);
  EXPECT_EQ(MUSA_ERROR_INVALID_CONTEXT, muCtxGetDevice(&d));
  EXPECT_EQ(MUSA_ERROR_INVALID_CONTEXT, muCtxPopCurrent_v2(&c));
  ASSERT_MU(muCtxSetCurrent(nullptr)) << "no-op on an empty stack";
  ASSERT_RT(musaGetDevice(&rd));
  EXPECT_EQ(0, rd) << "the runtime's device before the driver's contexts";
  // The runtime's next call binds its context again.
  ASSERT_RT(musaFree(nullptr));
  ASSERT_MU(muCtxGetCurrent(&c));
  EXPECT_EQ(ctx0_, c);
  // Pushing over the runtime's context and popping brings it back.
  ASSERT_MU(muCtxPushCurrent_v2(ctx1_));
  ASSERT_MU(muCtxPopCurrent_v2(&c));
  EXPECT_EQ(ctx1_, c);
  ASSERT_MU(muCtxGetCurrent(&c));
  EXPECT_EQ(ctx0_, c);
  // Popping the runtime's own context unbinds it.
  ASSERT_MU(muCtxPopCurrent_v2(&c));
  EXPECT_EQ(ctx0_, c);
  ASSERT_MU(muCtxGetCurrent(&c));
  EXPECT_EQ(nullptr, c);
  ASSERT_RT(musaSetDevice(0));
}

TEST_F(DriverApi, CurrentContextErrorsAndQueries) {
  int not_a_context = 0;
  const MUcontext bogus = reinterpret_cast<MUcontext>(&not_a_context);
  EXPECT_EQ(MUSA_ERROR_INVALID_CONTEXT, muCtxSetCurrent(bogus));
  EXPECT_EQ(MUSA_ERROR_INVALID_CONTEXT, muCtxPushCurrent_v2(bogus));
  EXPECT_EQ(MUSA_ERROR_INVALID_CONTEXT, muCtxPushCurrent_v2(nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muCtxGetDevice(nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muCtxGetCurrent(nullptr));

  unsigned v = 0;
  ASSERT_MU(muCtxGetApiVersion(ctx1_, &v));
  EXPECT_EQ(3020u, v);
  v = 0;
  ASSERT_MU(muCtxGetApiVersion(nullptr, &v));  // the current context's
  EXPECT_EQ(3020u, v);
  EXPECT_EQ(MUSA_ERROR_INVALID_CONTEXT, muCtxGetApiVersion(bogus, &v));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muCtxGetApiVersion(ctx0_, nullptr));

  int least = 7, greatest = 7, rl = 0, rg = 0;
  ASSERT_MU(muCtxGetStreamPriorityRange(&least, &greatest));
  ASSERT_RT(musaDeviceGetStreamPriorityRange(&rl, &rg));
  EXPECT_EQ(rl, least);
  EXPECT_EQ(rg, greatest);
  EXPECT_LT(greatest, least) << "lower numbers are higher priorities";
  ASSERT_MU(muCtxGetStreamPriorityRange(nullptr, &greatest)) << "either output may be null";

  // muCtxSynchronize waits for the context's queued work.
  std::atomic<bool> gate{false};
  std::atomic<int> ran{0};
  MUstream s = nullptr;
  ASSERT_MU(muStreamCreate(&s, 0));
  ASSERT_MU(muLaunchHostFunc(s, wait_gate, &gate));
  ASSERT_MU(muLaunchHostFunc(s, bump, &ran));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.store(true, std::memory_order_release);
  });
  ASSERT_MU(muCtxSynchronize());
  EXPECT_EQ(1, ran.load());
  opener.join();
  ASSERT_MU(muStreamDestroy_v2(s));
}

TEST_F(DriverApi, EachThreadHasItsOwnCurrentContext) {
  ASSERT_MU(muCtxPushCurrent_v2(ctx1_));
  MUcontext seen = reinterpret_cast<MUcontext>(1);
  MUresult r = MUSA_ERROR_UNKNOWN;
  std::thread other([&] { r = muCtxGetCurrent(&seen); });
  other.join();
  ASSERT_MU(r);
  EXPECT_EQ(ctx0_, seen) << "a new thread gets the runtime's context of its device (0)";
  MUcontext mine = nullptr;
  ASSERT_MU(muCtxGetCurrent(&mine));
  EXPECT_EQ(ctx1_, mine);
}

// ---- Devices ----------------------------------------------------------------------------------

TEST_F(DriverApi, DeviceNameUuidMemoryAndPciIdentity) {
  for (int dev = 0; dev < 2; ++dev) {
    musaDeviceProp prop{};
    ASSERT_RT(musaGetDeviceProperties(&prop, dev));
    char name[256] = {};
    ASSERT_MU(muDeviceGetName(name, sizeof name, dev));
    EXPECT_STREQ(prop.name, name);
    char shortname[4] = {'x', 'x', 'x', 'x'};
    ASSERT_MU(muDeviceGetName(shortname, 4, dev));
    EXPECT_EQ(3u, std::strlen(shortname)) << "truncated and terminated";
    MUuuid u{}, u2{};
    ASSERT_MU(muDeviceGetUuid(&u, dev));
    ASSERT_MU(muDeviceGetUuid_v2(&u2, dev));
    EXPECT_EQ(0, std::memcmp(&u, &prop.uuid, sizeof u));
    EXPECT_EQ(0, std::memcmp(&u, &u2, sizeof u));
    size_t total = 0;
    ASSERT_MU(muDeviceTotalMem_v2(&total, dev));
    EXPECT_EQ(prop.totalGlobalMem, total);
    EXPECT_EQ(1024 * kMiB, total);
    char bus[32] = {}, rbus[32] = {};
    ASSERT_MU(muDeviceGetPCIBusId(bus, sizeof bus, dev));
    ASSERT_RT(musaDeviceGetPCIBusId(rbus, sizeof rbus, dev));
    EXPECT_STREQ(rbus, bus);
    MUdevice back = -1;
    ASSERT_MU(muDeviceGetByPCIBusId(&back, bus));
    EXPECT_EQ(dev, back);
  }
  MUuuid u0{}, u1{};
  ASSERT_MU(muDeviceGetUuid(&u0, 0));
  ASSERT_MU(muDeviceGetUuid(&u1, 1));
  EXPECT_NE(0, std::memcmp(&u0, &u1, sizeof u0)) << "devices differ";

  char name[16];
  size_t total = 0;
  MUuuid u{};
  MUdevice d = 0;
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGetName(nullptr, 16, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGetName(name, 0, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceGetName(name, 16, 2));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGetUuid(nullptr, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceGetUuid_v2(&u, -1));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceTotalMem_v2(nullptr, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceTotalMem_v2(&total, 2));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGetPCIBusId(nullptr, 16, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceGetPCIBusId(name, 16, 2));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGetByPCIBusId(&d, nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGetByPCIBusId(nullptr, "0000:11:00.0"));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGetByPCIBusId(&d, "not a bus id"));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceGetByPCIBusId(&d, "0000:7f:00.0"));

  int can = -1, rcan = -2;
  ASSERT_MU(muDeviceCanAccessPeer(&can, 0, 1));
  ASSERT_RT(musaDeviceCanAccessPeer(&rcan, 0, 1));
  EXPECT_EQ(rcan, can);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceCanAccessPeer(nullptr, 0, 1));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceCanAccessPeer(&can, 0, 2));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceCanAccessPeer(&can, -1, 0));
}

// ---- Memory -----------------------------------------------------------------------------------

TEST_F(DriverApi, AllocateInTheCurrentContextAndReportMemory) {
  size_t f0 = 0, t0 = 0, rf = 0, rt = 0;
  ASSERT_MU(muMemGetInfo_v2(&f0, &t0));
  ASSERT_RT(musaMemGetInfo(&rf, &rt));
  EXPECT_EQ(rf, f0);
  EXPECT_EQ(rt, t0);
  EXPECT_EQ(1024 * kMiB, t0);
  MUdeviceptr p = 0;
  ASSERT_MU(muMemAlloc_v2(&p, 8 * kMiB));
  EXPECT_NE(0u, p);
  size_t f1 = 0, t1 = 0;
  ASSERT_MU(muMemGetInfo_v2(&f1, &t1));
  EXPECT_GE(f0 - f1, 8 * kMiB);
  ASSERT_MU(muMemFree_v2(p));
  ASSERT_MU(muMemGetInfo_v2(&f1, &t1));
  EXPECT_EQ(f0, f1);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemFree_v2(p)) << "freed twice";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAlloc_v2(&p, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAlloc_v2(nullptr, 64));
  EXPECT_EQ(MUSA_ERROR_OUT_OF_MEMORY, muMemAlloc_v2(&p, 4096 * kMiB));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemGetInfo_v2(nullptr, &t1));

  // Device 1's context: memory comes from device 1.
  ASSERT_MU(muCtxPushCurrent_v2(ctx1_));
  size_t g0 = 0, g1 = 0;
  ASSERT_MU(muMemGetInfo_v2(&g0, &t1));
  ASSERT_MU(muMemAlloc_v2(&p, 4 * kMiB));
  ASSERT_MU(muMemGetInfo_v2(&g1, &t1));
  EXPECT_GE(g0 - g1, 4 * kMiB);
  ASSERT_MU(muCtxPopCurrent_v2(nullptr));
  int dev = -1;
  ASSERT_MU(muPointerGetAttribute(&dev, MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
  EXPECT_EQ(1, dev);
  ASSERT_MU(muMemGetInfo_v2(&f1, &t1));
  EXPECT_EQ(f0, f1) << "device 0 untouched";
  ASSERT_MU(muMemFree_v2(p));

  // Managed memory.
  MUdeviceptr m = 0;
  ASSERT_MU(muMemAllocManaged(&m, 4096, musaMemAttachGlobal));
  static_cast<char*>(hp(m))[100] = 42;  // reachable from the host
  int managed = 0;
  ASSERT_MU(muPointerGetAttribute(&managed, MU_POINTER_ATTRIBUTE_IS_MANAGED, m));
  EXPECT_EQ(1, managed);
  ASSERT_MU(muMemFree_v2(m));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAllocManaged(&m, 4096, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAllocManaged(&m, 0, musaMemAttachGlobal));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAllocManaged(nullptr, 64, musaMemAttachGlobal));
}

TEST_F(DriverApi, HostMemoryAllocRegisterAndDevicePointer) {
  void* h = nullptr;
  ASSERT_MU(muMemAllocHost_v2(&h, 4096));
  std::memset(h, 1, 4096);
  unsigned type = 0;
  ASSERT_MU(muPointerGetAttribute(&type, MU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp(h)));
  EXPECT_EQ(unsigned{MU_MEMORYTYPE_HOST}, type);
  MUdeviceptr d = 0;
  ASSERT_MU(muMemHostGetDevicePointer_v2(&d, h, 0));
  EXPECT_EQ(dp(h), d) << "unified addressing";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemHostGetDevicePointer_v2(&d, h, 1));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemHostGetDevicePointer_v2(nullptr, h, 0));
  ASSERT_MU(muMemFreeHost(h));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemFreeHost(h)) << "freed twice";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAllocHost_v2(nullptr, 64));

  void* h2 = nullptr;
  ASSERT_MU(muMemHostAlloc(&h2, 8192, musaHostAllocPortable | musaHostAllocMapped));
  ASSERT_MU(muMemHostGetDevicePointer_v2(&d, h2, 0));
  EXPECT_EQ(dp(h2), d);
  ASSERT_MU(muMemFreeHost(h2));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemHostAlloc(&h2, 64, 0x80));

  std::vector<char> buf(3 * 4096);
  ASSERT_MU(muMemHostRegister_v2(buf.data(), buf.size(), 0));
  ASSERT_MU(muPointerGetAttribute(&type, MU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp(buf.data() + 10)));
  EXPECT_EQ(unsigned{MU_MEMORYTYPE_HOST}, type);
  EXPECT_EQ(MUSA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
            muMemHostRegister_v2(buf.data(), buf.size(), 0));
  ASSERT_MU(muMemHostGetDevicePointer_v2(&d, buf.data(), 0));
  ASSERT_MU(muMemHostUnregister(buf.data()));
  EXPECT_EQ(MUSA_ERROR_HOST_MEMORY_NOT_REGISTERED, muMemHostUnregister(buf.data()));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemHostRegister_v2(nullptr, 4096, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemHostRegister_v2(buf.data(), 0, 0));
}

TEST_F(DriverApi, CopiesEveryDirectionAndBetweenDevices) {
  constexpr size_t n = 1 << 16;
  std::vector<unsigned char> src(n), back(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  MUdeviceptr a = 0, b = 0;
  ASSERT_MU(muMemAlloc_v2(&a, n));
  ASSERT_MU(muMemAlloc_v2(&b, n));
  ASSERT_MU(muMemcpyHtoD_v2(a, src.data(), n));
  ASSERT_MU(muMemcpyDtoD_v2(b, a, n));
  ASSERT_MU(muMemcpyDtoH_v2(back.data(), b, n));
  EXPECT_EQ(src, back);
  ASSERT_MU(muMemsetD8_v2(b, 0, n));
  ASSERT_MU(muMemcpy(b + 16, a + 16, 100));  // unified: any direction
  ASSERT_MU(muMemcpy(dp(back.data()), b, n));
  EXPECT_EQ(0, back[15]);
  EXPECT_EQ(src[16], back[16]);
  EXPECT_EQ(src[115], back[115]);
  EXPECT_EQ(0, back[116]);

  MUstream s = nullptr;
  ASSERT_MU(muStreamCreate(&s, 0));
  std::vector<unsigned char> out(n, 0);
  ASSERT_MU(muMemsetD8Async(b, 0xab, n, s));
  ASSERT_MU(muMemcpyHtoDAsync_v2(b, src.data(), n / 2, s));
  ASSERT_MU(muMemcpyDtoDAsync_v2(a, b, n, s));
  ASSERT_MU(muMemcpyAsync(a + 1, a, 1, s));
  ASSERT_MU(muMemcpyDtoHAsync_v2(out.data(), a, n, s));
  ASSERT_MU(muStreamSynchronize(s));
  EXPECT_EQ(src[0], out[0]);
  EXPECT_EQ(src[0], out[1]);
  EXPECT_EQ(src[n / 2 - 1], out[n / 2 - 1]);
  EXPECT_EQ(0xab, out[n / 2]);
  EXPECT_EQ(0xab, out[n - 1]);

  // Peer copies name each side's context.
  ASSERT_MU(muCtxPushCurrent_v2(ctx1_));
  MUdeviceptr c = 0;
  ASSERT_MU(muMemAlloc_v2(&c, n));
  ASSERT_MU(muCtxPopCurrent_v2(nullptr));
  ASSERT_MU(muMemcpyHtoD_v2(a, src.data(), n));
  ASSERT_MU(muMemcpyPeer(c, ctx1_, a, ctx0_, n));
  std::fill(back.begin(), back.end(), 0);
  ASSERT_MU(muMemcpyDtoH_v2(back.data(), c, n));
  EXPECT_EQ(src, back);
  ASSERT_MU(muMemsetD8_v2(a, 0, n));
  ASSERT_MU(muMemcpyPeerAsync(a, ctx0_, c, ctx1_, n, s));
  ASSERT_MU(muStreamSynchronize(s));
  ASSERT_MU(muMemcpyDtoH_v2(back.data(), a, n));
  EXPECT_EQ(src, back);
  int not_a_context = 0;
  const MUcontext bogus = reinterpret_cast<MUcontext>(&not_a_context);
  EXPECT_EQ(MUSA_ERROR_INVALID_CONTEXT, muMemcpyPeer(c, bogus, a, ctx0_, n));
  EXPECT_EQ(MUSA_ERROR_INVALID_CONTEXT, muMemcpyPeerAsync(c, ctx1_, a, nullptr, n, s));

  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemcpyHtoD_v2(a, nullptr, 4));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemcpyDtoH_v2(nullptr, a, 4));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemcpyDtoD_v2(0, a, 4));
  EXPECT_MU(muMemcpyHtoD_v2(a, nullptr, 0)) << "nothing to copy";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemcpyHtoD_v2(a, src.data(), 2 * n)) << "past the end";
  int not_a_stream = 0;
  EXPECT_EQ(MUSA_ERROR_INVALID_HANDLE,
            muMemcpyAsync(a, b, 4, reinterpret_cast<MUstream>(&not_a_stream)));

  ASSERT_MU(muStreamDestroy_v2(s));
  ASSERT_MU(muMemFree_v2(a));
  ASSERT_MU(muMemFree_v2(b));
  ASSERT_MU(muMemFree_v2(c));
}

TEST_F(DriverApi, MemsetsOfEachWidth) {
  MUdeviceptr p = 0;
  ASSERT_MU(muMemAlloc_v2(&p, 4096));
  auto* bytes = static_cast<unsigned char*>(hp(p));
  auto* halves = static_cast<uint16_t*>(hp(p));
  auto* words = static_cast<uint32_t*>(hp(p));
  ASSERT_MU(muMemsetD8_v2(p, 0x5a, 4096));
  EXPECT_EQ(0x5a, bytes[4095]);
  ASSERT_MU(muMemsetD16_v2(p + 2, 0xbeef, 10));
  EXPECT_EQ(0x5a5a, halves[0]);
  EXPECT_EQ(0xbeef, halves[1]);
  EXPECT_EQ(0xbeef, halves[10]);
  EXPECT_EQ(0x5a5a, halves[11]);
  ASSERT_MU(muMemsetD32_v2(p, 0xdeadbeef, 1024));
  EXPECT_EQ(0xdeadbeefu, words[1023]);

  MUstream s = nullptr;
  ASSERT_MU(muStreamCreate(&s, 0));
  std::atomic<bool> gate{false};
  ASSERT_MU(muLaunchHostFunc(s, wait_gate, &gate));
  ASSERT_MU(muMemsetD8Async(p, 0x11, 16, s));
  ASSERT_MU(muMemsetD16Async(p + 16, 0x2233, 8, s));
  EXPECT_EQ(0xdeadbeefu, words[0]) << "queued behind the gate";
  gate.store(true, std::memory_order_release);
  ASSERT_MU(muStreamSynchronize(s));
  EXPECT_EQ(0x11111111u, words[0]);
  EXPECT_EQ(0x2233, halves[8]);
  EXPECT_EQ(0x2233, halves[15]);
  EXPECT_EQ(0xdeadbeefu, words[8]);

  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemsetD16_v2(p + 1, 0, 4)) << "misaligned";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemsetD32_v2(p + 2, 0, 4)) << "misaligned";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemsetD16_v2(p, 0, 4096)) << "past the end";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemsetD16Async(p, 0, 4096, s));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemsetD8_v2(0, 0, 4));
  EXPECT_MU(muMemsetD16_v2(p, 0, 0));
  ASSERT_MU(muStreamDestroy_v2(s));
  ASSERT_MU(muMemFree_v2(p));
}

TEST_F(DriverApi, MemsetD16AsyncIsCapturedAndReplays) {
  MUdeviceptr p = 0;
  ASSERT_MU(muMemAlloc_v2(&p, 64));
  auto* halves = static_cast<uint16_t*>(hp(p));
  ASSERT_MU(muMemsetD8_v2(p, 0, 64));
  MUstream s = nullptr;
  ASSERT_MU(muStreamCreate(&s, musaStreamNonBlocking));
  const musaStream_t rs = reinterpret_cast<musaStream_t>(s);
  ASSERT_RT(musaStreamBeginCapture(rs, musaStreamCaptureModeGlobal));
  ASSERT_MU(muMemsetD16Async(p, 0x7777, 32, s));
  musaGraph_t g = nullptr;
  ASSERT_RT(musaStreamEndCapture(rs, &g));
  EXPECT_EQ(0, halves[0]) << "captured, not run";
  musaGraphExec_t exec = nullptr;
  ASSERT_RT(musaGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  for (int round = 0; round < 3; ++round) {
    std::memset(halves, 0, 64);
    ASSERT_RT(musaGraphLaunch(exec, rs));
    ASSERT_MU(muStreamSynchronize(s));
    EXPECT_EQ(0x7777, halves[0]) << "round " << round;
    EXPECT_EQ(0x7777, halves[31]) << "round " << round;
  }
  ASSERT_RT(musaGraphExecDestroy(exec));
  ASSERT_RT(musaGraphDestroy(g));
  ASSERT_MU(muStreamDestroy_v2(s));
  ASSERT_MU(muMemFree_v2(p));
}

// ---- Pointer attributes -----------------------------------------------------------------------

TEST_F(DriverApi, PointerAttributesOfRuntimeAllocations) {
  MUdeviceptr p = 0;
  ASSERT_MU(muMemAlloc_v2(&p, 1000));
  unsigned type = 0;
  int ordinal = -1, managed = -1, mapped = -1, ipc = -1;
  MUcontext ctx = nullptr;
  MUdeviceptr dptr = 0, start = 0;
  void* host = reinterpret_cast<void*>(1);
  size_t size = 0;
  unsigned long long id = 0, handles = 99;
  ASSERT_MU(muPointerGetAttribute(&type, MU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 10));
  EXPECT_EQ(unsigned{MU_MEMORYTYPE_DEVICE}, type);
  ASSERT_MU(muPointerGetAttribute(&ordinal, MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p + 10));
  EXPECT_EQ(0, ordinal);
  ASSERT_MU(muPointerGetAttribute(&ctx, MU_POINTER_ATTRIBUTE_CONTEXT, p));
  EXPECT_EQ(ctx0_, ctx);
  ASSERT_MU(muPointerGetAttribute(&dptr, MU_POINTER_ATTRIBUTE_DEVICE_POINTER, p + 10));
  EXPECT_EQ(p + 10, dptr);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muPointerGetAttribute(&host, MU_POINTER_ATTRIBUTE_HOST_POINTER, p))
      << "device memory has no host address";
  ASSERT_MU(muPointerGetAttribute(&start, MU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 999));
  EXPECT_EQ(p, start);
  ASSERT_MU(muPointerGetAttribute(&size, MU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 999));
  EXPECT_EQ(1000u, size);
  ASSERT_MU(muPointerGetAttribute(&managed, MU_POINTER_ATTRIBUTE_IS_MANAGED, p));
  EXPECT_EQ(0, managed);
  ASSERT_MU(muPointerGetAttribute(&mapped, MU_POINTER_ATTRIBUTE_MAPPED, p));
  EXPECT_EQ(1, mapped);
  ASSERT_MU(muPointerGetAttribute(&ipc, MU_POINTER_ATTRIBUTE_IS_LEGACY_MUSA_IPC_CAPABLE, p));
  EXPECT_EQ(1, ipc);
  ASSERT_MU(muPointerGetAttribute(&handles, MU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p));
  EXPECT_EQ(0u, handles);
  ASSERT_MU(muPointerGetAttribute(&id, MU_POINTER_ATTRIBUTE_BUFFER_ID, p));
  unsigned long long id_inside = 0;
  ASSERT_MU(muPointerGetAttribute(&id_inside, MU_POINTER_ATTRIBUTE_BUFFER_ID, p + 500));
  EXPECT_EQ(id, id_inside);

  // Buffer ids are never reused, even when an allocation lands at a freed one's address.
  std::set<unsigned long long> ids{id};
  ASSERT_MU(muMemFree_v2(p));
  for (int i = 0; i < 8; ++i) {
    MUdeviceptr q = 0;
    ASSERT_MU(muMemAlloc_v2(&q, 1000));
    unsigned long long qid = 0;
    ASSERT_MU(muPointerGetAttribute(&qid, MU_POINTER_ATTRIBUTE_BUFFER_ID, q));
    EXPECT_TRUE(ids.insert(qid).second) << "id " << qid << " reused";
    ASSERT_MU(muMemFree_v2(q));
  }

  // Host and managed memory.
  void* h = nullptr;
  ASSERT_MU(muMemAllocHost_v2(&h, 256));
  ASSERT_MU(muPointerGetAttribute(&host, MU_POINTER_ATTRIBUTE_HOST_POINTER, dp(h) + 8));
  EXPECT_EQ(static_cast<char*>(h) + 8, host);
  ASSERT_MU(muPointerGetAttribute(&ipc, MU_POINTER_ATTRIBUTE_IS_LEGACY_MUSA_IPC_CAPABLE, dp(h)));
  EXPECT_EQ(0, ipc);
  ASSERT_MU(muMemFreeHost(h));
  MUdeviceptr m = 0;
  ASSERT_MU(muMemAllocManaged(&m, 256, musaMemAttachGlobal));
  ASSERT_MU(muPointerGetAttribute(&type, MU_POINTER_ATTRIBUTE_MEMORY_TYPE, m));
  EXPECT_EQ(unsigned{MU_MEMORYTYPE_DEVICE}, type);
  ASSERT_MU(muPointerGetAttribute(&host, MU_POINTER_ATTRIBUTE_HOST_POINTER, m));
  EXPECT_EQ(hp(m), host);
  ASSERT_MU(muMemFree_v2(m));
}

TEST_F(DriverApi, PointerAttributesOfUnknownMemoryAndBadRequests) {
  int local = 0;
  const MUdeviceptr u = dp(&local);
  unsigned type = 77;
  int v = 77;
  MUcontext ctx = nullptr;
  for (MUpointer_attribute a :
       {MU_POINTER_ATTRIBUTE_CONTEXT, MU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        MU_POINTER_ATTRIBUTE_DEVICE_POINTER, MU_POINTER_ATTRIBUTE_HOST_POINTER,
        MU_POINTER_ATTRIBUTE_BUFFER_ID, MU_POINTER_ATTRIBUTE_IS_MANAGED,
        MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, MU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        MU_POINTER_ATTRIBUTE_RANGE_SIZE, MU_POINTER_ATTRIBUTE_MAPPED,
        MU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES}) {
    unsigned long long big = 0;
    EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muPointerGetAttribute(&big, a, u)) << "attribute " << a;
  }
  MUdeviceptr p = 0;
  ASSERT_MU(muMemAlloc_v2(&p, 64));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muPointerGetAttribute(&v, static_cast<MUpointer_attribute>(0), p));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muPointerGetAttribute(&v, static_cast<MUpointer_attribute>(999), p));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muPointerGetAttribute(nullptr, MU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));

  // The list form answers for unknown memory with "none" values.
  MUpointer_attribute attrs[] = {
      MU_POINTER_ATTRIBUTE_MEMORY_TYPE, MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
      MU_POINTER_ATTRIBUTE_CONTEXT,     MU_POINTER_ATTRIBUTE_RANGE_SIZE,
      MU_POINTER_ATTRIBUTE_IS_MANAGED,  MU_POINTER_ATTRIBUTE_HOST_POINTER};
  size_t range = 77;
  int managed = 77;
  void* host = reinterpret_cast<void*>(77);
  ctx = reinterpret_cast<MUcontext>(77);
  void* data[] = {&type, &v, &ctx, &range, &managed, &host};
  ASSERT_MU(muPointerGetAttributes(6, attrs, data, u));
  EXPECT_EQ(0u, type);
  EXPECT_EQ(-2, v) << "no device";
  EXPECT_EQ(nullptr, ctx);
  EXPECT_EQ(0u, range);
  EXPECT_EQ(0, managed);
  EXPECT_EQ(nullptr, host);
  // ... and like the single form for known memory; an attribute it cannot have is null.
  ASSERT_MU(muPointerGetAttributes(6, attrs, data, p + 4));
  EXPECT_EQ(unsigned{MU_MEMORYTYPE_DEVICE}, type);
  EXPECT_EQ(0, v);
  EXPECT_EQ(ctx0_, ctx);
  EXPECT_EQ(64u, range);
  EXPECT_EQ(nullptr, host);
  MUpointer_attribute bad[] = {MU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                               static_cast<MUpointer_attribute>(999)};
  void* bad_data[] = {&type, &v};
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muPointerGetAttributes(2, bad, bad_data, p));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muPointerGetAttributes(0, attrs, data, p));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muPointerGetAttributes(1, nullptr, data, p));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muPointerGetAttributes(1, attrs, nullptr, p));
  ASSERT_MU(muMemFree_v2(p));
}

TEST_F(DriverApi, PointerAttributesOfVirtualMemory) {
  constexpr size_t gran = 2 * kMiB;
  MUmemAllocationProp prop{};
  prop.type = MU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = MU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 1;
  prop.requestedHandleTypes = MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  MUmemGenericAllocationHandle h = 0;
  MUdeviceptr base = 0;
  ASSERT_MU(muMemCreate(&h, gran, &prop, 0));
  ASSERT_MU(muMemAddressReserve(&base, 3 * gran, 0, 0, 0));
  ASSERT_MU(muMemMap(base + gran, gran, 0, h, 0));
  MUmemAccessDesc access{};
  access.location.type = MU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = 1;
  access.flags = MU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ASSERT_MU(muMemSetAccess(base + gran, gran, &access, 1));

  const MUdeviceptr inside = base + gran + 100;
  MUdeviceptr start = 0, mbase = 0;
  size_t size = 0, msize = 0;
  int mapped = -1, ordinal = -1;
  unsigned long long handles = 0, id = 0, block = 0;
  ASSERT_MU(muPointerGetAttribute(&start, MU_POINTER_ATTRIBUTE_RANGE_START_ADDR, inside));
  EXPECT_EQ(base, start) << "the reservation";
  ASSERT_MU(muPointerGetAttribute(&size, MU_POINTER_ATTRIBUTE_RANGE_SIZE, inside));
  EXPECT_EQ(3 * gran, size);
  ASSERT_MU(muPointerGetAttribute(&mbase, MU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, inside));
  EXPECT_EQ(base + gran, mbase);
  ASSERT_MU(muPointerGetAttribute(&msize, MU_POINTER_ATTRIBUTE_MAPPING_SIZE, inside));
  EXPECT_EQ(gran, msize);
  ASSERT_MU(muPointerGetAttribute(&mapped, MU_POINTER_ATTRIBUTE_MAPPED, inside));
  EXPECT_EQ(1, mapped);
  ASSERT_MU(muPointerGetAttribute(&ordinal, MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, inside));
  EXPECT_EQ(1, ordinal);
  ASSERT_MU(muPointerGetAttribute(&handles, MU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, inside));
  EXPECT_EQ(unsigned{MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR}, handles);
  ASSERT_MU(muPointerGetAttribute(&id, MU_POINTER_ATTRIBUTE_BUFFER_ID, inside));
  ASSERT_MU(muPointerGetAttribute(&block, MU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, base + gran));
  EXPECT_EQ(id, block);

  // Reserved but not mapped: MAPPED is 0 and the range is known; the rest is invalid.
  ASSERT_MU(muPointerGetAttribute(&mapped, MU_POINTER_ATTRIBUTE_MAPPED, base));
  EXPECT_EQ(0, mapped);
  ASSERT_MU(muPointerGetAttribute(&start, MU_POINTER_ATTRIBUTE_RANGE_START_ADDR, base + 2 * gran));
  EXPECT_EQ(base, start);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muPointerGetAttribute(&ordinal, MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, base));

  ASSERT_MU(muMemUnmap(base + gran, gran));
  ASSERT_MU(muMemRelease(h));
  ASSERT_MU(muMemAddressFree(base, 3 * gran));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muPointerGetAttribute(&mapped, MU_POINTER_ATTRIBUTE_MAPPED, inside));
}

// ---- Streams and events -----------------------------------------------------------------------

TEST_F(DriverApi, StreamsCreateQueryWaitAndDestroy) {
  MUstream s = nullptr, nb = nullptr, hi = nullptr;
  ASSERT_MU(muStreamCreate(&s, 0));
  ASSERT_MU(muStreamCreate(&nb, musaStreamNonBlocking));
  unsigned flags = 99;
  ASSERT_MU(muStreamGetFlags(s, &flags));
  EXPECT_EQ(0u, flags);
  ASSERT_MU(muStreamGetFlags(nb, &flags));
  EXPECT_EQ(unsigned{musaStreamNonBlocking}, flags);
  int least = 0, greatest = 0, prio = 99;
  ASSERT_MU(muCtxGetStreamPriorityRange(&least, &greatest));
  ASSERT_MU(muStreamCreateWithPriority(&hi, 0, greatest));
  ASSERT_MU(muStreamGetPriority(hi, &prio));
  EXPECT_EQ(greatest, prio);
  ASSERT_MU(muStreamGetPriority(s, &prio));
  EXPECT_EQ(0, prio);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muStreamCreate(nullptr, 0));
  MUstream bad = nullptr;
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muStreamCreate(&bad, 0x80));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muStreamCreateWithPriority(nullptr, 0, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muStreamGetFlags(s, nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muStreamGetPriority(s, nullptr));

  // Work runs in order; Query says NOT_READY while it waits; a waiting stream waits.
  std::atomic<bool> gate{false};
  std::atomic<int> ran{0};
  MUevent e = nullptr;
  ASSERT_MU(muEventCreate(&e, musaEventDisableTiming));
  ASSERT_MU(muLaunchHostFunc(s, wait_gate, &gate));
  ASSERT_MU(muLaunchHostFunc(s, bump, &ran));
  ASSERT_MU(muEventRecord(e, s));
  ASSERT_MU(muStreamWaitEvent(nb, e, 0));
  ASSERT_MU(muLaunchHostFunc(nb, bump, &ran));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(MUSA_ERROR_NOT_READY, muStreamQuery(s));
  EXPECT_EQ(MUSA_ERROR_NOT_READY, muStreamQuery(nb)) << "waits for the event";
  EXPECT_EQ(MUSA_ERROR_NOT_READY, muEventQuery(e));
  EXPECT_EQ(0, ran.load());
  gate.store(true, std::memory_order_release);
  ASSERT_MU(muStreamSynchronize(nb));
  EXPECT_EQ(2, ran.load());
  ASSERT_MU(muStreamSynchronize(s));
  EXPECT_MU(muStreamQuery(s));
  EXPECT_MU(muEventQuery(e));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muLaunchHostFunc(s, nullptr, nullptr));

  // The legacy stream (null) works too.
  ASSERT_MU(muLaunchHostFunc(nullptr, bump, &ran));
  ASSERT_MU(muStreamSynchronize(nullptr));
  EXPECT_EQ(3, ran.load());

  ASSERT_MU(muEventDestroy_v2(e));
  ASSERT_MU(muStreamDestroy_v2(s));
  ASSERT_MU(muStreamDestroy_v2(nb));
  ASSERT_MU(muStreamDestroy_v2(hi));
  EXPECT_EQ(MUSA_ERROR_INVALID_HANDLE, muStreamDestroy_v2(nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_HANDLE, muStreamQuery(s)) << "destroyed";
}

TEST_F(DriverApi, EventsRecordSynchronizeAndTime) {
  MUevent a = nullptr, b = nullptr, untimed = nullptr;
  ASSERT_MU(muEventCreate(&a, 0));
  ASSERT_MU(muEventCreate(&b, musaEventBlockingSync));
  ASSERT_MU(muEventCreate(&untimed, musaEventDisableTiming));
  EXPECT_MU(muEventQuery(a)) << "never recorded: complete";
  MUstream s = nullptr;
  ASSERT_MU(muStreamCreate(&s, 0));
  std::atomic<bool> gate{false};
  ASSERT_MU(muEventRecord(a, s));
  ASSERT_MU(muLaunchHostFunc(s, wait_gate, &gate));
  ASSERT_MU(muEventRecord(b, s));
  ASSERT_MU(muEventRecord(untimed, s));
  float ms = -1;
  EXPECT_EQ(MUSA_ERROR_NOT_READY, muEventElapsedTime_v2(&ms, a, b));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gate.store(true, std::memory_order_release);
  });
  ASSERT_MU(muEventSynchronize(b));
  opener.join();
  ASSERT_MU(muEventElapsedTime_v2(&ms, a, b));
  EXPECT_GE(ms, 20.0f);
  EXPECT_LT(ms, 30000.0f);
  EXPECT_EQ(MUSA_ERROR_INVALID_HANDLE, muEventElapsedTime_v2(&ms, a, untimed));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muEventElapsedTime_v2(nullptr, a, b));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muEventCreate(nullptr, 0));
  MUevent bad = nullptr;
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muEventCreate(&bad, 0x100));
  ASSERT_MU(muEventDestroy_v2(a));
  ASSERT_MU(muEventDestroy_v2(b));
  ASSERT_MU(muEventDestroy_v2(untimed));
  EXPECT_EQ(MUSA_ERROR_INVALID_HANDLE, muEventDestroy_v2(nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_HANDLE, muEventQuery(a)) << "destroyed";
  ASSERT_MU(muStreamDestroy_v2(s));
}

// ---- Device attributes ------------------------------------------------------------------------

// (name, value) of every enumerator between `start` and `end` in a header, `_MAX` excluded.
std::vector<std::pair<std::string, int>> enumerators(const std::string& path,
                                                     const std::string& start,
                                                     const std::string& end,
                                                     const std::string& prefix) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<std::pair<std::string, int>> out;
  const size_t a = text.find(start);
  if (a == std::string::npos) return out;
  const size_t b = text.find(end, a);
  const std::string body = text.substr(a, b - a);
  const std::regex re("(" + prefix + "\\w+)\\s*=\\s*(\\d+)");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), re); it != std::sregex_iterator();
       ++it) {
    const std::string name = (*it)[1];
    if (name.size() < 4 || name.compare(name.size() - 4, 4, "_MAX") != 0)
      out.emplace_back(name, std::stoi((*it)[2]));
  }
  return out;
}

TEST_F(DriverApi, EveryAttributeCuda13DefinesHasAValue) {
  const auto runtime = enumerators(TORCHADA_CUDA13_INCLUDE "/driver_types.h",
                                   "enum __device_builtin__ cudaDeviceAttr", "};", "cudaDevAttr");
  const auto driver =
      enumerators(TORCHADA_CUDA13_INCLUDE "/cuda.h", "typedef enum CUdevice_attribute_enum",
                  "} CUdevice_attribute;", "CU_DEVICE_ATTRIBUTE_");
  ASSERT_GT(runtime.size(), 130u);
  ASSERT_GT(driver.size(), 140u);
  int rmax = 0, dmax = 0;
  for (const auto& [name, id] : runtime) {
    for (int dev = 0; dev < 2; ++dev) {
      int v = -12345;
      EXPECT_EQ(musaSuccess, musaDeviceGetAttribute(&v, static_cast<musaDeviceAttr>(id), dev))
          << name << " (" << id << ")";
      EXPECT_NE(-12345, v) << name;
    }
    rmax = std::max(rmax, id);
  }
  for (const auto& [name, id] : driver) {
    int v = -12345;
    EXPECT_MU(muDeviceGetAttribute(&v, static_cast<MUdevice_attribute>(id), 1))
        << name << " (" << id << ")";
    EXPECT_NE(-12345, v) << name;
    dmax = std::max(dmax, id);
  }
  // Ids no header defines are errors.
  int v = 0;
  for (int bad : {0, -1, rmax + 1, 100000}) {
    EXPECT_EQ(musaErrorInvalidValue,
              musaDeviceGetAttribute(&v, static_cast<musaDeviceAttr>(bad), 0))
        << bad;
  }
  musaGetLastError();
  for (int bad : {0, -1, dmax + 1, 100000})
    EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
              muDeviceGetAttribute(&v, static_cast<MUdevice_attribute>(bad), 0))
        << bad;
  // What the simulated device has is answered as such, not as "missing".
  ASSERT_MU(muDeviceGetAttribute(&v, MU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0));
  EXPECT_EQ(1, v);
  ASSERT_MU(muDeviceGetAttribute(&v, MU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT, 0));
  EXPECT_GE(v, 1);
  ASSERT_MU(muDeviceGetAttribute(&v, MU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, 0));
  EXPECT_EQ(0, v);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("TORCHADA_SIM_DEVICES", "2", 1);
  setenv("TORCHADA_SIM_MEMORY_MB", "1024", 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
