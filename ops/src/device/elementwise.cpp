// The elementwise engine's host side. A structured operator runs PyTorch's own meta function
// (at::meta::structured_<op>, the TensorIterator its CUDA kernel builds: argument checks, type
// promotion, broadcasting, memory-overlap checks, the output's allocation, dimension
// coalescing) in a subclass that allocates or checks the output the way PyTorch's generated
// CUDA wrappers do, then launches kernels/elementwise.cu once over the iterator's operands.
// Operators that are not structured build their iterator as their CUDA implementation does.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorIterator.h>
#include <ATen/core/op_registration/infer_schema.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/add_meta.h>
#include <ATen/ops/addcdiv_meta.h>
#include <ATen/ops/addcmul_meta.h>
#include <ATen/ops/atan2_meta.h>
#include <ATen/ops/bitwise_and_meta.h>
#include <ATen/ops/bitwise_not_meta.h>
#include <ATen/ops/bitwise_or_meta.h>
#include <ATen/ops/bitwise_xor_meta.h>
#include <ATen/ops/ceil_meta.h>
#include <ATen/ops/clamp_max_meta.h>
#include <ATen/ops/clamp_meta.h>
#include <ATen/ops/clamp_min_meta.h>
#include <ATen/ops/cos_meta.h>
#include <ATen/ops/div_meta.h>
#include <ATen/ops/elu_meta.h>
#include <ATen/ops/eq_meta.h>
#include <ATen/ops/erf_meta.h>
#include <ATen/ops/exp2_meta.h>
#include <ATen/ops/exp_meta.h>
#include <ATen/ops/expm1_meta.h>
#include <ATen/ops/floor_meta.h>
#include <ATen/ops/fmod_meta.h>
#include <ATen/ops/ge_meta.h>
#include <ATen/ops/gelu_backward_meta.h>
#include <ATen/ops/gelu_meta.h>
#include <ATen/ops/gt_meta.h>
#include <ATen/ops/hardsigmoid_backward_meta.h>
#include <ATen/ops/hardsigmoid_meta.h>
#include <ATen/ops/le_meta.h>
#include <ATen/ops/leaky_relu_backward_meta.h>
#include <ATen/ops/leaky_relu_meta.h>
#include <ATen/ops/lerp_meta.h>
#include <ATen/ops/log1p_meta.h>
#include <ATen/ops/log2_meta.h>
#include <ATen/ops/log_meta.h>
#include <ATen/ops/lt_meta.h>
#include <ATen/ops/maximum_meta.h>
#include <ATen/ops/minimum_meta.h>
#include <ATen/ops/mish_meta.h>
#include <ATen/ops/mul_meta.h>
#include <ATen/ops/ne_meta.h>
#include <ATen/ops/neg_meta.h>
#include <ATen/ops/pow_meta.h>
#include <ATen/ops/reciprocal_meta.h>
#include <ATen/ops/remainder_meta.h>
#include <ATen/ops/round_meta.h>
#include <ATen/ops/rsqrt_meta.h>
#include <ATen/ops/sigmoid_backward_meta.h>
#include <ATen/ops/sigmoid_meta.h>
#include <ATen/ops/sign_meta.h>
#include <ATen/ops/silu_backward_meta.h>
#include <ATen/ops/silu_meta.h>
#include <ATen/ops/sin_meta.h>
#include <ATen/ops/softplus_backward_meta.h>
#include <ATen/ops/softplus_meta.h>
#include <ATen/ops/sqrt_meta.h>
#include <ATen/ops/sub_meta.h>
#include <ATen/ops/tanh_backward_meta.h>
#include <ATen/ops/tanh_meta.h>
#include <ATen/ops/threshold_backward_meta.h>
#include <ATen/ops/threshold_meta.h>
#include <ATen/ops/trunc_meta.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <limits>
#include <optional>
#include <string_view>

#include "../device_kernels.h"
#include "device.h"
#include "kernel_table.h"

namespace torchada::ops::device {
namespace {

using elementwise::Args;
using elementwise::Compute;
using elementwise::Op;

// An operator's constants (alpha, bounds, slopes...), in the double and exact integer forms the
// kernel picks from by compute type.
struct Constants {
  double c[Args::kMaxConstants] = {};
  int64_t ic[Args::kMaxConstants] = {};
};

void set(Constants& k, int i, const at::Scalar& s) {
  if (s.isComplex()) throw NotServed();
  k.c[i] = s.toDouble();
  k.ic[i] = s.isFloatingPoint() ? static_cast<int64_t>(s.toDouble()) : s.toLong();
}
void set(Constants& k, int i, double v) {
  k.c[i] = v;
  k.ic[i] = static_cast<int64_t>(v);
}
template <class... S>
Constants constants(const S&... s) {
  Constants k;
  int i = 0;
  (set(k, i++, s), ...);
  return k;
}

// Runs `op` over `it`'s operands, computed in the type for `dtype`. NotServed before any work
// when the kernel has no code for the operands.
void launch(at::TensorIteratorBase& it, Op op, at::ScalarType dtype, const Constants& k = {}) {
  const auto compute = compute_of(dtype);
  if (!compute || !elementwise::supports(op, *compute)) throw NotServed();
  if (it.noutputs() != 1 || it.ntensors() > Args::kMaxOperands || it.ndim() > Args::kMaxDims)
    throw NotServed();
  Args a;
  a.noperands = it.ntensors();
  a.ndim = static_cast<int>(it.ndim());
  a.numel = it.numel();
  const at::IntArrayRef shape = it.shape();
  for (int d = 0; d < a.ndim; ++d) a.sizes[d] = shape[d];
  bool contiguous = a.ndim <= 1;
  std::optional<at::Device> device;
  for (int i = 0; i < a.noperands; ++i) {
    const auto kind = kind_of(it.dtype(i));
    if (!kind) throw NotServed();
    a.kind[i] = *kind;
    if (i >= it.noutputs() && it.is_cpu_scalar(i)) {
      a.is_value[i] = true;
      if (*compute == Compute::kInt64) {
        a.ivalue[i] = it.scalar_value<int64_t>(i);
      } else {
        // A reduced-precision common type would round the scalar (1e5 overflows half): read it
        // as the caller gave it, as PyTorch's CUDA loops do.
        const auto common = it.maybe_common_dtype();
        a.value[i] = common && (*common == at::kHalf || *common == at::kBFloat16)
                         ? it.original_scalar_value<double>(i)
                         : it.scalar_value<double>(i);
      }
      continue;
    }
    if (!it.device(i).is_cuda() || it.tensor_base(i).is_neg() || it.tensor_base(i).is_conj())
      throw NotServed();
    device = it.device(i);
    a.data[i] = static_cast<char*>(it.data_ptr(i));
    const at::IntArrayRef strides = it.strides(i);
    for (int d = 0; d < a.ndim; ++d) a.strides[i][d] = strides[d];
    if (a.ndim == 1 && strides[0] != static_cast<int64_t>(it.element_size(i))) contiguous = false;
  }
  a.contiguous = contiguous;
  for (int i = 0; i < Args::kMaxConstants; ++i) a.c[i] = k.c[i], a.ic[i] = k.ic[i];
  if (a.numel == 0) return;
  if (!device) throw NotServed();
  c10::DeviceGuard guard(*device);
  void* stream = c10::cuda::getCurrentCUDAStream(device->index()).stream();
  check_launch("elementwise", TORCHADA_KERNEL(elementwise_launch)(op, *compute, a, stream));
}

// Only real dtypes reach a meta function of ours: anything else takes the bridge's path before
// any output is touched.
void require_served(const at::Tensor& t) {
  if (t.defined() && (!kind_of(t.scalar_type()) || t.layout() != at::kStrided)) throw NotServed();
}
template <class T>
void require_served(const T&) {}

// ---- structured operators: the output, as PyTorch's generated CUDA wrappers make it ---------

template <class Meta>
struct Functional final : Meta {
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) override {
    out = strides.empty() ? at::empty(sizes, options) : at::empty_strided(sizes, strides, options);
    Meta::set_output_raw_strided(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t) override { return out; }
  at::Tensor out;
};

template <class Meta>
struct Inplace final : Meta {
  explicit Inplace(const at::Tensor& self) : self(self) {}
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) override {
    TORCH_CHECK(options.dtype() == self.dtype(), "Bad in-place call: input tensor dtype ",
                self.dtype(), " and output tensor dtype ", options.dtype(), " should match");
    TORCH_CHECK(options.device() == self.device(), "Bad in-place call: input tensor device ",
                self.device(), " and output tensor device ", options.device(), " should match");
    TORCH_CHECK(sizes == self.sizes(), "Bad in-place call: input tensor size ", self.sizes(),
                " and output tensor size ", sizes, " should match");
    Meta::set_output_raw_strided(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t) override { return self; }
  const at::Tensor& self;
};

template <class Meta>
struct Out final : Meta {
  explicit Out(const at::Tensor& out) : out(out) {}
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) override {
    TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ",
                options.dtype(), ", but got ", out.dtype(), " instead");
    TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ",
                options.device(), ", but got ", out.device(), " instead");
    if (at::native::resize_output(out, sizes)) {
      if (!strides.empty())
        out.as_strided_(sizes, strides);
      else if (options.memory_format_opt())
        out.unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
    }
    Meta::set_output_raw_strided(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t) override { return out; }
  const at::Tensor& out;
};

// The schema's optional Scalar is the meta function's OptionalScalarRef.
template <class T>
const T& for_meta(const T& v) {
  return v;
}
inline at::OptionalScalarRef for_meta(const std::optional<at::Scalar>& s) {
  return s ? at::OptionalScalarRef(&*s) : at::OptionalScalarRef();
}

// An operator of `Meta` whose first argument is a tensor; `Run::call(it, first, rest...)`
// launches its kernel.
template <class Meta, class Run, class... Rest>
struct Structured {
  static at::Tensor functional(const at::Tensor& first, Rest... rest) {
    require_served(first);
    (require_served(rest), ...);
    c10::OptionalDeviceGuard guard(at::device_of(first));
    Functional<Meta> it;
    it.meta(first, for_meta(rest)...);
    Run::call(it, first, rest...);
    return std::move(it.out);
  }
  static at::Tensor& inplace(at::Tensor& self, Rest... rest) {
    require_served(self);
    (require_served(rest), ...);
    c10::OptionalDeviceGuard guard(at::device_of(self));
    Inplace<Meta> it(self);
    it.meta(self, for_meta(rest)...);
    Run::call(it, self, rest...);
    return self;
  }
  static at::Tensor& out(const at::Tensor& first, Rest... rest, at::Tensor& out) {
    require_served(first);
    (require_served(rest), ...);
    require_served(out);
    c10::OptionalDeviceGuard guard(at::device_of(first));
    Out<Meta> it(out);
    it.meta(first, for_meta(rest)...);
    Run::call(it, first, rest...);
    return out;
  }
};

// ---- what each operator launches ----------------------------------------------------------

template <Op O>
struct Plain {
  template <class... A>
  static void call(at::TensorIteratorBase& it, const A&...) {
    launch(it, O, it.common_dtype());
  }
};

struct AddRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Tensor&,
                   const at::Scalar& alpha) {
    launch(it, Op::kAdd, it.common_dtype(), constants(alpha));
  }
};
struct SubRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Tensor&,
                   const at::Scalar& alpha) {
    launch(it, Op::kAdd, it.common_dtype(), constants(-alpha));
  }
};
struct DivModeRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Tensor&,
                   std::optional<c10::string_view> mode) {
    if (!mode)
      launch(it, Op::kDiv, it.common_dtype());
    else if (*mode == "trunc")
      launch(it, Op::kDivTrunc, it.common_dtype());
    else
      launch(it, Op::kDivFloor, it.common_dtype());  // the meta function refused other modes
  }
};
struct GeluRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, c10::string_view approximate) {
    launch(it, approximate == "tanh" ? Op::kGeluTanh : Op::kGelu, it.common_dtype());
  }
};
struct GeluBackwardRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Tensor&,
                   c10::string_view approximate) {
    launch(it, approximate == "tanh" ? Op::kGeluTanhBackward : Op::kGeluBackward,
           it.common_dtype());
  }
};
struct ThresholdRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Scalar& threshold,
                   const at::Scalar& value) {
    launch(it, Op::kThreshold, it.common_dtype(), constants(threshold, value));
  }
};
struct ThresholdBackwardRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Tensor&,
                   const at::Scalar& threshold) {
    launch(it, Op::kThreshold, it.common_dtype(), constants(threshold, 0.0));
  }
};
struct ClampRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&,
                   const std::optional<at::Scalar>& min, const std::optional<at::Scalar>& max) {
    Constants k;
    set(k, 0, -std::numeric_limits<double>::infinity());
    set(k, 1, std::numeric_limits<double>::infinity());
    k.ic[0] = std::numeric_limits<int64_t>::min();
    k.ic[1] = std::numeric_limits<int64_t>::max();
    if (min) set(k, 0, *min);
    if (max) set(k, 1, *max);
    launch(it, Op::kClamp, it.common_dtype(), k);
  }
};
struct ClampMinRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Scalar& min) {
    ClampRun::call(it, {}, min, std::nullopt);
  }
};
struct ClampMaxRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Scalar& max) {
    ClampRun::call(it, {}, std::nullopt, max);
  }
};
struct PowScalarRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Scalar& exponent) {
    launch(it, Op::kPowScalar, it.common_dtype(), constants(exponent));
  }
};
struct LerpScalarRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Tensor&,
                   const at::Scalar& weight) {
    launch(it, Op::kLerpScalar, it.common_dtype(), constants(weight));
  }
};
template <Op O>
struct ValueRun {  // addcmul, addcdiv: (self, tensor1, tensor2, value)
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Tensor&,
                   const at::Tensor&, const at::Scalar& value) {
    launch(it, O, it.common_dtype(), constants(value));
  }
};
struct BitwiseNotRun {  // bool's bitwise not is logical
  static void call(at::TensorIteratorBase& it, const at::Tensor&) {
    launch(it, it.common_dtype() == at::kBool ? Op::kLogicalNot : Op::kBitwiseNot,
           it.common_dtype());
  }
};
struct SoftplusRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Scalar& beta,
                   const at::Scalar& threshold) {
    launch(it, Op::kSoftplus, it.common_dtype(), constants(beta, threshold));
  }
};
struct SoftplusBackwardRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Tensor&,
                   const at::Scalar& beta, const at::Scalar& threshold) {
    launch(it, Op::kSoftplusBackward, it.common_dtype(), constants(beta, threshold));
  }
};
struct EluRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Scalar& alpha,
                   const at::Scalar& scale, const at::Scalar& input_scale) {
    launch(it, Op::kElu, it.common_dtype(), constants(alpha, scale, input_scale));
  }
};
struct LeakyReluRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Scalar& slope) {
    launch(it, Op::kLeakyRelu, it.common_dtype(), constants(slope));
  }
};
struct LeakyReluBackwardRun {
  static void call(at::TensorIteratorBase& it, const at::Tensor&, const at::Tensor&,
                   const at::Scalar& slope, bool) {
    launch(it, Op::kLeakyReluBackward, it.common_dtype(), constants(slope));
  }
};

// ---- operators that are not structured -----------------------------------------------------

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  require_served(self);
  if (value.isComplex()) throw NotServed();
  // The value must fit the tensor's type (PyTorch's own conversion raises on overflow).
  switch (self.scalar_type()) {
#define TORCHADA_FILL_CHECK(type, name) \
  case at::ScalarType::name:            \
    (void)value.to<type>();             \
    break;
    AT_FORALL_SCALAR_TYPES_AND3(Bool, Half, BFloat16, TORCHADA_FILL_CHECK)
#undef TORCHADA_FILL_CHECK
    default:
      throw NotServed();
  }
  c10::OptionalDeviceGuard guard(at::device_of(self));
  auto it = at::TensorIteratorConfig()
                .set_check_mem_overlap(false)
                .check_all_same_dtype(false)
                .add_output(self)
                .resize_outputs(false)
                .build();
  launch(it, Op::kFill, self.scalar_type(), constants(value));
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  require_served(value);
  return fill_scalar(self, value.item());
}

at::Tensor& zero(at::Tensor& self) { return fill_scalar(self, 0); }

// copy_ between CUDA tensors of one device that PyTorch would do with a kernel: a conversion
// or a strided copy. A plain memcpy (same dtype, both dense alike) and every copy across devices
// stay PyTorch's (cudaMemcpy through the shim).
at::Tensor& copy(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  (void)non_blocking;
  require_served(self);
  require_served(src);
  if (!self.is_cuda() || !src.is_cuda() || self.device() != src.device()) throw NotServed();
  if (self.is_neg() || self.is_conj() || src.is_neg() || src.is_conj()) throw NotServed();
  if (self.numel() == 0 || self.is_same(src)) throw NotServed();
  if (self.scalar_type() == src.scalar_type() && self.is_non_overlapping_and_dense() &&
      src.is_non_overlapping_and_dense() && self.strides() == src.strides() &&
      self.sizes() == src.sizes())
    throw NotServed();  // memcpy
  c10::OptionalDeviceGuard guard(at::device_of(self));
  auto it = at::TensorIteratorConfig()
                .add_output(self)
                .add_const_input(src)
                .resize_outputs(false)
                .check_all_same_dtype(false)
                .check_all_same_device(false)
                .build();
  const bool floating =
      at::isFloatingType(self.scalar_type()) || at::isFloatingType(src.scalar_type());
  const bool wide = self.scalar_type() == at::kDouble || src.scalar_type() == at::kDouble;
  launch(it, Op::kCopy, floating ? (wide ? at::kDouble : at::kFloat) : at::kLong);
  return self;
}

at::Tensor& where_out(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other,
                      at::Tensor& out) {
  require_served(condition);
  require_served(self);
  require_served(other);
  require_served(out);
  const at::ScalarType type = at::result_type(self, other);
  TORCH_CHECK(out.scalar_type() == type, "Expected out type to be ", type, " but got ",
              out.scalar_type());
  at::Tensor a = self.scalar_type() != type ? self.to(type) : self;
  at::Tensor b = other.scalar_type() != type ? other.to(type) : other;
  at::Tensor c = condition;
  const at::Device device = out.device();
  // CPU scalars (0-dimensional) go along with the others' device.
  if (c.device() != device && c.dim() == 0) c = c.to(device);
  if (a.device() != device && a.dim() == 0) a = a.to(device);
  if (b.device() != device && b.dim() == 0) b = b.to(device);
  if (c.scalar_type() == at::kByte) {
    TORCH_WARN_ONCE(
        "where received a uint8 condition tensor. This behavior is deprecated and will be removed "
        "in a future version of PyTorch. Use a boolean condition instead.");
    c = c.to(at::kBool);
  }
  TORCH_CHECK(c.scalar_type() == at::kBool, "where expected condition to be a boolean tensor.");
  c10::OptionalDeviceGuard guard(at::device_of(out));
  auto it = at::TensorIteratorConfig()
                .check_all_same_dtype(false)
                .add_output(out)
                .add_const_input(c)
                .add_const_input(a)
                .add_const_input(b)
                .build();
  launch(it, Op::kWhere, type);
  return out;
}

at::Tensor where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  require_served(condition);
  require_served(self);
  require_served(other);
  const at::ScalarType type = at::result_type(self, other);
  at::Device device = at::kCPU;  // the first operand's that is not on the CPU
  for (const at::Tensor* t : {&condition, &self, &other}) {
    if (!t->is_cpu()) {
      device = t->device();
      break;
    }
  }
  at::Tensor out = at::empty({0}, self.options().dtype(type).device(device));
  where_out(condition, self, other, out);
  return out;
}

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  require_served(self);
  require_served(mask);
  if (value.isComplex()) throw NotServed();
  TORCH_CHECK(self.device() == mask.device(),
              "expected self and mask to be on the same device, but got mask on ", mask.device(),
              " and self on ", self.device());
  TORCH_CHECK(mask.scalar_type() == at::kBool, "expected mask dtype to be Bool but got ",
              mask.scalar_type());
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes)
    TORCH_WARN(
        "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
        "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
        "scalar");
  at::assert_no_partial_overlap(self, mask);
  const at::Tensor expanded = mask.expand(self.sizes());
  c10::OptionalDeviceGuard guard(at::device_of(self));
  auto it = at::TensorIteratorConfig()
                .set_check_mem_overlap(false)
                .check_all_same_dtype(false)
                .resize_outputs(false)
                .add_output(self)
                .add_const_input(self)
                .add_const_input(expanded)
                .build();
  launch(it, Op::kMaskedFill, self.scalar_type(), constants(value));
  return self;
}

at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  require_served(value);
  return masked_fill_scalar_(self, mask, value.item());
}

at::Tensor masked_fill_scalar(const at::Tensor& self, const at::Tensor& mask,
                              const at::Scalar& value) {
  require_served(self);
  require_served(mask);
  const auto shape = at::infer_size(self.sizes(), mask.sizes());
  at::Tensor result = self.expand(shape).clone(at::MemoryFormat::Contiguous);
  masked_fill_scalar_(result, mask, value);
  return result;
}

// The unary operators whose CUDA kernel builds TensorIterator::unary_op itself.
template <Op O>
struct UnaryOp {
  static at::Tensor functional(const at::Tensor& self) {
    require_served(self);
    c10::OptionalDeviceGuard guard(at::device_of(self));
    at::Tensor out;
    auto it = at::TensorIterator::unary_op(out, self);
    launch(it, O, it.common_dtype());
    return it.output();
  }
  static at::Tensor& inplace(at::Tensor& self) {
    require_served(self);
    c10::OptionalDeviceGuard guard(at::device_of(self));
    auto it = at::TensorIterator::unary_op(self, self);
    launch(it, O, it.common_dtype());
    return self;
  }
  static at::Tensor& out(const at::Tensor& self, at::Tensor& out) {
    require_served(self);
    require_served(out);
    c10::OptionalDeviceGuard guard(at::device_of(self));
    auto it = at::TensorIterator::unary_op(out, self);
    launch(it, O, it.common_dtype());
    return out;
  }
};

at::Tensor relu(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return at::clamp_min(self, 0);
}
at::Tensor& relu_(at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return at::clamp_min_(self, 0);
}

at::Tensor& hardtanh_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                  const at::Scalar& min, const at::Scalar& max, at::Tensor& out) {
  require_served(grad);
  require_served(self);
  require_served(out);
  c10::OptionalDeviceGuard guard(at::device_of(self));
  auto it = at::TensorIterator::borrowing_binary_op(out, grad, self);
  launch(it, Op::kHardtanhBackward, it.common_dtype(), constants(min, max));
  return out;
}
at::Tensor hardtanh_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& min,
                             const at::Scalar& max) {
  require_served(grad);
  require_served(self);
  c10::OptionalDeviceGuard guard(at::device_of(self));
  at::Tensor out;
  auto it = at::TensorIterator::borrowing_binary_op(out, grad, self);
  launch(it, Op::kHardtanhBackward, it.common_dtype(), constants(min, max));
  return it.output();
}

// ---- the table ------------------------------------------------------------------------------

// A structured operator's functional, in-place and out= overloads ("" where it has none).
template <class S>
void add_structured(std::vector<Kernel>& v, const char* functional, const char* inplace,
                    const char* out) {
  if (*functional) v.push_back(kernel<&S::functional>(functional));
  if (*inplace) v.push_back(kernel<&S::inplace>(inplace));
  if (*out) v.push_back(kernel<&S::out>(out));
}

using T = const at::Tensor&;
using S = const at::Scalar&;

template <class Meta, Op O>
using Unary = Structured<Meta, Plain<O>>;
template <class Meta, Op O>
using Binary = Structured<Meta, Plain<O>, T>;

}  // namespace

std::vector<Kernel> elementwise_kernels() {
  namespace m = at::meta;
  std::vector<Kernel> v;
  // Arithmetic.
  add_structured<Structured<m::structured_add_Tensor, AddRun, T, S>>(
      v, "aten::add.Tensor", "aten::add_.Tensor", "aten::add.out");
  add_structured<Structured<m::structured_sub_Tensor, SubRun, T, S>>(
      v, "aten::sub.Tensor", "aten::sub_.Tensor", "aten::sub.out");
  add_structured<Binary<m::structured_mul_Tensor, Op::kMul>>(v, "aten::mul.Tensor",
                                                             "aten::mul_.Tensor", "aten::mul.out");
  add_structured<Binary<m::structured_div_Tensor, Op::kDiv>>(v, "aten::div.Tensor",
                                                             "aten::div_.Tensor", "aten::div.out");
  add_structured<
      Structured<m::structured_div_Tensor_mode, DivModeRun, T, std::optional<c10::string_view>>>(
      v, "aten::div.Tensor_mode", "aten::div_.Tensor_mode", "aten::div.out_mode");
  add_structured<Binary<m::structured_remainder_Tensor, Op::kRemainder>>(
      v, "aten::remainder.Tensor", "aten::remainder_.Tensor", "aten::remainder.Tensor_out");
  add_structured<Binary<m::structured_fmod_Tensor, Op::kFmod>>(
      v, "aten::fmod.Tensor", "aten::fmod_.Tensor", "aten::fmod.Tensor_out");
  add_structured<Binary<m::structured_pow_Tensor_Tensor, Op::kPow>>(
      v, "aten::pow.Tensor_Tensor", "aten::pow_.Tensor", "aten::pow.Tensor_Tensor_out");
  add_structured<Structured<m::structured_pow_Tensor_Scalar, PowScalarRun, S>>(
      v, "aten::pow.Tensor_Scalar", "aten::pow_.Scalar", "aten::pow.Tensor_Scalar_out");
  add_structured<Binary<m::structured_atan2, Op::kAtan2>>(v, "aten::atan2", "aten::atan2_",
                                                          "aten::atan2.out");
  add_structured<Binary<m::structured_maximum, Op::kMaximum>>(v, "aten::maximum", "",
                                                              "aten::maximum.out");
  add_structured<Binary<m::structured_minimum, Op::kMinimum>>(v, "aten::minimum", "",
                                                              "aten::minimum.out");
  add_structured<Structured<m::structured_lerp_Scalar, LerpScalarRun, T, S>>(
      v, "aten::lerp.Scalar", "aten::lerp_.Scalar", "aten::lerp.Scalar_out");
  add_structured<Structured<m::structured_lerp_Tensor, Plain<Op::kLerpTensor>, T, T>>(
      v, "aten::lerp.Tensor", "aten::lerp_.Tensor", "aten::lerp.Tensor_out");
  add_structured<Structured<m::structured_addcmul, ValueRun<Op::kAddcmul>, T, T, S>>(
      v, "aten::addcmul", "aten::addcmul_", "aten::addcmul.out");
  add_structured<Structured<m::structured_addcdiv, ValueRun<Op::kAddcdiv>, T, T, S>>(
      v, "aten::addcdiv", "aten::addcdiv_", "aten::addcdiv.out");
  // Comparisons and logic.
#define TORCHADA_COMPARISON(name, op)                                                        \
  add_structured<Binary<m::structured_##name##_Tensor, op>>(                                 \
      v, "aten::" #name ".Tensor", "aten::" #name "_.Tensor", "aten::" #name ".Tensor_out"); \
  add_structured<Structured<m::structured_##name##_Scalar, Plain<op>, S>>(                   \
      v, "aten::" #name ".Scalar", "aten::" #name "_.Scalar", "aten::" #name ".Scalar_out");
  TORCHADA_COMPARISON(eq, Op::kEq)
  TORCHADA_COMPARISON(ne, Op::kNe)
  TORCHADA_COMPARISON(lt, Op::kLt)
  TORCHADA_COMPARISON(le, Op::kLe)
  TORCHADA_COMPARISON(gt, Op::kGt)
  TORCHADA_COMPARISON(ge, Op::kGe)
#undef TORCHADA_COMPARISON
  add_structured<Binary<m::structured_bitwise_and_Tensor, Op::kBitwiseAnd>>(
      v, "aten::bitwise_and.Tensor", "aten::bitwise_and_.Tensor", "aten::bitwise_and.Tensor_out");
  add_structured<Binary<m::structured_bitwise_or_Tensor, Op::kBitwiseOr>>(
      v, "aten::bitwise_or.Tensor", "aten::bitwise_or_.Tensor", "aten::bitwise_or.Tensor_out");
  add_structured<Binary<m::structured_bitwise_xor_Tensor, Op::kBitwiseXor>>(
      v, "aten::bitwise_xor.Tensor", "aten::bitwise_xor_.Tensor", "aten::bitwise_xor.Tensor_out");
  add_structured<Structured<m::structured_bitwise_not, BitwiseNotRun>>(
      v, "aten::bitwise_not", "aten::bitwise_not_", "aten::bitwise_not.out");
  // Unary math.
#define TORCHADA_UNARY(name, op)                                                         \
  add_structured<Unary<m::structured_##name, op>>(v, "aten::" #name, "aten::" #name "_", \
                                                  "aten::" #name ".out");
  TORCHADA_UNARY(neg, Op::kNeg)
  TORCHADA_UNARY(sign, Op::kSign)
  TORCHADA_UNARY(exp, Op::kExp)
  TORCHADA_UNARY(exp2, Op::kExp2)
  TORCHADA_UNARY(expm1, Op::kExpm1)
  TORCHADA_UNARY(log, Op::kLog)
  TORCHADA_UNARY(log2, Op::kLog2)
  TORCHADA_UNARY(log1p, Op::kLog1p)
  TORCHADA_UNARY(sqrt, Op::kSqrt)
  TORCHADA_UNARY(rsqrt, Op::kRsqrt)
  TORCHADA_UNARY(reciprocal, Op::kReciprocal)
  TORCHADA_UNARY(sin, Op::kSin)
  TORCHADA_UNARY(cos, Op::kCos)
  TORCHADA_UNARY(tanh, Op::kTanh)
  TORCHADA_UNARY(sigmoid, Op::kSigmoid)
  TORCHADA_UNARY(erf, Op::kErf)
  TORCHADA_UNARY(floor, Op::kFloor)
  TORCHADA_UNARY(ceil, Op::kCeil)
  TORCHADA_UNARY(round, Op::kRound)
  TORCHADA_UNARY(trunc, Op::kTrunc)
  TORCHADA_UNARY(silu, Op::kSilu)
  TORCHADA_UNARY(mish, Op::kMish)
  TORCHADA_UNARY(hardsigmoid, Op::kHardsigmoid)
#undef TORCHADA_UNARY
  add_structured<UnaryOp<Op::kAbs>>(v, "aten::abs", "aten::abs_", "aten::abs.out");
  add_structured<UnaryOp<Op::kHardswish>>(v, "aten::hardswish", "aten::hardswish_",
                                          "aten::hardswish.out");
  // Clamps and activations with parameters.
  add_structured<Structured<m::structured_clamp, ClampRun, const std::optional<at::Scalar>&,
                            const std::optional<at::Scalar>&>>(v, "aten::clamp", "aten::clamp_",
                                                               "aten::clamp.out");
  add_structured<Structured<m::structured_clamp_min, ClampMinRun, S>>(
      v, "aten::clamp_min", "aten::clamp_min_", "aten::clamp_min.out");
  add_structured<Structured<m::structured_clamp_max, ClampMaxRun, S>>(
      v, "aten::clamp_max", "aten::clamp_max_", "aten::clamp_max.out");
  v.push_back(kernel<&relu>("aten::relu"));
  v.push_back(kernel<&relu_>("aten::relu_"));
  add_structured<Structured<m::structured_gelu, GeluRun, c10::string_view>>(
      v, "aten::gelu", "aten::gelu_", "aten::gelu.out");
  add_structured<Structured<m::structured_threshold, ThresholdRun, S, S>>(
      v, "aten::threshold", "aten::threshold_", "aten::threshold.out");
  add_structured<Structured<m::structured_softplus, SoftplusRun, S, S>>(v, "aten::softplus", "",
                                                                        "aten::softplus.out");
  add_structured<Structured<m::structured_elu, EluRun, S, S, S>>(v, "aten::elu", "aten::elu_",
                                                                 "aten::elu.out");
  add_structured<Structured<m::structured_leaky_relu, LeakyReluRun, S>>(
      v, "aten::leaky_relu", "aten::leaky_relu_", "aten::leaky_relu.out");
  // Backward of activations.
  add_structured<Structured<m::structured_gelu_backward, GeluBackwardRun, T, c10::string_view>>(
      v, "aten::gelu_backward", "", "aten::gelu_backward.grad_input");
  add_structured<Binary<m::structured_silu_backward, Op::kSiluBackward>>(
      v, "aten::silu_backward", "", "aten::silu_backward.grad_input");
  add_structured<Binary<m::structured_sigmoid_backward, Op::kSigmoidBackward>>(
      v, "aten::sigmoid_backward", "", "aten::sigmoid_backward.grad_input");
  add_structured<Binary<m::structured_tanh_backward, Op::kTanhBackward>>(
      v, "aten::tanh_backward", "", "aten::tanh_backward.grad_input");
  add_structured<Structured<m::structured_threshold_backward, ThresholdBackwardRun, T, S>>(
      v, "aten::threshold_backward", "", "aten::threshold_backward.grad_input");
  add_structured<Structured<m::structured_leaky_relu_backward, LeakyReluBackwardRun, T, S, bool>>(
      v, "aten::leaky_relu_backward", "", "aten::leaky_relu_backward.grad_input");
  add_structured<Structured<m::structured_softplus_backward, SoftplusBackwardRun, T, S, S>>(
      v, "aten::softplus_backward", "", "aten::softplus_backward.grad_input");
  add_structured<Binary<m::structured_hardsigmoid_backward, Op::kHardsigmoidBackward>>(
      v, "aten::hardsigmoid_backward", "", "aten::hardsigmoid_backward.grad_input");
  v.push_back(kernel<&hardtanh_backward>("aten::hardtanh_backward"));
  v.push_back(kernel<&hardtanh_backward_out>("aten::hardtanh_backward.grad_input"));
  // Filling, selecting, copying.
  v.push_back(kernel<&fill_scalar>("aten::fill_.Scalar"));
  v.push_back(kernel<&fill_tensor>("aten::fill_.Tensor"));
  v.push_back(kernel<&zero>("aten::zero_"));
  v.push_back(kernel<&copy>("aten::copy_"));
  v.push_back(kernel<&where>("aten::where.self"));
  v.push_back(kernel<&where_out>("aten::where.self_out"));
  v.push_back(kernel<&masked_fill_scalar_>("aten::masked_fill_.Scalar"));
  v.push_back(kernel<&masked_fill_tensor_>("aten::masked_fill_.Tensor"));
  v.push_back(kernel<&masked_fill_scalar>("aten::masked_fill.Scalar"));
  return v;
}

}  // namespace torchada::ops::device
