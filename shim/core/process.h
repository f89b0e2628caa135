// Process lifecycle: fork handlers for every lock the shim owns, and the exit summary.
#pragma once

namespace torchada {

// Idempotent; called when the runtime initialises.
void install_process_hooks();
// Writes the per-function summary (TORCHADA_STATS=1, or anything refused) to the log.
void print_exit_summary();

}  // namespace torchada
