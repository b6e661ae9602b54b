"""Where a wrong rule is wrong: its simplest failing point, and for one input the intervals.

When a check finds the op whose own rule disagrees with its forward
(:func:`minigrad.checking.run.fault.find_fault`), the rule is narrowed down
the way hypothesis shrinks a failing example:

- **the simplest failing point**: each argument in turn is replaced by the
  simplest number (0, 1, -1, 2, 0.5, ..., then the failing value rounded to
  one, two, three digits) that keeps the rule wrong there, inside its domain
  and away from its avoid points;
- **intervals**, for a rule of one argument: the rule is checked at evenly
  spaced points of its sample interval (and the failing point), each point
  classed wrong, right or undecided by its verdicts, neighbours of one class
  merged, and each border between wrong and right bisected: "wrong on
  [0.51, 2]; right on [-2, 0.5]; undecided at 0" (a class seen at one point alone is
  said of that point, not of its neighbours: a rule 0.1% off is right at 0 only).

It runs only when a check fails, and checks only the one rule (a few
evaluations per point).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from minigrad.checking.run.report import Report
from minigrad.checking.verdicts.decide import AGREES, WRONG, Cause
from minigrad.core.rule import Rule
from minigrad.core.value import Value

__all__ = ["narrow"]

#: Runs a check of one rule: (function, inputs, order) -> Report.
RunCheck = Callable[[Callable[..., Value], list[Value], int], Report]

#: The simplest numbers, simplest first.
_SIMPLE = (0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 10.0, -10.0, 0.1, -0.1)
#: Points of the sample interval a one-input rule is checked at.
_GRID = 11
#: Bisection steps per border between wrong and right.
_BISECT = 3
#: Checks the simplest-point search may make over all inputs, one input's worth of
#: candidates (a rule of 6 inputs wrong only at order 3 made 96, 30 s, for one line).
_TRIES = len(_SIMPLE) + 3

#: What a point of the rule's domain is, in the words of the summary: where the
#: rule is wrong, right, or neither (not entry verdicts: "right" is none).
WRONG_HERE, RIGHT_HERE, OPEN_HERE = "wrong", "right", "undecided"


def narrow(rule: Rule, args: Sequence[Value | float], k: int, run: RunCheck) -> list[str]:
    """Lines for the report: the simplest failing point, and intervals for one input.

    Args:
        rule: The wrong rule.
        args: Its arguments where it failed: Values (checked) and constants.
        k: The order that failed.
        run: Runs a check of one function.
    """
    places = [i for i, a in enumerate(args) if isinstance(a, Value)]
    point = [a.data if isinstance(a, Value) else float(a) for a in args]
    if not places:
        return []

    def verdict(at: Sequence[float]) -> tuple[str, str]:
        return _classify(rule, places, at, k, run)

    lines = []
    simplest = list(point)
    left = _TRIES
    for i in places:
        for candidate in _candidates(point[i]):
            if candidate == simplest[i] or not _allowed(rule, i, candidate) or not left:
                continue
            left -= 1
            trial = list(simplest)
            trial[i] = candidate
            if verdict(trial)[0] == WRONG_HERE:
                simplest = trial
                break
    shown = ", ".join(_exact(x) for x in simplest)
    lines.append(f"simplest failing point found: {rule.name}({shown})")
    if len(places) == 1 and len(args) == 1:
        lines.append(_intervals(rule, point[0], verdict))
    return lines


def _classify(
    rule: Rule, places: Sequence[int], at: Sequence[float], k: int, run: RunCheck
) -> tuple[str, str]:
    """The class of a point (wrong, right, undecided) and, when undecided, why."""
    fixed = list(at)

    def local(*vs: Value) -> Value:
        full: list[Value | float] = list(fixed)
        for i, v in zip(places, vs, strict=True):
            full[i] = v
        return rule(*full)

    try:
        local(*[Value(at[i]) for i in places])
        report = run(local, [Value(at[i]) for i in places], k)
    except (ArithmeticError, ValueError, TypeError):
        return OPEN_HERE, "its forward raises there"
    verdicts = {e.verdict for e in report.entries}
    if not report.ok and WRONG in verdicts:
        return WRONG_HERE, ""
    if not report.ok:
        noted = [e.cause for e in report.failures if e.note]
        return OPEN_HERE, _why(noted[0] if noted else Cause.NONE)
    if verdicts <= {AGREES}:
        return RIGHT_HERE, ""
    noted = [e.cause for e in report.entries if e.note]
    return OPEN_HERE, _why(noted[0] if noted else Cause.NONE)


def _why(cause: Cause) -> str:
    """Why a point is undecided, in a few words, from the first note's cause."""
    return {Cause.KINK: "a kink", Cause.JUMP: "a jump"}.get(cause, "")


def _candidates(x: float) -> list[float]:
    """Simple numbers first, then ``x`` rounded to 1, 2 and 3 significant digits."""
    rounded = []
    if x != 0.0 and math.isfinite(x):
        for digits in (1, 2, 3):
            r = float(f"{x:.{digits - 1}e}")
            if r not in rounded:
                rounded.append(r)
    return [*_SIMPLE, *rounded]


def _allowed(rule: Rule, i: int, x: float) -> bool:
    lo, hi = rule.domain[i]
    if not lo < x < hi:
        return False
    return all(abs(x - p) > 1e-9 * max(1.0, abs(p)) for p in rule.avoid)


def _round(x: float) -> float:
    """``x`` to 12 significant digits: grid points read as written (0.5, not 0.49999...)."""
    return float(f"{x:.12g}")


def _show(x: float) -> str:
    return f"{x:.6g}"


def _exact(x: float) -> str:
    """``x`` in 6 digits where that is ``x``, else all it takes (1.000001, not 1).

    Example:
        >>> _exact(0.0), _exact(0.5), _exact(1.000001), _exact(1.0 + 1e-10)
        ('0', '0.5', '1.000001', '1.0000000001')
    """
    short = _show(x)
    return short if float(short) == x else repr(x)


def _places(where: Sequence[str]) -> str:
    """``at 1 and on [2, 3] and [4, 5]``: points first, then the intervals.

    Example:
        >>> _places(["at 1", "[2, 3]", "[4, 5]"]), _places(["at 1"])
        ('at 1 and on [2, 3] and [4, 5]', 'at 1')
    """
    points = [w for w in where if not w.startswith("[")]
    spans = [w for w in where if w.startswith("[")]
    return " and ".join([*points, *([f"on {' and '.join(spans)}"] if spans else [])])


def _intervals(
    rule: Rule, failing: float, verdict: Callable[[Sequence[float]], tuple[str, str]]
) -> str:
    """Where a one-input rule is wrong, right and undecided over its sample interval."""
    lo, hi = rule.sample_box[0]
    grid = sorted({_round(lo + (hi - lo) * j / (_GRID - 1)) for j in range(_GRID)} | {failing})
    grid = [x for x in grid if _allowed(rule, 0, x)] or [failing]
    # The failing point is wrong: the check found it so, with more evidence
    # than these quicker checks gather (a rule 1e-10 off beside a pole).
    classes = [(WRONG_HERE, "") if x == failing else verdict([x]) for x in grid]
    # Refine each border between wrong and right by bisection.
    points = list(zip(grid, classes, strict=True))
    refined: list[tuple[float, tuple[str, str]]] = [points[0]]
    for (a, ca), (b, cb) in itertools.pairwise(points):
        if {ca[0], cb[0]} == {WRONG_HERE, RIGHT_HERE}:
            for _ in range(_BISECT):
                mid = _round((a + b) / 2.0)
                cm = verdict([mid])
                if cm[0] == ca[0]:
                    a = mid
                elif cm[0] == cb[0]:
                    b = mid
                else:
                    break
            refined.extend([(a, ca), (b, cb)])
        else:
            refined.append((b, cb))
    runs: list[tuple[str, str, float, float]] = []
    for x, (c, why) in sorted(refined):
        if runs and runs[-1][0] == c:
            runs[-1] = (c, runs[-1][1] or why, runs[-1][2], x)
        else:
            runs.append((c, why, x, x))
    parts: dict[str, list[str]] = {WRONG_HERE: [], RIGHT_HERE: [], OPEN_HERE: []}
    for c, why, a, b in runs:
        where = f"[{_show(a)}, {_show(b)}]" if a != b else f"at {_exact(a)}"
        parts[c].append(where + (f" ({why})" if why else ""))
    words = [f"{c} {_places(where)}" for c, where in parts.items() if where]
    return (
        f"{rule.name} checked at {len(refined)} points of its sample interval "
        f"[{_show(lo)}, {_show(hi)}]: " + "; ".join(words)
    )
