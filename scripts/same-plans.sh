#!/usr/bin/env bash
# Plans 18 placement-suite cases (every group: SortingHat, MOIRAI, Chrion, imported workloads) with
# two hexplan binaries and compares the plan files byte for byte: the check a refactoring of the
# place layer must pass. Usage: scripts/same-plans.sh OLD_HEXPLAN NEW_HEXPLAN [WORKDIR]
# Prints SAME/DIFF per case and a closing "N passed, N failed" line; exits 1 when a plan differs.
set -uo pipefail
old=$1; new=$2; work=${3:-$(mktemp -d)}
root="$(cd "$(dirname "$0")/.." && pwd)"
D="$root/../shared/data/placement"
cases=(
  "sh-single|gpt2-large --batch 1 --seq 32 --cluster sortinghat-v100 --algo single"
  "sh-heft|gpt2-large --batch 1 --seq 32 --cluster sortinghat-v100 --algo heft"
  "sh-metf|gpt2-large --batch 1 --seq 32 --cluster sortinghat-v100 --algo m-etf"
  "sh-deepplan|gpt2-large --batch 1 --seq 32 --cluster sortinghat-v100 --algo deepplan"
  "sh-emip|gpt2 --batch 1 --seq 32 --cluster sortinghat-v100 --algo efficientmip --time-limit 20"
  "sh-sortinghat|gpt2 --batch 1 --seq 32 --cluster sortinghat-v100-hetero --algo sortinghat --time-limit 20"
  "mo-msct|gpt3-350m --cluster moirai-intra --coarsen fusion --algo m-sct"
  "mo-getf|gpt3-350m --cluster moirai-intra --coarsen fusion --algo getf --time-limit 20"
  "mo-moirai|gpt3-350m --cluster moirai-intra --coarsen fusion --algo moirai --time-limit 20"
  "mo-heft|swin-1.8b --cluster moirai-inter --coarsen none --algo heft"
  "ch-chrion|lstm --layers 12 --batch 8 --io 64 --seq 96 --cluster chrion-1080ti --algo chrion"
  "ch-heft|lstm --layers 12 --batch 8 --io 64 --seq 96 --cluster chrion-1080ti --algo heft"
  "ch-metf|lstm --layers 4 --batch 8 --io 64 --seq 96 --cluster chrion-1080ti --algo m-etf"
  "wl-getf|$D/moirai/sample-data-csv/example-1.csv --algo getf --time-limit 10"
  "wl-moirai|$D/moirai/sample-data-csv/GoogLeNet.csv --algo moirai --time-limit 20"
  "wl-emip|$D/dnn-partitioning/latency-inputs/LayerGraphs/bert24_inference.json --algo efficientmip --time-limit 10"
  "wl-pipeline|$D/moirai/sample-data-csv/inceptionv4.csv --algo pipeline --time-limit 10"
  "wl-peft|$D/moirai/sample-data-csv/yolov5x.csv --algo peft"
)
mkdir -p "$work/old" "$work/new"
passed=0; failed=0
for c in "${cases[@]}"; do
  name=${c%%|*}; args=${c#*|}
  # shellcheck disable=SC2086
  "$old" place $args -o "$work/old/$name.json" >/dev/null 2>"$work/old/$name.err"
  # shellcheck disable=SC2086
  "$new" place $args -o "$work/new/$name.json" >/dev/null 2>"$work/new/$name.err"
  if [ -s "$work/old/$name.json" ] && cmp -s "$work/old/$name.json" "$work/new/$name.json"; then
    echo "SAME $name"; passed=$((passed+1))
  else
    echo "DIFF $name ($work)"; failed=$((failed+1))
  fi
done
echo "same-plans: $passed passed, $failed failed"
[ $failed -eq 0 ]
