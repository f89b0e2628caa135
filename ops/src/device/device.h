// Device kernels for PyTorch's operators (ops/kernels/, portable CUDA C++): what serves a
// training step's operators on the device instead of the kernel bridge's CPU path.
//
//   elementwise.cpp   the elementwise engine: PyTorch's own meta functions (the TensorIterator
//                     each CUDA operator builds) feeding kernels/elementwise.cu
//   reduce.cpp        the reduction engine: PyTorch's reduction iterators feeding
//                     kernels/reduce.cu
//   composite.cpp     operators composed of those kernels on the device: softmax, the _foreach_
//                     arithmetic
//   indexing.cpp      arange, gather / index_select, the embedding's gradient, the NLL loss, cat
//                     (kernels/indexing.cu)
//   training.cpp      layer norm and the fused Adam / AdamW step (kernels/layer_norm.cu, adam.cu)
//   attention.cpp     the overrideable fused-attention pair sdpa.cpp routes attention to
//   vision.cpp        convolution (im2col + GEMM), max pooling, batch norm (kernels/vision.cu)
//   random.cpp        uniform_, normal_, bernoulli_, exponential_, random_, dropout from the
//                     CUDA generator's Philox state (kernels/random.cu)
//   registry.cpp      which operators, checked against this PyTorch's schemas; availability
//
// The bridge (src/bridge/kernel.cpp) calls an operator's device kernel first; a kernel that does
// not serve a call (a dtype or layout it has no code for) throws NotServed before touching any
// data, and the call takes the bridge's usual path. Errors of the caller's making (shapes, dtypes,
// devices) are PyTorch's own errors, raised by the same checks PyTorch's CUDA operator makes.
#pragma once

#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/function_schema.h>

#include <exception>
#include <string>
#include <vector>

namespace torchada::ops::device {

struct NotServed final : std::exception {
  const char* what() const noexcept override { return "not served by a device kernel"; }
};

struct Kernel {
  std::string op;  // "aten::add.Tensor"
  c10::KernelFunction fn;
  // The C++ signature's, compared with the operator's; nullptr for a boxed kernel, which takes
  // any signature.
  c10::FunctionSchema (*schema)();
};

// Every operator the device kernels serve, by file.
std::vector<Kernel> elementwise_kernels();
std::vector<Kernel> reduce_kernels();
std::vector<Kernel> composite_kernels();
std::vector<Kernel> indexing_kernels();
std::vector<Kernel> training_kernels();
std::vector<Kernel> attention_kernels();
std::vector<Kernel> vision_kernels();
// The operators that draw random numbers (left to the bridge under TORCHADA_OPS_RNG=cpu).
std::vector<Kernel> random_kernels();
// Every _foreach_ operator of this PyTorch that has no kernel of its own above (composite.cpp).
std::vector<Kernel> foreach_kernels();

// Whether device kernels can serve this process: the simulator's executor runs their host build
// (backend "sim"), or a MUSA build of them runs on the GPU (backend "musa", built with mcc).
// TORCHADA_OPS_KERNELS=off turns them off (everything on the bridge, for comparison). Sets what
// host_kernels_active() answers.
bool enabled_for(const char* backend);

// The kernels to install, each checked against the dispatcher's schema for its operator (a
// mismatch is logged and skipped, never called).
std::vector<Kernel> kernels_for_install();

// Whether kernels_for_install() handed out the random operators (TORCHADA_OPS_RNG is not cpu):
// the CUDA generators' Philox offsets are then theirs, advanced as PyTorch's kernels advance
// them, and the bridge leaves them alone.
bool random_kernels_installed();

}  // namespace torchada::ops::device
