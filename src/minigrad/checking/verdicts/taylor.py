"""The second method, for what extrapolation leaves undecided: the Taylor remainder's rate.

Extrapolation estimates the derivative and asks whether the analytic value is
inside the bound. The Taylor test (pyadjoint's ``taylor_test``) asks a
question that needs no estimate at all: with the analytic slope ``g``, the
remainder

    r(h) = f(x + h) - f(x) - g * h

shrinks as ``h**2`` when ``g`` is the derivative, and only as ``h`` when it
is not (``r(h) = (f' - g) h + f'' h**2 / 2 + ...``). Halving ``h`` over a
sequence of steps, the rate ``log2(r(h) / r(h/2))`` settles near 2 (or 3,
where ``f''`` is 0) for a right slope and near 1 for a wrong one, however
wide an error bound on the derivative would be; only steps whose remainder
stands well above the values' round-off count. It needs one side only, so it
also works on the edge of a domain, where no central difference fits; there
:func:`minigrad.checking.numeric.ridders.one_sided` adds one-sided high-order
differences, and both sides are tried.

Example:
    >>> import math
    >>> f = lambda t: [(t + 1.0) * (t + 1.0)]   # its derivative at -1 is 0
    >>> rate_test(f, -1.0, [0.0], 0, 0.0, 0.0, 1e-2).verdict
    'agrees'
    >>> rate_test(f, -1.0, [0.0], 0, 1e-3, 0.0, 1e-2).verdict
    'wrong'
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from minigrad.checking.numeric.grain import grain
from minigrad.checking.numeric.steps import NOISE_FLOOR, ROUNDOFF, Evaluate
from minigrad.checking.verdicts.convict import convict
from minigrad.checking.verdicts.evidence import LinearRemainder, Remainders
from minigrad.checking.verdicts.findings import (
    AGREES,
    MIN_DIGITS,
    SAFETY,
    UNDECIDED,
    Finding,
    finest_step,
    zero_scale,
)
from minigrad.checking.verdicts.findings import digits as count_digits

__all__ = ["rate_test"]

#: Steps per side: each half the one before, from the largest step given.
_HALVINGS = 24
#: A remainder counts only when it stands this far above the round-off.
_ABOVE_NOISE = 32.0
#: Rates that count as "falls as h**2 or faster" and as "falls as h".
_SQUARE = 1.75
_LINEAR = (0.8, 1.25)
#: The least rate at which the function's own change must shrink with the step.
_SMOOTH = 0.75


def rate_test(
    evaluate: Evaluate,
    x: float,
    here: Sequence[float],
    row: int,
    slope: float,
    slope_err: float,
    h: float,
    noise: float = 0.0,
) -> Finding:
    """The Taylor remainder's rate for value ``row`` with the analytic ``slope``.

    Args:
        evaluate: The values of the checked functions at a coordinate, or None
            off the domain.
        x: The point.
        here: The values at ``x``.
        row: Which value.
        slope: The analytic derivative under test.
        slope_err: Its round-off.
        h: The largest step (halved :data:`_HALVINGS` times on each side).
        noise: The round-off of the value, absolute, when known.

    Returns:
        A :class:`~minigrad.checking.verdicts.findings.Finding`: where, at the
        three smallest steps with a remainder above round-off, it falls as
        ``h`` and the slope it implies is :data:`SAFETY` times its error
        away, the sides that show it are a charge, and
        :func:`~minigrad.checking.verdicts.convict.convict` decides; *agrees*
        when it falls as ``h**2`` or faster there; otherwise *undecided*.
    """
    sides = [
        _one_side(evaluate, x, here[row], row, slope, slope_err, h, noise, side)
        for side in (1.0, -1.0)
    ]
    linear = tuple(f for f, _ in sides if isinstance(f, LinearRemainder))
    if linear:
        # A wrong slope is wrong on both sides, by the same amount; a kink
        # near x makes one side's remainder look linear too, but not the other's.
        reached = (sides[0][1], sides[1][1])
        return convict(Remainders(slope=slope, roundoff=slope_err, sides=linear, reached=reached))
    found = [f for f, _ in sides if isinstance(f, Finding)]
    agreeing = [f for f in found if f.verdict == AGREES]
    if agreeing:
        return max(agreeing, key=lambda f: (f.digits, -f.error))
    return Finding(
        UNDECIDED,
        0,
        math.nan,
        math.nan,
        math.nan,
        "the Taylor remainder f(x + h) - f(x) - g h stays within round-off, or falls at no "
        "steady rate, on both sides",
    )


def _one_side(
    evaluate: Evaluate,
    x: float,
    centre: float,
    row: int,
    slope: float,
    slope_err: float,
    h: float,
    noise: float,
    side: float,
) -> tuple[Finding | LinearRemainder | None, bool]:
    """What one side's remainders say (an agreement, a linear remainder, or None
    when they say nothing), and whether any step on that side was in the domain."""
    steps: list[float] = []
    rests: list[float] = []
    changes: list[float] = []
    roundings: list[float] = []
    floors: list[float] = []
    t = h
    for _ in range(_HALVINGS):
        moved = x + side * t
        taken = moved - x
        t /= 2.0
        if taken == 0.0 or not math.isfinite(moved) or (steps and abs(taken) == steps[-1]):
            # Nothing moved, or rounding gave the step before again (sin at 2e15,
            # whose ulp is 0.25): a repeated step has no rate.
            continue
        values = evaluate(moved)
        if values is None:
            continue
        value = values[row]
        rest = value - centre - slope * taken
        if not math.isfinite(rest):
            continue
        rounding = max(
            ROUNDOFF * max(abs(value), abs(centre)), NOISE_FLOOR, noise, grain(value, centre)
        )
        steps.append(abs(taken))
        rests.append(rest)
        changes.append(value - centre)
        roundings.append(2.0 * rounding)
        floors.append(_ABOVE_NOISE * (2.0 * rounding + slope_err * abs(taken)))
    # A slope of 0 is counted in digits of the function's size per unit of x
    # (never of subnormal size: 0 proved to 1e-318 is as good as exact).
    size = max([abs(centre), *(abs(centre + c) for c in changes)], default=abs(centre))
    scale0 = zero_scale(size, x)
    if steps and slope == 0.0 and all(r == 0.0 for r in rests):
        # The values equal f(x) exactly at every step: the function is constant
        # on this side as far as floats can tell, and so is a slope of 0.
        quantum = max(math.ulp(centre), NOISE_FLOOR)
        bound = quantum / steps[0]
        k = count_digits(0.0, 0.0, bound, scale0)
        if k < MIN_DIGITS:
            # Steps too small to see the slope (expm1(x) / x at 1e-20 is 1 at
            # every step below 1e-20): a bound that checks nothing.
            return None, True
        return Finding(
            AGREES,
            k,
            0.0,
            bound,
            steps[0],
            f"agrees (the second method): the function's values at steps up to {steps[0]:.3g} "
            f"on this side equal f(x) exactly, so its slope is 0 to within {bound:.2g}, as "
            "the analytic derivative says",
        ), True
    # The run of steps (largest first) whose remainders stand above round-off,
    # down to the first that does not.
    run = [i for i in range(len(steps)) if abs(rests[i]) > floors[i]]
    if len(run) < 4:
        return None, bool(steps)
    last = run[-4:]
    if last != list(range(last[0], last[0] + 4)):
        return None, True  # not consecutive: the remainder wanders in and out of the noise
    rates = [
        math.log(abs(rests[i] / rests[i + 1])) / math.log(steps[i] / steps[i + 1])
        for i in last[:-1]
    ]
    shown = ", ".join(f"{p:.2f}" for p in rates)
    smallest = last[-1]
    # The function's own change f(x + h) - f(x) must shrink with h there (as h,
    # or faster), or stay within round-off: where it does not, the steps are
    # beyond where f is smooth (sin at 1e100 changes by O(1) over any step that
    # floats can take; cbrt at 1e-300 changes as h**(1/3) over steps above
    # 1e-300), and the remainder's rate says nothing of the slope.
    for i in last[:-1]:
        a, b = changes[i], changes[i + 1]
        if abs(b) > 4.0 * roundings[i + 1] and (
            a == 0.0 or math.log(abs(a / b)) / math.log(steps[i] / steps[i + 1]) < _SMOOTH
        ):
            return None, True
    if all(p >= _SQUARE for p in rates):
        # The linear term is below what the last remainder leaves: |f' - g| h <= |r(h)|.
        bound = (abs(rests[smallest]) + floors[smallest]) / steps[smallest]
        k = count_digits(slope, slope, bound, scale0)
        if k < MIN_DIGITS:
            return None, True  # right to within a bound that leaves no digits: undecided
        return Finding(
            AGREES,
            k,
            slope,
            bound,
            steps[smallest],
            f"agrees (the second method): the Taylor remainder f(x + h) - f(x) - g h falls "
            f"as h**2 or faster (rates {shown} down to step {steps[smallest]:.3g}), so the "
            f"slope is right to within {bound:.2g}, {k} digits",
        ), True
    slopes = [rests[i] / (side * steps[i]) for i in last]
    lo, hi = _LINEAR
    steady = max(slopes) - min(slopes) <= 0.1 * min(abs(s) for s in slopes)
    # The function must change at every one of those steps: where its values
    # equal f(x) exactly, the remainder is -g h by construction and falls as h
    # whatever the slope (a forward that cancels inside, log1p(exp(x)) - x at
    # 30, is quantized to ulps of x that its graph does not show). A flat
    # function can agree with a slope, never convict one.
    moving = all(changes[i] != 0.0 for i in last)
    if (
        all(lo <= p <= hi for p in rates)
        and steady
        and moving
        and steps[smallest] >= finest_step(x)
    ):
        off = slopes[-1]
        # The change from the step before (what the h**2 term still moves) and
        # twice the round-off (the floor is 32 times the round-off).
        noise_at = 2.0 * floors[smallest] / _ABOVE_NOISE / steps[smallest]
        error = abs(slopes[-1] - slopes[-2]) + noise_at
        if abs(off) > SAFETY * (error + slope_err):
            n = slope + off
            return LinearRemainder(
                numerical=n, off=off, error=error, step=steps[smallest], rates=shown
            ), True
    return None, True
