"""The functions of ``import hexplan``: each runs the CLI command of its name in-process with the
CLI's defaults, takes that command's options as keyword arguments (``time_limit=5`` is
``--time-limit 5``) and returns its ``--json`` object."""

import json
import os
import tempfile
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from . import _core
from ._errors import InputError
from ._inputs import Cluster, Model, cluster_spec, model_spec
from ._invoke import command_options, flags, invoke, invoke_json
from ._plan import Plan, Result

PlanLike = Union[Plan, str, "os.PathLike[str]"]


def _workdir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="hexplan-")


def _cluster_flag(cluster: Optional[Cluster], workdir: str) -> List[str]:
    spec = cluster_spec(cluster, workdir)
    return [] if spec is None else ["--cluster", spec]


def place(model: Model, cluster: Optional[Cluster] = None, algo: str = "single", *,
          output: Optional[str] = None, **options: Any) -> Plan:
    keep = _workdir()
    # With output=, a model or cluster given from Python is written beside the plan file (the
    # plan names them), so that the plan stays usable after this process.
    inputs_dir = keep.name
    if output is not None:
        inputs_dir = os.path.splitext(os.fspath(output))[0] + ".inputs"
        if _from_python(model) or isinstance(cluster, Mapping):
            os.makedirs(inputs_dir, exist_ok=True)
    args = ["place", model_spec(model, inputs_dir), "--algo", algo]
    args += _cluster_flag(cluster, inputs_dir)
    file = None
    if algo != "critical-path":
        file = os.fspath(output) if output is not None else os.path.join(keep.name, "plan.json")
        args += ["-o", file]
    _, report = invoke_json(args + flags("place", options))
    return Plan(report, file, keep, user_file=output is not None)


def _from_python(model: Model) -> bool:
    return isinstance(model, (bytes, bytearray, memoryview)) or hasattr(model, "getvalue")


def compare(model: Model, cluster: Optional[Cluster] = None,
            algos: Optional[Iterable[str]] = None, **options: Any) -> Result:
    with _workdir() as work:
        args = ["compare", model_spec(model, work)] + _cluster_flag(cluster, work)
        if algos is not None:
            args += ["--algos", algos if isinstance(algos, str) else ",".join(algos)]
        _, out = invoke_json(args + flags("compare", options))
        return Result(out)


def _plan_file(plan: PlanLike) -> str:
    if isinstance(plan, Plan):
        if plan.file is None:
            raise InputError("a critical-path bound has no plan to simulate or run", 2)
        return plan.file
    return os.fspath(plan)


def _output_path(value: Union[bool, str, None], work: str, name: str) -> Optional[str]:
    if value is None or value is False:
        return None
    return os.path.join(work, name) if value is True else os.fspath(value)


def simulate(plan: PlanLike, *, trace: Union[bool, str, None] = None,
             svg: Union[bool, str, None] = None, **options: Any) -> Result:
    with _workdir() as work:
        trace_path = _output_path(trace, work, "trace.json")
        svg_path = _output_path(svg, work, "timeline.svg")
        args = ["simulate", _plan_file(plan)]
        if trace_path:
            args += ["--trace", trace_path]
        if svg_path:
            args += ["--svg", svg_path]
        _, out = invoke_json(args + flags("simulate", options))
        result = Result(out)
        if trace_path:
            with open(trace_path) as f:
                result.trace = json.load(f)
        if svg_path:
            with open(svg_path) as f:
                result.svg = f.read()
        return result


def _write_inputs(inputs: Mapping[str, Any], work: str) -> List[str]:
    import numpy as np

    args = []
    for i, (name, value) in enumerate(inputs.items()):
        path = os.path.join(work, f"input{i}.npy")
        np.save(path, np.asarray(value))
        args += ["--input", f"{name}={path}"]
    return args


def _read_outputs(out: dict, ours: bool) -> Dict[str, Any]:
    import numpy as np

    arrays = {}
    for o in out.get("outputs", []):
        if "file" in o:
            arrays[o["name"]] = np.load(o["file"])
            if ours:
                del o["file"]
    return arrays


def run(plan: PlanLike, inputs: Optional[Mapping[str, Any]] = None, *,
        model: Optional[Model] = None, random_input: Optional[bool] = None,
        output: Optional[str] = None, trace: Union[bool, str, None] = None,
        **options: Any) -> Result:
    with _workdir() as work:
        file = _plan_file(plan)
        if model is None:
            shown = plan if isinstance(plan, Plan) else Plan({}, file)
            model_args = shown.model_args()
        else:
            model_args = [model_spec(model, work)]
        out_path = os.fspath(output) if output is not None else os.path.join(work, "out.npy")
        trace_path = _output_path(trace, work, "trace.json")
        args = ["run"] + model_args + ["--plan", file, "--output", out_path]
        args += _write_inputs(inputs or {}, work)
        if random_input is None:
            random_input = not inputs  # random values for the inputs not given
        if random_input:
            args.append("--random-input")
        if trace_path:
            args += ["--trace", trace_path]
        _, out = invoke_json(args + flags("run", options))
        result = Result(out)
        result.outputs = _read_outputs(result, ours=output is None)
        if trace_path:
            with open(trace_path) as f:
                result.trace = json.load(f)
        return result


def profile(model: Model, cluster: Optional[Cluster] = None, *, output: Optional[str] = None,
            **options: Any) -> Result:
    with _workdir() as work:
        path = os.fspath(output) if output is not None else os.path.join(work, "profile.json")
        args = ["profile", model_spec(model, work), "-o", path] + _cluster_flag(cluster, work)
        _, out = invoke_json(args + flags("profile", options))
        result = Result(out)
        if path.endswith(".json"):
            with open(path) as f:
                result.profile = json.load(f)
        return result


def tp(model: str, cluster: Optional[Cluster] = None, **options: Any) -> Result:
    if "report" in options:
        # The paper's fixed sweep writes files and prints no JSON, and takes no model or cluster.
        raise ValueError("tp(report=...): the Fig. 8/9 sweep is the command line's "
                         "`hexplan tp --report DIR`, not a plan of one model on one cluster")
    with _workdir() as work:
        args = ["tp", "--model", model] + _cluster_flag(cluster, work)
        _, out = invoke_json(args + flags("tp", options))
        return Result(out)


def share(**options: Any) -> Result:
    _, out = invoke_json(["share"] + flags("share", options))
    return Result(out)


def models() -> List[str]:
    """The zoo's model names (``hexplan models``)."""
    _, out = invoke(["models"])
    return [line.split()[0] for line in out.splitlines()[1:] if line.strip()]


def planners() -> Dict[str, List[dict]]:
    return _core.planners()


def options(command: str) -> List[dict]:
    if not command_options(command):
        raise InputError(f"unknown command '{command}'", 2)
    return list(command_options(command).values())
