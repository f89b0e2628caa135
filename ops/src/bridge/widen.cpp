// Dtypes a CUDA kernel has and the CPU kernel lacks: PyTorch's CUDA kernels cover Half, BFloat16
// and ComplexHalf for operators whose CPU kernels refuse them ("rsqrt_cpu" not implemented for
// 'ComplexHalf'). The CUDA kernels compute those types in a wider one (float, complex float: their
// opmath type) and round once on store, so the bridge does the same: when the CPU kernel refuses
// the narrow type by name, every argument of that type is widened (on the device), the CPU kernel
// runs on the widened arguments, and the results are rounded back: a result of the wide type (or,
// for ComplexHalf, of its real counterpart float) becomes the narrow type, a written argument
// (in-place, out=) gets the widened result copied into it and is returned as itself.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "bridge.h"
#include "ivalue_tensors.h"

namespace torchada::ops::bridge {
namespace {

// The narrow type the CPU kernel named in its refusal, when it is one the bridge widens.
std::optional<c10::ScalarType> refused_narrow_type(const char* what) {
  static constexpr c10::ScalarType kNarrow[] = {c10::kHalf, c10::kBFloat16, c10::kComplexHalf};
  const char* at = std::strstr(what, "not implemented for '");
  if (at == nullptr) return std::nullopt;
  at += std::strlen("not implemented for '");
  for (c10::ScalarType t : kNarrow) {
    const char* name = c10::toString(t);
    const size_t n = std::strlen(name);
    if (std::strncmp(at, name, n) == 0 && at[n] == '\'') return t;
  }
  return std::nullopt;
}

c10::ScalarType wide_of(c10::ScalarType narrow) {
  return narrow == c10::kComplexHalf ? c10::kComplexFloat : c10::kFloat;
}

// A result type of the widened computation that stands for the narrow computation's.
std::optional<c10::ScalarType> narrowed(c10::ScalarType result, c10::ScalarType narrow) {
  if (result == wide_of(narrow)) return narrow;
  if (narrow == c10::kComplexHalf && result == c10::kFloat) return c10::kHalf;
  return std::nullopt;
}

class Widening {
 public:
  explicit Widening(c10::ScalarType narrow) : narrow_(narrow), wide_(wide_of(narrow)) {}

  void widen(c10::IValue& v, bool write) {
    map_tensors(v, [&](const at::Tensor& t) { return widen(t, write); });
  }

  // After the call: written arguments get their widened results; results are rounded back.
  void narrow_results(c10::IValue& v) {
    map_tensors(v, [&](const at::Tensor& t) { return narrow_result(t); });
  }

  void write_back() {
    for (auto& [original, widened] : written_) {
      if (original.sizes() != widened.sizes()) original.resize_(widened.sizes());
      original.copy_(widened);
    }
  }

 private:
  at::Tensor widen(const at::Tensor& t, bool write) {
    if (!t.defined() || t.scalar_type() != narrow_ || t.layout() != c10::kStrided) return t;
    at::Tensor w = t.to(wide_);
    if (write) written_.emplace_back(t, w);
    return w;
  }

  at::Tensor narrow_result(const at::Tensor& t) {
    if (!t.defined()) return t;
    for (auto& [original, widened] : written_)
      if (t.is_same(widened)) return original;
    if (auto n = narrowed(t.scalar_type(), narrow_)) return t.to(*n);
    return t;
  }

  c10::ScalarType narrow_, wide_;
  std::vector<std::pair<at::Tensor, at::Tensor>> written_;  // (the caller's, its widened copy)
};

}  // namespace

void run_on_host_widening(const c10::OperatorHandle& op, torch::jit::Stack* stack, Mode m) {
  const auto& schema = op.schema();
  const size_t nargs = schema.arguments().size();
  const size_t base = stack->size() - nargs;
  // The CPU kernel consumes its arguments before it refuses: keep references to start again.
  std::vector<c10::IValue> saved(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  std::optional<c10::ScalarType> narrow;
  try {
    run_on_host(op, stack, m);
    return;
  } catch (const c10::NotImplementedError& e) {
    narrow = refused_narrow_type(e.what());
    if (!narrow) throw;
  }
  stack->resize(base);
  Widening widening(*narrow);
  for (size_t i = 0; i < nargs; ++i) {
    const auto* alias = schema.arguments()[i].alias_info();
    widening.widen(saved[i], alias != nullptr && alias->isWrite());
    stack->push_back(std::move(saved[i]));
  }
  run_on_host(op, stack, m);
  widening.write_back();
  const size_t nret = schema.returns().size();
  for (size_t i = stack->size() - nret; i < stack->size(); ++i)
    widening.narrow_results((*stack)[i]);
}

}  // namespace torchada::ops::bridge
