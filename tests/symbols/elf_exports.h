// Reads a shared library's exported functions with their version nodes from its ELF dynamic
// symbol table (.dynsym + .gnu.version + .gnu.version_d). Bounds-checked: a malformed file gives
// an error string, never a crash.
#pragma once

#include <map>
#include <set>
#include <string>

struct ElfExports {
  std::set<std::string> names;  // "name@@node" (default) or "name@node" (hidden) or "name"
  std::string error;            // empty on success
};

ElfExports read_elf_exports(const std::string& path);

// The functions a shared library imports: undefined dynamic symbols, each "name@node" with the
// version it requires (.gnu.version_r: the node and the library it names), or "name" when the
// reference is unversioned. `libraries` maps each node to the file that must provide it.
struct ElfImports {
  std::set<std::string> names;
  std::map<std::string, std::string> libraries;  // node -> needed file (libcudart.so.13...)
  std::string error;
};

ElfImports read_elf_imports(const std::string& path);
