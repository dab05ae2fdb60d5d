"""hexplan.place against `hexplan place --json`: the same plan for the same request and seed."""

import json
import os

import hexplan
from conftest import TIMING_FIELDS, without

MODEL, CLUSTER = "resnet50", "sortinghat-v100"


def test_place_equals_cli(cli, tmp_path):
    plan = hexplan.place(MODEL, CLUSTER, algo="heft", seed=3)
    cli_plan = tmp_path / "p.json"
    report = cli.json("place", MODEL, "--cluster", CLUSTER, "--algo", "heft", "--seed", 3,
                      "-o", cli_plan)
    del report["plan"]
    assert without(plan.to_dict(), TIMING_FIELDS | {"latency_ms"}) == without(
        report, TIMING_FIELDS | {"latency_ms"})
    assert plan.latency_ms == report["latency_ms"]  # simulated, so exact
    with open(cli_plan) as f:
        assert plan.plan == json.load(f)


def test_plan_fields():
    plan = hexplan.place(MODEL, CLUSTER, algo="heft")
    assert plan.status == "heuristic" and not plan.interrupted
    assert plan.latency_ms >= plan.lower_bound_ms > 0
    assert plan.gap is None
    ops = plan.operators
    # Every operator of the model is placed once, on a device of the cluster.
    assert len(ops) == sum(len(s) for _, s in plan.subgraphs)
    assert set(ops.values()) <= {d["name"] for d in plan.devices}
    assert "/conv1/Conv" in ops
    assert "Plan(algo='heft'" in repr(plan)


def test_cli_defaults():
    # algo defaults to the CLI's (single) and so do the planner options.
    plan = hexplan.place(MODEL, CLUSTER)
    assert plan.algo == "single"
    assert len(set(plan.operators.values())) == 1


def test_output_file(tmp_path, cli):
    path = str(tmp_path / "plan.json")
    plan = hexplan.place(MODEL, CLUSTER, algo="heft", output=path)
    assert plan.to_dict()["plan"] == path and os.path.exists(path)
    # A model given as bytes is kept beside the plan, so the CLI can use the plan later.
    onnx = tmp_path / "m.onnx"
    assert cli("export", "mobilenet_v2", "-o", onnx)[0] == 0
    plan = hexplan.place(onnx.read_bytes(), CLUSTER, algo="heft", output=str(tmp_path / "b.json"))
    del plan
    assert os.path.exists(tmp_path / "b.inputs" / "model.onnx")
    assert cli.json("simulate", tmp_path / "b.json")["algo"] == "heft"


def test_onnx_bytes_and_path(cli, tmp_path):
    onnx = tmp_path / "mobilenet.onnx"
    code, _, err = cli("export", "mobilenet_v2", "-o", onnx)
    assert code == 0, err
    from_path = hexplan.place(str(onnx), CLUSTER, algo="heft")
    from_bytes = hexplan.place(onnx.read_bytes(), CLUSTER, algo="heft")
    assert from_bytes.latency_ms == from_path.latency_ms
    assert from_bytes.operators == from_path.operators


def test_cluster_from_python():
    cluster = {
        "name": "two-gpus",
        "nodes": [{"name": "box", "devices": [{"name": "gpu0", "model": "V100-SXM2-32GB"},
                                             {"name": "gpu1", "model": "V100-SXM2-32GB"}],
                   "switches": ["root"]}],
        "links": [{"name": "membus", "kind": "memory", "a": "host", "b": "root",
                   "bandwidth": "76.8GB/s", "latency": "100ns"},
                  {"a": "root", "b": "gpu0", "bandwidth": "15.75GB/s", "latency": "0.5us"},
                  {"a": "root", "b": "gpu1", "bandwidth": "15.75GB/s", "latency": "0.5us"}],
    }
    plan = hexplan.place(MODEL, cluster, algo="heft")
    assert plan.to_dict()["cluster"] == "two-gpus"
    assert {d["name"] for d in plan.devices} == {"gpu0", "gpu1"}


def test_critical_path_bound():
    bound = hexplan.place(MODEL, CLUSTER, algo="critical-path")
    assert bound.status == "bound" and bound.file is None
    assert bound.latency_ms <= hexplan.place(MODEL, CLUSTER, algo="heft").latency_ms


def test_options_come_from_the_registry():
    planners = hexplan.planners()
    assert {"heft", "moirai", "single", "auto"} <= set(planners)
    place_flags = {o["name"] for o in hexplan.options("place")}
    # Every planner's own option is a flag of place, and the shared ones are there.
    for name, specs in planners.items():
        for spec in specs:
            assert spec["name"] in place_flags, (name, spec["name"])
    assert {"time-limit", "seed", "gap", "coarsen", "batch", "cluster"} <= place_flags
    assert {"quiet", "strict"} <= place_flags  # the root's flags that may follow the command
    assert "q" in {s["name"] for s in planners["efficientmip"]}


def test_planner_option_passed(cli):
    # A planner's own option reaches it as its flag does: Chrion's alpha (weight of GPU memory).
    plain = hexplan.place(MODEL, "chrion-1080ti", algo="chrion")
    heavy = hexplan.place(MODEL, "chrion-1080ti", algo="chrion", alpha=100)
    report = cli.json("place", MODEL, "--cluster", "chrion-1080ti", "--algo", "chrion",
                      "--alpha", 100)
    assert heavy.latency_ms == report["latency_ms"] != plain.latency_ms


def test_models():
    names = hexplan.models()
    assert "resnet50" in names and "gpt2" in names
