# shellcheck shell=bash
# Shared by tests/audit/run.sh and tests/launcher/run.sh (sourced). The PROBE_* variables come
# from tests/audit/CMakeLists.txt.
set -u

# A clean slate: nothing of the calling environment decides what a case sees.
unset LD_PRELOAD LD_AUDIT LD_LIBRARY_PATH TORCHADA_DISABLE TORCHADA_BACKEND TORCHADA_LOG_LEVEL \
  TORCHADA_LOG_FILE TORCHADA_STATS TORCHADA_STRICT TORCHADA_TRACE TORCHADA_CHECK TORCHADA_RUN \
  TORCHADA_SIM_LIB_DIR CUDA_HOME
export TORCHADA_SIM_DEVICES=3 TORCHADA_SIM_MEMORY_MB=1234

tmp=$(mktemp -d "${TMPDIR:-/tmp}/torchada-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
skip() {
  echo "SKIPPED: $*"
  exit 77
}
note() { echo "-- $*"; }

# san_preload [LIST]: LIST with the sanitizer runtime (if this is a sanitizer build) in front, as
# a sanitized library loaded into an unsanitized program needs.
san_preload() {
  local list=${1:-}
  if [ -n "$PROBE_SAN_PRELOAD" ]; then
    printf '%s' "$PROBE_SAN_PRELOAD${list:+:$list}"
  else
    printf '%s' "$list"
  fi
}

# expect_status WANT COMMAND...: runs COMMAND, fails unless its exit status is WANT.
expect_status() {
  local want=$1 got
  shift
  "$@"
  got=$?
  [ "$got" = "$want" ] || fail "exit status $got, expected $want: $*"
}

# nvidia_rc PROBE LIB: what NVIDIA's library alone answers to cudaGetDeviceCount.
nvidia_rc() {
  local out
  out=$(env LD_PRELOAD="$(san_preload)" PROBE_NVIDIA_LIB="$2" "$1" --open "$2" --expect nvidia) ||
    fail "reference run of NVIDIA's $2 without torchada failed: $out"
  printf '%s\n' "$out" >&2
  sed -n "s/.*NVIDIA's cudaGetDeviceCount: rc \([0-9-]*\).*/\1/p" <<<"$out"
}
