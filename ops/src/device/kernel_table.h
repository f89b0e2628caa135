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

// The device kernel of `op` from an unboxed function whose signature is the schema's.
template <auto F>
Kernel kernel(const char* op) {
  using Fn = std::remove_pointer_t<decltype(F)>;
  return {op,
          c10::KernelFunction::makeFromUnboxedFunction(c10::CompileTimeFunctionPointer<Fn, F>()),
          [] { return c10::inferFunctionSchemaFlattenedReturns<Fn>(); }};
}

}  // namespace torchada::ops::device
