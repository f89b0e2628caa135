#include "core/backend.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/initialised.h"
#include "core/libraries.h"
#include "core/log.h"
#include "core/policy.h"
#include "core/process.h"
#include "core/trace.h"
#include "settings/settings.h"

namespace torchada {
namespace detail {
std::atomic<const Runtime*> g_runtime{nullptr};
std::atomic<const Runtime*> g_fast_runtime{nullptr};
// Set once initialisation (backend, NVML, the kernel bridge's start) is over.
std::atomic<bool> g_init_complete{false};
}  // namespace detail

namespace {

// Never destroyed: PyTorch and friends call CUDA from atexit handlers and static destructors.
Runtime& storage() {
  alignas(Runtime) static unsigned char bytes[sizeof(Runtime)];
  static Runtime* r = new (bytes) Runtime();
  return *r;
}

// A plain mutex guards the one-time initialisation only; the hot path never takes it.
std::mutex& init_mutex() {
  alignas(std::mutex) static unsigned char bytes[sizeof(std::mutex)];
  static std::mutex* m = new (bytes) std::mutex();
  return *m;
}

bool g_failed = false;

const char* kMusaCore[] = {"musaGetDeviceCount", "musaMalloc", "musaMemcpy", "musaStreamCreate",
                           "musaGetErrorString"};

// Loads `path` and checks it is a MUSA runtime; returns the handle or null with `why` filled.
void* open_musart(const std::string& path, std::string& why) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (h == nullptr) {
    const char* e = dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  for (const char* sym : kMusaCore) {
    if (dlsym(h, sym) == nullptr) {
      why = std::string("not Moore Threads' MUSA runtime: it does not export ") + sym;
      return nullptr;  // RTLD_NODELETE: the handle stays mapped; harmless
    }
  }
  return h;
}

bool file_exists(const std::string& p) { return ::access(p.c_str(), R_OK) == 0; }

// Tries the MUSA runtime locations in order; `searched` collects what was tried.
void* find_musa(std::string& searched, std::string& path_out) {
  std::string dirs[6];
  int n = 0;
  if (const char* d = settings::text(settings::Id::kMusaLibDir)) dirs[n++] = d;
  if (const char* d = std::getenv("MUSA_HOME"); d && *d) dirs[n++] = std::string(d) + "/lib";
  if (const char* d = std::getenv("MUSA_PATH"); d && *d) dirs[n++] = std::string(d) + "/lib";
  dirs[n++] = "/usr/local/musa/lib";
  dirs[n++] = "/opt/musa/lib";
  const char* sonames[] = {"libmusart.so.5", "libmusart.so.4", "libmusart.so"};
  for (int i = 0; i < n; ++i) {
    for (const char* so : sonames) {
      std::string p = dirs[i] + "/" + so;
      if (!file_exists(p)) continue;
      std::string why;
      if (void* h = open_musart(p, why)) {
        path_out = p;
        return h;
      }
      searched += "\n    " + p + ": " + why;
    }
    searched += "\n    " + dirs[i] + "/libmusart.so{.5,.4,}";
  }
  for (const char* so : sonames) {  // the loader's own search path (LD_LIBRARY_PATH, ld.so.cache)
    std::string why;
    if (void* h = open_musart(so, why)) {
      path_out = so;
      return h;
    }
    searched += std::string("\n    ") + so + " via the loader path";
  }
  return nullptr;
}

void* find_sim(std::string& searched, std::string& path_out) {
  std::string dir;
  if (const char* d = settings::text(settings::Id::kSimLibDir))
    dir = d;
  else
    dir = std::string(self_directory()) + "/sim";
  for (const char* so : {"libmusart.so.5", "libmusart.so"}) {
    std::string p = dir + "/" + so;
    if (!file_exists(p)) continue;
    std::string why;
    if (void* h = open_musart(p, why)) {
      path_out = p;
      return h;
    }
    searched += "\n    " + p + ": " + why;
    return nullptr;
  }
  searched +=
      "\n    " + dir + "/libmusart.so (the simulator; build it or set TORCHADA_SIM_LIB_DIR)";
  return nullptr;
}

void* self_symbol_anchor();
// NVIDIA's kernel driver, or NVIDIA's libcuda.so.1 already in the process. A loaded libcuda.so.1
// is usually torchada's own (libtorchada.so needs it): that one says nothing about NVIDIA.
bool is_torchada_library(void* h, const Dl_info& self);
bool nvidia_driver_present() {
  if (file_exists("/proc/driver/nvidia/version")) return true;
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == nullptr) return false;
  Dl_info self{};
  dladdr(self_symbol_anchor(), &self);
  return !is_torchada_library(h, self);
}

void* self_symbol_anchor() { return reinterpret_cast<void*>(&self_symbol_anchor); }

void load_musa_table(Runtime& rt, void* h) {
  resolve_musart(
      rt.musa, [](void* handle, const char* name) { return dlsym(handle, name); }, h);
  rt.musa_handle = h;
  if (rt.musa.musaRuntimeGetVersion) rt.musa.musaRuntimeGetVersion(&rt.musa_runtime_version);
  if (rt.musa.musaDriverGetVersion) rt.musa.musaDriverGetVersion(&rt.musa_driver_version);
}

const Runtime& init_locked() {
  Runtime& rt = storage();
  translate_cuda_environment();  // before the backend reads MUSA_VISIBLE_DEVICES
  // Choices in settings/settings.h's order: auto, musa, sim, cuda. A malformed value loads no
  // backend (the error names it): guessing one could run a program on the wrong device.
  static constexpr const char* kChoices[] = {"auto", "musa", "sim", "cuda"};
  const settings::Parsed want = settings::read(settings::Id::kBackend);
  const char* given = std::getenv("TORCHADA_BACKEND");
  std::string choice = "auto";
  if (want.status == settings::Status::kValid)
    choice = kChoices[want.number];
  else if (want.status == settings::Status::kInvalid && *given != '\0')
    choice = given;                                    // named below
  else if (want.status == settings::Status::kInvalid)  // empty, as unset before
    settings::warn_malformed(settings::Id::kBackend, "TORCHADA_BACKEND", given, "auto",
                             settings_warn);
  std::string searched, path;

  if (choice == "cuda") {
    rt.kind = BackendKind::kCuda;
    rt.passthrough = true;
  } else if (choice == "sim") {
    if (void* h = find_sim(searched, path)) {
      rt.kind = BackendKind::kSim;
      load_musa_table(rt, h);
    }
  } else if (choice == "musa" || choice == "auto") {
    if (void* h = find_musa(searched, path)) {
      rt.kind = BackendKind::kMusa;
      load_musa_table(rt, h);
    } else if (choice == "auto" && nvidia_driver_present()) {
      rt.kind = BackendKind::kCuda;
      rt.passthrough = true;
    }
  } else {
    settings::warn_malformed(settings::Id::kBackend, "TORCHADA_BACKEND", given, "no backend",
                             [](const char* m) { TORCHADA_LOG(kError, "%s", m); });
    searched = "\n    (no search: unknown TORCHADA_BACKEND)";
  }

  std::snprintf(rt.library_path, sizeof rt.library_path, "%s", path.c_str());
  if (rt.kind == BackendKind::kNone) {
    g_failed = true;
    TORCHADA_LOG(kError,
                 "no backend for TORCHADA_BACKEND=%s; every CUDA call will fail with "
                 "cudaErrorNoDevice. Searched:%s\n  Without a Moore Threads GPU, run with "
                 "TORCHADA_BACKEND=sim to use the CPU simulator.",
                 choice.c_str(), searched.c_str());
  } else {
    TORCHADA_LOG(kInfo, "backend %s%s%s (MUSA runtime version %d, driver version %d)",
                 backend_name(rt.kind), path.empty() ? "" : " from ", path.c_str(),
                 rt.musa_runtime_version, rt.musa_driver_version);
  }
  check_settings();
  install_process_hooks();
  return rt;
}

struct CudaLib {
  std::once_flag once;
  void* handle = nullptr;
};

CudaLib& cuda_lib(int abi) {
  static CudaLib libs[2];
  return libs[abi == 12 ? 0 : 1];
}

// Whether `h` is torchada's own: libtorchada.so itself, or a replacement library
// (lib/torchada/cuda/libcudart.so.13 and friends), which needs libtorchada.so. NVIDIA's
// libraries never do.
bool is_torchada_library(void* h, const Dl_info& self) {
  link_map* map = nullptr;
  if (dlinfo(h, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return false;
  if (self.dli_fname && map->l_name && std::strcmp(map->l_name, self.dli_fname) == 0) return true;
  const char* strtab = nullptr;
  for (const ElfW(Dyn)* d = map->l_ld; d && d->d_tag != DT_NULL; ++d)
    if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(d->d_un.d_ptr);
  for (const ElfW(Dyn)* d = map->l_ld; strtab && d->d_tag != DT_NULL; ++d)
    if (d->d_tag == DT_NEEDED && std::strncmp(strtab + d->d_un.d_val, "libtorchada.so", 14) == 0)
      return true;
  return false;
}

// Every full path ld.so.cache holds for `soname` (the cache stores them as NUL-terminated strings;
// reading them needs no parser of its format, which changed across glibc releases).
void append_ld_cache_paths(const char* soname, std::vector<std::string>& out) {
  FILE* f = std::fopen("/etc/ld.so.cache", "rb");
  if (f == nullptr) return;
  std::string cache;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0 && cache.size() < (64u << 20);)
    cache.append(buf, n);
  std::fclose(f);
  const std::string needle = std::string("/") + soname + '\0';
  for (size_t at = cache.find(needle); at != std::string::npos && out.size() < 64;
       at = cache.find(needle, at + 1)) {
    size_t start = cache.rfind('\0', at);
    start = start == std::string::npos ? 0 : start + 1;
    if (cache[start] == '/') out.push_back(cache.substr(start, at + needle.size() - 1 - start));
  }
}

}  // namespace

// Loaded with dlmopen(LM_ID_BASE): the same as dlopen, except that a dlopen wrapper (ASan's and
// TSan's interceptors, say) cannot stand in as the caller. The launcher's LD_AUDIT module
// recognises loads requested by libtorchada.so and leaves them alone; through a wrapper they
// would look like the application's and be redirected to torchada's replacement library.
// With a full path glibc does not consult the audit module at all.
//
// By name, the loader may still answer with a replacement (already loaded under that SONAME, or
// first on LD_LIBRARY_PATH without the audit module): it is recognised and skipped, and the
// LD_LIBRARY_PATH directories are then tried one by one by full path.
void* open_nvidia_library(const char* soname, const char* probe) {
  std::vector<std::string> candidates;
  candidates.emplace_back(soname);
  if (const char* lp = std::getenv("LD_LIBRARY_PATH"); lp && *lp) {
    std::string dirs = lp;
    size_t start = 0;
    while (start <= dirs.size() && candidates.size() < 64) {
      size_t end = dirs.find_first_of(":;", start);
      if (end == std::string::npos) end = dirs.size();
      if (end > start && dirs[start] == '/')
        candidates.push_back(dirs.substr(start, end - start) + "/" + soname);
      start = end + 1;
    }
  }
  if (const char* d = std::getenv("CUDA_HOME"); d && *d)
    candidates.push_back(std::string(d) + "/lib64/" + soname);
  candidates.push_back(std::string("/usr/local/cuda/lib64/") + soname);
  // A versioned toolkit install: libcudart.so.12 -> /usr/local/cuda-12/lib64.
  if (const char* v = std::strrchr(soname, '.'); v && v[1] != '\0')
    candidates.push_back(std::string("/usr/local/cuda-") + (v + 1) + "/lib64/" + soname);
  // The driver (libcuda.so.1) lives with the system's libraries: where ld.so.cache says, then the
  // usual directories (containers' /usr/local/nvidia, WSL's /usr/lib/wsl/lib).
  append_ld_cache_paths(soname, candidates);
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib/x86_64-linux-gnu",
                          "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib"})
    candidates.push_back(std::string(dir) + "/" + soname);
  Dl_info self{};
  dladdr(self_symbol_anchor(), &self);
  for (const std::string& c : candidates) {
    void* h = dlmopen(LM_ID_BASE, c.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h == nullptr) continue;
    if (dlsym(h, probe) != nullptr && !is_torchada_library(h, self)) return h;
  }
  dlerror();
  TORCHADA_LOG(kError,
               "TORCHADA_BACKEND=cuda: NVIDIA's %s was not found (tried the loader path, the "
               "LD_LIBRARY_PATH directories, $CUDA_HOME/lib64, /usr/local/cuda/lib64, ld.so.cache "
               "and the system library directories; "
               "torchada's own replacement libraries are skipped)",
               soname);
  return nullptr;
}

namespace {

// A MUSA machine has no NVML, and programs that call NVML unconditionally (PyTorch's
// expandable-segments allocator) crash without one: for the musa and sim backends, torchada's
// libnvidia-ml.so.1 (lib/torchada/nvml, nvml/) is loaded once the backend is chosen, so a later
// dlopen("libnvidia-ml.so.1") finds it by SONAME, with MTML (Moore Threads' NVML counterpart, which
// it forwards monitoring calls to) loaded before it. Never for the cuda backend (NVIDIA's NVML
// serves there), never over an NVML already in the process. Once, outside the init lock (the
// library's dependency is libtorchada.so itself).
void load_nvml(const Runtime& rt) {
  if (rt.kind != BackendKind::kMusa && rt.kind != BackendKind::kSim) return;
  static std::once_flag once;
  std::call_once(once, [] {
    if (dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD) != nullptr) return;
    // MTML first: torchada's NVML forwards its monitoring calls to the MTML in the process.
    (void)load_musa_library(MusaLibrary::kMtml);
    const std::string path = std::string(self_directory()) + "/torchada/nvml/libnvidia-ml.so.1";
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) == nullptr) {
      const char* e = dlerror();
      TORCHADA_LOG(kInfo, "torchada's NVML (%s) was not loaded: %s; NVML calls find none",
                   path.c_str(), e ? e : "dlopen failed");
    }
  });
}

// The kernel bridge (ops/src/bridge): in a process with PyTorch's CUDA library, for the musa and
// sim backends, libtorchada_ops.so (next to libtorchada.so) is loaded once the backend is chosen
// and asked to install itself; PyTorch's operators whose CUDA kernels are NVIDIA code then run
// its CPU kernels. TORCHADA_KERNEL_BRIDGE=off skips it. Failures are logged, never fatal.
//
// The backend is often chosen inside a library constructor (__cudaRegisterFatBinary of
// libtorch_nvshmem.so, while PyTorch's libraries are being loaded and their CUDA kernels not yet
// registered): installing there would be overridden by the registrations that follow. So the
// loading runs on a helper thread, whose dlopen waits for the loader lock: the caller waits for
// it (bounded) when the loader is free, and leaves it to finish after the enclosing dlopen
// otherwise (PyTorch's import goes on for a long while before its first operator).
struct BridgeLoad {
  BackendKind kind;
  pid_t helper = 0;
  std::mutex m;
  std::condition_variable cv;
  bool past_loader = false;  // the helper got the loader lock
  bool done = false;
};

std::atomic<BridgeLoad*> g_bridge_load{nullptr};

void* kernel_bridge_thread(void* arg) {
  auto* st = static_cast<BridgeLoad*>(arg);
  st->helper = static_cast<pid_t>(::syscall(SYS_gettid));
  const std::string path = std::string(self_directory()) + "/libtorchada_ops.so";
  (void)dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);  // blocks while a dlopen is running
  {
    std::lock_guard<std::mutex> lock(st->m);
    st->past_loader = true;
  }
  st->cv.notify_all();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  using Install = int (*)(const char*);
  auto install = h ? reinterpret_cast<Install>(dlsym(h, "torchada_ops_bridge_install")) : nullptr;
  if (install == nullptr) {
    const char* e = dlerror();
    TORCHADA_LOG(kWarn,
                 "PyTorch's CUDA library is loaded but the kernel bridge (%s) is not: %s; its "
                 "operators whose CUDA kernels are NVIDIA code will fail",
                 path.c_str(), e ? e : "no torchada_ops_bridge_install");
  } else {
    const int n = install(backend_name(st->kind));
    using Attempting = int (*)();
    set_kernel_bridge_active(
        n > 0, reinterpret_cast<Attempting>(dlsym(h, "torchada_ops_bridge_attempting")));
    if (n < 0)
      TORCHADA_LOG(kWarn, "the kernel bridge (%s) failed to install (its log says why)",
                   path.c_str());
    else
      TORCHADA_LOG(kInfo, "kernel bridge installed: %d PyTorch CUDA operators", n);
  }
  {
    std::lock_guard<std::mutex> lock(st->m);
    st->done = true;
  }
  detail::g_kernel_bridge_pending.store(false, std::memory_order_relaxed);
  detail::refresh_fast_runtime();
  st->cv.notify_all();
  return nullptr;
}

void load_kernel_bridge(const Runtime& rt) {
  if (rt.kind != BackendKind::kMusa && rt.kind != BackendKind::kSim) return;
  static std::once_flag once;
  std::call_once(once, [&rt] {
    // The ops library reports a malformed value (it owns the variable); off is choice 3.
    if (settings::word(settings::Id::kKernelBridge, nullptr) == 3) return;
    if (dlopen("libtorch_cuda.so", RTLD_LAZY | RTLD_NOLOAD) == nullptr) return;
    auto* st = new BridgeLoad;  // shared with the detached helper: never freed
    st->kind = rt.kind;
    g_bridge_load.store(st, std::memory_order_release);
    detail::g_kernel_bridge_pending.store(true, std::memory_order_relaxed);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    const int rc = pthread_create(&t, &attr, kernel_bridge_thread, st);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      detail::g_kernel_bridge_pending.store(false, std::memory_order_relaxed);
      detail::refresh_fast_runtime();
      TORCHADA_LOG(kWarn, "kernel bridge not loaded: no thread (%s)", std::strerror(rc));
      return;
    }
    std::unique_lock<std::mutex> lock(st->m);
    if (!st->cv.wait_for(lock, std::chrono::milliseconds(200), [st] { return st->past_loader; })) {
      TORCHADA_LOG(kDebug, "kernel bridge: loading once the running dlopen has finished");
      return;
    }
    st->cv.wait_for(lock, std::chrono::seconds(60), [st] { return st->done; });
  });
}

}  // namespace

namespace detail {
std::atomic<bool> g_kernel_bridge_pending{false};
std::atomic<bool> g_cuda_initialised{false};

void note_cuda_initialised_slow() {
  if (!g_cuda_initialised.exchange(true, std::memory_order_acq_rel)) refresh_fast_runtime();
}

void kernel_bridge_wait() {
  BridgeLoad* st = g_bridge_load.load(std::memory_order_acquire);
  if (st == nullptr || st->helper == static_cast<pid_t>(::syscall(SYS_gettid))) return;
  std::unique_lock<std::mutex> lock(st->m);
  // Not past the loader lock: this thread may be inside the dlopen the helper waits for.
  if (!st->past_loader) return;
  st->cv.wait_for(lock, std::chrono::seconds(60), [st] { return st->done; });
}

const Runtime& runtime_slow() {
  const Runtime* rt = g_runtime.load(std::memory_order_acquire);
  if (rt == nullptr) return init_runtime_slow();
  if (g_kernel_bridge_pending.load(std::memory_order_relaxed)) kernel_bridge_wait();
  return *rt;
}

const Runtime& init_runtime_slow() {
  const Runtime* result = nullptr;
  {
    std::lock_guard<std::mutex> lock(init_mutex());
    if (const Runtime* rt = g_runtime.load(std::memory_order_acquire)) return *rt;
    result = &init_locked();
    g_runtime.store(result, std::memory_order_release);
  }
  load_nvml(*result);
  load_kernel_bridge(*result);
  g_init_complete.store(true, std::memory_order_release);
  refresh_fast_runtime();
  return *result;
}

void refresh_fast_runtime() {
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  const Runtime* rt = g_runtime.load(std::memory_order_acquire);
  // In this order: the bridge's pending flag is raised before initialisation is complete.
  const bool fast = rt != nullptr && g_init_complete.load(std::memory_order_acquire) &&
                    g_cuda_initialised.load(std::memory_order_acquire) && !rt->passthrough &&
                    !g_kernel_bridge_pending.load(std::memory_order_relaxed) && !trace::active();
  g_fast_runtime.store(fast ? rt : nullptr, std::memory_order_release);
}
}  // namespace detail

bool backend_failed() {
  (void)runtime();
  return g_failed;
}

const char* backend_name(BackendKind kind) {
  switch (kind) {
    case BackendKind::kMusa:
      return "musa";
    case BackendKind::kSim:
      return "sim";
    case BackendKind::kCuda:
      return "cuda";
    case BackendKind::kNone:
      break;
  }
  return "none";
}

void* cuda_symbol(int abi, const char* name) {
  CudaLib& lib = cuda_lib(abi);
  std::call_once(lib.once, [&] {
    char soname[32];
    std::snprintf(soname, sizeof soname, "libcudart.so.%d", abi);
    lib.handle = open_nvidia_library(soname, "cudaGetDeviceCount");
  });
  return lib.handle ? dlsym(lib.handle, name) : nullptr;
}

const char* self_directory() {
  static char dir[512] = {};
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info info{};
    if (dladdr(self_symbol_anchor(), &info) && info.dli_fname) {
      std::snprintf(dir, sizeof dir, "%s", info.dli_fname);
      if (char* slash = std::strrchr(dir, '/'))
        *slash = '\0';
      else
        std::snprintf(dir, sizeof dir, ".");
    }
  });
  return dir;
}

}  // namespace torchada
