#include "elf_builder.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

namespace torchada::check::testing {
namespace {

template <typename T>
std::string Bytes(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

void Put32(std::string* s, size_t off, uint32_t v) { std::memcpy(&(*s)[off], &v, 4); }
void Put64(std::string* s, size_t off, uint64_t v) { std::memcpy(&(*s)[off], &v, 8); }

uint64_t AlignUp(uint64_t v, uint64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

// String table with deduplication; offset 0 is the empty string.
class StrTab {
 public:
  StrTab() : data_(1, '\0') {}
  uint32_t Add(const std::string& s) {
    if (s.empty()) return 0;
    auto it = offsets_.find(s);
    if (it != offsets_.end()) return it->second;
    const auto off = static_cast<uint32_t>(data_.size());
    data_ += s;
    data_ += '\0';
    offsets_[s] = off;
    return off;
  }
  const std::string& data() const { return data_; }

 private:
  std::string data_;
  std::map<std::string, uint32_t> offsets_;
};

uint32_t ElfHash(const std::string& name) {
  uint32_t h = 0;
  for (unsigned char c : name) {
    h = (h << 4) + c;
    const uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

}  // namespace

Image RawElf(uint16_t type, uint16_t machine, const std::vector<Section>& in) {
  std::vector<Section> sections = in;
  StrTab shstr;
  std::vector<uint32_t> names;
  for (const Section& s : sections) names.push_back(shstr.Add(s.name));
  const uint32_t shstr_name = shstr.Add(".shstrtab");
  Section strtab;
  strtab.name = ".shstrtab";
  strtab.type = SHT_STRTAB;
  strtab.flags = 0;
  strtab.align = 1;
  strtab.data = shstr.data();
  sections.push_back(strtab);
  names.push_back(shstr_name);

  Image img;
  uint64_t off = sizeof(Elf64_Ehdr);
  std::string shdrs(sizeof(Elf64_Shdr), '\0');  // index 0
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    uint64_t size = s.size > s.data.size() ? s.size : s.data.size();
    for (const auto& [at, bytes] : s.pieces) size = std::max<uint64_t>(size, at + bytes.size());
    Elf64_Shdr sh{};
    sh.sh_name = names[i];
    sh.sh_type = s.type;
    sh.sh_flags = s.flags;
    sh.sh_addralign = s.align;
    sh.sh_link = s.link;
    sh.sh_info = s.info;
    sh.sh_entsize = s.entsize;
    sh.sh_size = size;
    if (s.type != SHT_NOBITS) {
      off = AlignUp(off, s.align);
      sh.sh_offset = off;
      if (!s.data.empty()) img.chunks.emplace_back(off, s.data);
      for (const auto& [at, bytes] : s.pieces) img.chunks.emplace_back(off + at, bytes);
      off += size;
    } else {
      sh.sh_offset = off;
    }
    shdrs += Bytes(sh);
  }
  off = AlignUp(off, 8);
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = type;
  eh.e_machine = machine;
  eh.e_version = EV_CURRENT;
  eh.e_shoff = off;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = static_cast<uint16_t>(sections.size() + 1);
  eh.e_shstrndx = static_cast<uint16_t>(sections.size());
  img.chunks.emplace(img.chunks.begin(), 0, Bytes(eh));
  img.chunks.emplace_back(off, shdrs);
  img.size = off + shdrs.size();
  return img;
}

Image Build(const Spec& spec) {
  StrTab dynstr;
  // Version indexes: 1 global; definitions from 1 (base) when present; requirements after.
  std::map<std::string, uint16_t> def_index;
  uint16_t next = 2;
  for (size_t i = 0; i < spec.version_definitions.size(); ++i) {
    def_index[spec.version_definitions[i]] = static_cast<uint16_t>(i + 1);
    next = static_cast<uint16_t>(i + 2);
  }
  std::map<std::string, std::map<std::string, uint16_t>> needs;  // file -> node -> index
  std::vector<std::string> files;
  for (const Import& imp : spec.imports) {
    if (imp.file.empty()) continue;
    if (!needs.count(imp.file)) files.push_back(imp.file);
    auto& nodes = needs[imp.file];
    if (!nodes.count(imp.version)) nodes[imp.version] = next++;
  }

  std::string dynsym(sizeof(Elf64_Sym), '\0');
  std::string versym(2, '\0');
  auto add_versym = [&](uint16_t v) { versym += Bytes(v); };
  for (const Import& imp : spec.imports) {
    Elf64_Sym s{};
    s.st_name = dynstr.Add(imp.name);
    s.st_info = ELF64_ST_INFO(imp.weak ? STB_WEAK : STB_GLOBAL, STT_FUNC);
    s.st_shndx = SHN_UNDEF;
    dynsym += Bytes(s);
    add_versym(imp.file.empty() ? uint16_t{1} : needs[imp.file][imp.version]);
  }
  const uint16_t export_version = spec.version_definitions.size() > 1 ? 2 : 1;
  for (const std::string& name : spec.exports) {
    Elf64_Sym s{};
    s.st_name = dynstr.Add(name);
    s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    s.st_shndx = SHN_ABS;
    s.st_value = 0x1000;
    dynsym += Bytes(s);
    add_versym(export_version);
  }

  std::string verneed;
  for (size_t f = 0; f < files.size(); ++f) {
    const auto& nodes = needs[files[f]];
    Elf64_Verneed vn{};
    vn.vn_version = 1;
    vn.vn_cnt = static_cast<uint16_t>(nodes.size());
    vn.vn_file = dynstr.Add(files[f]);
    vn.vn_aux = sizeof(Elf64_Verneed);
    vn.vn_next =
        f + 1 < files.size()
            ? static_cast<uint32_t>(sizeof(Elf64_Verneed) + nodes.size() * sizeof(Elf64_Vernaux))
            : 0;
    verneed += Bytes(vn);
    size_t k = 0;
    for (const auto& [node, index] : nodes) {
      Elf64_Vernaux va{};
      va.vna_hash = ElfHash(node);
      va.vna_other = index;
      va.vna_name = dynstr.Add(node);
      va.vna_next = ++k < nodes.size() ? sizeof(Elf64_Vernaux) : 0;
      verneed += Bytes(va);
    }
  }
  std::string verdef;
  for (size_t i = 0; i < spec.version_definitions.size(); ++i) {
    Elf64_Verdef vd{};
    vd.vd_version = 1;
    vd.vd_flags = i == 0 ? VER_FLG_BASE : 0;
    vd.vd_ndx = static_cast<uint16_t>(i + 1);
    vd.vd_cnt = 1;
    vd.vd_hash = ElfHash(spec.version_definitions[i]);
    vd.vd_aux = sizeof(Elf64_Verdef);
    vd.vd_next = i + 1 < spec.version_definitions.size()
                     ? static_cast<uint32_t>(sizeof(Elf64_Verdef) + sizeof(Elf64_Verdaux))
                     : 0;
    verdef += Bytes(vd);
    Elf64_Verdaux va{};
    va.vda_name = dynstr.Add(spec.version_definitions[i]);
    verdef += Bytes(va);
  }

  std::vector<std::string> needed = files;
  for (const std::string& n : spec.needed) {
    bool dup = false;
    for (const std::string& m : needed) dup = dup || m == n;
    if (!dup) needed.push_back(n);
  }
  std::string dynamic;
  auto add_dyn = [&](int64_t tag, uint64_t val) {
    Elf64_Dyn d{};
    d.d_tag = tag;
    d.d_un.d_val = val;
    dynamic += Bytes(d);
  };
  for (const std::string& n : needed) add_dyn(DT_NEEDED, dynstr.Add(n));
  if (!spec.soname.empty()) add_dyn(DT_SONAME, dynstr.Add(spec.soname));
  add_dyn(DT_NULL, 0);

  // Section indexes: 1 .dynsym, 2 .dynstr, 3 .gnu.version, 4 .gnu.version_r, 5 .dynamic, then
  // .gnu.version_d, .symtab/.strtab when present, then the extra sections.
  std::vector<Section> secs;
  Section s;
  s = Section{".dynsym", SHT_DYNSYM, SHF_ALLOC, dynsym, 0, 8, 2, 1, sizeof(Elf64_Sym)};
  secs.push_back(s);
  secs.push_back(Section{".dynstr", SHT_STRTAB, SHF_ALLOC, "", 0, 1, 0, 0, 0});
  secs.push_back(Section{".gnu.version", SHT_GNU_versym, SHF_ALLOC, versym, 0, 2, 1, 0, 2});
  secs.push_back(Section{".gnu.version_r", SHT_GNU_verneed, SHF_ALLOC, verneed, 0, 8, 2,
                         static_cast<uint32_t>(files.size()), 0});
  secs.push_back(Section{".dynamic", SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, dynamic, 0, 8, 2, 0,
                         sizeof(Elf64_Dyn)});
  if (!verdef.empty()) {
    secs.push_back(Section{".gnu.version_d", SHT_GNU_verdef, SHF_ALLOC, verdef, 0, 8, 2,
                           static_cast<uint32_t>(spec.version_definitions.size()), 0});
  }
  if (!spec.symtab_functions.empty()) {
    StrTab strtab;
    std::string symtab(sizeof(Elf64_Sym), '\0');
    for (const std::string& name : spec.symtab_functions) {
      Elf64_Sym sym{};
      sym.st_name = strtab.Add(name);
      sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
      sym.st_shndx = SHN_ABS;
      sym.st_value = 0x2000;
      symtab += Bytes(sym);
    }
    const auto strtab_index = static_cast<uint32_t>(secs.size() + 2);
    secs.push_back(
        Section{".symtab", SHT_SYMTAB, 0, symtab, 0, 8, strtab_index, 1, sizeof(Elf64_Sym)});
    secs.push_back(Section{".strtab", SHT_STRTAB, 0, strtab.data(), 0, 1, 0, 0, 0});
  }
  secs[1].data = dynstr.data();  // complete now
  for (const Section& e : spec.extra) secs.push_back(e);
  return RawElf(spec.type, spec.machine, secs);
}

std::string ToBytes(const Image& image) {
  std::string out(image.size, '\0');
  for (const auto& [off, bytes] : image.chunks) out.replace(off, bytes.size(), bytes);
  return out;
}

bool WriteSparse(const Image& image, const std::string& path, std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return *error = path + ": " + std::strerror(errno), false;
  bool ok = ftruncate(fd, static_cast<off_t>(image.size)) == 0;
  for (const auto& [off, bytes] : image.chunks) {
    ok = ok && pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(off)) ==
                   static_cast<ssize_t>(bytes.size());
  }
  if (!ok) *error = path + ": " + std::strerror(errno);
  return close(fd) == 0 && ok;
}

bool WriteBytes(const std::string& bytes, const std::string& path, std::string* error) {
  Image img;
  img.size = bytes.size();
  img.chunks.emplace_back(0, bytes);
  return WriteSparse(img, path, error);
}

std::string Cubin(const std::vector<std::string>& kernels,
                  const std::vector<std::string>& device_functions) {
  std::vector<Section> secs;
  const std::string info(16, '\x04');
  secs.push_back(Section{".nv.info", 0x70000000, 0, info, 0, 4, 0, 0, 0});
  for (const std::string& k : kernels) {
    secs.push_back(Section{".nv.info." + k, 0x70000000, 0x40, info, 0, 4, 0, 0, 0});
  }
  for (const std::string& k : kernels) {
    secs.push_back(Section{".text." + k, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
                           std::string(32, '\x01'), 0, 128, 0, 0, 0});
  }
  for (const std::string& f : device_functions) {
    secs.push_back(Section{".text." + f, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
                           std::string(32, '\x02'), 0, 128, 0, 0, 0});
  }
  return ToBytes(RawElf(ET_EXEC, 190 /*EM_CUDA*/, secs));
}

std::string Fatbin(const std::vector<std::vector<FatbinEntry>>& containers) {
  std::string out;
  for (const auto& entries : containers) {
    std::string body;
    for (const FatbinEntry& e : entries) {
      std::string payload = e.payload;
      if (e.compressed) payload = std::string("\x28\xb5\x2f\xfd", 4) + payload;
      const uint64_t padded = AlignUp(payload.size(), 8);
      std::string h(64, '\0');
      const uint16_t kind = e.kind, version = 0x0101;
      std::memcpy(&h[0], &kind, 2);
      std::memcpy(&h[2], &version, 2);
      Put32(&h, 4, 64);
      Put64(&h, 8, padded);
      Put32(&h, 16, static_cast<uint32_t>(payload.size()));
      Put32(&h, 24, 0x10008);
      Put32(&h, 28, e.arch);
      Put64(&h, 40, e.compressed ? 0x8011 : 0x11);
      Put64(&h, 56, e.compressed ? e.payload.size() * 4 : 0);
      payload.resize(padded, '\0');
      body += h + payload;
    }
    std::string c(16, '\0');
    Put32(&c, 0, 0xBA55ED50u);
    const uint16_t version = 1, header = 16;
    std::memcpy(&c[4], &version, 2);
    std::memcpy(&c[6], &header, 2);
    Put64(&c, 8, body.size());
    out += c + body;
  }
  return out;
}

std::string FatbinSegment(size_t modules) {
  std::string out;
  for (size_t i = 0; i < modules; ++i) {
    std::string w(24, '\0');
    Put32(&w, 0, 0x466243b1u);
    Put32(&w, 4, 1);
    Put64(&w, 8, 0x4000 + i * 0x100);
    out += w;
  }
  return out;
}

}  // namespace torchada::check::testing
