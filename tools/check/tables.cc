#include "tables.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "embedded_tables.h"

namespace torchada::check {
namespace {

bool IsIdentifier(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

bool IsLowerWord(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || c == '_' || c == '-')) return false;
  }
  return true;
}

// abi column: comma-separated tokens of digits and dots ("12,13", "2", "2.19").
bool ParseAbis(std::string_view s, std::vector<std::string>* out) {
  out->clear();
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) comma = s.size();
    std::string_view tok = s.substr(start, comma - start);
    if (tok.empty()) return false;
    for (char c : tok) {
      if (!((c >= '0' && c <= '9') || c == '.')) return false;
    }
    out->emplace_back(tok);
    start = comma + 1;
  }
  return !out->empty();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Next whitespace-separated token of *rest, consumed.
std::string_view NextToken(std::string_view* rest) {
  std::string_view s = *rest;
  size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  size_t e = b;
  while (e < s.size() && s[e] != ' ' && s[e] != '\t') ++e;
  *rest = s.substr(e);
  return s.substr(b, e - b);
}

std::string LibraryForStem(std::string_view stem) {
  // driver.txt describes the driver API, exported by libcuda.so.1.
  if (stem == "driver") return "cuda";
  return std::string(stem);
}

}  // namespace

bool Table::uses_abi(std::string_view abi) const {
  return std::find(abi_values.begin(), abi_values.end(), abi) != abi_values.end();
}

bool ParseTable(std::string_view stem, std::string_view file, std::string_view text, Table* out) {
  Table t;
  t.stem = std::string(stem);
  t.file = std::string(file);
  t.library = LibraryForStem(stem);
  t.exported =
      true;  // every table's rows are libtorchada.so exports (driver.txt: node libcuda.so.1)
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    std::string_view body = Trim(line);
    if (body.empty() || body.front() == '#') continue;
    std::string_view rest = body;
    const std::string_view name = NextToken(&rest);
    const std::string_view abi = NextToken(&rest);
    const std::string_view disposition = NextToken(&rest);
    const std::string_view target = NextToken(&rest);
    const std::string where = t.file + ":" + std::to_string(line_no) + ": ";
    if (abi.empty() && disposition.empty()) continue;  // a bare list of names: not a table row
    Row row;
    if (!IsIdentifier(name)) {
      t.warnings.push_back(where + "name '" + std::string(name) + "' is not an identifier");
      continue;
    }
    if (!ParseAbis(abi, &row.abis)) {
      t.warnings.push_back(where + "abi column '" + std::string(abi) +
                           "' is not a comma-separated list of versions");
      continue;
    }
    if (!IsLowerWord(disposition) || target.empty()) {
      t.warnings.push_back(where + "expected 'name abi disposition target [note]'");
      continue;
    }
    row.name = std::string(name);
    row.disposition = std::string(disposition);
    row.target = std::string(target);
    row.note = std::string(Trim(rest));
    row.line = line_no;
    // Two rows for one name must serve different versions.
    bool duplicate = false;
    for (auto [it, end] = t.by_name.equal_range(row.name); it != end; ++it) {
      for (const std::string& a : t.rows[it->second].abis) {
        if (std::find(row.abis.begin(), row.abis.end(), a) != row.abis.end()) duplicate = true;
      }
    }
    if (duplicate) {
      t.warnings.push_back(where + row.name + " already has a row for one of its versions");
      continue;
    }
    for (const std::string& a : row.abis) {
      if (!t.uses_abi(a)) t.abi_values.push_back(a);
    }
    t.by_name.emplace(row.name, t.rows.size());
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) return false;
  *out = std::move(t);
  return true;
}

void Tables::Add(Table t) {
  for (Table& existing : tables_) {
    if (existing.library == t.library) {
      existing = std::move(t);
      return;
    }
  }
  tables_.push_back(std::move(t));
}

void Tables::LoadEmbedded() {
  tables_.clear();
  source_ = "embedded";
  for (size_t i = 0; i < kEmbeddedSymbolFileCount; ++i) {
    const EmbeddedFile& f = kEmbeddedSymbolFiles[i];
    std::string_view name(f.name);
    if (name.size() < 5 || name.substr(name.size() - 4) != ".txt") continue;
    Table t;
    if (ParseTable(name.substr(0, name.size() - 4), name, std::string_view(f.text, f.size), &t)) {
      Add(std::move(t));
    }
  }
}

bool Tables::LoadDirectory(const std::string& dir, std::string* error) {
  tables_.clear();
  source_ = dir;
  DIR* d = opendir(dir.c_str());
  if (!d) {
    *error = dir + ": cannot read symbols directory: " + std::strerror(errno);
    return false;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".txt") == 0) names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    const std::string path = dir + "/" + n;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      *error = path + ": cannot read";
      return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    Table t;
    if (ParseTable(std::string_view(n).substr(0, n.size() - 4), path, ss.str(), &t)) {
      Add(std::move(t));
    }
  }
  if (tables_.empty()) {
    *error = dir + ": no symbols table (*.txt with 'name abi disposition target' rows)";
    return false;
  }
  return true;
}

const Table* Tables::ForLibrary(std::string_view family) const {
  for (const Table& t : tables_) {
    if (t.library == family) return &t;
  }
  return nullptr;
}

std::string LibraryFamily(std::string_view soname) {
  const size_t slash = soname.rfind('/');
  if (slash != std::string_view::npos) soname.remove_prefix(slash + 1);
  if (soname.substr(0, 3) != "lib") return {};
  const size_t so = soname.find(".so");
  if (so == std::string_view::npos || so <= 3) return {};
  if (so + 3 != soname.size() && soname[so + 3] != '.') return {};
  return std::string(soname.substr(3, so - 3));
}

std::string LibraryMajor(std::string_view soname) {
  const size_t so = soname.find(".so.");
  if (so == std::string_view::npos) return {};
  std::string_view v = soname.substr(so + 4);
  size_t n = 0;
  while (n < v.size() && v[n] >= '0' && v[n] <= '9') ++n;
  return std::string(v.substr(0, n));
}

}  // namespace torchada::check
