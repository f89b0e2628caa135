#!/usr/bin/env python3
"""symbols/update.py on copies of the tables: an export without a row comes back as a `review`
row (printed, written in sorted position) and the generator refuses a table holding one.
Exit 77 (skipped) without the reference libraries of scripts/setup-deps.sh."""
import copy
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYMBOLS = os.path.join(ROOT, "symbols")
sys.path.insert(0, SYMBOLS)
import libraries  # noqa: E402

if not os.path.exists(os.path.join(ROOT, ".deps/cuda13/lib/libnccl.so.2")):
    print("skipped: no .deps/cuda13 (scripts/setup-deps.sh)")
    sys.exit(77)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def update(tables, *args):
    return subprocess.run([sys.executable, os.path.join(SYMBOLS, "update.py"), "--tables", tables,
                           *args], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    for t in ("cudart.txt", "cublas.txt", "cublasLt.txt", "nccl.txt"):
        shutil.copy(os.path.join(SYMBOLS, t), tmp)
    # The committed tables are complete.
    r = update(tmp, "--check")
    check(r.returncode == 0, f"--check on the committed tables: {r.returncode} {r.stdout}{r.stderr}")

    # Drop two rows, as if NVIDIA had just added the functions.
    path = os.path.join(tmp, "nccl.txt")
    lines = open(path).read().split("\n")
    dropped = [l for l in lines if l.split()[:1] in (["ncclCommResume"], ["pncclWinGetUserPtr"])]
    check(len(dropped) == 2, "the two rows to drop exist")
    open(path, "w").write("\n".join(l for l in lines if l not in dropped))
    r = update(tmp, "--check")
    check(r.returncode == 1 and "ncclCommResume" in r.stdout, f"--check finds the names: {r.stdout}")
    check(open(path).read().count("\n") == len(lines) - 3, "--check writes nothing")

    r = update(tmp)
    check(r.returncode == 0, f"update: {r.returncode} {r.stderr}")
    check("ncclCommResume" in r.stdout and "pncclWinGetUserPtr" in r.stdout, f"printed: {r.stdout}")
    rows = [l for l in open(path).read().split("\n") if l and not l.startswith("#")]
    names = [l.split()[0] for l in rows]
    check(names == sorted(names), "rows stay sorted")
    review = [l for l in rows if l.split()[2] == "review"]
    check([l.split()[0] for l in review] == ["ncclCommResume", "pncclWinGetUserPtr"],
          f"review rows: {review}")
    check(all("not reviewed: new in libnccl.so.2" in l for l in review), "the note says why")
    check(update(tmp, "--check").returncode == 0, "a review row counts as a row")

    # The generator builds nothing from it.
    lib = copy.copy(next(l for l in libraries.LIBS if l.key == "nccl"))
    lib.table = path
    try:
        libraries.read_table(lib)
        check(False, "read_table accepted a review row")
    except SystemExit as e:
        check("await a decision" in str(e) and "ncclCommResume" in str(e), f"refusal: {e}")

if failures:
    sys.exit(1)
print("test_update: all checks passed")
