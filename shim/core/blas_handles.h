// Which handles a cublasLtHandle_t argument may be, for every cuBLASLt call of both CUDA ABIs.
//
// NVIDIA documents that a cublasHandle_t can be used wherever a cublasLtHandle_t is expected (a
// cuBLAS handle embeds a cuBLASLt context): PyTorch hands cuBLASLt its cuBLAS handle, cast, and
// never calls cublasLtCreate. muBLAS's handle is no muBLASLt handle, so the shim keeps one table
// of the handles it handed out:
//
//   cublasLtCreate   the muBLASLt handle itself (used as is)
//   cublasCreate     a muBLAS handle (either ABI), with the muBLASLt handle created for it on its
//                    first use as a cuBLASLt handle (mublasLtCreate), destroyed by cublasDestroy
//
// and anything else is refused by the caller (CUBLAS_STATUS_NOT_INITIALIZED, logged). The table is
// ABI-free: a handle from libcublas.so.12 serves libcublasLt.so.13 as well.
//
// Lookups (lt_fast, known_cublas) are on the path of every cuBLAS/cuBLASLt call: lock-free reads
// of a HandleTable (core/handle_table.h) whose data word is the muBLASLt handle to pass.
#pragma once

#include <cstdint>

#include "core/handle_table.h"

namespace torchada {
namespace blas_handles {

// Key: the handle the program holds. Value: the muBLASLt handle to pass, the key itself for
// cublasLtCreate's handles; for cuBLAS handles the one created for it, 0 until then.
extern HandleTable g_handles;

// The muBLASLt handle for `h`, or null: unknown, a cuBLAS handle with none created yet, a writer
// busy. Null is never an answer: resolve() decides.
inline void* lt_fast(const void* h) {
  std::uintptr_t lt = 0;
  if (g_handles.find_fast(reinterpret_cast<std::uintptr_t>(h), &lt) != HandleTable::Lookup::kFound)
    return nullptr;
  return reinterpret_cast<void*>(lt);
}

// Whether h is a handle cublasCreate returned and cublasDestroy has not taken back: the check of
// every cuBLAS call's handle (abi/library.h), so that a destroyed, never-created or garbage
// handle is refused (CUBLAS_STATUS_NOT_INITIALIZED) before muBLAS dereferences it. Lock-free when
// no writer is busy; the mutex decides otherwise.
bool known_cublas_slow(const void* h);
inline bool known_cublas(const void* h) {
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::uintptr_t lt = 0;
  switch (g_handles.find_fast(key, &lt)) {
    case HandleTable::Lookup::kFound:
      return lt != key;  // not a cuBLASLt handle
    case HandleTable::Lookup::kAbsent:
      return false;
    case HandleTable::Lookup::kBusy:
      break;
  }
  return known_cublas_slow(h);
}

enum class Kind {
  kUnknown,  // neither (never created by the shim, or destroyed)
  kLt,       // from cublasLtCreate
  kCublas,   // from cublasCreate
};

struct Resolved {
  Kind kind = Kind::kUnknown;
  void* lt = nullptr;      // the muBLASLt handle to pass (null when none could be made)
  bool created = false;    // made by this call (mublasLtCreate for a cuBLAS handle)
  int musa_status = 0;     // mublasLtCreate's status when it failed
  bool no_create = false;  // muBLASLt lacks mublasLtCreate (or is not loaded)
};

// The authoritative lookup, under the writers' mutex; creates the muBLASLt handle of a cuBLAS
// handle on its first use.
Resolved resolve(const void* h);

// After a successful cublasLtCreate / cublasCreate.
void add(const void* h, Kind kind);
// cublasDestroy: forgets h; returns the muBLASLt handle created for it (null when none), which
// the caller destroys.
void* remove_cublas(const void* h);
// cublasLtDestroy: for a cublasLtCreate handle, forgets it (*lt = h, the caller destroys it); for
// a cuBLAS handle, detaches its muBLASLt handle (*lt, null when none was made; the caller destroys
// it) and keeps the cuBLAS handle, whose next cuBLASLt use makes a new one.
Kind release_lt(const void* h, void** lt);

// mublasLtDestroy on a muBLASLt handle resolve() made or release_lt() returned: muBLASLt's status,
// or -1 when the library lacks the function.
int destroy_lt(void* lt);

// Settings a cuBLAS handle carries that muBLAS has no counterpart for (the CUDA 13 emulation
// controls and the math mode as the program set it, shim/cublas/emulation.cc), as plain values:
// this table is ABI-free. Kept beside the
// handle table under its writers' mutex, made at the first change, forgotten by remove_cublas.
// The defaults are NVIDIA's: CUBLAS_EMULATION_STRATEGY_DEFAULT,
// CUDA_EMULATION_SPECIAL_VALUES_SUPPORT_DEFAULT, CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC,
// CUBLAS_DEFAULT_MATH.
struct Settings {
  int math_mode = 0;  // cublasMath_t, as cublasSetMathMode took it (emulated modes included)
  int emulation_strategy = 0;
  int special_values = 0xFFFF;
  int mantissa_control = 0;
  int max_mantissa_bits = 0;
  int mantissa_bit_offset = 0;
  int* mantissa_bit_count = nullptr;
};
// h's settings (the defaults before any change) into *out; false when h is no handle
// cublasCreate returned (unknown, destroyed, or a cublasLtCreate handle).
bool get_settings(const void* h, Settings* out);
// apply(settings of h, value) under the mutex; false, nothing changed, when h is no cuBLAS handle.
bool change_settings(const void* h, void (*apply)(Settings&, std::intptr_t), std::intptr_t value);

}  // namespace blas_handles
}  // namespace torchada
