// The MUSA libraries' function tables (generated from symbols/), loaded on first use.
#pragma once

#include "core/libraries.h"
#include "gen/mccl_table.h"
#include "gen/mublasLt_table.h"
#include "gen/mublas_table.h"

namespace torchada {

const LibraryBackend<MublasTable>& mublas_backend();
const LibraryBackend<MublasLtTable>& mublasLt_backend();
const LibraryBackend<McclTable>& mccl_backend();

}  // namespace torchada
