#include "fatbin.h"

#include <cstring>

namespace torchada::check {
namespace {

constexpr uint32_t kContainerMagic = 0xBA55ED50u;
constexpr uint64_t kFlagCompressedLz4 = 0x2000;
constexpr uint64_t kFlagCompressedZstd = 0x8000;
constexpr uint16_t kKindPtx = 1;
constexpr uint16_t kKindElf = 2;
// Bounds on what one section may make us walk: entries (each a page touched at most), and zero
// padding between containers (beyond it, the rest of the section is reported as not understood
// instead of scanned).
constexpr size_t kMaxEntriesWalked = size_t{1} << 24;
constexpr uint64_t kMaxPadding = 4096;

template <typename T>
T Load(const unsigned char* p) {  // little-endian, unaligned
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(p[i]) << (8 * i));
  return v;
}

bool InRange(size_t size, uint64_t off, uint64_t len) { return off <= size && len <= size - off; }

}  // namespace

bool CubinKernels(const unsigned char* data, size_t size, std::set<std::string>* kernels) {
  // ELF64 little-endian header fields we need.
  if (size < 64 || std::memcmp(data,
                               "\x7f"
                               "ELF",
                               4) != 0) {
    return false;
  }
  if (data[4] != 2 /*ELFCLASS64*/ || data[5] != 1 /*ELFDATA2LSB*/) return false;
  const uint64_t shoff = Load<uint64_t>(data + 0x28);
  const uint16_t shentsize = Load<uint16_t>(data + 0x3a);
  uint64_t shnum = Load<uint16_t>(data + 0x3c);
  uint32_t shstrndx = Load<uint16_t>(data + 0x3e);
  if (shoff == 0) return true;  // no sections, no kernels
  if (shentsize < 64 || !InRange(size, shoff, shentsize)) return false;
  // Extended numbering: the real counts live in section 0.
  if (shnum == 0) shnum = Load<uint64_t>(data + shoff + 0x20);
  if (shstrndx == 0xffff) shstrndx = Load<uint32_t>(data + shoff + 0x28);
  if (shnum == 0 || shnum > (size - shoff) / shentsize) return false;
  if (shstrndx >= shnum) return false;
  const unsigned char* strhdr = data + shoff + uint64_t{shstrndx} * shentsize;
  const uint64_t str_off = Load<uint64_t>(strhdr + 0x18);
  const uint64_t str_size = Load<uint64_t>(strhdr + 0x20);
  if (!InRange(size, str_off, str_size)) return false;
  const char* strs = reinterpret_cast<const char*>(data + str_off);
  static constexpr char kPrefix[] = ".nv.info.";
  constexpr size_t kPrefixLen = sizeof(kPrefix) - 1;
  for (uint64_t i = 1; i < shnum; ++i) {
    const unsigned char* sh = data + shoff + i * shentsize;
    const uint32_t name = Load<uint32_t>(sh);
    if (name >= str_size) continue;
    const size_t len = strnlen(strs + name, str_size - name);
    if (len > kPrefixLen && std::memcmp(strs + name, kPrefix, kPrefixLen) == 0) {
      kernels->emplace(strs + name + kPrefixLen, len - kPrefixLen);
    }
  }
  return true;
}

void WalkFatbin(const unsigned char* data, size_t size, FatbinSummary* out) {
  uint64_t off = 0;
  size_t walked = 0;
  uint64_t padding = 0;
  while (off < size) {
    // Containers are 8-byte aligned; zero padding may sit between them.
    if (off % 8) off += 8 - off % 8;
    if (off >= size) break;
    if (!InRange(size, off, 16)) {
      bool zeros = true;
      for (uint64_t i = off; i < size; ++i) zeros = zeros && data[i] == 0;
      if (!zeros) out->error = "truncated container header at offset " + std::to_string(off);
      break;
    }
    const unsigned char* c = data + off;
    const uint32_t magic = Load<uint32_t>(c);
    if (Load<uint64_t>(c) == 0 && Load<uint64_t>(c + 8) == 0) {
      padding += 16;
      if (padding > kMaxPadding) {
        out->error = "more than " + std::to_string(kMaxPadding) + " zero bytes at offset " +
                     std::to_string(off - kMaxPadding);
        break;
      }
      off += 16;
      continue;
    }
    padding = 0;
    if (magic != kContainerMagic) {
      out->error = "no fatbin container magic at offset " + std::to_string(off);
      break;
    }
    const uint16_t header_size = Load<uint16_t>(c + 6);
    const uint64_t body_size = Load<uint64_t>(c + 8);
    if (header_size < 16 || !InRange(size, off, header_size) ||
        !InRange(size, off + header_size, body_size)) {
      out->error = "container at offset " + std::to_string(off) + " runs past the section";
      break;
    }
    ++out->containers;
    bool readable_cubin = false;
    uint64_t e = off + header_size;
    const uint64_t end = off + header_size + body_size;
    while (e < end) {
      if (++walked > kMaxEntriesWalked) {
        out->error = "more than " + std::to_string(kMaxEntriesWalked) + " entries";
        out->exact = false;
        return;
      }
      if (end - e < 16) {
        out->error = "truncated entry header at offset " + std::to_string(e);
        break;
      }
      const unsigned char* h = data + e;
      const uint16_t kind = Load<uint16_t>(h);
      const uint32_t entry_header = Load<uint32_t>(h + 4);
      const uint64_t payload = Load<uint64_t>(h + 8);
      if (entry_header < 16 || entry_header > end - e || payload > end - e - entry_header) {
        out->error = "entry at offset " + std::to_string(e) + " runs past its container";
        break;
      }
      ++out->entries;
      const uint32_t arch = entry_header >= 32 ? Load<uint32_t>(h + 28) : 0;
      const uint64_t flags = entry_header >= 48 ? Load<uint64_t>(h + 40) : 0;
      const unsigned char* p = h + entry_header;
      const bool compressed = (flags & (kFlagCompressedLz4 | kFlagCompressedZstd)) != 0;
      if (compressed) ++out->compressed_entries;
      if (kind == kKindElf) {
        ++out->elf_entries;
        if (arch) out->architectures.insert("sm_" + std::to_string(arch));
        if (!compressed) {
          if (CubinKernels(p, static_cast<size_t>(payload), &out->kernels)) {
            readable_cubin = true;
          } else {
            ++out->unreadable_cubins;
          }
        }
      } else if (kind == kKindPtx) {
        ++out->ptx_entries;
        if (arch) out->architectures.insert("compute_" + std::to_string(arch));
      } else {
        ++out->other_entries;
      }
      e += entry_header + payload;
    }
    if (!readable_cubin) {
      ++out->containers_without_cubin;
      out->exact = false;
    }
    if (!out->error.empty()) break;
    off = end;
  }
  if (!out->error.empty()) out->exact = false;
}

}  // namespace torchada::check
