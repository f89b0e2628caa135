// Device properties and attributes: cudaDeviceProp filled field by field in the caller's layout,
// and the compute-capability reporting policy.
//
// TORCHADA_REPORT_CC selects what "compute capability" CUDA code sees (it gates bf16 on >= 8 and
// Hopper paths on >= 9):
//   equivalent (default)  the CUDA capability with the same feature level: mp_21 (2.1) -> 7.5,
//                         mp_22 (2.2) -> 8.0, mp_31 (3.1) -> 9.0; other values are reported as is
//   native                MUSA's own value (2.1, 2.2, 3.1...)
//   M.m                   this value for every device
// warpSize and every other property stay true.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "abi/export.h"
#include "core/env.h"
#include "core/log.h"
#include "settings/settings.h"
#include "abi/impl.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

struct Capability {
  int major, minor;
};

Capability report_capability(int musa_major, int musa_minor) {
  // Read per call (tests change it); a malformed value is reported once per value.
  const settings::Parsed policy = settings::capability(settings::Id::kReportCc, settings_warn);
  if (policy.number == 1) return {musa_major, musa_minor};  // native
  if (policy.number < 0) return {policy.major, policy.minor};
  struct Map {
    int mm, mn, cm, cn;
  };
  static constexpr Map kEquivalent[] = {{2, 1, 7, 5}, {2, 2, 8, 0}, {3, 1, 9, 0}};
  for (const Map& e : kEquivalent)
    if (e.mm == musa_major && e.mn == musa_minor) return {e.cm, e.cn};
  return {musa_major, musa_minor};
}

}  // namespace

namespace impl {

cudaError_t TORCHADA_V2(cudaGetDeviceProperties)(struct cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return fail(cudaErrorInvalidValue);
  TORCHADA_MUSA_OR_RETURN(TORCHADA_V2(cudaGetDeviceProperties), musaGetDeviceProperties);
  musaDeviceProp m{};
  cudaError_t r = to_cuda_error(musaGetDeviceProperties(&m, device));
  if (r != cudaSuccess) return fail(r);
  std::memset(static_cast<void*>(prop), 0, sizeof *prop);
  std::memcpy(prop->name, m.name, sizeof prop->name);
  prop->name[sizeof prop->name - 1] = '\0';
  static_assert(sizeof prop->uuid == sizeof m.uuid);
  std::memcpy(&prop->uuid, &m.uuid, sizeof prop->uuid);
  std::memcpy(prop->luid, m.luid, sizeof prop->luid);
#define COPY(f) prop->f = m.f
#define COPY_ARRAY(f)                                      \
  static_assert(sizeof prop->f == sizeof m.f, #f " size"); \
  std::memcpy(prop->f, m.f, sizeof prop->f)
  COPY(luidDeviceNodeMask);
  COPY(totalGlobalMem);
  COPY(sharedMemPerBlock);
  COPY(regsPerBlock);
  COPY(warpSize);
  COPY(memPitch);
  COPY(maxThreadsPerBlock);
  COPY_ARRAY(maxThreadsDim);
  COPY_ARRAY(maxGridSize);
  COPY(totalConstMem);
  COPY(textureAlignment);
  COPY(texturePitchAlignment);
  COPY(multiProcessorCount);
  COPY(integrated);
  COPY(canMapHostMemory);
  COPY(maxTexture1D);
  COPY(maxTexture1DMipmap);
  COPY_ARRAY(maxTexture2D);
  COPY_ARRAY(maxTexture2DMipmap);
  COPY_ARRAY(maxTexture2DLinear);
  COPY_ARRAY(maxTexture2DGather);
  COPY_ARRAY(maxTexture3D);
  COPY_ARRAY(maxTexture3DAlt);
  COPY(maxTextureCubemap);
  COPY_ARRAY(maxTexture1DLayered);
  COPY_ARRAY(maxTexture2DLayered);
  COPY_ARRAY(maxTextureCubemapLayered);
  COPY(maxSurface1D);
  COPY_ARRAY(maxSurface2D);
  COPY_ARRAY(maxSurface3D);
  COPY_ARRAY(maxSurface1DLayered);
  COPY_ARRAY(maxSurface2DLayered);
  COPY(maxSurfaceCubemap);
  COPY_ARRAY(maxSurfaceCubemapLayered);
  COPY(surfaceAlignment);
  COPY(concurrentKernels);
  COPY(ECCEnabled);
  COPY(pciBusID);
  COPY(pciDeviceID);
  COPY(pciDomainID);
  COPY(tccDriver);
  COPY(asyncEngineCount);
  COPY(unifiedAddressing);
  COPY(memoryBusWidth);
  COPY(l2CacheSize);
  COPY(persistingL2CacheMaxSize);
  COPY(maxThreadsPerMultiProcessor);
  COPY(streamPrioritiesSupported);
  COPY(globalL1CacheSupported);
  COPY(localL1CacheSupported);
  COPY(sharedMemPerMultiprocessor);
  COPY(regsPerMultiprocessor);
  COPY(managedMemory);
  COPY(isMultiGpuBoard);
  COPY(multiGpuBoardGroupID);
  COPY(hostNativeAtomicSupported);
  COPY(pageableMemoryAccess);
  COPY(concurrentManagedAccess);
  COPY(computePreemptionSupported);
  COPY(canUseHostPointerForRegisteredMem);
  COPY(cooperativeLaunch);
  COPY(sharedMemPerBlockOptin);
  COPY(pageableMemoryAccessUsesHostPageTables);
  COPY(directManagedMemAccessFromHost);
  COPY(maxBlocksPerMultiProcessor);
  COPY(accessPolicyMaxWindowSize);
  COPY(reservedSharedMemPerBlock);
#if TORCHADA_CUDA_ABI == 12  // fields CUDA 13 removed
  COPY(clockRate);
  COPY(deviceOverlap);
  COPY(kernelExecTimeoutEnabled);
  COPY(computeMode);
  COPY(maxTexture1DLinear);
  COPY(memoryClockRate);
  COPY(singleToDoublePrecisionPerfRatio);
  COPY(cooperativeMultiDeviceLaunch);
#endif
#undef COPY
#undef COPY_ARRAY
  // Fields MUSA's struct does not have: what is known to hold on MUSA, else 0 (not supported).
  prop->hostRegisterSupported = 1;
  // MUSA's struct has no such field; its attribute says (an error or an unknown attribute: 0).
  int ipc_events = 0;
  const auto get_attribute = ::torchada::musart().musaDeviceGetAttribute;
  if (get_attribute == nullptr ||
      get_attribute(&ipc_events, musaDevAttrIpcEventSupport, device) != musaSuccess)
    ipc_events = 0;
  prop->ipcEventSupported = ipc_events;
  prop->memoryPoolsSupported = 0;  // MUSA has no stream-ordered memory pools
#if TORCHADA_CUDA_ABI == 13
  prop->deviceNumaId = -1;
  prop->hostNumaId = -1;
#endif
  Capability cc = report_capability(m.major, m.minor);
  prop->major = cc.major;
  prop->minor = cc.minor;
  return cudaSuccess;
}

}  // namespace impl

namespace {

// cudaDeviceGetAttribute's rarer answers, out of line: the common call (an attribute both sides
// number alike, answered as MUSA answers it) keeps nothing across its one backend call.
[[gnu::noinline, gnu::cold]] cudaError_t attribute_failed(musaError_t e) {
  return fail(to_cuda_error_slow(e));
}
[[gnu::noinline]] cudaError_t attribute_special(decltype(&musaDeviceGetAttribute) get, int* value,
                                                enum cudaDeviceAttr attr, int device) {
  if (static_cast<int>(attr) < 1 || static_cast<int>(attr) >= static_cast<int>(cudaDevAttrMax)) {
    *value = 0;
    return fail(cudaErrorInvalidValue);
  }
  if (static_cast<int>(attr) > 119) {
    const musaError_t e = get(value, static_cast<musaDeviceAttr>(static_cast<int>(attr)), device);
    if (e == musaErrorInvalidValue) {
      *value = 0;
      return cudaSuccess;
    }
    return fail(to_cuda_error(e));
  }
  // The compute capability: the reporting policy.
  int mj = 0, mn = 0;
  cudaError_t r = to_cuda_error(get(&mj, musaDevAttrComputeCapabilityMajor, device));
  if (r == cudaSuccess) r = to_cuda_error(get(&mn, musaDevAttrComputeCapabilityMinor, device));
  if (r != cudaSuccess) return fail(r);
  Capability cc = report_capability(mj, mn);
  *value = attr == cudaDevAttrComputeCapabilityMajor ? cc.major : cc.minor;
  return cudaSuccess;
}

}  // namespace

namespace impl {

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
  if (value == nullptr) return fail(cudaErrorInvalidValue);
  TORCHADA_MUSA_OR_RETURN(cudaDeviceGetAttribute, musaDeviceGetAttribute);
  // musa-abi.md: musaDeviceAttr equals cudaDeviceAttr for 1..119 [B]; the sim header (or the real
  // SDK's) is checked for the ones the policy depends on. Every id the caller's header defines
  // gets a value: one MUSA does not know (a newer CUDA feature) is answered as a CUDA device
  // without the feature answers, 0.
  static_assert(static_cast<int>(musaDevAttrComputeCapabilityMajor) ==
                    static_cast<int>(cudaDevAttrComputeCapabilityMajor) &&
                static_cast<int>(musaDevAttrComputeCapabilityMinor) ==
                    static_cast<int>(cudaDevAttrComputeCapabilityMinor) &&
                static_cast<int>(cudaDevAttrComputeCapabilityMinor) ==
                    static_cast<int>(cudaDevAttrComputeCapabilityMajor) + 1 &&
                static_cast<int>(musaDevAttrWarpSize) == static_cast<int>(cudaDevAttrWarpSize) &&
                static_cast<int>(cudaDevAttrMax) > 119);
  // One range check for the common case: 1..119 but the two capability ids.
  const unsigned a = static_cast<unsigned>(attr);
  if (TORCHADA_UNLIKELY(a - 1u >= 119u ||
                        a - static_cast<unsigned>(cudaDevAttrComputeCapabilityMajor) < 2u))
    return attribute_special(musaDeviceGetAttribute, value, attr, device);
  const musaError_t e = musaDeviceGetAttribute(
      value, static_cast<enum musaDeviceAttr>(static_cast<int>(attr)), device);
  if (TORCHADA_UNLIKELY(e != musaSuccess)) return attribute_failed(e);
  return cudaSuccess;
}

cudaError_t cudaChooseDevice(int* device, const struct cudaDeviceProp* prop) {
  if (device == nullptr || prop == nullptr) return fail(cudaErrorInvalidValue);
  TORCHADA_MUSA_OR_RETURN(cudaChooseDevice, musaGetDeviceCount);
  int count = 0;
  cudaError_t r = to_cuda_error(musaGetDeviceCount(&count));
  if (r != cudaSuccess) return fail(r);
  // The closest compute capability wins, as in CUDA; ties go to the lowest ordinal.
  int best = 0;
  long best_score = -1;
  for (int d = 0; d < count; ++d) {
    struct cudaDeviceProp p;
    if (impl::TORCHADA_V2(cudaGetDeviceProperties)(&p, d) != cudaSuccess) continue;
    long score = 0;
    if (prop->major > 0)
      score -= 10L * std::labs(static_cast<long>(p.major - prop->major)) +
               std::labs(static_cast<long>(p.minor - prop->minor));
    if (prop->name[0] && std::strncmp(prop->name, p.name, sizeof p.name) == 0) score += 1000;
    score += 100000;
    if (score > best_score) best_score = score, best = d;
  }
  *device = best;
  return cudaSuccess;
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
