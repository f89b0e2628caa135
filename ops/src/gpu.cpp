#include "gpu.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#if defined(TORCHADA_OPS_WITH_CUDA_TORCH)
#include <c10/cuda/CUDAStream.h>
#endif

namespace torchada::ops::gpu {

void* stream_for(const at::Tensor& t) {
#if defined(TORCHADA_OPS_WITH_CUDA_TORCH)
  if (t.device().is_cuda()) return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
#endif
  // PrivateUse1 (torch_musa): the backend's current stream through c10's generic interface.
  // Unverified without hardware; torch_musa's own c10::musa::getCurrentMUSAStream is the
  // alternative if native_handle() turns out not to be implemented there.
  const auto* impl = c10::impl::getDeviceGuardImpl(t.device().type());
  return impl->getStream(t.device()).native_handle();
}

}  // namespace torchada::ops::gpu
