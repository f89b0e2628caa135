#!/usr/bin/env python3
"""What torchada adds to PyTorch's host-side work, on the simulator, as ratios taken in one run.

    .venv/bin/python bench/torch/bench_torch.py [--rounds N] [--iters N]

1. Start-up: `import torch` and `import torch; torch.cuda.init()` in fresh interpreters, under
   scripts/torchada-run, under a bare LD_PRELOAD=libtorchada.so, and without torchada (import only:
   without a GPU, CUDA cannot initialise there). The configurations alternate round by round, so
   load on a shared machine hits them alike; medians are reported.
2. A loop of small host calls in one process: torch.cuda.current_stream(), Event.record() and a
   4-byte host-to-device copy, per iteration, under the launcher and under the bare preload.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TORCHADA_BUILD_DIR", os.path.join(ROOT, "build"))
SHIM = os.path.join(BUILD, "lib", "libtorchada.so")
LAUNCHER = os.path.join(ROOT, "scripts", "torchada-run")

LOOP = """
import time, torch
torch.cuda.init()
x = torch.tensor([1.0])
e = torch.cuda.Event()
d = torch.empty(1, device="cuda")
for _ in range(100):
    torch.cuda.current_stream(); e.record(); d.copy_(x)
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range({iters}):
    torch.cuda.current_stream()
    e.record()
    d.copy_(x)
torch.cuda.synchronize()
print((time.perf_counter() - t) / {iters} * 1e6)
"""


def env(extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TORCHADA_") and k != "LD_PRELOAD"}
    e.update(extra)
    return e


def argv_for(config, code):
    py = [sys.executable, "-c", code]
    if config == "launcher":
        return [LAUNCHER, "--backend", "sim", "--"] + py, env({})
    if config == "preload":
        return py, env({"LD_PRELOAD": SHIM, "TORCHADA_BACKEND": "sim"})
    return py, env({})


def timed(config, code):
    argv, e = argv_for(config, code)
    t = time.perf_counter()
    p = subprocess.run(argv, env=e, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{config}: {code!r} failed:\n{p.stderr[-2000:]}")
    return dt, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20000)
    a = ap.parse_args()
    cases = [("none", "import torch"), ("preload", "import torch"), ("launcher", "import torch"),
             ("preload", "import torch; torch.cuda.init()"),
             ("launcher", "import torch; torch.cuda.init()")]
    times = {c: [] for c in cases}
    timed("none", "import torch")  # warm the page cache
    for _ in range(a.rounds):
        for c in cases:
            times[c].append(timed(*c)[0])
    med = {c: statistics.median(v) for c, v in times.items()}
    base = med[("none", "import torch")]
    print(f"start-up, median of {a.rounds} rounds (wall seconds; ratio to `import torch` without torchada)")
    for c in cases:
        print(f"  {c[0]:<9} {c[1]:<34} {med[c]:7.3f} s   x{med[c] / base:5.2f}")
    loop = {}
    for config in ("preload", "launcher"):
        runs = [float(timed(config, LOOP.format(iters=a.iters))[1]) for _ in range(3)]
        loop[config] = statistics.median(runs)
    print("host-call loop (current_stream + Event.record + 4-byte H2D copy), microseconds per iteration")
    for config, us in loop.items():
        print(f"  {config:<9} {us:8.2f} us   x{us / loop['preload']:5.2f} of the bare preload")


if __name__ == "__main__":
    main()
