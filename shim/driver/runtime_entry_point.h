// cudaGetDriverEntryPoint* for one CUDA ABI (included by shim/runtime/kernel.cc, compiled once per
// ABI): argument checks and flags in the caller's cuda_runtime_api.h terms, the lookup itself in
// shim/driver/entry_points.cc.
#pragma once

#include "abi/export.h"
#include "driver/entry_points.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {

static_assert(static_cast<int>(cudaDriverEntryPointSuccess) ==
                      static_cast<int>(drv::EntryStatus::kFound) &&
                  static_cast<int>(cudaDriverEntryPointSymbolNotFound) ==
                      static_cast<int>(drv::EntryStatus::kSymbolNotFound) &&
                  static_cast<int>(cudaDriverEntryPointVersionNotSufficent) ==
                      static_cast<int>(drv::EntryStatus::kVersionNotSufficient),
              "cudaDriverEntryPointQueryResult values");

// NVIDIA's documented behaviour: a symbol that is not found (or not for this version) is success
// with a null pointer and the reason in *driverStatus; a version above the driver's is
// cudaErrorInvalidValue (the shim's driver version is the one cudaDriverGetVersion reports: the
// caller's runtime version). `ptsz_export`: the _ptsz export, where cudaEnableDefault means the
// per-thread default stream.
inline cudaError_t driver_entry_point(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                      unsigned long long flags, bool ptsz_export,
                                      enum cudaDriverEntryPointQueryResult* driverStatus) {
  if (symbol == nullptr || funcPtr == nullptr) return fail(cudaErrorInvalidValue);
  *funcPtr = nullptr;
  if (flags != cudaEnableDefault && flags != cudaEnableLegacyStream &&
      flags != cudaEnablePerThreadDefaultStream)
    return fail(cudaErrorInvalidValue);
  if (cudaVersion > static_cast<unsigned>(CUDART_VERSION)) return fail(cudaErrorInvalidValue);
  if (backend_failed()) return fail(cudaErrorNoDevice);
  const bool per_thread =
      flags == cudaEnablePerThreadDefaultStream || (flags == cudaEnableDefault && ptsz_export);
  const drv::EntryLookup r = drv::lookup_entry_point(symbol, cudaVersion, per_thread);
  *funcPtr = r.fn;
  if (driverStatus) *driverStatus = static_cast<enum cudaDriverEntryPointQueryResult>(r.status);
  return cudaSuccess;
}

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
