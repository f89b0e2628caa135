#!/usr/bin/env bash
# Regenerates fuzz/corpus/sim/ (the simulator's seed corpus) with sim_make_corpus.
#   fuzz/sim/make_corpus.sh [BUILD_DIR]     (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
cmake --build "$build" --target sim_make_corpus
rm -rf "$root/fuzz/corpus/sim"
mkdir -p "$root/fuzz/corpus/sim"
"$build/bin/sim_make_corpus" "$root/fuzz/corpus/sim"
