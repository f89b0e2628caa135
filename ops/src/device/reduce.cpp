// The reduction engine's host side: PyTorch's structured meta functions size the result and check
// the arguments, ATen's own reduction helpers (ReduceOpsUtils.h: the iterator PyTorch's CUDA
// operators build, the result viewed with stride 0 along the reduced dimensions) lay out the
// operands, and kernels/reduce.cu reduces.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/core/op_registration/infer_schema.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/all_meta.h>
#include <ATen/ops/amax_meta.h>
#include <ATen/ops/amin_meta.h>
#include <ATen/ops/any_meta.h>
#include <ATen/ops/argmax_meta.h>
#include <ATen/ops/argmin_meta.h>
#include <ATen/ops/linalg_vector_norm_meta.h>
#include <ATen/ops/max_meta.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/min_meta.h>
#include <ATen/ops/prod_meta.h>
#include <ATen/ops/sum_meta.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cmath>
#include <limits>
#include <optional>

#include "../device_kernels.h"
#include "device.h"
#include "kernel_table.h"
#include "structured.h"

namespace torchada::ops::device {
namespace {

using structured::Functional;
using structured::Out;

using reduce::Args;
using reduce::Compute;
using reduce::Op;

// Runs `op` over a reduction iterator (its outputs first, then the input).
void launch(at::TensorIteratorBase& it, Op op, bool with_index, double c0 = 0, double c1 = 0) {
  const int nout = it.noutputs();
  if (nout < 1 || nout > 2 || it.ntensors() != nout + 1 || it.ndim() > Args::kMaxDims)
    throw NotServed();
  const int in = nout;
  const auto in_kind = kind_of(it.dtype(in));
  const auto compute = compute_of(it.dtype(in));
  if (!in_kind || !compute || !it.device(in).is_cuda() || it.tensor_base(in).is_neg() ||
      it.tensor_base(in).is_conj())
    throw NotServed();
  Args a;
  a.nout = nout;
  a.with_index = with_index;
  a.in = static_cast<const char*>(it.data_ptr(in));
  a.in_kind = *in_kind;
  a.c[0] = c0;
  a.c[1] = c1;
  for (int k = 0; k < nout; ++k) {
    const auto kind = kind_of(it.dtype(k));
    if (!kind || !it.device(k).is_cuda()) throw NotServed();
    a.out[k] = static_cast<char*>(it.data_ptr(k));
    a.out_kind[k] = *kind;
  }
  const at::IntArrayRef shape = it.shape();
  const at::IntArrayRef in_strides = it.strides(in);
  a.numel_out = 1;
  a.numel_red = 1;
  for (int d = 0; d < it.ndim(); ++d) {
    if (shape[d] == 1) continue;
    if (it.strides(0)[d] == 0) {
      a.red_sizes[a.nred] = shape[d];
      a.in_red_strides[a.nred++] = in_strides[d];
      a.numel_red *= shape[d];
    } else {
      a.kept_sizes[a.nkept] = shape[d];
      a.in_kept_strides[a.nkept] = in_strides[d];
      for (int k = 0; k < nout; ++k) a.out_strides[k][a.nkept] = it.strides(k)[d];
      ++a.nkept;
      a.numel_out *= shape[d];
    }
  }
  // An index is a position along one dimension: the iterator must not have merged several.
  const bool indexed = with_index || op == Op::kArgMax || op == Op::kArgMin;
  if (indexed && a.nred > 1) throw NotServed();
  if (it.numel() == 0) return;
  const at::Device device = it.device(in);
  c10::DeviceGuard guard(device);
  void* stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  check_launch("reduce", TORCHADA_KERNEL(reduce_launch)(op, *compute, a, stream));
}

void require_real(const at::Tensor& self) {
  if (!kind_of(self.scalar_type()) || self.layout() != at::kStrided || !self.is_cuda())
    throw NotServed();
}

// ---- the implementations (what PyTorch's CUDA operators do after their meta function) -------

void sum_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
              const at::Tensor& result) {
  auto it = at::meta::make_reduction_from_out_ty(self, result, dim, keepdim, result.scalar_type());
  if (it.numel() == 0)
    const_cast<at::Tensor&>(result).zero_();
  else
    launch(it, Op::kSum, false, 1.0);
}

void mean_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
               const at::Tensor& result) {
  auto it = at::meta::make_reduction_from_out_ty(self, result, dim, keepdim, result.scalar_type());
  if (it.numel() == 0) {
    const_cast<at::Tensor&>(result).fill_(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  launch(it, Op::kSum, false,
         static_cast<double>(it.num_output_elements()) / static_cast<double>(it.numel()));
}

void extreme_impl(const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                  const at::Tensor& result, Op op) {
  auto it = at::meta::make_reduction(self, result, dim, keepdim, self.scalar_type());
  if (it.numel() != 0) launch(it, op, false);
}

void arg_impl(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
              const at::Tensor& result, Op op) {
  at::Tensor in = self;
  at::DimVector dims;
  if (dim) {
    const int64_t d = c10::maybe_wrap_dim(*dim, self.dim());
    if (self.dim() > 0 && self.size(d) == 1) {
      const_cast<at::Tensor&>(result).fill_(0);
      return;
    }
    dims.push_back(d);
  } else {
    in = self.reshape({-1});
    keepdim = false;
  }
  auto it = at::meta::make_reduction(in, result, dims, keepdim, self.scalar_type());
  if (it.numel() != 0) launch(it, op, false);
}

void minmax_dim_impl(const at::Tensor& self, int64_t dim, bool keepdim, const at::Tensor& values,
                     const at::Tensor& indices, Op op) {
  if (self.numel() == 0) return;
  if (self.numel() == 1 && self.dim() == 0) {
    const_cast<at::Tensor&>(values).fill_(self);
    const_cast<at::Tensor&>(indices).fill_(0);
    return;
  }
  at::Tensor v = values, i = indices;
  auto it = at::native::make_reduction("max_out", v, i, self, dim, keepdim, self.scalar_type(),
                                       at::kLong);
  launch(it, op, true);
}

void norm_impl(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim,
               bool keepdim, const at::Tensor& result) {
  if (self.numel() == 0 || self.is_complex()) throw NotServed();
  at::Tensor r = result;
  auto it = at::native::make_reduction("vector_norm", r, self, dim, keepdim, result.scalar_type());
  launch(it, Op::kNorm, false, ord.toDouble());
}

void allany_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                 const at::Tensor& result, Op op) {
  if (self.numel() == 0) {
    const_cast<at::Tensor&>(result).fill_(op == Op::kAll ? 1 : 0);
    return;
  }
  auto it = at::meta::make_reduction(self, result, dim, keepdim, self.scalar_type());
  launch(it, op, false);
}

// ---- the overloads ----------------------------------------------------------------------------

using OptDims = at::OptionalIntArrayRef;
using OptType = std::optional<at::ScalarType>;

at::Tensor sum_dim(const at::Tensor& self, OptDims dim, bool keepdim, OptType dtype) {
  require_real(self);
  c10::OptionalDeviceGuard g(at::device_of(self));
  Functional<at::meta::structured_sum_dim_IntList, 1> m;
  m.meta(self, dim, keepdim, dtype);
  sum_impl(self, dim, keepdim, m.out[0]);
  return m.out[0];
}
at::Tensor& sum_out(const at::Tensor& self, OptDims dim, bool keepdim, OptType dtype,
                    at::Tensor& out) {
  require_real(self);
  c10::OptionalDeviceGuard g(at::device_of(self));
  Out<at::meta::structured_sum_dim_IntList, 1> m(out);
  m.meta(self, dim, keepdim, dtype);
  sum_impl(self, dim, keepdim, out);
  return out;
}
at::Tensor mean_dim(const at::Tensor& self, OptDims dim, bool keepdim, OptType dtype) {
  require_real(self);
  c10::OptionalDeviceGuard g(at::device_of(self));
  Functional<at::meta::structured_mean_dim, 1> m;
  m.meta(self, dim, keepdim, dtype);
  mean_impl(self, dim, keepdim, m.out[0]);
  return m.out[0];
}
at::Tensor& mean_out(const at::Tensor& self, OptDims dim, bool keepdim, OptType dtype,
                     at::Tensor& out) {
  require_real(self);
  c10::OptionalDeviceGuard g(at::device_of(self));
  Out<at::meta::structured_mean_dim, 1> m(out);
  m.meta(self, dim, keepdim, dtype);
  mean_impl(self, dim, keepdim, out);
  return out;
}

template <class Meta, Op O>
struct Extreme {
  static at::Tensor functional(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
    require_real(self);
    c10::OptionalDeviceGuard g(at::device_of(self));
    Functional<Meta, 1> m;
    m.meta(self, dim, keepdim);
    extreme_impl(self, dim, keepdim, m.out[0], O);
    return m.out[0];
  }
  static at::Tensor& out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                         at::Tensor& out) {
    require_real(self);
    c10::OptionalDeviceGuard g(at::device_of(self));
    Out<Meta, 1> m(out);
    m.meta(self, dim, keepdim);
    extreme_impl(self, dim, keepdim, out, O);
    return out;
  }
};

template <class Meta, Op O>
struct Arg {
  static at::Tensor functional(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    require_real(self);
    c10::OptionalDeviceGuard g(at::device_of(self));
    Functional<Meta, 1> m;
    m.meta(self, dim, keepdim);
    arg_impl(self, dim, keepdim, m.out[0], O);
    return m.out[0];
  }
  static at::Tensor& out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                         at::Tensor& out) {
    require_real(self);
    c10::OptionalDeviceGuard g(at::device_of(self));
    Out<Meta, 1> m(out);
    m.meta(self, dim, keepdim);
    arg_impl(self, dim, keepdim, out, O);
    return out;
  }
};

template <class Meta, Op O>
struct MinMaxDim {
  static std::tuple<at::Tensor, at::Tensor> functional(const at::Tensor& self, int64_t dim,
                                                       bool keepdim) {
    require_real(self);
    c10::OptionalDeviceGuard g(at::device_of(self));
    Functional<Meta, 2> m;
    const auto pre = m.meta(self, dim, keepdim);
    minmax_dim_impl(self, pre.dim, keepdim, m.out[0], m.out[1], O);
    return {m.out[0], m.out[1]};
  }
  static std::tuple<at::Tensor&, at::Tensor&> out(const at::Tensor& self, int64_t dim, bool keepdim,
                                                  at::Tensor& values, at::Tensor& indices) {
    require_real(self);
    c10::OptionalDeviceGuard g(at::device_of(self));
    Out<Meta, 2> m(values, indices);
    const auto pre = m.meta(self, dim, keepdim);
    minmax_dim_impl(self, pre.dim, keepdim, values, indices, O);
    return {values, indices};
  }
};

at::Tensor vector_norm(const at::Tensor& self, const at::Scalar& ord, OptDims dim, bool keepdim,
                       OptType dtype) {
  require_real(self);
  c10::OptionalDeviceGuard g(at::device_of(self));
  Functional<at::meta::structured_linalg_vector_norm, 1> m;
  m.meta(self, ord, dim, keepdim, dtype);
  norm_impl(self, ord, dim, keepdim, m.out[0]);
  return m.out[0];
}
at::Tensor& vector_norm_out(const at::Tensor& self, const at::Scalar& ord, OptDims dim,
                            bool keepdim, OptType dtype, at::Tensor& out) {
  require_real(self);
  c10::OptionalDeviceGuard g(at::device_of(self));
  Out<at::meta::structured_linalg_vector_norm, 1> m(out);
  m.meta(self, ord, dim, keepdim, dtype);
  norm_impl(self, ord, dim, keepdim, out);
  return out;
}

template <class Meta, class DimMeta, Op O>
struct AllAny {
  static at::Tensor dims(const at::Tensor& self, OptDims dim, bool keepdim) {
    require_real(self);
    c10::OptionalDeviceGuard g(at::device_of(self));
    Functional<Meta, 1> m;
    m.meta(self, dim, keepdim);
    allany_impl(self, dim, keepdim, m.out[0], O);
    return m.out[0];
  }
  static at::Tensor dim(const at::Tensor& self, int64_t d, bool keepdim) {
    require_real(self);
    c10::OptionalDeviceGuard g(at::device_of(self));
    Functional<DimMeta, 1> m;
    m.meta(self, d, keepdim);
    allany_impl(self, at::IntArrayRef(d), keepdim, m.out[0], O);
    return m.out[0];
  }
};

// any() / all() over everything.
template <class AA>
at::Tensor all_any_full(const at::Tensor& self) {
  return AA::dims(self, std::nullopt, false);
}

// aminmax: amin and amax (two launches where PyTorch's kernel makes one). Empty input without a
// dimension is PyTorch's own error.
std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim,
                                           bool keepdim) {
  require_real(self);
  if (self.numel() == 0 || self.scalar_type() == at::kBool) throw NotServed();
  c10::OptionalDeviceGuard g(at::device_of(self));
  if (dim) return {at::amin(self, *dim, keepdim), at::amax(self, *dim, keepdim)};
  at::Tensor lo = at::amin(self), hi = at::amax(self);
  if (keepdim && self.dim() > 0) {
    const std::vector<int64_t> ones(self.dim(), 1);
    lo = lo.reshape(ones);
    hi = hi.reshape(ones);
  }
  return {lo, hi};
}

// max() / min() over everything: amax over every dimension, with PyTorch's message for empty
// input.
template <Op O>
at::Tensor full_extreme(const at::Tensor& self) {
  require_real(self);
  TORCH_CHECK(self.numel() > 0, O == Op::kMax ? "max(): " : "min(): ",
              "Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  c10::OptionalDeviceGuard g(at::device_of(self));
  at::Tensor result = at::empty({}, self.options());
  extreme_impl(self, {}, false, result, O);
  return result;
}

// var / std with a correction (Bessel's by default), PyTorch's CUDA std_var_out.
template <bool Std>
at::Tensor& var_out(const at::Tensor& self, OptDims dim,
                    const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  require_real(self);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "std and var only support floating point and complex dtypes");
  if (self.numel() == 0) throw NotServed();  // PyTorch's NaN and warning for empty input
  c10::OptionalDeviceGuard g(at::device_of(self));
  const double c = correction ? correction->toDouble() : 1.0;
  auto it = at::native::make_reduction("std or var", out, self, dim, keepdim, self.scalar_type());
  launch(it, Op::kVar, false, c, Std ? 1.0 : 0.0);
  return out;
}
template <bool Std>
at::Tensor var(const at::Tensor& self, OptDims dim, const std::optional<at::Scalar>& correction,
               bool keepdim) {
  require_real(self);
  at::Tensor out = at::empty({0}, self.options());
  var_out<Std>(self, dim, correction, keepdim, out);
  return out;
}

}  // namespace

std::vector<Kernel> reduce_kernels() {
  namespace m = at::meta;
  std::vector<Kernel> v;
  v.push_back(kernel<&sum_dim>("aten::sum.dim_IntList"));
  v.push_back(kernel<&sum_out>("aten::sum.IntList_out"));
  v.push_back(kernel<&mean_dim>("aten::mean.dim"));
  v.push_back(kernel<&mean_out>("aten::mean.out"));
  v.push_back(kernel<&Extreme<m::structured_amax, Op::kMax>::functional>("aten::amax"));
  v.push_back(kernel<&Extreme<m::structured_amax, Op::kMax>::out>("aten::amax.out"));
  v.push_back(kernel<&Extreme<m::structured_amin, Op::kMin>::functional>("aten::amin"));
  v.push_back(kernel<&Extreme<m::structured_amin, Op::kMin>::out>("aten::amin.out"));
  v.push_back(kernel<&Arg<m::structured_argmax, Op::kArgMax>::functional>("aten::argmax"));
  v.push_back(kernel<&Arg<m::structured_argmax, Op::kArgMax>::out>("aten::argmax.out"));
  v.push_back(kernel<&Arg<m::structured_argmin, Op::kArgMin>::functional>("aten::argmin"));
  v.push_back(kernel<&Arg<m::structured_argmin, Op::kArgMin>::out>("aten::argmin.out"));
  v.push_back(kernel<&MinMaxDim<m::structured_max_dim, Op::kMax>::functional>("aten::max.dim"));
  v.push_back(kernel<&MinMaxDim<m::structured_max_dim, Op::kMax>::out>("aten::max.dim_max"));
  v.push_back(kernel<&MinMaxDim<m::structured_min_dim, Op::kMin>::functional>("aten::min.dim"));
  v.push_back(kernel<&MinMaxDim<m::structured_min_dim, Op::kMin>::out>("aten::min.dim_min"));
  v.push_back(kernel<&full_extreme<Op::kMax>>("aten::max"));
  v.push_back(kernel<&full_extreme<Op::kMin>>("aten::min"));
  v.push_back(kernel<&vector_norm>("aten::linalg_vector_norm"));
  v.push_back(kernel<&vector_norm_out>("aten::linalg_vector_norm.out"));
  using Any = AllAny<m::structured_any_dims, m::structured_any_dim, Op::kAny>;
  using All = AllAny<m::structured_all_dims, m::structured_all_dim, Op::kAll>;
  v.push_back(kernel<&Any::dims>("aten::any.dims"));
  v.push_back(kernel<&All::dims>("aten::all.dims"));
  v.push_back(kernel<&Any::dim>("aten::any.dim"));
  v.push_back(kernel<&All::dim>("aten::all.dim"));
  v.push_back(kernel<&all_any_full<Any>>("aten::any"));
  v.push_back(kernel<&all_any_full<All>>("aten::all"));
  v.push_back(kernel<&aminmax>("aten::aminmax"));
  v.push_back(kernel<&var<false>>("aten::var.correction"));
  v.push_back(kernel<&var_out<false>>("aten::var.correction_out"));
  v.push_back(kernel<&var<true>>("aten::std.correction"));
  v.push_back(kernel<&var_out<true>>("aten::std.correction_out"));
  return v;
}

}  // namespace torchada::ops::device
