#!/usr/bin/env bash
# The test command: builds everything, runs the ctest suite, then the ops/ suite (pytest, with the
# pinned PyTorch that ops/ci.sh installs into .venv/). TORCHADA_SKIP_OPS=1 skips the latter.
#   scripts/test.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build -j"$jobs" --output-on-failure "$@"
if [ "${TORCHADA_SKIP_OPS:-0}" != 1 ]; then
  ops/ci.sh
else
  echo "scripts/test.sh: ops/ suite skipped (TORCHADA_SKIP_OPS=1)"
fi
