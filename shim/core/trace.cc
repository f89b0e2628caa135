// Tracing and statistics of the intercepted calls: see trace.h for what the user sees.
//
// The log (trace_log.h) is a file mapped in segments (1 MiB doubling to 4 MiB, extended with
// fallocate so a full disk fails there, not in a store through the mapping, and pre-faulted with
// MADV_POPULATE_WRITE so the callers take no page faults). Segments after the first are prepared by
// a "torchada-trace" thread (started once half a segment is used) while the callers still carve
// from the spare space; a caller grows the file itself only when that thread falls behind. Each
// thread takes 4 KiB-aligned chunks under g_mu (16 KiB first, then 64 KiB), starting each with a
// kChunk record (its thread and clock anchor), and when a call ends reserves kSlot bytes where its
// chunk's records end, copies the record there and gives the unused bytes back. Each thread also
// sets aside kMaxDepth slots (zero unless used) for the events a fatal signal finds open. A string
// or a signature (a function's name and its arguments' names and kinds) is logged once per thread:
// direct-mapped caches of what was logged (ThreadState::known, ::sigs) cost a load and a compare
// per name, so that an event is its values alone, and only those that changed since its
// signature's previous event (16 bytes + 8 per value; 16 for a backend call). A forwarder's
// backend call (a BackendSpan directly inside a Span that has none yet) is no event of its own: it
// keeps its name and times in the Span's OpenEvent (where the signal handler finds it), and the
// Span's record carries it: one reservation, one signature lookup and no push and pop for the
// pair, where a record of its own cost those and 16 bytes. Most pairs are a kPairTiny, no longer
// than the call alone (the call's times word shrinks to make room for the two gaps between the
// calls' starts and ends, a few ns each); else a kPairShort, 8 bytes more (16 when its backend
// name changed). A generated forwarder returns its backend call's result at once
// (BackendSpan::kEndsCall): the backend call's end is the call's, one clock read fewer (what lay
// between the two reads was the tracer's own work). A call still open when the process stops
// (another thread's, at exit) is lost with the backend call it finished. Besides the two rdtsc
// per event, what tracing costs a process over its life is then mostly the kernel's: ~0.45 ns
// per byte of log on tmpfs (allocating, zeroing and mapping the pages), see
// bench/shim/trace_bench.cc.
//
// Exit: the library's destructor stops writers (g_closed + an asymmetric barrier, then waits for
// the few threads copying a record), then converts the log into the JSON file (trace_convert.cc;
// written as FILE.part and renamed) and removes it, and converts the logs its forked children left
// (ended by _exit: their writer is gone, their header names this process). With
// TORCHADA_TRACE_FORMAT=binary it only cuts the log's unused tail. Calls made after that (late
// destructors) are counted as dropped.
// Fatal signals: the same quiescing, then the crashing thread's open calls are logged as complete
// events ("signal":"SIGSEGV") and the log converted, then the previous handler runs (or the
// default action).
// fork: the child forgets the parent's log and opens its own at its first traced call.
#include "core/trace.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "core/backend.h"
#include "core/env.h"
#include "core/log.h"
#include "core/trace_log.h"
#include "settings/settings.h"

namespace torchada::trace {

namespace detail {
std::atomic<int> g_state{0};

// The members of ArgWriter the record writer reads.
class ArgAccess {
 public:
  static int count(const ArgWriter& a) { return a.n_; }
  static const char* name(const ArgWriter& a, int i) { return a.names_[i]; }
  static std::uint8_t kind(const ArgWriter& a, int i) { return a.kinds_[i]; }
  static std::uint64_t value(const ArgWriter& a, int i) { return a.values_[i]; }
  static const char* str_data(const ArgWriter& a) { return a.str_; }
  static int str_size(const ArgWriter& a) { return a.str_len_; }
  static bool truncated(const ArgWriter& a) { return a.truncated_; }
  static void reset(ArgWriter& a, bool on) {
    a.n_ = 0;
    a.str_len_ = 0;
    a.on_ = on;
    a.truncated_ = false;
  }
};

// Per function and thread; written by the owner only (load + store, no read-modify-write).
struct StatCell {
  std::atomic<std::uint64_t> calls;
  std::atomic<std::uint64_t> errors;
  std::atomic<std::uint64_t> ticks;
};

constexpr int kKnown = 1024;  // strings remembered per thread (a direct-mapped cache)
constexpr int kSigs = 256;    // signatures remembered per thread (the same)

// A signature this thread logged (trace_log.h).
struct SigSlot {
  const char* name;
  const char* names[ArgWriter::kMaxArgs];
  std::uint64_t last[ArgWriter::kMaxArgs];  // the values its last event logged
  const char* last_child;                   // the backend name of its last pair
  std::uint32_t id;
  std::uint8_t n;
  std::uint8_t kinds[ArgWriter::kMaxArgs];
};

// One per thread that made a traced call; never freed, reused after its thread exits.
struct alignas(64) ThreadState {
  ThreadState* next;                // registry link, set once before publication
  std::atomic<bool> in_use;         // owned by a live thread
  std::atomic<unsigned> writing;    // copying a record into the log now
  std::atomic<char*> writing_slot;  // where (read by other threads' exit and signal handlers)
  std::atomic<int> depth;           // open events
  OpenEvent* open_ev[16];           // their records (read by this thread's signal handler)
  char* emergency;                  // kMaxDepth slots for a fatal signal's open events
  OpenEvent* closing;               // the event close_event is writing
  std::uint32_t gen;                // g_gen this state was set up for
  std::uint32_t chunks;             // chunks taken in this generation
  char* cur;                        // free bytes of the current chunk: [cur, end), zeros
  char* end;
  std::int64_t anchor_ticks;  // clock conversion: ns = anchor_ns + (t - anchor) * mult
  std::int64_t anchor_ns;
  std::int64_t reanchor_after;  // ticks
  std::uint64_t mult;           // ns per tick, 32.32 fixed point
  StatCell* stats;              // kFnCount cells when statistics are on
  int pid;
  int tid;
  const char* known[kKnown];  // strings already in this generation's log, by pointer hash
  SigSlot sigs[kSigs];        // signatures already there, by function name hash
};
}  // namespace detail

namespace {

using detail::ArgAccess;
using detail::OpenEvent;
using detail::StatCell;
using detail::ThreadState;
namespace lg = log;

constexpr int kMaxDepth = 16;
// Bytes reserved per record: the largest (an api event with all arguments and string bytes, and
// the backend call it made: as a long kBackend record before it, 24 bytes).
constexpr std::size_t kSlot =
    24 + 8 * ArgWriter::kMaxArgs + lg::pad8(static_cast<std::size_t>(ArgWriter::kStrBytes)) + 24;
constexpr std::size_t kSigSize = 16 + 8 * ArgWriter::kMaxArgs;
static_assert(kSigSize <= kSlot);
constexpr std::size_t kStringSlot = 16 + lg::kMaxString;
constexpr std::size_t kAnchorSize = 32;
constexpr std::size_t kChunkHead = 48;
constexpr std::size_t kFirstChunk = 16 << 10;  // the signal slots (4.6 KiB) and some records
constexpr std::size_t kChunk = 64 << 10;
constexpr std::size_t kFirstSegment = 1 << 20;
// Small: the segment being prepared at exit is pre-faulted for nothing (up to 32 GiB of log).
constexpr std::size_t kMaxSegment = 4 << 20;
constexpr int kMaxSegments = 8192;
constexpr std::size_t kDefaultCapMb = 2048;
constexpr std::int64_t kReanchorNs = 100 * 1000 * 1000;
#ifdef MADV_POPULATE_WRITE
constexpr int kMadvPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kMadvPopulateWrite = 23;  // Linux 5.14; older kernels answer EINVAL
#endif
static_assert(kMaxDepth == sizeof(ThreadState::open_ev) / sizeof(OpenEvent*));
static_assert(kChunkHead + 64 + kAnchorSize + kMaxDepth * kSlot + kSlot <= kFirstChunk,
              "a first chunk holds its header, the thread's name, the signal slots and a record");
static_assert(kFirstChunk % lg::kPage == 0 && kChunk % lg::kPage == 0);

// ---------------------------------------------------------------------------------------------
// State. Everything is zero- or constant-initialised: no constructor runs at load.

// The decision, chunks, the file, finalisation. pthread objects: constant-initialised, and the
// grower thread waits on a condition variable with it.
pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_grow_cv = PTHREAD_COND_INITIALIZER;   // the grower: growth requested
pthread_cond_t g_grown_cv = PTHREAD_COND_INITIALIZER;  // chunk takers: a growth finished
struct Locked {
  Locked() { pthread_mutex_lock(&g_mu); }
  ~Locked() { pthread_mutex_unlock(&g_mu); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
};
std::atomic<bool> g_trace_on{false};
std::atomic<bool> g_stats_on{false};
std::atomic<std::uint32_t> g_gen{1};  // +1 in every forked child
std::atomic<bool> g_closed{false};    // no more record writes (exit, fatal signal)
std::atomic<std::uint64_t> g_dropped{0};
std::atomic<std::uint32_t> g_next_sig{0};  // signatures handed out (trace_log.h)
std::atomic<ThreadState*> g_threads{nullptr};
std::atomic<bool> g_use_tsc{false};
std::atomic<std::uint64_t> g_mult{0};  // latest ns-per-tick estimate, 32.32
std::int64_t g_origin_ticks;           // calibration origin (set once, under g_mu)
std::int64_t g_origin_ns;
pthread_key_t g_key;
bool g_atfork_done;
bool g_binary;  // TORCHADA_TRACE_FORMAT=binary: the log is the output
thread_local ThreadState* t_state = nullptr;

struct Segment {
  char* base;
  std::size_t off;
  std::size_t len;
};
struct TraceFile {
  int fd;
  bool open;
  bool failed;          // no more chunks in this generation
  bool growing;         // a segment is being prepared (by the grower or a chunk taker)
  bool grow_requested;  // for the grower thread
  bool grower_running;
  bool grower_failed;  // could not start one: chunk takers grow the file themselves
  std::uint32_t gen;   // the generation it belongs to
  int nseg;
  int cur_seg;         // the segment chunks are carved from
  std::size_t size;    // file size
  std::size_t carved;  // [0, carved) is the header, handed out, or skipped
  std::size_t cap;
  char base_path[PATH_MAX];
  char path[PATH_MAX + 16];       // the log
  char json_path[PATH_MAX + 16];  // the output (JSON) unless g_binary
  Segment seg[kMaxSegments];
};
TraceFile g_file;

// ---------------------------------------------------------------------------------------------
// Clock: the TSC where the kernel itself trusts it, else CLOCK_MONOTONIC through the vDSO. Each
// thread converts ticks with its own anchor, refreshed when it has no open event and the anchor is
// older than 100 ms, so a call and its children always share one conversion.

std::int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline std::int64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
  if (g_use_tsc.load(std::memory_order_relaxed)) return static_cast<std::int64_t>(__rdtsc());
#endif
  return mono_ns();
}

bool kernel_clock_is_tsc() {
  int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[32] = {};
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  return n >= 3 && std::strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == '\0');
}

struct ClockPair {
  std::int64_t ticks;
  std::int64_t ns;
};

// A TSC reading and CLOCK_MONOTONIC taken together: the best of a few tries bracketed by two TSC
// reads, so that a preemption between the two clocks cannot skew the pair.
ClockPair read_pair() {
#if defined(__x86_64__) || defined(__i386__)
  if (g_use_tsc.load(std::memory_order_relaxed)) {
    ClockPair best{0, 0};
    std::int64_t best_width = INT64_MAX;
    for (int i = 0; i < 5; ++i) {
      const auto a = static_cast<std::int64_t>(__rdtsc());
      const std::int64_t n = mono_ns();
      const auto b = static_cast<std::int64_t>(__rdtsc());
      if (b - a < best_width) {
        best_width = b - a;
        best = {a + (b - a) / 2, n};
      }
    }
    return best;
  }
#endif
  const std::int64_t n = mono_ns();
  return {n, n};
}

// Under g_mu, once.
void init_clock() {
  bool tsc = false;
#if defined(__x86_64__) || defined(__i386__)
  switch (settings::word(settings::Id::kTraceClock, settings_warn)) {  // auto, tsc, monotonic
    case 1:
      tsc = true;
      break;
    case 2:
      tsc = false;
      break;
    default:
      tsc = kernel_clock_is_tsc();
      break;
  }
#endif
  g_use_tsc.store(tsc, std::memory_order_relaxed);
  g_mult.store(std::uint64_t{1} << 32, std::memory_order_relaxed);
  if (tsc) {
    // A first estimate over ~2 ms; every re-anchor refines it over the whole run since.
    const ClockPair p0 = read_pair();
    ClockPair p1 = p0;
    while (p1.ns - p0.ns < 2000000) p1 = read_pair();
    if (p1.ticks - p0.ticks < 2000) {  // a TSC slower than 1 MHz is not one to trust
      g_use_tsc.store(false, std::memory_order_relaxed);
    } else {
      g_origin_ticks = p0.ticks;
      g_origin_ns = p0.ns;
      g_mult.store((static_cast<unsigned __int128>(p1.ns - p0.ns) << 32) /
                       static_cast<std::uint64_t>(p1.ticks - p0.ticks),
                   std::memory_order_relaxed);
      return;
    }
  }
  g_origin_ticks = g_origin_ns = mono_ns();
}

void reanchor(ThreadState* t) {
  const ClockPair p = read_pair();
  if (g_use_tsc.load(std::memory_order_relaxed)) {
    std::int64_t dt = p.ticks - g_origin_ticks, dn = p.ns - g_origin_ns;
    if (dt > 0 && dn > 50 * 1000 * 1000)
      g_mult.store((static_cast<unsigned __int128>(dn) << 32) / static_cast<std::uint64_t>(dt),
                   std::memory_order_relaxed);
  }
  t->anchor_ticks = p.ticks;
  t->anchor_ns = p.ns;
  t->mult = g_mult.load(std::memory_order_relaxed);
  t->reanchor_after = p.ticks + static_cast<std::int64_t>(
                                    (static_cast<unsigned __int128>(kReanchorNs) << 32) / t->mult);
}

// ---------------------------------------------------------------------------------------------
// The file. Everything here runs under g_mu.

// Zeros appended to the file: fallocate (tmpfs, ext4, xfs: no bytes copied), else pwrite.
bool extend_file(int fd, std::size_t off, std::size_t len) {
  if (fallocate(fd, 0, static_cast<off_t>(off), static_cast<off_t>(len)) == 0) return true;
  if (errno != EOPNOTSUPP && errno != ENOSYS) return false;  // ENOSPC: no room
  static const char kZeros[4096] = {};
  while (len > 0) {
    const ssize_t w = ::pwrite(fd, kZeros, std::min(len, sizeof kZeros), static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += static_cast<std::size_t>(w);
    len -= static_cast<std::size_t>(w);
  }
  return true;
}

// Growth, in three steps so that the slow middle one (allocating, mapping, filling page tables:
// most of the cost of a record's bytes) runs without g_mu, usually on the grower thread while the
// callers still carve from the spare space. One growth at a time (TraceFile::growing).
struct Growth {
  int fd;
  std::uint32_t gen;
  std::size_t off;
  std::size_t len;
};

// Under g_mu: the next segment's place, at least `need` bytes. False when the size limit forbids.
bool plan_growth(std::size_t need, Growth* g) {
  TraceFile& f = g_file;
  if (f.nseg >= kMaxSegments) return false;
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::size_t len = f.nseg == 0 ? kFirstSegment : std::min(kMaxSegment, f.seg[f.nseg - 1].len * 2);
  len = std::max(len, (need + page - 1) / page * page);
  if (f.size + len > f.cap) {
    len = f.cap > f.size ? (f.cap - f.size) / page * page : 0;
    if (len < need || len == 0) return false;
  }
  *g = {f.fd, f.gen, f.size, len};
  return true;
}

// Without g_mu: zeros appended to the file (pages that hold no chunk), then mapped with writable
// page tables (MADV_POPULATE_WRITE, Linux 5.14; else a write per page).
char* prepare_growth(const Growth& g) {
  if (!extend_file(g.fd, g.off, g.len)) return nullptr;
  void* m =
      mmap(nullptr, g.len, PROT_READ | PROT_WRITE, MAP_SHARED, g.fd, static_cast<off_t>(g.off));
  if (m == MAP_FAILED) return nullptr;
  char* base = static_cast<char*>(m);
  if (madvise(m, g.len, kMadvPopulateWrite) != 0) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    for (std::size_t i = 0; i < g.len; i += page) *static_cast<volatile char*>(base + i) = 0;
  }
  return base;
}

// Under g_mu: the segment joins the file.
void publish_growth(const Growth& g, char* base) {
  TraceFile& f = g_file;
  f.seg[f.nseg++] = {base, g.off, g.len};
  f.size = g.off + g.len;
  if (f.nseg == 1) f.carved = 0;
}

// Under g_mu, not already growing: one growth. With `unlock`, g_mu is released while preparing.
bool grow(std::size_t need, bool unlock) {
  TraceFile& f = g_file;
  Growth g;
  if (!plan_growth(need, &g)) return false;
  f.growing = true;
  if (unlock) pthread_mutex_unlock(&g_mu);
  char* base = prepare_growth(g);
  if (unlock) pthread_mutex_lock(&g_mu);
  f.growing = false;
  pthread_cond_broadcast(&g_grown_cv);
  if (base != nullptr && f.open && f.gen == g.gen && !f.failed) {
    publish_growth(g, base);
    return true;
  }
  if (base != nullptr) munmap(base, g.len);
  return false;
}

// The grower thread: keeps spare space ahead of the chunk takers.
void* grower_main(void*) {
  TraceFile& f = g_file;
  Locked lock;
  const std::uint32_t gen = g_gen.load(std::memory_order_relaxed);
  for (;;) {
    while (!f.grow_requested && !g_closed.load(std::memory_order_relaxed))
      pthread_cond_wait(&g_grow_cv, &g_mu);
    if (g_closed.load(std::memory_order_relaxed) || f.gen != gen || !f.open || f.failed) break;
    f.grow_requested = false;
    if (!f.growing && !grow(0, true)) break;  // chunk takers grow (or fail) by themselves
  }
  if (f.gen == gen) f.grower_running = false;
  return nullptr;
}

// Under g_mu. Signals stay with the program's threads.
void start_grower() {
  TraceFile& f = g_file;
  if (f.grower_running || f.grower_failed) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t th;
  const bool ok = pthread_create(&th, &attr, grower_main, nullptr) == 0;
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (ok) pthread_setname_np(th, "torchada-trace");
  f.grower_running = ok;
  f.grower_failed = !ok;
}

// The file this process writes: FILE, or FILE with ".<pid>" before the extension (the part after
// the last '.' of the last path component, unless that '.' starts the component). The log is that
// file (binary format) or, for JSON, that file + ".tdtrace".
bool make_paths(int pid, bool alternate) {
  TraceFile& f = g_file;
  int n;
  char* const out = g_binary ? f.path : f.json_path;
  const char* slash = std::strrchr(f.base_path, '/');
  const char* leaf = slash ? slash + 1 : f.base_path;
  const char* dot = std::strrchr(leaf, '.');
  if (!alternate)
    n = std::snprintf(out, sizeof f.path, "%s", f.base_path);
  else if (dot == nullptr || dot == leaf)
    n = std::snprintf(out, sizeof f.path, "%s.%d", f.base_path, pid);
  else
    n = std::snprintf(out, sizeof f.path, "%.*s.%d%s", static_cast<int>(dot - f.base_path),
                      f.base_path, pid, dot);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof f.path) return false;
  if (g_binary) return true;
  n = std::snprintf(f.path, sizeof f.path, "%s%s", f.json_path, lg::kExtension);
  return n > 0 && static_cast<std::size_t>(n) < sizeof f.path;
}

int open_locked_file(const char* path) {
  int fd = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(fd);
    return -2;  // another live process writes it
  }
  return fd;
}

// Opens this generation's file and writes its first segment. False when tracing cannot go on.
bool open_file() {
  TraceFile& f = g_file;
  const int pid = static_cast<int>(getpid());
  const bool child = g_gen.load(std::memory_order_relaxed) != 1;
  int fd = make_paths(pid, child) ? open_locked_file(f.path) : -1;
  if (fd == -2 && !child) fd = make_paths(pid, true) ? open_locked_file(f.path) : -1;
  if (fd < 0) {
    TORCHADA_LOG(kWarn, "TORCHADA_TRACE: cannot write %s (%s); tracing is off", f.path,
                 fd == -2 ? "in use by another process" : std::strerror(errno));
    return false;
  }
  if (ftruncate(fd, 0) != 0) {
    ::close(fd);
    return false;
  }
  f.fd = fd;
  f.nseg = 0;
  f.cur_seg = 0;
  f.size = 0;
  f.carved = 0;
  f.open = true;  // for grow()
  f.gen = g_gen.load(std::memory_order_relaxed);
  if (!grow(kChunk, false)) {
    f.open = false;
    TORCHADA_LOG(kWarn, "TORCHADA_TRACE: cannot extend %s; tracing is off", f.path);
    ::close(fd);
    f.fd = -1;
    return false;
  }
  lg::FileHeader h = {};
  h.magic = lg::kMagic;
  h.pid = pid;
  h.ppid = static_cast<int>(getppid());
  std::snprintf(h.process, sizeof h.process, "%s", program_invocation_short_name);
  std::memcpy(f.seg[0].base, &h, sizeof h);
  f.carved = lg::kPage;
  TORCHADA_LOG(kInfo, "tracing to %s", g_binary ? f.path : f.json_path);
  return true;
}

// A new chunk for `t`, starting with its kChunk record, or false (file cannot grow; event dropped).
bool new_chunk(ThreadState* t) {
  Locked lock;
  TraceFile& f = g_file;
  const std::uint32_t gen = g_gen.load(std::memory_order_relaxed);
  if (!f.open || f.gen != gen) {
    if (g_closed.load(std::memory_order_relaxed) || (f.failed && f.gen == gen)) return false;
    f.gen = gen;
    if (!open_file()) {
      f.failed = true;
      return false;
    }
  }
  const std::size_t want = t->chunks == 0 ? kFirstChunk : kChunk;
  for (;;) {
    if (g_closed.load(std::memory_order_relaxed) || f.failed) return false;
    // The current segment, or the next one when its tail is too short (the tail stays blank).
    const Segment& s = f.seg[f.cur_seg];
    if (s.off + s.len - f.carved >= want) break;
    if (f.cur_seg + 1 < f.nseg) {
      f.carved = f.seg[++f.cur_seg].off;
      continue;
    }
    if (f.growing) {  // the grower is late: wait for it
      pthread_cond_wait(&g_grown_cv, &g_mu);
      continue;
    }
    if (!grow(want, true)) {
      if (f.failed || g_closed.load(std::memory_order_relaxed)) return false;
      TORCHADA_LOG(kWarn,
                   "TORCHADA_TRACE: %s reached its size limit (TORCHADA_TRACE_MAX_MB) or cannot "
                   "grow; later events are dropped",
                   f.path);
      f.failed = true;
      return false;
    }
  }
  const Segment& s = f.seg[f.cur_seg];
  t->cur = s.base + (f.carved - s.off);
  t->end = t->cur + want;
  f.carved += want;
  ++t->chunks;
  // Its thread and clock, so that a reader can start at any chunk.
  const lg::Head h{lg::kChunk, 0, 0, 0, static_cast<std::int32_t>(lg::kChunkMagic)};
  const std::int64_t words[5] = {t->tid, static_cast<std::int64_t>(want), t->anchor_ticks,
                                 t->anchor_ns, static_cast<std::int64_t>(t->mult)};
  std::memcpy(t->cur, &h, sizeof h);
  std::memcpy(t->cur + 8, words, sizeof words);
  t->cur += kChunkHead;
  // Less than half the last segment left: ask the grower for the next one.
  if (!f.growing && !f.grow_requested && (f.size - f.carved) < f.seg[f.nseg - 1].len / 2) {
    start_grower();
    if (f.grower_running) {
      f.grow_requested = true;
      pthread_cond_signal(&g_grow_cv);
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Threads and records.

// `n` bytes (at most a first chunk) of the calling thread's chunk, or null (file cannot grow).
char* reserve_bytes(ThreadState* t, std::size_t n) {
  if (static_cast<std::size_t>(t->end - t->cur) < n && !new_chunk(t)) return nullptr;
  if (static_cast<std::size_t>(t->end - t->cur) < n) return nullptr;
  char* s = t->cur;
  t->cur += n;
  return s;
}

// A record is copied into a slot of kSlot bytes reserved where the thread's records end; its
// unused bytes are given back when it is complete. `writing` is 1 while it is copied (a slot
// another thread's exit or signal handler blanks if it waits in vain, and this thread's own
// fatal-signal handler blanks), 2 once an event is complete but still on the stack of open events
// (the handler does not log it again). Null: closed, or no room (dropped).
inline char* begin_record(ThreadState* t) {
  if (g_closed.load(std::memory_order_relaxed)) return nullptr;
  char* const s = reserve_bytes(t, kSlot);  // may take a chunk: before the copying starts
  if (s == nullptr) return nullptr;
  t->writing_slot.store(s, std::memory_order_relaxed);
  t->writing.store(1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (!g_closed.load(std::memory_order_relaxed)) return s;
  t->writing.store(0, std::memory_order_release);
  return nullptr;
}

inline void end_record(ThreadState* t, char* s, std::size_t len, unsigned writing) {
  t->cur = s + len;  // the last reservation: give the rest back
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->writing.store(writing, std::memory_order_release);
}

template <typename T>
inline char* put_word(char* p, T v) {
  static_assert(sizeof(T) == 8);
  std::memcpy(p, &v, 8);
  return p + 8;
}

inline char* put_head(char* p, lg::Type type, int n, int flags, int sig, std::int32_t value) {
  const lg::Head h{type, static_cast<std::uint8_t>(n), static_cast<std::uint8_t>(flags),
                   static_cast<std::uint8_t>(sig), value};
  std::memcpy(p, &h, sizeof h);
  return p + sizeof h;
}

// A kString record for `p` at s (kStringSlot bytes at most); its size.
std::size_t put_string(char* s, const char* p) {
  std::size_t n = strnlen(p, lg::kMaxString + 1);
  const bool longer = n > lg::kMaxString;
  if (longer) n = lg::kMaxString;
  char* q = put_head(s, lg::kString, static_cast<int>(n), longer ? lg::kLonger : 0, 0, 0);
  q = put_word(q, reinterpret_cast<std::uintptr_t>(p));
  std::memcpy(q, p, n);
  return 16 + lg::pad8(n);
}

inline std::size_t known_slot(const char* p) {
  const auto k = reinterpret_cast<std::uintptr_t>(p);
  return (k ^ (k >> 10) ^ (k >> 20)) & (detail::kKnown - 1);
}

__attribute__((noinline)) void log_string(ThreadState* t, const char* p) {
  char* const s = begin_record(t);
  if (s == nullptr) return;
  end_record(t, s, put_string(s, p), 0);
  t->known[known_slot(p)] = p;
}

// Logs the string at p unless this thread did already (most likely).
inline void need_string(ThreadState* t, const char* p) {
  if (__builtin_expect(t->known[known_slot(p)] != p, 0) && p != nullptr) log_string(t, p);
}

void log_anchor(ThreadState* t) {
  char* const s = begin_record(t);
  if (s == nullptr) return;
  char* p = put_head(s, lg::kAnchor, 0, 0, 0, 0);
  p = put_word(p, t->anchor_ticks);
  p = put_word(p, t->anchor_ns);
  put_word(p, t->mult);
  end_record(t, s, kAnchorSize, 0);
}

inline std::size_t sig_slot(const char* name) { return known_slot(name) & (detail::kSigs - 1); }

// A new signature for `e` (0: none left), remembered by `t`, its kSig record at s; its size.
std::size_t put_signature(ThreadState* t, char* s, const OpenEvent& e, std::uint32_t* id) {
  const ArgWriter& a = *e.args;
  const int n = ArgAccess::count(a);
  *id = g_next_sig.fetch_add(1, std::memory_order_relaxed) + 1;
  if (*id > lg::kMaxSig) {
    *id = 0;
    return 0;
  }
  char* p = put_head(s, lg::kSig, n, 0, 0, static_cast<std::int32_t>(*id));
  p = put_word(p, reinterpret_cast<std::uintptr_t>(e.name));
  detail::SigSlot& c = t->sigs[sig_slot(e.name)];
  c.name = e.name;
  c.n = static_cast<std::uint8_t>(n);
  c.id = *id;
  c.last_child = nullptr;
  for (int i = 0; i < n; ++i) {
    c.last[i] = 0;
    c.names[i] = ArgAccess::name(a, i);
    c.kinds[i] = ArgAccess::kind(a, i);
    p = put_word(p, reinterpret_cast<std::uintptr_t>(c.names[i]) |
                        std::uint64_t{ArgAccess::kind(a, i)} << lg::kArgKindShift);
  }
  return static_cast<std::size_t>(p - s);
}

__attribute__((noinline)) std::uint32_t log_signature(ThreadState* t, const OpenEvent& e) {
  const ArgWriter& a = *e.args;
  need_string(t, e.name);
  for (int i = 0, n = ArgAccess::count(a); i < n; ++i) need_string(t, ArgAccess::name(a, i));
  char* const s = begin_record(t);
  if (s == nullptr) return 0;
  std::uint32_t id;
  end_record(t, s, put_signature(t, s, e, &id), 0);
  return id;
}

// A backend event's record at s (16 or 24 bytes); its size.
inline std::size_t put_backend(char* s, const char* name, std::int64_t start, std::int64_t end,
                               int signal, std::int64_t anchor) {
  const auto dur = static_cast<std::uint64_t>(std::max<std::int64_t>(end - start, 0));
  const std::int64_t delta = start - anchor;
  const auto flags = static_cast<std::uint64_t>(signal << 1);
  const auto p = reinterpret_cast<std::uintptr_t>(name);
  if (dur <= lg::kMaxShortDur && delta >= -lg::kMaxDelta && delta < lg::kMaxDelta &&
      p <= lg::kMaxName) {
    const std::uint64_t times =
        (static_cast<std::uint64_t>(delta) & lg::kDeltaMask) | dur << lg::kShortDurShift;
    put_word(put_word(s, lg::kBackendShort | flags << 8 | std::uint64_t{p} << 16), times);
    return 16;
  }
  const std::uint64_t head = (dur > lg::kMaxDur ? lg::kMaxDur : dur) << lg::kDurShift;
  put_word(put_word(put_word(s, head | lg::kBackend | flags << 8), start), p);
  return 24;
}

// The record of api event `e` (of signature `sig`) ending at `end` at s; its size. With `c` (its
// signature's slot): short events leave out the values equal to the ones of the signature's
// previous event, and a backend call that ended inside it (e.child == kChildDone) is logged with
// it, as a kPairShort or as a backend record before it. Without (a fatal signal's events): every
// value is written, and the backend call is not.
inline std::size_t put_api(char* s, const OpenEvent& e, std::uint32_t sig, std::int64_t end,
                           int result, int signal, std::int64_t anchor, detail::SigSlot* c) {
  const auto dur = static_cast<std::uint64_t>(std::max<std::int64_t>(end - e.start, 0));
  const std::int64_t delta = e.start - anchor;
  // Most events: the start relative to the anchor in 40 bits, the duration in 24 (5 ms at 3 GHz).
  const bool near = dur <= lg::kMaxShortDur && delta >= -lg::kMaxDelta && delta < lg::kMaxDelta;
  const auto flags = static_cast<std::uint64_t>(
      (ArgAccess::truncated(*e.args) ? lg::kTruncated : 0) | signal << 1);
  const bool child = c != nullptr && e.child == detail::kChildDone;
  const ArgWriter& a = *e.args;
  const int n = ArgAccess::count(a);
  const std::size_t str = lg::pad8(static_cast<std::size_t>(ArgAccess::str_size(a)));
  const std::uint64_t type_n = static_cast<std::uint64_t>(n) << 4 | flags << 8;
  std::uint64_t* const last = c != nullptr ? c->last : nullptr;
  char* const record = s;  // s: where the api words start (after a backend record)
  char* p;
  if (near && result >= -lg::kMaxShortResult && result < lg::kMaxShortResult) {
    p = s + 16;
    lg::Type type = lg::kApiShort;
    std::uint64_t times =
        (static_cast<std::uint64_t>(delta) & lg::kDeltaMask) | dur << lg::kShortDurShift;
    if (child) {
      const std::int64_t off = e.child_start - e.start;
      const std::int64_t cdur = std::max<std::int64_t>(e.child_end - e.child_start, 0);
      const std::int64_t tail = end - e.child_end;
      if (c->last_child == e.child_name && delta >= -lg::kMaxTinyDelta &&
          delta < lg::kMaxTinyDelta && static_cast<std::int64_t>(dur) <= lg::kMaxTinyDur &&
          off >= 0 && off <= lg::kMaxTinyGap && tail >= 0 && tail <= lg::kMaxTinyGap &&
          e.child_end >= e.child_start) {
        // dur = off + cdur + tail: the backend call's times are exactly those of a record.
        type = lg::kPairTiny;
        times =
            (static_cast<std::uint64_t>(delta) & ((std::uint64_t{1} << lg::kTinyDurShift) - 1)) |
            dur << lg::kTinyDurShift | static_cast<std::uint64_t>(off) << lg::kTinyInShift |
            static_cast<std::uint64_t>(tail) << lg::kTinyOutShift;
      } else if (off >= INT32_MIN && off <= INT32_MAX && cdur <= lg::kMaxPairDur) {
        type = lg::kPairShort;
        const bool named = c->last_child != e.child_name;
        p = put_word(p, static_cast<std::uint64_t>(static_cast<std::uint32_t>(off)) |
                            static_cast<std::uint64_t>(cdur) << 32 | (named ? lg::kPairName : 0));
        if (named) {
          p = put_word(p, reinterpret_cast<std::uintptr_t>(e.child_name));
          c->last_child = e.child_name;
        }
      } else {
        s += put_backend(s, e.child_name, e.child_start, e.child_end, 0, anchor);
        p = s + 16;
      }
    }
    std::uint64_t present = 0;
    for (int i = 0; i < n; ++i) {
      const std::uint64_t v = ArgAccess::value(a, i);
      if (last != nullptr && v == last[i]) continue;
      present |= std::uint64_t{1} << i;
      p = put_word(p, v);
      if (last != nullptr) last[i] = v;
    }
    put_word(s, type | type_n | std::uint64_t{sig} << 16 |
                    std::uint64_t{str / 8} << lg::kShortStrShift |
                    (static_cast<std::uint64_t>(result) & 0x7ff) << lg::kShortResultShift |
                    present << lg::kShortPresentShift);
    put_word(s + 8, times);
  } else {
    if (child) s += put_backend(s, e.child_name, e.child_start, e.child_end, 0, anchor);
    const std::uint64_t head = (dur > lg::kMaxDur ? lg::kMaxDur : dur) << lg::kDurShift;
    p = put_word(s, head | lg::kApi | type_n);
    p = put_word(p, e.start);
    p = put_word(p, std::uint64_t{static_cast<std::uint32_t>(result)} |
                        std::uint64_t{sig} << lg::kSigShift |
                        std::uint64_t{str / 8} << lg::kStrWordsShift);
    for (int i = 0; i < n; ++i) {
      p = put_word(p, ArgAccess::value(a, i));
      if (last != nullptr) last[i] = ArgAccess::value(a, i);
    }
  }
  // The bytes past the string's end stay as they were: zero.
  std::memcpy(p, ArgAccess::str_data(a), static_cast<std::size_t>(ArgAccess::str_size(a)));
  return static_cast<std::size_t>(p - record) + str;
}

// The signature of api event `e` if this thread logged it already (most likely), else 0.
inline std::uint32_t known_signature(const ThreadState* t, const OpenEvent& e) {
  const ArgWriter& a = *e.args;
  const int n = ArgAccess::count(a);
  const detail::SigSlot& c = t->sigs[sig_slot(e.name)];
  bool same = c.name == e.name && c.n == n;
  for (int i = 0; i < n; ++i)
    same &= (c.names[i] == ArgAccess::name(a, i)) & (c.kinds[i] == ArgAccess::kind(a, i));
  return same ? c.id : 0;
}

// The signature of api event `e`, logging it and the enum labels it shows where this thread did
// not already; 0 if it cannot be logged.
inline std::uint32_t signature(ThreadState* t, const OpenEvent& e) {
  std::uint32_t id = known_signature(t, e);
  if (__builtin_expect(id == 0, 0) && (id = log_signature(t, e)) == 0) return 0;
  // A label its signature's previous event showed is logged already.
  const ArgWriter& a = *e.args;
  const std::uint64_t* last = t->sigs[sig_slot(e.name)].last;
  for (int i = 0, n = ArgAccess::count(a); i < n; ++i)
    if (ArgAccess::kind(a, i) == ArgWriter::kLabel && ArgAccess::value(a, i) != last[i])
      need_string(t, reinterpret_cast<const char*>(ArgAccess::value(a, i)));
  return id;
}

// Pushes `e`; e->traced stays false when it cannot be traced (nesting too deep, closing).
inline void open_event(ThreadState* t, OpenEvent* e) {
  e->traced = false;
  const int d = t->depth.load(std::memory_order_relaxed);
  if (d >= kMaxDepth || g_closed.load(std::memory_order_relaxed)) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  e->traced = true;
  // The record is most likely copied here when the call ends: fetch its lines meanwhile.
  __builtin_prefetch(t->cur, 1);
  __builtin_prefetch(t->cur + 64, 1);
  t->open_ev[d] = e;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->depth.store(d + 1, std::memory_order_relaxed);
}

// Logs the event of `e` and pops it.
inline void close_event(ThreadState* t, std::uint32_t gen, OpenEvent* e, std::int64_t end,
                        int result) {
  if (t->gen != gen) return;  // opened in the parent before a fork
  std::uint32_t sig = 0;
  detail::SigSlot* c = nullptr;
  if (!e->backend) {
    // A backend call still open (a BackendSpan outliving its Span's finish) logs its own record.
    if (__builtin_expect(e->child == detail::kChildOpen, 0)) e->child = detail::kChildOrphan;
    sig = signature(t, *e);
    c = &t->sigs[sig_slot(e->name)];
    // Its name is logged already when its signature's previous pair showed it.
    if (e->child == detail::kChildDone && c->last_child != e->child_name)
      need_string(t, e->child_name);
  } else {
    need_string(t, e->name);
  }
  t->closing = e;
  char* const s = e->backend || sig != 0 ? begin_record(t) : nullptr;
  if (s != nullptr)
    end_record(t, s,
               e->backend ? put_backend(s, e->name, e->start, end, 0, t->anchor_ticks)
                          : put_api(s, *e, sig, end, result, 0, t->anchor_ticks, c),
               2);
  else
    g_dropped.fetch_add(!e->backend && e->child == detail::kChildDone ? 2 : 1,
                        std::memory_order_relaxed);
  int d = t->depth.load(std::memory_order_relaxed);
  // Events close in reverse order of opening; anything else (misuse) still pops the right one.
  int i = d - 1;
  while (i >= 0 && t->open_ev[i] != e) --i;
  if (i >= 0) {
    for (int j = i; j + 1 < d; ++j) t->open_ev[j] = t->open_ev[j + 1];
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t->depth.store(d - 1, std::memory_order_relaxed);
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->writing.store(0, std::memory_order_release);
}

// A backend call whose Span ended before it: its record, as close_event writes it, without the
// stack of open events (it was never on it).
void close_orphan(ThreadState* t, std::uint32_t gen, OpenEvent* e, std::int64_t end) {
  if (t->gen != gen) return;
  need_string(t, e->name);
  char* const s = begin_record(t);
  if (s == nullptr) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  end_record(t, s, put_backend(s, e->name, e->start, end, 0, t->anchor_ticks), 0);
}

// A kThread record: the thread's id and name (records after it are that thread's).
void log_thread(ThreadState* t) {
  char* const s = begin_record(t);
  if (s == nullptr) return;
  char name[32] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) != 0 || name[0] == '\0')
    std::snprintf(name, sizeof name, "thread %d", t->tid);
  const std::size_t n = strnlen(name, sizeof name);
  char* p = put_head(s, lg::kThread, static_cast<int>(n), 0, 0, 0);
  p = put_word(p, std::int64_t{t->tid});
  std::memcpy(p, name, n);
  end_record(t, s, 16 + lg::pad8(n), 0);
}

void release_thread(void* p) {
  auto* t = static_cast<ThreadState*>(p);
  t_state = nullptr;
  t->depth.store(0, std::memory_order_relaxed);
  t->in_use.store(false, std::memory_order_release);
}

ThreadState* acquire_state() {
  for (ThreadState* t = g_threads.load(std::memory_order_acquire); t; t = t->next) {
    bool expected = false;
    if (!t->in_use.load(std::memory_order_relaxed) &&
        t->in_use.compare_exchange_strong(expected, true, std::memory_order_acquire))
      return t;
  }
  auto* t = new (std::nothrow) ThreadState();
  if (t == nullptr) return nullptr;
  t->in_use.store(true, std::memory_order_relaxed);
  ThreadState* head = g_threads.load(std::memory_order_relaxed);
  do {
    t->next = head;
  } while (!g_threads.compare_exchange_weak(head, t, std::memory_order_release,
                                            std::memory_order_relaxed));
  return t;
}

// Sets up the calling thread for this generation: a fresh thread, a reused state, or the thread
// that forked. Null when no state can be had (out of memory).
ThreadState* attach() {
  ThreadState* t = t_state;
  const std::uint32_t gen = g_gen.load(std::memory_order_relaxed);
  if (t == nullptr) {
    t = acquire_state();
    if (t == nullptr) return nullptr;
    t_state = t;
    pthread_setspecific(g_key, t);
  }
  if (t->gen != gen) {  // its chunk and strings belong to another generation's file
    t->cur = t->end = nullptr;
    t->chunks = 0;
    std::memset(t->known, 0, sizeof t->known);
    std::memset(t->sigs, 0, sizeof t->sigs);
  }
  t->gen = gen;
  t->depth.store(0, std::memory_order_relaxed);
  t->writing.store(0, std::memory_order_relaxed);
  t->writing_slot.store(nullptr, std::memory_order_relaxed);
  t->emergency = nullptr;
  t->pid = static_cast<int>(getpid());
  t->tid = static_cast<int>(syscall(SYS_gettid));
  reanchor(t);
  if (g_stats_on.load(std::memory_order_relaxed) && t->stats == nullptr)
    t->stats = new (std::nothrow) StatCell[kFnCount]();
  if (g_trace_on.load(std::memory_order_relaxed)) {
    log_thread(t);
    log_anchor(t);  // for a reused state whose chunk goes on
    // The signal slots: an anchor for the crash time, the events, this anchor again for what
    // follows (zeros, skipped by readers, unless a fatal signal comes).
    t->emergency = reserve_bytes(t, kAnchorSize + kMaxDepth * kSlot + kAnchorSize);
    if (t->emergency) {
      char* p = put_head(t->emergency + kAnchorSize + kMaxDepth * kSlot, lg::kAnchor, 0, 0, 0, 0);
      p = put_word(p, t->anchor_ticks);
      p = put_word(p, t->anchor_ns);
      put_word(p, t->mult);
    }
  }
  return t;
}

inline ThreadState* current() {
  ThreadState* t = t_state;
  if (__builtin_expect(t != nullptr && t->gen == g_gen.load(std::memory_order_relaxed), 1))
    return t;
  if (detail::g_state.load(std::memory_order_acquire) != 2) return nullptr;
  return attach();
}

// ---------------------------------------------------------------------------------------------
// Stopping writers: exit and fatal signals.

void heavy_barrier() {
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) return;
  static std::atomic<int> fence{0};
  fence.fetch_add(1, std::memory_order_seq_cst);  // a full fence (and one TSan understands)
}

// After g_closed: every thread other than `self` finishes the record it is copying (bounded wait:
// ~100 ms, so that a writer preempted on a busy machine gets a core back); one that does not
// (stopped) gets that record blanked, and then false.
bool quiesce_writers(const ThreadState* self) {
  heavy_barrier();
  bool quiet = true;
  for (ThreadState* t = g_threads.load(std::memory_order_acquire); t; t = t->next) {
    if (t == self || !t->in_use.load(std::memory_order_acquire)) continue;
    int spins = 0;
    while (t->writing.load(std::memory_order_acquire) != 0 && spins < 2100) {
      ++spins;
      if (spins > 100) {
        timespec ts{0, 50000};
        nanosleep(&ts, nullptr);
      }
    }
    // Stopped while copying a record: blank it (stopped after, the record is complete).
    if (t->writing.load(std::memory_order_acquire) != 1) continue;
    if (char* s = t->writing_slot.load(std::memory_order_relaxed)) std::memset(s, 0, kSlot);
    quiet = false;
  }
  return quiet;
}

struct sigaction g_old_action[65];
const int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
std::atomic<bool> g_in_crash{false};
std::atomic<bool> g_finalized{false};  // the log is being converted or is done

bool finish_log();

// In a signal handler: a string of an open event that this thread has not logged, where its chunk
// has room (taking a chunk could wait on a lock the signal interrupted).
bool crash_room(const ThreadState* t, std::size_t n) {
  return t->cur != nullptr && t->end >= t->cur && static_cast<std::size_t>(t->end - t->cur) >= n;
}

void crash_string(ThreadState* t, const char* p) {
  if (p == nullptr || t->known[known_slot(p)] == p || !crash_room(t, kStringSlot)) return;
  t->cur += put_string(t->cur, p);
  t->known[known_slot(p)] = p;
}

void crash_flush(int sig) {
  g_closed.store(true, std::memory_order_relaxed);
  if (g_finalized.load(std::memory_order_relaxed)) return;
  // pthread_getspecific, not the thread_local: it never allocates in a signal handler.
  auto* self = static_cast<ThreadState*>(pthread_getspecific(g_key));
  if (self && self->gen != g_gen.load(std::memory_order_relaxed)) self = nullptr;
  quiesce_writers(self);
  if (self != nullptr && self->emergency != nullptr) {
    // The record this thread was copying when the signal came is blanked (an event is logged
    // again below: it is still open); an event already complete but not yet popped is left.
    const unsigned writing = self->writing.load(std::memory_order_relaxed);
    if (writing == 1)
      if (char* s = self->writing_slot.load(std::memory_order_relaxed)) std::memset(s, 0, kSlot);
    // This thread's open calls, innermost included, as events that end now, into the slots set
    // aside for them, after an anchor with the clock as it is now.
    const std::int64_t now = ticks();
    char* p = put_head(self->emergency, lg::kAnchor, 0, 0, 0, 0);
    p = put_word(p, self->anchor_ticks);
    p = put_word(p, self->anchor_ns);
    put_word(p, self->mult);
    const int d = std::min(self->depth.load(std::memory_order_relaxed), kMaxDepth);
    for (int i = 0; i < d; ++i) {
      OpenEvent* e = self->open_ev[i];
      if (e == nullptr || !e->traced || (writing == 2 && e == self->closing)) continue;
      crash_string(self, e->name);
      std::uint32_t id = 0;
      char* const slot = self->emergency + kAnchorSize + static_cast<std::size_t>(i) * kSlot;
      if (e->backend) {
        put_backend(slot, e->name, e->start, now, sig, self->anchor_ticks);
        continue;
      }
      const ArgWriter& a = *e->args;
      for (int k = 0, n = ArgAccess::count(a); k < n; ++k) {
        crash_string(self, ArgAccess::name(a, k));
        if (ArgAccess::kind(a, k) == ArgWriter::kLabel)
          crash_string(self, reinterpret_cast<const char*>(ArgAccess::value(a, k)));
      }
      id = known_signature(self, *e);
      if (id == 0 && crash_room(self, kSigSize))
        self->cur += put_signature(self, self->cur, *e, &id);
      const std::size_t at = put_api(slot, *e, id, now, -1, sig, self->anchor_ticks, nullptr);
      // The backend call folded into it, after it (where its own slot used to put it): still
      // open (it ends now, by the signal) or complete (logged when it ended, before).
      const std::uint8_t child = e->child;
      if (child == detail::kChildOpen || child == detail::kChildDone) {
        crash_string(self, e->child_name);
        const bool done = child == detail::kChildDone;
        put_backend(slot + at, e->child_name, e->child_start, done ? e->child_end : now,
                    done ? 0 : sig, self->anchor_ticks);
      }
    }
  }
  if (!g_binary) finish_log();
}

void on_fatal_signal(int sig, siginfo_t* info, void* uc) {
  const int saved_errno = errno;
  if (!g_in_crash.exchange(true)) crash_flush(sig);
  const struct sigaction& old = g_old_action[sig];
  if (old.sa_handler == SIG_DFL) {
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    raise(sig);  // blocked until this handler returns, then the default action
  } else if (old.sa_handler == SIG_IGN) {
    if (info && info->si_code > 0) {  // a fault cannot be ignored: let it recur with the default
      struct sigaction dfl = {};
      dfl.sa_handler = SIG_DFL;
      sigaction(sig, &dfl, nullptr);
    }
  } else if (old.sa_flags & SA_SIGINFO) {
    old.sa_sigaction(sig, info, uc);
  } else {
    old.sa_handler(sig);
  }
  errno = saved_errno;
}

void install_signal_handlers() {
  for (int sig : kFatalSignals) {
    struct sigaction sa = {};
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &g_old_action[sig]) != 0) g_old_action[sig].sa_handler = SIG_DFL;
  }
}

// ---------------------------------------------------------------------------------------------
// fork.

void before_fork() { pthread_mutex_lock(&g_mu); }
void after_fork_parent() { pthread_mutex_unlock(&g_mu); }
void after_fork_child() {
  TraceFile& f = g_file;
  for (int i = 0; i < f.nseg; ++i) munmap(f.seg[i].base, f.seg[i].len);
  if (f.open) ::close(f.fd);
  f.fd = -1;
  f.open = false;
  f.failed = false;
  f.growing = f.grow_requested = f.grower_running = f.grower_failed = false;
  f.nseg = f.cur_seg = 0;
  f.size = f.carved = 0;
  // The parent's grower may have been waiting: its record must not follow into the child.
  pthread_cond_init(&g_grow_cv, nullptr);
  pthread_cond_init(&g_grown_cv, nullptr);
  g_gen.fetch_add(1, std::memory_order_relaxed);
  g_closed.store(false, std::memory_order_relaxed);
  g_in_crash.store(false, std::memory_order_relaxed);
  g_finalized.store(false, std::memory_order_relaxed);
  g_dropped.store(0, std::memory_order_relaxed);
  ThreadState* self = t_state;
  for (ThreadState* t = g_threads.load(std::memory_order_relaxed); t; t = t->next) {
    if (t->stats)
      for (std::size_t i = 0; i < kFnCount; ++i) {
        t->stats[i].calls.store(0, std::memory_order_relaxed);
        t->stats[i].errors.store(0, std::memory_order_relaxed);
        t->stats[i].ticks.store(0, std::memory_order_relaxed);
      }
    t->depth.store(0, std::memory_order_relaxed);
    t->writing.store(0, std::memory_order_relaxed);
    t->writing_slot.store(nullptr, std::memory_order_relaxed);
    t->cur = t->end = t->emergency = nullptr;
    if (t != self) t->in_use.store(false, std::memory_order_relaxed);  // its thread is gone
  }
  pthread_mutex_unlock(&g_mu);
}

// ---------------------------------------------------------------------------------------------
// The decision.

int decide() {
  Locked lock;
  int s = detail::g_state.load(std::memory_order_relaxed);
  if (s != 0) return s;
  const char* path = settings::text(settings::Id::kTrace);
  const bool trace = path != nullptr;
  const bool stats = settings::flag(settings::Id::kStats, settings_warn);
  if (!trace && !stats) {
    detail::g_state.store(1, std::memory_order_release);
    ::torchada::detail::refresh_fast_runtime();
    return 1;
  }
  if (pthread_key_create(&g_key, release_thread) != 0) {
    TORCHADA_LOG(kWarn, "TORCHADA_TRACE/TORCHADA_STATS: no thread key; tracing is off");
    detail::g_state.store(1, std::memory_order_release);
    ::torchada::detail::refresh_fast_runtime();
    return 1;
  }
  init_clock();
  g_stats_on.store(stats, std::memory_order_relaxed);
  bool traced = false;
  if (trace) {
    // Absolute: the files are opened again at exit, after the program may have changed directory.
    char cwd[PATH_MAX];
    const bool relative = path[0] != '/' && getcwd(cwd, sizeof cwd) != nullptr;
    const int len = std::snprintf(g_file.base_path, sizeof g_file.base_path, "%s%s%s",
                                  relative ? cwd : "", relative ? "/" : "", path);
    if (len < 0 || static_cast<std::size_t>(len) >= sizeof g_file.base_path) {
      TORCHADA_LOG(kWarn, "TORCHADA_TRACE: path too long; tracing is off");
    } else {
      const std::size_t n = std::strlen(path), ext = sizeof lg::kExtension - 1;
      g_binary = n > ext && std::strcmp(path + n - ext, lg::kExtension) == 0;
      // json (0) or binary (1); unset or malformed: what the file's name says.
      g_binary = settings::word(settings::Id::kTraceFormat, g_binary ? 1 : 0, settings_warn) == 1;
      const auto cap_mb = static_cast<std::size_t>(settings::integer(
          settings::Id::kTraceMaxMb, static_cast<long long>(kDefaultCapMb), settings_warn));
      g_file.cap = cap_mb << 20;
      g_file.gen = g_gen.load(std::memory_order_relaxed);
      traced = open_file();
      g_file.failed = !traced;
    }
  }
  if (!traced && !stats) {
    detail::g_state.store(1, std::memory_order_release);
    ::torchada::detail::refresh_fast_runtime();
    return 1;
  }
  g_trace_on.store(traced, std::memory_order_relaxed);
  if (traced) {
    syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
    install_signal_handlers();
  }
  if (!g_atfork_done) {
    g_atfork_done = true;
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  }
  detail::g_state.store(2, std::memory_order_release);
  return 2;
}

// ---------------------------------------------------------------------------------------------
// Exit.

lg::Piece g_pieces[kMaxSegments];

// Once no thread writes any more: the JSON file from this process's log (written as FILE.part,
// then renamed), and the log removed. Also run by a fatal signal's handler: no lock, no malloc.
bool finish_log() {
  TraceFile& f = g_file;
  if (!f.open || f.gen != g_gen.load(std::memory_order_relaxed) || f.nseg == 0) return false;
  if (g_finalized.exchange(true)) return false;
  int n = 0;
  for (; n < f.nseg && f.seg[n].off < f.carved; ++n)
    g_pieces[n] = {f.seg[n].base, std::min(f.seg[n].len, f.carved - f.seg[n].off)};
  char part[sizeof f.json_path + 8];
  const std::size_t len = strnlen(f.json_path, sizeof f.json_path);
  std::memcpy(part, f.json_path, len);
  std::memcpy(part + len, ".part", 6);
  const int fd = ::open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const lg::Result r = lg::to_json(g_pieces, n, fd, f.cap);
  const bool ok = ::close(fd) == 0 && r.ok && ::rename(part, f.json_path) == 0;
  if (!ok) {
    ::unlink(part);
    return false;  // the log stays: `torchada-trace convert` may do better
  }
  ::unlink(f.path);
  g_dropped.fetch_add(r.dropped, std::memory_order_relaxed);
  return true;
}

// JSON: the logs this process's forked children left (ended by _exit): their names follow FILE's
// per-pid pattern, no process holds their lock, and their header names this process as parent.
void convert_children_logs() {
  TraceFile& f = g_file;
  char dir[PATH_MAX];
  const char* slash = std::strrchr(f.base_path, '/');
  const char* leaf = slash ? slash + 1 : f.base_path;
  std::snprintf(dir, sizeof dir, "%.*s", slash ? static_cast<int>(slash - f.base_path) : 1,
                slash ? f.base_path : ".");
  if (slash == f.base_path) std::snprintf(dir, sizeof dir, "/");
  const char* dot = std::strrchr(leaf, '.');
  const std::size_t stem =
      dot && dot != leaf ? static_cast<std::size_t>(dot - leaf) : std::strlen(leaf);
  const char* ext = dot && dot != leaf ? dot : "";
  DIR* d = opendir(dir);
  if (d == nullptr) return;
  const int self = static_cast<int>(getpid());
  while (const dirent* e = readdir(d)) {
    // <stem>.<digits><ext>.tdtrace
    const char* p = e->d_name;
    if (std::strncmp(p, leaf, stem) != 0 || p[stem] != '.') continue;
    p += stem + 1;
    if (*p < '0' || *p > '9') continue;
    while (*p >= '0' && *p <= '9') ++p;
    if (std::strncmp(p, ext, std::strlen(ext)) != 0 ||
        std::strcmp(p + std::strlen(ext), lg::kExtension) != 0)
      continue;
    char path[PATH_MAX + 256], json[PATH_MAX + 256];
    std::snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    lg::FileHeader h = {};
    const bool mine = flock(fd, LOCK_EX | LOCK_NB) == 0 &&
                      ::pread(fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h) &&
                      h.magic == lg::kMagic && h.ppid == self;
    if (mine && lg::json_path_for(path, json, sizeof json)) {
      const lg::Result r = lg::convert_file(path, json, f.cap);
      if (r.ok) ::unlink(path);
      if (r.dropped)
        TORCHADA_LOG(kWarn, "TORCHADA_TRACE: %llu event(s) of %s were not written (size limit)",
                     static_cast<unsigned long long>(r.dropped), json);
    }
    ::close(fd);
  }
  closedir(d);
}

void print_stats();

__attribute__((destructor)) void finish_at_exit() {
  if (detail::g_state.load(std::memory_order_acquire) != 2) return;
  if (g_trace_on.load(std::memory_order_relaxed)) {
    g_closed.store(true, std::memory_order_relaxed);
    const bool quiet = quiesce_writers(t_state);
    {
      Locked lock;
      TraceFile& f = g_file;
      pthread_cond_broadcast(&g_grow_cv);  // the grower sees g_closed and ends
      while (f.growing) pthread_cond_wait(&g_grown_cv, &g_mu);
      if (f.open && f.gen == g_gen.load(std::memory_order_relaxed) && f.nseg > 0) {
        f.failed = true;  // no more chunks
        if (g_binary) {
          if (ftruncate(f.fd, static_cast<off_t>(f.carved)) == 0) f.size = f.carved;
        } else if (!finish_log()) {
          TORCHADA_LOG(kWarn, "TORCHADA_TRACE: cannot write %s; the log %s stays", f.json_path,
                       f.path);
        }
      }
      if (!g_binary) convert_children_logs();
    }
    if (!quiet)
      TORCHADA_LOG(kWarn,
                   "TORCHADA_TRACE: a thread did not finish writing an event at exit; "
                   "its event is left out");
    if (std::uint64_t n = g_dropped.load(std::memory_order_relaxed))
      TORCHADA_LOG(kWarn, "TORCHADA_TRACE: %llu event(s) were not written (size limit or nesting)",
                   static_cast<unsigned long long>(n));
  }
  if (g_stats_on.load(std::memory_order_relaxed)) print_stats();
}

// ---------------------------------------------------------------------------------------------
// Statistics.

void print_stats() {
  struct Row {
    std::size_t fn;
    std::uint64_t calls, errors, ticks;
  };
  std::vector<Row> rows;
  std::uint64_t calls = 0, errors = 0;
  for (std::size_t i = 0; i < kFnCount; ++i) {
    Row r{i, 0, 0, 0};
    for (ThreadState* t = g_threads.load(std::memory_order_acquire); t; t = t->next) {
      if (t->stats == nullptr) continue;
      r.calls += t->stats[i].calls.load(std::memory_order_relaxed);
      r.errors += t->stats[i].errors.load(std::memory_order_relaxed);
      r.ticks += t->stats[i].ticks.load(std::memory_order_relaxed);
    }
    if (r.calls == 0) continue;
    calls += r.calls;
    errors += r.errors;
    rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.ticks != b.ticks ? a.ticks > b.ticks : a.fn < b.fn;
  });
  const std::uint64_t mult = g_mult.load(std::memory_order_relaxed);
  auto ns = [mult](std::uint64_t tk) {
    return static_cast<double>((static_cast<unsigned __int128>(tk) * mult) >> 32);
  };
  ::torchada::log(
      LogLevel::kInfo,
      "call statistics (TORCHADA_STATS): %zu function(s), %llu call(s), %llu error(s), by total "
      "time",
      rows.size(), static_cast<unsigned long long>(calls), static_cast<unsigned long long>(errors));
  // By library first: which of NVIDIA's libraries the program leans on.
  struct Library {
    const char* name;
    std::uint64_t calls, errors, ticks;
  };
  Library libs[] = {{"CUDA runtime", 0, 0, 0},
                    {"CUDA driver", 0, 0, 0},
                    {"cuBLAS", 0, 0, 0},
                    {"cuBLASLt", 0, 0, 0},
                    {"NCCL", 0, 0, 0}};
  for (const Row& r : rows) {
    const char* n = kFnNames[r.fn];
    const std::size_t lib =
        std::strncmp(n, "cublasLt", 8) == 0                                      ? 3
        : std::strncmp(n, "cublas", 6) == 0                                      ? 2
        : (std::strncmp(n, "nccl", 4) == 0 || std::strncmp(n, "pnccl", 5) == 0)  ? 4
        : (std::strncmp(n, "cuda", 4) == 0 || std::strncmp(n, "__cuda", 6) == 0) ? 0
                                                                                 : 1;
    libs[lib].calls += r.calls;
    libs[lib].errors += r.errors;
    libs[lib].ticks += r.ticks;
  }
  ::torchada::log(LogLevel::kInfo, "  %-44s %12s %10s %14s", "library", "calls", "errors",
                  "total ms");
  for (const Library& l : libs)
    if (l.calls)
      ::torchada::log(LogLevel::kInfo, "  %-44s %12llu %10llu %14.3f", l.name,
                      static_cast<unsigned long long>(l.calls),
                      static_cast<unsigned long long>(l.errors), ns(l.ticks) / 1e6);
  ::torchada::log(LogLevel::kInfo, "  %-44s %12s %10s %14s %12s", "function", "calls", "errors",
                  "total ms", "mean us");
  for (const Row& r : rows) {
    const double total = ns(r.ticks);
    ::torchada::log(LogLevel::kInfo, "  %-44s %12llu %10llu %14.3f %12.3f", kFnNames[r.fn],
                    static_cast<unsigned long long>(r.calls),
                    static_cast<unsigned long long>(r.errors), total / 1e6,
                    total / 1e3 / static_cast<double>(r.calls));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// API.

bool enabled_slow() {
  int s = detail::g_state.load(std::memory_order_acquire);
  if (s == 0) s = decide();
  return s == 2;
}

// The bytes are kept now (the string may not outlive the call), at most what the summary could
// show.
void ArgWriter::str(const char* name, const char* v) {
  if (!on_) return;
  if (v == nullptr) {
    add(name, kNull, 0);
    return;
  }
  if (n_ == kMaxArgs) {
    truncated_ = true;
    return;
  }
  const std::size_t room = kStrBytes - str_len_;
  std::size_t n = strnlen(v, room + 1);
  const bool cut = n > room;
  if (cut) n = room;
  std::memcpy(str_ + str_len_, v, n);
  add(name, kStr, (cut ? lg::kStrCut : 0) | std::uint64_t{str_len_} << 8 | n);
  str_len_ = static_cast<std::uint8_t>(str_len_ + n);
}

Span::Span(Fn fn) : fn_(fn) {
  ts_ = current();
  ev_.traced = false;
  ev_.args = &args_;
  ev_.backend = false;
  ev_.child = detail::kNoChild;
  if (ts_ == nullptr) {
    ev_.start = 0;
    return;
  }
  gen_ = ts_->gen;
  ev_.start = ticks();
  if (__builtin_expect(ev_.start > ts_->reanchor_after, 0) &&
      ts_->depth.load(std::memory_order_relaxed) == 0) {
    reanchor(ts_);
    if (g_trace_on.load(std::memory_order_relaxed)) log_anchor(ts_);
  }
  if (g_trace_on.load(std::memory_order_relaxed)) {
    ev_.name = kFnNames[static_cast<std::size_t>(fn)];
    open_event(ts_, &ev_);
  }
  ArgAccess::reset(args_, ev_.traced);
}

void Span::finish(int result) {
  if (done_) return;
  done_ = true;
  if (ts_ == nullptr) return;
  // A forwarder's backend call that ended it gives the end (BackendSpan::kEndsCall).
  const std::int64_t end =
      ev_.child == detail::kChildDone && ev_.child_ends_call ? ev_.child_end : ticks();
  if (StatCell* c = ts_->stats) {
    StatCell& s = c[static_cast<std::size_t>(fn_)];
    s.calls.store(s.calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (result != 0)
      s.errors.store(s.errors.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.ticks.store(
        s.ticks.load(std::memory_order_relaxed) + static_cast<std::uint64_t>(end - ev_.start),
        std::memory_order_relaxed);
  }
  if (ev_.traced) close_event(ts_, gen_, &ev_, end, result);
}

BackendSpan::BackendSpan(const char* name, Position position) {
  parent_ = nullptr;
  ev_.traced = false;
  ts_ = nullptr;
  if (!g_trace_on.load(std::memory_order_relaxed)) return;
  ts_ = current();
  if (ts_ == nullptr) return;
  gen_ = ts_->gen;
  ev_.name = name;
  // Directly inside a traced api call that made no backend call yet (a forwarder): kept in its
  // event, so the two are logged with one record when the call ends. Not pushed: the signal
  // handler finds it through its parent.
  const int d = ts_->depth.load(std::memory_order_relaxed);
  if (d > 0) {
    OpenEvent* const p = ts_->open_ev[d - 1];
    if (!p->backend && p->child == detail::kNoChild) {
      p->child_name = name;
      p->child_ends_call = position == kEndsCall;
      p->child_start = ticks();
      std::atomic_signal_fence(std::memory_order_seq_cst);
      p->child = detail::kChildOpen;
      parent_ = p;
      return;
    }
  }
  ev_.args = nullptr;
  ev_.backend = true;
  ev_.child = detail::kNoChild;
  ev_.start = ticks();
  open_event(ts_, &ev_);
}

BackendSpan::~BackendSpan() {
  const std::int64_t end = parent_ != nullptr || ev_.traced ? ticks() : 0;
  if (parent_ != nullptr) {
    if (__builtin_expect(parent_->child == detail::kChildOpen, 1)) {
      parent_->child_end = end;
      std::atomic_signal_fence(std::memory_order_seq_cst);
      parent_->child = detail::kChildDone;
      return;
    }
    // Its Span ended first (kChildOrphan): an event of its own, as when it was not folded.
    ev_.backend = true;
    ev_.child = detail::kNoChild;
    ev_.start = parent_->child_start;
    ev_.traced = true;
    close_orphan(ts_, gen_, &ev_, end);
    return;
  }
  if (!ev_.traced) return;
  close_event(ts_, gen_, &ev_, end, 0);
}

}  // namespace torchada::trace
