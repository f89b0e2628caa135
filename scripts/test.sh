#!/usr/bin/env bash
# The test command: builds everything, runs the ctest suite, then the ops/ suite and the PyTorch
# suite (tests/torch, then the kernel bridge's tests/bridge, then the training scripts of examples/
# in tests/examples: pytest, with the pinned PyTorch that ops/ci.sh installs into .venv/).
# TORCHADA_SKIP_OPS=1 skips the latter two (a flag as settings/settings.h reads flags: 1, true, yes,
# on, any case).
#   scripts/test.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
skip_ops=0
case "$(printf %s "${TORCHADA_SKIP_OPS:-0}" | tr '[:upper:]' '[:lower:]')" in
  1 | true | yes | on) skip_ops=1 ;;
  0 | false | no | off | "") ;;
  *) echo "scripts/test.sh: TORCHADA_SKIP_OPS=${TORCHADA_SKIP_OPS} is not a flag; running the ops suites" >&2 ;;
esac
# The pinned PyTorch first: the ctest suite checks its imports against libtorchada.so.
[ "$skip_ops" = 1 ] || scripts/setup-torch.sh >/dev/null
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build -j"$jobs" --output-on-failure "$@"
if [ "$skip_ops" != 1 ]; then
  ops/ci.sh
  # PyTorch's own CUDA wheel under torchada (launcher and bare LD_PRELOAD, on the simulator).
  py=$(scripts/setup-torch.sh | tail -n 1)
  # Every case runs its own interpreter, so the cases spread over the cores (pytest-xdist).
  pytest=("$py" -m pytest -q -p no:cacheprovider -n "$jobs")
  TORCHADA_BUILD_DIR="$PWD/build" "${pytest[@]}" tests/torch
  # The kernel bridge (ops/src/bridge) under torchada (its own conftest: a separate session).
  TORCHADA_BUILD_DIR="$PWD/build" "${pytest[@]}" tests/bridge
  # The training scripts of examples/, step by step against device="cpu".
  TORCHADA_BUILD_DIR="$PWD/build" "${pytest[@]}" tests/examples
else
  echo "scripts/test.sh: ops/ and PyTorch suites skipped (TORCHADA_SKIP_OPS=1)"
fi
