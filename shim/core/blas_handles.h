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
// lt_fast() is on the path of every cuBLASLt call: a seqlock-guarded open-addressing table, read
// with acquire loads and no read-modify-write (no shared cache line is written by readers).
// Writers (creations, destructions, the lazy mublasLtCreate) are serialised by a mutex and bump
// the sequence around their stores; a reader that saw the sequence move, or found nothing, takes
// resolve(), which looks again under the mutex. So the fast path may miss, never answer wrongly.
// Tables replaced when growing are kept (never freed) for readers still inside them; growth
// doubles, so they add up to less than the live table. Deletion shifts entries back (no
// tombstones), so the size follows the number of live handles, whatever the churn.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace torchada {
namespace blas_handles {

struct Slot {
  std::atomic<std::uintptr_t> key{0};  // the handle the program holds; 0: empty
  // The muBLASLt handle to pass: the key itself for cublasLtCreate's handles; for cuBLAS handles
  // the one created for it, 0 until then.
  std::atomic<std::uintptr_t> lt{0};
};

struct Table {
  Slot* slots;
  std::size_t mask;  // capacity - 1 (a power of two)
  unsigned shift;    // 64 - log2(capacity)
};

extern std::atomic<std::uint64_t> g_sequence;  // odd while a writer is changing the table
extern std::atomic<const Table*> g_table;

inline std::size_t slot_of(std::uintptr_t key, const Table* t) {
  // Fibonacci hashing: the high bits of the product (allocations differ in their middle bits).
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> t->shift) & t->mask;
}

// The muBLASLt handle for `h`, or null: unknown, a cuBLAS handle with none created yet, a writer
// busy. Null is never an answer: resolve() decides.
inline void* lt_fast(const void* h) {
  const std::uint64_t seq = g_sequence.load(std::memory_order_acquire);
  const Table* t = g_table.load(std::memory_order_acquire);
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::uintptr_t lt = 0;
  for (std::size_t i = slot_of(key, t), n = 0; n <= t->mask; ++n, i = (i + 1) & t->mask) {
    const std::uintptr_t k = t->slots[i].key.load(std::memory_order_acquire);
    if (k == key) {
      lt = t->slots[i].lt.load(std::memory_order_acquire);
      break;
    }
    if (k == 0) break;
  }
  // The acquire loads above keep this load after them; a writer's release stores they read from
  // come after its odd sequence, which this load then sees.
  if ((seq & 1) != 0 || g_sequence.load(std::memory_order_relaxed) != seq) return nullptr;
  return reinterpret_cast<void*>(lt);
}

// Whether h is a handle cublasCreate returned and cublasDestroy has not taken back: the check of
// every cuBLAS call's handle (abi/library.h), so that a destroyed, never-created or garbage
// handle is refused (CUBLAS_STATUS_NOT_INITIALIZED) before muBLAS dereferences it. Lock-free when
// no writer is busy; the mutex decides otherwise.
bool known_cublas_slow(const void* h);
inline bool known_cublas(const void* h) {
  const std::uint64_t seq = g_sequence.load(std::memory_order_acquire);
  const Table* t = g_table.load(std::memory_order_acquire);
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  bool found = false;
  for (std::size_t i = slot_of(key, t), n = 0; key != 0 && n <= t->mask;
       ++n, i = (i + 1) & t->mask) {
    const std::uintptr_t k = t->slots[i].key.load(std::memory_order_acquire);
    if (k == key) {
      found = t->slots[i].lt.load(std::memory_order_acquire) != key;  // not a cuBLASLt handle
      break;
    }
    if (k == 0) break;
  }
  if ((seq & 1) != 0 || g_sequence.load(std::memory_order_relaxed) != seq)
    return known_cublas_slow(h);
  return found;
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
