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
# ~3 GB once), the shim, the simulator, the replacement libraries and libtorchada_ops.so.
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
say "building torchada (build/) and the kernel bridge (build/lib/libtorchada_ops.so)"
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j"$jobs" >/dev/null
ops/ci.sh --build-only >/dev/null

echo
echo "\$ TORCHADA_STATS=1 scripts/torchada-run --backend sim -- $py examples/gpt.py --steps 40 $*"
TORCHADA_STATS=1 scripts/torchada-run --backend sim -- "$py" examples/gpt.py --steps 40 "$@"
