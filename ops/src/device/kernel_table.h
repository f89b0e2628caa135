// What the device kernels' host sides share: element types and compute types of ATen's dtypes,
// and the boxed kernel made from an unboxed function with its inferred schema.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/op_registration/infer_schema.h>

#include <optional>
#include <type_traits>

#include "../../kernels/elementwise.h"
#include "device.h"

namespace torchada::ops::device {

using elementwise::Kind;

inline std::optional<Kind> kind_of(at::ScalarType t) {
  switch (t) {
    case at::kBool:
      return Kind::kBool;
    case at::kByte:
      return Kind::kUInt8;
    case at::kChar:
      return Kind::kInt8;
    case at::kShort:
      return Kind::kInt16;
    case at::kInt:
      return Kind::kInt32;
    case at::kLong:
      return Kind::kInt64;
    case at::kHalf:
      return Kind::kFloat16;
    case at::kBFloat16:
      return Kind::kBFloat16;
    case at::kFloat:
      return Kind::kFloat32;
    case at::kDouble:
      return Kind::kFloat64;
    default:
      return std::nullopt;  // complex, unsigned 16-64, float8, quantized: not served
  }
}

inline std::optional<elementwise::Compute> compute_of(at::ScalarType t) {
  switch (t) {
    case at::kHalf:
    case at::kBFloat16:
    case at::kFloat:
      return elementwise::Compute::kFloat;
    case at::kDouble:
      return elementwise::Compute::kDouble;
    case at::kBool:
    case at::kByte:
    case at::kChar:
    case at::kShort:
    case at::kInt:
    case at::kLong:
      return elementwise::Compute::kInt64;
    default:
      return std::nullopt;
  }
}

// Softmax (log: log-softmax) along the last dimension of contiguous `in` into contiguous `out`
// (kernels/softmax.cu), of `in * scale`; causal_rows > 0: the attention's causal mask over
// matrices of that many rows; lse: each row's log-sum-exp (float, contiguous) when defined.
void softmax_rows(const at::Tensor& in, const at::Tensor& out, bool log, double scale = 1,
                  int64_t causal_rows = 0, const at::Tensor& lse = {});
// Its backward: grad_input from contiguous grad and output of one dtype.
void softmax_rows_backward(const at::Tensor& grad, const at::Tensor& output,
                           const at::Tensor& grad_input, bool log);

// ---- what every host side of a kernel needs --------------------------------------------------

// The current stream of t's device, as a launcher takes it.
void* current_stream(const at::Tensor& t);

// A launcher's answer: nullptr, or its error as PyTorch's error.
inline void check_launch(const char* what, const char* err) {
  TORCH_CHECK(err == nullptr, "torchada device kernel (", what, "): ", err);
}

// A strided CUDA tensor of a floating dtype the kernels compute (float, double, half, bfloat16).
inline bool floating_cuda(const at::Tensor& t) {
  return t.defined() && t.is_cuda() && t.layout() == at::kStrided &&
         (t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble ||
          t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
}

// PyTorch's accumulation type on CUDA: float for half and bfloat16, the type itself otherwise.
inline at::ScalarType accumulation(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}

// The kernels' compute type of a floating dtype: double for double, float otherwise.
inline elementwise::Compute floating_compute(at::ScalarType t) {
  return t == at::kDouble ? elementwise::Compute::kDouble : elementwise::Compute::kFloat;
}

// An optional tensor argument that is there and defined, or nullptr.
inline const at::Tensor* present(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? &*t : nullptr;
}

// A tensor's data for a launcher (nullptr for an undefined tensor).
inline char* data(const at::Tensor& t) {
  return t.defined() ? static_cast<char*>(t.data_ptr()) : nullptr;
}

// The device kernel of `op` from an unboxed function whose signature is the schema's.
template <auto F>
Kernel kernel(const char* op) {
  using Fn = std::remove_pointer_t<decltype(F)>;
  return {op,
          c10::KernelFunction::makeFromUnboxedFunction(c10::CompileTimeFunctionPointer<Fn, F>()),
          [] { return c10::inferFunctionSchemaFlattenedReturns<Fn>(); }};
}

}  // namespace torchada::ops::device
