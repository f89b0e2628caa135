#include "common.h"

#include "settings/settings.h"

#include <array>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace torchada::ops {
namespace {

constexpr std::array<const char*, static_cast<size_t>(Op::kCount)> kNames = {
    "torchada::rms_norm",
    "torchada::fused_add_rms_norm",
    "torchada::silu_and_mul",
    "torchada::gelu_and_mul",
    "torchada::rotary_embedding",
    "aten::neg",
    "aten::silu",
    "aten::gelu"};

// Relaxed counters: they only feed the query function and tests, never synchronise anything.
std::array<std::atomic<int64_t>, static_cast<size_t>(Op::kCount)> g_calls{};

bool debug_enabled() {
  // Read once: the variable is documented as read at load time, and getenv per call would put a
  // libc lock-free-but-not-free scan on every op.
  static const bool on = settings::flag(settings::Id::kDebugCppOps, settings_warn);
  return on;
}

}  // namespace

const char* op_name(Op op) { return kNames[static_cast<size_t>(op)]; }

void settings_warn(const char* message) {
  std::fprintf(stderr, "[torchada_ops] warning: %s\n", message);
}

void note_call(Op op, const char* path, const at::Tensor& t, bool ours) {
  if (ours) g_calls[static_cast<size_t>(op)].fetch_add(1, std::memory_order_relaxed);
  if (!debug_enabled()) return;
  std::ostringstream os;
  os << "[torchada_ops] " << op_name(op) << " -> " << path << "  " << t.scalar_type() << t.sizes()
     << " on " << t.device() << "\n";
  std::fputs(os.str().c_str(), stderr);
}

int64_t call_count(const std::string& name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (name == kNames[i]) return g_calls[i].load(std::memory_order_relaxed);
  TORCH_CHECK(false, "torchada::override_calls: unknown op '", name, "'");
}

void check_float(const char* op, const char* arg, const at::Tensor& t) {
  TORCH_CHECK(is_supported_float(t.scalar_type()), op, ": ", arg,
              " must be float32, float16 or bfloat16, got ", t.scalar_type());
}

void check_same_device(const char* op, const at::Tensor& a, const char* an, const at::Tensor& b,
                       const char* bn) {
  TORCH_CHECK(a.device() == b.device(), op, ": ", an, " and ", bn,
              " must be on the same device, got ", a.device(), " and ", b.device());
}

void check_same_dtype(const char* op, const at::Tensor& a, const char* an, const at::Tensor& b,
                      const char* bn) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), op, ": ", an, " and ", bn,
              " must have the same dtype, got ", a.scalar_type(), " and ", b.scalar_type());
}

}  // namespace torchada::ops
