// Simulator-only extensions of the runtime, for the simulator's own libraries (muBLAS, muBLASLt).
// Not part of MUSA's API: nothing in the shim calls them, so the path through the shim stays the
// one a real SDK serves.
#pragma once

#include <musa_runtime_api.h>

extern "C" {

// Like musaLaunchHostFunc, for work that blocks on nothing the caller does later (a library
// routine's computation): when the stream has nothing pending (nor anything it implicitly waits
// for under the legacy-stream rules) and no stream capture is active, `fn(userData)` runs at once
// on the calling thread, the stream marked busy until it returns, so work queued behind it still
// waits for it; otherwise it is queued as musaLaunchHostFunc would. Running it here saves the
// two thread handoffs (caller -> stream worker -> a waiting caller) that otherwise cost more than
// a small GEMM, and a CPU timeslice each on an oversubscribed machine.
MUSA_RT_API musaError_t musaSimLaunchHostFuncOrRun(musaStream_t stream, musaHostFn_t fn,
                                                   void* userData);
}
