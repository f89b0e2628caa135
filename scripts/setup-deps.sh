#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test torchada, and unpacks the
# CUDA 12 runtime headers/libraries (PyPI's nvidia-*-cu12 wheels) under .deps/.
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
CUDA12_RUNTIME_VERSION=12.9.79
CUDA12_CUBLAS_VERSION=12.9.1.4
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

# CUDA 12 headers and libraries, unpacked from PyPI wheels under .deps/cuda12 (not installed into
# Python): the runtime, and cuBLAS/cuBLASLt (their export tables and headers define the CUDA 12
# cuBLAS ABI the shim serves).
unpack_wheel() {  # unpack_wheel <requirement> <marker file under .deps/cuda12>
  local req=$1 marker=$2 tmp
  [ -f "$deps/cuda12/$marker" ] && return 0
  tmp=$(mktemp -d)
  "$PY" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "$req"
  mkdir -p "$deps/cuda12"
  "$PY" - "$tmp" "$deps/cuda12" <<'PYEOF'
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
                with z.open(n) as f, open(out, "wb") as g:
                    shutil.copyfileobj(f, g)
PYEOF
  rm -rf "$tmp"
  echo "setup-deps: $req unpacked in $deps/cuda12"
}
unpack_wheel "nvidia-cuda-runtime-cu12==$CUDA12_RUNTIME_VERSION" include/cuda_runtime_api.h
unpack_wheel "nvidia-cublas-cu12==$CUDA12_CUBLAS_VERSION" include/cublas_api.h

if [ ! -f /usr/local/cuda/include/cuda_runtime_api.h ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "setup-deps: the CUDA 13 toolkit is expected at /usr/local/cuda (or set CUDAToolkit_ROOT)" >&2
  exit 1
fi

if ((want_ops)) && [ -x "$root/scripts/setup-torch.sh" ]; then
  "$root/scripts/setup-torch.sh"
fi
echo "setup-deps: done"
