// Version queries. CUDA programs compare these against the version they were built for, so the
// shim reports the caller's own runtime version (from the header of its ABI) for both; the MUSA
// runtime's real versions go to the log at info level when the backend loads.
#include "abi/impl.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace impl {

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) return fail(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return fail(cudaErrorInvalidValue);
  // No backend: CUDA reports 0 when no driver is installed.
  *driverVersion = backend_failed() ? 0 : CUDART_VERSION;
  return cudaSuccess;
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
