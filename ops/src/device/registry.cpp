// Which device kernels a process gets: the simulator's executor or a MUSA build, each kernel
// checked against this PyTorch's schema for its operator.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/op_registration/infer_schema.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "../bridge/bridge.h"
#include "settings/settings.h"
#include "../device_kernels.h"
#include "device.h"

namespace torchada::ops {

bool host_kernels_active() {
#if defined(TORCHADA_OPS_WITH_HOST_KERNELS)
  static const bool active = host_kernels::available();
  return active;
#else
  return false;
#endif
}

}  // namespace torchada::ops

namespace torchada::ops::device {

bool enabled_for(const char* backend) {
  // auto (on, 1) or off (0, false, no); malformed: auto, with a warning.
  if (settings::word(settings::Id::kOpsKernels, bridge::settings_warn) == 1) return false;
  static const char* const kBackends[] = {"auto", "musa", "sim", "cuda"};
  const std::string b =
      backend ? backend : kBackends[settings::word(settings::Id::kBackend, nullptr)];
  if (b == "sim") return host_kernels_active();
#if defined(TORCHADA_OPS_WITH_MUSA_KERNELS)
  if (b == "musa") return true;
#endif
  return false;  // an NVIDIA build of the kernels cannot run on MUSA; on NVIDIA, PyTorch's own run
}

// TORCHADA_OPS_RNG: "philox" (the default) draws random operators on the device from the CUDA
// generator, as PyTorch's CUDA kernels do; "cpu" leaves them to the bridge, which draws what
// PyTorch's CPU generator draws for the same seed (a device="cpu" run's numbers, for comparing
// with one).
bool random_on_device() {
  return settings::word(settings::Id::kOpsRng, bridge::settings_warn) == 0;  // philox, cpu
}

namespace {
std::atomic<bool> random_installed{false};
}  // namespace

bool random_kernels_installed() { return random_installed.load(std::memory_order_relaxed); }

std::vector<Kernel> kernels_for_install() {
  std::vector<Kernel> out;
  auto& d = c10::Dispatcher::singleton();
  std::vector<Kernel> all = elementwise_kernels();
  for (Kernel& k : reduce_kernels()) all.push_back(std::move(k));
  for (auto* list : {&composite_kernels, &indexing_kernels, &training_kernels, &attention_kernels,
                     &vision_kernels, &foreach_kernels})
    for (Kernel& k : list()) all.push_back(std::move(k));
  if (random_on_device()) {
    for (Kernel& k : random_kernels()) all.push_back(std::move(k));
    random_installed = true;
  }
  for (Kernel& k : all) {
    const auto dot = k.op.find('.');
    const std::string name = k.op.substr(0, dot);
    const std::string overload = dot == std::string::npos ? "" : k.op.substr(dot + 1);
    auto op = d.findOp(c10::OperatorName(name, overload));
    if (!op || !op->hasSchema()) continue;  // not in this PyTorch
    if (k.schema == nullptr) {              // boxed: takes the operator's own signature
      out.push_back(std::move(k));
      continue;
    }
    const auto difference = c10::findSchemaDifferences(k.schema(), op->schema());
    if (difference) {
      bridge::log("warn",
                  "device kernel for %s skipped: its signature differs from this "
                  "PyTorch's (%s)",
                  k.op.c_str(), difference->c_str());
      continue;
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace torchada::ops::device
