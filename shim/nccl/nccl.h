// NCCL -> MCCL: the traits the generated exports (shim/gen/nccl2_exports.cc) and the hand-written
// translations (shim/nccl/*.cc) share. libnccl.so.2 has one ABI; it is built against the CUDA 13
// headers (TORCHADA_CUDA_ABI=13) for cudaStream_t.
#pragma once

#include <mccl.h>
#include <nccl.h>

#include "abi/library.h"
#include "core/handle_table.h"
#include "core/library_tables.h"
#include "core/log.h"
#include "gen/fn_ids.h"
#include "gen/nccl2_types.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {

// What ncclGetLastError answers after the shim refused a call itself (MCCL never saw it): the
// calling thread's "<function>: <what>", until MCCL reports an error again (what == nullptr
// clears it). shim/nccl/info.cc.
void set_last_error(Fn id, const char* what);

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
  // A failed MCCL call (lib_error): counted; MCCL's last error is the newest.
  static Status fail(Fn id, Status s) {
    set_last_error(id, nullptr);
    note_error(id);
    return s;
  }
  [[gnu::noinline, gnu::cold]] static Status bad_handle(Fn id) {
    static constexpr char kWhat[] =
        "the communicator is not one ncclCommInit*/ncclCommSplit returned (NULL, destroyed, "
        "aborted or never created)";
    TORCHADA_LOG(kWarn, "%s: %s: ncclInvalidArgument", kFnNames[static_cast<int>(id)], kWhat);
    set_last_error(id, kWhat);
    note_error(id);
    return ncclInvalidArgument;
  }
  static Status invalid_enum(Fn id) {
    TORCHADA_LOG(kWarn, "%s: an enum argument has no MCCL counterpart: ncclInvalidArgument",
                 kFnNames[static_cast<int>(id)]);
    note_error(id);
    return ncclInvalidArgument;
  }
};

// The communicators ncclCommInitRank/InitAll/InitRankConfig/Split returned and
// ncclCommDestroy/Abort have not taken back (shim/nccl/comms.cc): every call taking a
// communicator is refused (NcclLib::bad_handle) for anything else, before MCCL dereferences it.
// The value word is unused.
extern HandleTable g_nccl_comms;

template <>
struct HandleOf<ncclComm_t> : std::true_type {
  [[gnu::always_inline]] static bool known(ncclComm_t c) {
    return g_nccl_comms.contains(reinterpret_cast<std::uintptr_t>(c));
  }
};

// After a successful (or in-progress, non-blocking) creation: the communicator *out is live, now
// or, inside a group, when the group ends (shim/nccl/comms.cc).
void add_comm(ncclComm_t* out);

// The device of `comm` (mcclCommMuDevice, or a library's mcclCommCuDevice): ncclSuccess, or the
// error to return (counted against `id`). shim/nccl/comm.cc.
ncclResult_t comm_device(Fn id, ncclComm_t comm, int* device);

// The status of an MCCL call, counted against `id` when it is an error (ncclInProgress is not).
ncclResult_t finish(Fn id, mcclResult_t r);

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
