"""compare, simulate, run, profile, tp and share against the CLI's --json objects and files."""

import json
import os

import numpy as np
import pytest

import hexplan
from conftest import ONNX_NODE_DATA, TIMING_FIELDS, without

CLUSTER = "sortinghat-v100"
LSTM = ["lstm", "--layers", "2", "--io", "8"]  # 2 layers of hidden size 8: a small real model


def test_compare_equals_cli(cli):
    result = hexplan.compare("mobilenet_v2", CLUSTER, algos=["single", "heft"])
    report = cli.json("compare", "mobilenet_v2", "--cluster", CLUSTER, "--algos", "single,heft")
    assert without(result.to_dict(), TIMING_FIELDS) == without(report, TIMING_FIELDS)
    assert [r["algo"] for r in result["results"]] == ["single", "heft"]


def test_simulate_trace_and_svg(cli, tmp_path):
    plan = hexplan.place("resnet50", CLUSTER, algo="heft")
    result = hexplan.simulate(plan, trace=True, svg=str(tmp_path / "t.svg"))
    assert without(result.to_dict(), {"plan"}) == without(
        cli.json("simulate", plan.file), {"plan"})
    assert result["latency_ms"] == plan.latency_ms
    assert result.trace["traceEvents"]
    assert "<svg" in result.svg and (tmp_path / "t.svg").read_text() == result.svg
    warm = hexplan.simulate(plan, warm=1.0)
    assert warm["latency_ms"] < result["latency_ms"]  # no weight loads


def _lstm_plan(cli, tmp_path):
    path = tmp_path / "lstm.json"
    code, _, err = cli("place", *LSTM, "--cluster", "local-cpu", "--algo", "heft", "-o", path)
    assert code == 0, err
    return str(path)


def test_run_outputs_bit_equal_to_cli(cli, tmp_path):
    plan = _lstm_plan(cli, tmp_path)
    # Seeded random inputs and weights: the same seed, the same values, bit for bit.
    result = hexplan.run(plan, seed=7)
    code, _, err = cli("run", *LSTM, "--plan", plan, "--random-input", "--seed", 7, "--output",
                       tmp_path / "out.npy")
    assert code == 0, err
    (name, array), = result.outputs.items()
    expected = np.load(tmp_path / "out.npy")
    assert array.dtype == expected.dtype and array.shape == expected.shape
    assert array.tobytes() == expected.tobytes()
    assert result["outputs"][0]["name"] == name and "file" not in result["outputs"][0]


def test_run_numpy_inputs_bit_equal_to_cli(cli, tmp_path):
    model = os.path.join(ONNX_NODE_DATA, "test_matmul_2d", "model.onnx")
    if not os.path.exists(model):
        pytest.skip("libonnx-testdata is not installed")
    plan = hexplan.place(model, "local-cpu")
    rng = np.random.default_rng(0)
    inputs = {"a": rng.standard_normal((3, 4), dtype=np.float32),
              "b": rng.standard_normal((4, 3), dtype=np.float32)}
    result = hexplan.run(plan, inputs)
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
    code, _, err = cli("run", model, "--plan", plan.file, "--input", f"a={tmp_path / 'a.npy'}",
                       "--input", f"b={tmp_path / 'b.npy'}", "--output", tmp_path / "c.npy")
    assert code == 0, err
    (array,) = result.outputs.values()
    assert array.tobytes() == np.load(tmp_path / "c.npy").tobytes()
    np.testing.assert_allclose(array, inputs["a"] @ inputs["b"], rtol=1e-5)


def test_profile(tmp_path):
    model = os.path.join(ONNX_NODE_DATA, "test_relu", "model.onnx")
    if not os.path.exists(model):
        pytest.skip("libonnx-testdata is not installed")
    out = str(tmp_path / "relu.json")
    result = hexplan.profile(model, repeat=1, warmup=0, output=out)
    assert result.profile and os.path.exists(out)
    with open(out) as f:
        assert json.load(f) == result.profile
    # The profile is input to planning, as `place --profile` takes it.
    assert hexplan.place(model, "local-cpu", profile=out).latency_ms > 0


def test_tp_equals_cli(cli):
    result = hexplan.tp("gpt3-175b", "asym:S8", no_plan=True)
    report = cli.json("tp", "--model", "gpt3-175b", "--cluster", "asym:S8", "--no-plan")
    assert without(result.to_dict(), TIMING_FIELDS) == without(report, TIMING_FIELDS)


def test_tp_report_points_to_the_command_line():
    with pytest.raises(ValueError, match="hexplan tp --report DIR"):
        hexplan.tp("gpt3-175b", "asym:S8", report="out")


def test_share_equals_cli(cli):
    result = hexplan.share(scenario="S1", algo="parvagpu")
    report = cli.json("share", "--scenario", "S1", "--algo", "parvagpu")
    assert without(result.to_dict(), TIMING_FIELDS) == without(report, TIMING_FIELDS)
