// The MUSA libraries' function tables, shared by both CUDA ABIs (one muBLAS, one MCCL per process).
#include "core/library_tables.h"

namespace torchada {
namespace detail {

std::atomic<const LibraryBackend<MublasTable>*> g_mublas_backend{nullptr};
std::atomic<const LibraryBackend<MublasLtTable>*> g_mublasLt_backend{nullptr};
std::atomic<const LibraryBackend<McclTable>*> g_mccl_backend{nullptr};

const LibraryBackend<MublasTable>& mublas_backend_slow() {
  return library_backend<MublasTable, MusaLibrary::kMublas, &resolve_mublas>(g_mublas_backend);
}
const LibraryBackend<MublasLtTable>& mublasLt_backend_slow() {
  return library_backend<MublasLtTable, MusaLibrary::kMublasLt, &resolve_mublasLt>(
      g_mublasLt_backend);
}
const LibraryBackend<McclTable>& mccl_backend_slow() {
  return library_backend<McclTable, MusaLibrary::kMccl, &resolve_mccl>(g_mccl_backend);
}

}  // namespace detail
}  // namespace torchada
