// symbols/*.txt as compiled into torchada-check. The definition is generated at build time by
// embed_tables.cmake into the build directory (never committed): one entry per file, its contents
// as a raw string literal.
#pragma once

#include <cstddef>

namespace torchada::check {

struct EmbeddedFile {
  const char* name;  // file name, e.g. "cudart.txt"
  const char* text;
  size_t size;
};

extern const EmbeddedFile kEmbeddedSymbolFiles[];
extern const size_t kEmbeddedSymbolFileCount;

}  // namespace torchada::check
