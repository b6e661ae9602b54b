"""What the numbers prove about one derivative: *wrong*, *agrees* (to k digits), or *undecided*.

A check compares an analytic derivative ``a`` (with ``a_err``, the round-off
it may hold: :mod:`minigrad.checking.numeric.rounding`) against numerical estimates,
each with an error bound (:mod:`minigrad.checking.numeric.steps`). This module
turns that evidence into a verdict, with the reason in words:

- **agrees** when ``|a - n| <= error + a_err`` for an estimate whose bound
  leaves at least :data:`MIN_DIGITS` digits: the analytic value is then right
  to ``digits`` significant digits, ``digits = floor(log10(max(|a|, |n|) /
  (|a - n| + error)))``. The central difference at the nominal step counts
  when it agrees within its round-off (its truncation error is not measured,
  but a rule error would have to cancel it exactly, to the last digits, for a
  wrong rule to agree there; where truncation shows, the entry is not
  settled by it and goes on to extrapolation).
- **wrong** when the difference exceeds :data:`SAFETY` times the error bound
  (plus ``a_err``) at two scales of step that agree with each other: the two
  smallest scales that resolve the difference, so a large step that
  straddles a kink or a pole and gives a steady wrong number cannot decide it
  alone; and no estimate that agrees with ``a`` has a bound far below the
  difference (such evidence contradicts itself, and decides nothing).
- **undecided** otherwise: the estimates disagree with each other, none
  settled (the function is flat in float64 there, or every step left the
  domain), or the bound is wider than the derivative. A second method
  (:mod:`minigrad.checking.verdicts.taylor`) is tried next, and what stays undecided
  is judged by :func:`classic`, PyTorch's test, as the report says.

Example:
    >>> from minigrad.checking.numeric.steps import Estimate
    >>> right = [Estimate(2.0000000001, 1e-9, 1e-3), Estimate(2.0, 1e-10, 1e-4)]
    >>> judge(2.0, 0.0, right).verdict, judge(2.0, 0.0, right).digits
    ('agrees', 10)
    >>> judge(2.2, 0.0, right).verdict
    'wrong'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from minigrad.checking.numeric.steps import Estimate

__all__ = [
    "AGREES",
    "CLASSIC_ATOL",
    "CLASSIC_RTOL",
    "FINEST_ULPS",
    "MIN_DIGITS",
    "SAFETY",
    "SHARP_DIGITS",
    "UNDECIDED",
    "WRONG",
    "Finding",
    "classic",
    "contradicted",
    "digits",
    "finest_step",
    "judge",
    "nominal",
    "resolves",
    "settled",
    "zero_scale",
]

WRONG = "wrong"
AGREES = "agrees"
UNDECIDED = "undecided"

#: How many error bounds a difference must span before a rule is called wrong.
#: Measured (``python benchmarks/bound_coverage.py``): over 13,867 extrapolated
#: estimates of 17 functions at |x| from 1e-8 to 1e8 and at domain edges, each
#: against its exact derivative (mpmath, 50 digits), the true error stayed
#: below 0.62 times the stated bound (median 0.015, 99% below 0.35) with the
#: round-off read off the graph, as a check reads it; a factor of 8 leaves a
#: margin of 13 over the worst, and costs nothing in sensitivity where it
#: counts: there the bound is 1e-12 to 1e-14 relative, and a rule error of
#: 1e-8 is still a thousand bounds and more. A wrong verdict also needs two
#: scales of step to agree on the difference, which no single bad bound gives.
#: The bounds reports state were swept too (``python benchmarks/bounds.py``):
#: at none of 10,955 entries (every rule, compositions, 1e-300 to 1e300,
#: subnormals, domain edges, kinks) is the true error above the stated bound.
SAFETY = 8.0
#: The fewest digits an agreement must prove to count; below it the entry is
#: undecided (a bound that leaves 1 or 2 digits would call a rule 5% off
#: right).
MIN_DIGITS = 3
#: Digits that make an agreement sharp enough to catch a rule error of 1e-8
#: with room to spare; an agreeing entry with fewer is sharpened (larger
#: steps, where round-off weighs less) when that is cheap.
SHARP_DIGITS = 9
#: A wrong verdict needs evidence from steps of at least this many ulps of x.
FINEST_ULPS = 64.0
#: PyTorch's tolerances: the classic test for what stays undecided.
CLASSIC_ATOL = 1e-5
CLASSIC_RTOL = 1e-3


def digits(a: float, n: float, error: float, zero_scale: float = 0.0) -> int:
    """Significant digits to which ``a`` is proved right by ``n +- error`` (0 to 16).

    A derivative of exactly 0 has no digits of its own: ``zero_scale``, when
    given, is the size its digits are counted against (the function's size
    per unit of its input: a slope of 0 proved to within 1e-12 of a function
    of size 1 is right to 12 digits; to within 1e5 it is not checked at all).

    Example:
        >>> digits(1.0, 1.0000001, 1e-12), digits(0.0, 1e-20, 1e-20)
        (6, 0)
        >>> digits(0.0, 0.0, 1e-12, zero_scale=1.0), digits(0.0, 0.0, 1e5, zero_scale=1.0)
        (12, 0)
    """
    scale = max(abs(a), abs(n)) if a != 0.0 else max(abs(n), zero_scale)
    spread = abs(a - n) + error
    if not (scale > 0.0 and math.isfinite(spread)):
        return 0
    if spread == 0.0:
        return 16
    # Logarithms apart: scale / spread can underflow (1e-300 / 1e10).
    return max(0, min(16, math.floor(math.log10(scale) - math.log10(spread))))


def zero_scale(size: float, x: float) -> float:
    """What a slope of 0 is counted against: a function of ``size`` per unit of ``x``.

    ``size / max(|x|, 1)``, and never below the smallest normal float (a
    slope of 0 proved to within 1e-318 is as good as exact).

    Example:
        >>> zero_scale(2.0, 0.5), zero_scale(1e9, 1e8)
        (2.0, 10.0)
    """
    return max(abs(size) / max(abs(x), 1.0), 2.0**-1022)


class Finding:
    """What the evidence says about one entry.

    Attributes:
        verdict: ``"wrong"``, ``"agrees"`` or ``"undecided"``.
        digits: Significant digits of agreement (0 to 16).
        numerical: The estimate the verdict rests on (NaN when none).
        error: Its error bound (NaN when none).
        step: The step it came from (NaN when none).
        reason: The verdict in words.
    """

    __slots__ = ("digits", "error", "numerical", "reason", "step", "verdict")

    def __init__(
        self,
        verdict: str,
        digits: int,
        numerical: float,
        error: float,
        step: float,
        reason: str,
    ) -> None:
        self.verdict = verdict
        self.digits = digits
        self.numerical = numerical
        self.error = error
        self.step = step
        self.reason = reason

    def __repr__(self) -> str:
        return f"Finding({self.verdict!r}, {self.digits}, {self.numerical!r}, {self.reason!r})"


def nominal(a: float, a_err: float, n: float, roundoff: float, step: float) -> Finding | None:
    """The central difference at the nominal step settles an agreement, or None.

    Example:
        >>> nominal(2.0, 0.0, 2.0000000001, 1e-9, 1e-6).digits
        9
        >>> nominal(2.2, 0.0, 2.0000000001, 1e-9, 1e-6) is None
        True
    """
    if not abs(a - n) <= roundoff + a_err:
        return None
    k = digits(a, n, roundoff)
    if k < MIN_DIGITS:
        return None
    return Finding(
        AGREES,
        k,
        n,
        roundoff,
        step,
        f"agrees to {k} digits with the central difference {n:.10g} at step {step:.3g}, "
        f"within its round-off ({roundoff:.2g})",
    )


def _agrees(a: float, a_err: float, e: Estimate) -> bool:
    return abs(a - e.value) <= e.error + a_err


def resolves(a: float, a_err: float, e: Estimate, finest: float = 0.0) -> bool:
    """Whether estimate ``e`` resolves a difference from ``a`` that it may convict on.

    Example:
        >>> sharp, blunt = Estimate(2.0, 1e-9, 1e-3), Estimate(2.0, 0.1, 1e-3)
        >>> resolves(2.2, 0.0, sharp), resolves(2.2, 0.0, blunt)
        (True, False)
    """
    # A flat estimate (the values did not change at all) can agree, and
    # contradict, but never convict: what it shows is the resolution of the
    # values, not the size of the derivative. Nor can one that does not know
    # its own value to a digit: it shows that the derivative is small, not
    # what it is (steps that straddle a pole 1e-10 away see sec**2 symmetric
    # about it, and 2.1e11 +- 1.9e11 where the second derivative of tan is 2e30).
    return (
        not e.flat
        and abs(e.value) > SAFETY * e.error
        and e.step >= finest
        and abs(a - e.value) > SAFETY * (e.error + a_err)
    )


def finest_step(x: float) -> float:
    """The smallest step whose evidence may call a rule wrong at ``x``: 64 ulps.

    Below it the inputs that floats can reach lie on a grid too coarse to
    tell a function from its alias: ``sin`` at 1e71 looks smooth on the grid
    of its ulps (1.2e55, nearly a multiple of 2 pi), with the wrong slope.
    Such evidence may still agree; it cannot convict.

    Example:
        >>> finest_step(1.0) == 64 * 2.0**-52
        True
    """
    return FINEST_ULPS * math.ulp(x)


def _pair(a: float, a_err: float, ests: Sequence[Estimate], finest: float = 0.0) -> list[Estimate]:
    """The two smallest scales that resolve the difference, when they agree on it; else [].

    Two scales: steps at least 1.5 times apart (one step seen twice is one
    piece of evidence, not two).
    """
    sharp = sorted((e for e in ests if resolves(a, a_err, e, finest)), key=lambda e: e.step)
    if not sharp:
        return []
    one = sharp[0]
    two = next((e for e in sharp[1:] if e.step >= 1.5 * one.step), None)
    if two is None:
        return []
    gap = abs(a - two.value)
    if abs(one.value - two.value) > min(one.error + two.error, 0.1 * gap):
        return []
    if _structured(ests, one.step, gap):
        return []
    return [one, two]


def _structured(ests: Sequence[Estimate], step: float, gap: float) -> bool:
    """Whether a smaller step than ``step`` shows structure as large as half of ``gap``.

    A smooth function's tableau moves less at smaller steps. Where one at a
    smaller step moved by more than round-off explains, by half the
    difference and more, the function has features at that scale which the
    larger steps average out: ``t * t + sin(t)`` at 3e7, whose steps of 279
    and 2790 span hundreds of periods and agree on the average slope 2t, not
    on 2t + cos(t). Such larger steps cannot convict.
    """
    # The tableau there moved by more than twice its round-off (not noise whose
    # model fell short at a step of a few ulps), and by half the difference.
    return any(
        not e.flat
        and e.step < step / 1.5
        and e.error > 2.0 * e.roundoff
        and e.error - e.roundoff > 0.5 * gap
        for e in ests
    )


def contradicted(a: float, a_err: float, ests: Sequence[Estimate], gap: float) -> bool:
    """Whether an agreeing estimate's bound is far below ``gap`` (the evidence disagrees)."""
    return any(_agrees(a, a_err, e) and 2.0 * e.error + a_err < 0.5 * gap for e in ests)


def judge(
    a: float,
    a_err: float,
    ests: Sequence[Estimate],
    what: str = "extrapolated",
    finest: float = 0.0,
) -> Finding:
    """The verdict of extrapolated estimates (any number, from any scales of step).

    Args:
        a: The analytic value.
        a_err: Its round-off.
        ests: The estimates, each with its bound and step.
        what: How the estimates were made, for the reason.
        finest: Estimates from smaller steps cannot call the rule wrong
            (:func:`finest_step`).
    """
    pair = _pair(a, a_err, ests, finest)
    if pair:
        best = min(pair, key=lambda e: e.error)
        # The number shown is the sharpest estimate that resolves the difference
        # and agrees with the pair (smaller steps confirming a difference found
        # at larger ones give the pair, larger ones may give the sharper number).
        best = min(
            (
                e
                for e in ests
                if resolves(a, a_err, e, finest)
                and abs(e.value - best.value) <= e.error + best.error
            ),
            key=lambda e: e.error,
            default=best,
        )
        gap = abs(a - best.value)
        if not contradicted(a, a_err, ests, gap):
            times = gap / (best.error + a_err) if best.error + a_err > 0.0 else math.inf
            return Finding(
                WRONG,
                digits(a, best.value, best.error),
                best.value,
                best.error,
                best.step,
                f"wrong: the {what} derivative is {best.value:.10g} +- {best.error:.2g} "
                f"(steps {pair[0].step:.3g} and {pair[1].step:.3g} agree on it); the "
                f"difference {gap:.3g} is {times:.3g} times the error bound",
            )
        # The agreement comes from steps below the pair's: the larger steps reach
        # beyond where the function is smooth (a pole 1e-10 away: tan's second
        # derivative at pi/2 - 1e-10, whose steps from 1e-6 straddle the pole
        # and see sec**2 symmetric about it), and the smaller ones decide.
        below = [e for e in ests if e.step < pair[0].step / 1.5 and not e.flat]
        if below and not _pair(a, a_err, below, finest):
            closer = judge(a, a_err, below, what, finest)
            if closer.verdict == AGREES:
                closer.reason += (
                    f"; larger steps ({pair[0].step:.3g} and {pair[1].step:.3g}) disagree, "
                    "as steps that reach past a pole or a kink next to x do"
                )
                return closer
        return _undecided(
            ests,
            f"{what} estimates contradict each other: steps {pair[0].step:.3g} and "
            f"{pair[1].step:.3g} put the derivative {gap:.3g} from the analytic value, but "
            "another step agrees with it closely",
        )
    agreeing = [e for e in ests if _agrees(a, a_err, e)]
    if agreeing:
        best = max(agreeing, key=lambda e: (digits(a, e.value, e.error), -e.error))
        k = digits(a, best.value, best.error)
        # A sharper estimate that resolves a difference outweighs a blunter one
        # that agrees: one scale cannot convict, but it forbids the agreement.
        lone = [e for e in ests if resolves(a, a_err, e, finest) and e.error < best.error]
        if lone:
            sharp = min(lone, key=lambda e: e.error)
            return _undecided(
                ests,
                f"the {what} derivative {sharp.value:.10g} +- {sharp.error:.2g} (step "
                f"{sharp.step:.3g}) is {abs(a - sharp.value):.3g} from the analytic value, "
                "but no second scale of step confirms it",
            )
        if k >= MIN_DIGITS:
            return Finding(
                AGREES,
                k,
                best.value,
                best.error,
                best.step,
                f"agrees to {k} digits with the {what} derivative {best.value:.10g} +- "
                f"{best.error:.2g} (from step {best.step:.3g})",
            )
        return _undecided(
            ests,
            f"agrees with the {what} derivative {best.value:.10g} +- {best.error:.2g}, "
            f"but that bound leaves fewer than {MIN_DIGITS} digits",
            bounded=best,
        )
    if not ests:
        return _undecided(
            ests,
            "no estimate settled: the function's values do not change over any step "
            "(it is flat in float64 here), or no step fits in its domain",
        )
    return _undecided(ests, f"{what} estimates from steps of different sizes disagree")


def _undecided(ests: Sequence[Estimate], reason: str, bounded: Estimate | None = None) -> Finding:
    """An undecided finding, showing the estimate with the smallest bound.

    Only an estimate that agrees, with a bound too wide to leave digits
    (``bounded``), keeps its bound. Where the estimates disagree or
    contradict each other, one estimate's bound says nothing of the
    derivative (sin at 1e170, whose steps alias its period, gives 1e-156 +-
    4e-157 where the derivative is 0.56): the error is then infinite.
    """
    if bounded is not None:
        return Finding(UNDECIDED, 0, bounded.value, bounded.error, bounded.step, reason)
    best = min(ests, key=lambda e: e.error) if ests else None
    if best is None:
        return Finding(UNDECIDED, 0, math.nan, math.nan, math.nan, reason)
    return Finding(UNDECIDED, 0, best.value, math.inf, best.step, reason)


def settled(
    analytic: Sequence[tuple[float, float]], want: int, nominal_step: float, finest: float = 0.0
) -> Callable[[list[Estimate]], bool]:
    """When a row's estimates settle every mode's analytic value: a callback for extrapolation.

    A row is settled when, for each ``(a, a_err)``, an estimate agrees to
    ``want`` digits, or a pair at steps no larger than ``nominal_step``
    resolves the difference (larger steps alone are confirmed by smaller
    ones: the extrapolation goes on to them).
    """

    def done(ests: list[Estimate]) -> bool:
        for a, a_err in analytic:
            agreed = any(_agrees(a, a_err, e) and digits(a, e.value, e.error) >= want for e in ests)
            if agreed:
                continue
            small = [e for e in ests if e.step <= nominal_step]
            pair = _pair(a, a_err, small, finest)
            if not pair or contradicted(a, a_err, ests, abs(a - pair[0].value)):
                return False
        return True

    return done


# The classic test: PyTorch's, with an error bound's leniency.


def classic(
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
