"""The grid a function's values lie on: round-off that the graph does not show.

A forward that cancels large intermediates inside itself, hidden from the
graph (a custom rule computing ``log1p(exp(x)) - x`` at 15, whose values are
whole multiples of an ulp of 15), returns values whose last bits are all 0:
their round-off is the grid's spacing, not an ulp of the value.
:mod:`minigrad.checking.numeric.steps` and :mod:`minigrad.checking.verdicts.taylor` raise
the round-off they assume to it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["grain", "grained"]

#: A value's grid counts as coarse when it is this many ulps of the value or more.
_COARSE = 2.0**8


def grain(*values: float) -> float:
    """The grid that every one of ``values`` lies on, when it is coarse; else 0.

    A forward that cancels large intermediates inside itself, hidden from the
    graph (a custom rule computing ``log1p(exp(x)) - x`` at 15, whose values
    are whole multiples of an ulp of 15, about 2e-15, where the value itself
    is 3e-7), returns values whose last bits are all 0: their round-off is the
    grid's spacing, not an ulp of the value. The lowest set bit of each value
    gives its grid; random mantissas make it an ulp or two, so values that
    differ and all lie on a grid 256 ulps apart and more is no accident.

    Example:
        >>> grain(30.000000000000092 - 30.0, 30.00000000000011 - 30.0) == math.ulp(30.0)
        True
        >>> grain(0.1, 0.7), grain(1.0, 1.0)
        (0.0, 0.0)
    """
    if len(set(values)) < 2:
        return 0.0  # values that do not differ show no grid (1.0 is on every grid)
    coarse = math.inf
    for v in values:
        if v == 0.0 or not math.isfinite(v):
            continue
        mantissa, exponent = math.frexp(abs(v))
        whole = int(mantissa * 2.0**53)
        spacing = math.ldexp(float(whole & -whole), exponent - 53)
        if spacing < _COARSE * math.ulp(v):
            return 0.0
        coarse = min(coarse, spacing)
    return 0.0 if coarse == math.inf else coarse


def grained(
    up: Sequence[float], down: Sequence[float], noise: Sequence[float] | None, relative: float
) -> list[float] | None:
    """``noise`` (absolute, per value; None: ``relative`` times each value) raised to
    the grid the values at the two sides lie on, where it is coarse (:func:`grain`).

    Example:
        >>> grained([30.000000000000092 - 30.0], [30.00000000000011 - 30.0], None, 2.0**-47)
        [3.552713678800501e-15]
    """
    grains = [grain(u, d) for u, d in zip(up, down, strict=True)]
    if not any(grains):
        return None if noise is None else list(noise)
    if noise is None:  # the model's own round-off, as roundoff() takes it without noise
        noise = [relative * max(abs(u), abs(d)) for u, d in zip(up, down, strict=True)]
    return [max(n, g) for n, g in zip(noise, grains, strict=True)]
