"""Errors: exceptions of the CLI's kind (exit 2 -> InputError) carrying the CLI's message."""

import os
import signal
import threading
import time

import pytest

import hexplan


def test_unknown_model_message(cli):
    message, code = cli.error("place", "resnet18", "--cluster", "sortinghat-v100")
    assert code == 2
    with pytest.raises(hexplan.InputError) as e:
        hexplan.place("resnet18", "sortinghat-v100")
    assert str(e.value) == message and e.value.exit_code == 2
    assert isinstance(e.value, ValueError)


def test_bad_option_value_message(cli):
    message, _ = cli.error("place", "resnet50", "--cluster", "sortinghat-v100", "--algo",
                           "efficientmip", "--q", "0")
    with pytest.raises(hexplan.InputError) as e:
        hexplan.place("resnet50", "sortinghat-v100", algo="efficientmip", q=0)
    assert e.value.message == message


def test_option_of_another_planner(cli):
    message, _ = cli.error("place", "resnet50", "--cluster", "sortinghat-v100", "--q", "3")
    with pytest.raises(hexplan.InputError, match="--q") as e:
        hexplan.place("resnet50", "sortinghat-v100", q=3)
    assert e.value.message == message


def test_unknown_keyword():
    with pytest.raises(hexplan.InputError, match="unknown option 'no_such_option'"):
        hexplan.place("resnet50", "sortinghat-v100", no_such_option=1)


def test_bad_files(cli, tmp_path):
    missing = tmp_path / "missing.onnx"
    message, _ = cli.error("place", missing, "--cluster", "sortinghat-v100")
    with pytest.raises(hexplan.InputError) as e:
        hexplan.place(str(missing), "sortinghat-v100")
    assert e.value.message == message
    with pytest.raises(hexplan.InputError, match="model.onnx"):
        hexplan.place(b"not an onnx model", "sortinghat-v100")
    with pytest.raises(hexplan.InputError):
        hexplan.simulate(tmp_path / "no-plan.json")


def test_run_input_errors():
    plan = hexplan.place("lstm", "local-cpu", layers=1, io=8)
    with pytest.raises(hexplan.InputError, match="--input"):
        hexplan.run(plan, {"no_such_input": [1.0]}, random_input=False)


def test_ctrl_c_returns_the_best_plan():
    # An exact solve with a minute's limit, Ctrl-C after 1.5 s: the GIL is released (the timer
    # thread runs) and the planner stops with its best valid plan, marked interrupted.
    timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        plan = hexplan.place("mobilenet_v2", "sortinghat-v100", algo="efficientmip",
                             time_limit=60, quiet=True)
    finally:
        timer.cancel()
    assert plan.interrupted and plan.latency_ms > 0
    assert time.monotonic() - start < 20
    # The next call is not affected by the earlier stop.
    assert hexplan.place("resnet50", "sortinghat-v100", algo="heft").status == "heuristic"


def test_ctrl_c_outside_a_planner_raises_keyboard_interrupt():
    # Python's own handler keeps a signal that arrives while no planner runs: KeyboardInterrupt
    # when the call returns.
    # Installed here: a Python started with SIGINT ignored (a background job of a non-interactive
    # shell, as `make test &` is) has no handler of its own, and the signal would just be dropped.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            hexplan.models()
    finally:
        signal.signal(signal.SIGINT, previous)
