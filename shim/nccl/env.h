// NCCL_* environment variables copied to their MCCL_* counterparts before libmccl is loaded (the
// list and the rules are in env.cc). Called by core/libraries.cc when it loads MCCL; weak, so that
// programs linking the core objects without the NCCL translations (tests, benches) do without it.
#pragma once

namespace torchada {

void translate_nccl_environment() __attribute__((weak));

}  // namespace torchada
