// Tests of the simulated MUSA driver (libmusa.so.1) through musa.h, checked against the simulated
// runtime and against the operating system (/proc/self/maps shows what a mapping really is).
// The process runs with 2 devices of 1 GiB (pinned in main before the runtime starts).
#include <driver_hooks.h>
#include <fcntl.h>
#include <musa.h>
#include <musa_runtime.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#define ASSERT_MU(x) ASSERT_EQ(MUSA_SUCCESS, (x))
#define EXPECT_MU(x) EXPECT_EQ(MUSA_SUCCESS, (x))
#define ASSERT_RT(x) ASSERT_EQ(musaSuccess, (x))

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGran = 2 * kMiB;

MUmemAllocationProp device_prop(int device, bool exportable = false) {
  MUmemAllocationProp p{};
  p.type = MU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = MU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  p.requestedHandleTypes =
      exportable ? MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : MU_MEM_HANDLE_TYPE_NONE;
  return p;
}

MUmemAccessDesc rw(int device) {
  MUmemAccessDesc d{};
  d.location.type = MU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = device;
  d.flags = MU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return d;
}

// The permissions column of /proc/self/maps for the mapping containing `p` ("" if none).
std::string protection(MUdeviceptr p) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) == 3 && p >= lo && p < hi)
      return perms;
  }
  return "";
}

size_t free_memory(int device) {
  int cur = 0;
  musaGetDevice(&cur);
  musaSetDevice(device);
  size_t f = 0, t = 0;
  musaMemGetInfo(&f, &t);
  musaSetDevice(cur);
  return f;
}

// A host function that holds its stream until the test opens the gate (at most 30 s).
void wait_gate(void* gate) {
  auto* open = static_cast<std::atomic<bool>*>(gate);
  for (int i = 0; i < 30000 && !open->load(std::memory_order_acquire); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// A reserved, mapped, read-write range backed by one new allocation.
struct Mapped {
  MUdeviceptr base = 0;
  size_t size = 0;
  MUmemGenericAllocationHandle handle = 0;

  MUresult create(size_t bytes, int device = 0, bool exportable = false) {
    size = bytes;
    MUmemAllocationProp prop = device_prop(device, exportable);
    MUresult r = muMemCreate(&handle, bytes, &prop, 0);
    if (r == MUSA_SUCCESS) r = muMemAddressReserve(&base, bytes, 0, 0, 0);
    if (r == MUSA_SUCCESS) r = muMemMap(base, bytes, 0, handle, 0);
    MUmemAccessDesc d = rw(device);
    if (r == MUSA_SUCCESS) r = muMemSetAccess(base, bytes, &d, 1);
    return r;
  }
  void destroy() {
    EXPECT_MU(muMemUnmap(base, size));
    EXPECT_MU(muMemRelease(handle));
    EXPECT_MU(muMemAddressFree(base, size));
  }
  uint32_t* words() const { return reinterpret_cast<uint32_t*>(base); }
};

class Driver : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_MU(muInit(0)); }
  void TearDown() override { musaGetLastError(); }
};

// ---- Initialisation, devices, errors ----------------------------------------------------------

TEST(DriverInit, CallsBeforeMuInitAreRefused) {
  // A fresh process (this binary re-executed) has not called muInit.
  const std::string cmd = "/proc/self/exe --uninit-probe";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/proc/self/exe", "sim_driver_test", "--uninit-probe", static_cast<char*>(nullptr));
    _exit(99);
  }
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status)) << cmd;
  EXPECT_EQ(0, WEXITSTATUS(status)) << "probe step that failed: " << WEXITSTATUS(status);
}

int uninit_probe() {
  int n = -1, v = 0;
  if (muDeviceGetCount(&n) != MUSA_ERROR_NOT_INITIALIZED) return 1;
  MUdeviceptr p = 0;
  if (muMemAddressReserve(&p, kGran, 0, 0, 0) != MUSA_ERROR_NOT_INITIALIZED) return 2;
  if (muDriverGetVersion(&v) != MUSA_SUCCESS || v <= 0) return 3;  // allowed before muInit
  if (muInit(1) != MUSA_ERROR_INVALID_VALUE) return 4;
  if (muDeviceGetCount(&n) != MUSA_ERROR_NOT_INITIALIZED) return 5;
  if (muInit(0) != MUSA_SUCCESS) return 6;
  if (muDeviceGetCount(&n) != MUSA_SUCCESS || n != 2) return 7;
  return 0;
}

TEST_F(Driver, VersionAndDevicesMatchTheRuntime) {
  int dv = 0, rv = 0;
  ASSERT_MU(muDriverGetVersion(&dv));
  ASSERT_RT(musaDriverGetVersion(&rv));
  EXPECT_EQ(rv, dv);
  int n = 0, rn = 0;
  ASSERT_MU(muDeviceGetCount(&n));
  ASSERT_RT(musaGetDeviceCount(&rn));
  EXPECT_EQ(2, n);
  EXPECT_EQ(rn, n);
  MUdevice d = -1;
  ASSERT_MU(muDeviceGet(&d, 1));
  EXPECT_EQ(1, d);
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceGet(&d, 2));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceGet(&d, -1));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGet(nullptr, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGetCount(nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDriverGetVersion(nullptr));
}

TEST_F(Driver, AttributesFromTheRuntimeAndTheDriver) {
  const struct {
    MUdevice_attribute mu;
    musaDeviceAttr rt;
  } shared[] = {
      {MU_DEVICE_ATTRIBUTE_WARP_SIZE, musaDevAttrWarpSize},
      {MU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, musaDevAttrMultiProcessorCount},
      {MU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, musaDevAttrComputeCapabilityMajor},
      {MU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, musaDevAttrComputeCapabilityMinor},
      {MU_DEVICE_ATTRIBUTE_PCI_BUS_ID, musaDevAttrPciBusId},
  };
  for (int dev = 0; dev < 2; ++dev) {
    for (const auto& a : shared) {
      int v = -1, r = -2;
      ASSERT_MU(muDeviceGetAttribute(&v, a.mu, dev));
      ASSERT_RT(musaDeviceGetAttribute(&r, a.rt, dev));
      EXPECT_EQ(r, v) << "attribute " << a.mu;
    }
  }
  int v = -1;
  ASSERT_MU(muDeviceGetAttribute(&v, MU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
  EXPECT_EQ(1, v);
  ASSERT_MU(
      muDeviceGetAttribute(&v, MU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 1));
  EXPECT_EQ(1, v);
  ASSERT_MU(muDeviceGetAttribute(&v, MU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0));
  EXPECT_EQ(0, v);
  ASSERT_MU(muDeviceGetAttribute(&v, MU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0));
  EXPECT_EQ(0, v);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muDeviceGetAttribute(&v, static_cast<MUdevice_attribute>(0), 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muDeviceGetAttribute(&v, MU_DEVICE_ATTRIBUTE_MAX, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muDeviceGetAttribute(&v, MU_DEVICE_ATTRIBUTE_WARP_SIZE, 2));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muDeviceGetAttribute(nullptr, MU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
}

TEST_F(Driver, ErrorNamesAndStrings) {
  const char* s = nullptr;
  ASSERT_MU(muGetErrorName(MUSA_ERROR_INVALID_VALUE, &s));
  EXPECT_STREQ("MUSA_ERROR_INVALID_VALUE", s);
  ASSERT_MU(muGetErrorName(MUSA_ERROR_STREAM_CAPTURE_MERGE, &s));
  EXPECT_STREQ("MUSA_ERROR_STREAM_CAPTURE_MERGE", s);
  ASSERT_MU(muGetErrorString(MUSA_ERROR_OUT_OF_MEMORY, &s));
  EXPECT_STREQ("out of memory", s);
  ASSERT_MU(muGetErrorString(MUSA_SUCCESS, &s));
  EXPECT_STRNE("", s);
  s = "sentinel";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muGetErrorString(static_cast<MUresult>(555), &s));
  EXPECT_EQ(nullptr, s);
  s = "sentinel";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muGetErrorName(static_cast<MUresult>(998), &s));
  EXPECT_EQ(nullptr, s);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muGetErrorName(MUSA_SUCCESS, nullptr));
}

TEST_F(Driver, CurrentContextFollowsTheRuntimeDevice) {
  MUcontext c0 = nullptr, c0b = nullptr, c1 = nullptr;
  ASSERT_RT(musaSetDevice(0));
  ASSERT_MU(muCtxGetCurrent(&c0));
  ASSERT_MU(muCtxGetCurrent(&c0b));
  ASSERT_RT(musaSetDevice(1));
  ASSERT_MU(muCtxGetCurrent(&c1));
  ASSERT_RT(musaSetDevice(0));
  EXPECT_NE(nullptr, c0);
  EXPECT_EQ(c0, c0b);
  EXPECT_NE(c0, c1);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muCtxGetCurrent(nullptr));
}

// ---- Virtual memory management ----------------------------------------------------------------

TEST_F(Driver, Granularity) {
  MUmemAllocationProp p = device_prop(1, true);
  size_t g = 0;
  ASSERT_MU(muMemGetAllocationGranularity(&g, &p, MU_MEM_ALLOC_GRANULARITY_MINIMUM));
  EXPECT_EQ(kGran, g);
  g = 0;
  ASSERT_MU(muMemGetAllocationGranularity(&g, &p, MU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  EXPECT_EQ(0u, g % kGran);
  // (An unknown option cannot be passed from C++ without undefined behaviour: the enum's only
  // values are 0 and 1.)
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muMemGetAllocationGranularity(nullptr, &p, MU_MEM_ALLOC_GRANULARITY_MINIMUM));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muMemGetAllocationGranularity(&g, nullptr, MU_MEM_ALLOC_GRANULARITY_MINIMUM));
  MUmemAllocationProp bad = device_prop(5);
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE,
            muMemGetAllocationGranularity(&g, &bad, MU_MEM_ALLOC_GRANULARITY_MINIMUM));
  bad = device_prop(0);
  bad.type = MU_MEM_ALLOCATION_TYPE_INVALID;
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muMemGetAllocationGranularity(&g, &bad, MU_MEM_ALLOC_GRANULARITY_MINIMUM));
  bad = device_prop(0);
  bad.requestedHandleTypes = MU_MEM_HANDLE_TYPE_FABRIC;
  EXPECT_EQ(MUSA_ERROR_NOT_SUPPORTED,
            muMemGetAllocationGranularity(&g, &bad, MU_MEM_ALLOC_GRANULARITY_MINIMUM));
  bad = device_prop(0);
  bad.requestedHandleTypes = static_cast<MUmemAllocationHandleType>(0x100);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muMemGetAllocationGranularity(&g, &bad, MU_MEM_ALLOC_GRANULARITY_MINIMUM));
  bad = device_prop(0);
  bad.location.type = MU_MEM_LOCATION_TYPE_HOST;
  EXPECT_EQ(MUSA_ERROR_NOT_SUPPORTED,
            muMemGetAllocationGranularity(&g, &bad, MU_MEM_ALLOC_GRANULARITY_MINIMUM));
}

TEST_F(Driver, ReserveCreateMapWriteReadUnmapRelease) {
  const size_t before = free_memory(0);
  MUmemAllocationProp prop = device_prop(0);
  MUmemGenericAllocationHandle h = 0;
  ASSERT_MU(muMemCreate(&h, 2 * kGran, &prop, 0));
  EXPECT_EQ(before - 2 * kGran, free_memory(0)) << "muMemCreate charges the device";
  MUdeviceptr base = 0;
  ASSERT_MU(muMemAddressReserve(&base, 4 * kGran, 0, 0, 0));
  EXPECT_EQ(0u, base % kGran);
  EXPECT_EQ("---p", protection(base)) << "a reservation is inaccessible address space";
  const MUdeviceptr at = base + kGran;  // map in the middle of the reservation
  ASSERT_MU(muMemMap(at, 2 * kGran, 0, h, 0));
  EXPECT_EQ("---s", protection(at)) << "mapped memory has no access until muMemSetAccess";
  MUmemAccessDesc d = rw(0);
  ASSERT_MU(muMemSetAccess(at, 2 * kGran, &d, 1));
  EXPECT_EQ("rw-s", protection(at));

  // Written through the pointer, read by the runtime as device memory, and the other way round.
  uint32_t* w = reinterpret_cast<uint32_t*>(at);
  const size_t n = 2 * kGran / 4;
  for (size_t i = 0; i < n; ++i) w[i] = static_cast<uint32_t>(i * 2654435761u);
  std::vector<uint32_t> back(n);
  ASSERT_RT(musaMemcpy(back.data(), w, 2 * kGran, musaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(static_cast<uint32_t>(i * 2654435761u), back[i]);
  std::vector<uint32_t> up(1024, 0xabcdef01u);
  ASSERT_RT(musaMemcpy(w + 100, up.data(), up.size() * 4, musaMemcpyHostToDevice));
  EXPECT_EQ(0xabcdef01u, w[100]);
  EXPECT_EQ(0xabcdef01u, w[1123]);
  musaPointerAttributes attr{};
  ASSERT_RT(musaPointerGetAttributes(&attr, w + 7));
  EXPECT_EQ(musaMemoryTypeDevice, attr.type);
  EXPECT_EQ(0, attr.device);
  EXPECT_EQ(musaErrorInvalidValue, musaFree(w)) << "musaFree refuses driver-mapped memory";

  MUdeviceptr rb = 0;
  size_t rs = 0;
  ASSERT_MU(muMemGetAddressRange_v2(&rb, &rs, at + 12345));
  EXPECT_EQ(at, rb);
  EXPECT_EQ(2 * kGran, rs);
  MUmemGenericAllocationHandle again = 0;
  ASSERT_MU(muMemRetainAllocationHandle(&again, reinterpret_cast<void*>(at + kGran + 3)));
  EXPECT_EQ(h, again);
  ASSERT_MU(muMemRelease(again));
  MUmemAllocationProp got{};
  ASSERT_MU(muMemGetAllocationPropertiesFromHandle(&got, h));
  EXPECT_EQ(MU_MEM_ALLOCATION_TYPE_PINNED, got.type);
  EXPECT_EQ(MU_MEM_LOCATION_TYPE_DEVICE, got.location.type);
  EXPECT_EQ(0, got.location.id);
  EXPECT_EQ(MU_MEM_HANDLE_TYPE_NONE, got.requestedHandleTypes);

  ASSERT_MU(muMemUnmap(at, 2 * kGran));
  EXPECT_EQ("---p", protection(at)) << "unmapped memory is reserved address space again";
  EXPECT_EQ(musaErrorInvalidValue,
            musaMemcpy(back.data(), w, 16, musaMemcpyDeviceToHost));  // no longer device memory
  EXPECT_EQ(MUSA_ERROR_NOT_FOUND, muMemGetAddressRange_v2(&rb, &rs, at));
  ASSERT_MU(muMemRelease(h));
  EXPECT_EQ(before, free_memory(0)) << "the memory is freed with its last reference";
  ASSERT_MU(muMemAddressFree(base, 4 * kGran));
  EXPECT_EQ("", protection(base));
}

TEST_F(Driver, ReleasedHandleKeepsMappedMemoryAlive) {
  const size_t before = free_memory(1);
  Mapped m;
  ASSERT_MU(m.create(kGran, 1));
  m.words()[5] = 55;
  ASSERT_MU(muMemRelease(m.handle));  // mapping keeps the memory
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemRelease(m.handle)) << "the handle itself is gone";
  MUmemAllocationProp p{};
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemGetAllocationPropertiesFromHandle(&p, m.handle));
  EXPECT_EQ(55u, m.words()[5]);
  m.words()[6] = 66;
  EXPECT_EQ(before - kGran, free_memory(1));
  MUmemGenericAllocationHandle h = 0;
  ASSERT_MU(muMemRetainAllocationHandle(&h, reinterpret_cast<void*>(m.base)));
  EXPECT_EQ(m.handle, h) << "the handle used to map the memory";
  ASSERT_MU(muMemGetAllocationPropertiesFromHandle(&p, h));
  EXPECT_EQ(1, p.location.id);
  ASSERT_MU(muMemUnmap(m.base, m.size));
  EXPECT_EQ(before - kGran, free_memory(1)) << "the retained handle keeps it";
  ASSERT_MU(muMemRelease(h));
  EXPECT_EQ(before, free_memory(1));
  ASSERT_MU(muMemAddressFree(m.base, m.size));
}

TEST_F(Driver, AdjacentMappingsBehaveAsOneRangeForCopies) {
  MUdeviceptr base = 0;
  ASSERT_MU(muMemAddressReserve(&base, 3 * kGran, 0, 0, 0));
  MUmemAllocationProp prop = device_prop(0);
  MUmemGenericAllocationHandle h[3];
  for (int i = 0; i < 3; ++i) {
    ASSERT_MU(muMemCreate(&h[i], kGran, &prop, 0));
    ASSERT_MU(muMemMap(base + i * kGran, kGran, 0, h[i], 0));
  }
  MUmemAccessDesc d = rw(0);
  ASSERT_MU(muMemSetAccess(base, 3 * kGran, &d, 1));  // three whole mappings at once
  std::vector<unsigned char> src(3 * kGran), dst(3 * kGran);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 31 + 7);
  ASSERT_RT(
      musaMemcpy(reinterpret_cast<void*>(base), src.data(), src.size(), musaMemcpyHostToDevice));
  ASSERT_RT(
      musaMemcpy(dst.data(), reinterpret_cast<void*>(base), dst.size(), musaMemcpyDeviceToHost));
  EXPECT_EQ(0, std::memcmp(src.data(), dst.data(), src.size()));
  // Each mapping is still its own range for muMemGetAddressRange.
  MUdeviceptr rb = 0;
  size_t rs = 0;
  ASSERT_MU(muMemGetAddressRange_v2(&rb, &rs, base + kGran + 1));
  EXPECT_EQ(base + kGran, rb);
  EXPECT_EQ(kGran, rs);
  // Unmapping the middle one splits the range.
  ASSERT_MU(muMemUnmap(base + kGran, kGran));
  EXPECT_EQ(musaErrorInvalidValue, musaMemcpy(dst.data(), reinterpret_cast<void*>(base), 2 * kGran,
                                              musaMemcpyDeviceToHost));
  ASSERT_RT(musaMemcpy(dst.data(), reinterpret_cast<void*>(base), kGran, musaMemcpyDeviceToHost));
  ASSERT_RT(musaMemcpy(dst.data(), reinterpret_cast<void*>(base + 2 * kGran), kGran,
                       musaMemcpyDeviceToHost));
  EXPECT_EQ(0, std::memcmp(src.data() + 2 * kGran, dst.data(), kGran));
  // And mapping it again merges them.
  ASSERT_MU(muMemMap(base + kGran, kGran, 0, h[1], 0));
  ASSERT_MU(muMemSetAccess(base + kGran, kGran, &d, 1));
  ASSERT_RT(
      musaMemcpy(dst.data(), reinterpret_cast<void*>(base), 3 * kGran, musaMemcpyDeviceToHost));
  EXPECT_EQ(0, std::memcmp(src.data(), dst.data(), src.size())) << "same physical memory again";
  for (int i = 0; i < 3; ++i) {
    ASSERT_MU(muMemUnmap(base + i * kGran, kGran));
    ASSERT_MU(muMemRelease(h[i]));
  }
  ASSERT_MU(muMemAddressFree(base, 3 * kGran));
}

TEST_F(Driver, BadVirtualMemoryRequestsAreErrors) {
  MUmemAllocationProp prop = device_prop(0);
  MUmemGenericAllocationHandle h = 0;
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemCreate(&h, kGran + 4096, &prop, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemCreate(&h, 0, &prop, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemCreate(&h, kGran, &prop, 1));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemCreate(nullptr, kGran, &prop, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemCreate(&h, kGran, nullptr, 0));
  EXPECT_EQ(MUSA_ERROR_OUT_OF_MEMORY, muMemCreate(&h, 1024 * kGran, &prop, 0))
      << "more than the device's 1 GiB";
  MUmemAllocationProp managed = device_prop(0);
  managed.type = MU_MEM_ALLOCATION_TYPE_MANAGED;
  EXPECT_EQ(MUSA_ERROR_NOT_SUPPORTED, muMemCreate(&h, kGran, &managed, 0));

  MUdeviceptr base = 0;
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAddressReserve(&base, 0, 0, 0, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAddressReserve(&base, 100, 0, 0, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAddressReserve(&base, kGran, 3 * kMiB, 0, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAddressReserve(&base, kGran, 0, 0, 1));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAddressReserve(nullptr, kGran, 0, 0, 0));
  ASSERT_MU(muMemAddressReserve(&base, 2 * kGran, 4 * kGran, 0, 0));
  EXPECT_EQ(0u, base % (4 * kGran)) << "explicit alignment";
  ASSERT_MU(muMemCreate(&h, kGran, &prop, 0));

  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemMap(base, kGran, kGran, h, 0)) << "offset must be 0";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemMap(base, kGran, 0, h, 1));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemMap(base + 4096, kGran, 0, h, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemMap(base, 2 * kGran, 0, h, 0)) << "larger than it";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemMap(base + 2 * kGran, kGran, 0, h, 0))
      << "outside the reservation";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemMap(base, kGran, 0, h + 1000, 0)) << "unknown handle";
  ASSERT_MU(muMemMap(base, kGran, 0, h, 0));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemMap(base, kGran, 0, h, 0)) << "already mapped";

  MUmemAccessDesc d = rw(0);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemSetAccess(base, 2 * kGran, &d, 1)) << "half unmapped";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemSetAccess(base, kGran, nullptr, 1));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemSetAccess(base, kGran, &d, 0));
  MUmemAccessDesc bad = rw(0);
  bad.flags = static_cast<MUmemAccess_flags>(2);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemSetAccess(base, kGran, &bad, 1));
  bad = rw(9);
  EXPECT_EQ(MUSA_ERROR_INVALID_DEVICE, muMemSetAccess(base, kGran, &bad, 1));
  MUmemAccessDesc ro = rw(0);
  ro.flags = MU_MEM_ACCESS_FLAGS_PROT_READ;
  ASSERT_MU(muMemSetAccess(base, kGran, &ro, 1));
  EXPECT_EQ("r--s", protection(base));

  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemUnmap(base, kGran / 2)) << "part of a mapping";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemUnmap(base + kGran, kGran)) << "not mapped";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAddressFree(base, 2 * kGran)) << "still mapped";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAddressFree(base, kGran)) << "wrong size";
  MUmemGenericAllocationHandle r = 0;
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muMemRetainAllocationHandle(&r, reinterpret_cast<void*>(base + kGran)));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemRetainAllocationHandle(nullptr, &r));
  int fd = -1;
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muMemExportToShareableHandle(&fd, h, MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
      << "not created exportable";
  EXPECT_EQ(MUSA_ERROR_NOT_SUPPORTED,
            muMemExportToShareableHandle(&fd, h, MU_MEM_HANDLE_TYPE_FABRIC, 0));
  ASSERT_MU(muMemUnmap(base, kGran));
  ASSERT_MU(muMemRelease(h));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemRelease(h));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemMap(base, kGran, 0, h, 0)) << "released handle";
  ASSERT_MU(muMemAddressFree(base, 2 * kGran));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemAddressFree(base, 2 * kGran)) << "freed twice";

  // Importing something that is not an exported allocation.
  MUmemGenericAllocationHandle imp = 0;
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muMemImportFromShareableHandle(&imp, reinterpret_cast<void*>(intptr_t{devnull}),
                                           MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(devnull);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muMemImportFromShareableHandle(&imp, reinterpret_cast<void*>(intptr_t{1000000}),
                                           MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  EXPECT_EQ(MUSA_ERROR_NOT_SUPPORTED,
            muMemImportFromShareableHandle(&imp, nullptr, MU_MEM_HANDLE_TYPE_FABRIC));
}

TEST_F(Driver, AddressHintIsHonouredWhenFree) {
  MUdeviceptr a = 0, b = 0;
  ASSERT_MU(muMemAddressReserve(&a, 2 * kGran, 0, 0, 0));
  const MUdeviceptr want = a + 64 * kGran;  // probably free
  ASSERT_MU(muMemAddressReserve(&b, kGran, 0, want, 0));
  if (b != want) {
    ASSERT_MU(muMemAddressFree(b, kGran));
    ASSERT_MU(muMemAddressFree(a, 2 * kGran));
    GTEST_SKIP() << "the hinted range was taken by something else";
  }
  MUdeviceptr c = 0;
  ASSERT_MU(muMemAddressReserve(&c, kGran, 0, a, 0));  // taken: placed elsewhere
  EXPECT_NE(a, c);
  ASSERT_MU(muMemAddressFree(c, kGran));
  ASSERT_MU(muMemAddressFree(b, kGran));
  ASSERT_MU(muMemAddressFree(a, 2 * kGran));
}

// Receives one descriptor over a UNIX socket.
int recv_fd(int sock) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl;
  msg.msg_controllen = sizeof ctl;
  if (recvmsg(sock, &msg, 0) != 1) return -1;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

bool send_fd(int sock, int fd) {
  char byte = 'x';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl;
  msg.msg_controllen = sizeof ctl;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(sock, &msg, 0) == 1;
}

// The child's side: import, map at its own address, check the parent's data, answer in place.
int import_and_answer(int fd) {
  MUmemGenericAllocationHandle h = 0;
  if (muMemImportFromShareableHandle(&h, reinterpret_cast<void*>(intptr_t{fd}),
                                     MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != MUSA_SUCCESS)
    return 10;
  close(fd);  // the handle does not need the caller's descriptor
  MUmemAllocationProp p{};
  if (muMemGetAllocationPropertiesFromHandle(&p, h) != MUSA_SUCCESS) return 11;
  if (p.location.id != 1 || p.requestedHandleTypes != MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return 12;
  MUdeviceptr base = 0;
  if (muMemAddressReserve(&base, 2 * kGran, 0, 0, 0) != MUSA_SUCCESS) return 13;
  if (muMemMap(base, 2 * kGran, 0, h, 0) != MUSA_SUCCESS) return 14;
  MUmemAccessDesc d = rw(1);
  if (muMemSetAccess(base, 2 * kGran, &d, 1) != MUSA_SUCCESS) return 15;
  auto* w = reinterpret_cast<uint32_t*>(base);
  for (uint32_t i = 0; i < 2 * kGran / 4; i += 1021)
    if (w[i] != i * 3 + 1) return 16;
  uint32_t viaRuntime = 0;
  if (musaMemcpy(&viaRuntime, w + 1021, 4, musaMemcpyDeviceToHost) != musaSuccess) return 17;
  if (viaRuntime != 1021 * 3 + 1) return 18;
  w[7] = 0xc0ffee;
  if (muMemUnmap(base, 2 * kGran) != MUSA_SUCCESS) return 19;
  if (muMemRelease(h) != MUSA_SUCCESS) return 20;
  if (muMemAddressFree(base, 2 * kGran) != MUSA_SUCCESS) return 21;
  return 0;
}

TEST_F(Driver, ExportImportAcrossProcessesWithScmRights) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "TSan cannot start threads in the child of a multi-threaded fork";
#endif
  int sv[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
  pid_t pid = fork();  // before the allocation exists: the child inherits nothing of it
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    const int fd = recv_fd(sv[1]);
    const int code = fd < 0 ? 9 : import_and_answer(fd);
    char done = static_cast<char>(code);
    (void)!write(sv[1], &done, 1);
    _exit(code);
  }
  close(sv[1]);
  Mapped m;
  ASSERT_MU(m.create(2 * kGran, 1, /*exportable=*/true));
  for (uint32_t i = 0; i < 2 * kGran / 4; ++i) m.words()[i] = i * 3 + 1;
  int fd = -1;
  ASSERT_MU(
      muMemExportToShareableHandle(&fd, m.handle, MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_fd(sv[0], fd));
  close(fd);
  char done = -1;
  ASSERT_EQ(1, read(sv[0], &done, 1));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  close(sv[0]);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "child step that failed";
  EXPECT_EQ(0xc0ffeeu, m.words()[7]) << "the child wrote the same physical memory";
  EXPECT_EQ(8u * 3 + 1, m.words()[8]);
  m.destroy();
}

TEST_F(Driver, ImportThroughProcFdOfAnotherProcess) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "TSan cannot start threads in the child of a multi-threaded fork";
#endif
  int to_parent[2], to_child[2];
  ASSERT_EQ(0, pipe2(to_parent, O_CLOEXEC));
  ASSERT_EQ(0, pipe2(to_child, O_CLOEXEC));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // exporter: creates, fills, publishes its descriptor number, waits
    Mapped m;
    int fd = -1;
    int code = m.create(kGran, 1, true) == MUSA_SUCCESS ? 0 : 30;
    if (code == 0) {
      for (uint32_t i = 0; i < kGran / 4; ++i) m.words()[i] = ~i;
      if (muMemExportToShareableHandle(&fd, m.handle, MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                       0) != MUSA_SUCCESS)
        code = 31;
    }
    (void)!write(to_parent[1], &fd, sizeof fd);
    char go = 0;
    (void)!read(to_child[0], &go, 1);  // the parent has imported it
    if (code == 0 && m.words()[1] != 4242u) code = 32;
    _exit(code);
  }
  int child_fd = -1;
  ASSERT_EQ(static_cast<ssize_t>(sizeof child_fd), read(to_parent[0], &child_fd, sizeof child_fd));
  ASSERT_GE(child_fd, 0);
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(pid), child_fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    char go = 1;
    (void)!write(to_child[1], &go, 1);
    waitpid(pid, nullptr, 0);
    GTEST_SKIP() << "cannot open " << path << ": " << std::strerror(errno);
  }
  MUmemGenericAllocationHandle h = 0;
  ASSERT_MU(muMemImportFromShareableHandle(&h, reinterpret_cast<void*>(intptr_t{fd}),
                                           MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
  MUdeviceptr base = 0;
  ASSERT_MU(muMemAddressReserve(&base, kGran, 0, 0, 0));
  ASSERT_MU(muMemMap(base, kGran, 0, h, 0));
  MUmemAccessDesc d = rw(1);
  ASSERT_MU(muMemSetAccess(base, kGran, &d, 1));
  auto* w = reinterpret_cast<uint32_t*>(base);
  EXPECT_EQ(~0u, w[0]);
  EXPECT_EQ(~12345u, w[12345]);
  w[1] = 4242;
  char go = 1;
  ASSERT_EQ(1, write(to_child[1], &go, 1));
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "exporter step that failed";
  ASSERT_MU(muMemUnmap(base, kGran));
  ASSERT_MU(muMemRelease(h));
  ASSERT_MU(muMemAddressFree(base, kGran));
  for (int p : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) close(p);
}

// ---- Memory queries and stream memory operations ---------------------------------------------

TEST_F(Driver, AddressRangeOfRuntimeAllocations) {
  void* p = nullptr;
  ASSERT_RT(musaMalloc(&p, 1000));
  MUdeviceptr b = 0;
  size_t s = 0;
  ASSERT_MU(muMemGetAddressRange_v2(&b, &s, reinterpret_cast<MUdeviceptr>(p) + 999));
  EXPECT_EQ(reinterpret_cast<MUdeviceptr>(p), b);
  EXPECT_EQ(1000u, s);
  ASSERT_MU(muMemGetAddressRange_v2(nullptr, &s, reinterpret_cast<MUdeviceptr>(p)));  // optional
  ASSERT_MU(muMemGetAddressRange_v2(&b, nullptr, reinterpret_cast<MUdeviceptr>(p)));
  int local = 0;
  EXPECT_EQ(MUSA_ERROR_NOT_FOUND,
            muMemGetAddressRange_v2(&b, &s, reinterpret_cast<MUdeviceptr>(&local)));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemGetAddressRange_v2(&b, &s, 0));
  ASSERT_RT(musaFree(p));
}

TEST_F(Driver, MemsetD32AndWriteValueRunInStreamOrder) {
  musaStream_t s;
  ASSERT_RT(musaStreamCreate(&s));
  uint32_t* d = nullptr;
  ASSERT_RT(musaMalloc(reinterpret_cast<void**>(&d), 4096 * 4));
  ASSERT_RT(musaMemset(d, 0, 4096 * 4));
  // Work queued behind a closed gate: nothing has run when the calls return.
  static std::atomic<bool> gate;  // outlives the test if an assertion returns early
  gate.store(false);
  ASSERT_RT(musaLaunchHostFunc(s, wait_gate, &gate));
  ASSERT_MU(muMemsetD32Async(reinterpret_cast<MUdeviceptr>(d + 1), 0xdeadbeefu, 4000, s));
  ASSERT_MU(muStreamWriteValue32_v2(s, reinterpret_cast<MUdeviceptr>(d + 4001), 77, 0));
  ASSERT_MU(muStreamWriteValue32(s, reinterpret_cast<MUdeviceptr>(d + 4002), 78,
                                 MU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
  EXPECT_EQ(0u, __atomic_load_n(d + 2, __ATOMIC_ACQUIRE)) << "ran before the stream reached it";
  gate.store(true, std::memory_order_release);
  std::vector<uint32_t> h(4096, 1);
  ASSERT_RT(musaMemcpyAsync(h.data(), d, 4096 * 4, musaMemcpyDeviceToHost, s));
  ASSERT_RT(musaStreamSynchronize(s));
  EXPECT_EQ(0u, h[0]);
  for (int i = 1; i <= 4000; ++i) ASSERT_EQ(0xdeadbeefu, h[i]) << i;
  EXPECT_EQ(77u, h[4001]);
  EXPECT_EQ(78u, h[4002]);
  EXPECT_EQ(0u, h[4003]);
  // The legacy default stream and the per-thread stream handle work too.
  ASSERT_MU(muMemsetD32Async(reinterpret_cast<MUdeviceptr>(d), 5, 1, nullptr));
  ASSERT_MU(
      muStreamWriteValue32_v2(MU_STREAM_PER_THREAD, reinterpret_cast<MUdeviceptr>(d + 1), 6, 0));
  ASSERT_RT(musaDeviceSynchronize());
  ASSERT_RT(musaStreamSynchronize(musaStreamPerThread));
  ASSERT_RT(musaMemcpy(h.data(), d, 8, musaMemcpyDeviceToHost));
  EXPECT_EQ(5u, h[0]);
  EXPECT_EQ(6u, h[1]);
  ASSERT_RT(musaStreamDestroy(s));
  ASSERT_RT(musaFree(d));
}

TEST_F(Driver, MemsetD32AcrossAdjacentMappings) {
  MUdeviceptr base = 0;
  ASSERT_MU(muMemAddressReserve(&base, 2 * kGran, 0, 0, 0));
  MUmemAllocationProp prop = device_prop(0);
  MUmemGenericAllocationHandle h[2];
  MUmemAccessDesc d = rw(0);
  for (int i = 0; i < 2; ++i) {
    ASSERT_MU(muMemCreate(&h[i], kGran, &prop, 0));
    ASSERT_MU(muMemMap(base + i * kGran, kGran, 0, h[i], 0));
    ASSERT_MU(muMemSetAccess(base + i * kGran, kGran, &d, 1));
  }
  const size_t first = kGran / 4 - 10;  // 20 words, straddling the two mappings
  ASSERT_MU(muMemsetD32Async(base + first * 4, 0x01020304u, 20, nullptr));
  ASSERT_RT(musaDeviceSynchronize());
  auto* w = reinterpret_cast<uint32_t*>(base);
  EXPECT_EQ(0u, w[first - 1]);
  for (size_t i = first; i < first + 20; ++i) EXPECT_EQ(0x01020304u, w[i]) << i;
  EXPECT_EQ(0u, w[first + 20]);
  for (int i = 0; i < 2; ++i) {
    ASSERT_MU(muMemUnmap(base + i * kGran, kGran));
    ASSERT_MU(muMemRelease(h[i]));
  }
  ASSERT_MU(muMemAddressFree(base, 2 * kGran));
}

TEST_F(Driver, BadStreamMemoryOperationsAreErrors) {
  uint32_t* d = nullptr;
  ASSERT_RT(musaMalloc(reinterpret_cast<void**>(&d), 64));
  const auto p = reinterpret_cast<MUdeviceptr>(d);
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemsetD32Async(p + 2, 1, 1, nullptr)) << "unaligned";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemsetD32Async(p, 1, 17, nullptr)) << "past the end";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemsetD32Async(p, 1, SIZE_MAX / 2, nullptr));
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muMemsetD32Async(0, 1, 1, nullptr));
  uint32_t host[4] = {};
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE,
            muMemsetD32Async(reinterpret_cast<MUdeviceptr>(host), 1, 1, nullptr))
      << "not memory the runtime knows";
  EXPECT_MU(muMemsetD32Async(p, 1, 0, nullptr)) << "nothing to do";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muStreamWriteValue32_v2(nullptr, p, 1, 2)) << "flags";
  EXPECT_EQ(MUSA_ERROR_INVALID_VALUE, muStreamWriteValue32_v2(nullptr, p + 64, 1, 0));
  int bogus = 0;
  EXPECT_EQ(MUSA_ERROR_INVALID_HANDLE,
            muMemsetD32Async(p, 1, 1, reinterpret_cast<MUstream>(&bogus)));
  ASSERT_RT(musaDeviceSynchronize());
  ASSERT_RT(musaFree(d));
}

TEST_F(Driver, MemsetD32IsCapturedIntoGraphsAndReplays) {
  musaStream_t s;
  ASSERT_RT(musaStreamCreateWithFlags(&s, musaStreamNonBlocking));
  uint32_t* d = nullptr;
  ASSERT_RT(musaMalloc(reinterpret_cast<void**>(&d), 256 * 4));
  ASSERT_RT(musaMemset(d, 0, 256 * 4));
  ASSERT_RT(musaStreamBeginCapture(s, musaStreamCaptureModeGlobal));
  ASSERT_MU(muMemsetD32Async(reinterpret_cast<MUdeviceptr>(d), 0x5a5a0001u, 256, s));
  ASSERT_MU(muStreamWriteValue32_v2(s, reinterpret_cast<MUdeviceptr>(d + 255), 9, 0));
  musaGraph_t g = nullptr;
  ASSERT_RT(musaStreamEndCapture(s, &g));
  EXPECT_EQ(0u, d[3]) << "capturing does not run the work";
  musaGraphExec_t e = nullptr;
  ASSERT_RT(musaGraphInstantiateWithFlags(&e, g, 0));
  for (int round = 0; round < 3; ++round) {
    ASSERT_RT(musaMemset(d, 0, 256 * 4));
    ASSERT_RT(musaGraphLaunch(e, s));
    ASSERT_RT(musaStreamSynchronize(s));
    EXPECT_EQ(0x5a5a0001u, d[0]) << "round " << round;
    EXPECT_EQ(0x5a5a0001u, d[254]);
    EXPECT_EQ(9u, d[255]);
  }
  ASSERT_RT(musaGraphExecDestroy(e));
  ASSERT_RT(musaGraphDestroy(g));
  ASSERT_RT(musaStreamDestroy(s));
  ASSERT_RT(musaFree(d));
}

TEST_F(Driver, ThreadsMapAndUnmapConcurrently) {
  constexpr int kThreads = 4;
  std::vector<std::thread> ts;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([t, &failures] {
      for (int round = 0; round < 10; ++round) {
        Mapped m;
        if (m.create(kGran, t % 2) != MUSA_SUCCESS) {
          failures[t]++;
          continue;
        }
        m.words()[t] = static_cast<uint32_t>(round);
        uint32_t back = 0;
        if (musaMemcpy(&back, m.words() + t, 4, musaMemcpyDeviceToHost) != musaSuccess ||
            back != static_cast<uint32_t>(round))
          failures[t]++;
        if (muMemUnmap(m.base, m.size) != MUSA_SUCCESS || muMemRelease(m.handle) != MUSA_SUCCESS ||
            muMemAddressFree(m.base, m.size) != MUSA_SUCCESS)
          failures[t]++;
      }
    });
  }
  for (auto& th : ts) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(0, failures[t]) << "thread " << t;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("TORCHADA_SIM_DEVICES", "2", 1);
  setenv("TORCHADA_SIM_MEMORY_MB", "1024", 1);
  if (argc > 1 && std::strcmp(argv[1], "--uninit-probe") == 0) return uninit_probe();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
