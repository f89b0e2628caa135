// Installing the kernel bridge: which operators get the bridge kernel under DispatchKey::CUDA.
//
// Every operator in the dispatcher with a CUDA kernel is overridden (the original is captured
// first and tried on each call, see kernel.cpp), except:
//   - views and metadata operators (a return aliasing an argument without writing it), which
//     never launch a kernel and must keep PyTorch's own CUDA tensors;
//   - operators whose CUDA path launches no kernel and must stay CUDA: kKeepNative below
//     (allocation, set_/resize_, record_stream, .item(), pinning, stream and event plumbing);
//   - CompositeImplicitAutograd operators (they decompose above the backend; a CUDA kernel
//     would change their autograd).
// Plus the CompositeExplicitAutograd operators that launch kernels themselves through a
// DispatchStub rather than through another operator (kStubComposites: copy_).
// Matrix products (kMatrixProducts) reach the shim's cuBLAS: their calls are tried natively every
// time, so that they stay cuBLAS calls even if one argument combination launched a kernel.
//
// Configuration (read once, at installation):
//   TORCHADA_KERNEL_BRIDGE=direct|copy|off|auto   auto (default): direct on the simulator, copy on
//                                                  a MUSA GPU, off on NVIDIA's libraries
//   TORCHADA_STRICT=1   the first operator that needs the bridge raises an error naming it
//   TORCHADA_STATS=1    per-operator table at exit (report.cpp)
#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "../device/device.h"
#include "../device_kernels.h"
#include "bridge.h"
#include "settings/settings.h"

namespace torchada::ops::bridge {
namespace {

// Flash attention 4 arrived after PyTorch 2.11: switched off where this PyTorch has it.
template <class Context>
void disable_fa4(Context& ctx) {
  if constexpr (requires { ctx.setSDPUseFA4(false); }) ctx.setSDPUseFA4(false);
}

// CUDA paths with no kernel launch that must keep PyTorch's own behaviour (allocation, metadata,
// host-side reads). Names without overload: every overload.
const std::set<std::string> kKeepNative = {
    "aten::empty",
    "aten::empty_strided",
    "aten::_empty_affine_quantized",
    "aten::set_",
    "aten::resize_",
    "aten::resize_as_",
    "aten::_resize_output_",
    "aten::record_stream",
    "aten::_local_scalar_dense",
    "aten::is_pinned",
    "aten::_pin_memory",
    "aten::_efficientzerotensor",
    "aten::_fused_sdp_choice",
    "aten::_cudnn_init_dropout_state",
    "aten::lift_fresh",
    "aten::_has_same_storage_numel",
    "aten::_nested_tensor_from_mask_left_aligned",
    "aten::_use_cudnn_ctc_loss",
    "aten::_use_cudnn_rnn_flatten_weight",
    "aten::is_set_to",
    "aten::_cufft_get_plan_cache_size",
    "aten::_cufft_get_plan_cache_max_size",
    "aten::_cufft_set_plan_cache_max_size",
    "aten::_cufft_clear_plan_cache",
};

// Matrix products: cuBLAS through the shim. Tried natively on every call, as are the copies
// (cudaMemcpy* through the shim, or a kernel where the layouts differ).
const std::set<std::string> kMatrixProducts = {
    "aten::mm",      "aten::bmm",
    "aten::addmm",   "aten::addmm_",
    "aten::baddbmm", "aten::baddbmm_",
    "aten::addbmm",  "aten::addbmm_",
    "aten::addmv",   "aten::addmv_",
    "aten::mv",      "aten::dot",
    "aten::vdot",    "aten::_addmm_activation",
    "aten::_int_mm",
};
const std::set<std::string> kNeverLatchCopies = {"aten::copy_", "aten::_copy_from",
                                                 "aten::_copy_from_and_resize"};

// CompositeExplicitAutograd operators wrapped too: copy_ launches CUDA kernels through a
// DispatchStub rather than through another operator; convolutions are kHostFirst.
const std::set<std::string> kStubComposites = {"aten::copy_", "aten::convolution",
                                               "aten::convolution_backward"};

// Served on the host from the first call: without cuDNN, ATen's CUDA convolution picks native
// CUDA algorithms (im2col, depthwise) some of which have no CPU kernel; on the host the whole
// convolution takes the CPU's own algorithm (oneDNN), as the same script on device="cpu" does.
const std::set<std::string> kHostFirst = {"aten::convolution", "aten::convolution_backward"};

// Random operators whose CUDA implementation is a composition of other operators (the random
// ones among them served by src/device/random.cpp) where it does not launch a kernel of its own.
const std::set<std::string> kComposedOfDeviceRandom = {"aten::multinomial"};

struct Installed {
  std::once_flag once;
  int count = -1;
  Mode mode = Mode::kOff;
  bool strict = false;
  bool timing = false;
  std::vector<std::string> ops;
  std::vector<std::string> uncovered;
  std::vector<std::string> cpu_kernels;
  size_t device_kernels = 0;  // operators with a device kernel (src/device/)
  std::vector<c10::RegistrationHandleRAII>* handles = nullptr;  // leaked: live until exit
};

Installed& installed() {
  static Installed* s = new Installed;  // never destroyed: read from atexit handlers
  return *s;
}

std::string lower(const char* s) {
  std::string r = s ? s : "";
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return std::tolower(c); });
  return r;
}

Mode choose_mode(const char* backend) {
  switch (settings::word(settings::Id::kKernelBridge, settings_warn)) {  // auto, direct, copy, off
    case 1:
      return Mode::kDirect;
    case 2:
      return Mode::kCopy;
    case 3:
      return Mode::kOff;
    default:
      break;
  }
  static const char* const kBackends[] = {"auto", "musa", "sim", "cuda"};
  std::string b = lower(backend);
  if (b.empty()) b = kBackends[settings::word(settings::Id::kBackend, nullptr)];
  if (b == "sim") return Mode::kDirect;
  if (b == "musa") return Mode::kCopy;
  return Mode::kOff;  // cuda: NVIDIA runs its kernels; auto/unknown: nothing to bridge to
}

class SilentWarnings final : public c10::WarningHandler {
 public:
  void process(const c10::Warning&) override {}
};

// Operator name without overload, "aten::add".
std::string base_name(const c10::OperatorName& n) { return n.name; }

std::string full_name(const c10::OperatorName& n) {
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

bool returns_view(const c10::FunctionSchema& s) {
  for (const auto& r : s.returns())
    if (r.alias_info() && !r.alias_info()->isWrite()) return true;
  return false;
}

bool takes_generator(const c10::FunctionSchema& s) {
  for (const auto& a : s.arguments()) {
    c10::TypePtr t = a.real_type();
    if (auto o = t->cast<c10::OptionalType>()) t = o->getElementType();
    if (t->kind() == c10::TypeKind::GeneratorType) return true;
  }
  return false;
}

bool has_cpu_path(const c10::OperatorHandle& op) {
  using K = c10::DispatchKey;
  return op.hasKernelForDispatchKey(K::CPU) ||
         op.hasKernelForDispatchKey(K::CompositeExplicitAutograd) ||
         op.hasKernelForDispatchKey(K::CompositeExplicitAutogradNonFunctional) ||
         op.hasKernelForDispatchKey(K::CompositeImplicitAutograd);
}

// A tensor result, or an argument written: an operator with work to bridge (sparse_dim, _nnz,
// is_coalesced... only read metadata).
bool makes_tensors(const c10::FunctionSchema& s) {
  for (const auto& r : s.returns())
    if (r.real_type()->kind() != c10::TypeKind::IntType &&
        r.real_type()->kind() != c10::TypeKind::BoolType)
      return true;
  for (const auto& a : s.arguments())
    if (a.alias_info() && a.alias_info()->isWrite()) return true;
  return false;
}

// The operators' sparse CUDA kernels (sparse.cpp), overridden like the strided ones; their
// names carry the key ("aten::_coalesce [SparseCUDA]"). Returns how many.
size_t install_sparse(Installed& st) {
  using K = c10::DispatchKey;
  auto& d = c10::Dispatcher::singleton();
  size_t n = 0;
  for (const c10::OperatorName& name : d.getAllOpNames()) {
    auto op = d.findOp(name);
    if (!op || !op->hasSchema()) continue;
    for (const K key : {K::SparseCUDA, K::SparseCsrCUDA}) {
      if (!op->hasKernelForDispatchKey(key)) continue;
      const std::string base = base_name(name);
      if (base.rfind("torchada::", 0) == 0 || kKeepNative.count(base) ||
          returns_view(op->schema()) || !makes_tensors(op->schema()))
        continue;
      auto* s = new OpState;  // leaked, as the strided operators' states
      s->name = full_name(name) + " [" + c10::toString(key) + "]";
      s->original = original_kernel(op->getComputedKernelForDispatchKey(key));
      s->num_args = op->schema().arguments().size();
      s->sparse = true;
      register_state(s);
      st.handles->push_back(d.registerImpl(name, key, make_bridge_kernel(s), std::nullopt, nullptr,
                                           "torchada kernel bridge (ops/src/bridge/sparse.cpp)"));
      st.ops.push_back(s->name);
      ++n;
    }
  }
  return n;
}

int install_locked(Installed& st, const char* backend) {
  st.mode = choose_mode(backend);
  // The shim's variables: it reports malformed values.
  st.strict = settings::flag(settings::Id::kStrict, nullptr);
  st.timing = settings::flag(settings::Id::kStats, nullptr);
  // Read by the Python patches (torch_patches.cpp): named here when malformed.
  settings::word(settings::Id::kTorchCompile, settings_warn);
  if (st.mode == Mode::kOff) return 0;
  register_exit_drain();

  SilentWarnings silent;
  c10::WarningUtils::WarningHandlerGuard guard(&silent);  // "Overriding a previously registered"

  // cuDNN exists only as NVIDIA code: convolutions take ATen's native path (bridged).
  at::Context& ctx = at::globalContext();
  // The attention choice for CUDA tensors is sdpa.cpp's (the CPU's own choice: flash attention
  // on the host, or math); the flash and memory-efficient settings are left as the user has them,
  // since the CPU's choice reads them (turning them off made CPU tensors' attention slower too).
  ctx.setUserEnabledCuDNN(false);
  ctx.setSDPUseCuDNN(false);
  ctx.setSDPUseFA3(false);
  disable_fa4(ctx);
  ctx.setSDPUseMath(true);

  st.cpu_kernels = register_cpu_kernels();
  if (st.mode == Mode::kDirect && settings::flag(settings::Id::kBridgeDeviceAlloc, settings_warn) &&
      !install_device_allocation())
    log("warn",
        "kernel bridge: another CPU allocator holds the top priority; bridged results "
        "are copied into CUDA memory");

  // Device kernels (src/device/) by operator, when this process can run them.
  std::map<std::string, c10::KernelFunction> device_kernels;
  if (device::enabled_for(backend))
    for (auto& k : device::kernels_for_install()) device_kernels.emplace(k.op, k.fn);
  const bool random_on_device = device::random_kernels_installed();
  patch_torch_for_musa(random_on_device);

  auto& d = c10::Dispatcher::singleton();
  st.handles = new std::vector<c10::RegistrationHandleRAII>;
  using K = c10::DispatchKey;
  for (const c10::OperatorName& name : d.getAllOpNames()) {
    auto op = d.findOp(name);
    if (!op || !op->hasSchema()) continue;
    const std::string base = base_name(name);
    if (base.rfind("torchada::bridge", 0) == 0) continue;
    const bool cuda = op->hasKernelForDispatchKey(K::CUDA);
    const bool stub_composite =
        !cuda && kStubComposites.count(base) &&
        (op->hasKernelForDispatchKey(K::CompositeExplicitAutograd) ||
         op->hasKernelForDispatchKey(K::CompositeExplicitAutogradNonFunctional));
    if (!cuda && !stub_composite) continue;
    if (kKeepNative.count(base) || returns_view(op->schema())) continue;
    if (!cuda && op->hasKernelForDispatchKey(K::CompositeImplicitAutograd)) continue;
    if (!has_cpu_path(*op)) st.uncovered.push_back(full_name(name));

    auto* s = new OpState;  // leaked: the registered functor points at it for the process
    s->name = full_name(name);
    s->original = original_kernel(op->getComputedKernelForDispatchKey(K::CUDA));
    s->num_args = op->schema().arguments().size();
    s->matrix_product = kMatrixProducts.count(base) != 0;
    s->latchable = !s->matrix_product && kNeverLatchCopies.count(base) == 0;
    if (auto k = device_kernels.find(s->name); k != device_kernels.end()) {
      s->device = k->second;
      ++st.device_kernels;
    }
    // Random operators always launch a kernel, and a native attempt may draw from a generator
    // before it fails (randperm draws on the CPU first): straight to the host. With the random
    // kernels on the device, those PyTorch composes of them (multinomial without replacement or
    // of one sample: exponential_, then argmax or topk) run natively.
    const bool composed = random_on_device && kComposedOfDeviceRandom.count(base) != 0;
    if (kHostFirst.count(base) || (takes_generator(op->schema()) && !composed))
      s->latched.store(true);
    register_state(s);
    st.handles->push_back(d.registerImpl(name, K::CUDA, make_bridge_kernel(s), std::nullopt,
                                         nullptr, "torchada kernel bridge (ops/src/bridge)"));
    st.ops.push_back(s->name);
  }
  const size_t sparse = install_sparse(st);
  for (auto& n : register_sdpa(st.handles, device_kernels)) st.ops.push_back(n);
  arm_exit_reporting();
  log("info",
      "kernel bridge (%s): %zu CUDA operators overridden (%zu of them sparse kernels), %zu "
      "without a CPU kernel; %zu served by device kernels first (%s)",
      mode_name(st.mode), st.ops.size(), sparse, st.uncovered.size(), st.device_kernels,
      st.device_kernels == 0  ? "none for this backend or TORCHADA_OPS_KERNELS=off"
      : host_kernels_active() ? "the simulator's executor"
                              : "the GPU");
  return static_cast<int>(st.ops.size());
}

}  // namespace

Mode mode() { return installed().mode; }
bool strict() { return installed().strict; }
bool timing() { return installed().timing; }

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kDirect:
      return "direct";
    case Mode::kCopy:
      return "copy";
    case Mode::kOff:
      break;
  }
  return "off";
}

int install(const char* backend) {
  Installed& st = installed();
  std::call_once(st.once, [&] {
    try {
      st.count = install_locked(st, backend);
    } catch (const std::exception& e) {
      log("error", "kernel bridge not installed: %s", e.what());
      st.count = -1;
    }
  });
  return st.count;
}

}  // namespace torchada::ops::bridge

// Called by libtorchada.so once it has loaded this library into a process with PyTorch's CUDA
// library (shim/core/backend.cc); `backend` is the shim's backend name.
extern "C" __attribute__((visibility("default"))) int torchada_ops_bridge_install(
    const char* backend) {
  return torchada::ops::bridge::install(backend);
}

// The shim asks, for a kernel it refuses, whether the bridge launched it while trying PyTorch's
// own CUDA kernel (then served on the host; else the program's own kernel: a warning).
extern "C" __attribute__((visibility("default"))) int torchada_ops_bridge_attempting() {
  return torchada::ops::bridge::attempting() ? 1 : 0;
}

namespace {

using torchada::ops::bridge::installed;

std::tuple<std::vector<std::string>, std::vector<std::string>, std::vector<int64_t>,
           std::vector<double>>
bridge_report_op() {
  std::vector<std::string> ops, paths;
  std::vector<int64_t> calls;
  std::vector<double> secs;
  for (const auto& r : torchada::ops::bridge::report_rows()) {
    ops.push_back(r.op);
    paths.push_back(r.path);
    calls.push_back(static_cast<int64_t>(r.calls));
    secs.push_back(r.seconds);
  }
  return {ops, paths, calls, secs};
}
std::string bridge_mode_op() { return torchada::ops::bridge::mode_name(installed().mode); }
std::vector<std::string> bridge_ops_op() { return installed().ops; }
std::vector<std::string> bridge_uncovered_op() { return installed().uncovered; }
std::vector<std::string> bridge_cpu_kernels_op() { return installed().cpu_kernels; }
int64_t bridge_copied_results_op() {
  return static_cast<int64_t>(torchada::ops::bridge::copied_results());
}
int64_t bridge_moved_bytes_op() {
  return static_cast<int64_t>(torchada::ops::bridge::moved_bytes());
}
int64_t bridge_install_op(std::string_view backend) {
  const std::string b(backend);
  return torchada::ops::bridge::install(b.empty() ? nullptr : b.c_str());
}

// TORCHADA_KERNEL_BRIDGE=direct|copy set explicitly: install when the library is loaded by hand
// (torch.ops.load_library), not only when the shim loads it.
[[maybe_unused]] const bool g_explicit = [] {
  // A quiet read (a static initialiser); install() reports a malformed value.
  const int mode =
      torchada::settings::word(torchada::settings::Id::kKernelBridge, nullptr);  // direct, copy
  if (mode == 1 || mode == 2) torchada::ops::bridge::install(nullptr);
  return true;
}();

}  // namespace

TORCH_LIBRARY_FRAGMENT(torchada, m) {
  // (ops, paths, calls, seconds): one row per operator and path taken ("native", "direct",
  // "copy"); seconds are measured under TORCHADA_STATS=1 only.
  m.def("bridge_report() -> (str[], str[], int[], float[])", &bridge_report_op);
  m.def("bridge_mode() -> str", &bridge_mode_op);
  m.def("bridge_ops() -> str[]", &bridge_ops_op);
  m.def("bridge_uncovered() -> str[]", &bridge_uncovered_op);
  m.def("bridge_cpu_kernels() -> str[]", &bridge_cpu_kernels_op);
  m.def("bridge_install(str backend=\"\") -> int", &bridge_install_op);
  // Fresh results (and out= buffers a CPU kernel reallocated) copied into CUDA memory so far; in
  // direct mode they are taken as they are instead, so this stays 0 there.
  m.def("bridge_copied_results() -> int", &bridge_copied_results_op);
  // Bytes the copy mode has moved between device and host so far (both directions; 0 in direct
  // mode): the PCIe traffic the bridged operators cost on a GPU.
  m.def("bridge_moved_bytes() -> int", &bridge_moved_bytes_op);
}
