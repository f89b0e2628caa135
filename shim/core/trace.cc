// Tracing and statistics of the intercepted calls: see trace.h for what the user sees.
//
// Layout of the trace file: "[" + the process_name event, then events each starting with ",\n",
// then spaces, and ']' as the last byte. The file is mapped in segments (1 MiB doubling to 64 MiB,
// extended with pwrite of spaces so it never holds NUL bytes and a full disk fails the pwrite, not
// a store through the mapping). Segments after the first are prepared by a "torchada-trace"
// thread (started once half a segment is used) while the callers still carve from the spare space,
// so the page cache behind the events is not paid for on the calling thread; a caller grows the
// file itself only when that thread falls behind. Each thread takes chunks under g_mu (16 KiB
// first, then 64 KiB) and, when a call ends, reserves kSlot bytes where its chunk's text ends,
// copies the event there and gives the unused bytes back: a thread's events lie back to back in the
// order they end (a parent after its children), with no padding between them. The bytes past the
// text are spaces, so the file is valid JSON except while an event is being copied (tens of
// nanoseconds). Each thread also sets aside kMaxDepth slots (spaces unless used) for the events a
// fatal signal finds open. What the file costs is mostly the kernel's: ~0.6 ns per byte on tmpfs
// (writing the spaces, mapping the pages), ~190 bytes per call, see bench/shim/trace_bench.cc.
//
// Exit: the library's destructor stops writers (g_closed + an asymmetric barrier, then waits for
// the few threads copying an event), squeezes the spaces out of the file (finding events by the
// newline each starts with, copying runs of adjacent events) and truncates it; calls made after
// that (late destructors) are counted as dropped.
// Fatal signals: the same quiescing, then the crashing thread's open calls are written as complete
// events ("signal":"SIGSEGV"), then the previous handler runs (or the default action).
// fork: the child forgets the parent's file and opens its own at its first traced call.
#include "core/trace.h"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "core/env.h"
#include "core/log.h"

namespace torchada::trace {

namespace detail {
std::atomic<int> g_state{0};

// The members of ArgWriter the event writer reads.
class ArgAccess {
 public:
  static const char* data(const ArgWriter& a) { return a.buf_; }
  static int size(const ArgWriter& a) { return a.len_; }
  static bool truncated(const ArgWriter& a) { return a.truncated_; }
  static void reset(ArgWriter& a, bool on) {
    a.len_ = 0;
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

// One per thread that made a traced call; never freed, reused after its thread exits.
struct alignas(64) ThreadState {
  ThreadState* next;                // registry link, set once before publication
  std::atomic<bool> in_use;         // owned by a live thread
  std::atomic<unsigned> writing;    // copying an event into the file now
  std::atomic<char*> writing_slot;  // where (read by other threads' exit and signal handlers)
  std::atomic<int> depth;           // open events
  OpenEvent* open_ev[16];           // their records (read by this thread's signal handler)
  char* emergency;                  // kMaxDepth slots for a fatal signal's open events
  OpenEvent* closing;               // the event close_event is writing
  std::uint32_t gen;                // g_gen this state was set up for
  std::uint32_t chunks;             // chunks taken in this generation
  char* cur;                        // free bytes of the current chunk: [cur, end), spaces
  char* end;
  std::int64_t anchor_ticks;  // clock conversion: ns = anchor_ns + (t - anchor) * mult
  std::int64_t anchor_ns;
  std::int64_t reanchor_after;  // ticks
  std::uint64_t mult;           // ns per tick, 32.32 fixed point
  StatCell* stats;              // kFnCount cells when statistics are on
  int pid;
  int tid;
  std::uint32_t prefix_len;
  char prefix[64];       // ",\n{"ph":"X","pid":P,"tid":T,"name":"" then spaces
  std::uint64_t ts_sec;  // the whole seconds of the last timestamp written, and their digits
  std::uint32_t ts_sec_len;
  char ts_sec_text[24];
};
}  // namespace detail

namespace {

using detail::ArgAccess;
using detail::OpenEvent;
using detail::StatCell;
using detail::ThreadState;

constexpr int kMaxDepth = 16;
constexpr std::size_t kSlot = 448;  // bytes reserved per event: its largest size, see kMaxEvent
constexpr std::size_t kFirstChunk = 16 << 10;  // the signal slots (7 KiB) and some events
constexpr std::size_t kChunk = 64 << 10;
constexpr std::size_t kFirstSegment = 1 << 20;
constexpr std::size_t kMaxSegment = 64 << 20;
constexpr int kMaxSegments = 8192;
constexpr std::size_t kDefaultCapMb = 2048;
constexpr std::uint32_t kMaxName = 64;  // function names are cut (escaped) to this many bytes
constexpr std::int64_t kReanchorNs = 100 * 1000 * 1000;
#ifdef MADV_POPULATE_WRITE
constexpr int kMadvPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kMadvPopulateWrite = 23;  // Linux 5.14; older kernels answer EINVAL
#endif

// The largest event: prefix, name, `","cat":"backend","ts":`, ts, `,"dur":`, dur,
// `,"args":{"result":`, result, ',' args, `,"truncated":true`, `,"signal":"SIGSEGV"`, `}}`.
constexpr std::size_t kMaxEvent =
    64 + kMaxName + 23 + 24 + 7 + 24 + 18 + 11 + 1 + ArgWriter::kCapacity + 17 + 19 + 2;
static_assert(kMaxEvent <= kSlot, "an event must fit its slot");
static_assert(kMaxDepth == sizeof(ThreadState::open_ev) / sizeof(OpenEvent*));
static_assert(kMaxDepth * kSlot <= kFirstChunk, "the signal slots fit a chunk");

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
std::atomic<bool> g_closed{false};    // no more event writes (exit, fatal signal)
std::atomic<std::uint64_t> g_dropped{0};
std::atomic<ThreadState*> g_threads{nullptr};
std::atomic<bool> g_use_tsc{false};
std::atomic<std::uint64_t> g_mult{0};  // latest ns-per-tick estimate, 32.32
std::int64_t g_origin_ticks;           // calibration origin (set once, under g_mu)
std::int64_t g_origin_ns;
std::uint8_t g_name_len[kFnCount];
pthread_key_t g_key;
bool g_atfork_done;
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
  std::size_t size;    // file size; byte size-1 is ']'
  std::size_t carved;  // [0, carved) is the header, handed out, or skipped
  std::size_t cap;
  char base_path[PATH_MAX];
  char path[PATH_MAX + 16];
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
  const char* want = std::getenv("TORCHADA_TRACE_CLOCK");
  if (want && std::strcmp(want, "monotonic") == 0)
    tsc = false;
  else if (want && std::strcmp(want, "tsc") == 0)
    tsc = true;
  else
    tsc = kernel_clock_is_tsc();
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

inline std::int64_t to_ns(const ThreadState* t, std::int64_t tk) {
  __int128 d = static_cast<__int128>(tk - t->anchor_ticks) * static_cast<__int128>(t->mult);
  return t->anchor_ns + static_cast<std::int64_t>(d >> 32);
}

// ---------------------------------------------------------------------------------------------
// Text. Every writer is bounded by its caller's buffer and async-signal-safe.

const char kDigits[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

inline char* put(char* p, const char* s, std::size_t n) {
  std::memcpy(p, s, n);
  return p + n;
}
template <std::size_t N>
inline char* put_lit(char* p, const char (&s)[N]) {
  return put(p, s, N - 1);
}

// Decimal digits of v (1 for 0).
inline int digits10(std::uint64_t v) {
  static constexpr std::uint64_t kPow10[20] = {1ull,
                                               10ull,
                                               100ull,
                                               1000ull,
                                               10000ull,
                                               100000ull,
                                               1000000ull,
                                               10000000ull,
                                               100000000ull,
                                               1000000000ull,
                                               10000000000ull,
                                               100000000000ull,
                                               1000000000000ull,
                                               10000000000000ull,
                                               100000000000000ull,
                                               1000000000000000ull,
                                               10000000000000000ull,
                                               100000000000000000ull,
                                               1000000000000000000ull,
                                               10000000000000000000ull};
  const int bits = 64 - __builtin_clzll(v | 1);
  const int n = (bits * 1233) >> 12;  // floor(log10(2^bits)), at most one too small
  return n + (v >= kPow10[n] ? 1 : 0) + (v == 0 ? 1 : 0);
}

// Exactly eight digits of v < 10^8: four independent table lookups.
inline void put8(char* p, std::uint32_t v) {
  const std::uint32_t hi = v / 10000, lo = v % 10000;
  std::memcpy(p, kDigits + (hi / 100) * 2, 2);
  std::memcpy(p + 2, kDigits + (hi % 100) * 2, 2);
  std::memcpy(p + 4, kDigits + (lo / 100) * 2, 2);
  std::memcpy(p + 6, kDigits + (lo % 100) * 2, 2);
}

// Written from the last digit back, eight at a time, in place.
inline char* put_u64(char* p, std::uint64_t v) {
  if (v < 10) {  // results, small counts
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  char* const end = p + digits10(v);
  char* q = end;
  while (v >= 100000000) {
    q -= 8;
    put8(q, static_cast<std::uint32_t>(v % 100000000));
    v /= 100000000;
  }
  auto w = static_cast<std::uint32_t>(v);
  while (w >= 100) {
    q -= 2;
    std::memcpy(q, kDigits + (w % 100) * 2, 2);
    w /= 100;
  }
  if (w >= 10) {
    q -= 2;
    std::memcpy(q, kDigits + w * 2, 2);
  } else {
    *--q = static_cast<char>('0' + w);
  }
  return end;
}

inline char* put_i64(char* p, std::int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return put_u64(p, 0 - static_cast<std::uint64_t>(v));
  }
  return put_u64(p, static_cast<std::uint64_t>(v));
}

// Nanoseconds as microseconds with three decimals ("12.345"); negative values clamp to 0.
inline char* put_us(char* p, std::int64_t ns) {
  std::uint64_t v = ns > 0 ? static_cast<std::uint64_t>(ns) : 0;
  p = put_u64(p, v / 1000);
  unsigned f = static_cast<unsigned>(v % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + f / 100);
  std::memcpy(p + 2, kDigits + (f % 100) * 2, 2);
  return p + 4;
}

inline char* put_hex(char* p, std::uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  *p++ = '0';
  *p++ = 'x';
  const int n = (64 - __builtin_clzll(v | 1) + 3) / 4;
  char* q = p + n;
  for (int i = 0; i < n; ++i, v >>= 4) *--q = kHex[v & 0xf];
  return p + n;
}

// Bytes a JSON string may hold as they are: printable ASCII but '"' and '\\'.
struct PlainTable {
  bool plain[256];
  constexpr PlainTable() : plain() {
    for (int c = 0x20; c < 0x7f; ++c) plain[c] = c != '"' && c != '\\';
  }
};
constexpr PlainTable kPlain;

// JSON string content of `s` (at most `max_in` bytes of it), escaped, into [p, end). Bytes outside
// printable ASCII become '?' or \u00XX, so the file is plain ASCII. Stops before overflowing;
// `*complete` says whether all of the input was written.
// The leading plain bytes of s, at most `limit` (stores stay below p + limit), copied sixteen at a
// time; how many. Loads may read past the string's end, never into another page (so neither
// AddressSanitizer nor ThreadSanitizer looks at them), and stores may leave bytes of it past the
// returned count: only for scratch buffers (ArgWriter).
__attribute__((no_sanitize_address, no_sanitize_thread)) inline std::size_t plain_run16(
    char* p, const char* s, std::size_t limit) {
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i below = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  while (i + 16 <= limit && (reinterpret_cast<std::uintptr_t>(s + i) & 4095) <= 4096 - 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    // Plain: 0x20 <= c < 0x7f (signed compares: bytes >= 0x80 are negative) and not '"' or '\\'.
    const __m128i printable = _mm_andnot_si128(_mm_cmplt_epi8(v, below), _mm_cmplt_epi8(v, del));
    const __m128i special = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
    const unsigned plain =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_andnot_si128(special, printable)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + i), v);
    if (plain != 0xffff) return i + static_cast<std::size_t>(__builtin_ctz(~plain));
    i += 16;
  }
#else
  (void)p;
  (void)s;
  (void)limit;
#endif
  return i;
}

template <bool kScratch = false>
char* put_escaped(char* p, char* end, const char* s, std::size_t max_in, bool* complete) {
  // Fast path: a run of plain bytes (names, enum labels are nothing else), one pass, no strlen.
  std::size_t i = 0;
  const std::size_t room = static_cast<std::size_t>(end - p);
  const std::size_t fast = max_in < room ? max_in : room;
  if (kScratch) i = plain_run16(p, s, fast);
  while (i < fast && kPlain.plain[static_cast<unsigned char>(s[i])]) {
    p[i] = s[i];
    ++i;
  }
  p += i;
  for (; i < max_in && s[i] != '\0'; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (kPlain.plain[c]) {  // the common case
      if (end - p < 1) break;
      *p++ = static_cast<char>(c);
    } else if (c == '"' || c == '\\') {
      if (end - p < 2) break;
      *p++ = '\\';
      *p++ = static_cast<char>(c);
    } else if (c < 0x20) {
      if (end - p < 6) break;
      p = put_lit(p, "\\u00");
      *p++ = "0123456789abcdef"[c >> 4];
      *p++ = "0123456789abcdef"[c & 0xf];
    } else {
      if (end - p < 1) break;
      *p++ = c < 0x7f ? static_cast<char>(c) : '?';
    }
  }
  // s[i] is readable: either i < max_in, or the first max_in bytes held no NUL.
  if (complete) *complete = s[i] == '\0';
  return p;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
  }
  return "signal";
}

// A timestamp (ns) as microseconds with three decimals. Timestamps of one thread share their
// leading digits for a second at a time: those are formatted once per second.
inline char* put_ts(ThreadState* t, char* p, std::int64_t ns) {
  if (ns < 1000000000) return put_us(p, ns);
  const auto v = static_cast<std::uint64_t>(ns);
  const std::uint64_t sec = v / 1000000000;
  const auto rest = static_cast<std::uint32_t>(v % 1000000000);  // 9 digits: 6 of us, 3 of ns
  if (sec != t->ts_sec || t->ts_sec_len == 0) {
    t->ts_sec = sec;
    t->ts_sec_len = static_cast<std::uint32_t>(put_u64(t->ts_sec_text, sec) - t->ts_sec_text);
  }
  p = put(p, t->ts_sec_text, t->ts_sec_len);
  const std::uint32_t us = rest / 1000, frac = rest % 1000;
  std::memcpy(p, kDigits + (us / 10000) * 2, 2);
  std::memcpy(p + 2, kDigits + (us / 100 % 100) * 2, 2);
  std::memcpy(p + 4, kDigits + (us % 100) * 2, 2);
  p[6] = '.';
  p[7] = static_cast<char>('0' + frac / 100);
  std::memcpy(p + 8, kDigits + (frac % 100) * 2, 2);
  return p + 10;
}

// Writes the complete event `e` ending at `end_ticks` into the slot `s`; returns its length.
std::size_t format_event(ThreadState* t, char* const s, const OpenEvent& e, std::int64_t end_ticks,
                         int result, int sig) {
  // The prefix is padded with spaces: one fixed-size copy, the rest is overwritten or stays blank.
  std::memcpy(s, t->prefix, sizeof t->prefix);
  char* p = put(s + t->prefix_len, e.name, e.name_len);
  if (e.backend)
    p = put_lit(p, "\",\"cat\":\"backend\",\"ts\":");
  else
    p = put_lit(p, "\",\"cat\":\"api\",\"ts\":");
  std::int64_t start_ns = to_ns(t, e.start);
  // A signal handler may have interrupted put_ts itself: it does not use the cache.
  p = sig == 0 ? put_ts(t, p, start_ns) : put_us(p, start_ns);
  p = put_lit(p, ",\"dur\":");
  p = put_us(p, to_ns(t, end_ticks) - start_ns);
  bool any = false;
  if (!e.backend) {
    p = put_lit(p, ",\"args\":{\"result\":");
    p = put_i64(p, result);
    any = true;
    if (e.args && ArgAccess::size(*e.args) > 0) {
      *p++ = ',';
      p = put(p, ArgAccess::data(*e.args), static_cast<std::size_t>(ArgAccess::size(*e.args)));
    }
    if (e.args && ArgAccess::truncated(*e.args)) p = put_lit(p, ",\"truncated\":true");
  }
  if (sig != 0) {
    p = any ? put_lit(p, ",\"signal\":\"") : put_lit(p, ",\"args\":{\"signal\":\"");
    any = true;
    const char* n = signal_name(sig);
    p = put(p, n, std::strlen(n));
    *p++ = '"';
  }
  if (any) *p++ = '}';
  *p++ = '}';
  return static_cast<std::size_t>(p - s);
}

// ---------------------------------------------------------------------------------------------
// The file. Everything here runs under g_mu.

void spaces_to_file(int fd, std::size_t off, std::size_t len, bool* ok) {
  char block[4096];
  std::memset(block, ' ', sizeof block);
  iovec iov[16];
  for (auto& v : iov) v = {block, sizeof block};
  while (len > 0) {
    std::size_t want = std::min(len, sizeof block * 16);
    int n = static_cast<int>((want + sizeof block - 1) / sizeof block);
    iov[n - 1].iov_len = want - sizeof block * static_cast<std::size_t>(n - 1);
    ssize_t w = ::pwritev(fd, iov, n, static_cast<off_t>(off));
    iov[n - 1].iov_len = sizeof block;
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      *ok = false;
      return;
    }
    off += static_cast<std::size_t>(w);
    len -= static_cast<std::size_t>(w);
  }
  *ok = true;
}

bool truncate_file(int fd, std::size_t size) {
  return ftruncate(fd, static_cast<off_t>(size)) == 0;
}

// Growth, in three steps so that the slow middle one (writing spaces, mapping, filling page tables:
// most of the cost of an event's bytes) runs without g_mu, usually on the grower thread while the
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
  len = std::max(len, (need + 1 + page - 1) / page * page);
  if (f.size + len > f.cap) {
    len = f.cap > f.size ? (f.cap - f.size) / page * page : 0;
    if (len < need + 1 || len == 0) return false;
  }
  *g = {f.fd, f.gen, f.size, len};
  return true;
}

// Without g_mu: spaces appended to the file (it stays valid JSON: whitespace after the ']'), then
// mapped with writable page tables (MADV_POPULATE_WRITE, Linux 5.14; else a write per page).
char* prepare_growth(const Growth& g) {
  bool ok = false;
  spaces_to_file(g.fd, g.off, g.len, &ok);
  if (!ok) return nullptr;
  void* m =
      mmap(nullptr, g.len, PROT_READ | PROT_WRITE, MAP_SHARED, g.fd, static_cast<off_t>(g.off));
  if (m == MAP_FAILED) return nullptr;
  char* base = static_cast<char*>(m);
  if (madvise(m, g.len, kMadvPopulateWrite) != 0) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    for (std::size_t i = 0; i < g.len; i += page) *static_cast<volatile char*>(base + i) = ' ';
  }
  return base;
}

// Under g_mu: the segment joins the file; ']' moves to its end.
void publish_growth(const Growth& g, char* base) {
  TraceFile& f = g_file;
  base[g.len - 1] = ']';
  if (f.nseg > 0) {
    Segment& last = f.seg[f.nseg - 1];
    last.base[last.len - 1] = ' ';
  }
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
// the last '.' of the last path component, unless that '.' starts the component).
bool make_paths(int pid, bool alternate) {
  TraceFile& f = g_file;
  int n;
  const char* slash = std::strrchr(f.base_path, '/');
  const char* leaf = slash ? slash + 1 : f.base_path;
  const char* dot = std::strrchr(leaf, '.');
  if (!alternate)
    n = std::snprintf(f.path, sizeof f.path, "%s", f.base_path);
  else if (dot == nullptr || dot == leaf)
    n = std::snprintf(f.path, sizeof f.path, "%s.%d", f.base_path, pid);
  else
    n = std::snprintf(f.path, sizeof f.path, "%.*s.%d%s", static_cast<int>(dot - f.base_path),
                      f.base_path, pid, dot);
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
  if (!truncate_file(fd, 0)) {
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
  // The first element: the process name.
  char* p = f.seg[0].base;
  p = put_lit(p, "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
  p = put_i64(p, pid);
  p = put_lit(p, ",\"tid\":");
  p = put_i64(p, pid);
  p = put_lit(p, ",\"args\":{\"name\":\"");
  char* name_end = p + 64;
  p = put_escaped(p, name_end, program_invocation_short_name, 64, nullptr);
  p = put_lit(p, "\"}}");
  f.carved = static_cast<std::size_t>(p - f.seg[0].base);
  TORCHADA_LOG(kInfo, "tracing to %s", f.path);
  return true;
}

// A chunk of at least kSlot bytes for `t`, or false (file cannot grow; event dropped).
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
    const std::size_t seg_end = s.off + s.len - (f.cur_seg == f.nseg - 1 ? 1 : 0);
    if (seg_end - f.carved >= want) break;
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
  // Less than half the last segment left: ask the grower for the next one.
  if (!f.growing && !f.grow_requested && (f.size - 1 - f.carved) < f.seg[f.nseg - 1].len / 2) {
    start_grower();
    if (f.grower_running) {
      f.grow_requested = true;
      pthread_cond_signal(&g_grow_cv);
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Threads.

// `n` bytes (at most a first chunk) of the calling thread's chunk, or null (file cannot grow).
char* reserve_bytes(ThreadState* t, std::size_t n) {
  if (static_cast<std::size_t>(t->end - t->cur) < n && !new_chunk(t)) return nullptr;
  if (static_cast<std::size_t>(t->end - t->cur) < n) return nullptr;
  char* s = t->cur;
  t->cur += n;
  return s;
}

char* reserve_slot(ThreadState* t) { return reserve_bytes(t, kSlot); }

// Pushes `e`; e->traced stays false when it cannot be traced (nesting too deep, closing).
inline void open_event(ThreadState* t, OpenEvent* e) {
  e->traced = false;
  const int d = t->depth.load(std::memory_order_relaxed);
  if (d >= kMaxDepth || g_closed.load(std::memory_order_relaxed)) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  e->traced = true;
  // The event is most likely copied here when the call ends: fetch its lines meanwhile.
  __builtin_prefetch(t->cur, 1);
  __builtin_prefetch(t->cur + 64, 1);
  __builtin_prefetch(t->cur + 128, 1);
  t->open_ev[d] = e;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->depth.store(d + 1, std::memory_order_relaxed);
}

// Writes the event of `e` at the end of its thread's chunk (its slot shrinks to the text, so
// the file holds no padding between a thread's events) and pops it. `writing` is 1 while the
// text is copied (a slot another thread's exit or signal handler blanks if it waits in vain, and
// this thread's own fatal-signal handler blanks and writes again), 2 once the event is complete
// but still on the stack (the handler leaves it alone).
inline void close_event(ThreadState* t, std::uint32_t gen, OpenEvent* e, std::int64_t end,
                        int result) {
  if (t->gen != gen) return;  // opened in the parent before a fork
  if (!g_closed.load(std::memory_order_relaxed)) {
    char* const s = reserve_slot(t);  // may take a chunk: before the copying starts
    if (s == nullptr) {
      g_dropped.fetch_add(1, std::memory_order_relaxed);
    } else {
      t->closing = e;
      t->writing_slot.store(s, std::memory_order_relaxed);
      t->writing.store(1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (!g_closed.load(std::memory_order_relaxed)) {
        const std::size_t len = format_event(t, s, *e, end, result, 0);
        t->cur = s + len;  // the last reservation: give the rest back
        std::atomic_signal_fence(std::memory_order_seq_cst);
        t->writing.store(2, std::memory_order_relaxed);
      }
      std::atomic_signal_fence(std::memory_order_seq_cst);
    }
  }
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

void write_thread_name(ThreadState* t) {
  char* s = reserve_slot(t);
  if (s == nullptr) return;
  char name[32] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) != 0 || name[0] == '\0')
    std::snprintf(name, sizeof name, "thread %d", t->tid);
  char* p = put_lit(s, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
  p = put_i64(p, t->pid);
  p = put_lit(p, ",\"tid\":");
  p = put_i64(p, t->tid);
  p = put_lit(p, ",\"args\":{\"name\":\"");
  p = put_escaped(p, p + 96, name, sizeof name, nullptr);
  p = put_lit(p, "\"}}");
  if (t->cur == s + kSlot) t->cur = p;
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
  if (t->gen != gen) {  // its chunk belongs to another generation's file
    t->cur = t->end = nullptr;
    t->chunks = 0;
  }
  t->gen = gen;
  t->depth.store(0, std::memory_order_relaxed);
  t->writing.store(0, std::memory_order_relaxed);
  t->writing_slot.store(nullptr, std::memory_order_relaxed);
  t->emergency = nullptr;
  t->pid = static_cast<int>(getpid());
  t->tid = static_cast<int>(syscall(SYS_gettid));
  std::memset(t->prefix, ' ', sizeof t->prefix);
  char* p = put_lit(t->prefix, ",\n{\"ph\":\"X\",\"pid\":");
  p = put_i64(p, t->pid);
  p = put_lit(p, ",\"tid\":");
  p = put_i64(p, t->tid);
  p = put_lit(p, ",\"name\":\"");
  t->prefix_len = static_cast<std::uint32_t>(p - t->prefix);
  reanchor(t);
  if (g_stats_on.load(std::memory_order_relaxed) && t->stats == nullptr)
    t->stats = new (std::nothrow) StatCell[kFnCount]();
  if (g_trace_on.load(std::memory_order_relaxed)) {
    write_thread_name(t);
    t->emergency = reserve_bytes(t, kMaxDepth * kSlot);
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

// After g_closed: every thread other than `self` finishes the event it is copying (bounded wait:
// ~100 ms, so that a writer preempted on a busy machine gets a core back); one that does not
// (stopped) gets that event blanked, and then false: the file must not be compacted, as that
// thread may still write the rest of its event where it was.
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
    // Stopped while copying an event: blank it (stopped after, the event is complete).
    if (t->writing.load(std::memory_order_acquire) != 1) continue;
    if (char* s = t->writing_slot.load(std::memory_order_relaxed)) std::memset(s, ' ', kSlot);
    quiet = false;
  }
  return quiet;
}

struct sigaction g_old_action[65];
const int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
std::atomic<bool> g_in_crash{false};
std::atomic<bool> g_finalized{false};  // the file is being compacted or is done

void crash_flush(int sig) {
  g_closed.store(true, std::memory_order_relaxed);
  if (g_finalized.load(std::memory_order_relaxed)) return;
  // pthread_getspecific, not the thread_local: it never allocates in a signal handler.
  auto* self = static_cast<ThreadState*>(pthread_getspecific(g_key));
  if (self && self->gen != g_gen.load(std::memory_order_relaxed)) self = nullptr;
  quiesce_writers(self);
  if (self == nullptr) return;
  // The event this thread was copying when the signal came is blanked and written again below
  // (it is still open); one already complete but not yet popped is left as it is.
  const unsigned writing = self->writing.load(std::memory_order_relaxed);
  if (writing == 1)
    if (char* s = self->writing_slot.load(std::memory_order_relaxed)) std::memset(s, ' ', kSlot);
  // This thread's open calls, innermost included, as events that end now, into the slots set
  // aside for them (taking a chunk here could wait on a lock the signal interrupted).
  if (self->emergency == nullptr) return;
  const std::int64_t now = ticks();
  const int d = std::min(self->depth.load(std::memory_order_relaxed), kMaxDepth);
  for (int i = 0; i < d; ++i) {
    OpenEvent* e = self->open_ev[i];
    if (e == nullptr || !e->traced || (writing == 2 && e == self->closing)) continue;
    format_event(self, self->emergency + static_cast<std::size_t>(i) * kSlot, *e, now, -1, sig);
  }
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
  const char* path = std::getenv("TORCHADA_TRACE");
  const bool trace = path != nullptr && *path != '\0';
  const bool stats = env_flag("TORCHADA_STATS");
  if (!trace && !stats) {
    detail::g_state.store(1, std::memory_order_release);
    return 1;
  }
  if (pthread_key_create(&g_key, release_thread) != 0) {
    TORCHADA_LOG(kWarn, "TORCHADA_TRACE/TORCHADA_STATS: no thread key; tracing is off");
    detail::g_state.store(1, std::memory_order_release);
    return 1;
  }
  init_clock();
  for (std::size_t i = 0; i < kFnCount; ++i)
    g_name_len[i] = static_cast<std::uint8_t>(strnlen(kFnNames[i], kMaxName));
  g_stats_on.store(stats, std::memory_order_relaxed);
  bool traced = false;
  if (trace) {
    if (std::strlen(path) >= sizeof g_file.base_path) {
      TORCHADA_LOG(kWarn, "TORCHADA_TRACE: path too long; tracing is off");
    } else {
      std::snprintf(g_file.base_path, sizeof g_file.base_path, "%s", path);
      std::size_t cap_mb = kDefaultCapMb;
      if (const char* c = std::getenv("TORCHADA_TRACE_MAX_MB"); c && *c) {
        char* e = nullptr;
        unsigned long long v = std::strtoull(c, &e, 10);
        if (e && *e == '\0' && v > 0 && v < (1ull << 40))
          cap_mb = static_cast<std::size_t>(v);
        else
          TORCHADA_LOG(kWarn, "TORCHADA_TRACE_MAX_MB=%s is not a size in MiB; using %zu", c,
                       cap_mb);
      }
      g_file.cap = cap_mb << 20;
      g_file.gen = g_gen.load(std::memory_order_relaxed);
      traced = open_file();
      g_file.failed = !traced;
    }
  }
  if (!traced && !stats) {
    detail::g_state.store(1, std::memory_order_release);
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

// At exit, once no thread writes any more: squeezes out the spaces between events (outside JSON
// strings), ends the array and truncates the file. A few hundred MB/s; the file is not valid JSON
// while this runs, so a fatal signal now leaves it alone (g_finalized) and kills the process.
void compact_file(bool squeeze) {
  Locked lock;
  TraceFile& f = g_file;
  pthread_cond_broadcast(&g_grow_cv);  // the grower sees g_closed and ends
  while (f.growing) pthread_cond_wait(&g_grown_cv, &g_mu);
  if (!f.open || f.gen != g_gen.load(std::memory_order_relaxed) || f.nseg == 0) return;
  f.failed = true;       // no more chunks
  if (!squeeze) return;  // left as it is: valid, with its spaces
  g_finalized.store(true, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // Output runs are copied forward over input already read (output never passes input; events
  // never straddle segments, the output may).
  int oseg = 0;
  std::size_t opos = 0, out = 0;
  auto emit = [&](const char* p, std::size_t n) {
    out += n;
    while (n > 0) {
      if (opos == f.seg[oseg].len) {
        ++oseg;
        opos = 0;
      }
      const std::size_t k = std::min(n, f.seg[oseg].len - opos);
      char* const to = f.seg[oseg].base + opos;
      if (to != p) std::memmove(to, p, k);  // in place until the first padding
      opos += k;
      p += k;
      n -= k;
    }
  };
  // Every event starts with ",\n" and is the only place a raw newline occurs (strings escape
  // control bytes), it ends with '}' and never straddles segments; all else is padding (spaces).
  // So an event runs from its ',' to the next event's ',' less the trailing spaces: memchr finds
  // the events, only the padding is looked at byte by byte (eight at a time where aligned).
  // Adjacent events are copied as one run.
  for (int si = 0; si < f.nseg && f.seg[si].off < f.carved; ++si) {
    const char* const d = f.seg[si].base;
    const std::size_t n = std::min(f.seg[si].len, f.carved - f.seg[si].off);
    std::size_t i = 0, run = 0, run_end = 0;
    while (i < n) {
      // Leading padding.
      while (i < n && (i & 7) != 0 && d[i] == ' ') ++i;
      while (i + 8 <= n) {
        std::uint64_t w;
        std::memcpy(&w, d + i, 8);
        if (w != 0x2020202020202020ull) break;
        i += 8;
      }
      while (i < n && d[i] == ' ') ++i;
      if (i >= n) break;
      // The event at i ('[' of the header or ',' of ",\n{"), up to the next event's ','.
      std::size_t stop = n;
      if (i + 2 < n)
        if (const void* q = std::memchr(d + i + 2, '\n', n - i - 2))
          stop = static_cast<std::size_t>(static_cast<const char*>(q) - d) - 1;
      std::size_t j = stop;
      while (j > i && (j & 7) != 0 && d[j - 1] == ' ') --j;
      while (j >= i + 8) {
        std::uint64_t w;
        std::memcpy(&w, d + j - 8, 8);
        if (w != 0x2020202020202020ull) break;
        j -= 8;
      }
      while (j > i && d[j - 1] == ' ') --j;
      if (run_end != i) {
        emit(d + run, run_end - run);
        run = i;
      }
      run_end = j;
      i = stop;
    }
    emit(d + run, run_end - run);
  }
  // Byte `carved` at least lies before the old end: room for the ']'.
  emit("]", 1);
  if (out < f.size) emit("\n", 1);
  if (truncate_file(f.fd, out)) f.size = out;
}

void print_stats();

__attribute__((destructor)) void finish_at_exit() {
  if (detail::g_state.load(std::memory_order_acquire) != 2) return;
  if (g_trace_on.load(std::memory_order_relaxed)) {
    g_closed.store(true, std::memory_order_relaxed);
    const bool quiet = quiesce_writers(t_state);
    compact_file(quiet);
    if (!quiet)
      TORCHADA_LOG(kWarn,
                   "TORCHADA_TRACE: a thread did not finish writing an event at exit; "
                   "its event is blank and the file keeps its padding");
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

// Each writer appends `"name":value` (with a leading ',' after the first) or, when that does not
// fit, leaves the buffer as it was and marks it truncated.
bool ArgWriter::begin(const char* name, int value_room) {
  if (!on_) return false;
  char* const start = buf_ + len_;
  char* const end = buf_ + kCapacity;
  char* p = start;
  if (end - p < 3) {  // ',"' and at least one name byte
    truncated_ = true;
    return false;
  }
  if (len_ > 0) *p++ = ',';
  *p++ = '"';
  bool complete = false;
  p = put_escaped<true>(p, end, name ? name : "?", 48, &complete);
  if (!complete || end - p < 2 + value_room) {
    truncated_ = true;
    return false;
  }
  *p++ = '"';
  *p++ = ':';
  len_ = static_cast<std::uint8_t>(p - buf_);
  return true;
}

void ArgWriter::ptr(const char* name, const void* v) {
  if (!begin(name, 20)) return;
  char* p = buf_ + len_;
  *p++ = '"';
  p = put_hex(p, reinterpret_cast<std::uintptr_t>(v));
  *p++ = '"';
  len_ = static_cast<std::uint8_t>(p - buf_);
}

void ArgWriter::u64(const char* name, unsigned long long v) {
  if (!begin(name, 20)) return;
  len_ = static_cast<std::uint8_t>(put_u64(buf_ + len_, v) - buf_);
}

void ArgWriter::i64(const char* name, long long v) {
  if (!begin(name, 20)) return;
  len_ = static_cast<std::uint8_t>(put_i64(buf_ + len_, v) - buf_);
}

void ArgWriter::str(const char* name, const char* v) {
  if (v == nullptr) {
    if (!begin(name, 4)) return;
    len_ = static_cast<std::uint8_t>(put_lit(buf_ + len_, "null") - buf_);
    return;
  }
  // Room for the quotes and at least "x..." before writing anything.
  if (!begin(name, 7)) return;
  char* p = buf_ + len_;
  char* const end = buf_ + kCapacity;
  *p++ = '"';
  bool complete = false;
  char* q = put_escaped<true>(p, end - 1, v, static_cast<std::size_t>(-1), &complete);
  if (!complete) {
    q = put_escaped<true>(p, end - 4, v, static_cast<std::size_t>(-1), nullptr);
    q = put_lit(q, "...");
    truncated_ = true;
  }
  *q++ = '"';
  len_ = static_cast<std::uint8_t>(q - buf_);
}

void ArgWriter::enum_value(const char* name, int v, const char* label) {
  if (label == nullptr) {
    i64(name, v);
    return;
  }
  const std::uint8_t saved = len_;
  if (!begin(name, 2)) return;
  char* p = buf_ + len_;
  char* const end = buf_ + kCapacity;
  *p++ = '"';
  bool complete = false;
  p = put_escaped<true>(p, end - 1, label, static_cast<std::size_t>(-1), &complete);
  if (!complete) {  // a label is not cut: drop the argument
    len_ = saved;
    truncated_ = true;
    return;
  }
  *p++ = '"';
  len_ = static_cast<std::uint8_t>(p - buf_);
}

Span::Span(Fn fn) : fn_(fn) {
  ts_ = current();
  ev_.traced = false;
  ev_.args = &args_;
  ev_.backend = false;
  if (ts_ == nullptr) {
    ev_.start = 0;
    return;
  }
  gen_ = ts_->gen;
  ev_.start = ticks();
  if (__builtin_expect(ev_.start > ts_->reanchor_after, 0) &&
      ts_->depth.load(std::memory_order_relaxed) == 0)
    reanchor(ts_);
  if (g_trace_on.load(std::memory_order_relaxed)) {
    const auto i = static_cast<std::size_t>(fn);
    ev_.name = kFnNames[i];
    ev_.name_len = g_name_len[i];
    open_event(ts_, &ev_);
  }
  ArgAccess::reset(args_, ev_.traced);
}

void Span::finish(int result) {
  if (done_) return;
  done_ = true;
  if (ts_ == nullptr) return;
  const std::int64_t end = ticks();
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

BackendSpan::BackendSpan(const char* name) {
  ev_.traced = false;
  ts_ = nullptr;
  if (!g_trace_on.load(std::memory_order_relaxed)) return;
  ts_ = current();
  if (ts_ == nullptr) return;
  gen_ = ts_->gen;
  ev_.args = nullptr;
  ev_.backend = true;
  ev_.name = name ? name : "?";
  // Backend names come from the generator (identifiers); anything else is cut at the first byte
  // that would need escaping.
  std::uint32_t n = 0;
  while (n < kMaxName && ev_.name[n] > 0x20 && ev_.name[n] < 0x7f && ev_.name[n] != '"' &&
         ev_.name[n] != '\\')
    ++n;
  ev_.name_len = n;
  ev_.start = ticks();
  open_event(ts_, &ev_);
}

BackendSpan::~BackendSpan() {
  if (!ev_.traced) return;
  close_event(ts_, gen_, &ev_, ticks(), 0);
}

}  // namespace torchada::trace
