// Internal state of the simulated MCCL: options, errors, communicators, operations, waiting.
//
// Threads: API calls run on user threads; collectives and p2p run on the stream's worker thread
// (musaLaunchHostFunc), one communicator's operations serialised by CommState::exec_mu.
// Locks (outer to inner): group state (thread-local, no lock) -> handle registry mutex ->
// CommState::exec_mu / ctl_mu -> CommState::obj_mu / err_mu / init_mu / fl_mu. The segment
// registry mutex is a leaf.
#ifndef TORCHADA_SIM_CCL_INTERNAL_H
#define TORCHADA_SIM_CCL_INTERNAL_H

#include <mccl.h>
#include <musa_runtime_api.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "shm.h"

namespace mccl_sim {

using Clock = std::chrono::steady_clock;

// ---- Errors -------------------------------------------------------------------------------------
// Records a message as this thread's last error (mcclGetLastError) and returns `r`.
mcclResult_t fail(mcclResult_t r, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
const char* thread_last_error();
void debug_log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#define MCCL_TRY(expr)                          \
  do {                                          \
    mcclResult_t mccl_r_ = (expr);              \
    if (mccl_r_ != mcclSuccess) return mccl_r_; \
  } while (0)

// ---- Options (environment, read when a communicator is created) --------------------------------
struct Options {
  long timeout_ms = 300000;         // MCCL_SIM_TIMEOUT_MS; 0: wait forever
  size_t stage_bytes = 256u << 10;  // MCCL_SIM_CHUNK_BYTES
  size_t ring_bytes = 256u << 10;   // MCCL_SIM_P2P_BYTES
};
Options read_options();

// ---- Data types and reductions ------------------------------------------------------------------
// Enum parameters arrive from C callers as any int: read their bits without an enum load (which
// would be undefined for values outside the enumeration), then validate.
template <class E>
int raw(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "enum parameters are int-sized");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

size_t dtype_size(int t);  // 0 for an invalid type
const char* dtype_name(int t);

enum class Red : uint32_t { Sum = 0, Prod = 1, Max = 2, Min = 3, Avg = 4, PreMulSum = 5 };

struct RedSpec {
  Red kind = Red::Sum;
  bool scalar_on_device = false;  // PreMulSum: read *scalar_ptr when the collective runs
  const void* scalar_ptr = nullptr;
  unsigned char scalar[8] = {};  // PreMulSum: the scalar, an element of the data type
};

// ---- Operations ---------------------------------------------------------------------------------
enum class CollKind : uint32_t {
  AllReduce = 1,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  AlltoAll,
  Gather,
  Scatter,
};
const char* coll_name(CollKind k);

struct CollOp {
  CollKind kind = CollKind::AllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  // per-rank element count as NCCL defines it for this collective
  mcclDataType_t dtype = mcclFloat32;
  RedSpec red;
  int root = 0;
};

struct P2POp {
  bool is_send = true;
  void* buf = nullptr;
  size_t bytes = 0;
  int peer = 0;
};

struct Op {
  bool is_p2p = false;
  CollOp coll;
  P2POp p2p;
  musaStream_t stream = nullptr;
};

// ---- Communicators ------------------------------------------------------------------------------
struct PreMulOp {
  bool live = false;
  mcclDataType_t dtype = mcclFloat32;
  RedSpec spec;
};

struct CommState {
  // Identity (immutable after creation).
  std::shared_ptr<Segment> seg;
  std::string seg_name;
  uint64_t nonce = 0;
  int creator_pid = 0;
  int rank = 0;
  int nranks = 0;
  int device = 0;
  int blocking = 1;
  std::string comm_name;
  Options opt;

  // Initialisation (non-blocking communicators finish it on init_thread).
  enum InitState { kInitPending = 0, kInitReady = 1, kInitFailed = 2 };
  std::atomic<int> init{kInitPending};
  std::mutex init_mu;
  std::condition_variable init_cv;
  std::thread init_thread;
  void set_init(int s);
  bool wait_init();  // true once ready

  std::atomic<bool> aborted{false};

  // First asynchronous error (sticky) and its message.
  std::atomic<int> async{mcclSuccess};
  std::mutex err_mu;
  std::string err_msg;
  std::atomic<bool> has_err_msg{false};
  // Records the error, marks this rank failed in the segment so peers stop waiting for it.
  mcclResult_t set_failed(mcclResult_t r, const std::string& msg);

  // Data path, under exec_mu (stream threads).
  std::mutex exec_mu;
  uint64_t step = 0;                         // steps published so far (one or two per chunk)
  uint64_t chunk = 0;                        // chunks run so far: chunk & 1 picks the stage buffer
  uint64_t op_seq = 0;                       // collectives run so far
  std::vector<uint64_t> send_seq, recv_seq;  // p2p messages per peer

  // Control path (mcclCommSplit), under ctl_mu (user threads).
  std::mutex ctl_mu;
  uint64_t ctl = 0;
  uint64_t split_seq = 0;

  // Registrations and custom reduction operators.
  std::mutex obj_mu;
  std::map<void*, std::pair<void*, size_t>> regs;  // handle -> (buffer, size)
  std::vector<PreMulOp> premul;                    // index op - mcclNumOps

  // Call order across streams (user threads, under order_mu). NCCL chains every operation of a
  // communicator after the previous one, whatever their streams, so ranks that issue the same
  // calls run them in the same order (FSDP's all-gathers and reduce-scatters use two streams). A
  // task on another stream than the previous task's waits for what that stream has queued.
  std::mutex order_mu;
  musaStream_t order_stream = nullptr;  // the previous task's stream
  bool order_known = false;

  // Tasks enqueued on streams and not finished yet.
  std::mutex fl_mu;
  std::condition_variable fl_cv;
  int inflight = 0;
  void task_begin();
  void task_end();
  void wait_tasks();

  ~CommState();
};

// Live handles. lookup() returns null for NULL, destroyed or foreign pointers.
std::shared_ptr<CommState> lookup(mcclComm_t comm);
mcclComm_t register_handle(std::shared_ptr<CommState> st);
std::shared_ptr<CommState> unregister_handle(mcclComm_t comm);

// ---- Waiting ------------------------------------------------------------------------------------
// One wait for progress: spins, then yields, then sleeps on the segment's futex, checking the
// local abort flag, the state and liveness of the rank waited on, and the timeout.
class Waiter {
 public:
  Waiter(CommState& c, const char* what);
  // Read before checking the condition; pass to idle() if the condition did not hold.
  uint32_t seen() const { return c_.seg->hdr()->wake.load(std::memory_order_seq_cst); }
  // Call when nothing could progress. `peer`: the rank waited on (-1: unknown).
  mcclResult_t idle(int peer, uint32_t seen);
  void reset();  // progress was made: restart the clock

 private:
  mcclResult_t check(int peer);
  CommState& c_;
  const char* what_;
  Clock::time_point start_;
  Clock::time_point last_live_check_;
  unsigned iters_ = 0;
  unsigned spin_;
};

// ---- Running operations (stream threads) --------------------------------------------------------
mcclResult_t run_collective(CommState& c, const CollOp& op);
mcclResult_t run_p2p(CommState& c, const std::vector<const P2POp*>& ops);

// ---- Groups (group.cc) --------------------------------------------------------------------------
bool in_group();
// Queues (or, outside a group, issues at once) one operation on `op.stream`.
mcclResult_t enqueue(const std::shared_ptr<CommState>& c, const Op& op);
// A job that needs every rank of this thread's group: phases run at mcclGroupEnd in lock step
// (phase 0 of every job, then phase 1...) so one thread can drive several ranks. Outside a group
// the phases run at once. A job whose phase fails is not run further; `cleanup(ok)` always runs.
struct GroupJob {
  int phases = 0;
  std::function<mcclResult_t(int)> run;
  std::function<void(bool)> cleanup;
};
mcclResult_t add_job(GroupJob job);
// Called by every API entry point that fails inside a group: mcclGroupEnd reports it.
mcclResult_t group_error(mcclResult_t r);
// A non-blocking communicator was created in this group: mcclGroupEnd returns mcclInProgress.
void group_in_progress();

// ---- Communicator creation (comm.cc) ------------------------------------------------------------
mcclResult_t join(CommState& c);         // claims this rank's slot (no waiting)
mcclResult_t wait_joined(CommState& c);  // waits until every rank has joined

// Runs an API body: exceptions become error codes (none crosses the C ABI).
template <class F>
mcclResult_t api(F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(mcclSystemError, "out of memory");
  } catch (...) {
    return fail(mcclInternalError, "unexpected internal exception");
  }
}

// A communicator handle usable for new operations (live, initialised or initialising, no error).
mcclResult_t usable(mcclComm_t comm, std::shared_ptr<CommState>* out);
// Resolves a reduction operator of `comm` for `dtype`.
mcclResult_t resolve_red(CommState& c, int op, mcclDataType_t dtype, RedSpec* out);

}  // namespace mccl_sim

struct mcclComm {
  std::shared_ptr<mccl_sim::CommState> st;
};

#endif  // TORCHADA_SIM_CCL_INTERNAL_H
