#!/usr/bin/python3
"""hexplan's executor against ONNX Runtime (CPU), measured in the same run, on ONNX files with weights.

Usage:
  bench/ort/compare.py [--hexplan build/release/hexplan] [--rounds 5] [--repeat 20] [--warmup 5]
                       [--work /tmp/hx-ort] [--configs 1,all] MODEL.onnx ...

For each model and configuration the two are timed alternately, `--rounds` times: one `hexplan run`
(`--warmup` unmeasured, `--repeat` measured inferences, its median) and one ONNX Runtime session
(bench/ort/ort_time.js, the same counts). Configurations: `1`: one core group of one core against
ORT with one intra-op thread, both on core 0 (taskset); `all`: one group of every core against
ORT with as many threads. Prints per model the median over rounds of each side's median and the
ratio hexplan / ORT (below 1: hexplan faster). ONNX Runtime is the npm package onnxruntime-node,
installed into `--work`/node_modules with `npm install --ignore-scripts` when missing (its CPU
library ships inside the package; the install script only fetches GPU providers).
Models: bench/ort/export_models.py writes mobilenet_v2 and resnet50.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def ensure_ort(work):
    if not os.path.isdir(os.path.join(work, "node_modules", "onnxruntime-node")):
        os.makedirs(work, exist_ok=True)
        subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund",
                        "onnxruntime-node"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    script = os.path.join(work, "ort_time.js")
    with open(os.path.join(HERE, "ort_time.js")) as src, open(script, "w") as dst:
        dst.write(src.read())
    return script


def time_hexplan(hexplan, model, plan, cluster, args):
    cmd = [hexplan, "run", model, "--plan", plan, "--cluster", cluster, "--random-input",
           "--seed", "1", "--repeat", str(args.repeat), "--warmup", str(args.warmup), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms_median"]


def time_ort(script, work, model, threads, args, cores):
    cmd = ["taskset", "-c", cores, "node", script, model, str(threads), str(args.warmup),
           str(args.repeat)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=work).stdout
    return json.loads(out)["median_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--hexplan", default="build/release/hexplan")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--work", default="/tmp/hx-ort")
    ap.add_argument("--configs", default="1,all")
    args = ap.parse_args()
    script = ensure_ort(args.work)
    ncores = os.cpu_count()
    print("| model | config | hexplan ms | ORT ms | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for model in args.models:
        model = os.path.abspath(model)
        for config in args.configs.split(","):
            one = config == "1"
            cluster = "local-cpu:groups=1,cores=1" if one else "local-cpu:groups=1"
            threads, cores = (1, "0") if one else (ncores, f"0-{ncores - 1}")
            plan = os.path.join(args.work, os.path.basename(model) + f".{config}.plan.json")
            subprocess.run([args.hexplan, "place", model, "--cluster", cluster, "--algo", "single",
                            "--cpu-weights-in-place", "-o", plan], check=True,
                           stdout=subprocess.DEVNULL)
            hx, ort = [], []
            for _ in range(args.rounds):
                hx.append(time_hexplan(args.hexplan, model, plan, cluster, args))
                ort.append(time_ort(script, args.work, model, threads, args, cores))
            h, o = statistics.median(hx), statistics.median(ort)
            label = "1 core, 1 thread" if one else f"{ncores} cores, {ncores} threads"
            print(f"| {os.path.basename(model)} | {label} | {h:.2f} | {o:.2f} | {h / o:.2f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
