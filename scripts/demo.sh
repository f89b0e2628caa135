#!/usr/bin/env bash
# Builds the shim, the simulator and a CUDA program (compiled by nvcc against the real CUDA 13
# headers, dynamic cudart), then runs the program under LD_PRELOAD=libtorchada.so on the CPU
# simulator of the MUSA runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target torchada musart_sim program_device_query
echo
echo "\$ LD_PRELOAD=build/lib/libtorchada.so TORCHADA_BACKEND=sim build/bin/programs/device_query"
LD_PRELOAD="$PWD/build/lib/libtorchada.so" TORCHADA_BACKEND=sim TORCHADA_LOG_LEVEL=info \
  build/bin/programs/device_query
