#!/usr/bin/env bash
# Regenerates fuzz/corpus/check/ (torchada-check's seed corpus) with check_make_corpus.
#   fuzz/check/make_corpus.sh [BUILD_DIR]     (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
cmake --build "$build" --target check_make_corpus
rm -rf "$root/fuzz/corpus/check"
"$build/bin/check_make_corpus" "$root/fuzz/corpus/check"
