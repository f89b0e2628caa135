// The binary trace log (TORCHADA_TRACE): written by trace.cc while the process runs, turned into
// the Chrome trace JSON by to_json() (at exit, in a fatal-signal handler, by the parent for a child
// that ended with _exit, or by `torchada-trace convert`). Host byte order (the converter runs on
// the machine that traced).
//
// Layout: a 4 KiB header page (FileHeader), then chunks, each on a 4 KiB boundary and starting
// with a kChunk record that gives its length; pages that hold no chunk are zero. A chunk belongs to
// one thread: its records in the order they were written, 8-byte aligned, then zeros (a zero word
// is padding). The low 4 bits of a record's first byte are its type. Events are kept small (the
// kernel's work for the log's pages is most of what tracing costs):
//
//   kApi      byte 0: type | arguments << 4; byte 1: flags (kTruncated | signal << 1); bytes 2-7:
//             duration in ticks; start; result (low 32 bits) | signature << 32 | string words
//             << 56; a value per argument; the string bytes                    24 + 8 n + str
//   kBackend  byte 0: type; byte 1: flags; bytes 2-7: duration; start; name pointer  24 bytes
//
// and, for most events, shorter: times as start - the anchor's ticks (40 bits, signed) | duration
// << 40 (24 bits), the result in 19 bits:
//
//   kApiShort      byte 0: type | arguments << 4; byte 1: flags; signature << 16 | string words
//                  << 40 | result << 45 (11 bits) | present << 56; times; the present values;
//                  string bytes                                        16 + 8 present + str
//
// A short event leaves out the values equal to the ones of its signature's previous event
// (`present` has a bit per argument written; a new signature's values start as zeros). Events of
// a fatal signal write every value and are left out of that chain.
//   kBackendShort  byte 0: type; byte 1: flags; name pointer << 16; times           16 bytes
//   kPairShort     an api call and the backend call it made, in one record (written when the
//                  call ends): the words of a kApiShort, then after its times the backend call's
//                  start - the call's start (32 bits, signed) | its duration << 32 (31 bits) |
//                  kPairName << 63, its name pointer when kPairName is set (when it differs from
//                  the backend name of its signature's previous kPairShort; a new signature's
//                  starts as none), then the present values and the string bytes
//                                                          24 + 8 name + 8 present + str
//   kPairTiny      the same pair in 8 bytes less, when the backend name is its signature's
//                  previous pair's and the times fit (most calls of a forwarder): the words of a
//                  kApiShort but for its times, which are start - the anchor's ticks (30 bits,
//                  signed) | duration << 30 (18 bits) | (the backend call's start - the call's
//                  start) << 48 (8 bits) | (the call's end - the backend call's end) << 56 (8 bits)
//                                                          16 + 8 present + str
//                  Both read as the backend event, then the api event: the order in which the two
//                  records they replace were written. A pair that fits neither is written as those
//                  two records.
//
// The other records start with a Head:
//
//   kChunk    value = kChunkMagic; tid, bytes, anchor (ticks, ns, mult)         48 bytes
//   kThread   n = name bytes; tid; the name (padded to 8)                        16 + name
//   kAnchor   ticks, ns, mult: ns = ns + (t - ticks) * mult / 2^32 from here on  32 bytes
//   kString   n = bytes kept, flags kLonger; the pointer; the bytes (padded)     16 + bytes
//   kSig      n = arguments, value = the signature's number (process-wide); the function's
//             name pointer; per argument: name pointer | kind << 56            16 + 8 n
//
// A signature is what stays the same from one call of a function to the next (its name, its
// arguments' names and kinds): a thread logs one the first time it makes such a call, before the
// event, and events carry only the values. Strings (function, argument, enum and backend names)
// are referred to by their address in the traced process; a kString record, written the first
// time a thread uses the address, says what it held. A kStr argument's value is offset << 8 |
// length of its bytes among the event's string bytes, bit 63 set when the string was longer than
// what was kept.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchada::trace::log {

constexpr std::uint64_t kMagic = 0x32676f6c61646174ull;  // "tadalog2": kPairShort, kPairTiny added
// A log of the previous version holds neither and reads the same (`torchada-trace convert`
// of a log an older library left behind).
constexpr std::uint64_t kMagicV1 = 0x31676f6c61646174ull;  // "tadalog1"
constexpr std::uint32_t kChunkMagic = 0x6b6e6863;          // "chnk"
constexpr std::size_t kPage = 4096;
constexpr std::size_t kMaxString = 128;  // bytes of a string kept
constexpr const char kExtension[] = ".tdtrace";

struct FileHeader {
  std::uint64_t magic;
  std::int32_t pid;
  std::int32_t ppid;  // whose exit converts the log a child leaves behind (_exit)
  char process[64];   // process_name, NUL-terminated
};

enum Type : std::uint8_t {
  kPad = 0,
  kChunk,
  kThread,
  kAnchor,
  kString,
  kSig,
  kApi,
  kBackend,
  kApiShort,
  kBackendShort,
  kPairShort,
  kPairTiny
};
enum Flags : std::uint8_t { kTruncated = 1, kLonger = 2 };
constexpr int kDurShift = 16;  // events' first word
constexpr std::uint64_t kMaxDur = (std::uint64_t{1} << 48) - 1;
constexpr int kSigShift = 32, kStrWordsShift = 56;  // api events' third word
constexpr std::uint32_t kMaxSig = (1u << 24) - 1;
constexpr int kShortDurShift = 40, kShortStrShift = 40, kShortResultShift = 45;  // short events
constexpr int kShortPresentShift = 56;
constexpr std::uint64_t kDeltaMask = (std::uint64_t{1} << 40) - 1;
constexpr std::int64_t kMaxDelta = std::int64_t{1} << 39;
constexpr std::uint64_t kMaxShortDur = (std::uint64_t{1} << 24) - 1;
constexpr int kMaxShortResult = 1 << 10;
constexpr std::uint64_t kMaxName = (std::uint64_t{1} << 48) - 1;  // a pointer in 48 bits
constexpr std::uint64_t kPairName = std::uint64_t{1} << 63;       // kPairShort's third word
constexpr std::int64_t kMaxPairDur = (std::int64_t{1} << 31) - 1;
constexpr int kTinyDurShift = 30, kTinyInShift = 48, kTinyOutShift = 56;  // kPairTiny's times
constexpr std::int64_t kMaxTinyDelta = std::int64_t{1} << 29;
constexpr std::int64_t kMaxTinyDur = (std::int64_t{1} << 18) - 1;
constexpr std::int64_t kMaxTinyGap = 255;

struct Head {
  Type type;
  std::uint8_t n;
  std::uint8_t flags;
  std::uint8_t sig;
  std::int32_t value;
};
static_assert(sizeof(Head) == 8);

constexpr int kArgKindShift = 56;
constexpr std::uint64_t kPtrMask = (std::uint64_t{1} << kArgKindShift) - 1;
constexpr std::uint64_t kStrCut = std::uint64_t{1} << 63;

inline constexpr std::size_t pad8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

// A mapped part of a log (segments in the traced process; the whole file in the converter).
// Chunks never straddle pieces; the first piece starts with the header page.
struct Piece {
  const char* data;
  std::size_t size;
};

struct Result {
  bool ok;                // the output was written
  std::uint64_t events;   // complete events written
  std::uint64_t dropped;  // complete events left out by `cap`
};

// Writes the JSON of the log in `pieces` to `fd`: at most `cap` bytes (0: no limit). Allocates
// with mmap and writes with write(2) only: async-signal-safe.
Result to_json(const Piece* pieces, int npieces, int fd, std::uint64_t cap);

// Converts the log file `in` into the JSON file `out` (written as out.part, then renamed).
Result convert_file(const char* in, const char* out, std::uint64_t cap);

// The JSON path for a log path: ".tdtrace" removed, ".json" added unless it ends so already.
bool json_path_for(const char* log_path, char* out, std::size_t size);

}  // namespace torchada::trace::log
