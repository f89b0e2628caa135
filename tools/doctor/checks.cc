// Sections "MUSA stack", "assumptions", "programs" and "PyTorch". What needs calls runs in
// doctor-probe (a child process, preloaded with libtorchada.so where the check goes through
// torchada); what can be read from files is read here, never loaded.
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "check.h"
#include "cublas/mangled.h"
#include "doctor.h"
#include "embedded_tables.h"
#include "tables.h"
#include "mtml_functions.h"

namespace torchada::doctor {
namespace {

std::string Env(const char* k) {
  const char* v = std::getenv(k);
  return v ? v : "";
}

// LD_PRELOAD for a child under the shim: a sanitizer runtime the doctor itself was started with
// must stay first (an instrumented probe refuses to start otherwise), then libtorchada.so.
std::string ShimPreload(const std::string& shim) {
  std::string keep;
  const std::string current = Env("LD_PRELOAD");
  size_t start = 0;
  while (start < current.size()) {
    size_t end = current.find_first_of(": ", start);
    if (end == std::string::npos) end = current.size();
    const std::string entry = current.substr(start, end - start);
    const size_t slash = entry.rfind('/');
    const std::string base = slash == std::string::npos ? entry : entry.substr(slash + 1);
    if (base.rfind("libasan.", 0) == 0 || base.rfind("libtsan.", 0) == 0 ||
        base.rfind("libclang_rt.", 0) == 0)
      keep += entry + ":";
    start = end + 1;
  }
  return keep + shim;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

std::vector<std::string> SplitTab(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t t = line.find('\t', start);
    out.push_back(line.substr(start, t == std::string::npos ? std::string::npos : t - start));
    if (t == std::string::npos) break;
    start = t + 1;
  }
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Tail(const std::string& text, size_t lines) {
  std::vector<std::string> v = Lines(text);
  if (v.size() > lines) v.erase(v.begin(), v.end() - static_cast<long>(lines));
  return Join(v, " | ");
}

const char* EmbeddedText(const char* name) {
  for (size_t i = 0; i < check::kEmbeddedSymbolFileCount; ++i)
    if (std::strcmp(check::kEmbeddedSymbolFiles[i].name, name) == 0)
      return check::kEmbeddedSymbolFiles[i].text;
  return "";
}

// ---- probes ----------------------------------------------------------------------------------

struct ProbeRun {
  Check check;
  std::vector<std::vector<std::string>> statuses;  // name, value, string, library's name
  bool ran = false;                                // the probe finished normally
};

std::vector<std::string> LibArgs(const Context& ctx) {
  std::vector<std::string> a;
  const char* flags[][2] = {{"libmusart", "--musart"}, {"libmusa", "--musa"},
                            {"libmublas", "--mublas"}, {"libmublasLt", "--mublasLt"},
                            {"libmccl", "--mccl"},     {"libmtml", "--mtml"}};
  for (const auto& f : flags)
    if (const FoundLibrary* l = ctx.Lib(f[0]); l && !l->path.empty()) {
      a.push_back(f[1]);
      a.push_back(l->path);
    }
  return a;
}

ProbeRun RunProbe(Context& ctx, const std::string& id, const std::string& title,
                  const std::string& what, bool under_shim) {
  ProbeRun pr;
  pr.check.id = id;
  pr.check.title = title;
  if (!FileExists(ctx.layout.probe)) {
    pr.check.Raise(
        Verdict::kWarning, "Not run: the doctor's probe is missing.",
        "Rebuild or reinstall torchada (tools/doctor builds lib/torchada/doctor-probe).");
    return pr;
  }
  std::vector<std::string> argv = {ctx.layout.probe, what};
  for (const std::string& a : LibArgs(ctx)) argv.push_back(a);
  std::vector<std::string> env = CurrentEnvironment();
  SetEnv(env, "LD_AUDIT", nullptr);
  if (under_shim) {
    SetEnv(env, "LD_PRELOAD", ShimPreload(ctx.layout.shim).c_str());
    SetEnv(env, "TORCHADA_LOG_LEVEL", "info");
    for (const char* k :
         {"TORCHADA_LOG_FILE", "TORCHADA_STRICT", "TORCHADA_TRACE", "TORCHADA_STATS"})
      SetEnv(env, k, nullptr);
  } else {
    SetEnv(env, "LD_PRELOAD", nullptr);
  }
  ChildResult r = RunChild(argv, env, ctx.opts.timeout_s);
  bool verdict_seen = false;
  for (const std::string& line : Lines(r.out)) {
    std::vector<std::string> f = SplitTab(line);
    if (f.size() < 2) continue;
    const std::string& kind = f[0];
    if (kind == "fact" && f.size() >= 3) {
      pr.check.Fact(f[1], f[2]);
    } else if (kind == "item" && f.size() >= 3) {
      pr.check.List(f[1]).push_back(f[2]);
    } else if (kind == "status" && f.size() >= 4) {
      pr.statuses.push_back({f[1], f[2], f[3], f.size() > 4 ? f[4] : ""});
    } else if (kind == "ok") {
      verdict_seen = true;
      if (pr.check.summary.empty()) pr.check.summary = f[1];
    } else if (kind == "warning" || kind == "problem") {
      verdict_seen = true;
      if (pr.check.verdict == Verdict::kOk) pr.check.summary.clear();
      pr.check.Raise(kind == "warning" ? Verdict::kWarning : Verdict::kProblem, f[1] + ".", "");
    } else if (kind == "fix") {
      pr.check.Raise(Verdict::kOk, "", f[1]);
    }
  }
  // What the shim logged: its backend, its derivations, its complaints.
  for (const std::string& line : Lines(r.err)) {
    size_t close = line.find("] ");
    if (!StartsWith(line, "[torchada ") || close == std::string::npos) continue;
    std::string msg = line.substr(close + 2);
    bool info = line.find(" info]") != std::string::npos;
    if (info && StartsWith(msg, "backend ")) {
      if (what != "devices") continue;  // the same in every probe: reported once
      pr.check.Fact("backend (as the shim logged it)", msg.substr(8));
    } else if (info && msg.find(" (from ") != std::string::npos &&
               msg.find('=') != std::string::npos) {
      size_t eq = msg.find('=');
      ctx.derived[msg.substr(0, eq)] = msg.substr(eq + 1);
    } else if (!info && line.find(" debug]") == std::string::npos) {
      auto& log = pr.check.List("torchada log");
      if (log.size() < 12) log.push_back(msg);
    }
  }
  if (!r.started || r.timed_out || r.signal != 0 || r.exit_code != 0) {
    std::string why = "The probe (" + what + ") " + r.Describe() +
                      (r.err.empty() ? "" : ": " + Tail(r.err, 4)) + ".";
    pr.check.Raise(
        Verdict::kProblem, why,
        r.timed_out ? "A call hung: rerun with TORCHADA_LOG_LEVEL=debug TORCHADA_TRACE=trace.json "
                      "and report it with the trace."
                    : "A crash in a MUSA library or in torchada: report it with "
                      "torchada-doctor --json and a TORCHADA_TRACE of the probe.");
    return pr;
  }
  pr.ran = true;
  if (pr.check.verdict != Verdict::kOk && pr.check.fix.empty())
    pr.check.fix =
        "Rerun the failing call with TORCHADA_LOG_LEVEL=debug and report it with "
        "torchada-doctor --json.";
  if (!verdict_seen && pr.statuses.empty())
    pr.check.Raise(Verdict::kWarning, "The probe gave no verdict.", "");
  return pr;
}

// ---- expected symbols ------------------------------------------------------------------------

// Library each table's targets live in.
const std::map<std::string, std::string> kTableLibrary = {{"cudart", "libmusart"},
                                                          {"cuda", "libmusa"},
                                                          {"cublas", "libmublas"},
                                                          {"cublasLt", "libmublasLt"},
                                                          {"nccl", "libmccl"}};

// Targets that hand-written shim code reaches under other names too (shim/cublas/gemm_ex.cc,
// the status strings, shim/nccl/comm.cc): any of them satisfies the row.
const std::map<std::string, std::vector<std::string>> kAlternatives = {
    {"mublasGemmEx", {mangled::kGemmEx, mangled::kGemmExDataTypeCompute}},
    {"mublasGemmBatchedEx", {mangled::kGemmBatchedEx, mangled::kGemmBatchedExDataTypeCompute}},
    {"mublasGemmStridedBatchedEx",
     {mangled::kGemmStridedBatchedEx, mangled::kGemmStridedBatchedExDataTypeCompute}},
    {"mublasGetStatusString", {"mublasGetStatusString", "mublasStatus_to_string"}},
    {"mcclCommMuDevice", {"mcclCommMuDevice", "mcclCommCuDevice"}},
};

// library -> target -> dispositions of the rows that call it
using Expected = std::map<std::string, std::map<std::string, std::set<std::string>>>;

Expected ExpectedSymbols() {
  check::Tables tables;
  tables.LoadEmbedded();
  Expected out;
  for (const check::Table& t : tables.tables()) {
    auto lib = kTableLibrary.find(t.library);
    if (lib == kTableLibrary.end()) continue;
    for (const check::Row& r : t.rows)
      if (r.target != "-" && !r.target.empty()) out[lib->second][r.target].insert(r.disposition);
  }
  for (const std::string& line : Lines(EmbeddedText("musart_extra.txt"))) {
    std::string name = line.substr(0, line.find_first_of(" \t#"));
    if (!name.empty()) out["libmusart"][name].insert("shim code");
  }
#define TORCHADA_DOCTOR_MTML(f) out["libmtml"][#f].insert("NVML monitoring");
  TORCHADA_MTML_FUNCTIONS(TORCHADA_DOCTOR_MTML)
#undef TORCHADA_DOCTOR_MTML
  return out;
}

struct LibInfo {
  const char* key;
  const char* label;
  Verdict when_missing;
  const char* missing_means;
};
const LibInfo kLibInfo[] = {
    {"libmusart", "MUSA runtime", Verdict::kProblem, "no CUDA runtime call can work"},
    {"libmusa", "MUSA driver", Verdict::kWarning,
     "every driver entry point (cudaGetDriverEntryPoint, cuGetProcAddress; PyTorch uses them) "
     "reports \"symbol not found\""},
    {"libmublas", "muBLAS", Verdict::kProblem,
     "every cuBLAS call fails (CUBLAS_STATUS_NOT_INITIALIZED)"},
    {"libmublasLt", "muBLASLt", Verdict::kWarning,
     "every cuBLASLt call is refused (muBLASLt ships with MUSA SDK 4.3 and later); PyTorch's "
     "addmm/linear with bias use cuBLASLt"},
    {"libmccl", "MCCL", Verdict::kWarning,
     "every NCCL call fails (ncclSystemError): no distributed runs"},
    {"libmtml", "MTML", Verdict::kWarning,
     "NVML's monitoring calls (torch.cuda.utilization, memory_usage, device_memory_used; "
     "pynvml's users) answer NVML_ERROR_NOT_SUPPORTED"},
};

bool WordMatch(const std::string& name, const std::string& text, const std::string& lib_name) {
  if (!lib_name.empty() && lib_name == name) return true;
  std::string t = Lower(text);
  // Words of the name: MUBLAS_STATUS_INVALID_SIZE -> invalid, size; mcclRemoteError -> remote.
  std::vector<std::string> words;
  std::string cur;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool boundary = c == '_' || (std::isupper(static_cast<unsigned char>(c)) && i > 0 &&
                                 std::islower(static_cast<unsigned char>(name[i - 1])));
    if (boundary && !cur.empty()) {
      words.push_back(Lower(cur));
      cur.clear();
    }
    if (c != '_') cur += c;
  }
  if (!cur.empty()) words.push_back(Lower(cur));
  std::vector<std::string> distinctive;
  for (const std::string& w : words)
    if (w != "status" && w != "mublas" && w != "mccl" && w != "error") distinctive.push_back(w);
  if (distinctive.size() > 1)
    distinctive.erase(
        std::remove_if(distinctive.begin(), distinctive.end(),
                       [](const std::string& w) { return w == "invalid" || w == "not"; }),
        distinctive.end());
  if (distinctive.size() == 1 && distinctive[0] == "success")
    return t.find("success") != std::string::npos || t.find("no error") != std::string::npos;
  for (const std::string& w : distinctive)
    if (t.find(w.size() > 4 ? w.substr(0, 4) : w) != std::string::npos) return true;
  return false;
}

// The CUDA status torchada's tables map a MUSA status name to: symbols/enum_map.txt's pair, else
// the mechanical rename (when CUDA has that name).
std::string MappedName(const std::string& musa, const std::vector<std::string>& cuda_names) {
  for (const std::string& line : Lines(EmbeddedText("enum_map.txt"))) {
    std::stringstream ss(line);
    std::string c, m;
    if (!(ss >> c >> m) || c[0] == '#') continue;
    if (m == musa) return c;
  }
  std::string mech = StartsWith(musa, "MUBLAS_") ? "CUBLAS_" + musa.substr(7)
                     : StartsWith(musa, "mccl")  ? "nccl" + musa.substr(4)
                                                 : "";
  if (std::find(cuda_names.begin(), cuda_names.end(), mech) != cuda_names.end()) return mech;
  return "";
}

void StatusCheck(Context& ctx, Section& s, const char* probe, const char* id, const char* title,
                 const std::string& lib_key, const std::vector<std::string>& cuda_names,
                 const char* unmapped) {
  const FoundLibrary* lib = ctx.Lib(lib_key);
  if (lib == nullptr || lib->path.empty()) return;  // the stack check reports it
  ProbeRun pr = RunProbe(ctx, id, title, probe, false);
  std::map<std::string, std::string> seen;  // string -> name
  int mismatched = 0;
  for (const auto& st : pr.statuses) {
    const std::string &name = st[0], &value = st[1], &text = st[2], &libname = st[3];
    std::string mapped = MappedName(name, cuda_names);
    bool match = WordMatch(name, text, libname);
    std::string row = name + " = " + value + ": the library says \"" + text + "\"" +
                      (libname.empty() ? "" : " (" + libname + ")") + " -> torchada reports " +
                      (mapped.empty() ? unmapped : mapped);
    if (!match) {
      ++mismatched;
      row += "  [does not look like " + name + "]";
    }
    if (auto it = seen.find(text);
        it != seen.end() && Lower(text).find("unknown") == std::string::npos) {
      ++mismatched;
      row += "  [same text as " + it->second + "]";
    }
    seen.emplace(text, name);
    pr.check.List("statuses").push_back(row);
  }
  if (mismatched > 0)
    pr.check.Raise(
        Verdict::kWarning,
        std::to_string(mismatched) +
            " status value(s) the headers give do not read like "
            "their names in the library's own text: the values torchada translates may not be "
            "this library's.",
        "Rebuild torchada against this SDK's headers (cmake -DMUSA_HOME=/usr/local/musa ...) "
        "and run the doctor again; if the warning stays, report it with torchada-doctor --json.");
  else if (pr.ran && !pr.statuses.empty())
    pr.check.summary =
        std::to_string(pr.statuses.size()) +
        " status values: each reads like its name; mapped as symbols/enum_map.txt says.";
  s.checks.push_back(std::move(pr.check));
}

}  // namespace

// ---- the MUSA stack --------------------------------------------------------------------------

void CheckMusaStack(Context& ctx, Section& s) {
  if (ctx.bad_choice) {
    Check c{"musa.stack", "MUSA libraries"};
    c.Raise(Verdict::kWarning, "Not examined: TORCHADA_BACKEND names no backend (see above).",
            "Set TORCHADA_BACKEND to auto, musa, sim or cuda and run the doctor again.");
    s.checks.push_back(std::move(c));
    return;
  }
  if (ctx.backend == "cuda") {
    Check c{"musa.stack", "MUSA libraries"};
    c.summary = "Not used: the cuda backend passes every call to NVIDIA's own libraries.";
    s.checks.push_back(std::move(c));
    return;
  }
  Expected expected = ExpectedSymbols();
  ProbeRun versions;
  bool any = false;
  for (const FoundLibrary& l : ctx.libs) any |= !l.path.empty();
  if (any) versions = RunProbe(ctx, "musa.versions", "versions", "versions", false);
  for (const LibInfo& info : kLibInfo) {
    const FoundLibrary* lib = ctx.Lib(info.key);
    Check c{std::string("musa.") + info.key, std::string(info.key) + " (" + info.label + ")"};
    if (lib == nullptr) continue;
    c.List("searched") = lib->searched;
    if (lib->path.empty()) {
      std::string fix =
          ctx.backend == "sim"
              ? "Build the simulator's libraries (cmake --build build) or point "
                "TORCHADA_SIM_LIB_DIR at the folder that holds them."
              : "Install the MUSA SDK component that ships " + std::string(info.key) +
                    ", or point TORCHADA_MUSA_LIB_DIR / MUSA_HOME at the SDK that has it.";
      if (lib->refused)
        c.Raise(
            Verdict::kProblem,
            "Refused: " + lib->refusal + ". The shim will not load it: " + info.missing_means + ".",
            "Put Moore Threads' " + std::string(info.label) +
                " first: point TORCHADA_MUSA_LIB_DIR at the MUSA SDK's lib folder, or remove the "
                "other vendor's library from the search path. " +
                fix);
      else if (info.key == std::string("libmusart") && ctx.backend == "none")
        c.Raise(Verdict::kProblem, "Not found (see the backend check).", fix);
      else
        c.Raise(info.when_missing, "Not found: " + std::string(info.missing_means) + ".", fix);
      s.checks.push_back(std::move(c));
      continue;
    }
    ElfInfo e = ReadElf(lib->path);
    c.Fact("path", lib->path);
    c.Fact("SONAME", e.soname.empty() ? "none" : e.soname);
    if (const std::string* v = versions.check.FactValue(info.key))
      c.Fact("version (as the library reports it)", *v);
    c.Fact("needs", e.needed.empty() ? "nothing" : Join(e.needed, ", "));
    c.List("version nodes") = e.version_definitions;
    if (lib->refused) c.Fact("refused on the way", lib->refusal);
    std::map<std::string, std::vector<std::string>> missing;  // disposition -> names
    size_t total = 0, lacking = 0;
    for (const auto& [target, dispositions] : expected[info.key]) {
      ++total;
      bool have = e.Defines(target);
      if (auto alt = kAlternatives.find(target); alt != kAlternatives.end())
        for (const std::string& a : alt->second) have |= e.Defines(a);
      if (have) continue;
      ++lacking;
      for (const std::string& d : dispositions) missing[d].push_back(target);
    }
    std::string counts;
    for (const auto& [d, names] : missing) {
      counts += (counts.empty() ? "" : ", ") + std::to_string(names.size()) + " " + d;
      c.List("missing (" + d + ")") = names;
    }
    c.Fact("functions torchada's tables expect", std::to_string(total) + ", " +
                                                     std::to_string(lacking) + " missing" +
                                                     (counts.empty() ? "" : " (" + counts + ")"));
    c.summary = lib->path + (e.soname.empty() ? "" : " (" + e.soname + ")") + ": " +
                std::to_string(total - lacking) + " of " + std::to_string(total) +
                " expected functions present.";
    if (lacking > 0)
      c.Raise(Verdict::kWarning,
              std::to_string(lacking) +
                  " function(s) the tables expect are missing: the CUDA calls "
                  "that reach them fail with an error code (logged once).",
              "Use the MUSA SDK release torchada targets (shared/musa-abi.md), or a newer one; the "
              "missing names are listed per disposition.");
    if (info.key == std::string("libmublas")) {
      const char* fn = e.Defines("mublasGetStatusString")    ? "mublasGetStatusString (SDK >= 4.2)"
                       : e.Defines("mublasStatus_to_string") ? "mublasStatus_to_string (SDK < 4.2)"
                                                             : "none";
      c.Fact("status strings from", fn);
    }
    if (info.key == std::string("libmccl")) {
      c.Fact("communicator device", e.Defines("mcclCommMuDevice")   ? "mcclCommMuDevice"
                                    : e.Defines("mcclCommCuDevice") ? "mcclCommCuDevice"
                                                                    : "neither");
    }
    s.checks.push_back(std::move(c));

    if (info.key == std::string("libmublas")) {
      Check g{"musa.gemm_ex", "muBLAS GemmEx overloads (C++ mangled exports)"};
      struct Form {
        const char* what;
        const char* compute;
        const char* dt;
      };
      const Form forms[] = {
          {"mublasGemmEx", mangled::kGemmEx, mangled::kGemmExDataTypeCompute},
          {"mublasGemmBatchedEx", mangled::kGemmBatchedEx, mangled::kGemmBatchedExDataTypeCompute},
          {"mublasGemmStridedBatchedEx", mangled::kGemmStridedBatchedEx,
           mangled::kGemmStridedBatchedExDataTypeCompute}};
      std::vector<std::string> lacking_forms;
      for (const Form& f : forms) {
        bool a = e.Defines(f.compute), b = e.Defines(f.dt);
        g.Fact(f.what, std::string("compute type as mublasComputeType_t: ") +
                           (a ? "exported" : "no") +
                           ", as musaDataType_t: " + (b ? "exported" : "no"));
        if (!a && !b) lacking_forms.push_back(f.what);
      }
      if (lacking_forms.empty()) {
        g.summary =
            "Every GemmEx-family call has an overload to go to (shim/cublas/gemm_ex.cc picks it at "
            "load).";
      } else {
        g.Raise(
            Verdict::kProblem,
            "muBLAS exports no overload of " + Join(lacking_forms, ", ") +
                " (neither the mublasComputeType_t nor the musaDataType_t compute-type form): "
                "cublasGemmEx and its batched forms, which PyTorch uses for every fp16/bf16 "
                "matmul, fail with CUBLAS_STATUS_NOT_SUPPORTED.",
            "Install a muBLAS that exports the GemmEx family (every MUSA SDK release seen so far "
            "does: nm -D --defined-only libmublas.so.1 | grep GemmEx); if yours has it under "
            "another mangled name, report it with torchada-doctor --json (shim/cublas/mangled.h).");
      }
      s.checks.push_back(std::move(g));
    }
  }
}

// ---- the assumptions -------------------------------------------------------------------------

void CheckAssumptions(Context& ctx, Section& s) {
  {
    Check c{"assume.headers", "MUSA values and layouts (build-time static_asserts)"};
    bool sdk = std::strlen(TORCHADA_DOCTOR_MUSA_HOME) > 0;
    if (sdk) {
      c.summary = "Built against the MUSA SDK at " TORCHADA_DOCTOR_MUSA_HOME
                  ": every static_assert on enum values, struct sizes and layouts held (a failing "
                  "one stops the build).";
      std::string here;
      if (const FoundLibrary* rt = ctx.Lib("libmusart");
          rt && !rt->path.empty() && ctx.backend == "musa") {
        std::string dir = rt->path.substr(0, rt->path.rfind('/'));
        std::ifstream vj(dir + "/../version.json");
        std::stringstream ss;
        ss << vj.rdbuf();
        here = ss.str();
        here.erase(
            std::remove_if(here.begin(), here.end(),
                           [](char ch) { return std::isspace(static_cast<unsigned char>(ch)); }),
            here.end());
      }
      c.Fact("SDK version at build time", TORCHADA_DOCTOR_MUSA_SDK_VERSION);
      if (!here.empty()) {
        c.Fact("SDK version found now", here);
        if (here != TORCHADA_DOCTOR_MUSA_SDK_VERSION)
          c.Raise(Verdict::kWarning, "The SDK found now is not the one torchada was built against.",
                  "Rebuild torchada against it: cmake -S . -B build -DMUSA_HOME=<that SDK> && "
                  "cmake --build build.");
      }
    } else if (ctx.backend == "musa") {
      c.Raise(
          Verdict::kWarning,
          "torchada was built against the simulator's MUSA headers: the enum values and struct "
          "layouts it assumes ([C] in shared/musa-abi.md) were never compared with this SDK's.",
          "Rebuild against the SDK: cmake -S . -B build -DMUSA_HOME=/usr/local/musa && cmake "
          "--build build. The build fails at the first assumption the SDK's headers contradict; "
          "send that error.");
    } else {
      c.summary =
          "Built against the simulator's headers, and the simulator is the stack: nothing to "
          "compare.";
    }
    s.checks.push_back(std::move(c));
  }
  if (ctx.backend == "cuda") {
    Check c{"assume.probes", "calls through torchada"};
    c.summary = "Not run: the cuda backend passes every call to NVIDIA's libraries.";
    s.checks.push_back(std::move(c));
    return;
  }
  if (ctx.layout.shim.empty()) return;
  if (ctx.backend == "none") {
    Check c{"assume.probes", "calls through torchada"};
    c.Raise(Verdict::kWarning,
            "Not run: the shim would load no backend, so every call would fail with "
            "cudaErrorNoDevice (see the backend check).",
            "Fix the backend first (the backend check says how), then run the doctor again.");
    s.checks.push_back(std::move(c));
    return;
  }
  s.checks.push_back(RunProbe(ctx, "probe.devices",
                              "devices as MUSA reports them and as CUDA code sees them", "devices",
                              true)
                         .check);
  if (const Check& d = s.checks.back();
      const std::string* b = d.FactValue("backend (as the shim logged it)")) {
    std::string logged = b->substr(0, b->find(' '));
    if (logged != ctx.backend)
      s.checks.back().Raise(
          Verdict::kWarning,
          "The shim chose backend " + logged + ", the doctor expected " + ctx.backend + ".",
          "Report it with torchada-doctor --json (the doctor's search mirrors "
          "shim/core/backend.cc).");
  }
  StatusCheck(
      ctx, s, "blas-status", "assume.blas_status", "muBLAS status values and strings", "libmublas",
      {"CUBLAS_STATUS_SUCCESS", "CUBLAS_STATUS_NOT_INITIALIZED", "CUBLAS_STATUS_ALLOC_FAILED",
       "CUBLAS_STATUS_INVALID_VALUE", "CUBLAS_STATUS_ARCH_MISMATCH", "CUBLAS_STATUS_MAPPING_ERROR",
       "CUBLAS_STATUS_EXECUTION_FAILED", "CUBLAS_STATUS_INTERNAL_ERROR",
       "CUBLAS_STATUS_NOT_SUPPORTED", "CUBLAS_STATUS_LICENSE_ERROR"},
      "CUBLAS_STATUS_INTERNAL_ERROR (no counterpart)");
  StatusCheck(ctx, s, "mccl-status", "assume.mccl_status", "MCCL result values and strings",
              "libmccl",
              {"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
               "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress"},
              "ncclInternalError (no counterpart)");
  s.checks.push_back(RunProbe(ctx, "probe.gemm",
                              "a tiny GEMM through torchada (cublasSgemm, cublasGemmEx)", "gemm",
                              true)
                         .check);
  s.checks.push_back(
      RunProbe(ctx, "probe.copy", "a copy round trip through torchada", "copy", true).check);
  s.checks.push_back(
      RunProbe(ctx, "probe.event", "event timing through torchada", "event", true).check);
  s.checks.push_back(RunProbe(ctx, "probe.allreduce", "a one-rank NCCL all-reduce through torchada",
                              "allreduce", true)
                         .check);
}

// ---- programs --------------------------------------------------------------------------------

namespace {

// Whether the loader honours LD_PRELOAD / LD_AUDIT for the program at `path`.
void LoaderVerdict(const std::string& path, Check& c, int depth = 0) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  std::ifstream f(path, std::ios::binary);
  char head[2] = {};
  f.read(head, 2);
  if (head[0] == '#' && head[1] == '!' && depth == 0) {
    std::string line;
    std::getline(f, line);
    std::stringstream ss(line);
    std::string interp, word;
    ss >> interp;
    if (interp.size() > 4 && interp.substr(interp.size() - 4) == "/env")
      while (ss >> word)
        if (word[0] != '-' && word.find('=') == std::string::npos) {
          interp = word;
          break;
        }
    if (interp.find('/') == std::string::npos) {
      std::stringstream ps(Env("PATH"));
      std::string dir;
      while (std::getline(ps, dir, ':'))
        if (!dir.empty() && ::access((dir + "/" + interp).c_str(), X_OK) == 0) {
          interp = dir + "/" + interp;
          break;
        }
    }
    c.Fact("interpreter", interp);
    LoaderVerdict(interp, c, depth + 1);
    return;
  }
  if (st.st_mode & (S_ISUID | S_ISGID))
    c.Raise(
        Verdict::kProblem,
        path + " is set" + ((st.st_mode & S_ISUID) ? "uid" : "gid") +
            ": the loader runs it in secure-execution mode and ignores LD_PRELOAD (except "
            "setuid libraries in system directories), LD_AUDIT and LD_LIBRARY_PATH, so torchada "
            "never enters it.",
        "Run a copy without the bit (cp it, or chmod u-s,g-s) as the user who needs it.");
  if (::getxattr(path.c_str(), "security.capability", nullptr, 0) > 0)
    c.Raise(Verdict::kProblem,
            path +
                " has file capabilities: the loader runs it in secure-execution mode and ignores "
                "LD_PRELOAD and LD_AUDIT.",
            "Run a copy without capabilities (setcap -r on a copy).");
  ElfInfo e = ReadElf(path);
  if (e.ok && e.static_executable)
    c.Raise(Verdict::kProblem,
            path +
                " is statically linked: no dynamic loader runs in it, so LD_PRELOAD and LD_AUDIT "
                "have no effect.",
            "Link the program dynamically (and with -cudart shared for nvcc).");
}

}  // namespace

void CheckPrograms(Context& ctx, Section& s) {
  for (const std::string& p : ctx.opts.paths) {
    Check c{"program", p};
    c.Fact("path", p);
    if (!FileExists(p)) {
      c.Raise(Verdict::kProblem, p + " does not exist.",
              "Give the path of a program, library, folder or unpacked wheel.");
      s.checks.push_back(std::move(c));
      continue;
    }
    std::string out, err;
    const char* argv[] = {"torchada-check", "--summary", p.c_str()};
    int rc = check::Run(3, argv, &out, &err);
    for (const std::string& line : Lines(out))
      if (!line.empty()) c.List("torchada-check").push_back(line);
    for (const std::string& line : Lines(err))
      if (!line.empty()) c.List("torchada-check").push_back(line);
    c.Fact("torchada-check exit status", std::to_string(rc));
    switch (rc) {
      case check::kExitOk:
        c.summary = "torchada-check: every CUDA import is forwarded or translated.";
        break;
      case check::kExitPartial:
        c.Raise(
            Verdict::kWarning,
            "torchada-check: some imported function is unsupported, kernel-only or unknown; the "
            "program runs until it makes such a call.",
            "See torchada-check " + p + " for the functions and why.");
        break;
      case check::kExitNeedsPort:
        c.Raise(Verdict::kProblem,
                "torchada-check: CUDA kernels or a static CUDA runtime: the device code cannot run "
                "on MUSA.",
                "Port the kernels (mcc) or rebuild with -cudart shared; torchada-check " + p +
                    " says which.");
        break;
      default:
        c.Raise(Verdict::kProblem, "torchada-check could not check it.",
                "See torchada-check " + p + ".");
    }
    LoaderVerdict(p, c);
    s.checks.push_back(std::move(c));
  }
}

// ---- PyTorch ---------------------------------------------------------------------------------

void CheckPyTorch(Context& ctx, Section& s) {
  Check c{"pytorch", "PyTorch (" + ctx.opts.python + ")"};
  const char* kInfo =
      "import json, sys\n"
      "try:\n"
      "    import torch\n"
      "except ImportError as e:\n"
      "    print(json.dumps({'missing': str(e), 'python': sys.version.split()[0]})); sys.exit(0)\n"
      "print(json.dumps({'version': torch.__version__, 'cuda': str(torch.version.cuda),\n"
      "                  'file': torch.__file__, 'python': sys.version.split()[0]}))\n";
  std::vector<std::string> env = CurrentEnvironment();
  for (const char* k : {"LD_PRELOAD", "LD_AUDIT"}) SetEnv(env, k, nullptr);
  ChildResult plain = RunChild({ctx.opts.python, "-c", kInfo}, env, ctx.opts.timeout_s);
  if (!plain.started) {
    c.summary = ctx.opts.python + " not found: nothing to check.";
    s.checks.push_back(std::move(c));
    return;
  }
  std::string out = plain.out;
  auto field = [&](const std::string& k) {
    std::string key = "\"" + k + "\": \"";
    size_t a = out.find(key);
    if (a == std::string::npos) return std::string();
    a += key.size();
    return out.substr(a, out.find('"', a) - a);
  };
  if (plain.exit_code != 0 || out.empty()) {
    c.Raise(Verdict::kWarning,
            "import torch failed without torchada (" + plain.Describe() +
                "): " + Tail(plain.err, 2) + ".",
            "Fix the PyTorch installation first (pip install torch), then run the doctor again.");
    s.checks.push_back(std::move(c));
    return;
  }
  c.Fact("python", field("python"));
  if (out.find("\"missing\"") != std::string::npos) {
    c.summary = "PyTorch is not installed in " + ctx.opts.python +
                ": nothing to check (--python PY picks another interpreter).";
    s.checks.push_back(std::move(c));
    return;
  }
  c.Fact("torch", field("version"));
  c.Fact("torch.version.cuda", field("cuda"));
  c.Fact("location", field("file"));
  if (ctx.layout.shim.empty()) {
    s.checks.push_back(std::move(c));
    return;
  }
  const char* kInit =
      "import torch\n"
      "torch.cuda.init()\n"
      "n = torch.cuda.device_count()\n"
      "print('torchada-doctor: devices', n, torch.cuda.get_device_name(0) if n else '-')\n";
  std::vector<std::string> tenv = env;
  SetEnv(tenv, "LD_PRELOAD", ShimPreload(ctx.layout.shim).c_str());
  if (FileExists(ctx.layout.audit)) SetEnv(tenv, "LD_AUDIT", ctx.layout.audit.c_str());
  if (FileExists(ctx.layout.replacements)) {
    std::string lp = ctx.layout.replacements +
                     (Env("LD_LIBRARY_PATH").empty() ? "" : ":" + Env("LD_LIBRARY_PATH"));
    SetEnv(tenv, "LD_LIBRARY_PATH", lp.c_str());
    std::string tun = Env("GLIBC_TUNABLES");
    if (tun.find("glibc.rtld.optional_static_tls=") == std::string::npos) {
      tun += (tun.empty() ? "" : ":") + std::string("glibc.rtld.optional_static_tls=65536");
      SetEnv(tenv, "GLIBC_TUNABLES", tun.c_str());
    }
  }
  ChildResult r = RunChild({ctx.opts.python, "-c", kInit}, tenv, ctx.opts.timeout_s);
  if (r.exit_code == 0 && r.out.find("torchada-doctor: devices") != std::string::npos) {
    std::string line = r.out.substr(r.out.find("torchada-doctor: devices") + 17);
    c.summary = "torch " + field("version") + " imports and initialises CUDA under torchada (" +
                line.substr(0, line.find('\n')) + ").";
  } else {
    c.Raise(Verdict::kProblem,
            "torch " + field("version") + " does not import and initialise CUDA under torchada (" +
                r.Describe() + "): " + (r.err.empty() ? r.out : Tail(r.err, 3)) + ".",
            "Known limitation being worked on (docs/doctor.md). To report it: torchada-run "
            "--log-level debug --trace torch.json -- " +
                ctx.opts.python +
                " -c 'import torch; torch.cuda.init()', and attach torch.json with torchada-doctor "
                "--json.");
  }
  s.checks.push_back(std::move(c));
}

}  // namespace torchada::doctor
