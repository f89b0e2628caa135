// A program that reaches cudart one way and reports who answered: torchada (the shim on the
// simulator) or NVIDIA's own library. Built several times (tests/audit/CMakeLists.txt):
//
//   probe_plt13, probe_plt12   linked with NVIDIA's libcudart.so.13 / .12: calls through the PLT
//   probe_rpath13              the same, pinned with a DT_RPATH (as PyTorch wheels do)
//   probe_dl13, probe_dl12     not linked: --open NAME|PATH, then dlsym (or dlvsym) on the handle
//
//   probe_dl13 --default    not linked, no dlopen: dlsym(RTLD_DEFAULT), i.e. the preloaded shim
//
//   probe [--open NAME | --default] [--vsym NODE] [--race THREADS] [--stub] [--not-mapped FILE]
//         [--mapped FILE] --expect WHO
//
// WHO:
//   torchada     every call succeeds with what only the simulator reports: TORCHADA_SIM_DEVICES
//                devices of TORCHADA_SIM_MEMORY_MB MiB; device properties agree with the
//                attributes (so the struct layout is the caller's ABI); NVIDIA's library
//                (PROBE_NVIDIA_LIB) is not mapped; libtorchada.so is mapped exactly once.
//   nvidia       NVIDIA's library is mapped and libtorchada.so is not (control runs).
//   passthrough  both are mapped (libtorchada.so loaded NVIDIA's for the `cuda` backend), and
//                cudaGetDeviceCount answers PROBE_REFERENCE_RC, what NVIDIA's library answered
//                in a run without torchada.
//   open-fails   --open must fail cleanly (odd names).
//   any          --open, report the outcome, nothing checked.
//   which        --which NAME: print the file that defines NAME as looked up through the handle
//                ("NAME is in FILE"); fails when it is not found.
//
// --stub: the cudaGetDeviceCount found must be a forwarding stub of a replacement library
// (its dladdr file is not libtorchada.so). --race: that many threads make their first call
// at the same moment. --not-mapped FILE / --mapped FILE: FILE must not / must be mapped at the end.
// Exit status 0 when every check passed.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

int g_failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++g_failures;
}

long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

// (dev, inode) of every file mapped into this process, and of the mapped libtorchada.so files.
struct Maps {
  std::set<std::pair<unsigned long, unsigned long>> files;
  std::set<std::pair<unsigned long, unsigned long>> torchada;
  std::vector<std::string> torchada_paths;
};

Maps read_maps() {
  Maps m;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string range, perms, offset, dev, inode_s, path;
    ls >> range >> perms >> offset >> dev >> inode_s;
    std::getline(ls, path);
    size_t p = path.find_first_not_of(' ');
    path = p == std::string::npos ? "" : path.substr(p);
    unsigned maj = 0, min = 0;
    if (std::sscanf(dev.c_str(), "%x:%x", &maj, &min) != 2) continue;
    unsigned long inode = std::strtoul(inode_s.c_str(), nullptr, 10);
    if (inode == 0) continue;
    auto id = std::make_pair(static_cast<unsigned long>(makedev(maj, min)), inode);
    m.files.insert(id);
    const size_t slash = path.rfind('/');
    if (path.substr(slash == std::string::npos ? 0 : slash + 1) == "libtorchada.so" &&
        m.torchada.insert(id).second)
      m.torchada_paths.push_back(path);
  }
  return m;
}

bool mapped(const Maps& m, const char* file) {
  struct stat st {};
  if (file == nullptr || stat(file, &st) != 0) return false;
  return m.files.count({static_cast<unsigned long>(st.st_dev), st.st_ino}) != 0;
}

const char* file_of(void* fn) {
  Dl_info info{};
  return fn && dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "?";
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

#define PROBE_STR2(x) #x
#define PROBE_STR(x) PROBE_STR2(x)

using CountFn = cudaError_t (*)(int*);
using MemInfoFn = cudaError_t (*)(size_t*, size_t*);
using PropsFn = cudaError_t (*)(cudaDeviceProp*, int);
using AttrFn = cudaError_t (*)(int*, cudaDeviceAttr, int);

struct Api {
  CountFn count = nullptr;
  MemInfoFn mem_info = nullptr;
  PropsFn props = nullptr;
  AttrFn attr = nullptr;
};

template <typename F>
F lookup(void* h, const char* name, const char* node) {
  void* p = node ? dlvsym(h, name, node) : dlsym(h, name);
  if (p == nullptr) {
    const char* e = dlerror();
    check(false, std::string(node ? "dlvsym " : "dlsym ") + name + (node ? "@" : "") +
                     (node ? node : "") + ": " + (e ? e : "not found"));
  }
  return reinterpret_cast<F>(p);
}

void check_torchada(const Api& api, int race) {
  const long want_devices = env_long("TORCHADA_SIM_DEVICES", 1);
  const long want_mb = env_long("TORCHADA_SIM_MEMORY_MB", 49152);
  if (!api.count || !api.mem_info || !api.props || !api.attr) return;

  if (race > 1) {
    std::atomic<int> ready{0};
    std::atomic<int> good{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < race; ++i) {
      threads.emplace_back([&] {
        ready.fetch_add(1);
        while (ready.load() < race) {
        }
        int n = -1;
        if (api.count(&n) == cudaSuccess && n == want_devices) good.fetch_add(1);
      });
    }
    for (auto& t : threads) t.join();
    check(good.load() == race,
          std::to_string(race) + " threads racing the first call: " + std::to_string(good.load()) +
              " got " + std::to_string(want_devices) + " devices");
  }

  int n = -1;
  cudaError_t rc = api.count(&n);
  check(rc == cudaSuccess && n == want_devices,
        "cudaGetDeviceCount: rc " + std::to_string(rc) + ", " + std::to_string(n) +
            " devices (simulator configured with " + std::to_string(want_devices) + ")");
  size_t free_b = 0, total_b = 0;
  rc = api.mem_info(&free_b, &total_b);
  check(rc == cudaSuccess && total_b == static_cast<size_t>(want_mb) << 20,
        "cudaMemGetInfo: rc " + std::to_string(rc) + ", total " + std::to_string(total_b) +
            " bytes (simulator configured with " + std::to_string(want_mb) + " MiB)");
  cudaDeviceProp prop{};
  rc = api.props(&prop, 0);
  int major = -1, sms = -1;
  api.attr(&major, cudaDevAttrComputeCapabilityMajor, 0);
  api.attr(&sms, cudaDevAttrMultiProcessorCount, 0);
  check(rc == cudaSuccess && prop.totalGlobalMem == total_b && prop.major == major &&
            prop.multiProcessorCount == sms && prop.name[0] != '\0',
        std::string(PROBE_STR(cudaGetDeviceProperties)) + " in this ABI's layout: rc " +
            std::to_string(rc) + ", '" + prop.name + "', major " + std::to_string(prop.major) +
            " (attribute " + std::to_string(major) + "), " +
            std::to_string(prop.multiProcessorCount) + " SMs (attribute " + std::to_string(sms) +
            ")");
}

}  // namespace

int main(int argc, char** argv) {
  const char* open_name = nullptr;
  const char* vsym = nullptr;
  const char* expect = nullptr;
  const char* which = nullptr;
  const char* not_mapped = nullptr;
  const char* must_be_mapped = nullptr;
  int race = 0;
  bool want_stub = false;
  bool use_default = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--open" && i + 1 < argc)
      open_name = argv[++i];
    else if (a == "--vsym" && i + 1 < argc)
      vsym = argv[++i];
    else if (a == "--race" && i + 1 < argc)
      race = std::atoi(argv[++i]);
    else if (a == "--expect" && i + 1 < argc)
      expect = argv[++i];
    else if (a == "--which" && i + 1 < argc)
      which = argv[++i];
    else if (a == "--not-mapped" && i + 1 < argc)
      not_mapped = argv[++i];
    else if (a == "--mapped" && i + 1 < argc)
      must_be_mapped = argv[++i];
    else if (a == "--stub")
      want_stub = true;
    else if (a == "--default")
      use_default = true;
    else {
      std::fprintf(stderr, "probe: bad argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (expect == nullptr) {
    std::fprintf(stderr, "probe: --expect torchada|nvidia|passthrough|open-fails is required\n");
    return 2;
  }
  const std::string want = expect;
  std::printf("%s: expect %s\n", argv[0], expect);

  Api api;
#if PROBE_LINKED
  if (open_name != nullptr || use_default) {
    std::fprintf(stderr, "probe: a linked probe takes no --open or --default\n");
    return 2;
  }
  (void)vsym;
  (void)which;
  api.count = &cudaGetDeviceCount;
  api.mem_info = &cudaMemGetInfo;
  api.props = &cudaGetDeviceProperties;
  api.attr = &cudaDeviceGetAttribute;
#else
  if ((open_name == nullptr) == !use_default) {
    std::fprintf(stderr, "probe: one of --open NAME and --default is required\n");
    return 2;
  }
  void* h = use_default ? RTLD_DEFAULT : dlopen(open_name, RTLD_NOW | RTLD_LOCAL);
  if (want == "which") {
    void* p = h == nullptr || which == nullptr ? nullptr
              : vsym                           ? dlvsym(h, which, vsym)
                                               : dlsym(h, which);
    check(p != nullptr, std::string("lookup of ") + (which ? which : "(no --which)"));
    if (p != nullptr) std::printf("%s is in %s\n", which, file_of(p));
    return g_failures == 0 ? 0 : 1;
  }
  if (want == "any") {
    std::printf("  dlopen %s: %s\n", open_name, h ? "opened" : dlerror());
    return 0;
  }
  if (want == "open-fails") {
    const char* e = h ? nullptr : dlerror();
    check(h == nullptr, std::string("dlopen of an odd name fails cleanly: ") + (e ? e : "opened"));
    return g_failures == 0 ? 0 : 1;
  }
  if (h == nullptr && !use_default) {
    const char* e = dlerror();
    check(false, std::string("dlopen ") + open_name + ": " + (e ? e : "?"));
    return 1;
  }
  api.count = lookup<CountFn>(h, "cudaGetDeviceCount", vsym);
  api.mem_info = lookup<MemInfoFn>(h, "cudaMemGetInfo", vsym);
  api.props = lookup<PropsFn>(h, PROBE_STR(cudaGetDeviceProperties), vsym);
  api.attr = lookup<AttrFn>(h, "cudaDeviceGetAttribute", vsym);
#endif
  std::printf("  cudaGetDeviceCount is in %s\n", file_of(reinterpret_cast<void*>(api.count)));
  if (want_stub)
    check(!ends_with(file_of(reinterpret_cast<void*>(api.count)), "/libtorchada.so"),
          "cudaGetDeviceCount is a replacement library's forwarding stub");

  const char* nvidia = std::getenv("PROBE_NVIDIA_LIB");
  if (want == "torchada") {
    check_torchada(api, race);
    Maps m = read_maps();
    check(nvidia != nullptr && !mapped(m, nvidia),
          std::string("NVIDIA's ") + (nvidia ? nvidia : "(PROBE_NVIDIA_LIB unset)") +
              " is not mapped");
    std::string paths;
    for (const std::string& p : m.torchada_paths) paths += " " + p;
    check(m.torchada.size() == 1,
          "one libtorchada.so mapped (" + std::to_string(m.torchada.size()) + ":" + paths + ")");
  } else if (want == "nvidia") {
    int n = -1;
    if (api.count) std::printf("  NVIDIA's cudaGetDeviceCount: rc %d\n", api.count(&n));
    Maps m = read_maps();
    check(nvidia != nullptr && mapped(m, nvidia), "NVIDIA's library is mapped");
    // NVIDIA's runtime loads the driver by name; where torchada's libcuda.so.1 answers (the
    // replacement directory on LD_LIBRARY_PATH), it brings libtorchada.so in as its dependency.
    // Any other way in is a failure.
    const char* repl = std::getenv("PROBE_REPL_DIR");
    const std::string driver = std::string(repl ? repl : "") + "/libcuda.so.1";
    check(m.torchada.empty() || (repl != nullptr && mapped(m, driver.c_str())),
          "libtorchada.so is not mapped (except as torchada's libcuda.so.1's dependency)");
  } else if (want == "passthrough") {
    int n = -1;
    cudaError_t rc = api.count ? api.count(&n) : cudaErrorUnknown;
    const long ref = env_long("PROBE_REFERENCE_RC", -1);
    check(rc == ref, "cudaGetDeviceCount through the pass-through: rc " + std::to_string(rc) +
                         ", NVIDIA's library alone: rc " + std::to_string(ref));
    Maps m = read_maps();
    check(nvidia != nullptr && mapped(m, nvidia),
          "NVIDIA's library is mapped (loaded by the shim)");
    check(m.torchada.size() == 1, "one libtorchada.so mapped");
  } else {
    std::fprintf(stderr, "probe: unknown --expect %s\n", expect);
    return 2;
  }
  if (not_mapped != nullptr)
    check(!mapped(read_maps(), not_mapped), std::string(not_mapped) + " is not mapped");
  if (must_be_mapped != nullptr)
    check(mapped(read_maps(), must_be_mapped), std::string(must_be_mapped) + " is mapped");
  std::printf("%s\n", g_failures == 0 ? "all checks passed" : "checks FAILED");
  return g_failures == 0 ? 0 : 1;
}
