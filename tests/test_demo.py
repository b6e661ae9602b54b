"""Tests for minigrad.demo: it learns, is reproducible, shows progress and returns its results.

The full demo takes a while on a slow machine, so it runs twice in all: once
with an ordinary (non-terminal) stderr and once with a terminal-like one; the
second run is also the reproducibility check.
"""

from __future__ import annotations

import gc
import io
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from minigrad.cli import main
from minigrad.core._gc import gc_paused
from minigrad.teach import demo
from minigrad.teach.data import make_moons
from minigrad.teach.nn import MLP


class TtyStringIO(io.StringIO):
    """A StringIO that says it is a terminal, as a console's stderr does."""

    def isatty(self) -> bool:
        return True


class Run:
    def __init__(self, result: demo.Result, out: str, err: str) -> None:
        self.result = result
        # The exit status `python -m minigrad demo` gives for this run.
        self.status = 0 if result.reached_target else 1
        self.out = out
        self.err = err

    def field(self, key: str) -> str:
        found = re.findall(rf"^{key}: (.*)$", self.out, flags=re.MULTILINE)
        assert len(found) == 1, f"{key!r} is not on exactly one line of {self.out!r}"
        return str(found[0])

    def without_timing(self) -> list[str]:
        lines = self.out.splitlines()
        assert lines[-1].startswith("seconds: ")
        return lines[:-1]


PROGRESS = re.compile(r"^step +(\d+)  loss (\d+\.\d{4})  accuracy +(\d+\.\d)%$")


def _run(err: io.StringIO, **kwargs: Any) -> Run:
    out = io.StringIO()
    result = demo.run(out, err, **kwargs)
    return Run(result, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def plain() -> Run:
    return _run(io.StringIO())


@pytest.fixture(scope="module")
def on_tty() -> Run:
    return _run(TtyStringIO())


@pytest.fixture(scope="module")
def eager() -> Run:
    return _run(io.StringIO(), compiled=False)


def test_eager_and_compiled_runs_train_the_same(plain: Run, eager: Run) -> None:
    # The compiled loss gives eager's numbers: the same steps, losses and
    # accuracies (to the 1e-12 the compiler promises), the same trained model.
    assert eager.field("engine") == "eager"
    assert eager.without_timing()[4:] == plain.without_timing()[4:]
    assert eager.err == plain.err
    losses = zip(eager.result.history.losses, plain.result.history.losses, strict=True)
    assert all(abs(a - b) <= 1e-12 * abs(a) for a, b in losses)
    assert eager.result.history.accuracies == plain.result.history.accuracies


def test_the_demo_reaches_the_target_accuracy(plain: Run) -> None:
    assert plain.status == 0
    accuracy = float(plain.field("accuracy").rstrip("%"))
    assert accuracy >= 95.0
    steps = int(plain.field("steps").split()[0])
    assert 1 <= steps <= 100
    assert float(plain.field("loss")) < 0.1


def test_stdout_is_key_value_lines_with_timing_last(plain: Run) -> None:
    keys = [line.split(":", 1)[0] for line in plain.out.splitlines()]
    assert keys == ["data", "model", "objective", "engine", "steps", "loss", "accuracy", "seconds"]
    assert plain.field("engine") == "minigrad.compile"
    assert plain.field("model") == "MLP(2, [16, 16, 1], nonlin='relu'), 337 parameters"
    assert plain.field("data") == "two moons, 100 points, noise 0.1, seed 0"
    assert float(plain.field("seconds")) >= 0.0


def test_progress_goes_to_a_stderr_that_is_not_a_terminal_too(plain: Run, on_tty: Run) -> None:
    # `!python -m minigrad demo` in a notebook, or a log file: the same plain lines.
    assert plain.err
    assert plain.err == on_tty.err
    assert "\r" not in plain.err


def test_stdout_is_the_same_every_run_apart_from_timing(plain: Run, on_tty: Run) -> None:
    assert on_tty.status == plain.status
    assert on_tty.without_timing() == plain.without_timing()


def test_progress_goes_to_a_terminal_stderr(plain: Run, on_tty: Run) -> None:
    lines = on_tty.err.splitlines()
    assert lines, "no progress on a terminal"
    matches = [PROGRESS.match(line) for line in lines]
    assert all(matches), lines
    steps = [int(m[1]) for m in matches if m]
    assert steps[0] == 0
    assert steps == sorted(steps)
    # The last progress line is the final state that stdout reports.
    last = matches[-1]
    assert last is not None
    assert f"{last[3]}%" == plain.field("accuracy")
    assert last[2] == plain.field("loss")
    assert str(steps[-1]) == plain.field("steps").split()[0]
    # No colour codes: none are used, so NO_COLOR holds.
    assert "\x1b" not in on_tty.err


def test_a_run_too_short_to_learn_fails_loudly() -> None:
    # An error is not progress: it goes to stderr even when that is no terminal.
    short = _run(io.StringIO(), steps=1)
    assert short.status == 1
    assert short.field("steps") == "1 (stopped at the step limit)"
    *progress, last = short.err.splitlines(keepends=True)
    assert [m[1] for m in map(PROGRESS.match, progress) if m] == ["0", "1"]
    assert re.fullmatch(
        r"demo: training accuracy \d+\.\d% is below the 95% target after 1 step\n", last
    )


@pytest.fixture
def gc_state() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.usefixtures("gc_state")
@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_left_as_it_was(enabled: bool) -> None:
    if enabled:
        gc.enable()
    else:
        gc.disable()
    _run(io.StringIO(), steps=1)
    assert gc.isenabled() is enabled


@pytest.mark.usefixtures("gc_state")
@pytest.mark.parametrize("enabled", [True, False])
def test_gc_paused_turns_the_collector_off_and_back_as_it_was_even_on_an_error(
    enabled: bool,
) -> None:
    # The demo and the benchmarks share this one context manager.
    if enabled:
        gc.enable()
    else:
        gc.disable()
    inside: list[bool] = []
    with pytest.raises(KeyError, match="raised inside"), gc_paused():
        inside.append(gc.isenabled())
        raise KeyError("raised inside")
    assert inside == [False]
    assert gc.isenabled() is enabled


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seed": "0"}, TypeError, "demo: seed must be an int, got str '0'"),
        ({"seed": 1.5}, TypeError, "demo: seed must be an int, got float 1.5"),
        ({"steps": 0}, ValueError, "demo: steps must be >= 1, got 0"),
        ({"steps": True}, TypeError, "demo: steps must be an int, got bool True"),
        ({"every": -1}, ValueError, r"demo: every must be >= 0 \(0 for no progress\), got -1"),
        ({"every": 2.0}, TypeError, "demo: every must be an int, got float 2.0"),
        ({"compiled": 1}, TypeError, "demo: compiled must be a bool, got int 1"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(error, match=message):
        demo.run(out, err, **kwargs)  # type: ignore[arg-type]
    assert out.getvalue() == ""


def test_run_returns_the_trained_model_and_its_history(plain: Run) -> None:
    model, history = plain.result
    assert isinstance(model, MLP)
    assert repr(model) == "MLP(2, [16, 16, 1], nonlin='relu')"
    steps = int(plain.field("steps").split()[0])
    # One entry per step before its update, and one for the trained model.
    assert len(history.losses) == len(history.accuracies) == steps + 1
    assert f"{history.losses[-1]:.4f}" == plain.field("loss")
    assert f"{history.accuracies[-1]:.1%}" == plain.field("accuracy")
    assert history.losses[-1] < history.losses[0]
    assert all(0.0 <= a <= 1.0 for a in history.accuracies)
    # The model returned is the trained one: it classifies the demo's data
    # (drawn first from the seeded generator) as the history says.
    points, labels = make_moons(100, noise=0.1, rng=random.Random(0))
    right = sum((model.predict(p)[0] > 0) == (y > 0) for p, y in zip(points, labels, strict=True))
    assert right / len(labels) == history.accuracies[-1]


def test_the_history_matches_the_progress_lines(on_tty: Run) -> None:
    history = on_tty.result.history
    for m in map(PROGRESS.match, on_tty.err.splitlines()):
        assert m is not None
        step = int(m[1])
        assert f"{history.losses[step]:.4f}" == m[2]
        assert f"{history.accuracies[step]:.1%}" == f"{m[3]}%"


def test_every_sets_the_steps_between_progress_lines() -> None:
    run = _run(io.StringIO(), steps=7, every=3)
    steps = [int(m[1]) for m in map(PROGRESS.match, run.err.splitlines()) if m]
    assert steps == [0, 3, 6, 7]  # and the final state
    quiet = _run(io.StringIO(), steps=2, every=0)
    assert [line for line in quiet.err.splitlines() if PROGRESS.match(line)] == []
    assert quiet.err.startswith("demo: training accuracy")


def test_the_command_exits_1_below_the_target_and_shows_progress(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--steps", "2", "--every", "1"]) == 1
    captured = capsys.readouterr()
    steps = [int(m[1]) for m in map(PROGRESS.match, captured.err.splitlines()) if m]
    assert steps == [0, 1, 2]
    assert "steps: 2 (stopped at the step limit)" in captured.out


@pytest.mark.parametrize("argv", [["--steps", "0"], ["--every", "-1"]])
def test_the_command_refuses_bad_numbers(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.err == "minigrad demo: --steps must be >= 1 and --every >= 0\n"
    assert captured.out == ""
