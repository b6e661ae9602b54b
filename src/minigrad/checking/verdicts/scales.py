"""The first method's verdict: estimates at several scales of step, against the analytic value.

A check compares an analytic derivative ``a`` (with ``a_err``, the round-off
it may hold: :mod:`minigrad.checking.numeric.rounding`) against numerical
estimates, each with an error bound (:mod:`minigrad.checking.numeric`). This
module weighs those estimates (:func:`weigh`), with the reason in words:

- **agrees** when ``|a - n| <= error + a_err`` for an estimate whose bound
  leaves at least :data:`~minigrad.checking.verdicts.findings.MIN_DIGITS`
  digits: the analytic value is then right to ``digits`` significant digits,
  ``digits = floor(log10(max(|a|, |n|) / (|a - n| + error)))``. The central
  difference at the nominal step counts when it agrees within its round-off
  (:func:`agrees_at_nominal`: its truncation error is not measured, but a
  rule error would have to cancel it exactly, to the last digits, for a
  wrong rule to agree there; where truncation shows, the entry is not
  settled by it and goes on to extrapolation).
- **a charge** when the difference exceeds
  :data:`~minigrad.checking.verdicts.findings.SAFETY` times the error bound
  (plus ``a_err``) at two scales of step that agree with each other: the two
  smallest scales that resolve the difference, so a large step that
  straddles a kink or a pole and gives a steady wrong number cannot decide it
  alone. The charge (a :class:`~minigrad.checking.verdicts.evidence.Disagreement`)
  goes to :func:`~minigrad.checking.verdicts.convict.convict`, which calls
  the rule wrong unless an estimate that agrees with ``a`` has a bound far
  below the difference (such evidence contradicts itself, and decides nothing).
- **undecided** otherwise: the estimates disagree with each other, none
  settled (the function is flat in float64 there, or every step left the
  domain), or the bound is wider than the derivative. A second method
  (:mod:`minigrad.checking.verdicts.taylor`) is tried next, and what stays
  undecided is judged by the classic test
  (:func:`~minigrad.checking.verdicts.classic.classic_test`), PyTorch's, as
  the report says.

Example:
    >>> from minigrad.checking.numeric.steps import Estimate
    >>> right = [Estimate(2.0000000001, 1e-9, 1e-3), Estimate(2.0, 1e-10, 1e-4)]
    >>> weigh(2.0, 0.0, right).verdict, weigh(2.0, 0.0, right).digits
    ('agrees', 10)
    >>> weigh(2.2, 0.0, right).verdict
    'wrong'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minigrad.checking.numeric.steps import Estimate
from minigrad.checking.verdicts.convict import convict
from minigrad.checking.verdicts.evidence import Disagreement
from minigrad.checking.verdicts.findings import (
    AGREES,
    DOUBT,
    MIN_DIGITS,
    SAFETY,
    UNDECIDED,
    Finding,
    agrees_within,
    contradicted,
    digits,
    undecided,
)

__all__ = ["agrees_at_nominal", "resolves", "settled", "sharper_against", "weigh"]


def agrees_at_nominal(
    a: float, a_err: float, n: float, roundoff: float, step: float
) -> Finding | None:
    """The central difference at the nominal step settles an agreement, or None.

    Example:
        >>> agrees_at_nominal(2.0, 0.0, 2.0000000001, 1e-9, 1e-6).digits
        9
        >>> agrees_at_nominal(2.2, 0.0, 2.0000000001, 1e-9, 1e-6) is None
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


def sharper_against(
    a: float, a_err: float, ests: Sequence[Estimate], error: float, finest: float = 0.0
) -> Estimate | None:
    """The sharpest estimate with a bound below ``error`` that puts ``a`` far outside it.

    An agreement rests on an estimate whose bound holds ``a``; a sharper one
    that puts ``a`` more than :data:`~minigrad.checking.verdicts.findings.DOUBT`
    of its bounds away (too few to convict, which takes
    :data:`~minigrad.checking.verdicts.findings.SAFETY` at two scales) forbids
    it: the entry is undecided, and warned (log at 1e6 with a rule 1e-9 off
    agrees within 6.7e-15 at a step of 5, and is 6.7 bounds of 1.5e-16 off at
    a step of 364). None when no such estimate was made.

    Example:
        >>> blunt, sharp = Estimate(2.0, 1e-6, 1e-3), Estimate(2.0, 1e-9, 1e-2)
        >>> sharper_against(2.00000001, 0.0, [blunt, sharp], blunt.error) is sharp
        True
        >>> sharper_against(2.000000003, 0.0, [blunt, sharp], blunt.error) is None
        True
    """
    against = [
        e
        for e in ests
        if not e.flat
        and e.error < error
        and abs(e.value) > SAFETY * e.error
        and e.step >= finest
        and abs(a - e.value) > DOUBT * (e.error + a_err)
    ]
    return min(against, key=lambda e: e.error, default=None)


def _pair(a: float, a_err: float, ests: Sequence[Estimate], finest: float = 0.0) -> list[Estimate]:
    """The two smallest scales that resolve the difference and agree on it; else [].

    Two scales: steps at least 1.5 times apart (one step seen twice is one
    piece of evidence, not two). They agree within their bounds, or, where
    a forward's round-off broke those (a gelu written with ``1 + erf`` at
    -3.1, whose values hold 800 ulps), to a thousandth of the difference.
    Where the smallest scale does not agree with the next, the next pair may
    convict, but only if no smaller scale resolves another difference (more
    than a tenth of it away).
    """
    sharp = sorted((e for e in ests if resolves(a, a_err, e, finest)), key=lambda e: e.step)
    for k, one in enumerate(sharp):
        two = next((e for e in sharp[k + 1 :] if e.step >= 1.5 * one.step), None)
        if two is None:
            return []
        gap = abs(a - two.value)
        if any(abs(e.value - two.value) > 0.1 * gap for e in sharp[:k]):
            return []
        if abs(one.value - two.value) > min(max(one.error + two.error, 1e-3 * gap), 0.1 * gap):
            continue
        if _structured(ests, one.step, gap):
            return []
        return [one, two]
    return []


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


def weigh(
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
        charge = Disagreement(
            analytic=a,
            roundoff=a_err,
            pair=(pair[0], pair[1]),
            best=best,
            estimates=tuple(ests),
            what=what,
        )
        found = convict(charge)
        if found.verdict != UNDECIDED:
            return found
        # The agreement comes from steps below the pair's: the larger steps reach
        # beyond where the function is smooth (a pole 1e-10 away: tan's second
        # derivative at pi/2 - 1e-10, whose steps from 1e-6 straddle the pole
        # and see sec**2 symmetric about it), and the smaller ones decide.
        below = [e for e in ests if e.step < pair[0].step / 1.5 and not e.flat]
        if below and not _pair(a, a_err, below, finest):
            closer = weigh(a, a_err, below, what, finest)
            if closer.verdict == AGREES:
                closer.reason += (
                    f"; larger steps ({pair[0].step:.3g} and {pair[1].step:.3g}) disagree, "
                    "as steps that reach past a pole or a kink next to x do"
                )
                return closer
        return found
    agreeing = [e for e in ests if agrees_within(a, a_err, e)]
    if agreeing:
        best = max(agreeing, key=lambda e: (digits(a, e.value, e.error), -e.error))
        k = digits(a, best.value, best.error)
        # A sharper estimate far from the analytic value outweighs a blunter one
        # that agrees: one scale cannot convict, but it forbids the agreement.
        sharp = sharper_against(a, a_err, ests, best.error, finest)
        if sharp is not None:
            gap = abs(a - sharp.value)
            said = (
                f"the {what} derivative {sharp.value:.10g} +- {sharp.error:.2g} "
                f"(step {sharp.step:.3g}) is {gap:.3g} from the analytic value"
            )
            if resolves(a, a_err, sharp, finest):
                why = f"{said}, but no second scale of step confirms it"
            else:
                why = (
                    f"agrees with the {what} derivative {best.value:.10g} +- {best.error:.2g} "
                    f"(step {best.step:.3g}), but {said}, "
                    f"{gap / (sharp.error + a_err):.3g} times its bound: more than {DOUBT:g}, "
                    f"and short of the {SAFETY:g} at two scales that convict"
                )
            return undecided(ests, why)
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
        return undecided(
            ests,
            f"agrees with the {what} derivative {best.value:.10g} +- {best.error:.2g}, "
            f"but that bound leaves fewer than {MIN_DIGITS} digits",
            bounded=best,
        )
    if not ests:
        return undecided(
            ests,
            "no estimate settled: the function's values do not change over any step "
            "(it is flat in float64 here), or no step fits in its domain",
        )
    return undecided(ests, f"{what} estimates from steps of different sizes disagree")


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
            agreed = any(
                agrees_within(a, a_err, e) and digits(a, e.value, e.error) >= want for e in ests
            )
            if agreed:
                continue
            small = [e for e in ests if e.step <= nominal_step]
            pair = _pair(a, a_err, small, finest)
            if not pair or contradicted(a, a_err, ests, abs(a - pair[0].value)):
                return False
        return True

    return done
