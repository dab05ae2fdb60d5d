"""pytest set-up: the package and CLI of one build (HEXPLAN_BUILD, default build/release; `make
python` builds both), so that these tests check the Python API against the CLI beside it."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("HEXPLAN_BUILD", os.path.join(ROOT, "build", "release")))
sys.path.insert(0, os.path.join(BUILD, "python"))

# Fields that measure the run, not the answer: left out when comparing with the CLI.
TIMING_FIELDS = {"planning_time_s", "latency_ms", "latency_ms_median", "latency_ms_p95",
                 "simulated_error", "scheduling_time_ms"}


class Cli:
    """The `hexplan` binary of the same build."""

    path = os.path.join(BUILD, "hexplan")

    def __call__(self, *args, cwd=None):
        """Runs hexplan ARGS; returns (exit code, stdout, stderr)."""
        p = subprocess.run([self.path] + [str(a) for a in args], capture_output=True, text=True,
                           cwd=cwd, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def json(self, *args, cwd=None):
        code, out, err = self(*args, "--json", cwd=cwd)
        assert code == 0, err
        return json.loads(out)

    def error(self, *args):
        """The message of a failing command (after "hexplan: error: ") and its exit code."""
        code, _, err = self(*args)
        first = err.splitlines()[0]
        prefix = "hexplan: error: "
        assert first.startswith(prefix), err
        return first[len(prefix):], code


@pytest.fixture(scope="session")
def cli():
    assert os.path.exists(Cli.path), f"no CLI at {Cli.path}: build it (make python)"
    return Cli()


def without(d, fields):
    """`d` without the timing fields, at any depth."""
    if isinstance(d, dict):
        return {k: without(v, fields) for k, v in d.items() if k not in fields}
    if isinstance(d, list):
        return [without(v, fields) for v in d]
    return d


ONNX_NODE_DATA = "/usr/share/libonnx-testdata/data/node"
