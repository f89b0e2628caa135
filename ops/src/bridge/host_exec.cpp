// One bridged call: PyTorch's CPU kernel on the data of CUDA tensors.
//
// Every CUDA storage reached by the arguments gets one host mirror (one CPU StorageImpl per CUDA
// StorageImpl, so views of one buffer stay views of one buffer and the CPU kernels' overlap
// checks see the aliasing):
//   direct  the mirror is the CUDA storage's own bytes (device memory is host memory on the
//           simulator): in-place and out= writes land in the CUDA tensor directly, nothing copied
//   copy    the mirror is a host copy of the storage (cudaMemcpy D2H), copied back after the call
//           when an argument the schema marks as written (Tensor(a!)) lives in it
// Each CUDA tensor argument becomes a CPU tensor with the same sizes, strides and storage offset
// over its mirror; the operator runs with the CPU dispatch key; CPU results come back as CUDA
// tensors: an argument returned (in-place, out=) is returned as that CUDA tensor, a view of a
// mirror as the same view of the CUDA storage, anything fresh becomes CUDA memory: in direct mode
// the CPU kernel allocated it from the CUDA caching allocator (device_alloc.cpp) and it is taken
// as it is, otherwise (copy mode, memory from elsewhere) it is copied.
// A mirror the CPU kernel reallocated (out= resized beyond its storage) is moved into the CUDA
// storage, and a written argument whose sizes or strides changed gets them.
//
// Ordering: the current CUDA stream is synchronised first, so the call runs after every piece of
// work queued on it, and it completes before returning, so everything queued afterwards runs
// after it.
//
// Random numbers: with the device's random kernels (the default), a CPU generator derived from the
// CUDA generator's seed and offset (the argument's, or the device's default), which moves on; with
// TORCHADA_OPS_RNG=cpu a CUDA generator argument becomes a CPU generator seeded from it and
// without one the CPU kernel draws from the CPU default generator, as the same script on
// device="cpu" does. See ops/README.md.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/CPUAllocator.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "../device/device.h"
#include "bridge.h"
#include "random_state.h"
#include "ivalue_tensors.h"

namespace torchada::ops::bridge {
namespace {

struct Mirror {
  c10::Storage cuda;     // the CUDA storage (kept alive for the call)
  c10::Storage host;     // CPU storage: the same bytes (direct) or a host copy (copy)
  const void* host_ptr;  // host's data at creation: another pointer afterwards = reallocated
  size_t host_nbytes;
  bool written = false;  // copy mode: copy back after the call
  // Direct mode: `host` holds the storage's mutable pointer (a lazy clone materialised).
  bool materialised = false;
};

struct Wrapped {
  // Owned: the kernel consumes its arguments from the stack, and an in-place operator that
  // returns nothing (_foreach_add_) leaves no other reference to the host tensors whose
  // metadata is read back after the call.
  at::Tensor host;
  at::Tensor cuda;
  Mirror* mirror;
  bool write;
};

void noop_delete(void*) {}

std::atomic<uint64_t> g_copied_results{0};
std::atomic<uint64_t> g_moved_bytes{0};

// Host <-> device copies of copy mode, on the current stream, waited for.
void copy_bytes(void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                const c10::cuda::CUDAStream& stream) {
  if (n == 0) return;
  g_moved_bytes.fetch_add(n, std::memory_order_relaxed);
  C10_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, kind, stream.stream()));
  stream.synchronize();
}

// Arguments an operator writes although its schema does not say so (no Tensor(a!)): copy mode
// must copy them back too. SyncBatchNorm's statistics gathering updates the running statistics in
// place (arguments 3 and 4), as its CUDA kernel does.
bool writes_unannotated(const c10::FunctionSchema& schema, size_t arg) {
  const std::string& name = schema.name();
  if (name == "aten::batch_norm_gather_stats" ||
      name == "aten::batch_norm_gather_stats_with_counts")
    return arg == 3 || arg == 4;
  return false;
}

class HostCall {
 public:
  HostCall(Mode m) : mode_(m) {}

  void run(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    const auto& schema = op.schema();
    const size_t nargs = schema.arguments().size();
    const size_t base = stack->size() - nargs;
    bool has_generator_arg = false;
    // Pass 1: the device, and the explicit device arguments.
    for (size_t i = 0; i < nargs; ++i) find_device((*stack)[base + i]);
    std::vector<size_t> generator_args;
    for (size_t i = 0; i < nargs; ++i) {
      c10::TypePtr t = schema.arguments()[i].real_type();
      if (auto o = t->cast<c10::OptionalType>()) t = o->getElementType();
      if (t->kind() == c10::TypeKind::GeneratorType) generator_args.push_back(i);
    }
    has_generator_arg = !generator_args.empty();
    if (device_.index() < 0) device_ = c10::Device(c10::kCUDA, c10::cuda::current_device());
    c10::cuda::CUDAGuard guard(device_);
    stream_ = c10::cuda::getCurrentCUDAStream(device_.index());
    // Host work cannot become part of a CUDA graph: say so, naming the operator, instead of the
    // runtime's "operation not permitted while a stream is being captured" from the query below.
    refuse_capture(schema, stream_->stream());
    // An idle stream (the usual case: every preceding operator was bridged) needs no
    // synchronisation, and a query costs far less than a synchronise.
    if (!stream_->query()) stream_->synchronize();
    // Random operators: with the device's random kernels installed, every CUDA generator's state
    // (seed, offset) is the one source of random numbers, as on NVIDIA; otherwise
    // (TORCHADA_OPS_RNG=cpu) bridged draws follow the CPU generators, as a device="cpu" run does.
    if (has_generator_arg) {
      if (device::random_kernels_installed()) {
        for (size_t i : generator_args) {
          c10::IValue& v = (*stack)[base + i];
          if (v.isNone()) v = at::globalContext().defaultGenerator(device_);
          if (v.isGenerator() && v.toGenerator().defined()) v = drawn_from(v.toGenerator());
        }
      } else {
        follow_cuda_default_seed();
        for (size_t i : generator_args) refuse_host_generator((*stack)[base + i]);
      }
    }

    // Pass 2: arguments to host form.
    for (size_t i = 0; i < nargs; ++i) {
      const auto* alias = schema.arguments()[i].alias_info();
      to_host((*stack)[base + i],
              (alias != nullptr && alias->isWrite()) || writes_unannotated(schema, i));
    }
    if (mode_ == Mode::kCopy)
      for (auto& w : wrapped_)
        if (w.write) w.mirror->written = true;

    {
      // Direct mode: what the CPU kernel allocates is CUDA memory, so fresh results need no copy.
      DeviceAllocationScope device_memory(mode_ == Mode::kDirect && !cpu_device_arg_);
      op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
    }

    // Storages the CPU kernel reallocated, metadata of written arguments, copy-back.
    for (auto& m : mirrors_) sync_back(*m);
    for (auto& w : wrapped_) {
      if (!w.write) continue;
      c10::TensorImpl* c = w.cuda.unsafeGetTensorImpl();
      const c10::TensorImpl* h = w.host.unsafeGetTensorImpl();
      if (c->sizes() != h->sizes() || c->strides() != h->strides() ||
          c->storage_offset() != h->storage_offset())
        c->set_sizes_and_strides(h->sizes(), h->strides(), h->storage_offset());
    }
    const size_t nret = schema.returns().size();
    for (size_t i = stack->size() - nret; i < stack->size(); ++i) to_device((*stack)[i]);
  }

 private:
  void find_device(const c10::IValue& v) {
    if (device_.index() >= 0) return;
    if (auto d = cuda_device_in(v)) device_ = *d;
  }

  // Direct mode reads a storage through its const pointer, so that a lazy clone
  // (torch._lazy_clone, copy-on-write) the operator only reads stays one; the first argument
  // written through the storage materialises it (mutable_data_ptr), and the mirror follows.
  Mirror* mirror_for(const at::Tensor& t, bool write) {
    c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
    for (auto& m : mirrors_) {
      if (m->cuda.unsafeGetStorageImpl() != impl) continue;
      if (write && mode_ == Mode::kDirect && !m->materialised) materialise(*m);
      return m.get();
    }
    auto m = std::make_unique<Mirror>();
    m->cuda = t.storage();
    const size_t n = impl->nbytes();
    if (mode_ == Mode::kDirect) {
      void* p = write ? impl->mutable_data_ptr().get() : const_cast<void*>(impl->data());
      m->materialised = write;
      m->host = c10::Storage(c10::Storage::use_byte_size_t(), n,
                             c10::DataPtr(p, p, &noop_delete, c10::Device(c10::kCPU)),
                             c10::GetCPUAllocator(), /*resizable=*/true);
    } else {
      m->host = c10::Storage(c10::Storage::use_byte_size_t(), n, c10::GetCPUAllocator(),
                             /*resizable=*/true);
      copy_bytes(m->host.mutable_data(), impl->data(), n, cudaMemcpyDeviceToHost, *stream_);
    }
    m->host_ptr = m->host.data();
    m->host_nbytes = n;
    mirrors_.push_back(std::move(m));
    return mirrors_.back().get();
  }

  static void materialise(Mirror& m) {
    void* p = m.cuda.unsafeGetStorageImpl()->mutable_data_ptr().get();
    if (p != m.host_ptr) {
      m.host.unsafeGetStorageImpl()->set_data_ptr_noswap(
          c10::DataPtr(p, p, &noop_delete, c10::Device(c10::kCPU)));
      m.host_ptr = p;
    }
    m.materialised = true;
  }

  at::Tensor wrap(const at::Tensor& t, bool write) {
    if (!t.defined() || !t.is_cuda() || t.layout() != c10::kStrided) return t;
    Mirror* m = mirror_for(t, write);
    at::Tensor h = at::detail::make_tensor<c10::TensorImpl>(
        c10::Storage(m->host), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
    c10::TensorImpl* hi = h.unsafeGetTensorImpl();
    hi->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
    if (t.is_conj()) hi->_set_conj(true);
    if (t.is_neg()) hi->_set_neg(true);
    wrapped_.push_back({h, t, m, write});
    return h;
  }

  void to_host(c10::IValue& v, bool write) {
    if (v.isTensor() || v.isTensorList() || v.isList()) {
      if (v.isTensor() && v.toTensor().defined() && !v.toTensor().is_cuda())
        host_args_.push_back(v.toTensor().unsafeGetTensorImpl());
      map_tensors(v, [&](const at::Tensor& t) { return wrap(t, write); });
    } else if (v.isDevice()) {
      if (v.toDevice().is_cuda())
        v = c10::Device(c10::kCPU);
      else
        cpu_device_arg_ = true;
    } else if (v.isGenerator()) {
      const at::Generator& g = v.toGenerator();
      if (g.defined() && g.device().is_cuda()) v = host_generator(g);
    }
  }

  // A mirror the CPU kernel reallocated becomes the CUDA storage's new buffer; copy mode writes
  // written mirrors back.
  void sync_back(Mirror& m) {
    c10::StorageImpl* c = m.cuda.unsafeGetStorageImpl();
    const bool realloc = m.host.data() != m.host_ptr || m.host.nbytes() != m.host_nbytes;
    if (realloc) {
      const size_t n = m.host.nbytes();
      c10::DataPtr dp;
      if (mode_ == Mode::kDirect) dp = take_device_block(m.host.unsafeGetStorageImpl(), device_);
      if (!dp) {
        g_copied_results.fetch_add(1, std::memory_order_relaxed);
        c10::Allocator* a = c->allocator() ? c->allocator() : c10::GetAllocator(c10::kCUDA);
        dp = a->allocate(n);
        if (mode_ == Mode::kDirect)
          std::memcpy(dp.get(), m.host.data(), n);
        else
          copy_bytes(dp.get(), m.host.data(), n, cudaMemcpyHostToDevice, *stream_);
      }
      c->set_data_ptr_noswap(std::move(dp));
      c->set_nbytes(n);
    } else if (mode_ == Mode::kCopy && m.written) {
      copy_bytes(c->mutable_data_ptr().get(), m.host.data(), m.host.nbytes(),
                 cudaMemcpyHostToDevice, *stream_);
    }
  }

  at::Tensor to_device_tensor(const at::Tensor& r) {
    if (!r.defined() || r.is_cuda() || r.layout() != c10::kStrided) return r;
    // A quantized result would need a quantized CUDA tensor, whose every operator (dequantize,
    // int_repr...) is NVIDIA code the bridge does not serve: refuse here, saying what works,
    // rather than hand back a tensor no operator accepts.
    TORCH_CHECK(!r.is_quantized(),
                "torchada: quantized CUDA tensors are not supported (the kernel bridge runs "
                "PyTorch's CPU kernels, and the quantized CUDA operators are NVIDIA code): "
                "quantize and run the quantized model on CPU tensors (.cpu()), or keep float "
                "tensors on the device");
    c10::TensorImpl* ri = r.unsafeGetTensorImpl();
    for (const auto& w : wrapped_)
      if (w.host.unsafeGetTensorImpl() == ri) return w.cuda;
    for (c10::TensorImpl* h : host_args_)
      if (h == ri) return r;
    if (cpu_device_arg_) return r;  // the operator was asked for a CPU result
    c10::StorageImpl* si = r.storage().unsafeGetStorageImpl();
    c10::Storage cuda;
    for (const auto& m : mirrors_)
      if (m->host.unsafeGetStorageImpl() == si) cuda = m->cuda;
    if (!cuda) {
      for (const auto& f : fresh_)
        if (f.first == si) cuda = f.second;
    }
    if (!cuda) {
      const size_t n = si->nbytes();
      // Direct mode: a result the CPU kernel allocated is CUDA memory already; take it.
      c10::DataPtr block;
      if (mode_ == Mode::kDirect) block = take_device_block(si, device_);
      if (block) {
        cuda = c10::Storage(c10::Storage::use_byte_size_t(), n, std::move(block),
                            c10::GetAllocator(c10::kCUDA), /*resizable=*/true);
      } else {
        g_copied_results.fetch_add(1, std::memory_order_relaxed);
        cuda = c10::Storage(c10::Storage::use_byte_size_t(), n, c10::GetAllocator(c10::kCUDA),
                            /*resizable=*/true);
        if (mode_ == Mode::kDirect)
          std::memcpy(cuda.mutable_data(), si->data(), n);
        else
          copy_bytes(cuda.mutable_data(), si->data(), n, cudaMemcpyHostToDevice, *stream_);
      }
      fresh_.emplace_back(si, cuda);
    }
    at::Tensor d = at::detail::make_tensor<c10::TensorImpl>(
        std::move(cuda), c10::DispatchKeySet(c10::DispatchKey::CUDA), r.dtype());
    c10::TensorImpl* di = d.unsafeGetTensorImpl();
    di->set_sizes_and_strides(r.sizes(), r.strides(), r.storage_offset());
    if (r.is_conj()) di->_set_conj(true);
    if (r.is_neg()) di->_set_neg(true);
    return d;
  }

  void to_device(c10::IValue& v) {
    map_tensors(v, [&](const at::Tensor& t) { return to_device_tensor(t); });
  }

  // TORCHADA_OPS_RNG=cpu: one CPU generator per CUDA generator, seeded from it, and made again
  // when the CUDA generator is seeded again (seen by its offset, which seeding resets to 0 and
  // this sets to 4, as follow_cuda_default_seed does): torch.Generator("cuda").manual_seed(s)
  // draws what torch.Generator().manual_seed(s) draws, every time it is seeded.
  static at::Generator host_generator(at::Generator g) {
    static std::mutex mu;
    static std::unordered_map<const c10::GeneratorImpl*, std::pair<at::Generator, at::Generator>>
        map;  // CUDA generator (kept alive) -> (CPU generator, the CUDA generator)
    std::lock_guard<std::mutex> lock(mu);
    uint64_t seed = 0;
    bool reseeded = false;
    {
      std::lock_guard<std::mutex> glock(g.mutex());
      seed = g.current_seed();
      reseeded = g.get_offset() == 0;
      if (reseeded) g.set_offset(4);
    }
    auto& e = map[g.unsafeGetGeneratorImpl()];
    if (!e.second.defined() || reseeded || e.first.current_seed() != seed) {
      e.first = at::make_generator<at::CPUGeneratorImpl>(seed);
      e.second = g;
    }
    return e.first;
  }

  // The device's random kernels installed: a bridged random operator draws from a fresh CPU
  // generator whose seed mixes the CUDA generator's seed and offset, and moves that offset on by
  // 4 (PyTorch's unit of philox offsets), so the CUDA generator's state alone decides every draw:
  // seeding, get_state/set_state, fork_rng and graph-safe states round-trip bridged draws as they
  // do the device's.
  static at::Generator drawn_from(at::Generator g) {
    refuse_host_generator(g);
    uint64_t seed = 0, offset = 0;
    {
      std::lock_guard<std::mutex> lock(g.mutex());
      seed = g.current_seed();
      offset = g.get_offset();
      g.set_offset(offset + kBridgedDrawIncrement);
    }
    return at::make_generator<at::CPUGeneratorImpl>(bridged_draw_seed(seed, offset));
  }
  // A CUDA operator takes a CUDA generator: PyTorch's CUDA kernels refuse any other with this
  // message (the CPU kernel the bridge runs would accept a CPU one).
  static void refuse_host_generator(const c10::IValue& v) {
    if (!v.isGenerator() || !v.toGenerator().defined()) return;
    const c10::Device d = v.toGenerator().device();
    TORCH_CHECK(d.is_cuda(), "Expected a 'cuda' device type for generator but found '", d.type(),
                "'");
  }

  // torch.cuda.manual_seed(s) alone re-seeds the CPU default generator, which bridged random
  // operators draw from. A re-seed of the CUDA default generator is seen by its philox offset:
  // seeding resets it to 0, and every observation here moves it to 4 (when no CUDA kernel uses
  // it: with the device's random kernels installed the offset is theirs and stays PyTorch's,
  // and their draws move it on from 0 anyway). Re-seeded to a seed the CPU generator does not
  // have: the CPU generator takes it. torch.manual_seed(s) seeds both alike: nothing to do (CPU
  // draws made since stay valid).
  void follow_cuda_default_seed() {
    at::Generator cg = at::globalContext().defaultGenerator(device_);
    uint64_t seed = 0;
    {
      std::lock_guard<std::mutex> lock(cg.mutex());
      if (cg.get_offset() != 0) return;
      seed = cg.current_seed();
      if (!device::random_kernels_installed()) cg.set_offset(4);
    }
    at::Generator cpu = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(cpu.mutex());
    if (cpu.current_seed() != seed) cpu.set_current_seed(seed);
  }

  Mode mode_;
  c10::Device device_{c10::kCUDA, -1};
  std::optional<c10::cuda::CUDAStream> stream_;
  std::vector<std::unique_ptr<Mirror>> mirrors_;
  std::vector<Wrapped> wrapped_;
  std::vector<c10::TensorImpl*> host_args_;
  std::vector<std::pair<const c10::StorageImpl*, c10::Storage>> fresh_;
  bool cpu_device_arg_ = false;
};

}  // namespace

void refuse_capture(const c10::FunctionSchema& schema, cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  TORCH_CHECK(capture == cudaStreamCaptureStatusNone, "torchada: ", schema.operator_name(),
              " runs through the kernel bridge (PyTorch's CPU kernel: its CUDA kernel is NVIDIA "
              "code), which cannot be captured into a CUDA graph; run it outside "
              "torch.cuda.graph / CUDAGraph capture (the capture is invalidated)");
}

std::optional<c10::Device> cuda_device_in(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.defined() && t.is_cuda()) return t.device();
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList())
      if (t.defined() && t.is_cuda()) return t.device();
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef())
      if (auto d = cuda_device_in(e)) return d;
  } else if (v.isDevice() && v.toDevice().is_cuda()) {
    const c10::Device d = v.toDevice();
    return d.has_index() ? d : c10::Device(c10::kCUDA, c10::cuda::current_device());
  }
  return std::nullopt;
}

uint64_t copied_results() { return g_copied_results.load(std::memory_order_relaxed); }
uint64_t moved_bytes() { return g_moved_bytes.load(std::memory_order_relaxed); }

void run_on_host(const c10::OperatorHandle& op, torch::jit::Stack* stack, Mode m) {
  HostCall(m).run(op, stack);
}

}  // namespace torchada::ops::bridge
