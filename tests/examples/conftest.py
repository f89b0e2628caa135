"""The training scripts of examples/ under torchada, compared step by step with device="cpu".

Each example prints one line per step ("step N loss X ..."); a case runs the script on
device="cuda" under torchada on the simulator (scripts/torchada-run or a bare
LD_PRELOAD=libtorchada.so) and the same script with the same arguments on device="cpu" in a plain
interpreter, and compares the losses of every step. The build tree is $TORCHADA_BUILD_DIR
(default build/); it must hold lib/libtorchada_ops.so (the kernel bridge).
"""
import functools
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TORCHADA_BUILD_DIR", os.path.join(ROOT, "build"))
SHIM = os.path.join(BUILD, "lib", "libtorchada.so")
OPS = os.path.join(BUILD, "lib", "libtorchada_ops.so")
LAUNCHER = os.path.join(ROOT, "scripts", "torchada-run")
EXAMPLES = os.path.join(ROOT, "examples")


def pytest_collection_modifyitems(config, items):
    missing = [p for p in (SHIM, OPS) if not os.path.exists(p)]
    if missing:
        skip = pytest.mark.skip(reason=f"{', '.join(missing)} not built (cmake --build build)")
        for item in items:
            item.add_marker(skip)


def _env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TORCHADA_") and k not in ("LD_PRELOAD", "LD_AUDIT")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # These runs are compared with device="cpu" runs: random operators draw what PyTorch's CPU
    # generator draws for the same seed (the bridge), not the CUDA generator's Philox numbers an
    # NVIDIA GPU (and torchada's default) draws. A test of the default passes "philox".
    env["TORCHADA_OPS_RNG"] = "cpu"
    env.update(extra or {})
    return env


def run_example(script, args=(), mode="launcher", env=None, timeout=600, argv_prefix=()):
    """Runs examples/`script` with `args`: mode "launcher" or "preload" (device="cuda" under
    torchada on the simulator) or "cpu" (device="cpu", no torchada). Returns its stdout; fails the
    test with both streams when it exits non-zero."""
    e = _env(env)
    argv = list(argv_prefix) + [os.path.join(EXAMPLES, script)] + list(args)
    if mode == "cpu":
        argv = [sys.executable] + argv + ["--device", "cpu"]
    else:
        e["TORCHADA_BACKEND"] = "sim"
        argv = [sys.executable] + argv + ["--device", "cuda"]
        if mode == "launcher":
            argv = [LAUNCHER, "--backend", "sim", "--"] + argv
        else:
            e["LD_PRELOAD"] = SHIM
    proc = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, (f"{' '.join(argv)}: exit {proc.returncode}\n--- stdout\n"
                                  f"{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-6000:]}")
    return proc


@functools.lru_cache(maxsize=None)
def cpu_reference(script, args):
    """The device="cpu" run of `script` (cached: several cases compare against the same one)."""
    return run_example(script, args, mode="cpu").stdout


_STEP = re.compile(r"^step (\d+) loss (\S+)", re.M)
_EVAL = re.compile(r"^eval (\d+) val_loss (\S+)", re.M)


def losses(stdout, pattern=_STEP):
    """{step: loss} from an example's output."""
    out = {int(m.group(1)): float(m.group(2)) for m in pattern.finditer(stdout)}
    assert out, f"no step lines in:\n{stdout[-2000:]}"
    return out


def eval_losses(stdout):
    return losses(stdout, _EVAL)


def assert_close_steps(got, want, rtol, what="loss"):
    """Every step of `want` is in `got`, equal within `rtol` (relative); reports the worst."""
    assert sorted(got) == sorted(want), f"steps differ: {sorted(got)} vs {sorted(want)}"
    worst = max(want, key=lambda s: abs(got[s] - want[s]) / max(abs(want[s]), 1e-12))
    err = abs(got[worst] - want[worst]) / max(abs(want[worst]), 1e-12)
    assert err <= rtol, (f"{what} at step {worst}: {got[worst]!r} under torchada vs "
                         f"{want[worst]!r} on the CPU (relative error {err:.3g} > {rtol})")
    return err


def sample(stdout):
    m = re.search(r"^sample (.*)$", stdout, re.M)
    assert m, f"no sample line in:\n{stdout[-2000:]}"
    return m.group(1)
