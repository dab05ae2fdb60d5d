"""hexplan from Python: plan, simulate and run deep-learning inference on heterogeneous hardware.

Every function runs the ``hexplan`` command of its name in this process (the same code, options,
defaults and messages as the CLI) and returns its ``--json`` object; planner options are keyword
arguments (``hexplan.place("resnet50", "dgx-a100", algo="moirai", time_limit=5)``). Errors raise
``InputError`` (what the CLI exits 2 on) or ``InternalError`` (exit 1), with the CLI's message.
The walk-through is docs/python.md.
"""

from ._api import compare, models, options, place, planners, profile, run, share, simulate, tp
from ._errors import HexplanError, InputError, InternalError
from ._plan import Plan, Result

__version__ = "0.1.0"

__all__ = [
    "HexplanError", "InputError", "InternalError", "Plan", "Result", "compare", "models",
    "options", "place", "planners", "profile", "run", "share", "simulate", "tp",
]


def _docstrings_from_stub() -> None:
    """Gives each function and class the docstring written in __init__.pyi (one place for them)."""
    import ast
    import os

    stub = os.path.join(os.path.dirname(__file__), "__init__.pyi")
    try:
        with open(stub) as f:
            tree = ast.parse(f.read())
    except OSError:
        return
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in globals():
            doc = ast.get_docstring(node)
            if doc:
                try:
                    globals()[node.name].__doc__ = doc
                except (AttributeError, TypeError):
                    pass


_docstrings_from_stub()
