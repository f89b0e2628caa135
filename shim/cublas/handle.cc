// cublasCreate / cublasDestroy (both ABIs): muBLAS's, with the handle recorded in the shim's
// cuBLAS/cuBLASLt handle table (core/blas_handles.h), because a cuBLAS handle may be passed to
// cuBLASLt as a cublasLtHandle_t (shim/cublasLt/handles.cc). cublasDestroy also destroys the
// muBLASLt handle made for that use, if any. Compiled once per CUDA ABI.
#include "core/blas_handles.h"
#include "cublas/cublas.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublas12_impl.h"
#else
#include "gen/cublas13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace impl {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  constexpr Fn id = Fn::k_cublasCreate_v2;
  const auto fn = mublas_backend().table.mublasCreate;
  if (fn == nullptr) return CublasLib::missing(id);
  const cublasStatus_t s = CublasLib::status(fn(convert<mublasHandle_t*>(handle)));
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLib::fail(id, s);
  blas_handles::add(*handle, blas_handles::Kind::kCublas);
  return s;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  constexpr Fn id = Fn::k_cublasDestroy_v2;
  const auto fn = mublas_backend().table.mublasDestroy;
  if (fn == nullptr) return CublasLib::missing(id);
  // Destroyed already, or never created: refused, never passed to muBLAS.
  if (!blas_handles::known_cublas(handle)) return CublasLib::bad_handle(id);
  if (void* lt = blas_handles::remove_cublas(handle)) {
    const int st = blas_handles::destroy_lt(lt);
    if (st == 0)
      TORCHADA_LOG(kDebug, "cublasDestroy: muBLASLt handle %p of cuBLAS handle %p destroyed", lt,
                   static_cast<const void*>(handle));
    else
      TORCHADA_LOG(kWarn,
                   "cublasDestroy: muBLASLt handle %p of cuBLAS handle %p: mublasLtDestroy "
                   "answered %d",
                   lt, static_cast<const void*>(handle), st);
  }
  const cublasStatus_t s = CublasLib::status(fn(convert<mublasHandle_t>(handle)));
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLib::fail(id, s);
  return s;
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
