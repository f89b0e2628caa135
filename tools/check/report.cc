#include "report.h"

#include <algorithm>
#include <cstdio>

namespace torchada::check {
namespace {

constexpr size_t kMaxKernelNamesJson = 200;
constexpr size_t kMaxKernelNamesText = 8;

// Length of the valid UTF-8 sequence at s[i] (0 when invalid).
size_t Utf8Length(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  // Overlong forms, surrogates, beyond U+10FFFF.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
    return 0;
  }
  return n;
}

std::string Num(uint64_t v) { return std::to_string(v); }

class Json {
 public:
  std::string out;
  void Raw(const std::string& s) { out += s; }
  void Key(const char* k) {
    Sep();
    out += JsonString(k);
    out += ':';
    fresh_ = true;
  }
  void Str(const std::string& s) {
    Sep();
    out += JsonString(s);
  }
  void NullableStr(const std::string& s) {
    if (s.empty()) {
      Sep();
      out += "null";
    } else {
      Str(s);
    }
  }
  void Int(uint64_t v) {
    Sep();
    out += Num(v);
  }
  void Bool(bool b) {
    Sep();
    out += b ? "true" : "false";
  }
  void Begin(char c) {
    Sep();
    out += c;
    fresh_ = true;
  }
  void End(char c) {
    out += c;
    fresh_ = false;
  }
  void StrArray(const std::vector<std::string>& v, size_t max = SIZE_MAX) {
    Begin('[');
    for (size_t i = 0; i < v.size() && i < max; ++i) Str(v[i]);
    End(']');
  }

 private:
  void Sep() {
    if (!fresh_) out += ',';
    fresh_ = false;
  }
  bool fresh_ = true;
};

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

std::string LibraryColumn(const ImportReport& i) {
  if (i.binding == "version") {
    return i.version == i.library ? i.library : i.library + " (" + i.version + ")";
  }
  if (i.binding == "needed") return i.library + " (unversioned)";
  return "? (unversioned)";
}

std::string Detail(const ImportReport& i) {
  switch (i.category) {
    case Category::kForwarded:
    case Category::kTranslated:
      return i.disposition + (i.target != "-" ? " " + i.target : "");
    default:
      return i.reason;
  }
}

void DeviceJson(Json& j, const DeviceCode& d) {
  j.Begin('{');
  j.Key("present");
  j.Bool(d.present);
  j.Key("modules");
  j.Int(d.modules);
  j.Key("kernels");
  j.Int(d.kernels);
  j.Key("kernels_exact");
  j.Bool(d.kernels_exact);
  j.Key("kernel_names");
  j.StrArray(d.kernel_names, kMaxKernelNamesJson);
  j.Key("kernel_names_truncated");
  j.Bool(d.kernel_names.size() > kMaxKernelNamesJson);
  j.Key("architectures");
  j.StrArray(d.architectures);
  j.Key("sections");
  j.Begin('[');
  for (const DeviceSection& s : d.sections) {
    const FatbinSummary& f = s.fatbin;
    j.Begin('{');
    j.Key("name");
    j.Str(s.name);
    j.Key("size");
    j.Int(s.size);
    j.Key("containers");
    j.Int(f.containers);
    j.Key("entries");
    j.Int(f.entries);
    j.Key("cubin_entries");
    j.Int(f.elf_entries);
    j.Key("ptx_entries");
    j.Int(f.ptx_entries);
    j.Key("other_entries");
    j.Int(f.other_entries);
    j.Key("compressed_entries");
    j.Int(f.compressed_entries);
    j.Key("unreadable_cubins");
    j.Int(f.unreadable_cubins);
    j.Key("kernels");
    j.Int(f.kernels.size());
    j.Key("kernels_exact");
    j.Bool(f.exact);
    j.Key("problem");
    j.NullableStr(f.error);
    j.End('}');
  }
  j.End(']');
  j.End('}');
}

void FileJson(Json& j, const FileReport& r) {
  j.Begin('{');
  j.Key("path");
  j.Str(r.path);
  j.Key("verdict");
  j.Str(VerdictName(r.verdict));
  j.Key("exit_status");
  j.Int(static_cast<uint64_t>(ExitStatus(r.verdict)));
  j.Key("error");
  j.NullableStr(r.error);
  j.Key("reasons");
  j.StrArray(r.reasons);
  if (r.verdict == Verdict::kError) {
    j.End('}');
    return;
  }
  const ElfScan& s = r.scan;
  j.Key("elf");
  j.Begin('{');
  j.Key("class");
  j.Str(s.elf_class);
  j.Key("type");
  j.Str(s.type);
  j.Key("machine");
  j.Str(s.machine);
  j.End('}');
  j.Key("soname");
  j.NullableStr(s.soname);
  j.Key("needed");
  j.StrArray(s.needed);
  j.Key("provides");
  j.NullableStr(r.provides);
  j.Key("counts");
  j.Begin('{');
  for (size_t c = 0; c < kCategoryCount; ++c) {
    j.Key(CategoryName(static_cast<Category>(c)));
    j.Int(r.counts[c]);
  }
  j.End('}');
  j.Key("imports");
  j.Begin('[');
  for (const ImportReport& i : r.imports) {
    j.Begin('{');
    j.Key("name");
    j.Str(i.name);
    j.Key("library");
    j.NullableStr(i.library);
    j.Key("version");
    j.NullableStr(i.version);
    j.Key("binding");
    j.Str(i.binding);
    j.Key("weak");
    j.Bool(i.weak);
    j.Key("undefined");
    j.Bool(i.undefined);
    j.Key("category");
    j.Str(CategoryName(i.category));
    j.Key("table");
    j.NullableStr(i.table);
    j.Key("line");
    j.Int(static_cast<uint64_t>(i.line));
    j.Key("abi");
    j.NullableStr(i.abi);
    j.Key("disposition");
    j.NullableStr(i.disposition);
    j.Key("target");
    j.NullableStr(i.target == "-" ? std::string() : i.target);
    j.Key("note");
    j.NullableStr(i.note);
    j.Key("reason");
    j.NullableStr(i.reason);
    j.End('}');
  }
  j.End(']');
  j.Key("static_runtime");
  j.Begin('{');
  j.Key("detected");
  j.Bool(r.static_runtime.detected);
  j.Key("evidence");
  j.StrArray(r.static_runtime.evidence);
  j.End('}');
  j.Key("device_code");
  DeviceJson(j, r.device);
  j.Key("notes");
  j.StrArray(s.notes);
  j.End('}');
}

}  // namespace

std::string JsonString(const std::string& s) {
  std::string o = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
      ++i;
    } else if (c < 0x80) {
      o += static_cast<char>(c);
      ++i;
    } else if (size_t n = Utf8Length(s, i)) {
      o.append(s, i, n);
      i += n;
    } else {
      o += "\\ufffd";
      ++i;
    }
  }
  return o + "\"";
}

std::string Printable(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      o += static_cast<char>(c);
      ++i;
    } else if (size_t n = c >= 0x80 ? Utf8Length(s, i) : 0) {
      o.append(s, i, n);
      i += n;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      o += buf;
      ++i;
    }
  }
  return o;
}

std::string RenderJson(const RunSummary& run, const Tables& tables) {
  Json j;
  j.Begin('{');
  j.Key("tool");
  j.Str("torchada-check");
  j.Key("version");
  j.Str(TORCHADA_CHECK_VERSION);
  j.Key("verdict");
  j.Str(VerdictName(run.overall));
  j.Key("exit_status");
  j.Int(static_cast<uint64_t>(ExitStatus(run.overall)));
  j.Key("tables");
  j.Begin('{');
  j.Key("source");
  j.Str(tables.source());
  j.Key("files");
  j.Begin('[');
  for (const Table& t : tables.tables()) {
    j.Begin('{');
    j.Key("file");
    j.Str(t.file);
    j.Key("library");
    j.Str("lib" + t.library + ".so");
    j.Key("exported");
    j.Bool(t.exported);
    j.Key("rows");
    j.Int(t.rows.size());
    j.Key("versions");
    j.StrArray(t.abi_values);
    j.Key("warnings");
    j.StrArray(t.warnings);
    j.End('}');
  }
  j.End(']');
  j.End('}');
  j.Key("summary");
  j.Begin('{');
  j.Key("files");
  j.Int(run.files.size());
  j.Key("skipped_not_elf");
  j.Int(run.skipped);
  j.Key("verdicts");
  j.Begin('{');
  for (Verdict v : {Verdict::kNotCuda, Verdict::kReplaced, Verdict::kOk, Verdict::kPartial,
                    Verdict::kNeedsPort, Verdict::kWillNotLoad, Verdict::kError}) {
    j.Key(VerdictName(v));
    j.Int(static_cast<uint64_t>(std::count_if(
        run.files.begin(), run.files.end(), [v](const FileReport& f) { return f.verdict == v; })));
  }
  j.End('}');
  j.End('}');
  j.Key("files");
  j.Begin('[');
  for (const FileReport& f : run.files) FileJson(j, f);
  j.End(']');
  j.End('}');
  j.out += '\n';
  return j.out;
}

std::string RenderText(const RunSummary& run, const Tables& tables, const TextOptions& opts) {
  (void)tables;
  std::string o;
  for (const FileReport& r : run.files) {
    o += Printable(r.path) + ": " + VerdictName(r.verdict);
    if (!r.reasons.empty()) o += " (" + Printable(r.reasons.front()) + ")";
    o += '\n';
    if (opts.summary_only || r.verdict == Verdict::kError) continue;
    const ElfScan& s = r.scan;
    for (size_t i = 1; i < r.reasons.size(); ++i) o += "  " + Printable(r.reasons[i]) + "\n";
    std::string needed;
    for (const std::string& n : s.needed) {
      if (LibraryFamily(n).rfind("cu", 0) == 0 || LibraryFamily(n).rfind("nccl", 0) == 0) {
        needed += (needed.empty() ? "" : ", ") + Printable(n);
      }
    }
    if (!needed.empty()) o += "  needs " + needed + "\n";
    if (!r.imports.empty()) {
      std::string counts;
      for (size_t c = 0; c < kCategoryCount; ++c) {
        if (!r.counts[c]) continue;
        counts += (counts.empty() ? "" : ", ") + Num(r.counts[c]) + " " +
                  CategoryName(static_cast<Category>(c));
      }
      o += "  " + Num(r.imports.size()) + " CUDA imports: " + counts + "\n";
      size_t wn = 6, wl = 7;
      for (const ImportReport& i : r.imports) {
        wn = std::max(wn, Printable(i.name).size());
        wl = std::max(wl, Printable(LibraryColumn(i)).size());
      }
      o += "    " + Pad("SYMBOL", wn + 1) + Pad("LIBRARY", wl + 1) + Pad("CATEGORY", 12) +
           "DETAIL\n";
      for (const ImportReport& i : r.imports) {
        o += "    " + Pad(Printable(i.name), wn + 1) + Pad(Printable(LibraryColumn(i)), wl + 1) +
             Pad(CategoryName(i.category), 12) + Printable(Detail(i)) + "\n";
      }
    }
    for (const std::string& e : r.static_runtime.evidence) {
      o += "  static runtime: " + Printable(e) + "\n";
    }
    if (r.device.present) {
      const DeviceCode& d = r.device;
      std::string archs;
      for (const std::string& a : d.architectures) archs += (archs.empty() ? "" : " ") + a;
      const std::string kernels = d.kernels_exact ? Num(d.kernels) + " kernels"
                                  : d.kernels > 0 ? "at least " + Num(d.kernels) + " kernels"
                                                  : "kernels not counted";
      o += "  device code: " + Num(d.modules) + " registered modules, " + kernels +
           (archs.empty() ? "" : " (" + archs + ")") + "\n";
      for (const DeviceSection& sec : d.sections) {
        const FatbinSummary& f = sec.fatbin;
        o += "    " + sec.name + ": " + Num(sec.size) + " bytes, " + Num(f.containers) +
             " containers, " + Num(f.elf_entries) + " cubins, " + Num(f.ptx_entries) + " PTX, " +
             Num(f.compressed_entries) + " compressed";
        if (!f.error.empty()) o += "; " + Printable(f.error);
        o += "\n";
      }
      for (size_t i = 0; i < d.kernel_names.size() && i < kMaxKernelNamesText; ++i) {
        o += "    kernel " + Printable(d.kernel_names[i]) + "\n";
      }
      if (d.kernel_names.size() > kMaxKernelNamesText) {
        o += "    ... " + Num(d.kernel_names.size() - kMaxKernelNamesText) + " more kernels\n";
      }
    }
    for (const std::string& n : s.notes) o += "  note: " + Printable(n) + "\n";
  }
  size_t by[kVerdictCount] = {};
  for (const FileReport& f : run.files) ++by[static_cast<size_t>(f.verdict)];
  o += "\n" + Num(run.files.size()) + " files checked:";
  bool first = true;
  for (Verdict v : {Verdict::kOk, Verdict::kReplaced, Verdict::kPartial, Verdict::kNeedsPort,
                    Verdict::kWillNotLoad, Verdict::kNotCuda, Verdict::kError}) {
    if (!by[static_cast<size_t>(v)]) continue;
    o += std::string(first ? " " : ", ") + Num(by[static_cast<size_t>(v)]) + " " + VerdictName(v);
    first = false;
  }
  if (run.skipped) o += "; " + Num(run.skipped) + " other files skipped (not ELF)";
  o += "\noverall: " + std::string(VerdictName(run.overall)) + " (exit status " +
       Num(static_cast<uint64_t>(ExitStatus(run.overall))) + ")\n";
  return o;
}

std::string RenderTables(const Tables& tables) {
  std::string o = "symbols tables (" + tables.source() + "):\n";
  for (const Table& t : tables.tables()) {
    size_t by[kCategoryCount] = {};
    for (const Row& r : t.rows) {
      ++by[static_cast<size_t>(CategoryForDisposition(r.disposition))];
    }
    std::vector<std::string> v = t.abi_values;
    std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    std::string versions;
    for (const std::string& x : v) versions += (versions.empty() ? "" : ",") + x;
    o += "  " + Pad(t.file, 16) + Pad("lib" + t.library + ".so", 18) + "versions " +
         Pad(versions, 8) + Num(t.rows.size()) + " rows";
    for (size_t c = 0; c < kCategoryCount; ++c) {
      if (by[c]) o += ", " + Num(by[c]) + " " + CategoryName(static_cast<Category>(c));
    }
    if (!t.exported) o += " (entry points only, not exported)";
    o += "\n";
    for (const std::string& w : t.warnings) o += "    warning: " + Printable(w) + "\n";
  }
  return o;
}

}  // namespace torchada::check
