#!/usr/bin/env bash
# The one entry point of ops/ for CI and for GPU machines:
#   installs the pinned torch (scripts/setup-torch.sh, into .venv/), builds libtorchada_ops.so with
#   its CUDA kernels (standalone CMake build in build/ops, library in build/lib), runs the pytest
#   suite and the benchmark. Exits non-zero on any failure.
#
#   ops/ci.sh          CPU: CUDA kernels compiled (not run), CPU kernels tested, quick CPU bench
#   ops/ci.sh --gpu    the same suite on a CUDA GPU (refuses to run without one), full GPU bench
#   ops/ci.sh --build-only   install torch and build the library, nothing else
#   ops/ci.sh --build-only --no-gpu-kernels   the same without the GPU kernels (nvcc): what the
#                      simulator runs is their host build, which every build has (scripts/demo.sh)
#
#   JOBS=2 (default)               parallel compile jobs
#   TORCHADA_OPS_BUILD_DIR=dir     CMake build directory (default build/ops)
#   TORCHADA_OPS_CUDA_ARCHS=list   CUDA architectures; without --gpu the default is 90 alone (the
#                                  kernels are compiled through ptxas to prove they build, not run;
#                                  a second architecture doubles the longest compile of the build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gpu=0
build_only=0
gpu_kernels=ON
for a in "$@"; do
  case "$a" in
    --gpu) gpu=1 ;;
    --build-only) build_only=1 ;;
    --no-gpu-kernels) gpu_kernels=OFF ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "ops/ci.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
if ((gpu)) && [ "$gpu_kernels" = OFF ]; then
  echo "ops/ci.sh: --gpu runs the GPU kernels; it cannot go with --no-gpu-kernels" >&2
  exit 2
fi
t0=$(date +%s)
step() { echo "== ops/ci.sh [$(($(date +%s) - t0))s] $*"; }

step "install torch"
py=$("$root/scripts/setup-torch.sh" | tail -n 1)

step "configure and build"
build=${TORCHADA_OPS_BUILD_DIR:-$root/build/ops}
gen=()
if command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ]; then gen=(-G Ninja); fi
archs=${TORCHADA_OPS_CUDA_ARCHS:-}
if [ -z "$archs" ] && ((!gpu)); then archs=90; fi
arch_def=()
if [ -n "$archs" ]; then arch_def=(-DTORCHADA_OPS_CUDA_ARCHS="$archs"); fi
cmake -S "$root/ops" -B "$build" "${gen[@]}" -DTORCHADA_OPS_PYTHON="$py" \
      -DTORCHADA_OPS_OUTPUT_DIR="$root/build/lib" -DTORCHADA_OPS_GPU="$gpu_kernels" "${arch_def[@]}" >/dev/null
cmake --build "$build" -j "${JOBS:-2}"
lib="$root/build/lib/libtorchada_ops.so"
# The CUDA kernels must really be in the library (CI compiles them even without a GPU). The section
# list is read whole first: `readelf | grep -q` under pipefail fails when grep exits early and
# readelf dies of SIGPIPE.
sections=$(readelf -SW "$lib")
if [ "$gpu_kernels" = ON ] && ! grep -q nv_fatbin <<<"$sections"; then
  echo "ops/ci.sh: $lib has no CUDA fatbinary: the GPU kernels were not built" >&2
  exit 1
fi
export TORCHADA_OPS_LIBRARY="$lib"
if ((build_only)); then step "built $lib"; exit 0; fi

bench_args=(--quick --threads 1)  # one thread: stable figures on a shared 2-core CI machine
if ((gpu)); then
  "$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'ops/ci.sh --gpu: no CUDA device visible to torch')"
  bench_args=(--device cuda)
fi

step "pytest tests/ops"
"$py" -m pytest -q -rs "$root/tests/ops"

step "benchmark (${bench_args[*]})"
"$py" "$root/bench/ops/bench_ops.py" "${bench_args[@]}"
step "done"
