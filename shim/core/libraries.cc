#include "core/libraries.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/backend.h"
#include "core/log.h"
#include "nccl/env.h"
#include "settings/settings.h"

namespace torchada {
namespace {

struct Spec {
  const char* name;          // for messages
  const char* sonames[3];    // tried in order in each directory
  const char* core[3];       // exports a genuine library has
  bool needs_musa_runtime;   // refuse a library not linked against MUSA (MetaX's libmccl)
  const char* when_missing;  // what a missing library means for the caller
  bool optional = false;     // missing: an info line, not an error (nothing fails without it)
};

const Spec kSpecs[kMusaLibraryCount] = {
    {"muBLAS",
     {"libmublas.so.1", "libmublas.so", nullptr},
     {"mublasCreate", "mublasSgemm", nullptr},
     false,
     "its calls fail"},
    {"muBLASLt",
     {"libmublasLt.so.1", "libmublasLt.so", nullptr},
     {"mublasLtCreate", "mublasLtMatmul", nullptr},
     false,
     "its calls fail"},
    {"MCCL",
     {"libmccl.so.2", "libmccl.so", nullptr},
     {"mcclGetUniqueId", "mcclAllReduce", nullptr},
     true,
     "its calls fail"},
    {"the MUSA driver (libmusa)",
     {"libmusa.so.1", "libmusa.so", nullptr},
     {"muInit", "muDeviceGet", "muGetErrorString"},
     false,
     "every driver entry point (cudaGetDriverEntryPoint, cuGetProcAddress) reports \"symbol not "
     "found\""},
    {"MTML (Moore Threads' management library)",
     {"libmtml.so", nullptr, nullptr},
     {"mtmlLibraryInit", "mtmlLibraryCountDevice", nullptr},
     false,
     "NVML's monitoring calls (memory, utilisation, clocks, power, temperature) answer "
     "NVML_ERROR_NOT_SUPPORTED",
     true},
};

bool file_exists(const std::string& p) { return ::access(p.c_str(), R_OK) == 0; }

// True when the loaded object's DT_NEEDED entries name a MUSA library (libmusart / libmusa):
// Moore Threads' MCCL is built on MUSA, MetaX's same-named libmccl on MACA.
bool needs_musa(void* handle, std::string& needed_out) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_ld == nullptr)
    return false;
  const char* strtab = nullptr;
  for (const ElfW(Dyn)* d = map->l_ld; d->d_tag != DT_NULL; ++d)
    if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(d->d_un.d_ptr);
  if (strtab == nullptr) return false;
  bool musa = false;
  for (const ElfW(Dyn)* d = map->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag != DT_NEEDED) continue;
    const char* n = strtab + d->d_un.d_val;
    needed_out += needed_out.empty() ? n : std::string(", ") + n;
    if (std::strncmp(n, "libmusart.so", 12) == 0 || std::strncmp(n, "libmusa.so", 10) == 0)
      musa = true;
  }
  return musa;
}

void* open_checked(const Spec& spec, const std::string& path, std::string& why) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (h == nullptr) {
    const char* e = dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  for (const char* sym : spec.core) {
    if (sym && dlsym(h, sym) == nullptr) {
      why = std::string("not Moore Threads' ") + spec.name + ": it does not export " + sym;
      return nullptr;
    }
  }
  if (spec.needs_musa_runtime) {
    std::string needed;
    if (!needs_musa(h, needed)) {
      why = std::string("not Moore Threads' ") + spec.name +
            " (it is not linked against the MUSA runtime; needs: " +
            (needed.empty() ? "nothing" : needed) + "): MetaX MACA ships a libmccl too";
      return nullptr;
    }
  }
  return h;
}

std::string dirname_of(const char* path) {
  std::string p = path;
  auto slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

void load(const Spec& spec, LoadedLibrary& out) {
  const Runtime& rt = runtime();
  if (rt.kind == BackendKind::kCuda) {
    out.passthrough = true;
    return;
  }
  if (rt.kind == BackendKind::kNone) {
    out.failed = true;
    TORCHADA_LOG(kError, "%s: no MUSA backend was loaded (see the message above); %s", spec.name,
                 spec.when_missing);
    return;
  }
  // NCCL_* settings reach MCCL under its own names, before it reads them.
  if (&spec == &kSpecs[static_cast<int>(MusaLibrary::kMccl)] && translate_nccl_environment)
    translate_nccl_environment();
  std::string dirs[7];
  int n = 0;
  if (rt.kind == BackendKind::kSim) {
    const char* d = settings::text(settings::Id::kSimLibDir);
    dirs[n++] = d ? std::string(d) : std::string(self_directory()) + "/sim";
  } else {
    // Next to the runtime that was loaded first: the libraries of one SDK belong together.
    if (std::string d = dirname_of(rt.library_path); !d.empty()) dirs[n++] = d;
    if (const char* d = settings::text(settings::Id::kMusaLibDir)) dirs[n++] = d;
    if (const char* d = std::getenv("MUSA_HOME"); d && *d) dirs[n++] = std::string(d) + "/lib";
    if (const char* d = std::getenv("MUSA_PATH"); d && *d) dirs[n++] = std::string(d) + "/lib";
    dirs[n++] = "/usr/local/musa/lib";
    dirs[n++] = "/opt/musa/lib";
  }
  std::string searched;
  for (int i = 0; i < n; ++i) {
    for (const char* so : spec.sonames) {
      if (so == nullptr) continue;
      std::string p = dirs[i] + "/" + so;
      if (!file_exists(p)) continue;
      std::string why;
      if (void* h = open_checked(spec, p, why)) {
        out.handle = h;
        std::snprintf(out.path, sizeof out.path, "%s", p.c_str());
        TORCHADA_LOG(kInfo, "%s from %s", spec.name, out.path);
        return;
      }
      searched += "\n    " + p + ": " + why;
    }
    searched += "\n    " + dirs[i] + "/" + spec.sonames[0];
  }
  if (rt.kind == BackendKind::kMusa) {
    for (const char* so : spec.sonames) {  // the loader's own search path
      if (so == nullptr) continue;
      std::string why;
      if (void* h = open_checked(spec, so, why)) {
        out.handle = h;
        std::snprintf(out.path, sizeof out.path, "%s", so);
        TORCHADA_LOG(kInfo, "%s from the loader path (%s)", spec.name, so);
        return;
      }
      searched += std::string("\n    ") + so + " via the loader path: " + why;
    }
  }
  out.failed = true;
  if (spec.optional)
    TORCHADA_LOG(kInfo, "%s was not found; %s. Searched:%s", spec.name, spec.when_missing,
                 searched.c_str());
  else
    TORCHADA_LOG(kError, "%s was not found; %s. Searched:%s", spec.name, spec.when_missing,
                 searched.c_str());
}

void* self_anchor() { return reinterpret_cast<void*>(&self_anchor); }

}  // namespace

const char* musa_library_name(MusaLibrary which) { return kSpecs[static_cast<int>(which)].name; }

const LoadedLibrary& load_musa_library(MusaLibrary which) {
  static LoadedLibrary* libs[kMusaLibraryCount];
  static std::once_flag once[kMusaLibraryCount];
  const int i = static_cast<int>(which);
  std::call_once(once[i], [i] {
    alignas(LoadedLibrary) static unsigned char bytes[kMusaLibraryCount][sizeof(LoadedLibrary)];
    libs[i] = new (bytes[i]) LoadedLibrary();
    load(kSpecs[i], *libs[i]);
  });
  return *libs[i];
}

void* library_lookup(void* handle, const char* name) { return dlsym(handle, name); }

void* nvidia_symbol(const char* soname, const char* name) {
  struct Entry {
    char soname[32];
    void* handle;
  };
  static Entry entries[8];
  static int count = 0;
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  Entry* e = nullptr;
  for (int i = 0; i < count; ++i)
    if (std::strcmp(entries[i].soname, soname) == 0) e = &entries[i];
  if (e == nullptr && count < 8) {
    e = &entries[count++];
    std::snprintf(e->soname, sizeof e->soname, "%s", soname);
    // Every name asked for is one NVIDIA's library exports (symbols/ is checked against it), so
    // the first one serves as the probe that tells NVIDIA's library from a stand-in.
    e->handle = open_nvidia_library(soname, name);
  }
  if (e == nullptr || e->handle == nullptr) return nullptr;
  void* sym = dlsym(e->handle, name);
  Dl_info info{}, self{};
  dladdr(self_anchor(), &self);
  if (sym && dladdr(sym, &info) && info.dli_fbase == self.dli_fbase) return nullptr;
  return sym;
}

}  // namespace torchada
