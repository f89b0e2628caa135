// Driver entry points through the preloaded shim (TORCHADA_BACKEND=sim, 2 devices of 1 GiB):
// every driver function PyTorch requires is fetched with cudaGetDriverEntryPoint and
// cudaGetDriverEntryPointByVersion (and the _ptsz exports) and called, its effects checked
// through the CUDA runtime and the pointers themselves. Built against NVIDIA's CUDA 13 headers and
// libcudart.so.13, exactly like an application.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// cudaGetDriverEntryPoint is deprecated in CUDA 13 but still exported and used (PyTorch falls back
// to it).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define ASSERT_CU(x) ASSERT_EQ(CUDA_SUCCESS, (x))
#define EXPECT_CU(x) EXPECT_EQ(CUDA_SUCCESS, (x))
#define ASSERT_RT(x) ASSERT_EQ(cudaSuccess, (x))

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// The driver functions PyTorch's c10/cuda/driver_api requires (plus what CUDA runtimes ask for).
const char* const kRequired[] = {
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuMemCreate",
    "cuMemMap",
    "cuMemUnmap",
    "cuMemRelease",
    "cuMemAddressReserve",
    "cuMemAddressFree",
    "cuMemSetAccess",
    "cuMemGetAllocationGranularity",
    "cuMemExportToShareableHandle",
    "cuMemImportFromShareableHandle",
    "cuMemRetainAllocationHandle",
    "cuMemGetAllocationPropertiesFromHandle",
    "cuMemGetAddressRange",
    "cuMemsetD32Async",
    "cuStreamWriteValue32",
    "cuGetErrorString",
    "cuGetProcAddress",
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuDeviceGetCount",
    "cuCtxGetCurrent",
};

using ByVersionFn = decltype(&cudaGetDriverEntryPointByVersion);
using EntryPointFn = decltype(&cudaGetDriverEntryPoint);

void* by_version(const char* name, unsigned version, unsigned long long flags = cudaEnableDefault,
                 cudaDriverEntryPointQueryResult* status = nullptr, cudaError_t* err = nullptr) {
  void* p = reinterpret_cast<void*>(0x1);  // must be overwritten
  cudaDriverEntryPointQueryResult st = cudaDriverEntryPointVersionNotSufficent;
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, version, flags, &st);
  if (status) *status = st;
  if (err) *err = e;
  return p;
}

// A driver function of the current ABI, the way PyTorch fetches it.
template <class F>
F fetch(const char* name) {
  cudaDriverEntryPointQueryResult st{};
  cudaError_t e{};
  void* p = by_version(name, 12000, cudaEnableDefault, &st, &e);
  EXPECT_EQ(cudaSuccess, e) << name;
  EXPECT_EQ(cudaDriverEntryPointSuccess, st) << name;
  EXPECT_NE(nullptr, p) << name;
  return reinterpret_cast<F>(p);
}

// libtorchada.so's own handle (already loaded through LD_PRELOAD).
void* shim_handle() {
  static void* h = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPointByVersion")), &info);
    return info.dli_fname ? dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  }();
  return h;
}

size_t free_memory() {
  size_t f = 0, t = 0;
  cudaMemGetInfo(&f, &t);
  return f;
}

TEST(DriverEntryPoints, EveryRequiredFunctionIsFoundAndHidden) {
  Dl_info shim{};
  ASSERT_NE(0, dladdr(reinterpret_cast<void*>(&cudaGetDriverEntryPointByVersion), &shim));
  ASSERT_NE(nullptr, std::strstr(shim.dli_fname, "libtorchada")) << "run with the shim preloaded";
  for (const char* name : kRequired) {
    cudaDriverEntryPointQueryResult st{};
    cudaError_t e{};
    void* v = by_version(name, 12000, cudaEnableDefault, &st, &e);
    ASSERT_EQ(cudaSuccess, e) << name;
    ASSERT_EQ(cudaDriverEntryPointSuccess, st) << name;
    ASSERT_NE(nullptr, v) << name;
    // The deprecated form asks for the runtime's own version: the same newest ABI.
    void* p = nullptr;
    st = cudaDriverEntryPointSymbolNotFound;
    ASSERT_EQ(cudaSuccess, cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &st)) << name;
    EXPECT_EQ(cudaDriverEntryPointSuccess, st) << name;
    EXPECT_EQ(v, p) << name;
    p = nullptr;
    ASSERT_EQ(cudaSuccess, cudaGetDriverEntryPoint(name, &p, cudaEnableLegacyStream, nullptr));
    EXPECT_EQ(v, p) << name;
    // The function handed out is libtorchada.so's export of that ABI (libcuda.so.1's API): the
    // same address dlsym gives for its exported name (the base name, or its newest _v<N>).
    Dl_info info{};
    ASSERT_NE(0, dladdr(v, &info)) << name;
    EXPECT_EQ(shim.dli_fbase, info.dli_fbase) << name;
    bool exported = false;
    for (const char* suffix : {"", "_v2", "_v3"}) {
      const std::string exported_name = std::string(name) + suffix;
      if (dlsym(shim_handle(), exported_name.c_str()) == v) exported = true;
    }
    EXPECT_TRUE(exported) << name << ": the pointer handed out is not libtorchada.so's export";
  }
}

TEST(DriverEntryPoints, VersionsPickTheAbi) {
  // cuStreamWriteValue32: the CUDA 8.0 ABI below 11.7, _v2 from 11.7; none before 8.0.
  void* v1 = by_version("cuStreamWriteValue32", 11000);
  void* v2 = by_version("cuStreamWriteValue32", 11070);
  ASSERT_NE(nullptr, v1);
  ASSERT_NE(nullptr, v2);
  EXPECT_NE(v1, v2);
  EXPECT_EQ(v2, by_version("cuStreamWriteValue32", 12080));
  cudaDriverEntryPointQueryResult st{};
  cudaError_t e{};
  EXPECT_EQ(nullptr, by_version("cuStreamWriteValue32", 7050, cudaEnableDefault, &st, &e));
  EXPECT_EQ(cudaSuccess, e);
  EXPECT_EQ(cudaDriverEntryPointVersionNotSufficent, st);
  // cuGetProcAddress: the 4-argument CUDA 11.3 form before 12.0.
  EXPECT_NE(by_version("cuGetProcAddress", 11030), by_version("cuGetProcAddress", 12000));
  // cuMemRetainAllocationHandle appeared in 11.0.
  EXPECT_EQ(nullptr, by_version("cuMemRetainAllocationHandle", 10020, cudaEnableDefault, &st));
  EXPECT_EQ(cudaDriverEntryPointVersionNotSufficent, st);
  // cuMemGetAddressRange before 3.2 is the 32-bit ABI, which the shim does not provide.
  EXPECT_EQ(nullptr, by_version("cuMemGetAddressRange", 3000, cudaEnableDefault, &st, &e));
  EXPECT_EQ(cudaSuccess, e);
  EXPECT_EQ(cudaDriverEntryPointSymbolNotFound, st);
  EXPECT_NE(nullptr, by_version("cuMemGetAddressRange", 3020));
}

TEST(DriverEntryPoints, PerThreadDefaultStreamForms) {
  void* legacy = by_version("cuMemsetD32Async", 12000, cudaEnableLegacyStream);
  void* ptsz = by_version("cuMemsetD32Async", 12000, cudaEnablePerThreadDefaultStream);
  ASSERT_NE(nullptr, legacy);
  ASSERT_NE(nullptr, ptsz);
  EXPECT_NE(legacy, ptsz);
  EXPECT_EQ(legacy, by_version("cuMemsetD32Async", 12000, cudaEnableDefault));
  // The _ptsz exports (what code built with --default-stream per-thread calls): the default is
  // per-thread there.
  auto ptsz_export =
      reinterpret_cast<ByVersionFn>(dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPointByVersion_ptsz"));
  auto ptsz_export_old =
      reinterpret_cast<EntryPointFn>(dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPoint_ptsz"));
  ASSERT_NE(nullptr, ptsz_export);
  ASSERT_NE(nullptr, ptsz_export_old);
  void* p = nullptr;
  ASSERT_RT(ptsz_export("cuMemsetD32Async", &p, 12000, cudaEnableDefault, nullptr));
  EXPECT_EQ(ptsz, p);
  ASSERT_RT(ptsz_export_old("cuMemsetD32Async", &p, cudaEnableDefault, nullptr));
  EXPECT_EQ(ptsz, p);
  ASSERT_RT(ptsz_export("cuMemsetD32Async", &p, 12000, cudaEnableLegacyStream, nullptr));
  EXPECT_EQ(legacy, p);
  // Functions without a per-thread form fall back to the legacy one.
  EXPECT_EQ(by_version("cuMemCreate", 12000),
            by_version("cuMemCreate", 12000, cudaEnablePerThreadDefaultStream));
  // Before the per-thread form existed (7.0) the legacy one is the answer.
  EXPECT_EQ(by_version("cuMemsetD32Async", 6050, cudaEnableLegacyStream),
            by_version("cuMemsetD32Async", 6050, cudaEnablePerThreadDefaultStream));
}

TEST(DriverEntryPoints, UnknownAndUnprovidedNamesAreNotFound) {
  cudaGetLastError();
  // Unsupported rows (arrays, driver graphs, multicast), a versioned exported name (callers ask
  // for the base name), names NVIDIA does not have.
  for (const char* name : {"cuArrayCreate", "cuNoSuchFunction", "cuMulticastCreate",
                           "cuMemGetAddressRange_v2", "cuGraphCreate", ""}) {
    cudaDriverEntryPointQueryResult st{};
    cudaError_t e{};
    EXPECT_EQ(nullptr, by_version(name, 12080, cudaEnableDefault, &st, &e)) << name;
    EXPECT_EQ(cudaSuccess, e) << name;
    EXPECT_EQ(cudaDriverEntryPointSymbolNotFound, st) << name;
    void* p = reinterpret_cast<void*>(0x1);
    st = cudaDriverEntryPointSuccess;
    EXPECT_EQ(cudaSuccess, cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &st)) << name;
    EXPECT_EQ(nullptr, p) << name;
    EXPECT_EQ(cudaDriverEntryPointSymbolNotFound, st) << name;
  }
  EXPECT_EQ(cudaSuccess, cudaGetLastError()) << "not found is not an error";
}

TEST(DriverEntryPoints, BadArgumentsAreErrors) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult st{};
  EXPECT_EQ(cudaErrorInvalidValue, cudaGetDriverEntryPoint(nullptr, &p, cudaEnableDefault, &st));
  EXPECT_EQ(cudaErrorInvalidValue,
            cudaGetDriverEntryPoint("cuMemCreate", nullptr, cudaEnableDefault, &st));
  EXPECT_EQ(cudaErrorInvalidValue,
            cudaGetDriverEntryPointByVersion(nullptr, &p, 12000, cudaEnableDefault, &st));
  EXPECT_EQ(cudaErrorInvalidValue,
            cudaGetDriverEntryPointByVersion("cuMemCreate", nullptr, 12000, 0, &st));
  EXPECT_EQ(cudaErrorInvalidValue,
            cudaGetDriverEntryPointByVersion("cuMemCreate", &p, 12000, 4, &st))
      << "unknown flags";
  EXPECT_EQ(cudaErrorInvalidValue,
            cudaGetDriverEntryPointByVersion("cuMemCreate", &p, 12000, 3, &st))
      << "legacy and per-thread at once";
  int driver = 0;
  ASSERT_RT(cudaDriverGetVersion(&driver));
  EXPECT_EQ(cudaErrorInvalidValue,
            cudaGetDriverEntryPointByVersion("cuMemCreate", &p, driver + 10, 0, &st))
      << "a version above the driver's";
  EXPECT_EQ(cudaSuccess, cudaGetDriverEntryPointByVersion("cuMemCreate", &p, driver, 0, &st));
  EXPECT_EQ(cudaErrorInvalidValue, cudaGetLastError()) << "errors are recorded as last error";
}

TEST(DriverCalls, InitVersionDevicesAndErrors) {
  auto init = fetch<PFN_cuInit_v2000>("cuInit");
  auto version = fetch<PFN_cuDriverGetVersion_v2020>("cuDriverGetVersion");
  auto count = fetch<PFN_cuDeviceGetCount_v2000>("cuDeviceGetCount");
  auto get = fetch<PFN_cuDeviceGet_v2000>("cuDeviceGet");
  auto ctx = fetch<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent");
  auto str = fetch<PFN_cuGetErrorString_v6000>("cuGetErrorString");
  auto name = fetch<PFN_cuGetErrorName_v6000>("cuGetErrorName");
  ASSERT_CU(init(0));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, init(1));
  int v = 0;
  ASSERT_CU(version(&v));
  EXPECT_EQ(CUDA_VERSION, v) << "the driver level the shim provides";
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, version(nullptr));
  int n = 0, rn = 0;
  ASSERT_CU(count(&n));
  ASSERT_RT(cudaGetDeviceCount(&rn));
  EXPECT_EQ(2, n);
  EXPECT_EQ(rn, n);
  CUdevice d = -1;
  ASSERT_CU(get(&d, 1));
  EXPECT_EQ(1, d);
  EXPECT_EQ(CUDA_ERROR_INVALID_DEVICE, get(&d, 2));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, get(nullptr, 0));
  // No context is current until the runtime uses a device (as in CUDA); cudaFree(0) does.
  CUcontext c = nullptr;
  ASSERT_RT(cudaFree(nullptr));
  ASSERT_CU(ctx(&c));
  EXPECT_NE(nullptr, c);
  const char* s = nullptr;
  ASSERT_CU(name(CUDA_ERROR_INVALID_VALUE, &s));
  EXPECT_STREQ("CUDA_ERROR_INVALID_VALUE", s) << "CUDA's names, not MUSA's";
  ASSERT_CU(name(CUDA_ERROR_OUT_OF_MEMORY, &s));
  EXPECT_STREQ("CUDA_ERROR_OUT_OF_MEMORY", s);
  s = "sentinel";
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, name(static_cast<CUresult>(555), &s));
  EXPECT_EQ(nullptr, s);
  ASSERT_CU(str(CUDA_ERROR_OUT_OF_MEMORY, &s));
  ASSERT_NE(nullptr, s);
  EXPECT_NE(std::string::npos, std::string(s).find("memory")) << s;
  s = "sentinel";
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, str(static_cast<CUresult>(555), &s));
  EXPECT_EQ(nullptr, s);
}

TEST(DriverCalls, AttributesAgreeWithTheRuntime) {
  auto attr = fetch<PFN_cuDeviceGetAttribute_v2000>("cuDeviceGetAttribute");
  const struct {
    CUdevice_attribute cu;
    cudaDeviceAttr rt;
  } pairs[] = {
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, cudaDevAttrWarpSize},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cudaDevAttrMultiProcessorCount},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cudaDevAttrMaxThreadsPerBlock},
      {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, cudaDevAttrPciBusId},
  };
  for (int dev = 0; dev < 2; ++dev) {
    for (const auto& p : pairs) {
      int v = -1, r = -2;
      ASSERT_CU(attr(&v, p.cu, dev));
      ASSERT_RT(cudaDeviceGetAttribute(&r, p.rt, dev));
      EXPECT_EQ(r, v) << "attribute " << p.cu;
    }
  }
  int v = -1;
  ASSERT_CU(attr(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
  EXPECT_EQ(1, v);
  ASSERT_CU(attr(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
  EXPECT_EQ(1, v);
  ASSERT_CU(attr(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0));
  EXPECT_EQ(0, v);
  EXPECT_EQ(CUDA_ERROR_INVALID_DEVICE, attr(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, attr(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, attr(&v, static_cast<CUdevice_attribute>(0), 0));
}

TEST(DriverCalls, ComputeCapabilityFollowsThePolicy) {
  auto attr = fetch<PFN_cuDeviceGetAttribute_v2000>("cuDeviceGetAttribute");
  int major = 0, minor = 0, rmajor = 0, rminor = 0;
  ASSERT_CU(attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
  ASSERT_CU(attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0));
  ASSERT_RT(cudaDeviceGetAttribute(&rmajor, cudaDevAttrComputeCapabilityMajor, 0));
  ASSERT_RT(cudaDeviceGetAttribute(&rminor, cudaDevAttrComputeCapabilityMinor, 0));
  EXPECT_EQ(rmajor, major);
  EXPECT_EQ(rminor, minor);
  // The simulated device is an MTT S4000 (mp_22, MUSA 2.2).
  const char* policy = std::getenv("TORCHADA_REPORT_CC");
  const std::string p = policy ? policy : "";
  if (p == "native") {
    EXPECT_EQ(2, major);
    EXPECT_EQ(2, minor);
  } else if (p == "9.0") {
    EXPECT_EQ(9, major);
    EXPECT_EQ(0, minor);
  } else {
    EXPECT_EQ(8, major) << "equivalent: mp_22 reports 8.0";
    EXPECT_EQ(0, minor);
  }
}

struct Vmm {
  PFN_cuMemGetAllocationGranularity_v10020 granularity =
      fetch<PFN_cuMemGetAllocationGranularity_v10020>("cuMemGetAllocationGranularity");
  PFN_cuMemAddressReserve_v10020 reserve =
      fetch<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve");
  PFN_cuMemAddressFree_v10020 free = fetch<PFN_cuMemAddressFree_v10020>("cuMemAddressFree");
  PFN_cuMemCreate_v10020 create = fetch<PFN_cuMemCreate_v10020>("cuMemCreate");
  PFN_cuMemRelease_v10020 release = fetch<PFN_cuMemRelease_v10020>("cuMemRelease");
  PFN_cuMemMap_v10020 map = fetch<PFN_cuMemMap_v10020>("cuMemMap");
  PFN_cuMemUnmap_v10020 unmap = fetch<PFN_cuMemUnmap_v10020>("cuMemUnmap");
  PFN_cuMemSetAccess_v10020 set_access = fetch<PFN_cuMemSetAccess_v10020>("cuMemSetAccess");
  PFN_cuMemExportToShareableHandle_v10020 export_handle =
      fetch<PFN_cuMemExportToShareableHandle_v10020>("cuMemExportToShareableHandle");
  PFN_cuMemImportFromShareableHandle_v10020 import_handle =
      fetch<PFN_cuMemImportFromShareableHandle_v10020>("cuMemImportFromShareableHandle");
  PFN_cuMemRetainAllocationHandle_v11000 retain =
      fetch<PFN_cuMemRetainAllocationHandle_v11000>("cuMemRetainAllocationHandle");
  PFN_cuMemGetAllocationPropertiesFromHandle_v10020 properties =
      fetch<PFN_cuMemGetAllocationPropertiesFromHandle_v10020>(
          "cuMemGetAllocationPropertiesFromHandle");
  PFN_cuMemGetAddressRange_v3020 range =
      fetch<PFN_cuMemGetAddressRange_v3020>("cuMemGetAddressRange");
};

CUmemAllocationProp prop_for(int device, bool exportable) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  p.requestedHandleTypes =
      exportable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  return p;
}

// PyTorch's expandable segments, in miniature: reserve, create, map, grant access, use through
// the runtime, share through a POSIX file descriptor, tear down.
TEST(DriverCalls, VirtualMemoryThroughFetchedPointers) {
  Vmm vm;
  ASSERT_RT(cudaSetDevice(1));
  CUmemAllocationProp prop = prop_for(1, true);
  size_t gran = 0;
  ASSERT_CU(vm.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  ASSERT_GT(gran, 0u);
  const size_t size = 2 * gran;
  const size_t before = free_memory();
  CUmemGenericAllocationHandle h = 0;
  ASSERT_CU(vm.create(&h, size, &prop, 0));
  EXPECT_EQ(before - size, free_memory()) << "device 1's memory is charged";
  CUdeviceptr base = 0;
  ASSERT_CU(vm.reserve(&base, 2 * size, 0, 0, 0));
  ASSERT_CU(vm.map(base, size, 0, h, 0));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = 1;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ASSERT_CU(vm.set_access(base, size, &access, 1));

  // Written through the pointer, read back by cudaMemcpy as device memory.
  auto* w = reinterpret_cast<uint32_t*>(base);
  for (size_t i = 0; i < size / 4; i += 97) w[i] = static_cast<uint32_t>(i ^ 0x5a5a5a5a);
  std::vector<uint32_t> host(size / 4);
  ASSERT_RT(cudaMemcpy(host.data(), w, size, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < size / 4; i += 97)
    ASSERT_EQ(static_cast<uint32_t>(i ^ 0x5a5a5a5a), host[i]);
  // And the other way: cudaMemcpy into the mapping, from a cudaMalloc buffer.
  void* dev = nullptr;
  ASSERT_RT(cudaMalloc(&dev, 4096));
  std::vector<uint32_t> pattern(1024);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint32_t>(i * 7 + 3);
  ASSERT_RT(cudaMemcpy(dev, pattern.data(), 4096, cudaMemcpyHostToDevice));
  ASSERT_RT(cudaMemcpy(w + 5000, dev, 4096, cudaMemcpyDeviceToDevice));
  EXPECT_EQ(0u * 7 + 3, w[5000]);
  EXPECT_EQ(1023u * 7 + 3, w[6023]);
  cudaPointerAttributes pa{};
  ASSERT_RT(cudaPointerGetAttributes(&pa, w + 1));
  EXPECT_EQ(cudaMemoryTypeDevice, pa.type);
  EXPECT_EQ(1, pa.device);

  CUdeviceptr rb = 0;
  size_t rs = 0;
  ASSERT_CU(vm.range(&rb, &rs, base + 100));
  EXPECT_EQ(base, rb);
  EXPECT_EQ(size, rs);
  ASSERT_CU(vm.range(&rb, &rs, reinterpret_cast<CUdeviceptr>(dev) + 10));
  EXPECT_EQ(reinterpret_cast<CUdeviceptr>(dev), rb);
  EXPECT_EQ(4096u, rs);
  CUmemGenericAllocationHandle again = 0;
  ASSERT_CU(vm.retain(&again, reinterpret_cast<void*>(base + gran + 8)));
  EXPECT_EQ(h, again);
  ASSERT_CU(vm.release(again));
  CUmemAllocationProp got{};
  ASSERT_CU(vm.properties(&got, h));
  EXPECT_EQ(CU_MEM_ALLOCATION_TYPE_PINNED, got.type);
  EXPECT_EQ(CU_MEM_LOCATION_TYPE_DEVICE, got.location.type);
  EXPECT_EQ(1, got.location.id);
  EXPECT_EQ(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, got.requestedHandleTypes);

  // Exported as a file descriptor and imported again: a second mapping of the same memory.
  int fd = -1;
  ASSERT_CU(vm.export_handle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  ASSERT_GE(fd, 0);
  CUmemGenericAllocationHandle imported = 0;
  ASSERT_CU(vm.import_handle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
  ASSERT_CU(vm.map(base + size, size, 0, imported, 0));
  ASSERT_CU(vm.set_access(base + size, size, &access, 1));
  auto* alias = reinterpret_cast<uint32_t*>(base + size);
  EXPECT_EQ(w[97], alias[97]);
  alias[11] = 0xfeedbeef;
  EXPECT_EQ(0xfeedbeefu, w[11]) << "both mappings are the same memory";

  ASSERT_CU(vm.unmap(base + size, size));
  ASSERT_CU(vm.release(imported));
  ASSERT_CU(vm.unmap(base, size));
  EXPECT_EQ(cudaErrorInvalidValue, cudaMemcpy(host.data(), w, 16, cudaMemcpyDeviceToHost))
      << "no longer device memory";
  ASSERT_RT(cudaFree(dev));
  ASSERT_CU(vm.release(h));
  EXPECT_EQ(before, free_memory()) << "freed with its last reference";
  ASSERT_CU(vm.free(base, 2 * size));
  ASSERT_RT(cudaSetDevice(0));
  cudaGetLastError();
}

TEST(DriverCalls, VirtualMemoryErrorsAreCudaErrors) {
  cudaGetLastError();
  Vmm vm;
  CUmemAllocationProp prop = prop_for(0, false);
  CUmemGenericAllocationHandle h = 0;
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, vm.create(&h, 12345, &prop, 0));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, vm.create(nullptr, 2 * kMiB, &prop, 0));
  EXPECT_EQ(CUDA_ERROR_OUT_OF_MEMORY, vm.create(&h, 2048 * kMiB, &prop, 0)) << "1 GiB devices";
  CUmemAllocationProp bad = prop_for(5, false);
  size_t g = 0;
  EXPECT_EQ(CUDA_ERROR_INVALID_DEVICE, vm.granularity(&g, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, vm.release(0xdeadbeef));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, vm.unmap(0x10000000, 2 * kMiB));
  int fd = -1;
  ASSERT_CU(vm.create(&h, 2 * kMiB, &prop, 0));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE,
            vm.export_handle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
      << "not created exportable";
  EXPECT_EQ(CUDA_ERROR_NOT_SUPPORTED, vm.export_handle(&fd, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  ASSERT_CU(vm.release(h));
  CUdeviceptr rb = 0;
  size_t rs = 0;
  int local = 0;
  EXPECT_EQ(CUDA_ERROR_NOT_FOUND, vm.range(&rb, &rs, reinterpret_cast<CUdeviceptr>(&local)));
  EXPECT_EQ(cudaSuccess, cudaGetLastError()) << "driver errors are not the runtime's last error";
}

TEST(DriverCalls, MemsetD32AndWriteValueOnStreams) {
  auto memset32 = fetch<PFN_cuMemsetD32Async_v3020>("cuMemsetD32Async");
  auto write32 = fetch<PFN_cuStreamWriteValue32_v11070>("cuStreamWriteValue32");
  cudaStream_t s;
  ASSERT_RT(cudaStreamCreate(&s));
  uint32_t* d = nullptr;
  ASSERT_RT(cudaMalloc(reinterpret_cast<void**>(&d), 1024 * 4));
  ASSERT_RT(cudaMemset(d, 0, 1024 * 4));
  ASSERT_CU(memset32(reinterpret_cast<CUdeviceptr>(d + 8), 0xa5a5f00du, 1000, s));
  ASSERT_CU(
      write32(s, reinterpret_cast<CUdeviceptr>(d + 1010), 1234, CU_STREAM_WRITE_VALUE_DEFAULT));
  std::vector<uint32_t> h(1024, 1);
  ASSERT_RT(cudaMemcpyAsync(h.data(), d, 1024 * 4, cudaMemcpyDeviceToHost, s));
  ASSERT_RT(cudaStreamSynchronize(s));
  for (int i = 0; i < 8; ++i) ASSERT_EQ(0u, h[i]) << i;
  for (int i = 8; i < 1008; ++i) ASSERT_EQ(0xa5a5f00du, h[i]) << i;
  EXPECT_EQ(0u, h[1008]);
  EXPECT_EQ(1234u, h[1010]);
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, memset32(reinterpret_cast<CUdeviceptr>(d) + 1, 0, 1, s));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, memset32(reinterpret_cast<CUdeviceptr>(d), 0, 1025, s));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, write32(s, reinterpret_cast<CUdeviceptr>(d), 0, 8));

  // The per-thread forms: the null stream is this thread's per-thread default stream.
  auto memset32_ptsz = reinterpret_cast<PFN_cuMemsetD32Async_v7000_ptsz>(
      by_version("cuMemsetD32Async", 12000, cudaEnablePerThreadDefaultStream));
  auto write32_ptsz = reinterpret_cast<PFN_cuStreamWriteValue32_v11070_ptsz>(
      by_version("cuStreamWriteValue32", 12000, cudaEnablePerThreadDefaultStream));
  ASSERT_NE(nullptr, memset32_ptsz);
  ASSERT_NE(nullptr, write32_ptsz);
  ASSERT_CU(memset32_ptsz(reinterpret_cast<CUdeviceptr>(d), 77, 4, nullptr));
  ASSERT_CU(write32_ptsz(nullptr, reinterpret_cast<CUdeviceptr>(d + 4), 88, 0));
  ASSERT_RT(cudaStreamSynchronize(cudaStreamPerThread));
  ASSERT_RT(cudaMemcpy(h.data(), d, 5 * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(77u, h[0]);
  EXPECT_EQ(77u, h[3]);
  EXPECT_EQ(88u, h[4]);
  ASSERT_RT(cudaStreamDestroy(s));
  ASSERT_RT(cudaFree(d));
}

TEST(DriverCalls, GetProcAddressAnswersFromTheSameTable) {
  auto gpa = fetch<PFN_cuGetProcAddress_v12000>("cuGetProcAddress");
  CUdriverProcAddressQueryResult st{};
  void* p = nullptr;
  ASSERT_CU(gpa("cuMemCreate", &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
  EXPECT_EQ(CU_GET_PROC_ADDRESS_SUCCESS, st);
  EXPECT_EQ(by_version("cuMemCreate", 12000), p);
  ASSERT_CU(gpa("cuMemsetD32Async", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
  EXPECT_EQ(by_version("cuMemsetD32Async", 12000, cudaEnablePerThreadDefaultStream), p);
  p = reinterpret_cast<void*>(0x1);
  EXPECT_CU(gpa("cuNoSuchThing", &p, 12000, 0, &st)) << "documented: success, null, status";
  EXPECT_EQ(nullptr, p);
  EXPECT_EQ(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, st);
  EXPECT_CU(gpa("cuMemRetainAllocationHandle", &p, 10020, 0, &st));
  EXPECT_EQ(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, st);
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, gpa("cuMemCreate", &p, CUDA_VERSION + 10, 0, &st));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, gpa("cuMemCreate", &p, 12000, 7, &st));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, gpa(nullptr, &p, 12000, 0, &st));
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, gpa("cuMemCreate", nullptr, 12000, 0, &st));
  ASSERT_CU(gpa("cuMemCreate", &p, 12000, 0, nullptr)) << "the status is optional";
  // The CUDA 11.3 form has no status: not found is an error there.
  auto gpa_v1 =
      reinterpret_cast<PFN_cuGetProcAddress_v11030>(by_version("cuGetProcAddress", 11030));
  ASSERT_NE(nullptr, gpa_v1);
  ASSERT_CU(gpa_v1("cuDeviceGet", &p, 11030, 0));
  EXPECT_EQ(by_version("cuDeviceGet", 11030), p);
  EXPECT_EQ(CUDA_ERROR_NOT_FOUND, gpa_v1("cuNoSuchThing", &p, 11030, 0));
  EXPECT_EQ(nullptr, p);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
