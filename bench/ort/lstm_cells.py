#!/usr/bin/python3
"""Measures ONNX Runtime's CPU cost of small LSTM cells (the Xeon side of chrion-1080ti).

Usage: /usr/bin/python3 bench/ort/lstm_cells.py [--work /tmp/hx-ort] [--repeat 100] [--rounds 3]

Exports an unrolled nn.LSTMCell stack (4 layers x 24 steps, as torch.onnx writes Chrion's cells:
Gemm, Add, Split, Sigmoid, Tanh, Mul) at batch 1, 2, 4, 8, 16 (io 64) and io 32, 128 (batch 8),
times each with ONNX Runtime's CPU provider (npm onnxruntime-node, bench/ort/ort_time.js: one
intra-op thread, sequential executor, all graph optimisations) on core 0 and fits the minimum time
per cell to

    t_cell = a + e * (batch * io) + flops_cell / r        flops_cell = 16 * batch * io^2

a: the cell's fixed cost (per node: a / nodes per cell), e: its elementwise work, r: the small-GEMM
rate of one core. Prints each point, the fit and its residuals. docs/cost-model.md, "Chrion on
chrion-1080ti", uses r (scaled to the Xeon) and a (a lower end for the per-op dispatch). Run it at
high priority (nice -n -15) on an otherwise quiet machine; it takes about a minute. Needs Debian's
python3-torch and python3-numpy, node and the npm package (installed into --work when missing, as
bench/ort/compare.py does). Exits 2 when torch or node is missing.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

LAYERS, STEPS = 4, 24
POINTS = [(1, 64), (2, 64), (4, 64), (8, 64), (16, 64), (8, 32), (8, 128)]


def export_cells(torch, batch, io, path):
    nn = torch.nn

    class Unrolled(nn.Module):
        def __init__(self):
            super().__init__()
            self.cells = nn.ModuleList([nn.LSTMCell(io, io) for _ in range(LAYERS)])

        def forward(self, x):
            h = [torch.zeros(batch, io) for _ in range(LAYERS)]
            c = [torch.zeros(batch, io) for _ in range(LAYERS)]
            outs = []
            for t in range(STEPS):
                inp = x[t]
                for layer in range(LAYERS):
                    h[layer], c[layer] = self.cells[layer](inp, (h[layer], c[layer]))
                    inp = h[layer]
                outs.append(inp)
            return torch.stack(outs)

    torch.manual_seed(0)
    torch.onnx.export(Unrolled().eval(), torch.randn(STEPS, batch, io), path, opset_version=13,
                      input_names=["input"], output_names=["output"], do_constant_folding=True)


def min_ms(work, model, repeat, rounds):
    # node resolves onnxruntime-node from the script's folder: run a copy inside --work.
    script = os.path.join(work, "ort_time.js")
    shutil.copyfile(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_time.js"), script)
    best = float("inf")
    for _ in range(rounds):
        out = subprocess.run(["taskset", "-c", "0", "node", script, model, "1", "20", str(repeat)],
                             cwd=work, check=True, capture_output=True, text=True).stdout
        best = min(best, min(json.loads(out)["runs_ms"]))
    return best


def fit(rows):
    import numpy as np
    a = np.array([[1.0, b * io, 16.0 * b * io * io] for b, io, _ in rows])
    y = np.array([t for _, _, t in rows])
    x, *_ = np.linalg.lstsq(a, y, rcond=None)
    return x, 100.0 * (a @ x - y) / y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/hx-ort")
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"lstm_cells: {e} (install python3-torch)", file=sys.stderr)
        return 2
    if shutil.which("node") is None:
        print("lstm_cells: node not found (install nodejs)", file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.join(args.work, "node_modules", "onnxruntime-node")):
        os.makedirs(args.work, exist_ok=True)
        subprocess.run(["npm", "install", "--ignore-scripts", "onnxruntime-node"], cwd=args.work,
                       check=True, stdout=subprocess.DEVNULL)
    cells = LAYERS * STEPS
    rows = []
    for batch, io in POINTS:
        path = os.path.join(args.work, f"lstm_cells_b{batch}_io{io}.onnx")
        export_cells(torch, batch, io, path)
        us = 1e3 * min_ms(args.work, path, args.repeat, args.rounds) / cells
        rows.append((batch, io, us))
        print(f"batch {batch:2d} io {io:3d}: {us:6.2f} us per cell "
              f"({16 * batch * io * io / 1e3:.0f} kFLOP of GEMM)")
    x, resid = fit(rows)
    print(f"fit: fixed {x[0]:.2f} us per cell, elementwise {1e3 * x[1]:.2f} ns per batch*io, "
          f"GEMM {1e-3 / x[2]:.1f} GFLOP/s (one core)")
    print("residuals %: " + " ".join(f"{r:+.1f}" for r in resid))
    return 0


if __name__ == "__main__":
    sys.exit(main())
