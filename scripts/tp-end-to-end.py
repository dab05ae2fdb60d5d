#!/usr/bin/env python3
"""`hexplan tp --time-preset calibrated` against published end-to-end latencies of tensor-parallel
inference (docs/tensor-parallel.md "End to end"; sources there). Usage: tp-end-to-end.py HEXPLAN.
Prints the markdown rows: configuration, published ms, ours with `--engine eager` and with
`--engine fused` (ms and error), the engine the measured system ran, source."""
import json
import subprocess
import sys

H = sys.argv[1]
rows = [
 # label, model, cluster, batch, in, decode steps (0 = first token only), published ms, engine, source
 ("GPT-3 175B, TP 8, 8 x A100-80GB, batch 1, 128 in / 8 out", "gpt3-175b", "dgx-a100", 1, 128, 8, 488.86, "FT"),
 ("GPT-3 175B, TP 8, batch 8, 128 / 8", "gpt3-175b", "dgx-a100", 8, 128, 8, 749.86, "FT"),
 ("GPT-3 175B, TP 8, batch 16, 128 / 8", "gpt3-175b", "dgx-a100", 16, 128, 8, 1037.47, "FT"),
 ("GPT-3 175B, TP 8, batch 32, 128 / 8", "gpt3-175b", "dgx-a100", 32, 128, 8, 1547.44, "FT"),
 ("GPT-3 175B, TP 8, batch 1, 512 / 32", "gpt3-175b", "dgx-a100", 1, 512, 32, 1719.96, "FT"),
 ("GPT-3 175B, TP 8, batch 8, 512 / 32", "gpt3-175b", "dgx-a100", 8, 512, 32, 2629.97, "FT"),
 ("GPT-3 175B, TP 8, batch 16, 512 / 32", "gpt3-175b", "dgx-a100", 16, 512, 32, 3706.23, "FT"),
]
# TensorRT-LLM v0.5 "High Throughput", A100 FP16, LLaMA 7B, TP 1 (C++ gptSessionBenchmark):
# out tok/s -> ms for the whole batch = batch * out / throughput; out - 1 decode steps.
for b, i, o, tps in ((64, 128, 128, 3486), (32, 128, 2048, 1459), (32, 2048, 128, 529), (16, 2048, 2048, 592)):
  rows.append((f"LLaMA-7B, TP 1, A100, batch {b}, {i} / {o} ({tps} tok/s)", "openllama-7b", "dgx-a100:gpus=1", b, i, o - 1, round(b * o / tps * 1e3, 1), "TRT-tput"))
rows.append(("LLaMA-7B, TP 1, A100, batch 1, 128 in, first token", "openllama-7b", "dgx-a100:gpus=1", 1, 128, 0, 16, "TRT"))
rows.append(("LLaMA-7B, TP 1, A100, batch 1, 2048 in, first token", "openllama-7b", "dgx-a100:gpus=1", 1, 2048, 0, 133, "TRT"))
for gpu, pre, vals in (("A100 80GB SXM4", "dgx-a100", {(1,1):234.0,(1,2):171.7,(1,4):143.7,(1,8):136.5,(8,1):329.5,(8,2):237.6,(8,4):196.4,(8,8):181.9}),
                       ("H100 80GB HBM3", "dgx-h100", {(1,1):153.8,(1,2):128.6,(1,4):107.4,(1,8):97.6,(8,1):199.2,(8,2):156.2,(8,4):134.6,(8,8):129.1})):
  for (b, tp), v in vals.items():
    rows.append((f"Llama-2-7B, TP {tp}, {gpu}, batch {b}, 128 / 20", "openllama-7b", f"{pre}:gpus={tp}" if tp < 8 else pre, b, 128, 19, v, "NeMo"))
ENGINE = {"FT": "fused (FT C++)", "TRT-tput": "fused (TRT-LLM C++)", "TRT": "fused (TRT-LLM C++)", "NeMo": "fused (TRT-LLM, Python runtime)"}


def ours(model, cl, b, i, o, engine):
  cmd = [H, "tp", model, "--cluster", cl, "--algo", "megatron", "--batch", str(b), "--input-len", str(i),
         "--output-len", str(max(o, 1)), "--time-preset", "calibrated", "--engine", engine, "--json", "--no-plan"]
  out = subprocess.run(cmd, capture_output=True, text=True)
  if out.returncode:
    sys.exit(f"{' '.join(cmd)}: {out.stderr}")
  j = json.loads(out.stdout)
  return j["ttft_ms"] if o == 0 else j["prefill_ms"] + j["decode_ms"]


for label, model, cl, b, i, o, pub, src in rows:
  cells = []
  for engine in ("eager", "fused"):
    t = ours(model, cl, b, i, o, engine)
    cells.append(f"{t:.1f} ({100 * (t / pub - 1):+.1f}%)")
  print(f"| {label} | {pub:g} | {cells[0]} | {cells[1]} | {ENGINE[src]} | {src.split('-')[0]} |")
