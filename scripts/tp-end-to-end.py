#!/usr/bin/env python3
"""`hexplan tp --time-preset calibrated` against published end-to-end latencies of tensor-parallel
inference (docs/tensor-parallel.md "End to end"; sources there). Usage: tp-end-to-end.py HEXPLAN
[--lib | --lib-gqa] (--lib: the LLM-Inference-Bench Llama-2-7B grid alone; --lib-gqa: its
TensorRT-LLM rows of Llama-3-8B and Llama-2-70B, errors with the custom all-reduce / NCCL).
Prints the markdown rows: configuration, published ms, ours with `--engine eager`, with
`--engine fused` and with `--engine fused --all-reduce custom` (ms and error), the engine the
measured system ran, source; then the LLM-Inference-Bench H100 grid (one row per engine, TP and
batch; one column per length; errors fused + custom all-reduce / fused / eager)."""
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
# LMDeploy v0.1.0a1 docs/en/benchmark/a100_fp16.md, "Static Inference Benchmark", llama2-7b, A100-80G,
# TP 1, batch 1 (TurboMind): out tok/s of one request at a time (6 rounds of random prompts, ignore_eos)
# -> ms per request = out / tok/s; out - 1 decode steps after the context pass.
for i, o, tps in ((1, 128, 100.02), (128, 128, 102.21), (128, 2048, 98.92), (2048, 128, 86.1), (2048, 2048, 93.78)):
  rows.append((f"Llama-2-7B, TP 1, A100-80G, batch 1, {i} / {o} ({tps} tok/s)", "openllama-7b", "dgx-a100:gpus=1", 1, i, o - 1, round(o / tps * 1e3, 1), "LMDeploy"))
ENGINE = {"FT": "fused (FT C++)", "LMDeploy": "fused (TurboMind C++)", "TRT-tput": "fused (TRT-LLM C++)", "TRT": "fused (TRT-LLM C++)", "NeMo": "fused (TRT-LLM, Python runtime)"}


def ours(model, cl, b, i, o, engine, all_reduce="nccl"):
  cmd = [H, "tp", model, "--cluster", cl, "--algo", "megatron", "--batch", str(b), "--input-len", str(i),
         "--output-len", str(max(o, 1)), "--time-preset", "calibrated", "--engine", engine,
         "--all-reduce", all_reduce, "--json", "--no-plan"]
  out = subprocess.run(cmd, capture_output=True, text=True)
  if out.returncode:
    sys.exit(f"{' '.join(cmd)}: {out.stderr}")
  j = json.loads(out.stdout)
  return j["ttft_ms"] if o == 0 else j["prefill_ms"] + j["decode_ms"]


# LLM-Inference-Bench (Chitty-Venkata et al., arXiv 2411.00136; data: Plots/All_results.csv of
# https://github.com/argonne-lcf/LLM-Inference-Bench): Llama-2-7B, FP16, "Nvidia H100 GPU" x TP,
# input = output = n tokens, one batch; "Latency" (s) is the wall time of the whole batch (its
# "Throughput" column is batch x 2n / latency). n - 1 decode steps after the context pass.
LIB_LENGTHS = (128, 256, 512, 1024, 2048)
LIB_H100 = {
 "TensorRT-LLM": {
  (1, 1): (0.844, 1.681, 3.492, 7.188, 15.362), (1, 16): (0.989, 2.142, 4.775, 11.633, 31.472),
  (1, 32): (1.087, 2.441, 5.941, 15.931, 62.461), (1, 64): (1.372, 3.251, 8.552, 32.587, 112.572),
  (2, 1): (0.601, 1.212, 2.505, 5.327, 11.536), (2, 16): (0.717, 1.491, 3.264, 7.563, 19.281),
  (2, 32): (0.844, 1.822, 4.161, 10.400, 29.180), (2, 64): (0.996, 2.261, 5.571, 15.254, 58.371),
  (4, 1): (0.480, 0.976, 2.022, 4.371, 9.651), (4, 16): (0.568, 1.158, 2.468, 5.512, 13.101),
  (4, 32): (0.613, 1.313, 2.944, 6.893, 18.043), (4, 64): (0.777, 1.703, 3.934, 9.931, 28.383)},
 "vLLM": {  # (1, 32) at 1024: the mean of the CSV's two rows (18.988 and 19.293 s)
  (1, 1): (0.933, 1.901, 3.884, 7.839, 15.841), (1, 16): (1.135, 2.429, 5.446, 13.169, 35.298),
  (1, 32): (1.374, 3.042, 7.243, 19.140, 59.132), (1, 64): (1.845, 4.269, 10.825, 32.641, 117.135),
  (2, 1): (0.791, 1.556, 3.095, 6.225, 12.709), (2, 16): (0.942, 1.963, 4.244, 9.796, 24.836),
  (2, 32): (1.136, 2.451, 5.570, 13.576, 37.196), (2, 64): (1.593, 3.522, 8.287, 21.610, 64.129),
  (4, 1): (0.755, 1.501, 3.008, 5.956, 11.928), (4, 16): (0.792, 1.606, 3.466, 7.874, 18.212),
  (4, 32): (0.945, 1.968, 4.343, 10.171, 26.281), (4, 64): (1.306, 2.834, 6.566, 15.869, 43.221)},
}
# Both engines keep their KV cache in ~0.9 of the memory left after the weights (TensorRT-LLM's
# kv_cache_free_gpu_mem_fraction, vLLM's gpu_memory_utilization); a batch whose whole KV cache
# (b x 2n tokens, 0.5 MiB each for Llama-2-7B, split over TP) exceeds that runs in waves, which the
# step model does not: such cells are marked, not compared.


def lib_fits(tp, b, n, params=6.74e9, kv_bytes_per_token=0.5 * 2 ** 20):
  weights = params * 2 / tp
  return b * 2 * n * kv_bytes_per_token / tp <= 0.9 * (81559 * 2 ** 20 - weights)  # nvidia-smi's MiB


# The same CSV's TensorRT-LLM H100 rows of the two grouped-query models the zoo has (`llama3-8b`:
# 8 K/V heads, 128 KiB of KV cache a token; `llama2-70b`: 8 K/V heads, 320 KiB); None: no row.
LIB_H100_GQA = {
 ("llama3-8b", 8.03e9, 128 * 2 ** 10): {
  (1, 1): (0.897, 1.809, 3.687, 7.729, 16.24), (1, 16): (1.042, 2.15, 4.575, 10.157, 23.882),
  (1, 32): (1.133, 2.384, 5.268, 12.493, 32.758), (1, 64): (1.357, 2.979, 6.923, 17.483, 49.865),
  (2, 1): (0.665, 1.342, 2.753, 5.788, 12.475), (2, 16): (0.759, 1.546, 3.242, 6.981, 15.917),
  (2, 32): (0.853, 1.772, 3.833, 8.599, 21.19), (2, 64): (1.038, 2.23, 4.995, 11.955, 31.865),
  (4, 1): (0.502, 1.019, 2.11, 4.522, 10.019), (4, 16): (0.61, 1.229, 2.551, 5.317, None),
  (4, 32): (0.668, None, None, None, None), (4, 64): (0.853, None, None, None, None)},
 ("llama2-70b", 68.98e9, 320 * 2 ** 10): {
  (4, 1): (2.309, 4.602, 9.471, 19.741, 41.42), (4, 16): (2.624, 5.437, 11.157, 23.582, 52.308),
  (4, 32): (3.102, 6.254, 12.911, 26.715, 57.372), (4, 64): (3.532, 7.295, 15.121, 32.015, 71.025)},
}


def lib_gqa_grid():
  print("| LLM-Inference-Bench, TensorRT-LLM FP16, H100 | " + " | ".join(f"{n} / {n}" for n in LIB_LENGTHS) + " |")
  print("|---|" + "---:|" * len(LIB_LENGTHS))
  for (model, params, kv), table in LIB_H100_GQA.items():
    for (tp, b), secs in table.items():
      cells = []
      for n, s in zip(LIB_LENGTHS, secs):
        if s is None:
          cells.append("-")
          continue
        pub = s * 1e3
        if not lib_fits(tp, b, n, params, kv):
          cells.append(f"{pub:.0f}: KV over the pool")
          continue
        c, f = (ours(model, f"dgx-h100:gpus={tp}", b, n, n - 1, "fused", ar) for ar in ("custom", "nccl"))
        cells.append(f"{pub:.0f}: {100 * (c / pub - 1):+.1f}% / {100 * (f / pub - 1):+.1f}%")
      print(f"| {model}, TP {tp}, batch {b} | " + " | ".join(cells) + " |")


if "--lib-gqa" in sys.argv:
  lib_gqa_grid()
  sys.exit(0)


for label, model, cl, b, i, o, pub, src in ([] if "--lib" in sys.argv else rows):
  cells = []
  for engine, all_reduce in (("eager", "nccl"), ("fused", "nccl"), ("fused", "custom")):
    t = ours(model, cl, b, i, o, engine, all_reduce)
    cells.append(f"{t:.1f} ({100 * (t / pub - 1):+.1f}%)")
  print(f"| {label} | {pub:g} | {cells[0]} | {cells[1]} | {cells[2]} | {ENGINE[src]} | {src.split('-')[0]} |")

if "--lib" not in sys.argv:
  print()
print("| LLM-Inference-Bench, Llama-2-7B FP16, H100 | " + " | ".join(f"{n} / {n}" for n in LIB_LENGTHS) + " |")
print("|---|" + "---:|" * len(LIB_LENGTHS))
for engine, table in LIB_H100.items():
  for (tp, b), secs in table.items():
    cells = []
    for n, s in zip(LIB_LENGTHS, secs):
      pub = s * 1e3
      if not lib_fits(tp, b, n):
        cells.append(f"{pub:.0f}: KV over the pool")
        continue
      e, f, c = (ours("openllama-7b", f"dgx-h100:gpus={tp}", b, n, n - 1, eng, ar)
                 for eng, ar in (("eager", "nccl"), ("fused", "nccl"), ("fused", "custom")))
      cells.append(f"{pub:.0f}: {100 * (c / pub - 1):+.1f}% / {100 * (f / pub - 1):+.1f}% / {100 * (e / pub - 1):+.0f}%")
    print(f"| {engine}, TP {tp}, batch {b} | " + " | ".join(cells) + " |")
