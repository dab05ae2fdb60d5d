#!/usr/bin/env bash
# `make demo`: plan GPT-2 XL (batch 1, sequence 1024) on the sortinghat-v100 server with the `single`
# planner, simulate the plan, print its latency and the lower bound, and write a Chrome/Perfetto
# trace and an SVG timeline into out/.
set -euo pipefail
HEXPLAN="${1:-build/release/hexplan}"
OUT="${OUT:-out}"
mkdir -p "$OUT"

echo "== the model"
"$HEXPLAN" inspect gpt2-xl --batch 1 --seq 1024

echo
echo "== plan: every op on one V100, weights loaded over its PCIe bus in layer order"
"$HEXPLAN" place gpt2-xl --batch 1 --seq 1024 --cluster sortinghat-v100 --algo single \
  -o "$OUT/gpt2-xl.single.plan.json"

echo
echo "== simulate the plan"
"$HEXPLAN" simulate "$OUT/gpt2-xl.single.plan.json" \
  --trace "$OUT/gpt2-xl.single.trace.json" --svg "$OUT/gpt2-xl.single.svg"

echo
echo "== the same model over all four GPUs with HEFT (cold start: weights loaded over both PCIe buses)"
"$HEXPLAN" place gpt2-xl --batch 1 --seq 1024 --cluster sortinghat-v100 --algo heft \
  -o "$OUT/gpt2-xl.heft.plan.json"
"$HEXPLAN" simulate "$OUT/gpt2-xl.heft.plan.json" \
  --trace "$OUT/gpt2-xl.heft.trace.json" --svg "$OUT/gpt2-xl.heft.svg"

echo
echo "Open $OUT/gpt2-xl.single.trace.json in https://ui.perfetto.dev (or chrome://tracing);"
echo "open $OUT/gpt2-xl.single.svg in a browser."
