"""The kernel bridge (ops/src/bridge) under PyTorch's own CUDA wheel on the simulator.

Reuses tests/torch/conftest.py: every case runs a snippet in a fresh interpreter, under
scripts/torchada-run and under a bare LD_PRELOAD=libtorchada.so (the `mode` fixture); the build
tree is $TORCHADA_BUILD_DIR (default build/), which must hold lib/libtorchada_ops.so too.
"""
import importlib.util
import os

import pytest

_spec = importlib.util.spec_from_file_location(
    "torchada_torch_conftest",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch", "conftest.py"))
_tc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tc)

BUILD, SHIM, MODES = _tc.BUILD, _tc.SHIM, _tc.MODES
run, check, base_env = _tc.run, _tc.check, _tc.base_env
OPS = os.path.join(BUILD, "lib", "libtorchada_ops.so")


def pytest_collection_modifyitems(config, items):
    missing = [p for p in (SHIM, OPS) if not os.path.exists(p)]
    if missing:
        skip = pytest.mark.skip(reason=f"{', '.join(missing)} not built (cmake --build build)")
        for item in items:
            item.add_marker(skip)


@pytest.fixture(params=MODES)
def mode(request):
    return request.param
