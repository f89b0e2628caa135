// NCCL across real processes, one rank per process and per GPU, the way a launcher runs a job:
// the parent creates the ncclUniqueId, starts N copies of this program (fork + exec) and, once
// every rank has reported ready, hands each the id through a pipe; every rank checks its results
// against a reference computed here.
//
//   nccl_ranks [--ranks N] [--mode collectives|kill|stop] [--timeout S]
//
// collectives  all-reduce (every operator, out of place, in place, grouped), all-gather,
//              reduce-scatter, broadcast, ncclBcast, reduce and a send/recv ring in a group, for
//              every data type (FP8 only on devices of compute capability 9.0 and later, where
//              NCCL supports it), at a small and a multi-megabyte size.
// kill         after a first all-reduce the last rank kills itself (SIGKILL): the others' next
//              all-reduce must end with an error from the library (ncclCommGetAsyncError), which
//              they answer with ncclCommAbort, like a training job's watchdog.
// stop         the same with SIGSTOP: the rank stays alive but silent, so only a library timeout
//              can report it (NCCL has none; the program's own watchdog then aborts and fails).
//
// Prints "nccl_ranks: all checks passed" and exits 0 when every rank passed.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int g_rank = -1;
int g_failures = 0;

#define CUDA_OK(expr)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (expr);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "rank %d: FAIL %s:%d: %s: %s\n", g_rank, __FILE__, __LINE__, #expr, \
                   cudaGetErrorString(e_));                                                    \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

#define NCCL_OK(expr, comm)                                                                  \
  do {                                                                                       \
    ncclResult_t r_ = (expr);                                                                \
    if (r_ != ncclSuccess) {                                                                 \
      std::fprintf(stderr, "rank %d: FAIL %s:%d: %s: %s (%s)\n", g_rank, __FILE__, __LINE__, \
                   #expr, ncclGetErrorString(r_), ncclGetLastError(comm));                   \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// ---- Data types: values are small integers, exact in every type, so results compare exactly.
enum class Kind { kSigned, kUnsigned, kFloat, kHalf, kBf16, kE4m3, kE5m2 };

struct Type {
  ncclDataType_t dt;
  const char* name;
  size_t size;
  Kind kind;
  int mag;  // inputs lie in [-mag, mag] (signed kinds) or [0, mag]
};

const Type kTypes[] = {
    {ncclInt8, "int8", 1, Kind::kSigned, 3},
    {ncclUint8, "uint8", 1, Kind::kUnsigned, 3},
    {ncclInt32, "int32", 4, Kind::kSigned, 3},
    {ncclUint32, "uint32", 4, Kind::kUnsigned, 3},
    {ncclInt64, "int64", 8, Kind::kSigned, 3},
    {ncclUint64, "uint64", 8, Kind::kUnsigned, 3},
    {ncclFloat16, "float16", 2, Kind::kHalf, 3},
    {ncclFloat32, "float32", 4, Kind::kFloat, 3},
    {ncclFloat64, "float64", 8, Kind::kFloat, 3},
    {ncclBfloat16, "bfloat16", 2, Kind::kBf16, 3},
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    {ncclFloat8e4m3, "float8e4m3", 1, Kind::kE4m3, 2},
    {ncclFloat8e5m2, "float8e5m2", 1, Kind::kE5m2, 2},
#endif
};

bool is_fp8(const Type& t) { return t.kind == Kind::kE4m3 || t.kind == Kind::kE5m2; }
bool is_integer(const Type& t) { return t.kind == Kind::kSigned || t.kind == Kind::kUnsigned; }

void store(const Type& t, void* p, double v) {
  switch (t.dt) {
    case ncclInt8:
      *static_cast<int8_t*>(p) = static_cast<int8_t>(v);
      break;
    case ncclUint8:
      *static_cast<uint8_t*>(p) = static_cast<uint8_t>(v);
      break;
    case ncclInt32:
      *static_cast<int32_t*>(p) = static_cast<int32_t>(v);
      break;
    case ncclUint32:
      *static_cast<uint32_t*>(p) = static_cast<uint32_t>(v);
      break;
    case ncclInt64:
      *static_cast<int64_t*>(p) = static_cast<int64_t>(v);
      break;
    case ncclUint64:
      *static_cast<uint64_t*>(p) = static_cast<uint64_t>(v);
      break;
    case ncclFloat16:
      *static_cast<__half*>(p) = __double2half(v);
      break;
    case ncclFloat32:
      *static_cast<float*>(p) = static_cast<float>(v);
      break;
    case ncclFloat64:
      *static_cast<double*>(p) = v;
      break;
    case ncclBfloat16:
      *static_cast<__nv_bfloat16*>(p) = __double2bfloat16(v);
      break;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case ncclFloat8e4m3:
      *static_cast<__nv_fp8_e4m3*>(p) = __nv_fp8_e4m3(v);
      break;
    case ncclFloat8e5m2:
      *static_cast<__nv_fp8_e5m2*>(p) = __nv_fp8_e5m2(v);
      break;
#endif
    default:
      std::abort();
  }
}

double load(const Type& t, const void* p) {
  switch (t.dt) {
    case ncclInt8:
      return *static_cast<const int8_t*>(p);
    case ncclUint8:
      return *static_cast<const uint8_t*>(p);
    case ncclInt32:
      return *static_cast<const int32_t*>(p);
    case ncclUint32:
      return *static_cast<const uint32_t*>(p);
    case ncclInt64:
      return static_cast<double>(*static_cast<const int64_t*>(p));
    case ncclUint64:
      return static_cast<double>(*static_cast<const uint64_t*>(p));
    case ncclFloat16:
      return __half2float(*static_cast<const __half*>(p));
    case ncclFloat32:
      return *static_cast<const float*>(p);
    case ncclFloat64:
      return *static_cast<const double*>(p);
    case ncclBfloat16:
      return __bfloat162float(*static_cast<const __nv_bfloat16*>(p));
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case ncclFloat8e4m3:
      return static_cast<float>(*static_cast<const __nv_fp8_e4m3*>(p));
    case ncclFloat8e5m2:
      return static_cast<float>(*static_cast<const __nv_fp8_e5m2*>(p));
#endif
    default:
      std::abort();
  }
}

// Rank r's input element i for the type with index ti; `avg` inputs are non-negative so that the
// integer average (sum / nranks, truncated) has one meaning.
double input(const Type& t, int ti, int r, size_t i, bool avg) {
  const long long k =
      static_cast<long long>(r) * 5 + static_cast<long long>(i % 1000003) * 3 + ti * 7;
  if (avg || t.kind == Kind::kUnsigned) return static_cast<double>(k % (t.mag + 1));
  return static_cast<double>(k % (2 * t.mag + 1) - t.mag);
}

struct OpInfo {
  ncclRedOp_t op;
  const char* name;
};
const OpInfo kOps[] = {
    {ncclSum, "sum"}, {ncclProd, "prod"}, {ncclMax, "max"}, {ncclMin, "min"}, {ncclAvg, "avg"}};

double fold(ncclRedOp_t op, double a, double b) {
  switch (op) {
    case ncclProd:
      return a * b;
    case ncclMax:
      return a > b ? a : b;
    case ncclMin:
      return a < b ? a : b;
    default:
      return a + b;  // sum, avg
  }
}

// The reduction over ranks of element i, as the type stores it.
double reduced(const Type& t, int ti, ncclRedOp_t op, int nranks, size_t elem) {
  double acc = input(t, ti, 0, elem, op == ncclAvg);
  for (int r = 1; r < nranks; ++r) acc = fold(op, acc, input(t, ti, r, elem, op == ncclAvg));
  if (op == ncclAvg) acc = is_integer(t) ? std::trunc(acc / nranks) : acc / nranks;
  unsigned char tmp[8];
  store(t, tmp, acc);
  return load(t, tmp);
}

bool same(const Type& t, ncclRedOp_t op, int nranks, double got, double want) {
  // Exact, except a float average over a rank count that is not a power of two (NCCL may scale
  // each input by 1/nranks before summing).
  if (op == ncclAvg && !is_integer(t) && (nranks & (nranks - 1)) != 0)
    return std::fabs(got - want) <= 0.02 * std::fabs(want) + 0.02;
  return got == want;
}

// ---- One rank --------------------------------------------------------------------------------
struct Rank {
  int rank = 0, nranks = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

struct DevBuf {
  void* p = nullptr;
  size_t bytes = 0;
  explicit DevBuf(size_t n) : bytes(n) { CUDA_OK(cudaMalloc(&p, n ? n : 1)); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

// Fills a device buffer with rank r's inputs (elements [first, first + n)).
void upload(const Type& t, int ti, int r, bool avg, size_t first, size_t n, void* dst,
            cudaStream_t s) {
  std::vector<unsigned char> h(n * t.size);
  for (size_t i = 0; i < n; ++i) store(t, h.data() + i * t.size, input(t, ti, r, first + i, avg));
  CUDA_OK(cudaMemcpyAsync(dst, h.data(), h.size(), cudaMemcpyHostToDevice, s));
  CUDA_OK(cudaStreamSynchronize(s));
}

std::vector<unsigned char> download(const void* src, size_t bytes, cudaStream_t s) {
  std::vector<unsigned char> h(bytes);
  CUDA_OK(cudaMemcpyAsync(h.data(), src, bytes, cudaMemcpyDeviceToHost, s));
  CUDA_OK(cudaStreamSynchronize(s));
  return h;
}

// Compares n elements against want(i); reports the first few mismatches.
template <class Want>
void check(const Rank& rk, const Type& t, ncclRedOp_t op, const char* what,
           const std::vector<unsigned char>& got, size_t n, Want want) {
  int shown = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const double g = load(t, got.data() + i * t.size), w = want(i);
    if (!same(t, op, rk.nranks, g, w)) {
      if (shown++ < 3)
        std::printf("rank %d: FAIL %s %s [%zu]: got %g, expected %g\n", rk.rank, what, t.name, i, g,
                    w);
      ++bad;
    }
  }
  if (bad) {
    std::printf("rank %d: FAIL %s %s: %zu of %zu elements wrong\n", rk.rank, what, t.name, bad, n);
    ++g_failures;
  }
}

void run_type(const Rank& rk, const Type& t, int ti, size_t n) {
  const int R = rk.nranks, me = rk.rank;
  const size_t bytes = n * t.size;
  cudaStream_t s = rk.stream;
  char what[96];

  // All-reduce, every operator, out of place, issued together in one group.
  {
    std::vector<DevBuf*> send, recv;
    for (size_t k = 0; k < sizeof kOps / sizeof kOps[0]; ++k) {
      send.push_back(new DevBuf(bytes));
      recv.push_back(new DevBuf(bytes));
      upload(t, ti, me, kOps[k].op == ncclAvg, 0, n, send.back()->p, s);
    }
    NCCL_OK(ncclGroupStart(), rk.comm);
    for (size_t k = 0; k < send.size(); ++k)
      NCCL_OK(ncclAllReduce(send[k]->p, recv[k]->p, n, t.dt, kOps[k].op, rk.comm, s), rk.comm);
    NCCL_OK(ncclGroupEnd(), rk.comm);
    for (size_t k = 0; k < send.size(); ++k) {
      std::snprintf(what, sizeof what, "allreduce(%s)", kOps[k].name);
      check(rk, t, kOps[k].op, what, download(recv[k]->p, bytes, s), n,
            [&](size_t i) { return reduced(t, ti, kOps[k].op, R, i); });
      delete send[k];
      delete recv[k];
    }
  }
  // All-reduce in place (max), not grouped.
  {
    DevBuf buf(bytes);
    upload(t, ti, me, false, 0, n, buf.p, s);
    NCCL_OK(ncclAllReduce(buf.p, buf.p, n, t.dt, ncclMax, rk.comm, s), rk.comm);
    check(rk, t, ncclMax, "allreduce(max, in place)", download(buf.p, bytes, s), n,
          [&](size_t i) { return reduced(t, ti, ncclMax, R, i); });
  }
  // All-gather: rank r's block lands at r * n.
  {
    DevBuf send(bytes), recv(bytes * R);
    upload(t, ti, me, false, 0, n, send.p, s);
    NCCL_OK(ncclAllGather(send.p, recv.p, n, t.dt, rk.comm, s), rk.comm);
    check(rk, t, ncclSum, "allgather", download(recv.p, bytes * R, s), n * R, [&](size_t i) {
      unsigned char tmp[8];
      store(t, tmp, input(t, ti, static_cast<int>(i / n), i % n, false));
      return load(t, tmp);
    });
  }
  // Reduce-scatter (sum and min): rank me gets block me of the reduction of R * n elements.
  for (ncclRedOp_t op : {ncclSum, ncclMin}) {
    DevBuf send(bytes * R), recv(bytes);
    upload(t, ti, me, false, 0, n * R, send.p, s);
    NCCL_OK(ncclReduceScatter(send.p, recv.p, n, t.dt, op, rk.comm, s), rk.comm);
    std::snprintf(what, sizeof what, "reducescatter(%s)", op == ncclSum ? "sum" : "min");
    check(rk, t, op, what, download(recv.p, bytes, s), n,
          [&](size_t i) { return reduced(t, ti, op, R, me * n + i); });
  }
  // Broadcast (out of place) and ncclBcast (in place) from roots that vary with the type.
  {
    const int root = ti % R;
    DevBuf send(bytes), recv(bytes);
    upload(t, ti, me, false, 0, n, send.p, s);
    NCCL_OK(ncclBroadcast(send.p, recv.p, n, t.dt, root, rk.comm, s), rk.comm);
    auto from_root = [&](int rt) {
      return [&, rt](size_t i) {
        unsigned char tmp[8];
        store(t, tmp, input(t, ti, rt, i, false));
        return load(t, tmp);
      };
    };
    check(rk, t, ncclSum, "broadcast", download(recv.p, bytes, s), n, from_root(root));
    const int root2 = (ti + 2) % R;
    NCCL_OK(ncclBcast(send.p, n, t.dt, root2, rk.comm, s), rk.comm);
    check(rk, t, ncclSum, "bcast (in place)", download(send.p, bytes, s), n, from_root(root2));
  }
  // Reduce (prod) to one root.
  {
    const int root = (ti + 1) % R;
    DevBuf send(bytes), recv(bytes);
    upload(t, ti, me, false, 0, n, send.p, s);
    NCCL_OK(ncclReduce(send.p, recv.p, n, t.dt, ncclProd, root, rk.comm, s), rk.comm);
    if (me == root)
      check(rk, t, ncclProd, "reduce(prod)", download(recv.p, bytes, s), n,
            [&](size_t i) { return reduced(t, ti, ncclProd, R, i); });
    else
      CUDA_OK(cudaStreamSynchronize(s));
  }
  // A send/recv ring in one group: every rank sends to the next, receives from the previous.
  {
    DevBuf send(bytes), recv(bytes);
    upload(t, ti, me, false, 0, n, send.p, s);
    const int next = (me + 1) % R, prev = (me + R - 1) % R;
    NCCL_OK(ncclGroupStart(), rk.comm);
    NCCL_OK(ncclSend(send.p, n, t.dt, next, rk.comm, s), rk.comm);
    NCCL_OK(ncclRecv(recv.p, n, t.dt, prev, rk.comm, s), rk.comm);
    NCCL_OK(ncclGroupEnd(), rk.comm);
    check(rk, t, ncclSum, "send/recv ring", download(recv.p, bytes, s), n, [&](size_t i) {
      unsigned char tmp[8];
      store(t, tmp, input(t, ti, prev, i, false));
      return load(t, tmp);
    });
  }
}

void run_collectives(const Rank& rk) {
  int dev = 0, major = 0;
  CUDA_OK(cudaGetDevice(&dev));
  CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  int tested = 0;
  for (size_t ti = 0; ti < sizeof kTypes / sizeof kTypes[0]; ++ti) {
    const Type& t = kTypes[ti];
    if (is_fp8(t) && major < 9) {
      if (rk.rank == 0)
        std::printf(
            "rank 0: %s skipped: NCCL's FP8 types need compute capability 9.0 (device "
            "reports %d.x)\n",
            t.name, major);
      continue;
    }
    run_type(rk, t, static_cast<int>(ti), 1021);
    ++tested;
  }
  // Larger than one staging chunk of any implementation's pipeline.
  run_type(rk, kTypes[7], 7, (3u << 20) / 4 + 5);  // float32, 3 MiB
  run_type(rk, kTypes[0], 0, (1u << 20) + 3);      // int8, 1 MiB
  std::printf("rank %d: %d data types checked\n", rk.rank, tested);
}

// Waits for the work queued on the stream, watching the communicator: returns the library's
// asynchronous error (ncclSuccess once the stream is done without one), or ncclInProgress when
// `deadline` passes first.
ncclResult_t watch(const Rank& rk, Clock::time_point deadline) {
  for (;;) {
    ncclResult_t async = ncclSuccess;
    NCCL_OK(ncclCommGetAsyncError(rk.comm, &async), rk.comm);
    if (async != ncclSuccess && async != ncclInProgress) return async;
    const cudaError_t q = cudaStreamQuery(rk.stream);
    if (q == cudaSuccess) {
      NCCL_OK(ncclCommGetAsyncError(rk.comm, &async), rk.comm);
      return async;
    }
    if (q != cudaErrorNotReady) {
      std::fprintf(stderr, "rank %d: cudaStreamQuery: %s\n", rk.rank, cudaGetErrorString(q));
      return ncclUnhandledCudaError;
    }
    if (Clock::now() > deadline) return ncclInProgress;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

const char* result_name(ncclResult_t r) {
  switch (r) {
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    default:
      return ncclGetErrorString(r);
  }
}

// kill / stop: the last rank disappears after one successful all-reduce.
int run_failure(Rank& rk, bool stop, int watchdog_s) {
  const size_t n = 4096;
  DevBuf send(n * 4), recv(n * 4);
  upload(kTypes[7], 7, rk.rank, false, 0, n, send.p, rk.stream);
  NCCL_OK(ncclAllReduce(send.p, recv.p, n, ncclFloat32, ncclSum, rk.comm, rk.stream), rk.comm);
  if (watch(rk, Clock::now() + std::chrono::seconds(watchdog_s)) != ncclSuccess) {
    std::printf("rank %d: FAIL the first all-reduce did not complete\n", rk.rank);
    return 1;
  }
  check(rk, kTypes[7], ncclSum, "allreduce before the failure", download(recv.p, n * 4, rk.stream),
        n, [&](size_t i) { return reduced(kTypes[7], 7, ncclSum, rk.nranks, i); });
  if (rk.rank == rk.nranks - 1) {
    std::printf("rank %d: %s\n", rk.rank, stop ? "stopping (SIGSTOP)" : "dying (SIGKILL)");
    std::fflush(stdout);
    raise(stop ? SIGSTOP : SIGKILL);
    return 1;  // not reached unless continued
  }
  NCCL_OK(ncclAllReduce(send.p, recv.p, n, ncclFloat32, ncclSum, rk.comm, rk.stream), rk.comm);
  const auto start = Clock::now();
  const ncclResult_t r = watch(rk, start + std::chrono::seconds(watchdog_s));
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  int rc = 0;
  if (r == ncclSuccess) {
    std::printf("rank %d: FAIL the all-reduce completed without rank %d\n", rk.rank, rk.nranks - 1);
    rc = 1;
  } else if (r == ncclInProgress) {
    std::printf("rank %d: FAIL no error from the library within %d s: watchdog aborts\n", rk.rank,
                watchdog_s);
    rc = 1;
  } else {
    std::printf("rank %d: library reported %s after %.0f ms: %s\n", rk.rank, result_name(r), ms,
                ncclGetLastError(rk.comm));
  }
  NCCL_OK(ncclCommAbort(rk.comm), nullptr);
  rk.comm = nullptr;
  CUDA_OK(cudaStreamSynchronize(rk.stream));
  return rc + (g_failures ? 1 : 0);
}

int rank_main(int rank, int nranks, int id_fd, int ready_fd, const std::string& mode,
              int watchdog_s) {
  g_rank = rank;
  // Everything slow to start (the runtime, the library) before the rendezvous, so that the ranks
  // reach ncclCommInitRank together.
  CUDA_OK(cudaSetDevice(rank));
  Rank rk;
  rk.rank = rank;
  rk.nranks = nranks;
  CUDA_OK(cudaStreamCreateWithFlags(&rk.stream, cudaStreamNonBlocking));
  int version = 0;
  NCCL_OK(ncclGetVersion(&version), nullptr);
  const char ready = 'r';
  if (write(ready_fd, &ready, 1) != 1) {
    std::fprintf(stderr, "rank %d: FAIL telling the launcher it is ready\n", rank);
    return 1;
  }
  close(ready_fd);

  ncclUniqueId id;
  size_t got = 0;
  while (got < sizeof id) {
    ssize_t k = read(id_fd, reinterpret_cast<char*>(&id) + got, sizeof id - got);
    if (k <= 0) {
      std::fprintf(stderr, "rank %d: FAIL reading the unique id from fd %d\n", rank, id_fd);
      return 1;
    }
    got += static_cast<size_t>(k);
  }
  close(id_fd);

  NCCL_OK(ncclCommInitRank(&rk.comm, nranks, id, rank), nullptr);

  int count = 0, user_rank = -1, device = -1;
  NCCL_OK(ncclCommCount(rk.comm, &count), rk.comm);
  NCCL_OK(ncclCommUserRank(rk.comm, &user_rank), rk.comm);
  NCCL_OK(ncclCommCuDevice(rk.comm, &device), rk.comm);
  if (count != nranks || user_rank != rank || device != rank) {
    std::printf("rank %d: FAIL communicator reports count %d, rank %d, device %d\n", rank, count,
                user_rank, device);
    ++g_failures;
  }

  int rc = 0;
  if (mode == "collectives") {
    run_collectives(rk);
    CUDA_OK(cudaStreamSynchronize(rk.stream));
    NCCL_OK(ncclCommDestroy(rk.comm), nullptr);
    rc = g_failures ? 1 : 0;
  } else {
    rc = run_failure(rk, mode == "stop", watchdog_s);
  }
  CUDA_OK(cudaStreamDestroy(rk.stream));
  if (rc == 0) std::printf("rank %d: passed\n", rank);
  return rc;
}

// ---- The launcher ----------------------------------------------------------------------------
int launch(const char* self, int nranks, const std::string& mode, int timeout_s) {
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices < nranks) {
    std::printf("nccl_ranks: FAIL %d ranks need %d devices; %d found (%s)\n", nranks, nranks,
                devices, cudaGetErrorString(e));
    return 1;
  }
  int version = 0;
  NCCL_OK(ncclGetVersion(&version), nullptr);
  std::printf("nccl_ranks: NCCL %d, %d ranks, mode %s\n", version, nranks, mode.c_str());
  ncclUniqueId id;
  NCCL_OK(ncclGetUniqueId(&id), nullptr);
  std::fflush(stdout);

  // Each rank gets the id through its own pipe once every rank has said it is ready (one shared
  // pipe): the launcher's rendezvous. Only the ends a child needs survive its exec.
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    std::perror("pipe2");
    return 1;
  }
  std::vector<pid_t> pids;
  std::vector<int> id_fds;
  for (int r = 0; r < nranks; ++r) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
      std::perror("pipe2");
      return 1;
    }
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      fcntl(p[0], F_SETFD, 0);
      fcntl(ready[1], F_SETFD, 0);
      const std::string rs = std::to_string(r), ns = std::to_string(nranks),
                        fs = std::to_string(p[0]), ws = std::to_string(ready[1]),
                        ts = std::to_string(timeout_s);
      execl(self, self, "--child", rs.c_str(), ns.c_str(), fs.c_str(), ws.c_str(), mode.c_str(),
            ts.c_str(), static_cast<char*>(nullptr));
      std::perror("exec");
      _exit(127);
    }
    close(p[0]);
    id_fds.push_back(p[1]);
    pids.push_back(pid);
  }
  close(ready[1]);
  int ready_count = 0;
  const auto ready_deadline = Clock::now() + std::chrono::seconds(timeout_s);
  while (ready_count < nranks) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(ready_deadline - Clock::now());
    pollfd pfd{ready[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&pfd, 1, static_cast<int>(left.count())) <= 0) break;
    char c[64];
    const ssize_t k = read(ready[0], c, sizeof c);
    if (k <= 0) break;  // every child closed its end: one died before it was ready
    ready_count += static_cast<int>(k);
  }
  close(ready[0]);
  if (ready_count < nranks)
    std::printf("nccl_ranks: FAIL only %d of %d ranks got ready\n", ready_count, nranks);
  for (int fd : id_fds) {
    const char* b = reinterpret_cast<const char*>(&id);
    size_t off = 0;
    while (ready_count == nranks && off < sizeof id) {
      ssize_t k = write(fd, b + off, sizeof id - off);
      if (k <= 0) break;
      off += static_cast<size_t>(k);
    }
    close(fd);  // without an id, a rank fails at once
  }

  // kill / stop: the last rank's fate is known; the others must report and exit.
  const bool failure_mode = mode != "collectives";
  const size_t watched = failure_mode ? pids.size() - 1 : pids.size();
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_s + 30);
  std::vector<int> status(pids.size(), -1);
  size_t done = 0;
  int failed = 0;
  while (done < watched) {
    int st = 0;
    const pid_t w = waitpid(-1, &st, WNOHANG | WUNTRACED);
    if (w > 0) {
      for (size_t r = 0; r < pids.size(); ++r) {
        if (pids[r] != w) continue;
        if (WIFSTOPPED(st)) break;  // the stopped rank of mode stop
        status[r] = st;
        if (r < watched) ++done;
        if (r < watched && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
          std::printf("nccl_ranks: rank %zu failed (%s %d)\n", r, WIFEXITED(st) ? "exit" : "signal",
                      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
          ++failed;
        }
      }
      continue;
    }
    if (Clock::now() > deadline) {
      std::printf("nccl_ranks: FAIL ranks still running after %d s: killed\n", timeout_s + 30);
      ++failed;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (size_t r = 0; r < pids.size(); ++r) {
    if (status[r] != -1) continue;
    kill(pids[r], SIGKILL);  // a stopped rank, or ranks past the deadline
    waitpid(pids[r], &status[r], 0);
  }
  const int last = status.back();
  if (failure_mode && !(WIFSIGNALED(last) && WTERMSIG(last) == SIGKILL)) {
    std::printf("nccl_ranks: FAIL the failing rank ended otherwise (status 0x%x)\n", last);
    ++failed;
  }
  if (failed) {
    std::printf("nccl_ranks: %d rank(s) FAILED\n", failed);
    return 1;
  }
  std::printf("nccl_ranks: all checks passed\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc == 8 && std::strcmp(argv[1], "--child") == 0)
    return rank_main(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                     argv[6], std::atoi(argv[7]));
  int nranks = 4, timeout_s = 60;
  std::string mode = "collectives";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--ranks") == 0)
      nranks = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--mode") == 0)
      mode = argv[i + 1];
    else if (std::strcmp(argv[i], "--timeout") == 0)
      timeout_s = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--ranks N] [--mode collectives|kill|stop] [--timeout S]\n",
                   argv[0]);
      return 2;
    }
  }
  if (nranks < 2 || nranks > 64 || timeout_s < 1 ||
      (mode != "collectives" && mode != "kill" && mode != "stop")) {
    std::fprintf(stderr, "nccl_ranks: bad arguments\n");
    return 2;
  }
  char self[4096];
  const ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  if (k <= 0) {
    std::perror("readlink /proc/self/exe");
    return 1;
  }
  self[k] = '\0';
  return launch(self, nranks, mode, timeout_s);
}
