#include "check.h"

#include <cstring>
#include <vector>

#include "classify.h"
#include "elf_scan.h"
#include "report.h"
#include "tables.h"
#include "walk.h"

namespace torchada::check {

const char* HelpText() {
  return R"(NAME
    torchada-check - how much of a CUDA program torchada can run

SYNOPSIS
    torchada-check [--json] [--summary] [--symbols-dir DIR] PATH...
    torchada-check --list-tables [--symbols-dir DIR]

DESCRIPTION
    Reads executables, shared libraries and object files (ELF), or every ELF file under a
    directory (recursively: an unpacked wheel, a site-packages tree, a build tree), and reports
    for each:

    - every imported CUDA function (cuda*, __cuda*, cublas*, cublasLt*, nccl*, cu* driver calls,
      and cufft*/curand*/cusparse*/cusolver*/cudnn*), the library and version node it binds to
      (.gnu.version_r; an unversioned import is matched to a DT_NEEDED library by name), and what
      torchada does with it according to the symbols/ tables:
        forwarded    passed to MUSA (disposition forward, or answered by the shim: shim)
        translated   passed to MUSA through code that converts what differs (translate), or a
                     *_64 entry point served by the 32-bit MUSA function, values range-checked
                     (narrow)
        unsupported  refused with an error code; the table's note says why
        kernel       concerns CUDA device code, refused
        unknown      libtorchada.so does not export it: in no table, or a driver function
                     imported from libcuda.so.1 (symbols/driver.txt lists what
                     cudaGetDriverEntryPoint and cuGetProcAddress hand out; no cu* symbol is
                     exported)
    - a statically linked CUDA runtime (cudart functions defined in the file, libcudart_static_*
      symbols, or device code registered without importing __cudaRegisterFatBinary), which
      never calls libtorchada.so;
    - embedded NVIDIA device code (.nv_fatbin, __nv_relfatbin): containers, cubin and PTX entries,
      target architectures, and the number of kernels: distinct `.nv.info.<kernel>` sections in
      the uncompressed cubins. Compressed cubins (NVIDIA's own libraries) and PTX are not
      decompressed, so their kernels are not counted ("at least N").

    Only the ELF and section headers, the dynamic symbol and version tables, .symtab's names and
    the fat binaries' headers are read, through a read-only mapping: a 1 GB library takes
    milliseconds when cached, well under a second from disk.

VERDICTS
    will-not-load  the file imports a function of a library libtorchada.so replaces
                (libcudart, libcublas, libcublasLt, libnccl) that libtorchada.so does not
                define: under torchada the dynamic loader refuses it (undefined symbol; at once
                with RTLD_NOW, as Python loads extensions). Said first, whatever else is true
    ok          every imported CUDA function is forwarded or translated
    partial     some imported function is unsupported, kernel-only or unknown: the program runs
                until it makes such a call, which fails with an error code
    needs-port  CUDA kernels in the file, or a statically linked CUDA runtime: the device code
                must be ported (mcc) or the program rebuilt with -cudart shared
    replaced    the file is a CUDA library whose ABI libtorchada.so exports (libcudart.so.13...)
    not-cuda    no CUDA imports, runtime or device code
    error       the file could not be checked (named with what is wrong)

OPTIONS
    --json             one JSON document on standard output (schema: tools/check/schema.json,
                       installed as share/torchada/check-schema.json)
    --summary          one line per file
    --symbols-dir DIR  read the tables from DIR/*.txt instead of the copy built into the tool
    --list-tables      print the tables in use (rows per disposition, malformed lines) and exit
    --version          print the version and exit
    -h, --help         this text

EXIT STATUS
    0  every file is ok, replaced or not-cuda
    1  some file is partial (and none worse)
    2  some file needs porting (and none could not be checked)
    3  some input could not be checked: missing, unreadable, not ELF, malformed or truncated
    4  usage error, or the symbols directory holds no table
    5  some file will not load under torchada (and every input could be checked)

EXAMPLES
    torchada-check ./app
    torchada-check --summary $(python3 -c 'import site; print(site.getsitepackages()[0])')/torch
    torchada-check --json build/ | python3 -m json.tool
)";
}

int Run(int argc, const char* const* argv, std::string* out, std::string* err) {
  bool json = false, summary = false, list_tables = false;
  std::string symbols_dir;
  std::vector<std::string> inputs;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (options_done || a.empty() || a[0] != '-' || a == "-") {
      inputs.push_back(a);
    } else if (a == "--") {
      options_done = true;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--summary") {
      summary = true;
    } else if (a == "--list-tables") {
      list_tables = true;
    } else if (a == "--symbols-dir" || a.rfind("--symbols-dir=", 0) == 0) {
      if (a == "--symbols-dir") {
        if (i + 1 >= argc) {
          *err += "torchada-check: --symbols-dir needs a directory\n";
          return kExitUsage;
        }
        symbols_dir = argv[++i];
      } else {
        symbols_dir = a.substr(std::strlen("--symbols-dir="));
      }
    } else if (a == "-h" || a == "--help") {
      *out += HelpText();
      return kExitOk;
    } else if (a == "--version") {
      *out += "torchada-check " TORCHADA_CHECK_VERSION "\n";
      return kExitOk;
    } else {
      *err += "torchada-check: unknown option " + a + " (see --help)\n";
      return kExitUsage;
    }
  }

  Tables tables;
  if (symbols_dir.empty()) {
    tables.LoadEmbedded();
  } else {
    std::string e;
    if (!tables.LoadDirectory(symbols_dir, &e)) {
      *err += "torchada-check: " + e + "\n";
      return kExitUsage;
    }
  }
  if (list_tables) {
    *out += RenderTables(tables);
    return kExitOk;
  }
  if (inputs.empty()) {
    *err += "torchada-check: no file or directory to check (see --help)\n";
    return kExitUsage;
  }

  RunSummary run;
  const Expansion ex = ExpandInputs(inputs);
  run.skipped = ex.skipped;
  for (const Target& t : ex.targets) {
    if (!t.error.empty()) {
      run.files.push_back(ErrorReport(t.path, t.error));
    } else {
      ElfScan scan;
      std::string e;
      if (ScanElfFile(t.path, &scan, &e)) {
        run.files.push_back(Classify(t.path, std::move(scan), tables));
      } else {
        run.files.push_back(ErrorReport(t.path, e));
      }
    }
    const FileReport& f = run.files.back();
    if (f.verdict == Verdict::kError) {
      *err += "torchada-check: " + Printable(f.path) + ": " + Printable(f.error) + "\n";
    }
    if (static_cast<int>(f.verdict) > static_cast<int>(run.overall)) run.overall = f.verdict;
  }
  if (run.files.empty()) {
    *err += "torchada-check: no ELF file found under the given directories\n";
  }
  *out += json ? RenderJson(run, tables) : RenderText(run, tables, TextOptions{summary});
  return ExitStatus(run.overall);
}

}  // namespace torchada::check
