// What torchada-check reads from one ELF file, with libelf over a read-only mapping: the ELF and
// section headers, the dynamic section, .dynsym/.dynstr, .gnu.version, .gnu.version_r,
// .gnu.version_d, .symtab (names only, for a statically linked CUDA runtime), and the headers of
// embedded NVIDIA device code. Nothing else of the file is touched, so the cost does not grow
// with the size of .text or of the device code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fatbin.h"

namespace torchada::check {

struct ImportedSymbol {
  std::string name;
  std::string version;  // version node required (.gnu.version_r), empty when unversioned
  std::string file;     // the library that node belongs to (vn_file), empty when unversioned
  bool weak = false;
};

struct DeviceSection {
  std::string name;  // .nv_fatbin | __nv_relfatbin
  uint64_t size = 0;
  FatbinSummary fatbin;
};

struct ElfScan {
  std::string elf_class;  // ELF32 | ELF64
  std::string type;       // EXEC | DYN | REL | CORE | OTHER
  std::string machine;    // x86-64, aarch64, ... or "machine <n>"
  std::string soname;
  std::vector<std::string> needed;
  std::vector<std::string> version_definitions;  // .gnu.version_d names, base included
  std::vector<ImportedSymbol> imports;           // CUDA-looking undefined symbols only
  // Defined cuda* / __cuda* names (functions and objects), .dynsym first, then .symtab.
  std::vector<std::string> defined_cuda;
  bool exports_cuda = false;  // some defined_cuda entry is in .dynsym
  bool has_symtab = false;
  uint64_t cudart_static_marker_symbols = 0;  // libcudart_static_* names in .symtab
  bool imports_register_fatbin = false;       // __cudaRegisterFatBinary is imported
  bool has_fatbin_segment = false;            // .nvFatBinSegment: registration wrappers
  uint64_t fatbin_wrappers = 0;               // its size / 24 (one wrapper per registered module)
  std::vector<DeviceSection> device_sections;
  std::vector<std::string> notes;
};

// Scans the file at `path`. False with a one-line `error` (naming what is wrong, not the path)
// for files that cannot be read or are not well-formed ELF.
bool ScanElfFile(const std::string& path, ElfScan* out, std::string* error);
// The same on an image in memory (the fuzzing entry point). libelf may convert the image in
// place, so it must be writable.
bool ScanElfImage(unsigned char* data, size_t size, ElfScan* out, std::string* error);

// Names torchada-check reports: cuda*, __cuda*, cublas* (cublasLt*), nccl*, pnccl*, cu[A-Z]*
// (driver API), and NVIDIA libraries torchada does not serve (cufft*, curand*, cusparse*,
// cusolver*, cudnn*).
bool IsCudaName(const char* name);
// Library family a name's prefix points at: "cudart", "cublasLt", "cublas", "nccl", "cuda"
// (driver), "cufft"...; empty when the name is not CUDA-looking.
std::string FamilyFromName(const std::string& name);

}  // namespace torchada::check
