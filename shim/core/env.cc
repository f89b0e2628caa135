#include "core/env.h"

#include <cstdlib>
#include <strings.h>

#include "core/log.h"

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

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  return !strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
         !strcasecmp(v, "on");
}

}  // namespace torchada
