// The probe's direct view of the MUSA libraries: what MUSA itself reports, compiled against the
// MUSA headers the shim was built with (sim/include, or the SDK's with -DMUSA_HOME). Each library
// is opened by the path torchada-doctor found, the way the shim would find it.
#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mccl.h>
#include <mublas.h>
#include <musa_runtime_api.h>

#include "mtml.h"
#include "probe.h"

namespace torchada::probe {

void Emit(const char* kind, const std::string& a, const std::string& b) {
  auto clean = [](std::string s) {
    for (char& c : s)
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return s;
  };
  std::printf("%s\t%s%s%s\n", kind, clean(a).c_str(), b.empty() ? "" : "\t", clean(b).c_str());
  std::fflush(stdout);
}

void EmitStatus(const char* name, int value, const char* text, const char* lib_name) {
  auto clean = [](const char* p) {
    std::string s = p ? p : "(null)";
    for (char& c : s)
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return s;
  };
  std::printf("status\t%s\t%d\t%s\t%s\n", name, value, clean(text).c_str(),
              clean(lib_name).c_str());
  std::fflush(stdout);
}

std::string Format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

namespace {

void* Open(const std::string& path, std::string* error) {
  if (path.empty()) {
    if (error) *error = "not found";
    return nullptr;
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr && error) {
    const char* e = dlerror();
    *error = e ? e : "dlopen failed";
  }
  return h;
}

template <class F>
F Sym(void* h, const char* name) {
  return h ? reinterpret_cast<F>(dlsym(h, name)) : nullptr;
}

}  // namespace

int MusaDeviceCount(const std::string& path, std::string* error) {
  void* h = Open(path, error);
  auto count = Sym<decltype(&musaGetDeviceCount)>(h, "musaGetDeviceCount");
  if (count == nullptr) {
    if (h && error) *error = "musaGetDeviceCount is missing";
    return -1;
  }
  int n = 0;
  musaError_t e = count(&n);
  if (e != musaSuccess) {
    if (error) *error = Format("musaGetDeviceCount returned %d", static_cast<int>(e));
    return -1;
  }
  return n;
}

MusaDevice MusaDeviceInfo(const std::string& path, int device) {
  MusaDevice d;
  void* h = Open(path, &d.error);
  auto props = Sym<decltype(&musaGetDeviceProperties)>(h, "musaGetDeviceProperties");
  auto attr = Sym<decltype(&musaDeviceGetAttribute)>(h, "musaDeviceGetAttribute");
  if (props == nullptr || attr == nullptr) {
    if (d.error.empty()) d.error = "musaGetDeviceProperties or musaDeviceGetAttribute is missing";
    return d;
  }
  musaDeviceProp p{};
  if (musaError_t e = props(&p, device); e != musaSuccess) {
    d.error = Format("musaGetDeviceProperties(%d) returned %d", device, static_cast<int>(e));
    return d;
  }
  std::snprintf(d.name, sizeof d.name, "%s", p.name);
  d.major = p.major;
  d.minor = p.minor;
  d.warp = p.warpSize;
  d.sms = p.multiProcessorCount;
  d.total_mem = p.totalGlobalMem;
  attr(&d.attr_major, musaDevAttrComputeCapabilityMajor, device);
  attr(&d.attr_minor, musaDevAttrComputeCapabilityMinor, device);
  attr(&d.attr_warp, musaDevAttrWarpSize, device);
  d.ok = true;
  return d;
}

int MusaVersions(const std::string& musart, const std::string& musa, const std::string& mublas,
                 const std::string& mublaslt, const std::string& mccl, const std::string& mtml) {
  std::string err;
  if (void* h = Open(musart, &err)) {
    int rt = 0, drv = 0;
    auto rtv = Sym<decltype(&musaRuntimeGetVersion)>(h, "musaRuntimeGetVersion");
    auto dv = Sym<decltype(&musaDriverGetVersion)>(h, "musaDriverGetVersion");
    std::string v;
    if (rtv && rtv(&rt) == musaSuccess) v += Format("musaRuntimeGetVersion %d", rt);
    if (dv && dv(&drv) == musaSuccess)
      v += Format("%smusaDriverGetVersion %d", v.empty() ? "" : ", ", drv);
    Fact("libmusart", v.empty() ? "no version function answered" : v);
  }
  if (void* h = Open(musa, &err)) {
    using DriverVersion = int (*)(int*);  // MUresult muDriverGetVersion(int*)
    auto dv = Sym<DriverVersion>(h, "muDriverGetVersion");
    int v = 0;
    Fact("libmusa", dv && dv(&v) == 0 ? Format("muDriverGetVersion %d", v)
                                      : std::string("muDriverGetVersion did not answer"));
  }
  if (void* h = Open(mublas, &err)) {
    auto prop = Sym<decltype(&mublasGetProperty)>(h, "mublasGetProperty");
    int a = 0, b = 0, c = 0;
    if (prop && prop(MUBLAS_PROPERTY_MAJOR_VERSION, &a) == MUBLAS_STATUS_SUCCESS &&
        prop(MUBLAS_PROPERTY_MINOR_VERSION, &b) == MUBLAS_STATUS_SUCCESS &&
        prop(MUBLAS_PROPERTY_PATCH_LEVEL, &c) == MUBLAS_STATUS_SUCCESS)
      Fact("libmublas", Format("mublasGetProperty %d.%d.%d", a, b, c));
    else
      Fact("libmublas", "mublasGetProperty did not answer");
  }
  if (void* h = Open(mublaslt, &err)) {
    using LtVersion = size_t (*)();
    auto v = Sym<LtVersion>(h, "mublasLtGetVersion");
    Fact("libmublasLt",
         v ? Format("mublasLtGetVersion %zu", v()) : std::string("mublasLtGetVersion is missing"));
  }
  if (void* h = Open(mccl, &err)) {
    auto v = Sym<decltype(&mcclGetVersion)>(h, "mcclGetVersion");
    int n = 0;
    Fact("libmccl", v && v(&n) == mcclSuccess ? Format("mcclGetVersion %d", n)
                                              : std::string("mcclGetVersion did not answer"));
  }
  if (void* h = Open(mtml, &err)) {
    auto init = Sym<decltype(&mtmlLibraryInit)>(h, "mtmlLibraryInit");
    auto system = Sym<decltype(&mtmlLibraryInitSystem)>(h, "mtmlLibraryInitSystem");
    auto version = Sym<decltype(&mtmlSystemGetDriverVersion)>(h, "mtmlSystemGetDriverVersion");
    auto shutdown = Sym<decltype(&mtmlLibraryShutDown)>(h, "mtmlLibraryShutDown");
    MtmlLibrary* lib = nullptr;
    MtmlSystem* sys = nullptr;
    char text[MTML_DRIVER_VERSION_BUFFER_SIZE] = {};
    const bool read = init && system && version && init(&lib) == MTML_SUCCESS &&
                      system(lib, &sys) == MTML_SUCCESS &&
                      version(sys, text, sizeof text) == MTML_SUCCESS;
    if (lib != nullptr && shutdown) shutdown(lib);
    Fact("libmtml", read ? Format("mtmlSystemGetDriverVersion %s", text)
                         : std::string("mtmlSystemGetDriverVersion did not answer"));
  }
  Ok("versions read");
  return 0;
}

// The status names torchada's tables translate (symbols/enum_map.txt, shared/musa-abi.md),
// each with the value the headers give it; the library says what it means by that value.
int MublasStatus(const std::string& mublas) {
  std::string err;
  void* h = Open(mublas, &err);
  if (h == nullptr) {
    Problem("cannot open muBLAS: " + err);
    return 0;
  }
  using Text = const char* (*)(mublasStatus_t);
  auto text = Sym<Text>(h, "mublasGetStatusString");
  const char* fn = "mublasGetStatusString";
  if (text == nullptr) {
    text = Sym<Text>(h, "mublasStatus_to_string");
    fn = "mublasStatus_to_string";
  }
  auto name = Sym<Text>(h, "mublasGetStatusName");
  if (text == nullptr) {
    Warn("muBLAS exports neither mublasGetStatusString nor mublasStatus_to_string");
    return 0;
  }
  Fact("string function", fn);
#define STATUS(s) EmitStatus(#s, static_cast<int>(s), text(s), name ? name(s) : "")
  STATUS(MUBLAS_STATUS_SUCCESS);
  STATUS(MUBLAS_STATUS_INVALID_HANDLE);
  STATUS(MUBLAS_STATUS_NOT_IMPLEMENTED);
  STATUS(MUBLAS_STATUS_INVALID_POINTER);
  STATUS(MUBLAS_STATUS_INVALID_SIZE);
  STATUS(MUBLAS_STATUS_MEMORY_ERROR);
  STATUS(MUBLAS_STATUS_INTERNAL_ERROR);
  STATUS(MUBLAS_STATUS_PERF_DEGRADED);
  STATUS(MUBLAS_STATUS_SIZE_QUERY_MISMATCH);
  STATUS(MUBLAS_STATUS_SIZE_INCREASED);
  STATUS(MUBLAS_STATUS_SIZE_UNCHANGED);
  STATUS(MUBLAS_STATUS_INVALID_VALUE);
  STATUS(MUBLAS_STATUS_CONTINUE);
  STATUS(MUBLAS_STATUS_CHECK_NUMERICS_FAIL);
#undef STATUS
  return 0;
}

int MccLStatus(const std::string& mccl) {
  std::string err;
  void* h = Open(mccl, &err);
  if (h == nullptr) {
    Problem("cannot open MCCL: " + err);
    return 0;
  }
  auto text = Sym<decltype(&mcclGetErrorString)>(h, "mcclGetErrorString");
  if (text == nullptr) {
    Warn("MCCL does not export mcclGetErrorString");
    return 0;
  }
#define STATUS(s) EmitStatus(#s, static_cast<int>(s), text(s), "")
  STATUS(mcclSuccess);
  STATUS(mcclUnhandledMusaError);
  STATUS(mcclSystemError);
  STATUS(mcclInternalError);
  STATUS(mcclInvalidArgument);
  STATUS(mcclInvalidUsage);
  STATUS(mcclRemoteError);
  STATUS(mcclInProgress);
#undef STATUS
  return 0;
}

}  // namespace torchada::probe
