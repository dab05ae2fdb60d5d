#!/usr/bin/env bash
# Runs every fuzz target of DIR (default build/fuzz) on a copy of its seed corpus
# (fuzz/corpus/<name without the fuzz_ prefix>/); NAME... runs only those targets.
#   HX_FUZZ_SECONDS         total budget, split evenly over the targets, at least 5 s each
#                           (default 60; `make test`)
#   HX_FUZZ_TARGET_SECONDS  seconds per target instead of a split budget (`make fuzz-long`)
# Fails when a target crashes, trips a sanitizer or leaks; the input that did it is kept in
# DIR/fuzz/artifacts/<name>/. Prints a closing "N passed, N failed" line.
set -uo pipefail
dir=${1:-build/fuzz}
shift $(( $# > 0 ? 1 : 0 ))
root="$(cd "$(dirname "$0")/.." && pwd)"

bins=()
for bin in "$dir"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  if [ $# -gt 0 ]; then
    keep=0
    for want in "$@"; do [ "$want" = "$name" ] || [ "fuzz_$want" = "$name" ] && keep=1; done
    [ $keep -eq 1 ] || continue
  fi
  bins+=("$bin")
done
if [ ${#bins[@]} -eq 0 ]; then
  echo "fuzz: no fuzz_* targets in $dir/fuzz (build them with make fuzz)"; echo "fuzz: 0 passed, 1 failed"
  exit 1
fi

if [ -n "${HX_FUZZ_TARGET_SECONDS:-}" ]; then
  secs=$HX_FUZZ_TARGET_SECONDS
else
  total=${HX_FUZZ_SECONDS:-60}
  secs=$(( total / ${#bins[@]} ))
  [ $secs -lt 5 ] && secs=5
fi
echo "fuzz: ${#bins[@]} targets, ${secs} s each"

passed=0; failed=0
for bin in "${bins[@]}"; do
  name=$(basename "$bin")
  corpus_src="$root/fuzz/corpus/${name#fuzz_}"
  artifacts="$dir/fuzz/artifacts/$name"
  mkdir -p "$artifacts"
  work=$(mktemp -d)
  [ -d "$corpus_src" ] && cp -r "$corpus_src"/. "$work"/ 2>/dev/null
  if ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
      -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" >"$work.log" 2>&1; then
    echo "fuzz: $name ok ($(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$work.log" | grep -oE '[0-9]+$' || echo '?') runs)"
    passed=$((passed+1))
  else
    echo "fuzz: $name FAILED (input kept in $artifacts/)"; tail -40 "$work.log"; failed=$((failed+1))
  fi
  rm -rf "$work" "$work.log"
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
