"""Numerical derivatives that earn a verdict: steps and central differences.

Everything here works on a plain function ``evaluate(x) -> list[float] | None``
of one coordinate: the values of every function being checked with that input
set to ``x``, or None when ``x`` is outside the domain (an op raised a domain
error, or a declared domain was left). No minigrad types are involved, so the
arithmetic can be read and tested on its own.

Three ideas, in the order a check uses them:

1. **The nominal step** is ``eps`` scaled to the input:
   ``eps * max(1, sqrt(|x|))``, and never fewer than 64 ulps of ``x``, so
   ``x + h == x`` cannot happen (at ``x = 1e11`` an absolute 1e-6 step
   vanishes). Below 1 it is PyTorch's absolute ``eps``. Above 1, the best step
   depends on the function: for a power of ``x`` (``x * x`` at 1e8) it grows
   with ``|x|``, or round-off swamps the difference; for a periodic function
   (``sin`` at 1e8) it does not, or the step spans periods. The square root
   keeps both within the default tolerances up to ``|x|`` near 1e9, and
   extrapolation (3.) takes over beyond.
2. **The step actually taken** divides the difference: ``(x + h) - (x - h)``
   after rounding, not ``2 * h``; and the step is nudged (by an ulp or so)
   so that ``x + h`` and ``x - h`` are both exact where such a step exists,
   so the difference is centred on ``x`` itself (off-centre by ``m``, it
   would measure ``f'(x + m)``: at ``(a + 1) ** 2`` near -1 that is an error
   of ``2 m``, about 1e-16, where the derivative is 0).
3. **When the nominal comparison disagrees**,
   :func:`~minigrad.checking.numeric.ridders.extrapolate` estimates the
   derivative with an error bound: Ridders' method (a Richardson tableau over
   steps shrinking by 1.4, as in Numerical Recipes' ``dfridr``), started at
   several scales of step: 1e4x down to 10x the nominal step when they fit, the
   largest step up to the nominal one whose both sides stay in the domain
   (found by bisection), and 10x, 100x, ... smaller. A smooth function has a
   scale where the tableau converges; a domain edge only moves the first
   start; a nearby pole or kink only spoils the larger scales. Which estimate
   to believe is the verdicts' question (:mod:`minigrad.checking.verdicts.scales`
   asks two neighbouring scales to agree before it calls a rule wrong).

Example:
    >>> up, down, half = central(lambda x: [x * x], 3.0, nominal_step(3.0, 1e-6))
    >>> abs((up[0] - down[0]) / (2 * half) - 6.0) < 1e-9
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from minigrad.checking.numeric.grain import grained

__all__ = [
    "KNOWN_ROUNDOFF",
    "NOISE_FLOOR",
    "ROUNDOFF",
    "Coordinate",
    "Estimate",
    "Evaluate",
    "NominalDifference",
    "central",
    "largest_valid_step",
    "min_step",
    "nominal_difference",
    "nominal_step",
    "roundoff",
    "symmetric_step",
]

#: The values of the checked functions at one coordinate, or None off the domain.
Evaluate = Callable[[float], "list[float] | None"]

#: Round-off of one evaluated function value, in units of its magnitude: 64
#: ulps (2**-47), for functions made of several ops. Where large intermediates
#: cancel (``(x + 1e10) - 1e10``) the value's round-off is far larger than
#: this: callers that know it (from the graph, see
#: :mod:`minigrad.checking.numeric.rounding`) pass it as ``noise``.
ROUNDOFF = 2.0**-47
#: The least round-off of a value whose round-off was read off its graph, in
#: units of its magnitude: 2 ulps (the reading counts one ulp per op, twice
#: the rounding of a correctly rounded op).
KNOWN_ROUNDOFF = 2.0**-51
#: The least round-off of any value, absolute: 64 subnormal quanta. A product
#: such as ``1.0 * 5e-324`` cannot change by less than one quantum, however
#: small the step, so a bound proportional to ``|f|`` alone would claim
#: precision that floats below 2**-1022 do not have.
NOISE_FLOOR = 64.0 * 2.0**-1074


@dataclass(frozen=True)
class Coordinate:
    """One input as the numbers see it: the values being checked as a function of it.

    Attributes:
        evaluate: The values with the input moved to a coordinate (None off the domain).
        x: The input's value.
        here: The values at ``x``.
        h: The nominal step at ``x``.
    """

    evaluate: Evaluate
    x: float
    here: Sequence[float]
    h: float


class Estimate:
    """A numerical derivative with its error bound and the step it came from.

    Attributes:
        value: The estimate.
        error: A bound on |value - true derivative| (Ridders' own estimate of
            the extrapolation error, and never below the round-off at ``step``
            carried through the tableau's combinations).
        step: The step of the tableau row the estimate came from.
        flat: True when the values did not change at all over the steps: the
            estimate is 0 and its bound the resolution of the values (what a
            change smaller than their rounding could hide), which shows that
            the derivative is below that bound, not what it is.
        roundoff: The part of ``error`` round-off accounts for (0: unknown); the
            rest is what the tableau still moved, the function's structure there.
    """

    __slots__ = ("error", "flat", "roundoff", "step", "value")

    def __init__(
        self, value: float, error: float, step: float, flat: bool = False, roundoff: float = 0.0
    ) -> None:
        self.value = value
        self.error = error
        self.step = step
        self.flat = flat
        self.roundoff = roundoff

    def __repr__(self) -> str:
        extra = ", flat=True" if self.flat else ""
        return f"Estimate(value={self.value!r}, error={self.error!r}, step={self.step!r}{extra})"


def min_step(x: float) -> float:
    """The smallest step worth taking at ``x``: 64 ulps, so ``x +- h`` differ from ``x``.

    Example:
        >>> min_step(1.0) == 64 * math.ulp(1.0)
        True
    """
    return 64.0 * math.ulp(x)


def nominal_step(x: float, eps: float) -> float:
    """``eps`` scaled to ``x``: ``eps * max(1, sqrt(|x|))``, and at least :func:`min_step`.

    Example:
        >>> nominal_step(0.5, 1e-6), nominal_step(-1e10, 1e-6)
        (1e-06, 0.1)
    """
    return max(eps * max(1.0, math.sqrt(abs(x))), min_step(x))


def roundoff(
    values: Sequence[float], step: float, noise: Sequence[float] | None = None
) -> list[float]:
    """How far round-off alone can move a difference quotient over ``step``, per value.

    Each value is taken to be off by :data:`ROUNDOFF` times its magnitude
    (:data:`NOISE_FLOOR` at least). A caller that knows a value's round-off
    (read off its graph: :mod:`minigrad.checking.numeric.rounding`) passes it as
    ``noise[i]``, absolute; the value is then taken to be off by that, but
    never by less than :data:`KNOWN_ROUNDOFF` times its magnitude.

    Example:
        >>> roundoff([1.0], 1e-6)[0] < 1e-8
        True
        >>> roundoff([5e-324], 1.0)[0] > 0.0  # underflow: never a bound of 0
        True
    """
    if noise is None:
        return [max(ROUNDOFF * abs(v), NOISE_FLOOR) / step for v in values]
    return [
        max(KNOWN_ROUNDOFF * abs(v), NOISE_FLOOR, n) / step
        for v, n in zip(values, noise, strict=True)
    ]


def symmetric_step(x: float, h: float) -> float:
    """A step within an ulp or so of ``h`` for which ``x + s`` and ``x - s`` are both exact.

    Where none is found (a step larger than ``|x|`` may round on one side)
    it returns ``(x + h) - x``; :func:`central` then divides by the step
    actually taken on both sides.

    Example:
        >>> s = symmetric_step(-1.0, 1e-6)
        >>> (-1.0 + s) - (-1.0) == s == -1.0 - (-1.0 - s)
        True
    """
    s = (x + h) - x
    if s <= 0.0 or x - (x - s) == s:
        return s
    s2 = x - (x - s)  # a multiple of the coarser spacing of the two sides
    if s2 > 0.0 and (x + s2) - x == s2 and x - (x - s2) == s2:
        return s2
    return s


def central(
    evaluate: Evaluate, x: float, h: float
) -> tuple[list[float], list[float], float] | None:
    """Values at ``x + h`` and ``x - h``, and the half-step actually taken.

    The step is first made symmetric (:func:`symmetric_step`), so the
    difference is centred on ``x``. None when either side is off the domain
    or the rounded step vanished.

    Example:
        >>> up, down, half = central(lambda x: [x * x], 3.0, 0.5)
        >>> (up[0] - down[0]) / (2 * half)
        6.0
    """
    if math.isfinite(x + h):
        h = symmetric_step(x, h)
    hi, lo = x + h, x - h
    half = (hi - lo) / 2.0
    if not (half > 0.0 and math.isfinite(hi) and math.isfinite(lo)):
        return None
    up = evaluate(hi)
    if up is None:
        return None
    down = evaluate(lo)
    if down is None:
        return None
    return up, down, half


def largest_valid_step(evaluate: Evaluate, x: float, h: float) -> float | None:
    """The largest step up to ``h`` whose both sides are in the domain, within 2x.

    Bisects the exponent between :func:`min_step` and ``h`` (about ten pairs of
    evaluations however close the domain's edge is). None when not even the
    smallest step fits: ``x`` sits on the edge.

    Example:
        >>> f = lambda x: [math.sqrt(x)] if x > 0 else None
        >>> 5e-9 <= largest_valid_step(f, 1e-8, 1e-6) < 1e-8
        True
    """
    if central(evaluate, x, h) is not None:
        return h
    lo = min_step(x)
    if lo >= h or central(evaluate, x, lo) is None:
        return None
    hi = h  # invalid; lo valid
    while hi > 2.0 * lo:
        mid = math.sqrt(lo) * math.sqrt(hi)  # lo * hi may underflow
        if central(evaluate, x, mid) is not None:
            lo = mid
        else:
            hi = mid
    return lo


class NominalDifference:
    """The central difference at the nominal step, with what it came from.

    Attributes:
        values: The difference quotient per row.
        up, down: The values at ``x + h`` and ``x - h``.
        half: The half-step actually taken.
        left, right: The one-sided steps, ``x - (x - h)`` and ``(x + h) - x``.
        roundoff: The round-off of each quotient (from the values' magnitude).
    """

    __slots__ = ("down", "half", "left", "richardson", "right", "roundoff", "up", "values")

    def __init__(
        self,
        values: list[float],
        up: list[float],
        down: list[float],
        half: float,
        left: float,
        right: float,
    ) -> None:
        self.values = values
        self.up = up
        self.down = down
        self.half = half
        self.left = left
        self.right = right
        self.roundoff = roundoff(
            [max(abs(u), abs(d)) for u, d in zip(up, down, strict=True)],
            half,
            grained(up, down, None, ROUNDOFF),
        )
        self.richardson = False


def nominal_difference(
    evaluate: Evaluate, at: float, h: float, richardson: bool = False
) -> NominalDifference | None:
    """The central difference at step ``h`` (None when a side left the domain).

    With ``richardson``, the differences at ``h`` and ``h / 2`` are combined
    to cancel the ``h**2`` term (and its round-off grows by 5/3).
    """
    sides = central(evaluate, at, h)
    if sides is None:
        return None
    up, down, half = sides
    values = [(u - d) / (2.0 * half) for u, d in zip(up, down, strict=True)]
    if richardson:
        finer = central(evaluate, at, h / 2.0)
        if finer is None:
            return None
        up2, down2, half2 = finer
        fine = [(u - d) / (2.0 * half2) for u, d in zip(up2, down2, strict=True)]
        values = [(4.0 * f - c) / 3.0 for c, f in zip(values, fine, strict=True)]
    found = NominalDifference(values, up, down, half, (at + half) - at, at - (at - half))
    if richardson:
        found.roundoff = [3.0 * r for r in found.roundoff]
        found.richardson = True
    return found
