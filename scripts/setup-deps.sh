#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test torchada, and unpacks NVIDIA's
# runtime, cuBLAS and NCCL headers/libraries from the PyPI wheels under .deps/: cuda12/ (the
# nvidia-*-cu12 wheels) and cuda13/ (the wheels the pinned PyTorch brings: their headers declare
# the CUDA 13 ABI the shim serves, their export tables are the reference of tests/symbols).
# Idempotent: a second run does nothing that is already done.
#
#   scripts/setup-deps.sh            build + test dependencies
#   scripts/setup-deps.sh --ops      also PyTorch for ops/ (large download)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
want_ops=0
for a in "$@"; do
  case "$a" in
    --ops) want_ops=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup-deps: unknown option $a" >&2; exit 2 ;;
  esac
done

# Pinned versions of what comes from PyPI.
# The newest CUDA 12 wheels PyPI serves (the .12 ABIs).
CUDA12_RUNTIME_VERSION=12.9.79
CUDA12_CUBLAS_VERSION=12.9.3.13
NVML_DEV_VERSION=12.9.79
# What torch 2.15.0+cu132 (scripts/setup-torch.sh) brings: cudart 13.2, cuBLAS(Lt) 13.4, NCCL 2.30.
# Moving to newer ones: symbols/README.md ("Updating to a new release").
CUDA13_RUNTIME_VERSION=13.2.86   # also nvidia-cuda-crt (crt/host_defines.h, which cuda_runtime_api.h includes)
CUDA13_CUBLAS_VERSION=13.4.1.3
NCCL_CU13_VERSION=2.30.7
LIBCLANG_VERSION=18.1.1

need_apt=()
for pkg in cmake ninja-build g++ libgtest-dev libgmock-dev libbenchmark-dev python3 python3-pip \
           libelf-dev libunwind-dev libopenblas-dev pkg-config; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  echo "setup-deps: installing ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

PY=${PYTHON:-python3}
pip_install() { "$PY" -m pip install -q --disable-pip-version-check "$@" 2>&1 | grep -v "Running pip as the 'root'" || true; }

# libclang: the symbols/ generator parses NVIDIA's headers with it (tests check the committed
# generated code is up to date).
"$PY" -c "import clang.cindex" 2>/dev/null || pip_install "libclang==$LIBCLANG_VERSION"

# NVIDIA's headers and libraries, unpacked from PyPI wheels under .deps/<dir> (not installed into
# Python): the runtime, cuBLAS/cuBLASLt and (CUDA 13) NCCL. Their headers define the ABI the shim
# serves (symbols/generate.py and the build read them), their export tables what it must export.
# A version file per wheel makes a changed pin unpack again.
unpack_wheel() {  # unpack_wheel <dir under .deps> <requirement>
  local dir=$1 req=$2 tmp stamp
  stamp="$deps/$dir/.wheels/${req%%==*}"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$req" ] && return 0
  tmp=$(mktemp -d)
  "$PY" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "$req"
  mkdir -p "$deps/$dir/.wheels"
  "$PY" - "$tmp" "$deps/$dir" <<'PYEOF'
import sys, zipfile, glob, os, shutil
src, dst = sys.argv[1], sys.argv[2]
for whl in glob.glob(os.path.join(src, "*.whl")):
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            parts = n.split("/")
            # nvidia/<component>/{include,lib}/...
            if len(parts) >= 4 and parts[0] == "nvidia" and parts[2] in ("include", "lib") and not n.endswith("/"):
                out = os.path.join(dst, *parts[2:])
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with z.open(n) as f, open(out + ".part", "wb") as g:
                    shutil.copyfileobj(f, g)
                os.replace(out + ".part", out)
PYEOF
  rm -rf "$tmp"
  echo "$req" >"$stamp"
  echo "setup-deps: $req unpacked in $deps/$dir"
}
unpack_wheel cuda12 "nvidia-cuda-runtime-cu12==$CUDA12_RUNTIME_VERSION"
unpack_wheel cuda12 "nvidia-cublas-cu12==$CUDA12_CUBLAS_VERSION"
# nvml.h (NVML's API is versioned on its own, not by CUDA release): nvml/ serves libnvidia-ml.so.1.
unpack_wheel cuda12 "nvidia-nvml-dev-cu12==$NVML_DEV_VERSION"
unpack_wheel cuda13 "nvidia-cuda-runtime==$CUDA13_RUNTIME_VERSION"
unpack_wheel cuda13 "nvidia-cuda-crt==$CUDA13_RUNTIME_VERSION"
unpack_wheel cuda13 "nvidia-cublas==$CUDA13_CUBLAS_VERSION"
unpack_wheel cuda13 "nvidia-nccl-cu13==$NCCL_CU13_VERSION"
# CUPTI (libcupti.so.13 and cupti*.h), the same release as the runtime: what torchada's CUPTI
# (shim/cupti/, symbols/cupti.txt) is checked against and compiled with.
unpack_wheel cuda13 "nvidia-cuda-cupti==$CUDA13_RUNTIME_VERSION"

# Intel MKL's single dynamic library and the parts it loads (CPU kernels, GNU OpenMP threading),
# from PyPI, under .deps/mkl/lib: the simulator's GEMMs use it when present (sim/blas/
# gemm_library.h), as PyTorch's CPU kernels do. Not the BLACS/ScaLAPACK/VML parts.
MKL_VERSION=2026.2.0
MKL_LIBS="rt core intel_lp64 sequential gnu_thread def mc3 avx2 avx512 avx10"
unpack_mkl() {
  local stamp="$deps/mkl/.wheels/mkl" tmp
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "mkl==$MKL_VERSION $MKL_LIBS" ] && return 0
  tmp=$(mktemp -d)
  "$PY" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "mkl==$MKL_VERSION"
  mkdir -p "$deps/mkl/.wheels" "$deps/mkl/lib"
  "$PY" - "$tmp" "$deps/mkl/lib" "$MKL_LIBS" <<'PYEOF'
import glob, os, re, shutil, sys, zipfile
src, dst, libs = sys.argv[1], sys.argv[2], sys.argv[3].split()
keep = re.compile(r"libmkl_(%s)\.so\.\d+$" % "|".join(libs))
for whl in glob.glob(os.path.join(src, "*.whl")):
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            base = n.rsplit("/", 1)[-1]
            if "/data/lib/" in n and keep.match(base):
                out = os.path.join(dst, base)
                with z.open(n) as f, open(out + ".part", "wb") as g:
                    shutil.copyfileobj(f, g)
                os.replace(out + ".part", out)
PYEOF
  rm -rf "$tmp"
  echo "mkl==$MKL_VERSION $MKL_LIBS" >"$stamp"
  echo "setup-deps: mkl==$MKL_VERSION unpacked in $deps/mkl"
}
unpack_mkl

# The CUDA 13 toolkit still provides nvcc (the test programs) and the driver stubs.
if [ ! -f /usr/local/cuda/include/cuda_runtime_api.h ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "setup-deps: the CUDA 13 toolkit is expected at /usr/local/cuda (or set CUDAToolkit_ROOT)" >&2
  exit 1
fi

if ((want_ops)) && [ -x "$root/scripts/setup-torch.sh" ]; then
  "$root/scripts/setup-torch.sh"
fi
echo "setup-deps: done"
