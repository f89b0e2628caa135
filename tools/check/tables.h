// The symbols/ tables as torchada-check reads them: every symbols/*.txt whose rows have the
// cudart.txt column format (name, abi, disposition, target, note). The tables are embedded in the
// binary at build time (generated from symbols/*.txt, never copied by hand) and parsed at start-up;
// --symbols-dir reads a directory instead.
//
// A table serves the library named after its file: symbols/<stem>.txt describes lib<stem>.so.*
// (cudart.txt -> libcudart.so.N, cublasLt.txt -> libcublasLt.so.N); driver.txt describes
// libcuda.so.N. A row's abi column lists the library versions (the N of lib<stem>.so.N) it serves;
// a table whose versions are of another kind (driver.txt: the CUDA version that introduced the
// entry point) is matched by name alone.
// Files without a single such row (lists of names, notes) are not tables and are skipped.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace torchada::check {

struct Row {
  std::string name;
  std::vector<std::string> abis;  // "12", "13", "2"...
  std::string disposition;        // forward | translate | shim | kernel | unsupported | other word
  std::string target;             // "-" when none
  std::string note;               // rest of the line, may be empty
  int line = 0;
};

struct Table {
  std::string stem;     // "cudart"
  std::string file;     // "cudart.txt" or the path read
  std::string library;  // library family the table serves: "cudart", "cuda" for driver.txt
  // Whether libtorchada.so exports the rows' names: true for every table today (driver.txt's rows
  // are exported in node libcuda.so.1 and served as libcuda.so.1); kept for a table that one day
  // describes entry points only.
  bool exported = true;
  std::vector<Row> rows;
  std::multimap<std::string, size_t, std::less<>> by_name;  // name -> index in rows
  std::vector<std::string> abi_values;                      // every abi token the table uses
  std::vector<std::string> warnings;                        // "cudart.txt:12: ..." per bad line

  bool uses_abi(std::string_view abi) const;
};

// Parses one table's text. Returns false when the text has no valid row (not a table); warnings
// name the lines that look like rows but are malformed.
bool ParseTable(std::string_view stem, std::string_view file, std::string_view text, Table* out);

class Tables {
 public:
  // The tables compiled into the binary.
  void LoadEmbedded();
  // Every DIR/*.txt that is a table. False (with *error) when DIR cannot be read or holds none.
  bool LoadDirectory(const std::string& dir, std::string* error);

  const std::vector<Table>& tables() const { return tables_; }
  // The table serving a library family ("cudart", "cublasLt", "cuda"), or null.
  const Table* ForLibrary(std::string_view family) const;
  std::string source() const { return source_; }

 private:
  void Add(Table t);
  std::vector<Table> tables_;
  std::string source_;
};

// Library family of a soname or file name: "libcudart.so.13" -> "cudart", "libcuda.so.1" ->
// "cuda", "libfoo.so" -> "foo". Empty when the name is not lib<x>.so[.N...].
std::string LibraryFamily(std::string_view soname);
// The first version number after ".so.": "libcudart.so.13.0.1" -> "13"; empty when none.
std::string LibraryMajor(std::string_view soname);

}  // namespace torchada::check
