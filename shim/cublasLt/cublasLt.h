// cuBLASLt -> muBLASLt: the traits the generated exports (shim/gen/cublasLt<abi>_exports.cc) and
// the hand-written translations (shim/cublasLt/*.cc) share. Compiled once per CUDA ABI.
#pragma once

#include <cublasLt.h>
#include <mublasLt.h>

#include "abi/library.h"
#include "core/blas_handles.h"
#include "core/library_tables.h"
#include "core/log.h"
#include "gen/fn_ids.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_types.h"
#else
#include "gen/cublasLt13_types.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {

struct CublasLtLib {
  using Status = cublasStatus_t;
  static constexpr Status kSuccess = CUBLAS_STATUS_SUCCESS;

  static const LibraryBackend<MublasLtTable>& backend() { return mublasLt_backend(); }
  // Null until the library is loaded (lib_ready, lib_backend).
  [[gnu::always_inline]] static const LibraryBackend<MublasLtTable>* ready() {
    return detail::g_mublasLt_backend.load(std::memory_order_acquire);
  }

  static Status status(mublasStatus_t s) {
    return s == MUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_SUCCESS : Pair<cublasStatus_t>::to_cuda(s);
  }
  // No muBLASLt (SDK < 4.3, or no backend): like cuBLASLt without a usable GPU.
  static Status missing(Fn id) {
    if (backend().failed) return CUBLAS_STATUS_NOT_INITIALIZED;
    note_missing(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  static Status unsupported(Fn id) {
    note_unsupported(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  // A failed muBLASLt call: counted; muBLASLt's refusal (NOT_IMPLEMENTED, cuBLAS's NOT_SUPPORTED)
  // names the function once in the log. `why`: what was refused, when the caller knows.
  [[gnu::noinline, gnu::cold]] static Status fail(Fn id, Status s, const char* why = nullptr) {
    note_error(id);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) note_backend_refusal(id, "muBLASLt", why);
    return s;
  }
  // The muBLASLt handle behind a cublasLtHandle_t argument, for every cuBLASLt call that takes one
  // but cublasLtCreate / cublasLtDestroy (symbols/libraries.py generates the call; translate rows
  // receive the result): cublasLtCreate's handle as is, a cublasCreate handle's own muBLASLt
  // handle (made on its first use, core/blas_handles.h); anything else is refused, logged, with
  // CUBLAS_STATUS_NOT_INITIALIZED.
  static Status resolve_handle(Fn id, cublasLtHandle_t h, mublasLtHandle_t& out) {
    if (void* lt = blas_handles::lt_fast(h); __builtin_expect(lt != nullptr, 1)) {
      out = static_cast<mublasLtHandle_t>(lt);
      return kSuccess;
    }
    return resolve_handle_slow(id, h, out);
  }
  static Status resolve_handle_slow(Fn id, cublasLtHandle_t h, mublasLtHandle_t& out);
  static Status invalid_enum(Fn id) {
    TORCHADA_LOG(kWarn,
                 "%s: an enum argument has no muBLASLt counterpart: CUBLAS_STATUS_INVALID_VALUE",
                 kFnNames[static_cast<int>(id)]);
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
};

// The layouts the caller set to CUBLASLT_BATCH_MODE_POINTER_ARRAY, which muBLASLt lacks
// (shim/cublasLt/matmul.cc): muBLASLt's layout object stays strided, the shim records the mode
// here and cublasLtMatmul emulates it. Creating, initialising or destroying a layout forgets its
// address.
namespace pointer_array_layouts {
// false when the table is full (refused by the caller).
bool add(const void* layout);
void remove(const void* layout);
bool contains(const void* layout);
// Whether any layout is recorded: cublasLtMatmul's one check on its usual path.
bool any();
constexpr int kCapacity = 4096;
}  // namespace pointer_array_layouts

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
