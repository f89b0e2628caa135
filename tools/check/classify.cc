#include "classify.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace torchada::check {
namespace {

// Functions only a CUDA runtime defines, for when no cudart table is loaded.
const char* const kRuntimeMarkers[] = {"__cudaRegisterFatBinary", "__cudaRegisterFunction",
                                       "cudaMalloc", "cudaLaunchKernel", "cudaGetDeviceCount"};

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void Bind(const ImportedSymbol& imp, const ElfScan& scan, const Tables& tables, ImportReport* r,
          std::string* family) {
  if (!imp.file.empty()) {
    r->library = imp.file;
    r->version = imp.version;
    r->binding = "version";
    *family = LibraryFamily(imp.file);
    // The node names the ABI when it is a soname of the same library (libcudart.so.12).
    r->abi =
        LibraryFamily(imp.version) == *family ? LibraryMajor(imp.version) : LibraryMajor(imp.file);
    return;
  }
  // Unversioned: the library whose table has the name, or that the name's prefix points at,
  // among the DT_NEEDED entries.
  std::vector<std::string> families;
  for (const Table& t : tables.tables()) {
    if (t.by_name.count(imp.name)) families.push_back(t.library);
  }
  const std::string by_prefix = FamilyFromName(imp.name);
  if (!by_prefix.empty() && !Contains(families, by_prefix)) families.push_back(by_prefix);
  for (const std::string& f : families) {
    for (const std::string& n : scan.needed) {
      if (LibraryFamily(n) == f) {
        r->library = n;
        r->binding = "needed";
        r->abi = LibraryMajor(n);
        *family = f;
        return;
      }
    }
  }
  // A DT_NEEDED library whose name starts the symbol's (libcufile.so.0: cuFileRead).
  std::string lower = imp.name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t best = 0;
  for (const std::string& n : scan.needed) {
    std::string f = LibraryFamily(n);
    for (char& c : f) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (f.size() > best && f.size() >= 4 && lower.compare(0, f.size(), f) == 0) {
      best = f.size();
      r->library = n;
      r->binding = "needed";
      r->abi = LibraryMajor(n);
      *family = LibraryFamily(n);
    }
  }
  if (best) return;
  r->binding = "none";
  *family = families.empty() ? std::string() : families.front();
}

void Lookup(const Table& table, ImportReport* r) {
  auto [begin, end] = table.by_name.equal_range(r->name);
  if (begin == end) {
    r->category = Category::kUnknown;
    r->reason = "not in symbols/" + table.stem + ".txt";
    return;
  }
  const Row* row = nullptr;
  if (!r->abi.empty() && table.uses_abi(r->abi)) {
    std::vector<std::string> others;
    for (auto it = begin; it != end; ++it) {
      const Row& cand = table.rows[it->second];
      if (Contains(cand.abis, r->abi)) row = &cand;
      for (const std::string& a : cand.abis) others.push_back(a);
    }
    if (!row) {
      std::string list;
      for (const std::string& a : others) list += (list.empty() ? "" : ",") + a;
      r->category = Category::kUnknown;
      r->reason =
          "symbols/" + table.stem + ".txt lists it for version " + list + " only, not " + r->abi;
      return;
    }
  } else {
    row = &table.rows[begin->second];
    if (r->abi.empty() && std::next(begin) != end) {
      r->note = "library version unknown; row for version " + row->abis.front() + " used";
    }
  }
  r->table = table.stem + ".txt";
  r->line = row->line;
  r->disposition = row->disposition;
  r->target = row->target;
  if (!row->note.empty()) r->note = r->note.empty() ? row->note : r->note + "; " + row->note;
  r->category = CategoryForDisposition(row->disposition);
  switch (r->category) {
    case Category::kUnsupported:
    case Category::kKernel:
      r->reason = row->note.empty() ? row->disposition : row->note;
      break;
    case Category::kUnknown:
      r->reason = "disposition '" + row->disposition + "' in " + r->table + " is not one " +
                  "torchada-check knows";
      break;
    default:
      break;
  }
}

std::string ProvidedLibrary(const ElfScan& scan, const Tables& tables) {
  if (scan.type != "DYN") return {};
  std::vector<std::string> names;
  if (!scan.soname.empty()) names.push_back(scan.soname);
  for (const std::string& v : scan.version_definitions) names.push_back(v);
  for (const std::string& n : names) {
    const std::string fam = LibraryFamily(n);
    if (!fam.empty() && tables.ForLibrary(fam)) return n;
  }
  return {};
}

void DetectStaticRuntime(const ElfScan& scan, const Tables& tables, StaticRuntime* out) {
  const Table* cudart = tables.ForLibrary("cudart");
  std::vector<std::string> defined;
  for (const std::string& n : scan.defined_cuda) {
    bool known = cudart ? cudart->by_name.count(n) > 0 : false;
    for (const char* m : kRuntimeMarkers) known = known || n == m;
    if (known) defined.push_back(n);
  }
  if (!defined.empty()) {
    std::string list;
    for (size_t i = 0; i < defined.size() && i < 4; ++i) list += (i ? ", " : "") + defined[i];
    if (defined.size() > 4) list += ", ...";
    out->evidence.push_back("defines " + std::to_string(defined.size()) +
                            " CUDA runtime functions (" + list + ")");
  }
  if (scan.cudart_static_marker_symbols) {
    out->evidence.push_back(std::to_string(scan.cudart_static_marker_symbols) +
                            " libcudart_static_* symbols in .symtab");
  }
  if (scan.fatbin_wrappers > 0 && !scan.imports_register_fatbin && defined.empty()) {
    out->evidence.push_back("registers device code (" + std::to_string(scan.fatbin_wrappers) +
                            " .nvFatBinSegment wrappers) without importing "
                            "__cudaRegisterFatBinary: the runtime is linked in");
  }
  out->detected = !out->evidence.empty();
}

void SummariseDevice(const ElfScan& scan, DeviceCode* out) {
  out->modules = scan.fatbin_wrappers;
  std::set<std::string> names, archs;
  bool any_bytes = false;
  for (const DeviceSection& s : scan.device_sections) {
    out->sections.push_back(s);
    if (s.size > 0) any_bytes = true;
    names.insert(s.fatbin.kernels.begin(), s.fatbin.kernels.end());
    archs.insert(s.fatbin.architectures.begin(), s.fatbin.architectures.end());
    if (!s.fatbin.exact) out->kernels_exact = false;
  }
  out->present = any_bytes || scan.fatbin_wrappers > 0;
  if (out->present && !any_bytes) out->kernels_exact = false;  // wrappers, fatbin elsewhere
  out->kernels = names.size();
  out->kernel_names.assign(names.begin(), names.end());
  out->architectures.assign(archs.begin(), archs.end());
}

}  // namespace

Category CategoryForDisposition(const std::string& disposition) {
  if (disposition == "forward" || disposition == "shim") return Category::kForwarded;
  // narrow: a *_64 entry point served by the 32-bit MUSA function, values range-checked.
  if (disposition == "translate" || disposition == "narrow") return Category::kTranslated;
  if (disposition == "unsupported") return Category::kUnsupported;
  if (disposition == "kernel") return Category::kKernel;
  return Category::kUnknown;
}

const char* CategoryName(Category c) {
  switch (c) {
    case Category::kForwarded:
      return "forwarded";
    case Category::kTranslated:
      return "translated";
    case Category::kUnsupported:
      return "unsupported";
    case Category::kKernel:
      return "kernel";
    case Category::kUnknown:
      return "unknown";
  }
  return "unknown";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kNotCuda:
      return "not-cuda";
    case Verdict::kReplaced:
      return "replaced";
    case Verdict::kOk:
      return "ok";
    case Verdict::kPartial:
      return "partial";
    case Verdict::kNeedsPort:
      return "needs-port";
    case Verdict::kWillNotLoad:
      return "will-not-load";
    case Verdict::kError:
      return "error";
  }
  return "error";
}

int ExitStatus(Verdict v) {
  switch (v) {
    case Verdict::kPartial:
      return 1;
    case Verdict::kNeedsPort:
      return 2;
    case Verdict::kError:
      return 3;
    case Verdict::kWillNotLoad:
      return 5;  // 4 is main.cc's usage error
    default:
      return 0;
  }
}

FileReport ErrorReport(const std::string& path, const std::string& error) {
  FileReport r;
  r.path = path;
  r.verdict = Verdict::kError;
  r.error = error;
  r.reasons.push_back(error);
  return r;
}

FileReport Classify(const std::string& path, ElfScan scan, const Tables& tables) {
  FileReport r;
  r.path = path;
  for (const ImportedSymbol& imp : scan.imports) {
    ImportReport ir;
    ir.name = imp.name;
    ir.weak = imp.weak;
    std::string family;
    Bind(imp, scan, tables, &ir, &family);
    const Table* table = family.empty() ? nullptr : tables.ForLibrary(family);
    if (table) {
      Lookup(*table, &ir);
      // No row: libtorchada.so, whose exports are exactly the rows, does not define it.
      if (table->exported && ir.table.empty()) {
        ir.undefined = true;
        ir.reason += ": libtorchada.so does not define it";
      }
      if (!table->exported && !ir.table.empty()) {
        ir.reason = "libtorchada.so exports no lib" + table->library + " function: " + table->file +
                    " (" + ir.disposition +
                    ") serves it only through "
                    "cudaGetDriverEntryPoint / cuGetProcAddress";
        ir.category = Category::kUnknown;
      }
    } else {
      ir.category = Category::kUnknown;
      ir.reason = family.empty() ? "no library could be named for it"
                                 : "torchada has no table for lib" + family;
    }
    ++r.counts[static_cast<size_t>(ir.category)];
    r.imports.push_back(std::move(ir));
  }
  std::sort(r.imports.begin(), r.imports.end(), [](const ImportReport& a, const ImportReport& b) {
    return a.name != b.name ? a.name < b.name : a.library < b.library;
  });
  r.provides = ProvidedLibrary(scan, tables);
  SummariseDevice(scan, &r.device);
  if (r.provides.empty()) DetectStaticRuntime(scan, tables, &r.static_runtime);

  std::vector<std::string> undefined;  // non-weak imports the replacement lacks
  for (const ImportReport& i : r.imports) {
    if (!i.undefined || i.weak) continue;
    undefined.push_back(i.name + (i.version.empty() ? "" : "@" + i.version) +
                        (i.library.empty() ? "" : " (" + i.library + ")"));
  }
  const uint64_t problems = r.counts[static_cast<size_t>(Category::kUnsupported)] +
                            r.counts[static_cast<size_t>(Category::kKernel)] +
                            r.counts[static_cast<size_t>(Category::kUnknown)];
  if (!r.provides.empty()) {
    r.verdict = Verdict::kReplaced;
    r.reasons.push_back("exports the " + r.provides + " ABI, which libtorchada.so provides");
  } else {
    // Reasons for the verdict first, then what else is worth knowing.
    std::vector<std::string> because, also;
    if (r.static_runtime.detected) {
      r.verdict = Verdict::kNeedsPort;
      because.push_back("statically linked CUDA runtime: " + r.static_runtime.evidence.front() +
                        "; rebuild with a shared runtime (nvcc -cudart shared)");
    }
    if (r.device.present && (r.device.kernels > 0 || !r.device.kernels_exact)) {
      r.verdict = Verdict::kNeedsPort;
      std::string what = r.device.kernels_exact ? std::to_string(r.device.kernels) + " CUDA kernels"
                         : r.device.kernels > 0
                             ? "at least " + std::to_string(r.device.kernels) +
                                   " CUDA kernels (some device code not readable)"
                             : "CUDA device code whose kernels cannot be counted "
                               "(compressed or PTX only)";
      because.push_back(what + " embedded: NVIDIA device code cannot run on MUSA; port it");
    } else if (r.device.present) {
      also.push_back("embedded CUDA device code holds no kernels");
    }
    if (r.verdict != Verdict::kNeedsPort) {
      if (problems > 0) {
        r.verdict = Verdict::kPartial;
      } else if (!r.imports.empty()) {
        r.verdict = Verdict::kOk;
      }
    }
    std::vector<std::string>& imports_reason = r.verdict == Verdict::kNeedsPort ? also : because;
    if (problems > 0) {
      imports_reason.push_back(std::to_string(problems) +
                               " imported CUDA functions are refused or unknown to torchada");
    } else if (!r.imports.empty()) {
      imports_reason.push_back("every imported CUDA function is forwarded or translated");
    }
    if (r.verdict == Verdict::kNotCuda) because.push_back("no CUDA imports or device code");
    if (!undefined.empty()) {
      // Before anything else: whatever else is true of the file, it does not get to run.
      std::string list;
      for (size_t i = 0; i < undefined.size() && i < 3; ++i) list += (i ? ", " : "") + undefined[i];
      if (undefined.size() > 3) list += ", ...";
      r.verdict = Verdict::kWillNotLoad;
      because.insert(because.begin(),
                     std::to_string(undefined.size()) +
                         " imported functions are not defined by libtorchada.so (" + list +
                         "): the file will not load under torchada (undefined symbol; at once "
                         "with RTLD_NOW, as Python loads extensions)");
    }
    r.reasons = std::move(because);
    r.reasons.insert(r.reasons.end(), also.begin(), also.end());
  }
  r.scan = std::move(scan);
  return r;
}

}  // namespace torchada::check
