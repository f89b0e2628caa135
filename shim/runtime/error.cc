// Errors: translation between musaError_t and the caller's cudaError_t, and CUDA's "last error"
// semantics across errors the backend produced and errors the shim itself returned.
#include <cstdio>
#include <cstring>
#include <mutex>

#include "abi/impl.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {

cudaError_t to_cuda_error_slow(musaError_t e) { return Pair<enum cudaError>::to_cuda(e); }
musaError_t to_musa_error(cudaError_t e) { return Pair<enum cudaError>::to_musa(e); }

namespace impl {

cudaError_t cudaGetLastError() {
  int shim = take_shim_error();
  cudaError_t backend = cudaSuccess;
  if (auto f = musart().musaGetLastError) backend = to_cuda_error(f());
  return shim ? static_cast<cudaError_t>(shim) : backend;
}

cudaError_t cudaPeekAtLastError() {
  if (int shim = peek_shim_error()) return static_cast<cudaError_t>(shim);
  if (auto f = musart().musaPeekAtLastError) return to_cuda_error(f());
  return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t error) {
  for (const ErrorName& e : kCudaErrorNames)
    if (e.code == error) return e.name;
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  if (error == cudaErrorNotSupported) return "operation not supported on this device";
  if (error == cudaErrorNoKernelImageForDevice)
    return "no kernel image is available for execution on the device (NVIDIA device code "
           "cannot run on MUSA)";
  if (auto f = musart().musaGetErrorString) {
    const char* s = f(to_musa_error(error));
    if (s && *s) return s;
  }
  return impl::cudaGetErrorName(error);
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
