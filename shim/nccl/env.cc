// NCCL_* -> MCCL_* environment translation, done once before libmccl is loaded (MCCL, like NCCL,
// reads its variables when it initialises). A program tuned for NVIDIA sets NCCL_SOCKET_IFNAME,
// NCCL_DEBUG...; the same settings reach MCCL under its own names. Each variable is copied only
// when the MCCL one is unset (an explicit MCCL setting wins), value unchanged, logged at info.
//
// The list: NCCL variables whose MCCL counterpart is the mechanical rename (NCCL_X -> MCCL_X),
// as Moore Threads' MCCL follows NCCL 2.x; values are passed through verbatim. A name MCCL does
// not read is harmless (ignored). Not copied: variables naming NVIDIA-only things (NVLS, NVLink
// SHARP, CollNet, topology XML files, the CUDA driver and cuMem settings, plugins).
//
// The simulator's own knobs (sim/ccl: MCCL_SIM_TIMEOUT_MS, MCCL_SIM_DEBUG) can be set with the
// NCCL_ spelling of the same rename, NCCL_SIM_TIMEOUT_MS and NCCL_SIM_DEBUG: these are torchada's
// names, not NVIDIA's, for launch scripts written with NCCL names.
#include "nccl/env.h"

#include <cstdlib>

#include "core/log.h"

namespace torchada {
namespace {

struct EnvPair {
  const char* nccl;
  const char* mccl;
};

constexpr EnvPair kNcclEnv[] = {
    // Logging
    {"NCCL_DEBUG", "MCCL_DEBUG"},
    {"NCCL_DEBUG_SUBSYS", "MCCL_DEBUG_SUBSYS"},
    {"NCCL_DEBUG_FILE", "MCCL_DEBUG_FILE"},
    // Bootstrap and sockets
    {"NCCL_COMM_ID", "MCCL_COMM_ID"},
    {"NCCL_SOCKET_IFNAME", "MCCL_SOCKET_IFNAME"},
    {"NCCL_SOCKET_FAMILY", "MCCL_SOCKET_FAMILY"},
    {"NCCL_SOCKET_NTHREADS", "MCCL_SOCKET_NTHREADS"},
    {"NCCL_NSOCKS_PERTHREAD", "MCCL_NSOCKS_PERTHREAD"},
    // InfiniBand / RoCE
    {"NCCL_IB_DISABLE", "MCCL_IB_DISABLE"},
    {"NCCL_IB_HCA", "MCCL_IB_HCA"},
    {"NCCL_IB_GID_INDEX", "MCCL_IB_GID_INDEX"},
    {"NCCL_IB_TIMEOUT", "MCCL_IB_TIMEOUT"},
    {"NCCL_IB_RETRY_CNT", "MCCL_IB_RETRY_CNT"},
    {"NCCL_IB_TC", "MCCL_IB_TC"},
    {"NCCL_IB_SL", "MCCL_IB_SL"},
    // Transports between GPUs and to the network
    {"NCCL_P2P_DISABLE", "MCCL_P2P_DISABLE"},
    {"NCCL_P2P_LEVEL", "MCCL_P2P_LEVEL"},
    {"NCCL_SHM_DISABLE", "MCCL_SHM_DISABLE"},
    {"NCCL_NET_GDR_LEVEL", "MCCL_NET_GDR_LEVEL"},
    {"NCCL_NET_GDR_READ", "MCCL_NET_GDR_READ"},
    {"NCCL_CROSS_NIC", "MCCL_CROSS_NIC"},
    // Algorithms and resources
    {"NCCL_ALGO", "MCCL_ALGO"},
    {"NCCL_PROTO", "MCCL_PROTO"},
    {"NCCL_BUFFSIZE", "MCCL_BUFFSIZE"},
    {"NCCL_NTHREADS", "MCCL_NTHREADS"},
    {"NCCL_MIN_NCHANNELS", "MCCL_MIN_NCHANNELS"},
    {"NCCL_MAX_NCHANNELS", "MCCL_MAX_NCHANNELS"},
    {"NCCL_LAUNCH_MODE", "MCCL_LAUNCH_MODE"},
    // The simulator (torchada's NCCL_ spelling of its MCCL_SIM_* variables)
    {"NCCL_SIM_TIMEOUT_MS", "MCCL_SIM_TIMEOUT_MS"},
    {"NCCL_SIM_DEBUG", "MCCL_SIM_DEBUG"},
};

}  // namespace

void translate_nccl_environment() {
  for (const EnvPair& p : kNcclEnv) {
    const char* v = std::getenv(p.nccl);
    if (v == nullptr) continue;
    if (std::getenv(p.mccl) != nullptr) {
      TORCHADA_LOG(kDebug, "%s left as set; %s ignored", p.mccl, p.nccl);
      continue;
    }
    ::setenv(p.mccl, v, 0);
    TORCHADA_LOG(kInfo, "%s=%s (from %s)", p.mccl, v, p.nccl);
  }
}

}  // namespace torchada
