// torchada-doctor [--json] [--timeout S] [--python PY] [--no-pytorch] [PATH...]
// The manual: --help, and docs/doctor.md.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "doctor.h"

namespace {

const char kHelp[] = R"(NAME
    torchada-doctor - what torchada will do on this machine, and whether its assumptions about
    the MUSA SDK hold here

SYNOPSIS
    torchada-doctor [--json] [--timeout S] [--python PY] [--no-pytorch] [--color|--no-color]
                    [PATH...]
    torchada-run [--backend B ...] --doctor [DOCTOR OPTIONS] [PATH...]

DESCRIPTION
    Prints a report, each line with a verdict (ok, warning, problem) and, when not ok, the fix:

    environment   torchada's version and build (which MUSA headers it was compiled against),
                  where its files are, the backend TORCHADA_BACKEND selects and every place
                  searched, glibc and kernel, /etc/ld.so.preload, the loader variables, and
                  every TORCHADA_*, MUSA_*, CUDA_*, NCCL_*, MCCL_* variable with what torchada
                  makes of it (the NCCL_ -> MCCL_ copies as the shim itself logged them).
    MUSA stack    libmusart, libmusa, libmublas, libmublasLt, libmccl, libmtml as the shim
                  would find them: path, SONAME, the version each library reports, version
                  nodes, and every function torchada's tables (symbols/*.txt; for MTML, what
                  NVML forwards) expect that the library lacks, counted per disposition; the
                  muBLAS GemmEx overloads exported.
    assumptions   devices as MUSA reports them and as CUDA code sees them (TORCHADA_REPORT_CC,
                  warpSize, memory); muBLAS and MCCL status values against their own strings and
                  the CUDA status torchada maps them to; a tiny GEMM (cublasSgemm, cublasGemmEx),
                  a copy round trip, an event timing and a one-rank NCCL all-reduce through
                  torchada, each compared with a host reference.
    programs      for each PATH: torchada-check's verdict, and whether the loader would honour
                  LD_PRELOAD/LD_AUDIT for it (setuid/setgid, file capabilities, static).
    PyTorch       if `import torch` works in PY (default python3): its version and CUDA version,
                  and whether it imports and initialises CUDA under torchada.

    Everything that makes calls runs in child processes (lib/torchada/doctor-probe, python)
    with a time limit, libtorchada.so preloaded where the call goes through torchada: a crash
    or a hang is a reported problem. The doctor reads files and never changes the machine.

OPTIONS
    --json          one JSON document (schema: share/torchada/doctor-schema.json)
    --timeout S     limit per child process, seconds (default 60)
    --python PY     the Python interpreter to examine (default python3 on PATH)
    --no-pytorch    skip the PyTorch section
    --color, --no-color   colour the verdicts (default: when stdout is a terminal)
    --version       print the version and exit
    -h, --help      this text

ENVIRONMENT
    The doctor examines the environment it is given: TORCHADA_BACKEND, TORCHADA_MUSA_LIB_DIR,
    TORCHADA_SIM_LIB_DIR, MUSA_HOME, ... exactly as a program started from the same shell would
    see them. TORCHADA_BUILD_DIR selects a build tree, as for torchada-run.

EXIT STATUS
    0  nothing is a problem (warnings allowed)
    1  something is a problem
    2  usage error

EXAMPLES
    torchada-doctor
    TORCHADA_BACKEND=sim torchada-doctor --json > doctor.json
    torchada-run --backend musa --doctor ./my_cuda_program
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace torchada::doctor;
  Context ctx;
  bool color_set = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* opt) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "torchada-doctor: %s needs a value\n", opt);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--json") {
      ctx.opts.json = true;
    } else if (a == "--timeout") {
      ctx.opts.timeout_s = std::atoi(value("--timeout").c_str());
      if (ctx.opts.timeout_s <= 0) {
        std::fprintf(stderr, "torchada-doctor: --timeout needs a positive number of seconds\n");
        return 2;
      }
    } else if (a == "--python") {
      ctx.opts.python = value("--python");
    } else if (a == "--no-pytorch") {
      ctx.opts.skip_pytorch = true;
    } else if (a == "--color") {
      ctx.opts.color = color_set = true;
    } else if (a == "--no-color") {
      color_set = true;
    } else if (a == "--version") {
      std::printf("torchada-doctor %s\n", TORCHADA_DOCTOR_VERSION);
      return 0;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (a == "--") {
      for (++i; i < argc; ++i) ctx.opts.paths.emplace_back(argv[i]);
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "torchada-doctor: unknown option %s (see --help)\n", a.c_str());
      return 2;
    } else {
      ctx.opts.paths.push_back(a);
    }
  }
  if (!color_set) ctx.opts.color = !ctx.opts.json && isatty(1);

  ctx.layout = FindLayout(argv[0]);
  Report report;
  report.version = TORCHADA_DOCTOR_VERSION;
  Section env{"environment", "Environment"};
  Section stack{"musa", "MUSA stack"};
  Section assume{"assumptions", "Assumptions, checked"};
  CheckEnvironment(ctx, env);
  CheckMusaStack(ctx, stack);
  CheckAssumptions(ctx, assume);
  CheckVariables(ctx, env);  // after the probes: the shim's own derivations are known
  report.sections.push_back(std::move(env));
  report.sections.push_back(std::move(stack));
  report.sections.push_back(std::move(assume));
  if (!ctx.opts.paths.empty()) {
    Section progs{"programs", "Programs"};
    CheckPrograms(ctx, progs);
    report.sections.push_back(std::move(progs));
  }
  if (!ctx.opts.skip_pytorch) {
    Section torch{"pytorch", "PyTorch"};
    CheckPyTorch(ctx, torch);
    report.sections.push_back(std::move(torch));
  }
  std::string out = ctx.opts.json ? RenderJson(report) : RenderText(report, ctx.opts.color);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return report.Overall() == Verdict::kProblem ? 1 : 0;
}
