#!/usr/bin/env bash
# The demo: an unmodified CUDA training script (examples/gpt.py, a small GPT written for NVIDIA
# GPUs) trains under torchada on the CPU simulator of MUSA, with PyTorch's own CUDA wheel:
#
#   scripts/torchada-run --backend sim -- .venv/bin/python examples/gpt.py --steps 40
#
# It prints the loss of every step, a sample of generated text and, at exit, TORCHADA_STATS's
# tables: the CUDA/cuBLAS/NCCL calls torchada served, and which PyTorch operators took the kernel
# bridge. It installs what it needs first, each step idempotent (a second run only trains):
# system packages (scripts/setup-deps.sh), the pinned PyTorch into .venv/ (scripts/setup-torch.sh,
# ~3 GB once), then only what the launcher puts into the process (the CMake target torchada_launch:
# the shim, its replacement libraries and audit module, the simulator, the NVML library) and
# libtorchada_ops.so without its GPU kernels (the simulator runs their host build). The test suite
# (scripts/test.sh) builds the rest in the same build/ later.
#
#   scripts/demo.sh [extra examples/gpt.py arguments, e.g. --steps 80 --precision bf16]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

say() { echo "== demo: $*"; }

say "system packages (scripts/setup-deps.sh)"
scripts/setup-deps.sh >/dev/null
say "PyTorch's CUDA wheel (scripts/setup-torch.sh)"
py=$(scripts/setup-torch.sh | tail -n 1)
say "building what the launcher loads (build/, target torchada_launch)"
t0=$(date +%s)
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j"$jobs" --target torchada_launch >/dev/null
say "building the kernel bridge and the device kernels (build/lib/libtorchada_ops.so)"
ops/ci.sh --build-only --no-gpu-kernels >/dev/null
say "built in $(($(date +%s) - t0)) s"

echo
echo "\$ TORCHADA_STATS=1 scripts/torchada-run --backend sim -- $py examples/gpt.py --steps 40 $*"
TORCHADA_STATS=1 scripts/torchada-run --backend sim -- "$py" examples/gpt.py --steps 40 "$@"
