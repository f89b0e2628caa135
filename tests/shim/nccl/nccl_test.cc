// NCCL through the preloaded shim on the simulated MCCL: the calls the shim translates by hand
// (version, error strings, ncclCommInitRankConfig / ncclCommSplit with their configurations,
// ncclCommCuDevice, the emulated ncclCommFinalize / Suspend / Resume and windows), several ranks
// driven from one process, and NULL / invalid arguments on the exports. The program is linked with
// NVIDIA's libnccl.so.2 and libcudart.so.13 like a user's; run with LD_PRELOAD=libtorchada.so,
// TORCHADA_BACKEND=sim, TORCHADA_SIM_DEVICES=4 (see CMakeLists). NCCL_TEST_FAKE_MCCL=1 selects the
// refusal test (TORCHADA_SIM_LIB_DIR holds a libmccl.so.2 that is not linked against MUSA).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// True when the NCCL symbols this program imports resolve into libtorchada.so.
bool under_shim() {
  Dl_info info{};
  void* f = dlsym(RTLD_DEFAULT, "ncclGetVersion");
  return f != nullptr && dladdr(f, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libtorchada") != nullptr;
}

bool fake_mccl() {
  const char* v = std::getenv("NCCL_TEST_FAKE_MCCL");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

class Nccl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!under_shim()) GTEST_SKIP() << "needs LD_PRELOAD=libtorchada.so (ctest sets it)";
    if (fake_mccl()) GTEST_SKIP() << "NCCL_TEST_FAKE_MCCL=1: only the refusal test runs";
    int n = 0;
    ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
    if (n < 4) GTEST_SKIP() << "needs 4 devices (TORCHADA_SIM_DEVICES=4), has " << n;
  }
};

// Device buffers of floats, one per rank, each on its rank's device.
struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

void setup_rank(Rank& r, int device, size_t n, float base) {
  r.device = device;
  ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&r.stream), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&r.send, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&r.recv, n * sizeof(float)), cudaSuccess);
  std::vector<float> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = base + static_cast<float>(i % 17);
  ASSERT_EQ(cudaMemcpy(r.send, h.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
}

void free_rank(Rank& r) {
  cudaSetDevice(r.device);
  cudaFree(r.send);
  cudaFree(r.recv);
  if (r.stream) cudaStreamDestroy(r.stream);
  r = Rank{};
}

std::vector<float> host_copy(const float* d, size_t n) {
  std::vector<float> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// A sum all-reduce over the given ranks (one process drives them all: one group), checked
// against the sum of their inputs; bases[k] is rank k's base value.
void allreduce_and_check(std::vector<Rank*> ranks, const std::vector<float>& bases, size_t n) {
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (Rank* r : ranks) {
    ASSERT_EQ(cudaSetDevice(r->device), cudaSuccess);
    ASSERT_EQ(ncclAllReduce(r->send, r->recv, n, ncclFloat, ncclSum, r->comm, r->stream),
              ncclSuccess)
        << ncclGetLastError(r->comm);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  float base_sum = 0;
  for (float b : bases) base_sum += b;
  for (Rank* r : ranks) {
    ASSERT_EQ(cudaSetDevice(r->device), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(r->stream), cudaSuccess);
    const std::vector<float> got = host_copy(r->recv, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
      if (got[i] != base_sum + static_cast<float>(ranks.size()) * static_cast<float>(i % 17)) ++bad;
    EXPECT_EQ(bad, 0u) << "device " << r->device << ": first element " << got[0];
  }
}

// Polls until every communicator has finished initialising (or failed); true when all are ready.
bool wait_ready(const std::vector<ncclComm_t>& comms, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    bool all = true;
    for (ncclComm_t c : comms) {
      ncclResult_t e = ncclSuccess;
      if (ncclCommGetAsyncError(c, &e) != ncclSuccess) return false;
      if (e == ncclInProgress)
        all = false;
      else if (e != ncclSuccess)
        return false;
    }
    if (all) return true;
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// A one-rank communicator on the current device.
ncclComm_t solo_comm() {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return nullptr;
  ncclComm_t c = nullptr;
  if (ncclCommInitRank(&c, 1, id, 0) != ncclSuccess) return nullptr;
  return c;
}

// ---- Version and errors ---------------------------------------------------------------------

TEST_F(Nccl, VersionIsTheNcclHeadersNotMccls) {
  int v = 0, pv = 0;
  ASSERT_EQ(ncclGetVersion(&v), ncclSuccess);
  EXPECT_EQ(v, NCCL_VERSION_CODE);
  EXPECT_EQ(v / 10000, NCCL_MAJOR);
  ASSERT_EQ(pncclGetVersion(&pv), ncclSuccess);
  EXPECT_EQ(pv, v);
  EXPECT_EQ(ncclGetVersion(nullptr), ncclInvalidArgument);
  EXPECT_EQ(pncclGetVersion(nullptr), ncclInvalidArgument);
}

TEST_F(Nccl, ErrorStringsForEveryCode) {
  std::set<std::string> seen;
  for (int r = ncclSuccess; r < ncclNumResults; ++r) {
    const char* s = ncclGetErrorString(static_cast<ncclResult_t>(r));
    ASSERT_NE(s, nullptr) << r;
    EXPECT_GT(std::strlen(s), 0u) << r;
    EXPECT_STREQ(pncclGetErrorString(static_cast<ncclResult_t>(r)), s);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(ncclNumResults)) << "two codes share a string";
  const std::string ok = ncclGetErrorString(ncclSuccess);
  for (int r : {static_cast<int>(ncclNumResults), 42, -1, 0x7fffffff}) {
    const char* s = ncclGetErrorString(static_cast<ncclResult_t>(r));
    ASSERT_NE(s, nullptr) << r;
    EXPECT_GT(std::strlen(s), 0u) << r;
    EXPECT_NE(ok, s) << r;
    EXPECT_EQ(seen.count(s), 0u) << "unknown code " << r << " reads like a known one: " << s;
  }
}

TEST_F(Nccl, LastErrorNeverNullAndDescribesTheFailure) {
  ASSERT_NE(ncclGetLastError(nullptr), nullptr);
  ASSERT_NE(pncclGetLastError(nullptr), nullptr);
  int n = 0;
  ASSERT_EQ(ncclCommCount(nullptr, &n), ncclInvalidArgument);
  EXPECT_GT(std::strlen(ncclGetLastError(nullptr)), 0u);
}

// ---- Communicators ----------------------------------------------------------------------------

TEST_F(Nccl, InitAllFourRanksInOneProcess) {
  constexpr size_t kN = 4099;
  ncclComm_t comms[4] = {};
  ASSERT_EQ(ncclCommInitAll(comms, 4, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  Rank ranks[4];
  std::vector<float> bases;
  for (int i = 0; i < 4; ++i) {
    int count = 0, rank = -1, device = -1, pdevice = -1;
    ASSERT_EQ(ncclCommCount(comms[i], &count), ncclSuccess);
    ASSERT_EQ(ncclCommUserRank(comms[i], &rank), ncclSuccess);
    ASSERT_EQ(ncclCommCuDevice(comms[i], &device), ncclSuccess);
    ASSERT_EQ(pncclCommCuDevice(comms[i], &pdevice), ncclSuccess);
    EXPECT_EQ(count, 4);
    EXPECT_EQ(rank, i);
    EXPECT_EQ(device, i);
    EXPECT_EQ(pdevice, i);
    setup_rank(ranks[i], i, kN, 100.0f * static_cast<float>(i + 1));
    ranks[i].comm = comms[i];
    bases.push_back(100.0f * static_cast<float>(i + 1));
  }
  allreduce_and_check({&ranks[0], &ranks[1], &ranks[2], &ranks[3]}, bases, kN);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(ncclCommDestroy(comms[i]), ncclSuccess);
    free_rank(ranks[i]);
  }

  // A device list: rank k runs on devlist[k], which ncclCommCuDevice reports.
  const int devlist[2] = {3, 1};
  ncclComm_t two[2] = {};
  ASSERT_EQ(ncclCommInitAll(two, 2, devlist), ncclSuccess) << ncclGetLastError(nullptr);
  for (int k = 0; k < 2; ++k) {
    int device = -1;
    ASSERT_EQ(ncclCommCuDevice(two[k], &device), ncclSuccess);
    EXPECT_EQ(device, devlist[k]);
    EXPECT_EQ(ncclCommDestroy(two[k]), ncclSuccess);
  }
}

TEST_F(Nccl, NonBlockingInitRankConfigWithCommName) {
  constexpr size_t kN = 1000;
  const char* kName = "torchada-nccl-config-test";
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  cfg.commName = kName;
  Rank r[2];
  setup_rank(r[0], 0, kN, 1.0f);
  setup_rank(r[1], 1, kN, 2.0f);

  // Rank 0 cannot finish before rank 1 joins: a non-blocking init returns in progress.
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(ncclCommInitRankConfig(&r[0].comm, 2, id, 0, &cfg), ncclInProgress);
  ASSERT_NE(r[0].comm, nullptr);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  const ncclResult_t r1 = pncclCommInitRankConfig(&r[1].comm, 2, id, 1, &cfg);
  EXPECT_TRUE(r1 == ncclInProgress || r1 == ncclSuccess) << r1;
  ASSERT_NE(r[1].comm, nullptr);
  ASSERT_TRUE(wait_ready({r[0].comm, r[1].comm}, std::chrono::seconds(30)));
  int device = -1;
  ASSERT_EQ(ncclCommCuDevice(r[1].comm, &device), ncclSuccess);
  EXPECT_EQ(device, 1);

  allreduce_and_check({&r[0], &r[1]}, {1.0f, 2.0f}, kN);

  // The name reached MCCL: it appears in the error a peer's abort causes.
  ASSERT_EQ(ncclCommAbort(r[1].comm), ncclSuccess);
  r[1].comm = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(ncclAllReduce(r[0].send, r[0].recv, kN, ncclFloat, ncclSum, r[0].comm, r[0].stream),
            ncclSuccess);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  ncclResult_t async = ncclSuccess;
  while (Clock::now() < deadline) {
    ASSERT_EQ(ncclCommGetAsyncError(r[0].comm, &async), ncclSuccess);
    if (async != ncclSuccess && async != ncclInProgress) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(async, ncclRemoteError);
  EXPECT_NE(std::string(ncclGetLastError(r[0].comm)).find(kName), std::string::npos)
      << ncclGetLastError(r[0].comm);
  EXPECT_EQ(ncclCommAbort(r[0].comm), ncclSuccess);
  r[0].comm = nullptr;
  free_rank(r[0]);
  free_rank(r[1]);
}

// Initialises a one-rank communicator with `cfg`; returns the status (destroying what it made).
ncclResult_t init_with(ncclConfig_t* cfg) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return ncclInternalError;
  ncclComm_t c = nullptr;
  const ncclResult_t r = ncclCommInitRankConfig(&c, 1, id, 0, cfg);
  if (r == ncclSuccess) {
    int count = 0;
    EXPECT_EQ(ncclCommCount(c, &count), ncclSuccess);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  }
  return r;
}

TEST_F(Nccl, ConfigFieldsReachTheirMcclCounterparts) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(init_with(nullptr), ncclSuccess);
  ncclConfig_t base = NCCL_CONFIG_INITIALIZER;
  EXPECT_EQ(init_with(&base), ncclSuccess);

  // Valid values of every field MCCL has.
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = 1;
  c.cgaClusterSize = 4;
  c.minCTAs = 2;
  c.maxCTAs = 8;
  c.splitShare = 1;
  c.commName = "valid";
  EXPECT_EQ(init_with(&c), ncclSuccess);

  // Each MCCL field's own range check sees the value given to the NCCL field of that name (the
  // two structures order their fields differently).
  struct Bad {
    const char* what;
    void (*set)(ncclConfig_t&);
  };
  const Bad bad[] = {
      {"blocking 7", [](ncclConfig_t& x) { x.blocking = 7; }},
      {"cgaClusterSize 9", [](ncclConfig_t& x) { x.cgaClusterSize = 9; }},
      {"minCTAs 0", [](ncclConfig_t& x) { x.minCTAs = 0; }},
      {"maxCTAs -1", [](ncclConfig_t& x) { x.maxCTAs = -1; }},
      {"minCTAs 8 > maxCTAs 2", [](ncclConfig_t& x) { x.minCTAs = 8, x.maxCTAs = 2; }},
      {"splitShare 3", [](ncclConfig_t& x) { x.splitShare = 3; }},
  };
  for (const Bad& b : bad) {
    ncclConfig_t x = NCCL_CONFIG_INITIALIZER;
    b.set(x);
    EXPECT_EQ(init_with(&x), ncclInvalidArgument) << b.what;
  }

  // Fields MCCL lacks are accepted and ignored.
  ncclConfig_t extra = NCCL_CONFIG_INITIALIZER;
  extra.netName = "IB";
  extra.trafficClass = 3;
  extra.collnetEnable = 1;
  extra.CTAPolicy = 1;
  extra.shrinkShare = 1;
  extra.nvlsCTAs = 4;
  extra.nChannelsPerNetPeer = 2;
  extra.nvlinkCentricSched = 1;
  EXPECT_EQ(init_with(&extra), ncclSuccess);
}

TEST_F(Nccl, ConfigSizeDecidesWhichFieldsAreRead) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const ncclConfig_t init = NCCL_CONFIG_INITIALIZER;
  // An NCCL 2.17-sized structure (up to netName), in a heap block of exactly that size: reading a
  // later field would be an out-of-bounds read (AddressSanitizer reports it).
  const size_t old_size = offsetof(ncclConfig_t, splitShare);
  std::unique_ptr<unsigned char[]> old_block(new unsigned char[old_size]);
  std::memcpy(old_block.get(), &init, old_size);
  auto* old_cfg = reinterpret_cast<ncclConfig_t*>(old_block.get());
  old_cfg->size = old_size;
  old_cfg->blocking = 1;
  old_cfg->minCTAs = 1;
  old_cfg->maxCTAs = 2;
  EXPECT_EQ(init_with(old_cfg), ncclSuccess);

  // The oldest form (NCCL 2.14: size, magic, version, blocking), blocking out of range: refused,
  // so the field was read.
  const size_t oldest = offsetof(ncclConfig_t, blocking) + sizeof(int);
  std::unique_ptr<unsigned char[]> oldest_block(new unsigned char[oldest]);
  std::memcpy(oldest_block.get(), &init, oldest);
  auto* oldest_cfg = reinterpret_cast<ncclConfig_t*>(oldest_block.get());
  oldest_cfg->size = oldest;
  oldest_cfg->blocking = 2;
  EXPECT_EQ(init_with(oldest_cfg), ncclInvalidArgument);
  oldest_cfg->blocking = 1;
  EXPECT_EQ(init_with(oldest_cfg), ncclSuccess);

  // A field past `size` is not read even when its bytes are there.
  ncclConfig_t cut = NCCL_CONFIG_INITIALIZER;
  cut.size = offsetof(ncclConfig_t, splitShare);
  cut.splitShare = 3;  // invalid, but outside the caller's structure
  EXPECT_EQ(init_with(&cut), ncclSuccess);

  // A newer, longer structure: the tail is not ours to interpret.
  std::vector<unsigned char> newer(sizeof(ncclConfig_t) + 64, 0xab);
  std::memcpy(newer.data(), &init, sizeof init);
  reinterpret_cast<ncclConfig_t*>(newer.data())->size = newer.size();
  EXPECT_EQ(init_with(reinterpret_cast<ncclConfig_t*>(newer.data())), ncclSuccess);

  // Not made by NCCL_CONFIG_INITIALIZER.
  ncclConfig_t magic = NCCL_CONFIG_INITIALIZER;
  magic.magic = 0x12345678;
  EXPECT_EQ(init_with(&magic), ncclInvalidArgument);
  ncclConfig_t tiny = NCCL_CONFIG_INITIALIZER;
  tiny.size = 8;
  EXPECT_EQ(init_with(&tiny), ncclInvalidArgument);
  ncclConfig_t zero{};
  EXPECT_EQ(init_with(&zero), ncclInvalidArgument);
}

TEST_F(Nccl, SplitByColorAndKey) {
  constexpr size_t kN = 777;
  ncclComm_t comms[4] = {};
  ASSERT_EQ(ncclCommInitAll(comms, 4, nullptr), ncclSuccess) << ncclGetLastError(nullptr);

  // Colors 0 and 1 by parity; keys reverse the order inside each color.
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.commName = "split-child";
  ncclComm_t sub[4] = {};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(ncclCommSplit(comms[i], i % 2, -i, &sub[i], i == 0 ? &cfg : nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  const int want_rank[4] = {1, 1, 0, 0};  // in color 0: rank 2 (key -2) first, then rank 0
  Rank ranks[4];
  for (int i = 0; i < 4; ++i) {
    ASSERT_NE(sub[i], nullptr);
    int count = 0, rank = -1, device = -1;
    ASSERT_EQ(ncclCommCount(sub[i], &count), ncclSuccess);
    ASSERT_EQ(ncclCommUserRank(sub[i], &rank), ncclSuccess);
    ASSERT_EQ(ncclCommCuDevice(sub[i], &device), ncclSuccess);
    EXPECT_EQ(count, 2) << i;
    EXPECT_EQ(rank, want_rank[i]) << i;
    EXPECT_EQ(device, i) << "a split communicator keeps its rank's device";
    setup_rank(ranks[i], i, kN, static_cast<float>(10 * (i + 1)));
    ranks[i].comm = sub[i];
  }
  // Each color reduces its own members only.
  {
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(cudaSetDevice(i), cudaSuccess);
      ASSERT_EQ(ncclAllReduce(ranks[i].send, ranks[i].recv, kN, ncclFloat, ncclSum, sub[i],
                              ranks[i].stream),
                ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(cudaSetDevice(i), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(ranks[i].stream), cudaSuccess);
      const std::vector<float> got = host_copy(ranks[i].recv, kN);
      const float base = static_cast<float>(10 * (i % 2 + 1) + 10 * (i % 2 + 3));
      size_t bad = 0;
      for (size_t k = 0; k < kN; ++k)
        if (got[k] != base + 2.0f * static_cast<float>(k % 17)) ++bad;
      EXPECT_EQ(bad, 0u) << "rank " << i << " got " << got[0] << ", expected " << base;
    }
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(ncclCommDestroy(sub[i]), ncclSuccess);
    free_rank(ranks[i]);
  }

  // NCCL_SPLIT_NOCOLOR: rank 3 takes no part and gets no communicator.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(pncclCommSplit(comms[i], i == 3 ? NCCL_SPLIT_NOCOLOR : 7, 0, &sub[i], nullptr),
              ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(sub[3], nullptr);
  for (int i = 0; i < 3; ++i) {
    int count = 0;
    ASSERT_NE(sub[i], nullptr);
    ASSERT_EQ(ncclCommCount(sub[i], &count), ncclSuccess);
    EXPECT_EQ(count, 3);
    EXPECT_EQ(ncclCommDestroy(sub[i]), ncclSuccess);
  }

  // Refused before MCCL sees them (no rank waits for a partner that never comes).
  ncclComm_t out = reinterpret_cast<ncclComm_t>(0x1);
  ncclConfig_t wrong = NCCL_CONFIG_INITIALIZER;
  wrong.magic = 0;
  EXPECT_EQ(ncclCommSplit(comms[0], 0, 0, &out, &wrong), ncclInvalidArgument);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(ncclCommSplit(comms[0], 0, 0, nullptr, nullptr), ncclInvalidArgument);
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

TEST_F(Nccl, TypesMcclLacksAreRefused) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ncclComm_t c = solo_comm();
  ASSERT_NE(c, nullptr);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, 256), cudaSuccess);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
  EXPECT_EQ(ncclAllReduce(buf, buf, 16, ncclFloat8e4m3, ncclSum, c, s), ncclInvalidArgument);
  EXPECT_EQ(ncclBroadcast(buf, buf, 16, ncclFloat8e5m2, 0, c, s), ncclInvalidArgument);
#endif
  EXPECT_EQ(ncclAllReduce(buf, buf, 16, ncclNumTypes, ncclSum, c, s), ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(buf, buf, 16, static_cast<ncclDataType_t>(-1), ncclSum, c, s),
            ncclInvalidArgument);
  // The refusals left the communicator usable.
  EXPECT_EQ(ncclAllReduce(buf, buf, 16, ncclFloat, ncclSum, c, s), ncclSuccess);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ncclResult_t async = ncclInternalError;
  EXPECT_EQ(ncclCommGetAsyncError(c, &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  cudaFree(buf);
  cudaStreamDestroy(s);
}

// ---- NULL and invalid arguments ---------------------------------------------------------------
// Every export with a NULL communicator (the other arguments valid), then with a valid
// communicator and NULL pointers: an error each time, never success, never a crash. `P` selects
// the pnccl profiling aliases.
#define NCCL_FN(P, name) (P ? &p##name : &name)

void null_arguments(bool P) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ncclComm_t c = solo_comm();
  ASSERT_NE(c, nullptr);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  constexpr size_t kN = 64;
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(cudaMalloc(&a, kN * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, kN * 4), cudaSuccess);
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  const ncclComm_t none = nullptr;
  int i = 0;
  ncclResult_t e = ncclSuccess;
  ncclComm_t out = nullptr;
  void* handle = nullptr;
  ncclRedOp_t op = ncclSum;
  float scalar = 2.0f;
  ncclWindow_t win = nullptr;
  const int ranks[1] = {0};

  struct Call {
    const char* what;
    ncclResult_t r;
  };
  const Call null_comm[] = {
      {"AllGather", NCCL_FN(P, ncclAllGather)(a, b, kN, ncclFloat, none, s)},
      {"AllReduce", NCCL_FN(P, ncclAllReduce)(a, b, kN, ncclFloat, ncclSum, none, s)},
      {"AlltoAll", NCCL_FN(P, ncclAlltoAll)(a, b, kN, ncclFloat, none, s)},
      {"Bcast", NCCL_FN(P, ncclBcast)(a, kN, ncclFloat, 0, none, s)},
      {"Broadcast", NCCL_FN(P, ncclBroadcast)(a, b, kN, ncclFloat, 0, none, s)},
      {"Reduce", NCCL_FN(P, ncclReduce)(a, b, kN, ncclFloat, ncclSum, 0, none, s)},
      {"ReduceScatter", NCCL_FN(P, ncclReduceScatter)(a, b, kN, ncclFloat, ncclSum, none, s)},
      {"Gather", NCCL_FN(P, ncclGather)(a, b, kN, ncclFloat, 0, none, s)},
      {"Scatter", NCCL_FN(P, ncclScatter)(a, b, kN, ncclFloat, 0, none, s)},
      {"Send", NCCL_FN(P, ncclSend)(a, kN, ncclFloat, 0, none, s)},
      {"Recv", NCCL_FN(P, ncclRecv)(b, kN, ncclFloat, 0, none, s)},
      {"CommCount", NCCL_FN(P, ncclCommCount)(none, &i)},
      {"CommUserRank", NCCL_FN(P, ncclCommUserRank)(none, &i)},
      {"CommCuDevice", NCCL_FN(P, ncclCommCuDevice)(none, &i)},
      {"CommGetAsyncError", NCCL_FN(P, ncclCommGetAsyncError)(none, &e)},
      {"CommFinalize", NCCL_FN(P, ncclCommFinalize)(none)},
      {"CommRegister", NCCL_FN(P, ncclCommRegister)(none, a, kN * 4, &handle)},
      {"CommDeregister", NCCL_FN(P, ncclCommDeregister)(none, reinterpret_cast<void*>(0x1000))},
      {"CommSplit", NCCL_FN(P, ncclCommSplit)(none, 0, 0, &out, nullptr)},
      {"CommShrink", NCCL_FN(P, ncclCommShrink)(none, const_cast<int*>(ranks), 1, &out, nullptr,
                                                NCCL_SHRINK_DEFAULT)},
      {"CommRevoke", NCCL_FN(P, ncclCommRevoke)(none, 0)},
      {"CommWindowRegister", NCCL_FN(P, ncclCommWindowRegister)(none, a, kN * 4, &win, 0)},
      {"CommWindowDeregister", NCCL_FN(P, ncclCommWindowDeregister)(none, win)},
      {"CommSuspend", NCCL_FN(P, ncclCommSuspend)(none, 0)},
      {"CommResume", NCCL_FN(P, ncclCommResume)(none)},
      {"WinGetUserPtr", NCCL_FN(P, ncclWinGetUserPtr)(none, win, &handle)},
      {"RedOpCreatePreMulSum", NCCL_FN(P, ncclRedOpCreatePreMulSum)(&op, &scalar, ncclFloat,
                                                                    ncclScalarHostImmediate, none)},
      {"RedOpDestroy", NCCL_FN(P, ncclRedOpDestroy)(static_cast<ncclRedOp_t>(ncclNumOps), none)},
  };
  for (const Call& k : null_comm) EXPECT_NE(k.r, ncclSuccess) << k.what << " with a NULL comm";
  EXPECT_EQ(out, nullptr);
  // Destroying or aborting NULL is NCCL's no-op success.
  EXPECT_EQ(NCCL_FN(P, ncclCommDestroy)(none), ncclSuccess);
  EXPECT_EQ(NCCL_FN(P, ncclCommAbort)(none), ncclSuccess);

  ncclUniqueId* no_id = nullptr;
  const Call null_pointers[] = {
      {"GetVersion", NCCL_FN(P, ncclGetVersion)(nullptr)},
      {"GetUniqueId", NCCL_FN(P, ncclGetUniqueId)(nullptr)},
      {"CommInitRank", NCCL_FN(P, ncclCommInitRank)(nullptr, 1, id, 0)},
      {"CommInitRankConfig", NCCL_FN(P, ncclCommInitRankConfig)(nullptr, 1, id, 0, nullptr)},
      {"CommInitAll", NCCL_FN(P, ncclCommInitAll)(nullptr, 1, nullptr)},
      {"CommInitRankScalable", NCCL_FN(P, ncclCommInitRankScalable)(&out, 1, 0, 1, no_id, nullptr)},
      {"GroupSimulateEnd", NCCL_FN(P, ncclGroupSimulateEnd)(nullptr)},
      {"MemAlloc", NCCL_FN(P, ncclMemAlloc)(nullptr, 64)},
      {"AllGather", NCCL_FN(P, ncclAllGather)(nullptr, nullptr, kN, ncclFloat, c, s)},
      {"AllReduce", NCCL_FN(P, ncclAllReduce)(nullptr, nullptr, kN, ncclFloat, ncclSum, c, s)},
      {"AlltoAll", NCCL_FN(P, ncclAlltoAll)(nullptr, nullptr, kN, ncclFloat, c, s)},
      {"Bcast", NCCL_FN(P, ncclBcast)(nullptr, kN, ncclFloat, 0, c, s)},
      {"Broadcast", NCCL_FN(P, ncclBroadcast)(nullptr, nullptr, kN, ncclFloat, 0, c, s)},
      {"Reduce", NCCL_FN(P, ncclReduce)(nullptr, nullptr, kN, ncclFloat, ncclSum, 0, c, s)},
      {"ReduceScatter",
       NCCL_FN(P, ncclReduceScatter)(nullptr, nullptr, kN, ncclFloat, ncclSum, c, s)},
      {"Gather", NCCL_FN(P, ncclGather)(nullptr, nullptr, kN, ncclFloat, 0, c, s)},
      {"Scatter", NCCL_FN(P, ncclScatter)(nullptr, nullptr, kN, ncclFloat, 0, c, s)},
      {"Send", NCCL_FN(P, ncclSend)(nullptr, kN, ncclFloat, 0, c, s)},
      {"Recv", NCCL_FN(P, ncclRecv)(nullptr, kN, ncclFloat, 0, c, s)},
      {"CommCount", NCCL_FN(P, ncclCommCount)(c, nullptr)},
      {"CommUserRank", NCCL_FN(P, ncclCommUserRank)(c, nullptr)},
      {"CommCuDevice", NCCL_FN(P, ncclCommCuDevice)(c, nullptr)},
      {"CommGetAsyncError", NCCL_FN(P, ncclCommGetAsyncError)(c, nullptr)},
      {"CommRegister(buff)", NCCL_FN(P, ncclCommRegister)(c, nullptr, kN * 4, &handle)},
      {"CommRegister(handle)", NCCL_FN(P, ncclCommRegister)(c, a, kN * 4, nullptr)},
      {"CommDeregister", NCCL_FN(P, ncclCommDeregister)(c, nullptr)},
      {"CommSplit", NCCL_FN(P, ncclCommSplit)(c, 0, 0, nullptr, nullptr)},
      {"RedOpCreatePreMulSum(op)", NCCL_FN(P, ncclRedOpCreatePreMulSum)(
                                       nullptr, &scalar, ncclFloat, ncclScalarHostImmediate, c)},
      {"RedOpCreatePreMulSum(scalar)",
       NCCL_FN(P, ncclRedOpCreatePreMulSum)(&op, nullptr, ncclFloat, ncclScalarHostImmediate, c)},
      {"AllReduce(stream)", NCCL_FN(P, ncclAllReduce)(a, b, kN, ncclFloat, ncclSum, c,
                                                      reinterpret_cast<cudaStream_t>(&scalar))},
      {"AllReduce(op)",
       NCCL_FN(P, ncclAllReduce)(a, b, kN, ncclFloat, static_cast<ncclRedOp_t>(99), c, s)},
      {"Reduce(root)", NCCL_FN(P, ncclReduce)(a, b, kN, ncclFloat, ncclSum, 5, c, s)},
      {"Send(peer)", NCCL_FN(P, ncclSend)(a, kN, ncclFloat, 3, c, s)},
      {"MemFree(host pointer)", NCCL_FN(P, ncclMemFree)(&scalar)},
  };
  for (const Call& k : null_pointers) EXPECT_NE(k.r, ncclSuccess) << k.what;

  // None of that disturbed the communicator.
  ncclResult_t async = ncclInternalError;
  EXPECT_EQ(ncclCommGetAsyncError(c, &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);
  EXPECT_EQ(ncclAllReduce(a, b, kN, ncclFloat, ncclSum, c, s), ncclSuccess);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);

  // A destroyed communicator, and a pointer that never was one, are refused by the shim itself
  // (its text in ncclGetLastError: MCCL never saw them, so a real MCCL cannot dereference them),
  // destroying again included.
  EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  const std::string refused =
      "the communicator is not one ncclCommInit*/ncclCommSplit returned (NULL, destroyed, aborted "
      "or never created)";
  float not_a_comm[64] = {};
  for (ncclComm_t bad : {c, reinterpret_cast<ncclComm_t>(not_a_comm)}) {
    EXPECT_EQ(ncclCommCount(bad, &i), ncclInvalidArgument);
    EXPECT_EQ(std::string(ncclGetLastError(nullptr)), "ncclCommCount: " + refused);
    EXPECT_EQ(ncclAllReduce(a, b, kN, ncclFloat, ncclSum, bad, s), ncclInvalidArgument);
    EXPECT_EQ(std::string(ncclGetLastError(nullptr)), "ncclAllReduce: " + refused);
    EXPECT_EQ(NCCL_FN(P, ncclCommSplit)(bad, 0, 0, &out, nullptr), ncclInvalidArgument);
    EXPECT_EQ(NCCL_FN(P, ncclCommFinalize)(bad), ncclInvalidArgument);
    EXPECT_EQ(NCCL_FN(P, ncclCommAbort)(bad), ncclInvalidArgument);
    EXPECT_EQ(NCCL_FN(P, ncclCommDestroy)(bad), ncclInvalidArgument);
    EXPECT_NE(std::string(ncclGetLastError(bad)).find(refused), std::string::npos);
  }
  for (float f : not_a_comm) EXPECT_EQ(f, 0.0f) << "the fake communicator's bytes were written";
  // An error MCCL reports is the newest again.
  EXPECT_NE(ncclGetUniqueId(nullptr), ncclSuccess);
  EXPECT_EQ(std::string(ncclGetLastError(nullptr)).find(refused), std::string::npos);

  // Group calls complete with nothing in them.
  EXPECT_EQ(NCCL_FN(P, ncclGroupStart)(), ncclSuccess);
  EXPECT_EQ(NCCL_FN(P, ncclGroupEnd)(), ncclSuccess);
  cudaFree(a);
  cudaFree(b);
  cudaStreamDestroy(s);
}

// ---- NCCL 2.27-2.30 calls MCCL lacks, emulated (shim/nccl/lifecycle.cc, window.cc) -----------

// Two ranks of one process (devices 0 and 1) with their buffers.
struct Pair {
  ncclComm_t comms[2] = {};
  Rank ranks[2];
};

void two_ranks(Pair& p, size_t n) {
  const int devlist[2] = {0, 1};
  ASSERT_EQ(ncclCommInitAll(p.comms, 2, devlist), ncclSuccess) << ncclGetLastError(nullptr);
  for (int k = 0; k < 2; ++k) {
    setup_rank(p.ranks[k], k, n, 10.0f * static_cast<float>(k + 1));
    p.ranks[k].comm = p.comms[k];
  }
}

// NCCL: "ncclCommFinalize flushes all issued communications ... then ncclCommDestroy can locally
// free the rest": after it, the work issued on the communicator has completed without any
// synchronisation by the caller, and destroy succeeds.
TEST_F(Nccl, FinalizeCompletesIssuedWorkThenDestroyDestroys) {
  constexpr size_t kN = size_t{1} << 22;
  Pair p;
  two_ranks(p, kN);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (Rank& r : p.ranks) {
    ASSERT_EQ(cudaSetDevice(r.device), cudaSuccess);
    ASSERT_EQ(ncclAllReduce(r.send, r.recv, kN, ncclFloat, ncclSum, r.comm, r.stream), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);  // finalize restores the caller's device
  EXPECT_EQ(ncclCommFinalize(p.comms[0]), ncclSuccess) << ncclGetLastError(p.comms[0]);
  EXPECT_EQ(pncclCommFinalize(p.comms[1]), ncclSuccess) << ncclGetLastError(p.comms[1]);
  int current = -1;
  EXPECT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 1);
  for (Rank& r : p.ranks) {
    ASSERT_EQ(cudaSetDevice(r.device), cudaSuccess);
    EXPECT_EQ(cudaStreamQuery(r.stream), cudaSuccess) << "device " << r.device;
    const std::vector<float> got = host_copy(r.recv, 64);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], 30.0f + 2.0f * static_cast<float>(i % 17)) << i;
  }
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(ncclCommDestroy(p.comms[k]), ncclSuccess);
    int count = 0;
    EXPECT_NE(ncclCommCount(p.comms[k], &count), ncclSuccess);  // destroyed
    EXPECT_NE(ncclCommFinalize(p.comms[k]), ncclSuccess);
    free_rank(p.ranks[k]);
  }
}

// NCCL's symmetric-memory example: ncclMemAlloc, ncclCommWindowRegister (collective), a
// collective on the window's buffer, deregistration, finalize, destroy. Served by ordinary
// registration with the same results.
TEST_F(Nccl, WindowRegistrationServesCollectivesOnItsBuffer) {
  constexpr size_t kN = 4099;
  Pair p;
  two_ranks(p, kN);
  void* buf[2] = {};
  ncclWindow_t win[2] = {};
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(cudaSetDevice(k), cudaSuccess);
    ASSERT_EQ(ncclMemAlloc(&buf[k], kN * sizeof(float)), ncclSuccess);
    ASSERT_EQ(cudaMemcpy(buf[k], p.ranks[k].send, kN * sizeof(float), cudaMemcpyDeviceToDevice),
              cudaSuccess);
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int k = 0; k < 2; ++k)
    ASSERT_EQ(ncclCommWindowRegister(p.comms[k], buf[k], kN * sizeof(float), &win[k],
                                     NCCL_WIN_COLL_SYMMETRIC),
              ncclSuccess)
        << ncclGetLastError(p.comms[k]);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  for (int k = 0; k < 2; ++k) {
    ASSERT_NE(win[k], nullptr);
    void* user = nullptr;
    EXPECT_EQ(ncclWinGetUserPtr(p.comms[k], win[k], &user), ncclSuccess);
    EXPECT_EQ(user, buf[k]);
    EXPECT_NE(ncclWinGetUserPtr(p.comms[1 - k], win[k], &user), ncclSuccess)  // not its window
        << "window of rank " << k;
    EXPECT_EQ(user, nullptr);
  }
  // In place on the windows' buffers.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(cudaSetDevice(k), cudaSuccess);
    ASSERT_EQ(ncclAllReduce(buf[k], buf[k], kN, ncclFloat, ncclSum, p.comms[k], p.ranks[k].stream),
              ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(cudaSetDevice(k), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(p.ranks[k].stream), cudaSuccess);
    const std::vector<float> got = host_copy(static_cast<float*>(buf[k]), kN);
    size_t bad = 0;
    for (size_t i = 0; i < kN; ++i)
      if (got[i] != 30.0f + 2.0f * static_cast<float>(i % 17)) ++bad;
    EXPECT_EQ(bad, 0u) << "rank " << k;
  }
  ncclWindow_t refused = nullptr;
  EXPECT_EQ(ncclCommWindowRegister(p.comms[0], buf[0], 256, &refused, 0x40), ncclInvalidArgument);
  EXPECT_EQ(refused, nullptr);
  // Raw window operations need peer mappings ordinary registration does not make: refused.
  EXPECT_EQ(ncclSignal(1, 0, 0, 0, p.comms[0], p.ranks[0].stream), ncclInvalidUsage);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(ncclCommWindowDeregister(p.comms[k], win[k]), ncclSuccess);
    EXPECT_EQ(ncclCommWindowDeregister(p.comms[k], win[k]), ncclInvalidArgument);  // gone
    void* user = nullptr;
    EXPECT_NE(ncclWinGetUserPtr(p.comms[k], win[k], &user), ncclSuccess);
  }
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(ncclCommFinalize(p.comms[k]), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(p.comms[k]), ncclSuccess);
    ASSERT_EQ(cudaSetDevice(k), cudaSuccess);
    EXPECT_EQ(ncclMemFree(buf[k]), ncclSuccess);
    free_rank(p.ranks[k]);
  }
}

// Suspend without NCCL_SUSPEND_MEM releases nothing (a no-op, as NCCL's); with it, NCCL would
// release GPU memory MCCL cannot: refused, and the communicator still works.
TEST_F(Nccl, SuspendReleasingNothingIsServedReleasingMemoryIsRefused) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ncclComm_t c = solo_comm();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(ncclCommSuspend(c, 0), ncclSuccess);
  EXPECT_EQ(ncclCommResume(c), ncclSuccess);
  EXPECT_EQ(pncclCommSuspend(c, 0), ncclSuccess);
  EXPECT_EQ(pncclCommResume(c), ncclSuccess);
  EXPECT_EQ(ncclCommSuspend(c, NCCL_SUSPEND_MEM), ncclInvalidUsage);
  EXPECT_EQ(ncclCommSuspend(c, 0x100), ncclInvalidArgument);
  uint64_t value = 7;
  EXPECT_EQ(ncclCommMemStats(c, ncclStatGpuMemTotal, &value), ncclInvalidUsage);  // refused
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, 256), cudaSuccess);
  EXPECT_EQ(ncclAllReduce(buf, buf, 16, ncclFloat, ncclSum, c, s), ncclSuccess);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  EXPECT_NE(ncclCommSuspend(c, 0), ncclSuccess);  // destroyed
  cudaFree(buf);
  cudaStreamDestroy(s);
}

TEST_F(Nccl, NullAndInvalidArgumentsAreErrors) { null_arguments(false); }
TEST_F(Nccl, NullAndInvalidArgumentsAreErrorsProfilingAliases) { null_arguments(true); }

// ---- A libmccl.so.2 that is not Moore Threads' ------------------------------------------------

TEST(NcclRefusal, NonMusaMcclIsNotLoaded) {
  if (!under_shim()) GTEST_SKIP() << "needs LD_PRELOAD=libtorchada.so (ctest sets it)";
  if (!fake_mccl())
    GTEST_SKIP() << "runs as shim.nccl.refuses_non_musa_mccl (NCCL_TEST_FAKE_MCCL=1, "
                    "TORCHADA_SIM_LIB_DIR holding a libmccl.so.2 not linked against MUSA)";
  // The runtime is there (the simulator's), MCCL is not usable: every call fails, none succeeds.
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSystemError);
  ncclComm_t c = nullptr;
  EXPECT_EQ(ncclCommInitAll(&c, 1, nullptr), ncclSystemError);
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  EXPECT_EQ(ncclCommInitRankConfig(&c, 1, id, 0, &cfg), ncclSystemError);
  EXPECT_EQ(c, nullptr);
  int device = -1;
  EXPECT_EQ(ncclCommCuDevice(reinterpret_cast<ncclComm_t>(0x1000), &device), ncclSystemError);
  EXPECT_EQ(ncclGroupStart(), ncclSystemError);
  // Answered without MCCL.
  int v = 0;
  EXPECT_EQ(ncclGetVersion(&v), ncclSuccess);
  EXPECT_EQ(v, NCCL_VERSION_CODE);
  EXPECT_GT(std::strlen(ncclGetErrorString(ncclSystemError)), 0u);
  EXPECT_NE(ncclGetLastError(nullptr), nullptr);
}

}  // namespace
