#!/usr/bin/env python3
"""Benchmarks every torchada op against the stock PyTorch composition it replaces, eager and
torch.compile'd, in one run, and prints achieved GB/s and the ratios.

    python bench/ops/bench_ops.py                 # CPU, float32
    python bench/ops/bench_ops.py --device cuda   # GPU, bfloat16, % of peak HBM bandwidth
    python bench/ops/bench_ops.py --quick         # small sizes, few repeats (CI)

The aten overrides (neg, silu, gelu) replace the stock kernel in the process that loads them, so
they are timed in two child processes, one with TORCHADA_ENABLE_CPP_OPS=1 and one without.
Timings are medians; nothing here asserts on them.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "ops" / "python"))
import torchada_ops  # noqa: E402

# Peak HBM bandwidth in GB/s by device name, for the "% of peak" column.
PEAKS = {"H100 SXM": 3350, "H100 PCIe": 2000, "H100": 3350, "H200": 4800, "A100": 2039}


def timer(device, fn, iters, repeats):
    """Median seconds per call of fn over `repeats` runs of `iters` calls."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / iters)
        else:
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            times.append((time.perf_counter() - t0) / iters)
    return statistics.median(times)


def cases(device, dtype, quick):
    """(name, shape text, ours, eager composition, bytes moved by the minimal kernel)."""
    e = torch.tensor([], dtype=dtype).element_size()
    if device == "cuda":
        tokens, hidden, inter, heads, kv, hd = (4096, 4096, 14336, 32, 8, 128)
        if quick:
            tokens = 1024
    else:
        tokens, hidden, inter, heads, kv, hd = (256, 4096, 4096, 32, 8, 128)
        if quick:
            tokens = 64
    mk = lambda *s: torch.randn(*s, device=device, dtype=dtype)  # noqa: E731
    eps = 1e-6
    out = []

    x, w = mk(tokens, hidden), mk(hidden)

    def rms_eager(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)

    out.append(("rms_norm", f"{tokens}x{hidden}", lambda: torch.ops.torchada.rms_norm(x, w, eps),
                rms_eager, (x, w), (2 * tokens * hidden + hidden) * e))

    xa, ra = mk(tokens, hidden), mk(tokens, hidden)

    def fused_eager(x, r, w):
        r.add_(x)
        x.copy_(rms_eager(r, w))

    out.append(("fused_add_rms_norm", f"{tokens}x{hidden}",
                lambda: torch.ops.torchada.fused_add_rms_norm(xa, ra, w, eps), fused_eager,
                (xa, ra, w), (4 * tokens * hidden + hidden) * e))

    g = mk(tokens, 2 * inter)

    def silu_eager(x):
        a, b = x.chunk(2, -1)
        return F.silu(a) * b

    def gelu_eager(x):
        a, b = x.chunk(2, -1)
        return F.gelu(a, approximate="tanh") * b

    out.append(("silu_and_mul", f"{tokens}x{2 * inter}", lambda: torch.ops.torchada.silu_and_mul(g),
                silu_eager, (g,), 3 * tokens * inter * e))
    out.append(("gelu_and_mul(tanh)", f"{tokens}x{2 * inter}",
                lambda: torch.ops.torchada.gelu_and_mul(g, "tanh"), gelu_eager, (g,),
                3 * tokens * inter * e))

    pos = torch.randint(0, 4096, (tokens,), device=device)
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    fr = torch.outer(torch.arange(4096, dtype=torch.float32), inv)
    cache = torch.cat([fr.cos(), fr.sin()], -1).to(dtype).to(device)
    q, k = mk(tokens, heads * hd), mk(tokens, kv * hd)

    def rope_eager(pos, q, k, cache):
        cos, sin = cache[pos].chunk(2, -1)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        for t in (q, k):
            v = t.view(tokens, -1, hd)
            a, b = v.chunk(2, -1)
            v.copy_(torch.cat([a * cos - b * sin, b * cos + a * sin], -1))

    out.append(("rotary_embedding(neox)", f"{tokens}x({heads}+{kv})x{hd}",
                lambda: torch.ops.torchada.rotary_embedding(pos, q, k, hd, cache, True), rope_eager,
                (pos, q, k, cache), (2 * tokens * (heads + kv) * hd + tokens * hd) * e + 8 * tokens))
    return out


def bench_fused(args, dtype):
    iters, repeats = (10, 5) if args.quick else (20, 7)
    peak = args.peak_gbps
    if args.device == "cuda" and not peak:
        name = torch.cuda.get_device_name()
        peak = next((v for k, v in PEAKS.items() if k in name), 0)
    rows = []
    for name, shape, ours, eager, eargs, nbytes in cases(args.device, dtype, args.quick):
        t_ours = timer(args.device, ours, iters, repeats)
        t_eager = timer(args.device, lambda: eager(*eargs), iters, repeats)
        t_comp = float("nan")
        if not args.no_compile:
            torch._dynamo.reset()
            comp = torch.compile(eager)
            try:
                t_comp = timer(args.device, lambda: comp(*eargs), iters, repeats)
            except Exception as exc:  # an inductor failure must not hide the other columns
                print(f"note: torch.compile of the {name} composition failed: "
                      f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}", file=sys.stderr)
        gbps = nbytes / t_ours / 1e9
        rows.append(dict(op=name, shape=shape, us=t_ours * 1e6, gbps=gbps,
                         pct_peak=100 * gbps / peak if peak else float("nan"),
                         x_eager=t_eager / t_ours, x_compile=t_comp / t_ours))
    return rows, peak


UNARY_CHILD = r"""
import json, sys, torch, torch.nn.functional as F
sys.path.insert(0, {pypath!r})
sys.argv = ["bench"] + {argv!r}
import torchada_ops
torchada_ops.load()
sys.path.insert(0, {bench!r})
from bench_ops import timer
dev, dt, quick = {device!r}, getattr(torch, {dtype!r}), {quick!r}
import os
if os.environ.get("TORCHADA_BENCH_THREADS"):
    torch.set_num_threads(int(os.environ["TORCHADA_BENCH_THREADS"]))
n = (1 << 20 if quick else 1 << 24) if dev == "cuda" else (1 << 18 if quick else 1 << 21)
x = torch.randn(n, device=dev, dtype=dt)
iters, reps = (5, 3) if quick else (20, 7)
res = {{}}
for name, fn in (("neg", lambda: torch.neg(x)), ("silu", lambda: F.silu(x)),
                 ("gelu", lambda: F.gelu(x))):
    res[name] = timer(dev, fn, iters, reps)
res["active"] = torchada_ops.active_overrides()
res["n"] = n
print("RESULT " + json.dumps(res))
"""


def bench_unary(args, dtype):
    def child(enable):
        env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHADA_") or k in ("TORCHADA_OPS_LIBRARY", "TORCHADA_BENCH_THREADS")}
        if enable:
            env["TORCHADA_ENABLE_CPP_OPS"] = "1"
            if args.device == "cpu":
                env["TORCHADA_OVERRIDE_KEY"] = "CPU"
        code = UNARY_CHILD.format(pypath=str(REPO / "ops" / "python"), argv=[],
                                  bench=str(Path(__file__).parent), device=args.device,
                                  dtype=str(dtype).split(".")[-1], quick=args.quick)
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr[-2000:])
        return json.loads([l for l in p.stdout.splitlines() if l.startswith("RESULT ")][-1][7:])

    ours, stock = child(True), child(False)
    assert ours["active"] and not stock["active"], (ours["active"], stock["active"])
    e = torch.tensor([], dtype=dtype).element_size()
    return [dict(op=f"aten::{k} (override)", shape=str(ours["n"]), us=ours[k] * 1e6,
                 gbps=2 * ours["n"] * e / ours[k] / 1e9, x_eager=stock[k] / ours[k])
            for k in ("neg", "silu", "gelu")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--dtype", default=None, help="default: float32 on CPU, bfloat16 on GPU")
    ap.add_argument("--quick", action="store_true", help="small sizes, few repeats (CI)")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile column")
    ap.add_argument("--peak-gbps", type=float, default=0, help="peak memory bandwidth for %% of peak")
    ap.add_argument("--threads", type=int, default=0,
                    help="CPU threads (torch.set_num_threads); 1 gives stable figures on a shared machine")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("bench_ops: --device cuda but no CUDA device")
    dtype = getattr(torch, args.dtype or ("bfloat16" if args.device == "cuda" else "float32"))
    torchada_ops.load()
    if args.threads:
        torch.set_num_threads(args.threads)
        os.environ["TORCHADA_BENCH_THREADS"] = str(args.threads)  # for the override children
    torch.manual_seed(0)
    dev_name = torch.cuda.get_device_name() if args.device == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    print(f"torchada ops benchmark: {dev_name}, {dtype}, torch {torch.__version__}")
    rows, peak = bench_fused(args, dtype)
    rows += bench_unary(args, dtype)
    hdr = f"{'op':<24}{'shape':<22}{'us':>10}{'GB/s':>9}{'%peak':>7}{'x eager':>9}{'x compile':>10}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        fmt = lambda v, spec: (format(v, spec) if v == v else "-")  # noqa: E731  (NaN -> "-")
        print(f"{r['op']:<24}{r['shape']:<22}{r['us']:>10.1f}{r['gbps']:>9.1f}"
              f"{fmt(r.get('pct_peak', float('nan')), '>7.1f'):>7}{r['x_eager']:>9.2f}"
              f"{fmt(r.get('x_compile', float('nan')), '>10.2f'):>10}")
    if peak:
        print(f"% peak relative to {peak:.0f} GB/s")
    print("x eager / x compile: time of the stock composition (eager / torch.compile) divided by ours;"
          " > 1 means ours is faster. Overrides: x eager compares with the stock aten kernel.")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
