// The MUSA libraries' function tables (generated from symbols/), loaded on first use.
#pragma once

#include <atomic>

#include "core/libraries.h"
#include "gen/mccl_table.h"
#include "gen/mublasLt_table.h"
#include "gen/mublas_table.h"

namespace torchada {

namespace detail {
#define TORCHADA_HIDDEN __attribute__((visibility("hidden")))
extern std::atomic<const LibraryBackend<MublasTable>*> g_mublas_backend TORCHADA_HIDDEN;
extern std::atomic<const LibraryBackend<MublasLtTable>*> g_mublasLt_backend TORCHADA_HIDDEN;
extern std::atomic<const LibraryBackend<McclTable>*> g_mccl_backend TORCHADA_HIDDEN;
#undef TORCHADA_HIDDEN
const LibraryBackend<MublasTable>& mublas_backend_slow();
const LibraryBackend<MublasLtTable>& mublasLt_backend_slow();
const LibraryBackend<McclTable>& mccl_backend_slow();
}  // namespace detail

// Each library's backend, loaded on its first call; after that one acquire load, inlined into
// every export.
inline const LibraryBackend<MublasTable>& mublas_backend() {
  const auto* p = detail::g_mublas_backend.load(std::memory_order_acquire);
  return __builtin_expect(p != nullptr, 1) ? *p : detail::mublas_backend_slow();
}
inline const LibraryBackend<MublasLtTable>& mublasLt_backend() {
  const auto* p = detail::g_mublasLt_backend.load(std::memory_order_acquire);
  return __builtin_expect(p != nullptr, 1) ? *p : detail::mublasLt_backend_slow();
}
inline const LibraryBackend<McclTable>& mccl_backend() {
  const auto* p = detail::g_mccl_backend.load(std::memory_order_acquire);
  return __builtin_expect(p != nullptr, 1) ? *p : detail::mccl_backend_slow();
}

}  // namespace torchada
