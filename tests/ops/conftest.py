"""Shared fixtures of the ops test suite: loads libtorchada_ops.so once, parametrizes devices."""
import os
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "ops" / "python"))

import torchada_ops  # noqa: E402

torchada_ops.load()

HAS_CUDA = torch.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device"))]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]

# Our kernels compute in float32 and round once; the reference does the same with a different
# summation order, so the differences are a few ulps of the storage type.
TOL = {
    torch.float32: dict(atol=1e-5, rtol=1e-5),
    torch.float16: dict(atol=2e-3, rtol=2e-3),
    torch.bfloat16: dict(atol=2e-2, rtol=2e-2),
}


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(params=DTYPES, ids=lambda d: str(d).split(".")[-1])
def dtype(request):
    return request.param


def assert_close(actual, expected, dtype):
    torch.testing.assert_close(actual, expected, **TOL[dtype])


def graph_targets(fn, *args):
    """Compiles fn with fullgraph=True (a graph break raises) and returns the ops in its graph."""
    seen = []

    def backend(gm, example_inputs):
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, fullgraph=True, backend=backend)(*args)
    return seen


def env_without_torchada():
    """The current environment with every TORCHADA_* variable removed (for subprocess tests)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TORCHADA_")}
