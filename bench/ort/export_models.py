#!/usr/bin/python3
"""Exports the benchmark models to ONNX files with weights (bench/ort/compare.py times them).

Usage: /usr/bin/python3 bench/ort/export_models.py OUT_DIR [MODEL ...]
Models (default: all): mobilenet_v2 and resnet50 (torchvision, batch 1, 3x224x224, opset 13),
gpt_small (2 decoder layers, d 128, 4 heads, vocabulary 1000, batch 1, sequence 32, opset 17) and
lstm (nn.LSTM: 4 layers, input and hidden 64, sequence 24, batch 8, opset 13) and lstm_cells
(Chrion's LSTM as PyTorch writes it: the same 4 x 24 cells unrolled from nn.LSTMCell, Gemm, Add,
Split, Sigmoid, Tanh and Mul per cell; bench/ort/lstm_cells.py). The zoo's own exports with seeded
weights come from hexplan itself: `hexplan export lstm --layers 4 --io 64 --seq 24 --batch 8
--weights random -o zoo_lstm.onnx` (docs/runtime.md). Needs Debian's
python3-torch and python3-torchvision; weights are PyTorch's random initialisation under a fixed
seed (no download), which times the same as trained weights. Exits 2 when torch is missing.
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
    for name in sys.argv[2:] or ["mobilenet_v2", "resnet50", "gpt_small", "lstm", "lstm_cells"]:
        path = os.path.join(out_dir, f"{name}.onnx")
        if name == "lstm_cells":
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import lstm_cells
            lstm_cells.export_cells(torch, 8, 64, path)
            print(path)
            continue
        torch.manual_seed(0)
        model, x, opset = make_model(torch, torchvision, name)
        torch.onnx.export(model.eval(), x, path, opset_version=opset, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
        print(path)
    return 0


def make_model(torch, torchvision, name):
    nn = torch.nn
    if name == "lstm":
        class Lstm(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(64, 64, num_layers=4)

            def forward(self, x):
                return self.lstm(x)[0]
        return Lstm(), torch.randn(24, 8, 64), 13
    if name == "gpt_small":
        return Gpt(torch), torch.randint(0, 1000, (1, 32)), 17
    return getattr(torchvision.models, name)(), torch.randn(1, 3, 224, 224), 13


def Gpt(torch, layers=2, d=128, heads=4, vocab=1000, seq=32):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.register_buffer("mask", torch.triu(torch.full((seq, seq), -1e9), 1))

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = [z.reshape(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v)]
            att = torch.softmax(q @ k.transpose(2, 3) / (d // heads) ** 0.5 + self.mask, dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
            return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.randn(1, seq, d))
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

        def forward(self, ids):
            return self.head(self.ln(self.blocks(self.tok(ids) + self.pos)))
    return Model()


if __name__ == "__main__":
    sys.exit(main())
