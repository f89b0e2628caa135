// Communicator life-cycle calls MCCL lacks, emulated where torchada can keep NCCL's meaning:
//
//   ncclCommFinalize  "flushes all issued communications" so that ncclCommDestroy frees the rest:
//                     the communicator's device is synchronised (every operation issued on it has
//                     completed; a superset of the communicator's own work), errors MCCL recorded
//                     for the communicator are reported, and ncclCommDestroy (mcclCommDestroy)
//                     destroys it afterwards as it would without a finalize. Non-blocking
//                     communicators get ncclSuccess at once, which NCCL's contract allows.
//   ncclCommSuspend   without NCCL_SUSPEND_MEM nothing is released: a no-op, as in NCCL. With it,
//                     NCCL frees the communicator's dynamic GPU memory, which MCCL cannot do:
//                     refused (ncclInvalidUsage, logged), never a success that freed nothing.
//   ncclCommResume    resumes what ncclCommSuspend suspended without releasing memory: a no-op.
#include "gen/nccl2_impl.h"
#include "nccl/nccl.h"

#include "core/backend.h"
#include "core/policy.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

const char* fn_name(Fn id) { return kFnNames[static_cast<int>(id)]; }

// Errors MCCL recorded for `comm` (a failed peer, an aborted operation).
ncclResult_t async_error(Fn id, ncclComm_t comm) {
  const auto& be = NcclLib::backend();
  if (be.table.mcclCommGetAsyncError == nullptr) return ncclSuccess;
  mcclResult_t async = mcclSuccess;
  const ncclResult_t r =
      finish(id, be.table.mcclCommGetAsyncError(convert<mcclComm_t>(comm), &async));
  if (r != ncclSuccess) return r;
  const ncclResult_t s = NcclLib::status(async);
  if (s != ncclSuccess && s != ncclInProgress) {
    TORCHADA_LOG(kWarn, "%s: the communicator has a pending error (%d)", fn_name(id),
                 static_cast<int>(s));
    note_error(id);
    return s;
  }
  return ncclSuccess;
}

ncclResult_t finalize(Fn id, ncclComm_t comm) {
  int device = -1;
  ncclResult_t r = comm_device(id, comm, &device);  // also validates the communicator
  if (r != ncclSuccess) return r;
  const MusartTable& rt = musart();
  if (rt.musaGetDevice == nullptr || rt.musaSetDevice == nullptr ||
      rt.musaDeviceSynchronize == nullptr) {
    TORCHADA_LOG(kWarn, "%s: the MUSA runtime cannot synchronise a device: ncclSystemError",
                 fn_name(id));
    note_error(id);
    return ncclSystemError;
  }
  int current = -1;
  if (rt.musaGetDevice(&current) != musaSuccess ||
      (current != device && rt.musaSetDevice(device) != musaSuccess)) {
    TORCHADA_LOG(kWarn, "%s: cannot make device %d current: ncclUnhandledCudaError", fn_name(id),
                 device);
    note_error(id);
    return ncclUnhandledCudaError;
  }
  const musaError_t e = rt.musaDeviceSynchronize();
  if (current != device) rt.musaSetDevice(current);
  if (e != musaSuccess) {
    TORCHADA_LOG(kWarn, "%s: synchronising device %d failed (%d): ncclUnhandledCudaError",
                 fn_name(id), device, static_cast<int>(e));
    note_error(id);
    return ncclUnhandledCudaError;
  }
  return async_error(id, comm);
}

ncclResult_t suspend(Fn id, ncclComm_t comm, int flags) {
  int device = -1;
  ncclResult_t r = comm_device(id, comm, &device);  // validates the communicator
  if (r != ncclSuccess) return r;
  if ((flags & ~NCCL_SUSPEND_MEM) != 0) {
    TORCHADA_LOG(kWarn, "%s: unknown flags 0x%x: ncclInvalidArgument", fn_name(id), flags);
    note_error(id);
    return ncclInvalidArgument;
  }
  if ((flags & NCCL_SUSPEND_MEM) != 0) {
    note_unsupported(id,
                     "NCCL_SUSPEND_MEM releases the communicator's GPU memory, which MCCL cannot "
                     "do: ncclInvalidUsage");
    return ncclInvalidUsage;
  }
  return ncclSuccess;
}

ncclResult_t resume(Fn id, ncclComm_t comm) {
  int device = -1;
  return comm_device(id, comm, &device);  // nothing was released: validating is all there is
}

}  // namespace

namespace impl {

ncclResult_t ncclCommFinalize(ncclComm_t comm) { return finalize(Fn::k_ncclCommFinalize, comm); }
ncclResult_t pncclCommFinalize(ncclComm_t comm) { return finalize(Fn::k_pncclCommFinalize, comm); }

ncclResult_t ncclCommSuspend(ncclComm_t comm, int flags) {
  return suspend(Fn::k_ncclCommSuspend, comm, flags);
}
ncclResult_t pncclCommSuspend(ncclComm_t comm, int flags) {
  return suspend(Fn::k_pncclCommSuspend, comm, flags);
}

ncclResult_t ncclCommResume(ncclComm_t comm) { return resume(Fn::k_ncclCommResume, comm); }
ncclResult_t pncclCommResume(ncclComm_t comm) { return resume(Fn::k_pncclCommResume, comm); }

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
