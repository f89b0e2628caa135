// The MUSA libraries' function tables, shared by both CUDA ABIs (one muBLAS, one MCCL per process).
#include "core/library_tables.h"

namespace torchada {

const LibraryBackend<MublasTable>& mublas_backend() {
  return library_backend<MublasTable, MusaLibrary::kMublas, &resolve_mublas>();
}
const LibraryBackend<MublasLtTable>& mublasLt_backend() {
  return library_backend<MublasLtTable, MusaLibrary::kMublasLt, &resolve_mublasLt>();
}
const LibraryBackend<McclTable>& mccl_backend() {
  return library_backend<McclTable, MusaLibrary::kMccl, &resolve_mccl>();
}

}  // namespace torchada
