#include "elf_exports.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>

namespace {

struct Mapping {
  const unsigned char* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data) munmap(const_cast<unsigned char*>(data), size);
  }
  bool in(size_t off, size_t len) const { return off <= size && len <= size - off; }
};

}  // namespace

namespace {

// What both readers need: the mapped file, its dynamic symbol table and string table.
struct DynamicSymbols {
  Mapping m;
  const Elf64_Shdr* sh = nullptr;
  const Elf64_Shdr* dynsym = nullptr;
  const Elf64_Shdr* versym = nullptr;
  const Elf64_Shdr* verdef = nullptr;
  const Elf64_Shdr* verneed = nullptr;
  const Elf64_Shdr* strtab = nullptr;
  std::string error;

  std::string str(size_t off) const {
    if (off >= strtab->sh_size) return {};
    const char* s = reinterpret_cast<const char*>(m.data + strtab->sh_offset + off);
    return std::string(s, strnlen(s, strtab->sh_size - off));
  }
};

void open_dynamic(const std::string& path, DynamicSymbols& d) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    d.error = path + ": cannot open";
    return;
  }
  struct stat st {};
  fstat(fd, &st);
  Mapping& m = d.m;
  m.size = static_cast<size_t>(st.st_size);
  void* p = m.size ? mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  close(fd);
  if (p == MAP_FAILED) {
    m.size = 0;
    d.error = path + ": cannot map";
    return;
  }
  m.data = static_cast<const unsigned char*>(p);
  if (!m.in(0, sizeof(Elf64_Ehdr)) || std::memcmp(m.data, ELFMAG, SELFMAG) != 0 ||
      m.data[EI_CLASS] != ELFCLASS64) {
    d.error = path + ": not a 64-bit ELF file";
    return;
  }
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(m.data);
  if (!m.in(eh->e_shoff, size_t{eh->e_shnum} * sizeof(Elf64_Shdr))) {
    d.error = path + ": section headers out of range";
    return;
  }
  d.sh = reinterpret_cast<const Elf64_Shdr*>(m.data + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (d.sh[i].sh_type == SHT_DYNSYM) d.dynsym = &d.sh[i];
    if (d.sh[i].sh_type == SHT_GNU_versym) d.versym = &d.sh[i];
    if (d.sh[i].sh_type == SHT_GNU_verdef) d.verdef = &d.sh[i];
    if (d.sh[i].sh_type == SHT_GNU_verneed) d.verneed = &d.sh[i];
  }
  if (!d.dynsym || d.dynsym->sh_link >= eh->e_shnum) {
    d.error = path + ": no dynamic symbol table";
    return;
  }
  d.strtab = &d.sh[d.dynsym->sh_link];
  if (!m.in(d.dynsym->sh_offset, d.dynsym->sh_size) ||
      !m.in(d.strtab->sh_offset, d.strtab->sh_size))
    d.error = path + ": dynamic symbol table out of range";
}

}  // namespace

ElfImports read_elf_imports(const std::string& path) {
  ElfImports out;
  DynamicSymbols d;
  open_dynamic(path, d);
  if (!d.error.empty()) {
    out.error = d.error;
    return out;
  }
  const Mapping& m = d.m;
  std::map<unsigned, std::string> nodes;  // version index -> required node name
  if (d.verneed && m.in(d.verneed->sh_offset, d.verneed->sh_size)) {
    size_t off = d.verneed->sh_offset;
    for (unsigned i = 0; i < d.verneed->sh_info && m.in(off, sizeof(Elf64_Verneed)); ++i) {
      const auto* vn = reinterpret_cast<const Elf64_Verneed*>(m.data + off);
      const std::string file = d.str(vn->vn_file);
      size_t aoff = off + vn->vn_aux;
      for (unsigned j = 0; j < vn->vn_cnt && m.in(aoff, sizeof(Elf64_Vernaux)); ++j) {
        const auto* aux = reinterpret_cast<const Elf64_Vernaux*>(m.data + aoff);
        nodes[aux->vna_other & 0x7fff] = d.str(aux->vna_name);
        out.libraries[d.str(aux->vna_name)] = file;
        if (aux->vna_next == 0) break;
        aoff += aux->vna_next;
      }
      if (vn->vn_next == 0) break;
      off += vn->vn_next;
    }
  }
  const size_t count = d.dynsym->sh_size / sizeof(Elf64_Sym);
  const auto* syms = reinterpret_cast<const Elf64_Sym*>(m.data + d.dynsym->sh_offset);
  const bool have_versym = d.versym && m.in(d.versym->sh_offset, count * sizeof(Elf64_Half));
  for (size_t i = 1; i < count; ++i) {
    const Elf64_Sym& s = syms[i];
    if (s.st_shndx != SHN_UNDEF || ELF64_ST_BIND(s.st_info) == STB_LOCAL) continue;
    const int type = ELF64_ST_TYPE(s.st_info);
    if (type != STT_FUNC && type != STT_NOTYPE) continue;
    std::string name = d.str(s.st_name);
    if (name.empty()) continue;
    if (have_versym) {
      Elf64_Half v = reinterpret_cast<const Elf64_Half*>(m.data + d.versym->sh_offset)[i];
      auto it = nodes.find(v & 0x7fff);
      if (it != nodes.end()) name += "@" + it->second;
    }
    out.names.insert(name);
  }
  return out;
}

ElfExports read_elf_exports(const std::string& path) {
  ElfExports out;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {{}, path + ": cannot open"};
  struct stat st {};
  fstat(fd, &st);
  Mapping m;
  m.size = static_cast<size_t>(st.st_size);
  void* p = m.size ? mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  close(fd);
  if (p == MAP_FAILED) return {{}, path + ": cannot map"};
  m.data = static_cast<const unsigned char*>(p);
  if (!m.in(0, sizeof(Elf64_Ehdr)) || std::memcmp(m.data, ELFMAG, SELFMAG) != 0 ||
      m.data[EI_CLASS] != ELFCLASS64)
    return {{}, path + ": not a 64-bit ELF file"};
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(m.data);
  if (!m.in(eh->e_shoff, size_t{eh->e_shnum} * sizeof(Elf64_Shdr)))
    return {{}, path + ": section headers out of range"};
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(m.data + eh->e_shoff);
  const Elf64_Shdr *dynsym = nullptr, *versym = nullptr, *verdef = nullptr;
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type == SHT_DYNSYM) dynsym = &sh[i];
    if (sh[i].sh_type == SHT_GNU_versym) versym = &sh[i];
    if (sh[i].sh_type == SHT_GNU_verdef) verdef = &sh[i];
  }
  if (!dynsym || dynsym->sh_link >= eh->e_shnum) return {{}, path + ": no dynamic symbol table"};
  const Elf64_Shdr& strtab = sh[dynsym->sh_link];
  if (!m.in(dynsym->sh_offset, dynsym->sh_size) || !m.in(strtab.sh_offset, strtab.sh_size))
    return {{}, path + ": dynamic symbol table out of range"};
  auto str = [&](size_t off) -> std::string {
    if (off >= strtab.sh_size) return {};
    const char* s = reinterpret_cast<const char*>(m.data + strtab.sh_offset + off);
    return std::string(s, strnlen(s, strtab.sh_size - off));
  };
  std::map<unsigned, std::string> nodes;  // version index -> node name
  if (verdef && m.in(verdef->sh_offset, verdef->sh_size)) {
    size_t off = verdef->sh_offset;
    for (unsigned i = 0; i < verdef->sh_info && m.in(off, sizeof(Elf64_Verdef)); ++i) {
      const auto* vd = reinterpret_cast<const Elf64_Verdef*>(m.data + off);
      if (m.in(off + vd->vd_aux, sizeof(Elf64_Verdaux))) {
        const auto* aux = reinterpret_cast<const Elf64_Verdaux*>(m.data + off + vd->vd_aux);
        if (!(vd->vd_flags & VER_FLG_BASE)) nodes[vd->vd_ndx] = str(aux->vda_name);
      }
      if (vd->vd_next == 0) break;
      off += vd->vd_next;
    }
  }
  const size_t count = dynsym->sh_size / sizeof(Elf64_Sym);
  const auto* syms = reinterpret_cast<const Elf64_Sym*>(m.data + dynsym->sh_offset);
  const bool have_versym = versym && m.in(versym->sh_offset, count * sizeof(Elf64_Half));
  for (size_t i = 1; i < count; ++i) {
    const Elf64_Sym& s = syms[i];
    if (s.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s.st_info) != STT_FUNC) continue;
    if (ELF64_ST_BIND(s.st_info) == STB_LOCAL) continue;
    std::string name = str(s.st_name);
    if (have_versym) {
      Elf64_Half v = reinterpret_cast<const Elf64_Half*>(m.data + versym->sh_offset)[i];
      auto it = nodes.find(v & 0x7fff);
      if (it != nodes.end()) name += ((v & 0x8000) ? "@" : "@@") + it->second;
    }
    out.names.insert(name);
  }
  return out;
}
