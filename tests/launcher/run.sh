#!/usr/bin/env bash
# launcher.* cases: scripts/torchada-run and scripts/docker-entrypoint.sh.
#   run.sh CASE      exit 0 pass, 1 fail, 77 skipped (with the reason printed)
# The probes and what they check: tests/audit/probe.cc. Under a sanitizer build the sanitizer
# runtime is put first in LD_PRELOAD before the launcher runs, as a user of such a build must.
# shellcheck source=../audit/lib.sh
source "$PROBE_LIB"

# ThreadSanitizer: its runtime cannot be preloaded into a shell (bash and dash die with SIGSEGV),
# and a TSan-built libtorchada.so needs it in every process it is loaded into. So under TSan the
# launcher runs without it, and the cases that start a process with libtorchada.so are skipped;
# the threaded code (the replacements' stub resolver) is covered by audit.* under TSan.
if [[ ${PROBE_SANITIZE:-} == *thread* ]]; then
  PROBE_SAN_PRELOAD=""
fi
needs_shim() {
  [[ ${PROBE_SANITIZE:-} != *thread* ]] ||
    skip "ThreadSanitizer's runtime cannot run in the launcher's shell, and the TSan-built" \
      "libtorchada.so cannot load without it (audit.* covers the threaded code under TSan)"
}

real() { readlink -f -- "$1"; }
shim=$(real "$PROBE_SHIM")
audit=$(real "$PROBE_AUDIT")
repl=$(real "$PROBE_REPL_DIR")

# launch [VAR=VALUE...] COMMAND...: COMMAND with the sanitizer runtime (if any) preloaded.
launch() { env LD_PRELOAD="$(san_preload)" "$@"; }
# tr_ ARGS...: the launcher; LD_PRELOAD as the case set it, else the sanitizer runtime (if any).
tr_() { LD_PRELOAD=${LD_PRELOAD:-$(san_preload)} "$LAUNCHER" "$@"; }

value_of() { sed -n "s/^$1=//p"; }

case_help() {
  local out h
  out=$(tr_ --help) || fail "--help exited $?"
  for h in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT "EXIT STATUS" EXAMPLES; do
    grep -q "^$h\$" <<<"$out" || fail "--help has no $h section"
  done
  [ "$(tr_ -h)" = "$out" ] || fail "-h differs from --help"
  note "--help: $(wc -l <<<"$out") lines, every section present"
}

case_usage_errors() {
  local err
  for args in "" "--bogus" "--backend bogus -- true" "--log-level loud -- true" "--backend" \
    "--trace"; do
    # shellcheck disable=SC2086
    err=$(tr_ $args 2>&1 >/dev/null)
    local st=$?
    [ $st = 125 ] || fail "'torchada-run $args' exited $st, expected 125"
    grep -q "^torchada-run: " <<<"$err" || fail "'torchada-run $args': no message: $err"
    note "torchada-run $args -> 125: $err"
  done
}

case_command_not_found() {
  expect_status 127 tr_ -- no-such-command-torchada-test
  expect_status 127 tr_ -- ./no/such/file
  printf '#!/bin/sh\nexit 0\n' >"$tmp/not-executable"
  chmod 644 "$tmp/not-executable"
  expect_status 126 tr_ -- "$tmp/not-executable"
  note "127 for a missing command, 126 for a file that cannot be executed"
}

case_build_dir_errors() {
  mkdir -p "$tmp/empty"
  local err
  err=$(TORCHADA_BUILD_DIR=$tmp/empty tr_ -- true 2>&1)
  [ $? = 125 ] || fail "an empty TORCHADA_BUILD_DIR must be an error"
  grep -q "holds no lib/libtorchada.so" <<<"$err" || fail "unclear message: $err"
  # A copy of the launcher with no tree around it.
  mkdir -p "$tmp/lonely/bin"
  cp "$LAUNCHER" "$tmp/lonely/bin/torchada-run"
  err=$(env -u TORCHADA_BUILD_DIR "$tmp/lonely/bin/torchada-run" -- true 2>&1)
  [ $? = 125 ] || fail "a launcher without torchada's files must fail"
  grep -q "libtorchada.so not found. Tried:" <<<"$err" && grep -q "$tmp/lonely/lib/libtorchada.so" <<<"$err" ||
    fail "the message does not list what was tried: $err"
  note "errors: $err"
}

case_exit_status() {
  needs_shim
  expect_status 7 tr_ -- sh -c 'exit 7'
  expect_status 0 tr_ -- sh -c 'exit 0'
  expect_status 1 tr_ -- false
}

case_signal_self() {
  needs_shim
  # The command kills itself: the launcher's process dies by the same signal, as the same
  # process (exec, not a child).
  LD_PRELOAD=$(san_preload) "$LAUNCHER" -- sh -c 'echo $$ >"$1"; kill -TERM $$; sleep 5' sh "$tmp/pid" &
  local pid=$! st
  wait $pid
  st=$?
  [ $st = 143 ] || fail "exit status $st, expected 143 (SIGTERM)"
  [ "$(cat "$tmp/pid")" = "$pid" ] || fail "the command ran as pid $(cat "$tmp/pid"), not $pid"
  note "pid $pid: the command itself, died by SIGTERM"
}

case_signal_external() {
  needs_shim
  LD_PRELOAD=$(san_preload) "$LAUNCHER" -- sleep 60 &
  local pid=$! _
  for _ in $(seq 200); do
    [ "$(cat /proc/$pid/comm 2>/dev/null)" = sleep ] && break
    sleep 0.05
  done
  [ "$(cat /proc/$pid/comm 2>/dev/null)" = sleep ] || fail "pid $pid never became sleep"
  # (Not SIGINT: a non-interactive shell starts background jobs with SIGINT ignored.)
  kill -USR1 $pid
  wait $pid
  local st=$?
  [ $st = 138 ] || fail "exit status $st, expected 138 (SIGUSR1)"
  note "SIGUSR1 sent to the launcher's pid killed the command"
}

case_print_env() {
  needs_shim
  cd "$tmp" || fail "cd"
  local weird="$tmp/tr ace's \$x"
  local out
  out=$(tr_ --backend sim --stats --strict --log-level info --trace "$weird" --print-env) ||
    fail "--print-env failed"
  printf '%s\n' "$out"
  ! grep -qv "^export [A-Z_]*='" <<<"$out" || fail "not all lines are export NAME='...'"
  local from_eval from_run
  from_eval=$(env -i PATH="$PATH" ${GLIBC_TUNABLES:+GLIBC_TUNABLES="$GLIBC_TUNABLES"} bash -c 'eval "$1"; env' sh "$out" |
    grep -E '^(LD_|TORCHADA_|GLIBC_TUNABLES=)' | sort)
  from_run=$(env -i PATH="$PATH" LD_PRELOAD="$(san_preload)" TORCHADA_BUILD_DIR="$TORCHADA_BUILD_DIR" \
    ${GLIBC_TUNABLES:+GLIBC_TUNABLES="$GLIBC_TUNABLES"} ASAN_OPTIONS=detect_leaks=0 \
    "$LAUNCHER" --backend sim --stats --strict --log-level info --trace "$weird" -- env |
    grep -E '^(LD_|TORCHADA_|GLIBC_TUNABLES=)' | grep -v '^TORCHADA_BUILD_DIR=' | sort)
  [ "$from_eval" = "$from_run" ] ||
    fail "eval of --print-env differs from the command's environment: $(diff <(echo "$from_eval") <(echo "$from_run"))"
  [ "$(value_of LD_PRELOAD <<<"$from_eval")" = "$(san_preload "$shim")" ] || fail "LD_PRELOAD"
  [ "$(value_of LD_AUDIT <<<"$from_eval")" = "$audit" ] || fail "LD_AUDIT"
  [ "$(value_of LD_LIBRARY_PATH <<<"$from_eval")" = "$repl" ] || fail "LD_LIBRARY_PATH"
  [ "$(value_of TORCHADA_TRACE <<<"$from_eval")" = "$weird" ] || fail "TORCHADA_TRACE quoting"
  [ "$(value_of TORCHADA_BACKEND <<<"$from_eval")" = sim ] || fail "TORCHADA_BACKEND"
  [ "$(value_of TORCHADA_STATS <<<"$from_eval")" = 1 ] || fail "TORCHADA_STATS"
  [ "$(value_of TORCHADA_STRICT <<<"$from_eval")" = 1 ] || fail "TORCHADA_STRICT"
  [ "$(value_of TORCHADA_LOG_LEVEL <<<"$from_eval")" = info ] || fail "TORCHADA_LOG_LEVEL"
  out=$(tr_ --trace relative.txt --print-env)
  grep -qx "export TORCHADA_TRACE='$tmp/relative.txt'" <<<"$out" || fail "relative --trace: $out"
  note "--print-env, evaluated, gives exactly the command's environment"
}

case_nested() {
  needs_shim
  local outer inner
  outer=$(LD_LIBRARY_PATH=/opt/x:/opt/y tr_ --print-env)
  inner=$(LD_LIBRARY_PATH=/opt/x:/opt/y launch TORCHADA_BUILD_DIR="$TORCHADA_BUILD_DIR" \
    "$LAUNCHER" -- "$LAUNCHER" --print-env) || fail "nested launcher failed"
  [ "$outer" = "$inner" ] || fail "a launcher inside a launcher changed the variables:
$outer
---
$inner"
  grep -qx "export LD_LIBRARY_PATH='$repl:/opt/x:/opt/y'" <<<"$outer" || fail "LD_LIBRARY_PATH: $outer"
  note "idempotent: $outer"
}

case_preload_kept() {
  needs_shim
  local out want
  out=$(LD_PRELOAD="$(san_preload "$MARKER_LIB") /elsewhere/libtorchada.so" \
    LD_AUDIT=/elsewhere/other_audit.so tr_ --print-env 2>/dev/null)
  want="export LD_PRELOAD='$(san_preload "$MARKER_LIB:$shim")'"
  grep -qxF "$want" <<<"$out" || fail "LD_PRELOAD: expected $want in
$out"
  grep -qxF "export LD_AUDIT='/elsewhere/other_audit.so:$audit'" <<<"$out" || fail "LD_AUDIT: $out"
  # For real: both libraries are in the process.
  local maps
  maps=$(LD_PRELOAD="$(san_preload "$MARKER_LIB")" tr_ -- cat /proc/self/maps) || fail "cat failed"
  grep -q "$(real "$MARKER_LIB")" <<<"$maps" || fail "the preloaded marker library is gone"
  [ "$(grep -c "$shim\$" <<<"$maps" | head -1)" -ge 1 ] || fail "libtorchada.so not mapped"
  [ "$(grep -F "libtorchada.so" <<<"$maps" | awk '{print $6}' | sort -u | wc -l)" = 1 ] ||
    fail "more than one libtorchada.so mapped"
  note "the user's preload stays, one libtorchada.so added"
}

case_preload_static_tls() {
  needs_shim
  local err
  err=$(env LD_AUDIT="$audit" LD_PRELOAD="$(san_preload "$TLS_HEAVY_LIB")" /bin/true 2>&1)
  if [ $? != 0 ] && grep -q "static TLS" <<<"$err"; then
    note "control: LD_AUDIT alone makes this glibc refuse a library with 8 KiB of static TLS: $err"
  else
    note "control: this glibc (or GLIBC_TUNABLES='${GLIBC_TUNABLES:-}') loads it even with LD_AUDIT"
  fi
  LD_PRELOAD=$(san_preload "$TLS_HEAVY_LIB") tr_ --backend sim -- "$PROBE_DIR/probe_dl13" \
    --open "$PROBE_NVIDIA_LIB" --expect torchada --mapped "$TLS_HEAVY_LIB" ||
    fail "a preloaded library with 8 KiB of initial-exec TLS broke the launch"
  local out
  out=$(GLIBC_TUNABLES=glibc.malloc.arena_max=2 tr_ --print-env)
  grep -qxF "export GLIBC_TUNABLES='glibc.malloc.arena_max=2:glibc.rtld.optional_static_tls=65536'" <<<"$out" ||
    fail "GLIBC_TUNABLES not extended: $out"
  out=$(GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.rtld.optional_static_tls=4096 tr_ --print-env)
  grep -qxF "export GLIBC_TUNABLES='glibc.malloc.arena_max=2:glibc.rtld.optional_static_tls=4096'" <<<"$out" ||
    fail "the user's optional_static_tls was not kept as it was: $out"
}

case_disable() {
  local out
  out=$(TORCHADA_DISABLE=1 LD_PRELOAD="$(san_preload)" tr_ --backend sim -- env) || fail "env"
  ! grep -q '^LD_AUDIT=' <<<"$out" || fail "LD_AUDIT set under TORCHADA_DISABLE=1"
  ! grep -q '^LD_.*libtorchada' <<<"$out" || fail "libtorchada preloaded under TORCHADA_DISABLE=1"
  ! grep -q '^TORCHADA_BACKEND=' <<<"$out" || fail "TORCHADA_BACKEND set under TORCHADA_DISABLE=1"
  out=$(TORCHADA_DISABLE=1 tr_ --print-env)
  [ "$out" = "# TORCHADA_DISABLE=1: torchada-run sets nothing" ] || fail "--print-env: $out"
  expect_status 9 env TORCHADA_DISABLE=1 "$LAUNCHER" -- sh -c 'exit 9'
}

case_log_and_stats() {
  needs_shim
  local err
  err=$(launch "$LAUNCHER" --backend sim --log-level info --stats -- \
    "$PROBE_DIR/probe_dl13" --open "$PROBE_NVIDIA_LIB" --expect torchada 2>&1 >/dev/null) ||
    fail "probe failed: $err"
  grep -q "info\] backend sim" <<<"$err" || fail "no backend line at --log-level info: $err"
  grep -q "info\] audit: .*-> $repl/libcudart.so.13" <<<"$err" || fail "no audit line: $err"
  grep -q "exit summary: 0 call(s) refused" <<<"$err" || fail "no exit summary with --stats: $err"
  note "$err"
}

probe_torchada() {
  needs_shim
  launch "$LAUNCHER" --backend sim -- "$PROBE_DIR/$1" "${@:2}" --expect torchada
}

case_plt13() { probe_torchada probe_plt13 || fail "PLT, CUDA 13"; }
case_plt12() {
  PROBE_NVIDIA_LIB=$PROBE_NVIDIA12_LIB probe_torchada probe_plt12 --race 8 || fail "PLT, CUDA 12"
}
case_dlopen_name() {
  probe_torchada probe_dl13 --open libcudart.so.13 || fail "dlopen by name"
  probe_torchada probe_dl13 --open libcudart.so.13 --vsym libcudart.so.13 || fail "dlvsym"
}
case_dlopen_path() { probe_torchada probe_dl13 --open "$PROBE_NVIDIA_LIB" || fail "dlopen by path"; }
case_dlopen12_stubs() {
  PROBE_NVIDIA_LIB=$PROBE_NVIDIA12_LIB probe_torchada probe_dl12 --open "$PROBE_NVIDIA12_LIB" \
    --stub --race 8 || fail "dlopen of NVIDIA's libcudart.so.12 path"
}
case_rpath() {
  grep -q '(RPATH)' <<<"$("$PROBE_READELF" -dW "$PROBE_DIR/probe_rpath13")" ||
    fail "probe_rpath13 has no DT_RPATH: the case tests nothing"
  probe_torchada probe_rpath13 || fail "DT_RPATH"
}
case_ctypes_path() {
  needs_shim
  [ -n "$PROBE_PYTHON" ] || skip "no Python interpreter found at configure time"
  launch "$LAUNCHER" --backend sim -- "$PROBE_PYTHON" "$PROBE_CTYPES" "$PROBE_NVIDIA_LIB" ||
    fail "ctypes.CDLL(NVIDIA's full path)"
}

# cuBLAS by NVIDIA's full paths from Python: an SGEMM on the simulator, for both ABIs.
case_cublas_ctypes() {
  needs_shim
  [ -n "$PROBE_PYTHON" ] || skip "no Python interpreter found at configure time"
  [[ " $PROBE_BUILT " == *" libcublas.so.13 "* ]] || skip "libtorchada.so does not serve libcublas.so.13"
  local dir13=${PROBE_NVIDIA_LIB%/*}
  [ -f "$dir13/libcublas.so.13" ] || skip "NVIDIA's libcublas.so.13 is not next to its libcudart.so.13"
  launch "$LAUNCHER" --backend sim -- "$PROBE_PYTHON" "$(dirname "$0")/cublas_ctypes.py" \
    "$PROBE_NVIDIA_LIB" "$dir13/libcublas.so.13" || fail "cuBLAS 13 through ctypes"
  local dir12=${PROBE_NVIDIA12_LIB%/*}
  if [ -n "$PROBE_NVIDIA12_LIB" ] && [ -f "$dir12/libcublas.so.12" ] &&
    [[ " $PROBE_BUILT " == *" libcublas.so.12 "* ]]; then
    launch "$LAUNCHER" --backend sim -- "$PROBE_PYTHON" "$(dirname "$0")/cublas_ctypes.py" \
      "$PROBE_NVIDIA12_LIB" "$dir12/libcublas.so.12" || fail "cuBLAS 12 through ctypes (stubs)"
  else
    note "no CUDA 12 cuBLAS to try"
  fi
}

# cuBLAS through the cuda pass-through, by name, when the replacement is what the program loaded:
# the shim must find NVIDIA's library and answer what NVIDIA's answers alone.
# Not registered yet: shim/core/libraries.cc's nvidia_symbol takes the already-loaded
# replacement for NVIDIA's library (libcublas.so.13: every call "not supported";
# libcublas.so.12: its stubs lead back into the shim, which hangs). Add it to _cases in
# CMakeLists.txt once that search skips torchada's own libraries as open_nvidia_cudart does.
case_cublas_passthrough() {
  needs_shim
  [ -n "$PROBE_PYTHON" ] || skip "no Python interpreter found at configure time"
  local so dir ref got
  for so in libcublas.so.13 libcublas.so.12; do
    [[ " $PROBE_BUILT " == *" $so "* ]] || continue
    if [ "$so" = libcublas.so.13 ]; then dir=${PROBE_NVIDIA_LIB%/*}; else dir=${PROBE_NVIDIA12_LIB%/*}; fi
    [ -f "$dir/$so" ] || continue
    ref=$(launch "$PROBE_PYTHON" "$(dirname "$0")/cublas_status.py" "$dir/$so") ||
      fail "NVIDIA's $so alone"
    got=$(launch LD_LIBRARY_PATH="$dir" timeout 60 "$LAUNCHER" --backend cuda -- \
      "$PROBE_PYTHON" "$(dirname "$0")/cublas_status.py" "$so") || fail "$so through the pass-through"
    [ "$got" = "$ref" ] || fail "$so through the pass-through: '$got', NVIDIA's alone: '$ref'"
    note "$so: $got, as NVIDIA's alone"
  done
}

case_passthrough() {
  needs_shim
  local rc
  rc=$(nvidia_rc "$PROBE_DIR/probe_dl13" "$PROBE_NVIDIA_LIB") || exit 1
  # The NVIDIA library of the reference run is the one the pass-through must find.
  launch LD_LIBRARY_PATH="${PROBE_NVIDIA_LIB%/*}" PROBE_REFERENCE_RC="$rc" "$LAUNCHER" --backend cuda -- "$PROBE_DIR/probe_dl13" \
    --open libcudart.so.13 --expect passthrough || fail "--backend cuda"
}

fake_checker() {
  cat >"$tmp/fake-check" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$tmp/checked"
exit ${1:-0}
EOF
  chmod +x "$tmp/fake-check"
}

case_check_interpreter() {
  needs_shim
  fake_checker 0
  local want script
  launch TORCHADA_CHECK="$tmp/fake-check" "$LAUNCHER" --backend sim --check -- \
    "$PROBE_DIR/probe_plt13" --expect torchada >/dev/null || fail "the probe did not run after the check"
  [ "$(cat "$tmp/checked")" = "$PROBE_DIR/probe_plt13" ] || fail "checked $(cat "$tmp/checked")"
  want=$(type -P sh)
  launch TORCHADA_CHECK="$tmp/fake-check" "$LAUNCHER" --check -- sh -c 'exit 0' ||
    fail "sh did not run"
  [ "$(cat "$tmp/checked")" = "$want" ] || fail "sh on PATH: checked $(cat "$tmp/checked"), want $want"
  script=$tmp/script.sh
  printf '#!/bin/sh -e\nexit 0\n' >"$script"
  chmod +x "$script"
  launch TORCHADA_CHECK="$tmp/fake-check" "$LAUNCHER" --check -- "$script" || fail "script"
  [ "$(cat "$tmp/checked")" = /bin/sh ] || fail "#!/bin/sh -e: checked $(cat "$tmp/checked")"
  want=$(type -P bash)
  printf '#!/usr/bin/env -S bash -e\nexit 0\n' >"$script"
  launch TORCHADA_CHECK="$tmp/fake-check" "$LAUNCHER" --check -- "$script" || fail "env script"
  [ "$(cat "$tmp/checked")" = "$want" ] || fail "#!/usr/bin/env: checked $(cat "$tmp/checked")"
  note "checked the executable, a PATH command, a script's interpreter, an env script's interpreter"
}

case_check_refuses() {
  fake_checker 3
  local err
  err=$(launch TORCHADA_CHECK="$tmp/fake-check" "$LAUNCHER" --check -- touch "$tmp/ran" 2>&1)
  local st=$?
  [ $st = 3 ] || fail "exit status $st, expected torchada-check's 3"
  [ ! -e "$tmp/ran" ] || fail "the command ran although the check failed"
  grep -q "torchada-check reported a problem" <<<"$err" || fail "no message: $err"
  note "$err"
}

case_check_missing() {
  mkdir -p "$tmp/tree/bin"
  ln -s "$(real "$TORCHADA_BUILD_DIR/lib")" "$tmp/tree/lib"
  local err
  err=$(PATH=/usr/bin:/bin TORCHADA_BUILD_DIR=$tmp/tree "$LAUNCHER" --check -- touch "$tmp/ran" 2>&1)
  local st=$?
  [ $st = 125 ] || fail "exit status $st, expected 125"
  [ ! -e "$tmp/ran" ] || fail "the command ran"
  grep -q "torchada-check not found" <<<"$err" || fail "unclear message: $err"
  note "$err"
}

case_entrypoint_no_command() {
  local err
  err=$("$ENTRYPOINT" 2>&1)
  [ $? = 125 ] || fail "no command must exit 125"
  grep -q "no command given" <<<"$err" || fail "unclear message: $err"
  err=$(TORCHADA_DISABLE=1 "$ENTRYPOINT" 2>&1)
  [ $? = 125 ] || fail "no command must exit 125 under TORCHADA_DISABLE=1 too"
}

case_entrypoint_runs() {
  needs_shim
  launch TORCHADA_BACKEND=sim "$ENTRYPOINT" "$PROBE_DIR/probe_dl13" --open "$PROBE_NVIDIA_LIB" \
    --expect torchada || fail "the probe under the entrypoint"
  expect_status 5 launch "$ENTRYPOINT" sh -c 'exit 5'
  local out
  out=$(launch TORCHADA_BACKEND=sim TORCHADA_LOG_LEVEL=debug "$ENTRYPOINT" env) || fail "env"
  grep -qx "TORCHADA_BACKEND=sim" <<<"$out" && grep -qx "TORCHADA_LOG_LEVEL=debug" <<<"$out" ||
    fail "TORCHADA_* did not pass through: $out"
  grep -qx "LD_AUDIT=$audit" <<<"$out" || fail "not run under the launcher: $out"
  # TORCHADA_RUN names another launcher.
  printf '#!/bin/sh\necho "fake launcher: $*"\n' >"$tmp/fake-run"
  chmod +x "$tmp/fake-run"
  out=$(TORCHADA_RUN=$tmp/fake-run "$ENTRYPOINT" python3 x.py)
  [ "$out" = "fake launcher: -- python3 x.py" ] || fail "TORCHADA_RUN: $out"
}

case_entrypoint_disable() {
  local direct via
  direct=$(env LD_PRELOAD=/x.so LD_LIBRARY_PATH=/y TORCHADA_BACKEND=sim env | grep -E '^(LD_|TORCHADA_)' | sort)
  via=$(env LD_PRELOAD=/x.so LD_LIBRARY_PATH=/y TORCHADA_BACKEND=sim TORCHADA_DISABLE=1 \
    "$ENTRYPOINT" env 2>/dev/null | grep -E '^(LD_|TORCHADA_)' | grep -v '^TORCHADA_DISABLE=' | sort)
  [ "$direct" = "$via" ] || fail "TORCHADA_DISABLE=1 changed the environment: $(diff <(echo "$direct") <(echo "$via"))"
  expect_status 4 env TORCHADA_DISABLE=1 "$ENTRYPOINT" sh -c 'exit 4'
  note "TORCHADA_DISABLE=1: the command ran with the environment it was given"
}

# An installed tree (cmake --install): the launcher next to bin/, nothing from the build tree.
case_installed_tree() {
  needs_shim
  "$CMAKE_COMMAND" --install "$TORCHADA_BUILD_DIR" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
    fail "cmake --install failed: $(tail -5 "$tmp/install.log")"
  local libdir
  libdir=$(dirname "$(find "$tmp/prefix" -name libtorchada.so | head -1)")
  [ -f "$libdir/torchada/libtorchada_audit.so" ] && [ -d "$libdir/torchada/cuda" ] ||
    fail "installed tree lacks the audit module or the replacements under $libdir/torchada"
  [ -x "$tmp/prefix/bin/torchada-run" ] && [ -x "$tmp/prefix/bin/torchada-docker-entrypoint" ] ||
    fail "launcher or entrypoint not installed"
  local f
  for f in "$libdir"/torchada/cuda/*; do
    [ ! -L "$f" ] || fail "$f is a link"
  done
  local out
  out=$(env -u TORCHADA_BUILD_DIR LD_PRELOAD="$(san_preload)" "$tmp/prefix/bin/torchada-run" \
    --backend sim -- "$PROBE_DIR/probe_dl13" --open "$PROBE_NVIDIA_LIB" --expect torchada) ||
    fail "probe under the installed launcher: $out"
  printf '%s\n' "$out"
  grep -q "one libtorchada.so mapped (1: $(real "$libdir")/libtorchada.so)" <<<"$out" ||
    fail "the installed libtorchada.so was not the one used"
  out=$(env -u TORCHADA_BUILD_DIR LD_PRELOAD="$(san_preload)" TORCHADA_BACKEND=sim \
    "$tmp/prefix/bin/torchada-docker-entrypoint" "$PROBE_DIR/probe_plt13" --expect torchada) ||
    fail "probe under the installed entrypoint: $out"
  note "installed tree at $tmp/prefix serves the probes"
}

c=${1:-}
declare -F "case_$c" >/dev/null || fail "unknown case '$c'"
"case_$c"
echo "PASS $c"
