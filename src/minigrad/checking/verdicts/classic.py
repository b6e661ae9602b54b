"""The classic test, PyTorch's: ``|a - n| <= atol + rtol * |n|``, with an error bound's leniency.

It decides an entry when the caller passed ``atol`` or ``rtol`` (PyTorch's
call form), and judges what the verdicts leave undecided. It decides pass or
fail against a tolerance, never *wrong*: the verdict an entry carries is the
numbers' (:func:`~minigrad.checking.verdicts.convict.convict`).

Example:
    >>> from minigrad.checking.numeric.steps import Estimate
    >>> tolerance = lambda n: 1e-5 + 1e-3 * abs(n)
    >>> classic_test(2.0, 2.0000001, [], tolerance)
    Tolerated(passed=True, shown=None, sure=True)
    >>> classic_test(2.2, None, [], tolerance).sure  # nothing to compare: a caution
    False
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from minigrad.checking.numeric.steps import Estimate

__all__ = ["Tolerated", "classic_test"]


@dataclass(frozen=True)
class Tolerated:
    """What the classic test says of an entry.

    Attributes:
        passed: Whether the entry is within the tolerance (or cannot be shown beyond it).
        shown: The estimate to show (None: the nominal difference decided).
        sure: False for a pass that the numbers could neither confirm nor refute.
    """

    passed: bool
    shown: Estimate | None
    sure: bool


def classic_test(
    a: float,
    n: float | None,
    ests: Sequence[Estimate],
    tolerance: Callable[[float], float],
) -> Tolerated:
    """PyTorch's test ``|a - n| <= atol + rtol * |n|``, decided as minigrad always has.

    It passes when the nominal difference ``n`` (None when it left the
    domain) or an estimate whose bound is well inside the tolerance is within
    it; it fails when the two smallest scales that resolve the difference
    beyond the tolerance agree on it; otherwise the numerical derivative is
    too uncertain to say, and the entry passes with a caution.

    Returns:
        Whether it passed, the estimate to show, and whether the numbers were sure.
    """
    if n is not None and math.isfinite(n) and abs(a - n) <= tolerance(n):
        return Tolerated(True, None, True)
    for e in ests:
        t = tolerance(e.value)
        if abs(a - e.value) <= t + e.error and e.error <= 0.5 * t:
            return Tolerated(True, e, True)

    def differs(e: Estimate) -> bool:
        d = abs(a - e.value)
        return d > tolerance(e.value) + e.error and e.error <= 0.25 * d

    sharp = sorted((e for e in ests if differs(e)), key=lambda e: e.step)[:2]
    if len(sharp) == 2:
        one, two = sharp
        gap = abs(a - two.value)
        if abs(one.value - two.value) <= min(one.error + two.error, 0.1 * gap):
            return Tolerated(False, min(sharp, key=lambda e: e.error), True)
    best = min(ests, key=lambda e: e.error) if ests else None
    return Tolerated(True, best, False)
