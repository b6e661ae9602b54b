"""Tests for minigrad.demo: it learns, it is reproducible, and it keeps stderr clean.

The full demo takes a while on a slow machine, so it runs twice in all: once
with an ordinary (non-terminal) stderr and once with a terminal-like one; the
second run is also the reproducibility check.
"""

from __future__ import annotations

import gc
import io
import re
from collections.abc import Iterator

import pytest

from minigrad import demo
from minigrad._gc import gc_paused


class TtyStringIO(io.StringIO):
    """A StringIO that says it is a terminal, as a console's stderr does."""

    def isatty(self) -> bool:
        return True


class Run:
    def __init__(self, status: int, out: str, err: str) -> None:
        self.status = status
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


def _run(err: io.StringIO, **kwargs: int) -> Run:
    out = io.StringIO()
    status = demo.run(out, err, **kwargs)
    return Run(status, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def plain() -> Run:
    return _run(io.StringIO())


@pytest.fixture(scope="module")
def on_tty() -> Run:
    return _run(TtyStringIO())


def test_the_demo_reaches_the_target_accuracy(plain: Run) -> None:
    assert plain.status == 0
    accuracy = float(plain.field("accuracy").rstrip("%"))
    assert accuracy >= 95.0
    steps = int(plain.field("steps").split()[0])
    assert 1 <= steps <= 100
    assert float(plain.field("loss")) < 0.1


def test_stdout_is_key_value_lines_with_timing_last(plain: Run) -> None:
    keys = [line.split(":", 1)[0] for line in plain.out.splitlines()]
    assert keys == ["data", "model", "objective", "steps", "loss", "accuracy", "seconds"]
    assert plain.field("model") == "MLP(2, [16, 16, 1], nonlin='relu'), 337 parameters"
    assert plain.field("data") == "two moons, 100 points, noise 0.1, seed 0"
    assert float(plain.field("seconds")) >= 0.0


def test_nothing_goes_to_a_stderr_that_is_not_a_terminal(plain: Run) -> None:
    assert plain.err == ""


def test_stdout_is_the_same_every_run_apart_from_timing(plain: Run, on_tty: Run) -> None:
    assert on_tty.status == plain.status
    assert on_tty.without_timing() == plain.without_timing()


def test_progress_goes_to_a_terminal_stderr(plain: Run, on_tty: Run) -> None:
    lines = on_tty.err.splitlines()
    assert lines, "no progress on a terminal"
    pattern = re.compile(r"^step +(\d+)  loss (\d+\.\d{4})  accuracy +(\d+\.\d)%$")
    matches = [pattern.match(line) for line in lines]
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
    assert re.fullmatch(
        r"demo: training accuracy \d+\.\d% is below the 95% target after 1 step\n", short.err
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
    ],
)
def test_bad_arguments(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(error, match=message):
        demo.run(out, err, **kwargs)  # type: ignore[arg-type]
    assert out.getvalue() == ""
