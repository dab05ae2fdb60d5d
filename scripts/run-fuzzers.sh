#!/usr/bin/env bash
# Runs every fuzz target for HX_FUZZ_SECONDS seconds (default 20) on its seed corpus.
# Fails when a target crashes. Prints a closing "N passed, N failed" line.
set -uo pipefail
dir=${1:-build/fuzz}
secs=${HX_FUZZ_SECONDS:-20}
root="$(cd "$(dirname "$0")/.." && pwd)"
passed=0; failed=0
for bin in "$dir"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  corpus_src="$root/fuzz/corpus/${name#fuzz_}"
  work=$(mktemp -d)
  [ -d "$corpus_src" ] && cp -r "$corpus_src"/. "$work"/ 2>/dev/null
  if ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
      -timeout=10 -print_final_stats=1 "$work" >"$work.log" 2>&1; then
    echo "fuzz: $name ok ($(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$work.log" | grep -oE '[0-9]+$' || echo '?') runs)"
    passed=$((passed+1))
  else
    echo "fuzz: $name FAILED"; tail -40 "$work.log"; failed=$((failed+1))
  fi
  rm -rf "$work" "$work.log"
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
