// Communicators: unique ids, creation and rendezvous, split, destroy/abort, queries, errors,
// buffer registration, PreMulSum operators, memory.
#include <errno.h>
#include <sched.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "internal.h"

namespace mccl_sim {

// ---- Errors and logging -------------------------------------------------------------------------
namespace {
thread_local std::string t_last_error;

std::string vformat(const char* fmt, va_list ap) {
  char buf[512];
  va_list ap2;
  va_copy(ap2, ap);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap2);
  va_end(ap2);
  if (n < 0) return std::string("(unformattable message)");
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string s(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(&s[0], s.size(), fmt, ap);
  s.resize(static_cast<size_t>(n));
  return s;
}

bool debug_enabled() {
  const char* v = std::getenv("MCCL_SIM_DEBUG");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}
}  // namespace

std::string format(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

mcclResult_t fail(mcclResult_t r, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  try {
    t_last_error = vformat(fmt, ap);
    debug_log("%s (%s)", t_last_error.c_str(), mcclGetErrorString(r));
  } catch (...) {  // out of memory: keep the code, lose the message
  }
  va_end(ap);
  return r;
}

const char* thread_last_error() { return t_last_error.c_str(); }

void debug_log(const char* fmt, ...) {
  if (!debug_enabled()) return;
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[mccl-sim %d] %s\n", static_cast<int>(getpid()), s.c_str());
}

// ---- Options ------------------------------------------------------------------------------------
namespace {
long env_long(const char* name, long def, long lo, long hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return def;
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || errno != 0 || x < lo || x > hi) {
    std::fprintf(stderr, "[mccl-sim] ignoring %s=%s (expected %ld..%ld); using %ld\n", name, v, lo,
                 hi, def);
    return def;
  }
  return x;
}
}  // namespace

Options read_options() {
  Options o;
  o.timeout_ms = env_long("MCCL_SIM_TIMEOUT_MS", o.timeout_ms, 0, 365L * 24 * 3600 * 1000);
  o.stage_bytes = static_cast<size_t>(
      env_long("MCCL_SIM_CHUNK_BYTES", static_cast<long>(o.stage_bytes), 4096, 256L << 20));
  o.ring_bytes = static_cast<size_t>(
      env_long("MCCL_SIM_P2P_BYTES", static_cast<long>(o.ring_bytes), 4096, 256L << 20));
  return o;
}

// ---- Types --------------------------------------------------------------------------------------
size_t dtype_size(int t) {
  switch (t) {
    case mcclInt8:
    case mcclUint8:
      return 1;
    case mcclFloat16:
    case mcclBfloat16:
      return 2;
    case mcclInt32:
    case mcclUint32:
    case mcclFloat32:
      return 4;
    case mcclInt64:
    case mcclUint64:
    case mcclFloat64:
      return 8;
    default:
      return 0;
  }
}

const char* dtype_name(int t) {
  static const char* const names[] = {"int8",   "uint8",   "int32",   "uint32",  "int64",
                                      "uint64", "float16", "float32", "float64", "bfloat16"};
  int i = static_cast<int>(t);
  return i >= 0 && i < 10 ? names[i] : "invalid";
}

const char* coll_name(CollKind k) {
  switch (k) {
    case CollKind::AllReduce:
      return "AllReduce";
    case CollKind::Broadcast:
      return "Broadcast";
    case CollKind::Reduce:
      return "Reduce";
    case CollKind::AllGather:
      return "AllGather";
    case CollKind::ReduceScatter:
      return "ReduceScatter";
    case CollKind::AlltoAll:
      return "AlltoAll";
    case CollKind::Gather:
      return "Gather";
    case CollKind::Scatter:
      return "Scatter";
  }
  return "?";
}

// ---- Handles ------------------------------------------------------------------------------------
namespace {
struct Handles {
  std::mutex mu;
  std::unordered_map<mcclComm*, std::shared_ptr<CommState>> map;
};
Handles& handles() {
  static Handles* h = new Handles;  // never destroyed: stream threads may run after exit handlers
  return *h;
}
}  // namespace

mcclComm_t register_handle(std::shared_ptr<CommState> st) {
  auto* h = new mcclComm{st};
  Handles& hs = handles();
  std::lock_guard<std::mutex> lock(hs.mu);
  hs.map.emplace(h, std::move(st));
  return h;
}

std::shared_ptr<CommState> lookup(mcclComm_t comm) {
  if (comm == nullptr) return nullptr;
  Handles& hs = handles();
  std::lock_guard<std::mutex> lock(hs.mu);
  auto it = hs.map.find(comm);
  return it == hs.map.end() ? nullptr : it->second;
}

std::shared_ptr<CommState> unregister_handle(mcclComm_t comm) {
  if (comm == nullptr) return nullptr;
  Handles& hs = handles();
  std::lock_guard<std::mutex> lock(hs.mu);
  auto it = hs.map.find(comm);
  if (it == hs.map.end()) return nullptr;
  std::shared_ptr<CommState> st = std::move(it->second);
  hs.map.erase(it);
  delete comm;
  return st;
}

mcclResult_t usable(mcclComm_t comm, std::shared_ptr<CommState>* out) {
  std::shared_ptr<CommState> st = lookup(comm);
  if (!st)
    return fail(mcclInvalidArgument, "invalid communicator %p (NULL, destroyed or not a comm)",
                static_cast<void*>(comm));
  const int e = st->async.load();
  if (e != mcclSuccess)
    return fail(static_cast<mcclResult_t>(e), "communicator (rank %d) is in error: %s", st->rank,
                st->has_err_msg.load() ? st->err_msg.c_str() : "");
  if (st->init.load() == CommState::kInitFailed)
    return fail(mcclInvalidUsage, "communicator (rank %d) failed to initialise", st->rank);
  *out = std::move(st);
  return mcclSuccess;
}

// ---- CommState ----------------------------------------------------------------------------------
void CommState::set_init(int s) {
  {
    std::lock_guard<std::mutex> lock(init_mu);
    init.store(s);
  }
  init_cv.notify_all();
}

bool CommState::wait_init() {
  if (init.load() == kInitReady) return true;
  std::unique_lock<std::mutex> lock(init_mu);
  init_cv.wait(lock, [&] { return init.load() != kInitPending || aborted.load(); });
  return init.load() == kInitReady;
}

mcclResult_t CommState::set_failed(mcclResult_t r, const std::string& msg) {
  int expected = mcclSuccess;
  if (async.compare_exchange_strong(expected, r)) {
    std::lock_guard<std::mutex> lock(err_mu);
    err_msg = format("rank %d of %d%s%s: %s", rank, nranks, comm_name.empty() ? "" : " in ",
                     comm_name.c_str(), msg.c_str());
    has_err_msg.store(true);
    debug_log("%s", err_msg.c_str());
  }
  if (seg) {
    std::atomic<uint32_t>& st = seg->slot(rank)->state;
    uint32_t cur = st.load();
    while ((cur == kSlotJoined || cur == kSlotClaiming || cur == kSlotEmpty) &&
           !st.compare_exchange_weak(cur, kSlotFailed)) {
    }
    seg->notify();
  }
  return r;
}

void CommState::task_begin() {
  std::lock_guard<std::mutex> lock(fl_mu);
  ++inflight;
}

void CommState::task_end() {
  {
    std::lock_guard<std::mutex> lock(fl_mu);
    --inflight;
  }
  fl_cv.notify_all();
}

void CommState::wait_tasks() {
  std::unique_lock<std::mutex> lock(fl_mu);
  fl_cv.wait(lock, [&] { return inflight == 0; });
}

CommState::~CommState() {
  if (init_thread.joinable()) init_thread.join();
}

// ---- Waiting ------------------------------------------------------------------------------------
namespace {
// About 1 us of pauses (~30 ns each here), then yields: a longer spin held the CPU for ~16 us per
// step whenever the peer's stream thread was queued on the same CPU (another rank's caller, other
// load), which took an 8-byte all-reduce (two steps) between 2 ranks from ~10 us to ~50 us.
constexpr unsigned kSpinIters = 32;
constexpr unsigned kYieldIters = 256;

// CPUs this process may run on. With more ranks than that, a spinning rank holds a CPU the rank it
// waits for needs: waiters then yield at once instead of spinning.
int usable_cpus() {
  static std::atomic<int> cached{0};
  int n = cached.load(std::memory_order_relaxed);
  if (n == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (n <= 0) n = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    cached.store(n, std::memory_order_relaxed);
  }
  return n;
}
constexpr long kSleepUs = 10000;
constexpr auto kLivenessPeriod = std::chrono::milliseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

Waiter::Waiter(CommState& c, const char* what)
    : c_(c),
      what_(what),
      start_(Clock::now()),
      last_live_check_(start_),
      spin_(c.nranks > usable_cpus() ? 0 : kSpinIters) {}

void Waiter::reset() {
  start_ = Clock::now();
  iters_ = 0;
}

mcclResult_t Waiter::idle(int peer, uint32_t seen) {
  ++iters_;
  if (iters_ <= spin_) {
    cpu_relax();
    return mcclSuccess;
  }
  if (iters_ <= spin_ + kYieldIters) {
    if (iters_ % 32 == 0) MCCL_TRY(check(peer));
    std::this_thread::yield();
    return mcclSuccess;
  }
  MCCL_TRY(check(peer));
  c_.seg->sleep(seen, kSleepUs);
  return mcclSuccess;
}

mcclResult_t Waiter::check(int peer) {
  if (c_.aborted.load())
    return fail(mcclInvalidUsage, "%s interrupted: the communicator was aborted", what_);
  const Clock::time_point now = Clock::now();
  if (peer >= 0 && peer < c_.nranks) {
    const RankSlot* s = c_.seg->slot(peer);
    const uint32_t st = s->state.load(std::memory_order_acquire);
    if (st == kSlotFailed)
      return fail(mcclRemoteError, "rank %d failed while rank %d waits for it in %s", peer, c_.rank,
                  what_);
    if (st == kSlotAborted)
      return fail(mcclRemoteError,
                  "rank %d aborted its communicator while rank %d waits for it in %s", peer,
                  c_.rank, what_);
    if (st == kSlotDestroyed)
      return fail(mcclRemoteError,
                  "rank %d destroyed its communicator while rank %d waits for it in %s", peer,
                  c_.rank, what_);
    // A peer in another pid namespace (another container sharing /dev/shm) cannot be looked up:
    // only the timeout applies to it.
    if (st == kSlotJoined && now - last_live_check_ >= kLivenessPeriod) {
      last_live_check_ = now;
      if (s->pid != static_cast<int32_t>(getpid()) && s->pid_ns == c_.seg->slot(c_.rank)->pid_ns &&
          !process_alive(s->pid, s->start_time))
        return fail(mcclRemoteError, "rank %d (pid %d) exited while rank %d waits for it in %s",
                    peer, s->pid, c_.rank, what_);
    }
  }
  if (c_.opt.timeout_ms > 0 && now - start_ > std::chrono::milliseconds(c_.opt.timeout_ms))
    return fail(mcclRemoteError,
                "timed out after %ld ms waiting for rank %d in %s (MCCL_SIM_TIMEOUT_MS)",
                c_.opt.timeout_ms, peer, what_);
  return mcclSuccess;
}

// ---- Unique ids ---------------------------------------------------------------------------------
namespace {
constexpr char kIdMagic[8] = {'M', 'C', 'C', 'L', 'S', 'I', 'D', '1'};
constexpr const char* kNamePrefix = "/mccl-sim-";

struct IdBlob {
  char magic[8];
  uint32_t version;
  int32_t creator_pid;
  uint64_t nonce;
  char name[96];
};
static_assert(sizeof(IdBlob) <= sizeof(mcclUniqueId), "the id must fit in 128 bytes");

uint64_t random64() {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, 0) == static_cast<ssize_t>(sizeof v)) return v;
  static std::atomic<uint64_t> counter{0};
  v = static_cast<uint64_t>(Clock::now().time_since_epoch().count()) ^
      (static_cast<uint64_t>(getpid()) << 32) ^ (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
  return v;
}

uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

std::string segment_name(int pid, uint64_t nonce) {
  return format("%s%d-%016" PRIx64, kNamePrefix, pid, nonce);
}

void make_id(mcclUniqueId* id, int pid, uint64_t nonce) {
  IdBlob b{};
  std::memcpy(b.magic, kIdMagic, sizeof b.magic);
  b.version = kSegVersion;
  b.creator_pid = pid;
  b.nonce = nonce;
  std::string name = segment_name(pid, nonce);
  std::snprintf(b.name, sizeof b.name, "%s", name.c_str());
  std::memset(id, 0, sizeof *id);
  std::memcpy(id->internal, &b, sizeof b);
}

mcclResult_t parse_id(const mcclUniqueId& id, IdBlob* out) {
  std::memcpy(out, id.internal, sizeof *out);
  if (std::memcmp(out->magic, kIdMagic, sizeof out->magic) != 0 || out->version != kSegVersion ||
      std::memchr(out->name, '\0', sizeof out->name) == nullptr ||
      std::strncmp(out->name, kNamePrefix, std::strlen(kNamePrefix)) != 0 ||
      std::strchr(out->name + 1, '/') != nullptr)
    return fail(mcclInvalidArgument, "the unique id was not made by mcclGetUniqueId");
  return mcclSuccess;
}

// Segment sizes for n ranks, bounded so that a large communicator stays within 64 MiB each for
// the stage buffers and the p2p rings.
constexpr int kMaxRanks = 128;
SegParams seg_params(const Options& o, int n) {
  SegParams p;
  p.nranks = n;
  const size_t nn = static_cast<size_t>(n);
  const size_t stage_cap = std::max<size_t>(64u << 10, (64u << 20) / (2 * nn));
  const size_t ring_cap = std::max<size_t>(4096, (64u << 20) / (nn * nn));
  p.stage_bytes = std::min(o.stage_bytes, stage_cap) / 4096 * 4096;
  p.ring_bytes = std::min(o.ring_bytes, ring_cap) / 4096 * 4096;
  if (p.stage_bytes < 4096) p.stage_bytes = 4096;
  if (p.ring_bytes < 4096) p.ring_bytes = 4096;
  return p;
}

int my_pid() { return static_cast<int>(getpid()); }

uint64_t my_start_time() {
  // Cached per process (re-read after fork: the pid changes).
  static std::atomic<int> cached_pid{0};
  static std::atomic<uint64_t> cached{0};
  const int pid = my_pid();
  if (cached_pid.load() != pid) {
    cached.store(process_start_time(pid));
    cached_pid.store(pid);
  }
  return cached.load();
}

// What a caller's mcclConfig_t says (fields beyond its `size` are absent).
struct ConfigValues {
  int blocking = 1;
  std::string comm_name;
};

mcclResult_t read_config(const mcclConfig_t* cfg, ConfigValues* out) {
  if (cfg == nullptr) return mcclSuccess;
  const size_t base = offsetof(mcclConfig_t, blocking);
  if (cfg->size < base || cfg->magic != MCCL_CONFIG_MAGIC)
    return fail(mcclInvalidArgument,
                "config not initialised with MCCL_CONFIG_INITIALIZER (size %zu, magic 0x%x)",
                cfg->size, cfg->magic);
  auto has = [&](size_t off, size_t sz) { return cfg->size >= off + sz; };
  if (has(offsetof(mcclConfig_t, blocking), sizeof(int)) &&
      cfg->blocking != MCCL_CONFIG_UNDEF_INT) {
    if (cfg->blocking != 0 && cfg->blocking != 1)
      return fail(mcclInvalidArgument, "config blocking %d: must be 0 or 1", cfg->blocking);
    out->blocking = cfg->blocking;
  }
  if (has(offsetof(mcclConfig_t, splitShare), sizeof(int)) &&
      cfg->splitShare != MCCL_CONFIG_UNDEF_INT && cfg->splitShare != 0 && cfg->splitShare != 1)
    return fail(mcclInvalidArgument, "config splitShare %d: must be 0 or 1", cfg->splitShare);
  int max_ctas = MCCL_CONFIG_UNDEF_INT;
  if (has(offsetof(mcclConfig_t, maxCTAs), sizeof(int)) && cfg->maxCTAs != MCCL_CONFIG_UNDEF_INT) {
    if (cfg->maxCTAs <= 0)
      return fail(mcclInvalidArgument, "config maxCTAs %d: must be positive", cfg->maxCTAs);
    max_ctas = cfg->maxCTAs;
  }
  if (has(offsetof(mcclConfig_t, minCTAs), sizeof(int)) && cfg->minCTAs != MCCL_CONFIG_UNDEF_INT) {
    if (cfg->minCTAs <= 0 || (max_ctas != MCCL_CONFIG_UNDEF_INT && cfg->minCTAs > max_ctas))
      return fail(mcclInvalidArgument, "config minCTAs %d: must be positive and <= maxCTAs",
                  cfg->minCTAs);
  }
  if (has(offsetof(mcclConfig_t, commName), sizeof(const char*)) && cfg->commName != nullptr) {
    out->comm_name.assign(cfg->commName, strnlen(cfg->commName, 127));
  }
  if (has(offsetof(mcclConfig_t, cgaClusterSize), sizeof(int)) &&
      cfg->cgaClusterSize != MCCL_CONFIG_UNDEF_INT &&
      (cfg->cgaClusterSize < 0 || cfg->cgaClusterSize > 8))
    return fail(mcclInvalidArgument, "config cgaClusterSize %d: must be 0..8", cfg->cgaClusterSize);
  return mcclSuccess;
}

// A new communicator's state, its segment opened and its slot claimed.
mcclResult_t create_state(const std::string& name, uint64_t nonce, int creator_pid, int nranks,
                          int rank, int device, const ConfigValues& cv, const Options& opt,
                          std::shared_ptr<CommState>* out) {
  auto st = std::make_shared<CommState>();
  st->seg_name = name;
  st->nonce = nonce;
  st->creator_pid = creator_pid;
  st->rank = rank;
  st->nranks = nranks;
  st->device = device;
  st->blocking = cv.blocking;
  st->comm_name = cv.comm_name;
  st->opt = opt;
  st->send_seq.assign(static_cast<size_t>(nranks), 0);
  st->recv_seq.assign(static_cast<size_t>(nranks), 0);
  MCCL_TRY(Segment::open(name, seg_params(opt, nranks), opt.timeout_ms, &st->seg));
  MCCL_TRY(join(*st));
  *out = std::move(st);
  return mcclSuccess;
}

// After a failed rendezvous: this rank is failed, and the name must not outlive the attempt.
void fail_init(CommState& c, mcclResult_t r) {
  c.set_failed(r, thread_last_error());
  c.seg->unlink_name();
  c.set_init(CommState::kInitFailed);
}

mcclResult_t finish_init(CommState& c) {
  mcclResult_t r = wait_joined(c);
  if (r != mcclSuccess) {
    fail_init(c, r);
    return r;
  }
  c.set_init(CommState::kInitReady);
  return mcclSuccess;
}

void release_failed(mcclComm_t h) {
  if (std::shared_ptr<CommState> st = unregister_handle(h)) {
    if (st->init_thread.joinable()) st->init_thread.join();
  }
}

}  // namespace

mcclResult_t join(CommState& c) {
  Segment& s = *c.seg;
  RankSlot* slot = s.slot(c.rank);
  uint32_t expected = kSlotEmpty;
  if (!slot->state.compare_exchange_strong(expected, kSlotClaiming))
    return fail(mcclInvalidUsage, "rank %d of %s has already joined (each rank joins once)", c.rank,
                s.name().c_str());
  slot->pid = my_pid();
  slot->start_time = my_start_time();
  slot->pid_ns = pid_namespace();
  slot->device = c.device;
  slot->state.store(kSlotJoined, std::memory_order_release);
  if (s.hdr()->joined.fetch_add(1) + 1 == static_cast<uint32_t>(c.nranks)) s.unlink_name();
  s.notify();
  return mcclSuccess;
}

mcclResult_t wait_joined(CommState& c) {
  Segment& s = *c.seg;
  Waiter w(c, "communicator initialisation");
  for (;;) {
    const uint32_t seen = w.seen();
    if (s.hdr()->joined.load(std::memory_order_acquire) >= static_cast<uint32_t>(c.nranks))
      return mcclSuccess;
    int peer = -1;
    for (int j = 0; j < c.nranks && peer < 0; ++j)
      if (s.slot(j)->state.load(std::memory_order_acquire) != kSlotJoined) peer = j;
    MCCL_TRY(w.idle(peer, seen));
  }
}

mcclResult_t resolve_red(CommState& c, int op, mcclDataType_t dtype, RedSpec* out) {
  const int v = op;
  if (v >= 0 && v < mcclNumOps) {
    *out = RedSpec{};
    out->kind = static_cast<Red>(v);
    return mcclSuccess;
  }
  std::lock_guard<std::mutex> lock(c.obj_mu);
  const size_t idx = static_cast<size_t>(v) - mcclNumOps;
  if (v < mcclNumOps || idx >= c.premul.size() || !c.premul[idx].live)
    return fail(mcclInvalidArgument, "invalid reduction operator %d for this communicator", v);
  if (c.premul[idx].dtype != dtype)
    return fail(mcclInvalidArgument, "reduction operator %d was created for %s, used with %s", v,
                dtype_name(c.premul[idx].dtype), dtype_name(dtype));
  *out = c.premul[idx].spec;
  return mcclSuccess;
}

namespace {

mcclResult_t init_rank(mcclComm_t* comm, int nranks, const mcclUniqueId* id, int rank,
                       const mcclConfig_t* config) {
  if (comm == nullptr) return fail(mcclInvalidArgument, "comm is NULL");
  *comm = nullptr;
  if (nranks < 1 || nranks > kMaxRanks)
    return fail(mcclInvalidArgument, "nranks %d: must be 1..%d", nranks, kMaxRanks);
  if (rank < 0 || rank >= nranks)
    return fail(mcclInvalidArgument, "rank %d: must be 0..%d", rank, nranks - 1);
  IdBlob blob{};
  MCCL_TRY(parse_id(*id, &blob));
  ConfigValues cv;
  MCCL_TRY(read_config(config, &cv));
  int device = 0;
  musaError_t me = musaGetDevice(&device);
  if (me != musaSuccess)
    return fail(mcclUnhandledMusaError, "musaGetDevice: %s", musaGetErrorString(me));

  std::shared_ptr<CommState> st;
  MCCL_TRY(create_state(blob.name, blob.nonce, blob.creator_pid, nranks, rank, device, cv,
                        read_options(), &st));
  mcclComm_t h = register_handle(st);
  CommState* raw = st.get();
  if (cv.blocking == 0) {
    // Non-blocking: the rendezvous completes on a thread; mcclCommGetAsyncError polls it.
    raw->init_thread = std::thread([raw] { finish_init(*raw); });
    *comm = h;
    if (in_group()) {
      group_in_progress();
      return mcclSuccess;
    }
    return mcclInProgress;
  }
  if (in_group()) {
    *comm = h;
    GroupJob job;
    job.phases = 1;
    job.run = [st](int) { return finish_init(*st); };
    job.cleanup = [st](bool ok) {
      // Not run at all (another call of the group was refused): this rank gives up.
      if (!ok && st->init.load() == CommState::kInitPending) {
        fail(mcclInvalidUsage, "the group creating this communicator failed");
        fail_init(*st, mcclInvalidUsage);
      }
    };
    return add_job(std::move(job));
  }
  mcclResult_t r = finish_init(*raw);
  if (r != mcclSuccess) {
    release_failed(h);
    return r;
  }
  *comm = h;
  return mcclSuccess;
}

// mcclCommSplit as a job: phase 0 waits for every rank's color and key and joins the new
// segment; phase 1 waits until every rank has read them; phase 2 waits for the new communicator's
// rendezvous.
struct SplitJob {
  std::shared_ptr<CommState> parent;
  int color = 0;
  int key = 0;
  uint64_t base = 0;  // control step before this split
  uint64_t seq = 0;
  ConfigValues cv;
  mcclComm_t* out = nullptr;
  std::shared_ptr<CommState> child;

  mcclResult_t wait_ctl(uint64_t target, const char* what) {
    CommState& p = *parent;
    Waiter w(p, what);
    for (;;) {
      const uint32_t seen = w.seen();
      int peer = -1;
      for (int j = 0; j < p.nranks && peer < 0; ++j)
        if (p.seg->slot(j)->ctl.load(std::memory_order_acquire) < target) peer = j;
      if (peer < 0) return mcclSuccess;
      MCCL_TRY(w.idle(peer, seen));
    }
  }

  mcclResult_t phase(int ph) {
    CommState& p = *parent;
    if (ph == 0) {
      MCCL_TRY(wait_ctl(base + 1, "mcclCommSplit"));
      struct Member {
        int key, rank;
      };
      std::vector<Member> members;
      for (int j = 0; j < p.nranks; ++j) {
        const RankSlot* s = p.seg->slot(j);
        if (s->color == color) members.push_back({s->key, j});
      }
      if (color != MCCL_SPLIT_NOCOLOR) {
        std::sort(members.begin(), members.end(), [](const Member& a, const Member& b) {
          return a.key != b.key ? a.key < b.key : a.rank < b.rank;
        });
        int newrank = 0;
        for (size_t i = 0; i < members.size(); ++i)
          if (members[i].rank == p.rank) newrank = static_cast<int>(i);
        const uint64_t nonce =
            mix64(p.nonce ^ mix64(seq * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(color)));
        MCCL_TRY(create_state(segment_name(p.creator_pid, nonce), nonce, p.creator_pid,
                              static_cast<int>(members.size()), newrank, p.device, cv, p.opt,
                              &child));
      }
      p.seg->slot(p.rank)->ctl.store(base + 2, std::memory_order_release);
      p.seg->notify();
      return mcclSuccess;
    }
    if (ph == 1) return wait_ctl(base + 2, "mcclCommSplit");
    if (child) {
      mcclResult_t r = finish_init(*child);
      if (r != mcclSuccess) return r;
    }
    return mcclSuccess;
  }

  void cleanup(bool ok) {
    if (ok && child) {
      *out = register_handle(child);
    } else {
      if (child && !ok) fail_init(*child, mcclRemoteError);
      *out = nullptr;
    }
    // A failed split leaves the parent's control steps out of step with its peers.
    if (!ok) parent->set_failed(mcclRemoteError, "mcclCommSplit failed");
  }
};

}  // namespace
}  // namespace mccl_sim

using namespace mccl_sim;

// ---- API ----------------------------------------------------------------------------------------
extern "C" {

mcclResult_t mcclGetVersion(int* version) {
  if (version == nullptr) return fail(mcclInvalidArgument, "version is NULL");
  *version = MCCL_VERSION_CODE;
  return mcclSuccess;
}

mcclResult_t mcclGetUniqueId(mcclUniqueId* uniqueId) {
  return api([&] {
    if (uniqueId == nullptr) return fail(mcclInvalidArgument, "uniqueId is NULL");
    make_id(uniqueId, my_pid(), random64());
    return mcclSuccess;
  });
}

mcclResult_t mcclCommInitRank(mcclComm_t* comm, int nranks, mcclUniqueId commId, int rank) {
  return api([&] { return group_error(init_rank(comm, nranks, &commId, rank, nullptr)); });
}

mcclResult_t mcclCommInitRankConfig(mcclComm_t* comm, int nranks, mcclUniqueId commId, int rank,
                                    mcclConfig_t* config) {
  return api([&] { return group_error(init_rank(comm, nranks, &commId, rank, config)); });
}

mcclResult_t mcclCommInitAll(mcclComm_t* comm, int ndev, const int* devlist) {
  return api([&] {
    if (comm == nullptr) return fail(mcclInvalidArgument, "comm is NULL");
    if (ndev < 1 || ndev > kMaxRanks)
      return fail(mcclInvalidArgument, "ndev %d: must be 1..%d", ndev, kMaxRanks);
    int count = 0;
    musaError_t me = musaGetDeviceCount(&count);
    if (me != musaSuccess)
      return fail(mcclUnhandledMusaError, "musaGetDeviceCount: %s", musaGetErrorString(me));
    std::vector<int> devs(static_cast<size_t>(ndev));
    for (int i = 0; i < ndev; ++i) {
      devs[i] = devlist != nullptr ? devlist[i] : i;
      if (devs[i] < 0 || devs[i] >= count)
        return fail(mcclInvalidArgument, "device %d (entry %d) does not exist (%d devices)",
                    devs[i], i, count);
      for (int j = 0; j < i; ++j)
        if (devs[j] == devs[i])
          return fail(mcclInvalidUsage, "duplicate device %d in devlist (entries %d and %d)",
                      devs[i], j, i);
    }
    for (int i = 0; i < ndev; ++i) comm[i] = nullptr;
    int saved = 0;
    me = musaGetDevice(&saved);
    if (me != musaSuccess)
      return fail(mcclUnhandledMusaError, "musaGetDevice: %s", musaGetErrorString(me));
    mcclUniqueId id;
    MCCL_TRY(mcclGetUniqueId(&id));
    mcclResult_t r = mcclGroupStart();
    for (int i = 0; i < ndev && r == mcclSuccess; ++i) {
      me = musaSetDevice(devs[i]);
      if (me != musaSuccess) {
        r = fail(mcclUnhandledMusaError, "musaSetDevice(%d): %s", devs[i], musaGetErrorString(me));
        group_error(r);
        break;
      }
      r = init_rank(&comm[i], ndev, &id, i, nullptr);
      group_error(r);
    }
    mcclResult_t r2 = mcclGroupEnd();
    musaSetDevice(saved);
    if (r == mcclSuccess) r = r2;
    if (r != mcclSuccess) {
      for (int i = 0; i < ndev; ++i) {
        if (comm[i] != nullptr) mcclCommAbort(comm[i]);
        comm[i] = nullptr;
      }
    }
    return r;
  });
}

mcclResult_t mcclCommSplit(mcclComm_t comm, int color, int key, mcclComm_t* newcomm,
                           mcclConfig_t* config) {
  return api([&] {
    if (newcomm == nullptr) return group_error(fail(mcclInvalidArgument, "newcomm is NULL"));
    *newcomm = nullptr;
    std::shared_ptr<CommState> st;
    MCCL_TRY(group_error(usable(comm, &st)));
    if (color < 0 && color != MCCL_SPLIT_NOCOLOR)
      return group_error(
          fail(mcclInvalidArgument, "color %d: must be >= 0 or MCCL_SPLIT_NOCOLOR", color));
    if (!st->wait_init())
      return group_error(fail(mcclInvalidUsage, "the parent communicator failed to initialise"));
    auto job = std::make_shared<SplitJob>();
    job->parent = st;
    job->color = color;
    job->key = key;
    job->out = newcomm;
    job->cv.blocking = 1;  // a split completes before it returns (or at mcclGroupEnd)
    job->cv.comm_name = st->comm_name;
    if (config != nullptr) {
      MCCL_TRY(group_error(read_config(config, &job->cv)));
      job->cv.blocking = 1;
    }
    {
      std::lock_guard<std::mutex> lock(st->ctl_mu);
      job->base = st->ctl;
      job->seq = ++st->split_seq;
      st->ctl += 2;
      RankSlot* s = st->seg->slot(st->rank);
      s->color = color;
      s->key = key;
      s->ctl.store(job->base + 1, std::memory_order_release);
    }
    st->seg->notify();
    GroupJob g;
    g.phases = 3;
    g.run = [job](int ph) { return job->phase(ph); };
    g.cleanup = [job](bool ok) { job->cleanup(ok); };
    return group_error(add_job(std::move(g)));
  });
}

mcclResult_t mcclCommDestroy(mcclComm_t comm) {
  return api([&] {
    std::shared_ptr<CommState> st = unregister_handle(comm);
    if (!st)
      return fail(mcclInvalidArgument, "invalid communicator %p (NULL or already destroyed)",
                  static_cast<void*>(comm));
    // Destroying a communicator whose rendezvous has not completed abandons it.
    if (st->init.load() == CommState::kInitPending) {
      st->aborted.store(true);
      { std::lock_guard<std::mutex> lock(st->init_mu); }
      st->init_cv.notify_all();
    }
    st->wait_tasks();
    if (st->init_thread.joinable()) st->init_thread.join();
    if (st->seg) {
      uint32_t cur = kSlotJoined;
      st->seg->slot(st->rank)->state.compare_exchange_strong(cur, kSlotDestroyed);
      if (st->init.load() != CommState::kInitReady) st->seg->unlink_name();
      st->seg->notify();
    }
    return mcclSuccess;
  });
}

mcclResult_t mcclCommAbort(mcclComm_t comm) {
  return api([&] {
    std::shared_ptr<CommState> st = unregister_handle(comm);
    if (!st)
      return fail(mcclInvalidArgument, "invalid communicator %p (NULL or already destroyed)",
                  static_cast<void*>(comm));
    st->aborted.store(true);
    if (st->seg) {
      std::atomic<uint32_t>& s = st->seg->slot(st->rank)->state;
      uint32_t cur = s.load();
      while (cur != kSlotAborted && !s.compare_exchange_weak(cur, kSlotAborted)) {
      }
      st->seg->notify();
    }
    { std::lock_guard<std::mutex> lock(st->init_mu); }
    st->init_cv.notify_all();
    st->wait_tasks();
    if (st->init_thread.joinable()) st->init_thread.join();
    if (st->seg && st->init.load() != CommState::kInitReady) st->seg->unlink_name();
    return mcclSuccess;
  });
}

mcclResult_t mcclCommGetAsyncError(mcclComm_t comm, mcclResult_t* asyncError) {
  return api([&] {
    if (asyncError == nullptr) return fail(mcclInvalidArgument, "asyncError is NULL");
    std::shared_ptr<CommState> st = lookup(comm);
    if (!st) return fail(mcclInvalidArgument, "invalid communicator %p", static_cast<void*>(comm));
    const int e = st->async.load();
    if (e != mcclSuccess) {
      *asyncError = static_cast<mcclResult_t>(e);
    } else {
      *asyncError = st->init.load() == CommState::kInitPending ? mcclInProgress : mcclSuccess;
    }
    return mcclSuccess;
  });
}

mcclResult_t mcclCommCount(const mcclComm_t comm, int* count) {
  return api([&] {
    if (count == nullptr) return fail(mcclInvalidArgument, "count is NULL");
    std::shared_ptr<CommState> st = lookup(comm);
    if (!st) return fail(mcclInvalidArgument, "invalid communicator %p", static_cast<void*>(comm));
    *count = st->nranks;
    return mcclSuccess;
  });
}

mcclResult_t mcclCommMuDevice(const mcclComm_t comm, int* device) {
  return api([&] {
    if (device == nullptr) return fail(mcclInvalidArgument, "device is NULL");
    std::shared_ptr<CommState> st = lookup(comm);
    if (!st) return fail(mcclInvalidArgument, "invalid communicator %p", static_cast<void*>(comm));
    *device = st->device;
    return mcclSuccess;
  });
}

mcclResult_t mcclCommUserRank(const mcclComm_t comm, int* rank) {
  return api([&] {
    if (rank == nullptr) return fail(mcclInvalidArgument, "rank is NULL");
    std::shared_ptr<CommState> st = lookup(comm);
    if (!st) return fail(mcclInvalidArgument, "invalid communicator %p", static_cast<void*>(comm));
    *rank = st->rank;
    return mcclSuccess;
  });
}

const char* mcclGetErrorString(mcclResult_t result) {
  switch (raw(result)) {
    case mcclSuccess:
      return "no error";
    case mcclUnhandledMusaError:
      return "unhandled MUSA error (run with MCCL_SIM_DEBUG=1 for details)";
    case mcclSystemError:
      return "unhandled system error (run with MCCL_SIM_DEBUG=1 for details)";
    case mcclInternalError:
      return "internal error - please report this issue to the MCCL developers";
    case mcclInvalidArgument:
      return "invalid argument (run with MCCL_SIM_DEBUG=1 for details)";
    case mcclInvalidUsage:
      return "invalid usage (run with MCCL_SIM_DEBUG=1 for details)";
    case mcclRemoteError:
      return "remote process exited, aborted or timed out (run with MCCL_SIM_DEBUG=1 for details)";
    case mcclInProgress:
      return "MCCL operation in progress";
    default:
      return "unknown result code";
  }
}

const char* mcclGetLastError(mcclComm_t comm) {
  try {
    if (comm != nullptr) {
      std::shared_ptr<CommState> st = lookup(comm);
      // The message is written once and never changed: its storage outlives this call as long as
      // the communicator does.
      if (st && st->has_err_msg.load()) return st->err_msg.c_str();
    }
    return thread_last_error();
  } catch (...) {
    return "";
  }
}

mcclResult_t mcclMemAlloc(void** ptr, size_t size) {
  return api([&] {
    if (ptr == nullptr) return fail(mcclInvalidArgument, "ptr is NULL");
    *ptr = nullptr;
    if (size == 0) return fail(mcclInvalidArgument, "size is 0");
    musaError_t me = musaMalloc(ptr, size);
    if (me != musaSuccess)
      return fail(mcclUnhandledMusaError, "musaMalloc(%zu): %s", size, musaGetErrorString(me));
    return mcclSuccess;
  });
}

mcclResult_t mcclMemFree(void* ptr) {
  return api([&] {
    if (ptr == nullptr) return mcclSuccess;
    musaError_t me = musaFree(ptr);
    if (me != musaSuccess)
      return fail(me == musaErrorInvalidValue || me == musaErrorInvalidDevicePointer
                      ? mcclInvalidArgument
                      : mcclUnhandledMusaError,
                  "musaFree(%p): %s", ptr, musaGetErrorString(me));
    return mcclSuccess;
  });
}

mcclResult_t mcclCommRegister(const mcclComm_t comm, void* buff, size_t size, void** handle) {
  return api([&] {
    if (handle == nullptr) return fail(mcclInvalidArgument, "handle is NULL");
    *handle = nullptr;
    std::shared_ptr<CommState> st = lookup(comm);
    if (!st) return fail(mcclInvalidArgument, "invalid communicator %p", static_cast<void*>(comm));
    if (buff == nullptr || size == 0)
      return fail(mcclInvalidArgument, "buffer %p of %zu bytes: must be non-NULL and non-empty",
                  buff, size);
    const uintptr_t b = reinterpret_cast<uintptr_t>(buff);
    if (size - 1 > UINTPTR_MAX - b)
      return fail(mcclInvalidArgument, "buffer %p + %zu bytes wraps around", buff, size);
    // The whole range must be device memory of one allocation (checked at both ends).
    for (const void* p : {static_cast<const void*>(buff),
                          static_cast<const void*>(static_cast<char*>(buff) + (size - 1))}) {
      musaPointerAttributes a{};
      musaError_t me = musaPointerGetAttributes(&a, p);
      if (me != musaSuccess || (a.type != musaMemoryTypeDevice && a.type != musaMemoryTypeManaged))
        return fail(mcclInvalidArgument, "cannot register %p (%zu bytes): %p is not device memory",
                    buff, size, p);
    }
    std::lock_guard<std::mutex> lock(st->obj_mu);
    static std::atomic<uintptr_t> next{0x1000};
    void* h = reinterpret_cast<void*>(next.fetch_add(0x10));
    st->regs.emplace(h, std::make_pair(buff, size));
    *handle = h;
    return mcclSuccess;
  });
}

mcclResult_t mcclCommDeregister(const mcclComm_t comm, void* handle) {
  return api([&] {
    std::shared_ptr<CommState> st = lookup(comm);
    if (!st) return fail(mcclInvalidArgument, "invalid communicator %p", static_cast<void*>(comm));
    std::lock_guard<std::mutex> lock(st->obj_mu);
    auto it = st->regs.find(handle);
    if (it == st->regs.end())
      return fail(mcclInvalidArgument, "handle %p is not registered with this communicator",
                  handle);
    st->regs.erase(it);
    return mcclSuccess;
  });
}

mcclResult_t mcclRedOpCreatePreMulSum(mcclRedOp_t* op, void* scalar, mcclDataType_t datatype,
                                      mcclScalarResidence_t residence, mcclComm_t comm) {
  return api([&] {
    if (op == nullptr) return fail(mcclInvalidArgument, "op is NULL");
    if (scalar == nullptr) return fail(mcclInvalidArgument, "scalar is NULL");
    const int dt = raw(datatype), res = raw(residence);
    const size_t esz = dtype_size(dt);
    if (esz == 0) return fail(mcclInvalidArgument, "invalid datatype %d", dt);
    if (res != mcclScalarDevice && res != mcclScalarHostImmediate)
      return fail(mcclInvalidArgument, "invalid scalar residence %d", res);
    std::shared_ptr<CommState> st = lookup(comm);
    if (!st) return fail(mcclInvalidArgument, "invalid communicator %p", static_cast<void*>(comm));
    PreMulOp p;
    p.live = true;
    p.dtype = static_cast<mcclDataType_t>(dt);
    p.spec.kind = Red::PreMulSum;
    if (res == mcclScalarHostImmediate) {
      std::memcpy(p.spec.scalar, scalar, esz);
    } else {
      p.spec.scalar_on_device = true;
      p.spec.scalar_ptr = scalar;
    }
    std::lock_guard<std::mutex> lock(st->obj_mu);
    size_t idx = 0;
    while (idx < st->premul.size() && st->premul[idx].live) ++idx;
    if (idx >= static_cast<size_t>(mcclMaxRedOp - mcclNumOps))
      return fail(mcclInvalidUsage, "too many reduction operators");
    if (idx == st->premul.size())
      st->premul.push_back(p);
    else
      st->premul[idx] = p;
    *op = static_cast<mcclRedOp_t>(mcclNumOps + static_cast<int>(idx));
    return mcclSuccess;
  });
}

mcclResult_t mcclRedOpDestroy(mcclRedOp_t op, mcclComm_t comm) {
  return api([&] {
    std::shared_ptr<CommState> st = lookup(comm);
    if (!st) return fail(mcclInvalidArgument, "invalid communicator %p", static_cast<void*>(comm));
    const int v = raw(op);
    if (v >= 0 && v < mcclNumOps)
      return fail(mcclInvalidArgument, "reduction operator %d is built in", v);
    std::lock_guard<std::mutex> lock(st->obj_mu);
    const size_t idx = static_cast<size_t>(v) - mcclNumOps;
    if (v < 0 || idx >= st->premul.size() || !st->premul[idx].live)
      return fail(mcclInvalidArgument, "reduction operator %d was not created on this communicator",
                  v);
    st->premul[idx].live = false;
    return mcclSuccess;
  });
}

}  // extern "C"
