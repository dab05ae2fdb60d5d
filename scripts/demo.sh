#!/usr/bin/env bash
# `make demo`: plan GPT-2 XL (batch 1, sequence 1024) on the sortinghat-v100 server with the `single`
# planner, simulate the plan, print its latency and the lower bound, and write a Chrome/Perfetto
# trace and an SVG timeline into out/; compare the fast planners; then profile, plan (pipeline
# stages) and run a small LSTM for real on this machine's CPU cores, with the simulator's
# prediction beside the measurement.
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
echo "== the planners side by side (batch 4, sequence 128), with SortingHat's critical-path bound"
"$HEXPLAN" compare gpt2-xl --batch 4 --seq 128 --cluster sortinghat-v100 \
  --algos single,heft,m-etf,deepplan,critical-path

echo
echo "== run a plan for real on this machine's cores (two core groups), beside its simulation:"
echo "   Chrion's 12-layer LSTM cut into two pipeline stages (layers 0-5 on one group, 6-11 on the other)"
CPU=local-cpu:groups=2
LSTM=(lstm)
"$HEXPLAN" profile "${LSTM[@]}" --cluster "$CPU" --repeat 3 -o "$OUT/lstm.profile.json"
"$HEXPLAN" place "${LSTM[@]}" --cluster "$CPU" --profile "$OUT/lstm.profile.json" \
  --algo pipeline --cpu-weights-in-place -o "$OUT/lstm.cpu.plan.json"
"$HEXPLAN" run "${LSTM[@]}" --cluster "$CPU" --plan "$OUT/lstm.cpu.plan.json" \
  --random-input --seed 1 --warmup 10 --repeat 20 --profile "$OUT/lstm.profile.json" \
  --output "$OUT/lstm.output.npy"

echo
echo "Open $OUT/gpt2-xl.single.trace.json in https://ui.perfetto.dev (or chrome://tracing);"
echo "open $OUT/gpt2-xl.single.svg in a browser."
