// Reads a shared library's exported functions with their version nodes from its ELF dynamic
// symbol table (.dynsym + .gnu.version + .gnu.version_d). Bounds-checked: a malformed file gives
// an error string, never a crash.
#pragma once

#include <set>
#include <string>

struct ElfExports {
  std::set<std::string> names;  // "name@@node" (default) or "name@node" (hidden) or "name"
  std::string error;            // empty on success
};

ElfExports read_elf_exports(const std::string& path);
