#!/usr/bin/env python3
"""examples/gpt.py's training step under torchada on the simulator against device="cpu", as ratios
taken in one run.

    .venv/bin/python bench/torch/bench_gpt.py [--rounds N] [--steps N] [--threads N]
                                              [-- extra gpt.py args]

Configurations, alternating round by round so that load on a shared machine hits them alike:
  cpu      the script on device="cpu", no torchada (the reference)
  device   device="cuda" under scripts/torchada-run --backend sim, as a user gets it: ops/'s device
           kernels (run by the simulator's executor) where they exist, the kernel bridge in direct
           mode for the rest
  direct   the same with TORCHADA_OPS_KERNELS=off: every such operator on the bridge, direct mode
           (the CPU kernels run on device memory, which is host memory on the simulator)
  copy     device kernels, and the bridge with TORCHADA_KERNEL_BRIDGE=copy for the rest (arguments
           copied to host tensors and back: what a MUSA GPU pays for each bridged call)
Each run reports the median step time after its warm-up steps (gpt.py's "step_time_ms" line); the
table gives the median over rounds and the ratio to cpu.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCHER = os.path.join(ROOT, "scripts", "torchada-run")
GPT = os.path.join(ROOT, "examples", "gpt.py")


CONFIGS = {
    "cpu": {},
    "device": {"TORCHADA_KERNEL_BRIDGE": "direct"},
    "direct": {"TORCHADA_KERNEL_BRIDGE": "direct", "TORCHADA_OPS_KERNELS": "off"},
    "copy": {"TORCHADA_KERNEL_BRIDGE": "copy"},
}


def step_ms(config, steps, threads, extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TORCHADA_") and k not in ("LD_PRELOAD", "LD_AUDIT")}
    env["OMP_NUM_THREADS"] = str(threads)
    if "TORCHADA_BUILD_DIR" in os.environ:
        env["TORCHADA_BUILD_DIR"] = os.environ["TORCHADA_BUILD_DIR"]
    argv = [sys.executable, GPT, "--steps", str(steps), "--eval-every", "0", "--generate", "0",
            *extra]
    if config == "cpu":
        argv += ["--device", "cpu"]
    else:
        argv = [LAUNCHER, "--backend", "sim", "--"] + argv + ["--device", "cuda"]
        env.update(CONFIGS[config])
    p = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    m = re.search(r"^step_time_ms median (\S+)", p.stdout, re.M)
    if p.returncode != 0 or not m:
        sys.exit(f"bench_gpt: {config} run failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1,
                    help="PyTorch's CPU threads in every configuration (OMP_NUM_THREADS): one by "
                         "default, so that a shared 2-core machine is not oversubscribed")
    ap.add_argument("extra", nargs="*", help="more examples/gpt.py arguments (after --)")
    a = ap.parse_args()
    configs = tuple(CONFIGS)
    times = {c: [] for c in configs}
    for _ in range(a.rounds):
        for c in configs:
            times[c].append(step_ms(c, a.steps, a.threads, a.extra))
    base = statistics.median(times["cpu"])
    print(f"examples/gpt.py {' '.join(a.extra)}: median step time over {a.rounds} rounds "
          f"of {a.steps} steps, {a.threads} CPU thread(s)")
    print(f"{'configuration':<14}{'step ms':>10}{'x cpu':>8}")
    for c in configs:
        t = statistics.median(times[c])
        print(f"{c:<14}{t:>10.2f}{t / base:>8.2f}")


if __name__ == "__main__":
    main()
