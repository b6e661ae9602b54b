"""What a verdict is: *wrong*, *agrees* (to k digits) or *undecided*, and the words for it.

A check compares an analytic derivative ``a`` (with ``a_err``, the round-off
it may hold: :mod:`minigrad.checking.numeric.rounding`) against numerical
estimates, each with an error bound (:mod:`minigrad.checking.numeric`). The
rooms of :mod:`minigrad.checking.verdicts` turn that evidence into a
:class:`Finding`:

- **agrees** when ``|a - n| <= error + a_err`` for an estimate whose bound
  leaves at least :data:`MIN_DIGITS` digits (:mod:`~minigrad.checking.verdicts.scales`,
  :mod:`~minigrad.checking.verdicts.taylor`);
- **wrong** only where :func:`~minigrad.checking.verdicts.convict.convict`,
  the one function that can say so, finds two independent pieces of evidence
  (:mod:`~minigrad.checking.verdicts.evidence`);
- **undecided** otherwise, judged by the classic test
  (:mod:`~minigrad.checking.verdicts.classic`), as the report says.

Example:
    >>> digits(2.0, 2.0000000001, 1e-9), zero_scale(2.0, 0.5)
    (9, 2.0)
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

from minigrad.checking.numeric.steps import Estimate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.checking.verdicts.evidence import Charge

__all__ = [
    "AGREES",
    "CLASSIC_ATOL",
    "CLASSIC_RTOL",
    "DOUBT",
    "FINEST_ULPS",
    "MIN_DIGITS",
    "SAFETY",
    "SHARPEST_DIGITS",
    "SHARP_DIGITS",
    "UNDECIDED",
    "WRONG",
    "Finding",
    "Verdict",
    "agrees_within",
    "contradicted",
    "digits",
    "finest_step",
    "undecided",
    "zero_scale",
]


class Verdict(enum.StrEnum):
    """What the evidence proves of one entry; the words every report prints.

    Decided in :mod:`minigrad.checking.verdicts` alone: *wrong* only by
    :func:`~minigrad.checking.verdicts.convict.convict`, *agrees* and
    *undecided* by the examiners that weigh the estimates. A member is its
    word, printed and shown as the word: ``str(WRONG) == "wrong"``, and
    ``repr(WRONG)`` is ``'wrong'``, as every stored output shows it.

    Example:
        >>> WRONG, f"{AGREES} to 12 digits", UNDECIDED == "undecided"
        ('wrong', 'agrees to 12 digits', True)
    """

    WRONG = "wrong"
    AGREES = "agrees"
    UNDECIDED = "undecided"

    def __repr__(self) -> str:
        return repr(self.value)


WRONG = Verdict.WRONG
AGREES = Verdict.AGREES
UNDECIDED = Verdict.UNDECIDED

#: How many error bounds a difference must span before a rule is called wrong.
#: Measured (``python benchmarks/bound_coverage.py``): over 13,867 extrapolated
#: estimates of 17 functions at |x| from 1e-8 to 1e8 and at domain edges, each
#: against its exact derivative (mpmath, 50 digits), the true error stayed
#: below 0.21 times the stated bound (median 0.013, 99% below 0.1) with the
#: round-off read off the graph, as a check reads it; a factor of 8 leaves a
#: margin of 38 over the worst, and costs nothing in sensitivity where it
#: counts: there the bound is 1e-12 to 1e-14 relative, and a rule error of
#: 1e-8 is still a thousand bounds and more. A wrong verdict also needs two
#: scales of step to agree on the difference, which no single bad bound gives.
#: The bounds reports state were swept too (``python benchmarks/bounds.py``):
#: at none of 10,918 entries (every rule, compositions, 1e-300 to 1e300,
#: subnormals, domain edges, kinks) is the true error above the stated bound.
SAFETY = 8.0
#: How many error bounds a sharper estimate must put between itself and the
#: analytic value to forbid an agreement that blunter evidence gave (the
#: entry is then undecided, and warned): more than any broken bound of the
#: coverage sweep (``python benchmarks/bounds.py``: 4 x the bound covers
#: every one, all at kinks, poles, periods or forwards whose round-off their
#: graph hides), half of what convicts.
DOUBT = 4.0
#: The fewest digits an agreement must prove to count; below it the entry is
#: undecided (a bound that leaves 1 or 2 digits would call a rule 5% off
#: right).
MIN_DIGITS = 3
#: Digits that make an agreement sharp enough to catch a rule error of 1e-8
#: with room to spare; an agreeing entry with fewer is sharpened (larger
#: steps, where round-off weighs less) when that is cheap.
SHARP_DIGITS = 9
#: Digits an agreement is sharpened to where a rule its user wrote is checked
#: with a few inputs (a few dozen evaluations in all): what float64 resolves
#: beside a pole or at tiny magnitudes (1/x at 1e-150, where Ridders'
#: extrapolation tells 1e-11 from 0), and the accuracy the rule table is
#: held to (1e-12, ``benchmarks/accuracy.py``); a wrong rule 1e-10 off
#: agrees to 9 digits there until sharpened.
SHARPEST_DIGITS = 11
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

    Only :func:`~minigrad.checking.verdicts.convict.convict` makes a finding
    whose verdict is *wrong*, and it keeps the charge it weighed on it
    (``charge``), so that later evidence can be weighed with it again.

    Attributes:
        verdict: :data:`WRONG`, :data:`AGREES` or :data:`UNDECIDED`.
        digits: Significant digits of agreement (0 to 16).
        numerical: The estimate the verdict rests on (NaN when none).
        error: Its error bound (NaN when none).
        step: The step it came from (NaN when none).
        reason: The verdict in words.
        charge: The evidence a conviction rests on (None for any other finding).
    """

    __slots__ = ("charge", "digits", "error", "numerical", "reason", "step", "verdict")

    def __init__(
        self,
        verdict: Verdict,
        digits: int,
        numerical: float,
        error: float,
        step: float,
        reason: str,
        charge: Charge | None = None,
    ) -> None:
        self.verdict = verdict
        self.digits = digits
        self.numerical = numerical
        self.error = error
        self.step = step
        self.reason = reason
        self.charge = charge

    def __repr__(self) -> str:
        return f"Finding({self.verdict!r}, {self.digits}, {self.numerical!r}, {self.reason!r})"


def agrees_within(a: float, a_err: float, e: Estimate) -> bool:
    """Whether ``a`` lies within estimate ``e``'s bound (and its own round-off)."""
    return abs(a - e.value) <= e.error + a_err


def contradicted(a: float, a_err: float, ests: Sequence[Estimate], gap: float) -> bool:
    """Whether an agreeing estimate's bound is far below ``gap`` (the evidence disagrees)."""
    return any(agrees_within(a, a_err, e) and 2.0 * e.error + a_err < 0.5 * gap for e in ests)


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


def undecided(ests: Sequence[Estimate], reason: str, bounded: Estimate | None = None) -> Finding:
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
