#!/usr/bin/env python3
"""The bad-input table test (issue 27): every reader and subcommand given input a user can get wrong.

Each case runs the real `hexplan` in a fresh directory holding only its fixture files and asserts:
  - the exit code (2: the user can fix it; 130 never here; 1 would be our bug);
  - that stderr is one "hexplan: error: ..." message naming the file and the field, line or flag
    (each listed fragment must appear);
  - that no output is left: the directory holds exactly its fixtures afterwards (a failed command
    leaves no output, not even the outputs it could write);
  - no sanitizer report.

  tests/cli/bad_inputs_test.py --hexplan build/debug/hexplan [--only NAME_FRAGMENT] [-j 2]

Paths in commands and fixtures: $D is the case's directory, $S the source tree, $DATA ../shared/data.
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

S = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(os.path.dirname(S), "shared", "data")


def source(path, *replacements):
    """A fixture made from a file of the source tree, with (old, new) replacements applied."""
    with open(os.path.join(S, path), "rb") as f:
        data = f.read()
    for old, new in replacements:
        old_b = old.encode() if isinstance(old, str) else old
        new_b = new.encode() if isinstance(new, str) else new
        assert old_b in data, f"{path}: fixture edit does not apply: {old!r}"
        data = data.replace(old_b, new_b, 1)
    return data


def npy_f32_zeros(shape):
    """A NumPy .npy v1.0 file of float32 zeros (little-endian, C order)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(
        "%d, " % d for d in shape)
    pad = 64 - (10 + len(header) + 1) % 64
    header = (header + " " * pad + "\n").encode()
    count = 1
    for d in shape:
        count *= d
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(4 * count)


CLUSTER = source("fuzz/corpus/cluster_yaml/server.yaml")
GRAPH = source("fuzz/corpus/json_reader/gather.json")
MOIRAI = source("fuzz/corpus/moirai_csv/example-1.csv")
EFFICIENTMIP = source("fuzz/corpus/efficientmip_json/gnmt_inference.json")
# A CPU that claims more memory than any test machine has: plans for it are valid, running them
# here is not.
BIG_CPU = b"""name: big-cpu
nodes:
  - name: box
    devices:
      - {name: cpu0, kind: cpu, model: Xeon E5-2698 v4, cores: 2, memory: 4000GB}
links:
  - {kind: memory, a: box.host, b: cpu0, bandwidth: 76.8 GB/s}
"""

# share's data, named explicitly: each case runs in its own directory.
PARVA = ("--profiles $DATA/sharing/parvagpu/prof_data"
         " --slo-rates $DATA/sharing/parvagpu/SLO/SLO_req_rate.csv"
         " --slo-latency $DATA/sharing/parvagpu/SLO/SLO_latency.csv")


def case(name, command, exit_code=2, says=(), files=None, setup=None):
    return dict(name=name, command=command, exit_code=exit_code, says=list(says),
                files=files or {}, setup=setup)


CASES = [
    # --- cluster files (YAML) ---
    case("cluster file missing", "topo $D/none.yaml", says=["none.yaml"]),
    case("cluster YAML syntax error", "topo $D/c.yaml", files={"c.yaml": b"name: x\nnodes: [\n"},
         says=["c.yaml:3"]),
    case("cluster link to an unknown device", "topo $D/c.yaml",
         files={"c.yaml": source("fuzz/corpus/cluster_yaml/server.yaml", ("b: gpu3, bandwidth", "b: gpu9, bandwidth"))},
         says=["c.yaml:", "gpu9"]),
    case("cluster duplicate device name", "topo $D/c.yaml",
         files={"c.yaml": source("fuzz/corpus/cluster_yaml/server.yaml", ("name: gpu2", "name: gpu1"))},
         says=["c.yaml:", "duplicate", "gpu1"]),
    case("cluster negative bandwidth", "topo $D/c.yaml",
         files={"c.yaml": source("fuzz/corpus/cluster_yaml/server.yaml", ("bandwidth: 16GB/s, latency: 0.5us", "bandwidth: -3GB/s, latency: 0.5us"))},
         says=["c.yaml:", "bandwidth"]),
    case("cluster memory with an unknown unit", "topo $D/c.yaml",
         files={"c.yaml": source("fuzz/corpus/cluster_yaml/server.yaml", ("memory: 16GB", "memory: 16 parsecs"))},
         says=["c.yaml:", "memory"]),
    case("cluster unknown device model", "topo $D/c.yaml",
         files={"c.yaml": source("fuzz/corpus/cluster_yaml/server.yaml", ("model: T4", "model: T5000"))},
         says=["c.yaml:", "T5000"]),
    case("cluster preset unknown", "topo no-such-preset", says=["no-such-preset"]),
    # --- nvidia-smi captures ---
    case("nvidia-smi capture that is not one", "topo --from-nvidia-smi $D/t.txt",
         files={"t.txt": b"hello world\n"}, says=["t.txt"]),
    case("nvidia-smi GPU names CSV malformed",
         "topo --from-nvidia-smi $S/tests/hw/fixtures/pcie_4gpu_topo.txt --gpu-names $D/n.csv",
         files={"n.csv": b"index, name\nzero, Tesla V100\n"}, says=["n.csv"]),
    case("--gpu-names without --from-nvidia-smi", "topo dgx-a100 --gpu-names $D/n.csv",
         files={"n.csv": b"0, Tesla V100\n"}, says=["--gpu-names"]),
    case("nvidia-smi GPU names empty",
         "topo --from-nvidia-smi $S/tests/hw/fixtures/pcie_4gpu_topo.txt --gpu-names $D/n.csv",
         files={"n.csv": b"\n"}, says=["--gpu-names", "n.csv", "empty"]),
    case("nvidia-smi GPU names a directory",
         "topo --from-nvidia-smi $S/tests/hw/fixtures/pcie_4gpu_topo.txt --gpu-names $D",
         says=["--gpu-names", "directory"]),
    # --- graph JSON ---
    case("graph JSON syntax error", "inspect $D/g.json", files={"g.json": GRAPH[:-20]},
         says=["g.json"]),
    case("graph JSON unknown tensor", "inspect $D/g.json",
         files={"g.json": source("fuzz/corpus/json_reader/gather.json", ('"inputs": ["wte", "input_ids"]', '"inputs": ["wte", "nope"]'))},
         says=["g.json", "nope"]),
    case("graph JSON unknown format", "inspect $D/g.json",
         files={"g.json": source("fuzz/corpus/json_reader/gather.json", ("hexplan-graph", "other-graph"))},
         says=["g.json", "format"]),
    case("graph JSON cycle", "inspect $D/g.json",
         files={"g.json": source("fuzz/corpus/json_reader/gather.json",
                                 ('"inputs": ["wte", "input_ids"]', '"inputs": ["wte", "emb"]'))},
         says=["g.json", "cycle"]),
    case("graph JSON bad dtype", "inspect $D/g.json",
         files={"g.json": source("fuzz/corpus/json_reader/gather.json", ('"dtype": "fp32", "shape": [100, 8]', '"dtype": "fp33", "shape": [100, 8]'))},
         says=["g.json", "fp33"]),
    # --- ONNX ---
    case("ONNX file truncated", "inspect $D/m.onnx",
         files={"m.onnx": source("fuzz/corpus/onnx_reader/conv.onnx")[:40]}, says=["m.onnx"]),
    case("ONNX file that is text", "inspect $D/m.onnx", files={"m.onnx": b"not a model\n"},
         says=["m.onnx"]),
    case("model path missing", "inspect $D/none.onnx", says=["none.onnx"]),
    case("model name unknown", "inspect gpt7", says=["gpt7"]),
    case("model name misspelled", "inspect gpt-2", says=["'gpt-2' is not a zoo model", "did you mean 'gpt2'"]),
    case("model path without an extension missing", "inspect $D/models/net", says=["net", "no such file"]),
    case("ONNX with a fixed batch given --batch", "inspect $D/r.onnx --batch 4", setup="export resnet50 -o $D/r.onnx",
         says=["r.onnx", "--batch"]),
    case("--strict and an ignored --seq", "--strict export resnet50 --seq 128 -o $D/r.json",
         says=["--seq", "--strict"]),
    case("model file of another kind", "export $D/w.csv -o $D/w.onnx", files={"w.csv": MOIRAI},
         says=["w.csv", "inspect, place and compare"]),
    case("CSV that is no workload", "inspect $D/w.csv", files={"w.csv": b"a,b\n1,2\n"}, says=["w.csv"]),
    # --- model size flags: a value given is checked, never taken as "the default" ---
    case("--layers 0", "inspect lstm --layers 0", says=["--layers", "[1, 4096]", "got 0"]),
    case("--io 0", "inspect lstm --io 0", says=["--io", "[1, 65536]", "got 0"]),
    case("--layers negative", "place lstm --layers -1 --cluster local-cpu -o $D/p.json", says=["--layers", "got -1"]),
    case("--image 0", "inspect resnet50 --image 0", says=["--image", "[1, 16384]"]),
    case("--image on a model without images", "export gpt2 --image 224 -o $D/g.onnx", says=["--image", "gpt2", "takes no image"]),
    case("--image on a model file", "inspect $D/r.onnx --image 448", setup="export resnet50 -o $D/r.onnx",
         says=["--image", "r.onnx"]),
    case("--image below the minimum", "inspect inception_v3 --image 224", says=["--image", "inception_v3", "299"]),
    case("--image VGG cannot pool", "place vgg16 --image 256 --cluster dgx-a100 -o $D/p.json",
         says=["--image", "vgg16", "multiple of 7"]),
    case("--image over the cap", "inspect swin-1.8b --image 16385", says=["--image", "16384"]),
    case("--strict and a topology capture without GPU names", "--strict place gpt2 --cluster $D/t.txt -o $D/p.json",
         files={"t.txt": source("tests/hw/fixtures/pcie_4gpu_topo.txt")}, says=["t.txt", "does not name the GPUs", "--strict"]),
    # --- export --plan ---
    case("export --plan made for another model", "export gpt2-medium --plan $D/p.json -o $D/x.onnx",
         setup="place gpt2 --cluster dgx-a100 --algo heft -o $D/p.json", says=["p.json", "fingerprint mismatch"]),
    case("export --plan with other model options", "export gpt2 --seq 64 --plan $D/p.json -o $D/x.onnx",
         setup="place gpt2 --cluster dgx-a100 --algo heft -o $D/p.json", says=["p.json", "fingerprint mismatch"]),
    case("export --plan to graph JSON", "export gpt2 --plan $D/p.json -o $D/x.json",
         setup="place gpt2 --cluster dgx-a100 --algo heft -o $D/p.json", says=["--plan", "ONNX"]),
    case("export --plan missing", "export gpt2 --plan $D/none.json -o $D/x.onnx", says=["none.json"]),
    case("export --plan that is not a plan", "export gpt2 --plan $D/p.json -o $D/x.onnx",
         files={"p.json": b'{"format": "hexplan-graph"}'}, says=["p.json"]),
    # --- MOIRAI CSV ---
    case("MOIRAI CSV bad number", "place $D/w.csv --algo getf",
         files={"w.csv": source("fuzz/corpus/moirai_csv/example-1.csv", ("1,3,5,\"3,5\",8,9,7", "1,3,5,\"3,5\",8,x9,7"))},
         says=["w.csv:3", "p1"]),
    case("MOIRAI CSV missing column", "place $D/w.csv --algo getf",
         files={"w.csv": b"task,c_task\n0,1\n"}, says=["w.csv"]),
    # --- EfficientMIP JSON ---
    case("EfficientMIP JSON bad field", "place $D/e.json --algo efficientmip",
         files={"e.json": source("fuzz/corpus/efficientmip_json/gnmt_inference.json", ('"maxFPGAs": 6', '"maxFPGAs": "six"'))},
         says=["e.json", "maxFPGAs"]),
    case("EfficientMIP JSON maxFPGAs 1e12", "place $D/e.json --algo efficientmip",
         files={"e.json": source("fuzz/corpus/efficientmip_json/gnmt_inference.json", ('"maxFPGAs": 6', '"maxFPGAs": 1e12'))},
         says=["e.json", "maxFPGAs"]),
    case("EfficientMIP JSON 4000 accelerators", "place $D/e.json --algo efficientmip",
         files={"e.json": source("fuzz/corpus/efficientmip_json/gnmt_inference.json", ('"maxFPGAs": 6', '"maxFPGAs": 4000'))},
         says=["e.json", "maxFPGAs"]),
    # --- profiles ---
    case("profile JSON syntax error", "place gpt2 --cluster dgx-a100 --profile $D/p.json",
         files={"p.json": b'{"node_times": {'}, says=["p.json"]),
    case("profile CSV bad number", "place gpt2 --cluster dgx-a100 --profile $D/p.csv",
         files={"p.csv": b"node,device,seconds\nembed,gpu0,fast\n"}, says=["p.csv", "2"]),
    case("profile CSV negative time", "place gpt2 --cluster dgx-a100 --profile $D/p.csv",
         files={"p.csv": b"node,device,seconds\nembed,gpu0,-1\n"}, says=["p.csv"]),
    case("profile missing", "place gpt2 --cluster dgx-a100 --profile $D/none.csv",
         says=["none.csv"]),
    # --- device calibrations (--calibration, --cost-model) ---
    case("calibration missing", "place resnet50 --cluster sortinghat-v100 --calibration $D/none.yaml",
         says=["--calibration", "none.yaml"]),
    case("calibration YAML syntax error", "place resnet50 --cluster sortinghat-v100 --calibration $D/c.yaml",
         files={"c.yaml": b"model: [\n"}, says=["c.yaml"]),
    case("calibration fraction over 1", "place resnet50 --cluster sortinghat-v100 --calibration $D/c.yaml",
         files={"c.yaml": b"model: V100-SXM2-32GB\ncopy:\n  h2d_pinned: {fraction: 1.5}\n"},
         says=["c.yaml:3", "copy.h2d_pinned.fraction"]),
    case("calibration unknown class", "place resnet50 --cluster sortinghat-v100 --calibration $D/c.yaml",
         files={"c.yaml": b"model: V100-SXM2-32GB\nclasses:\n  conv: {}\n"},
         says=["c.yaml:3", "classes.conv"]),
    case("cost model unknown", "place resnet50 --cluster sortinghat-v100 --cost-model exact",
         says=["--cost-model", "exact"]),
    case("calibration for no known model (--strict)",
         "--strict place resnet50 --cluster sortinghat-v100 --calibration $D/c.yaml -o $D/p.json",
         files={"c.yaml": b"model: Z9000\n"}, says=["c.yaml", "Z9000"]),
    # --- plans ---
    case("plan missing", "simulate $D/none.json", says=["none.json"]),
    case("plan JSON syntax error", "simulate $D/p.json", files={"p.json": b'{"format": "hexplan-plan",\n "version": 1,\n'},
         says=["p.json"]),
    case("plan JSON not a plan", "simulate $D/p.json", files={"p.json": b'{"hello": 1}\n'},
         says=["p.json"]),
    case("show on a plan syntax error", "show $D/p.json", files={"p.json": b'[1, 2'},
         says=["p.json"]),
    case("run with a plan missing", "run gpt2 --plan $D/none.json --random-input",
         says=["none.json"]),
    case("run a tp plan missing", "run gpt2 --tp-plan $D/none.json", says=["none.json"]),
    case("run with both --plan and --tp-plan", "run gpt2 --plan $D/p.json --tp-plan $D/t.json",
         says=["--plan", "--tp-plan"]),
    case("run a tp plan with a bad block", "run gpt2 --tp-plan $D/tp.json", files={"tp.json":
         b'{"model": "gpt2", "batch": 1, "input_len": 1, "method": "megatron", "layout": "megatron",'
         b' "plan": {"nodes": [{"node": 0, "name": "n0", "group": 0, "capability": 1,'
         b' "batch": [0, 1], "blocks": [{"layer": "qkv", "rows": [5, 2], "cols": [0, 1]}]}]}}'},
         says=["tp.json", "plan.nodes[0].blocks[0].rows"]),
    # --- .npy inputs ---
    case("npy input not npy", "run $S/fuzz/corpus/onnx_reader/mlp.onnx --plan $D/p.json --input x=$D/x.npy",
         files={"x.npy": b"\x93NUMPY garbage"}, says=["x.npy"],
         setup="place $S/fuzz/corpus/onnx_reader/mlp.onnx --cluster local-cpu -o $D/p.json"),
    case("npy input missing", "run $S/fuzz/corpus/onnx_reader/mlp.onnx --plan $D/p.json --input x=$D/none.npy",
         says=["none.npy"],
         setup="place $S/fuzz/corpus/onnx_reader/mlp.onnx --cluster local-cpu -o $D/p.json"),
    case("run --input without '='", "run $S/fuzz/corpus/onnx_reader/mlp.onnx --plan $D/p.json --input x.npy",
         says=["--input"],
         setup="place $S/fuzz/corpus/onnx_reader/mlp.onnx --cluster local-cpu -o $D/p.json"),
    case("run a plan made for another model", "run gpt2 --plan $D/p.json --random-input",
         says=["p.json", "model"],
         setup="place $S/fuzz/corpus/onnx_reader/mlp.onnx --cluster local-cpu -o $D/p.json"),
    # --- ParvaGPU sharing inputs ---
    case("share profiles directory missing", "share --profiles $D/none --scenario S1",
         says=["none"]),
    case("share profile CSV bad row", "share --profiles $D/prof --scenario S1 --slo-rates $DATA/sharing/parvagpu/SLO/SLO_req_rate.csv --slo-latency $DATA/sharing/parvagpu/SLO/SLO_latency.csv",
         setup="cp -r $DATA/sharing/parvagpu/prof_data $D/prof && printf '1,1,x,y\\n' >> $D/prof/bert.csv",
         says=["bert.csv"]),
    case("share unknown scenario", "share --scenario S9 " + PARVA, says=["S9"]),
    case("share unknown GPU", "share --scenario S1 --gpu v100 " + PARVA, says=["v100"]),
    case("share unknown algorithm", "share --scenario S1 --algo nope " + PARVA, says=["nope"]),
    # --- issue 27's first list: unbounded work, memory, text, readers ---
    case("share --scale 1000000", "share --scenario S1 --scale 1000000 " + PARVA, says=["--scale"]),
    case("share --sim-seconds 1e12", "share --scenario S1 --simulate --sim-seconds 1e12 " + PARVA,
         says=["--sim-seconds"]),
    case("share SLO rate 1e6 req/s", "share --scenario S1 --slo-rates $D/rates.csv"
         " --profiles $DATA/sharing/parvagpu/prof_data --slo-latency $DATA/sharing/parvagpu/SLO/SLO_latency.csv",
         files={"rates.csv": b"1000000,353,308,276,460,677,393,281,829,410,354\n"},
         says=["rates.csv"]),
    case("run a plan larger than this machine's memory", "run gpt3-175b --plan $D/p.json --random-input",
         files={"big.yaml": BIG_CPU},
         setup="place gpt3-175b --cluster $D/big.yaml --algo single -o $D/p.json",
         says=["p.json", "GB available"]),
    case("profile of 1e308 s per operator", "place gpt2 --cluster dgx-a100 --profile $D/p.csv -o $D/plan.json",
         files={"p.csv": b"node,device,seconds\nembed,gpu0,1e308\n"}, says=["p.csv"]),
    case("cluster YAML name not UTF-8", "topo $D/c.yaml --json",
         files={"c.yaml": source("fuzz/corpus/cluster_yaml/server.yaml", ("name: bus0", b"name: bus\xff0"))},
         says=["c.yaml", "UTF-8"]),
    case("topo --svg of a name not UTF-8", "topo $D/c.yaml --svg $D/c.svg",
         files={"c.yaml": source("fuzz/corpus/cluster_yaml/server.yaml", ("name: my-server", b"name: my-\xc3server"))},
         says=["c.yaml", "UTF-8"]),
    case("ONNX node name not UTF-8", "inspect $D/m.onnx --json",
         files={"m.onnx": source("fuzz/corpus/onnx_reader/conv.onnx", ("/gap", b"/g\xffp"))},
         says=["m.onnx", "UTF-8"]),
    case("ParvaGPU profile file name not UTF-8", "share --profiles $D/prof --scenario S1 --slo-rates $DATA/sharing/parvagpu/SLO/SLO_req_rate.csv --slo-latency $DATA/sharing/parvagpu/SLO/SLO_latency.csv",
         setup="cp -r $DATA/sharing/parvagpu/prof_data $D/prof && mv $D/prof/bert.csv $D/prof/$(printf 'b\\377rt').csv",
         says=["UTF-8"]),
    case("graph JSON MatMul without inputs", "export $D/g.json -o $D/g.onnx",
         files={"g.json": source("fuzz/corpus/json_reader/gather.json",
                                 ('"op_type": "Gather", "inputs": ["wte", "input_ids"]', '"op_type": "MatMul", "inputs": []'))},
         says=["g.json", "embed"]),
    case("graph JSON MatMul [8,64] x [3]", "export $D/g.json -o $D/g.onnx",
         files={"g.json": b'''{"format": "hexplan-graph", "version": 1, "name": "mm",
 "tensors": [{"name": "a", "dtype": "fp32", "shape": [8, 64]}, {"name": "b", "dtype": "fp32", "shape": [3]},
             {"name": "c", "dtype": "fp32", "shape": [8, 3]}],
 "nodes": [{"name": "a", "kind": "input", "outputs": ["a"]}, {"name": "b", "kind": "weight", "outputs": ["b"]},
           {"name": "mm", "kind": "op", "op_type": "MatMul", "inputs": ["a", "b"], "outputs": ["c"]},
           {"name": "c", "kind": "output", "inputs": ["c"]}]}'''},
         says=["g.json", "mm"]),
    case("graph JSON Conv with group 0", "export $D/g.json -o $D/g.onnx",
         files={"g.json": b'''{"format": "hexplan-graph", "version": 1, "name": "conv",
 "tensors": [{"name": "x", "dtype": "fp32", "shape": [1, 4, 8, 8]}, {"name": "w", "dtype": "fp32", "shape": [4, 4, 3, 3]},
             {"name": "y", "dtype": "fp32", "shape": [1, 4, 6, 6]}],
 "nodes": [{"name": "x", "kind": "input", "outputs": ["x"]}, {"name": "w", "kind": "weight", "outputs": ["w"]},
           {"name": "conv", "kind": "op", "op_type": "Conv", "inputs": ["x", "w"], "outputs": ["y"],
            "attrs": {"group": 0}},
           {"name": "y", "kind": "output", "inputs": ["y"]}]}'''},
         says=["g.json", "group"]),
    case("plan JSON syntax error names its line", "simulate $D/p.json",
         files={"p.json": b'{"format": "hexplan-plan",\n "version": 1,\n "model": ]\n}\n'},
         says=["p.json:3:"]),
    case("graph JSON cycle a -> b -> a", "inspect $D/g.json",
         files={"g.json": b'''{"format": "hexplan-graph", "version": 1, "name": "cyc",
 "tensors": [{"name": "x", "dtype": "fp32", "shape": [4]}, {"name": "ta", "dtype": "fp32", "shape": [4]},
             {"name": "tb", "dtype": "fp32", "shape": [4]}],
 "nodes": [{"name": "x", "kind": "input", "outputs": ["x"]},
           {"name": "a", "kind": "op", "op_type": "Add", "inputs": ["x", "tb"], "outputs": ["ta"]},
           {"name": "b", "kind": "op", "op_type": "Relu", "inputs": ["ta"], "outputs": ["tb"]},
           {"name": "tb", "kind": "output", "inputs": ["tb"]}]}'''},
         says=["g.json", "cycle: a -> b -> a"]),
    case("ParvaGPU SLO file not UTF-8", "share --scenario S1 --slo-rates $D/rates.csv"
         " --profiles $DATA/sharing/parvagpu/prof_data --slo-latency $DATA/sharing/parvagpu/SLO/SLO_latency.csv",
         files={"rates.csv": b"19,353,N/A,N/A,460,677,N/A,N/A,829,N/A,354 \xe9\n"},
         says=["rates.csv:1", "UTF-8"]),
    case("ParvaGPU profile CSV not UTF-8", "share --profiles $D/prof --scenario S1 --slo-rates $DATA/sharing/parvagpu/SLO/SLO_req_rate.csv --slo-latency $DATA/sharing/parvagpu/SLO/SLO_latency.csv",
         setup="cp -r $DATA/sharing/parvagpu/prof_data $D/prof && printf 'Mig\\377 instance\\n' > $D/prof/bert.csv",
         says=["bert.csv:1", "UTF-8"]),
    # --- options ---
    case("unknown subcommand", "frobnicate", says=["frobnicate"]),
    case("models with an unknown flag", "models --bogus", says=["--bogus"]),
    case("planners with an unknown flag", "planners --frob", says=["--frob"]),
    case("show without a plan", "show", says=["PLAN"]),
    case("profile on a GPU cluster", "profile gpt2 --cluster dgx-a100 -o $D/p.json",
         says=["dgx-a100", "gpu0", "CPU"]),
    case("compare on an unknown cluster", "compare gpt2 --cluster nowhere", says=["--cluster", "nowhere"]),
    case("unknown flag", "inspect gpt2 --frob", says=["--frob"]),
    case("--batch 0", "inspect gpt2 --batch 0", says=["--batch"]),
    case("--dtype unknown", "inspect gpt2 --dtype int3", says=["int3"]),
    case("--algo unknown", "place gpt2 --cluster dgx-a100 --algo nope", says=["nope"]),
    case("--time-limit negative", "place gpt2 --cluster dgx-a100 --algo moirai --time-limit -1",
         says=["time"]),
    case("planner option out of range", "place gpt2 --cluster dgx-a100 --algo sortinghat --q 1000",
         says=["--q", "64"]),
    case("planner option of another planner", "place gpt2 --cluster dgx-a100 --algo heft --q 4",
         says=["--q"]),
    case("--coarsen unknown", "place gpt2 --cluster dgx-a100 --coarsen lots", says=["lots"]),
    case("--warm over 1", "place gpt2 --cluster dgx-a100 --warm 1.5", says=["--warm", "[0, 1]"]),
    case("compare --warm negative", "compare gpt2 --cluster dgx-a100 --algos single --warm -0.5",
         says=["--warm"]),
    case("--cluster unknown", "place gpt2 --cluster nowhere", says=["nowhere"]),
    case("compare --algos unknown", "compare gpt2 --cluster dgx-a100 --algos single,nope",
         says=["nope"]),
    case("simulate --copy-mode unknown", "simulate $D/p.json --copy-mode fast", says=["--copy-mode"],
         setup="place gpt2 --cluster dgx-a100 -o $D/p.json"),
    case("run --repeat 0", "run gpt2 --plan $D/p.json --random-input --repeat 0", says=["--repeat"],
         setup="place gpt2 --cluster local-cpu -o $D/p.json"),
    case("export to an unknown format", "export gpt2 -o $D/g.txt", says=["--output", "g.txt"]),
    case("tp unknown model", "tp --model gpt7 --cluster dgx-a100", says=["gpt7"]),
    case("tp without a cluster", "tp --model gpt2", says=["--cluster"]),
    # --- unwritable outputs: exit 2 before any work, nothing left ---
    case("place -o into a missing directory", "place gpt2 --cluster dgx-a100 -o $D/nodir/p.json",
         says=["--output", "nodir"]),
    case("place -o into /proc", "place gpt2 --cluster dgx-a100 -o /proc/hexplan.json",
         says=["--output", "/proc"]),
    case("place -o onto a directory", "place gpt2 --cluster dgx-a100 -o $D", says=["--output", "directory"]),
    case("place --export-lp into a missing directory",
         "place gpt2 --cluster dgx-a100 --algo moirai --export-lp $D/nodir/m.lp", says=["--export-lp", "nodir"]),
    case("simulate --trace written, --svg not", "simulate $D/p.json --trace $D/t.json --svg $D/nodir/t.svg",
         setup="place gpt2 --cluster dgx-a100 -o $D/p.json", says=["--svg", "nodir"]),
    case("topo --dot written, --svg not", "topo dgx-a100 --dot $D/t.dot --svg $D/nodir/t.svg",
         says=["--svg", "nodir"]),
    case("topo --svg into /proc", "topo dgx-a100 --svg /proc/t.svg", says=["--svg", "/proc"]),
    case("run --output into a missing directory",
         "run gpt2 --plan $D/p.json --random-input --output $D/nodir/y.npy",
         setup="place gpt2 --cluster local-cpu -o $D/p.json", says=["--output", "nodir"]),
    case("run --trace into a missing directory",
         "run gpt2 --plan $D/p.json --random-input --output $D/y.npy --trace $D/nodir/t.json",
         setup="place gpt2 --cluster local-cpu -o $D/p.json", says=["--trace", "nodir"]),
    case("profile -o into a missing directory", "profile gpt2 -o $D/nodir/p.json",
         says=["--output", "nodir"]),
    case("export -o into a missing directory", "export gpt2 -o $D/nodir/g.onnx", says=["--output", "nodir"]),
    case("export --plan -o into a missing directory", "export gpt2 --plan $D/p.json -o $D/nodir/g.onnx",
         setup="place gpt2 --cluster dgx-a100 --algo heft -o $D/p.json", says=["--output", "nodir", "does not exist"]),
    case("simulate --trace into a missing nested directory", "simulate $D/p.json --trace $D/a/b/t.json",
         setup="place gpt2 --cluster dgx-a100 --algo heft -o $D/p.json", says=["--trace", "a/b", "does not exist"]),
    case("topo --dot into a missing directory", "topo dgx-a100 --dot $D/nodir/t.dot", says=["--dot", "nodir"]),
    case("share --mig-parted into a missing directory", "share --scenario S1 --mig-parted $D/nodir/m.yaml " + PARVA,
         says=["--mig-parted", "nodir"]),
    case("share --deploy into a missing directory", "share --scenario S1 --deploy $D/nodir/d.sh " + PARVA,
         says=["--deploy", "nodir"]),
    case("place -o under a file", "place gpt2 --cluster dgx-a100 -o $D/f/p.json", files={"f": b"x"},
         says=["--output", "f", "not a directory"]),
    case("export -o into /proc", "export gpt2 -o /proc/g.json", says=["--output", "/proc"]),
    case("share --svg into a missing directory", "share --scenario S1 --mig-parted $D/m.yaml --svg $D/nodir/s.svg " + PARVA,
         says=["--svg", "nodir"]),
    case("share --deploy into /proc", "share --scenario S1 --deploy /proc/deploy.sh " + PARVA, says=["--deploy", "/proc"]),
    case("tp --report under a file", "tp --report $D/f/r", files={"f": b"x"},
         says=["--report", "f"]),
    # --- values the option parser let through (a helper's black-box hunt) ---
    case("tp --report with a model and cluster it would ignore",
         "tp llama2-7b --cluster asym:S2 --report $D/r", says=["--report", "MODEL"]),
    case("place -o with an empty path", 'place gpt2 --cluster dgx-a100 -o ""', says=["--output", "empty"]),
    case("simulate --svg with an empty path", 'simulate $D/p.json --svg ""',
         setup="place gpt2 --cluster dgx-a100 --algo heft -o $D/p.json", says=["--svg", "empty"]),
    case("place --seed past 64 bits", "place gpt2 --cluster dgx-a100 --seed 99999999999999999999999 -o $D/p.json",
         says=["--seed", "out of range"]),
    case("place --seed negative", "place gpt2 --cluster dgx-a100 --seed -1 -o $D/p.json",
         says=["--seed", "-1"]),
    # --- a second black-box hunt ---
    case("simulate --trace and --svg naming one file", "simulate $D/p.json --trace $D/s.json --svg $D/s.json",
         setup="place gpt2 --cluster dgx-a100 --algo heft -o $D/p.json", says=["--svg", "--trace", "same file"]),
    case("place -o and --export-lp naming one file",
         "place gpt2 --cluster dgx-a100 --algo getf --time-limit 5 -o $D/x.json --export-lp $D/x.json",
         says=["--export-lp", "-o", "same file"]),
    case("simulate --warm negative", "simulate $D/p.json --warm -0.5",
         setup="place gpt2 --cluster dgx-a100 --algo heft -o $D/p.json", says=["--warm", "-0.5"]),
    case("calibrate --repeats without --measure", "calibrate --repeats -5", says=["--repeats", "--measure"]),
    case("tp --compare with --pp", "tp gpt3-175b --cluster asym:S8 --compare --pp 2", says=["--compare", "--pp"]),
    case("--fusion-rules without fusion coarsening (--strict)",
         "--strict place gpt2 --cluster dgx-a100 --algo heft --fusion-rules $D/none.txt -o $D/p.json",
         says=["--fusion-rules", "--coarsen fusion"]),
    case("run --input given twice", "run mobilenet_v2 --plan $D/cpu.json --input input=$D/a.npy --input input=$D/a.npy",
         files={"a.npy": npy_f32_zeros((1, 3, 224, 224))},
         setup="place mobilenet_v2 --cluster local-cpu:groups=2 --algo heft -o $D/cpu.json",
         says=["--input", "input", "twice"]),
    case("cluster device memory 0", "topo $D/c.yaml",
         files={"c.yaml": b"nodes:\n  - name: box\n    devices:\n      - {name: gpu0, model: A100-80GB, memory: 0GB}\n"
                          b"links:\n  - {a: host, b: gpu0, bandwidth: 16GB/s}\n"},
         says=["c.yaml:4", "memory must be > 0"]),
    case("cluster device memory_bandwidth 0", "topo $D/c.yaml",
         files={"c.yaml": b"nodes:\n  - name: box\n    devices:\n      - {name: gpu0, model: A100-80GB, memory_bandwidth: 0 GB/s}\n"
                          b"links:\n  - {a: host, b: gpu0, bandwidth: 16GB/s}\n"},
         says=["c.yaml:4", "memory_bandwidth must be > 0"]),
    case("cluster link count past an int", "topo $D/c.yaml",
         files={"c.yaml": b"nodes:\n  - name: box\n    devices:\n      - {name: gpu0, model: A100-80GB}\n"
                          b"links:\n  - {a: host, b: gpu0, bandwidth: 16GB/s, count: 3000000000}\n"},
         says=["c.yaml:6", "count", "3000000000"]),
    case("place --seed past 64 bits in hexadecimal", "place gpt2 --cluster dgx-a100 --seed 0x10000000000000000 -o $D/p.json",
         says=["--seed", "out of range"]),
    case("place --batch past 64 bits after a space", "place gpt2 --cluster dgx-a100 --batch ' 99999999999999999999' -o $D/p.json",
         says=["--batch", "out of range"]),
    case("cluster YAML of aliases to aliases (billion laughs)", "topo $D/c.yaml",
         files={"c.yaml": b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
             b"a%d: &a%d [%s]\n" % (i, i, b", ".join([b"*a%d" % (i - 1)] * 10)) for i in range(1, 12))},
         says=["c.yaml", "a0"]),
    case("profile JSON with a key twice in one entry", "place gpt2 --cluster dgx-a100 --profile $D/p.json",
         files={"p.json": b'{"ops": [{"node": "embed", "device": "gpu0", "seconds": 1e-3, "seconds": 2e-3}]}'},
         says=["p.json", "'seconds' appears twice"]),
    case("share --seeds without --simulate", "share --scenario S1 --seeds 3 " + PARVA,
         says=["--seeds", "--simulate"]),
    case("share --slo-latency that is a directory", "share --scenario S1 --slo-latency $D/dir"
         " --profiles $DATA/sharing/parvagpu/prof_data --slo-rates $DATA/sharing/parvagpu/SLO/SLO_req_rate.csv",
         setup="cp -r $DATA/sharing/parvagpu/SLO $D/dir", says=["dir", "directory"]),
    case("calibration with a key given twice", "place resnet50 --cluster sortinghat-v100 --calibration $D/c.yaml",
         files={"c.yaml": b"model: V100-SXM2-32GB\nkernel_launch_s: 1e-5\nkernel_launch_s: 2e-5\n"},
         says=["c.yaml:3", "kernel_launch_s", "twice"]),
    case("cluster with a key given twice in a device", "topo $D/c.yaml",
         files={"c.yaml": CLUSTER.replace(b"        model: T4\n", b"        model: T4\n        model: A100\n", 1)},
         says=["c.yaml:10", "model", "twice"]),
    case("calibration nested past the parser's depth", "place resnet50 --cluster sortinghat-v100 --calibration $D/c.yaml",
         files={"c.yaml": b"model: " + b"[" * 3000 + b"]" * 3000 + b"\n"}, says=["c.yaml", "levels deep"]),
    case("profile JSON with an entry twice", "place gpt2 --cluster dgx-a100 --profile $D/p.json",
         files={"p.json": b'{"ops": [{"node": "embed", "device": "gpu0", "seconds": 1e-3},'
                          b' {"node": "embed", "device": "gpu0", "seconds": 2e-3}]}'},
         says=["p.json", "ops[1]", "ops[0]"]),
    case("profile CSV with a row twice", "place gpt2 --cluster dgx-a100 --profile $D/p.csv",
         files={"p.csv": b"node,device,seconds\nembed,gpu0,1e-3\nembed,gpu0,2e-3\n"},
         says=["p.csv:3", "line 2"]),
]


# A bad input is refused before any heavy work: a case still running after this is a failure.
CASE_SECONDS = 60


def expand(text, d):
    return text.replace("$DATA", DATA).replace("$D", d).replace("$S", S)


def listing(d):
    out = set()
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            out.add(os.path.relpath(os.path.join(root, name), d))
    return out


def run_case(c, hexplan):
    """Returns a list of failure strings (empty when the case holds)."""
    d = tempfile.mkdtemp(prefix="hx-bad-")
    try:
        for name, data in c["files"].items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        if c["setup"]:
            setup = expand(c["setup"], d)
            if setup.split()[0] != "cp":
                setup = f"{hexplan} {setup}"  # a hexplan command that makes a valid input
            r = subprocess.run(setup, shell=True, cwd=d, capture_output=True, text=True,
                               errors="replace", timeout=300)
            if r.returncode != 0:
                return [f"setup failed ({r.returncode}): {setup}", r.stderr.strip()[:600]]
        before = listing(d)  # the fixtures, and what the setup command made
        try:
            r = subprocess.run(f"exec {hexplan} {expand(c['command'], d)}", shell=True, cwd=d,
                               capture_output=True, text=True, errors="replace",
                               timeout=CASE_SECONDS)
        except subprocess.TimeoutExpired:
            return [f"still running after {CASE_SECONDS} s: bad input must be refused before work"]
        problems = []
        if r.returncode != c["exit_code"]:
            problems.append(f"exit {r.returncode}, expected {c['exit_code']}")
        err = r.stderr
        if "Sanitizer" in err or "runtime error" in err:
            problems.append("sanitizer report")
        if c["exit_code"] == 2 and "hexplan: error:" not in err and "Error" not in err:
            problems.append("no 'hexplan: error:' line")
        for fragment in c["says"]:
            if expand(fragment, d) not in err:
                problems.append(f"stderr does not name {fragment!r}")
        left = listing(d) - before
        if left:
            problems.append(f"left output: {sorted(left)}")
        if problems:
            problems.append(f"stderr: {err.strip()[:600]}")
        return problems
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hexplan", required=True)
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("-j", type=int, default=2)
    args = ap.parse_args()
    hexplan = os.path.abspath(args.hexplan)
    cases = [c for c in CASES if args.only in c["name"]]
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        results = list(pool.map(lambda c: (c, run_case(c, hexplan)), cases))
    for c, problems in results:
        if problems:
            failed += 1
            print(f"FAIL {c['name']}: {c['command']}")
            for p in problems:
                print(f"     {p}")
    print(f"{len(cases) - failed} of {len(cases)} bad-input cases hold")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
