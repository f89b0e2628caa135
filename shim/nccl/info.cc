// NCCL's version and error-text calls. ncclGetVersion reports the NCCL version of the nccl.h
// torchada is built against (the libnccl.so.2 ABI callers were compiled for; MCCL's own numbering
// means nothing to them) and logs MCCL's once; the error strings come from MCCL where it knows the
// code, from the shim otherwise; neither string call ever returns NULL.
#include <atomic>

#include <cstdio>

#include "gen/nccl2_impl.h"
#include "nccl/nccl.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

// The shim's own wording, for codes MCCL lacks or when no MCCL is loaded.
const char* own_error_string(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled MUSA runtime error";
    case ncclSystemError:
      return "unhandled system error";
    case ncclInternalError:
      return "internal error in the collective library";
    case ncclInvalidArgument:
      return "invalid argument";
    case ncclInvalidUsage:
      return "invalid usage";
    case ncclRemoteError:
      return "a remote rank exited, aborted or could not be reached";
    case ncclInProgress:
      return "operation in progress";
    case ncclTimeout:  // NCCL 2.30
      return "operation timed out";
    default:
      return "unknown result code";
  }
}

bool known_result(ncclResult_t r) { return r >= ncclSuccess && r < ncclNumResults; }

ncclResult_t get_version(Fn id, int* version) {
  if (version == nullptr) {
    note_error(id);
    return ncclInvalidArgument;
  }
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    const auto& be = NcclLib::backend();
    int mccl = 0;
    if (be.table.mcclGetVersion != nullptr && be.table.mcclGetVersion(&mccl) == mcclSuccess)
      TORCHADA_LOG(kInfo, "ncclGetVersion: reporting NCCL %d (torchada's nccl.h); MCCL is %d",
                   NCCL_VERSION_CODE, mccl);
    else
      TORCHADA_LOG(kInfo,
                   "ncclGetVersion: reporting NCCL %d (torchada's nccl.h); MCCL's is unknown",
                   NCCL_VERSION_CODE);
  }
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char* error_string(ncclResult_t result) {
  const auto& be = NcclLib::backend();
  if (known_result(result) && Pair<ncclResult_t>::valid(result) &&
      be.table.mcclGetErrorString != nullptr) {
    if (const char* s = be.table.mcclGetErrorString(Pair<ncclResult_t>::to_musa(result))) return s;
  }
  return own_error_string(result);
}

thread_local char t_refusal[256];  // empty: MCCL's last error is the newest

const char* last_error(ncclComm_t comm) {
  if (t_refusal[0] != '\0') return t_refusal;
  const auto& be = NcclLib::backend();
  if (be.table.mcclGetLastError == nullptr) return "";
  // NCCL's last error is the process's, whatever the communicator: one the shim does not know
  // (destroyed, garbage) is not handed to MCCL.
  if (!HandleOf<ncclComm_t>::known(comm)) comm = nullptr;
  const char* s = be.table.mcclGetLastError(convert<mcclComm_t>(comm));
  return s != nullptr ? s : "";
}

}  // namespace

void set_last_error(Fn id, const char* what) {
  if (what == nullptr) {
    t_refusal[0] = '\0';
    return;
  }
  std::snprintf(t_refusal, sizeof t_refusal, "%s: %s", kFnNames[static_cast<int>(id)], what);
}

namespace impl {

ncclResult_t ncclGetVersion(int* version) { return get_version(Fn::k_ncclGetVersion, version); }
ncclResult_t pncclGetVersion(int* version) { return get_version(Fn::k_pncclGetVersion, version); }

const char* ncclGetErrorString(ncclResult_t result) { return error_string(result); }
const char* pncclGetErrorString(ncclResult_t result) { return error_string(result); }

const char* ncclGetLastError(ncclComm_t comm) { return last_error(comm); }
const char* pncclGetLastError(ncclComm_t comm) { return last_error(comm); }

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
