"""The one place that calls a derivative wrong.

Every method that can find a rule at fault hands what it found to
:func:`convict` as a charge (:mod:`minigrad.checking.verdicts.evidence`), and
:func:`convict` alone returns a :class:`~minigrad.checking.verdicts.findings.Finding`
whose verdict is *wrong*. A conviction rests on two independent pieces of
evidence, and on nothing that contradicts them:

- extrapolated estimates (:class:`~minigrad.checking.verdicts.evidence.Disagreement`):
  two scales of step agree on the difference, no estimate that agrees with
  the analytic value has a bound far below it, and the second method, when
  asked, does not prove the slope right to well within it;
- the Taylor remainder (:class:`~minigrad.checking.verdicts.evidence.Remainders`):
  it falls as ``h`` on both sides, by the same amount (a kink next to ``x``
  makes one side look linear, not both), or on the one side there is where
  the other leaves the domain; and no extrapolated estimate agrees closely;
- either of those two, unless the fine steps below them
  (:class:`~minigrad.checking.numeric.fine.FineMean`) side with the analytic
  value: their mean nearer it than the charge's estimate, by
  :data:`FINE_SIGMAS` of its own standard errors and more, shows the slope
  changing below the steps that found the difference (a sine inside a
  custom rule's forward at 3e7, which steps of 279 and 2790 average away);
  a mean whose quotients scatter more than that is noise, and sets nothing
  aside (a gelu written with ``1 + erf`` at -3.1 holds 800 ulps);
- a broken analytic side (:class:`~minigrad.checking.verdicts.evidence.BrokenDerivative`):
  NaN or inf, two passes that differ, floats and Values that differ, a
  derivative that could not be computed. No number is weighed: the analytic
  side fails by itself.

What does not convict is *undecided*, with the reason in words.

Example:
    >>> from minigrad.checking.numeric.steps import Estimate
    >>> from minigrad.checking.verdicts.evidence import Disagreement
    >>> one, two = Estimate(2.0, 1e-9, 1e-3), Estimate(2.0, 1e-9, 1e-2)
    >>> charge = Disagreement(analytic=2.2, roundoff=0.0, pair=(one, two), best=one,
    ...                       estimates=(one, two))
    >>> convict(charge).verdict
    'wrong'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from minigrad.checking.numeric.fine import FineMean
from minigrad.checking.numeric.steps import Estimate
from minigrad.checking.verdicts.evidence import (
    BrokenDerivative,
    Charge,
    Disagreement,
    Remainders,
)
from minigrad.checking.verdicts.findings import (
    AGREES,
    UNDECIDED,
    WRONG,
    Finding,
    contradicted,
    digits,
    undecided,
)

__all__ = ["FINE_SIGMAS", "convict", "reweigh"]

#: How many of its own standard errors the fine steps' mean must stand from
#: the charge's estimate (at least half the difference away from it) to set
#: the charge aside: with 8 quotients (Student's t, 7 degrees of freedom), a
#: mean that noise put that far on the analytic side is rarer than 3 in 10,000.
FINE_SIGMAS = 6.0


def convict(charge: Charge) -> Finding:
    """*Wrong* when the charge holds (see the module), else *undecided* with the reason.

    The finding of a conviction keeps its charge (``Finding.charge``), so that
    evidence found later can be weighed with it (:func:`reweigh`).
    """
    if isinstance(charge, BrokenDerivative):
        return Finding(WRONG, 0, math.nan, math.nan, math.nan, charge.words, charge)
    if isinstance(charge, Disagreement):
        a, a_err, best, (one, two) = charge.analytic, charge.roundoff, charge.best, charge.pair
        gap = charge.gap
        if contradicted(a, a_err, charge.estimates, gap):
            return undecided(
                charge.estimates,
                f"{charge.what} estimates contradict each other: steps {one.step:.3g} and "
                f"{two.step:.3g} put the derivative {gap:.3g} from the analytic value, but "
                "another step agrees with it closely",
            )
        times = gap / (best.error + a_err) if best.error + a_err > 0.0 else math.inf
        reason = (
            f"wrong: the {charge.what} derivative is {best.value:.10g} +- {best.error:.2g} "
            f"(steps {one.step:.3g} and {two.step:.3g} agree on it); the "
            f"difference {gap:.3g} is {times:.3g} times the error bound"
        )
        second = charge.second
        if second is not None and second.verdict == AGREES and second.error < 0.5 * gap:
            return Finding(
                UNDECIDED,
                0,
                best.value,
                math.inf,
                best.step,
                f"the methods disagree: {reason}; but {second.reason}",
            )
        heard = _fine(charge, a, a_err, gap, reason)
        if heard is not None:
            return Finding(UNDECIDED, 0, best.value, math.inf, best.step, heard)
        k = digits(a, best.value, best.error)
        return Finding(WRONG, k, best.value, best.error, best.step, reason, charge)
    # The second method: both sides alike, or the only side in the domain.
    slope, sides = charge.slope, charge.sides
    if len(sides) == 2 and abs(sides[0].numerical - sides[1].numerical) <= 0.1 * abs(
        slope - sides[0].numerical
    ):
        side = min(sides, key=lambda s: s.error)
    elif len(sides) == 1 and not all(charge.reached):
        side = sides[0]  # the other side is off the domain: one side is all there is
    else:
        return Finding(
            UNDECIDED,
            0,
            math.nan,
            math.nan,
            math.nan,
            "the Taylor remainder falls as h on one side only (a kink or a jump nearby?)",
        )
    n = side.numerical
    reason = (
        f"wrong (the second method): the Taylor remainder f(x + h) - f(x) - g h falls "
        f"only as h (rates {side.rates} down to step {side.step:.3g}), so the slope "
        f"is off by {side.off:.3g}: the derivative is about {n:.10g}"
    )
    if contradicted(slope, charge.roundoff, charge.first, abs(slope - n)):
        # Two methods that disagree decide nothing.
        return Finding(
            UNDECIDED,
            0,
            math.nan,
            math.nan,
            math.nan,
            "the methods disagree: an extrapolated estimate agrees closely, but " + reason,
        )
    heard = _fine(charge, slope, charge.roundoff, abs(slope - n), reason)
    if heard is not None:
        return Finding(UNDECIDED, 0, n, math.inf, side.step, heard)
    return Finding(WRONG, digits(slope, n, side.error), n, side.error, side.step, reason, charge)


def _fine(
    charge: Disagreement | Remainders, a: float, a_err: float, gap: float, reason: str
) -> str | None:
    """Why the fine steps set the charge aside (None: they were not asked, or do not)."""
    fine = charge.fine
    if fine is None or not abs(fine.mean - a) <= 0.5 * gap + a_err:
        return None
    if not FINE_SIGMAS * fine.spread <= 0.5 * gap:
        return None  # the quotients scatter too much for their mean to say anything
    return (
        f"the steps disagree: {reason}; but {fine.words}, sides with the analytic "
        "value: the slope changes below the steps that found the difference"
    )


def reweigh(
    conviction: Finding,
    *,
    second: Finding | None = None,
    first: Sequence[Estimate] = (),
    fine: FineMean | None = None,
) -> Finding:
    """A conviction's charge weighed again with more evidence, by :func:`convict`.

    Args:
        conviction: A finding of :func:`convict` (any other is returned as it is).
        second: The second method's finding, against a :class:`Disagreement`.
        first: The first method's estimates, against :class:`Remainders`.
        fine: The fine steps' mean, against either (the other evidence
            weighed before stays).

    Example:
        >>> from minigrad.checking.numeric.steps import Estimate
        >>> from minigrad.checking.verdicts.evidence import Disagreement
        >>> one, two = Estimate(2.0, 1e-9, 1e-3), Estimate(2.0, 1e-9, 1e-2)
        >>> wrong = convict(Disagreement(analytic=2.2, roundoff=0.0, pair=(one, two),
        ...                              best=one, estimates=(one, two)))
        >>> right = Finding(AGREES, 12, 2.2, 1e-12, 1e-4, "the remainder falls as h**2")
        >>> reweigh(wrong, second=right).verdict
        'undecided'
    """
    charge = conviction.charge
    if isinstance(charge, Disagreement):
        return convict(replace(charge, second=second or charge.second, fine=fine or charge.fine))
    if isinstance(charge, Remainders):
        return convict(
            replace(charge, first=tuple(first) or charge.first, fine=fine or charge.fine)
        )
    return conviction
