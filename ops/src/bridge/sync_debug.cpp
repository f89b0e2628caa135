// torch.cuda.set_sync_debug_mode for operators the bridge serves. PyTorch's CUDA operators whose
// output's shape depends on the data (nonzero, masked_select, unique, bincount, repeat_interleave
// without output_size...) synchronise with the device to learn it, and that synchronisation warns
// ("warn") or raises ("error"): c10::cuda::warn_or_error_on_sync. Once latched, the bridge never
// reaches that code, so it keeps the contract itself: while the mode is on, the operator's meta
// kernel is asked for the output on meta tensors shaped as the arguments; when it cannot answer,
// the shape needs the data, which PyTorch's CUDA kernel would have synchronised for. With the mode
// off (the default) nothing is asked. An operator with no meta kernel at all reads as one that
// synchronises: the heuristic errs towards the warning.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/cuda/CUDAFunctions.h>

#include "bridge.h"
#include "ivalue_tensors.h"

namespace torchada::ops::bridge {

void warn_if_shape_needs_data(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                              size_t num_args) {
  if (c10::cuda::warning_state().get_sync_debug_mode() == c10::cuda::SyncDebugMode::L_DISABLED)
    return;
  torch::jit::Stack meta(stack.end() - static_cast<std::ptrdiff_t>(num_args), stack.end());
  for (c10::IValue& v : meta)
    map_tensors(v, [](const at::Tensor& t) {
      // CPU tensors (the scalars CUDA operators accept) stay as they are.
      if (!t.defined() || t.is_cpu()) return t;
      return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
    });
  bool answered = true;
  try {
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &meta);
  } catch (const std::exception&) {
    answered = false;
  }
  if (!answered) c10::cuda::warn_or_error_on_sync();
}

}  // namespace torchada::ops::bridge
