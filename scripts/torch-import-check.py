#!/usr/bin/env python3
"""Exports PyTorch models to ONNX and checks that hexplan imports and runs them like PyTorch.

For every model: torch.onnx.export (opset 17, random weights from --seed), `hexplan place MODEL
--cluster local-cpu --algo single`, `hexplan run` on the same input, and the largest difference to
PyTorch's output relative to the output's largest magnitude. Prints a Markdown table and exits 1
when a model fails to import, fails to run, or differs by more than --tolerance.

The models: one torchvision classification model per architecture family (--all: every one
torchvision lists; several are gigabytes), and GPT-2 and BERT written the way Hugging Face's
transformers writes them (Conv1D projections, a causal mask buffer applied with torch.where, an
additive attention mask from finfo.min, position ids from arange, tanh GELU), since transformers
itself is not a Debian package. Needs python3-torch and python3-torchvision (not part of make test).

  python3 scripts/torch-import-check.py --hexplan build/release/hexplan [--models a,b] [--all]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

FAMILIES = [
    "alexnet", "convnext_tiny", "densenet121", "efficientnet_b0", "efficientnet_v2_s",
    "googlenet", "inception_v3", "maxvit_t", "mnasnet0_5", "mobilenet_v2", "mobilenet_v3_small",
    "regnet_x_400mf", "regnet_y_400mf", "resnet18", "resnext50_32x4d", "shufflenet_v2_x0_5",
    "squeezenet1_0", "swin_t", "swin_v2_t", "vgg11_bn", "vit_b_32", "wide_resnet50_2",
]
TRANSFORMERS = ["hf_gpt2", "hf_bert"]


def hf_style_models(torch):
    nn = torch.nn

    class Conv1D(nn.Module):  # transformers.pytorch_utils.Conv1D: x @ W + b, W stored [in, out]
        def __init__(self, nf, nx):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
            self.bias = nn.Parameter(torch.zeros(nf))

        def forward(self, x):
            shape = x.size()[:-1] + (self.weight.size(-1),)
            x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
            return x.view(shape)

    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))

    class GPT2Attention(nn.Module):
        def __init__(self, d, heads, positions):
            super().__init__()
            self.heads, self.head_dim = heads, d // heads
            self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool))
                                 .view(1, 1, positions, positions))
            self.c_attn, self.c_proj = Conv1D(3 * d, d), Conv1D(d, d)

        def split(self, x):
            return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

        def forward(self, x, attention_mask):
            q, k, v = self.c_attn(x).split(x.size(-1), dim=2)
            q, k, v = self.split(q), self.split(k), self.split(v)
            w = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5)
            qlen, klen = q.size(-2), k.size(-2)
            causal = self.bias[:, :, klen - qlen:klen, :klen]
            w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min))
            w = nn.functional.softmax(w + attention_mask, dim=-1)
            a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
            return self.c_proj(a.view(a.size()[:-2] + (a.size(-2) * a.size(-1),)))

    class GPT2Block(nn.Module):
        def __init__(self, d, heads, positions):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = GPT2Attention(d, heads, positions)
            self.c_fc, self.c_proj = Conv1D(4 * d, d), Conv1D(d, 4 * d)

        def forward(self, x, mask):
            x = x + self.attn(self.ln_1(x), mask)
            return x + self.c_proj(gelu_new(self.c_fc(self.ln_2(x))))

    class GPT2(nn.Module):
        def __init__(self, vocab=1000, d=128, heads=4, layers=2, positions=64):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(positions, d)
            self.h = nn.ModuleList([GPT2Block(d, heads, positions) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)

        def forward(self, input_ids, attention_mask):
            pos = torch.arange(0, input_ids.size(-1), dtype=torch.long).unsqueeze(0)
            mask = attention_mask[:, None, None, :].to(torch.float32)
            mask = (1.0 - mask) * torch.finfo(torch.float32).min
            x = self.wte(input_ids) + self.wpe(pos)
            for block in self.h:
                x = block(x, mask)
            return torch.matmul(self.ln_f(x), self.wte.weight.t())

    class BertLayer(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads, self.head_dim = heads, d // heads
            self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.out, self.ln1 = nn.Linear(d, d), nn.LayerNorm(d, eps=1e-12)
            self.inter, self.out2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.ln2 = nn.LayerNorm(d, eps=1e-12)

        def split(self, x):
            return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

        def forward(self, x, mask):
            q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
            s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
            c = torch.matmul(nn.functional.softmax(s, dim=-1), v).permute(0, 2, 1, 3).contiguous()
            c = c.view(c.size()[:-2] + (self.heads * self.head_dim,))
            x = self.ln1(self.out(c) + x)
            return self.ln2(self.out2(nn.functional.gelu(self.inter(x))) + x)

    class Bert(nn.Module):
        def __init__(self, vocab=1000, d=128, heads=4, layers=2, positions=64):
            super().__init__()
            self.word, self.position = nn.Embedding(vocab, d), nn.Embedding(positions, d)
            self.token_type = nn.Embedding(2, d)
            self.ln = nn.LayerNorm(d, eps=1e-12)
            self.layers = nn.ModuleList([BertLayer(d, heads) for _ in range(layers)])
            self.pooler = nn.Linear(d, d)

        def forward(self, input_ids, attention_mask):
            pos = torch.arange(input_ids.size(1), dtype=torch.long).unsqueeze(0).expand_as(input_ids)
            types = torch.zeros_like(input_ids)
            x = self.ln(self.word(input_ids) + self.position(pos) + self.token_type(types))
            mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
            for layer in self.layers:
                x = layer(x, mask)
            return torch.tanh(self.pooler(x[:, 0]))

    return {"hf_gpt2": GPT2, "hf_bert": Bert}


def export(torch, torchvision, name, folder):
    """Exports `name`; returns (onnx path, {input name: array}, reference output)."""
    import numpy as np
    if name in TRANSFORMERS:
        model = hf_style_models(torch)[name]().eval()
        ids = torch.randint(0, 1000, (2, 16))
        mask = torch.ones(2, 16, dtype=torch.long)
        mask[1, 12:] = 0
        args, names = (ids, mask), ["input_ids", "attention_mask"]
    else:
        model = getattr(torchvision.models, name)(weights=None).eval()
        with torch.no_grad():  # zero-initialised tensors (ViT's head) would hide wrong results
            for param in model.parameters():
                if param.abs().max() == 0:
                    param.normal_(0, 0.02)
        size = 299 if name == "inception_v3" else 224
        args, names = (torch.randn(1, 3, size, size),), ["x"]
    path = os.path.join(folder, name + ".onnx")
    torch.onnx.export(model, args, path, opset_version=17, input_names=names, output_names=["y"])
    with torch.no_grad():
        ref = model(*args)
    if isinstance(ref, tuple):
        ref = ref[0]
    if hasattr(ref, "logits"):
        ref = ref.logits
    return path, {n: a.numpy() for n, a in zip(names, args)}, np.asarray(ref.numpy())


def run_hexplan(hexplan, path, inputs, folder):
    """Returns (error text or None, output array or None)."""
    import numpy as np
    plan = path + ".plan.json"
    r = subprocess.run([hexplan, "place", path, "--cluster", "local-cpu", "--algo", "single",
                        "-o", plan], capture_output=True, text=True)
    if r.returncode != 0:
        return "import: " + (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1], None
    args = [hexplan, "run", path, "--plan", plan, "--output", path + ".out.npy"]
    for name, array in inputs.items():
        f = os.path.join(folder, name + ".npy")
        np.save(f, array)
        args += ["--input", name + "=" + f]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return "run: " + (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1], None
    return None, np.load(path + ".out.npy")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hexplan", default="build/release/hexplan")
    p.add_argument("--models", help="comma-separated names (default: one per family + HF-style)")
    p.add_argument("--all", action="store_true", help="every torchvision classification model")
    p.add_argument("--tolerance", type=float, default=1e-4, help="max |diff| / max |reference|")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    import numpy as np
    import torch
    import torchvision
    torch.manual_seed(a.seed)
    if a.models:
        names = a.models.split(",")
    elif a.all:
        names = torchvision.models.list_models(module=torchvision.models) + TRANSFORMERS
    else:
        names = FAMILIES + TRANSFORMERS
    failures = 0
    print("| model | result | max abs diff / max abs output |\n| --- | --- | --- |")
    for name in names:
        with tempfile.TemporaryDirectory() as folder:
            try:
                path, inputs, ref = export(torch, torchvision, name, folder)
            except Exception as e:  # PyTorch's exporter itself fails: not hexplan's to fix
                print("| %s | PyTorch cannot export it: %s | - |" % (name, str(e).splitlines()[0][:90]),
                      flush=True)
                continue
            error, out = run_hexplan(os.path.abspath(a.hexplan), path, inputs, folder)
            if error is None and out.shape != ref.shape:
                error = "shape %s, PyTorch %s" % (out.shape, ref.shape)
            rel = None if error else float(np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-30))
            if rel is not None and rel > a.tolerance:
                error = "differs"
            failures += error is not None
            print("| %s | %s | %s |" % (name, error or "ok", "-" if rel is None else "%.2e" % rel),
                  flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
