#!/usr/bin/env bash
# Installs the pinned PyTorch wheel (plus pytest, pytest-xdist, numpy, nvidia-ml-py) from PyPI into a project-local virtualenv,
# .venv/ (gitignored), so that ops/ can build against libtorch without touching the system Python.
# Idempotent: when the venv already holds the pinned versions it does nothing.
#
#   scripts/setup-torch.sh            create/update .venv and print its python
#   TORCHADA_VENV=/path               use another venv location
#   TORCHADA_TORCH_VERSION=x.y.z      override the pin (not for CI)
#
# Why the CUDA wheel: ops/ compiles CUDA kernels against libtorch's CUDA headers (ATen/cuda/*,
# c10/cuda/*), which only the CUDA build of torch ships. PyPI serves only that build for Linux
# x86-64 (the CPU-only wheel lives on download.pytorch.org, outside what CI may reach). torch 2.15.0
# is built against CUDA 13, the same major version as the toolkit nvcc in /usr/local/cuda, and it
# cannot be imported without its nvidia-* runtime wheels (cuBLAS, cuDNN, NCCL... ~3 GB on disk),
# so they are installed too. They are downloaded once; later runs find them in the venv.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${TORCHADA_VENV:-$root/.venv}
TORCH_VERSION=${TORCHADA_TORCH_VERSION:-2.15.0}
NUMPY_VERSION=2.3.5
PYTEST_VERSION=8.4.2
# pytest-xdist: scripts/test.sh runs the PyTorch suites on every core (each case is its own
# single-threaded interpreter, so two workers nearly halve them on a 2-core machine).
XDIST_VERSION=3.8.0
# pynvml (NVIDIA's NVML bindings): what torch.cuda.utilization, memory_usage, device_memory_used,
# temperature, power_draw and clock_rate call; tests/torch checks them against torchada's NVML.
NVML_PY_VERSION=13.615.71
PY=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
  echo "setup-torch: creating virtualenv $venv" >&2
  "$PY" -m venv "$venv"
fi
vpy="$venv/bin/python"

have() {  # have NAME VERSION: is exactly that version installed in the venv?
  "$vpy" - "$1" "$2" <<'PYEOF' 2>/dev/null
import sys
from importlib.metadata import version, PackageNotFoundError
try:
    sys.exit(0 if version(sys.argv[1]) == sys.argv[2] else 1)
except PackageNotFoundError:
    sys.exit(1)
PYEOF
}

want=()
have torch "$TORCH_VERSION" || want+=("torch==$TORCH_VERSION")
have numpy "$NUMPY_VERSION" || want+=("numpy==$NUMPY_VERSION")
have pytest "$PYTEST_VERSION" || want+=("pytest==$PYTEST_VERSION")
have pytest-xdist "$XDIST_VERSION" || want+=("pytest-xdist==$XDIST_VERSION")
have nvidia-ml-py "$NVML_PY_VERSION" || want+=("nvidia-ml-py==$NVML_PY_VERSION")
if ((${#want[@]})); then
  echo "setup-torch: installing ${want[*]} into $venv (torch pulls ~3 GB of nvidia-* wheels once)" >&2
  "$vpy" -m pip install -q --disable-pip-version-check --progress-bar off "${want[@]}"
fi
# Import check: fails loudly here rather than in the middle of a build.
"$vpy" -c "import torch; assert torch.__version__.split('+')[0] == '$TORCH_VERSION', torch.__version__" >&2
echo "$vpy"
