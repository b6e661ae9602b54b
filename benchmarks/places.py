"""Where the coverage sweep evaluates: every rule's points, by group, and random compositions.

Each built-in rule of ``minigrad.ops.TABLE`` is swept one argument at a time
(the other arguments, if any, held at ordinary values inside their domain)
over the groups of :data:`GROUPS`:

- ``sample box``: evenly spread points of the rule's own sample interval,
  where its tests draw;
- ``magnitudes``: +-1, 2 and 5 times every power of ten from 1e-8 to 1e8, and
  +-10**k for k = -300, -290, ..., 300;
- ``subnormals``: +-5e-324, 1e-320, 1e-315, 2.5e-310 and 2.2e-308 (just below
  the smallest normal float);
- ``domain edges``: 1e-12, 1e-13, 1e-14, 1e-15 and 4 ulps inside every finite
  end of the rule's domain (``log``, ``sqrt`` near 0, ``asin`` near +-1, ...);
- ``kinks and poles``: both sides of every ``avoid`` point of the rule (the
  kink of ``abs`` and ``relu``, the poles of ``tan`` and ``gamma``) at 1e-3,
  1e-6, 1e-9, 1e-12 and 1e-15 (for a point at 0: also 1e-100 and 1e-300);
- ``large trig``: +-1, 2 and 5 times every power of ten from 1e9 to 1e22,
  for ``sin``, ``cos`` and ``tan`` (float64 still resolves a period up to
  about 1e15, where an ulp reaches 0.1 and 64 ulps reach 2 pi near 1e16).

A point is kept when the rule's forward gives a finite float there. The exact
derivative (:mod:`oracle`) decides whether an entry counts: it must be a
finite real float64.

``compositions``: random expressions drawn by ``minigrad.testing.expressions``
(every rule of the table, up to 3 inputs and 6 ops), derandomized, at the
points they are drawn with; one entry per input.

Example:
    >>> from minigrad import ops
    >>> [g for g, _ in rule_points(ops.LOG, 0)][:2]
    ['sample box', 'sample box']
    >>> all(x > 0 for _, (x,) in rule_points(ops.LOG, 0))
    True
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from minigrad import Rule
from minigrad.testing import Expression

SAMPLE = "sample box"
MAGNITUDES = "magnitudes"
SUBNORMALS = "subnormals"
EDGES = "domain edges"
KINKS = "kinks and poles"
TRIG = "large trig"
COMPOSITIONS = "compositions"
GROUPS = (SAMPLE, MAGNITUDES, SUBNORMALS, EDGES, KINKS, TRIG, COMPOSITIONS)

#: |x| of the magnitude group.
GRID = (
    *(float(f"{m}e{k}") for k in range(-8, 9) for m in (1, 2, 5)),
    *(10.0**k for k in range(-300, 301, 10) if not -8 <= k <= 8),
)
SUBNORMAL = (5e-324, 1e-320, 1e-315, 2.5e-310, 2.2e-308)
#: Distances inside a domain's finite end (a last one, 4 ulps of the end, is added per end).
NEAR_EDGE = (1e-12, 1e-13, 1e-14, 1e-15)
#: Distances on both sides of a kink or pole (1e-100 and 1e-300 too when it is at 0).
NEAR_KINK = (1e-3, 1e-6, 1e-9, 1e-12, 1e-15)
TRIG_RULES = ("sin", "cos", "tan")
TRIG_GRID = tuple(float(f"{m}e{k}") for k in range(9, 23) for m in (1, 2, 5))
#: Points of the sample box per argument.
SAMPLE_POINTS = 9
#: The values other arguments are held at, in preference order.
ORDINARY = (0.75, -1.25, 1.5, 2.0)


def _inside(rule: Rule, index: int, x: float) -> bool:
    lo, hi = rule.domain[index]
    return lo < x < hi and x not in rule.avoid


def _held(rule: Rule, index: int) -> float:
    """An ordinary value for argument ``index`` while another one is swept."""
    for v in ORDINARY:
        if _inside(rule, index, v):
            return v
    lo, hi = rule.sample_box[index]
    return (lo + hi) / 2.0


def _finite(rule: Rule, args: Sequence[float]) -> bool:
    try:
        y = rule.forward(*args)
    except (ArithmeticError, ValueError):
        return False
    return isinstance(y, float) and math.isfinite(y)


def candidates(rule: Rule, index: int) -> Iterator[tuple[str, float]]:
    """Every (group, value) of argument ``index`` before the domain is applied."""
    lo, hi = rule.sample_box[index]
    for j in range(SAMPLE_POINTS):
        yield SAMPLE, lo + (hi - lo) * (j + 0.5) / SAMPLE_POINTS
    for a in GRID:
        yield MAGNITUDES, a
        yield MAGNITUDES, -a
    for a in SUBNORMAL:
        yield SUBNORMALS, a
        yield SUBNORMALS, -a
    dlo, dhi = rule.domain[index]
    for end, inward in ((dlo, 1.0), (dhi, -1.0)):
        if math.isfinite(end):
            for d in NEAR_EDGE:
                yield EDGES, end + inward * d
            yield EDGES, end + inward * 4.0 * math.ulp(end) if end else inward * 4e-323
    for kink in rule.avoid:
        far = (*NEAR_KINK, 1e-100, 1e-300) if kink == 0.0 else NEAR_KINK
        for d in far:
            yield KINKS, kink - d
            yield KINKS, kink + d
    if rule.name in TRIG_RULES:
        for a in TRIG_GRID:
            yield TRIG, a
            yield TRIG, -a


def rule_points(rule: Rule, index: int) -> list[tuple[str, tuple[float, ...]]]:
    """The sweep's points for argument ``index`` of ``rule``: (group, all arguments).

    Points repeated by two groups are kept once, under the first.
    """
    held = [_held(rule, j) for j in range(rule.arity)]
    seen: set[float] = set()
    out: list[tuple[str, tuple[float, ...]]] = []
    for group, x in candidates(rule, index):
        if x in seen or not _inside(rule, index, x):
            continue
        seen.add(x)
        args = list(held)
        args[index] = x
        if _finite(rule, args):
            out.append((group, tuple(args)))
    return out


def compositions(count: int) -> list[Expression]:
    """``count`` random expressions over every built-in rule, the same on every run.

    Drawn by hypothesis (derandomized) with
    ``minigrad.testing.expressions(max_inputs=3, max_ops=6)``; repeats are
    dropped, so a few fewer may come back. Which expressions are drawn depends
    on hypothesis' version (CI's is pinned in constraints.txt).
    """
    from hypothesis import HealthCheck, Phase, given, settings

    from minigrad.testing import expressions

    drawn: list[Expression] = []
    seen: set[str] = set()

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(expressions(max_inputs=3, max_ops=6))
    def collect(e: Expression) -> None:
        if str(e) not in seen:
            seen.add(str(e))
            drawn.append(e)

    collect()
    return drawn
