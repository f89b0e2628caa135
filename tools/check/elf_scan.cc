#include "elf_scan.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "tables.h"

namespace torchada::check {
namespace {

constexpr size_t kMaxDefinedCuda = 4096;
constexpr size_t kWrapperSize = 24;  // magic, version, fatbin pointer, unused pointer

bool StartsWith(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

class Mapping {
 public:
  Mapping(int fd, size_t size) : size_(size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED) return;
    data_ = static_cast<unsigned char*>(p);
    // Headers are scattered: no read-ahead around each one.
    madvise(p, size, MADV_RANDOM);
  }
  ~Mapping() {
    if (data_) munmap(data_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  unsigned char* data_ = nullptr;
  size_t size_;
};

std::string ElfError() {
  const char* m = elf_errmsg(-1);
  return m ? m : "unknown libelf error";
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string MachineName(unsigned m) {
  switch (m) {
    case EM_X86_64:
      return "x86-64";
    case EM_386:
      return "i386";
    case EM_AARCH64:
      return "aarch64";
    case EM_ARM:
      return "arm";
    case EM_PPC64:
      return "ppc64";
    case EM_RISCV:
      return "riscv";
    case EM_S390:
      return "s390";
    case 190:
      return "cuda";  // EM_CUDA: a cubin
    default:
      return "machine " + std::to_string(m);
  }
}

std::string TypeName(unsigned t) {
  switch (t) {
    case ET_EXEC:
      return "EXEC";
    case ET_DYN:
      return "DYN";
    case ET_REL:
      return "REL";
    case ET_CORE:
      return "CORE";
    default:
      return "OTHER";
  }
}

const char* Str(Elf* e, size_t section, size_t offset) {
  const char* s = elf_strptr(e, section, offset);
  return s ? s : "";
}

bool NvidiaLibraryFamily(const std::string& family) {
  return StartsWith(family.c_str(), "cu") || StartsWith(family.c_str(), "nccl") ||
         StartsWith(family.c_str(), "nv");
}

struct Sections {
  Elf_Scn* dynsym = nullptr;
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynamic = nullptr;
  Elf_Scn* versym = nullptr;
  Elf_Scn* verneed = nullptr;
  Elf_Scn* verdef = nullptr;
  Elf_Scn* fatbin_segment = nullptr;
  std::vector<std::pair<Elf_Scn*, std::string>> device;
};

// Version index -> (file, node) from .gnu.version_r.
bool ReadVerneed(Elf* e, Elf_Scn* scn, std::map<unsigned, std::pair<std::string, std::string>>* out,
                 std::string* error) {
  GElf_Shdr sh;
  if (!gelf_getshdr(scn, &sh)) return *error = "bad .gnu.version_r header: " + ElfError(), false;
  Elf_Data* d = elf_getdata(scn, nullptr);
  if (!d) return *error = "cannot read .gnu.version_r: " + ElfError(), false;
  if (d->d_size > INT_MAX) return *error = ".gnu.version_r is implausibly large", false;
  uint64_t off = 0;
  // sh_info is the number of entries; never walk more than the data can hold.
  const uint64_t max_entries = d->d_size / sizeof(GElf_Verneed) + 1;
  for (uint64_t i = 0; i < sh.sh_info && i < max_entries; ++i) {
    GElf_Verneed vn;
    if (!gelf_getverneed(d, static_cast<int>(off), &vn)) {
      return *error = ".gnu.version_r entry at offset " + std::to_string(off) + " is out of range",
             false;
    }
    const std::string file = Str(e, sh.sh_link, vn.vn_file);
    uint64_t aoff = off + vn.vn_aux;
    const uint64_t max_aux = d->d_size / sizeof(GElf_Vernaux) + 1;
    for (uint64_t j = 0; j < vn.vn_cnt && j < max_aux; ++j) {
      GElf_Vernaux va;
      if (aoff > d->d_size || !gelf_getvernaux(d, static_cast<int>(aoff), &va)) {
        return *error = ".gnu.version_r auxiliary entry at offset " + std::to_string(aoff) +
                        " is out of range",
               false;
      }
      (*out)[va.vna_other & 0x7fff] = {file, Str(e, sh.sh_link, va.vna_name)};
      if (va.vna_next == 0) break;
      aoff += va.vna_next;
    }
    if (vn.vn_next == 0) break;
    off += vn.vn_next;
    if (off > d->d_size) {
      return *error = ".gnu.version_r chain leaves the section", false;
    }
  }
  return true;
}

bool ReadVerdef(Elf* e, Elf_Scn* scn, std::vector<std::string>* names, std::string* error) {
  GElf_Shdr sh;
  if (!gelf_getshdr(scn, &sh)) return *error = "bad .gnu.version_d header: " + ElfError(), false;
  Elf_Data* d = elf_getdata(scn, nullptr);
  if (!d) return *error = "cannot read .gnu.version_d: " + ElfError(), false;
  if (d->d_size > INT_MAX) return *error = ".gnu.version_d is implausibly large", false;
  uint64_t off = 0;
  const uint64_t max_entries = d->d_size / sizeof(GElf_Verdef) + 1;
  for (uint64_t i = 0; i < sh.sh_info && i < max_entries; ++i) {
    GElf_Verdef vd;
    if (!gelf_getverdef(d, static_cast<int>(off), &vd)) {
      return *error = ".gnu.version_d entry at offset " + std::to_string(off) + " is out of range",
             false;
    }
    GElf_Verdaux va;
    const uint64_t aoff = off + vd.vd_aux;
    if (vd.vd_cnt > 0 && aoff <= d->d_size && gelf_getverdaux(d, static_cast<int>(aoff), &va)) {
      names->push_back(Str(e, sh.sh_link, va.vda_name));
    }
    if (vd.vd_next == 0) break;
    off += vd.vd_next;
    if (off > d->d_size) return *error = ".gnu.version_d chain leaves the section", false;
  }
  return true;
}

void AddDefined(ElfScan* out, std::set<std::string>* seen, const char* name) {
  if (out->defined_cuda.size() >= kMaxDefinedCuda) return;
  if (seen->insert(name).second) out->defined_cuda.push_back(name);
}

bool ScanElf(Elf* e, uint64_t file_size, ElfScan* out, std::string* error) {
  if (elf_kind(e) == ELF_K_AR) return *error = "ar archive (static library); not checked", false;
  if (elf_kind(e) != ELF_K_ELF) return *error = "not an ELF file", false;
  GElf_Ehdr eh;
  if (!gelf_getehdr(e, &eh)) return *error = "bad ELF header: " + ElfError(), false;
  const int cls = gelf_getclass(e);
  out->elf_class = cls == ELFCLASS64 ? "ELF64" : cls == ELFCLASS32 ? "ELF32" : "ELF?";
  out->type = TypeName(eh.e_type);
  out->machine = MachineName(eh.e_machine);

  size_t shnum = 0, shstrndx = 0;
  if (elf_getshdrnum(e, &shnum) != 0) {
    return *error = "cannot read the section count: " + ElfError(), false;
  }
  if (shnum == 0) {
    size_t phnum = 0;
    if (elf_getphdrnum(e, &phnum) != 0)
      return *error = "no section headers, bad program headers", false;
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(e, static_cast<int>(i), &ph) && ph.p_type == PT_DYNAMIC) {
        return *error =
                   "no section headers (stripped with sstrip?): the dynamic symbol table "
                   "cannot be located",
               false;
      }
    }
    out->notes.push_back("no section headers and no dynamic section");
    return true;
  }
  const uint64_t shentsize = gelf_fsize(e, ELF_T_SHDR, 1, EV_CURRENT);
  if (eh.e_shoff > file_size || shentsize == 0 || shnum > (file_size - eh.e_shoff) / shentsize) {
    return *error = "section header table (offset " + Hex(eh.e_shoff) + ", " +
                    std::to_string(shnum) + " entries) extends past the end of the file (" +
                    std::to_string(file_size) + " bytes): truncated?",
           false;
  }
  if (elf_getshdrstrndx(e, &shstrndx) != 0) {
    return *error = "cannot find the section name table: " + ElfError(), false;
  }
  if (shstrndx >= shnum) {
    return *error = "section name table index " + std::to_string(shstrndx) + " out of range", false;
  }

  Sections s;
  for (Elf_Scn* scn = elf_nextscn(e, nullptr); scn; scn = elf_nextscn(e, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) {
      return *error = "bad section header " + std::to_string(elf_ndxscn(scn)) + ": " + ElfError(),
             false;
    }
    const char* name = Str(e, shstrndx, sh.sh_name);
    if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL &&
        (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset)) {
      return *error = std::string("section ") +
                      (*name ? name : "#" + std::to_string(elf_ndxscn(scn))) + " (offset " +
                      Hex(sh.sh_offset) + ", size " + Hex(sh.sh_size) +
                      ") extends past the end of the file (" + std::to_string(file_size) +
                      " bytes): truncated?",
             false;
    }
    switch (sh.sh_type) {
      case SHT_DYNSYM:
        s.dynsym = scn;
        break;
      case SHT_SYMTAB:
        s.symtab = scn;
        break;
      case SHT_DYNAMIC:
        s.dynamic = scn;
        break;
      case SHT_GNU_versym:
        s.versym = scn;
        break;
      case SHT_GNU_verneed:
        s.verneed = scn;
        break;
      case SHT_GNU_verdef:
        s.verdef = scn;
        break;
      default:
        break;
    }
    if (std::strcmp(name, ".nv_fatbin") == 0 || std::strcmp(name, "__nv_relfatbin") == 0) {
      s.device.emplace_back(scn, name);
    } else if (std::strcmp(name, ".nvFatBinSegment") == 0) {
      s.fatbin_segment = scn;
    }
  }

  // Dynamic section: DT_NEEDED, DT_SONAME.
  if (s.dynamic) {
    GElf_Shdr sh;
    Elf_Data* d = gelf_getshdr(s.dynamic, &sh) ? elf_getdata(s.dynamic, nullptr) : nullptr;
    if (!d) return *error = "cannot read .dynamic: " + ElfError(), false;
    const uint64_t entsize = gelf_fsize(e, ELF_T_DYN, 1, EV_CURRENT);
    const uint64_t n = entsize ? std::min<uint64_t>(d->d_size / entsize, INT_MAX) : 0;
    for (uint64_t i = 0; i < n; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(d, static_cast<int>(i), &dyn)) break;
      if (dyn.d_tag == DT_NULL) break;
      if (dyn.d_tag == DT_NEEDED) out->needed.push_back(Str(e, sh.sh_link, dyn.d_un.d_val));
      if (dyn.d_tag == DT_SONAME) out->soname = Str(e, sh.sh_link, dyn.d_un.d_val);
    }
  }

  std::map<unsigned, std::pair<std::string, std::string>> needs;
  if (s.verneed && !ReadVerneed(e, s.verneed, &needs, error)) return false;
  if (s.verdef && !ReadVerdef(e, s.verdef, &out->version_definitions, error)) return false;

  std::set<std::string> seen_defined;
  const uint64_t symsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
  if (s.dynsym) {
    GElf_Shdr sh;
    Elf_Data* d = gelf_getshdr(s.dynsym, &sh) ? elf_getdata(s.dynsym, nullptr) : nullptr;
    if (!d) return *error = "cannot read .dynsym: " + ElfError(), false;
    Elf_Data* vs = s.versym ? elf_getdata(s.versym, nullptr) : nullptr;
    if (s.versym && !vs) return *error = "cannot read .gnu.version: " + ElfError(), false;
    const uint64_t n = symsize ? d->d_size / symsize : 0;
    const uint64_t nv = vs ? vs->d_size / sizeof(GElf_Versym) : 0;
    if (n > INT_MAX || nv > INT_MAX) return *error = ".dynsym is implausibly large", false;
    if (vs && nv != n) {
      out->notes.push_back(".gnu.version has " + std::to_string(nv) + " entries for " +
                           std::to_string(n) + " dynamic symbols");
    }
    for (uint64_t i = 1; i < n; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(d, static_cast<int>(i), &sym)) {
        return *error = "cannot read dynamic symbol " + std::to_string(i) + ": " + ElfError(),
               false;
      }
      const char* name = Str(e, sh.sh_link, sym.st_name);
      if (!*name) continue;
      const unsigned bind = GELF_ST_BIND(sym.st_info);
      if (sym.st_shndx != SHN_UNDEF) {
        if (bind != STB_LOCAL && (StartsWith(name, "cuda") || StartsWith(name, "__cuda"))) {
          AddDefined(out, &seen_defined, name);
          out->exports_cuda = true;
        }
        continue;
      }
      if (bind == STB_LOCAL) continue;
      ImportedSymbol imp;
      imp.name = name;
      imp.weak = bind == STB_WEAK;
      GElf_Versym ver = 0;
      if (vs && i < nv && gelf_getversym(vs, static_cast<int>(i), &ver)) {
        auto it = needs.find(ver & 0x7fff);
        if (it != needs.end()) {
          imp.file = it->second.first;
          imp.version = it->second.second;
        }
      }
      if (imp.name == "__cudaRegisterFatBinary") out->imports_register_fatbin = true;
      if (IsCudaName(name) || (!imp.file.empty() && NvidiaLibraryFamily(LibraryFamily(imp.file)))) {
        out->imports.push_back(std::move(imp));
      }
    }
  }

  if (s.symtab) {
    out->has_symtab = true;
    GElf_Shdr sh;
    Elf_Data* d = gelf_getshdr(s.symtab, &sh) ? elf_getdata(s.symtab, nullptr) : nullptr;
    if (!d) return *error = "cannot read .symtab: " + ElfError(), false;
    const uint64_t n = symsize ? d->d_size / symsize : 0;
    if (n > INT_MAX) return *error = ".symtab is implausibly large", false;
    const bool relocatable = eh.e_type == ET_REL;
    for (uint64_t i = 1; i < n; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(d, static_cast<int>(i), &sym)) {
        return *error = "cannot read symbol " + std::to_string(i) + " of .symtab: " + ElfError(),
               false;
      }
      const char* name = Str(e, sh.sh_link, sym.st_name);
      if (!*name) continue;
      if (sym.st_shndx == SHN_UNDEF) {
        // An object file's imports live in .symtab.
        if (relocatable && !s.dynsym && GELF_ST_BIND(sym.st_info) != STB_LOCAL &&
            IsCudaName(name)) {
          ImportedSymbol imp;
          imp.name = name;
          imp.weak = GELF_ST_BIND(sym.st_info) == STB_WEAK;
          if (imp.name == "__cudaRegisterFatBinary") out->imports_register_fatbin = true;
          out->imports.push_back(std::move(imp));
        }
        continue;
      }
      if (StartsWith(name, "libcudart_static_")) {
        ++out->cudart_static_marker_symbols;
      } else if (StartsWith(name, "cuda") || StartsWith(name, "__cuda")) {
        const unsigned type = GELF_ST_TYPE(sym.st_info);
        if (type == STT_FUNC || type == STT_OBJECT || type == STT_NOTYPE) {
          AddDefined(out, &seen_defined, name);
        }
      }
    }
  }

  if (s.fatbin_segment) {
    GElf_Shdr sh;
    if (gelf_getshdr(s.fatbin_segment, &sh)) {
      out->has_fatbin_segment = true;
      out->fatbin_wrappers = sh.sh_size / kWrapperSize;
    }
  }
  for (auto& [scn, name] : s.device) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) return *error = "bad " + name + " header: " + ElfError(), false;
    DeviceSection ds;
    ds.name = name;
    ds.size = sh.sh_size;
    if (sh.sh_type == SHT_NOBITS) {
      ds.fatbin.error = "section has no contents in the file";
      ds.fatbin.exact = false;
    } else if (sh.sh_size > 0) {
      // Raw bytes, a window on the mapping: only the headers walked are ever paged in.
      Elf_Data* d = elf_rawdata(scn, nullptr);
      if (!d || !d->d_buf) return *error = "cannot read " + name + ": " + ElfError(), false;
      WalkFatbin(static_cast<const unsigned char*>(d->d_buf), d->d_size, &ds.fatbin);
    }
    out->device_sections.push_back(std::move(ds));
  }
  return true;
}

void InitLibelf() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  (void)ok;
}

uint64_t Field(const unsigned char* p, size_t n, bool big_endian) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t byte = big_endian ? i : n - 1 - i;
    v = (v << 8) | p[byte];
  }
  return v;
}

// Checks on the ELF header alone (`header` holds the first `avail` bytes of a `file_size`-byte
// file), with messages clearer than libelf's.
bool PrecheckHeader(const unsigned char* header, size_t avail, uint64_t file_size,
                    std::string* error) {
  if (avail < 4 || std::memcmp(header, ELFMAG, SELFMAG) != 0) {
    if (avail >= 4 && std::memcmp(header, "!<ar", 4) == 0) {
      return *error = "ar archive (static library); not checked", false;
    }
    if (avail >= 4 && std::memcmp(header, "PK\3\4", 4) == 0) {
      return *error = "zip archive (a wheel?): unpack it first (python3 -m zipfile -e FILE DIR)",
             false;
    }
    return *error = file_size == 0 ? "empty file" : "not an ELF file", false;
  }
  if (avail < EI_NIDENT) {
    return *error = "truncated ELF identification (" + std::to_string(avail) + " bytes)", false;
  }
  const unsigned cls = header[EI_CLASS];
  if (cls != ELFCLASS32 && cls != ELFCLASS64) {
    return *error = "invalid ELF class " + std::to_string(cls), false;
  }
  if (header[EI_DATA] != ELFDATA2LSB && header[EI_DATA] != ELFDATA2MSB) {
    return *error = "invalid ELF data encoding " + std::to_string(header[EI_DATA]), false;
  }
  const bool be = header[EI_DATA] == ELFDATA2MSB;
  const bool is64 = cls == ELFCLASS64;
  const size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  if (avail < ehsize) {
    return *error = "truncated ELF header (" + std::to_string(avail) + " of " +
                    std::to_string(ehsize) + " bytes)",
           false;
  }
  const uint64_t shoff = is64 ? Field(header + 0x28, 8, be) : Field(header + 0x20, 4, be);
  const uint64_t shentsize = Field(header + (is64 ? 0x3a : 0x2e), 2, be);
  const uint64_t shnum = Field(header + (is64 ? 0x3c : 0x30), 2, be);
  const uint64_t want = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
  if (shoff != 0 && shentsize != want) {
    return *error = "section header size " + std::to_string(shentsize) + " (expected " +
                    std::to_string(want) + ")",
           false;
  }
  // shnum 0 with shoff set: extended numbering, the count is in section 0 (checked later).
  const uint64_t need = shnum ? shnum * want : want;
  if (shoff != 0 && (shoff > file_size || need > file_size - shoff)) {
    return *error = "section header table (offset " + Hex(shoff) + ", " + std::to_string(shnum) +
                    " entries) extends past the end of the file (" + std::to_string(file_size) +
                    " bytes): truncated?",
           false;
  }
  return true;
}

}  // namespace

bool ScanElfFile(const std::string& path, ElfScan* out, std::string* error) {
  // O_NONBLOCK: a FIFO named on the command line must not hang the check.
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return *error = std::string("cannot open: ") + std::strerror(errno), false;
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) {
    return *error = std::string("cannot stat: ") + std::strerror(errno), false;
  }
  if (!S_ISREG(st.st_mode)) return *error = "not a regular file", false;
  unsigned char header[sizeof(Elf64_Ehdr)] = {};
  const ssize_t got = pread(fd.get(), header, sizeof header, 0);
  if (got < 0) return *error = std::string("cannot read: ") + std::strerror(errno), false;
  const auto size = static_cast<uint64_t>(st.st_size);
  if (!PrecheckHeader(header, static_cast<size_t>(got), size, error)) return false;
  // A private, lazily paged view: only the pages libelf and the fatbin walk touch are read.
  // Writable (copy-on-write, never written back) because libelf may convert a foreign-endian
  // image in place; MAP_NORESERVE so that a large file costs no commit charge.
  Mapping map(fd.get(), static_cast<size_t>(size));
  if (!map.data()) return *error = std::string("cannot map: ") + std::strerror(errno), false;
  return ScanElfImage(map.data(), map.size(), out, error);
}

bool ScanElfImage(unsigned char* data, size_t size, ElfScan* out, std::string* error) {
  InitLibelf();
  if (!PrecheckHeader(data, size, size, error)) return false;
  ElfPtr e(elf_memory(reinterpret_cast<char*>(data), size));
  if (!e) return *error = "libelf cannot open it: " + ElfError(), false;
  return ScanElf(e.get(), size, out, error);
}

bool IsCudaName(const char* name) {
  static const char* const kPrefixes[] = {"cuda",  "__cuda", "cublas",   "nccl",     "pnccl",
                                          "cufft", "curand", "cusparse", "cusolver", "cudnn"};
  for (const char* p : kPrefixes) {
    if (StartsWith(name, p)) return true;
  }
  // Driver API: cuInit, cuMemAlloc_v2, cuLaunchKernel...
  return name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z';
}

std::string FamilyFromName(const std::string& name) {
  const char* n = name.c_str();
  if (StartsWith(n, "cublasLt")) return "cublasLt";
  if (StartsWith(n, "cublas")) return "cublas";
  if (StartsWith(n, "nccl") || StartsWith(n, "pnccl")) return "nccl";
  if (StartsWith(n, "cudnn")) return "cudnn";
  if (StartsWith(n, "cuda") || StartsWith(n, "__cuda")) return "cudart";
  for (const char* p : {"cufft", "curand", "cusparse", "cusolver"}) {
    if (StartsWith(n, p)) return p;
  }
  if (n[0] == 'c' && n[1] == 'u' && n[2] >= 'A' && n[2] <= 'Z') return "cuda";
  return {};
}

}  // namespace torchada::check
