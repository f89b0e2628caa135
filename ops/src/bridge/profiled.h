// torch.profiler's device rows for the operators the bridge runs: each call's work is bracketed
// for torchada's CUPTI (libtorchada.so, shim/cupti/activity.h), named for what ran it:
//
//   "aten::add.Tensor [torchada device kernel]"   ops/'s kernel, timed by events on its stream
//   "aten::cumsum [torchada bridge: CPU kernel]"  PyTorch's CPU kernel run for the stream, timed
//                                                 on the host (the stream has drained by then)
//   "aten::mm [cuBLAS]"                           PyTorch's own CUDA operator whose work is a
//                                                 cuBLAS call the shim forwards (matrix products)
//
// Nothing is recorded, and nothing but one relaxed load is spent, unless a CUPTI client records
// kernels; outside torchada (no libtorchada.so in the process) never.
#pragma once

#include <cstdint>

namespace torchada::ops::bridge {

struct OpState;

class ProfiledWork {
 public:
  enum Kind { kDeviceKernel, kHostKernel, kLibrary };
  ProfiledWork(Kind kind, const OpState& s);
  ProfiledWork(const ProfiledWork&) = delete;
  ProfiledWork& operator=(const ProfiledWork&) = delete;
  ~ProfiledWork();
  // The work did not happen (a device kernel declined the call): no record.
  void discard();

 private:
  std::uint64_t token_ = 0;
};

}  // namespace torchada::ops::bridge
