// NCCL -> MCCL: the traits the generated exports (shim/gen/nccl2_exports.cc) and the hand-written
// translations (shim/nccl/*.cc) share. libnccl.so.2 has one ABI; it is built against the CUDA 13
// headers (TORCHADA_CUDA_ABI=13) for cudaStream_t.
#pragma once

#include <mccl.h>
#include <nccl.h>

#include "abi/library.h"
#include "core/library_tables.h"
#include "core/log.h"
#include "gen/fn_ids.h"
#include "gen/nccl2_types.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {

struct NcclLib {
  using Status = ncclResult_t;
  static constexpr Status kSuccess = ncclSuccess;

  static const LibraryBackend<McclTable>& backend() { return mccl_backend(); }
  // Null until the library is loaded (lib_ready, lib_backend).
  [[gnu::always_inline]] static const LibraryBackend<McclTable>* ready() {
    return detail::g_mccl_backend.load(std::memory_order_acquire);
  }

  static Status status(mcclResult_t s) {
    return s == mcclSuccess ? ncclSuccess : Pair<ncclResult_t>::to_cuda(s);
  }
  // No MCCL: the error NCCL gives when the CUDA side is unusable.
  static Status missing(Fn id) {
    if (backend().failed) return ncclSystemError;
    note_missing(id);
    return ncclInvalidUsage;
  }
  static Status unsupported(Fn id) {
    note_unsupported(id);
    return ncclInvalidUsage;
  }
  // A failed MCCL call (lib_error): counted.
  static Status fail(Fn id, Status s) {
    note_error(id);
    return s;
  }
  static Status invalid_enum(Fn id) {
    TORCHADA_LOG(kWarn, "%s: an enum argument has no MCCL counterpart: ncclInvalidArgument",
                 kFnNames[static_cast<int>(id)]);
    note_error(id);
    return ncclInvalidArgument;
  }
};

// The device of `comm` (mcclCommMuDevice, or a library's mcclCommCuDevice): ncclSuccess, or the
// error to return (counted against `id`). shim/nccl/comm.cc.
ncclResult_t comm_device(Fn id, ncclComm_t comm, int* device);

// The status of an MCCL call, counted against `id` when it is an error (ncclInProgress is not).
ncclResult_t finish(Fn id, mcclResult_t r);

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
