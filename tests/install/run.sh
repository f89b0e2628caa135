#!/usr/bin/env bash
# install.*: `cmake --install` into an empty temporary prefix, the tree moved elsewhere (the
# package files must not depend on the prefix given at install time), then consumers:
# find_package(torchada), pkg-config torchada, and the installed launcher and doctor running a
# CUDA program on the simulator.
#   env: BUILD_DIR, CMAKE_COMMAND, CUDA_PROGRAM (optional), SRC (this folder)
set -u
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/torchada-install.XXXXXX") || fail "mktemp"
trap 'rm -rf -- "$tmp"' EXIT
"$CMAKE_COMMAND" --install "$BUILD_DIR" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
mv "$tmp/prefix" "$tmp/moved"
P=$tmp/moved
under_prefix() {  # every path of the report file $1 resolves inside $P
  local line path
  while IFS= read -r line; do
    path=$(readlink -f -- "${line#*=}") || fail "$line: cannot resolve"
    case $path in "$P"/*) ;; *) fail "$line resolves to $path, outside the installed tree $P" ;; esac
    echo "  $line"
  done <"$1"
}

case $1 in
  find_package)
    "$CMAKE_COMMAND" -S "$SRC/consumer_cmake" -B "$tmp/c" -DCMAKE_PREFIX_PATH="$P" \
      -DOUT="$tmp/vars.txt" >"$tmp/c.log" 2>&1 || { cat "$tmp/c.log"; fail "find_package(torchada)"; }
    under_prefix "$tmp/vars.txt"
    grep -q "torchada_PRELOAD_LIBRARY=.*/libtorchada.so$" "$tmp/vars.txt" || fail "no preload library"
    ;;
  pkg_config)
    pc=$(find "$P" -name torchada.pc) && [ -n "$pc" ] || fail "torchada.pc not installed"
    grep -q '^prefix=${pcfiledir}/' "$pc" || fail "torchada.pc is not relocatable: $(grep ^prefix= "$pc")"
    export PKG_CONFIG_PATH=${pc%/*}
    preload=$(pkg-config --variable=preload torchada) || fail "pkg-config torchada"
    [ -f "$preload" ] || fail "pkg-config preload=$preload does not exist"
    pkg-config --libs torchada | grep -q -- "-ltorchada" || fail "pkg-config --libs"
    "$CMAKE_COMMAND" -S "$SRC/consumer_pkgconfig" -B "$tmp/c" -DOUT="$tmp/vars.txt" \
      >"$tmp/c.log" 2>&1 || { cat "$tmp/c.log"; fail "pkg_check_modules(torchada)"; }
    under_prefix "$tmp/vars.txt"
    ;;
  launcher_and_doctor)
    [ -n "${CUDA_PROGRAM:-}" ] || { echo "no CUDA test program (nvcc missing): skipped"; exit 77; }
    env -u TORCHADA_BUILD_DIR -u TORCHADA_BACKEND LD_PRELOAD="${SANITIZER_PRELOAD:-}" "$P/bin/torchada-run" --backend sim \
      --log-level info -- "$CUDA_PROGRAM" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "installed torchada-run"; }
    grep -q "backend sim from $P/lib[^ ]*/sim/libmusart.so" "$tmp/run.log" ||
      { cat "$tmp/run.log"; fail "the program did not run on the installed simulator"; }
    env -u TORCHADA_BUILD_DIR TORCHADA_BACKEND=sim LD_PRELOAD="${SANITIZER_PRELOAD:-}" "$P/bin/torchada-doctor" --no-pytorch --json \
      "$CUDA_PROGRAM" >"$tmp/doctor.json" 2>"$tmp/doctor.err" ||
      { cat "$tmp/doctor.json" "$tmp/doctor.err"; fail "installed torchada-doctor reported a problem"; }
    python3 - "$tmp/doctor.json" "$P" <<'PY' || fail "installed doctor's report"
import json, os, sys
doc = json.load(open(sys.argv[1])); prefix = sys.argv[2]
checks = {c["id"]: c for s in doc["sections"] for c in s["checks"]}
shim = checks["env.files"]["facts"]["shim"]
assert shim.startswith(prefix) and os.path.exists(shim), shim
assert checks["musa.libmusart"]["facts"]["path"].startswith(prefix), checks["musa.libmusart"]["facts"]
for cid in ("probe.gemm", "probe.copy", "probe.allreduce", "program"):
    assert checks[cid]["verdict"] == "ok", (cid, checks[cid])
print("  doctor:", doc["verdict"], "shim", shim)
PY
    env -u TORCHADA_BUILD_DIR LD_PRELOAD="${SANITIZER_PRELOAD:-}" "$P/bin/torchada-run" --backend sim --doctor --no-pytorch \
      >"$tmp/doctor.txt" 2>&1 || { cat "$tmp/doctor.txt"; fail "installed torchada-run --doctor"; }
    grep -Eq "^verdict: (ok|warning) .*, 0 problems" "$tmp/doctor.txt" || { cat "$tmp/doctor.txt"; fail "torchada-run --doctor verdict"; }
    ;;
  *) fail "unknown case $1" ;;
esac
echo PASS
