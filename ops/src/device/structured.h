// The outputs of structured operators whose meta function is MetaBase's (reductions, gather,
// the NLL loss...): allocated as PyTorch's generated CUDA wrappers allocate them (Functional), or
// the caller's out= tensors checked and resized (Out). N outputs.
#pragma once

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

namespace torchada::ops::device::structured {

template <class Meta, int N>
struct Functional final : Meta {
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) override {
    out[i] =
        strides.empty() ? at::empty(sizes, options) : at::empty_strided(sizes, strides, options);
  }
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options) override {
    set_output_raw_strided(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t i) override { return out[i]; }
  at::Tensor out[N];
};

template <class Meta, int N>
struct Out final : Meta {
  template <class... T>
  explicit Out(T&... o) : out{o...} {}
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) override {
    const at::Tensor& t = out[i];
    TORCH_CHECK(options.dtype() == t.dtype(), "Expected out tensor to have dtype ", options.dtype(),
                ", but got ", t.dtype(), " instead");
    TORCH_CHECK(options.device() == t.device(), "Expected out tensor to have device ",
                options.device(), ", but got ", t.device(), " instead");
    if (at::native::resize_output(t, sizes) && !strides.empty()) t.as_strided_(sizes, strides);
  }
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options) override {
    set_output_raw_strided(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t i) override { return out[i]; }
  at::Tensor out[N];
};

}  // namespace torchada::ops::device::structured
