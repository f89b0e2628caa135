#include "core/backtrace.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/log.h"

#if __has_include(<libunwind.h>)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define TORCHADA_HAVE_LIBUNWIND 1
#endif

namespace torchada {
namespace {

constexpr int kMaxFrames = 64;

struct Frame {
  std::uintptr_t ip;
  std::uintptr_t offset;  // from the start of `name`
  char name[256];         // empty when unknown
};

#ifdef TORCHADA_HAVE_LIBUNWIND
#define TORCHADA_STR_(x) #x
#define TORCHADA_STR(x) TORCHADA_STR_(x)

// libunwind, loaded on first use with RTLD_LOCAL so that none of its symbols join the process's
// global scope.
struct Unwind {
  int (*getcontext)(unw_context_t*);
  int (*init_local)(unw_cursor_t*, unw_context_t*);
  int (*step)(unw_cursor_t*);
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*);
  int (*get_proc_name)(unw_cursor_t*, char*, std::size_t, unw_word_t*);
  bool ok;
};

template <class F>
void resolve(void* h, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(h, name));
}

const Unwind& unwind() {
  static const Unwind u = [] {
    Unwind r = {};
    void* h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return r;
    resolve(h, TORCHADA_STR(unw_tdep_getcontext), &r.getcontext);
    resolve(h, TORCHADA_STR(unw_init_local), &r.init_local);
    resolve(h, TORCHADA_STR(unw_step), &r.step);
    resolve(h, TORCHADA_STR(unw_get_reg), &r.get_reg);
    resolve(h, TORCHADA_STR(unw_get_proc_name), &r.get_proc_name);
    r.ok = r.getcontext && r.init_local && r.step && r.get_reg && r.get_proc_name;
    return r;
  }();
  return u;
}

// Frames below the caller of this function (which itself is frame 0 and dropped).
__attribute__((noinline)) int collect_libunwind(Frame* out, int max) {
  const Unwind& u = unwind();
  if (!u.ok) return -1;
  unw_context_t ctx;
  unw_cursor_t cur;
  if (u.getcontext(&ctx) != 0 || u.init_local(&cur, &ctx) != 0) return -1;
  int n = 0;
  while (n < max && u.step(&cur) > 0) {
    unw_word_t ip = 0, off = 0;
    if (u.get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    Frame& f = out[n++];
    f.ip = ip;
    f.offset = 0;
    f.name[0] = '\0';
    if (u.get_proc_name(&cur, f.name, sizeof f.name, &off) == 0)
      f.offset = off;
    else
      f.name[0] = '\0';
  }
  return n;
}
#endif

__attribute__((noinline)) int collect_glibc(Frame* out, int max) {
  void* ips[kMaxFrames + 1];
  int n = backtrace(ips, max + 1);
  int k = 0;
  for (int i = 1; i < n; ++i) {  // ips[0] is this function
    Frame& f = out[k++];
    f.ip = reinterpret_cast<std::uintptr_t>(ips[i]);
    f.offset = 0;
    f.name[0] = '\0';
  }
  return k;
}

}  // namespace

__attribute__((noinline)) void log_backtrace(int skip, const char* fmt, ...) {
  if (!log_enabled(LogLevel::kDebug)) return;
  char heading[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(heading, sizeof heading, fmt, ap);
  va_end(ap);

  // One backtrace at a time: the frame buffer is large for a thread's stack.
  static std::mutex mu;
  static Frame frames[kMaxFrames];
  std::lock_guard<std::mutex> lock(mu);
  int n = -1;
#ifdef TORCHADA_HAVE_LIBUNWIND
  n = collect_libunwind(frames, kMaxFrames);
#endif
  if (n < 0) n = collect_glibc(frames, kMaxFrames);
  // frames[0] is log_backtrace itself.
  const int first = 1 + (skip > 0 ? skip : 0);
  log(LogLevel::kDebug, "%s; backtrace:", heading);
  for (int i = first; i < n; ++i) {
    Frame& f = frames[i];
    // The return address points after the call; look it up one byte earlier.
    const std::uintptr_t lookup = f.ip > 0 ? f.ip - 1 : f.ip;
    Dl_info info = {};
    const bool have_module = dladdr(reinterpret_cast<void*>(lookup), &info) != 0;
    if (f.name[0] == '\0' && have_module && info.dli_sname) {
      std::snprintf(f.name, sizeof f.name, "%s", info.dli_sname);
      f.offset = f.ip - reinterpret_cast<std::uintptr_t>(info.dli_saddr);
    }
    const char* module = "?";
    if (have_module && info.dli_fname && *info.dli_fname) {
      module = std::strrchr(info.dli_fname, '/');
      module = module ? module + 1 : info.dli_fname;
    }
    int status = -1;
    char* demangled = f.name[0] ? abi::__cxa_demangle(f.name, nullptr, nullptr, &status) : nullptr;
    const char* name = status == 0 && demangled ? demangled : (f.name[0] ? f.name : "??");
    log(LogLevel::kDebug, "  #%-2d 0x%016llx %s+0x%llx (%s)", i - first,
        static_cast<unsigned long long>(f.ip), name, static_cast<unsigned long long>(f.offset),
        module);
    std::free(demangled);
  }
}

}  // namespace torchada
