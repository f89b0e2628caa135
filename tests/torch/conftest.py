"""PyTorch's own CUDA wheel under torchada, on the simulator.

Every case runs a Python snippet in a fresh interpreter, twice: under scripts/torchada-run (the
launcher: LD_PRELOAD, LD_AUDIT, replacement libraries) and under a bare LD_PRELOAD=libtorchada.so,
the usage line users copy. The build tree comes from $TORCHADA_BUILD_DIR (default build/).
"""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TORCHADA_BUILD_DIR", os.path.join(ROOT, "build"))
SHIM = os.path.join(BUILD, "lib", "libtorchada.so")
LAUNCHER = os.path.join(ROOT, "scripts", "torchada-run")
MODES = ("launcher", "preload")


def pytest_collection_modifyitems(config, items):
    if not os.path.exists(SHIM):
        skip = pytest.mark.skip(reason=f"{SHIM} is not built (cmake --build build first)")
        for item in items:
            item.add_marker(skip)


def base_env(extra=None):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("TORCHADA_") and k != "TORCHADA_BUILD_DIR":
            del env[k]
    env.pop("LD_PRELOAD", None)
    env.pop("LD_AUDIT", None)
    env["TORCHADA_BACKEND"] = "sim"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


def command(mode, argv):
    if mode == "launcher":
        return [LAUNCHER, "--backend", "sim", "--"] + argv
    return argv


def run(mode, code, env=None, timeout=300, args=()):
    """Runs `code` in a fresh interpreter under torchada (`mode`); returns CompletedProcess."""
    e = base_env(env)
    if mode == "preload":
        e["LD_PRELOAD"] = SHIM
    argv = command(mode, [sys.executable, "-c", textwrap.dedent(code)] + list(args))
    return subprocess.run(argv, env=e, capture_output=True, text=True, timeout=timeout)


def check(proc):
    assert proc.returncode == 0, (f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}"
                                  f"\n--- stderr\n{proc.stderr[-6000:]}")
    return proc


@pytest.fixture(params=MODES)
def mode(request):
    return request.param
