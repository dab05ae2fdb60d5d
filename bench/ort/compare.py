#!/usr/bin/python3
"""hexplan's executor against ONNX Runtime (CPU), measured in the same run, on ONNX files with weights.

Usage:
  bench/ort/compare.py [--hexplan build/release/hexplan] [--rounds 5] [--repeat 20] [--warmup 5]
                       [--work /tmp/hx-ort] [--configs 1,all] MODEL.onnx ...

For each model and configuration the two are timed alternately, `--rounds` times: one `hexplan run`
(`--warmup` unmeasured, `--repeat` measured inferences, its median) and one ONNX Runtime session
(bench/ort/ort_time.js, the same counts). Configurations: `1`: one core group of one core against
ORT with one intra-op thread, both on core 0 (taskset); `all`: one group of every core against
ORT with as many threads; `best` (not by default): the fastest of hexplan's one-group plan and
its multi-group plans (one group per core; --algos) against ORT's fastest thread count. Prints
per model the median over rounds of each side's median and the ratio hexplan / ORT (below 1:
hexplan faster), and the median peak resident memory of each process (ru_maxrss) with its ratio. ONNX Runtime is the npm package onnxruntime-node,
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
import tempfile

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


def run_measured(cmd, cwd=None):
    """Runs `cmd`; returns its stdout and its peak resident memory in MiB (the process's
    ru_maxrss, from wait4: taskset execs the timed program in the same process)."""
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=err, text=True)
        out = proc.stdout.read()
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise subprocess.CalledProcessError(proc.returncode, cmd, out, err.read())
    return out, usage.ru_maxrss / 1024.0


def time_hexplan(hexplan, model, plan, cluster, args):
    cmd = [hexplan, "run", model, "--plan", plan, "--cluster", cluster, "--random-input",
           "--seed", "1", "--repeat", str(args.repeat), "--warmup", str(args.warmup), "--json"]
    out, rss = run_measured(cmd)
    return json.loads(out)["latency_ms_median"], rss


def time_ort(script, work, model, threads, args, cores):
    cmd = ["taskset", "-c", cores, "node", script, model, str(threads), str(args.warmup),
           str(args.repeat)]
    out, rss = run_measured(cmd, cwd=work)
    return json.loads(out)["median_ms"], rss


def print_row(model, label, hx, ort):
    """hx, ort: (median ms, peak MiB) per round; prints the medians over rounds and the ratios."""
    h, o = statistics.median(t for t, _ in hx), statistics.median(t for t, _ in ort)
    hm, om = statistics.median(m for _, m in hx), statistics.median(m for _, m in ort)
    print(f"| {model} | {label} | {h:.2f} | {o:.2f} | {h / o:.2f} | {hm:.0f} | {om:.0f} | "
          f"{hm / om:.2f} |", flush=True)


def place(args, model, cluster, algo, plan, profile=None):
    cmd = [args.hexplan, "place", model, "--cluster", cluster, "--algo", algo,
           "--cpu-weights-in-place", "-o", plan]
    if profile:
        cmd += ["--profile", profile]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def compare_best(args, script, model, ncores):
    """Config `best`: the fastest of hexplan's plans (one group of every core, and each planner of
    --algos on one group per core with a profile measured first) against ORT's fastest thread
    count (1 .. ncores). Each round times every candidate; the row gives the median over rounds
    of the best per round, and names the candidates that won most often."""
    stem = os.path.join(args.work, os.path.basename(model))
    groups = f"local-cpu:groups={ncores}"
    profile = stem + ".profile.json"
    subprocess.run([args.hexplan, "profile", model, "--cluster", groups, "-o", profile],
                   check=True, stdout=subprocess.DEVNULL)
    plans = {"1 group": (stem + ".all.plan.json", "local-cpu:groups=1")}
    place(args, model, "local-cpu:groups=1", "single", plans["1 group"][0])
    for algo in args.algos.split(","):
        try:
            place(args, model, groups, algo, stem + f".{algo}.plan.json", profile)
            plans[algo] = (stem + f".{algo}.plan.json", groups)
        except subprocess.CalledProcessError:
            print(f"{algo}: no plan for {groups}; skipped", file=sys.stderr)
    hx, ort, hx_won, ort_won = [], [], [], []
    each = {name: [] for name in plans}
    for _ in range(args.rounds):
        times = {name: time_hexplan(args.hexplan, model, plan, cluster, args)
                 for name, (plan, cluster) in plans.items()}
        for name, t in times.items():
            each[name].append(t[0])
        name = min(times, key=lambda k: times[k][0])
        hx.append(times[name])
        hx_won.append(name)
        threads = {t: time_ort(script, args.work, model, t, args, f"0-{ncores - 1}")
                   for t in range(1, ncores + 1)}
        t = min(threads, key=lambda k: threads[k][0])
        ort.append(threads[t])
        ort_won.append(f"{t} threads")
    multi = {k: statistics.median(v) for k, v in each.items() if k != "1 group"}
    label = f"best: hexplan {statistics.mode(hx_won)}, ORT {statistics.mode(ort_won)}"
    if multi:
        m = min(multi, key=multi.get)
        label += f" (best {ncores}-group plan: {m}, {multi[m]:.2f} ms)"
    print_row(os.path.basename(model), label, hx, ort)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--hexplan", default="build/release/hexplan")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--work", default="/tmp/hx-ort")
    ap.add_argument("--configs", default="1,all")
    ap.add_argument("--algos", default="heft,peft,m-etf",
                    help="config best: the planners tried on one core group per core")
    args = ap.parse_args()
    script = ensure_ort(args.work)
    ncores = os.cpu_count()
    print("| model | config | hexplan ms | ORT ms | ratio | hexplan MiB | ORT MiB | memory ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for model in args.models:
        model = os.path.abspath(model)
        for config in args.configs.split(","):
            if config == "best":
                compare_best(args, script, model, ncores)
                continue
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
            label = "1 core, 1 thread" if one else f"{ncores} cores, {ncores} threads"
            print_row(os.path.basename(model), label, hx, ort)
    return 0


if __name__ == "__main__":
    sys.exit(main())
