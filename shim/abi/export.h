// What generated exports and hand-written implementations of one CUDA ABI share. This header is
// compiled once per ABI (TORCHADA_CUDA_ABI = 12 or 13, TORCHADA_ABI_NS = abi12 or abi13) so that
// each sees its own NVIDIA header and nothing ABI-dependent is shared across the two.
#pragma once

#include <cuda_runtime_api.h>
#include <musa_runtime_api.h>

#include <cstring>

#include "abi/convert.h"
#include "core/backend.h"
#include "core/policy.h"
#include "core/trace.h"
#include "gen/fn_ids.h"

#if !defined(TORCHADA_CUDA_ABI) || (TORCHADA_CUDA_ABI != 12 && TORCHADA_CUDA_ABI != 13)
#error "TORCHADA_CUDA_ABI must be 12 or 13"
#endif
#if TORCHADA_CUDA_ABI == 13
static_assert(CUDART_VERSION >= 13000 && CUDART_VERSION < 14000, "CUDA 13 headers expected");
#else
static_assert(CUDART_VERSION >= 12000 && CUDART_VERSION < 13000, "CUDA 12 headers expected");
#endif

// Names whose CUDA 13 form is the CUDA 12 "_v2" (or "_v3") form.
#if TORCHADA_CUDA_ABI == 12
#define TORCHADA_V2(name) name##_v2
#define TORCHADA_V2_PTSZ(name) name##_v2_ptsz
#define TORCHADA_CAPTURE_INFO cudaStreamGetCaptureInfo_v3
#define TORCHADA_CAPTURE_INFO_PTSZ cudaStreamGetCaptureInfo_v3_ptsz
#else
#define TORCHADA_V2(name) name
#define TORCHADA_V2_PTSZ(name) name##_ptsz
#define TORCHADA_CAPTURE_INFO cudaStreamGetCaptureInfo
#define TORCHADA_CAPTURE_INFO_PTSZ cudaStreamGetCaptureInfo_ptsz
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {

static_assert(static_cast<int>(cudaErrorNotSupported) == 801 &&
              static_cast<int>(cudaErrorNoKernelImageForDevice) == 209);

// Records `e` as this thread's last error (when it is one) and returns it.
inline cudaError_t fail(cudaError_t e) {
  if (e != cudaSuccess) set_shim_error(static_cast<int>(e));
  return e;
}

cudaError_t to_cuda_error_slow(musaError_t e);
musaError_t to_musa_error(cudaError_t e);
// Success is the common case: no table walk, no call.
inline cudaError_t to_cuda_error(musaError_t e) {
  return TORCHADA_UNLIKELY(e != musaSuccess) ? to_cuda_error_slow(e) : cudaSuccess;
}

// The backend lacks the function behind `fn` (or no backend loaded at all).
inline cudaError_t missing_in_backend(Fn fn) {
  if (backend_failed()) return fail(cudaErrorNoDevice);
  note_missing(fn);
  return fail(cudaErrorNotSupported);
}

inline cudaError_t unsupported(Fn fn) {
  note_unsupported(fn);
  return fail(cudaErrorNotSupported);
}

inline cudaError_t kernel_unavailable(Fn fn, const void* func) {
  if (backend_failed()) return fail(cudaErrorNoDevice);
  bool known = note_kernel_refused(fn, func);
  return fail(known ? cudaErrorNoKernelImageForDevice : cudaErrorInvalidDeviceFunction);
}

// A forwarded call's failure (or not: a MUSA code may translate to cudaSuccess): translated,
// counted and recorded. Out of line, so that the forwarder keeps nothing across its call.
[[gnu::noinline, gnu::cold]] inline cudaError_t forward_failed(Fn id, musaError_t e) {
  const cudaError_t r = to_cuda_error_slow(e);
  if (r != cudaSuccess) {
    note_error(id);
    set_shim_error(static_cast<int>(r));
  }
  return r;
}
[[gnu::noinline, gnu::cold]] inline cudaError_t forward_missing(Fn id) {
  return missing_in_backend(id);
}

// A generated forwarder's body: convert each argument to the MUSA parameter type, call, translate
// the result. `fn` is null when the backend library lacks the function.
template <class R, class... P, class... A>
[[gnu::always_inline]] inline cudaError_t forward(Fn id, R (*fn)(P...), A... args) {
  static_assert(sizeof...(P) == sizeof...(A), "argument count differs from the MUSA signature");
  if (TORCHADA_UNLIKELY(fn == nullptr)) return forward_missing(id);
  const musaError_t e = fn(convert<P>(args)...);
  if (TORCHADA_UNLIKELY(e != musaSuccess)) return forward_failed(id, e);
  return cudaSuccess;
}

// forward() with the backend call recorded as a nested trace event when the export is traced.
// The generated bodies return its result at once: the backend call ends the export's call.
template <bool kTraced, class F, class... A>
[[gnu::always_inline]] inline cudaError_t traced_forward(const char* backend_name, Fn id, F fn,
                                                         A... args) {
  if constexpr (kTraced) {
    trace::BackendSpan span(backend_name, trace::BackendSpan::kEndsCall);
    return forward(id, fn, args...);
  } else {
    (void)backend_name;
    return forward(id, fn, args...);
  }
}

// The "_ptsz" exports: the legacy default stream (0) means this thread's per-thread stream.
inline cudaStream_t per_thread(cudaStream_t s) { return s ? s : cudaStreamPerThread; }

// The MUSA runtime call an implementation needs, or the error to return when it is missing.
// The Fn id of an exported name; the argument is macro-expanded first (TORCHADA_V2(...)).
#define TORCHADA_FN(name) TORCHADA_FN_(name)
#define TORCHADA_FN_(name) ::torchada::Fn::k_##name
#define TORCHADA_MUSA_OR_RETURN(fnid, name) \
  auto name = ::torchada::musart().name;    \
  if (TORCHADA_UNLIKELY(name == nullptr)) return ::torchada::missing_in_backend(TORCHADA_FN(fnid))

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
