// Sparse CUDA tensors on the kernel bridge: the operators' SparseCUDA and SparseCsrCUDA kernels
// (coalesce, sparse matrix products, sparse sums, the sparse gradient of nn.Embedding...) launch
// NVIDIA device code, Thrust/CUB, or cuSPARSE. Each is overridden like a dense operator (try the
// original first, kernel.cpp); once refused, a call runs on the CPU's sparse kernels:
//   - every CUDA tensor argument (sparse or strided) is copied to the host (Tensor::to: a sparse
//     tensor's indices and values, or its compressed indices, are strided copies the shim serves);
//   - the operator is redispatched to SparseCPU / SparseCsrCPU (or CPU when no argument is
//     sparse), a CUDA device argument becoming the CPU;
//   - arguments the schema marks as written (in-place, out=) get the host result back (copy_,
//     which for sparse tensors replaces their indices and values), and are what the call returns
//     where a return aliases them; every other result is copied to the arguments' device.
// Copies are blocking on the current stream, so the call runs after the work queued before it
// and before the work queued after it. Sparse tensors are never captured by a CUDA graph here: a
// capture raises, as for dense bridged operators.
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <optional>
#include <utility>
#include <vector>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

class SparseHostCall {
 public:
  void run(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    const auto& schema = op.schema();
    const size_t nargs = schema.arguments().size();
    const size_t base = stack->size() - nargs;
    for (size_t i = 0; i < nargs; ++i) find_device((*stack)[base + i]);
    if (!device_) device_ = c10::Device(c10::kCUDA, c10::cuda::current_device());
    refuse_capture(schema, c10::cuda::getCurrentCUDAStream(device_->index()).stream());

    for (size_t i = 0; i < nargs; ++i) {
      const auto* alias = schema.arguments()[i].alias_info();
      const bool write = alias != nullptr && alias->isWrite();
      c10::IValue& v = (*stack)[base + i];
      if (write && v.isTensor() && v.toTensor().defined() && v.toTensor().is_cuda())
        written_.push_back({i, v.toTensor(), at::Tensor()});
      v = to_host(v);
      if (write && !written_.empty() && written_.back().arg == i)
        written_.back().host = v.toTensor();
    }

    op.redispatchBoxed(c10::DispatchKeySet(host_key_), stack);

    // Written arguments first (a return may alias one), then the results.
    for (Written& w : written_) copy_back(w);
    const size_t nret = schema.returns().size();
    for (size_t j = 0; j < nret; ++j) {
      c10::IValue& v = (*stack)[stack->size() - nret + j];
      const c10::AliasInfo* ret = schema.returns()[j].alias_info();
      if (ret == nullptr || !ret->isWrite()) {
        v = to_device(v);
      } else if (const Written* w = aliased_argument(schema, ret)) {
        v = w->cuda;
      }  // else a written host argument, returned as it is
    }
  }

 private:
  struct Written {
    size_t arg;
    at::Tensor cuda;
    at::Tensor host;
  };

  void find_device(const c10::IValue& v) {
    if (!device_) device_ = cuda_device_in(v);
  }

  at::Tensor host_tensor(const at::Tensor& t) {
    if (!t.defined()) return t;
    note_layout(t);
    if (!t.is_cuda()) return t;
    return t.to(c10::Device(c10::kCPU));
  }

  // The CPU key the call goes to: a sparse argument's, else the strided CPU kernel's. Every
  // compressed layout (CSR, CSC, BSR, BSC: a CSR weight's transpose in linear is CSC) is
  // SparseCsrCPU's.
  void note_layout(const at::Tensor& t) {
    const c10::Layout l = t.layout();
    if (l == c10::kSparse)
      host_key_ = c10::DispatchKey::SparseCPU;
    else if ((l == c10::kSparseCsr || l == c10::kSparseCsc || l == c10::kSparseBsr ||
              l == c10::kSparseBsc) &&
             host_key_ != c10::DispatchKey::SparseCPU)
      host_key_ = c10::DispatchKey::SparseCsrCPU;
  }

  // `v` with f applied to its tensors (in a Tensor[] or a Tensor?[]: a new list, never the
  // caller's).
  template <class F>
  static c10::IValue map_tensors(const c10::IValue& v, F f) {
    if (v.isTensor()) return f(v.toTensor());
    if (v.isTensorList()) {
      c10::List<at::Tensor> out;
      out.reserve(v.toTensorList().size());
      for (const at::Tensor& t : v.toTensorList()) out.push_back(f(t));
      return out;
    }
    if (v.isList()) {
      c10::impl::GenericList l = v.toList().copy();
      for (size_t i = 0; i < l.size(); ++i) {
        c10::IValue e = l.get(i);
        if (e.isTensor()) l.set(i, f(e.toTensor()));
      }
      return l;
    }
    return v;
  }

  c10::IValue to_host(const c10::IValue& v) {
    if (v.isDevice() && v.toDevice().is_cuda()) return c10::Device(c10::kCPU);
    return map_tensors(v, [this](const at::Tensor& t) { return host_tensor(t); });
  }

  at::Tensor device_tensor(const at::Tensor& t) const {
    if (!t.defined() || t.is_cuda()) return t;
    // The host copy of a written argument (a result aliasing it) is that argument.
    for (const Written& w : written_)
      if (w.host.defined() && w.host.is_same(t)) return w.cuda;
    return t.to(*device_);
  }

  c10::IValue to_device(const c10::IValue& v) const {
    return map_tensors(v, [this](const at::Tensor& t) { return device_tensor(t); });
  }

  // The host result of a written argument into its CUDA tensor: a sparse tensor takes the
  // result's indices and values (copy_ resizes it), a strided one its sizes and data.
  static void copy_back(Written& w) {
    if (!w.host.defined()) return;
    at::Tensor& c = w.cuda;
    if (c.layout() == c10::kStrided && !c.sizes().equals(w.host.sizes())) c.resize_(w.host.sizes());
    c.copy_(w.host);
  }

  const Written* aliased_argument(const c10::FunctionSchema& schema,
                                  const c10::AliasInfo* ret) const {
    for (const Written& w : written_) {
      const c10::AliasInfo* a = schema.arguments()[w.arg].alias_info();
      if (a != nullptr && a->beforeSets() == ret->beforeSets()) return &w;
    }
    return nullptr;
  }

  std::optional<c10::Device> device_;
  c10::DispatchKey host_key_ = c10::DispatchKey::CPU;
  std::vector<Written> written_;
};

}  // namespace

void run_sparse_on_host(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  SparseHostCall().run(op, stack);
}

}  // namespace torchada::ops::bridge
