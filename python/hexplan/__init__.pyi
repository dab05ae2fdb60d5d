"""hexplan from Python: plan, simulate and run deep-learning inference on heterogeneous hardware.

Types and docstrings of the API (the functions' runtime docstrings are read from here). Every
function runs the ``hexplan`` command of its name in-process and takes that command's options as
keyword arguments: ``time_limit=5`` is ``--time-limit 5``, ``True`` gives a flag that takes no
value, ``None`` leaves an option out; ``hexplan.options(command)`` lists them.
"""

import os
from typing import IO, Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import numpy as np

Model = Union[str, os.PathLike[str], bytes, bytearray, memoryview, IO[bytes]]
Cluster = Union[str, os.PathLike[str], Mapping[str, Any]]
PlanLike = Union["Plan", str, os.PathLike[str]]

__version__: str

class HexplanError(Exception):
    """An error a hexplan command reported: ``message`` (the CLI's) and ``exit_code``."""

    message: str
    exit_code: int

class InputError(HexplanError, ValueError):
    """Bad input the user can fix (the CLI exits 2): a bad file, an unknown name or option, a
    value out of range, an infeasible request."""

class InternalError(HexplanError, RuntimeError):
    """hexplan's own bug (the CLI exits 1)."""

class Result(Dict[str, Any]):
    """A command's ``--json`` object (a plain dict equal to the CLI's) and what the call wrote
    besides: ``trace`` (Chrome trace JSON), ``svg`` (SVG text), ``outputs`` ({name: ndarray}),
    ``profile`` (the profile JSON); None when not asked for."""

    trace: Optional[Dict[str, Any]]
    svg: Optional[str]
    outputs: Optional[Dict[str, np.ndarray]]
    profile: Optional[Dict[str, Any]]
    def to_dict(self) -> Dict[str, Any]:
        """The object as a plain dict."""

class Plan:
    """A placement from ``place``. ``to_dict()`` is ``hexplan place --json``'s object; ``plan``
    is the plan file (docs/formats.md, "Plan JSON") kept at ``file``."""

    file: Optional[str]
    plan: Dict[str, Any]
    @property
    def algo(self) -> str: ...
    @property
    def status(self) -> str:
        """optimal, feasible, time_limit, warm_start, heuristic or interrupted."""
    @property
    def interrupted(self) -> bool:
        """Ctrl-C stopped the planner; this is the best valid plan it had."""
    @property
    def latency_ms(self) -> float:
        """The plan's simulated latency."""
    @property
    def lower_bound_ms(self) -> Optional[float]:
        """The lower bound on any plan's latency."""
    @property
    def gap(self) -> Optional[float]:
        """The solver's relative gap (exact planners), else None."""
    @property
    def devices(self) -> List[Dict[str, Any]]:
        """Per device: name, compute_ms, peak_memory_bytes, memory_capacity_bytes."""
    @property
    def subgraphs(self) -> List[Tuple[str, List[str]]]:
        """(device, [operator, ...]) in each device's execution order."""
    @property
    def operators(self) -> Dict[str, str]:
        """{operator: device}."""
    def to_dict(self) -> Dict[str, Any]:
        """``hexplan place --json``'s object (``plan`` only when ``output=`` was given)."""
    def save(self, path: str) -> None:
        """Copies the plan file to ``path``."""
    def model_args(self) -> List[str]:
        """MODEL and its flags as ``hexplan run`` takes them, from the plan file."""

def place(model: Model, cluster: Optional[Cluster] = None, algo: str = "single", *,
          output: Optional[str] = None, **options: Any) -> Plan:
    """Plans ``model`` on ``cluster`` with planner ``algo`` and simulates the plan
    (``hexplan place --json``), with the CLI's defaults.

    model: a zoo name (``hexplan.models()``), an ONNX/JSON/workload file, or ONNX bytes (a
    ``BytesIO`` from ``torch.onnx.export`` or its ``getvalue()``). cluster: a preset, a cluster
    file, or a mapping in the cluster file's format (docs/formats.md). options: ``place``'s flags:
    the shared planner options (``time_limit``, ``seed``, ``gap``, ``threads``, ``coarsen``,
    ``warm``, ...), each planner's own (``hexplan.planners()``), the model's (``batch``, ``seq``,
    ``dtype``, ``image``, ...). output: also write the plan file there (a model or cluster given
    from Python is then written into ``<output without .json>.inputs/``, which the plan names).

    Releases the GIL while planning. Ctrl-C stops the planner: the best valid plan so far comes
    back with ``status == "interrupted"``; with none yet, KeyboardInterrupt is raised.
    """

def compare(model: Model, cluster: Optional[Cluster] = None,
            algos: Optional[Union[str, Iterable[str]]] = None, **options: Any) -> Result:
    """Runs several planners (default: all) on one model (``hexplan compare --json``): ``results``
    holds one ``place --json`` object per planner."""

def simulate(plan: PlanLike, *, trace: Union[bool, str, None] = None,
             svg: Union[bool, str, None] = None, **options: Any) -> Result:
    """Simulates a plan (``hexplan simulate --json``). trace/svg: True returns the Chrome trace
    (``Result.trace``) and the SVG timeline (``Result.svg``); a path writes it there too."""

def run(plan: PlanLike, inputs: Optional[Mapping[str, np.ndarray]] = None, *,
        model: Optional[Model] = None, random_input: Optional[bool] = None,
        output: Optional[str] = None, trace: Union[bool, str, None] = None,
        **options: Any) -> Result:
    """Executes a plan on this machine's CPU core groups (``hexplan run --json``): inputs by name
    as numpy arrays (default: random inputs from ``seed``), outputs in ``Result.outputs`` as
    numpy arrays (bit-equal to the ``.npy`` files ``hexplan run --output`` writes). model: the
    plan's model unless given. options: ``seed``, ``repeat``, ``warmup``, ``copy_order``, ..."""

def profile(model: Model, cluster: Optional[Cluster] = None, *, output: Optional[str] = None,
            **options: Any) -> Result:
    """Measures every operator on this machine's CPU core groups (``hexplan profile --json``);
    the profile itself is ``Result.profile`` (and written to ``output`` when given, for
    ``place(..., profile=path)``)."""

def tp(model: str, cluster: Optional[Cluster] = None, **options: Any) -> Result:
    """Tensor-parallel LLM inference planning (``hexplan tp --json``): groups, communication
    volume, latency and the per-node plan."""

def share(**options: Any) -> Result:
    """GPU sharing (MIG + MPS) for DNN services (``hexplan share --json``), on the ParvaGPU data
    set by default."""

def models() -> List[str]:
    """The zoo's model names (``hexplan models``)."""

def planners() -> Dict[str, List[Dict[str, Any]]]:
    """{planner: its own options [{name, type, description, default, range, choices}]} from the
    planner registry (what ``hexplan planners`` prints)."""

def options(command: str) -> List[Dict[str, Any]]:
    """The options of ``hexplan COMMAND`` as the CLI defines them: [{name, positional, flag,
    repeatable, required, description, default}]."""
