#!/usr/bin/env python3
"""The calibrated model's sensitivity to the parameters the data cannot tell (docs/cost-model.md,
"Sensitivity"): ResNet-50 at batch 1 on sortinghat-v100, `single` and `deepplan`, with one parameter
of data/calibration/V100-SXM2-32GB.yaml at a low, nominal and high value (through --calibration).
Prints a Markdown table. Usage:
    scripts/calibration-sensitivity.py --hexplan build/release/hexplan
"""
import argparse
import json
import os
import re
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = os.path.join(ROOT, "data", "calibration", "V100-SXM2-32GB.yaml")
COPIES = ["h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable", "dha_mapped", "peer"]

# (parameter, where in the file, [(value, why)]); the nominal value is the file's.
CASES = [
    ("h2d_pinned.fraction", ("copy", "h2d_pinned", "fraction"),
     [(0.648, "Azure V100 bandwidthTest 10.2 GB/s (rapidsai/rmm#451)"),
      (0.832, "RTX 2080 Ti bandwidthTest 13.1 GB/s (usadellab/Helixer#22)"),
      (0.349, "weights in pageable memory: 5.5 GB/s (rapidsai/dask-cuda#98)")]),
    ("dha_mapped.fraction", ("copy", "dha_mapped", "fraction"),
     [(0.5, "assumed low"), (0.9, "assumed high")]),
    ("copy fixed_s (every kind)", ("copy", "*", "fixed_s"),
     [(0.0, "none"), (2e-05, "assumed high")]),
    ("kernel_launch_s", ("top", None, "kernel_launch_s"),
     [(5e-06, "bare cudaLaunchKernel"), (2e-05, "PyTorch eager round trip on V100 (Nsight guide)")]),
    ("shared_bus_efficiency", ("copy", None, "shared_bus_efficiency"),
     [(0.8, "assumed low"), (0.9, "assumed")]),
]


def set_value(text, where, value):
    section, key, field = where
    lines = text.split("\n")
    in_copy, in_key = False, False
    for i, line in enumerate(lines):
        if re.match(r"^\S", line):
            in_copy = line.startswith("copy:")
            in_key = False
        if section == "top" and line.startswith(field + ":"):
            lines[i] = f"{field}: {value}"
        if section != "copy" or not in_copy:
            continue
        m = re.match(r"^  (\w+):", line)
        if m:
            in_key = key == "*" and m.group(1) in COPIES or m.group(1) == key
            if key is None and m.group(1) == field:
                lines[i] = f"  {field}: {value}"
        elif in_key and re.match(r"^    " + field + ":", line):
            lines[i] = f"    {field}: {value}"
    return "\n".join(lines)


def latency(hexplan, algo, calibration):
    cmd = [hexplan, "place", "resnet50", "--cluster", "sortinghat-v100", "--algo", algo, "--json"]
    if calibration:
        cmd += ["--calibration", calibration]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]


def row(hexplan, name, value, why, path):
    single = latency(hexplan, "single", path)
    deepplan = latency(hexplan, "deepplan", path)
    return f"| {name} | {value} | {why} | {single:.2f} | {deepplan:.2f} |"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hexplan", default=os.path.join(ROOT, "build", "release", "hexplan"))
    args = ap.parse_args()
    base = open(BASE).read()
    print("| parameter | value | source | single ms | deepplan ms |")
    print("| --- | --- | --- | --- | --- |")
    print(row(args.hexplan, "(all nominal)", "", "data/calibration/V100-SXM2-32GB.yaml", None))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "V100-SXM2-32GB.yaml")
        for name, where, values in CASES:
            for value, why in values:
                open(path, "w").write(set_value(base, where, value))
                print(row(args.hexplan, name, value, why, path))
    roofline = [latency_roofline(args.hexplan, a) for a in ("single", "deepplan")]
    print(f"| --cost-model roofline | | the model before issue 21 | {roofline[0]:.2f} | "
          f"{roofline[1]:.2f} |")


def latency_roofline(hexplan, algo):
    cmd = [hexplan, "place", "resnet50", "--cluster", "sortinghat-v100", "--algo", algo, "--json",
           "--cost-model", "roofline"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]


if __name__ == "__main__":
    main()
