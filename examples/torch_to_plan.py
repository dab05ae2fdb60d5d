#!/usr/bin/env python3
"""From a PyTorch model to a hexplan plan (docs/python.md).

Exports a torchvision model (default resnet18) with torch.onnx.export into a BytesIO, plans it on a
cluster preset, simulates the plan (an SVG timeline), then plans it on this machine's CPU and runs
it for real on the same input as PyTorch, comparing the outputs. Without PyTorch (Debian
python3-torch, python3-torchvision) it plans the zoo's resnet50 instead and runs on random input.

    python3 examples/torch_to_plan.py [--model resnet18] [--cluster sortinghat-v100]
                                      [--algo heft] [--svg timeline.svg]
"""

import argparse
import io
import sys

import numpy as np

import hexplan


def export_torchvision(name: str):
    """(ONNX bytes, input array, PyTorch's output) for torchvision model `name`; None without
    PyTorch."""
    try:
        import torch
        import torchvision
    except ImportError:
        return None
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()  # random weights, no download
    x = torch.randn(1, 3, 224, 224)
    buffer = io.BytesIO()
    torch.onnx.export(model, x, buffer, opset_version=13, input_names=["input"],
                      output_names=["logits"])
    with torch.no_grad():
        expected = model(x).numpy()
    return buffer.getvalue(), x.numpy(), expected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18", help="a torchvision.models name")
    parser.add_argument("--cluster", default="sortinghat-v100", help="a cluster preset or file")
    parser.add_argument("--algo", default="heft", help="the planner (hexplan.planners())")
    parser.add_argument("--svg", default="timeline.svg", help="where to write the timeline")
    args = parser.parse_args()

    exported = export_torchvision(args.model)
    if exported is None:
        print("PyTorch is not installed: planning the zoo's resnet50 instead")
        model, inputs, expected = "resnet50", None, None
    else:
        model, x, expected = exported
        inputs = {"input": x}
        print(f"exported torchvision {args.model}: {len(model) / 1e6:.1f} MB of ONNX")

    plan = hexplan.place(model, args.cluster, algo=args.algo)
    print(f"plan      {plan.algo} ({plan.status}) on {args.cluster}: {plan.latency_ms:.3f} ms "
          f"simulated, lower bound {plan.lower_bound_ms:.3f} ms")
    for device in plan.devices:
        ops = sum(1 for d in plan.operators.values() if d == device["name"])
        print(f"  {device['name']:8} {ops:4} operators, compute {device['compute_ms']:.3f} ms")

    timeline = hexplan.simulate(plan, svg=args.svg)
    print(f"simulated {timeline['latency_ms']:.3f} ms; timeline in {args.svg}")

    # A measured run needs a cluster of this machine's CPU core groups.
    cpu_plan = hexplan.place(model, "local-cpu", algo="heft")
    measured = hexplan.run(cpu_plan, inputs, repeat=3)
    (name, output), = measured.outputs.items()
    print(f"run       local-cpu: median {measured['latency_ms_median']:.1f} ms measured, "
          f"{cpu_plan.latency_ms:.1f} ms simulated; output {name} {list(output.shape)}")
    if expected is not None:
        print(f"          max |hexplan - PyTorch| = {np.abs(output - expected).max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
