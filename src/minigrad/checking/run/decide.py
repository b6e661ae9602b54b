"""From the evidence to an entry of the report: whether it passes, and what to warn about.

:mod:`minigrad.checking.verdicts.examine` says what the numbers prove about each
entry (:class:`~minigrad.checking.verdicts.scales.Finding`); this module decides the
entry:

- with the default verdicts (no ``atol``/``rtol``): *wrong* fails and *agrees*
  passes; *undecided* is judged by the classic test at PyTorch's tolerances
  (:func:`~minigrad.checking.verdicts.scales.classic`), and the reason says so. A
  difference found where the function has no derivative (a kink, a jump:
  :func:`~minigrad.checking.run.fault.kink_note`) is undecided too, with the
  kink named: ``relu`` at 0 fails the classic test, ``abs`` at 0 passes it.
- with ``atol`` or ``rtol`` (the classic test): the classic test decides, as
  minigrad always has; where it lets an entry pass that the numbers prove
  wrong, a caution says what the tolerance forgave.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from minigrad.checking.numeric.steps import Evaluate
from minigrad.checking.run.fault import kink_note
from minigrad.checking.run.levels import Key
from minigrad.checking.run.report import Entry, where
from minigrad.checking.run.settings import Settings
from minigrad.checking.verdicts.examine import Examined
from minigrad.checking.verdicts.scales import AGREES, MIN_DIGITS, UNDECIDED, WRONG, Finding, classic

__all__ = ["UNDECIDED_WARNING", "decide", "entry_of"]

#: How the warning for an entry the numbers could not decide begins (after
#: where it is): such an entry never passes silently.
UNDECIDED_WARNING = "undecided: the numbers can neither confirm nor refute"


def decide(
    settings: Settings,
    k: int,
    key: Key,
    i: int,
    mode: str,
    a: float,
    finding: Finding,
    examined: Examined,
    m: int,
    r: int,
    probe: tuple[Evaluate, float, Sequence[float], float],
    names: Sequence[str],
) -> tuple[Entry, str]:
    """The entry for (row ``r``, input ``i``, ``mode``), and a caution ("" for none).

    Args:
        settings: The check's settings.
        k: The level.
        key: The row's key (output, path).
        i: The input.
        mode: The analytic side's mode.
        a: The analytic value.
        finding: What the evidence says.
        examined: All the evidence of input ``i`` (the nominal difference, the estimates).
        m: The mode's index.
        r: The row.
        probe: ``(evaluate, x, here, h)``: to look for a kink where an entry disagrees.
        names: The inputs' display names, for the caution.
    """
    s = settings
    found = examined.nominal
    n_nominal = found.values[r] if found is not None else None
    ests = examined.estimates.get(r, [])

    def entry(passed: bool, f: Finding, note: str = "", reason: str = "") -> Entry:
        n = f.numerical if not math.isnan(f.numerical) else (n_nominal or math.nan)
        return entry_of(s, k, key, i, mode, a, f, passed, note=note, reason=reason, numerical=n)

    evaluate, x, here, h = probe
    # A kink is looked for at the scale the evidence came from (a nominal step
    # that spans periods of sin at 1e14 would look like a jump).
    if 0.0 < finding.step < 0.5 * h:
        h = finding.step
    if s.exact_step:
        return _at_eps(s, a, finding, examined, m, r, names, entry, found is not None), ""
    if s.classic:
        passed, shown, sure = classic(a, n_nominal, ests, s.allowed)
        note = kink_note(evaluate, x, here, r, h, k) if not passed or not sure else ""
        if not passed:
            return entry(False, _shown(finding, shown), note), ""
        e = entry(True, _shown(finding, shown) if shown is not None else finding)
        if not sure and not note:
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
    note = kink_note(evaluate, x, here, r, h, k)
    if finding.verdict == WRONG and not note:
        return entry(False, finding), ""
    # Undecided (or a difference where no derivative exists): the classic test.
    passed, shown, sure = classic(a, n_nominal, ests, s.allowed)
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
    none_settled = math.isnan(undecided.error)
    if note or not math.isfinite(finding.error):
        # No bound stands here (a kink, a jump, estimates that disagree): the
        # number shown is what a difference gave, and its error is unbounded.
        undecided.error = math.inf
    e = entry(passed, undecided, note)
    if passed and not sure and not note:
        return e, _uncertain(e, names, none_settled)
    if passed and not note:
        # What the numbers cannot decide never passes silently.
        return e, (
            f"{where(e, names)}: {UNDECIDED_WARNING} the analytic {a:.9g} ({first}); it "
            f"passed the classic test (atol={s.atol:g}, "
            f"rtol={s.rtol:g}) only"
        )
    return e, ""


def _at_eps(
    s: Settings,
    a: float,
    finding: Finding,
    examined: Examined,
    m: int,
    r: int,
    names: Sequence[str],
    entry: Callable[..., Entry],
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
    k: int,
    key: Key,
    i: int,
    mode: str,
    a: float,
    f: Finding,
    passed: bool,
    *,
    note: str = "",
    reason: str = "",
    numerical: float | None = None,
) -> Entry:
    """The entry for input ``i`` (-1: a direction over all) of row ``key``, from a finding.

    Its numbers and verdict are the finding's (``numerical`` and ``reason``
    replace the finding's when given).
    """
    n = f.numerical if numerical is None else numerical
    out, path = key
    return Entry(
        k,
        out,
        path,
        i,
        a,
        n,
        s.allowed(n),
        passed,
        note,
        f.error,
        f.step,
        mode,
        f.digits,
        f.verdict,
        reason or f.reason,
    )


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
