"""The harness: one clock, timed runs, paired ratios, Markdown tables and targets.

Nothing here knows an engine or a workload; ``sections.py`` registers those.
"""

from __future__ import annotations

import contextlib
import gc
import operator
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The clocks ``--clock`` chooses from; CPU time by default (see the README).
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
_clock = CLOCKS["cpu"]


def use_clock(name: str) -> None:
    """Make every timing that follows read the clock ``name`` (a key of CLOCKS)."""
    global _clock
    _clock = CLOCKS[name]


def clock_name() -> str:
    """The clock's Python name, such as ``time.process_time``."""
    return f"time.{_clock.__name__}"


def stopwatch(run: Callable[[], T]) -> tuple[T, float]:
    """``run()``'s result and the seconds it took; the caller drops the result, untimed."""
    t0 = _clock()
    result = run()
    return result, _clock() - t0


# Timing.

#: A case: a name and ``prepare() -> run``; only ``run()`` is timed.
Case = tuple[str, Callable[[], Callable[[], object]]]


@dataclass
class Timing:
    """The times of one case; ``failure`` names what it raised, if it did."""

    times: list[float] = field(default_factory=list)
    failure: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def over(self, base: Timing) -> float:
        """This case's time relative to ``base``'s, paired round by round."""
        return paired_ratio(self.times, base.times)


def paired_ratio(times: Sequence[float], base: Sequence[float]) -> float:
    """The median over the rounds of ``times[i] / base[i]``.

    Two cases timed in the same round ran seconds apart, in the same state of
    the machine, whose speed drifts over minutes: the median of those ratios is
    steady where the ratio of the two medians is not.

    >>> paired_ratio([2.0, 9.0, 4.0], [1.0, 3.0, 4.0])  # ratios 2, 3 and 1
    2.0
    """
    return statistics.median(t / b for t, b in zip(times, base, strict=True))


def progress(msg: str) -> None:
    if sys.stderr.isatty():
        print(f"  ... {msg}", file=sys.stderr, flush=True)


def timed_runs(
    cases: Sequence[Case], reps: int, *, warm_up: bool = False, label: str = ""
) -> dict[str, Timing]:
    """Run each case ``reps`` times, interleaved: one round runs every case once.

    Only ``run()`` is timed. ``gc.collect()`` runs, untimed, before each run,
    so that no case pays for the garbage of another, and the result is dropped
    after the clock stops. The collector stays on while the clock runs. With
    ``warm_up``, each round runs every case once untimed right before its timed
    run, which then pays for collecting that run's garbage, as in a training
    loop. A RecursionError is recorded as the case's failure, not raised, and
    the case is not run again.
    """
    out = {name: Timing() for name, _ in cases}
    for r in range(reps):
        for name, prepare in cases:
            timing = out[name]
            if timing.failure:
                continue
            if label:
                progress(f"{label}, round {r + 1}/{reps}: {name}")
            run = prepare()
            gc.collect()
            try:
                if warm_up:
                    run()
                result, seconds = stopwatch(run)
            except RecursionError:
                timing.failure = "RecursionError"
                continue
            timing.times.append(seconds)
            del result, run
    return out


# What the sections found, and the targets read from it.


@dataclass
class Measurements:
    """The numbers the sections found, by key, and why a number is missing."""

    numbers: dict[str, float] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Target:
    """A promise about one measured number: ``numbers[key] <op> bound``.

    ``show`` writes the measured cell from all the numbers (it may add
    others, such as the floor row's figure); by default the ratio itself.
    """

    name: str
    key: str
    op: str
    bound: float
    show: Callable[[Mapping[str, float]], str] | None = None

    def row(self, found: Measurements) -> list[str]:
        """The target's row: name, what was measured, and whether it is met."""
        if self.key not in found.numbers:
            return [self.name, found.missing.get(self.key, "not measured"), "not measured"]
        value = found.numbers[self.key]
        shown = self.show(found.numbers) if self.show else fmt_ratio(value)
        met = _COMPARE[self.op](value, self.bound)
        return [self.name, shown, "met" if met else "NOT met"]


def targets_table(targets: Sequence[Target], found: Measurements) -> str:
    return table(["target", "measured", "status"], [t.row(found) for t in targets])


# Tables and numbers.


def heading(title: str) -> None:
    print(f"\n## {title}\n", flush=True)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table.

    >>> print(table(["a", "b"], [[1, "x"]]))
    | a | b |
    |---|---|
    | 1 | x |
    """
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt_time(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e9:.0f} ns"


def fmt_ratio(x: float) -> str:
    return f"{x:.2f}x" if x < 10 else f"{x:.1f}x"


def fmt_n(n: int) -> str:
    """1000 -> '1e3'; a number that is not a power of ten keeps its digits.

    >>> fmt_n(1000), fmt_n(2**14)
    ('1e3', '16,384')
    """
    if n >= 10 and 10 ** (len(str(n)) - 1) == n:
        return f"1e{len(str(n)) - 1}"
    return f"{n:,}"


# The machine.


def machine() -> str:
    """The OS, the CPU model and the number of CPUs."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{platform.system()} {platform.machine()}, {cpu}, nproc {os.cpu_count()}"


def load_average() -> str:
    with contextlib.suppress(OSError, AttributeError):
        return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    return ""


def python() -> str:
    return f"Python {platform.python_version()} ({platform.python_implementation()})"


def calibration() -> float:
    """The time of a fixed pure-Python loop: how fast this machine is right now."""

    def loop() -> int:
        s = 0
        for i in range(1_000_000):
            s += i
        return s

    return stopwatch(loop)[1]


def git_revision() -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", REPO, "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "?"
    return proc.stdout.strip() or "?"
