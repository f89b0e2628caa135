#!/usr/bin/env bash
# audit.* cases: the replacement libraries and the LD_AUDIT module on their own, with the loader
# variables set by hand (tests/launcher covers scripts/torchada-run).
#   run.sh CASE [ARGS...]      exit 0 pass, 1 fail, 77 skipped (with the reason printed)
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

probe() { "$PROBE_DIR/$1" "${@:2}"; }
audit_env() { env LD_AUDIT="$PROBE_AUDIT" LD_PRELOAD="$(san_preload)" TORCHADA_BACKEND=sim "$@"; }
re_escape() { sed 's/[.[\*^$]/\\&/g' <<<"$1"; }

# The names a library defines (global or weak, not the ABS version-name symbols), sorted.
defined_symbols() {
  "$PROBE_READELF" --dyn-syms -W "$1" |
    awk '$7 != "UND" && $7 != "ABS" && ($5 == "GLOBAL" || $5 == "WEAK") && $8 != "" {print $8}' |
    sort
}
# Version definitions: the BASE entry, then the nodes, one per line.
verdefs() {
  "$PROBE_READELF" -VW "$1" |
    awk '/^Version definition/ {d = 1; next} /^Version needs/ {d = 0} d && /Name:/ {print $NF}'
}
dynamic() { "$PROBE_READELF" -dW "$1"; }

case_replacement() {
  local soname=$1 mode=$2 ref=${3:-} file=$PROBE_REPL_DIR/$1 re
  re=$(re_escape "$soname")
  if [[ " $PROBE_BUILT " != *" $soname "* ]]; then
    ! grep -Eq "^${re}[[:space:]]*\{" "$PROBE_MAP" ||
      fail "shim/gen/libtorchada.map has node $soname but no replacement $soname was built"
    [ ! -e "$file" ] || fail "$file exists although libtorchada.so does not serve $soname"
    skip "libtorchada.so does not serve $soname yet (no node $soname in shim/gen/libtorchada.map)"
  fi
  [ -f "$file" ] && [ ! -L "$file" ] || fail "$file is not a real file"
  local dyn
  dyn=$(dynamic "$file")
  grep -Eq "\(SONAME\).*\[${re}\]" <<<"$dyn" || fail "SONAME of $file is not $soname: $dyn"
  grep -q '(NEEDED).*\[libtorchada.so\]' <<<"$dyn" || fail "$file does not NEED libtorchada.so"
  grep -q '(RUNPATH).*\[\$ORIGIN/\.\./\.\.\]' <<<"$dyn" || fail "RUNPATH is not \$ORIGIN/../..: $dyn"
  ! grep -q '(RPATH)' <<<"$dyn" || fail "$file has a DT_RPATH"
  # (A sanitizer build links the sanitizer runtimes, which bring the C++ runtime along.)
  [ -n "$PROBE_SANITIZE" ] || ! grep -q 'libstdc++' <<<"$dyn" || fail "$file needs the C++ runtime"
  note "$file: SONAME $soname, NEEDED libtorchada.so, RUNPATH \$ORIGIN/../.."

  local mine want
  mine=$(verdefs "$file" | tr '\n' ' ')
  if [ "$mode" = versioned ]; then want="$soname $soname "; else want=""; fi
  [ "$mine" = "$want" ] || fail "version definitions of $file: '$mine', expected '$want'"
  if [ -n "$ref" ] && [ -f "$ref" ]; then
    local theirs
    theirs=$(verdefs "$ref" | tr '\n' ' ')
    [ "$mine" = "$theirs" ] ||
      fail "version definitions differ from NVIDIA's $ref: ours '$mine', NVIDIA's '$theirs'"
    note "version definitions '$mine' are those of NVIDIA's $ref"
  else
    note "no NVIDIA $soname to compare with (looked for '${ref}'): checked against '$want'"
  fi

  # Exports: exactly libtorchada.so's non-default definitions in this node, as default ones.
  local exported expected
  exported=$(defined_symbols "$file")
  if [ "$mode" = versioned ]; then
    expected=$(defined_symbols "$PROBE_SHIM" | grep -E "^[^@]+@$re\$" | sed "s/@.*/@@$soname/" || true)
  else
    expected=""
  fi
  [ "$exported" = "$expected" ] ||
    fail "$file defines $(wc -l <<<"$exported") names, expected the $(wc -l <<<"$expected")" \
      "non-default $soname names of libtorchada.so: $(diff <(echo "$expected") <(echo "$exported") | head -20)"
  if [ "$mode" = versioned ]; then
    note "defines $(grep -c . <<<"$exported") forwarding stubs: libtorchada.so's non-default" \
      "$soname definitions (the rest resolve in libtorchada.so itself)"
  else
    note "defines nothing and has no version node, like NVIDIA's: every name resolves in libtorchada.so"
  fi

  # Looked up through a handle on NVIDIA's name (under the audit module), a name of this
  # library lands in the replacement (a stub) or in libtorchada.so, never in NVIDIA's file.
  local name target out
  name=$(defined_symbols "$PROBE_SHIM" | grep -E "^[^@]+@@?$re\$" | head -1 | sed 's/@.*//')
  [ -n "$name" ] || fail "libtorchada.so exports nothing in node $soname"
  target=$soname
  [ -z "$ref" ] || [ ! -f "$ref" ] || target=$ref
  local how extra
  for how in plain versioned; do
    extra=()
    if [ $how = versioned ]; then
      [ "$mode" = versioned ] || continue
      extra=(--vsym "$soname")
    fi
    out=$(audit_env "$PROBE_DIR/probe_dl13" --open "$target" --which "$name" "${extra[@]}" \
      --expect which) || fail "lookup of $name: $out"
    # libtorchada.so loaded as the replacement's dependency is named .../cuda/../../libtorchada.so
    out=${out//\/lib\/torchada\/cuda\/..\/..\//\/lib\/}
    grep -Eq "^$name is in ($(re_escape "$file")|$(re_escape "$PROBE_SHIM"))\$" <<<"$out" ||
      fail "$name through dlopen($target) did not land in torchada: $out"
    note "$(tail -1 <<<"$out") ($how lookup through dlopen($target))"
  done
}

case_module_exports() {
  local dyn needed
  dyn=$(dynamic "$PROBE_AUDIT")
  needed=$(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<<"$dyn" | tr '\n' ' ')
  [ "$needed" = "libc.so.6 " ] || fail "libtorchada_audit.so needs '$needed', expected libc.so.6 only"
  local exports
  exports=$(defined_symbols "$PROBE_AUDIT" | tr '\n' ' ')
  [ "$exports" = "la_objopen la_objsearch la_version " ] ||
    fail "libtorchada_audit.so exports '$exports'"
  note "NEEDED: $needed; exports: $exports"
}

case_by_path() {
  audit_env "$PROBE_DIR/probe_dl13" --open "$PROBE_NVIDIA_LIB" --expect torchada ||
    fail "dlopen of NVIDIA's full path under LD_AUDIT did not reach torchada"
}

case_by_name() {
  audit_env "$PROBE_DIR/probe_dl13" --open libcudart.so.13 --expect torchada ||
    fail "dlopen(\"libcudart.so.13\") under LD_AUDIT did not reach torchada"
}

case_by_versioned_name() {
  local dir=${PROBE_NVIDIA_LIB%/*}
  audit_env "$PROBE_DIR/probe_dl13" --open "$dir/libcudart.so.13.0.999" --vsym libcudart.so.13 \
    --expect torchada || fail "libcudart.so.13.<minor> by path was not redirected"
}

case_no_false_match() {
  local n err
  for n in libcudart.so.130 libcudart.so.1 libcudart.so.13x libcudart.so libcudart.so.13-x \
    "${PROBE_NVIDIA_LIB%/*}/libcudart.so" "${PROBE_NVIDIA_LIB%/*}/libcudart.so.130" \
    libcudart_static.a libcuda.so.12 libcudart.so.12.x/libcudart.so.1; do
    err=$(audit_env TORCHADA_LOG_LEVEL=info "$PROBE_DIR/probe_dl13" --open "$n" --expect any 2>&1) ||
      fail "probe failed on '$n': $err"
    ! grep -q "audit:" <<<"$err" ||
      fail "'$n' was redirected (only libcudart.so.13 and libcudart.so.13.<more> may be): $err"
  done
  # The same check must see a redirect when there is one.
  err=$(audit_env TORCHADA_LOG_LEVEL=info "$PROBE_DIR/probe_dl13" --open libcudart.so.13 \
    --expect any 2>&1) || fail "probe failed: $err"
  grep -q "audit: libcudart.so.13 " <<<"$err" || fail "no redirect logged for libcudart.so.13: $err"
  note "only the served names and their longer versions are redirected"
}

case_odd_names() {
  local long
  long=$(printf 'x%.0s' {1..5000})
  local n
  for n in / "libcudart.so.13/" "$long" "/$long/libcudart.so.12x" "lib.so.1" $'\x01\x02' \
    "libcudart.so.13/../nothing"; do
    audit_env "$PROBE_DIR/probe_dl13" --open "$n" --expect open-fails >/dev/null ||
      fail "odd name '${n:0:40}...' was not refused cleanly"
  done
  # A long path ending in a served name is redirected like any other.
  audit_env "$PROBE_DIR/probe_dl13" --open "/$long/libcudart.so.13" --expect torchada >/dev/null ||
    fail "a 5000-character path ending in libcudart.so.13 was not redirected"
  note "odd names refused cleanly, a long served path redirected"
}

case_disabled() {
  env TORCHADA_DISABLE=1 LD_AUDIT="$PROBE_AUDIT" LD_PRELOAD="$(san_preload)" TORCHADA_BACKEND=sim \
    "$PROBE_DIR/probe_dl13" --open "$PROBE_NVIDIA_LIB" --expect nvidia ||
    fail "TORCHADA_DISABLE=1 did not leave NVIDIA's library alone"
}

case_no_replacement_dir() {
  cp "$PROBE_AUDIT" "$tmp/libtorchada_audit.so"
  local err
  err=$(env LD_AUDIT="$tmp/libtorchada_audit.so" LD_PRELOAD="$(san_preload)" \
    "$PROBE_DIR/probe_dl13" --open "$PROBE_NVIDIA_LIB" --expect nvidia 2>&1) ||
    fail "without a replacement directory the module must be inert: $err"
  ! grep -qi error <<<"$err" || fail "unexpected error output: $err"
}

case_log_line() {
  local err
  err=$(audit_env TORCHADA_LOG_LEVEL=info "$PROBE_DIR/probe_dl13" --open "$PROBE_NVIDIA_LIB" \
    --expect torchada 2>&1 >/dev/null) || fail "probe failed: $err"
  grep -q "info\] audit: $(re_escape "$PROBE_NVIDIA_LIB") (search flag 0x1) -> $(re_escape "$PROBE_REPL_DIR")/libcudart.so.13" <<<"$err" ||
    fail "no redirect line at TORCHADA_LOG_LEVEL=info: $err"
  err=$(audit_env "$PROBE_DIR/probe_dl13" --open "$PROBE_NVIDIA_LIB" --expect torchada 2>&1 >/dev/null)
  ! grep -q "audit:" <<<"$err" || fail "redirect logged at the default level: $err"
  note "redirects are logged at info only"
}

# The replacement libraries alone (LD_LIBRARY_PATH, no LD_PRELOAD, no LD_AUDIT).
case_needed_by_program_no_preload() {
  env LD_LIBRARY_PATH="$PROBE_REPL_DIR" LD_PRELOAD="$(san_preload)" TORCHADA_BACKEND=sim \
    "$PROBE_DIR/probe_plt13" --expect torchada ||
    fail "a program linked with NVIDIA's libcudart.so.13 did not reach torchada through the replacement"
}

case_dlopen_no_preload() {
  env LD_LIBRARY_PATH="$PROBE_REPL_DIR" LD_PRELOAD="$(san_preload)" TORCHADA_BACKEND=sim \
    "$PROBE_DIR/probe_dl13" --open libcudart.so.13 --expect torchada ||
    fail "dlopen(\"libcudart.so.13\") + dlsym did not reach torchada"
  env LD_LIBRARY_PATH="$PROBE_REPL_DIR" LD_PRELOAD="$(san_preload)" TORCHADA_BACKEND=sim \
    "$PROBE_DIR/probe_dl13" --open libcudart.so.13 --vsym libcudart.so.13 --expect torchada ||
    fail "dlopen(\"libcudart.so.13\") + dlvsym(..., \"libcudart.so.13\") did not reach torchada"
}

case_rpath_without_audit() {
  grep -q '(RPATH)' <<<"$("$PROBE_READELF" -dW "$PROBE_DIR/probe_rpath13")" ||
    fail "probe_rpath13 has no DT_RPATH: the case tests nothing"
  # The control: the DT_RPATH beats LD_LIBRARY_PATH, so NVIDIA's library is loaded.
  env LD_LIBRARY_PATH="$PROBE_REPL_DIR" LD_PRELOAD="$(san_preload)" \
    "$PROBE_DIR/probe_rpath13" --expect nvidia ||
    fail "expected the DT_RPATH to win over LD_LIBRARY_PATH"
}

case_rpath_with_audit() {
  audit_env "$PROBE_DIR/probe_rpath13" --expect torchada ||
    fail "a DT_RPATH-pinned libcudart.so.13 was not redirected"
}

case_ctypes_path() {
  [ -n "$PROBE_PYTHON" ] || skip "no Python interpreter found at configure time"
  audit_env "$PROBE_PYTHON" "$PROBE_CTYPES" "$PROBE_NVIDIA_LIB" ||
    fail "ctypes.CDLL(NVIDIA's full path) did not reach torchada"
}

# libtorchada.so's own search for NVIDIA's library (TORCHADA_BACKEND=cuda) with the
# replacement directory first on LD_LIBRARY_PATH.
case_cuda_backend_sees_nvidia() {
  local rc
  # NVIDIA's library the reference run used is the one the pass-through must find: its directory
  # follows the replacement directory on LD_LIBRARY_PATH (else the toolkit's copy would do).
  rc=$(nvidia_rc "$PROBE_DIR/probe_dl13" "$PROBE_NVIDIA_LIB") || exit 1
  note "with the audit module: the replacement stays hidden from libtorchada.so's search"
  env LD_AUDIT="$PROBE_AUDIT" LD_PRELOAD="$(san_preload "$PROBE_SHIM")" \
    LD_LIBRARY_PATH="$PROBE_REPL_DIR:${PROBE_NVIDIA_LIB%/*}" TORCHADA_BACKEND=cuda PROBE_REFERENCE_RC="$rc" \
    "$PROBE_DIR/probe_dl13" --default --expect passthrough \
    --not-mapped "$PROBE_REPL_DIR/libcudart.so.13" || fail "pass-through with the audit module"
  note "without it: the replacement is found first, recognised and skipped"
  env LD_PRELOAD="$(san_preload "$PROBE_SHIM")" LD_LIBRARY_PATH="$PROBE_REPL_DIR:${PROBE_NVIDIA_LIB%/*}" \
    TORCHADA_BACKEND=cuda PROBE_REFERENCE_RC="$rc" \
    "$PROBE_DIR/probe_dl13" --default --expect passthrough || fail "pass-through without it"
  note "a program whose libcudart.so.13 is the replacement"
  env LD_AUDIT="$PROBE_AUDIT" LD_PRELOAD="$(san_preload "$PROBE_SHIM")" \
    LD_LIBRARY_PATH="$PROBE_REPL_DIR:${PROBE_NVIDIA_LIB%/*}" TORCHADA_BACKEND=cuda PROBE_REFERENCE_RC="$rc" \
    "$PROBE_DIR/probe_dl13" --open libcudart.so.13 --expect passthrough ||
    fail "pass-through for a program that opened the replacement"
}

# CUDA 12: the replacement's forwarding stubs.
case_abi12_plt_stubs() {
  env LD_LIBRARY_PATH="$PROBE_REPL_DIR" LD_PRELOAD="$(san_preload)" TORCHADA_BACKEND=sim \
    PROBE_NVIDIA_LIB="$PROBE_NVIDIA12_LIB" "$PROBE_DIR/probe_plt12" --stub --race 8 \
    --expect torchada || fail "CUDA 12 program through the replacement's stubs"
}

case_abi12_dlsym_stubs() {
  local how
  for how in dlsym dlvsym; do
    note "LD_LIBRARY_PATH only, $how"
    local vsym=()
    [ $how = dlsym ] || vsym=(--vsym libcudart.so.12)
    env LD_LIBRARY_PATH="$PROBE_REPL_DIR" LD_PRELOAD="$(san_preload)" TORCHADA_BACKEND=sim \
      PROBE_NVIDIA_LIB="$PROBE_NVIDIA12_LIB" "$PROBE_DIR/probe_dl12" --open libcudart.so.12 \
      "${vsym[@]}" --stub --race 8 --expect torchada || fail "dlopen(libcudart.so.12) + $how"
  done
  note "LD_AUDIT with the shim preloaded, NVIDIA's full path"
  env LD_AUDIT="$PROBE_AUDIT" LD_PRELOAD="$(san_preload "$PROBE_SHIM")" TORCHADA_BACKEND=sim \
    PROBE_NVIDIA_LIB="$PROBE_NVIDIA12_LIB" "$PROBE_DIR/probe_dl12" --open "$PROBE_NVIDIA12_LIB" \
    --stub --race 8 --expect torchada || fail "dlopen(NVIDIA's libcudart.so.12 path) stubs"
}

case_abi12_cuda_backend() {
  local rc
  rc=$(nvidia_rc "$PROBE_DIR/probe_dl12" "$PROBE_NVIDIA12_LIB") || exit 1
  env LD_AUDIT="$PROBE_AUDIT" LD_PRELOAD="$(san_preload "$PROBE_SHIM")" \
    LD_LIBRARY_PATH="$PROBE_REPL_DIR:${PROBE_NVIDIA12_LIB%/*}" TORCHADA_BACKEND=cuda \
    PROBE_NVIDIA_LIB="$PROBE_NVIDIA12_LIB" PROBE_REFERENCE_RC="$rc" \
    "$PROBE_DIR/probe_dl12" --open libcudart.so.12 --expect passthrough ||
    fail "CUDA 12 pass-through through the stubbed replacement"
}

# NVIDIA's library, loaded by libtorchada.so for the pass-through, needs another served name:
# it must get NVIDIA's (here a stand-in libcudart.so.13 that needs NVIDIA's libcudart.so.12).
case_nvidia_dependencies_left_alone() {
  local fake_dir=${PROBE_FAKE_NVIDIA%/*} rc
  rc=$(nvidia_rc "$PROBE_DIR/probe_dl13" "$PROBE_FAKE_NVIDIA") || exit 1
  [ "$rc" = 800 ] || fail "the stand-in answered $rc, not its own 800"
  env LD_AUDIT="$PROBE_AUDIT" LD_PRELOAD="$(san_preload "$PROBE_SHIM")" \
    LD_LIBRARY_PATH="$PROBE_REPL_DIR:$fake_dir" TORCHADA_BACKEND=cuda TORCHADA_LOG_LEVEL=info \
    PROBE_NVIDIA_LIB="$PROBE_FAKE_NVIDIA" PROBE_REFERENCE_RC="$rc" \
    "$PROBE_DIR/probe_dl13" --default --expect passthrough --mapped "$PROBE_NVIDIA12_LIB" \
    --not-mapped "$PROBE_REPL_DIR/libcudart.so.12" ||
    fail "a dependency of NVIDIA's library was redirected to torchada's replacement"
}

c=${1:-}
shift || true
declare -F "case_$c" >/dev/null || fail "unknown case '$c'"
"case_$c" "$@"
echo "PASS $c"
