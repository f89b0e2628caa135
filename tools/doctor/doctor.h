// torchada-doctor: what torchada will do on this machine, and whether torchada's assumptions
// about the MUSA stack found here hold. docs/doctor.md is the manual; this header is the model
// the checks fill in and the renderers (text, JSON: tools/doctor/schema.json) print.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace torchada::doctor {

enum class Verdict { kOk = 0, kWarning = 1, kProblem = 2 };
const char* VerdictName(Verdict v);  // "ok" | "warning" | "problem"

// One line of the report: a question with its answer, the verdict, and the fix when it is not ok.
struct Check {
  std::string id;     // stable, dotted: "env.backend", "musa.libmublas", "probe.gemm"
  std::string title;  // short human title
  Verdict verdict = Verdict::kOk;
  std::string summary;                                     // one sentence: what was found
  std::string fix;                                         // what to do about it (empty when ok)
  std::vector<std::pair<std::string, std::string>> facts;  // ordered key -> value
  std::vector<std::pair<std::string, std::vector<std::string>>> lists;  // ordered key -> items

  void Fact(const std::string& k, const std::string& v) { facts.emplace_back(k, v); }
  std::vector<std::string>& List(const std::string& k);
  // Raises the verdict to `v` (never lowers it); the summary/fix given replace empty ones and
  // are appended to non-empty ones.
  void Raise(Verdict v, const std::string& why, const std::string& how);
  const std::string* FactValue(const std::string& k) const;
};

struct Section {
  std::string id;  // environment | musa | assumptions | programs | pytorch
  std::string title;
  std::vector<Check> checks;
};

struct Report {
  std::string version;
  std::vector<Section> sections;
  Verdict Overall() const;
};

std::string RenderText(const Report& r, bool color);
std::string RenderJson(const Report& r);
std::string JsonString(const std::string& s);

// ---- what the checks share -------------------------------------------------------------------

// Where torchada's own files are, found from this program's location (or TORCHADA_BUILD_DIR).
struct Layout {
  std::string self;                // this program
  std::string bindir;              // its directory
  std::string libdir;              // holding libtorchada.so, empty when not found
  std::string shim;                // libdir/libtorchada.so
  std::string audit;               // libdir/torchada/libtorchada_audit.so
  std::string replacements;        // libdir/torchada/cuda
  std::string probe;               // libdir/torchada/doctor-probe
  std::string check_tool;          // torchada-check
  std::string launcher;            // torchada-run
  std::string ops;                 // libtorchada_ops.so (ATen overrides)
  std::vector<std::string> tried;  // where libtorchada.so was looked for
};

// One MUSA library as found on disk (read as ELF, never loaded by the doctor itself).
struct FoundLibrary {
  std::string key;   // libmusart | libmusa | libmublas | libmublasLt | libmccl | libmtml
  std::string path;  // empty when not found
  bool refused = false;
  std::string refusal;                // why the shim would refuse it
  std::vector<std::string> searched;  // "path: what was there"
};

struct Options {
  bool json = false;
  bool color = false;
  int timeout_s = 60;  // per child process
  std::string python = "python3";
  bool skip_pytorch = false;
  std::vector<std::string> paths;  // programs / wheels for torchada-check
};

// Runs `argv` with `env` (full environment, "K=V"), stdin from /dev/null, capturing stdout and
// stderr separately; kills its process group after `timeout_s`.
struct ChildResult {
  bool started = false;
  std::string start_error;
  bool timed_out = false;
  int exit_code = -1;  // when exited normally
  int signal = 0;      // when killed by a signal
  std::string out, err;
  std::string Describe() const;  // "exit status 3", "killed by SIGSEGV", "timed out after 60 s"
};
ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     int timeout_s);
std::vector<std::string> CurrentEnvironment();
// `env` with K set to V (or removed when V is null).
void SetEnv(std::vector<std::string>& env, const std::string& k, const char* v);

// ELF facts of a file the doctor reads (libelf, read-only).
struct ElfInfo {
  bool ok = false;
  std::string error;
  std::string soname;
  std::vector<std::string> needed;
  std::vector<std::string> version_definitions;  // without the base (file) node
  std::vector<std::string> defined;              // defined dynamic symbols, sorted
  bool has_interp = false;                       // PT_INTERP: dynamically linked program
  bool is_executable = false;                    // ET_EXEC, or ET_DYN with PT_INTERP
  bool static_executable = false;                // a program without PT_INTERP (static, static-pie)
  bool Defines(const std::string& name) const;
};
ElfInfo ReadElf(const std::string& path);

// The sections. Each appends its checks to the report; `ctx` carries what later sections need.
struct Context {
  Options opts;
  Layout layout;
  std::string backend_choice;      // TORCHADA_BACKEND as given ("auto" when unset)
  std::string backend;             // what the doctor expects the shim to pick: musa|sim|cuda|none
  bool bad_choice = false;         // TORCHADA_BACKEND names no backend
  std::vector<FoundLibrary> libs;  // libmusart, libmusa, libmublas, libmublasLt, libmccl, libmtml
  std::map<std::string, std::string> derived;  // MCCL_X -> "v (from NCCL_X)", from the shim's log
  const FoundLibrary* Lib(const std::string& key) const;
};

Layout FindLayout(const char* argv0);
void CheckEnvironment(Context& ctx, Section& s);
void CheckMusaStack(Context& ctx, Section& s);
void CheckAssumptions(Context& ctx, Section& s);
void CheckPrograms(Context& ctx, Section& s);
void CheckPyTorch(Context& ctx, Section& s);
// After the probes ran: the variables' derivations as the shim logged them.
void CheckVariables(Context& ctx, Section& s);

std::string Join(const std::vector<std::string>& v, const std::string& sep);
bool FileExists(const std::string& p);
bool StartsWith(const std::string& s, const std::string& prefix);

}  // namespace torchada::doctor
