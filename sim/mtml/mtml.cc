// The simulated MTML: a library object holding one device object per simulated device (each with
// its GPU and memory objects, so that handles stay valid until mtmlLibraryShutDown), answered from
// the simulated runtime. Utilisation is the share of wall time the device's streams spent running
// work since the previous reading of that device (at least 1 ms apart; the first since the
// library's initialisation), capped at 100; the simulated device's memory is the host's, so its
// memory utilisation is the same share. A simulated device has no sensors: temperature and power
// are MTML_ERROR_NOT_SUPPORTED, as on a device without them.
#include "mtml.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "sim_ext.h"

struct MtmlGpu {
  MtmlDevice* device;
};
struct MtmlMemory {
  MtmlDevice* device;
};
struct MtmlSystem {
  int unused;
};
struct MtmlDevice {
  unsigned index = 0;
  MtmlGpu gpu{};
  MtmlMemory memory{};
  std::mutex mu;  // the utilisation sample
  std::chrono::steady_clock::time_point sampled;
  unsigned long long busy_ns = 0;
  unsigned utilization = 0;
};
struct MtmlLibrary {
  MtmlSystem system{};
  std::vector<std::unique_ptr<MtmlDevice>> devices;
};

namespace {

using Clock = std::chrono::steady_clock;

bool properties(const MtmlDevice* dev, musaDeviceProp* p) {
  return musaGetDeviceProperties(p, static_cast<int>(dev->index)) == musaSuccess;
}

MtmlReturn copy_string(const char* s, char* out, unsigned length) {
  if (std::strlen(s) + 1 > length) return MTML_ERROR_INSUFFICIENT_SIZE;
  std::snprintf(out, length, "%s", s);
  return MTML_SUCCESS;
}

MtmlReturn utilization(MtmlDevice* dev, unsigned* out) {
  unsigned long long busy = 0;
  if (musaSimDeviceBusyTime(static_cast<int>(dev->index), &busy) != musaSuccess)
    return MTML_ERROR_DRIVER_FAILURE;
  std::lock_guard<std::mutex> lock(dev->mu);
  const Clock::time_point now = Clock::now();
  const auto wall =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - dev->sampled).count();
  if (wall >= 1000000) {
    const double share = static_cast<double>(busy - dev->busy_ns) / static_cast<double>(wall);
    dev->utilization = share >= 1.0 ? 100u : static_cast<unsigned>(share * 100.0 + 0.5);
    dev->sampled = now;
    dev->busy_ns = busy;
  }
  *out = dev->utilization;
  return MTML_SUCCESS;
}

// The device's memory in use and its size (either output may be null).
MtmlReturn memory(const MtmlMemory* mem, unsigned long long* used, unsigned long long* total) {
  size_t in_use = 0, size = 0;
  if (musaSimDeviceMemory(static_cast<int>(mem->device->index), &in_use, &size) != musaSuccess)
    return MTML_ERROR_DRIVER_FAILURE;
  if (used != nullptr) *used = in_use;
  if (total != nullptr) *total = size;
  return MTML_SUCCESS;
}

}  // namespace

extern "C" {

MtmlReturn mtmlLibraryInit(MtmlLibrary** lib) {
  if (lib == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  int count = 0;
  if (musaGetDeviceCount(&count) != musaSuccess) return MTML_ERROR_DRIVER_NOT_LOADED;
  auto* l = new (std::nothrow) MtmlLibrary();
  if (l == nullptr) return MTML_ERROR_INSUFFICIENT_MEMORY;
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<MtmlDevice>();
    d->index = static_cast<unsigned>(i);
    d->gpu.device = d.get();
    d->memory.device = d.get();
    d->sampled = Clock::now();
    musaSimDeviceBusyTime(i, &d->busy_ns);
    l->devices.push_back(std::move(d));
  }
  *lib = l;
  return MTML_SUCCESS;
}

MtmlReturn mtmlLibraryShutDown(MtmlLibrary* lib) {
  if (lib == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  delete lib;
  return MTML_SUCCESS;
}

MtmlReturn mtmlLibraryInitSystem(const MtmlLibrary* lib, MtmlSystem** sys) {
  if (lib == nullptr || sys == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  *sys = const_cast<MtmlSystem*>(&lib->system);
  return MTML_SUCCESS;
}

MtmlReturn mtmlSystemGetDriverVersion(const MtmlSystem* sys, char* version, unsigned length) {
  if (sys == nullptr || version == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  int v = 0;
  if (musaDriverGetVersion(&v) != musaSuccess) return MTML_ERROR_DRIVER_FAILURE;
  char text[MTML_DRIVER_VERSION_BUFFER_SIZE];
  std::snprintf(text, sizeof text, "%d.%d.%d-sim", v / 1000, v % 1000 / 10, v % 10);
  return copy_string(text, version, length);
}

MtmlReturn mtmlLibraryCountDevice(const MtmlLibrary* lib, unsigned* count) {
  if (lib == nullptr || count == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(lib->devices.size());
  return MTML_SUCCESS;
}

MtmlReturn mtmlLibraryInitDeviceByIndex(const MtmlLibrary* lib, unsigned index, MtmlDevice** dev) {
  if (lib == nullptr || dev == nullptr || index >= lib->devices.size())
    return MTML_ERROR_INVALID_ARGUMENT;
  *dev = lib->devices[index].get();
  return MTML_SUCCESS;
}

MtmlReturn mtmlDeviceGetIndex(const MtmlDevice* dev, unsigned* index) {
  if (dev == nullptr || index == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  *index = dev->index;
  return MTML_SUCCESS;
}

MtmlReturn mtmlDeviceGetName(const MtmlDevice* dev, char* name, unsigned length) {
  if (dev == nullptr || name == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  musaDeviceProp p{};
  if (!properties(dev, &p)) return MTML_ERROR_DRIVER_FAILURE;
  return copy_string(p.name, name, length);
}

MtmlReturn mtmlDeviceGetUUID(const MtmlDevice* dev, char* uuid, unsigned length) {
  if (dev == nullptr || uuid == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  musaDeviceProp p{};
  if (!properties(dev, &p)) return MTML_ERROR_DRIVER_FAILURE;
  unsigned char b[16];
  std::memcpy(b, p.uuid.bytes, sizeof b);
  char text[MTML_DEVICE_UUID_BUFFER_SIZE];
  std::snprintf(text, sizeof text,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return copy_string(text, uuid, length);
}

MtmlReturn mtmlDeviceGetPciInfo(const MtmlDevice* dev, MtmlPciInfo* pci) {
  if (dev == nullptr || pci == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  musaDeviceProp p{};
  if (!properties(dev, &p)) return MTML_ERROR_DRIVER_FAILURE;
  std::memset(pci, 0, sizeof *pci);
  pci->segment = static_cast<unsigned>(p.pciDomainID);
  pci->bus = static_cast<unsigned>(p.pciBusID);
  pci->device = static_cast<unsigned>(p.pciDeviceID);
  std::snprintf(pci->sbdf, sizeof pci->sbdf, "%08x:%02x:%02x.0", pci->segment, pci->bus,
                pci->device);
  return MTML_SUCCESS;
}

MtmlReturn mtmlDeviceGetPowerUsage(const MtmlDevice* dev, unsigned* power) {
  if (dev == nullptr || power == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  return MTML_ERROR_NOT_SUPPORTED;  // no sensor on a simulated device
}

MtmlReturn mtmlDeviceInitGpu(const MtmlDevice* dev, MtmlGpu** gpu) {
  if (dev == nullptr || gpu == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  *gpu = const_cast<MtmlGpu*>(&dev->gpu);
  return MTML_SUCCESS;
}

MtmlReturn mtmlDeviceInitMemory(const MtmlDevice* dev, MtmlMemory** mem) {
  if (dev == nullptr || mem == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  *mem = const_cast<MtmlMemory*>(&dev->memory);
  return MTML_SUCCESS;
}

MtmlReturn mtmlGpuGetUtilization(const MtmlGpu* gpu, unsigned* value) {
  if (gpu == nullptr || value == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  return utilization(gpu->device, value);
}

MtmlReturn mtmlGpuGetTemperature(const MtmlGpu* gpu, unsigned* temp) {
  if (gpu == nullptr || temp == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  return MTML_ERROR_NOT_SUPPORTED;  // no sensor on a simulated device
}

MtmlReturn mtmlGpuGetClock(const MtmlGpu* gpu, unsigned* mhz) {
  if (gpu == nullptr || mhz == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  musaDeviceProp p{};
  if (!properties(gpu->device, &p)) return MTML_ERROR_DRIVER_FAILURE;
  *mhz = static_cast<unsigned>(p.clockRate / 1000);  // the simulated clock does not vary
  return MTML_SUCCESS;
}

MtmlReturn mtmlGpuGetMaxClock(const MtmlGpu* gpu, unsigned* mhz) {
  return mtmlGpuGetClock(gpu, mhz);
}

MtmlReturn mtmlMemoryGetTotal(const MtmlMemory* mem, unsigned long long* total) {
  if (mem == nullptr || total == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  return memory(mem, nullptr, total);
}

MtmlReturn mtmlMemoryGetUsed(const MtmlMemory* mem, unsigned long long* used) {
  if (mem == nullptr || used == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  return memory(mem, used, nullptr);
}

MtmlReturn mtmlMemoryGetUtilization(const MtmlMemory* mem, unsigned* value) {
  if (mem == nullptr || value == nullptr) return MTML_ERROR_INVALID_ARGUMENT;
  return utilization(mem->device, value);
}

}  // extern "C"
