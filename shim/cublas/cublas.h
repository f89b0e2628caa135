// cuBLAS -> muBLAS: the traits the generated exports (shim/gen/cublas<abi>_exports.cc) and the
// hand-written translations (shim/cublas/*.cc) share. Compiled once per CUDA ABI.
#pragma once

#include <cublas.h>
#include <mublas.h>

#include "abi/library.h"
#include "core/blas_handles.h"
#include "core/library_tables.h"
#include "core/log.h"
#include "gen/fn_ids.h"
#include "gen/mublas_table.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublas12_types.h"
#else
#include "gen/cublas13_types.h"
#endif

namespace torchada {

inline namespace TORCHADA_ABI_NS {

// muBLAS's own text for a status, through whichever name the loaded SDK exports
// (mublasGetStatusString from 4.2, mublasStatus_to_string before); for logs.
const char* mublas_status_text(mublasStatus_t s);

struct CublasLib {
  using Status = cublasStatus_t;
  static constexpr Status kSuccess = CUBLAS_STATUS_SUCCESS;

  static const LibraryBackend<MublasTable>& backend() { return mublas_backend(); }
  // Null until the library is loaded (lib_ready, lib_backend).
  [[gnu::always_inline]] static const LibraryBackend<MublasTable>* ready() {
    return detail::g_mublas_backend.load(std::memory_order_acquire);
  }

  static Status status(mublasStatus_t s) {
    if (__builtin_expect(s == MUBLAS_STATUS_SUCCESS, 1)) return CUBLAS_STATUS_SUCCESS;
    return status_slow(s);
  }
  [[gnu::noinline, gnu::cold]] static Status status_slow(mublasStatus_t s) {
    TORCHADA_LOG(kDebug, "muBLAS reported %d: %s", static_cast<int>(s), mublas_status_text(s));
    return Pair<cublasStatus_t>::to_cuda(s);
  }
  // No muBLAS at all: like cuBLAS without a usable GPU.
  static Status missing(Fn id) {
    if (backend().failed) return CUBLAS_STATUS_NOT_INITIALIZED;
    note_missing(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  static Status unsupported(Fn id) {
    note_unsupported(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  // A failed muBLAS call: counted; muBLAS's refusal (NOT_IMPLEMENTED, cuBLAS's NOT_SUPPORTED)
  // names the function once in the log. `why`: what was refused, when the caller knows.
  [[gnu::noinline, gnu::cold]] static Status fail(Fn id, Status s, const char* why = nullptr) {
    note_error(id);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) note_backend_refusal(id, "muBLAS", why);
    return s;
  }
  // A handle cublasCreate did not return, or cublasDestroy took back: as cuBLAS documents for
  // an uninitialised handle, and never passed to muBLAS (which would dereference it).
  [[gnu::noinline, gnu::cold]] static Status bad_handle(Fn id) {
    TORCHADA_LOG(kWarn,
                 "%s: the cuBLAS handle is not one cublasCreate returned (destroyed, or never "
                 "created): CUBLAS_STATUS_NOT_INITIALIZED",
                 kFnNames[static_cast<int>(id)]);
    note_error(id);
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  static Status invalid_enum(Fn id) {
    TORCHADA_LOG(kWarn,
                 "%s: an enum argument has no muBLAS counterpart: CUBLAS_STATUS_INVALID_VALUE",
                 kFnNames[static_cast<int>(id)]);
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  static Status too_large(Fn id, const char* what, long long v) {
    TORCHADA_LOG(kWarn,
                 "%s: %s = %lld does not fit muBLAS's 32-bit argument: CUBLAS_STATUS_NOT_SUPPORTED",
                 kFnNames[static_cast<int>(id)], what, v);
    note_error(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  // A 64-bit result cannot be narrowed when muBLAS writes it on the device later.
  static bool device_pointer_mode(const LibraryBackend<MublasTable>& be, cublasHandle_t h) {
    mublasPointerMode_t mode = MUBLAS_POINTER_MODE_HOST;
    return be.table.mublasGetPointerMode &&
           be.table.mublasGetPointerMode(reinterpret_cast<mublasHandle_t>(h), &mode) ==
               MUBLAS_STATUS_SUCCESS &&
           mode == MUBLAS_POINTER_MODE_DEVICE;
  }
  static Status refuse_device_result(Fn id, const char* what) {
    TORCHADA_LOG(kWarn,
                 "%s: the 64-bit result %s in device pointer mode cannot be narrowed from muBLAS's "
                 "32-bit one: CUBLAS_STATUS_NOT_SUPPORTED",
                 kFnNames[static_cast<int>(id)], what);
    note_error(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
};

// Every cuBLAS call's handle is checked against the handles cublasCreate returned
// (core/blas_handles.h) before it reaches muBLAS.
template <>
struct HandleOf<cublasHandle_t> : std::true_type {
  [[gnu::always_inline]] static bool known(cublasHandle_t h) {
    return blas_handles::known_cublas(h);
  }
};

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
