// doctor-probe: the part of torchada-doctor that makes calls. torchada-doctor runs it as a child
// process, one check per run (a crash or a hang is then a reported problem, not a doctor crash),
// with libtorchada.so preloaded for the checks that go through torchada.
//
// Output, one record per line on stdout, tab separated:
//   fact <key> <value>        a finding
//   item <list> <value>       an entry of a list
//   status <name> <value> <string> <library's name for it>   (blas-status, mccl-status)
//   ok|warning|problem <text> a verdict with its reason (the worst one counts)
//   fix <text>                what to do
// Exit status 0 when the check ran (whatever its verdict), 2 on a usage error.
#pragma once

#include <cstdio>
#include <string>

namespace torchada::probe {

void Emit(const char* kind, const std::string& a, const std::string& b = "");
inline void Fact(const std::string& k, const std::string& v) { Emit("fact", k, v); }
inline void Item(const std::string& l, const std::string& v) { Emit("item", l, v); }
inline void Ok(const std::string& t) { Emit("ok", t); }
inline void Warn(const std::string& t) { Emit("warning", t); }
inline void Problem(const std::string& t) { Emit("problem", t); }
inline void Fix(const std::string& t) { Emit("fix", t); }
void EmitStatus(const char* name, int value, const char* text, const char* lib_name);
std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// MUSA side (probe_musa.cc: compiled against the MUSA headers the shim was built with).
struct MusaDevice {
  bool ok = false;
  std::string error;
  char name[256] = {};
  int major = 0, minor = 0, warp = 0, sms = 0;
  int attr_major = 0, attr_minor = 0, attr_warp = 0;
  size_t total_mem = 0;
};
// dlopens libmusart at `path`; -1 with `error` when it cannot.
int MusaDeviceCount(const std::string& path, std::string* error);
MusaDevice MusaDeviceInfo(const std::string& path, int device);
int MusaVersions(const std::string& musart, const std::string& musa, const std::string& mublas,
                 const std::string& mublaslt, const std::string& mccl, const std::string& mtml);
int MublasStatus(const std::string& mublas);
int MccLStatus(const std::string& mccl);

// CUDA side (probe_cuda.cc: CUDA 13 headers, functions found with dlsym(RTLD_DEFAULT), i.e. in
// the preloaded libtorchada.so).
int CudaDevices(const std::string& musart);
int CudaGemm();
int CudaCopy();
int CudaEvent();
int CudaAllReduce();

}  // namespace torchada::probe
