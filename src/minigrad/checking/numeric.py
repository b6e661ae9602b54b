"""Numerical derivatives that earn a verdict: steps, central differences, extrapolation.

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
   after rounding, not ``2 * h``; and extrapolation (3.) weighs each
   difference by the steps actually taken, not by their nominal ratio.
3. **When the nominal comparison disagrees**, :func:`extrapolate` estimates the
   derivative with an error bound: Ridders' method (a Richardson tableau over
   steps shrinking by 1.4, as in Numerical Recipes' ``dfridr``), started at
   several scales of step: 1e4x down to 10x the nominal step when they fit, the
   largest step up to the nominal one whose both sides stay in the domain
   (found by bisection), and 10x, 100x, ... smaller. A smooth function has a
   scale where the tableau converges; a domain edge only moves the first
   start; a nearby pole or kink only spoils the larger scales. Which estimate
   to believe is the caller's question (:mod:`minigrad.checking.compare` asks
   two neighbouring scales to agree before it calls a rule wrong).

Example:
    >>> import math
    >>> f = lambda x: [math.log(x)] if x > 0 else None  # log near its edge
    >>> est = min(extrapolate(f, 1e-7, nominal_step(1e-7, 1e-6), [0])[0], key=lambda e: e.error)
    >>> abs(est.value - 1e7) <= 1e7 * 1e-9 and est.error < 1e-2
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

__all__ = [
    "Estimate",
    "central",
    "extrapolate",
    "min_step",
    "nominal_step",
    "roundoff",
]

#: The values of the checked functions at one coordinate, or None off the domain.
Evaluate = Callable[[float], "list[float] | None"]

# Ridders' tableau: steps shrink by _RATIO per row, at most _DEPTH rows; a
# row whose diagonal moves more than _SAFE times the best error so far ends it.
_RATIO = 1.4
_DEPTH = 10
_SAFE = 2.0
# Starts of the tableau above the nominal step, as multiples of it, and the
# most starts in all (see extrapolate()).
_LARGER = (1e1, 1e2, 1e3, 1e4)
_STARTS = 12
# Round-off of one evaluated function value, in units of its magnitude: a few
# dozen ulps, for functions made of several ops.
_ROUNDOFF = 2.0**-47


class Estimate:
    """A numerical derivative with its error bound and the step it came from.

    Attributes:
        value: The estimate.
        error: A bound on |value - true derivative| (Ridders' own estimate of
            the extrapolation error, and never below the round-off at ``step``).
        step: The step of the tableau row the estimate came from.
    """

    __slots__ = ("error", "step", "value")

    def __init__(self, value: float, error: float, step: float) -> None:
        self.value = value
        self.error = error
        self.step = step

    def __repr__(self) -> str:
        return f"Estimate(value={self.value!r}, error={self.error!r}, step={self.step!r})"


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


def roundoff(values: Sequence[float], step: float) -> list[float]:
    """How far round-off alone can move a difference quotient over ``step``, per value.

    Example:
        >>> roundoff([1.0], 1e-6)[0] < 1e-8
        True
    """
    return [_ROUNDOFF * abs(v) / step for v in values]


def central(
    evaluate: Evaluate, x: float, h: float
) -> tuple[list[float], list[float], float] | None:
    """Values at ``x + h`` and ``x - h``, and the half-step actually taken.

    None when either side is off the domain or the rounded step vanished.

    Example:
        >>> up, down, half = central(lambda x: [x * x], 3.0, 0.5)
        >>> (up[0] - down[0]) / (2 * half)
        6.0
    """
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


def _difference(
    evaluate: Evaluate, x: float, h: float
) -> tuple[list[float], list[float], float] | None:
    """The central difference quotient at ``h``, its round-off per value, and the half-step."""
    sides = central(evaluate, x, h)
    if sides is None:
        return None
    up, down, half = sides
    quotient = [(u - d) / (2.0 * half) for u, d in zip(up, down, strict=True)]
    if not all(math.isfinite(q) for q in quotient):
        return None
    noise = roundoff([max(abs(u), abs(d)) for u, d in zip(up, down, strict=True)], half)
    return quotient, noise, half


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


def _ridders(evaluate: Evaluate, x: float, h: float, rows: Sequence[int]) -> dict[int, Estimate]:
    """One Ridders tableau from step ``h`` for the given rows; the best estimate per row.

    The tableau is Neville's, extrapolating to a zero step in ``half**2``
    over the half-steps actually taken: ``x +- h`` are rounded, so at 1e8 (or
    1 - 1e-12, or among subnormals) the steps' ratios are not exactly
    ``_RATIO``, and weights computed from ``_RATIO`` leave an error of the
    size of the rounding times the h**2 term, which the tableau's own error
    estimate does not see.
    """
    best: dict[int, Estimate] = {}
    previous: dict[int, list[float]] = {}
    halves: list[float] = []
    active = list(rows)
    for depth in range(_DEPTH):
        got = _difference(evaluate, x, h)
        if got is None:
            break
        quotient, noise, half = got
        if halves and half >= halves[-1]:
            break  # rounded to the step before: a row without new information
        halves.append(half)
        still: list[int] = []
        for r in active:
            column = [quotient[r]]
            before = previous.get(r, [])
            bound = best[r].error if r in best else math.inf
            for j in range(1, depth + 1):
                # Each column cancels the next even power of the step.
                factor = (halves[depth - j] / half) ** 2
                column.append((column[j - 1] * factor - before[j - 1]) / (factor - 1.0))
                error = max(abs(column[j] - column[j - 1]), abs(column[j] - before[j - 1]))
                error = max(error, 4.0 * noise[r])
                if error <= bound:
                    bound = error
                    best[r] = Estimate(column[j], error, h)
            previous[r] = column
            # Higher order made it worse: round-off has taken over.
            if depth == 0 or abs(column[depth] - before[depth - 1]) < _SAFE * bound:
                still.append(r)
        active = still
        if not active:
            break
        h /= _RATIO
    return best


def extrapolate(
    evaluate: Evaluate,
    x: float,
    h: float,
    rows: Sequence[int],
    decided: Callable[[int, list[Estimate]], bool] | None = None,
) -> dict[int, list[Estimate]]:
    """Derivative estimates with error bounds from several scales of step, per row.

    Ridders' tableau is started from the largest valid step up to ``h`` and
    from 10x smaller, then from ``10 * h`` up to ``1e4 * h`` when those fit
    in the domain, then from steps 100x, 1000x, ... smaller, down to
    :func:`min_step`: at most twelve starts, each spanning a factor of 20 in
    step. Each start gives each row its best estimate (the tableau entry with
    the smallest error). A row is
    done once ``decided(row, its estimates so far)`` says they settle the
    question the caller asks of it.

    Args:
        evaluate: The values of the checked functions at a coordinate, or None
            off the domain.
        x: The point.
        h: The nominal step.
        rows: The indices of the values to estimate.
        decided: When it returns True for a row, that row needs no more starts.

    Returns:
        Per row, its estimates, one per start that gave one, in the order the
        starts ran; empty only when no central step fits in the domain at ``x``.

    Example:
        >>> ests = extrapolate(lambda x: [math.sin(x)], 1e8, 100.0, [0])[0]
        >>> best = min(ests, key=lambda e: e.error)
        >>> abs(best.value - math.cos(1e8)) < 1e-6
        True
    """
    found: dict[int, list[Estimate]] = {r: [] for r in rows}
    top = largest_valid_step(evaluate, x, h)
    if top is None:
        return found
    larger: list[float] = []
    if top < h:
        top /= 2.0  # off the domain's edge, where the first rows are not yet wild
    else:
        # Where f' is small beside f (tanh far out, sqrt(x*x + 1) near 0) only
        # a larger step resolves it above round-off.
        larger = [top * f for f in _LARGER if central(evaluate, x, top * f) is not None]
    smaller = [top * 10.0**-j for j in range(_STARTS) if top * 10.0**-j >= min_step(x)]
    # The nominal scale and the next smaller one first: most questions are
    # settled there; then the larger steps, then the rest of the smaller.
    starts = [*smaller[:2], *larger, *smaller[2:]][:_STARTS]
    pending = list(rows)
    for start in starts:
        if not pending:
            break
        got = _ridders(evaluate, x, start, pending)
        still: list[int] = []
        for r in pending:
            if r in got:
                found[r].append(got[r])
            if decided is None or not decided(r, found[r]):
                still.append(r)
        pending = still
    return found


def one_sided_slopes(
    evaluate: Evaluate, x: float, here: Sequence[float], h: float
) -> tuple[list[float], list[float], float] | None:
    """Left and right difference quotients at step ``h``, per value, and the step.

    Example:
        >>> left, right, _ = one_sided_slopes(lambda x: [abs(x)], 0.0, [0.0], 1e-3)
        >>> left, right
        ([-1.0], [1.0])
    """
    sides = central(evaluate, x, h)
    if sides is None:
        return None
    up, down, _ = sides
    right_step, left_step = (x + h) - x, x - (x - h)
    left = [(c - d) / left_step for c, d in zip(here, down, strict=True)]
    right = [(u - c) / right_step for u, c in zip(up, here, strict=True)]
    return left, right, h
