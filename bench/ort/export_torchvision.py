#!/usr/bin/python3
"""Exports torchvision classifiers to ONNX files with weights (opset 13, batch 1, 3x224x224).

Usage: /usr/bin/python3 bench/ort/export_torchvision.py OUT_DIR [MODEL ...]
(default models: mobilenet_v2 resnet50). Needs Debian's python3-torch and python3-torchvision;
weights are torchvision's random initialisation under a fixed seed (no download), which times the
same as trained weights. Exits 2 when torch is missing.
"""
import os
import sys


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import torch
        import torchvision
    except ImportError as e:
        print(f"export_torchvision: {e} (install python3-torch python3-torchvision)", file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name in sys.argv[2:] or ["mobilenet_v2", "resnet50"]:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)().eval()
        x = torch.randn(1, 3, 224, 224)
        path = os.path.join(out_dir, f"{name}.onnx")
        torch.onnx.export(model, x, path, opset_version=13, input_names=["input"],
                          output_names=["logits"], do_constant_folding=True)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
