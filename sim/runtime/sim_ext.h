// Simulator-only extensions of the runtime, for the simulator's own libraries (muBLAS, muBLASLt,
// MTML).
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

// The nanoseconds `device`'s streams have spent running work since the process started (summed
// over its streams, so it grows faster than wall time while several run at once): the simulated
// MTML's utilisation counter. musaErrorInvalidDevice for an ordinal out of range.
MUSA_RT_API musaError_t musaSimDeviceBusyTime(int device, unsigned long long* nanoseconds);

// `device`'s memory in use (every allocation on it, by any thread) and its size, in bytes, without
// making it current: the simulated MTML's memory figures.
MUSA_RT_API musaError_t musaSimDeviceMemory(int device, size_t* used, size_t* total);

// Whether the `bytes` bytes from `p` stay in memory the device can address: a span that starts
// in an allocation (of any kind) must end in it or in allocations adjacent to it (a VMM range
// mapped piece by piece); memory outside every allocation is host memory, which the simulated
// devices address as GPUs with HMM do. musaSuccess, else musaErrorIllegalAddress. For the
// libraries' operands, which a GPU would read or write there.
MUSA_RT_API musaError_t musaSimCheckRange(const void* p, size_t bytes);

// A library's work on `device` would have touched memory outside its allocations: the device
// takes `fault` (musaErrorIllegalAddress) as its sticky error, as a GPU kernel's memory fault
// makes it, reported by the next synchronisation (the first fault stays). May be called from a
// stream's work. musaErrorInvalidDevice for an ordinal out of range.
MUSA_RT_API musaError_t musaSimRaiseFault(int device, musaError_t fault);

// The libraries' operand check, in one place: musaSimCheckRange of `operand`'s `bytes` from `p`;
// when they run beyond the allocation they start in, one line naming `routine`, the operand and
// its span, `device`'s sticky musaErrorIllegalAddress (musaSimRaiseFault), and that error back
// (the caller then runs nothing).
MUSA_RT_API musaError_t musaSimCheckOperand(int device, const char* routine, const char* operand,
                                            const void* p, size_t bytes);
}
