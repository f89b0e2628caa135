// Shared host-side helpers for the op files: argument checks, environment, call accounting.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace torchada::ops {

// Every kernel this library owns, for the call counters and the debug log.
enum class Op : int {
  kRmsNorm,
  kFusedAddRmsNorm,
  kSiluAndMul,
  kGeluAndMul,
  kRotaryEmbedding,
  kNeg,
  kSilu,
  kGelu,
  kCount
};
const char* op_name(Op op);  // "torchada::rms_norm", "aten::neg", ...

// The sink for settings/settings.h (the TORCHADA_* variables this library owns): a malformed
// value is one "[torchada_ops] warning:" line on stderr.
void settings_warn(const char* message);

// Counts a call that runs one of our kernels and, under TORCHADA_DEBUG_CPP_OPS=1, logs it with
// the tensor it ran on. `path` says which kernel ran ("torchada CPU", "stock: <reason>").
void note_call(Op op, const char* path, const at::Tensor& t, bool ours = true);
int64_t call_count(const std::string& name);

// The dtypes every op supports; anything else is refused with the op's name in the message.
inline bool is_supported_float(at::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}
void check_float(const char* op, const char* arg, const at::Tensor& t);
void check_same_device(const char* op, const at::Tensor& a, const char* an, const at::Tensor& b,
                       const char* bn);
void check_same_dtype(const char* op, const at::Tensor& a, const char* an, const at::Tensor& b,
                      const char* bn);

// Runs `fn` on a contiguous view of `t` and, if `t` itself was not contiguous, copies the result
// back so that in-place ops keep their in-place contract on strided inputs.
template <typename Fn>
void with_contiguous_inplace(at::Tensor& t, Fn&& fn) {
  if (t.is_contiguous()) {
    fn(t);
    return;
  }
  at::Tensor c = t.contiguous();
  fn(c);
  t.copy_(c);
}

// Names of the aten overrides registered in this process, e.g. "aten::neg (CUDA)".
std::vector<std::string> active_overrides();

}  // namespace torchada::ops
