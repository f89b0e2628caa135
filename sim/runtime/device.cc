// Device management, versions, lazy runtime initialisation and fork handling.
#include "../enum_value.h"
#include "state.h"

#include "driver_hooks.h"
#include "settings/settings.h"
#include "sim_ext.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace sim {
namespace {

std::atomic<Runtime*> g_rt{nullptr};
std::mutex g_init_mu;
std::atomic<unsigned long long> g_generation{1};
bool g_atfork_registered = false;  // under g_init_mu

void atfork_prepare() { g_init_mu.lock(); }
void atfork_parent() { g_init_mu.unlock(); }
void atfork_child() {
  // The child has one thread and none of the parent's workers: forget the parent's runtime (its
  // memory stays mapped and readable) and start again lazily.
  g_rt.store(nullptr, std::memory_order_release);
  g_generation.fetch_add(1);
  g_init_mu.unlock();
}

// The simulator's sink for settings/settings.h: a malformed value is a warning naming the
// variable and what is used instead, never a silent default.
void settings_warn(const char* message) {
  std::fprintf(stderr, "[torchada sim] warning: %s\n", message);
}

// Bytes of host memory this process may use: MemTotal, or the cgroup's limit when lower.
unsigned long long host_memory_bytes() {
  unsigned long long total = 0;
  if (FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      unsigned long long kb = 0;
      if (std::sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
        total = kb << 10;
        break;
      }
    }
    std::fclose(f);
  }
  for (const char* path : {"/sys/fs/cgroup/memory.max",                       // cgroup v2
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {  // v1
    if (FILE* f = std::fopen(path, "r")) {
      unsigned long long limit = 0;
      if (std::fscanf(f, "%llu", &limit) == 1 && limit > 0 && (total == 0 || limit < total))
        total = limit;
      std::fclose(f);
    }
  }
  return total;
}

// The default memory of each simulated device: an MTT S4000's 48 GiB, but never more than the
// host can back (half of its memory, shared by the devices), so that a caching allocator growing
// into the device never brings the out-of-memory killer instead of cudaErrorMemoryAllocation.
long default_memory_mb(int devices) {
  constexpr long kCardMb = 49152;
  const unsigned long long host = host_memory_bytes();
  if (host == 0) return kCardMb;
  const long share = static_cast<long>((host / 2 / static_cast<unsigned long long>(devices)) >> 20);
  return std::max(256L, std::min(kCardMb, share));
}

Runtime* create_runtime() {
  auto r = std::make_unique<Runtime>();
  r->generation = g_generation.load();
  using torchada::settings::Id;
  r->device_count = static_cast<int>(torchada::settings::integer(Id::kSimDevices, settings_warn));
  // In the order of the setting's words: mp_22 (the default), mp_21, mp_31.
  static constexpr Arch kArchs[] = {{"MTT S4000", 2, 2}, {"MTT S80", 2, 1}, {"MTT S5000", 3, 1}};
  r->arch = kArchs[torchada::settings::word(Id::kSimArch, settings_warn)];
  const size_t mb = static_cast<size_t>(torchada::settings::integer(
      Id::kSimMemoryMb, default_memory_mb(r->device_count), settings_warn));
  for (int i = 0; i < r->device_count; ++i) {
    auto d = std::make_unique<Device>();
    d->ordinal = i;
    d->total = mb << 20;
    d->limits[musaLimitStackSize] = 1024;
    d->limits[musaLimitPrintfFifoSize] = 1 << 20;
    d->limits[musaLimitMallocHeapSize] = 8 << 20;
    d->limits[musaLimitDevRuntimeSyncDepth] = 2;
    d->limits[musaLimitDevRuntimePendingLaunchCount] = 2048;
    d->limits[musaLimitMaxL2FetchGranularity] = 64;
    d->limits[musaLimitPersistingL2CacheSize] = 0;
    r->devices.push_back(std::move(d));
  }
  return r.release();  // lives for the rest of the process (survives atexit users)
}

constexpr int kPciBusBase = 0x11;

}  // namespace

Runtime& rt() {
  Runtime* r = g_rt.load(std::memory_order_acquire);
  if (r != nullptr) return *r;
  std::lock_guard<std::mutex> lock(g_init_mu);
  r = g_rt.load(std::memory_order_acquire);
  if (r == nullptr) {
    if (!g_atfork_registered) {
      pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
      g_atfork_registered = true;
    }
    r = create_runtime();
    g_rt.store(r, std::memory_order_release);
  }
  return *r;
}

ThreadState::~ThreadState() {
  if (generation != g_generation.load() || g_rt.load() == nullptr) return;
  for (auto& kv : per_thread) {
    try {
      retire_stream(kv.second);
    } catch (...) {
    }
  }
}

ThreadState& ts() {
  thread_local ThreadState state;
  const unsigned long long gen = g_generation.load(std::memory_order_acquire);
  if (state.generation != gen) {
    if (state.generation != 0 && !state.per_thread.empty()) {
      // Inherited across fork(): the workers do not exist here; leak the objects.
      auto* leaked = new std::map<int, std::shared_ptr<MUstream_st>>();
      leaked->swap(state.per_thread);
    }
    state.generation = gen;
    state.device = 0;
    state.last_error = musaSuccess;
    state.capture_mode = musaStreamCaptureModeGlobal;
    state.unbound = false;
  }
  return state;
}

bool valid_device(int d) { return d >= 0 && d < rt().device_count; }
Device& device(int d) { return *rt().devices[static_cast<size_t>(d)]; }
int current_device() {
  ThreadState& t = ts();
  t.unbound = false;  // the runtime binds its context again (CUDA's runtime does on each call)
  std::atomic<bool>& ctx = device(t.device).context;
  if (!ctx.load(std::memory_order_relaxed)) ctx.store(true);
  return t.device;
}

namespace {

void fill_props(int d, musaDeviceProp* p) {
  std::memset(p, 0, sizeof(*p));
  const Arch& arch = rt().arch;
  std::snprintf(p->name, sizeof(p->name), "%s", arch.name);
  for (int i = 0; i < 16; ++i) p->uuid.bytes[i] = static_cast<char>(0x4d + i * 7 + d * 31);
  p->totalGlobalMem = device(d).total;
  p->sharedMemPerBlock = 48 << 10;
  p->regsPerBlock = 65536;
  p->warpSize = 128;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->clockRate = 1750000;  // kHz
  p->totalConstMem = 64 << 10;
  p->major = arch.major;
  p->minor = arch.minor;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->deviceOverlap = 1;
  p->multiProcessorCount = 128;
  p->computeMode = musaComputeModeDefault;
  p->maxTexture1D = 131072;
  p->maxTexture1DMipmap = 32768;
  p->maxTexture1DLinear = 268435456;
  p->maxTexture2D[0] = 131072;
  p->maxTexture2D[1] = 65536;
  p->maxTexture2DMipmap[0] = 32768;
  p->maxTexture2DMipmap[1] = 32768;
  p->maxTexture2DLinear[0] = 131072;
  p->maxTexture2DLinear[1] = 65000;
  p->maxTexture2DLinear[2] = 2097120;
  p->maxTexture2DGather[0] = 32768;
  p->maxTexture2DGather[1] = 32768;
  p->maxTexture3D[0] = 16384;
  p->maxTexture3D[1] = 16384;
  p->maxTexture3D[2] = 16384;
  p->maxTexture3DAlt[0] = 8192;
  p->maxTexture3DAlt[1] = 8192;
  p->maxTexture3DAlt[2] = 32768;
  p->maxTextureCubemap = 32768;
  p->maxTexture1DLayered[0] = 32768;
  p->maxTexture1DLayered[1] = 2048;
  p->maxTexture2DLayered[0] = 32768;
  p->maxTexture2DLayered[1] = 32768;
  p->maxTexture2DLayered[2] = 2048;
  p->maxTextureCubemapLayered[0] = 32768;
  p->maxTextureCubemapLayered[1] = 2046;
  p->maxSurface1D = 32768;
  p->maxSurface2D[0] = 131072;
  p->maxSurface2D[1] = 65536;
  p->maxSurface3D[0] = 16384;
  p->maxSurface3D[1] = 16384;
  p->maxSurface3D[2] = 16384;
  p->maxSurface1DLayered[0] = 32768;
  p->maxSurface1DLayered[1] = 2048;
  p->maxSurface2DLayered[0] = 32768;
  p->maxSurface2DLayered[1] = 32768;
  p->maxSurface2DLayered[2] = 2048;
  p->maxSurfaceCubemap = 32768;
  p->maxSurfaceCubemapLayered[0] = 32768;
  p->maxSurfaceCubemapLayered[1] = 2046;
  p->surfaceAlignment = 512;
  p->concurrentKernels = 1;
  p->ECCEnabled = 0;
  p->pciBusID = kPciBusBase + d;
  p->pciDeviceID = 0;
  p->pciDomainID = 0;
  p->asyncEngineCount = 2;
  p->unifiedAddressing = 1;
  p->memoryClockRate = 1750000;  // kHz
  p->memoryBusWidth = 384;
  p->l2CacheSize = 8 << 20;
  p->persistingL2CacheMaxSize = 0;
  p->maxThreadsPerMultiProcessor = 2048;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = 128 << 10;
  p->regsPerMultiprocessor = 65536;
  p->managedMemory = 1;
  p->isMultiGpuBoard = 0;
  p->multiGpuBoardGroupID = d;
  p->hostNativeAtomicSupported = 0;
  p->singleToDoublePrecisionPerfRatio = 32;
  p->pageableMemoryAccess = 0;
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  p->canUseHostPointerForRegisteredMem = 1;
  p->cooperativeLaunch = 0;
  p->cooperativeMultiDeviceLaunch = 0;
  p->sharedMemPerBlockOptin = 96 << 10;
  p->pageableMemoryAccessUsesHostPageTables = 0;
  p->directManagedMemAccessFromHost = 0;
  p->maxBlocksPerMultiProcessor = 16;
  p->accessPolicyMaxWindowSize = 0;
  p->reservedSharedMemPerBlock = 0;
  p->canMapHostMemory = 1;
}

int clamp_int(size_t v) { return v > 2147483647u ? 2147483647 : static_cast<int>(v); }

// Returns false for values that are not attributes.
bool attribute(int d, int a, int* v) {
  musaDeviceProp p;
  fill_props(d, &p);
  switch (a) {
    case musaDevAttrMaxThreadsPerBlock:
      *v = p.maxThreadsPerBlock;
      return true;
    case musaDevAttrMaxBlockDimX:
      *v = p.maxThreadsDim[0];
      return true;
    case musaDevAttrMaxBlockDimY:
      *v = p.maxThreadsDim[1];
      return true;
    case musaDevAttrMaxBlockDimZ:
      *v = p.maxThreadsDim[2];
      return true;
    case musaDevAttrMaxGridDimX:
      *v = p.maxGridSize[0];
      return true;
    case musaDevAttrMaxGridDimY:
      *v = p.maxGridSize[1];
      return true;
    case musaDevAttrMaxGridDimZ:
      *v = p.maxGridSize[2];
      return true;
    case musaDevAttrMaxSharedMemoryPerBlock:
      *v = clamp_int(p.sharedMemPerBlock);
      return true;
    case musaDevAttrTotalConstantMemory:
      *v = clamp_int(p.totalConstMem);
      return true;
    case musaDevAttrWarpSize:
      *v = p.warpSize;
      return true;
    case musaDevAttrMaxPitch:
      *v = clamp_int(p.memPitch);
      return true;
    case musaDevAttrMaxRegistersPerBlock:
      *v = p.regsPerBlock;
      return true;
    case musaDevAttrClockRate:
      *v = p.clockRate;
      return true;
    case musaDevAttrTextureAlignment:
      *v = clamp_int(p.textureAlignment);
      return true;
    case musaDevAttrGpuOverlap:
      *v = p.deviceOverlap;
      return true;
    case musaDevAttrMultiProcessorCount:
      *v = p.multiProcessorCount;
      return true;
    case musaDevAttrKernelExecTimeout:
      *v = p.kernelExecTimeoutEnabled;
      return true;
    case musaDevAttrIntegrated:
      *v = p.integrated;
      return true;
    case musaDevAttrCanMapHostMemory:
      *v = p.canMapHostMemory;
      return true;
    case musaDevAttrComputeMode:
      *v = p.computeMode;
      return true;
    case musaDevAttrMaxTexture1DWidth:
      *v = p.maxTexture1D;
      return true;
    case musaDevAttrMaxTexture2DWidth:
      *v = p.maxTexture2D[0];
      return true;
    case musaDevAttrMaxTexture2DHeight:
      *v = p.maxTexture2D[1];
      return true;
    case musaDevAttrMaxTexture3DWidth:
      *v = p.maxTexture3D[0];
      return true;
    case musaDevAttrMaxTexture3DHeight:
      *v = p.maxTexture3D[1];
      return true;
    case musaDevAttrMaxTexture3DDepth:
      *v = p.maxTexture3D[2];
      return true;
    case musaDevAttrMaxTexture2DLayeredWidth:
      *v = p.maxTexture2DLayered[0];
      return true;
    case musaDevAttrMaxTexture2DLayeredHeight:
      *v = p.maxTexture2DLayered[1];
      return true;
    case musaDevAttrMaxTexture2DLayeredLayers:
      *v = p.maxTexture2DLayered[2];
      return true;
    case musaDevAttrSurfaceAlignment:
      *v = clamp_int(p.surfaceAlignment);
      return true;
    case musaDevAttrConcurrentKernels:
      *v = p.concurrentKernels;
      return true;
    case musaDevAttrEccEnabled:
      *v = p.ECCEnabled;
      return true;
    case musaDevAttrPciBusId:
      *v = p.pciBusID;
      return true;
    case musaDevAttrPciDeviceId:
      *v = p.pciDeviceID;
      return true;
    case musaDevAttrTccDriver:
      *v = p.tccDriver;
      return true;
    case musaDevAttrMemoryClockRate:
      *v = p.memoryClockRate;
      return true;
    case musaDevAttrGlobalMemoryBusWidth:
      *v = p.memoryBusWidth;
      return true;
    case musaDevAttrL2CacheSize:
      *v = p.l2CacheSize;
      return true;
    case musaDevAttrMaxThreadsPerMultiProcessor:
      *v = p.maxThreadsPerMultiProcessor;
      return true;
    case musaDevAttrAsyncEngineCount:
      *v = p.asyncEngineCount;
      return true;
    case musaDevAttrUnifiedAddressing:
      *v = p.unifiedAddressing;
      return true;
    case musaDevAttrMaxTexture1DLayeredWidth:
      *v = p.maxTexture1DLayered[0];
      return true;
    case musaDevAttrMaxTexture1DLayeredLayers:
      *v = p.maxTexture1DLayered[1];
      return true;
    case musaDevAttrMaxTexture2DGatherWidth:
      *v = p.maxTexture2DGather[0];
      return true;
    case musaDevAttrMaxTexture2DGatherHeight:
      *v = p.maxTexture2DGather[1];
      return true;
    case musaDevAttrMaxTexture3DWidthAlt:
      *v = p.maxTexture3DAlt[0];
      return true;
    case musaDevAttrMaxTexture3DHeightAlt:
      *v = p.maxTexture3DAlt[1];
      return true;
    case musaDevAttrMaxTexture3DDepthAlt:
      *v = p.maxTexture3DAlt[2];
      return true;
    case musaDevAttrPciDomainId:
      *v = p.pciDomainID;
      return true;
    case musaDevAttrTexturePitchAlignment:
      *v = clamp_int(p.texturePitchAlignment);
      return true;
    case musaDevAttrMaxTextureCubemapWidth:
      *v = p.maxTextureCubemap;
      return true;
    case musaDevAttrMaxTextureCubemapLayeredWidth:
      *v = p.maxTextureCubemapLayered[0];
      return true;
    case musaDevAttrMaxTextureCubemapLayeredLayers:
      *v = p.maxTextureCubemapLayered[1];
      return true;
    case musaDevAttrMaxSurface1DWidth:
      *v = p.maxSurface1D;
      return true;
    case musaDevAttrMaxSurface2DWidth:
      *v = p.maxSurface2D[0];
      return true;
    case musaDevAttrMaxSurface2DHeight:
      *v = p.maxSurface2D[1];
      return true;
    case musaDevAttrMaxSurface3DWidth:
      *v = p.maxSurface3D[0];
      return true;
    case musaDevAttrMaxSurface3DHeight:
      *v = p.maxSurface3D[1];
      return true;
    case musaDevAttrMaxSurface3DDepth:
      *v = p.maxSurface3D[2];
      return true;
    case musaDevAttrMaxSurface1DLayeredWidth:
      *v = p.maxSurface1DLayered[0];
      return true;
    case musaDevAttrMaxSurface1DLayeredLayers:
      *v = p.maxSurface1DLayered[1];
      return true;
    case musaDevAttrMaxSurface2DLayeredWidth:
      *v = p.maxSurface2DLayered[0];
      return true;
    case musaDevAttrMaxSurface2DLayeredHeight:
      *v = p.maxSurface2DLayered[1];
      return true;
    case musaDevAttrMaxSurface2DLayeredLayers:
      *v = p.maxSurface2DLayered[2];
      return true;
    case musaDevAttrMaxSurfaceCubemapWidth:
      *v = p.maxSurfaceCubemap;
      return true;
    case musaDevAttrMaxSurfaceCubemapLayeredWidth:
      *v = p.maxSurfaceCubemapLayered[0];
      return true;
    case musaDevAttrMaxSurfaceCubemapLayeredLayers:
      *v = p.maxSurfaceCubemapLayered[1];
      return true;
    case musaDevAttrMaxTexture1DLinearWidth:
      *v = p.maxTexture1DLinear;
      return true;
    case musaDevAttrMaxTexture2DLinearWidth:
      *v = p.maxTexture2DLinear[0];
      return true;
    case musaDevAttrMaxTexture2DLinearHeight:
      *v = p.maxTexture2DLinear[1];
      return true;
    case musaDevAttrMaxTexture2DLinearPitch:
      *v = p.maxTexture2DLinear[2];
      return true;
    case musaDevAttrMaxTexture2DMipmappedWidth:
      *v = p.maxTexture2DMipmap[0];
      return true;
    case musaDevAttrMaxTexture2DMipmappedHeight:
      *v = p.maxTexture2DMipmap[1];
      return true;
    case musaDevAttrComputeCapabilityMajor:
      *v = p.major;
      return true;
    case musaDevAttrComputeCapabilityMinor:
      *v = p.minor;
      return true;
    case musaDevAttrMaxTexture1DMipmappedWidth:
      *v = p.maxTexture1DMipmap;
      return true;
    case musaDevAttrStreamPrioritiesSupported:
      *v = p.streamPrioritiesSupported;
      return true;
    case musaDevAttrGlobalL1CacheSupported:
      *v = p.globalL1CacheSupported;
      return true;
    case musaDevAttrLocalL1CacheSupported:
      *v = p.localL1CacheSupported;
      return true;
    case musaDevAttrMaxSharedMemoryPerMultiprocessor:
      *v = clamp_int(p.sharedMemPerMultiprocessor);
      return true;
    case musaDevAttrMaxRegistersPerMultiprocessor:
      *v = p.regsPerMultiprocessor;
      return true;
    case musaDevAttrManagedMemory:
      *v = p.managedMemory;
      return true;
    case musaDevAttrIsMultiGpuBoard:
      *v = p.isMultiGpuBoard;
      return true;
    case musaDevAttrMultiGpuBoardGroupID:
      *v = p.multiGpuBoardGroupID;
      return true;
    case musaDevAttrHostNativeAtomicSupported:
      *v = p.hostNativeAtomicSupported;
      return true;
    case musaDevAttrSingleToDoublePrecisionPerfRatio:
      *v = p.singleToDoublePrecisionPerfRatio;
      return true;
    case musaDevAttrPageableMemoryAccess:
      *v = p.pageableMemoryAccess;
      return true;
    case musaDevAttrConcurrentManagedAccess:
      *v = p.concurrentManagedAccess;
      return true;
    case musaDevAttrComputePreemptionSupported:
      *v = p.computePreemptionSupported;
      return true;
    case musaDevAttrCanUseHostPointerForRegisteredMem:
      *v = p.canUseHostPointerForRegisteredMem;
      return true;
    case musaDevAttrCooperativeLaunch:
      *v = p.cooperativeLaunch;
      return true;
    case musaDevAttrCooperativeMultiDeviceLaunch:
      *v = p.cooperativeMultiDeviceLaunch;
      return true;
    case musaDevAttrMaxSharedMemoryPerBlockOptin:
      *v = clamp_int(p.sharedMemPerBlockOptin);
      return true;
    case musaDevAttrPageableMemoryAccessUsesHostPageTables:
      *v = p.pageableMemoryAccessUsesHostPageTables;
      return true;
    case musaDevAttrDirectManagedMemAccessFromHost:
      *v = p.directManagedMemAccessFromHost;
      return true;
    case musaDevAttrMaxBlocksPerMultiprocessor:
      *v = p.maxBlocksPerMultiProcessor;
      return true;
    case musaDevAttrMaxPersistingL2CacheSize:
      *v = p.persistingL2CacheMaxSize;
      return true;
    case musaDevAttrMaxAccessPolicyWindowSize:
      *v = p.accessPolicyMaxWindowSize;
      return true;
    case musaDevAttrReservedSharedMemoryPerBlock:
      *v = clamp_int(p.reservedSharedMemPerBlock);
      return true;
    case musaDevAttrHostRegisterSupported:
      *v = 1;
      return true;
    case musaDevAttrHostRegisterReadOnlySupported:
      *v = 1;
      return true;
    case musaDevAttrIpcEventSupport:  // ipc.cc: events shared through a memfd page
      *v = 1;
      return true;
    case musaDevAttrCanFlushRemoteWrites:
    case musaDevAttrSparseMusaArraySupported:
    case musaDevAttrTimelineSemaphoreInteropSupported:
    case musaDevAttrMemoryPoolsSupported:  // musaMallocAsync and pools are not in MUSA
    case musaDevAttrGPUDirectRDMASupported:
    case musaDevAttrGPUDirectRDMAFlushWritesOptions:
    case musaDevAttrGPUDirectRDMAWritesOrdering:
    case musaDevAttrMemoryPoolSupportedHandleTypes:
    case musaDevAttrClusterLaunch:
    case musaDevAttrDeferredMappingMusaArraySupported:
    case musaDevAttrNumaConfig:
    case musaDevAttrMpsEnabled:
    case musaDevAttrD3D12CigSupported:
    case musaDevAttrVulkanCigSupported:
    case musaDevAttrGpuPciDeviceId:
    case musaDevAttrGpuPciSubsystemId:
    case musaDevAttrHostNumaMemoryPoolsSupported:
    case musaDevAttrHostNumaMultinodeIpcSupported:
    case musaDevAttrHostMemoryPoolsSupported:
    case musaDevAttrOnlyPartialHostNativeAtomicSupported:
    case musaDevAttrReserved92:
    case musaDevAttrReserved93:
    case musaDevAttrReserved94:
    case musaDevAttrReserved122:
    case musaDevAttrReserved123:
    case musaDevAttrReserved124:
    case musaDevAttrReserved127:
    case musaDevAttrReserved128:
    case musaDevAttrReserved129:
    case musaDevAttrReserved132:
    case musaDevAttrReserved141:
    case musaDevAttrReserved145:
      *v = 0;
      return true;
    case musaDevAttrMemSyncDomainCount:
      *v = 1;
      return true;
    case musaDevAttrNumaId:
    case musaDevAttrHostNumaId:
      *v = -1;
      return true;
    default:
      return false;
  }
}

// Runs a driver hook's body: exceptions become error codes, the last error is not recorded.
template <class F>
musaError_t hook(F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return musaErrorMemoryAllocation;
  } catch (...) {
    return musaErrorUnknown;
  }
}

}  // namespace
}  // namespace sim

using namespace sim;

extern "C" {

musaError_t musaGetDeviceCount(int* count) {
  return api([&] {
    if (count == nullptr) return musaErrorInvalidValue;
    *count = rt().device_count;
    return musaSuccess;
  });
}

musaError_t musaSimDeviceBusyTime(int d, unsigned long long* nanoseconds) {
  return api([&] {
    if (nanoseconds == nullptr) return musaErrorInvalidValue;
    if (!valid_device(d)) return musaErrorInvalidDevice;
    *nanoseconds = device(d).busy_ns.load(std::memory_order_relaxed);
    return musaSuccess;
  });
}

musaError_t musaSimDeviceMemory(int d, size_t* used, size_t* total) {
  return api([&] {
    if (used == nullptr || total == nullptr) return musaErrorInvalidValue;
    if (!valid_device(d)) return musaErrorInvalidDevice;
    *used = device(d).used.load();
    *total = device(d).total;
    return musaSuccess;
  });
}

musaError_t musaSimCheckRange(const void* p, size_t bytes) {
  return api([&] {
    auto at = reinterpret_cast<uintptr_t>(p);
    Alloc first;
    if (bytes == 0) return musaSuccess;
    if (!lookup(p, &first)) {
      // Memory outside every allocation is the host's, which simulated devices address (as GPUs
      // with HMM do). A host span cannot wrap the address space, nor run into device memory
      // (which lies apart from host memory on a GPU): either is an overrun.
      if (bytes - 1 > UINTPTR_MAX - at) return musaErrorIllegalAddress;
      return rt().mem.device_memory_in(at, at + bytes) ? musaErrorIllegalAddress : musaSuccess;
    }
    while (bytes > 0) {
      Alloc a;
      if (!lookup(reinterpret_cast<const void*>(at), &a)) return musaErrorIllegalAddress;
      const uintptr_t end = a.base + a.size;  // at lies in [a.base, end)
      if (end - at >= bytes) return musaSuccess;
      bytes -= end - at;
      at = end;  // the rest must start an adjacent allocation
    }
    return musaSuccess;
  });
}

musaError_t musaSimRaiseFault(int d, musaError_t fault) {
  return api([&] {
    if (!valid_device(d)) return musaErrorInvalidDevice;
    int expected = musaSuccess;
    device(d).fault.compare_exchange_strong(expected, static_cast<int>(fault));
    return musaSuccess;
  });
}

musaError_t musaSimCheckOperand(int d, const char* routine, const char* operand, const void* p,
                                size_t bytes) {
  if (musaSimCheckRange(p, bytes) == musaSuccess) return musaSuccess;
  std::fprintf(stderr,
               "[torchada sim] %s: operand %s spans %zu bytes from %p, beyond the memory "
               "allocated there: musaErrorIllegalAddress (sticky) at the next synchronisation\n",
               routine, operand, bytes, p);
  musaSimRaiseFault(d, musaErrorIllegalAddress);
  return musaErrorIllegalAddress;
}

musaError_t musaSetDevice(int d) {
  return api([&] {
    if (!valid_device(d)) return musaErrorInvalidDevice;
    ts().device = d;
    current_device();  // since CUDA 12, cudaSetDevice initialises the device's primary context
    return musaSuccess;
  });
}

musaError_t musaGetDevice(int* d) {
  return api([&] {
    if (d == nullptr) return musaErrorInvalidValue;
    rt();
    *d = ts().device;
    return musaSuccess;
  });
}

musaError_t musaInitDevice(int d, unsigned int deviceFlags, unsigned int flags) {
  return api([&] {
    if (!valid_device(d)) return musaErrorInvalidDevice;
    if ((deviceFlags & ~static_cast<unsigned>(musaDeviceMask)) != 0 ||
        (flags & ~static_cast<unsigned>(musaInitDeviceFlagsAreValid)) != 0)
      return musaErrorInvalidValue;
    Device& dev = device(d);
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    dev.flags = deviceFlags;
    return musaSuccess;
  });
}

musaError_t musaSetValidDevices(int* device_arr, int len) {
  return api([&] {
    if (len < 0 || (len > 0 && device_arr == nullptr)) return musaErrorInvalidValue;
    for (int i = 0; i < len; ++i)
      if (!valid_device(device_arr[i])) return musaErrorInvalidDevice;
    if (len > 0) ts().device = device_arr[0];
    return musaSuccess;
  });
}

musaError_t musaSetDeviceFlags(unsigned int flags) {
  return api([&] {
    if ((flags & ~static_cast<unsigned>(musaDeviceMask)) != 0) return musaErrorInvalidValue;
    const unsigned sched = flags & musaDeviceScheduleMask;
    if (sched != musaDeviceScheduleAuto && sched != musaDeviceScheduleSpin &&
        sched != musaDeviceScheduleYield && sched != musaDeviceScheduleBlockingSync)
      return musaErrorInvalidValue;
    Device& dev = device(current_device());
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    dev.flags = flags;
    return musaSuccess;
  });
}

musaError_t musaGetDeviceFlags(unsigned int* flags) {
  return api([&] {
    if (flags == nullptr) return musaErrorInvalidValue;
    Device& dev = device(current_device());
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    *flags = dev.flags | musaDeviceMapHost;
    return musaSuccess;
  });
}

musaError_t musaGetDeviceProperties(struct musaDeviceProp* prop, int d) {
  return api([&] {
    if (prop == nullptr) return musaErrorInvalidValue;
    if (!valid_device(d)) return musaErrorInvalidDevice;
    fill_props(d, prop);
    return musaSuccess;
  });
}

musaError_t musaDeviceGetAttribute(int* value, enum musaDeviceAttr attr, int d) {
  return api([&] {
    if (value == nullptr) return musaErrorInvalidValue;
    if (!valid_device(d)) return musaErrorInvalidDevice;
    int v = 0;
    // Any int may come: read without an enum load (sim/enum_value.h).
    if (!attribute(d, simenum::enum_value(attr), &v)) return musaErrorInvalidValue;
    *value = v;
    return musaSuccess;
  });
}

musaError_t musaDeviceGetLimit(size_t* pValue, enum musaLimit limit) {
  return api([&] {
    if (pValue == nullptr) return musaErrorInvalidValue;
    if (static_cast<int>(limit) < 0 || static_cast<int>(limit) > musaLimitPersistingL2CacheSize)
      return musaErrorUnsupportedLimit;
    Device& dev = device(current_device());
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    *pValue = dev.limits[limit];
    return musaSuccess;
  });
}

musaError_t musaDeviceSetLimit(enum musaLimit limit, size_t value) {
  return api([&] {
    if (static_cast<int>(limit) < 0 || static_cast<int>(limit) > musaLimitPersistingL2CacheSize)
      return musaErrorUnsupportedLimit;
    if (limit == musaLimitPersistingL2CacheSize && value != 0) return musaErrorUnsupportedLimit;
    Device& dev = device(current_device());
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    dev.limits[limit] = value;
    return musaSuccess;
  });
}

musaError_t musaDeviceGetCacheConfig(enum musaFuncCache* pCacheConfig) {
  return api([&] {
    if (pCacheConfig == nullptr) return musaErrorInvalidValue;
    Device& dev = device(current_device());
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    *pCacheConfig = static_cast<musaFuncCache>(dev.cache_config);
    return musaSuccess;
  });
}

musaError_t musaDeviceSetCacheConfig(enum musaFuncCache cacheConfig) {
  return api([&] {
    if (static_cast<int>(cacheConfig) < musaFuncCachePreferNone ||
        static_cast<int>(cacheConfig) > musaFuncCachePreferEqual)
      return musaErrorInvalidValue;
    Device& dev = device(current_device());
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    dev.cache_config = cacheConfig;
    return musaSuccess;
  });
}

musaError_t musaDeviceGetSharedMemConfig(enum musaSharedMemConfig* pConfig) {
  return api([&] {
    if (pConfig == nullptr) return musaErrorInvalidValue;
    Device& dev = device(current_device());
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    *pConfig = static_cast<musaSharedMemConfig>(dev.shmem_config);
    return musaSuccess;
  });
}

musaError_t musaDeviceSetSharedMemConfig(enum musaSharedMemConfig config) {
  return api([&] {
    if (static_cast<int>(config) < musaSharedMemBankSizeDefault ||
        static_cast<int>(config) > musaSharedMemBankSizeEightByte)
      return musaErrorInvalidValue;
    Device& dev = device(current_device());
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    dev.shmem_config = config;
    return musaSuccess;
  });
}

musaError_t musaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return api([&] {
    if (leastPriority == nullptr && greatestPriority == nullptr) return musaErrorInvalidValue;
    rt();
    if (leastPriority != nullptr) *leastPriority = 0;
    if (greatestPriority != nullptr) *greatestPriority = -5;
    return musaSuccess;
  });
}

musaError_t musaDeviceGetPCIBusId(char* pciBusId, int len, int d) {
  return api([&] {
    if (pciBusId == nullptr || len <= 0) return musaErrorInvalidValue;
    if (!valid_device(d)) return musaErrorInvalidDevice;
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0000:%02x:00.0", kPciBusBase + d);
    if (static_cast<size_t>(len) < std::strlen(buf) + 1) return musaErrorInvalidValue;
    std::memcpy(pciBusId, buf, std::strlen(buf) + 1);
    return musaSuccess;
  });
}

musaError_t musaDeviceGetByPCIBusId(int* d, const char* pciBusId) {
  return api([&] {
    if (d == nullptr || pciBusId == nullptr) return musaErrorInvalidValue;
    unsigned domain = 0, bus = 0, dev = 0, fn = 0;
    int n = std::sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &dev, &fn);
    if (n < 3) {
      domain = 0;
      n = std::sscanf(pciBusId, "%x:%x.%x", &bus, &dev, &fn);
      if (n < 2) return musaErrorInvalidValue;
    }
    const int idx = static_cast<int>(bus) - kPciBusBase;
    if (domain != 0 || dev != 0 || !valid_device(idx)) return musaErrorInvalidDevice;
    *d = idx;
    return musaSuccess;
  });
}

musaError_t musaDeviceCanAccessPeer(int* canAccessPeer, int d, int peer) {
  return api([&] {
    if (canAccessPeer == nullptr) return musaErrorInvalidValue;
    if (!valid_device(d) || !valid_device(peer)) return musaErrorInvalidDevice;
    *canAccessPeer = d != peer ? 1 : 0;
    return musaSuccess;
  });
}

musaError_t musaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  return api([&] {
    if (flags != 0) return musaErrorInvalidValue;
    if (!valid_device(peer)) return musaErrorInvalidDevice;
    const int d = current_device();
    if (peer == d) return musaErrorInvalidDevice;
    Device& dev = device(d);
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    const unsigned bit = 1u << peer;
    if ((dev.peers & bit) != 0) return musaErrorPeerAccessAlreadyEnabled;
    dev.peers |= bit;
    return musaSuccess;
  });
}

musaError_t musaDeviceDisablePeerAccess(int peer) {
  return api([&] {
    if (!valid_device(peer)) return musaErrorInvalidDevice;
    Device& dev = device(current_device());
    std::lock_guard<std::mutex> lock(dev.cfg_mu);
    const unsigned bit = 1u << peer;
    if ((dev.peers & bit) == 0) return musaErrorPeerAccessNotEnabled;
    dev.peers &= ~bit;
    return musaSuccess;
  });
}

musaError_t musaDeviceGetP2PAttribute(int* value, enum musaDeviceP2PAttr attr, int src, int dst) {
  return api([&] {
    if (value == nullptr) return musaErrorInvalidValue;
    if (!valid_device(src) || !valid_device(dst) || src == dst) return musaErrorInvalidDevice;
    switch (attr) {
      case musaDevP2PAttrPerformanceRank:
        *value = 1;
        return musaSuccess;
      case musaDevP2PAttrAccessSupported:
        *value = 1;
        return musaSuccess;
      case musaDevP2PAttrNativeAtomicSupported:
        *value = 0;
        return musaSuccess;
      case musaDevP2PAttrMusaArrayAccessSupported:
        *value = 0;
        return musaSuccess;
      case musaDevP2PAttrOnlyPartialNativeAtomicSupported:
        *value = 0;
        return musaSuccess;
      default:
        return musaErrorInvalidValue;
    }
  });
}

musaError_t musaCtxResetPersistingL2Cache(void) {
  return api([&] {
    rt();
    return musaSuccess;
  });
}

musaError_t musaDeviceSynchronize(void) {
  return api([&] {
    SIM_TRY(check_unsafe());
    return sync_device(current_device());
  });
}

musaError_t musaRuntimeGetVersion(int* v) {
  return api([&] {
    if (v == nullptr) return musaErrorInvalidValue;
    *v = MUSART_VERSION;
    return musaSuccess;
  });
}

musaError_t musaDriverGetVersion(int* v) {
  return api([&] {
    if (v == nullptr) return musaErrorInvalidValue;
    *v = 50100;  // major v/10000, minor (v%10000)/100: 5.1
    return musaSuccess;
  });
}

musaError_t musaProfilerStart(void) {
  return api([&] {
    rt();
    return musaSuccess;
  });
}

musaError_t musaProfilerStop(void) {
  return api([&] {
    rt();
    return musaSuccess;
  });
}

// Driver hooks (driver_hooks.h): not MUSA API, so they leave the thread's last error alone.

musaError_t musaSimDeviceContextActive(int d, int* active) {
  return hook([&] {
    if (active == nullptr) return musaErrorInvalidValue;
    if (!valid_device(d)) return musaErrorInvalidDevice;
    *active = device(d).context.load() ? 1 : 0;
    return musaSuccess;
  });
}

musaError_t musaSimThreadContext(int* d) {
  return hook([&] {
    if (d == nullptr) return musaErrorInvalidValue;
    const ThreadState& t = ts();
    *d = !t.unbound && device(t.device).context.load() ? t.device : -1;
    return musaSuccess;
  });
}

musaError_t musaSimBindDevice(int d) {
  return hook([&] {
    if (d >= 0 && !valid_device(d)) return musaErrorInvalidDevice;
    ThreadState& t = ts();
    if (d < 0) {
      t.unbound = true;
    } else {
      t.device = d;
      t.unbound = false;
    }
    return musaSuccess;
  });
}

musaError_t musaSimResetDevice(int d) {
  return hook([&] {
    if (!valid_device(d)) return musaErrorInvalidDevice;
    reset_device(d);
    return musaSuccess;
  });
}

}  // extern "C"
