// Tests of the simulated MCCL (sim/ccl) through its C API.
//
// MultiProcess.*: real processes, one per rank (sim_ccl_worker, started with posix_spawn), each
// checking its own results against references computed in the test. InProcess.*: several ranks
// of one process (mcclCommInitAll, or one thread per rank), argument checks, groups, capture.
// Every test checks that no shared-memory segment of this process is left in /dev/shm.
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <fstream>
#include <iterator>
#include <thread>

#include "ccl_common.h"

extern char** environ;

using namespace ccltest;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<std::string> leaked_segments() {
  std::vector<std::string> out;
  const std::string prefix = "mccl-sim-" + std::to_string(getpid()) + "-";
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

class CclTest : public ::testing::Test {
 protected:
  void TearDown() override {
    std::vector<std::string> left = leaked_segments();
    for (const std::string& s : left) ADD_FAILURE() << "leaked /dev/shm/" << s;
  }
};

// ---- Multi-process --------------------------------------------------------------------------

struct Exit {
  bool exited = false;
  int code = -1;
  int signal = 0;
};

// Starts `n` workers for `scenario` and waits for all of them, reaping them in rank order (so a
// rank that dies early stays a zombie while the lower ranks run: liveness must see through that).
std::vector<Exit> run_workers(const std::string& scenario, int n,
                              const std::vector<std::string>& env_extra = {}, int timeout_s = 240) {
  mcclUniqueId id;
  EXPECT_EQ(mcclGetUniqueId(&id), mcclSuccess);
  const std::string hex = id_to_hex(id);
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    bool overridden = false;
    for (const std::string& x : env_extra)
      if (kv.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0) overridden = true;
    if (!overridden) env.push_back(kv);
  }
  for (const std::string& x : env_extra) env.push_back(x);
  std::vector<char*> envp;
  for (std::string& s : env) envp.push_back(&s[0]);
  envp.push_back(nullptr);

  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    std::string rank = std::to_string(r), nranks = std::to_string(n);
    std::string path = SIM_CCL_WORKER, sc = scenario, h = hex;
    char* argv[] = {&path[0], &sc[0], &rank[0], &nranks[0], &h[0], nullptr};
    pid_t pid = 0;
    const int err = posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv, envp.data());
    EXPECT_EQ(err, 0) << "posix_spawn " << path << ": " << std::strerror(err);
    if (err == 0) pids.push_back(pid);
  }
  std::vector<Exit> out(pids.size());
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(timeout_s);
  for (size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    for (;;) {
      const pid_t r = waitpid(pids[i], &status, WNOHANG);
      if (r == pids[i]) break;
      if (Clock::now() > deadline) {
        ADD_FAILURE() << scenario << ": workers still running after " << timeout_s << " s";
        for (size_t j = i; j < pids.size(); ++j) kill(pids[j], SIGKILL);
        waitpid(pids[i], &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    out[i].exited = WIFEXITED(status);
    out[i].code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    out[i].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return out;
}

void expect_all_ok(const std::vector<Exit>& ex, int n) {
  ASSERT_EQ(static_cast<int>(ex.size()), n);
  for (int r = 0; r < n; ++r)
    EXPECT_TRUE(ex[r].exited && ex[r].code == 0)
        << "rank " << r << " exit code " << ex[r].code << " signal " << ex[r].signal;
}

using MultiProcess = CclTest;

TEST_F(MultiProcess, ReductionsEveryTypeAndOp) { expect_all_ok(run_workers("reductions", 4), 4); }

TEST_F(MultiProcess, ReductionsTwoRanks) { expect_all_ok(run_workers("reductions", 2), 2); }

TEST_F(MultiProcess, DataMovementEveryType) { expect_all_ok(run_workers("movement", 4), 4); }

TEST_F(MultiProcess, DataMovementThreeRanks) { expect_all_ok(run_workers("movement", 3), 3); }

TEST_F(MultiProcess, SendRecvRingEveryType) { expect_all_ok(run_workers("p2p", 4), 4); }

TEST_F(MultiProcess, LargeMessagesAboveChunkAndRing) {
  expect_all_ok(run_workers("large", 4, {"MCCL_SIM_CHUNK_BYTES=65536", "MCCL_SIM_P2P_BYTES=16384"}),
                4);
}

TEST_F(MultiProcess, KilledRankFailsTheOthers) {
  // The timeout is far above what the workers accept: death must be noticed, not timed out.
  std::vector<Exit> ex = run_workers("killed", 4, {"MCCL_SIM_TIMEOUT_MS=120000"});
  ASSERT_EQ(ex.size(), 4u);
  for (int r = 0; r < 3; ++r)
    EXPECT_TRUE(ex[r].exited && ex[r].code == 0) << "survivor " << r << " code " << ex[r].code;
  EXPECT_EQ(ex[3].signal, SIGKILL);
}

TEST_F(MultiProcess, HungRankTimesOut) {
  expect_all_ok(run_workers("hung", 4, {"MCCL_SIM_TIMEOUT_MS=1500"}), 4);
}

TEST_F(MultiProcess, AbortFailsTheOthers) {
  expect_all_ok(run_workers("abort", 4, {"MCCL_SIM_TIMEOUT_MS=120000"}), 4);
}

TEST_F(MultiProcess, MismatchedCollectiveIsReported) {
  expect_all_ok(run_workers("mismatch", 4), 4);
}

TEST_F(MultiProcess, Split) { expect_all_ok(run_workers("split", 4), 4); }

TEST_F(MultiProcess, NonBlockingInit) { expect_all_ok(run_workers("nonblocking", 4), 4); }

// ---- In one process -----------------------------------------------------------------------

struct Clique {
  std::vector<mcclComm_t> comms;
  std::vector<musaStream_t> streams;
  explicit Clique(int n) : comms(n, nullptr), streams(n, nullptr) {
    int count = 0;
    musaGetDeviceCount(&count);
    if (count < n) return;
    EXPECT_EQ(mcclCommInitAll(comms.data(), n, nullptr), mcclSuccess) << mcclGetLastError(nullptr);
    for (int i = 0; i < n; ++i) {
      musaSetDevice(i);
      EXPECT_EQ(musaStreamCreate(&streams[i]), musaSuccess);
    }
    musaSetDevice(0);
  }
  bool ok() const { return comms[0] != nullptr; }
  // A second stream per rank (on its device), destroyed with the clique.
  std::vector<musaStream_t> extra;
  bool add_streams() {
    extra.assign(comms.size(), nullptr);
    bool ok = true;
    for (size_t i = 0; i < extra.size(); ++i) {
      musaSetDevice(static_cast<int>(i));
      ok &= musaStreamCreate(&extra[i]) == musaSuccess;
    }
    musaSetDevice(0);
    return ok;
  }
  void sync() {
    for (musaStream_t s : streams) EXPECT_EQ(musaStreamSynchronize(s), musaSuccess);
    for (mcclComm_t c : comms) {
      if (c == nullptr) continue;
      mcclResult_t a = mcclInProgress;
      EXPECT_EQ(mcclCommGetAsyncError(c, &a), mcclSuccess);
      EXPECT_EQ(a, mcclSuccess) << mcclGetLastError(c);
    }
  }
  ~Clique() {
    for (mcclComm_t c : comms) {
      if (c != nullptr) {
        EXPECT_EQ(mcclCommDestroy(c), mcclSuccess);
      }
    }
    for (musaStream_t s : streams)
      if (s != nullptr) musaStreamDestroy(s);
    for (musaStream_t s : extra)
      if (s != nullptr) musaStreamDestroy(s);
  }
};

// Per rank of two: a send buffer of c elements (element k of rank i: value(i, k)), a result
// buffer of c and a gathered buffer of 2c.
template <class T>
struct RankBuffers {
  std::vector<std::unique_ptr<DevBuf<T>>> s, r, g;
  template <class F>
  RankBuffers(size_t c, F value) {
    for (int i = 0; i < 2; ++i) {
      s.emplace_back(new DevBuf<T>(c));
      r.emplace_back(new DevBuf<T>(c));
      g.emplace_back(new DevBuf<T>(2 * c));
      std::vector<T> in(c);
      for (size_t k = 0; k < c; ++k) in[k] = value(i, k);
      s[i]->fill(in);
    }
  }
};

#define NEED_DEVICES(n)                                                                     \
  do {                                                                                      \
    int count_ = 0;                                                                         \
    musaGetDeviceCount(&count_);                                                            \
    if (count_ < (n))                                                                       \
      GTEST_SKIP() << "needs " << (n) << " simulated devices (TORCHADA_SIM_DEVICES=" << (n) \
                   << ")";                                                                  \
  } while (0)

using InProcess = CclTest;

// A count beyond the buffers: what a GPU's collective kernel makes of it, the device's sticky
// musaErrorIllegalAddress at the next synchronisation; the call itself succeeds, nothing runs
// and the process lives; musaDeviceReset clears the fault.
TEST_F(InProcess, BuffersBeyondTheirAllocationsFaultTheDevice) {
  mcclComm_t comm = nullptr;
  int dev = 0;
  ASSERT_EQ(mcclCommInitAll(&comm, 1, &dev), mcclSuccess) << mcclGetLastError(nullptr);
  {
    DevBuf<float> buf(64);  // in place: the two spans may not overlap otherwise
    testing::internal::CaptureStderr();
    EXPECT_EQ(mcclAllReduce(buf.p, buf.p, 4096, mcclFloat, mcclSum, comm, nullptr), mcclSuccess);
    EXPECT_EQ(musaDeviceSynchronize(), musaErrorIllegalAddress);
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find("sendbuff spans 16384 bytes"), std::string::npos) << log;
    EXPECT_EQ(musaDeviceSynchronize(), musaErrorIllegalAddress);  // sticky until the reset
  }
  mcclCommDestroy(comm);
  ASSERT_EQ(musaDeviceReset(), musaSuccess);
  EXPECT_EQ(musaDeviceSynchronize(), musaSuccess);
}

TEST_F(InProcess, InitAllQueriesAndGroupedCollectives) {
  NEED_DEVICES(4);
  Clique q(4);
  ASSERT_TRUE(q.ok());
  for (int i = 0; i < 4; ++i) {
    int v = -1;
    EXPECT_EQ(mcclCommCount(q.comms[i], &v), mcclSuccess);
    EXPECT_EQ(v, 4);
    EXPECT_EQ(mcclCommUserRank(q.comms[i], &v), mcclSuccess);
    EXPECT_EQ(v, i);
    EXPECT_EQ(mcclCommMuDevice(q.comms[i], &v), mcclSuccess);
    EXPECT_EQ(v, i);
  }
  // One thread drives all four ranks through a group.
  const size_t c = 100000;
  std::vector<std::unique_ptr<DevBuf<int32_t>>> s, r, g;
  for (int i = 0; i < 4; ++i) {
    s.emplace_back(new DevBuf<int32_t>(c));
    r.emplace_back(new DevBuf<int32_t>(c));
    g.emplace_back(new DevBuf<int32_t>(4 * c));
    std::vector<int32_t> in(c);
    for (size_t k = 0; k < c; ++k) in[k] = input<int32_t>(i, k, 1);
    s[i]->fill(in);
  }
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(mcclAllReduce(s[i]->p, r[i]->p, c, mcclInt32, mcclMax, q.comms[i], q.streams[i]),
              mcclSuccess);
    EXPECT_EQ(mcclAllGather(s[i]->p, g[i]->p, c, mcclInt32, q.comms[i], q.streams[i]), mcclSuccess);
  }
  ASSERT_EQ(mcclGroupEnd(), mcclSuccess);
  q.sync();
  for (int i = 0; i < 4; ++i) {
    std::vector<int32_t> got = r[i]->get(), all = g[i]->get();
    std::string why;
    int bad = 0;
    for (size_t k = 0; k < c; ++k) {
      if (!check_reduced<int32_t>(kMax, 4, k, 1, got[k], &why) && ++bad < 3) ADD_FAILURE() << why;
      for (int j = 0; j < 4; ++j)
        if (all[j * c + k] != input<int32_t>(j, k, 1) && ++bad < 3)
          ADD_FAILURE() << "AllGather rank " << i << " block " << j << " element " << k;
    }
  }
}

// Stream 0 in a collective is the legacy stream of the communicator's device, whichever device
// is current when the group ends (PyTorch's DataParallel broadcasts this way: one thread, one
// group, a device guard per call). Queued on one device's stream, the first task would wait
// forever for the second, queued behind it.
TEST_F(InProcess, DefaultStreamIsTheCommunicatorsDevice) {
  NEED_DEVICES(2);
  Clique q(2);
  ASSERT_TRUE(q.ok());
  const size_t c = 4096;
  std::vector<std::unique_ptr<DevBuf<float>>> buf;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(musaSetDevice(i), musaSuccess);
    buf.emplace_back(new DevBuf<float>(c));
    buf.back()->fill(std::vector<float>(c, i == 0 ? 7.5f : -1.0f));
  }
  ASSERT_EQ(musaSetDevice(0), musaSuccess);
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(musaSetDevice(i), musaSuccess);
    EXPECT_EQ(mcclBroadcast(buf[i]->p, buf[i]->p, c, mcclFloat32, 0, q.comms[i], nullptr),
              mcclSuccess);
  }
  ASSERT_EQ(musaSetDevice(1), musaSuccess);  // the group ends on another device than rank 0's
  ASSERT_EQ(mcclGroupEnd(), mcclSuccess);
  int current = -1;
  EXPECT_EQ(musaGetDevice(&current), musaSuccess);
  EXPECT_EQ(current, 1) << "mcclGroupEnd must leave the caller's device current";
  // Bounded wait: a deadlocked pair of tasks fails the test instead of hanging it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool done = false;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    done = true;
    for (int i = 0; i < 2; ++i) {
      musaSetDevice(i);
      if (musaStreamQuery(nullptr) == musaErrorNotReady) done = false;
    }
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!done) {
    ADD_FAILURE() << "the broadcast did not complete on the devices' legacy streams";
    for (mcclComm_t& comm : q.comms) {
      mcclCommAbort(comm);
      comm = nullptr;
    }
    return;
  }
  for (int i = 0; i < 2; ++i) {
    musaSetDevice(i);
    std::vector<float> got = buf[i]->get();
    EXPECT_EQ(got.front(), 7.5f) << "rank " << i;
    EXPECT_EQ(got.back(), 7.5f) << "rank " << i;
  }
  musaSetDevice(0);
}

TEST_F(InProcess, OneThreadPerRank) {
  const int n = 4;
  mcclUniqueId id;
  ASSERT_EQ(mcclGetUniqueId(&id), mcclSuccess);
  std::atomic<int> failures{0};
  auto rank_main = [&](int rank) {
    auto bad = [&](const std::string& what) {
      std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
      ++failures;
    };
    mcclComm_t comm = nullptr;
    musaStream_t stream = nullptr;
    // Non-blocking streams: the ranks share device 0, and a blocking stream would be ordered
    // after the other ranks' work by this thread's own musaMemcpy (legacy stream semantics).
    if (musaStreamCreateWithFlags(&stream, musaStreamNonBlocking) != musaSuccess)
      return bad("stream");
    if (mcclCommInitRank(&comm, n, id, rank) != mcclSuccess) return bad("init");
    const size_t c = 50000;
    DevBuf<float> s(c), r(c), p(c);
    std::vector<float> in(c);
    for (size_t k = 0; k < c; ++k) in[k] = input<float>(rank, k, 2);
    s.fill(in);
    for (int iter = 0; iter < 5; ++iter) {
      if (mcclAllReduce(s.p, r.p, c, mcclFloat32, mcclSum, comm, stream) != mcclSuccess)
        bad("allreduce");
      mcclGroupStart();
      mcclSend(s.p, c, mcclFloat32, (rank + 1) % n, comm, stream);
      mcclRecv(p.p, c, mcclFloat32, (rank + n - 1) % n, comm, stream);
      if (mcclGroupEnd() != mcclSuccess) bad("group");
      if (musaStreamSynchronize(stream) != musaSuccess) bad("sync");
      std::vector<float> got = r.get(), ring = p.get();
      std::string why;
      for (size_t k = 0; k < c; ++k) {
        if (!check_reduced<float>(kSum, n, k, 2, got[k], &why)) {
          bad(why);
          break;
        }
        if (ring[k] != input<float>((rank + n - 1) % n, k, 2)) {
          bad("ring element " + std::to_string(k));
          break;
        }
      }
    }
    mcclResult_t a = mcclInProgress;
    if (mcclCommGetAsyncError(comm, &a) != mcclSuccess || a != mcclSuccess)
      bad(mcclGetLastError(comm));
    if (mcclCommDestroy(comm) != mcclSuccess) bad("destroy");
    musaStreamDestroy(stream);
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(rank_main, r);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(InProcess, GroupedRingLargerThanTheRings) {
  NEED_DEVICES(4);
  setenv("MCCL_SIM_P2P_BYTES", "4096", 1);
  Clique q(4);
  unsetenv("MCCL_SIM_P2P_BYTES");
  ASSERT_TRUE(q.ok());
  const size_t c = 1 << 18;  // 1 MiB of floats per message, 256 times the ring
  std::vector<std::unique_ptr<DevBuf<float>>> s, r;
  for (int i = 0; i < 4; ++i) {
    s.emplace_back(new DevBuf<float>(c));
    r.emplace_back(new DevBuf<float>(c));
    std::vector<float> in(c);
    for (size_t k = 0; k < c; ++k) in[k] = input<float>(i, k, 3);
    s[i]->fill(in);
  }
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(mcclSend(s[i]->p, c, mcclFloat32, (i + 1) % 4, q.comms[i], q.streams[i]),
              mcclSuccess);
    EXPECT_EQ(mcclRecv(r[i]->p, c, mcclFloat32, (i + 3) % 4, q.comms[i], q.streams[i]),
              mcclSuccess);
  }
  ASSERT_EQ(mcclGroupEnd(), mcclSuccess);
  q.sync();
  for (int i = 0; i < 4; ++i) {
    std::vector<float> got = r[i]->get();
    size_t bad = 0;
    for (size_t k = 0; k < c; ++k) bad += got[k] != input<float>((i + 3) % 4, k, 3);
    EXPECT_EQ(bad, 0u) << "rank " << i;
  }
}

TEST_F(InProcess, SplitInAGroup) {
  NEED_DEVICES(4);
  Clique q(4);
  ASSERT_TRUE(q.ok());
  std::vector<mcclComm_t> sub(4, nullptr);
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(mcclCommSplit(q.comms[i], i / 2, i, &sub[i], nullptr), mcclSuccess);
  ASSERT_EQ(mcclGroupEnd(), mcclSuccess) << mcclGetLastError(nullptr);
  std::vector<std::unique_ptr<DevBuf<int64_t>>> s, r;
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  for (int i = 0; i < 4; ++i) {
    ASSERT_NE(sub[i], nullptr);
    int v = -1;
    EXPECT_EQ(mcclCommCount(sub[i], &v), mcclSuccess);
    EXPECT_EQ(v, 2);
    EXPECT_EQ(mcclCommUserRank(sub[i], &v), mcclSuccess);
    EXPECT_EQ(v, i % 2);
    s.emplace_back(new DevBuf<int64_t>(1));
    r.emplace_back(new DevBuf<int64_t>(1));
    s[i]->fill({int64_t{1} << (10 * i)});
    EXPECT_EQ(mcclAllReduce(s[i]->p, r[i]->p, 1, mcclInt64, mcclSum, sub[i], q.streams[i]),
              mcclSuccess);
  }
  ASSERT_EQ(mcclGroupEnd(), mcclSuccess);
  q.sync();
  for (int i = 0; i < 4; ++i) {
    const int lo = i / 2 * 2;
    EXPECT_EQ(r[i]->get()[0], (int64_t{1} << (10 * lo)) + (int64_t{1} << (10 * (lo + 1))));
    EXPECT_EQ(mcclCommDestroy(sub[i]), mcclSuccess);
  }
}

TEST_F(InProcess, AbortUnblocksAndFailsThePeer) {
  NEED_DEVICES(2);
  Clique q(2);
  ASSERT_TRUE(q.ok());
  DevBuf<float> s(1000), r(1000);
  // Rank 0 waits in a collective rank 1 never joins, until rank 0's communicator is aborted.
  ASSERT_EQ(mcclAllReduce(s.p, r.p, 1000, mcclFloat32, mcclSum, q.comms[0], q.streams[0]),
            mcclSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Clock::time_point t0 = Clock::now();
  EXPECT_EQ(mcclCommAbort(q.comms[0]), mcclSuccess);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
  q.comms[0] = nullptr;
  EXPECT_EQ(musaStreamSynchronize(q.streams[0]), musaSuccess);
  // The peer's next collective fails instead of waiting forever.
  ASSERT_EQ(mcclAllReduce(s.p, r.p, 1000, mcclFloat32, mcclSum, q.comms[1], q.streams[1]),
            mcclSuccess);
  EXPECT_EQ(musaStreamSynchronize(q.streams[1]), musaSuccess);
  mcclResult_t a = mcclSuccess;
  EXPECT_EQ(mcclCommGetAsyncError(q.comms[1], &a), mcclSuccess);
  EXPECT_EQ(a, mcclRemoteError);
  EXPECT_NE(std::string(mcclGetLastError(q.comms[1])).find("aborted"), std::string::npos)
      << mcclGetLastError(q.comms[1]);
  // Using the aborted handle is refused.
  int v = 0;
  EXPECT_EQ(mcclCommCount(reinterpret_cast<mcclComm_t>(q.comms[0]), &v), mcclInvalidArgument);
}

TEST_F(InProcess, InvalidArguments) {
  NEED_DEVICES(2);
  Clique q(2);
  ASSERT_TRUE(q.ok());
  mcclComm_t c = q.comms[0];
  musaStream_t st = q.streams[0];
  DevBuf<float> b(64), b2(64);
  int v = 0;
  mcclResult_t a;
  // Handles and outputs.
  EXPECT_EQ(mcclAllReduce(b.p, b2.p, 4, mcclFloat32, mcclSum, nullptr, st), mcclInvalidArgument);
  EXPECT_EQ(mcclAllReduce(b.p, b2.p, 4, mcclFloat32, mcclSum, reinterpret_cast<mcclComm_t>(&v), st),
            mcclInvalidArgument);
  EXPECT_EQ(mcclCommCount(c, nullptr), mcclInvalidArgument);
  EXPECT_EQ(mcclCommCount(nullptr, &v), mcclInvalidArgument);
  EXPECT_EQ(mcclCommUserRank(c, nullptr), mcclInvalidArgument);
  EXPECT_EQ(mcclCommMuDevice(c, nullptr), mcclInvalidArgument);
  EXPECT_EQ(mcclCommGetAsyncError(c, nullptr), mcclInvalidArgument);
  EXPECT_EQ(mcclCommGetAsyncError(nullptr, &a), mcclInvalidArgument);
  EXPECT_EQ(mcclCommDestroy(nullptr), mcclInvalidArgument);
  EXPECT_EQ(mcclCommAbort(nullptr), mcclInvalidArgument);
  EXPECT_EQ(mcclGetVersion(nullptr), mcclInvalidArgument);
  EXPECT_EQ(mcclGetUniqueId(nullptr), mcclInvalidArgument);
  // Types, operators, roots, peers.
  EXPECT_EQ(mcclAllReduce(b.p, b2.p, 4, static_cast<mcclDataType_t>(10), mcclSum, c, st),
            mcclInvalidArgument);
  EXPECT_EQ(mcclAllReduce(b.p, b2.p, 4, static_cast<mcclDataType_t>(-1), mcclSum, c, st),
            mcclInvalidArgument);
  EXPECT_EQ(mcclAllReduce(b.p, b2.p, 4, mcclFloat32, static_cast<mcclRedOp_t>(5), c, st),
            mcclInvalidArgument);
  EXPECT_EQ(mcclAllReduce(b.p, b2.p, 4, mcclFloat32, static_cast<mcclRedOp_t>(-3), c, st),
            mcclInvalidArgument);
  EXPECT_EQ(mcclReduce(b.p, b2.p, 4, mcclFloat32, mcclSum, 2, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclBroadcast(b.p, b2.p, 4, mcclFloat32, -1, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclGather(b.p, b2.p, 4, mcclFloat32, 7, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclScatter(b.p, b2.p, 4, mcclFloat32, 2, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclSend(b.p, 4, mcclFloat32, 2, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclRecv(b.p, 4, mcclFloat32, -1, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclSend(b.p, 4, static_cast<mcclDataType_t>(12), 1, c, st), mcclInvalidArgument);
  // Buffers: NULL where data is needed, sizes that overflow, overlaps that are not in place.
  EXPECT_EQ(mcclAllReduce(nullptr, b2.p, 4, mcclFloat32, mcclSum, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclAllReduce(b.p, nullptr, 4, mcclFloat32, mcclSum, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclAllGather(b.p, nullptr, 4, mcclFloat32, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclReduce(b.p, nullptr, 4, mcclFloat32, mcclSum, 0, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclBroadcast(nullptr, b2.p, 4, mcclFloat32, 0, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclSend(nullptr, 4, mcclFloat32, 1, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclRecv(nullptr, 4, mcclFloat32, 1, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclAllReduce(b.p, b2.p, SIZE_MAX / 2, mcclFloat32, mcclSum, c, st),
            mcclInvalidArgument);
  EXPECT_EQ(mcclAllGather(b.p, b2.p, SIZE_MAX / 8 + 1, mcclFloat32, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclSend(b.p, SIZE_MAX / 4 + 1, mcclFloat32, 1, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclAllReduce(b.p, b.p + 1, 8, mcclFloat32, mcclSum, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclAllGather(b.p, b.p + 1, 8, mcclFloat32, c, st), mcclInvalidArgument);
  EXPECT_EQ(mcclReduceScatter(b.p, b.p + 1, 8, mcclFloat32, mcclSum, c, st), mcclInvalidArgument);
  // Streams.
  EXPECT_EQ(
      mcclAllReduce(b.p, b2.p, 4, mcclFloat32, mcclSum, c, reinterpret_cast<musaStream_t>(&v)),
      mcclInvalidArgument);
  // Groups.
  EXPECT_EQ(mcclGroupEnd(), mcclInvalidUsage);
  // None of the refused calls reached the peers: the communicator still works, in place too.
  std::vector<float> in(64, 1.5f);
  b.fill(in);
  DevBuf<float> o(64);
  o.fill(in);
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  EXPECT_EQ(mcclAllReduce(b.p, b.p, 64, mcclFloat32, mcclSum, q.comms[0], q.streams[0]),
            mcclSuccess);
  EXPECT_EQ(mcclAllReduce(o.p, o.p, 64, mcclFloat32, mcclSum, q.comms[1], q.streams[1]),
            mcclSuccess);
  ASSERT_EQ(mcclGroupEnd(), mcclSuccess);
  q.sync();
  EXPECT_EQ(b.get()[63], 3.0f);
  EXPECT_EQ(o.get()[0], 3.0f);
  // A refused call inside a group fails the whole group: nothing of it is issued.
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  EXPECT_EQ(mcclAllReduce(b.p, b.p, 64, mcclFloat32, mcclSum, q.comms[0], q.streams[0]),
            mcclSuccess);
  EXPECT_EQ(mcclAllReduce(o.p, o.p, 64, mcclFloat32, mcclSum, nullptr, q.streams[1]),
            mcclInvalidArgument);
  EXPECT_EQ(mcclGroupEnd(), mcclInvalidArgument);
  q.sync();
  EXPECT_EQ(b.get()[0], 3.0f);
}

TEST_F(InProcess, IdsConfigsAndInitErrors) {
  mcclComm_t c = nullptr;
  mcclUniqueId id;
  ASSERT_EQ(mcclGetUniqueId(&id), mcclSuccess);
  mcclUniqueId junk;
  std::memset(&junk, 0x5a, sizeof junk);
  EXPECT_EQ(mcclCommInitRank(&c, 1, junk, 0), mcclInvalidArgument);
  EXPECT_EQ(mcclCommInitRank(nullptr, 1, id, 0), mcclInvalidArgument);
  EXPECT_EQ(mcclCommInitRank(&c, 0, id, 0), mcclInvalidArgument);
  EXPECT_EQ(mcclCommInitRank(&c, 2, id, 2), mcclInvalidArgument);
  EXPECT_EQ(mcclCommInitRank(&c, 2, id, -1), mcclInvalidArgument);
  mcclConfig_t cfg = MCCL_CONFIG_INITIALIZER;
  cfg.magic = 0xcafebeef;  // NCCL's magic: an untranslated ncclConfig_t
  EXPECT_EQ(mcclCommInitRankConfig(&c, 1, id, 0, &cfg), mcclInvalidArgument);
  cfg = MCCL_CONFIG_INITIALIZER;
  cfg.blocking = 3;
  EXPECT_EQ(mcclCommInitRankConfig(&c, 1, id, 0, &cfg), mcclInvalidArgument);
  cfg = MCCL_CONFIG_INITIALIZER;
  cfg.minCTAs = 8;
  cfg.maxCTAs = 4;
  EXPECT_EQ(mcclCommInitRankConfig(&c, 1, id, 0, &cfg), mcclInvalidArgument);
  EXPECT_EQ(c, nullptr);
  // A valid single-rank communicator with a config; its collectives are copies.
  cfg = MCCL_CONFIG_INITIALIZER;
  cfg.commName = "solo";
  ASSERT_EQ(mcclCommInitRankConfig(&c, 1, id, 0, &cfg), mcclSuccess);
  // The id is used up: every rank has joined and the segment's name is gone.
  mcclComm_t again = nullptr;
  EXPECT_EQ(mcclCommInitRank(&again, 1, id, 0), mcclInvalidUsage);
  musaStream_t st = nullptr;
  ASSERT_EQ(musaStreamCreate(&st), musaSuccess);
  DevBuf<double> s(10), r(10);
  s.fill(std::vector<double>(10, 2.5));
  EXPECT_EQ(mcclAllReduce(s.p, r.p, 10, mcclFloat64, mcclProd, c, st), mcclSuccess);
  EXPECT_EQ(musaStreamSynchronize(st), musaSuccess);
  EXPECT_EQ(r.get()[9], 2.5);
  EXPECT_EQ(mcclCommDestroy(c), mcclSuccess);
  EXPECT_EQ(mcclCommDestroy(c), mcclInvalidArgument);  // twice
  musaStreamDestroy(st);
  // Ranks disagreeing on nranks, and a rank joining twice (in a group, so nothing waits).
  mcclUniqueId id2;
  ASSERT_EQ(mcclGetUniqueId(&id2), mcclSuccess);
  mcclComm_t x = nullptr, y = nullptr, z = nullptr;
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  EXPECT_EQ(mcclCommInitRank(&x, 2, id2, 0), mcclSuccess);
  EXPECT_EQ(mcclCommInitRank(&y, 3, id2, 1), mcclInvalidUsage);
  EXPECT_EQ(mcclCommInitRank(&z, 2, id2, 0), mcclInvalidUsage);
  EXPECT_NE(mcclGroupEnd(), mcclSuccess);
  EXPECT_EQ(y, nullptr);
  EXPECT_EQ(z, nullptr);
  if (x != nullptr) {
    EXPECT_EQ(mcclCommAbort(x), mcclSuccess);
  }
  // InitAll: duplicate and missing devices.
  mcclComm_t cs[2] = {nullptr, nullptr};
  const int dup[2] = {0, 0};
  EXPECT_EQ(mcclCommInitAll(cs, 2, dup), mcclInvalidUsage);
  const int missing[2] = {0, 99};
  EXPECT_EQ(mcclCommInitAll(cs, 2, missing), mcclInvalidArgument);
  EXPECT_EQ(mcclCommInitAll(nullptr, 2, nullptr), mcclInvalidArgument);
  EXPECT_EQ(mcclCommInitAll(cs, 0, nullptr), mcclInvalidArgument);
}

TEST_F(InProcess, InitTimesOutWhenARankNeverComes) {
  setenv("MCCL_SIM_TIMEOUT_MS", "300", 1);
  mcclUniqueId id;
  ASSERT_EQ(mcclGetUniqueId(&id), mcclSuccess);
  mcclComm_t c = nullptr;
  EXPECT_EQ(mcclCommInitRank(&c, 2, id, 0), mcclRemoteError);
  unsetenv("MCCL_SIM_TIMEOUT_MS");
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(std::string(mcclGetLastError(nullptr)).find("timed out"), std::string::npos);
}

TEST_F(InProcess, NonBlockingInitCanBeAbandoned) {
  mcclUniqueId id;
  ASSERT_EQ(mcclGetUniqueId(&id), mcclSuccess);
  mcclConfig_t cfg = MCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  mcclComm_t c = nullptr;
  // Rank 1 never comes: the rendezvous stays in progress until the communicator is abandoned.
  ASSERT_EQ(mcclCommInitRankConfig(&c, 2, id, 0, &cfg), mcclInProgress);
  ASSERT_NE(c, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  mcclResult_t a = mcclSuccess;
  EXPECT_EQ(mcclCommGetAsyncError(c, &a), mcclSuccess);
  EXPECT_EQ(a, mcclInProgress);
  int v = 0;
  EXPECT_EQ(mcclCommCount(c, &v), mcclSuccess);
  EXPECT_EQ(v, 2);
  const Clock::time_point t0 = Clock::now();
  EXPECT_EQ(mcclCommDestroy(c), mcclSuccess);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
  // The same with abort, after an operation was queued behind the unfinished rendezvous.
  ASSERT_EQ(mcclGetUniqueId(&id), mcclSuccess);
  ASSERT_EQ(mcclCommInitRankConfig(&c, 2, id, 1, &cfg), mcclInProgress);
  musaStream_t st = nullptr;
  ASSERT_EQ(musaStreamCreateWithFlags(&st, musaStreamNonBlocking), musaSuccess);
  DevBuf<float> b(16);
  EXPECT_EQ(mcclAllReduce(b.p, b.p, 16, mcclFloat32, mcclSum, c, st), mcclSuccess);
  EXPECT_EQ(mcclCommAbort(c), mcclSuccess);
  EXPECT_EQ(musaStreamSynchronize(st), musaSuccess);
  musaStreamDestroy(st);
}

TEST_F(InProcess, RegistrationAndPreMulSumOperators) {
  NEED_DEVICES(2);
  Clique q(2);
  ASSERT_TRUE(q.ok());
  mcclComm_t c = q.comms[0];
  DevBuf<float> d(256);
  void* h = nullptr;
  EXPECT_EQ(mcclCommRegister(c, d.p, 256 * sizeof(float), &h), mcclSuccess);
  EXPECT_NE(h, nullptr);
  EXPECT_EQ(mcclCommRegister(c, d.p, 257 * sizeof(float), &h), mcclInvalidArgument);
  std::vector<float> host(16);
  EXPECT_EQ(mcclCommRegister(c, host.data(), 64, &h), mcclInvalidArgument);
  EXPECT_EQ(mcclCommRegister(c, nullptr, 64, &h), mcclInvalidArgument);
  EXPECT_EQ(mcclCommRegister(c, d.p, 0, &h), mcclInvalidArgument);
  EXPECT_EQ(mcclCommRegister(c, d.p, 64, nullptr), mcclInvalidArgument);
  void* h2 = nullptr;
  ASSERT_EQ(mcclCommRegister(c, d.p, 64, &h2), mcclSuccess);
  EXPECT_EQ(mcclCommDeregister(q.comms[1], h2), mcclInvalidArgument);  // another comm's
  EXPECT_EQ(mcclCommDeregister(c, h2), mcclSuccess);
  EXPECT_EQ(mcclCommDeregister(c, h2), mcclInvalidArgument);  // twice
  EXPECT_EQ(mcclCommDeregister(c, nullptr), mcclInvalidArgument);
  void* m = nullptr;
  ASSERT_EQ(mcclMemAlloc(&m, 4096), mcclSuccess);
  void* h3 = nullptr;
  EXPECT_EQ(mcclCommRegister(c, m, 4096, &h3), mcclSuccess);
  EXPECT_EQ(mcclCommDeregister(c, h3), mcclSuccess);
  EXPECT_EQ(mcclMemFree(m), mcclSuccess);
  EXPECT_EQ(mcclMemAlloc(nullptr, 16), mcclInvalidArgument);
  EXPECT_EQ(mcclMemAlloc(&m, 0), mcclInvalidArgument);

  // PreMulSum operators.
  float two = 2.0f;
  mcclRedOp_t op = mcclSum, op2 = mcclSum;
  EXPECT_EQ(mcclRedOpCreatePreMulSum(nullptr, &two, mcclFloat32, mcclScalarHostImmediate, c),
            mcclInvalidArgument);
  EXPECT_EQ(mcclRedOpCreatePreMulSum(&op, nullptr, mcclFloat32, mcclScalarHostImmediate, c),
            mcclInvalidArgument);
  EXPECT_EQ(mcclRedOpCreatePreMulSum(&op, &two, static_cast<mcclDataType_t>(10),
                                     mcclScalarHostImmediate, c),
            mcclInvalidArgument);
  EXPECT_EQ(
      mcclRedOpCreatePreMulSum(&op, &two, mcclFloat32, static_cast<mcclScalarResidence_t>(2), c),
      mcclInvalidArgument);
  EXPECT_EQ(mcclRedOpCreatePreMulSum(&op, &two, mcclFloat32, mcclScalarHostImmediate, nullptr),
            mcclInvalidArgument);
  ASSERT_EQ(mcclRedOpCreatePreMulSum(&op, &two, mcclFloat32, mcclScalarHostImmediate, c),
            mcclSuccess);
  EXPECT_GE(static_cast<int>(op), static_cast<int>(mcclNumOps));
  ASSERT_EQ(mcclRedOpCreatePreMulSum(&op2, &two, mcclFloat32, mcclScalarHostImmediate, q.comms[1]),
            mcclSuccess);
  DevBuf<double> dd(4);
  EXPECT_EQ(mcclAllReduce(dd.p, dd.p, 4, mcclFloat64, op, c, q.streams[0]),
            mcclInvalidArgument);  // made for float32
  EXPECT_EQ(mcclRedOpDestroy(mcclSum, c), mcclInvalidArgument);
  EXPECT_EQ(mcclRedOpDestroy(op, nullptr), mcclInvalidArgument);
  EXPECT_EQ(mcclRedOpDestroy(op, c), mcclSuccess);
  EXPECT_EQ(mcclRedOpDestroy(op, c), mcclInvalidArgument);
  EXPECT_EQ(mcclAllReduce(d.p, d.p, 4, mcclFloat32, op, c, q.streams[0]), mcclInvalidArgument);
  EXPECT_EQ(mcclRedOpDestroy(op2, q.comms[1]), mcclSuccess);
}

TEST_F(InProcess, HalfAndBfloat16ReduceInFloatAndRoundOnce) {
  NEED_DEVICES(4);
  Clique q(4);
  ASSERT_TRUE(q.ok());
  const size_t c = 4096;
  // Values that are not exact sums: each rank contributes x_k = 1 + (k+1)*i/4096 + 1/3.
  auto value = [](int k, size_t i) {
    return 1.0 + (k + 1) * static_cast<double>(i) / 4096 + 1.0 / 3;
  };
  for (int avg = 0; avg < 2; ++avg) {
    std::vector<std::unique_ptr<DevBuf<_Float16>>> h;
    std::vector<std::unique_ptr<DevBuf<BF16>>> b;
    for (int k = 0; k < 4; ++k) {
      h.emplace_back(new DevBuf<_Float16>(c));
      b.emplace_back(new DevBuf<BF16>(c));
      std::vector<_Float16> hv(c);
      std::vector<BF16> bv(c);
      for (size_t i = 0; i < c; ++i) {
        hv[i] = TT<_Float16>::enc(value(k, i));
        bv[i] = TT<BF16>::enc(value(k, i));
      }
      h[k]->fill(hv);
      b[k]->fill(bv);
    }
    const mcclRedOp_t op = avg ? mcclAvg : mcclSum;
    ASSERT_EQ(mcclGroupStart(), mcclSuccess);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(mcclAllReduce(h[k]->p, h[k]->p, c, mcclFloat16, op, q.comms[k], q.streams[k]),
                mcclSuccess);
      EXPECT_EQ(mcclAllReduce(b[k]->p, b[k]->p, c, mcclBfloat16, op, q.comms[k], q.streams[k]),
                mcclSuccess);
    }
    ASSERT_EQ(mcclGroupEnd(), mcclSuccess);
    q.sync();
    int bad = 0;
    for (int k = 0; k < 4; ++k) {
      std::vector<_Float16> hg = h[k]->get();
      std::vector<BF16> bg = b[k]->get();
      for (size_t i = 0; i < c; ++i) {
        // Reference: the inputs as stored, summed in float in rank order, rounded once.
        float hs = 0, bs = 0;
        for (int j = 0; j < 4; ++j) {
          hs += static_cast<float>(TT<_Float16>::enc(value(j, i)));
          bs += static_cast<float>(TT<BF16>::dec(TT<BF16>::enc(value(j, i))));
        }
        if (avg) {
          hs /= 4;
          bs /= 4;
        }
        const _Float16 hw = static_cast<_Float16>(hs);
        const uint16_t bw = bf16_nearest(bs);
        if ((!same(hg[i], hw) || bg[i].bits != bw) && ++bad < 5)
          ADD_FAILURE() << (avg ? "avg" : "sum") << " rank " << k << " element " << i << ": fp16 "
                        << static_cast<float>(hg[i]) << " vs " << static_cast<float>(hw)
                        << ", bf16 " << bf16_value(bg[i].bits) << " vs " << bf16_value(bw);
      }
    }
  }
}

TEST_F(InProcess, OperationsOnSeveralStreamsOfOneGroup) {
  NEED_DEVICES(2);
  Clique q(2);
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE(q.add_streams());
  const std::vector<musaStream_t>& extra = q.extra;
  const size_t c = 3000;
  RankBuffers<uint64_t> b(c, [](int i, size_t k) { return input<uint64_t>(i, k, 5); });
  auto &s = b.s, &r = b.r, &g = b.g;
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(mcclAllReduce(s[i]->p, r[i]->p, c, mcclUint64, mcclMin, q.comms[i], q.streams[i]),
              mcclSuccess);
    EXPECT_EQ(mcclAllGather(s[i]->p, g[i]->p, c, mcclUint64, q.comms[i], extra[i]), mcclSuccess);
  }
  ASSERT_EQ(mcclGroupEnd(), mcclSuccess);
  // Waiting on the second stream alone must be enough for both operations.
  for (int i = 0; i < 2; ++i) EXPECT_EQ(musaStreamSynchronize(extra[i]), musaSuccess);
  for (int i = 0; i < 2; ++i) {
    std::vector<uint64_t> got = r[i]->get(), all = g[i]->get();
    std::string why;
    for (size_t k = 0; k < c; ++k) {
      ASSERT_TRUE(check_reduced<uint64_t>(kMin, 2, k, 5, got[k], &why)) << why;
      ASSERT_EQ(all[k], input<uint64_t>(0, k, 5));
      ASSERT_EQ(all[c + k], input<uint64_t>(1, k, 5));
    }
  }
  q.sync();
}

// Operations of one communicator run in call order whatever their streams, as NCCL chains them
// (FSDP issues all-gathers and reduce-scatters on two streams): rank 0's first stream is held, so
// its all-gather on a free stream would otherwise run first and meet rank 1's all-reduce.
TEST_F(InProcess, CallOrderHoldsAcrossStreams) {
  NEED_DEVICES(2);
  Clique q(2);
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE(q.add_streams());
  const std::vector<musaStream_t>& extra = q.extra;
  const size_t c = 1000;
  RankBuffers<float> b(c, [](int i, size_t) { return static_cast<float>(i + 1); });
  auto &s = b.s, &r = b.r, &g = b.g;
  // Held after the buffers are filled: their copies (legacy stream) wait for blocking streams.
  static std::atomic<bool> release{false};
  release = false;
  ASSERT_EQ(musaLaunchHostFunc(
                q.streams[0],
                [](void*) {
                  while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                },
                nullptr),
            musaSuccess);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(mcclAllReduce(s[i]->p, r[i]->p, c, mcclFloat32, mcclSum, q.comms[i], q.streams[i]),
              mcclSuccess);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(mcclAllGather(s[i]->p, g[i]->p, c, mcclFloat32, q.comms[i], extra[i]), mcclSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  release = true;
  for (int i = 0; i < 2; ++i) EXPECT_EQ(musaStreamSynchronize(extra[i]), musaSuccess);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(r[i]->get(), std::vector<float>(c, 3.0f)) << "rank " << i;
    std::vector<float> all = g[i]->get();
    EXPECT_EQ(all.front(), 1.0f);
    EXPECT_EQ(all.back(), 2.0f);
  }
  q.sync();
}

TEST_F(InProcess, GraphCaptureReplaysTheCollective) {
  NEED_DEVICES(2);
  Clique q(2);
  ASSERT_TRUE(q.ok());
  const size_t c = 1000;
  std::vector<std::unique_ptr<DevBuf<int32_t>>> s, r;
  musaGraph_t graphs[2] = {nullptr, nullptr};
  musaGraphExec_t execs[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) {
    s.emplace_back(new DevBuf<int32_t>(c));
    r.emplace_back(new DevBuf<int32_t>(c));
    ASSERT_EQ(musaStreamBeginCapture(q.streams[i], musaStreamCaptureModeRelaxed), musaSuccess);
    EXPECT_EQ(mcclAllReduce(s[i]->p, r[i]->p, c, mcclInt32, mcclSum, q.comms[i], q.streams[i]),
              mcclSuccess);
    ASSERT_EQ(musaStreamEndCapture(q.streams[i], &graphs[i]), musaSuccess);
    ASSERT_EQ(musaGraphInstantiate(&execs[i], graphs[i], nullptr, nullptr, 0), musaSuccess);
  }
  for (int launch = 1; launch <= 3; ++launch) {
    for (int i = 0; i < 2; ++i) s[i]->fill(std::vector<int32_t>(c, launch * (i + 1)));
    for (int i = 0; i < 2; ++i) ASSERT_EQ(musaGraphLaunch(execs[i], q.streams[i]), musaSuccess);
    q.sync();
    for (int i = 0; i < 2; ++i) EXPECT_EQ(r[i]->get()[c - 1], launch * 3) << "launch " << launch;
  }
  for (int i = 0; i < 2; ++i) {
    musaGraphExecDestroy(execs[i]);
    musaGraphDestroy(graphs[i]);
  }
}

TEST_F(InProcess, MismatchedSendRecvSizeIsReported) {
  NEED_DEVICES(2);
  Clique q(2);
  ASSERT_TRUE(q.ok());
  DevBuf<float> s(100), r(100);
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  EXPECT_EQ(mcclSend(s.p, 100, mcclFloat32, 1, q.comms[0], q.streams[0]), mcclSuccess);
  EXPECT_EQ(mcclRecv(r.p, 50, mcclFloat32, 0, q.comms[1], q.streams[1]), mcclSuccess);
  ASSERT_EQ(mcclGroupEnd(), mcclSuccess);
  for (musaStream_t x : q.streams) EXPECT_EQ(musaStreamSynchronize(x), musaSuccess);
  mcclResult_t a = mcclSuccess;
  EXPECT_EQ(mcclCommGetAsyncError(q.comms[1], &a), mcclSuccess);
  EXPECT_EQ(a, mcclInvalidUsage);
  EXPECT_NE(std::string(mcclGetLastError(q.comms[1])).find("400 bytes"), std::string::npos)
      << mcclGetLastError(q.comms[1]);
}

TEST_F(InProcess, DestroyWaitsForQueuedWork) {
  NEED_DEVICES(2);
  std::vector<mcclComm_t> comms(2, nullptr);
  ASSERT_EQ(mcclCommInitAll(comms.data(), 2, nullptr), mcclSuccess);
  musaStream_t st[2];
  for (int i = 0; i < 2; ++i) {
    musaSetDevice(i);
    ASSERT_EQ(musaStreamCreate(&st[i]), musaSuccess);
  }
  musaSetDevice(0);
  const size_t c = 1 << 20;
  DevBuf<float> a(c), b(c);
  a.fill(std::vector<float>(c, 1.0f));
  b.fill(std::vector<float>(c, 2.0f));
  ASSERT_EQ(mcclGroupStart(), mcclSuccess);
  EXPECT_EQ(mcclAllReduce(a.p, a.p, c, mcclFloat32, mcclSum, comms[0], st[0]), mcclSuccess);
  EXPECT_EQ(mcclAllReduce(b.p, b.p, c, mcclFloat32, mcclSum, comms[1], st[1]), mcclSuccess);
  ASSERT_EQ(mcclGroupEnd(), mcclSuccess);
  EXPECT_EQ(mcclCommDestroy(comms[0]), mcclSuccess);
  EXPECT_EQ(mcclCommDestroy(comms[1]), mcclSuccess);
  EXPECT_EQ(a.get()[c - 1], 3.0f);
  EXPECT_EQ(b.get()[0], 3.0f);
  for (musaStream_t x : st) musaStreamDestroy(x);
}

TEST(InProcessApi, VersionsAndErrorStrings) {
  int v = 0;
  ASSERT_EQ(mcclGetVersion(&v), mcclSuccess);
  EXPECT_EQ(v, MCCL_VERSION_CODE);
  EXPECT_EQ(v, 22000);
  for (int r = 0; r < mcclNumResults; ++r)
    EXPECT_GT(std::strlen(mcclGetErrorString(static_cast<mcclResult_t>(r))), 0u);
  EXPECT_STRNE(mcclGetErrorString(mcclRemoteError), mcclGetErrorString(mcclSystemError));
  EXPECT_STREQ(mcclGetErrorString(static_cast<mcclResult_t>(1234)), "unknown result code");
  EXPECT_EQ(mcclCommCount(nullptr, &v), mcclInvalidArgument);
  EXPECT_NE(std::string(mcclGetLastError(nullptr)).find("invalid communicator"), std::string::npos);
  // Values the shim relies on [A].
  EXPECT_EQ(sizeof(mcclUniqueId), 128u);
  EXPECT_EQ(static_cast<int>(mcclBfloat16), 9);
  EXPECT_EQ(static_cast<int>(mcclAvg), 4);
  mcclConfig_t cfg = MCCL_CONFIG_INITIALIZER;
  EXPECT_EQ(cfg.size, sizeof(mcclConfig_t));
  EXPECT_EQ(cfg.magic, MCCL_CONFIG_MAGIC);
  EXPECT_EQ(cfg.blocking, MCCL_CONFIG_UNDEF_INT);
  EXPECT_EQ(cfg.commName, nullptr);
}

// The library's dynamic section and exported symbols, read from its file.
struct ElfInfo {
  std::vector<std::string> needed;
  std::string soname;
  std::vector<std::string> exports;
  bool ok = false;
};

ElfInfo read_elf(const std::string& path) {
  ElfInfo out;
  std::ifstream f(path, std::ios::binary);
  std::vector<char> img((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (img.size() < sizeof(Elf64_Ehdr)) return out;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(img.data());
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shoff + eh->e_shnum * sizeof(Elf64_Shdr) > img.size())
    return out;
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(img.data() + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& s = sh[i];
    if (s.sh_type != SHT_DYNAMIC && s.sh_type != SHT_DYNSYM) continue;
    const char* str = img.data() + sh[s.sh_link].sh_offset;
    if (s.sh_type == SHT_DYNAMIC) {
      for (const auto* d = reinterpret_cast<const Elf64_Dyn*>(img.data() + s.sh_offset);
           d->d_tag != DT_NULL; ++d) {
        if (d->d_tag == DT_NEEDED) out.needed.push_back(str + d->d_un.d_val);
        if (d->d_tag == DT_SONAME) out.soname = str + d->d_un.d_val;
      }
    } else {
      const auto* sym = reinterpret_cast<const Elf64_Sym*>(img.data() + s.sh_offset);
      for (size_t k = 0; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
        const int bind = ELF64_ST_BIND(sym[k].st_info);
        if (sym[k].st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
            sym[k].st_name != 0)
          out.exports.push_back(str + sym[k].st_name);
      }
    }
  }
  out.ok = true;
  return out;
}

// The shim refuses MetaX's libmccl (also mccl*) by the runtime it needs: Moore Threads' depends on
// libmusart. The version script exports the API and nothing else.
TEST(InProcessApi, LibraryNeedsMusartAndExportsOnlyMccl) {
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&mcclGetVersion), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  const ElfInfo e = read_elf(info.dli_fname);
  ASSERT_TRUE(e.ok) << info.dli_fname;
  EXPECT_EQ(e.soname, "libmccl.so.2");
  EXPECT_NE(std::find(e.needed.begin(), e.needed.end(), "libmusart.so.5"), e.needed.end());
  EXPECT_GE(e.exports.size(), 33u);
  for (const std::string& s : e.exports) EXPECT_EQ(s.rfind("mccl", 0), 0u) << s;
  EXPECT_EQ(std::find(e.exports.begin(), e.exports.end(), "mcclCommCuDevice"), e.exports.end());
  EXPECT_EQ(std::find(e.exports.begin(), e.exports.end(), "mcclCommFinalize"), e.exports.end());
  EXPECT_NE(std::find(e.exports.begin(), e.exports.end(), "mcclCommMuDevice"), e.exports.end());
}

}  // namespace
