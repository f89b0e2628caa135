// The driver entry points' shared machinery: the MUSA driver library (libmusa.so) and its function
// table, the entry table generated from symbols/driver.txt, result translation and the forwarding
// helper the generated forwarders use. ABI-free: compiled once, against CUDA 13's cuda.h (driver
// ABIs are versioned by name, not by toolkit) and the MUSA driver header.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <musa.h>

#include <cstddef>
#include <type_traits>

#include "abi/convert.h"
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

enum class DriverDisposition : unsigned char { kForward, kTranslate, kShim, kUnsupported };

// One row of symbols/driver.txt (shim/gen/driver_entries.cc).
struct DriverEntry {
  const char* name;     // the driver's name for this ABI: cuMemGetAddressRange_v2
  const char* request;  // the base name callers ask for: cuMemGetAddressRange
  int since;            // CUDA version that introduced this ABI
  bool per_thread;      // the _ptsz form
  DriverDisposition disposition;
  void* (*fn)();                             // the pointer handed out (null: unsupported)
  bool (*resolved)(const MusaDriverTable&);  // whether libmusa has the target (null: none)
  const char* target;                        // mu* name, for messages (null: none)
  const char* note;
};
const DriverEntry* driver_entries(std::size_t* count);

inline CUresult to_cu_result(MUresult r) {
  return r == MUSA_SUCCESS ? CUDA_SUCCESS : Pair<enum cudaError_enum>::to_cuda(r);
}

// A generated forwarder's body: each argument converted to the MUSA parameter type, the call,
// the result translated.
template <class R, class... P, class... A>
inline CUresult forward(R (*fn)(P...), A... args) {
  static_assert(std::is_same_v<R, MUresult>, "a MUSA driver function returns MUresult");
  static_assert(sizeof...(P) == sizeof...(A), "argument count differs from the MUSA signature");
  if (__builtin_expect(fn == nullptr, 0)) return CUDA_ERROR_NOT_SUPPORTED;
  return to_cu_result(fn(convert<P>(args)...));
}

// The "_ptsz" forms: the null stream means the calling thread's per-thread default stream.
inline CUstream per_thread_stream(CUstream s) { return s ? s : CU_STREAM_PER_THREAD; }

}  // namespace drv
}  // namespace torchada
