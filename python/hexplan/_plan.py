"""Plan: what ``hexplan.place`` returns. Its ``to_dict()`` is ``hexplan place --json``'s object;
the plan itself (each operator's device, the subgraphs in order) is the plan file ``place -o``
writes, kept at ``Plan.file`` for ``simulate`` and ``run``."""

import json
import os
import shutil
from typing import Any, Dict, List, Optional, Tuple


class Result(dict):
    """A command's ``--json`` object (a plain dict, equal to the CLI's), with what the call wrote
    besides as attributes (``trace``, ``svg``, ``outputs``, ``profile``: None when not asked)."""

    trace: Optional[dict] = None
    svg: Optional[str] = None
    outputs: Optional[dict] = None
    profile: Optional[dict] = None

    def to_dict(self) -> dict:
        """The object as a plain dict (what ``--json`` prints)."""
        return json.loads(json.dumps(self))


class Plan:
    """A placement: each operator's device, the subgraphs, latency, lower bound, status, gap."""

    def __init__(self, report: dict, file: Optional[str], keep: Any = None,
                 user_file: bool = False) -> None:
        self._report = report
        self._keep = keep  # the temporary directory holding the plan file (and its model)
        self.file: Optional[str] = file
        self._user_file = user_file
        self.plan: dict = {}
        if file is not None:
            with open(file) as f:
                self.plan = json.load(f)

    # The `place --json` fields.
    @property
    def algo(self) -> str:
        return self._report["algo"]

    @property
    def status(self) -> str:
        """optimal, feasible, time_limit, warm_start, heuristic or interrupted (or bound for the
        critical-path bound)."""
        return self._report["status"]

    @property
    def interrupted(self) -> bool:
        return self.status == "interrupted"

    @property
    def latency_ms(self) -> float:
        """The plan's simulated latency."""
        return self._report["latency_ms"]

    @property
    def lower_bound_ms(self) -> Optional[float]:
        return self._report.get("lower_bound_ms")

    @property
    def gap(self) -> Optional[float]:
        """The solver's relative gap (exact planners), else None."""
        return self._report.get("gap")

    @property
    def devices(self) -> List[dict]:
        """Per device: name, compute_ms, peak_memory_bytes, memory_capacity_bytes."""
        return self._report.get("devices", [])

    @property
    def subgraphs(self) -> List[Tuple[str, List[str]]]:
        """(device, [operator, ...]) in each device's execution order."""
        return [(d["device"], list(s)) for d in self.plan.get("devices", [])
                for s in d.get("subgraphs", [])]

    @property
    def operators(self) -> Dict[str, str]:
        """{operator name: device name}."""
        return {op: device for device, ops in self.subgraphs for op in ops}

    def to_dict(self) -> dict:
        """``hexplan place --json``'s object (with ``plan`` only when ``output=`` was given)."""
        out = json.loads(json.dumps(self._report))
        if not self._user_file:
            out.pop("plan", None)
        return out

    def save(self, path: str) -> None:
        """Copies the plan file to ``path`` (a zoo model's plan works from anywhere; for a model
        given as a file or bytes, prefer ``place(..., output=path)``)."""
        if self.file is None:
            raise ValueError("a bound has no plan file")
        shutil.copyfile(self.file, path)

    def model_args(self) -> List[str]:
        """MODEL and its options as ``hexplan run`` needs them, from the plan file."""
        m = self.plan["model"]
        spec = m["spec"]
        beside = os.path.join(os.path.dirname(os.path.abspath(self.file)), spec)
        if not os.path.isabs(spec) and os.path.exists(beside):
            spec = beside
        args = [spec, "--batch", str(m["batch"]), "--seq", str(m["seq"]), "--dtype", m["dtype"]]
        for key, flag in (("image_size", "--image"), ("lstm_layers", "--layers"),
                          ("lstm_io", "--io")):
            if m.get(key):
                args += [flag, str(m[key])]
        if m.get("batchnorm"):
            args += ["--batchnorm", m["batchnorm"]]
        return args

    def __repr__(self) -> str:
        return (f"Plan(algo={self.algo!r}, status={self.status!r}, "
                f"latency_ms={self.latency_ms:.6g}, lower_bound_ms={self.lower_bound_ms})")
