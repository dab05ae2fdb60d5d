#!/usr/bin/env bash
# Runs every benchmark binary in a build directory (not part of `make test`).
set -euo pipefail
dir=${1:-build/release}
for b in "$dir"/*_bench; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b" --benchmark_min_time=0.2 "${@:2}"
done
