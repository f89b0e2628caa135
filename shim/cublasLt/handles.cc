// cuBLASLt handles: cublasLtCreate / cublasLtDestroy, and the resolution every other call taking a
// cublasLtHandle_t goes through (CublasLtLib::resolve_handle; the generated exports call it,
// core/blas_handles.h keeps the table). A handle is either cublasLtCreate's muBLASLt handle or a
// cublasCreate handle cast, as NVIDIA allows and PyTorch does (getCurrentCUDABlasLtHandle): the
// latter gets a muBLASLt handle of its own on its first cuBLASLt use, destroyed by cublasDestroy.
//
// cublasLtDestroy of a cuBLAS handle: NVIDIA's cublasLtDestroy calls cublasLtShutdownCtx on the
// context, which cuBLAS embeds in its handle (libcublas initialises it with cublasLtCtxInit and
// shuts it down in cublasDestroy); the memory is freed only for a context cublasLtCreate allocated.
// So it answers CUBLAS_STATUS_SUCCESS and the cuBLAS handle stays allocated. torchada does the
// same: the muBLASLt handle made for the cuBLAS handle is destroyed, the cuBLAS handle is left
// alone (still registered; a later cuBLASLt call with it makes a new muBLASLt handle), and
// cublasDestroy still destroys it. A NULL handle is CUBLAS_STATUS_INVALID_VALUE, as in cuBLASLt.
// Compiled once per CUDA ABI; the table is shared by both.
#include "cublasLt/cublasLt.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_impl.h"
#else
#include "gen/cublasLt13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {

CublasLtLib::Status CublasLtLib::resolve_handle_slow(Fn id, cublasLtHandle_t h,
                                                     mublasLtHandle_t& out) {
  const char* name = kFnNames[static_cast<int>(id)];
  const blas_handles::Resolved r = blas_handles::resolve(h);
  if (r.lt != nullptr) {
    if (r.created)
      TORCHADA_LOG(kInfo,
                   "%s: cuBLAS handle %p used as a cuBLASLt handle: muBLASLt handle %p created for "
                   "it (destroyed by cublasDestroy)",
                   name, static_cast<const void*>(h), r.lt);
    out = static_cast<mublasLtHandle_t>(r.lt);
    return kSuccess;
  }
  note_error(id);
  if (r.kind == blas_handles::Kind::kUnknown) {
    TORCHADA_LOG(kWarn,
                 "%s: handle %p was not made by cublasLtCreate nor by cublasCreate (or was "
                 "destroyed): CUBLAS_STATUS_NOT_INITIALIZED",
                 name, static_cast<const void*>(h));
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  // A cuBLAS handle whose muBLASLt handle could not be made.
  if (r.no_create) {
    TORCHADA_LOG(kWarn, "%s: cuBLAS handle %p: no muBLASLt to create its cuBLASLt handle with",
                 name, static_cast<const void*>(h));
    return missing(Fn::k_cublasLtCreate);
  }
  const Status s = status(static_cast<mublasStatus_t>(r.musa_status));
  TORCHADA_LOG(kWarn, "%s: cuBLAS handle %p: mublasLtCreate failed (muBLASLt status %d): %s", name,
               static_cast<const void*>(h), r.musa_status, impl::cublasLtGetStatusName(s));
  return s;
}

namespace impl {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* lightHandle) {
  constexpr Fn id = Fn::k_cublasLtCreate;
  const auto fn = mublasLt_backend().table.mublasLtCreate;
  if (fn == nullptr) return CublasLtLib::missing(id);
  if (lightHandle == nullptr) {
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  mublasLtHandle_t h = nullptr;
  const cublasStatus_t s = CublasLtLib::status(fn(&h));
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLtLib::fail(id, s);
  blas_handles::add(h, blas_handles::Kind::kLt);
  *lightHandle = reinterpret_cast<cublasLtHandle_t>(h);
  return s;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
  constexpr Fn id = Fn::k_cublasLtDestroy;
  if (lightHandle == nullptr) {
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  void* lt = nullptr;
  switch (blas_handles::release_lt(lightHandle, &lt)) {
    case blas_handles::Kind::kUnknown:
      TORCHADA_LOG(kWarn,
                   "cublasLtDestroy: handle %p was not made by cublasLtCreate nor by cublasCreate "
                   "(or was destroyed): CUBLAS_STATUS_NOT_INITIALIZED",
                   static_cast<const void*>(lightHandle));
      note_error(id);
      return CUBLAS_STATUS_NOT_INITIALIZED;
    case blas_handles::Kind::kCublas: {
      // NVIDIA shuts down the cuBLASLt context the cuBLAS handle embeds and keeps the handle.
      const int st = lt != nullptr ? blas_handles::destroy_lt(lt) : 0;
      TORCHADA_LOG(kInfo,
                   "cublasLtDestroy on cuBLAS handle %p: its muBLASLt handle %p released (status "
                   "%d); the cuBLAS handle stays valid",
                   static_cast<const void*>(lightHandle), lt, st);
      return CUBLAS_STATUS_SUCCESS;
    }
    case blas_handles::Kind::kLt:
      break;
  }
  const int st = blas_handles::destroy_lt(lt);
  if (st < 0) return CublasLtLib::missing(id);
  const cublasStatus_t s = CublasLtLib::status(static_cast<mublasStatus_t>(st));
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLtLib::fail(id, s);
  return s;
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
