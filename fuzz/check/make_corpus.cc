// Writes the seed corpus for torchada-check's fuzzer (fuzz/corpus/check/): small ELF files made
// by tools/check/testing/elf_builder (valid ones of every shape the checker distinguishes), then
// truncated and corrupted variants of them. Deterministic: the same bytes on every run, so that
// tools.check.corpus_up_to_date can compare the checked-in corpus with what this program makes.
//
//   check_make_corpus DIR      (fuzz/check/make_corpus.sh runs it on fuzz/corpus/check)
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "elf_builder.h"

namespace tb = torchada::check::testing;

namespace {

constexpr size_t kEhdrShoff = 0x28;
constexpr size_t kEhdrShnum = 0x3c;
constexpr size_t kEhdrShstrndx = 0x3e;
constexpr size_t kShdrSize = 64;

uint64_t Get(const std::string& b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && off + i < b.size(); ++i) {
    v |= uint64_t{static_cast<unsigned char>(b[off + i])} << (8 * i);
  }
  return v;
}

void Set(std::string* b, size_t off, size_t n, uint64_t v) {
  for (size_t i = 0; i < n && off + i < b->size(); ++i) {
    (*b)[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

// Offset of the section header named `name` (ELF64 LE as the builder writes them), or 0.
size_t Shdr(const std::string& b, const std::string& name) {
  const uint64_t shoff = Get(b, kEhdrShoff, 8);
  const uint64_t shnum = Get(b, kEhdrShnum, 2);
  const uint64_t strndx = Get(b, kEhdrShstrndx, 2);
  const uint64_t stroff = Get(b, shoff + strndx * kShdrSize + 0x18, 8);
  for (uint64_t i = 1; i < shnum; ++i) {
    const uint64_t h = shoff + i * kShdrSize;
    const uint64_t n = Get(b, h, 4);
    if (b.compare(stroff + n, name.size() + 1, name.c_str(), name.size() + 1) == 0) return h;
  }
  return 0;
}
uint64_t SectionOffset(const std::string& b, const std::string& name) {
  return Get(b, Shdr(b, name) + 0x18, 8);
}

tb::Spec CudaProgram() {
  tb::Spec s;
  s.needed = {"libc.so.6"};
  s.imports = {{"cudaMalloc", "libcudart.so.13", "libcudart.so.13"},
               {"cudaFree", "libcudart.so.13", "libcudart.so.13"},
               {"cudaGetDeviceProperties", "libcudart.so.13", "libcudart.so.13"},
               {"cudaCreateTextureObject", "libcudart.so.13", "libcudart.so.13"},
               {"cudaLaunchKernel", "libcudart.so.13", "libcudart.so.13"},
               {"cudaMemAdvise", "libcudart.so.12", "libcudart.so.12"},
               {"cublasLtMatmul", "libcublasLt.so.13", "libcublasLt.so.13"},
               {"__cudaRegisterFatBinary", "libcudart.so.13", "libcudart.so.13"},
               {"malloc", "libc.so.6", "GLIBC_2.2.5"},
               {"cudaWeakOne", "libcudart.so.13", "libcudart.so.13", true}};
  return s;
}

tb::Spec WithDeviceCode() {
  tb::Spec s = CudaProgram();
  s.extra.push_back({".nv_fatbin", 1, 2,
                     tb::Fatbin({{{2, 80, false, tb::Cubin({"_Z3addPfi", "_Z3mulPfi"}, {"f"})},
                                  {1, 80, true, "ptx text"}},
                                 {{2, 90, true, "compressed cubin"}}})});
  s.extra.push_back({"__nv_relfatbin", 1, 2, tb::Fatbin({{{2, 80, false, tb::Cubin({"k"})}}})});
  s.extra.push_back({".nvFatBinSegment", 1, 3, tb::FatbinSegment(2)});
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  mkdir(dir.c_str(), 0755);
  std::map<std::string, std::string> files;

  // Valid files, one per shape.
  files["valid_minimal.so"] = tb::ToBytes(tb::Build(tb::Spec{}));
  files["valid_program.so"] = tb::ToBytes(tb::Build(CudaProgram()));
  {
    tb::Spec s;
    s.needed = {"libcudart.so.12", "libnccl.so.2", "libcuda.so.1"};
    s.imports = {{"cudaMalloc", "", ""},
                 {"ncclAllReduce", "", ""},
                 {"cuInit", "", ""},
                 {"cufftPlan1d", "", ""}};
    files["valid_unversioned.so"] = tb::ToBytes(tb::Build(s));
  }
  {
    tb::Spec s;
    s.soname = "libcudart.so.13";
    s.version_definitions = {"libcudart.so.13", "libcudart.so.13"};
    s.exports = {"cudaMalloc", "cudaFree", "__cudaRegisterFatBinary"};
    files["valid_replaced.so"] = tb::ToBytes(tb::Build(s));
  }
  {
    tb::Spec s;
    s.type = 2;
    s.symtab_functions = {"cudaMalloc", "__cudaRegisterFatBinary", "libcudart_static_0123", "main"};
    files["valid_static_runtime"] = tb::ToBytes(tb::Build(s));
  }
  const std::string device = tb::ToBytes(tb::Build(WithDeviceCode()));
  files["valid_device_code.so"] = device;
  {
    tb::Spec s;
    s.type = 1;
    s.symtab_functions = {"cudaMalloc"};
    files["valid_object.o"] = tb::ToBytes(tb::Build(s));
  }
  files["valid_cubin"] = tb::Cubin({"kernel_a", "kernel_b"});

  // Truncations of the richest file.
  for (size_t n : {size_t{16}, size_t{63}, size_t{64}, size_t{200}, device.size() / 2,
                   device.size() - 64, device.size() - 1}) {
    files["trunc_" + std::to_string(n)] = device.substr(0, n);
  }

  // Header corruptions.
  auto corrupt = [&](const char* name, size_t off, size_t n, uint64_t v) {
    std::string b = device;
    Set(&b, off, n, v);
    files[name] = b;
  };
  corrupt("hdr_shnum_huge", kEhdrShnum, 2, 0xffff);
  corrupt("hdr_shnum_zero_extended", kEhdrShnum, 2, 0);
  corrupt("hdr_shstrndx_out_of_range", kEhdrShstrndx, 2, 0x7ff0);
  corrupt("hdr_shstrndx_xindex", kEhdrShstrndx, 2, 0xffff);
  corrupt("hdr_shoff_middle", kEhdrShoff, 8, 0x101);
  corrupt("hdr_shentsize_small", 0x3a, 2, 40);
  corrupt("hdr_class_32", 4, 1, 1);
  corrupt("hdr_big_endian", 5, 1, 2);
  corrupt("hdr_phnum_with_no_phoff", 0x38, 2, 4);

  // Section corruptions, by name.
  auto corrupt_section = [&](const char* name, const char* section, size_t field, size_t n,
                             uint64_t v) {
    std::string b = device;
    const size_t h = Shdr(b, section);
    if (h) Set(&b, h + field, n, v);
    files[name] = b;
  };
  corrupt_section("sec_dynsym_link_self", ".dynsym", 0x28, 4, 1);
  corrupt_section("sec_dynsym_link_out", ".dynsym", 0x28, 4, 999);
  corrupt_section("sec_dynsym_size_odd", ".dynsym", 0x20, 8, 50);
  corrupt_section("sec_dynstr_size_zero", ".dynstr", 0x20, 8, 0);
  corrupt_section("sec_versym_short", ".gnu.version", 0x20, 8, 4);
  corrupt_section("sec_versym_type_nobits", ".gnu.version", 0x04, 4, 8);
  corrupt_section("sec_verneed_count_huge", ".gnu.version_r", 0x2c, 4, 0xffffff);
  corrupt_section("sec_dynamic_size_huge", ".dynamic", 0x20, 8, uint64_t{1} << 40);
  corrupt_section("sec_fatbin_offset_past_end", ".nv_fatbin", 0x18, 8, uint64_t{1} << 33);
  corrupt_section("sec_fatbin_nobits", ".nv_fatbin", 0x04, 4, 8);
  corrupt_section("sec_segment_size_odd", ".nvFatBinSegment", 0x20, 8, 25);

  // Contents corruptions: version chains, fat binary headers, the embedded cubin.
  auto corrupt_at = [&](const char* name, const char* section, size_t at, size_t n, uint64_t v) {
    std::string b = device;
    const uint64_t off = SectionOffset(b, section);
    if (off) Set(&b, off + at, n, v);
    files[name] = b;
  };
  corrupt_at("ver_need_next_loop", ".gnu.version_r", 12, 4, 0);
  corrupt_at("ver_need_next_huge", ".gnu.version_r", 12, 4, 0xfffffff0);
  corrupt_at("ver_need_aux_huge", ".gnu.version_r", 8, 4, 0x7ffffff0);
  corrupt_at("ver_need_file_off", ".gnu.version_r", 4, 4, 0xffffff);
  corrupt_at("ver_aux_next_huge", ".gnu.version_r", 16 + 12, 4, 0xfffffff0);
  corrupt_at("ver_aux_cnt_huge", ".gnu.version_r", 2, 2, 0xffff);
  corrupt_at("fat_magic", ".nv_fatbin", 0, 4, 0x12345678);
  corrupt_at("fat_size_huge", ".nv_fatbin", 8, 8, ~uint64_t{0});
  corrupt_at("fat_header_size_small", ".nv_fatbin", 6, 2, 4);
  corrupt_at("fat_entry_header_zero", ".nv_fatbin", 16 + 4, 4, 0);
  corrupt_at("fat_entry_payload_huge", ".nv_fatbin", 16 + 8, 8, uint64_t{1} << 62);
  corrupt_at("fat_entry_kind_other", ".nv_fatbin", 16, 2, 7);
  corrupt_at("fat_cubin_shoff_huge", ".nv_fatbin", 16 + 64 + 0x28, 8, uint64_t{1} << 50);
  corrupt_at("fat_cubin_shnum_huge", ".nv_fatbin", 16 + 64 + 0x3c, 2, 0xffff);
  corrupt_at("fat_cubin_shstrndx_bad", ".nv_fatbin", 16 + 64 + 0x3e, 2, 0xfff0);
  corrupt_at("fat_cubin_shnum_extended", ".nv_fatbin", 16 + 64 + 0x3c, 2, 0);

  // Not ELF at all.
  files["not_elf_text"] = "just some text, not an ELF file\n";
  files["not_elf_ar"] = "!<arch>\n/               0           0     0     0       4         `\n";
  files["empty"] = "";

  for (const auto& [name, bytes] : files) {
    std::string err;
    if (!tb::WriteBytes(bytes, dir + "/" + name, &err)) {
      std::fprintf(stderr, "%s\n", err.c_str());
      return 1;
    }
  }
  std::printf("%zu files in %s\n", files.size(), dir.c_str());
  return 0;
}
