// One rank of a multi-process MCCL test: sim_ccl_worker <scenario> <rank> <nranks> <id-hex>.
// Started by ccl_test.cc (one process per rank); checks its own results against references
// computed here and exits 0 when all held, 1 otherwise (the reasons on stderr).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ccl_common.h"

using namespace ccltest;

namespace {

int g_rank = 0, g_n = 0, g_fail = 0;
mcclComm_t g_comm = nullptr;
musaStream_t g_stream = nullptr;
using Clock = std::chrono::steady_clock;

void report(int line, const std::string& what) {
  std::fprintf(stderr, "[rank %d of %d] line %d: %s\n", g_rank, g_n, line, what.c_str());
  ++g_fail;
}

#define CHECK_OK(call)                                                               \
  do {                                                                               \
    mcclResult_t r_ = (call);                                                        \
    if (r_ != mcclSuccess)                                                           \
      report(__LINE__, std::string(#call) + " -> " + mcclGetErrorString(r_) + ": " + \
                           mcclGetLastError(g_comm));                                \
  } while (0)
#define CHECK(cond, msg)                  \
  do {                                    \
    if (!(cond)) report(__LINE__, (msg)); \
  } while (0)

void sync() {
  musaError_t e = musaStreamSynchronize(g_stream);
  CHECK(e == musaSuccess, std::string("musaStreamSynchronize: ") + musaGetErrorString(e));
  mcclResult_t a = mcclSuccess;
  CHECK_OK(mcclCommGetAsyncError(g_comm, &a));
  CHECK(a == mcclSuccess,
        std::string("async error: ") + mcclGetErrorString(a) + ": " + mcclGetLastError(g_comm));
}

// Counts mismatches of one case; reports the first few.
struct Mismatches {
  int line;
  std::string what;
  int count = 0;
  void add(const std::string& why) {
    if (++count <= 3) report(line, what + ": " + why);
  }
};

template <class T>
std::vector<T> inputs(int rank, size_t count, int salt) {
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = input<T>(rank, i, salt);
  return v;
}

// A reduction operator for test op `op` (PreMulSum ops are created here, destroyed by the caller).
template <class T>
mcclRedOp_t make_op(int op, DevBuf<T>* dev_scalar) {
  if (op < kPreMulHost) return static_cast<mcclRedOp_t>(op);
  T s = scalar<T>(g_rank);
  mcclRedOp_t r = mcclSum;
  if (op == kPreMulHost) {
    CHECK_OK(mcclRedOpCreatePreMulSum(&r, &s, TT<T>::dt, mcclScalarHostImmediate, g_comm));
    s = scalar<T>(g_rank + 5);  // the library must have copied it already
  } else {
    dev_scalar->fill({s});
    CHECK_OK(mcclRedOpCreatePreMulSum(&r, dev_scalar->p, TT<T>::dt, mcclScalarDevice, g_comm));
  }
  return r;
}

template <class T>
void reductions(int& salt) {
  const mcclDataType_t dt = TT<T>::dt;
  for (int op = 0; op < kNumTestOps; ++op) {
    DevBuf<T> sc(1);
    const mcclRedOp_t red = make_op<T>(op, &sc);
    const std::string tag = std::string(TT<T>::name) + " " + op_name(op);
    {  // AllReduce, out of place
      const size_t count = 1037;
      ++salt;
      DevBuf<T> s(count), r(count);
      s.fill(inputs<T>(g_rank, count, salt));
      CHECK_OK(mcclAllReduce(s.p, r.p, count, dt, red, g_comm, g_stream));
      sync();
      std::vector<T> got = r.get();
      Mismatches m{__LINE__, "AllReduce " + tag};
      std::string why;
      for (size_t i = 0; i < count; ++i)
        if (!check_reduced<T>(op, g_n, i, salt, got[i], &why)) m.add(why);
    }
    {  // AllReduce, in place
      const size_t count = 515;
      ++salt;
      DevBuf<T> s(count);
      s.fill(inputs<T>(g_rank, count, salt));
      CHECK_OK(mcclAllReduce(s.p, s.p, count, dt, red, g_comm, g_stream));
      sync();
      std::vector<T> got = s.get();
      Mismatches m{__LINE__, "AllReduce in place " + tag};
      std::string why;
      for (size_t i = 0; i < count; ++i)
        if (!check_reduced<T>(op, g_n, i, salt, got[i], &why)) m.add(why);
    }
    {  // Reduce to a root that changes with the op; other ranks pass no receive buffer
      const size_t count = 333;
      const int root = op % g_n;
      ++salt;
      DevBuf<T> s(count), r(count);
      s.fill(inputs<T>(g_rank, count, salt));
      CHECK_OK(
          mcclReduce(s.p, g_rank == root ? r.p : nullptr, count, dt, red, root, g_comm, g_stream));
      sync();
      if (g_rank == root) {
        std::vector<T> got = r.get();
        Mismatches m{__LINE__, "Reduce " + tag};
        std::string why;
        for (size_t i = 0; i < count; ++i)
          if (!check_reduced<T>(op, g_n, i, salt, got[i], &why)) m.add(why);
      }
    }
    {  // ReduceScatter, out of place and in place
      const size_t rc = 257;
      for (int in_place = 0; in_place < 2; ++in_place) {
        ++salt;
        DevBuf<T> s(rc * g_n), r(rc);
        s.fill(inputs<T>(g_rank, rc * g_n, salt));
        T* out = in_place ? s.p + g_rank * rc : r.p;
        CHECK_OK(mcclReduceScatter(s.p, out, rc, dt, red, g_comm, g_stream));
        sync();
        std::vector<T> all = in_place ? s.get() : r.get();
        const size_t base = in_place ? g_rank * rc : 0;
        Mismatches m{__LINE__, std::string("ReduceScatter ") + (in_place ? "in place " : "") + tag};
        std::string why;
        for (size_t i = 0; i < rc; ++i)
          if (!check_reduced<T>(op, g_n, g_rank * rc + i, salt, all[base + i], &why)) m.add(why);
      }
    }
    if (op >= kPreMulHost) CHECK_OK(mcclRedOpDestroy(red, g_comm));
  }
}

template <class T>
void expect_equal(const std::vector<T>& got, size_t at, const std::vector<T>& want, size_t from,
                  size_t count, Mismatches& m) {
  for (size_t i = 0; i < count; ++i)
    if (!same(got[at + i], want[from + i])) m.add("element " + std::to_string(at + i) + " differs");
}

template <class T>
void movement(int& salt) {
  const mcclDataType_t dt = TT<T>::dt;
  const std::string tag = TT<T>::name;
  const int n = g_n, me = g_rank;
  {  // AllGather, out of place and in place
    const size_t c = 301;
    for (int in_place = 0; in_place < 2; ++in_place) {
      ++salt;
      DevBuf<T> s(c), r(c * n);
      const std::vector<T> mine = inputs<T>(me, c, salt);
      if (in_place) {
        std::vector<T> init(c * n);
        std::copy(mine.begin(), mine.end(), init.begin() + me * c);
        r.fill(init);
      } else {
        s.fill(mine);
      }
      CHECK_OK(mcclAllGather(in_place ? r.p + me * c : s.p, r.p, c, dt, g_comm, g_stream));
      sync();
      std::vector<T> got = r.get();
      Mismatches m{__LINE__, "AllGather " + tag};
      for (int j = 0; j < n; ++j) expect_equal(got, j * c, inputs<T>(j, c, salt), 0, c, m);
    }
  }
  {  // Broadcast from rank 1 (out of place), Bcast from the last rank (in place)
    const size_t c = 1001;
    ++salt;
    const int root = 1 % n;
    DevBuf<T> s(c), r(c);
    s.fill(inputs<T>(me, c, salt));
    CHECK_OK(mcclBroadcast(s.p, r.p, c, dt, root, g_comm, g_stream));
    sync();
    Mismatches m{__LINE__, "Broadcast " + tag};
    expect_equal(r.get(), 0, inputs<T>(root, c, salt), 0, c, m);
    ++salt;
    s.fill(inputs<T>(me, c, salt));
    CHECK_OK(mcclBcast(s.p, c, dt, n - 1, g_comm, g_stream));
    sync();
    Mismatches m2{__LINE__, "Bcast " + tag};
    expect_equal(s.get(), 0, inputs<T>(n - 1, c, salt), 0, c, m2);
  }
  {  // AlltoAll: block j of my send buffer goes to rank j
    const size_t c = 129;
    ++salt;
    DevBuf<T> s(c * n), r(c * n);
    s.fill(inputs<T>(me, c * n, salt));
    CHECK_OK(mcclAlltoAll(s.p, r.p, c, dt, g_comm, g_stream));
    sync();
    std::vector<T> got = r.get();
    Mismatches m{__LINE__, "AlltoAll " + tag};
    for (int j = 0; j < n; ++j) expect_equal(got, j * c, inputs<T>(j, c * n, salt), me * c, c, m);
  }
  {  // Gather to rank 1, Scatter from rank 2
    const size_t c = 77;
    ++salt;
    const int groot = 1 % n, sroot = 2 % n;
    DevBuf<T> s(c), r(c * n);
    s.fill(inputs<T>(me, c, salt));
    CHECK_OK(mcclGather(s.p, me == groot ? r.p : nullptr, c, dt, groot, g_comm, g_stream));
    sync();
    if (me == groot) {
      std::vector<T> got = r.get();
      Mismatches m{__LINE__, "Gather " + tag};
      for (int j = 0; j < n; ++j) expect_equal(got, j * c, inputs<T>(j, c, salt), 0, c, m);
    }
    ++salt;
    DevBuf<T> ss(c * n), sr(c);
    ss.fill(inputs<T>(me, c * n, salt));
    CHECK_OK(mcclScatter(me == sroot ? ss.p : nullptr, sr.p, c, dt, sroot, g_comm, g_stream));
    sync();
    Mismatches m{__LINE__, "Scatter " + tag};
    expect_equal(sr.get(), 0, inputs<T>(sroot, c * n, salt), me * c, c, m);
  }
}

template <class T>
void p2p(int& salt, size_t c) {
  const mcclDataType_t dt = TT<T>::dt;
  const std::string tag = TT<T>::name;
  const int n = g_n, me = g_rank, next = (me + 1) % n, prev = (me + n - 1) % n;
  {  // Ring: everyone sends to next and receives from prev in one group
    ++salt;
    DevBuf<T> s(c), r(c);
    s.fill(inputs<T>(me, c, salt));
    CHECK_OK(mcclGroupStart());
    CHECK_OK(mcclSend(s.p, c, dt, next, g_comm, g_stream));
    CHECK_OK(mcclRecv(r.p, c, dt, prev, g_comm, g_stream));
    CHECK_OK(mcclGroupEnd());
    sync();
    Mismatches m{__LINE__, "send/recv ring " + tag};
    expect_equal(r.get(), 0, inputs<T>(prev, c, salt), 0, c, m);
  }
  {  // Both directions plus a message to itself, nested groups, two messages per pair
    ++salt;
    DevBuf<T> s(2 * c), a(c), b(c), self(c), extra(c);
    s.fill(inputs<T>(me, 2 * c, salt));
    CHECK_OK(mcclGroupStart());
    CHECK_OK(mcclRecv(a.p, c, dt, prev, g_comm, g_stream));
    CHECK_OK(mcclGroupStart());
    CHECK_OK(mcclSend(s.p, c, dt, next, g_comm, g_stream));
    CHECK_OK(mcclSend(s.p, c, dt, prev, g_comm, g_stream));
    CHECK_OK(mcclRecv(b.p, c, dt, next, g_comm, g_stream));
    CHECK_OK(mcclGroupEnd());
    CHECK_OK(mcclSend(s.p + c, c, dt, me, g_comm, g_stream));
    CHECK_OK(mcclRecv(self.p, c, dt, me, g_comm, g_stream));
    CHECK_OK(mcclSend(s.p + c, c, dt, next, g_comm, g_stream));
    CHECK_OK(mcclRecv(extra.p, c, dt, prev, g_comm, g_stream));
    CHECK_OK(mcclGroupEnd());
    sync();
    Mismatches m{__LINE__, "send/recv both ways " + tag};
    expect_equal(a.get(), 0, inputs<T>(prev, 2 * c, salt), 0, c, m);
    expect_equal(b.get(), 0, inputs<T>(next, 2 * c, salt), 0, c, m);
    expect_equal(self.get(), 0, inputs<T>(me, 2 * c, salt), c, c, m);
    expect_equal(extra.get(), 0, inputs<T>(prev, 2 * c, salt), c, c, m);
  }
}

mcclResult_t async_error() {
  mcclResult_t a = mcclSuccess;
  CHECK_OK(mcclCommGetAsyncError(g_comm, &a));
  return a;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

long env_ms(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atol(v) : 0;
}

// Survivors of a peer that dies, hangs or aborts: the collective completes on the stream with an
// error, in time, and the communicator refuses further work.
void expect_failure(mcclResult_t want, const char* text, double min_s, double max_s) {
  const size_t c = 4096;
  DevBuf<float> s(c), r(c);
  s.fill(inputs<float>(g_rank, c, 1));
  const Clock::time_point t0 = Clock::now();
  CHECK_OK(mcclAllReduce(s.p, r.p, c, mcclFloat32, mcclSum, g_comm, g_stream));
  musaError_t e = musaStreamSynchronize(g_stream);
  const double dt = seconds_since(t0);
  CHECK(e == musaSuccess, "the stream must complete");
  const mcclResult_t a = async_error();
  CHECK(a == want,
        std::string("async error ") + mcclGetErrorString(a) + ", want " + mcclGetErrorString(want));
  const std::string msg = mcclGetLastError(g_comm);
  CHECK(msg.find(text) != std::string::npos, "last error \"" + msg + "\" lacks \"" + text + "\"");
  CHECK(dt >= min_s && dt <= max_s, "failed after " + std::to_string(dt) + " s, expected " +
                                        std::to_string(min_s) + ".." + std::to_string(max_s));
  // A failed communicator refuses new work with its error.
  mcclResult_t again = mcclAllReduce(s.p, r.p, c, mcclFloat32, mcclSum, g_comm, g_stream);
  CHECK(again == want, std::string("a later AllReduce returned ") + mcclGetErrorString(again));
}

int run(const std::string& scenario) {
  int salt = 0;
  if (scenario == "reductions") {
    for_each_type([&](auto t) { reductions<decltype(t)>(salt); });
  } else if (scenario == "movement") {
    for_each_type([&](auto t) { movement<decltype(t)>(salt); });
  } else if (scenario == "p2p") {
    for_each_type([&](auto t) { p2p<decltype(t)>(salt, 1003); });
  } else if (scenario == "large") {
    // Run with MCCL_SIM_CHUNK_BYTES and MCCL_SIM_P2P_BYTES far below these sizes.
    const size_t big = 1 << 20;
    {
      DevBuf<float> s(big), r(big);
      s.fill(inputs<float>(g_rank, big, 7));
      CHECK_OK(mcclAllReduce(s.p, r.p, big, mcclFloat32, mcclSum, g_comm, g_stream));
      sync();
      std::vector<float> got = r.get();
      Mismatches m{__LINE__, "large AllReduce"};
      std::string why;
      for (size_t i = 0; i < big; ++i)
        if (!check_reduced<float>(kSum, g_n, i, 7, got[i], &why)) m.add(why);
    }
    {
      DevBuf<_Float16> s(big / 2), r(big / 2);
      s.fill(inputs<_Float16>(g_rank, big / 2, 8));
      CHECK_OK(mcclAllReduce(s.p, r.p, big / 2, mcclFloat16, mcclMax, g_comm, g_stream));
      sync();
      std::vector<_Float16> got = r.get();
      Mismatches m{__LINE__, "large AllReduce fp16 max"};
      std::string why;
      for (size_t i = 0; i < big / 2; ++i)
        if (!check_reduced<_Float16>(kMax, g_n, i, 8, got[i], &why)) m.add(why);
    }
    {
      const size_t rc = 300001;
      DevBuf<int32_t> s(rc * g_n), r(rc);
      s.fill(inputs<int32_t>(g_rank, rc * g_n, 9));
      CHECK_OK(mcclReduceScatter(s.p, r.p, rc, mcclInt32, mcclSum, g_comm, g_stream));
      sync();
      std::vector<int32_t> got = r.get();
      Mismatches m{__LINE__, "large ReduceScatter"};
      std::string why;
      for (size_t i = 0; i < rc; ++i)
        if (!check_reduced<int32_t>(kSum, g_n, g_rank * rc + i, 9, got[i], &why)) m.add(why);
    }
    {
      const size_t c = 250007;
      DevBuf<double> s(c), r(c * g_n);
      s.fill(inputs<double>(g_rank, c, 10));
      CHECK_OK(mcclAllGather(s.p, r.p, c, mcclFloat64, g_comm, g_stream));
      sync();
      std::vector<double> got = r.get();
      Mismatches m{__LINE__, "large AllGather"};
      for (int j = 0; j < g_n; ++j) expect_equal(got, j * c, inputs<double>(j, c, 10), 0, c, m);
    }
    {
      const size_t c = 100003;
      DevBuf<uint8_t> s(c * g_n), r(c * g_n);
      s.fill(inputs<uint8_t>(g_rank, c * g_n, 11));
      CHECK_OK(mcclAlltoAll(s.p, r.p, c, mcclUint8, g_comm, g_stream));
      sync();
      std::vector<uint8_t> got = r.get();
      Mismatches m{__LINE__, "large AlltoAll"};
      for (int j = 0; j < g_n; ++j)
        expect_equal(got, j * c, inputs<uint8_t>(j, c * g_n, 11), g_rank * c, c, m);
    }
    {
      DevBuf<int64_t> s(big), r(big);
      s.fill(inputs<int64_t>(g_rank, big, 12));
      CHECK_OK(mcclBroadcast(s.p, r.p, big, mcclInt64, 0, g_comm, g_stream));
      sync();
      Mismatches m{__LINE__, "large Broadcast"};
      expect_equal(r.get(), 0, inputs<int64_t>(0, big, 12), 0, big, m);
    }
    p2p<float>(salt, 300007);  // far above the p2p ring: the group must not deadlock
  } else if (scenario == "killed") {
    // The last rank dies right after joining; the others must notice it (not wait for the
    // timeout, which the test sets far above the limit checked here).
    if (g_rank == g_n - 1) {
      std::fflush(nullptr);
      raise(SIGKILL);
    }
    expect_failure(mcclRemoteError, "exited", 0.0, 20.0);
  } else if (scenario == "hung") {
    // The last rank never joins the collective: the others time out (MCCL_SIM_TIMEOUT_MS).
    const double limit = env_ms("MCCL_SIM_TIMEOUT_MS") / 1000.0;
    if (g_rank == g_n - 1) {
      std::this_thread::sleep_for(std::chrono::duration<double>(limit * 3 + 1));
      return 0;  // destroys its communicator normally
    }
    expect_failure(mcclRemoteError, "timed out", limit, limit + 20.0);
  } else if (scenario == "abort") {
    if (g_rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      const Clock::time_point t0 = Clock::now();
      CHECK_OK(mcclCommAbort(g_comm));
      CHECK(seconds_since(t0) < 5.0, "mcclCommAbort took too long");
      g_comm = nullptr;
      return 0;
    }
    expect_failure(mcclRemoteError, "aborted", 0.0, 20.0);
  } else if (scenario == "mismatch") {
    // Rank 2 passes another count: every rank must report the mismatch.
    const size_t c = g_rank == 2 % g_n ? 2000 : 1000;
    DevBuf<float> s(c), r(c);
    s.fill(inputs<float>(g_rank, c, 3));
    CHECK_OK(mcclAllReduce(s.p, r.p, c, mcclFloat32, mcclSum, g_comm, g_stream));
    CHECK(musaStreamSynchronize(g_stream) == musaSuccess, "the stream must complete");
    const mcclResult_t a = async_error();
    CHECK(a == mcclInvalidUsage, std::string("async error ") + mcclGetErrorString(a));
    const std::string msg = mcclGetLastError(g_comm);
    CHECK(msg.find("mismatch") != std::string::npos, "last error: " + msg);
  } else if (scenario == "split") {
    // Colors by parity, keys reversing the order; then one rank opts out.
    mcclComm_t sub = nullptr;
    CHECK_OK(mcclCommSplit(g_comm, g_rank % 2, -g_rank, &sub, nullptr));
    std::vector<int> members;
    for (int j = g_n - 1; j >= 0; --j)
      if (j % 2 == g_rank % 2) members.push_back(j);
    int cnt = -1, rk = -1;
    CHECK_OK(mcclCommCount(sub, &cnt));
    CHECK_OK(mcclCommUserRank(sub, &rk));
    CHECK(cnt == static_cast<int>(members.size()), "split count " + std::to_string(cnt));
    CHECK(rk >= 0 && rk < cnt && members[rk] == g_rank, "split rank " + std::to_string(rk));
    {
      DevBuf<int32_t> s(1), r(members.size());
      s.fill({g_rank});
      CHECK_OK(mcclAllGather(s.p, r.p, 1, mcclInt32, sub, g_stream));
      CHECK(musaStreamSynchronize(g_stream) == musaSuccess, "sync");
      std::vector<int32_t> got = r.get();
      for (size_t j = 0; j < members.size(); ++j)
        CHECK(got[j] == members[j], "split AllGather order: position " + std::to_string(j));
    }
    CHECK_OK(mcclCommDestroy(sub));
    sub = reinterpret_cast<mcclComm_t>(0x1);
    CHECK_OK(mcclCommSplit(g_comm, g_rank == 0 ? MCCL_SPLIT_NOCOLOR : 7, 0, &sub, nullptr));
    if (g_rank == 0) {
      CHECK(sub == nullptr, "MCCL_SPLIT_NOCOLOR must give a NULL communicator");
    } else {
      DevBuf<int64_t> s(1), r(1);
      s.fill({g_rank});
      CHECK_OK(mcclAllReduce(s.p, r.p, 1, mcclInt64, mcclSum, sub, g_stream));
      CHECK(musaStreamSynchronize(g_stream) == musaSuccess, "sync");
      const int64_t want = static_cast<int64_t>(g_n) * (g_n - 1) / 2;
      CHECK(r.get()[0] == want, "AllReduce over the split-off ranks");
      CHECK_OK(mcclCommDestroy(sub));
    }
    // The parent still works.
    int dummy = 0;
    p2p<int8_t>(dummy, 99);
  } else if (scenario == "nonblocking") {
    // (The communicator was created with blocking = 0 in main.)
    DevBuf<float> s(100), r(100);
    s.fill(inputs<float>(g_rank, 100, 4));
    CHECK_OK(mcclAllReduce(s.p, r.p, 100, mcclFloat32, mcclSum, g_comm, g_stream));
    sync();
    std::vector<float> got = r.get();
    Mismatches m{__LINE__, "AllReduce on a non-blocking communicator"};
    std::string why;
    for (size_t i = 0; i < 100; ++i)
      if (!check_reduced<float>(kSum, g_n, i, 4, got[i], &why)) m.add(why);
  } else {
    report(__LINE__, "unknown scenario " + scenario);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s scenario rank nranks id-hex\n", argv[0]);
    return 2;
  }
  const std::string scenario = argv[1];
  g_rank = std::atoi(argv[2]);
  g_n = std::atoi(argv[3]);
  mcclUniqueId id;
  if (!id_from_hex(argv[4], &id)) {
    std::fprintf(stderr, "bad id\n");
    return 2;
  }
  if (musaStreamCreate(&g_stream) != musaSuccess) return 2;
  if (scenario == "nonblocking") {
    mcclConfig_t cfg = MCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    cfg.commName = "nonblocking-test";
    mcclResult_t r = mcclCommInitRankConfig(&g_comm, g_n, id, g_rank, &cfg);
    CHECK(r == mcclInProgress || r == mcclSuccess,
          std::string("non-blocking init returned ") + mcclGetErrorString(r));
    mcclResult_t a = mcclInProgress;
    const Clock::time_point t0 = Clock::now();
    while (a == mcclInProgress && seconds_since(t0) < 60) {
      CHECK_OK(mcclCommGetAsyncError(g_comm, &a));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(a == mcclSuccess, std::string("non-blocking init ended with ") + mcclGetErrorString(a));
  } else {
    CHECK_OK(mcclCommInitRank(&g_comm, g_n, id, g_rank));
  }
  if (g_fail == 0) run(scenario);
  if (g_comm != nullptr) CHECK_OK(mcclCommDestroy(g_comm));
  musaStreamDestroy(g_stream);
  return g_fail == 0 ? 0 : 1;
}
