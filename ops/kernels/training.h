// The plain-data arguments of the training step's own kernels (kernels/indexing.cu,
// kernels/layer_norm.cu, kernels/adam.cu): indexing (arange, gather / index_select, the
// embedding's gradient), the NLL loss, layer norm and the fused AdamW step. Included by the host
// side (src/device/*.cpp) and the kernels alike, so it holds plain data only. Element types are
// the elementwise engine's Kinds; strides count elements.
#pragma once

#include <cstdint>

#include "elementwise.h"

namespace torchada::training {

using elementwise::Compute;
using elementwise::Kind;

// out[i] = start + step * i over n contiguous elements, computed in `compute` (PyTorch's
// accumulation type: float for float, half and bfloat16, double, int64 for integers).
struct Arange {
  char* out = nullptr;
  Kind kind = Kind::kFloat32;
  Compute compute = Compute::kFloat;
  int64_t n = 0;
  double start = 0, step = 0;     // floating computations
  int64_t istart = 0, istep = 0;  // integral ones
};

// out[c] = self[c with c[dim] replaced by index[c]]: gather (index of out's shape) and
// index_select (a 1-D index: its stride is 0 along every dimension but `dim`). An index outside
// [0, self_dim_size) fails a device-side assertion, as in PyTorch's kernels.
struct Gather {
  static constexpr int kMaxDims = 8;
  int ndim = 0;
  int dim = 0;
  int64_t sizes[kMaxDims] = {};  // the output's, dimension 0 slowest
  int64_t out_strides[kMaxDims] = {};
  int64_t self_strides[kMaxDims] = {};
  int64_t index_strides[kMaxDims] = {};
  int64_t numel = 0;
  int64_t self_dim_size = 0;
  int elem_size = 0;  // 1, 2, 4 or 8 bytes: values are copied, never converted
  bool index32 = false;
  char* out = nullptr;
  const char* self = nullptr;
  const char* index = nullptr;
};

// grad_weight[indices[i], :] += grad[i, :] for every i whose index is not padding_idx,
// accumulated in `acc` (num_weights x dim, float or double, zeroed by the caller) in the order of
// i, so that the result is the same on every run.
struct EmbeddingBackward {
  const char* grad = nullptr;  // n x dim
  Kind grad_kind = Kind::kFloat32;
  int64_t grad_row_stride = 0, grad_col_stride = 0;
  const char* indices = nullptr;  // n, contiguous
  bool index32 = false;
  int64_t n = 0, dim = 0, num_weights = 0, padding_idx = -1;
  void* acc = nullptr;
  bool acc_double = false;
};

// The negative log-likelihood of `input` (batch x classes, or one row) at `target`, with optional
// class weights; reduction 0: none (out[i] per row), 1: mean, 2: sum (out[0]). total_weight[0]
// receives the sum of the weights of the rows counted. A target outside [0, classes) other than
// ignore_index fails a device-side assertion.
struct NllLoss {
  const char* input = nullptr;
  Kind kind = Kind::kFloat32;  // input, weight, out, grads and total_weight share it
  int64_t batch = 0, classes = 0;
  int64_t in_row_stride = 0, in_col_stride = 0;
  const char* target = nullptr;
  bool target32 = false;
  int64_t target_stride = 0;
  const char* weight = nullptr;  // classes, contiguous; nullptr: every weight is 1
  int64_t ignore_index = -100;
  int reduction = 1;
  char* out = nullptr;     // forward: the loss; backward: grad_input (batch x classes, zeroed)
  int64_t out_stride = 0;  // none: between rows; backward: grad_input's row stride
  int64_t out_col_stride = 0;
  char* total_weight = nullptr;       // forward writes it, backward reads it
  const char* grad_output = nullptr;  // backward
  int64_t grad_output_stride = 0;     // reduction none: between rows
};

// Layer norm over the last `cols` elements of each of `rows` contiguous rows, computed in
// `compute` (float for half, bfloat16 and float; double for double).
struct LayerNorm {
  int64_t rows = 0, cols = 0;
  Compute compute = Compute::kFloat;
  Kind kind = Kind::kFloat32;        // input, output, grad_output, grad_input
  Kind param_kind = Kind::kFloat32;  // weight, bias and their gradients
  Kind stat_kind = Kind::kFloat32;   // mean and rstd
  double eps = 0;
  const char* input = nullptr;
  const char* weight = nullptr;  // nullptr: none
  const char* bias = nullptr;
  char* output = nullptr;
  char* mean = nullptr;  // rows
  char* rstd = nullptr;
  const char* grad_output = nullptr;  // backward
  char* grad_input = nullptr;         // nullptr: not wanted
  char* grad_weight = nullptr;
  char* grad_bias = nullptr;
};

// Softmax (or log-softmax) along contiguous rows, in `compute`: forward
// out = softmax(in * scale, masked), the attention's causal mask (column > row % rows_per_matrix:
// PyTorch's top-left is_causal) applied when `causal`, and each row's log-sum-exp into `lse` when
// set (float). A row whose every entry is masked (or -inf) gives zeros and a log-sum-exp of -inf.
// Backward: grad_in = out * (grad - sum(grad * out)) (softmax) or grad - exp(out) * sum(grad)
// (log-softmax).
struct Softmax {
  int64_t rows = 0, cols = 0;
  Compute compute = Compute::kFloat;
  Kind in_kind = Kind::kFloat32, out_kind = Kind::kFloat32;
  bool log = false;
  double scale = 1;
  bool causal = false;
  int64_t rows_per_matrix = 1;
  const char* in = nullptr;  // forward: the input; backward: the forward's output
  char* out = nullptr;       // forward: the result; backward: grad_input
  float* lse = nullptr;
  const char* grad = nullptr;  // backward: grad_output (in_kind)
};

// A 2-D convolution's geometry over a contiguous NCHW batch: input [n, channels, height, width],
// columns [n, channels * kernel_h * kernel_w, out_h * out_w] (im2col's layout: a convolution is a
// batched GEMM of the weight and the columns).
struct Im2Col {
  int64_t n = 0, channels = 0, height = 0, width = 0;
  int64_t kernel_h = 1, kernel_w = 1, pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1, out_h = 0, out_w = 0;
  Kind kind = Kind::kFloat32;
  Compute compute = Compute::kFloat;  // col2im's sums
  const char* in = nullptr;           // im2col: the image; col2im: the columns
  char* out = nullptr;  // im2col: the columns; col2im: the image (every element written)
};

// Max pooling over a contiguous NCHW batch ([planes = n * channels, height, width]), with the
// index (h * width + w) of each maximum; NaN wins, as in PyTorch. Backward: grad_input from
// grad_output and the indices, each input element summing the windows that chose it.
struct MaxPool {
  int64_t planes = 0, height = 0, width = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  Kind kind = Kind::kFloat32;
  Compute compute = Compute::kFloat;
  const char* in = nullptr;  // forward: the input; backward: grad_output
  char* out = nullptr;       // forward: the output; backward: grad_input
  int64_t* indices = nullptr;
};

// One tensor's AdamW (or Adam) step, as PyTorch's fused CUDA optimizer computes it: double
// hyper-parameters, arithmetic in `compute`.
struct Adam {
  int64_t n = 0;
  Kind kind = Kind::kFloat32;  // every tensor of the step
  Compute compute = Compute::kFloat;
  char* param = nullptr;
  char* grad = nullptr;  // written back (unscaled) only with grad_scale, as PyTorch does
  char* exp_avg = nullptr;
  char* exp_avg_sq = nullptr;
  char* max_exp_avg_sq = nullptr;  // amsgrad
  const float* step = nullptr;     // the step count (a float tensor on the device)
  const float* lr_ptr = nullptr;   // the tensor_lr overload: lr on the device
  const float* grad_scale = nullptr;
  const float* found_inf = nullptr;  // *found_inf == 1: the step is skipped
  double lr = 0, beta1 = 0, beta2 = 0, weight_decay = 0, eps = 0;
  bool amsgrad = false, maximize = false, adamw = true;
};

}  // namespace torchada::training
