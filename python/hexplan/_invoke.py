"""Runs one hexplan command in-process: keyword arguments become the command's own flags (read
from the CLI's definitions, not from a list kept here) and its ``--json`` object comes back."""

import functools
import json
import os
from typing import Any, Dict, List, Optional, Tuple

from . import _core
from ._errors import InputError, raise_for


@functools.lru_cache(maxsize=None)
def command_options(command: str) -> Dict[str, dict]:
    """{flag name: record} for the non-positional options of ``hexplan COMMAND``."""
    return {o["name"]: o for o in _core.command_options(command) if not o["positional"]}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def flags(command: str, options: Dict[str, Any]) -> List[str]:
    """The command-line flags for keyword ``options`` (``time_limit=5`` -> ``--time-limit 5``;
    ``True`` for a flag that takes no value; ``None`` leaves an option out)."""
    known = command_options(command)
    args: List[str] = []
    for key, value in options.items():
        if value is None:
            continue
        name = key.replace("_", "-")
        spec = known.get(name)
        if spec is None:
            names = ", ".join(sorted(n.replace("-", "_") for n in known))
            raise InputError(f"{command}: unknown option '{key}' (options: {names})", 2)
        if spec["flag"]:
            if not isinstance(value, bool):
                raise InputError(f"{command}: option '{key}' is a flag: give True or False", 2)
            if value:
                args.append("--" + name)
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            args += ["--" + name, _text(v)]
    return args


def invoke(args: List[str]) -> Tuple[int, str]:
    """Runs ``hexplan ARGS``; raises the CLI's error as an exception. Returns (exit code, stdout):
    the code is 0, or 130 when a planner was interrupted after finding a plan."""
    code, out, message = _core.invoke([_text(a) for a in args])
    if code == 130 and out.strip():
        return code, out
    raise_for(code, message)
    return code, out


def invoke_json(args: List[str]) -> Tuple[int, Optional[dict]]:
    """``invoke`` with ``--json``: the parsed object."""
    code, out = invoke(list(args) + ["--json"])
    return code, json.loads(out) if out.strip() else None
