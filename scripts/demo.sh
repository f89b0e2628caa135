#!/usr/bin/env bash
# Builds the shim, the simulator and a CUDA program (compiled by nvcc against the real CUDA 13
# headers, dynamic cudart), then runs the program under LD_PRELOAD=libtorchada.so on the CPU
# simulator of the MUSA runtime. libtorchada.so needs its replacement libcuda.so.1 (lib/torchada/cuda),
# so the replacement libraries are built with it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target torchada torchada_replacements musart_sim musa_driver_sim program_device_query
echo
echo "\$ LD_PRELOAD=build/lib/libtorchada.so TORCHADA_BACKEND=sim build/bin/programs/device_query"
LD_PRELOAD="$PWD/build/lib/libtorchada.so" TORCHADA_BACKEND=sim TORCHADA_LOG_LEVEL=info \
  build/bin/programs/device_query

# PyTorch's own CUDA wheel, when scripts/setup-torch.sh has installed it (.venv/, ~3 GB).
if [ -x .venv/bin/python ]; then
  cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
  echo
  echo "\$ scripts/torchada-run --backend sim -- .venv/bin/python -c '...'"
  scripts/torchada-run --backend sim -- .venv/bin/python -c '
import torch
print("torch", torch.__version__, "sees", torch.cuda.device_count(), "device(s):",
      torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
a = torch.randn(256, 256)
b = (a.cuda() @ a.cuda()).cpu()
print("256x256 matmul through cuBLAS on the simulator, max error vs CPU:",
      (b - a @ a).abs().max().item())'
else
  echo
  echo "(scripts/setup-torch.sh installs PyTorch's CUDA wheel into .venv/; run this again to see it.)"
fi
