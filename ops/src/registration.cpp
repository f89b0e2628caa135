// Wires every kernel into the dispatcher.
//
// torchada:: custom ops: schemas, CPU, Meta (fake, for torch.compile) and Autograd kernels are
// registered statically; the GPU kernels under the backend key chosen at load time.
//
// aten overrides: registered at load time, only under TORCHADA_ENABLE_CPP_OPS=1, for one key:
//   PrivateUse1  when a PrivateUse1 backend (torch_musa) has renamed it before this library loads
//   CUDA         otherwise (a CUDA PyTorch running under the torchada shim)
//   TORCHADA_OVERRIDE_KEY=CPU|CUDA|PrivateUse1 forces the key (CPU: exercise the overrides on a
//   machine without a GPU, as the tests do).
// Registering after the backend's own kernel replaces it in the dispatch table (PyTorch prints a
// one-line "Overriding a previously registered kernel" warning); destroying the registration at
// exit restores it. TORCHADA_DISABLE_OP_OVERRIDE_<op>=1 keeps <op> on the stock kernel. All
// variables are read once, here, at load time.
#include <torch/library.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "common.h"
#include "ops.h"
#include "settings/settings.h"

namespace torchada::ops {
namespace {

struct LoadState {
  std::string gpu_key;       // key of the GPU kernels of the torchada:: ops
  std::string override_key;  // key of the aten overrides ("" when none are registered)
  std::vector<std::string> overrides;
  std::vector<std::unique_ptr<torch::Library>> libs;
};

LoadState& state() {
  static LoadState s;
  return s;
}

template <Backend B>
at::Tensor neg_k(const at::Tensor& self) {
  return neg_override(B, self);
}
template <Backend B>
at::Tensor silu_k(const at::Tensor& self) {
  return silu_override(B, self);
}
template <Backend B>
at::Tensor gelu_k(const at::Tensor& self, std::string_view approximate) {
  return gelu_override(B, self, approximate);
}

template <Backend B>
void register_overrides(torch::Library& lib, std::vector<std::string>& active) {
  auto wanted = [](const char* op) {
    return !settings::flag(settings::Id::kDisableOpOverride, op, settings_warn);
  };
  if (wanted("neg")) {
    lib.impl("neg", TORCH_FN(neg_k<B>));
    active.emplace_back("aten::neg");
  }
  if (wanted("silu")) {
    lib.impl("silu", TORCH_FN(silu_k<B>));
    active.emplace_back("aten::silu");
  }
  if (wanted("gelu")) {
    lib.impl("gelu", TORCH_FN(gelu_k<B>));
    active.emplace_back("aten::gelu");
  }
}

c10::DispatchKey key_from_name(const std::string& name) {
  if (name == "CPU") return c10::DispatchKey::CPU;
  if (name == "CUDA") return c10::DispatchKey::CUDA;
  if (name == "PrivateUse1") return c10::DispatchKey::PrivateUse1;
  TORCH_CHECK(false,
              "torchada_ops: TORCHADA_OVERRIDE_KEY must be auto, CPU, CUDA or PrivateUse1, got '",
              name, "'");
}

// Runs once when the library is loaded.
bool register_dynamic() {
  LoadState& s = state();
  // torch_musa renames PrivateUse1 to "musa" when it is imported; the Python helper imports it
  // before loading this library, so this sees the final name.
  const bool musa = c10::get_privateuse1_backend() != "privateuseone";
  s.gpu_key = musa ? "PrivateUse1" : "CUDA";

#if defined(TORCHADA_OPS_WITH_GPU)
  {
    auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "torchada",
                                                key_from_name(s.gpu_key), __FILE__, __LINE__);
    lib->impl("rms_norm", TORCH_FN(rms_norm_gpu));
    lib->impl("fused_add_rms_norm", TORCH_FN(fused_add_rms_norm_gpu));
    lib->impl("silu_and_mul", TORCH_FN(silu_and_mul_gpu));
    lib->impl("gelu_and_mul", TORCH_FN(gelu_and_mul_gpu));
    lib->impl("rotary_embedding", TORCH_FN(rotary_embedding_gpu));
    s.libs.push_back(std::move(lib));
  }
#endif

  if (settings::flag(settings::Id::kEnableCppOps, settings_warn)) {
    // auto, CPU, CUDA, PrivateUse1 (any case); a malformed value is refused as before.
    static const char* const kKeys[] = {"auto", "CPU", "CUDA", "PrivateUse1"};
    const settings::Parsed forced = settings::read(settings::Id::kOverrideKey);
    const char* given = std::getenv("TORCHADA_OVERRIDE_KEY");
    std::string key = forced.status == settings::Status::kValid && forced.number > 0
                          ? kKeys[forced.number]
                      : forced.status == settings::Status::kInvalid && *given ? given
                                                                              : s.gpu_key;
    const c10::DispatchKey k = key_from_name(key);
#if !defined(TORCHADA_OPS_WITH_GPU)
    if (k != c10::DispatchKey::CPU) {
      std::fprintf(stderr,
                   "[torchada_ops] TORCHADA_ENABLE_CPP_OPS=1 but this build has no GPU kernels; "
                   "no aten override registered for %s\n",
                   key.c_str());
      return true;
    }
#endif
    auto lib =
        std::make_unique<torch::Library>(torch::Library::IMPL, "aten", k, __FILE__, __LINE__);
    switch (k) {
      case c10::DispatchKey::CPU:
        register_overrides<Backend::kCPU>(*lib, s.overrides);
        break;
      case c10::DispatchKey::CUDA:
        register_overrides<Backend::kCUDA>(*lib, s.overrides);
        break;
      default:
        register_overrides<Backend::kPrivateUse1>(*lib, s.overrides);
        break;
    }
    s.override_key = key;
    s.libs.push_back(std::move(lib));
  }
  if (settings::flag(settings::Id::kDebugCppOps, settings_warn)) {
    std::string list;
    for (const auto& o : s.overrides) list += " " + o;
    std::fprintf(stderr, "[torchada_ops] loaded: GPU key %s, aten overrides (%s):%s\n",
                 s.gpu_key.c_str(), s.override_key.empty() ? "none" : s.override_key.c_str(),
                 list.empty() ? " none" : list.c_str());
  }
  return true;
}

}  // namespace

// Entry points of the introspection ops (named outside the anonymous namespace so that the
// registration blocks at file scope can refer to them).
std::vector<std::string> active_overrides_op() { return state().overrides; }
std::string override_key_op() { return state().override_key; }
int64_t override_calls_op(std::string_view op) { return call_count(std::string(op)); }
bool register_dynamic_once() { return register_dynamic(); }

std::vector<std::string> active_overrides() { return state().overrides; }

}  // namespace torchada::ops

using namespace torchada::ops;  // NOLINT: the registration blocks below name every kernel

TORCH_LIBRARY(torchada, m) {
  const std::vector<at::Tag> tags = {at::Tag::pt2_compliant_tag};
  m.def("rms_norm(Tensor input, Tensor weight, float eps=1e-6) -> Tensor", tags);
  m.def(
      "fused_add_rms_norm(Tensor(a!) input, Tensor(b!) residual, Tensor weight, float eps=1e-6) "
      "-> ()",
      tags);
  m.def("silu_and_mul(Tensor input) -> Tensor", tags);
  m.def("gelu_and_mul(Tensor input, str approximate=\"none\") -> Tensor", tags);
  m.def(
      "rotary_embedding(Tensor positions, Tensor(a!) query, Tensor(b!) key, int head_size, "
      "Tensor cos_sin_cache, bool is_neox=True) -> ()",
      tags);
  // Introspection: which aten overrides this process registered, under which key, and how many
  // calls each of our kernels has served (fallbacks to stock kernels are not counted).
  m.def("active_overrides() -> str[]", &active_overrides_op);
  m.def("override_key() -> str", &override_key_op);
  m.def("override_calls(str op) -> int", &override_calls_op);
}

TORCH_LIBRARY_IMPL(torchada, CPU, m) {
  m.impl("rms_norm", TORCH_FN(rms_norm_cpu));
  m.impl("fused_add_rms_norm", TORCH_FN(fused_add_rms_norm_cpu));
  m.impl("silu_and_mul", TORCH_FN(silu_and_mul_cpu));
  m.impl("gelu_and_mul", TORCH_FN(gelu_and_mul_cpu));
  m.impl("rotary_embedding", TORCH_FN(rotary_embedding_cpu));
}

TORCH_LIBRARY_IMPL(torchada, Meta, m) {
  m.impl("rms_norm", TORCH_FN(rms_norm_meta));
  m.impl("fused_add_rms_norm", TORCH_FN(fused_add_rms_norm_meta));
  m.impl("silu_and_mul", TORCH_FN(silu_and_mul_meta));
  m.impl("gelu_and_mul", TORCH_FN(gelu_and_mul_meta));
  m.impl("rotary_embedding", TORCH_FN(rotary_embedding_meta));
}

TORCH_LIBRARY_IMPL(torchada, Autograd, m) {
  m.impl("rms_norm", TORCH_FN(rms_norm_autograd));
  m.impl("silu_and_mul", TORCH_FN(silu_and_mul_autograd));
}

// After the static registrations above (same translation unit, so in order).
namespace {
[[maybe_unused]] const bool g_registered = torchada::ops::register_dynamic_once();
}  // namespace
