// Every TORCHADA_* environment variable, in one table: its name, type, accepted values, default,
// the component that reports a malformed value, and what it means. Every component (the shim, the
// simulator's libraries, the ops library, the audit module, torchada-doctor) reads its settings
// through the accessors below, so a value is parsed the same way everywhere and a malformed one
// is a warning naming the variable, the value, what is accepted and what is used instead.
//
// Header-only and freestanding (libc and <atomic> only): the audit module links no C++ runtime.
// No constructors: the table is constexpr and the warn-once state is constant-initialised. Each
// library that includes it has its own (hidden) copy of that state, so only the variable's
// owning component passes a sink; the others read quietly (sink nullptr).
#pragma once

#include <strings.h>

#include <atomic>
#include <initializer_list>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace torchada::settings {

enum class Type : unsigned char {
  kFlag,        // 1, true, yes, on / 0, false, no, off (any case)
  kInt,         // a whole number in [lo, hi]
  kWord,        // one of `words` (any case); "a,b|c": a and b are one choice, c another
  kPath,        // a file or directory; empty is unset
  kText,        // free text; empty is unset
  kCapability,  // one of `words`, or a compute capability M.m
};

// Who reports a malformed value (the others read the variable quietly).
enum class Owner : unsigned char { kShim, kSim, kOps, kScripts };

struct Var {
  const char* name;  // ending in '_': a family (the name is a prefix, e.g. ..._OVERRIDE_<op>)
  Type type;
  Owner owner;
  long long lo, hi;     // kInt
  const char* words;    // kWord, kCapability
  const char* def;      // the default as text; "" when computed or none
  const char* meaning;  // one line
};

// X(id, name, type, owner, lo, hi, words, default, meaning). README.md's Environment table lists
// the same names (tests/settings checks both ways).
#define TORCHADA_SETTINGS_TABLE(X)                                                                 \
  X(kBackend, "TORCHADA_BACKEND", kWord, kShim, 0, 0, "auto|musa|sim|cuda", "auto",                \
    "backend: auto (the MUSA runtime, else NVIDIA's with a driver), musa, sim, cuda")              \
  X(kMusaLibDir, "TORCHADA_MUSA_LIB_DIR", kPath, kShim, 0, 0, "", "",                              \
    "first directory searched for libmusart and the other MUSA libraries")                         \
  X(kSimLibDir, "TORCHADA_SIM_LIB_DIR", kPath, kShim, 0, 0, "", "",                                \
    "directory of the simulator's libraries (default: sim/ next to libtorchada.so)")               \
  X(kLogLevel, "TORCHADA_LOG_LEVEL", kWord, kShim, 0, 0,                                           \
    "error,0|warn,warning,1|info,2|debug,trace,3", "warn", "log level")                            \
  X(kLogFile, "TORCHADA_LOG_FILE", kPath, kShim, 0, 0, "", "",                                     \
    "log lines are appended to this file instead of stderr")                                       \
  X(kStrict, "TORCHADA_STRICT", kFlag, kShim, 0, 0, "", "0",                                       \
    "abort at the first unsupported call or refused kernel")                                       \
  X(kStats, "TORCHADA_STATS", kFlag, kShim, 0, 0, "", "0", "per-function call table at exit")      \
  X(kTrace, "TORCHADA_TRACE", kPath, kShim, 0, 0, "", "",                                          \
    "Chrome trace-event file of every intercepted call")                                           \
  X(kTraceMaxMb, "TORCHADA_TRACE_MAX_MB", kInt, kShim, 1, (1LL << 40) - 1, "", "2048",             \
    "trace size cap in MiB (the binary log and the JSON each)")                                    \
  X(kTraceClock, "TORCHADA_TRACE_CLOCK", kWord, kShim, 0, 0, "auto|tsc|monotonic", "auto",         \
    "trace clock (auto: tsc where the kernel's clock is the TSC)")                                 \
  X(kTraceFormat, "TORCHADA_TRACE_FORMAT", kWord, kShim, 0, 0, "json|binary", "json",              \
    "trace output: json, or binary (torchada-trace convert)")                                      \
  X(kDisable, "TORCHADA_DISABLE", kFlag, kShim, 0, 0, "", "0",                                     \
    "the launcher, the entrypoint and the audit module do nothing")                                \
  X(kReportCc, "TORCHADA_REPORT_CC", kCapability, kShim, 0, 0, "equivalent|native", "equivalent",  \
    "compute capability CUDA code sees: equivalent, native or M.m")                                \
  X(kSimDevices, "TORCHADA_SIM_DEVICES", kInt, kSim, 1, 16, "", "1",                               \
    "simulator: number of devices")                                                                \
  X(kSimArch, "TORCHADA_SIM_ARCH", kWord, kSim, 0, 0, "mp_22|mp_21|mp_31", "mp_22",              \
    "simulator: the MUSA architecture presented (mp_21 MTT S80, mp_22 MTT S4000, mp_31 MTT S5000)") \
  X(kSimMemoryMb, "TORCHADA_SIM_MEMORY_MB", kInt, kSim, 1, 1LL << 24, "", "",                      \
    "simulator: memory per device in MiB (default 49152, at most half the host's, shared)")        \
  X(kSimGemm, "TORCHADA_SIM_GEMM", kText, kSim, 0, 0, "", "",                                      \
    "simulator: the GEMM library, openblas or a path to a CBLAS library")                          \
  X(kKernelBridge, "TORCHADA_KERNEL_BRIDGE", kWord, kOps, 0, 0, "auto|direct|copy|off,0,none",     \
    "auto", "PyTorch's kernel bridge (auto: direct on sim, copy on musa, off on cuda)")            \
  X(kBridgeDeviceAlloc, "TORCHADA_BRIDGE_DEVICE_ALLOC", kFlag, kOps, 0, 0, "", "1",                \
    "kernel bridge, direct mode: CPU results allocated in CUDA memory")                            \
  X(kOpsKernels, "TORCHADA_OPS_KERNELS", kWord, kOps, 0, 0, "auto,on,1|off,0,false,no", "auto",    \
    "ops/'s device kernels (off: back to the kernel bridge)")                                      \
  X(kOpsRng, "TORCHADA_OPS_RNG", kWord, kOps, 0, 0, "philox|cpu", "philox",                        \
    "random operators: philox on the device, or cpu through the kernel bridge")                    \
  X(kTorchCompile, "TORCHADA_TORCH_COMPILE", kWord, kOps, 0, 0, "aot_eager|inductor", "aot_eager", \
    "torch.compile's inductor graphs: run with aot_eager, or keep inductor")                       \
  X(kEnableCppOps, "TORCHADA_ENABLE_CPP_OPS", kFlag, kOps, 0, 0, "", "0",                          \
    "ATen override library: register the aten overrides")                                          \
  X(kDebugCppOps, "TORCHADA_DEBUG_CPP_OPS", kFlag, kOps, 0, 0, "", "0",                            \
    "ATen override library: debug output")                                                         \
  X(kOverrideKey, "TORCHADA_OVERRIDE_KEY", kWord, kOps, 0, 0, "auto|CPU|CUDA|PrivateUse1", "auto", \
    "ATen override library: dispatch key")                                                         \
  X(kDisableOpOverride, "TORCHADA_DISABLE_OP_OVERRIDE_", kFlag, kOps, 0, 0, "", "0",               \
    "ATen override library: TORCHADA_DISABLE_OP_OVERRIDE_<op> disables one op's override")         \
  X(kOpsLibrary, "TORCHADA_OPS_LIBRARY", kPath, kScripts, 0, 0, "", "",                            \
    "ATen override library: the file torchada_ops.load() loads")                                   \
  X(kBuildDir, "TORCHADA_BUILD_DIR", kPath, kScripts, 0, 0, "", "",                                \
    "torchada-run, torchada-doctor, the test scripts: the build tree to use")                      \
  X(kCheck, "TORCHADA_CHECK", kPath, kScripts, 0, 0, "", "",                                       \
    "torchada-run --check: the torchada-check program")                                            \
  X(kRun, "TORCHADA_RUN", kPath, kScripts, 0, 0, "", "",                                           \
    "the container entrypoint: the launcher to use")                                               \
  X(kSkipOps, "TORCHADA_SKIP_OPS", kFlag, kScripts, 0, 0, "", "0",                                 \
    "scripts/test.sh: skip the ops/ and PyTorch suites")                                           \
  X(kVenv, "TORCHADA_VENV", kPath, kScripts, 0, 0, "", "",                                         \
    "scripts/setup-torch.sh: the virtual environment's location")                                  \
  X(kTorchVersion, "TORCHADA_TORCH_VERSION", kText, kScripts, 0, 0, "", "",                        \
    "scripts/setup-torch.sh: the torch version to install instead of the pinned one")              \
  X(kTraceTool, "TORCHADA_TRACE_TOOL", kPath, kScripts, 0, 0, "", "",                              \
    "tests/trace: the torchada-trace program")                                                     \
  X(kBenchThreads, "TORCHADA_BENCH_THREADS", kInt, kScripts, 1, 4096, "", "",                      \
    "bench/ops: torch's CPU threads")

enum class Id : int {
#define TORCHADA_SETTINGS_ID(id, ...) id,
  TORCHADA_SETTINGS_TABLE(TORCHADA_SETTINGS_ID)
#undef TORCHADA_SETTINGS_ID
      kCount
};

inline constexpr Var kVars[] = {
#define TORCHADA_SETTINGS_ROW(id, name, type, owner, lo, hi, words, def, meaning) \
  {name, Type::type, Owner::owner, lo, hi, words, def, meaning},
    TORCHADA_SETTINGS_TABLE(TORCHADA_SETTINGS_ROW)
#undef TORCHADA_SETTINGS_ROW
};
inline constexpr int kCount = static_cast<int>(Id::kCount);
static_assert(sizeof kVars / sizeof kVars[0] == static_cast<std::size_t>(kCount));

constexpr const Var& var(Id id) { return kVars[static_cast<int>(id)]; }

inline bool is_family(const Var& v) {
  const std::size_t n = std::strlen(v.name);
  return n > 0 && v.name[n - 1] == '_';
}

// The table's entry for `name` (its first `len` characters), a family's by prefix; null when
// torchada knows no such variable.
inline const Var* find(const char* name, std::size_t len) {
  for (const Var& v : kVars) {
    const std::size_t n = std::strlen(v.name);
    if (is_family(v) ? len > n && std::strncmp(name, v.name, n) == 0
                     : len == n && std::strncmp(name, v.name, n) == 0)
      return &v;
  }
  return nullptr;
}
inline const Var* find(const char* name) { return find(name, std::strlen(name)); }

inline const char* owner_name(Owner o) {
  switch (o) {
    case Owner::kShim:
      return "shim";
    case Owner::kSim:
      return "simulator";
    case Owner::kOps:
      return "ops";
    case Owner::kScripts:
      return "scripts";
  }
  return "?";
}

inline const char* type_name(Type t) {
  switch (t) {
    case Type::kFlag:
      return "flag";
    case Type::kInt:
      return "integer";
    case Type::kWord:
      return "word";
    case Type::kPath:
      return "path";
    case Type::kText:
      return "text";
    case Type::kCapability:
      return "capability";
  }
  return "?";
}

// ---- parsing (pure: no environment, no state) ---------------------------------------------------

enum class Status : unsigned char { kUnset, kValid, kInvalid };

struct Parsed {
  Status status = Status::kUnset;
  long long number = 0;      // kFlag: 0 or 1; kInt: the number; kWord / kCapability: the choice
                             // (index of its '|' group), kCapability M.m: -1
  int major = 0, minor = 0;  // kCapability M.m
};

namespace detail {

// Whether `s` (NUL-terminated) is one of the ','-separated aliases in [p, end), any case.
inline bool alias_matches(const char* p, const char* end, const char* s) {
  const std::size_t n = std::strlen(s);
  while (p < end) {
    const char* q = p;
    while (q < end && *q != ',') ++q;
    if (static_cast<std::size_t>(q - p) == n && strncasecmp(p, s, n) == 0) return true;
    p = q + (q < end ? 1 : 0);
  }
  return false;
}

// The group of `s` in "a,b|c|d": 0, 1, 2...; -1 when none.
inline int word_index(const char* words, const char* s) {
  int i = 0;
  for (const char* p = words; *p != '\0'; ++i) {
    const char* end = std::strchr(p, '|');
    if (end == nullptr) end = p + std::strlen(p);
    if (alias_matches(p, end, s)) return i;
    p = *end ? end + 1 : end;
  }
  return -1;
}

inline bool parse_ll(const char* s, long long* out) {
  if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
    return false;  // no spaces or '+' before the number
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') return false;
  *out = x;
  return true;
}

// Appends to a bounded buffer; never overflows, always NUL-terminated.
struct Out {
  char* buf;
  std::size_t cap, len;
  void add(const char* s, std::size_t n) {
    for (std::size_t i = 0; i < n && len + 1 < cap; ++i) buf[len++] = s[i];
    if (cap) buf[len < cap ? len : cap - 1] = '\0';
  }
  void add(const char* s) { add(s, std::strlen(s)); }
  void num(long long x) {
    char t[32];
    const int n = std::snprintf(t, sizeof t, "%lld", x);
    if (n > 0) add(t, static_cast<std::size_t>(n));
  }
};

inline void add_words(Out& o, const char* words, const char* last_sep) {
  int groups = 1;
  for (const char* p = words; *p; ++p) groups += *p == '|';
  int i = 0;
  for (const char* p = words; *p != '\0'; ++i) {
    const char* end = std::strchr(p, '|');
    if (end == nullptr) end = p + std::strlen(p);
    const char* comma = p;
    while (comma < end && *comma != ',') ++comma;
    if (i > 0) o.add(i + 1 == groups ? last_sep : ", ");
    o.add(p, static_cast<std::size_t>(comma - p));  // the first alias names the choice
    p = *end ? end + 1 : end;
  }
}

inline unsigned long long hash(const char* s, unsigned long long h = 1469598103934665603ULL) {
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ULL;
  return h;
}

}  // namespace detail

// `value` as `v` reads it: null is unset; empty is unset for paths and text, malformed otherwise.
inline Parsed parse(const Var& v, const char* value) {
  Parsed r;
  if (value == nullptr) return r;
  if (*value == '\0') {
    if (v.type != Type::kPath && v.type != Type::kText) r.status = Status::kInvalid;
    return r;
  }
  r.status = Status::kInvalid;
  switch (v.type) {
    case Type::kPath:
    case Type::kText:
      r.status = Status::kValid;
      break;
    case Type::kFlag: {
      const int i = detail::word_index("0,false,no,off|1,true,yes,on", value);
      if (i >= 0) {
        r.number = i;
        r.status = Status::kValid;
      }
      break;
    }
    case Type::kInt: {
      long long x = 0;
      if (detail::parse_ll(value, &x) && x >= v.lo && x <= v.hi) {
        r.number = x;
        r.status = Status::kValid;
      }
      break;
    }
    case Type::kWord:
    case Type::kCapability: {
      const int i = detail::word_index(v.words, value);
      if (i >= 0) {
        r.number = i;
        r.status = Status::kValid;
      } else if (v.type == Type::kCapability) {
        // M.m: one or two digits, a dot, one or two digits, nothing else; major >= 1.
        int major = 0, minor = 0, nd = 0;
        const char* c = value;
        for (; *c >= '0' && *c <= '9' && nd < 3; ++c, ++nd) major = major * 10 + (*c - '0');
        if (nd == 0 || nd > 2 || *c != '.') break;
        nd = 0;
        for (++c; *c >= '0' && *c <= '9' && nd < 3; ++c, ++nd) minor = minor * 10 + (*c - '0');
        if (nd == 0 || nd > 2 || *c != '\0' || major < 1) break;
        r.number = -1;
        r.major = major;
        r.minor = minor;
        r.status = Status::kValid;
      }
      break;
    }
  }
  return r;
}

// What `v` accepts, e.g. "a whole number in [1, 16]", "one of error, warn, info or debug".
inline void describe_accepted(const Var& v, char* buf, std::size_t cap) {
  detail::Out o{buf, cap, 0};
  o.add("");
  switch (v.type) {
    case Type::kFlag:
      o.add("1, true, yes, on or 0, false, no, off");
      break;
    case Type::kInt:
      o.add("a whole number in [");
      o.num(v.lo);
      o.add(", ");
      o.num(v.hi);
      o.add("]");
      break;
    case Type::kWord:
      o.add("one of ");
      detail::add_words(o, v.words, " or ");
      break;
    case Type::kCapability:
      detail::add_words(o, v.words, ", ");
      o.add(" or a compute capability M.m (e.g. 8.0)");
      break;
    case Type::kPath:
      o.add("a path");
      break;
    case Type::kText:
      o.add("any text");
      break;
  }
}

// The first alias of choice `i` of `v`'s words (for messages): "warn" for LOG_LEVEL's 1.
inline void word_name(const Var& v, long long i, char* buf, std::size_t cap) {
  detail::Out o{buf, cap, 0};
  o.add("");
  const char* words = v.type == Type::kFlag ? "off|on" : v.words;
  long long k = 0;
  for (const char* p = words; *p != '\0'; ++k) {
    const char* end = std::strchr(p, '|');
    if (end == nullptr) end = p + std::strlen(p);
    const char* comma = p;
    while (comma < end && *comma != ',') ++comma;
    if (k == i) return o.add(p, static_cast<std::size_t>(comma - p));
    p = *end ? end + 1 : end;
  }
}

// The warning for a malformed value: "TORCHADA_SIM_DEVICES=two is not a whole number in [1, 16];
// using 1". `name` is the variable's own name (a family member's, for families).
inline void format_warning(const Var& v, const char* name, const char* value, const char* instead,
                           char* buf, std::size_t cap) {
  detail::Out o{buf, cap, 0};
  char accepted[256];
  describe_accepted(v, accepted, sizeof accepted);
  o.add(name);
  if (value != nullptr && *value == '\0') {
    o.add(" is set but empty, not ");
  } else {
    o.add("=");
    o.add(value ? value : "");
    o.add(" is not ");
  }
  o.add(accepted);
  o.add("; using ");
  o.add(instead);
}

// The default of `v` as its accessors return it.
inline Parsed default_of(const Var& v) { return parse(v, *v.def ? v.def : nullptr); }

// ---- reading the environment ----------------------------------------------------------------

// Receives one warning line (without a prefix or newline); the component logs it its own way.
using Sink = void (*)(const char* message);

namespace detail {
// Per variable: a hash of the last value warned about (0: none), so each malformed value is
// reported once however often it is read, and a different one again.
inline std::atomic<unsigned long long> g_warned[kCount + 1]{};
inline std::atomic<bool> g_scanned{false};
}  // namespace detail

// Reports `value` of `id` (variable `name`) as malformed through `sink`, once per value.
inline void warn_malformed(Id id, const char* name, const char* value, const char* instead,
                           Sink sink) {
  if (sink == nullptr) return;
  const unsigned long long h = detail::hash(value ? value : "", detail::hash(name)) | 1;
  if (detail::g_warned[static_cast<int>(id)].exchange(h, std::memory_order_relaxed) == h) return;
  char line[512];
  format_warning(var(id), name, value, instead, line, sizeof line);
  sink(line);
}

// The value of `id` as parsed; no warning.
inline Parsed read(Id id) { return parse(var(id), std::getenv(var(id).name)); }

// `id`'s value, or `fallback` when it is unset or malformed (reported through `sink`).
inline long long number(Id id, long long fallback, Sink sink, const char* name = nullptr) {
  const Var& v = var(id);
  if (name == nullptr) name = v.name;
  const char* value = std::getenv(name);
  const Parsed p = parse(v, value);
  if (p.status == Status::kValid) return p.number;
  if (p.status == Status::kInvalid && sink != nullptr) {
    char instead[64];
    if (v.type == Type::kInt)
      std::snprintf(instead, sizeof instead, "%lld", fallback);
    else
      word_name(v, fallback, instead, sizeof instead);
    warn_malformed(id, name, value, instead, sink);
  }
  return fallback;
}

inline bool flag(Id id, Sink sink) { return number(id, default_of(var(id)).number, sink) != 0; }
// A family member's flag: TORCHADA_DISABLE_OP_OVERRIDE_<suffix>.
inline bool flag(Id family, const char* suffix, Sink sink) {
  char name[128];
  std::snprintf(name, sizeof name, "%s%s", var(family).name, suffix);
  return number(family, default_of(var(family)).number, sink, name) != 0;
}
inline long long integer(Id id, long long fallback, Sink sink) {
  return number(id, fallback, sink);
}
inline long long integer(Id id, Sink sink) { return number(id, default_of(var(id)).number, sink); }
// The choice (index of the '|' group in the table's words).
inline int word(Id id, Sink sink) {
  return static_cast<int>(number(id, default_of(var(id)).number, sink));
}
inline int word(Id id, int fallback, Sink sink) {
  return static_cast<int>(number(id, fallback, sink));
}
// A path or text: the value, or null when unset or empty.
inline const char* text(Id id) {
  const char* v = std::getenv(var(id).name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// TORCHADA_REPORT_CC and its kind: major < 0 is a word choice (`number`), else M.m.
inline Parsed capability(Id id, Sink sink) {
  const Var& v = var(id);
  const char* value = std::getenv(v.name);
  Parsed p = parse(v, value);
  if (p.status == Status::kValid) return p;
  if (p.status == Status::kInvalid) warn_malformed(id, v.name, value, v.def, sink);
  p = default_of(v);
  return p;
}

// ---- the whole environment ------------------------------------------------------------------

namespace detail {
// Edit distance of two short names (for "did you mean"); large for long ones.
inline int distance(const char* a, std::size_t na, const char* b) {
  const std::size_t nb = std::strlen(b);
  if (na >= 64 || nb >= 64) return 99;
  int row[65];
  for (std::size_t j = 0; j <= nb; ++j) row[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= na; ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= nb; ++j) {
      const int up = row[j];
      const int sub = diag + (a[i - 1] != b[j - 1]);
      int best = sub < up + 1 ? sub : up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[nb];
}
}  // namespace detail

// The known variable closest to `name` (its first `len` characters) when it is a likely typo.
inline const Var* nearest(const char* name, std::size_t len) {
  const Var* best = nullptr;
  int best_d = 3;  // at most two edits
  for (const Var& v : kVars) {
    const int d = detail::distance(name, len, v.name);
    if (d < best_d) {
      best_d = d;
      best = &v;
    }
  }
  return best;
}

// The warning for a TORCHADA_* name torchada does not know.
inline void format_unknown(const char* name, std::size_t len, char* buf, std::size_t cap) {
  detail::Out o{buf, cap, 0};
  o.add(name, len);
  o.add(" is not a variable torchada knows; it is ignored");
  if (const Var* near = nearest(name, len)) {
    o.add(" (did you mean ");
    o.add(near->name);
    o.add("?)");
  }
}

// Once per process: every TORCHADA_* variable in `env` that no component knows, and every known
// one `owner` reports whose value is malformed, each through `sink`; except `skip`'s, which their
// readers report with a fallback only they know.
inline void check_environment(char** env, Owner owner, Sink sink,
                              std::initializer_list<Id> skip = {}) {
  if (sink == nullptr || detail::g_scanned.exchange(true)) return;
  for (char** e = env; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "TORCHADA_", 9) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    const std::size_t len = eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e);
    const Var* v = find(*e, len);
    if (v == nullptr) {
      char line[512];
      format_unknown(*e, len, line, sizeof line);
      sink(line);
      continue;
    }
    if (v->owner != owner || eq == nullptr) continue;
    const Id id = static_cast<Id>(v - kVars);
    bool skipped = false;
    for (Id s : skip) skipped |= s == id;
    if (skipped) continue;
    const Parsed p = parse(*v, eq + 1);
    if (p.status != Status::kInvalid) continue;
    char name[128], instead[64];
    std::snprintf(name, sizeof name, "%.*s", static_cast<int>(len), *e);
    const Parsed d = default_of(*v);
    if (v->type == Type::kInt)
      std::snprintf(instead, sizeof instead, "%s", *v->def ? v->def : "the default");
    else if (v->type == Type::kCapability)
      std::snprintf(instead, sizeof instead, "%s", v->def);
    else
      word_name(*v, d.number, instead, sizeof instead);
    warn_malformed(id, name, eq + 1, instead, sink);
  }
}

// Tests only: forget what was reported.
inline void reset_warnings_for_testing() {
  for (auto& w : detail::g_warned) w.store(0, std::memory_order_relaxed);
  detail::g_scanned.store(false, std::memory_order_relaxed);
}

}  // namespace torchada::settings
