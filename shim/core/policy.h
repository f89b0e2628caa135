// What the shim does on its own behalf: refusing unsupported calls and CUDA kernels, remembering
// the errors it returned (so cudaGetLastError reports them), counting, the exit summary.
#pragma once

#include "gen/fn_ids.h"

namespace torchada {

// Logs `fn` once as unsupported (with `why`, when given; not when the caller `logged` its own,
// more precise line), counts it, aborts under TORCHADA_STRICT=1.
void note_unsupported(Fn fn, const char* why = nullptr, bool logged = false);
// Logs once that the backend library lacks the MUSA function behind `fn`; counts it.
void note_missing(Fn fn);
// Logs the kernel once (demangled); returns true if `func` is a kernel the program registered.
bool note_kernel_refused(Fn fn, const void* func);
// The kernel bridge (libtorchada_ops.so) serves the refused kernels of the PyTorch operators it
// tries: each is logged at debug level instead of warn (a program's own kernel, launched outside
// those attempts, still warns), and TORCHADA_STRICT=1 is the bridge's (it raises naming the
// operator).
// `attempting` (the bridge's torchada_ops_bridge_attempting, may be null): true on a thread
// while the bridge tries PyTorch's own CUDA kernel, whose refusal it then serves on the host.
void set_kernel_bridge_active(bool active, int (*attempting)() = nullptr);
bool kernel_bridge_active();
// True on a thread while the bridge tries PyTorch's own CUDA kernel: a refusal then is served.
bool kernel_bridge_serving();
// Counts a failed call for the exit summary.
void note_error(Fn fn);
// The backend library refused `fn` with its own not-supported code (muBLAS's NOT_IMPLEMENTED, which
// is cuBLAS's NOT_SUPPORTED): logs `fn` once, naming `backend` and `why` when given (not when the
// caller `logged` its own, more precise line), and counts it for the exit summary. Unlike
// note_unsupported, TORCHADA_STRICT=1 does not abort: the library itself answered, as NVIDIA's may
// for a problem it has no kernel for.
void note_backend_refusal(Fn fn, const char* backend, const char* why = nullptr,
                          bool logged = false);

// The last error the shim itself returned on this thread (0 when none): CUDA's sticky "last error"
// must include errors that never reached the backend.
int take_shim_error();
int peek_shim_error();
void set_shim_error(int code);

// Per-function counters (calls refused, errors), printed at exit under TORCHADA_STATS=1 and
// summarised at warn level when anything was refused.
struct FnCounters {
  unsigned long long unsupported;
  unsigned long long missing;
  unsigned long long kernel_refused;
  unsigned long long backend_refused;
};
FnCounters counters(Fn fn);

}  // namespace torchada
