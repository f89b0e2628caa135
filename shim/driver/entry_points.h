// The driver entry point lookup, for the runtime's cudaGetDriverEntryPoint*
// (shim/runtime/kernel.cc, compiled per CUDA ABI) and the driver's cuGetProcAddress. Free of CUDA
// headers.
#pragma once

namespace torchada {
namespace drv {

// Values equal to cudaDriverEntryPointQueryResult's and CUdriverProcAddressQueryResult's.
enum class EntryStatus : int { kFound = 0, kSymbolNotFound = 1, kVersionNotSufficient = 2 };

struct EntryLookup {
  void* fn;  // null unless kFound
  EntryStatus status;
};

// The function CUDA's rules pick for `symbol` (a base name: "cuMemCreate") at CUDA version
// `version`: the newest ABI not newer than it, the _ptsz form first when `per_thread`. Found only
// when symbols/driver.txt hands it out and the loaded libmusa exports what backs it.
EntryLookup lookup_entry_point(const char* symbol, unsigned version, bool per_thread);

// The CUDA version the shim's driver level reports (cuDriverGetVersion): CUDA_VERSION of the
// cuda.h it was built with.
int driver_version();

}  // namespace drv
}  // namespace torchada
