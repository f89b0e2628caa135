#include "core/env.h"

#include <unistd.h>

#include <cstdlib>

#include "core/log.h"
#include "settings/settings.h"

namespace torchada {
namespace {
struct EnvPair {
  const char* cuda;
  const char* musa;
};
constexpr EnvPair kEnvPairs[] = {
    {"CUDA_VISIBLE_DEVICES", "MUSA_VISIBLE_DEVICES"},
    {"CUDA_LAUNCH_BLOCKING", "MUSA_LAUNCH_BLOCKING"},
};
}  // namespace

void translate_cuda_environment() {
  for (const EnvPair& p : kEnvPairs) {
    const char* v = std::getenv(p.cuda);
    if (v == nullptr) continue;
    if (std::getenv(p.musa) != nullptr) {
      TORCHADA_LOG(kDebug, "%s left as set; %s ignored", p.musa, p.cuda);
      continue;
    }
    ::setenv(p.musa, v, 0);
    TORCHADA_LOG(kInfo, "%s=%s (from %s)", p.musa, v, p.cuda);
  }
}

void settings_warn(const char* message) { TORCHADA_LOG(kWarn, "%s", message); }

void check_settings() {
  // TORCHADA_BACKEND's fallback (no backend) and TORCHADA_TRACE_FORMAT's (binary for a .tdtrace
  // file) are their readers' to name.
  settings::check_environment(environ, settings::Owner::kShim, settings_warn,
                              {settings::Id::kBackend, settings::Id::kTraceFormat});
}

}  // namespace torchada
