// libnvidia-ml.so.1 for MUSA machines: the part of NVML that CUDA programs call on every machine,
// answered from the CUDA runtime torchada serves, with NVML's own "not supported" answers where a
// MUSA device lacks the feature. PyTorch needs it: its expandable-segments allocator asks NVML
// about fabric memory and calls it without checking that it loaded, and a Moore Threads machine
// has no NVML. Loaded by libtorchada.so for the musa and sim backends only (core/backend.cc), so
// NVIDIA's NVML is never shadowed on an NVIDIA machine. Functions not listed here are not
// exported: a program that needs them fails to find them, as with an older NVML.
//
// Monitoring (memory in use, utilisation, clocks, power, temperature, the driver version: what
// torch.cuda.utilization / memory_usage / device_memory_used / temperature / power_draw /
// clock_rate and pynvml's users read) is forwarded to MTML, Moore Threads' management library,
// which libtorchada.so loads before this library (the simulator's for the sim backend). A CUDA
// device is matched to its MTML device by PCI domain, bus and device. Without MTML, or for what
// the MTML device does not report, the answer is NVML_ERROR_NOT_SUPPORTED. UUIDs ("GPU-" and the
// runtime's cudaDeviceProp::uuid, as NVIDIA's NVML and runtime agree) and compute capabilities
// come from the runtime.
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvml.h>

#include <dlfcn.h>
#include <link.h>
#include "mtml.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "mtml_functions.h"

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

// The runtime's properties of the device behind an NVML handle, for a call writing to `out`.
nvmlReturn_t properties_of(nvmlDevice_t device, const void* out, cudaDeviceProp* prop) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  int d = 0;
  if (out == nullptr || !device_of(device, &d)) return NVML_ERROR_INVALID_ARGUMENT;
  return cudaGetDeviceProperties(prop, d) == cudaSuccess ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

// `text` into the caller's buffer of `length` bytes, whole or not at all.
nvmlReturn_t copy_out(const char* text, char* out, unsigned length) {
  if (std::strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::snprintf(out, length, "%s", text);
  return NVML_SUCCESS;
}

// ---- MTML

struct Mtml {
#define TORCHADA_MTML_POINTER(f) decltype(&::f) f = nullptr;
  TORCHADA_MTML_FUNCTIONS(TORCHADA_MTML_POINTER)
#undef TORCHADA_MTML_POINTER
  MtmlSystem* system = nullptr;
  std::vector<MtmlDevice*> devices;  // by CUDA ordinal; null: no MTML device at its PCI address
};

// The path of a libmtml.so* loaded in the process (libtorchada.so loads it), or "".
std::string loaded_mtml_path() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const char* name = info->dlpi_name;
        const char* base = name != nullptr ? std::strrchr(name, '/') : nullptr;
        base = base != nullptr ? base + 1 : name;
        if (base == nullptr || std::strncmp(base, "libmtml.so", 10) != 0) return 0;
        *static_cast<std::string*>(out) = name;
        return 1;
      },
      &found);
  return found;
}

// The MTML in the process, initialised once with every CUDA device matched to its MTML device;
// null when there is none (or it cannot be initialised).
const Mtml* mtml() {
  static Mtml* m = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = loaded_mtml_path();
    void* h = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) return;
    auto* t = new Mtml();
    bool complete = true;
#define TORCHADA_MTML_RESOLVE(f)                         \
  t->f = reinterpret_cast<decltype(&::f)>(dlsym(h, #f)); \
  complete = complete && t->f != nullptr;
    TORCHADA_MTML_FUNCTIONS(TORCHADA_MTML_RESOLVE)
#undef TORCHADA_MTML_RESOLVE
    MtmlLibrary* lib = nullptr;
    unsigned count = 0;
    int cuda_count = 0;
    if (!complete || t->mtmlLibraryInit(&lib) != MTML_SUCCESS ||
        t->mtmlLibraryInitSystem(lib, &t->system) != MTML_SUCCESS ||
        t->mtmlLibraryCountDevice(lib, &count) != MTML_SUCCESS ||
        cudaGetDeviceCount(&cuda_count) != cudaSuccess) {
      delete t;
      return;
    }
    t->devices.assign(static_cast<size_t>(cuda_count), nullptr);
    for (int d = 0; d < cuda_count; ++d) {
      int domain = -1, bus = -1, slot = -1;
      cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, d);
      cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, d);
      cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, d);
      for (unsigned i = 0; i < count; ++i) {
        MtmlDevice* dev = nullptr;
        MtmlPciInfo pci{};
        if (t->mtmlLibraryInitDeviceByIndex(lib, i, &dev) == MTML_SUCCESS &&
            t->mtmlDeviceGetPciInfo(dev, &pci) == MTML_SUCCESS &&
            pci.segment == static_cast<unsigned>(domain) && pci.bus == static_cast<unsigned>(bus) &&
            pci.device == static_cast<unsigned>(slot)) {
          t->devices[static_cast<size_t>(d)] = dev;
          break;
        }
      }
    }
    cudaGetLastError();
    m = t;  // kept for the process's life, as the handles it holds
  });
  return m;
}

nvmlReturn_t from_mtml(MtmlReturn r) {
  switch (r) {
    case MTML_SUCCESS:
      return NVML_SUCCESS;
    case MTML_ERROR_DRIVER_NOT_LOADED:
      return NVML_ERROR_DRIVER_NOT_LOADED;
    case MTML_ERROR_INVALID_ARGUMENT:
      return NVML_ERROR_INVALID_ARGUMENT;
    case MTML_ERROR_NOT_SUPPORTED:
      return NVML_ERROR_NOT_SUPPORTED;
    case MTML_ERROR_NO_PERMISSION:
      return NVML_ERROR_NO_PERMISSION;
    case MTML_ERROR_INSUFFICIENT_SIZE:
      return NVML_ERROR_INSUFFICIENT_SIZE;
    case MTML_ERROR_NOT_FOUND:
      return NVML_ERROR_NOT_FOUND;
    case MTML_ERROR_INSUFFICIENT_MEMORY:
      return NVML_ERROR_MEMORY;
    case MTML_ERROR_TIMEOUT:
      return NVML_ERROR_TIMEOUT;
    default:
      return NVML_ERROR_UNKNOWN;
  }
}

// The checks every monitoring call makes: initialised, a valid handle and output, an MTML device
// for it (else NOT_SUPPORTED). Sets *m and *dev.
nvmlReturn_t monitored(nvmlDevice_t device, const void* out, const Mtml** m, MtmlDevice** dev) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  int d = 0;
  if (out == nullptr || !device_of(device, &d)) return NVML_ERROR_INVALID_ARGUMENT;
  *m = mtml();
  if (*m == nullptr || static_cast<size_t>(d) >= (*m)->devices.size() ||
      (*m)->devices[static_cast<size_t>(d)] == nullptr)
    return NVML_ERROR_NOT_SUPPORTED;
  *dev = (*m)->devices[static_cast<size_t>(d)];
  return NVML_SUCCESS;
}

nvmlReturn_t memory_of(nvmlDevice_t device, const void* out, unsigned long long* total,
                       unsigned long long* used) {
  const Mtml* m = nullptr;
  MtmlDevice* dev = nullptr;
  if (const nvmlReturn_t r = monitored(device, out, &m, &dev); r != NVML_SUCCESS) return r;
  MtmlMemory* mem = nullptr;
  MtmlReturn r = m->mtmlDeviceInitMemory(dev, &mem);
  if (r == MTML_SUCCESS) r = m->mtmlMemoryGetTotal(mem, total);
  if (r == MTML_SUCCESS) r = m->mtmlMemoryGetUsed(mem, used);
  return from_mtml(r);
}

// A GPU-object reading (utilisation, temperature, clocks).
using GpuReading = decltype(&::mtmlGpuGetClock);
nvmlReturn_t gpu_reading(nvmlDevice_t device, unsigned* out, GpuReading Mtml::*read) {
  const Mtml* m = nullptr;
  MtmlDevice* dev = nullptr;
  if (const nvmlReturn_t r = monitored(device, out, &m, &dev); r != NVML_SUCCESS) return r;
  MtmlGpu* gpu = nullptr;
  MtmlReturn r = m->mtmlDeviceInitGpu(dev, &gpu);
  if (r == MTML_SUCCESS) r = (m->*read)(gpu, out);
  return from_mtml(r);
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
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_MEMORY:
      return "Insufficient Memory";
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
  cudaDeviceProp prop{};
  if (const nvmlReturn_t r = properties_of(device, name, &prop); r != NVML_SUCCESS) return r;
  return copy_out(prop.name, name, length);
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

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                    unsigned int length) {
  cudaDeviceProp prop{};
  if (const nvmlReturn_t r = properties_of(device, uuid, &prop); r != NVML_SUCCESS) return r;
  unsigned char b[16];
  std::memcpy(b, prop.uuid.bytes, sizeof b);
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return copy_out(text, uuid, length);
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device,
                                                                     int* major, int* minor) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  int d = 0;
  if (major == nullptr || minor == nullptr || !device_of(device, &d))
    return NVML_ERROR_INVALID_ARGUMENT;
  if (cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, d) != cudaSuccess ||
      cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, d) != cudaSuccess)
    return NVML_ERROR_UNKNOWN;
  return NVML_SUCCESS;
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const Mtml* m = mtml();
  if (m == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  return from_mtml(m->mtmlSystemGetDriverVersion(m->system, version, length));
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                          nvmlMemory_t* memory) {
  unsigned long long total = 0, used = 0;
  const nvmlReturn_t r = memory_of(device, memory, &total, &used);
  if (r != NVML_SUCCESS) return r;
  memory->total = total;
  memory->used = used;
  memory->free = used > total ? 0 : total - used;
  return NVML_SUCCESS;
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                                             nvmlMemory_v2_t* memory) {
  if (memory != nullptr && memory->version != nvmlMemory_v2) {
    if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  unsigned long long total = 0, used = 0;
  const nvmlReturn_t r = memory_of(device, memory, &total, &used);
  if (r != NVML_SUCCESS) return r;
  memory->total = total;
  memory->reserved = 0;  // MTML reports none apart
  memory->used = used;
  memory->free = used > total ? 0 : total - used;
  return NVML_SUCCESS;
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                                nvmlUtilization_t* utilization) {
  const Mtml* m = nullptr;
  MtmlDevice* dev = nullptr;
  if (const nvmlReturn_t r = monitored(device, utilization, &m, &dev); r != NVML_SUCCESS) return r;
  MtmlGpu* gpu = nullptr;
  MtmlMemory* mem = nullptr;
  unsigned g = 0, mu = 0;
  MtmlReturn r = m->mtmlDeviceInitGpu(dev, &gpu);
  if (r == MTML_SUCCESS) r = m->mtmlGpuGetUtilization(gpu, &g);
  if (r == MTML_SUCCESS) r = m->mtmlDeviceInitMemory(dev, &mem);
  if (r == MTML_SUCCESS) r = m->mtmlMemoryGetUtilization(mem, &mu);
  if (r != MTML_SUCCESS) return from_mtml(r);
  utilization->gpu = g;
  utilization->memory = mu;
  return NVML_SUCCESS;
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                           nvmlTemperatureSensors_t sensorType,
                                                           unsigned int* temp) {
  if (sensorType != NVML_TEMPERATURE_GPU) {
    if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return gpu_reading(device, temp, &Mtml::mtmlGpuGetTemperature);
}

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device,
                                                          unsigned int* power) {
  const Mtml* m = nullptr;
  MtmlDevice* dev = nullptr;
  if (const nvmlReturn_t r = monitored(device, power, &m, &dev); r != NVML_SUCCESS) return r;
  return from_mtml(m->mtmlDeviceGetPowerUsage(dev, power));  // milliwatts, as NVML's
}

namespace {

// The graphics core's clock for the graphics and SM domains (MTML has one core clock); the memory
// and video clocks are not forwarded.
nvmlReturn_t clock_info(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock, bool max) {
  if (type == NVML_CLOCK_MEM || type == NVML_CLOCK_VIDEO) {
    if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
    return NVML_ERROR_NOT_SUPPORTED;
  }
  if (type != NVML_CLOCK_GRAPHICS && type != NVML_CLOCK_SM) {
    if (const nvmlReturn_t r = initialised(); r != NVML_SUCCESS) return r;
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return gpu_reading(device, clock, max ? &Mtml::mtmlGpuGetMaxClock : &Mtml::mtmlGpuGetClock);
}

}  // namespace

TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                         unsigned int* clock) {
  return clock_info(device, type, clock, false);
}
TORCHADA_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device,
                                                            nvmlClockType_t type,
                                                            unsigned int* clock) {
  return clock_info(device, type, clock, true);
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
