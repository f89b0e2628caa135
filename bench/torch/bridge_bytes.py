#!/usr/bin/env python3
"""Bytes the kernel bridge moves between device and host per training step, for each example: what
the bridged operators would cost in PCIe traffic on a MUSA GPU.

    .venv/bin/python bench/torch/bridge_bytes.py [--steps N] [examples...]

Each example runs under scripts/torchada-run --backend sim with the bridge in copy mode
(TORCHADA_KERNEL_BRIDGE=copy, every bridged call copies its arguments to the host and its results
back, counted by torch.ops.torchada.bridge_moved_bytes via the exit report), once for N steps and
once for 2N, so that setup and the final evaluation cancel out: bytes per step = (bytes(2N) -
bytes(N)) / N. Two configurations: "kernels" (ops/'s device kernels, the default) and "bridge"
(TORCHADA_OPS_KERNELS=off: every such operator bridged, as before the device kernels).
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCHER = os.path.join(ROOT, "scripts", "torchada-run")

# Each example's arguments that keep evaluation and sampling out of the steps measured.
EXAMPLES = {
    "gpt": ["--eval-every", "0", "--generate", "0"],
    "cnn": ["--eval-every", "0"],
    "lstm": ["--eval-every", "0"],
    "llama": [],
    "gan": [],
}
CONFIGS = {"kernels": {}, "bridge": {"TORCHADA_OPS_KERNELS": "off"}}


def moved_mb(example, steps, config):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TORCHADA_") and k not in ("LD_PRELOAD", "LD_AUDIT")}
    if "TORCHADA_BUILD_DIR" in os.environ:
        env["TORCHADA_BUILD_DIR"] = os.environ["TORCHADA_BUILD_DIR"]
    env.update({"TORCHADA_KERNEL_BRIDGE": "copy", "TORCHADA_STATS": "1", "OMP_NUM_THREADS": "1"})
    env.update(CONFIGS[config])
    argv = [LAUNCHER, "--backend", "sim", "--", sys.executable,
            os.path.join(ROOT, "examples", example + ".py"), "--steps", str(steps),
            *EXAMPLES[example]]
    p = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    m = re.search(r"copy mode moved (\S+) MB", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit(f"bridge_bytes: {example} ({config}) failed (exit {p.returncode}):\n"
                 f"{p.stderr[-3000:]}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("examples", nargs="*", help=f"of {', '.join(EXAMPLES)} (default: all)")
    a = ap.parse_args()
    unknown = [e for e in a.examples if e not in EXAMPLES]
    if unknown:
        ap.error(f"unknown example(s) {', '.join(unknown)}: choose from {', '.join(EXAMPLES)}")
    a.examples = a.examples or list(EXAMPLES)
    print(f"copy-mode bytes per training step (({2 * a.steps} steps - {a.steps} steps) / "
          f"{a.steps}), MB")
    print(f"{'example':<10}" + "".join(f"{c:>12}" for c in CONFIGS))
    for ex in a.examples:
        row = []
        for c in CONFIGS:
            row.append((moved_mb(ex, 2 * a.steps, c) - moved_mb(ex, a.steps, c)) / a.steps)
        print(f"{ex:<10}" + "".join(f"{v:>12.3f}" for v in row))


if __name__ == "__main__":
    main()
