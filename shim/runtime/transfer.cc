// Copies and fills: forwarded to MUSA exactly as a generated forwarder does (abi/export.h), and,
// while a CUPTI client records them, bracketed for torch.profiler's device rows
// (cupti/activity.h). Off, the bracket costs one relaxed load.
#include "abi/impl.h"
#include "core/trace.h"
#include "cupti/activity.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

// forward() with its backend call traced: the call's last act when nothing is recorded
// (BackendSpan::kEndsCall, as the generated forwarders), followed by the bracket's end otherwise.
template <class F, class... A>
cudaError_t forward_recorded(const activity::Launch& launch, const char* backend, Fn id, F fn,
                             A... args) {
  if (!activity::recording()) {
    trace::BackendSpan span(backend, trace::BackendSpan::kEndsCall);
    return forward(id, fn, args...);
  }
  activity::Scope scope(launch);
  trace::BackendSpan span(backend, trace::BackendSpan::kInsideCall);
  return forward(id, fn, args...);
}

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
  return forward_recorded(copy_launch(dst, src, count, kind, nullptr, activity::Api::kMemcpy),
                          "musaMemcpy", Fn::k_cudaMemcpy, musart().musaMemcpy, dst, src, count,
                          kind);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
  return forward_recorded(copy_launch(dst, src, count, kind, stream, activity::Api::kMemcpyAsync),
                          "musaMemcpyAsync", Fn::k_cudaMemcpyAsync, musart().musaMemcpyAsync, dst,
                          src, count, kind, stream);
}
cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream) {
  return impl::cudaMemcpyAsync(dst, src, count, kind, per_thread(stream));
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  return forward_recorded(fill_launch(devPtr, count, nullptr, activity::Api::kMemset), "musaMemset",
                          Fn::k_cudaMemset, musart().musaMemset, devPtr, value, count);
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return forward_recorded(fill_launch(devPtr, count, stream, activity::Api::kMemsetAsync),
                          "musaMemsetAsync", Fn::k_cudaMemsetAsync, musart().musaMemsetAsync,
                          devPtr, value, count, stream);
}
cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return impl::cudaMemsetAsync(devPtr, value, count, per_thread(stream));
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
