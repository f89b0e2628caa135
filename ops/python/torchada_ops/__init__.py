"""Loads libtorchada_ops.so into this PyTorch process and exposes its query functions.

    import torchada_ops
    torchada_ops.load()                 # finds the library, registers torchada:: ops
    torchada_ops.active_overrides()     # ['aten::neg', ...] under TORCHADA_ENABLE_CPP_OPS=1

Environment (read once, when the library is loaded):
    TORCHADA_OPS_LIBRARY=/path/libtorchada_ops.so   use this file
    TORCHADA_ENABLE_CPP_OPS=1                        register the aten overrides
    TORCHADA_DISABLE_OP_OVERRIDE_<op>=1              keep aten::<op> on the stock kernel
    TORCHADA_DEBUG_CPP_OPS=1                         log every call to stderr
    TORCHADA_OVERRIDE_KEY=auto|CPU|CUDA|PrivateUse1  force the overrides' dispatch key
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path

import torch

_loaded: str | None = None
_LIB = "libtorchada_ops.so"


def library_path() -> Path:
    """The library load() would use: $TORCHADA_OPS_LIBRARY, else the repository's build/lib."""
    env = os.environ.get("TORCHADA_OPS_LIBRARY")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    candidates = [here.parent / _LIB]  # installed next to this file
    for parent in here.parents:  # a source checkout: <repo>/build/lib
        candidates.append(parent / "build" / "lib" / _LIB)
    for c in candidates:
        if c.is_file():
            return c
    raise FileNotFoundError(
        f"{_LIB} not found (looked at {', '.join(map(str, candidates[:3]))}, ...); "
        "build it with ops/ci.sh or set TORCHADA_OPS_LIBRARY")


def load(path: str | os.PathLike | None = None) -> str:
    """Loads the library once per process and returns its path."""
    global _loaded
    if _loaded is not None:
        return _loaded
    # torch_musa renames the PrivateUse1 backend to "musa" on import; the library picks its
    # dispatch key at load time, so the backend must be imported first.
    try:
        importlib.import_module("torch_musa")
    except ImportError:
        pass
    p = str(path if path is not None else library_path())
    torch.ops.load_library(p)
    _loaded = p
    return p


def active_overrides() -> list[str]:
    """aten operators this process routes to torchada kernels."""
    load()
    return list(torch.ops.torchada.active_overrides())


def override_key() -> str:
    """Dispatch key of the aten overrides ('' when none are registered)."""
    load()
    return str(torch.ops.torchada.override_key())


def override_calls(op: str) -> int:
    """How many calls of op ('aten::neg', 'torchada::rms_norm', ...) ran a torchada kernel."""
    load()
    return int(torch.ops.torchada.override_calls(op))
