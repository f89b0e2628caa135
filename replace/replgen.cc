// replgen: writes the sources of one replacement library (libcudart.so.13, libcublas.so.12, ...)
// from what the built libtorchada.so exports, so no symbol list is ever kept by hand.
//
//   replgen <libtorchada.so> <soname> <versioned|unversioned> <out-dir>
//
// writes <out-dir>/<soname>.map (version script), <soname>.stubs.S (forwarding stubs) and
// <soname>.names.h (the stubs' names, for the lazy resolver in resolve.cc).
//
// Rule: a replacement library DT_NEEDs libtorchada.so, so every name it does not define itself is
// found in libtorchada.so, whether the lookup goes through the global scope (PLT imports) or
// through the replacement's own handle (dlopen + dlsym). The only names it must define are those
// whose *default* version in libtorchada.so is another library's node: dlsym(handle, name) returns
// the default version, so dlsym(dlopen("libcudart.so.12"), "cudaMemAdvise") would otherwise return
// the CUDA 13 function. Those names get a stub that jumps to libtorchada.so's name@<soname>.
// An unversioned library (NVIDIA's libnccl.so.2 has no version nodes) gets no node and no stubs.
#include <elf.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Elf {
  std::vector<char> bytes;

  template <typename T>
  bool read(size_t off, T& out) const {
    if (off > bytes.size() || bytes.size() - off < sizeof(T)) return false;
    std::memcpy(&out, bytes.data() + off, sizeof(T));
    return true;
  }
  const char* str(size_t table_off, size_t table_size, size_t idx) const {
    if (idx >= table_size || table_off + table_size > bytes.size()) return nullptr;
    const char* s = bytes.data() + table_off + idx;
    if (std::memchr(s, '\0', table_size - idx) == nullptr) return nullptr;
    return s;
  }
};

struct Export {
  std::string version;  // empty: unversioned (base version)
  bool hidden = false;  // a non-default version (name@node rather than name@@node)
};

// name -> every definition of it (one per version node).
using Exports = std::map<std::string, std::vector<Export>>;

bool fail(const std::string& msg) {
  std::fprintf(stderr, "replgen: %s\n", msg.c_str());
  return false;
}

bool read_exports(const std::string& path, Exports& out, std::set<std::string>& nodes) {
  Elf e;
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot open " + path);
  e.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  Elf64_Ehdr eh{};
  if (!e.read(0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return fail(path + ": not a 64-bit little-endian ELF file");
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return fail(path + ": unexpected section header size");
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  for (size_t i = 0; i < sh.size(); ++i)
    if (!e.read(eh.e_shoff + i * sizeof(Elf64_Shdr), sh[i])) return fail(path + ": truncated");
  const Elf64_Shdr *dynsym = nullptr, *versym = nullptr, *verdef = nullptr;
  for (const Elf64_Shdr& s : sh) {
    if (s.sh_type == SHT_DYNSYM) dynsym = &s;
    if (s.sh_type == SHT_GNU_versym) versym = &s;
    if (s.sh_type == SHT_GNU_verdef) verdef = &s;
  }
  if (!dynsym || dynsym->sh_link >= sh.size()) return fail(path + ": no dynamic symbol table");
  const Elf64_Shdr& dynstr = sh[dynsym->sh_link];

  std::map<unsigned, std::string> version_names;  // verdef index -> node name
  if (verdef) {
    size_t off = verdef->sh_offset;
    for (unsigned n = 0; n < verdef->sh_info; ++n) {
      Elf64_Verdef vd{};
      Elf64_Verdaux va{};
      if (!e.read(off, vd) || !e.read(off + vd.vd_aux, va)) return fail(path + ": bad verdef");
      const char* name = e.str(dynstr.sh_offset, dynstr.sh_size, va.vda_name);
      if (!name) return fail(path + ": bad verdef name");
      if (!(vd.vd_flags & VER_FLG_BASE)) {
        version_names[vd.vd_ndx] = name;
        nodes.insert(name);
      }
      if (vd.vd_next == 0) break;
      off += vd.vd_next;
    }
  }
  const size_t count = dynsym->sh_size / sizeof(Elf64_Sym);
  for (size_t i = 1; i < count; ++i) {
    Elf64_Sym sym{};
    if (!e.read(dynsym->sh_offset + i * sizeof(Elf64_Sym), sym)) return fail(path + ": truncated");
    if (sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS) continue;
    const unsigned bind = ELF64_ST_BIND(sym.st_info);
    if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
    const char* name = e.str(dynstr.sh_offset, dynstr.sh_size, sym.st_name);
    if (!name) return fail(path + ": bad symbol name");
    Export ex;
    if (versym) {
      Elf64_Half v = 0;
      if (!e.read(versym->sh_offset + i * sizeof(Elf64_Half), v))
        return fail(path + ": bad versym");
      ex.hidden = (v & 0x8000) != 0;
      auto it = version_names.find(v & 0x7fff);
      if (it != version_names.end()) ex.version = it->second;
    }
    if (!ex.version.empty() && ELF64_ST_TYPE(sym.st_info) != STT_FUNC && ex.hidden)
      return fail(path + ": " + name + "@" + ex.version + " is not a function; cannot stub it");
    out[name].push_back(ex);
  }
  return true;
}

bool write_if_changed(const std::string& path, const std::string& text) {
  {
    std::ifstream old(path, std::ios::binary);
    if (old) {
      std::string cur((std::istreambuf_iterator<char>(old)), std::istreambuf_iterator<char>());
      if (cur == text) return true;
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return fail("cannot write " + path);
  return true;
}

bool valid_identifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: replgen <libtorchada.so> <soname> <versioned|unversioned> <dir>\n");
    return 2;
  }
  const std::string lib = argv[1], soname = argv[2], mode = argv[3], dir = argv[4];
  if (mode != "versioned" && mode != "unversioned") {
    fail("bad mode " + mode);
    return 2;
  }

  Exports exports;
  std::set<std::string> nodes;
  if (!read_exports(lib, exports, nodes)) return 1;

  std::vector<std::string> stubs;
  size_t served = 0;
  if (mode == "versioned") {
    if (nodes.count(soname) == 0) {
      fail(lib + " has no version node " + soname + "; nothing to build " + soname + " on");
      return 1;
    }
    for (const auto& [name, defs] : exports) {
      for (const Export& d : defs) {
        if (d.version != soname) continue;
        ++served;
        if (d.hidden) {
          if (!valid_identifier(name)) {
            fail("cannot stub symbol '" + name + "'");
            return 1;
          }
          stubs.push_back(name);
        }
      }
    }
    if (served == 0) {
      fail(lib + " exports nothing in node " + soname);
      return 1;
    }
  }

  // Version script: NVIDIA's node (named like the library) holding the stubs, nothing else.
  std::ostringstream map;
  map << "/* GENERATED by replace/replgen from " << lib << "; do not edit. */\n";
  if (mode == "versioned") {
    map << soname << " {\n";
    if (!stubs.empty()) {
      map << "  global:\n";
      for (const std::string& s : stubs) map << "    " << s << ";\n";
    }
    map << "  local:\n    *;\n};\n";
  } else {
    map << "{\n  local:\n    *;\n};\n";  // anonymous node: no version definitions at all
  }

  // Stubs: each jumps through its slot; a slot starts at a lazy entry that resolves it once.
  std::ostringstream s;
  s << "/* GENERATED by replace/replgen for " << soname << "; do not edit. */\n"
    << "#if !defined(__x86_64__)\n#error \"replacement-library stubs exist for x86-64 only\"\n"
    << "#endif\n"
    << "  .section .note.GNU-stack,\"\",@progbits\n"
    << "  .data\n  .p2align 3\n  .globl torchada_repl_slots\n"
    << "  .hidden torchada_repl_slots\n"
    << "torchada_repl_slots:\n";
  for (size_t i = 0; i < stubs.size(); ++i) s << "  .quad .Llazy" << i << "\n";
  if (stubs.empty()) s << "  .quad 0\n";
  s << "  .text\n";
  for (size_t i = 0; i < stubs.size(); ++i) {
    s << "  .globl " << stubs[i] << "\n  .type " << stubs[i] << ", @function\n  .p2align 4\n"
      << stubs[i] << ":\n  jmp *torchada_repl_slots+" << i * 8 << "(%rip)\n  .size " << stubs[i]
      << ", .-" << stubs[i] << "\n";
  }
  for (size_t i = 0; i < stubs.size(); ++i)
    s << ".Llazy" << i << ":\n  movl $" << i << ", %r11d\n  jmp torchada_repl_lazy\n";
  s << "#include \"lazy_x86_64.S\"\n";

  std::ostringstream h;
  h << "/* GENERATED by replace/replgen for " << soname << "; do not edit. */\n"
    << "#define TORCHADA_REPL_SONAME \"" << soname << "\"\n"
    << "#define TORCHADA_REPL_NODE \"" << (mode == "versioned" ? soname : "") << "\"\n"
    << "#define TORCHADA_REPL_COUNT " << stubs.size() << "u\n"
    << "static const char* const kTorchadaReplNames[] = {\n";
  for (const std::string& n : stubs) h << "    \"" << n << "\",\n";
  h << "    nullptr};\n";

  const std::string base = dir + "/" + soname;
  if (!write_if_changed(base + ".map", map.str()) ||
      !write_if_changed(base + ".stubs.S", s.str()) ||
      !write_if_changed(base + ".names.h", h.str()))
    return 1;
  if (mode == "versioned")
    std::printf("replgen: %s: %zu symbols in libtorchada.so's node %s, %zu forwarding stubs\n",
                soname.c_str(), served, soname.c_str(), stubs.size());
  else
    std::printf("replgen: %s: no version node, no stubs (every name resolves in libtorchada.so)\n",
                soname.c_str());
  return 0;
}
