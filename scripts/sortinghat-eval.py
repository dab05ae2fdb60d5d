#!/usr/bin/env python3
"""SortingHat's evaluation (ICS'25 §4-§6) on the simulator, through `hexplan compare --json`.

Writes docs/sortinghat-results.md (tables) and SVG charts under docs/img/ (drawn by hand here, no
plotting library). Every planner is simulated under the same cost model.

  scripts/sortinghat-eval.py                 # the whole suite (long: run it on a Release build)
  scripts/sortinghat-eval.py --quick         # a subset that finishes in minutes
  scripts/sortinghat-eval.py --hexplan build/release/hexplan --submodel-time-limit 30

Sections: Fig. 9 (speedup over one GPU for single, critical path, EfficientMIP, DeepPlan and
SortingHat, OOM marked as the paper does), Fig. 11 (SortingHat's own estimate against the
simulator), Fig. 12 (q / nDom / MILP time sweep), Fig. 13 (ablations), Fig. 14 (warm parameters
0-100%), and the p4d-24xlarge projection of §6. Python 3 standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from xml.sax.saxutils import escape

MODELS = ["gpt2-large", "gpt2-xl", "openllama-3b", "openllama-7b"]
SHAPES = [(1, 32), (1, 1024), (4, 128), (32, 64)]
CLUSTERS = ["sortinghat-v100", "sortinghat-v100-hetero", "sortinghat-a6000"]
ALGOS = ["single", "critical-path", "efficientmip", "deepplan", "sortinghat"]
LABELS = {"single": "Single GPU", "critical-path": "Critical path", "efficientmip": "EfficientMIP",
          "deepplan": "DeepPlan", "sortinghat": "SortingHat"}
COLORS = {"single": "#9e9e9e", "critical-path": "#c7c7c7", "efficientmip": "#f28e2b",
          "deepplan": "#4e79a7", "sortinghat": "#e15759"}


LOG_LOCK = threading.Lock()


def run_json(cmd, log):
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    with LOG_LOCK:
        log.write("$ " + " ".join(cmd) + "\n")
        log.write(proc.stderr)
        log.write("(%.1f s, exit %d)\n" % (time.time() - start, proc.returncode))
        log.flush()
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
    return json.loads(proc.stdout)


class CompareRunner:
    """Runs the report twice: the first pass only collects the `compare` commands, which then run
    `--jobs` at a time (each planner is single-threaded); the second pass writes the report from
    their results, in the report's own order."""

    def __init__(self):
        self.collecting = True
        self.pending = []
        self.results = {}

    def run(self, cmd, log):
        key = tuple(cmd)
        if self.collecting:
            if key not in self.pending:
                self.pending.append(key)
            return {}
        if key not in self.results:
            self.results[key] = run_json(cmd, log)
        return self.results[key]

    def run_pending(self, jobs, log):
        # Longest first: the 30 s-per-submodel sweeps, then SortingHat/EfficientMIP comparisons.
        def weight(key):
            return (-float(key[key.index("--submodel-time-limit") + 1])
                    if "--submodel-time-limit" in key else 0.0, -len(key))
        order = sorted(self.pending, key=weight)
        done = [0]

        def one(key):
            result = run_json(list(key), log)
            with LOG_LOCK:
                done[0] += 1
                print("[%d/%d] %s" % (done[0], len(order), " ".join(key[1:6])), file=sys.stderr)
            return key, result

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for key, result in pool.map(one, order):
                self.results[key] = result
        self.collecting = False


RUNNER = CompareRunner()


def compare(args, log, model, shape, cluster, algos, extra=()):
    cmd = [args.hexplan, "compare", model, "--batch", str(shape[0]), "--seq", str(shape[1]),
           "--cluster", cluster, "--algos", ",".join(algos), "--json", "--dtype", args.dtype]
    if "--time-limit" not in extra:
        cmd += ["--time-limit", str(args.time_limit)]
    # --submodel-time-limit is SortingHat's own option: only where it runs.
    if (args.submodel_time_limit > 0 and "--submodel-time-limit" not in extra
            and ("sortinghat" in algos or "auto" in algos)):
        cmd += ["--submodel-time-limit", str(args.submodel_time_limit)]
    cmd += list(extra)
    out = RUNNER.run(cmd, log)
    rows = {}
    for r in out.get("results", []):
        rows[r["algo"]] = r
    return out, rows


def is_oom(row):
    if row is None:
        return False
    text = (row.get("error") or "") + (row.get("detail") or "")
    return row.get("status") == "error" and ("memory" in text or "hold" in text or "fit" in text)


def cell(row, single_ms):
    if row is None:
        return "-"
    if row.get("status") == "error":
        return "OOM" if is_oom(row) else "error"
    if not single_ms:
        return "%.2f ms" % row["latency_ms"]
    return "%.2fx" % (single_ms / row["latency_ms"])


def speedup(row, single_ms):
    if row is None or row.get("status") == "error" or not single_ms:
        return None
    return single_ms / row["latency_ms"]


# ---------------------------------------------------------------- SVG, by hand
def bar_chart(path, title, groups, series, values, ylabel, hline=None):
    """groups: x labels; series: names; values[g][s]: number or None (drawn as 'OOM')."""
    gw, bw, left, top, height = 16 + 12 * len(series), 12, 60, 40, 220
    width = left + gw * len(groups) + 170
    vmax = max([v for row in values for v in row if v is not None] + [1.0]) * 1.1
    y = lambda v: top + height - v / vmax * height
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif"'
           ' font-size="10">' % (width, top + height + 110),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="13">%s</text>' % (left, escape(title)),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, top, left, top + height),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (
               left, top + height, left + gw * len(groups), top + height)]
    steps = 5
    for i in range(steps + 1):
        v = vmax * i / steps
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.2f</text>' % (left - 4, y(v) + 3, v))
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (
            left, y(v), left + gw * len(groups), y(v)))
    if hline is not None:
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black" stroke-dasharray="4"/>'
                   % (left, y(hline), left + gw * len(groups), y(hline)))
    out.append('<text transform="translate(14,%d) rotate(-90)" text-anchor="middle">%s</text>' % (
        top + height // 2, escape(ylabel)))
    for gi, g in enumerate(groups):
        x0 = left + gi * gw + 8
        for si, s in enumerate(series):
            v = values[gi][si]
            x = x0 + si * bw
            if v is None:
                out.append('<text x="%.1f" y="%d" font-size="7" transform="rotate(-90 %.1f %d)">'
                           'OOM</text>' % (x + 8, top + height - 2, x + 8, top + height - 2))
                continue
            out.append('<rect x="%.1f" y="%.1f" width="%d" height="%.1f" fill="%s"/>' % (
                x, y(v), bw - 2, top + height - y(v), COLORS.get(s, "#888")))
        out.append('<text x="%.1f" y="%d" transform="rotate(45 %.1f %d)">%s</text>' % (
            x0, top + height + 12, x0, top + height + 12, escape(g)))
    for si, s in enumerate(series):
        ly = top + 14 * si
        lx = left + gw * len(groups) + 12
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (
            lx, ly, COLORS.get(s, "#888")))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 14, ly + 9, escape(LABELS.get(s, s))))
    out.append("</svg>")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def scatter(path, title, points):
    """points: (estimate_ms, simulated_ms, label)."""
    size, left, top = 300, 60, 40
    vmax = max([max(a, b) for a, b, _ in points] + [1.0]) * 1.1
    sx = lambda v: left + v / vmax * size
    sy = lambda v: top + size - v / vmax * size
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif"'
           ' font-size="10">' % (left + size + 40, top + size + 50),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="13">%s</text>' % (left, escape(title)),
           '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (
               left, top, size, size),
           '<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="4"/>' % (
               sx(0), sy(0), sx(vmax), sy(vmax)),
           '<text x="%d" y="%d" text-anchor="middle">MILP estimate (ms)</text>' % (
               left + size // 2, top + size + 35),
           '<text transform="translate(14,%d) rotate(-90)" text-anchor="middle">simulated (ms)'
           '</text>' % (top + size // 2)]
    for i in range(6):
        v = vmax * i / 5
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%.0f</text>' % (
            sx(v), top + size + 14, v))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.0f</text>' % (left - 4, sy(v) + 3, v))
    for a, b, label in points:
        out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="#e15759"><title>%s</title></circle>' % (
            sx(a), sy(b), escape(label)))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


# ---------------------------------------------------------------- sections
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hexplan", default="build/release/hexplan")
    ap.add_argument("--out", default="docs/sortinghat-results.md")
    ap.add_argument("--img", default="docs/img")
    ap.add_argument("--time-limit", type=float, default=120.0, help="per planner and case")
    ap.add_argument("--submodel-time-limit", type=float, default=0.0,
                    help="SortingHat MILP limit per submodel (0: split --time-limit)")
    ap.add_argument("--dtype", default="fp32")
    ap.add_argument("--quick", action="store_true", help="a subset: minutes instead of hours")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: "
                    "fig9,fig12,fig13,fig14,p4d")
    ap.add_argument("--jobs", type=int, default=2,
                    help="comparisons run at once (each planner uses one core)")
    ap.add_argument("--long-cases", type=int, default=1,
                    help="Fig. 12: how many sweep cases also run 30 s per submodel (each takes "
                    "up to 30 s x its submodels, about 40 min for GPT-2 large)")
    args = ap.parse_args()
    log_path = os.path.join(tempfile.gettempdir(), "sortinghat-eval.log")
    log = open(log_path, "w")
    print("logging the commands to " + log_path, file=sys.stderr)
    report(args, log)  # collects the comparisons
    RUNNER.run_pending(args.jobs, log)
    md = report(args, log)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    tmp_out = args.out + ".tmp"
    with open(tmp_out, "w") as f:
        f.write("\n".join(md) + "\n")
    os.replace(tmp_out, args.out)
    print("wrote " + args.out, file=sys.stderr)


def report(args, log):
    skip = set(filter(None, args.skip.split(",")))
    models, shapes, clusters = MODELS, SHAPES, CLUSTERS
    if args.quick:
        models, shapes = ["gpt2-large", "gpt2-xl"], [(1, 32), (4, 128)]
    md = ["# SortingHat evaluation (simulated)", "",
          "Written by `scripts/sortinghat-eval.py%s` with `%s` (dtype %s, time limit %g s per "
          "planner%s). Every planner's plan is run by the same simulator under the same cost "
          "model; speedups are over `single` (one GPU, weights loaded in layer order, overlapped "
          "with compute). See docs/placement.md (SortingHat) for the method and where our "
          "numbers differ from the paper's." % (
              " --quick" if args.quick else "", args.hexplan, args.dtype, args.time_limit,
              ", %g s per SortingHat submodel" % args.submodel_time_limit
              if args.submodel_time_limit > 0 else ""), ""]

    fig11 = []
    if "fig9" not in skip:
        md += ["## Fig. 9: speedup over one GPU", "",
               "OOM: the planner found no plan that fits the GPUs' memory (the paper's OOM).", ""]
        all_speed = {a: [] for a in ALGOS}
        for cluster in clusters:
            algos = [a for a in ALGOS]
            md += ["### " + cluster, "",
                   "| model (batch, seq) | single ms | " + " | ".join(LABELS[a] for a in algos)
                   + " | SortingHat kept |", "|" + "---|" * (len(algos) + 3)]
            groups, values = [], []
            for model in models:
                for shape in shapes:
                    out, rows = compare(args, log, model, shape, cluster, algos)
                    single_ms = out.get("single_latency_ms")
                    sh = rows.get("sortinghat")
                    kept = "-"
                    if sh and sh.get("status") != "error":
                        kept = "MILP" if "kept the warm start" not in sh.get("detail", "") else \
                            sh["detail"].split("kept the warm start '")[1].split("'")[0]
                        est = sh.get("model_objective_ms")
                        if est:
                            fig11.append((cluster, model, shape, est, sh["latency_ms"]))
                    md.append("| %s (%d, %d) | %s | %s | %s |" % (
                        model, shape[0], shape[1], "%.2f" % single_ms if single_ms else "OOM",
                        " | ".join(cell(rows.get(a), single_ms) for a in algos), kept))
                    groups.append("%s (%d,%d)" % (model, shape[0], shape[1]))
                    values.append([speedup(rows.get(a), single_ms) for a in algos])
                    for a in algos:
                        s = speedup(rows.get(a), single_ms)
                        if s is not None:
                            all_speed[a].append((cluster, model, shape, s))
                    # SortingHat against DeepPlan and EfficientMIP on this case.
                    for other in ("deepplan", "efficientmip"):
                        a, b = speedup(sh, single_ms), speedup(rows.get(other), single_ms)
                        if a is not None and b is not None and a < b * (1 - 1e-9):
                            md.append("|   ↳ SortingHat slower than %s here | | | | | | | |" %
                                      LABELS[other])
            md.append("")
            svg = "sortinghat-fig9-%s.svg" % cluster
            bar_chart(os.path.join(args.img, svg), "Speedup over one GPU on " + cluster, groups,
                      algos, values, "speedup over single", hline=1.0)
            md += ["![Fig. 9 on %s](img/%s)" % (cluster, svg), ""]
        md += ["### Averages", "", "| planner | cases | average speedup | maximum |",
               "|---|---|---|---|"]
        for a in ALGOS:
            v = [s for _, _, _, s in all_speed[a]]
            if v:
                md.append("| %s | %d | %.2fx | %.2fx |" % (LABELS[a], len(v), sum(v) / len(v),
                                                         max(v)))
        md += ["", "Paper (real hardware): SortingHat 2.28x average / 2.96x maximum, DeepPlan "
               "1.93x / 2.14x, EfficientMIP 1.16x / 1.62x.", ""]

        md += ["## Fig. 11: SortingHat's estimate against the simulator", "",
               "| cluster | model (batch, seq) | MILP estimate ms | simulated ms | error |",
               "|---|---|---|---|---|"]
        errs = []
        for cluster, model, shape, est, sim in fig11:
            err = abs(est - sim) / sim
            errs.append(err)
            md.append("| %s | %s (%d, %d) | %.2f | %.2f | %.1f%% |" % (
                cluster, model, shape[0], shape[1], est, sim, 100 * err))
        if errs:
            md += ["", "Mean absolute error %.2f%% over %d cases (paper: 2.97%% on hardware)." % (
                100 * sum(errs) / len(errs), len(errs))]
            scatter(os.path.join(args.img, "sortinghat-fig11.svg"),
                    "SortingHat: MILP estimate vs simulated",
                    [(e, s, "%s %s (%d,%d)" % (c, m, sh[0], sh[1])) for c, m, sh, e, s in fig11])
            md += ["", "![Fig. 11](img/sortinghat-fig11.svg)"]
        md.append("")

    sweep_cases = [("gpt2-large", (4, 128)), ("openllama-3b", (1, 32))]
    sweep_clusters = ["sortinghat-v100", "sortinghat-a6000"]
    if args.quick:
        sweep_cases, sweep_clusters = [("gpt2", (4, 128))], ["sortinghat-v100"]
    if "fig12" not in skip:
        md += ["## Fig. 12: q, nDom and the MILP time limit", "",
               "| cluster | model (batch, seq) | setting | speedup | MILP estimate ms | "
               "planning s |", "|---|---|---|---|---|---|"]
        settings = [("q=6, nDom=1, 2 s", ["--q", "6", "--ndom", "1", "--submodel-time-limit", "2"]),
                    ("q=6, nDom=1, 30 s",
                     ["--q", "6", "--ndom", "1", "--submodel-time-limit", "30"]),
                    ("q=6, nDom=2, 2 s", ["--q", "6", "--ndom", "2", "--submodel-time-limit", "2"]),
                    ("q=12, nDom=1, 2 s",
                     ["--q", "12", "--ndom", "1", "--submodel-time-limit", "2"]),
                    ("q=2, nDom=1, 2 s", ["--q", "2", "--ndom", "1", "--submodel-time-limit", "2"])]
        if args.quick:
            settings = [("q=6, nDom=1, 0.5 s",
                         ["--q", "6", "--ndom", "1", "--submodel-time-limit", "0.5"])] + [
                s for s in settings if "30 s" not in s[0]]
        case_index = 0
        short_vs_long = []
        for cluster in sweep_clusters:
            for model, shape in sweep_cases:
                case_index += 1
                by_label = {}
                for label, extra in settings:
                    if "30 s" in label and case_index > args.long_cases:
                        continue
                    out, rows = compare(args, log, model, shape, cluster, ["sortinghat"],
                                        ["--time-limit", "100000"] + extra)
                    r = rows.get("sortinghat")
                    by_label[label] = r
                    single_ms = out.get("single_latency_ms")
                    md.append("| %s | %s (%d, %d) | %s | %s | %s | %s |" % (
                        cluster, model, shape[0], shape[1], label, cell(r, single_ms),
                        "%.2f" % r["model_objective_ms"] if r and "model_objective_ms" in r
                        else "-", "%.1f" % r["planning_time_s"] if r and "planning_time_s" in r
                        else "-"))
                short, long_ = by_label.get("q=6, nDom=1, 2 s"), by_label.get("q=6, nDom=1, 30 s")
                if short and long_ and "latency_ms" in short and "latency_ms" in long_:
                    short_vs_long.append((cluster, model, shape, short["latency_ms"],
                                          long_["latency_ms"]))
        md.append("")
        if short_vs_long:
            md += ["2 s against 30 s per submodel (the issue's target: within 5%):", "",
                   "| cluster | model (batch, seq) | 2 s ms | 30 s ms | 2 s slower by |",
                   "|---|---|---|---|---|"]
            for cluster, model, shape, a, b in short_vs_long:
                md.append("| %s | %s (%d, %d) | %.2f | %.2f | %+.2f%% |" % (
                    cluster, model, shape[0], shape[1], a, b, 100 * (a - b) / b))
            md.append("")

    if "fig13" not in skip:
        md += ["## Fig. 13: ablations", "",
               "no-contention: one parameter queue per GPU (no round-robin bus sharing); "
               "no-topology: GPU speeds and link speeds averaged in the MILP; independent: each "
               "submodel scheduled without the previous one's state (EfficientMIP-style). The "
               "ablations return their own merged plan (no fallback to a warm start).", "",
               "| cluster | model (batch, seq) | SortingHat | no-contention | no-topology | "
               "independent |", "|---|---|---|---|---|---|"]
        abl_cases = [("gpt2-large", (4, 128)), ("openllama-3b", (1, 1024))]
        if args.quick:
            abl_cases = [("gpt2", (4, 128))]
        for cluster in ["sortinghat-v100", "sortinghat-v100-hetero"]:
            for model, shape in abl_cases:
                cells = []
                for abl in ["", "no-contention", "no-topology", "independent"]:
                    extra = ["--ablation", abl] if abl else []
                    out, rows = compare(args, log, model, shape, cluster, ["sortinghat"], extra)
                    cells.append(cell(rows.get("sortinghat"), out.get("single_latency_ms")))
                md.append("| %s | %s (%d, %d) | %s |" % (cluster, model, shape[0], shape[1],
                                                         " | ".join(cells)))
        md.append("")

    if "fig14" not in skip and not RUNNER.collecting:
        md += ["## Fig. 14: warm parameters", "",
               "The same plan simulated with a fraction of its loaded parameters already resident "
               "(`hexplan simulate PLAN --warm F`), against one GPU with the same fraction.", "",
               "| model (batch, seq) | planner | 0% | 25% | 50% | 75% | 100% |",
               "|---|---|---|---|---|---|---|"]
        warm_models = ["gpt2-large"] if args.quick else ["gpt2-large", "openllama-7b"]
        tmp = tempfile.mkdtemp(prefix="sortinghat-eval-")
        for model in warm_models:
            shape = (4, 128)
            for algo in ["single", "sortinghat"]:
                plan_path = os.path.join(tmp, "%s-%s.json" % (model, algo))
                cmd = [args.hexplan, "place", model, "--batch", str(shape[0]), "--seq",
                       str(shape[1]), "--cluster", "sortinghat-v100", "--algo", algo,
                       "--dtype", args.dtype, "--time-limit", str(args.time_limit),
                       "-o", plan_path, "--json"]
                if args.submodel_time_limit > 0 and algo == "sortinghat":
                    cmd += ["--submodel-time-limit", str(args.submodel_time_limit)]
                placed = run_json(cmd, log)
                cells = []
                for frac in [0.0, 0.25, 0.5, 0.75, 1.0]:
                    if "error" in placed:
                        cells.append("OOM")
                        continue
                    sim = run_json([args.hexplan, "simulate", plan_path, "--warm", str(frac),
                                    "--json"], log)
                    lat = sim.get("latency_ms") or sim.get("makespan_ms")
                    cells.append("%.2f ms" % lat if lat else "error")
                md.append("| %s (%d, %d) | %s | %s |" % (model, shape[0], shape[1], LABELS[algo],
                                                         " | ".join(cells)))
        md.append("")

    if "p4d" not in skip:
        md += ["## §6: projection on p4d-24xlarge (8 x A100, NVSwitch, 4 PCIe buses)", "",
               "| model (batch, seq) | single ms | SortingHat ms | speedup | MILP estimate ms |",
               "|---|---|---|---|---|"]
        for model in (models if not args.quick else ["gpt2-xl"]):
            shape = (32, 64)
            out, rows = compare(args, log, model, shape, "p4d-24xlarge", ["single", "sortinghat"])
            single_ms = out.get("single_latency_ms")
            r = rows.get("sortinghat")
            md.append("| %s (%d, %d) | %s | %s | %s | %s |" % (
                model, shape[0], shape[1], "%.2f" % single_ms if single_ms else "OOM",
                "%.2f" % r["latency_ms"] if r and "latency_ms" in r else cell(r, None),
                cell(r, single_ms), "%.2f" % r["model_objective_ms"]
                if r and "model_objective_ms" in r else "-"))
        md += ["", "Paper: up to 3.7x predicted by the MILP over one A100.", ""]

    md += ["## Where these numbers differ from the paper's, and why", "",
           "- **Model parallelism is scarce in our graphs.** The zoo's GPT-2 and OpenLLaMA graphs "
           "compute all heads of a layer in one batched MatMul, so a layer is a chain with a few "
           "short side branches (Q/K/V reshapes, the gate/up projections of LLaMA's MLP). The "
           "paper's TVM graphs (its Fig. 1) have more independent operators. Our gains come "
           "mostly from data-transfer parallelism: loading weights over every PCIe bus at once "
           "(parallel transmission) while computing.",
           "- **Where the buses are decides the gain.** sortinghat-a6000 has one PCIe bus per GPU "
           "(three buses), sortinghat-v100 two buses shared by two GPUs each: load-bound shapes "
           "((1, 32)) approach 3x on the A6000 and 2x on the V100. DeepPlan relays only through "
           "NVLink neighbours of the GPU it runs on; on the A6000 only gpu1-gpu2 have NVLink, "
           "and in our runs it stays at 1x there.",
           "- **Critical path** is a bound that ignores every transfer (model parallelism alone, "
           "weights free): at (1, 32) the weights dominate, so it is far above any plan.",
           "- **SortingHat kept**: when a warm-start planner's plan simulates faster than the "
           "merged MILP plan, SortingHat returns it (column 'kept'); the MILP's plan is what "
           "'MILP' rows report, and Fig. 11 compares the MILP estimate with the simulation only "
           "for those.",
           "- **Simulated, not measured**: the simulator shares links max-min fairly and DHA reads "
           "contend with loads; the paper's 2.97% estimate error is on hardware. Our MILP and "
           "simulator share the cost model, so the estimate error mostly measures what the MILP "
           "leaves out (copy queues overlapping compute, bus sharing between DHA and loads).", ""]
    return md


if __name__ == "__main__":
    main()
