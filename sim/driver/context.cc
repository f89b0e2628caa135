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
#include "driver_hooks.h"

namespace simdrv {
namespace {

constexpr int kMaxDevices = 256;

struct PrimaryState {
  int retained = 0;
  unsigned flags = 0;
};
std::mutex g_mutex;
PrimaryState g_primary[kMaxDevices];

// A context the driver made current on this thread, and the runtime device that was current
// before it (restored when the stack empties, so the runtime's own binding comes back).
struct Bound {
  MUcontext ctx;
  int previous_device;
  bool previous_bound;  // the runtime's own binding was current underneath
};
// The contexts pushed or set on this thread; the top is current. Empty: the runtime's binding
// (its current device's primary context once the runtime initialised that device), as in CUDA
// where the runtime binds the primary context to each thread it runs on.
thread_local std::vector<Bound> t_stack;

MUresult device_of(MUcontext ctx, int* device) {
  const int d = context_device(ctx);
  if (d < 0 || !valid_device(d)) return MUSA_ERROR_INVALID_CONTEXT;
  *device = d;
  return MUSA_SUCCESS;
}

// The context the runtime has bound to this thread (null if none).
MUcontext runtime_context() {
  int d = -1;
  if (musaSimThreadContext(&d) != musaSuccess || d < 0) return nullptr;
  return primary_context(d);
}

MUcontext current_context() { return t_stack.empty() ? runtime_context() : t_stack.back().ctx; }

MUresult bind(int device) { return from_runtime(musaSimBindDevice(device)); }

// What is current before a context goes on an empty stack.
Bound underneath(MUcontext ctx) {
  int d = 0;
  if (musaGetDevice(&d) != musaSuccess) d = 0;
  return Bound{ctx, d, runtime_context() != nullptr};
}

// After the top of the stack went away: bind what is current now.
MUresult rebind(const Bound& popped) {
  if (!t_stack.empty()) return bind(context_device(t_stack.back().ctx));
  const MUresult r = bind(popped.previous_device);
  if (r != MUSA_SUCCESS || popped.previous_bound) return r;
  return bind(-1);  // no current context until the runtime binds its own again
}

bool runtime_active(int device) {
  int active = 0;
  return musaSimDeviceContextActive(device, &active) == musaSuccess && active != 0;
}

}  // namespace

MUresult current_context_device(int* device) {
  const MUcontext ctx = current_context();
  if (ctx == nullptr) return MUSA_ERROR_INVALID_CONTEXT;
  return device_of(ctx, device);
}

}  // namespace simdrv

using namespace simdrv;

extern "C" {

MUresult muCtxGetCurrent(MUcontext* pctx) {
  return api([&] {
    if (pctx == nullptr) return MUSA_ERROR_INVALID_VALUE;
    *pctx = current_context();  // null (and success) when none is current, as in CUDA
    return MUSA_SUCCESS;
  });
}

MUresult muCtxSetCurrent(MUcontext ctx) {
  return api([&] {
    if (ctx == nullptr) {  // CUDA: pops the top of the stack (no-op on an empty stack)
      if (t_stack.empty()) return bind(-1);
      const Bound popped = t_stack.back();
      t_stack.pop_back();
      return rebind(popped);
    }
    int d = 0;
    MUresult r = device_of(ctx, &d);
    if (r != MUSA_SUCCESS) return r;
    // On an empty stack the context replaces the runtime's binding: popping it leaves none.
    Bound b = t_stack.empty() ? underneath(ctx) : t_stack.back();
    if (t_stack.empty()) b.previous_bound = false;
    r = bind(d);
    if (r != MUSA_SUCCESS) return r;
    b.ctx = ctx;
    if (t_stack.empty())
      t_stack.push_back(b);
    else
      t_stack.back() = b;
    return MUSA_SUCCESS;
  });
}

MUresult muCtxPushCurrent_v2(MUcontext ctx) {
  return api([&] {
    int d = 0;
    MUresult r = device_of(ctx, &d);
    if (r != MUSA_SUCCESS) return r;
    const Bound b = t_stack.empty() ? underneath(ctx) : Bound{ctx, 0, false};
    r = bind(d);
    if (r != MUSA_SUCCESS) return r;
    t_stack.push_back(b);
    return MUSA_SUCCESS;
  });
}

MUresult muCtxPopCurrent_v2(MUcontext* pctx) {
  return api([&] {
    if (t_stack.empty()) {
      // The runtime's binding is the only entry: popping unbinds it.
      const MUcontext ctx = runtime_context();
      if (ctx == nullptr) return MUSA_ERROR_INVALID_CONTEXT;
      if (pctx) *pctx = ctx;
      return bind(-1);
    }
    const Bound popped = t_stack.back();
    if (pctx) *pctx = popped.ctx;
    t_stack.pop_back();
    return rebind(popped);
  });
}

MUresult muCtxGetDevice(MUdevice* device) {
  return api([&] {
    if (device == nullptr) return MUSA_ERROR_INVALID_VALUE;
    int d = 0;
    const MUresult r = current_context_device(&d);
    if (r == MUSA_SUCCESS) *device = d;
    return r;
  });
}

MUresult muCtxSynchronize(void) {
  return api([&] {
    int d = 0;
    const MUresult r = current_context_device(&d);
    if (r != MUSA_SUCCESS) return r;
    return from_runtime(musaDeviceSynchronize());
  });
}

MUresult muCtxGetFlags(unsigned int* flags) {
  return api([&] {
    if (flags == nullptr) return MUSA_ERROR_INVALID_VALUE;
    int d = 0;
    const MUresult r = current_context_device(&d);
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
    const MUresult r = ctx != nullptr ? device_of(ctx, &d) : current_context_device(&d);
    if (r != MUSA_SUCCESS) return r;
    *version = 3020;  // the context API level every current context has (CUDA reports 3020)
    return MUSA_SUCCESS;
  });
}

MUresult muCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return api([&] {
    int d = 0, least = 0, greatest = 0;
    MUresult r = current_context_device(&d);
    if (r != MUSA_SUCCESS) return r;
    r = from_runtime(musaDeviceGetStreamPriorityRange(&least, &greatest));
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
    // Active while retained through the driver or initialised by the runtime (which, in CUDA,
    // holds its own retain): PyTorch asks this to learn whether the runtime used a device.
    const bool by_runtime = runtime_active(dev);
    std::lock_guard<std::mutex> lock(g_mutex);
    *flags = g_primary[dev].flags;
    *active = by_runtime || g_primary[dev].retained > 0 ? 1 : 0;
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

// Destroys what the context holds (CUDA: all allocations and state in the process); the
// simulator's device state belongs to the runtime, which resets it. The context is inactive
// afterwards (retains dropped, as the context they held is gone), its flags kept.
MUresult muDevicePrimaryCtxReset_v2(MUdevice dev) {
  return api([&] {
    if (!valid_device(dev) || dev >= kMaxDevices) return MUSA_ERROR_INVALID_DEVICE;
    const MUresult r = from_runtime(musaSimResetDevice(dev));
    if (r != MUSA_SUCCESS) return r;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_primary[dev].retained = 0;
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
