// The binary trace log to Chrome trace JSON (trace_log.h). The text is the one the shim used to
// write on the calling thread: the same members in the same order, the same 120-byte argument
// summary with its truncation rules. Async-signal-safe (a fatal-signal handler converts the log of
// the dying process): memory from mmap, output through write(2), no locale, no stdio.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/trace.h"
#include "core/trace_log.h"

namespace torchada::trace::log {
namespace {

constexpr std::size_t kMaxName = 64;  // function names are cut to this many bytes

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Text. Every writer is bounded by its caller's buffer.

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

// Two digits at a time, from the last one back.
char* put_u64(char* p, std::uint64_t v) {
  char tmp[20];
  char* q = tmp + sizeof tmp;
  while (v >= 100) {
    q -= 2;
    std::memcpy(q, kDigits + (v % 100) * 2, 2);
    v /= 100;
  }
  if (v >= 10) {
    q -= 2;
    std::memcpy(q, kDigits + v * 2, 2);
  } else {
    *--q = static_cast<char>('0' + v);
  }
  const auto n = static_cast<std::size_t>(tmp + sizeof tmp - q);
  std::memcpy(p, q, n);
  return p + n;
}

char* put_i64(char* p, std::int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return put_u64(p, 0 - static_cast<std::uint64_t>(v));
  }
  return put_u64(p, static_cast<std::uint64_t>(v));
}

// Nanoseconds as microseconds with three decimals ("12.345"); negative values clamp to 0.
char* put_us(char* p, std::int64_t ns) {
  std::uint64_t v = ns > 0 ? static_cast<std::uint64_t>(ns) : 0;
  p = put_u64(p, v / 1000);
  unsigned f = static_cast<unsigned>(v % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + f / 100);
  std::memcpy(p + 2, kDigits + (f % 100) * 2, 2);
  return p + 4;
}

char* put_hex(char* p, std::uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  *p++ = '0';
  *p++ = 'x';
  const int n = (64 - __builtin_clzll(v | 1) + 3) / 4;
  char* q = p + n;
  for (int i = 0; i < n; ++i, v >>= 4) *--q = kHex[v & 0xf];
  return p + n;
}

// A string of the log: `len` bytes kept, `longer` when the original had more.
struct Str {
  const char* s;
  std::size_t len;
  bool longer;
  bool plain = false;  // known to need no escaping
};

inline bool plain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

Str plain_str(Str s) {
  s.plain = true;
  for (std::size_t i = 0; i < s.len; ++i) s.plain &= plain(static_cast<unsigned char>(s.s[i]));
  return s;
}

// JSON string content of `s` (at most `max_in` bytes of it), escaped, into [p, end). Bytes outside
// printable ASCII become '?' or \u00XX, so the file is plain ASCII. Stops before overflowing;
// `*complete` says whether all of the input was written.
char* put_escaped(char* p, char* end, Str s, std::size_t max_in, bool* complete) {
  if (s.plain && s.len <= max_in && s.len <= static_cast<std::size_t>(end - p)) {  // most names
    std::memcpy(p, s.s, s.len);
    if (complete) *complete = !s.longer;
    return p + s.len;
  }
  const std::size_t lim = s.len < max_in ? s.len : max_in;
  std::size_t i = 0;
  for (; i < lim; ++i) {
    const auto c = static_cast<unsigned char>(s.s[i]);
    if (plain(c)) {
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
  if (complete) *complete = i == s.len && !s.longer;
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

// The argument summary: JSON members `"name":value` in ArgWriter::kCapacity bytes. Each writer
// appends a member (with a leading ',' after the first) or, when it does not fit, leaves the buffer
// as it was and marks it truncated.
struct ArgText {
  static constexpr int kCapacity = ArgWriter::kCapacity;
  char buf[kCapacity];
  int len = 0;
  bool truncated = false;

  bool begin(Str name, int value_room) {
    char* const end = buf + kCapacity;
    char* p = buf + len;
    if (end - p < 3) {  // ',"' and at least one name byte
      truncated = true;
      return false;
    }
    if (len > 0) *p++ = ',';
    *p++ = '"';
    bool complete = false;
    p = put_escaped(p, end, name, 48, &complete);
    if (!complete || end - p < 2 + value_room) {
      truncated = true;
      return false;
    }
    *p++ = '"';
    *p++ = ':';
    len = static_cast<int>(p - buf);
    return true;
  }
  void ptr(Str name, std::uint64_t v) {
    if (!begin(name, 20)) return;
    char* p = buf + len;
    *p++ = '"';
    p = put_hex(p, v);
    *p++ = '"';
    len = static_cast<int>(p - buf);
  }
  void u64(Str name, std::uint64_t v) {
    if (begin(name, 20)) len = static_cast<int>(put_u64(buf + len, v) - buf);
  }
  void i64(Str name, std::int64_t v) {
    if (begin(name, 20)) len = static_cast<int>(put_i64(buf + len, v) - buf);
  }
  void null(Str name) {
    if (begin(name, 4)) len = static_cast<int>(put_lit(buf + len, "null") - buf);
  }
  void str(Str name, Str v) {
    if (!begin(name, 7)) return;  // room for the quotes and at least "x..."
    char* p = buf + len;
    char* const end = buf + kCapacity;
    *p++ = '"';
    bool complete = false;
    char* q = put_escaped(p, end - 1, v, static_cast<std::size_t>(-1), &complete);
    if (!complete) {
      q = put_escaped(p, end - 4, v, static_cast<std::size_t>(-1), nullptr);
      q = put_lit(q, "...");
      truncated = true;
    }
    *q++ = '"';
    len = static_cast<int>(q - buf);
  }
  void label(Str name, Str label) {
    const int saved = len;
    if (!begin(name, 2)) return;
    char* p = buf + len;
    char* const end = buf + kCapacity;
    *p++ = '"';
    bool complete = false;
    p = put_escaped(p, end - 1, label, static_cast<std::size_t>(-1), &complete);
    if (!complete) {  // a label is not cut: drop the argument
      len = saved;
      truncated = true;
      return;
    }
    *p++ = '"';
    len = static_cast<int>(p - buf);
  }
};

// ---------------------------------------------------------------------------------------------
// Walking the log.

struct Anchor {
  std::int64_t ticks, ns;
  std::uint64_t mult;
  std::int64_t to_ns(std::int64_t t) const {
    const __int128 d = static_cast<__int128>(t - ticks) * static_cast<__int128>(mult);
    return ns + static_cast<std::int64_t>(d >> 32);
  }
};

inline Type type_of(const char* r) { return static_cast<Type>(*r & 15); }

// The size of the record at r (at most `room` bytes available), 0 if it is not a whole record.
std::size_t record_size(const char* r, std::size_t room) {
  const auto h = load<Head>(r);
  std::size_t size = 0;
  switch (type_of(r)) {
    case kChunk:
      size = 48;
      break;
    case kThread:
    case kString:
      size = 16 + pad8(h.n);
      break;
    case kAnchor:
      size = 32;
      break;
    case kSig:
      size = 16 + 8 * std::size_t{h.n};
      break;
    case kApi:
      size = 24 + 8 * static_cast<std::size_t>(static_cast<std::uint8_t>(*r) >> 4) +
             8 * (load<std::uint64_t>(r + 16) >> kStrWordsShift);
      break;
    case kBackend:
      size = 24;
      break;
    case kApiShort: {
      const auto w0 = load<std::uint64_t>(r);
      const unsigned n = static_cast<std::uint8_t>(*r) >> 4;
      const auto present = static_cast<unsigned>(w0 >> kShortPresentShift) & ((1u << n) - 1);
      size = 16 + 8 * static_cast<std::size_t>(__builtin_popcount(present)) +
             8 * ((w0 >> kShortStrShift) & 31);
      break;
    }
    case kBackendShort:
      size = 16;
      break;
    case kPairShort: {
      if (room < 24) return 0;
      const auto w0 = load<std::uint64_t>(r);
      const unsigned n = static_cast<std::uint8_t>(*r) >> 4;
      const auto present = static_cast<unsigned>(w0 >> kShortPresentShift) & ((1u << n) - 1);
      size = 24 + (load<std::uint64_t>(r + 16) & kPairName ? 8 : 0) +
             8 * static_cast<std::size_t>(__builtin_popcount(present)) +
             8 * ((w0 >> kShortStrShift) & 31);
      break;
    }
    case kPairTiny: {
      const auto w0 = load<std::uint64_t>(r);
      const unsigned n = static_cast<std::uint8_t>(*r) >> 4;
      const auto present = static_cast<unsigned>(w0 >> kShortPresentShift) & ((1u << n) - 1);
      size = 16 + 8 * static_cast<std::size_t>(__builtin_popcount(present)) +
             8 * ((w0 >> kShortStrShift) & 31);
      break;
    }
    default:
      return 0;
  }
  return size <= room ? size : 0;
}

// Calls visit(record, chunk tid, anchor) for every record of every chunk, in file order.
template <typename F>
void walk(const Piece* pieces, int npieces, F&& visit) {
  for (int k = 0; k < npieces; ++k) {
    const char* const d = pieces[k].data;
    const std::size_t n = pieces[k].size;
    for (std::size_t pos = k == 0 ? kPage : 0; pos + 48 <= n;) {
      const auto h = load<Head>(d + pos);
      const auto bytes = load<std::uint64_t>(d + pos + 16);
      if (h.type != kChunk || static_cast<std::uint32_t>(h.value) != kChunkMagic || bytes < kPage ||
          bytes % kPage != 0 || bytes > n - pos) {
        pos += kPage;
        continue;
      }
      std::int64_t tid = load<std::int64_t>(d + pos + 8);
      Anchor a{load<std::int64_t>(d + pos + 24), load<std::int64_t>(d + pos + 32),
               load<std::uint64_t>(d + pos + 40)};
      const char* const end = d + pos + bytes;
      for (const char* r = d + pos + 48; r + 8 <= end;) {
        const Type type = type_of(r);
        if (type == kPad) {
          r += 8;
          continue;
        }
        const std::size_t size = record_size(r, static_cast<std::size_t>(end - r));
        if (size == 0) break;  // not a record: the rest of the chunk is lost
        if (type == kThread) tid = load<std::int64_t>(r + 8);
        if (type == kAnchor)
          a = {load<std::int64_t>(r + 8), load<std::int64_t>(r + 16), load<std::uint64_t>(r + 24)};
        visit(r, tid, a);
        r += size;
      }
      pos += bytes;
    }
  }
}

// The strings of the log by address: open addressing in memory from mmap.
struct Strings {
  struct Entry {
    std::uint64_t ptr;
    Str s;
  };
  Entry* e = nullptr;
  std::size_t mask = 0;

  Str get(std::uint64_t ptr) const {
    if (ptr != 0 && e != nullptr)
      for (std::size_t i = hash(ptr) & mask;; i = (i + 1) & mask) {
        if (e[i].ptr == ptr) return e[i].s;
        if (e[i].ptr == 0) break;
      }
    return {"?", 1, false};
  }
  void put(std::uint64_t ptr, Str s) {
    std::size_t i = hash(ptr) & mask;
    while (e[i].ptr != 0 && e[i].ptr != ptr) i = (i + 1) & mask;
    e[i] = {ptr, s};
  }
  static std::size_t hash(std::uint64_t p) { return (p * 0x9e3779b97f4a7c15ull) >> 20; }
};

// Output through a buffer, at most `cap` bytes in all.
struct Out {
  int fd;
  char* buf;
  std::size_t size = 0, cap, total = 0;
  bool ok = true;
  static constexpr std::size_t kBuf = 1 << 16;

  void flush() {
    const char* p = buf;
    while (size > 0 && ok) {
      const ssize_t w = ::write(fd, p, size);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        ok = false;
        break;
      }
      p += w;
      size -= static_cast<std::size_t>(w);
    }
    size = 0;
  }
  // An element of `len` bytes just written at buf + size: kept if it fits (leaving room for the
  // array's end), else undone.
  bool commit(std::size_t len) {
    if (cap != 0 && total + len + 2 > cap) return false;
    size += len;
    total += len;
    if (size > kBuf) flush();
    return true;
  }
  char* room() { return buf + size; }
};

constexpr std::size_t kMaxEvent = 1024;  // the largest element's text, with room to spare

// The event text of an api or backend record (api: null unless its signature is known).
// `,\n{"ph":"X","pid":P,"tid":T,"name":"`, made again when the thread changes.
struct Prefix {
  std::int64_t tid = -1;
  std::size_t len = 0;
  char text[96];
};

// An api event's argument values (the ones it left out from `last`, its signature's previous
// values, which it updates unless it is a fatal signal's) and where its string bytes are. A pair's
// backend name (or null) goes to `child`, and to last[ArgWriter::kMaxArgs] (the previous pair's).
const char* api_values(const char* r, std::uint64_t* last, std::uint64_t* values,
                       std::uint64_t* child) {
  const auto w0 = load<std::uint64_t>(r);
  const int n = static_cast<std::uint8_t>(*r) >> 4;
  const Type type = type_of(r);
  const bool short_form = type == kApiShort || type == kPairShort || type == kPairTiny;
  const unsigned present = short_form ? static_cast<unsigned>(w0 >> kShortPresentShift) : 0xff;
  const char* v = r + (short_form ? 16 : 24);
  if (type == kPairShort) {
    if (load<std::uint64_t>(r + 16) & kPairName) {
      last[ArgWriter::kMaxArgs] = load<std::uint64_t>(r + 24);
      v += 8;
    }
    *child = last[ArgWriter::kMaxArgs];
    v += 8;
  }
  if (type == kPairTiny) *child = last[ArgWriter::kMaxArgs];
  for (int i = 0; i < n; ++i) {
    if (present >> i & 1) {
      values[i] = load<std::uint64_t>(v);
      v += 8;
    } else {
      values[i] = last[i];
    }
  }
  if ((w0 >> 9 & 0x7f) == 0)  // no signal
    for (int i = 0; i < n; ++i) last[i] = values[i];
  return v;
}

// An event's text up to its duration: `,\n{"ph":"X",...,"dur":D`.
char* format_head(char* p, Str name, bool backend, std::int64_t start, std::int64_t dur, int pid,
                  std::int64_t tid, const Anchor& a, Prefix& pre) {
  if (pre.tid != tid) {
    char* q = put_lit(pre.text, ",\n{\"ph\":\"X\",\"pid\":");
    q = put_i64(q, pid);
    q = put_lit(q, ",\"tid\":");
    q = put_i64(q, tid);
    q = put_lit(q, ",\"name\":\"");
    pre.tid = tid;
    pre.len = static_cast<std::size_t>(q - pre.text);
  }
  p = put(p, pre.text, pre.len);
  // Names are identifiers: cut at kMaxName bytes or the first byte that would need escaping.
  for (std::size_t i = 0; i < name.len && i < kMaxName && plain(name.s[i]); ++i) *p++ = name.s[i];
  p = backend ? put_lit(p, "\",\"cat\":\"backend\",\"ts\":")
              : put_lit(p, "\",\"cat\":\"api\",\"ts\":");
  const std::int64_t start_ns = a.to_ns(start);
  p = put_us(p, start_ns);
  p = put_lit(p, ",\"dur\":");
  return put_us(p, a.to_ns(start + dur) - start_ns);
}

// An event's start and duration in ticks: a long record's, or a short one's (relative to the
// anchor; kPairTiny's in fewer bits).
void event_times(const char* r, const Anchor& a, std::int64_t* start, std::int64_t* dur) {
  const Type type = type_of(r);
  const auto w0 = load<std::uint64_t>(r);
  const auto w1 = load<std::uint64_t>(r + 8);
  if (type == kPairTiny) {  // sign-extended from 30 bits
    *start = a.ticks + (static_cast<std::int64_t>(w1 << 34) >> 34);
    *dur = static_cast<std::int64_t>(w1 >> kTinyDurShift & kMaxTinyDur);
  } else if (type == kApiShort || type == kBackendShort || type == kPairShort) {
    *start = a.ticks + (static_cast<std::int64_t>(w1 << 24) >> 24);  // from 40 bits
    *dur = static_cast<std::int64_t>(w1 >> kShortDurShift);
  } else {
    *start = static_cast<std::int64_t>(w1);
    *dur = static_cast<std::int64_t>(w0 >> kDurShift);
  }
}

// The backend event of a kPairShort or kPairTiny record, named `child`.
std::size_t format_pair_backend(char* const s, const char* r, std::uint64_t child, int pid,
                                std::int64_t tid, const Anchor& a, const Strings& strings,
                                Prefix& pre) {
  std::int64_t start, dur;
  event_times(r, a, &start, &dur);
  if (type_of(r) == kPairTiny) {
    const auto w1 = load<std::uint64_t>(r + 8);
    const auto in = static_cast<std::int64_t>(w1 >> kTinyInShift & 0xff);
    start += in;
    dur -= in + static_cast<std::int64_t>(w1 >> kTinyOutShift);
  } else {
    const auto w2 = load<std::uint64_t>(r + 16);
    start += static_cast<std::int32_t>(static_cast<std::uint32_t>(w2));
    dur = static_cast<std::int64_t>((w2 & ~kPairName) >> 32);
  }
  char* p = format_head(s, strings.get(child), true, start, dur, pid, tid, a, pre);
  *p++ = '}';
  return static_cast<std::size_t>(p - s);
}

std::size_t format_event(char* const s, const char* r, const char* sig, const std::uint64_t* values,
                         const char* strs, int pid, std::int64_t tid, const Anchor& a,
                         const Strings& strings, Prefix& pre) {
  const Type type = type_of(r);
  const bool backend = type == kBackend || type == kBackendShort;
  const bool short_form =
      type == kApiShort || type == kBackendShort || type == kPairShort || type == kPairTiny;
  const auto w0 = load<std::uint64_t>(r);
  std::int64_t start, dur;
  event_times(r, a, &start, &dur);
  const int flags = static_cast<std::uint8_t>(w0 >> 8);
  char* p = format_head(s,
                        strings.get(type == kBackendShort ? w0 >> 16
                                    : backend             ? load<std::uint64_t>(r + 16)
                                                          : load<std::uint64_t>(sig + 8)),
                        backend, start, dur, pid, tid, a, pre);
  bool any = false;
  if (!backend) {
    p = put_lit(p, ",\"args\":{\"result\":");
    // Short: 11 bits from bit 45, sign-extended.
    p = put_i64(p, short_form ? static_cast<std::int64_t>(w0 << 8) >> (kShortResultShift + 8)
                              : static_cast<std::int32_t>(load<std::uint32_t>(r + 16)));
    any = true;
    ArgText t;
    const int n = static_cast<std::uint8_t>(*r) >> 4u;
    for (int i = 0; i < n && i < load<Head>(sig).n; ++i) {
      const auto w = load<std::uint64_t>(sig + 16 + 8 * i);
      const std::uint64_t v = values[i];
      const Str an = strings.get(w & kPtrMask);
      switch (w >> kArgKindShift) {
        case ArgWriter::kPtr:
          t.ptr(an, v);
          break;
        case ArgWriter::kU64:
          t.u64(an, v);
          break;
        case ArgWriter::kI64:
          t.i64(an, static_cast<std::int64_t>(v));
          break;
        case ArgWriter::kNull:
          t.null(an);
          break;
        case ArgWriter::kStr:
          t.str(an, {strs + ((v >> 8) & 0xffff), v & 0xff, (v & kStrCut) != 0});
          break;
        case ArgWriter::kLabel:
          t.label(an, strings.get(v));
          break;
      }
    }
    if (t.len > 0) {
      *p++ = ',';
      p = put(p, t.buf, static_cast<std::size_t>(t.len));
    }
    if (t.truncated || (flags & kTruncated)) p = put_lit(p, ",\"truncated\":true");
  }
  if (flags >> 1) {
    p = any ? put_lit(p, ",\"signal\":\"") : put_lit(p, ",\"args\":{\"signal\":\"");
    any = true;
    const char* n = signal_name(flags >> 1);
    p = put(p, n, std::strlen(n));
    *p++ = '"';
  }
  if (any) *p++ = '}';
  *p++ = '}';
  return static_cast<std::size_t>(p - s);
}

void* map_anon(std::size_t n) {
  void* m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? nullptr : m;
}

}  // namespace

Result to_json(const Piece* pieces, int npieces, int fd, std::uint64_t cap) {
  Result res{false, 0, 0};
  if (npieces < 1 || pieces[0].size < kPage) return res;
  const auto fh = load<FileHeader>(pieces[0].data);
  if (fh.magic != kMagic && fh.magic != kMagicV1) return res;
  // Pass 1: how many strings, the highest signature; pass 2: where they are.
  std::size_t nstrings = 0;
  std::uint32_t max_sig = 0;
  walk(pieces, npieces, [&](const char* r, std::int64_t, const Anchor&) {
    if (type_of(r) == kString) ++nstrings;
    if (type_of(r) == kSig) {
      const auto id = static_cast<std::uint32_t>(load<Head>(r).value);
      if (id <= kMaxSig && id > max_sig) max_sig = id;
    }
  });
  Strings strings;
  std::size_t slots = 64;
  while (slots < 2 * nstrings) slots *= 2;
  const std::size_t table_bytes = slots * sizeof(Strings::Entry);
  // Per signature: its record, its previous values and its previous pair's backend name.
  constexpr std::size_t kLast = ArgWriter::kMaxArgs + 1;
  const std::size_t sig_bytes =
      (max_sig + 1) * (sizeof(const char*) + kLast * sizeof(std::uint64_t));
  const std::size_t bytes = table_bytes + sig_bytes + Out::kBuf + kMaxEvent;
  char* mem = static_cast<char*>(map_anon(bytes));
  if (mem == nullptr) return res;
  strings.e = reinterpret_cast<Strings::Entry*>(mem);  // zeroed by mmap
  strings.mask = slots - 1;
  auto** sigs = reinterpret_cast<const char**>(mem + table_bytes);
  auto* lasts = reinterpret_cast<std::uint64_t*>(mem + table_bytes + (max_sig + 1) * sizeof(char*));
  walk(pieces, npieces, [&](const char* r, std::int64_t, const Anchor&) {
    const auto h = load<Head>(r);
    if (type_of(r) == kString)
      strings.put(load<std::uint64_t>(r + 8), plain_str({r + 16, h.n, (h.flags & kLonger) != 0}));
    if (type_of(r) == kSig && static_cast<std::uint32_t>(h.value) <= kMaxSig)
      sigs[static_cast<std::uint32_t>(h.value)] = r;
  });
  // Pass 3: the events.
  Out out{fd, mem + table_bytes + sig_bytes, 0, cap};
  char* p = out.room();
  p = put_lit(p, "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
  p = put_i64(p, fh.pid);
  p = put_lit(p, ",\"tid\":");
  p = put_i64(p, fh.pid);
  p = put_lit(p, ",\"args\":{\"name\":\"");
  p = put_escaped(p, p + 64, {fh.process, strnlen(fh.process, sizeof fh.process), false}, 64,
                  nullptr);
  p = put_lit(p, "\"}}");
  out.commit(static_cast<std::size_t>(p - out.room()));
  bool full = false;
  Prefix pre;
  walk(pieces, npieces, [&](const char* r, std::int64_t tid, const Anchor& a) {
    const Type type = type_of(r);
    if (type == kApi || type == kBackend || type == kApiShort || type == kBackendShort ||
        type == kPairShort || type == kPairTiny) {
      const bool api = type == kApi || type == kApiShort || type == kPairShort || type == kPairTiny;
      const std::uint64_t w =
          type == kApi ? load<std::uint64_t>(r + 16) >> kSigShift : load<std::uint64_t>(r) >> 16;
      const std::uint32_t id = static_cast<std::uint32_t>(w) & kMaxSig;
      const char* sig = api && id <= max_sig ? sigs[id] : nullptr;
      if (api && sig == nullptr) return;  // its signature was not logged (crash)
      std::uint64_t values[ArgWriter::kMaxArgs];
      std::uint64_t child = 0;
      const char* strs = api ? api_values(r, lasts + id * kLast, values, &child) : nullptr;
      // A pair: its backend event first (the order its two records had).
      if (type == kPairShort || type == kPairTiny) {
        if (full ||
            !out.commit(format_pair_backend(out.room(), r, child, fh.pid, tid, a, strings, pre))) {
          full = true;
          ++res.dropped;
        } else {
          ++res.events;
        }
      }
      if (full || !out.commit(format_event(out.room(), r, sig, values, strs, fh.pid, tid, a,
                                           strings, pre))) {
        full = true;
        ++res.dropped;
        return;
      }
      ++res.events;
    } else if (type == kThread && !full) {
      char* q = put_lit(out.room(), ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
      q = put_i64(q, fh.pid);
      q = put_lit(q, ",\"tid\":");
      q = put_i64(q, tid);
      q = put_lit(q, ",\"args\":{\"name\":\"");
      q = put_escaped(q, q + 96, {r + 16, load<Head>(r).n, false}, 32, nullptr);
      q = put_lit(q, "\"}}");
      full = !out.commit(static_cast<std::size_t>(q - out.room()));
    }
  });
  std::memcpy(out.room(), "]\n", 2);
  out.size += 2;
  out.flush();
  munmap(mem, bytes);
  res.ok = out.ok;
  return res;
}

Result convert_file(const char* in, const char* out, std::uint64_t cap) {
  Result res{false, 0, 0};
  const int fd = ::open(in, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return res;
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(kPage)) {
    ::close(fd);
    return res;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return res;
  char part[4096];
  const int n = std::snprintf(part, sizeof part, "%s.part", out);
  const int ofd = n > 0 && static_cast<std::size_t>(n) < sizeof part
                      ? ::open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                      : -1;
  if (ofd >= 0) {
    const Piece piece{static_cast<const char*>(m), size};
    res = to_json(&piece, 1, ofd, cap);
    res.ok = ::close(ofd) == 0 && res.ok && ::rename(part, out) == 0;
    if (!res.ok) ::unlink(part);
  }
  munmap(m, size);
  return res;
}

bool json_path_for(const char* log_path, char* out, std::size_t size) {
  std::size_t n = std::strlen(log_path);
  const std::size_t ext = sizeof kExtension - 1;
  if (n > ext && std::strcmp(log_path + n - ext, kExtension) == 0) n -= ext;
  const bool has_json = n >= 5 && std::strncmp(log_path + n - 5, ".json", 5) == 0;
  const int w =
      std::snprintf(out, size, "%.*s%s", static_cast<int>(n), log_path, has_json ? "" : ".json");
  return w > 0 && static_cast<std::size_t>(w) < size;
}

}  // namespace torchada::trace::log
