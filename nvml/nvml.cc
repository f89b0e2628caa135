// libnvidia-ml.so.1 for MUSA machines: the part of NVML that CUDA programs call on every machine,
// answered from the CUDA runtime torchada serves, with NVML's own "not supported" answers where a
// MUSA device lacks the feature. PyTorch needs it: its expandable-segments allocator asks NVML
// about fabric memory and calls it without checking that it loaded, and a Moore Threads machine
// has no NVML. Loaded by libtorchada.so for the musa and sim backends only (core/backend.cc), so
// NVIDIA's NVML is never shadowed on an NVIDIA machine. Functions not listed here are not
// exported: a program that needs them fails to find them, as with an older NVML.
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvml.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#define TORCHADA_NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::atomic<int> g_init_count{0};

// Handles are 1 + the CUDA device ordinal (never null).
nvmlDevice_t handle_of(int device) {
  return reinterpret_cast<nvmlDevice_t>(static_cast<uintptr_t>(device) + 1);
}
bool device_of(nvmlDevice_t h, int* device) {
  const auto v = reinterpret_cast<uintptr_t>(h);
  int count = 0;
  if (v == 0 || cudaGetDeviceCount(&count) != cudaSuccess || v > static_cast<uintptr_t>(count))
    return false;
  *device = static_cast<int>(v - 1);
  return true;
}

nvmlReturn_t initialised() {
  return g_init_count.load(std::memory_order_acquire) > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

}  // namespace

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  g_init_count.fetch_add(1, std::memory_order_acq_rel);
  return NVML_SUCCESS;
}
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int) { return nvmlInit_v2(); }

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  int n = g_init_count.load(std::memory_order_acquire);
  while (n > 0 && !g_init_count.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) {
  }
  return n > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

TORCHADA_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported (on MUSA, through torchada)";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  if (cudaDriverVersion == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return cuDriverGetVersion(cudaDriverVersion) == CUDA_SUCCESS ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* cudaDriverVersion) {
  return nvmlSystemGetCudaDriverVersion_v2(cudaDriverVersion);
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  if (deviceCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return NVML_ERROR_UNKNOWN;
  *deviceCount = static_cast<unsigned>(n);
  return NVML_SUCCESS;
}
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* deviceCount) {
  return nvmlDeviceGetCount_v2(deviceCount);
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                nvmlDevice_t* device) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  int n = 0;
  if (device == nullptr || cudaGetDeviceCount(&n) != cudaSuccess ||
      index >= static_cast<unsigned>(n))
    return NVML_ERROR_INVALID_ARGUMENT;
  *device = handle_of(static_cast<int>(index));
  return NVML_SUCCESS;
}
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
                                                             nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId,
                                                                   nvmlDevice_t* device) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  if (pciBusId == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  int d = -1;
  if (cudaDeviceGetByPCIBusId(&d, pciBusId) != cudaSuccess) {
    cudaGetLastError();
    return NVML_ERROR_NOT_FOUND;
  }
  *device = handle_of(d);
  return NVML_SUCCESS;
}
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* pciBusId,
                                                                nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  int d = 0;
  if (index == nullptr || !device_of(device, &d)) return NVML_ERROR_INVALID_ARGUMENT;
  *index = static_cast<unsigned>(d);
  return NVML_SUCCESS;
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                    unsigned int length) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  int d = 0;
  if (name == nullptr || !device_of(device, &d)) return NVML_ERROR_INVALID_ARGUMENT;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) return NVML_ERROR_UNKNOWN;
  if (std::strlen(prop.name) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::snprintf(name, length, "%s", prop.name);
  return NVML_SUCCESS;
}

// A GPU outside any NVLink fabric: NVML's own answer for one is success with the state "not
// supported", which is what callers (PyTorch's allocator) test for.
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device,
                                                              nvmlGpuFabricInfoV_t* gpuFabricInfo) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  int d = 0;
  if (gpuFabricInfo == nullptr || !device_of(device, &d)) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned version = gpuFabricInfo->version;
  std::memset(gpuFabricInfo, 0, sizeof *gpuFabricInfo);
  gpuFabricInfo->version = version;
  gpuFabricInfo->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
  gpuFabricInfo->status = NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

// Per-process accounting, NVLink: nothing MUSA exposes through torchada.
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t, unsigned int*,
                                                                       nvmlProcessInfo_v1_t*) {
  return initialised() == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_UNINITIALIZED;
}
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t,
                                                                          unsigned int*,
                                                                          nvmlProcessInfo_t*) {
  return initialised() == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_UNINITIALIZED;
}
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t, unsigned int,
                                                                      nvmlIntNvLinkDeviceType_t*) {
  return initialised() == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_UNINITIALIZED;
}
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t, unsigned int,
                                                                      nvmlPciInfo_t*) {
  return initialised() == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_UNINITIALIZED;
}

// Every export has NVML's declared type (a drift is a compile error).
static_assert(std::is_same_v<decltype(&nvmlInit_v2), nvmlReturn_t (*)()>);
