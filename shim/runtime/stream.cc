// Stream calls whose CUDA and MUSA forms differ.
#include "abi/impl.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace impl {

#if TORCHADA_CUDA_ABI >= 13
// cudaLaunchHostFunc_v2 (CUDA 13.2): syncMode only says how the stream waits for the host
// function (blocked or spinning); both orders and results are musaLaunchHostFunc's.
cudaError_t cudaLaunchHostFunc_v2(cudaStream_t stream, cudaHostFn_t fn, void* userData,
                                  unsigned int syncMode) {
  if (syncMode != cudaHostTaskBlocking && syncMode != cudaHostTaskSpinWait)
    return fail(cudaErrorInvalidValue);
  TORCHADA_MUSA_OR_RETURN(cudaLaunchHostFunc_v2, musaLaunchHostFunc);
  return fail(to_cuda_error(
      musaLaunchHostFunc(convert<musaStream_t>(stream), convert<musaHostFn_t>(fn), userData)));
}
cudaError_t cudaLaunchHostFunc_v2_ptsz(cudaStream_t stream, cudaHostFn_t fn, void* userData,
                                       unsigned int syncMode) {
  return impl::cudaLaunchHostFunc_v2(per_thread(stream), fn, userData, syncMode);
}
#endif

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
