// The CUDA driver API's shared machinery: the MUSA driver library (libmusa.so) and its function
// table, the entry table generated from symbols/driver.txt, result translation, and the helpers the
// generated exports (shim/gen/driver_exports.cc) use: forwarding, refusing, the cuda pass-through.
// ABI-free: compiled once, against CUDA 13's cuda.h (driver ABIs are versioned by name, not by
// toolkit) and the MUSA driver header.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <musa.h>

#include <cstddef>
#include <type_traits>

#include "abi/convert.h"
#include "core/backend.h"
#include "core/initialised.h"
#include "core/policy.h"
#include "gen/fn_ids.h"
#include "gen/driver_table.h"
#include "gen/driver_types.h"

namespace torchada {
namespace drv {

// libmusa.so of the chosen backend, loaded and initialised (muInit(0)) once, on first use.
struct DriverBackend {
  bool usable = false;  // loaded, and muInit succeeded
  MusaDriverTable table{};
  char path[512] = {};
};
const DriverBackend& driver_backend();
inline const MusaDriverTable& driver_table() { return driver_backend().table; }

enum class DriverDisposition : unsigned char { kForward, kTranslate, kShim, kKernel, kUnsupported };

// One row of symbols/driver.txt (shim/gen/driver_entries.cc).
struct DriverEntry {
  const char* name;     // the driver's name for this ABI: cuMemGetAddressRange_v2
  const char* request;  // the base name callers ask for: cuMemGetAddressRange
  int since;            // CUDA version that introduced this ABI
  bool per_thread;      // a _ptsz / _ptds form
  DriverDisposition disposition;
  void* (*fn)();                             // the export (handed out unless unsupported)
  bool (*resolved)(const MusaDriverTable&);  // whether libmusa has the target (null: none)
  const char* target;                        // mu* name, for messages (null: none)
  const char* note;
};
const DriverEntry* driver_entries(std::size_t* count);

inline CUresult to_cu_result(MUresult r) {
  return r == MUSA_SUCCESS ? CUDA_SUCCESS : Pair<enum cudaError_enum>::to_cuda(r);
}

// The MUSA driver lacks the function behind `fn` (or no libmusa was loaded): logged once.
CUresult missing(Fn fn);
// An unsupported row: `why` (its note) logged once, counted; CUDA_ERROR_NOT_SUPPORTED.
CUresult refuse(Fn fn, const char* why);
// A kernel row: loading or launching NVIDIA device code; `what` is the module file when the call
// names one, `image` the in-memory image when it passes one (the log names its kernels).
// CUDA_ERROR_NO_BINARY_FOR_GPU.
CUresult no_binary(Fn fn, const char* what, const void* image);
// A driver function called before CUDA is initialised (cuInit, or the runtime's first call):
// CUDA_ERROR_NOT_INITIALIZED, logged once at info level, counted.
CUresult not_initialised(Fn fn);

// A generated forwarder's body: each argument converted to the MUSA parameter type, the call,
// the result translated.
template <class R, class... P, class... A>
inline CUresult forward(Fn id, R (*fn)(P...), A... args) {
  static_assert(std::is_same_v<R, MUresult>, "a MUSA driver function returns MUresult");
  static_assert(sizeof...(P) == sizeof...(A), "argument count differs from the MUSA signature");
  if (TORCHADA_UNLIKELY(fn == nullptr)) return missing(id);
  const CUresult r = to_cu_result(fn(convert<P>(args)...));
  if (TORCHADA_UNLIKELY(r != CUDA_SUCCESS)) note_error(id);
  return r;
}

// TORCHADA_BACKEND=cuda: every export calls NVIDIA's own libcuda.so.1.
inline bool passthrough() { return runtime().passthrough; }

// NVIDIA's libcuda.so.1 function named like `id` (resolved once); null when NVIDIA's driver or
// that function is missing.
void* nvidia_driver_symbol(Fn id);
// The pass-through's answer when nvidia_driver_symbol has none: CUDA_ERROR_NO_DEVICE when there is
// no NVIDIA driver at all (what NVIDIA's runtime concludes from a missing libcuda.so.1), else
// CUDA_ERROR_NOT_SUPPORTED for a function that driver lacks (an older driver), logged.
CUresult no_nvidia_driver(Fn id);
template <class F>
inline F nvidia(Fn id) {
  return reinterpret_cast<F>(nvidia_driver_symbol(id));
}

// The "_ptsz" forms: the null stream means the calling thread's per-thread default stream.
inline CUstream per_thread_stream(CUstream s) { return s ? s : CU_STREAM_PER_THREAD; }

}  // namespace drv
}  // namespace torchada
