// NCCL communicator calls whose MCCL counterparts differ: ncclCommInitRankConfig and
// ncclCommSplit (MCCL's mcclConfig_t is its own structure: the caller's ncclConfig_t is copied
// into it field by field) and ncclCommCuDevice (mcclCommMuDevice in Moore Threads' library,
// mcclCommCuDevice by the mechanical rename: whichever the loaded library exports).
#include <dlfcn.h>

#include <climits>
#include <cstddef>

#include "gen/nccl2_impl.h"
#include "nccl/nccl.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

// The NCCL 2.14 form (size, magic, version, blocking) is the oldest ncclConfig_t there is.
constexpr unsigned kNcclConfigMagic = 0xcafebeef;
constexpr size_t kNcclConfigMinSize = offsetof(ncclConfig_t, blocking) + sizeof(int);

int config_int(int v) { return v == NCCL_CONFIG_UNDEF_INT ? MCCL_CONFIG_UNDEF_INT : v; }
const char* config_ptr(const char* v) {
  return v == NCCL_CONFIG_UNDEF_PTR ? MCCL_CONFIG_UNDEF_PTR : v;
}

// A caller's ncclConfig_t as MCCL's mcclConfig_t. Only the fields inside the caller's `size` are
// read (older NCCL headers have shorter structures; newer ones longer: the tail is not ours to
// interpret). Returns false (logged) when the structure was not made by NCCL_CONFIG_INITIALIZER.
bool to_mccl_config(Fn id, const ncclConfig_t* in, mcclConfig_t* out) {
  const char* fn = kFnNames[static_cast<int>(id)];
  if (in->magic != kNcclConfigMagic || in->size < kNcclConfigMinSize) {
    TORCHADA_LOG(kWarn,
                 "%s: config not initialised with NCCL_CONFIG_INITIALIZER (size %zu, magic 0x%x): "
                 "ncclInvalidArgument",
                 fn, in->size, in->magic);
    return false;
  }
  *out = mcclConfig_t MCCL_CONFIG_INITIALIZER;
  const size_t size = in->size;
  auto has = [size](size_t offset, size_t bytes) { return offset + bytes <= size; };
#define TORCHADA_HAS(field) has(offsetof(ncclConfig_t, field), sizeof(in->field))
  if (TORCHADA_HAS(blocking)) out->blocking = config_int(in->blocking);
  if (TORCHADA_HAS(cgaClusterSize)) out->cgaClusterSize = config_int(in->cgaClusterSize);
  if (TORCHADA_HAS(minCTAs)) out->minCTAs = config_int(in->minCTAs);
  if (TORCHADA_HAS(maxCTAs)) out->maxCTAs = config_int(in->maxCTAs);
  if (TORCHADA_HAS(splitShare)) out->splitShare = config_int(in->splitShare);
  if (TORCHADA_HAS(commName)) out->commName = config_ptr(in->commName);

  // Fields mcclConfig_t has no place for: the library's defaults apply.
  struct Ignored {
    const char* name;
    bool set;
  };
  const Ignored ignored[] = {
      {"netName", TORCHADA_HAS(netName) && in->netName != NCCL_CONFIG_UNDEF_PTR},
      {"trafficClass", TORCHADA_HAS(trafficClass) && in->trafficClass != NCCL_CONFIG_UNDEF_INT},
      {"collnetEnable", TORCHADA_HAS(collnetEnable) && in->collnetEnable != NCCL_CONFIG_UNDEF_INT},
      {"CTAPolicy", TORCHADA_HAS(CTAPolicy) && in->CTAPolicy != NCCL_CONFIG_UNDEF_INT},
      {"shrinkShare", TORCHADA_HAS(shrinkShare) && in->shrinkShare != NCCL_CONFIG_UNDEF_INT},
      {"nvlsCTAs", TORCHADA_HAS(nvlsCTAs) && in->nvlsCTAs != NCCL_CONFIG_UNDEF_INT},
      {"nChannelsPerNetPeer",
       TORCHADA_HAS(nChannelsPerNetPeer) && in->nChannelsPerNetPeer != NCCL_CONFIG_UNDEF_INT},
      {"nvlinkCentricSched",
       TORCHADA_HAS(nvlinkCentricSched) && in->nvlinkCentricSched != NCCL_CONFIG_UNDEF_INT},
  };
#undef TORCHADA_HAS
  for (const Ignored& f : ignored)
    if (f.set)
      TORCHADA_LOG(kDebug, "%s: config field %s has no MCCL counterpart: ignored", fn, f.name);
  if (size > sizeof(ncclConfig_t))
    TORCHADA_LOG(kDebug, "%s: config of %zu bytes (a newer NCCL header): fields past %zu ignored",
                 fn, size, sizeof(ncclConfig_t));
  return true;
}

ncclResult_t init_rank_config(Fn id, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                              ncclConfig_t* config) {
  const auto& be = NcclLib::backend();
  if (be.table.mcclCommInitRankConfig == nullptr) return NcclLib::missing(id);
  if (comm == nullptr) {
    note_error(id);
    return ncclInvalidArgument;
  }
  mcclConfig_t mconfig;
  if (config != nullptr && !to_mccl_config(id, config, &mconfig)) {
    note_error(id);
    return ncclInvalidArgument;
  }
  const ncclResult_t r =
      finish(id, be.table.mcclCommInitRankConfig(convert<mcclComm_t*>(comm), nranks,
                                                 Pair<ncclUniqueId>::to_musa(commId), rank,
                                                 config != nullptr ? &mconfig : nullptr));
  // A non-blocking communicator is usable (ncclCommGetAsyncError...) while it initialises.
  if (r == ncclSuccess || r == ncclInProgress) add_comm(comm);
  return r;
}

ncclResult_t split(Fn id, ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                   ncclConfig_t* config) {
  const auto& be = NcclLib::backend();
  if (be.table.mcclCommSplit == nullptr) return NcclLib::missing(id);
  if (newcomm == nullptr) {
    note_error(id);
    return ncclInvalidArgument;
  }
  mcclConfig_t mconfig;
  if (config != nullptr && !to_mccl_config(id, config, &mconfig)) {
    *newcomm = nullptr;
    note_error(id);
    return ncclInvalidArgument;
  }
  const int mcolor = color == NCCL_SPLIT_NOCOLOR ? MCCL_SPLIT_NOCOLOR : color;
  const ncclResult_t r = finish(id, be.table.mcclCommSplit(convert<mcclComm_t>(comm), mcolor, key,
                                                           convert<mcclComm_t*>(newcomm),
                                                           config != nullptr ? &mconfig : nullptr));
  // NCCL_SPLIT_NOCOLOR ranks get a NULL communicator, which add_comm leaves out.
  if (r == ncclSuccess || r == ncclInProgress) add_comm(newcomm);
  return r;
}

using CommDeviceFn = mcclResult_t (*)(const mcclComm_t, int*);

// mcclCommMuDevice from the generated table, else a library's mcclCommCuDevice.
CommDeviceFn comm_device_fn() {
  static const CommDeviceFn fn = []() -> CommDeviceFn {
    const auto& be = NcclLib::backend();
    if (be.table.mcclCommMuDevice != nullptr) return be.table.mcclCommMuDevice;
    const LoadedLibrary& lib = load_musa_library(MusaLibrary::kMccl);
    if (lib.handle == nullptr) return nullptr;
    auto f = reinterpret_cast<CommDeviceFn>(dlsym(lib.handle, "mcclCommCuDevice"));
    if (f != nullptr)
      TORCHADA_LOG(kInfo, "ncclCommCuDevice: served by %s's mcclCommCuDevice", lib.path);
    return f;
  }();
  return fn;
}

}  // namespace

ncclResult_t finish(Fn id, mcclResult_t r) {
  const ncclResult_t s = NcclLib::status(r);
  if (s != ncclSuccess && s != ncclInProgress) {
    set_last_error(id, nullptr);  // MCCL's own last error is the newest
    note_error(id);
  }
  return s;
}

ncclResult_t comm_device(Fn id, const ncclComm_t comm, int* device) {
  const CommDeviceFn fn = comm_device_fn();
  if (fn == nullptr) return NcclLib::missing(id);
  if (device == nullptr) {
    note_error(id);
    return ncclInvalidArgument;
  }
  if (!HandleOf<ncclComm_t>::known(comm)) return NcclLib::bad_handle(id);
  return finish(id, fn(convert<mcclComm_t>(comm), device));
}

namespace impl {

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config) {
  return init_rank_config(Fn::k_ncclCommInitRankConfig, comm, nranks, commId, rank, config);
}
ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t* config) {
  return init_rank_config(Fn::k_pncclCommInitRankConfig, comm, nranks, commId, rank, config);
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
  return split(Fn::k_ncclCommSplit, comm, color, key, newcomm, config);
}
ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                            ncclConfig_t* config) {
  return split(Fn::k_pncclCommSplit, comm, color, key, newcomm, config);
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return comm_device(Fn::k_ncclCommCuDevice, comm, device);
}
ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  return comm_device(Fn::k_pncclCommCuDevice, comm, device);
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
