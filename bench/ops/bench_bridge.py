#!/usr/bin/env python3
"""Cost of the kernel bridge (ops/src/bridge), one run, ratios in one table.

Run under torchada on the simulator:
    TORCHADA_BUILD_DIR=build scripts/torchada-run --backend sim -- .venv/bin/python bench/ops/bench_bridge.py

Cases: a 1-element add (pure per-call overhead), a 1M-element add (overhead plus the copy of the
fresh result into CUDA memory), a 256x256 matmul (native cuBLAS path through the try-first kernel),
each on CUDA tensors (bridged) and on CPU tensors (PyTorch's CPU kernel alone). Reports the
median time per call and the bridge's added time (CUDA - CPU). Target: <= 3 us added for the
1-element add.
"""
import argparse
import statistics
import time

import torch


def timeit(fn, sync, n, reps):
    for _ in range(max(10, n // 10)):
        fn()
    sync()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        out.append((time.perf_counter() - t0) / n)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    torch.set_num_threads(1)
    mode = torch.ops.torchada.bridge_mode() if hasattr(torch.ops.torchada, "bridge_mode") else "?"
    sync_cuda = torch.cuda.synchronize
    cases = []
    for name, size in (("add 1 element", (1,)), ("add 1M elements", (1 << 20,))):
        c = torch.ones(size)
        g = c.cuda()
        cases.append((name, lambda c=c: c + c, lambda g=g: g + g))
    m = torch.randn(256, 256)
    gm = m.cuda()
    cases.append(("matmul 256x256 (cuBLAS)", lambda: m @ m, lambda: gm @ gm))
    print(f"kernel bridge mode: {mode}; {torch.get_num_threads()} thread; median of {a.reps} runs")
    print(f"{'case':28s} {'cpu us':>10s} {'cuda us':>10s} {'added us':>10s} {'ratio':>7s}")
    for name, cpu_fn, cuda_fn in cases:
        n = a.n if "1 element" in name else max(50, a.n // 20)
        tc = timeit(cpu_fn, lambda: None, n, a.reps) * 1e6
        tg = timeit(cuda_fn, sync_cuda, n, a.reps) * 1e6
        print(f"{name:28s} {tc:10.2f} {tg:10.2f} {tg - tc:10.2f} {tg / tc:7.2f}")


if __name__ == "__main__":
    main()
