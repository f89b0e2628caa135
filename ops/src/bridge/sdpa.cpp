// scaled_dot_product_attention on CUDA tensors: the device kernels' attention (src/device/
// attention.cpp) where they run, PyTorch's CPU flash-attention kernel on the host through the
// bridge otherwise, wherever PyTorch would choose flash attention for the same tensors on the CPU.
//
// PyTorch's CUDA fused kernels (flash, memory-efficient, cuDNN) are NVIDIA code, and its math
// composition runs as a dozen bridged operators (bmm, softmax, masking...) where the CPU reference
// of the same script runs one fused kernel: a GPT step was ~1.5 ms slower for that alone. The
// CUDA choice (_fused_sdp_choice_stub's CUDA entry) is replaced: it asks PyTorch's CPU choice about
// the same tensors (their metadata and the user's torch.backends.cuda.enable_*_sdp settings) and
// answers "overrideable" where the CPU would take flash attention, "math" otherwise (dropout, a
// mask that needs a gradient, TORCHADA_STRICT=1). The overrideable pair
// (_scaled_dot_product_fused_attention_overrideable and its backward, the hook PyTorch keeps for
// out-of-tree backends, with autograd already wired) get CUDA kernels that run
// _scaled_dot_product_flash_attention_for_cpu and its backward on the host: the same kernel, hence
// the same numbers, as the script on device="cpu".
#include <ATen/ATen.h>
#include <ATen/SDPBackend.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_fused_sdp_choice_ops.h>
#include <torch/library.h>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

c10::OperatorHandle find_op(const char* name) {
  auto op = c10::Dispatcher::singleton().findSchema({name, ""});
  TORCH_CHECK(op.has_value(), "torchada: ", name, " is not in this PyTorch");
  return *op;
}

// A CUDA kernel's host side: the CPU operator it runs and the report row it counts under (whose
// state holds the device kernel, when there is one).
struct HostKernel {
  OpState* state;
  c10::OperatorHandle cpu_op;
};
HostKernel* g_forward = nullptr;  // set once by register_sdpa, never freed (the report reads it)
HostKernel* g_backward = nullptr;

// Runs `k`'s CPU operator on `args` through the bridge; returns its results.
torch::jit::Stack run_host(HostKernel* k, torch::jit::Stack args) {
  run_on_host_counted(*k->state, k->cpu_op, &args);
  return args;
}

// The CUDA choice (_fused_sdp_choice_stub's CUDA entry, which scaled_dot_product_attention calls
// for CUDA tensors): PyTorch's CPU choice for the same tensors.
int64_t choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
               const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
               std::optional<double> scale, bool enable_gqa) {
  const bool mask_grad =
      attn_mask.has_value() && attn_mask->defined() && attn_mask->requires_grad();
  int64_t cpu_choice = static_cast<int64_t>(at::SDPBackend::math);
  try {
    // The operator's CPU kernel is the CPU entry of the same stub (the stub's own call operator
    // is not exported).
    cpu_choice = at::_ops::_fused_sdp_choice::redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                         query, key, value, attn_mask, dropout_p,
                                                         is_causal, scale, enable_gqa);
  } catch (const c10::Error&) {
  }
  const bool flash = cpu_choice == static_cast<int64_t>(at::SDPBackend::flash_attention) &&
                     dropout_p == 0.0 && !mask_grad && !strict();
  return static_cast<int64_t>(flash ? at::SDPBackend::overrideable : at::SDPBackend::math);
}

// _scaled_dot_product_fused_attention_overrideable(Tensor query, Tensor key, Tensor value,
//     Tensor? attn_bias=None, float dropout_p=0.0, bool is_causal=False,
//     bool return_debug_mask=False, *, float? scale=None)
//   -> (output, logsumexp, cum_seq_q, cum_seq_k, SymInt max_q, SymInt max_k, philox_seed,
//       philox_offset, debug_attn_mask)
void forward(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  if (g_forward->state->device && run_device_kernel(*g_forward->state, op, ks, stack, timing()))
    return;
  const size_t base = stack->size() - op.schema().arguments().size();
  torch::jit::Stack a(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  stack->erase(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  const at::Tensor q = a[0].toTensor(), k = a[1].toTensor();
  // _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal, *,
  //                                             attn_mask, scale) -> (output, logsumexp)
  torch::jit::Stack r = run_host(g_forward, {a[0], a[1], a[2], a[4], a[5], a[3], a[7]});
  const at::Tensor none = at::empty({0}, q.options());
  const at::Tensor none_long = at::empty({0}, q.options().dtype(at::kLong));
  stack->push_back(std::move(r[0]));
  stack->push_back(std::move(r[1]));
  stack->emplace_back(none);
  stack->emplace_back(none);
  stack->emplace_back(q.size(-2));
  stack->emplace_back(k.size(-2));
  stack->emplace_back(none_long);
  stack->emplace_back(none_long);
  stack->emplace_back(none);
}

// _scaled_dot_product_fused_attention_overrideable_backward(Tensor grad_out, Tensor query,
//     Tensor key, Tensor value, Tensor attn_bias, bool[4] grad_input_mask, Tensor out,
//     Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k,
//     float dropout_p, bool is_causal, Tensor philox_seed, Tensor philox_offset, *,
//     float? scale=None) -> (grad_query, grad_key, grad_value, grad_attn_bias)
void backward(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  if (g_backward->state->device && run_device_kernel(*g_backward->state, op, ks, stack, timing()))
    return;
  const size_t base = stack->size() - op.schema().arguments().size();
  torch::jit::Stack a(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  stack->erase(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  const at::Tensor bias = a[4].toTensor();
  // _scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out,
  //     logsumexp, dropout_p, is_causal, *, attn_mask, scale) -> (grad_q, grad_k, grad_v)
  torch::jit::Stack r =
      run_host(g_backward, {a[0], a[1], a[2], a[3], a[6], a[7], a[12], a[13],
                            bias.defined() ? c10::IValue(bias) : c10::IValue(), a[16]});
  for (auto& v : r) stack->push_back(std::move(v));
  stack->emplace_back(at::Tensor());  // the choice never takes this path for a mask with a gradient
}

}  // namespace

std::vector<std::string> register_sdpa(
    std::vector<c10::RegistrationHandleRAII>* handles,
    const std::map<std::string, c10::KernelFunction>& device_kernels) {
  auto& d = c10::Dispatcher::singleton();
  const auto K = c10::DispatchKey::CUDA;
  const char* fwd = "aten::_scaled_dot_product_fused_attention_overrideable";
  const char* bwd = "aten::_scaled_dot_product_fused_attention_overrideable_backward";
  // All four operators must exist: a PyTorch without one fails here, before anything changes.
  const c10::OperatorHandle fwd_op = find_op(fwd), bwd_op = find_op(bwd);
  const c10::OperatorHandle fwd_cpu = find_op("aten::_scaled_dot_product_flash_attention_for_cpu");
  const c10::OperatorHandle bwd_cpu =
      find_op("aten::_scaled_dot_product_flash_attention_for_cpu_backward");
  auto host_kernel = [&](const char* name, const c10::OperatorHandle& op,
                         const c10::OperatorHandle& cpu_op) {
    auto* s = new OpState;  // leaked, like the bridge's other states: read by the report at exit
    s->name = name;
    s->num_args = op.schema().arguments().size();
    if (auto k = device_kernels.find(name); k != device_kernels.end()) s->device = k->second;
    register_state(s);
    return new HostKernel{s, cpu_op};
  };
  g_forward = host_kernel(fwd, fwd_op, fwd_cpu);
  g_backward = host_kernel(bwd, bwd_op, bwd_cpu);
  const char* why = "torchada kernel bridge (ops/src/bridge/sdpa.cpp)";
  at::native::_fused_sdp_choice_stub.set_cuda_dispatch_ptr(&choice);
  handles->push_back(d.registerImpl(fwd_op.operator_name(), K,
                                    c10::KernelFunction::makeFromBoxedFunction<&forward>(),
                                    std::nullopt, nullptr, why));
  handles->push_back(d.registerImpl(bwd_op.operator_name(), K,
                                    c10::KernelFunction::makeFromBoxedFunction<&backward>(),
                                    std::nullopt, nullptr, why));
  return {fwd, bwd};
}

}  // namespace torchada::ops::bridge
