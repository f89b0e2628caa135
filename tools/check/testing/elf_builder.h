// Synthetic ELF files for torchada-check's tests, benchmark and fuzzing corpus: a shared object
// with exactly the dynamic symbols, version requirements and sections asked for, fat binaries
// and cubins. Little-endian ELF64 only. Sections may be larger than their contents; the rest is
// a hole (zeros), which WriteSparse leaves unallocated on disk.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace torchada::check::testing {

struct Section {
  std::string name;
  uint32_t type = 1;   // SHT_PROGBITS
  uint64_t flags = 2;  // SHF_ALLOC
  std::string data;
  uint64_t size = 0;  // 0: data.size(); larger: zero-filled tail
  uint64_t align = 8;
  uint32_t link = 0;
  uint32_t info = 0;
  uint64_t entsize = 0;
  // More bytes at offsets inside the section (a sparse section with scattered headers).
  std::vector<std::pair<uint64_t, std::string>> pieces = {};
};

// Chunks of bytes at file offsets; everything else is zero.
struct Image {
  std::vector<std::pair<uint64_t, std::string>> chunks;
  uint64_t size = 0;
};

// A bare ELF64 file: header, the sections (index 1..n, .shstrtab appended), section header
// table at the end.
Image RawElf(uint16_t type, uint16_t machine, const std::vector<Section>& sections);

struct Import {
  std::string name;
  std::string file;     // empty: unversioned
  std::string version;  // version node; empty: unversioned
  bool weak = false;
};

struct Spec {
  uint16_t type = 3;      // ET_DYN
  uint16_t machine = 62;  // EM_X86_64
  std::string soname;
  std::vector<std::string> needed;  // in addition to the files of versioned imports
  std::vector<Import> imports;
  std::vector<std::string> exports;              // defined in .dynsym
  std::vector<std::string> version_definitions;  // .gnu.version_d (first is the base)
  std::vector<std::string> symtab_functions;     // defined in .symtab (.symtab only if any)
  std::vector<Section> extra;                    // after the dynamic sections
};

Image Build(const Spec& spec);
std::string ToBytes(const Image& image);
bool WriteSparse(const Image& image, const std::string& path, std::string* error);
bool WriteBytes(const std::string& bytes, const std::string& path, std::string* error);

// A cubin: one .nv.info.<k> and .text.<k> per kernel, .text.<f> per device function.
std::string Cubin(const std::vector<std::string>& kernels,
                  const std::vector<std::string>& device_functions = {});

struct FatbinEntry {
  uint16_t kind = 2;  // 1 PTX, 2 ELF
  uint32_t arch = 80;
  bool compressed = false;  // flags 0x8000 and a zstd-looking payload
  std::string payload;
};
// Containers, each a list of entries.
std::string Fatbin(const std::vector<std::vector<FatbinEntry>>& containers);
// .nvFatBinSegment contents: `modules` registration wrappers.
std::string FatbinSegment(size_t modules);

}  // namespace torchada::check::testing
