// The MUSA libraries behind the cuBLAS, cuBLASLt and NCCL exports and the driver entry points:
// loaded lazily on a library's first call, from the same backend the runtime chose (musa: next to
// the loaded libmusart, then $MUSA_HOME/lib ... like the runtime; sim: the simulator's folder;
// cuda: NVIDIA's own library, pass-through), once per process.
#pragma once

#include <atomic>
#include <new>

namespace torchada {

enum class MusaLibrary : int { kMublas = 0, kMublasLt = 1, kMccl = 2, kMusaDriver = 3, kMtml = 4 };
inline constexpr int kMusaLibraryCount = 5;

// A loaded library: its handle, or why there is none. Never destroyed.
struct LoadedLibrary {
  bool passthrough = false;  // TORCHADA_BACKEND=cuda: NVIDIA's library serves the calls
  bool failed = false;       // no library: every call is refused (logged once)
  void* handle = nullptr;
  char path[512] = {};
};

// Loads (once) and returns the library; thread-safe.
const LoadedLibrary& load_musa_library(MusaLibrary which);
const char* musa_library_name(MusaLibrary which);

// dlsym, as a plain function pointer for the generated resolvers.
void* library_lookup(void* handle, const char* name);

// The library with its function table resolved, initialised on first use. After that: one
// acquire load (of `ready`, which the library's inline accessor reads itself: see
// core/library_tables.h).
template <class Table>
struct LibraryBackend {
  bool passthrough = false;
  bool failed = false;
  Table table{};
};

template <class Table, MusaLibrary kWhich,
          void (*kResolve)(Table&, void* (*)(void*, const char*), void*)>
const LibraryBackend<Table>& library_backend(std::atomic<const LibraryBackend<Table>*>& ready) {
  const LibraryBackend<Table>* p = ready.load(std::memory_order_acquire);
  if (__builtin_expect(p != nullptr, 1)) return *p;
  // Concurrent first calls may both resolve; the table is the same, one pointer wins.
  alignas(LibraryBackend<Table>) static unsigned char bytes[sizeof(LibraryBackend<Table>)];
  static std::atomic<bool> built{false};
  const LoadedLibrary& lib = load_musa_library(kWhich);
  if (!built.exchange(true, std::memory_order_acq_rel)) {
    auto* b = new (bytes) LibraryBackend<Table>();
    b->passthrough = lib.passthrough;
    b->failed = lib.failed;
    if (lib.handle) kResolve(b->table, &library_lookup, lib.handle);
    ready.store(b, std::memory_order_release);
    return *b;
  }
  while ((p = ready.load(std::memory_order_acquire)) == nullptr) {
  }
  return *p;
}

// NVIDIA's own library `soname` (pass-through backend), never torchada's own files or a
// replacement named like it; null when missing.
void* nvidia_symbol(const char* soname, const char* name);

}  // namespace torchada
