// What a CPU kernel refuses and PyTorch's CUDA operator does, with nothing wider to compute it in
// (widen.cpp covers the narrow dtypes): the bridge answers such a call from other operators on
// the CUDA tensors themselves (each one a device kernel or a bridged call in its own right), or
// from the CPU kernel with an argument that only chooses how CUDA computes. A rewrite applies
// only when the CPU kernel's refusal names the case, so every other call is untouched.
//
//   nansum of a complex tensor       sum(where(isnan(x), 0, x)): CUDA's nansum skips an element
//                                    whose real or imaginary part is NaN, as isnan does
//   linalg.svd(driver=...)           the CPU kernel without driver: the argument picks cuSOLVER's
//                                    algorithm (gesvd, gesvdj, gesvda), not the result
//   LU without pivoting              Doolittle elimination (linalg.lu_factor_ex, linalg.lu with
//                                    pivot=False): pivots 1..k as CUDA gives, info the first zero
//                                    pivot (1-based) or 0, P empty for linalg.lu
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/Resize.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

bool says(const c10::Error& e, const char* text) {
  return std::strstr(e.what_without_backtrace(), text) != nullptr;
}

// The argument named `name` among the call's arguments (base: the first one on the stack).
c10::IValue* argument(const c10::FunctionSchema& schema, torch::jit::Stack& stack, size_t base,
                      const char* name) {
  const auto index = schema.argumentIndexWithName(name);
  return index ? &stack[base + *index] : nullptr;
}

// out= variants: the result copied into the written argument, which is returned.
void write_out(const at::Tensor& result, at::Tensor out) {
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
}

at::Tensor complex_nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                          std::optional<c10::ScalarType> dtype) {
  return at::sum(at::where(at::isnan(self), at::zeros({}, self.options()), self), dim, keepdim,
                 dtype);
}

// A batch of m x n matrices factored without row exchanges; info gets the first zero pivot.
std::tuple<at::Tensor, at::Tensor, at::Tensor> lu_without_pivoting(const at::Tensor& a) {
  TORCH_CHECK(a.dim() >= 2,
              "linalg.lu_factor: Expected tensor with 2 or more dimensions. Got size: ", a.sizes(),
              " instead");
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  at::Tensor lu = a.clone(at::MemoryFormat::Contiguous);
  const auto batch = a.sizes().slice(0, a.dim() - 2);
  at::Tensor info = at::zeros(batch, a.options().dtype(at::kInt));
  for (int64_t j = 0; j < k; ++j) {
    const at::Tensor pivot = lu.select(-2, j).select(-1, j);
    info =
        at::where(pivot.eq(0).logical_and(info.eq(0)), static_cast<int>(j + 1), info).to(at::kInt);
    if (j + 1 >= m) continue;
    at::Tensor column = lu.narrow(-2, j + 1, m - j - 1).select(-1, j);  // below the pivot
    column.div_(pivot.unsqueeze(-1));
    if (j + 1 >= n) continue;
    const at::Tensor row = lu.select(-2, j).narrow(-1, j + 1, n - j - 1);  // right of it
    lu.narrow(-2, j + 1, m - j - 1)
        .narrow(-1, j + 1, n - j - 1)
        .sub_(column.unsqueeze(-1) * row.unsqueeze(-2));
  }
  std::vector<int64_t> pivots_shape(batch.begin(), batch.end());
  pivots_shape.push_back(k);
  at::Tensor pivots =
      at::arange(1, k + 1, a.options().dtype(at::kInt)).expand(pivots_shape).contiguous();
  return {lu, pivots, info};
}

// Each rewrite: the operator's base name, the refusal it answers, and the call from the
// arguments (the stack's, at base; the results replace them).
using Rewrite = void (*)(const c10::OperatorHandle&, torch::jit::Stack&, size_t, Mode);

void rewrite_nansum(const c10::OperatorHandle& op, torch::jit::Stack& stack, size_t base, Mode) {
  const auto& schema = op.schema();
  const at::Tensor self = argument(schema, stack, base, "self")->toTensor();
  const auto dim = argument(schema, stack, base, "dim")->toOptional<std::vector<int64_t>>();
  const bool keepdim = argument(schema, stack, base, "keepdim")->toBool();
  const auto dtype = argument(schema, stack, base, "dtype")->toOptional<c10::ScalarType>();
  at::Tensor r =
      complex_nansum(self, dim ? at::OptionalIntArrayRef(*dim) : std::nullopt, keepdim, dtype);
  c10::IValue* out = argument(schema, stack, base, "out");
  if (out != nullptr) {
    write_out(r, out->toTensor());
    r = out->toTensor();
  }
  stack.resize(base);
  stack.emplace_back(std::move(r));
}

void rewrite_svd_driver(const c10::OperatorHandle& op, torch::jit::Stack& stack, size_t base,
                        Mode m) {
  *argument(op.schema(), stack, base, "driver") = c10::IValue();
  run_on_host_widening(op, &stack, m);
}

void rewrite_lu(const c10::OperatorHandle& op, torch::jit::Stack& stack, size_t base, Mode) {
  const auto& schema = op.schema();
  const at::Tensor a = argument(schema, stack, base, "A")->toTensor();
  auto [lu, pivots, info] = lu_without_pivoting(a);
  std::vector<at::Tensor> results;
  if (schema.name() == "aten::linalg_lu_factor_ex") {
    if (argument(schema, stack, base, "check_errors")->toBool())
      at::_linalg_check_errors(info, "torch.linalg.lu_factor_ex", a.dim() == 2);
    results = {lu, pivots, info};
  } else {  // aten::linalg_lu: P (empty without pivoting), L (unit lower), U
    const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
    at::Tensor l = lu.narrow(-1, 0, k).tril(-1) + at::eye(m, k, a.options());
    at::Tensor u = lu.narrow(-2, 0, k).triu();
    results = {at::empty({0}, a.options()), l, u};
  }
  // out= variants: the written arguments, in the order of the returns.
  std::vector<at::Tensor> outs;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const auto* alias = schema.arguments()[i].alias_info();
    if (alias != nullptr && alias->isWrite()) outs.push_back(stack[base + i].toTensor());
  }
  if (outs.size() == results.size()) {
    for (size_t i = 0; i < outs.size(); ++i) write_out(results[i], outs[i]);
    results = outs;
  }
  stack.resize(base);
  for (auto& r : results) stack.emplace_back(std::move(r));
}

struct Entry {
  const char* op;       // the operator's name, any overload
  const char* refusal;  // a piece of the CPU kernel's error text
  Rewrite rewrite;
};

constexpr Entry kRewrites[] = {
    {"aten::nansum", "does not support complex inputs", rewrite_nansum},
    {"aten::_linalg_svd", "`driver=` is only supported on CUDA", rewrite_svd_driver},
    {"aten::linalg_lu_factor_ex", "LU without pivoting is not implemented on the CPU", rewrite_lu},
    {"aten::linalg_lu", "LU without pivoting is not implemented on the CPU", rewrite_lu},
};

}  // namespace

void run_on_host_rewriting(const c10::OperatorHandle& op, torch::jit::Stack* stack, Mode m) {
  const auto& schema = op.schema();
  const Entry* entry = nullptr;
  for (const Entry& e : kRewrites)
    if (schema.name() == e.op) entry = &e;
  if (entry == nullptr) return run_on_host_widening(op, stack, m);
  const size_t base = stack->size() - schema.arguments().size();
  // The CPU kernel consumes its arguments before it refuses: keep references to start again.
  std::vector<c10::IValue> saved(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  try {
    run_on_host_widening(op, stack, m);
    return;
  } catch (const c10::Error& e) {
    if (!says(e, entry->refusal)) throw;
  }
  stack->resize(base);
  for (auto& v : saved) stack->push_back(std::move(v));
  entry->rewrite(op, *stack, base, m);
}

}  // namespace torchada::ops::bridge
