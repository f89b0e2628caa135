// The live communicators (nccl.h: g_nccl_comms): the calls that create them record them, the
// calls that end them take them back first, so that a destroyed, aborted or garbage communicator
// is refused (ncclInvalidArgument, logged) by every call, a second ncclCommDestroy included,
// instead of reaching MCCL, which would dereference it. ncclCommInitRankConfig and ncclCommSplit
// record theirs in comm.cc.
//
// Inside ncclGroupStart/ncclGroupEnd a library may write the new communicator only when the group
// ends (the simulator's MCCL does; NVIDIA's NCCL writes it at once): creations inside a group
// remember where the communicator will be written, and the outermost ncclGroupEnd records what is
// there then. The depth is per thread, as NCCL's groups are.
#include <vector>

#include "gen/nccl2_impl.h"
#include "nccl/nccl.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {

HandleTable g_nccl_comms{"NCCL communicator"};

namespace {

thread_local int t_group_depth = 0;
thread_local std::vector<ncclComm_t*>* t_pending = nullptr;  // made at the first deferral

void add_now(ncclComm_t comm) {
  if (comm == nullptr) return;
  std::lock_guard<std::mutex> lock(g_nccl_comms.mutex());
  g_nccl_comms.insert(reinterpret_cast<std::uintptr_t>(comm), 0);
}

}  // namespace

void add_comm(ncclComm_t* out) {
  if (out == nullptr) return;
  if (t_group_depth == 0) return add_now(*out);
  if (t_pending == nullptr) t_pending = new std::vector<ncclComm_t*>;  // freed at its group's end
  t_pending->push_back(out);
}

namespace {

ncclResult_t group_start(Fn id) {
  const auto& be = NcclLib::backend();
  if (be.table.mcclGroupStart == nullptr) return NcclLib::missing(id);
  const ncclResult_t r = finish(id, be.table.mcclGroupStart());
  if (r == ncclSuccess) ++t_group_depth;
  return r;
}

ncclResult_t group_end(Fn id) {
  const auto& be = NcclLib::backend();
  if (be.table.mcclGroupEnd == nullptr) return NcclLib::missing(id);
  const ncclResult_t r = finish(id, be.table.mcclGroupEnd());
  if (t_group_depth > 0) --t_group_depth;
  // Whatever the group's outcome, the communicators MCCL wrote exist (a failed one is NULL, or
  // reports its error through ncclCommGetAsyncError).
  if (t_group_depth == 0 && t_pending != nullptr) {
    for (ncclComm_t* out : *t_pending) add_now(*out);
    delete t_pending;
    t_pending = nullptr;
  }
  return r;
}

// Takes `comm` out of the table: false when it was not there (only one of two racing
// destructions gets true).
bool take_comm(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(g_nccl_comms.mutex());
  HandleTable::Slot* s = g_nccl_comms.find(reinterpret_cast<std::uintptr_t>(comm));
  if (s == nullptr) return false;
  g_nccl_comms.erase(s);
  return true;
}

ncclResult_t init_rank(Fn id, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  const auto& be = NcclLib::backend();
  if (be.table.mcclCommInitRank == nullptr) return NcclLib::missing(id);
  if (comm == nullptr) return NcclLib::fail(id, ncclInvalidArgument);
  const ncclResult_t r =
      finish(id, be.table.mcclCommInitRank(convert<mcclComm_t*>(comm), nranks,
                                           Pair<ncclUniqueId>::to_musa(commId), rank));
  if (r == ncclSuccess || r == ncclInProgress) add_comm(comm);
  return r;
}

ncclResult_t init_all(Fn id, ncclComm_t* comms, int ndev, const int* devlist) {
  const auto& be = NcclLib::backend();
  if (be.table.mcclCommInitAll == nullptr) return NcclLib::missing(id);
  if (comms == nullptr || ndev < 0) return NcclLib::fail(id, ncclInvalidArgument);
  const ncclResult_t r =
      finish(id, be.table.mcclCommInitAll(convert<mcclComm_t*>(comms), ndev, devlist));
  if (r == ncclSuccess || r == ncclInProgress)
    for (int i = 0; i < ndev; ++i) add_comm(&comms[i]);
  return r;
}

using EndFn = mcclResult_t (*)(mcclComm_t);

// ncclCommDestroy / ncclCommAbort. NULL is NCCL's no-op success.
ncclResult_t end_comm(Fn id, EndFn fn, ncclComm_t comm) {
  if (fn == nullptr) return NcclLib::missing(id);
  if (comm == nullptr) return ncclSuccess;
  if (!take_comm(comm)) return NcclLib::bad_handle(id);
  return finish(id, fn(convert<mcclComm_t>(comm)));
}

}  // namespace

namespace impl {

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return init_rank(Fn::k_ncclCommInitRank, comm, nranks, commId, rank);
}
ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return init_rank(Fn::k_pncclCommInitRank, comm, nranks, commId, rank);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  return init_all(Fn::k_ncclCommInitAll, comms, ndev, devlist);
}
ncclResult_t pncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  return init_all(Fn::k_pncclCommInitAll, comms, ndev, devlist);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return end_comm(Fn::k_ncclCommDestroy, NcclLib::backend().table.mcclCommDestroy, comm);
}
ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  return end_comm(Fn::k_pncclCommDestroy, NcclLib::backend().table.mcclCommDestroy, comm);
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return end_comm(Fn::k_ncclCommAbort, NcclLib::backend().table.mcclCommAbort, comm);
}
ncclResult_t pncclCommAbort(ncclComm_t comm) {
  return end_comm(Fn::k_pncclCommAbort, NcclLib::backend().table.mcclCommAbort, comm);
}

ncclResult_t ncclGroupStart() { return group_start(Fn::k_ncclGroupStart); }
ncclResult_t pncclGroupStart() { return group_start(Fn::k_pncclGroupStart); }
ncclResult_t ncclGroupEnd() { return group_end(Fn::k_ncclGroupEnd); }
ncclResult_t pncclGroupEnd() { return group_end(Fn::k_pncclGroupEnd); }

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
