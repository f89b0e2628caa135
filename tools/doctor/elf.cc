// The ELF facts the doctor needs of a library or program, read with libelf through a read-only
// descriptor: SONAME, DT_NEEDED, version definitions, defined dynamic symbols, PT_INTERP.
// The doctor never loads a MUSA library itself; what runs is in the probe (a child process).
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>

#include "doctor.h"

namespace torchada::doctor {

bool ElfInfo::Defines(const std::string& name) const {
  return std::binary_search(defined.begin(), defined.end(), name);
}

ElfInfo ReadElf(const std::string& path) {
  ElfInfo info;
  if (elf_version(EV_CURRENT) == EV_NONE) {
    info.error = "libelf cannot be initialised";
    return info;
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    info.error = "cannot open";
    return info;
  }
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    info.error = "not an ELF file";
    if (elf) elf_end(elf);
    close(fd);
    return info;
  }
  GElf_Ehdr eh{};
  if (gelf_getehdr(elf, &eh) == nullptr) {
    info.error = "malformed ELF header";
    elf_end(elf);
    close(fd);
    return info;
  }
  size_t phnum = 0;
  elf_getphdrnum(elf, &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph{};
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_INTERP)
      info.has_interp = true;
  }
  info.is_executable = eh.e_type == ET_EXEC || (eh.e_type == ET_DYN && info.has_interp);
  bool pie = false;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh{};
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    if (sh.sh_type == SHT_DYNAMIC) {
      size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      for (size_t i = 0; i < n; ++i) {
        GElf_Dyn d{};
        if (!gelf_getdyn(data, static_cast<int>(i), &d)) break;
        if (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_PIE)) pie = true;
        if (d.d_tag != DT_SONAME && d.d_tag != DT_NEEDED) continue;
        const char* s = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
        if (s == nullptr) continue;
        if (d.d_tag == DT_SONAME)
          info.soname = s;
        else
          info.needed.emplace_back(s);
      }
    } else if (sh.sh_type == SHT_DYNSYM) {
      size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      for (size_t i = 1; i < n; ++i) {
        GElf_Sym sym{};
        if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
        if (sym.st_shndx == SHN_UNDEF) continue;
        if (GELF_ST_BIND(sym.st_info) == STB_LOCAL) continue;
        const char* s = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (s && *s) info.defined.emplace_back(s);
      }
    } else if (sh.sh_type == SHT_GNU_verdef) {
      size_t off = 0;
      for (size_t i = 0; i < sh.sh_info; ++i) {
        GElf_Verdef vd{};
        if (!gelf_getverdef(data, static_cast<int>(off), &vd)) break;
        GElf_Verdaux va{};
        if (!(vd.vd_flags & VER_FLG_BASE) &&
            gelf_getverdaux(data, static_cast<int>(off + vd.vd_aux), &va)) {
          if (const char* s = elf_strptr(elf, sh.sh_link, va.vda_name))
            info.version_definitions.emplace_back(s);
        }
        if (vd.vd_next == 0) break;
        off += vd.vd_next;
      }
    }
  }
  info.static_executable =
      !info.has_interp && (eh.e_type == ET_EXEC || (eh.e_type == ET_DYN && pie));
  std::sort(info.defined.begin(), info.defined.end());
  info.defined.erase(std::unique(info.defined.begin(), info.defined.end()), info.defined.end());
  info.ok = true;
  elf_end(elf);
  close(fd);
  return info;
}

}  // namespace torchada::doctor
