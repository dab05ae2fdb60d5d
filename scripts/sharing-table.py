#!/usr/bin/env python3
"""Prints docs/sharing.md's results table: every sharing algorithm on ParvaGPU's scenarios.

  scripts/sharing-table.py [--hexplan hexplan] [--gpu a100-80gb] [--slo-factor 0.5]

One `hexplan share --scenario SK --compare --json` per column (S1..S6, then S5 scaled ten times);
a cell is "GPUs (GPCs, external fragmentation)", `*` when the plan is proven minimal, and
"n/a (N unsupported)" when the algorithm cannot serve N services. Scheduling times are left out:
they are wall-clock figures (`--compare` prints them).
"""

import argparse
import json
import subprocess
import sys

COLUMNS = [("S1", []), ("S2", []), ("S3", []), ("S4", []), ("S5", []), ("S6", []),
           ("10x S5", ["--scale", "10"])]


def run_compare(hexplan, scenario, extra, gpu, slo_factor):
    scenario_name = scenario.split()[-1]
    cmd = [hexplan, "share", "--scenario", scenario_name, *extra, "--gpu", gpu,
           "--slo-factor", str(slo_factor), "--compare", "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"sharing-table: {' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
    return {row["algo"]: row for row in json.loads(done.stdout)}


def cell(row):
    if row["unsupported"] > 0:
        return f"n/a ({row['unsupported']} unsupported)"
    text = f"{row['gpus']} ({row['gpcs']} GPCs, frag {row['external_fragmentation']:.2f})"
    return text + (" *" if row["proven_optimal"] else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hexplan", default="hexplan")
    parser.add_argument("--gpu", default="a100-80gb")
    parser.add_argument("--slo-factor", type=float, default=0.5)
    args = parser.parse_args()
    results = [run_compare(args.hexplan, name, extra, args.gpu, args.slo_factor)
               for name, extra in COLUMNS]
    print("| algorithm | " + " | ".join(name for name, _ in COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for algo in results[0]:
        print(f"| {algo} | " + " | ".join(cell(r[algo]) for r in results) + " |")


if __name__ == "__main__":
    main()
