"""The classic test, PyTorch's: ``|a - n| <= atol + rtol * |n|``, with an error bound's leniency.

It decides an entry when the caller passed ``atol`` or ``rtol`` (PyTorch's
call form), and judges what the verdicts leave undecided. It decides pass or
fail against a tolerance, never *wrong*: the verdict an entry carries is the
numbers' (:func:`~minigrad.checking.verdicts.convict.convict`).

Example:
    >>> from minigrad.checking.numeric.steps import Estimate
    >>> tolerance = lambda n: 1e-5 + 1e-3 * abs(n)
    >>> classic_test(2.0, 2.0000001, [], tolerance)
    (True, None, True)
    >>> passed, shown, sure = classic_test(2.2, None, [], tolerance)
    >>> passed, sure
    (True, False)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from minigrad.checking.numeric.steps import Estimate

__all__ = ["classic_test"]


def classic_test(
    a: float,
    n: float | None,
    ests: Sequence[Estimate],
    tolerance: Callable[[float], float],
) -> tuple[bool, Estimate | None, bool]:
    """PyTorch's test ``|a - n| <= atol + rtol * |n|``, decided as minigrad always has.

    It passes when the nominal difference ``n`` (None when it left the
    domain) or an estimate whose bound is well inside the tolerance is within
    it; it fails when the two smallest scales that resolve the difference
    beyond the tolerance agree on it; otherwise the numerical derivative is
    too uncertain to say, and the entry passes with a caution.

    Returns:
        ``(passed, the estimate to show, sure)``: ``sure`` is False for a pass
        that the numbers could neither confirm nor refute.
    """
    if n is not None and math.isfinite(n) and abs(a - n) <= tolerance(n):
        return True, None, True
    for e in ests:
        t = tolerance(e.value)
        if abs(a - e.value) <= t + e.error and e.error <= 0.5 * t:
            return True, e, True

    def differs(e: Estimate) -> bool:
        d = abs(a - e.value)
        return d > tolerance(e.value) + e.error and e.error <= 0.25 * d

    sharp = sorted((e for e in ests if differs(e)), key=lambda e: e.step)[:2]
    if len(sharp) == 2:
        one, two = sharp
        gap = abs(a - two.value)
        if abs(one.value - two.value) <= min(one.error + two.error, 0.1 * gap):
            return False, min(sharp, key=lambda e: e.error), True
    best = min(ests, key=lambda e: e.error) if ests else None
    return True, best, False
