#!/usr/bin/env python3
"""torchada-doctor, run the way users run it, against the simulator and deliberately broken stacks.

    doctor_test.py SCENARIO      (ctest passes the paths in the environment, see CMakeLists.txt)

Each scenario runs the doctor (JSON validated against tools/doctor/schema.json, or text) and
asserts the verdict, the exit status, and for a broken stack that the problem is named with its
fix. Exit 0 on success, 1 with the reason on failure.
"""
import json
import os
import re
import subprocess
import sys

DOCTOR = os.environ["DOCTOR"]
SCHEMA = os.environ["DOCTOR_SCHEMA"]
FIXTURES = os.environ["DOCTOR_FIXTURES"]
SIM_DIR = os.environ["SIM_DIR"]
PROGRAM = os.environ.get("CUDA_PROGRAM", "")
LAUNCHER = os.environ.get("LAUNCHER", "")
BUILD_DIR = os.environ.get("BUILD_DIR", "")


class Failure(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failure(what)


def run(args, env=None, json_out=True):
    e = dict(os.environ)
    for k in list(e):  # the test's own environment must not leak torchada settings in
        if k.startswith(("TORCHADA_", "MUSA_", "NCCL_", "MCCL_")) or k in ("LD_PRELOAD", "LD_AUDIT"):
            del e[k]
    # A sanitizer build's runtime stays preloaded (CMakeLists.txt sets it): the doctor keeps it
    # first for its instrumented probes.
    if os.environ.get("SANITIZER_PRELOAD"):
        e["LD_PRELOAD"] = os.environ["SANITIZER_PRELOAD"]
    e.update(env or {})
    cmd = [DOCTOR] + (["--json"] if json_out else ["--no-color"]) + args
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600)
    sys.stdout.write(f"$ {' '.join(cmd)}  -> exit {p.returncode}\n")
    if p.stderr:
        sys.stdout.write("stderr: " + p.stderr[-2000:] + "\n")
    if not json_out:
        sys.stdout.write(p.stdout)
        return p.returncode, p.stdout
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError as err:
        raise Failure(f"--json output is not JSON ({err}): {p.stdout[:2000]}")
    validate(doc)
    for s in doc["sections"]:
        for c in s["checks"]:
            sys.stdout.write(f"  [{c['verdict']}] {c['id']}: {c['summary'][:200]}\n")
    expect(doc["exit_status"] == p.returncode,
           f"exit status {p.returncode} but the report says {doc['exit_status']}")
    return p.returncode, doc


def validate(doc):
    import jsonschema  # scripts/setup-deps.sh installs it (python3-jsonschema)
    with open(SCHEMA) as f:
        schema = json.load(f)
    jsonschema.validate(doc, schema)
    # What the schema cannot say: the verdict is the worst check's, the counts add up.
    checks = [c for s in doc["sections"] for c in s["checks"]]
    counts = {v: sum(c["verdict"] == v for c in checks) for v in ("ok", "warning", "problem")}
    expect(counts == doc["counts"], f"counts {doc['counts']} but the checks give {counts}")
    worst = "problem" if counts["problem"] else "warning" if counts["warning"] else "ok"
    expect(doc["verdict"] == worst, f"verdict {doc['verdict']}, worst check {worst}")
    expect(doc["exit_status"] == (1 if worst == "problem" else 0), "exit_status disagrees with the verdict")
    ids = [s["id"] for s in doc["sections"]]
    expect(ids[:3] == ["environment", "musa", "assumptions"], f"sections {ids}")


def check(doc, cid, verdict=None, summary=None, fix=None, index=0):
    found = [c for s in doc["sections"] for c in s["checks"] if c["id"] == cid]
    expect(len(found) > index, f"no check {cid}")
    c = found[index]
    if verdict:
        expect(c["verdict"] == verdict, f"{cid}: verdict {c['verdict']}, expected {verdict}: {c['summary']}")
    if summary:
        expect(re.search(summary, c["summary"]), f"{cid}: summary {c['summary']!r} lacks /{summary}/")
    if fix:
        expect(re.search(fix, c["fix"]), f"{cid}: fix {c['fix']!r} lacks /{fix}/")
    return c


SIM = {"TORCHADA_BACKEND": "sim", "TORCHADA_SIM_LIB_DIR": SIM_DIR}
LIBS = ["libmusart", "libmusa", "libmublas", "libmublasLt", "libmccl", "libmtml"]


def sim_json():
    env = dict(SIM, TORCHADA_SIM_DEVICES="2", NCCL_DEBUG="WARN", CUDA_VISIBLE_DEVICES="0,1")
    rc, doc = run(["--no-pytorch"] + ([PROGRAM] if PROGRAM else []), env)
    expect(rc == 0, f"exit status {rc} on the simulator")
    c = check(doc, "env.backend", "ok", "simulator")
    expect(c["facts"]["backend the shim will choose"] == "sim", "backend fact")
    allowed = set()  # warnings allowed: functions the simulator lacks, verified below with nm
    for lib in LIBS:
        c = check(doc, "musa." + lib)
        path = c["facts"]["path"]
        expect(path.startswith(SIM_DIR), f"{lib}: {path} not in {SIM_DIR}")
        expect("version (as the library reports it)" in c["facts"], f"{lib}: no version")
        exported = set(subprocess.run(["nm", "-D", "--defined-only", "--format=just-symbols", path],
                                      capture_output=True, text=True, check=True).stdout.split())
        missing = [n for k, v in c["lists"].items() if k.startswith("missing (") for n in v]
        m = re.match(r"(\d+), (\d+) missing", c["facts"]["functions torchada's tables expect"])
        expect(m and int(m.group(2)) == len(set(missing)), f"{lib}: count vs list {c['facts']}")
        expect(int(m.group(1)) > len(missing), f"{lib}: nothing present?")
        for n in missing:
            expect(n not in exported, f"{lib}: {n} is reported missing but {path} exports it")
        if missing:
            expect(c["verdict"] == "warning", f"{lib}: {len(missing)} missing, verdict {c['verdict']}")
            allowed.add("musa." + lib)
        else:
            expect(c["verdict"] == "ok", f"{lib}: verdict {c['verdict']}: {c['summary']}")
    others = [c["id"] for s in doc["sections"] for c in s["checks"]
              if c["verdict"] != "ok" and c["id"] not in allowed and c["id"] != "env.files"]
    expect(not others, f"not ok on the simulator: {others}")
    expect(check(doc, "musa.libmusart")["facts"]["SONAME"] == "libmusart.so.5", "SONAME")
    check(doc, "musa.gemm_ex", "ok")
    c = check(doc, "probe.devices", "ok")
    expect(c["facts"]["CUDA device count"] == "2" and c["facts"]["MUSA device count"] == "2",
           f"device counts {c['facts']}")
    expect(c["facts"]["backend (as the shim logged it)"].startswith("sim from " + SIM_DIR), "logged backend")
    expect(any("TORCHADA_REPORT_CC=equivalent" in d for d in c["lists"]["devices"]), "CC policy")
    for cid in ("assume.blas_status", "assume.mccl_status", "probe.gemm", "probe.copy",
                "probe.event", "probe.allreduce", "assume.headers", "env.files", "env.system"):
        check(doc, cid, "ok")
    expect(len(check(doc, "assume.blas_status")["lists"]["statuses"]) == 14, "14 muBLAS statuses")
    v = check(doc, "env.variables")["lists"]["variables"]
    expect(any(x.startswith("NCCL_DEBUG=WARN") and "copied to MCCL_DEBUG" in x for x in v),
           f"NCCL_DEBUG derivation missing: {v}")
    expect(any(x.startswith("CUDA_VISIBLE_DEVICES=0,1") and "MUSA_VISIBLE_DEVICES" in x for x in v), v)
    if PROGRAM:
        c = check(doc, "program", "ok", "every CUDA import is forwarded or translated")


def sim_text():
    rc, out = run(["--no-pytorch"], SIM, json_out=False)
    expect(rc == 0, f"exit status {rc}")
    for pat in (r"== Environment ==", r"== MUSA stack ==", r"== Assumptions, checked ==",
                r"\[ok\]\s+backend \(TORCHADA_BACKEND\)", r"\[ok\]\s+a tiny GEMM",
                r"\[ok\]\s+a one-rank NCCL all-reduce", r"libmublas \(muBLAS\)",
                r"verdict: (ok|warning) \(\d+ ok, \d+ warnings?, 0 problems\)"):
        expect(re.search(pat, out), f"text report lacks /{pat}/")


def broken_runtime():
    rc, doc = run(["--no-pytorch"], {"TORCHADA_BACKEND": "musa",
                                    "TORCHADA_MUSA_LIB_DIR": FIXTURES + "/broken_runtime"})
    expect(rc == 1, f"exit status {rc}")
    check(doc, "env.backend", "problem", r"refused: .*libmusart\.so\.5: not Moore Threads' MUSA "
          r"runtime: it does not export musaMalloc", r"TORCHADA_MUSA_LIB_DIR")
    check(doc, "musa.libmusart", "problem", r"Refused: .*does not export musaMalloc",
          r"point TORCHADA_MUSA_LIB_DIR at the MUSA SDK's lib folder")
    check(doc, "assume.probes", "warning", r"Not run: the shim would load no backend",
          r"Fix the backend first")


def stack(name):
    return {"TORCHADA_BACKEND": "sim", "TORCHADA_SIM_LIB_DIR": FIXTURES + "/" + name}


def no_gemm_ex():
    rc, doc = run(["--no-pytorch"], stack("no_gemm_ex"))
    expect(rc == 1, f"exit status {rc}")
    check(doc, "musa.gemm_ex", "problem",
          r"exports no overload of mublasGemmEx, mublasGemmBatchedEx, mublasGemmStridedBatchedEx",
          r"Install a muBLAS that exports the GemmEx family")
    c = check(doc, "musa.libmublas", "warning", r"missing", r"SDK")
    expect("mublasGemmEx" in c["lists"]["missing (translate)"], c["lists"])
    check(doc, "probe.gemm", "problem", r"cublasGemmEx fp32 3x2x4 failed through torchada")
    expect("matches the host reference" in check(doc, "probe.gemm")["facts"]["cublasSgemm 3x2x4"],
           "cublasSgemm should still work")


def foreign_mccl():
    rc, doc = run(["--no-pytorch"], stack("foreign_mccl"))
    expect(rc == 1, f"exit status {rc}")
    check(doc, "musa.libmccl", "problem",
          r"Refused: .*libmccl\.so\.2: not Moore Threads' MCCL \(it is not linked against the MUSA runtime",
          r"Put Moore Threads' MCCL first")
    check(doc, "probe.allreduce", "problem", r"failed through torchada")
    check(doc, "probe.gemm", "ok")


def no_mublaslt():
    rc, doc = run(["--no-pytorch"], stack("no_mublaslt"))
    expect(rc == 0, f"exit status {rc}: a missing muBLASLt is a warning")
    expect(doc["verdict"] == "warning", doc["verdict"])
    check(doc, "musa.libmublasLt", "warning", r"Not found: every cuBLASLt call is refused",
          r"TORCHADA_SIM_LIB_DIR")


def setuid():
    rc, doc = run(["--no-pytorch", FIXTURES + "/setuid_program"], SIM)
    expect(rc == 1, f"exit status {rc}")
    check(doc, "program", "problem", r"is setuid: the loader runs it in secure-execution mode and "
          r"ignores LD_PRELOAD", r"chmod u-s")


def wrong_backend():
    rc, doc = run(["--no-pytorch"], {"TORCHADA_BACKEND": "simulator"})
    expect(rc == 1, f"exit status {rc}")
    check(doc, "env.backend", "problem", r"TORCHADA_BACKEND=simulator is not one of auto, musa, sim, cuda",
          r"Set TORCHADA_BACKEND to auto \(or unset it\), musa, sim")
    check(doc, "musa.stack", "warning", r"Not examined")
    rc, out = run(["--no-pytorch"], {"TORCHADA_BACKEND": "simulator"}, json_out=False)
    expect(rc == 1 and re.search(r"\[problem\] backend \(TORCHADA_BACKEND\)\n.*simulator is not one of"
                                 r"[^\n]*\n(.*\n)*?\s+fix: Set TORCHADA_BACKEND", out), "text form")


def typo_variable():
    rc, doc = run(["--no-pytorch"], dict(SIM, TORCHADA_BAKEND="musa", TORCHADA_LOG_LEVEL="loud",
                                         TORCHADA_SIM_DEVICES="two"))
    expect(rc == 0, f"exit status {rc}: unknown variables are warnings")
    check(doc, "env.variables", "warning", r"TORCHADA_BAKEND is not a variable torchada reads.*"
          r"did you mean TORCHADA_BACKEND", r"README")
    check(doc, "env.variables", "warning", r"TORCHADA_LOG_LEVEL=loud is not a valid value.*"
          r"not one of error, warn, info or debug; using warn")
    check(doc, "env.variables", "warning",
          r"TORCHADA_SIM_DEVICES=two is not a whole number in \[1, 16\]; using 1")
    # Every variable of settings/settings.h is listed, with its value or default and its validity.
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(SCHEMA))))
    with open(os.path.join(repo, "settings", "settings.h")) as f:
        names = re.findall(r'^  X\(k\w+, "(TORCHADA_\w+)"', f.read(), re.M)
    expect(len(names) > 30, f"the settings table was not read: {names}")
    rows = check(doc, "env.variables")["lists"]["settings"]
    expect([r.split(" ")[0].replace("<name>", "") for r in rows] == names,
           f"the settings list is not the table's: {rows}")
    row = {r.split(" ")[0]: r for r in rows}
    expect("'two' invalid: TORCHADA_SIM_DEVICES=two is not a whole number" in
           row["TORCHADA_SIM_DEVICES"], row["TORCHADA_SIM_DEVICES"])
    expect("'sim' valid" in row["TORCHADA_BACKEND"], row["TORCHADA_BACKEND"])
    expect("unset, default 2048" in row["TORCHADA_TRACE_MAX_MB"], row["TORCHADA_TRACE_MAX_MB"])


def pytorch_fails():
    rc, doc = run(["--python", os.environ["FAKE_PYTHON"]], SIM)
    expect(rc == 1, f"exit status {rc}")
    c = check(doc, "pytorch", "problem", r"does not import and initialise CUDA under torchada.*"
              r"RuntimeError: fake torch: no CUDA device", r"torchada-run --log-level debug --trace")
    expect(c["facts"]["torch"] == "9.9.9+fake" and c["facts"]["torch.version.cuda"] == "13.0", c["facts"])


def pytorch_absent():
    rc, doc = run(["--python", "/nonexistent/python3"], SIM)
    expect(rc == 0, f"exit status {rc}")
    check(doc, "pytorch", "ok", r"not found: nothing to check")


def launcher_doctor():
    e = dict(os.environ, TORCHADA_BUILD_DIR=BUILD_DIR)
    e.pop("TORCHADA_BACKEND", None)
    if os.environ.get("SANITIZER_PRELOAD"):  # the launcher keeps it first
        e["LD_PRELOAD"] = os.environ["SANITIZER_PRELOAD"]
    p = subprocess.run([LAUNCHER, "--backend", "sim", "--doctor", "--json", "--no-pytorch"],
                       env=e, capture_output=True, text=True, timeout=600)
    sys.stdout.write(p.stderr[-2000:])
    expect(p.returncode == 0, f"torchada-run --doctor: exit {p.returncode}")
    doc = json.loads(p.stdout)
    validate(doc)
    expect(check(doc, "env.backend", "ok")["facts"]["TORCHADA_BACKEND"] == "sim", "--backend reached the doctor")


SCENARIOS = {f.__name__: f for f in (sim_json, sim_text, broken_runtime, no_gemm_ex, foreign_mccl,
                                     no_mublaslt, setuid, wrong_backend, typo_variable,
                                     pytorch_fails, pytorch_absent, launcher_doctor)}

if __name__ == "__main__":
    try:
        SCENARIOS[sys.argv[1]]()
    except Failure as f:
        print(f"FAIL: {f}")
        sys.exit(1)
    print("PASS")
