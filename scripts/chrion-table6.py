#!/usr/bin/env python3
"""Chrion's Table 6 on chrion-1080ti: the paper's latency reduction against ours, per variant.

  scripts/chrion-table6.py --hexplan build/release/hexplan [--calibration FILE ...]

For each of Table 6's 13 LSTM variants runs
`hexplan compare lstm --layers L --batch B --io I --seq S --cluster chrion-1080ti
--algos single,chrion --guard false --json` (Algorithm 2's own plan, as the paper ran it) and
prints a Markdown table: the paper's GPU-only and latency-optimal times and reduction, ours, and
whether ours is within 10 points of the paper's with its sign; then a line counting both.
`--calibration FILE` (repeatable) is passed on, for the sensitivity tables of docs/cost-model.md,
"Chrion on chrion-1080ti". About 30 s in a release build. Exit 0, or 2 when hexplan fails.
"""

import argparse
import json
import subprocess
import sys

# (name, flags over the baseline 12 layers / batch 8 / io 64 / 96 steps,
#  paper GPU-only ms, paper latency-optimal ms, paper reduction %) from Chrion's Table 6.
VARIANTS = [
    ("baseline", {}, 59.3, 52.0, 12.3),
    ("4 layers", {"layers": 4}, 20.5, 21.2, -3.2),
    ("8 layers", {"layers": 8}, 39.0, 36.8, 5.6),
    ("16 layers", {"layers": 16}, 78.1, 71.1, 8.9),
    ("batch 1", {"batch": 1}, 58.3, 48.2, 17.4),
    ("batch 2", {"batch": 2}, 59.1, 47.6, 19.4),
    ("batch 4", {"batch": 4}, 57.2, 55.7, 2.7),
    ("batch 16", {"batch": 16}, 58.2, 67.5, -16.0),
    ("io 32", {"io": 32}, 59.2, 52.4, 11.6),
    ("io 128", {"io": 128}, 58.6, 72.0, -22.9),
    ("seq 32", {"seq": 32}, 19.7, 18.8, 4.2),
    ("seq 64", {"seq": 64}, 39.2, 34.2, 12.7),
    ("seq 128", {"seq": 128}, 78.5, 82.1, -4.5),
]


def run_variant(hexplan, flags, extra):
    shape = {"layers": 12, "batch": 8, "io": 64, "seq": 96}
    shape.update(flags)
    cmd = [hexplan, "compare", "lstm"]
    for key, value in shape.items():
        cmd += [f"--{key}", str(value)]
    cmd += ["--cluster", "chrion-1080ti", "--algos", "single,chrion", "--guard", "false", "--json"]
    out = subprocess.run(cmd + extra, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(" ".join(cmd + extra) + ": " + out.stderr.strip())
    results = {r["algo"]: r["latency_ms"] for r in json.loads(out.stdout)["results"]}
    return results["single"], results["chrion"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hexplan", default="build/release/hexplan")
    ap.add_argument("--calibration", action="append", default=[])
    args = ap.parse_args()
    extra = [x for f in args.calibration for x in ("--calibration", f)]
    print("| variant | paper GPU-only ms | paper latency-optimal ms | paper reduction | "
          "ours GPU-only ms | ours Chrion k* ms | ours reduction | within 10 points, sign |")
    print("|---|---|---|---|---|---|---|---|")
    within = signs = 0
    for name, flags, p_gpu, p_opt, p_red in VARIANTS:
        try:
            single, chrion = run_variant(args.hexplan, flags, extra)
        except RuntimeError as e:
            print(f"chrion-table6: {e}", file=sys.stderr)
            return 2
        ours = 100.0 * (single - chrion) / single
        near, same = abs(ours - p_red) <= 10.0, (ours > 0) == (p_red > 0)
        within += near
        signs += same
        print(f"| {name} | {p_gpu:.1f} | {p_opt:.1f} | {p_red:+.1f} % | {single:.1f} | "
              f"{chrion:.1f} | {ours:+.1f} % | {'yes' if near else '**no**'}, "
              f"{'yes' if same else '**no**'} |")
    print(f"\n{within} of {len(VARIANTS)} within 10 points, {signs} of {len(VARIANTS)} with the "
          "paper's sign")
    return 0


if __name__ == "__main__":
    sys.exit(main())
