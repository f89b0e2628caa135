// Bridged operators inside CUDA graph capture (torch.cuda.graph, make_graphed_callables,
// torch.compile's CUDA graphs): in direct mode, where device memory is host memory (the
// simulator), the call becomes a host node of the graph that runs PyTorch's CPU kernel on the
// captured addresses at every replay, as a kernel node would run its kernel.
//
// At capture, nothing runs: the outputs' sizes, strides and dtypes come from the operator's meta
// kernel and are allocated as CUDA tensors (from the capture's memory pool, as a CUDA kernel's
// outputs are); a host node is added to the capture, holding the arguments and the outputs (a
// user object the graph owns, released with the graph). At each replay, on the stream: CPU
// tensors over the same bytes (one CPU storage per CUDA storage, so aliasing stays visible), the
// CPU kernel, the fresh results copied into the captured outputs; in-place and out= arguments
// are written where they are. A host node may not call the runtime, and none of this does.
//
// Random operators draw new numbers at each replay, as PyTorch's CUDA kernels do in a graph: at
// capture the generator hands out a graph-safe philox state (the graph's seed and offset tensors,
// which every replay advances, and this call's offset within the graph), and at each replay the
// node reads them and draws from the CPU generator a bridged call outside a graph would use with
// that seed and offset (random_state.h). So torch.cuda.manual_seed before the replays makes them
// reproducible.
//
// Refused, naming the operator (refuse_capture), as every bridged call in a capture was before:
// copy mode (a MUSA GPU's memory is not host memory, and copying would need the runtime),
// operators whose output's shape needs the data (no meta answer: PyTorch's CUDA kernel would
// synchronise, which capture forbids too), results that are views of arguments or not tensors,
// and random operators under TORCHADA_OPS_RNG=cpu (their draws follow a CPU generator, which a
// graph's replays do not advance).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../device/device.h"
#include "bridge.h"
#include "ivalue_tensors.h"
#include "random_state.h"

namespace torchada::ops::bridge {
namespace {

void noop_delete(void*) {}

// CPU views of CUDA tensors over the same bytes, owning nothing: one CPU storage per CUDA storage.
class HostViews {
 public:
  at::Tensor of(const at::Tensor& t) {
    if (!t.defined() || !t.is_cuda()) return t;
    c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
    auto it = storages_.find(impl);
    if (it == storages_.end()) {
      void* p = impl->mutable_data_ptr().get();
      c10::Storage host(c10::Storage::use_byte_size_t(), impl->nbytes(),
                        c10::DataPtr(p, p, &noop_delete, c10::Device(c10::kCPU)),
                        /*allocator=*/nullptr, /*resizable=*/false);
      it = storages_.emplace(impl, std::move(host)).first;
    }
    at::Tensor h = at::empty({0}, t.options().device(c10::kCPU));
    h.set_(it->second, t.storage_offset(), t.sizes(), t.strides());
    return h;
  }

 private:
  std::unordered_map<c10::StorageImpl*, c10::Storage> storages_;
};

// What a replay needs, as a kernel node holds its arguments: addresses, not references. The
// arguments and outputs are CPU tensors over the CUDA tensors' bytes (made at capture, owning
// nothing: the graph's memory pool keeps the bytes, and PyTorch's CUDA-graph trees check that
// nothing else holds its allocations); per return, the argument it is (in-place, out=) or the
// output the fresh result is copied into.
struct Node {
  explicit Node(const c10::OperatorHandle& o) : op(o) {}
  c10::OperatorHandle op;
  std::vector<c10::IValue> args;
  struct Return {
    int arg = -1;    // the written argument returned, or -1
    at::Tensor out;  // the captured output's bytes (arg == -1)
  };
  std::vector<Return> returns;
  // A random operator: its generator argument, and the graph-safe philox state it draws from.
  int generator_arg = -1;
  at::PhiloxCudaState philox;
};

void CUDART_CB replay(void* data) {
  Node& n = *static_cast<Node*>(data);
  try {
    torch::jit::Stack stack(n.args.begin(), n.args.end());
    if (n.generator_arg >= 0) {
      // The graph's seed and offset for this replay (written by the replay's prologue, on this
      // stream, before the graph's work; device memory is host memory here).
      const at::PhiloxCudaState& p = n.philox;
      const uint64_t seed = p.captured_ ? static_cast<uint64_t>(*p.seed_.ptr) : p.seed_.val;
      const uint64_t offset = p.captured_
                                  ? static_cast<uint64_t>(*p.offset_.ptr) + p.offset_intragraph_
                                  : p.offset_.val;
      stack[static_cast<size_t>(n.generator_arg)] =
          at::make_generator<at::CPUGeneratorImpl>(bridged_draw_seed(seed, offset));
    }
    n.op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &stack);
    TORCH_CHECK(stack.size() == n.returns.size(), "returned ", stack.size(), " values, not ",
                n.returns.size());
    for (size_t i = 0; i < n.returns.size(); ++i) {
      if (n.returns[i].arg >= 0) continue;  // written in place
      const at::Tensor r = stack[i].toTensor();
      TORCH_CHECK(r.sizes() == n.returns[i].out.sizes(), "result ", i, " has sizes ", r.sizes(),
                  " at replay, ", n.returns[i].out.sizes(), " at capture");
      n.returns[i].out.copy_(r);
    }
  } catch (const std::exception& e) {
    // A host node has no way to report an error but to say it.
    std::fprintf(stderr, "torchada: %s failed in a CUDA graph replay (the kernel bridge): %s\n",
                 c10::toString(n.op.schema().operator_name()).c_str(), e.what());
  }
}

void destroy(void* data) { delete static_cast<Node*>(data); }

// The index of a random operator's generator argument, or -1.
int generator_argument(const c10::FunctionSchema& schema) {
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& t = args[i].type();
    if (t->kind() == c10::TypeKind::GeneratorType ||
        (t->kind() == c10::TypeKind::OptionalType &&
         t->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType))
      return static_cast<int>(i);
  }
  return -1;
}

[[noreturn]] void refuse(const c10::FunctionSchema& schema, const char* why) {
  TORCH_CHECK(false, "torchada: ", schema.operator_name(),
              " runs through the kernel bridge (PyTorch's CPU kernel: its CUDA kernel is NVIDIA "
              "code), which cannot be captured into a CUDA graph for ",
              why,
              "; run it outside torch.cuda.graph / CUDAGraph capture (the capture is "
              "invalidated)");
}

}  // namespace

bool run_captured_on_host(const c10::OperatorHandle& op, torch::jit::Stack* stack, Mode m) {
  const auto& schema = op.schema();
  const size_t nargs = schema.arguments().size();
  const size_t base = stack->size() - nargs;
  std::optional<c10::Device> device;
  for (size_t i = base; i < stack->size() && !device; ++i) device = cuda_device_in((*stack)[i]);
  if (!device) return false;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device->index()).stream();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  if (status == cudaStreamCaptureStatusNone) return false;
  if (m != Mode::kDirect) refuse(schema, "a device whose memory is not host memory (copy mode)");
  const int generator_arg = generator_argument(schema);
  if (generator_arg >= 0 && !device::random_kernels_installed())
    refuse(schema,
           "a random operator under TORCHADA_OPS_RNG=cpu (its draws follow a CPU generator, "
           "which a graph's replays do not advance)");

  // The returns: a written argument (same alias set) or a fresh tensor.
  auto node = std::make_unique<Node>(op);
  for (const auto& r : schema.returns()) {
    Node::Return ret;
    if (const auto* alias = r.alias_info()) {
      if (!alias->isWrite()) refuse(schema, "a result that is a view of an argument");
      for (size_t i = 0; i < nargs; ++i) {
        const auto* a = schema.arguments()[i].alias_info();
        if (a != nullptr && a->isWrite() && a->beforeSets() == alias->beforeSets())
          ret.arg = static_cast<int>(i);
      }
      if (ret.arg < 0) refuse(schema, "a written result that is no argument");
    } else if (r.type()->kind() != c10::TypeKind::TensorType) {
      refuse(schema, "a result that is not a tensor");
    }
    node->returns.push_back(std::move(ret));
  }

  // The fresh outputs, shaped by the meta kernel.
  HostViews views;
  std::vector<at::Tensor> outs;  // the CUDA outputs, in the order of the fresh returns
  bool fresh = false;
  for (const Node::Return& r : node->returns) fresh = fresh || r.arg < 0;
  torch::jit::Stack meta;
  if (fresh) {
    meta.assign(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
    for (c10::IValue& v : meta)
      map_tensors(v, [](const at::Tensor& t) {
        if (!t.defined() || t.is_cpu()) return t;
        return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
      });
    try {
      op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &meta);
    } catch (const std::exception&) {
      refuse(schema, "an output whose shape needs the data");
    }
  }
  for (size_t i = 0; i < node->returns.size(); ++i) {
    if (node->returns[i].arg >= 0) continue;
    const at::Tensor r = meta[i].toTensor();
    outs.emplace_back(at::empty_strided(r.sizes(), r.strides(), r.options().device(*device)));
    node->returns[i].out = views.of(outs.back());
  }

  // A random operator: the graph-safe philox state of its CUDA generator (the argument, or the
  // device's default), taken as PyTorch's CUDA kernels take it.
  if (generator_arg >= 0) {
    const c10::IValue& v = (*stack)[base + static_cast<size_t>(generator_arg)];
    at::Generator g = v.isGenerator() && v.toGenerator().defined()
                          ? v.toGenerator()
                          : at::globalContext().defaultGenerator(*device);
    TORCH_CHECK(g.device().is_cuda(), "Expected a 'cuda' device type for generator but found '",
                g.device().type(), "'");
    auto* impl = at::check_generator<at::CUDAGeneratorImpl>(g);
    std::lock_guard<std::mutex> lock(g.mutex());
    node->philox = impl->philox_cuda_state(kBridgedDrawIncrement);
    node->generator_arg = generator_arg;
  }

  // The host node, and the graph's ownership of it.
  const std::vector<c10::IValue> args(stack->begin() + static_cast<std::ptrdiff_t>(base),
                                      stack->end());
  for (c10::IValue v : args) {
    map_tensors(v, [&](const at::Tensor& t) { return views.of(t); });
    node->args.push_back(std::move(v));
  }
  cudaGraph_t graph = nullptr;
  unsigned long long id = 0;
#if CUDART_VERSION >= 13000
  C10_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, &id, &graph));
#else
  C10_CUDA_CHECK(cudaStreamGetCaptureInfo_v2(stream, &status, &id, &graph));
#endif
  cudaUserObject_t owner = nullptr;
  Node* raw = node.get();
  C10_CUDA_CHECK(cudaUserObjectCreate(&owner, raw, destroy, 1, cudaUserObjectNoDestructorSync));
  node.release();  // the user object deletes it
  C10_CUDA_CHECK(cudaGraphRetainUserObject(graph, owner, 1, cudaGraphUserObjectMove));
  C10_CUDA_CHECK(cudaLaunchHostFunc(stream, replay, raw));

  stack->resize(base);
  size_t next_out = 0;
  for (const Node::Return& r : raw->returns)
    stack->push_back(r.arg >= 0 ? args[static_cast<size_t>(r.arg)] : c10::IValue(outs[next_out++]));
  return true;
}

}  // namespace torchada::ops::bridge
