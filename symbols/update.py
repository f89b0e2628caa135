#!/usr/bin/env python3
"""Brings symbols/*.txt up to NVIDIA's reference libraries: one row per exported name.

    symbols/update.py            add a `review` row for every export without one, print them
    symbols/update.py --check    change nothing; exit 1 when an export has no row (or a row names
                                 a function the library no longer exports)

The reference libraries are the ones scripts/setup-deps.sh unpacks from PyPI wheels: .deps/cuda13
(the wheels the pinned PyTorch brings) and .deps/cuda12 (the newest CUDA 12 wheels). Moving to a
newer release: change the pins in scripts/setup-deps.sh, run it, run this, decide every `review`
row (symbols/README.md), run symbols/generate.py.

A `review` row is a placeholder: symbols/generate.py refuses to build from a table that has one,
naming each, so a new function is never exported with a disposition nobody chose.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Ref:
    """One reference library: the table it must match, the ABI column, the version node."""

    def __init__(self, table, abi, lib, node, deps, wheel, headers, prefixes):
        self.table, self.abi, self.lib, self.node = table, abi, lib, node
        self.deps, self.wheel, self.headers, self.prefixes = deps, wheel, headers, prefixes


REFS = [
    Ref("cudart.txt", "13", "libcudart.so.13", "libcudart.so.13", "cuda13", "nvidia-cuda-runtime",
        ["cuda_runtime_api.h", "cuda_profiler_api.h"], ("cuda", "__cuda")),
    Ref("cudart.txt", "12", "libcudart.so.12", "libcudart.so.12", "cuda12",
        "nvidia-cuda-runtime-cu12", ["cuda_runtime_api.h", "cuda_profiler_api.h"], ("cuda", "__cuda")),
    Ref("cublas.txt", "13", "libcublas.so.13", "libcublas.so.13", "cuda13", "nvidia-cublas",
        ["cublas_api.h", "cublas.h"], ("cublas",)),
    Ref("cublas.txt", "12", "libcublas.so.12", "libcublas.so.12", "cuda12", "nvidia-cublas-cu12",
        ["cublas_api.h", "cublas.h"], ("cublas",)),
    Ref("cublasLt.txt", "13", "libcublasLt.so.13", "libcublasLt.so.13", "cuda13", "nvidia-cublas",
        ["cublasLt.h"], ("cublasLt",)),
    Ref("cublasLt.txt", "12", "libcublasLt.so.12", "libcublasLt.so.12", "cuda12",
        "nvidia-cublas-cu12", ["cublasLt.h"], ("cublasLt",)),
    # libnccl.so.2 is unversioned: its nccl*/pnccl* functions.
    Ref("nccl.txt", "2", "libnccl.so.2", None, "cuda13", "nvidia-nccl-cu13", ["nccl.h"],
        ("nccl", "pnccl")),
]


def exports(path, ref):
    """Function names the library defines (in ref.node when versioned)."""
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"symbols/update.py: cannot read the exports of {path}: {e}")
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] not in ("T", "W", "i"):
            continue
        sym = parts[2]
        name, _, node = sym.partition("@")
        node = node.lstrip("@")
        if ref.node is None:
            if name.startswith(ref.prefixes):
                names.add(name)
        elif node == ref.node:
            names.add(name)
    return names


def wheel_version(deps_dir, wheel):
    """The pinned requirement scripts/setup-deps.sh recorded when it unpacked the wheel."""
    stamp = os.path.join(deps_dir, ".wheels", wheel)
    return open(stamp).read().strip() if os.path.exists(stamp) else "unknown version"


def read_rows(path):
    """[(line index, name, [abis])] of a table's rows."""
    rows = []
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(None, 4)
        if len(parts) >= 2:
            rows.append((i, parts[0], parts[1].split(",")))
    return lines, rows


def column_starts(lines, rows):
    """Where the abi, disposition, target and note columns start in this table (a row with a note)."""
    for i, _, _ in rows:
        starts = [m.start() for m in re.finditer(r"\S+", lines[i])]
        if len(starts) >= 5:
            return starts[1:5]
    return None


def format_row(starts, *fields):
    if starts is None:
        return "  ".join(fields)
    out = fields[0]
    for col, text in zip(starts, fields[1:]):
        out = out.ljust(col) if len(out) < col else out + " "
        out += text
    return out


def declared(ref, deps_dir, name):
    inc = os.path.join(deps_dir, "include")
    pat = re.compile(r"\b" + re.escape(name) + r"\s*\(")
    for h in ref.headers:
        p = os.path.join(inc, h)
        if os.path.exists(p) and pat.search(open(p, errors="replace").read()):
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when out of date")
    ap.add_argument("--deps", default=os.path.join(ROOT, ".deps"),
                    help="where scripts/setup-deps.sh unpacked the wheels (default .deps)")
    ap.add_argument("--tables", default=HERE, help="the folder of the tables (default symbols/)")
    a = ap.parse_args()

    added, gone, missing_refs = {}, [], []
    for ref in REFS:
        deps_dir = os.path.join(a.deps, ref.deps)
        lib = os.path.join(deps_dir, "lib", ref.lib)
        if not os.path.exists(lib):
            missing_refs.append(lib)
            continue
        version = wheel_version(deps_dir, ref.wheel)
        path = os.path.join(a.tables, ref.table)
        lines, rows = read_rows(path)
        have = {name for _, name, abis in rows if ref.abi in abis}
        nvidia = exports(lib, ref)
        gone += [f"{ref.table}: {n} ({ref.abi}) is no longer exported by {ref.lib} ({version})"
                 for n in sorted(have - nvidia)]
        new = sorted(nvidia - have)
        if not new:
            continue
        starts = column_starts(lines, rows)
        for name in new:
            how = ("declared by the headers" if declared(ref, deps_dir, name)
                   else "not declared by the public headers")
            note = f"not reviewed: new in {ref.lib} ({version}), {how}"
            row = format_row(starts, name, ref.abi, "review", "-", note)
            added.setdefault(ref.table, []).append(row)
            if a.check:
                continue
            # Sorted position: before the first row whose name sorts after this one.
            at = next((i for i, n, _ in rows if n > name), len(lines) - (lines[-1] == ""))
            lines.insert(at, row)
            rows = [(i + (i >= at), n, ab) for i, n, ab in rows]
        if not a.check:
            with open(path, "w") as f:
                f.write("\n".join(lines))

    for lib in missing_refs:
        print(f"symbols/update.py: {lib} is missing: run scripts/setup-deps.sh", file=sys.stderr)
    for table, rows in added.items():
        print(f"symbols/{table}: {len(rows)} export(s) without a row"
              + ("" if a.check else " (added as `review`: decide each, then symbols/generate.py)"))
        for r in rows:
            print("  " + r.rstrip())
    for g in gone:
        print(f"symbols/{g}: remove the row (or its ABI)")
    if not added and not gone:
        print("symbols/update.py: every export of the reference libraries has a row")
    if missing_refs:
        return 2
    return 1 if a.check and (added or gone) else 0


if __name__ == "__main__":
    sys.exit(main())
