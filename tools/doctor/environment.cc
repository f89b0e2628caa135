// Section "environment": torchada's build and files, the backend TORCHADA_BACKEND selects and
// the search behind it (mirroring shim/core/backend.cc and shim/core/libraries.cc: keep them in
// step), the variables torchada reads, and whether the loader will honour LD_PRELOAD/LD_AUDIT.
#include <glob.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "doctor.h"
#include "settings/settings.h"

extern char** environ;

namespace torchada::doctor {
namespace {

std::string Env(const char* k) {
  const char* v = std::getenv(k);
  return v ? v : "";
}

std::string RealPath(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

std::string OnPath(const std::string& name) {
  std::stringstream ss(Env("PATH"));
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// The directories the loader would search for a bare name: LD_LIBRARY_PATH, then ld.so.cache's
// entries (ldconfig -p, read-only), then the default directories.
std::string LoaderFind(const std::string& soname) {
  std::stringstream ss(Env("LD_LIBRARY_PATH"));
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && FileExists(dir + "/" + soname)) return dir + "/" + soname;
  for (const char* ldconfig : {"/sbin/ldconfig", "/usr/sbin/ldconfig"}) {
    if (::access(ldconfig, X_OK) != 0) continue;
    ChildResult r = RunChild({ldconfig, "-p"}, CurrentEnvironment(), 10);
    std::stringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      // "\tlibmusart.so.5 (libc6,x86-64) => /usr/local/musa/lib/libmusart.so.5"
      size_t a = line.find_first_not_of(" \t");
      if (a == std::string::npos || line.compare(a, soname.size(), soname) != 0) continue;
      if (a + soname.size() < line.size() && line[a + soname.size()] != ' ') continue;
      size_t arrow = line.find("=> ");
      if (arrow != std::string::npos) return line.substr(arrow + 3);
    }
    break;
  }
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                        "/usr/lib64", "/lib", "/usr/lib"})
    if (FileExists(std::string(d) + "/" + soname)) return std::string(d) + "/" + soname;
  return "";
}

struct LibSpec {
  const char* key;
  const char* label;
  std::vector<const char*> sonames;
  std::vector<const char*> core;  // what the shim's loader requires (libraries.cc / backend.cc)
  bool needs_musa;                // refused unless linked against libmusart / libmusa
};

const LibSpec kRuntimeSpec = {
    "libmusart",
    "MUSA runtime",
    {"libmusart.so.5", "libmusart.so.4", "libmusart.so"},
    {"musaGetDeviceCount", "musaMalloc", "musaMemcpy", "musaStreamCreate", "musaGetErrorString"},
    false};
const LibSpec kLibSpecs[] = {
    {"libmusa",
     "the MUSA driver",
     {"libmusa.so.1", "libmusa.so"},
     {"muInit", "muDeviceGet", "muGetErrorString"},
     false},
    {"libmublas",
     "muBLAS",
     {"libmublas.so.1", "libmublas.so"},
     {"mublasCreate", "mublasSgemm"},
     false},
    {"libmublasLt",
     "muBLASLt",
     {"libmublasLt.so.1", "libmublasLt.so"},
     {"mublasLtCreate", "mublasLtMatmul"},
     false},
    {"libmccl", "MCCL", {"libmccl.so.2", "libmccl.so"}, {"mcclGetUniqueId", "mcclAllReduce"}, true},
    {"libmtml", "MTML", {"libmtml.so"}, {"mtmlLibraryInit", "mtmlLibraryCountDevice"}, false},
};

// Why the shim would refuse the library at `path` (empty: it would take it).
std::string Refusal(const LibSpec& spec, const std::string& path) {
  ElfInfo e = ReadElf(path);
  if (!e.ok) return e.error;
  for (const char* sym : spec.core)
    if (!e.Defines(sym))
      return std::string("not Moore Threads' ") + spec.label + ": it does not export " + sym;
  if (spec.needs_musa) {
    bool musa = false;
    for (const std::string& n : e.needed)
      if (StartsWith(n, "libmusart.so") || StartsWith(n, "libmusa.so")) musa = true;
    if (!musa)
      return std::string("not Moore Threads' ") + spec.label +
             " (it is not linked against the MUSA runtime; needs: " +
             (e.needed.empty() ? "nothing" : Join(e.needed, ", ")) +
             "): MetaX MACA ships a libmccl too";
  }
  return "";
}

// Walks `dirs` (then the loader's path when `loader`) the way the shim does; fills `lib`.
void Walk(const LibSpec& spec, const std::vector<std::string>& dirs, bool loader, FoundLibrary& lib,
          bool stop_at_refusal = false) {
  lib.key = spec.key;
  for (const std::string& d : dirs) {
    for (const char* so : spec.sonames) {
      std::string p = d + "/" + so;
      if (!FileExists(p)) continue;
      std::string why = Refusal(spec, p);
      if (why.empty()) {
        lib.path = p;
        lib.searched.push_back(p + ": taken");
        return;
      }
      lib.searched.push_back(p + ": refused, " + why);
      if (lib.refusal.empty()) {
        lib.refused = true;
        lib.refusal = p + ": " + why;
      }
      if (stop_at_refusal) return;
    }
    lib.searched.push_back(d + "/" + spec.sonames[0] + ": not there");
  }
  if (!loader) return;
  for (const char* so : spec.sonames) {
    std::string p = LoaderFind(so);
    if (p.empty()) continue;
    std::string why = Refusal(spec, p);
    if (why.empty()) {
      lib.path = RealPath(p);
      lib.searched.push_back(std::string(so) + " via the loader path: " + p + ": taken");
      return;
    }
    lib.searched.push_back(std::string(so) + " via the loader path: " + p + ": refused, " + why);
    if (lib.refusal.empty()) {
      lib.refused = true;
      lib.refusal = p + ": " + why;
    }
  }
  lib.searched.push_back(std::string(spec.sonames[0]) + " via the loader path: not found");
}

std::vector<std::string> MusaDirs() {
  std::vector<std::string> dirs;
  if (std::string d = Env("TORCHADA_MUSA_LIB_DIR"); !d.empty()) dirs.push_back(d);
  if (std::string d = Env("MUSA_HOME"); !d.empty()) dirs.push_back(d + "/lib");
  if (std::string d = Env("MUSA_PATH"); !d.empty()) dirs.push_back(d + "/lib");
  dirs.emplace_back("/usr/local/musa/lib");
  dirs.emplace_back("/opt/musa/lib");
  return dirs;
}

std::string SimDir(const Context& ctx) {
  std::string d = Env("TORCHADA_SIM_LIB_DIR");
  return d.empty() ? ctx.layout.libdir + "/sim" : d;
}

// A setting's value as torchada reads it (settings/settings.h): "valid", or why not and what is
// used instead.
std::string Malformed(const settings::Var& v, const std::string& name, const char* value) {
  const settings::Parsed p = settings::parse(v, value);
  if (p.status != settings::Status::kInvalid) return "";
  char instead[64] = "the default", line[512];
  if (v.type == settings::Type::kFlag || v.type == settings::Type::kWord)
    settings::word_name(v, settings::default_of(v).number, instead, sizeof instead);
  else if (v.def[0] != '\0')
    std::snprintf(instead, sizeof instead, "%s", v.def);
  if (&v == &settings::var(settings::Id::kBackend) && *value != '\0')
    std::snprintf(instead, sizeof instead, "no backend");
  settings::format_warning(v, name.c_str(), value, instead, line, sizeof line);
  return line;
}

}  // namespace

Layout FindLayout(const char* argv0) {
  Layout l;
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  l.self = n > 0 ? std::string(buf, static_cast<size_t>(n)) : RealPath(argv0);
  l.bindir = l.self.substr(0, l.self.rfind('/'));
  std::string prefix = l.bindir.substr(0, l.bindir.rfind('/'));
  std::vector<std::string> cands;
  if (std::string b = Env("TORCHADA_BUILD_DIR"); !b.empty()) {
    cands.push_back(b + "/lib");
  } else {
    cands = {prefix + "/lib", prefix + "/lib64"};
    glob_t g{};
    if (glob((prefix + "/lib/*-linux-gnu*").c_str(), 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) cands.emplace_back(g.gl_pathv[i]);
    globfree(&g);
  }
  for (const std::string& c : cands) {
    l.tried.push_back(c + "/libtorchada.so");
    if (l.libdir.empty() && FileExists(c + "/libtorchada.so")) l.libdir = RealPath(c);
  }
  if (!l.libdir.empty()) {
    l.shim = l.libdir + "/libtorchada.so";
    l.audit = l.libdir + "/torchada/libtorchada_audit.so";
    l.replacements = l.libdir + "/torchada/cuda";
    l.probe = l.libdir + "/torchada/doctor-probe";
  }
  std::string bindir =
      Env("TORCHADA_BUILD_DIR").empty() ? l.bindir : Env("TORCHADA_BUILD_DIR") + "/bin";
  l.check_tool = FileExists(bindir + "/torchada-check") ? bindir + "/torchada-check"
                                                        : OnPath("torchada-check");
  if (FileExists(l.bindir + "/torchada-run"))
    l.launcher = l.bindir + "/torchada-run";
  else if (FileExists(prefix + "/../scripts/torchada-run"))
    l.launcher = RealPath(prefix + "/../scripts/torchada-run");
  if (std::string o = Env("TORCHADA_OPS_LIBRARY"); !o.empty())
    l.ops = o;
  else if (!l.libdir.empty())
    l.ops = l.libdir + "/libtorchada_ops.so";
  return l;
}

void CheckEnvironment(Context& ctx, Section& s) {
  const Layout& l = ctx.layout;
  {
    Check c{"env.torchada", "torchada version and build"};
    c.summary = "torchada " TORCHADA_DOCTOR_VERSION " (" TORCHADA_DOCTOR_BUILD_TYPE
                ", " TORCHADA_DOCTOR_COMPILER ").";
    c.Fact("version", TORCHADA_DOCTOR_VERSION);
    c.Fact("build type", TORCHADA_DOCTOR_BUILD_TYPE);
    c.Fact("compiler", TORCHADA_DOCTOR_COMPILER);
    c.Fact("git commit (at configure time)", TORCHADA_DOCTOR_GIT);
    if (std::strlen(TORCHADA_DOCTOR_MUSA_HOME) > 0) {
      c.Fact("MUSA headers", std::string("the MUSA SDK at " TORCHADA_DOCTOR_MUSA_HOME
                                         " (every static_assert on MUSA values and layouts held "
                                         "at build time)"));
      c.Fact("MUSA SDK version (version.json at build time)", TORCHADA_DOCTOR_MUSA_SDK_VERSION);
    } else {
      c.Fact("MUSA headers",
             "the simulator's (sim/include, following shared/musa-abi.md): the [C] "
             "assumptions were not checked against a real SDK");
    }
    s.checks.push_back(std::move(c));
  }
  {
    Check c{"env.files", "torchada's files"};
    c.Fact("torchada-doctor", l.self);
    if (l.libdir.empty()) {
      c.Raise(
          Verdict::kProblem, "libtorchada.so was not found (tried " + Join(l.tried, ", ") + ").",
          "Build torchada (cmake -S . -B build && cmake --build build), install it "
          "(cmake --install build --prefix PREFIX), or set TORCHADA_BUILD_DIR to a build tree.");
    } else {
      c.summary = "libtorchada.so at " + l.shim + ".";
      c.Fact("shim", l.shim);
      c.Fact("audit module", FileExists(l.audit) ? l.audit : "missing (" + l.audit + ")");
      std::vector<std::string> repl;
      glob_t g{};
      if (glob((l.replacements + "/lib*").c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) {
          std::string p = g.gl_pathv[i];
          repl.push_back(p.substr(p.rfind('/') + 1));
        }
      globfree(&g);
      c.Fact("replacement libraries",
             repl.empty() ? "missing (" + l.replacements + ")" : l.replacements);
      if (!repl.empty()) c.List("replacements") = repl;
      c.Fact("doctor probe", FileExists(l.probe) ? l.probe : "missing (" + l.probe + ")");
      if (!FileExists(l.audit))
        c.Raise(Verdict::kWarning,
                "The audit module is missing: loads of NVIDIA's libraries by full path "
                "or through a DT_RPATH (PyTorch wheels) are not redirected.",
                "Rebuild or reinstall torchada (audit/ builds libtorchada_audit.so).");
      if (repl.empty())
        c.Raise(Verdict::kWarning,
                "The replacement libraries are missing: programs that dlopen NVIDIA's "
                "libraries and look symbols up in them are not served.",
                "Rebuild or reinstall torchada (replace/ builds them; x86-64 only).");
      if (!FileExists(l.probe))
        c.Raise(Verdict::kWarning,
                "The doctor's probe is missing: the checks that run CUDA calls are skipped.",
                "Rebuild or reinstall torchada (tools/doctor builds doctor-probe).");
    }
    c.Fact("torchada-check", l.check_tool.empty() ? "not found" : l.check_tool);
    c.Fact("torchada-run", l.launcher.empty() ? "not found" : l.launcher);
    c.Fact("ATen override library",
           FileExists(l.ops) ? l.ops
                             : "not built (" + (l.ops.empty() ? std::string("-") : l.ops) +
                                   "; only PyTorch kernels need it: ops/README.md)");
    s.checks.push_back(std::move(c));
  }

  // ---- the backend -----------------------------------------------------------------------------
  Check c{"env.backend", "backend (TORCHADA_BACKEND)"};
  std::string want = Env("TORCHADA_BACKEND");
  // As the shim reads it (settings/settings.h): any case; a malformed value loads no backend.
  static const char* const kChoices[] = {"auto", "musa", "sim", "cuda"};
  const settings::Parsed choice = settings::read(settings::Id::kBackend);
  ctx.backend_choice = choice.status == settings::Status::kValid ? kChoices[choice.number]
                       : want.empty()                            ? "auto"
                                                                 : want;
  c.Fact("TORCHADA_BACKEND", want.empty() ? "unset (auto)" : want);
  FoundLibrary runtime;
  std::vector<std::string> walked;
  if (ctx.backend_choice == "sim") {
    Walk(kRuntimeSpec, {SimDir(ctx)}, false, runtime, true);
    ctx.backend = runtime.path.empty() ? "none" : "sim";
  } else if (ctx.backend_choice == "musa" || ctx.backend_choice == "auto") {
    Walk(kRuntimeSpec, MusaDirs(), true, runtime);
    if (!runtime.path.empty())
      ctx.backend = "musa";
    else if (ctx.backend_choice == "auto" && FileExists("/proc/driver/nvidia/version"))
      ctx.backend = "cuda";
    else
      ctx.backend = "none";
  } else if (ctx.backend_choice == "cuda") {
    ctx.backend = "cuda";
  } else {
    ctx.backend = "none";
    ctx.bad_choice = true;
    c.Raise(Verdict::kProblem,
            "TORCHADA_BACKEND=" + want +
                " is not one of auto, musa, sim, cuda: the shim loads no "
                "backend and every CUDA call fails with cudaErrorNoDevice.",
            "Set TORCHADA_BACKEND to auto (or unset it), musa, sim (the CPU simulator) or cuda "
            "(NVIDIA pass-through): export TORCHADA_BACKEND=auto.");
  }
  runtime.key = "libmusart";
  c.List("searched") = runtime.searched;
  c.Fact("backend the shim will choose", ctx.backend);
  if (ctx.backend == "musa") {
    c.summary = "The MUSA runtime at " + runtime.path +
                (ctx.backend_choice == "auto" ? " (auto: a MUSA runtime was found first)." : ".");
  } else if (ctx.backend == "sim") {
    c.summary = "The CPU simulator at " + runtime.path + ": correct results, no GPU.";
  } else if (ctx.backend == "cuda") {
    c.summary =
        ctx.backend_choice == "auto"
            ? "No MUSA runtime was found and an NVIDIA driver is present: every call is passed "
              "to NVIDIA's own libraries unchanged."
            : "NVIDIA pass-through: every call goes to NVIDIA's own libraries unchanged.";
  } else if (c.verdict != Verdict::kProblem) {
    std::string why =
        runtime.refused ? " The only candidate was refused: " + runtime.refusal + "." : "";
    std::string fix =
        ctx.backend_choice == "sim"
            ? "Build the simulator (cmake --build build, TORCHADA_BUILD_SIM=ON) or point "
              "TORCHADA_SIM_LIB_DIR at the folder holding its libmusart.so.5."
            : "Install the MUSA SDK (default /usr/local/musa) or point MUSA_HOME or "
              "TORCHADA_MUSA_LIB_DIR at the SDK's lib folder; without a Moore Threads GPU, "
              "run with TORCHADA_BACKEND=sim.";
    if (runtime.refused)
      fix =
          "Point TORCHADA_MUSA_LIB_DIR (or MUSA_HOME) at Moore Threads' MUSA SDK lib folder, ahead "
          "of "
          "the library that was refused. " +
          fix;
    c.Raise(Verdict::kProblem,
            "No backend for TORCHADA_BACKEND=" + ctx.backend_choice +
                ": every CUDA call will fail with cudaErrorNoDevice." + why,
            fix);
  }
  ctx.libs.push_back(runtime);
  s.checks.push_back(std::move(c));

  // The other libraries, from the same backend (shim/core/libraries.cc).
  for (const LibSpec& spec : kLibSpecs) {
    FoundLibrary lib;
    lib.key = spec.key;
    if (ctx.backend == "sim") {
      Walk(spec, {SimDir(ctx)}, false, lib);
    } else if (ctx.backend == "musa" || ctx.backend == "none") {
      std::vector<std::string> dirs;
      if (!runtime.path.empty()) dirs.push_back(runtime.path.substr(0, runtime.path.rfind('/')));
      for (const std::string& d : MusaDirs())
        if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
      Walk(spec, dirs, true, lib);
    }
    ctx.libs.push_back(lib);
  }

  // ---- system and loader
  // -------------------------------------------------------------------------
  {
    Check sys{"env.system", "system and loader"};
    utsname u{};
    uname(&u);
    sys.Fact("glibc", gnu_get_libc_version());
    sys.Fact("kernel", std::string(u.sysname) + " " + u.release + " " + u.machine);
    sys.summary = std::string("glibc ") + gnu_get_libc_version() + ", Linux " + u.release + ".";
    if (std::string(u.machine) != "x86_64")
      sys.Raise(Verdict::kWarning,
                "On " + std::string(u.machine) +
                    " torchada builds no replacement libraries (their stubs are x86-64).",
                "Programs that dlopen NVIDIA's libraries and look symbols up in them are not "
                "served here.");
    if (getauxval(AT_SECURE))
      sys.Raise(
          Verdict::kWarning,
          "The doctor runs in secure-execution mode (setuid, setgid or capabilities): the loader "
          "ignores LD_PRELOAD and LD_AUDIT for such programs.",
          "Run torchada-doctor and your programs as an ordinary executable.");
    std::ifstream pre("/etc/ld.so.preload");
    std::string line, entries;
    while (std::getline(pre, line))
      if (!line.empty() && line[0] != '#') entries += (entries.empty() ? "" : " ") + line;
    sys.Fact("/etc/ld.so.preload", entries.empty() ? "none" : entries);
    if (entries.find("libcudart") != std::string::npos ||
        entries.find("libtorchada") != std::string::npos)
      sys.Raise(
          Verdict::kWarning,
          "/etc/ld.so.preload preloads " + entries + " into every process, before LD_PRELOAD.",
          "Remove CUDA libraries and libtorchada.so from /etc/ld.so.preload; use torchada-run "
          "instead.");
    for (const char* v : {"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "GLIBC_TUNABLES"}) {
      std::string val = Env(v);
      sys.Fact(v, val.empty() ? "unset" : val);
    }
    std::string preload = Env("LD_PRELOAD");
    if (!l.shim.empty() && preload.find("libtorchada.so") != std::string::npos &&
        preload.find(l.shim) == std::string::npos)
      sys.Raise(Verdict::kWarning,
                "LD_PRELOAD names another libtorchada.so than this doctor's (" + l.shim + ").",
                "Run programs through this installation's torchada-run, or run the doctor of the "
                "libtorchada.so you preload.");
    s.checks.push_back(std::move(sys));
  }
}

// Every TORCHADA_*, MUSA_*, MTHREADS_*, CUDA_*, NCCL_*, MCCL_* variable, with what torchada makes
// of it; the derivations (CUDA_ -> MUSA_, NCCL_ -> MCCL_) as the shim logged them in the probes.
void CheckVariables(Context& ctx, Section& s) {
  Check c{"env.variables", "environment variables torchada reads or derives"};
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    std::string k = kv.substr(0, kv.find('='));
    for (const char* p : {"TORCHADA_", "MUSA_", "MTHREADS_", "CUDA_", "NCCL_", "MCCL_"})
      if (StartsWith(k, p)) names.push_back(k);
  }
  std::sort(names.begin(), names.end());
  int unknown = 0;
  for (const std::string& k : names) {
    std::string v = Env(k.c_str());
    std::string what;
    if (StartsWith(k, "TORCHADA_")) {
      const settings::Var* info = settings::find(k.c_str());
      if (info == nullptr) {
        what = "torchada reads no such variable";
        ++unknown;
        char line[512];
        settings::format_unknown(k.c_str(), k.size(), line, sizeof line);
        c.Raise(Verdict::kWarning, k + " is not a variable torchada reads (a typo?): " + line + ".",
                "Check the name against README.md's Environment table.");
      } else {
        what = info->meaning;
        const std::string bad = Malformed(*info, k, v.c_str());
        if (!bad.empty() && info != &settings::var(settings::Id::kBackend)) {
          // The backend check reports TORCHADA_BACKEND.
          what += "; '" + v + "' is not valid";
          char accepted[256];
          settings::describe_accepted(*info, accepted, sizeof accepted);
          c.Raise(Verdict::kWarning,
                  k + "=" + v +
                      " is not a valid value (torchada falls back to its default): " + bad + ".",
                  std::string("Use ") + accepted + ".");
        }
      }
    } else if (k == "CUDA_VISIBLE_DEVICES" || k == "CUDA_LAUNCH_BLOCKING") {
      std::string musa = "MUSA_" + k.substr(5);
      what = std::getenv(musa.c_str()) ? musa + " is set and wins; this one is ignored by MUSA"
                                       : "copied to " + musa + " before the backend initialises";
    } else if (StartsWith(k, "NCCL_")) {
      std::string mccl = "MCCL_" + k.substr(5);
      auto it = ctx.derived.find(mccl);
      if (std::getenv(mccl.c_str()) && it == ctx.derived.end())
        what = mccl + " is set and wins";
      else if (it != ctx.derived.end())
        what = "copied to " + mccl + " before MCCL loads (" + it->second + ")";
      else
        what = "not copied: MCCL has no counterpart torchada knows of (shim/nccl/env.cc)";
    } else if (StartsWith(k, "MCCL_")) {
      auto it = ctx.derived.find(k);
      what = it != ctx.derived.end() ? "set by torchada in its processes: " + it->second
                                     : "read by MCCL";
    } else if (k == "MUSA_HOME" || k == "MUSA_PATH") {
      what = "the MUSA SDK: " + v + "/lib is searched for the MUSA libraries";
    } else if (k == "CUDA_HOME") {
      what = "cuda backend: $CUDA_HOME/lib64 is searched for NVIDIA's libraries";
    } else if (StartsWith(k, "MUSA_") || StartsWith(k, "MTHREADS_")) {
      what = "read by the MUSA libraries";
    } else {
      what = "not read by torchada (NVIDIA's libraries read it under the cuda backend)";
    }
    c.List("variables").push_back(k + "=" + v + "  -> " + what);
  }
  for (const auto& [k, v] : ctx.derived)
    if (std::find(names.begin(), names.end(), k) == names.end())
      c.List("derived by the shim").push_back(k + "=" + v);
  // Every variable of settings/settings.h: its value or default, and whether torchada takes it.
  std::vector<std::string>& all = c.List("settings");
  for (const settings::Var& sv : settings::kVars) {
    std::string row = std::string(sv.name) + (settings::is_family(sv) ? "<name>" : "") + " (" +
                      settings::type_name(sv.type) + ", " + settings::owner_name(sv.owner) + "): ";
    const char* value = settings::is_family(sv) ? nullptr : std::getenv(sv.name);
    if (value == nullptr) {
      row += std::string("unset, default ") + (sv.def[0] ? sv.def : "(none or computed)");
    } else {
      const std::string bad = Malformed(sv, sv.name, value);
      row += "'" + std::string(value) + "' " + (bad.empty() ? "valid" : "invalid: " + bad);
    }
    all.push_back(row + "  -- " + sv.meaning);
  }
  std::string count = std::to_string(names.size()) + " variable(s) of interest" +
                      (unknown ? ", " + std::to_string(unknown) + " unknown to torchada" : "") +
                      ".";
  c.summary = c.summary.empty() ? count : count + " " + c.summary;
  s.checks.push_back(std::move(c));
}

}  // namespace torchada::doctor
