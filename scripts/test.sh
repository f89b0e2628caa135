#!/usr/bin/env bash
# Builds everything and runs the test suite: scripts/test.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build -j"$jobs" --output-on-failure "$@"
