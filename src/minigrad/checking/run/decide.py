"""From the evidence to an entry of the report: whether it passes, and what to warn about.

:mod:`minigrad.checking.verdicts.examine` says what the numbers prove about each
entry (:class:`~minigrad.checking.verdicts.findings.Finding`); this module decides the
entry:

- with the default verdicts (no ``atol``/``rtol``): *wrong* fails and *agrees*
  passes; *undecided* is judged by the classic test at PyTorch's tolerances
  (:func:`~minigrad.checking.verdicts.classic.classic_test`), and the reason says so. A
  difference found where the function has no derivative (a kink, a jump:
  :func:`~minigrad.checking.numeric.kinks.no_derivative`) is undecided too, with the
  kink named: ``relu`` at 0 fails the classic test, ``abs`` at 0 passes it.
- with ``atol`` or ``rtol`` (the classic test): the classic test decides, as
  minigrad always has; where it lets an entry pass that the numbers prove
  wrong, a caution says what the tolerance forgave.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from minigrad.checking.numeric.kinks import NoDerivative, no_derivative
from minigrad.checking.numeric.steps import Coordinate
from minigrad.checking.run.levels import Key
from minigrad.checking.run.report import Entry
from minigrad.checking.run.settings import Settings
from minigrad.checking.run.table import where
from minigrad.checking.verdicts.classic import classic_test
from minigrad.checking.verdicts.evidence import Cause
from minigrad.checking.verdicts.examine import Examined
from minigrad.checking.verdicts.findings import AGREES, MIN_DIGITS, UNDECIDED, WRONG, Finding

__all__ = ["UNDECIDED_WARNING", "Place", "decide_entry", "entry_of"]

#: How the warning for an entry the numbers could not decide begins (after
#: where it is): such an entry never passes silently.
UNDECIDED_WARNING = "undecided: the numbers can neither confirm nor refute"


@dataclass(frozen=True, kw_only=True)
class Place:
    """Which derivative an entry is: its order, its row's key, the input, the mode.

    Attributes:
        order: The level (1 for the Jacobian).
        key: The row's key: ``(output, path)``.
        wrt: The input (-1: a direction over all the inputs).
        mode: The analytic side's mode (``"rev"``, ``"fwd"``).
    """

    order: int
    key: Key
    wrt: int
    mode: str


def decide_entry(
    settings: Settings,
    place: Place,
    *,
    analytic: float,
    finding: Finding,
    examined: Examined,
    index: tuple[int, int],
    point: Coordinate,
    names: Sequence[str],
) -> tuple[Entry, str]:
    """The entry at ``place``, passed or failed, and a caution ("" for none).

    Args:
        settings: The check's settings.
        place: Which derivative.
        analytic: The analytic value.
        finding: What the evidence says.
        examined: All the evidence of the input (the nominal difference, the estimates).
        index: ``(mode index, row)`` of the entry in ``examined``.
        point: The input as the numbers see it: to look for a kink where an
            entry disagrees.
        names: The inputs' display names, for the caution.
    """
    s, a, k = settings, analytic, place.order
    m, r = index
    found = examined.nominal
    trusted = found is not None and found.half <= examined.trusted.get(r, math.inf)
    n_nominal = found.values[r] if found is not None and trusted else None
    ests = examined.estimates.get(r, [])

    def entry(passed: bool, f: Finding, kink: NoDerivative | None = None) -> Entry:
        n = f.numerical if not math.isnan(f.numerical) else (n_nominal or math.nan)
        note, cause = _noted(kink)
        return entry_of(s, place, a, f, passed=passed, note=note, numerical=n, cause=cause)

    h = point.h
    # A kink is looked for at the scale the evidence came from (a nominal step
    # that spans periods of sin at 1e14 would look like a jump).
    if 0.0 < finding.step < 0.5 * h:
        h = finding.step

    def kink_at() -> NoDerivative | None:
        return no_derivative(point.evaluate, point.x, point.here, r, h, k)

    if s.exact_step:
        return _at_eps(s, a, finding, examined, r, entry, found is not None), ""
    if s.classic:
        tolerated = classic_test(a, n_nominal, ests, s.allowed)
        passed, shown, sure = tolerated.passed, tolerated.shown, tolerated.sure
        kink = kink_at() if not passed or not sure else None
        if not passed:
            return entry(False, _shown(finding, shown), kink), ""
        e = entry(True, _shown(finding, shown) if shown is not None else finding)
        if not sure and kink is None:
            # Whatever the verdict's digits, they did not reach the tolerance asked
            # for (atol=0, rtol=1e-9 and a rule 1e-7 off): not a silent pass.
            return e, _uncertain(e, names, math.isnan(e.error))
        if finding.verdict == WRONG:
            return e, _forgiven(e, s, examined.roundoff.get((m, r), 0.0), names)
        return e, ""
    if finding.verdict == AGREES and finding.digits >= MIN_DIGITS:
        return entry(True, finding), ""
    if finding.verdict == AGREES:
        # An agreement that proves fewer digits checks nothing (expm1(x) / x at
        # 1e-20 "agrees" with a slope of 0 to within 1e5): undecided.
        finding = Finding(
            UNDECIDED,
            finding.digits,
            finding.numerical,
            finding.error,
            finding.step,
            f"{finding.reason}, which leaves fewer than {MIN_DIGITS} digits",
        )
    kink = kink_at()
    note = kink.words if kink is not None else ""
    if finding.verdict == WRONG and not note:
        return entry(False, finding), ""
    # Undecided (or a difference where no derivative exists): the classic test.
    tolerated = classic_test(a, n_nominal, ests, s.allowed)
    passed, shown, sure = tolerated.passed, tolerated.shown, tolerated.sure
    first = finding.reason if not note else f"{note}"
    if passed and sure:
        how = "passed"
    elif passed:
        how = "passed: the numerical derivative could neither confirm nor refute it"
    else:
        how = "failed"
    reason = (
        f"undecided: {first}; judged by the classic test (atol={s.atol:g}, rtol={s.rtol:g}): {how}"
    )
    undecided = Finding(
        UNDECIDED, finding.digits, finding.numerical, finding.error, finding.step, reason
    )
    if shown is not None and (math.isnan(finding.numerical) or note):
        undecided = _shown(undecided, shown)
    if note or not math.isfinite(finding.error):
        # No bound stands here (a kink, a jump, estimates that disagree): the
        # number shown is what a difference gave, and its error is unbounded.
        undecided.error = math.inf
    e = entry(passed, undecided, kink)
    if passed and not note:
        # What the numbers cannot decide never passes silently.
        how = "the classic test could not decide it either"
        if sure:
            how = f"it passed the classic test (atol={s.atol:g}, rtol={s.rtol:g}) only"
        return e, f"{where(e, names)}: {UNDECIDED_WARNING} the analytic {a:.9g} ({first}); {how}"
    return e, ""


def _at_eps(
    s: Settings,
    a: float,
    finding: Finding,
    examined: Examined,
    r: int,
    entry: Callable[[bool, Finding], Entry],
    fits: bool,
) -> Entry:
    """The classic test on the central difference at step ``eps`` exactly (PyTorch's form).

    The verdict of the numbers stays on the entry, and its reason says when
    it and the tolerance disagree: a right rule failed because eps is too
    large (lab 03's point), or a wrong one passed by the tolerance.
    """
    found = examined.nominal
    if not fits or found is None:
        why = (
            f"the classic test at step eps={s.eps:g}: x + eps or x - eps is outside the "
            "function's domain, so the central difference at eps does not exist"
        )
        return entry(False, Finding(finding.verdict, 0, math.nan, math.nan, s.eps, why))
    n = found.values[r]
    passed = s.close(a, n)
    d = abs(a - n)
    rel = d / abs(n) if n != 0.0 else math.inf
    why = (
        f"the classic test at step eps={s.eps:g} (PyTorch's central difference): "
        f"|analytic - numerical| = {d:.3g} (relatively {rel:.3g}) is "
        f"{'within' if passed else 'beyond'} atol + rtol * |numerical| = {s.allowed(n):.3g}"
    )
    if not passed and finding.verdict == AGREES:
        why += (
            f"; yet the rule agrees to {finding.digits} digits with the extrapolated "
            f"derivative {finding.numerical:.10g}: the step eps is too large (truncation "
            "error) or too small (round-off) for this tolerance"
        )
    elif passed and finding.verdict == WRONG:
        why += f"; but the numbers prove it wrong ({finding.reason})"
    # The difference at eps has a truncation error nobody measured: no bound.
    shown = Finding(finding.verdict, finding.digits, n, math.inf, found.half, why)
    return entry(passed, shown)


def entry_of(
    s: Settings,
    place: Place,
    analytic: float,
    f: Finding,
    *,
    passed: bool,
    note: str = "",
    numerical: float | None = None,
    cause: Cause = Cause.NONE,
) -> Entry:
    """The entry at ``place`` from a finding: its numbers, verdict and reason are the finding's.

    ``numerical`` replaces the finding's number when given.
    """
    n = f.numerical if numerical is None else numerical
    out, path = place.key
    return Entry(
        order=place.order,
        output=out,
        path=path,
        wrt=place.wrt,
        analytic=analytic,
        numerical=n,
        allowed=s.allowed(n),
        passed=passed,
        note=note,
        error=f.error,
        step=f.step,
        mode=place.mode,
        digits=f.digits,
        verdict=f.verdict,
        reason=f.reason,
        cause=cause,
    )


def _noted(kink: NoDerivative | None) -> tuple[str, Cause]:
    """An entry's note and its cause, from what the kink probe found."""
    if kink is None:
        return "", Cause.NONE
    return kink.words, Cause.JUMP if kink.jump else Cause.KINK


def _shown(f: Finding, shown: object) -> Finding:
    """The finding with the classic test's estimate as its numbers (the verdict stays)."""
    value = getattr(shown, "value", None)
    if value is None:
        return f
    return Finding(
        f.verdict,
        f.digits,
        value,
        getattr(shown, "error", math.nan),
        getattr(shown, "step", math.nan),
        f.reason,
    )


def _uncertain(e: Entry, names: Sequence[str], none_settled: bool) -> str:
    if none_settled:
        return (
            f"{where(e, names)}: the numerical derivative is uncertain here: no estimate "
            "settled (the function's values do not change over any step, or no step fits "
            f"in its domain), so the analytic {e.analytic:.9g} could be neither confirmed "
            "nor refuted"
        )
    return (
        f"{where(e, names)}: the numerical derivative is uncertain here: estimates from steps "
        f"of different sizes disagree (one is {e.numerical:.9g} at step {e.step:.3g}, and "
        f"no bound stands), so the analytic {e.analytic:.9g} could be neither confirmed nor "
        "refuted"
    )


def _forgiven(e: Entry, s: Settings, a_err: float, names: Sequence[str]) -> str:
    a, n = e.analytic, e.numerical
    d = abs(a - n)
    times = d / (e.error + a_err) if e.error + a_err > 0.0 else math.inf
    by = "atol" if d > s.rtol * abs(n) else "the tolerance"
    return (
        f"{where(e, names)}: passed by {by} only: analytic {a:.9g} and numerical {n:.9g} "
        f"(+- {e.error:.3g}) differ by {d:.3g} ({d / max(abs(n), abs(a)):.3g} relatively), "
        f"{times:.3g} times the error bound: the numbers prove a difference that atol="
        f"{s.atol:g}, rtol={s.rtol:g} forgave (without atol and rtol the check fails it)"
    )
