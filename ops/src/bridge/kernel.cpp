// The boxed kernel registered under DispatchKey::CUDA for every bridged operator.
//
// "Try first": PyTorch's own CUDA kernel runs unless this operator already needed the bridge.
// When it throws because the shim refused an NVIDIA kernel (cudaErrorNoKernelImageForDevice), or
// because an NVIDIA library it calls (cuFFT, cuSOLVER, cuSPARSE) cannot run here, the CUDA error
// state is cleared, the operator is remembered (latched) and the call is served
// on the host. Matrix products and copies are never latched: their usual path reaches cuBLAS or
// memcpy, which the shim serves, and only some argument combinations launch a kernel.
//
// PyTorch's CUDA operator checks its arguments before it launches anything: its generated
// wrapper's device check (every tensor, out= included, on one device, unless the operator opts
// out), TensorIterator's rule that only a CPU scalar may join CUDA tensors, and the determinism
// alerts under torch.use_deterministic_algorithms. A device kernel or a latched operator skips
// them, so a call they could answer is first given to PyTorch's own operator, latched or not
// (consult()): one whose tensors are not all on one CUDA device, and every call while
// deterministic algorithms are on. Its check raises as on an NVIDIA GPU, or it passes and the
// launch is refused as before. Whether an earlier call latched then changes no answer. An
// operator seen to accept CPU scalars is not asked again for them.
#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <cstring>
#include <string>

#include "../device/device.h"
#include "bridge.h"
#include "profiled.h"

namespace torchada::ops::bridge {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t since(Clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

void count(OpState& s, Path p, uint64_t ns) {
  PathStats& st = s.stats[static_cast<int>(p)];
  st.calls.fetch_add(1, std::memory_order_relaxed);
  if (ns) st.nanos.fetch_add(ns, std::memory_order_relaxed);
}

// A matrix product whose cuBLAS(Lt) call the backend refused (an argument combination or
// epilogue it does not support): this call runs on the host; warned once per operator, since it
// is a gap of the cuBLAS layer, not NVIDIA device code.
bool is_blas_refusal(const c10::Error& e, OpState& s) {
  const char* what = e.what();
  if (std::strstr(what, "CUBLAS_STATUS_") == nullptr) return false;
  if (!s.blas_warned.exchange(true, std::memory_order_relaxed)) {
    const char* nl = std::strchr(what, '\n');
    log("warn", "%s: cuBLAS failed (%.*s); such calls run on the host", s.name.c_str(),
        nl ? static_cast<int>(nl - what) : 300, what);
  }
  return true;
}

// PyTorch's CUDA operators built on NVIDIA's other libraries (cuFFT for torch.fft, cuSOLVER for
// torch.linalg, cuSPARSE) fail inside those libraries: they carry their own copy of the CUDA
// runtime and kernels, which need the driver's private export tables and NVIDIA modules
// (refused by the shim), so the library reports an initialisation or internal error. Such an
// operator can never run natively here: it is latched like a refused kernel. The library's own
// error text is the only signal (the failure happens inside NVIDIA's code).
constexpr const char* kNvidiaLibraryErrors[] = {
    "cuFFT error",      "CUFFT_",            // ATen's cuFFT checks
    "cusolver error",   "CUSOLVER_STATUS_",  // ATen's cuSOLVER checks
    "CUSPARSE_STATUS_", "`cusparse",         // cuSPARSE status / "when calling `cusparse...`"
};

const char* nvidia_library_failure(const c10::Error& e) {
  const char* what = e.what();
  for (const char* marker : kNvidiaLibraryErrors)
    if (std::strstr(what, marker) != nullptr) return marker;
  return nullptr;
}

// An internal assertion of a CUDA kernel's host code is never the caller's error: on MUSA it is
// an NVIDIA assumption that does not hold, typically the warp size (MUSA's is 128, reported as
// is: torch.mode asserts its block is a multiple of the warp size and at most 32 warps). The CPU
// kernel has no such assumption; the operator is latched, its first assertion logged (info).
bool is_internal_assert(const c10::Error& e, OpState& s) {
  const char* what = e.what();
  if (std::strstr(what, "INTERNAL ASSERT FAILED") == nullptr) return false;
  if (log_enabled("info")) {
    const char* nl = std::strchr(what, '\n');
    log("info", "%s: its CUDA kernel's host code asserted (%.*s); runs on the kernel bridge",
        s.name.c_str(), nl ? static_cast<int>(nl - what) : 300, what);
  }
  return true;
}

// thrust::system_error's text: "<algorithm>: failed inside CUB: cudaErrorNoKernelImageForDevice:
// <cudaGetErrorString text>" (thrust's cuda_cub error messages carry the error's name).
bool is_thrust_refusal(const std::exception& e) {
  return std::strstr(e.what(), "cudaErrorNoKernelImageForDevice") != nullptr;
}

// True on a thread while it runs PyTorch's own CUDA kernel for the bridge: the shim logs the
// refusal of a kernel launched then at debug level (the bridge serves the call), and any other
// refusal (a kernel of the program's own, a C++/CUDA extension) as a warning naming the kernel.
thread_local bool t_attempting = false;

class Attempt {
 public:
  Attempt() : previous_(t_attempting) { t_attempting = true; }
  ~Attempt() { t_attempting = previous_; }
  Attempt(const Attempt&) = delete;
  Attempt& operator=(const Attempt&) = delete;

 private:
  bool previous_;
};

// Which devices a call's tensors are on, as far as PyTorch's checks care.
struct Devices {
  bool other_cuda = false;  // a CUDA tensor on another device than the first one seen
  bool cpu_scalar = false;  // a 0-dim CPU tensor
  bool cpu_tensor = false;  // a CPU tensor with dimensions
};

void note_device(const at::Tensor& t, std::optional<c10::Device>& cuda, Devices& d) {
  if (!t.defined()) return;
  const c10::Device dev = t.device();
  if (dev.is_cuda()) {
    if (!cuda)
      cuda = dev;
    else if (*cuda != dev)
      d.other_cuda = true;
  } else if (dev.is_cpu()) {
    (t.dim() == 0 ? d.cpu_scalar : d.cpu_tensor) = true;
  }
}

void note_devices(const c10::IValue& v, std::optional<c10::Device>& cuda, Devices& d) {
  if (v.isTensor()) {
    note_device(v.toTensor(), cuda, d);
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList()) note_device(t, cuda, d);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef())
      if (e.isTensor()) note_device(e.toTensor(), cuda, d);
  }
}

class BridgeKernel final : public c10::OperatorKernel {
 public:
  explicit BridgeKernel(OpState* s) : s_(s) {}

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    OpState& s = *s_;
    const bool time = timing();
    const Ask reason = consult(*stack, s.num_args);
    const bool ask = reason != Ask::kNo;
    if (!ask && s.device && run_device_kernel(s, op, ks, stack, time)) return;
    if (ask || !s.latched.load(std::memory_order_relaxed)) {
      // The original may consume its arguments before it fails: keep references to put back.
      const size_t base = stack->size() - s.num_args;
      std::vector<c10::IValue> saved(stack->begin() + static_cast<std::ptrdiff_t>(base),
                                     stack->end());
      const auto t0 = time ? Clock::now() : Clock::time_point();
      try {
        Attempt attempt;
        // Matrix products are cuBLAS calls; other native operators' device work (copies,
        // fills) the shim records itself.
        std::optional<ProfiledWork> profiled;
        if (s.matrix_product) profiled.emplace(ProfiledWork::kLibrary, s);
        call_original(s.original, op, ks, stack);
        count(s, Path::kNative, time ? since(t0) : 0);
        return;
      } catch (const c10::Error& e) {
        if (!is_kernel_refusal(e) && nvidia_library_failure(e) == nullptr &&
            !is_internal_assert(e, s) && !(!s.latchable && is_blas_refusal(e, s)))
          throw;
      } catch (const std::exception& e) {
        // Thrust and CUB (sort, unique, scans) report a refused launch as a
        // thrust::system_error of their own, not through c10's checks.
        if (!is_thrust_refusal(e)) throw;
      }
      (void)cudaGetLastError();  // the refusal must not surface at the next launch check
      stack->erase(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
      for (auto& v : saved) stack->push_back(std::move(v));
      if (reason == Ask::kCpuScalar) cpu_scalars_pass_.store(true, std::memory_order_relaxed);
      if (s.latchable && !s.latched.exchange(true, std::memory_order_relaxed) &&
          log_enabled("info"))
        log("info", "%s: its CUDA kernel is NVIDIA device code; runs on the kernel bridge (%s)",
            s.name.c_str(), mode_name(mode()));
      if (ask && s.device && run_device_kernel(s, op, ks, stack, time)) return;
    }
    TORCH_CHECK(!strict(), "torchada: TORCHADA_STRICT=1: ", s.name,
                " needs the kernel bridge (its CUDA kernel is NVIDIA device code); unset "
                "TORCHADA_STRICT to run it on the CPU through the bridge");
    run_on_host_counted(s, op, stack);
  }

 private:
  enum class Ask { kNo, kYes, kCpuScalar };

  // Whether PyTorch's own operator must see this call first (the comment at the top), and why.
  Ask consult(const torch::jit::Stack& stack, size_t num_args) const {
    if (at::globalContext().deterministicAlgorithms()) return Ask::kYes;
    std::optional<c10::Device> cuda;
    Devices d;
    for (size_t i = stack.size() - num_args; i < stack.size(); ++i) note_devices(stack[i], cuda, d);
    if (d.other_cuda || d.cpu_tensor) return Ask::kYes;
    if (d.cpu_scalar && !cpu_scalars_pass_.load(std::memory_order_relaxed)) return Ask::kCpuScalar;
    return Ask::kNo;
  }

  OpState* s_;
  std::atomic<bool> cpu_scalars_pass_{false};  // its checks let a CPU scalar through (seen once)
};

}  // namespace

namespace {
// PyTorch's kernels compiled at run time (jiterator: torch.special, i0, gcd, sinc, complex
// logaddexp...; NVRTC) are loaded through the driver, whose refusal (CUDA_ERROR_NO_BINARY_FOR_GPU)
// PyTorch reports as "CUDA driver error: " + cuGetErrorString's text, without the code. The text
// is the backend's (MUSA's description on musa and sim): ask the driver in this process for it.
const std::string& driver_refusal_text() {
  static const std::string text = [] {
    std::string t;
    void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) return t;
    const char* s = nullptr;
    auto get = reinterpret_cast<decltype(&::cuGetErrorString)>(dlsym(h, "cuGetErrorString"));
    if (get != nullptr && get(CUDA_ERROR_NO_BINARY_FOR_GPU, &s) == CUDA_SUCCESS && s != nullptr &&
        *s != '\0')
      t = std::string("CUDA driver error: ") + s;
    dlclose(h);
    return t;
  }();
  return text;
}
}  // namespace

bool is_kernel_refusal(const c10::Error& e) {
  if (const auto* a = dynamic_cast<const c10::AcceleratorError*>(&e))
    return a->get_error_code() == static_cast<int32_t>(cudaErrorNoKernelImageForDevice);
  // Paths that rethrow the launch check's error as a plain c10::Error keep cudaGetErrorString's
  // text for the code.
  const char* what = e.what();
  if (std::strstr(what, "no kernel image is available for execution on the device") != nullptr)
    return true;
  const std::string& driver = driver_refusal_text();
  return !driver.empty() && std::strstr(what, driver.c_str()) != nullptr;
}

bool run_device_kernel(OpState& s, const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                       torch::jit::Stack* stack, bool time) {
  const size_t base = stack->size() - s.num_args;
  std::vector<c10::IValue> saved(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  const auto t0 = time ? Clock::now() : Clock::time_point();
  ProfiledWork profiled(ProfiledWork::kDeviceKernel, s);
  try {
    s.device->callBoxed(op, ks, stack);
  } catch (const device::NotServed&) {
    profiled.discard();
    stack->erase(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
    for (auto& v : saved) stack->push_back(std::move(v));
    return false;
  }
  count(s, Path::kDevice, time ? since(t0) : 0);
  return true;
}

void run_on_host_counted(OpState& s, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  warn_if_shape_needs_data(op, *stack, s.num_args);
  const Mode m = mode();
  const bool time = timing();
  const auto t0 = time ? Clock::now() : Clock::time_point();
  ProfiledWork profiled(ProfiledWork::kHostKernel, s);
  if (s.sparse) {
    run_sparse_on_host(op, stack);
    count(s, Path::kCopy, time ? since(t0) : 0);
    return;
  }
  if (!run_captured_on_host(op, stack, m)) run_on_host_rewriting(op, stack, m);
  count(s, m == Mode::kCopy ? Path::kCopy : Path::kDirect, time ? since(t0) : 0);
}

bool attempting() { return t_attempting; }

c10::KernelFunction make_bridge_kernel(OpState* s) {
  return c10::KernelFunction::makeFromBoxedFunctor(std::make_unique<BridgeKernel>(s));
}

}  // namespace torchada::ops::bridge
