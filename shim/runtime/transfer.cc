// Copies and fills: forwarded to MUSA as they are, each bracketed for torch.profiler's device rows
// (cupti/activity.h) while a CUPTI client records them. Off, the bracket is one relaxed load.
#include "abi/impl.h"
#include "cupti/activity.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

activity::Launch copy_launch(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                             cudaStream_t stream, activity::Api api) {
  activity::Launch l;
  l.work = activity::Work::kMemcpy;
  l.api = api;
  l.stream = convert<musaStream_t>(stream);
  l.bytes = count;
  l.dst = dst;
  l.src = src;
  l.copy_kind = static_cast<int>(kind);
  return l;
}

activity::Launch fill_launch(void* dst, size_t count, cudaStream_t stream, activity::Api api) {
  activity::Launch l;
  l.work = activity::Work::kMemset;
  l.api = api;
  l.stream = convert<musaStream_t>(stream);
  l.bytes = count;
  l.dst = dst;
  return l;
}

}  // namespace

namespace impl {

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  TORCHADA_MUSA_OR_RETURN(cudaMemcpy, musaMemcpy);
  activity::Scope scope(copy_launch(dst, src, count, kind, nullptr, activity::Api::kMemcpy));
  return fail(to_cuda_error(musaMemcpy(dst, src, count, convert<musaMemcpyKind>(kind))));
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
  TORCHADA_MUSA_OR_RETURN(cudaMemcpyAsync, musaMemcpyAsync);
  activity::Scope scope(copy_launch(dst, src, count, kind, stream, activity::Api::kMemcpyAsync));
  return fail(to_cuda_error(musaMemcpyAsync(dst, src, count, convert<musaMemcpyKind>(kind),
                                            convert<musaStream_t>(stream))));
}
cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream) {
  return impl::cudaMemcpyAsync(dst, src, count, kind, per_thread(stream));
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  TORCHADA_MUSA_OR_RETURN(cudaMemset, musaMemset);
  activity::Scope scope(fill_launch(devPtr, count, nullptr, activity::Api::kMemset));
  return fail(to_cuda_error(musaMemset(devPtr, value, count)));
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  TORCHADA_MUSA_OR_RETURN(cudaMemsetAsync, musaMemsetAsync);
  activity::Scope scope(fill_launch(devPtr, count, stream, activity::Api::kMemsetAsync));
  return fail(to_cuda_error(musaMemsetAsync(devPtr, value, count, convert<musaStream_t>(stream))));
}
cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return impl::cudaMemsetAsync(devPtr, value, count, per_thread(stream));
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
