// libtorchada_audit.so: an LD_AUDIT module that sends every load of one of NVIDIA's libraries
// (libcudart.so.13, libcublas.so.12, ...) to torchada's replacement library of the same name.
//
// LD_PRELOAD serves calls through the global scope only; LD_LIBRARY_PATH loses to a DT_RPATH
// (PyTorch wheels pin site-packages/nvidia/.../lib that way) and to a full path
// (ctypes.CDLL("/usr/local/cuda/lib64/libcudart.so.13")). The loader asks an audit module about
// every name before it searches (LA_SER_ORIG), whichever way the name came: a DT_NEEDED entry, a
// dlopen by name or by path. Answering with the replacement's full path there covers them all.
//
// Rules:
//   - The replacements are the files in <directory of this module>/cuda, read once at start-up.
//     A request matches replacement R when its last path component is R, or R followed by '.'
//     and more (libcudart.so.13.0.96). Nothing else is touched.
//   - Requests made by libtorchada.so itself (its `cuda` pass-through backend opens NVIDIA's real
//     libraries) are left alone, and the replacement files are hidden from them: a search
//     candidate that is one of them is refused, so the loader goes on to the next directory.
//     The same holds for requests made by NVIDIA's own library of a served name (its DT_NEEDED
//     entries: NVIDIA's libcublas.so.13 needs NVIDIA's libcublasLt.so.13): such a library can
//     only be in the process because libtorchada.so loaded it for the pass-through.
//     Both are recognised in la_objopen (libtorchada.so by file name; NVIDIA's library by a
//     served name on a file that is not the replacement); glibc hands la_objsearch the cookie
//     of the object that asked.
//   - TORCHADA_DISABLE=1, or no replacement directory: la_version returns 0, which tells the
//     loader to ignore this module entirely.
//
// Runs in the loader's audit namespace before the program: no C++ runtime (no exceptions, no
// static constructors, no allocation of ours), libc only, fixed-size state, any input accepted.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "settings/settings.h"

#define TORCHADA_AUDIT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kMaxReplacements = 16;
constexpr int kMaxExempt = 32;
constexpr size_t kMaxName = 64;

struct Replacement {
  char name[kMaxName];  // libcudart.so.13
  char path[PATH_MAX];  // /.../lib/torchada/cuda/libcudart.so.13
  dev_t dev;
  ino_t ino;
};

struct State {
  bool log_info;
  int count;
  Replacement libs[kMaxReplacements];
  int exempt_count;
  uintptr_t* exempt_cookies[kMaxExempt];  // objects whose requests are left alone
  uintptr_t* torchada_cookie;             // libtorchada.so itself
};

State g;  // zero-initialised; written in la_version and la_objopen, under the loader's lock

void log_line(const char* fmt, ...) {
  char buf[2 * PATH_MAX];
  int n =
      std::snprintf(buf, sizeof buf, "[torchada %d:%ld info] audit: ", static_cast<int>(getpid()),
                    static_cast<long>(syscall(SYS_gettid)));
  if (n < 0) return;
  va_list ap;
  va_start(ap, fmt);
  int m = std::vsnprintf(buf + n, sizeof buf - static_cast<size_t>(n) - 1, fmt, ap);
  va_end(ap);
  if (m < 0) return;
  size_t len = std::strlen(buf);
  buf[len++] = '\n';
  int fd = STDERR_FILENO;
  if (const char* file = torchada::settings::text(torchada::settings::Id::kLogFile)) {
    int f = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f >= 0) fd = f;
  }
  ssize_t ignored = write(fd, buf, len);
  (void)ignored;
  if (fd != STDERR_FILENO) close(fd);
}

// Quiet reads: the shim reports malformed values of the variables it shares with this module.
bool wants_info() {
  return torchada::settings::word(torchada::settings::Id::kLogLevel, nullptr) >= 2;  // info
}

const char* last_component(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// "lib<x>.so.<digits>": the form of NVIDIA's SONAMEs, the only names this module serves.
bool looks_like_soname(const char* s) {
  const char* so = std::strstr(s, ".so.");
  if (std::strncmp(s, "lib", 3) != 0 || so == nullptr || so == s + 3) return false;
  const char* v = so + 4;
  if (*v == '\0') return false;
  for (; *v; ++v)
    if ((*v < '0' || *v > '9') && *v != '.') return false;
  return true;
}

// Reads the replacement directory. Entries that are not regular files named like a SONAME, or
// whose path does not fit, are skipped.
void load_replacements(const char* dir) {
  DIR* d = opendir(dir);
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    if (g.count == kMaxReplacements) break;
    const size_t len = std::strlen(e->d_name);
    if (len >= kMaxName || !looks_like_soname(e->d_name)) continue;
    Replacement& r = g.libs[g.count];
    int n = std::snprintf(r.path, sizeof r.path, "%s/%s", dir, e->d_name);
    if (n < 0 || static_cast<size_t>(n) >= sizeof r.path) continue;
    struct stat st {};
    if (stat(r.path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    std::memcpy(r.name, e->d_name, len + 1);
    r.dev = st.st_dev;
    r.ino = st.st_ino;
    ++g.count;
  }
  closedir(d);
}

const Replacement* replacement_for(const char* request) {
  const char* base = last_component(request);
  for (int i = 0; i < g.count; ++i) {
    const size_t len = std::strlen(g.libs[i].name);
    if (std::strncmp(base, g.libs[i].name, len) == 0 && (base[len] == '\0' || base[len] == '.'))
      return &g.libs[i];
  }
  return nullptr;
}

bool is_replacement_file(const char* path) {
  if (std::strchr(path, '/') == nullptr) return false;  // a bare name is no file yet
  struct stat st {};
  if (stat(path, &st) != 0) return false;
  for (int i = 0; i < g.count; ++i)
    if (g.libs[i].dev == st.st_dev && g.libs[i].ino == st.st_ino) return true;
  return false;
}

bool exempt(const uintptr_t* cookie) {
  for (int i = 0; i < g.exempt_count; ++i)
    if (g.exempt_cookies[i] == cookie) return true;
  return false;
}

}  // namespace

TORCHADA_AUDIT_EXPORT unsigned int la_version(unsigned int version) {
  if (torchada::settings::flag(torchada::settings::Id::kDisable, nullptr)) return 0;
  Dl_info self{};
  char real[PATH_MAX];
  if (dladdr(reinterpret_cast<void*>(&la_version), &self) == 0 || self.dli_fname == nullptr ||
      realpath(self.dli_fname, real) == nullptr)
    return 0;
  char dir[PATH_MAX];
  const char* slash = std::strrchr(real, '/');
  const size_t dir_len = slash ? static_cast<size_t>(slash - real) : 0;
  int n = std::snprintf(dir, sizeof dir, "%.*s/cuda", static_cast<int>(dir_len), real);
  if (n < 0 || static_cast<size_t>(n) >= sizeof dir) return 0;
  load_replacements(dir);
  if (g.count == 0) return 0;  // nothing to redirect to
  g.log_info = wants_info();
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

TORCHADA_AUDIT_EXPORT unsigned int la_objopen(struct link_map* map, Lmid_t, uintptr_t* cookie) {
  if (map == nullptr || map->l_name == nullptr || cookie == nullptr || g.exempt_count == kMaxExempt)
    return 0;
  const bool torchada = std::strcmp(last_component(map->l_name), "libtorchada.so") == 0;
  const bool nvidia =
      !torchada && replacement_for(map->l_name) != nullptr && !is_replacement_file(map->l_name);
  if (torchada) g.torchada_cookie = cookie;
  if (torchada || nvidia) {
    g.exempt_cookies[g.exempt_count++] = cookie;
    if (g.log_info && nvidia)
      log_line("%s is NVIDIA's (loaded for the pass-through): its own loads are left alone",
               map->l_name);
  }
  return 0;  // no symbol-binding callbacks wanted
}

TORCHADA_AUDIT_EXPORT char* la_objsearch(const char* name, uintptr_t* cookie, unsigned int flag) {
  char* unchanged = const_cast<char*>(name);
  if (name == nullptr || g.count == 0) return unchanged;
  if (exempt(cookie)) {
    // libtorchada.so (or NVIDIA's library it loaded) looking for NVIDIA's: never hand it ours,
    // except libtorchada.so's own DT_NEEDED on the driver, which is torchada's libcuda.so.1 (found
    // through its RPATH; the pass-through opens NVIDIA's driver by full path).
    if (!is_replacement_file(name)) return unchanged;
    const bool own_driver =
        cookie == g.torchada_cookie && std::strcmp(last_component(name), "libcuda.so.1") == 0;
    return own_driver ? unchanged : nullptr;
  }
  const Replacement* r = replacement_for(name);
  if (r == nullptr || std::strcmp(name, r->path) == 0) return unchanged;
  if (g.log_info) log_line("%s (search flag %#x) -> %s", name, flag, r->path);
  return const_cast<char*>(r->path);
}
