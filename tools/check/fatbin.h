// NVIDIA fat binaries (.nv_fatbin, __nv_relfatbin sections) walked header by header.
//
// A fatbin section is a sequence of containers: a 16-byte header (magic 0xBA55ED50, version,
// header size, size of what follows), then entries, each a header (kind: 1 PTX, 2 ELF cubin;
// header size; padded payload size; target architecture at +28; flags at +40, where 0x2000 and
// 0x8000 mark an LZ4 / zstd-compressed payload) and its payload. One container holds one
// translation unit's device code, once per target architecture.
//
// Kernels are counted in uncompressed cubins only, from their section headers: a kernel (entry
// function) has a `.nv.info.<name>` section; plain device functions do not. The count is the
// number of distinct names over all readable cubins. A container whose cubins are all compressed
// (NVIDIA's own libraries; nvcc when it saves space) or that has only PTX contributes no names,
// and makes the count a lower bound (`exact` false). Payloads are never decompressed or read
// beyond the cubin's ELF and section headers and its section-name table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace torchada::check {

struct FatbinSummary {
  uint64_t containers = 0;
  uint64_t entries = 0;
  uint64_t elf_entries = 0;
  uint64_t ptx_entries = 0;
  uint64_t other_entries = 0;
  uint64_t compressed_entries = 0;
  uint64_t unreadable_cubins = 0;         // uncompressed ELF payloads we could not parse
  uint64_t containers_without_cubin = 0;  // no readable cubin: kernels not counted there
  std::set<std::string> architectures;    // "sm_80", "compute_80" (PTX)
  std::set<std::string> kernels;          // distinct kernel names in readable cubins
  bool exact = true;                      // every container had a readable cubin
  std::string error;                      // set when the bytes stop making sense
};

// Walks `size` bytes of a fatbin section. Never reads outside [data, data + size).
void WalkFatbin(const unsigned char* data, size_t size, FatbinSummary* out);

// Kernel names of one cubin (ELF64 little-endian); false when it cannot be parsed.
bool CubinKernels(const unsigned char* data, size_t size, std::set<std::string>* kernels);

}  // namespace torchada::check
