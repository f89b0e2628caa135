// Memory calls whose CUDA and MUSA forms differ.
#include "abi/impl.h"
#include "core/log.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

// cudaMemLocation (CUDA 12.2+/13) -> the device ordinal MUSA's CUDA 11/12-style calls take.
bool location_to_device(const struct cudaMemLocation& loc, int* device) {
  switch (loc.type) {
    case cudaMemLocationTypeDevice:
      *device = loc.id;
      return true;
    case cudaMemLocationTypeHost:
    case cudaMemLocationTypeHostNuma:
    case cudaMemLocationTypeHostNumaCurrent:
      *device = musaCpuDeviceId;
      return true;
    default:
      return false;
  }
}

}  // namespace

namespace impl {

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return fail(cudaErrorInvalidValue);
  TORCHADA_MUSA_OR_RETURN(cudaPointerGetAttributes, musaPointerGetAttributes);
  struct musaPointerAttributes m {};
  musaError_t e = musaPointerGetAttributes(&m, ptr);
  if (e == musaErrorInvalidValue && ptr != nullptr) {
    // CUDA >= 11 reports memory the runtime does not know as unregistered host memory, with
    // success; some runtimes still answer invalid-value. Clear that error and answer as CUDA.
    if (auto clear = musart().musaGetLastError) clear();
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = -2;
    attributes->devicePointer = nullptr;
    attributes->hostPointer = const_cast<void*>(ptr);
    return cudaSuccess;
  }
  cudaError_t r = to_cuda_error(e);
  if (r != cudaSuccess) return fail(r);
  switch (m.type) {
    case musaMemoryTypeHost:
      attributes->type = cudaMemoryTypeHost;
      break;
    case musaMemoryTypeDevice:
      attributes->type = cudaMemoryTypeDevice;
      break;
    case musaMemoryTypeManaged:
      attributes->type = cudaMemoryTypeManaged;
      break;
    default:
      attributes->type = cudaMemoryTypeUnregistered;
      break;
  }
  attributes->device = m.device;
  attributes->devicePointer = m.devicePointer;
  attributes->hostPointer = m.hostPointer;
  return cudaSuccess;
}

// Stream-ordered allocation, emulated: MUSA has no stream-ordered allocator. Allocating at once
// satisfies "usable by work enqueued on the stream after this call"; freeing waits for the
// stream so no earlier work can still be using the memory.
cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  (void)hStream;
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue);
  TORCHADA_MUSA_OR_RETURN(cudaMallocAsync, musaMalloc);
  return fail(to_cuda_error(musaMalloc(devPtr, size)));
}
cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
  return impl::cudaMallocAsync(devPtr, size, per_thread(hStream));
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  TORCHADA_MUSA_OR_RETURN(cudaFreeAsync, musaFree);
  TORCHADA_MUSA_OR_RETURN(cudaFreeAsync, musaStreamSynchronize);
  cudaError_t r = to_cuda_error(musaStreamSynchronize(convert<musaStream_t>(hStream)));
  if (r != cudaSuccess) return fail(r);
  return fail(to_cuda_error(musaFree(devPtr)));
}
cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
  return impl::cudaFreeAsync(devPtr, per_thread(hStream));
}

cudaError_t TORCHADA_V2(cudaMemAdvise)(const void* devPtr, size_t count,
                                       enum cudaMemoryAdvise advice,
                                       struct cudaMemLocation location) {
  TORCHADA_MUSA_OR_RETURN(TORCHADA_V2(cudaMemAdvise), musaMemAdvise);
  int device = 0;
  if (!location_to_device(location, &device)) return fail(cudaErrorInvalidValue);
  return fail(to_cuda_error(musaMemAdvise(
      devPtr, count, static_cast<enum musaMemoryAdvise>(static_cast<int>(advice)), device)));
}

cudaError_t TORCHADA_V2(cudaMemPrefetchAsync)(const void* devPtr, size_t count,
                                              struct cudaMemLocation location, unsigned int flags,
                                              cudaStream_t stream) {
  TORCHADA_MUSA_OR_RETURN(TORCHADA_V2(cudaMemPrefetchAsync), musaMemPrefetchAsync);
  int device = 0;
  if (!location_to_device(location, &device)) return fail(cudaErrorInvalidValue);
  if (flags != 0) {
    TORCHADA_LOG(kWarn, "cudaMemPrefetchAsync: flags 0x%x have no MUSA counterpart", flags);
    return fail(cudaErrorNotSupported);
  }
  return fail(
      to_cuda_error(musaMemPrefetchAsync(devPtr, count, device, convert<musaStream_t>(stream))));
}
cudaError_t TORCHADA_V2_PTSZ(cudaMemPrefetchAsync)(const void* devPtr, size_t count,
                                                   struct cudaMemLocation location,
                                                   unsigned int flags, cudaStream_t stream) {
  return impl::TORCHADA_V2(cudaMemPrefetchAsync)(devPtr, count, location, flags,
                                                 per_thread(stream));
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
