#include "profiled.h"

#include <c10/cuda/CUDAStream.h>
#include <dlfcn.h>

#include <atomic>
#include <string>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

// libtorchada.so's node TORCHADA_PRIVATE_1 (shim/cupti/private.cc).
struct Entry {
  const std::atomic<bool>* flag = nullptr;
  std::uint64_t (*begin)(int work, const char* name, void* stream) = nullptr;
  void (*end)(std::uint64_t token, int keep) = nullptr;
};

const Entry& entry() {
  static const Entry e = [] {
    Entry r;
    auto flag = reinterpret_cast<const std::atomic<bool>* (*)()>(
        dlsym(RTLD_DEFAULT, "torchada_activity_flag"));
    r.begin = reinterpret_cast<decltype(r.begin)>(dlsym(RTLD_DEFAULT, "torchada_activity_begin"));
    r.end = reinterpret_cast<decltype(r.end)>(dlsym(RTLD_DEFAULT, "torchada_activity_end"));
    if (flag != nullptr && r.begin != nullptr && r.end != nullptr) r.flag = flag();
    return r;
  }();
  return e;
}

const char* suffix(ProfiledWork::Kind kind) {
  switch (kind) {
    case ProfiledWork::kDeviceKernel:
      return " [torchada device kernel]";
    case ProfiledWork::kHostKernel:
      return " [torchada bridge: CPU kernel]";
    case ProfiledWork::kLibrary:
      return " [cuBLAS]";
  }
  return "";
}

}  // namespace

ProfiledWork::ProfiledWork(Kind kind, const OpState& s) {
  const Entry& e = entry();
  if (e.flag == nullptr || !e.flag->load(std::memory_order_relaxed)) return;
  const std::string name = s.name + suffix(kind);
  token_ = e.begin(kind == kHostKernel ? 1 : 0, name.c_str(),
                   c10::cuda::getCurrentCUDAStream().stream());
}

ProfiledWork::~ProfiledWork() {
  if (token_ != 0) entry().end(token_, 1);
}

void ProfiledWork::discard() {
  if (token_ != 0) entry().end(token_, 0);
  token_ = 0;
}

}  // namespace torchada::ops::bridge
