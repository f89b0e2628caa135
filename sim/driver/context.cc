// The simulated driver's contexts: one primary context per device (retain count, flags, active
// state) and each thread's current-context stack. The runtime and the driver share the current
// device: making a context current makes its device the runtime's current device, as a CUDA
// runtime works in the driver's current context.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "driver.h"

namespace simdrv {
namespace {

constexpr int kMaxDevices = 256;

struct PrimaryState {
  int retained = 0;
  unsigned flags = 0;
  bool active = false;  // retained, or used through the runtime
};
std::mutex g_mutex;
PrimaryState g_primary[kMaxDevices];

// The contexts pushed on this thread; the top is current. Empty: the runtime's current device's
// primary context (the runtime makes it on first use, as in CUDA).
thread_local std::vector<MUcontext> t_stack;

MUresult device_of(MUcontext ctx, int* device) {
  const int d = context_device(ctx);
  if (d < 0 || !valid_device(d)) return MUSA_ERROR_INVALID_CONTEXT;
  *device = d;
  return MUSA_SUCCESS;
}

// The current context's device: the top of this thread's stack, else the runtime's device.
MUresult current_device(int* device) {
  if (!t_stack.empty())
    return t_stack.back() ? device_of(t_stack.back(), device) : MUSA_ERROR_INVALID_CONTEXT;
  const MUresult r = from_runtime(musaGetDevice(device));
  if (r == MUSA_SUCCESS && *device >= 0 && *device < kMaxDevices) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_primary[*device].active = true;  // the runtime works in it
  }
  return r;
}

MUresult make_current(MUcontext ctx) {
  int d = 0;
  const MUresult r = device_of(ctx, &d);
  if (r != MUSA_SUCCESS) return r;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_primary[d].active = true;
  }
  return from_runtime(musaSetDevice(d));
}

}  // namespace
}  // namespace simdrv

using namespace simdrv;

extern "C" {

MUresult muCtxGetCurrent(MUcontext* pctx) {
  return api([&] {
    if (pctx == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (!t_stack.empty()) {
      *pctx = t_stack.back();
      return MUSA_SUCCESS;
    }
    int d = 0;
    const MUresult r = current_device(&d);
    if (r != MUSA_SUCCESS) return r;
    *pctx = primary_context(d);
    return *pctx ? MUSA_SUCCESS : MUSA_ERROR_INVALID_CONTEXT;
  });
}

MUresult muCtxSetCurrent(MUcontext ctx) {
  return api([&] {
    // Null unbinds: the current context becomes none (the stack's top is replaced).
    if (ctx != nullptr) {
      const MUresult r = make_current(ctx);
      if (r != MUSA_SUCCESS) return r;
    }
    if (t_stack.empty())
      t_stack.push_back(ctx);
    else
      t_stack.back() = ctx;
    return MUSA_SUCCESS;
  });
}

MUresult muCtxPushCurrent_v2(MUcontext ctx) {
  return api([&] {
    if (ctx == nullptr) return MUSA_ERROR_INVALID_CONTEXT;
    const MUresult r = make_current(ctx);
    if (r != MUSA_SUCCESS) return r;
    t_stack.push_back(ctx);
    return MUSA_SUCCESS;
  });
}

MUresult muCtxPopCurrent_v2(MUcontext* pctx) {
  return api([&] {
    if (t_stack.empty()) return MUSA_ERROR_INVALID_CONTEXT;
    if (pctx) *pctx = t_stack.back();
    t_stack.pop_back();
    if (!t_stack.empty() && t_stack.back() != nullptr) return make_current(t_stack.back());
    return MUSA_SUCCESS;
  });
}

MUresult muCtxGetDevice(MUdevice* device) {
  return api([&] {
    if (device == nullptr) return MUSA_ERROR_INVALID_VALUE;
    int d = 0;
    const MUresult r = current_device(&d);
    if (r == MUSA_SUCCESS) *device = d;
    return r;
  });
}

MUresult muCtxSynchronize(void) {
  return api([&] {
    int d = 0;
    const MUresult r = current_device(&d);
    if (r != MUSA_SUCCESS) return r;
    return from_runtime(musaDeviceSynchronize());
  });
}

MUresult muCtxGetFlags(unsigned int* flags) {
  return api([&] {
    if (flags == nullptr) return MUSA_ERROR_INVALID_VALUE;
    int d = 0;
    const MUresult r = current_device(&d);
    if (r != MUSA_SUCCESS) return r;
    std::lock_guard<std::mutex> lock(g_mutex);
    *flags = g_primary[d].flags;
    return MUSA_SUCCESS;
  });
}

MUresult muCtxGetApiVersion(MUcontext ctx, unsigned int* version) {
  return api([&] {
    if (version == nullptr) return MUSA_ERROR_INVALID_VALUE;
    int d = 0;
    if (ctx != nullptr && device_of(ctx, &d) != MUSA_SUCCESS) return MUSA_ERROR_INVALID_CONTEXT;
    *version = 3020;  // the context API level every current context has (CUDA reports 3020)
    return MUSA_SUCCESS;
  });
}

MUresult muCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return api([&] {
    int least = 0, greatest = 0;
    const MUresult r = from_runtime(musaDeviceGetStreamPriorityRange(&least, &greatest));
    if (r != MUSA_SUCCESS) return r;
    if (leastPriority) *leastPriority = least;
    if (greatestPriority) *greatestPriority = greatest;
    return MUSA_SUCCESS;
  });
}

MUresult muDevicePrimaryCtxRetain(MUcontext* pctx, MUdevice dev) {
  return api([&] {
    if (pctx == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(dev) || dev >= kMaxDevices) return MUSA_ERROR_INVALID_DEVICE;
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_primary[dev].retained;
    g_primary[dev].active = true;
    *pctx = primary_context(dev);
    return MUSA_SUCCESS;
  });
}

MUresult muDevicePrimaryCtxRelease_v2(MUdevice dev) {
  return api([&] {
    if (!valid_device(dev) || dev >= kMaxDevices) return MUSA_ERROR_INVALID_DEVICE;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_primary[dev].retained == 0) return MUSA_ERROR_INVALID_CONTEXT;
    --g_primary[dev].retained;
    return MUSA_SUCCESS;
  });
}

MUresult muDevicePrimaryCtxGetState(MUdevice dev, unsigned int* flags, int* active) {
  return api([&] {
    if (flags == nullptr || active == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(dev) || dev >= kMaxDevices) return MUSA_ERROR_INVALID_DEVICE;
    std::lock_guard<std::mutex> lock(g_mutex);
    *flags = g_primary[dev].flags;
    *active = g_primary[dev].active || g_primary[dev].retained > 0 ? 1 : 0;
    return MUSA_SUCCESS;
  });
}

MUresult muDevicePrimaryCtxSetFlags_v2(MUdevice dev, unsigned int flags) {
  return api([&] {
    if (!valid_device(dev) || dev >= kMaxDevices) return MUSA_ERROR_INVALID_DEVICE;
    if ((flags & ~static_cast<unsigned>(MU_CTX_FLAGS_MASK)) != 0) return MUSA_ERROR_INVALID_VALUE;
    const unsigned sched = flags & MU_CTX_SCHED_MASK;
    if (sched != MU_CTX_SCHED_AUTO && sched != MU_CTX_SCHED_SPIN && sched != MU_CTX_SCHED_YIELD &&
        sched != MU_CTX_SCHED_BLOCKING_SYNC)
      return MUSA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_primary[dev].flags = flags;
    return MUSA_SUCCESS;
  });
}

// Destroys what the context holds in CUDA; the simulator's device state belongs to the runtime,
// which resets it: the context is inactive afterwards, its flags kept.
MUresult muDevicePrimaryCtxReset_v2(MUdevice dev) {
  return api([&] {
    if (!valid_device(dev) || dev >= kMaxDevices) return MUSA_ERROR_INVALID_DEVICE;
    int current = 0;
    if (musaGetDevice(&current) != musaSuccess) current = -1;
    if (musaSetDevice(dev) == musaSuccess) {
      musaDeviceReset();
      if (current >= 0) musaSetDevice(current);
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    g_primary[dev].retained = 0;
    g_primary[dev].active = false;
    return MUSA_SUCCESS;
  });
}

MUresult muDeviceGetName(char* name, int len, MUdevice dev) {
  return api([&] {
    if (name == nullptr || len <= 0) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return MUSA_ERROR_INVALID_DEVICE;
    musaDeviceProp prop{};
    const MUresult r = from_runtime(musaGetDeviceProperties(&prop, dev));
    if (r != MUSA_SUCCESS) return r;
    std::snprintf(name, static_cast<size_t>(len), "%s", prop.name);
    return MUSA_SUCCESS;
  });
}

MUresult muDeviceGetUuid(MUuuid* uuid, MUdevice dev) {
  return api([&] {
    if (uuid == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return MUSA_ERROR_INVALID_DEVICE;
    musaDeviceProp prop{};
    const MUresult r = from_runtime(musaGetDeviceProperties(&prop, dev));
    if (r != MUSA_SUCCESS) return r;
    static_assert(sizeof(prop.uuid) == sizeof(*uuid), "musaUUID_t and MUuuid");
    std::memcpy(uuid, &prop.uuid, sizeof *uuid);
    return MUSA_SUCCESS;
  });
}

MUresult muDeviceGetUuid_v2(MUuuid* uuid, MUdevice dev) { return muDeviceGetUuid(uuid, dev); }

MUresult muDeviceTotalMem_v2(size_t* bytes, MUdevice dev) {
  return api([&] {
    if (bytes == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return MUSA_ERROR_INVALID_DEVICE;
    musaDeviceProp prop{};
    const MUresult r = from_runtime(musaGetDeviceProperties(&prop, dev));
    if (r == MUSA_SUCCESS) *bytes = prop.totalGlobalMem;
    return r;
  });
}

MUresult muDeviceGetPCIBusId(char* pciBusId, int len, MUdevice dev) {
  return api([&] {
    if (pciBusId == nullptr || len <= 0) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return MUSA_ERROR_INVALID_DEVICE;
    return from_runtime(musaDeviceGetPCIBusId(pciBusId, len, dev));
  });
}

MUresult muDeviceGetByPCIBusId(MUdevice* dev, const char* pciBusId) {
  return api([&] {
    if (dev == nullptr || pciBusId == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return from_runtime(musaDeviceGetByPCIBusId(dev, pciBusId));
  });
}

MUresult muDeviceCanAccessPeer(int* canAccessPeer, MUdevice dev, MUdevice peerDev) {
  return api([&] {
    if (canAccessPeer == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(dev) || !valid_device(peerDev)) return MUSA_ERROR_INVALID_DEVICE;
    return from_runtime(musaDeviceCanAccessPeer(canAccessPeer, dev, peerDev));
  });
}

}  // extern "C"
