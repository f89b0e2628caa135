// The muBLASLt algorithms behind the shim's cuBLASLt algorithm records (shim/cublasLt/algos.cc),
// interned in one process-wide, append-only table shared by both CUDA ABIs' exports (a record made
// by libcublasLt.so.13's cublasLtMatmulAlgoInit is read by .12's calls as well): each distinct
// 64-byte muBLASLt algorithm once, named by its index. Few distinct ones exist (one per algorithm
// and configuration muBLASLt was given), so the table stays small; it is never freed (usable after
// atexit).
#pragma once

#include <cstdint>

namespace torchada {
namespace lt_algos {

// A muBLASLt algorithm's bytes (mublasLtMatmulAlgo_t: 64 bytes, checked where it is used).
struct Blob {
  uint64_t data[8];
};

// The index of `b`, added if new; false when the table is full (or memory ran out).
bool intern(const Blob& b, uint32_t& index);
// The algorithm at `index`; null when there is none. Lock-free.
const Blob* entry(uint32_t index);

}  // namespace lt_algos
}  // namespace torchada
