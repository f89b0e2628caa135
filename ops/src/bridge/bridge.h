// The kernel bridge: every ATen operator whose CUDA implementation needs NVIDIA device code runs
// PyTorch's CPU kernel on the tensors' data, in stream order. See ops/README.md ("Kernel bridge").
//
//   install.cpp      which operators get the bridge kernel, configuration, cuDNN/SDPA steering,
//                    the C entry point the shim calls, the torchada::bridge_* query ops
//   kernel.cpp       the boxed kernel registered under CUDA: try the original, fall back
//   host_exec.cpp    running one call on the CPU: direct (zero-copy) or copy mode, RNG
//   sparse.cpp       sparse CUDA tensors (SparseCUDA, SparseCsrCUDA kernels): the CPU's sparse
//                    kernels on host copies
//   sdpa.cpp         attention on CUDA tensors: the CPU flash-attention kernel
//   device_alloc.cpp direct mode: the CPU kernel's allocations come from CUDA memory (no copy)
//   cpu_kernels.cpp  CPU kernels for operators that PyTorch only implements for CUDA
//   report.cpp       per-operator statistics, the exit table, the one-line warning
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Allocator.h>
#include <c10/core/StorageImpl.h>
#include <ATen/core/stack.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace torchada::ops::bridge {

enum class Mode : int { kOff, kDirect, kCopy };
const char* mode_name(Mode m);

// How one call of an operator was served: PyTorch's own CUDA kernel (one that launches nothing
// NVIDIA-only: cuBLAS, copies), a device kernel of ops/ (src/device/), or the bridge's host path.
enum class Path : int { kNative, kDevice, kDirect, kCopy, kCount };
// The host path's (what a MUSA GPU pays PCIe copies for).
inline bool bridged(Path p) { return p == Path::kDirect || p == Path::kCopy; }
const char* path_name(Path p);

struct PathStats {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> nanos{0};
};

// PyTorch's computed CUDA kernel of an operator, as this PyTorch hands it out: the raw
// KernelFunction where SafeKernelFunction exposes it (the pinned 2.15 does, 2.11 does not), else
// the SafeKernelFunction itself (its callBoxed first checks the registration is still alive).
template <class Safe>
concept ExposesKernelFunction = requires(const Safe& k) {
  k.kernelFunction();
};
using OriginalKernel =
    std::conditional_t<ExposesKernelFunction<c10::SafeKernelFunction>, c10::KernelFunction,
                       std::optional<c10::SafeKernelFunction>>;
inline void call_original(const c10::KernelFunction& k, const c10::OperatorHandle& op,
                          c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  k.callBoxed(op, ks, stack);
}
inline void call_original(const std::optional<c10::SafeKernelFunction>& k,
                          const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                          torch::jit::Stack* stack) {
  k->callBoxed(op, ks, stack);
}
template <class Safe>
OriginalKernel original_kernel(const Safe& computed) {
  if constexpr (ExposesKernelFunction<Safe>) {
    return computed.kernelFunction();
  } else {
    return computed;
  }
}

// One per overridden operator; lives for the process (the kernel functor points at it).
struct OpState {
  std::string name;         // "aten::add.Tensor"
  OriginalKernel original;  // PyTorch's computed CUDA kernel, captured before overriding
  // A device kernel of ops/ (src/device/) for this operator: tried before anything else; it
  // declines (device::NotServed) the calls it has no code for.
  std::optional<c10::KernelFunction> device;
  size_t num_args = 0;               // schema arguments (the boxed stack's inputs)
  bool latchable = true;             // false: try the original on every call (matrix products...)
  bool matrix_product = false;       // its CUDA kernel is a cuBLAS call (install.cpp)
  bool sparse = false;               // a SparseCUDA / SparseCsrCUDA kernel: run_sparse_on_host
  std::atomic<bool> latched{false};  // the original refused a kernel once: go straight to CPU
  std::atomic<bool> blas_warned{false};
  PathStats stats[static_cast<int>(Path::kCount)];
};

// The active configuration; set once by install().
Mode mode();
bool strict();
bool timing();  // TORCHADA_STATS=1: time every call (counts are always kept)

// Installs the bridge (idempotent). `backend` is the shim's backend ("sim", "musa", "cuda"), or
// nullptr when unknown (loaded by hand): then TORCHADA_BACKEND decides. Returns the number of
// operators overridden (0 when the mode is off), -1 when installation failed.
int install(const char* backend);

// The boxed kernel registered under CUDA for `s`'s operator (kernel.cpp).
c10::KernelFunction make_bridge_kernel(OpState* s);

// True on this thread while the bridge kernel runs PyTorch's own CUDA kernel (kernel.cpp); the
// shim asks through torchada_ops_bridge_attempting (install.cpp).
bool attempting();

// True when the error is the shim's refusal of an NVIDIA kernel
// (cudaErrorNoKernelImageForDevice raised by a CUDA launch check).
bool is_kernel_refusal(const c10::Error& e);

// Runs the operator's CPU kernel on the arguments at the top of `stack` and leaves CUDA results
// there, as the CUDA kernel would have. Orders itself after the work queued on the current
// stream.
void run_on_host(const c10::OperatorHandle& op, torch::jit::Stack* stack, Mode m);
// run_on_host(), and when the CPU kernel refuses Half, BFloat16 or ComplexHalf by name (a type
// the CUDA kernel has), again on arguments widened to float / complex float, the results rounded
// back to the narrow type (widen.cpp).
void run_on_host_widening(const c10::OperatorHandle& op, torch::jit::Stack* stack, Mode m);
// run_on_host_widening(), and when the CPU kernel refuses a case PyTorch's CUDA operator has
// (complex nansum, svd's driver=, LU without pivoting), that case rewritten (rewrite.cpp).
void run_on_host_rewriting(const c10::OperatorHandle& op, torch::jit::Stack* stack, Mode m);
// A bridged call the capture below cannot take: raises, naming the operator, when `stream` is
// being captured (host_exec.cpp).
void refuse_capture(const c10::FunctionSchema& schema, cudaStream_t stream);
// While the operator's stream is being captured into a CUDA graph: the call becomes a host node
// that runs the CPU kernel at every replay, its outputs allocated now (direct mode), and true;
// false when nothing is being captured; raises (refuse_capture) when the call cannot be a host
// node (capture.cpp).
bool run_captured_on_host(const c10::OperatorHandle& op, torch::jit::Stack* stack, Mode m);
// The CUDA device of an argument: a CUDA tensor's (the first in a list), or a CUDA device
// argument's (the current device when it has no index).
std::optional<c10::Device> cuda_device_in(const c10::IValue& v);
// The same for an operator's sparse CUDA kernel (sparse.cpp): the arguments copied to the host,
// the sparse CPU kernel, the results copied back.
void run_sparse_on_host(const c10::OperatorHandle& op, torch::jit::Stack* stack);
// run_on_host() (run_sparse_on_host() for a sparse kernel) in the configured mode, counted (and
// timed under TORCHADA_STATS=1) as a bridged call of `s` (kernel.cpp).
void run_on_host_counted(OpState& s, const c10::OperatorHandle& op, torch::jit::Stack* stack);

// torch.cuda.set_sync_debug_mode's warning (or error) for a host call whose output's shape needs
// the data, as PyTorch's CUDA kernel gives it when it synchronises to learn the shape; nothing
// while the mode is off (sync_debug.cpp).
void warn_if_shape_needs_data(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                              size_t num_args);

// Direct mode (device_alloc.cpp): while a DeviceAllocationScope(true) is alive on a thread, the
// CPU allocator hands that thread blocks of the CUDA caching allocator (current device and
// stream) dressed as CPU memory; take_device_block() moves such a block out of a CPU storage as
// a CUDA DataPtr (empty when the storage holds something else: then copy).
class DeviceAllocationScope {
 public:
  explicit DeviceAllocationScope(bool on);
  ~DeviceAllocationScope();
  DeviceAllocationScope(const DeviceAllocationScope&) = delete;
  DeviceAllocationScope& operator=(const DeviceAllocationScope&) = delete;

 private:
  bool previous_;
};
bool install_device_allocation();  // once, at installation; false: not installed (copies)
c10::DataPtr take_device_block(c10::StorageImpl* s, c10::Device device);
// Results copied into CUDA memory so far (host_exec.cpp): fresh results and reallocated out=
// buffers that were not taken as they are.
uint64_t copied_results();
// Bytes copy mode has moved between device and host so far, both directions (host_exec.cpp):
// what the bridge costs in PCIe traffic on a GPU. 0 in direct mode.
uint64_t moved_bytes();

// scaled_dot_product_attention on CUDA tensors (sdpa.cpp): replaces the CUDA attention choice and
// registers the CUDA kernels of the overrideable fused-attention pair, which run their device
// kernels (from `device_kernels`, by operator name) where those serve the call and the CPU flash
// kernel otherwise; returns their names.
std::vector<std::string> register_sdpa(
    std::vector<c10::RegistrationHandleRAII>* handles,
    const std::map<std::string, c10::KernelFunction>& device_kernels);

// Runs s's device kernel (kernel.cpp); false, with the arguments back in place, when it does not
// serve this call.
bool run_device_kernel(OpState& s, const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                       torch::jit::Stack* stack, bool time);

// The state of every overridden operator, for the report.
const std::vector<OpState*>& all_states();
void register_state(OpState* s);

// Report rows: one per (operator, path) with at least one call.
struct ReportRow {
  std::string op;
  std::string path;
  uint64_t calls;
  double seconds;
};
std::vector<ReportRow> report_rows();
void print_report();        // the TORCHADA_STATS=1 table, on stderr
void arm_exit_reporting();  // registers the atexit table / warning once

// Log line in torchada's format: "[torchada pid:tid level] ...".
void log(const char* level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
bool log_enabled(const char* level);
// The sink for settings/settings.h: a malformed TORCHADA_* value is one warning line.
void settings_warn(const char* message);

// Registers CPU kernels for operators PyTorch only implements for CUDA (fused RNN cells).
// Returns their names.
std::vector<std::string> register_cpu_kernels();

// Registers, once, a Python atexit callback that lets PyTorch's autograd device threads release
// their finished passes before the interpreter finalizes (exit_drain.cpp). No-op without Python.
void register_exit_drain();

// Python source run on the main thread at its next check, with the GIL, in a dictionary of its
// own (python.cpp); `what` names it in the warning logged when it fails. No-op without Python.
void run_python_soon(const char* code, const char* what);

// Steers PyTorch features whose CUDA side is NVIDIA code to what runs (torch_patches.cpp):
// torch.compile's inductor graphs run with aot_eager (unless TORCHADA_TORCH_COMPILE=inductor),
// torch.profiler's CUDA activity (NVIDIA's CUPTI) is dropped, torch.cuda.manual_seed(_all) also
// re-seeds the CPU generator bridged random operators draw from (unless random_on_device: the
// device's random kernels draw from the CUDA generators themselves).
void patch_torch_for_musa(bool random_on_device);

}  // namespace torchada::ops::bridge
