// libmusa.so (the MUSA driver) of the backend the runtime chose, loaded once on the first driver
// entry point request: for the simulator from its folder (TORCHADA_SIM_LIB_DIR, else sim/ next to
// libtorchada.so); for MUSA next to the libmusart that was loaded, then where the runtime is
// searched ($TORCHADA_MUSA_LIB_DIR, $MUSA_HOME/lib, $MUSA_PATH/lib, /usr/local/musa/lib,
// /opt/musa/lib), then the loader's path. Like the CUDA runtime with its driver, the shim calls
// muInit(0) once the library is loaded.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/backend.h"
#include "core/log.h"
#include "driver/driver.h"

namespace torchada {
namespace drv {
namespace {

const char* const kSonames[] = {"libmusa.so.1", "libmusa.so"};
const char* const kCore[] = {"muInit", "muDeviceGet", "muGetErrorString"};

void* lookup(void* handle, const char* name) { return dlsym(handle, name); }

void* open_checked(const std::string& path, std::string& why) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (h == nullptr) {
    const char* e = dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  for (const char* sym : kCore) {
    if (dlsym(h, sym) == nullptr) {
      why = std::string("not Moore Threads' MUSA driver: it does not export ") + sym;
      return nullptr;  // RTLD_NODELETE: stays mapped, harmless
    }
  }
  return h;
}

std::string dirname_of(const char* path) {
  std::string p = path;
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

void* find(const Runtime& rt, std::string& path, std::string& searched) {
  std::string dirs[6];
  int n = 0;
  if (rt.kind == BackendKind::kSim) {
    const char* d = std::getenv("TORCHADA_SIM_LIB_DIR");
    dirs[n++] = d && *d ? std::string(d) : std::string(self_directory()) + "/sim";
  } else {
    if (std::string d = dirname_of(rt.library_path); !d.empty()) dirs[n++] = d;
    if (const char* d = std::getenv("TORCHADA_MUSA_LIB_DIR"); d && *d) dirs[n++] = d;
    if (const char* d = std::getenv("MUSA_HOME"); d && *d) dirs[n++] = std::string(d) + "/lib";
    if (const char* d = std::getenv("MUSA_PATH"); d && *d) dirs[n++] = std::string(d) + "/lib";
    dirs[n++] = "/usr/local/musa/lib";
    dirs[n++] = "/opt/musa/lib";
  }
  for (int i = 0; i < n; ++i) {
    for (const char* so : kSonames) {
      std::string p = dirs[i] + "/" + so;
      if (::access(p.c_str(), R_OK) != 0) continue;
      std::string why;
      if (void* h = open_checked(p, why)) {
        path = p;
        return h;
      }
      searched += "\n    " + p + ": " + why;
    }
    searched += "\n    " + dirs[i] + "/libmusa.so{.1,}";
  }
  if (rt.kind == BackendKind::kMusa) {
    for (const char* so : kSonames) {
      std::string why;
      if (void* h = open_checked(so, why)) {
        path = so;
        return h;
      }
      searched += std::string("\n    ") + so + " via the loader path: " + why;
    }
  }
  return nullptr;
}

const DriverBackend* load() {
  auto* b = new DriverBackend();  // never destroyed: used from atexit handlers too
  const Runtime& rt = runtime();
  if (rt.kind != BackendKind::kMusa && rt.kind != BackendKind::kSim) return b;
  std::string path, searched;
  void* h = find(rt, path, searched);
  if (h == nullptr) {
    TORCHADA_LOG(kWarn,
                 "the MUSA driver library (libmusa.so.1) was not found: every driver entry point "
                 "(cudaGetDriverEntryPoint, cuGetProcAddress) reports \"symbol not found\". "
                 "Searched:%s",
                 searched.c_str());
    return b;
  }
  std::snprintf(b->path, sizeof b->path, "%s", path.c_str());
  resolve_musa_driver(b->table, lookup, h);
  const MUresult r = b->table.p_muInit ? b->table.p_muInit(0) : MUSA_ERROR_NOT_FOUND;
  if (r != MUSA_SUCCESS) {
    TORCHADA_LOG(kError,
                 "muInit(0) of %s failed (MUresult %d): driver entry points report \"symbol not "
                 "found\"",
                 b->path, static_cast<int>(r));
    return b;
  }
  b->usable = true;
  TORCHADA_LOG(kInfo, "MUSA driver from %s", b->path);
  return b;
}

}  // namespace

const DriverBackend& driver_backend() {
  static const DriverBackend* b = load();  // thread-safe, once
  return *b;
}

}  // namespace drv
}  // namespace torchada
