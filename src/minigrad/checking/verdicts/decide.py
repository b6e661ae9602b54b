"""The one decision: what an analytic derivative and a numerical estimate prove.

:func:`decide` alone gives an entry its verdict, and :func:`passes` alone turns
verdicts into pass or fail. The rest of ``checking/`` gathers evidence (analytic
values with their round-off, estimates with their bounds) or explains a verdict.

The verdicts (the words every report prints):

- *wrong*: analytic and estimate differ by more than the estimate's bound
  plus the analytic side's round-off (with ``atol``/``rtol``: by more than
  the caller's tolerance, PyTorch's test); a NaN or infinite derivative of a
  finite function; a value outside the one-sided slopes at a kink;
- *agrees* to k digits: within the bound, which leaves k (:data:`MIN_DIGITS` or more);
- *subgradient*: at a kink, a value between the one-sided slopes (relu's 0 at 0);
- *undecided*: fewer digits than :data:`MIN_DIGITS` are left, the function
  jumps, the derivative is beyond float64's range, or no step fits in the
  domain. It passes, and the check warns with the reason.

Example:
    >>> from minigrad.checking.numeric.estimate import Estimate
    >>> decide(2.0, 1e-15, Estimate(2.0000000001, 1e-9, 1e-6, 1e-9, True)).verdict
    'agrees'
    >>> decide(2.1, 1e-15, Estimate(2.0000000001, 1e-9, 1e-6, 1e-9, True)).verdict
    'wrong'
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Iterable

from minigrad.checking.numeric.estimate import Estimate, Unresolved, Why

__all__ = [
    "AGREES",
    "CLASSIC_ATOL",
    "CLASSIC_RTOL",
    "MIN_DIGITS",
    "SUBGRADIENT",
    "UNDECIDED",
    "WRONG",
    "Broken",
    "Cause",
    "Finding",
    "Tolerance",
    "Verdict",
    "decide",
    "digits",
    "passes",
]


class Verdict(enum.StrEnum):
    """What the numbers prove of one entry; a member is its word.

    Example:
        >>> WRONG, f"{AGREES} to 12 digits", UNDECIDED == "undecided"
        ('wrong', 'agrees to 12 digits', True)
    """

    WRONG = "wrong"
    AGREES = "agrees"
    SUBGRADIENT = "subgradient"
    UNDECIDED = "undecided"

    def __repr__(self) -> str:
        return repr(self.value)


WRONG, AGREES, SUBGRADIENT, UNDECIDED = Verdict  # the members, in their order


class Cause(enum.Enum):
    """What an entry's note is about, as data: other modules read this, never the words."""

    NONE = "none"
    #: The function has no derivative at the point: its one-sided slopes differ.
    KINK = "kink"
    #: The function has no derivative at the point: its values jump.
    JUMP = "jump"
    #: The derivative is beyond float64's range, or no step fits in the domain.
    RANGE = "range"
    #: The analytic derivative is NaN or infinite.
    NOT_FINITE = "not finite"
    #: Two analytic passes gave different values.
    NOT_DETERMINISTIC = "not deterministic"
    #: A partial gives one value on floats and another on Values (create_graph).
    FLOATS_DIFFER = "floats differ from Values"
    #: The derivatives of an order could not be computed (a partial raised).
    NOT_COMPUTED = "not computed"
    #: A partial computes on floats only: the next order cannot be built.
    GRAPH_DROPPED = "graph dropped"
    #: A ``_backward`` closure ignores ``out.grad`` or sets ``.grad`` with ``=``.
    CLOSURE = "closure"


#: PyTorch's tolerances: the classic test's defaults when only one is given.
CLASSIC_ATOL, CLASSIC_RTOL = 1e-5, 1e-3
#: The fewest digits an agreement must prove to count. Fewer cannot tell a right rule
#: from one off by a tenth of a percent (0.999 for 1, a float32 constant): it warns.
MIN_DIGITS = 3
#: How small beside the function's size per unit of its input a rule's value must be to count as a
#: slope of 0 where the bound does not resolve it (``cos`` at 1e-300, ``tanh`` at 20). A larger one
#: has digits of its own that the bound does not prove: ``-2 x`` for ``x * x + 1e8`` at ``1e-8``,
#: the wrong sign, agreed to 6 digits of the size. Measured: at 1e-9, 12 more wrong rules pass
#: near stationary points (round 14); at 1e-15, 4 right ones of (h) go undecided.
NEGLIGIBLE = 1e-12


@dataclasses.dataclass(slots=True)
class Tolerance:
    """The classic test's tolerance, ``atol + rtol * |numerical|`` (PyTorch's).

    Example:
        >>> Tolerance(1e-5, 1e-3).allowed(100.0)
        0.10001
    """

    atol: float
    rtol: float

    def allowed(self, numerical: float) -> float:
        return self.atol + self.rtol * abs(numerical)


@dataclasses.dataclass(slots=True)
class Finding:
    """The verdict on one entry, with the numbers it rests on.

    Attributes:
        verdict: A :class:`Verdict`.
        digits: Significant digits proved (0 unless the numbers prove agreement; with a
            tolerance, an entry it fails keeps them: eps, not the rule, is at fault).
        numerical: The estimate (NaN when none).
        error: Its bound (inf when the numbers bound nothing).
        step: The step it came from (NaN when none).
        reason: The verdict in words.
        cause: What the note is about (a kink, a jump, ...).
        note: Words about the point (a kink's slopes), or "".
        forgiven: With a tolerance: the numbers prove a difference it let pass.
    """

    verdict: Verdict
    digits: int
    numerical: float
    error: float
    step: float
    reason: str
    cause: Cause = Cause.NONE
    note: str = ""
    forgiven: bool = False


def digits(a: float, n: float, spread: float, zero: float = 0.0) -> int:
    """Significant digits of ``a`` that ``n`` proves when they are ``spread`` apart at most
    (0 to 16). A derivative of 0 (or of at most :data:`NEGLIGIBLE` of ``zero``) has no digits
    of its own: it is counted against ``zero``, the function's size per unit of its input (a
    slope of 0 proved to within 1e-12 of a function of size 1 is right to 12 digits); but
    not where ``n`` is resolved from 0 and ``a`` meets it by its own round-off (``decide``).

    Example:
        >>> digits(1.0, 1.0000001, 2e-7), digits(0.0, 0.0, 1e-12, zero=1.0)
        (6, 12)
    """
    scale = max(abs(a), abs(n))
    if scale <= spread and abs(a) <= NEGLIGIBLE * zero:
        scale = zero
    if not (scale > 0.0 and math.isfinite(spread)):
        return 0
    if spread <= 0.0:
        return 16
    # Logarithms apart: scale / spread can underflow (1e-300 / 1e10).
    return max(0, min(16, math.floor(math.log10(scale) - math.log10(spread))))


@dataclasses.dataclass(slots=True)
class Broken:
    """The analytic side fails by itself (NaN, two passes that differ, a partial that
    raised, a closure that ignores ``out.grad``): no number need be weighed. ``words``
    say what is wrong, ``cause`` is its :class:`Cause`."""

    words: str
    cause: Cause


def decide(
    analytic: float,
    roundoff: float,
    est: Estimate | Unresolved | Broken,
    tolerance: Tolerance | None = None,
    *,
    zero: float = 0.0,
    classic: float | None = None,
) -> Finding:
    """The :class:`Finding` on one entry: the ``analytic`` derivative, how far round-off
    alone can move it (``roundoff``), and the estimator's estimate, or why it has none, or
    what is broken on the analytic side by itself (``est``).

    ``tolerance``: the caller's ``atol``/``rtol`` (the classic test), or None: the
    bounds decide. ``zero``: what a derivative of 0 is counted against (see
    :func:`digits`). ``classic``: with a tolerance, the numerical value the classic
    test compares with (the central difference at ``eps`` exactly, as PyTorch's)
    where it is not the estimate."""
    a = analytic
    if isinstance(est, Broken):
        return Finding(
            WRONG, 0, math.nan, math.nan, math.nan, f"wrong: {est.words}", est.cause, est.words
        )
    if isinstance(est, Unresolved):
        return _unresolved(a, roundoff, est, tolerance)
    n, e = est.value, est.error
    if not math.isfinite(a):
        return Finding(
            WRONG, 0, n, e, est.step,
            f"wrong: the analytic derivative is {a!r} where the numbers show a finite "
            f"{n:.10g} +- {e:.2g} (NaN or inf never passes)",
            Cause.NOT_FINITE,
        )  # fmt: skip
    d, bound = abs(a - n), e + roundoff
    k, proven = digits(a, n, d + bound, zero if min(d, abs(n)) <= e else 0.0), d > bound
    if tolerance is not None:
        m = n if classic is None else classic
        allowed = tolerance.allowed(m)
        within = (dm := abs(a - m)) <= allowed
        words = (
            f"|analytic - numerical| = {dm:.3g} is {'within' if within else 'beyond'} "
            f"atol + rtol * |numerical| = {allowed:.3g} (atol={tolerance.atol:g}, "
            f"rtol={tolerance.rtol:g})"
        )
        if not within and not proven and classic is not None:
            words += (
                f"; yet the rule agrees to {k} digits with the estimate {n:.10g}: the step "
                "eps is too large (truncation) or too small (round-off) for this tolerance"
            )
        if proven and within:
            by = "atol" if dm > tolerance.rtol * abs(m) else "the tolerance"
            words = (
                f"passed by {by} only: {words}; but the numbers prove a difference of {d:.3g}, "
                f"{d / bound:.3g} times the bound (the tolerance forgave it)"
            )
        return Finding(
            AGREES if within else WRONG, k if not proven else 0, m,
            e if classic is None else math.inf, est.step, words, forgiven=proven and within,
        )  # fmt: skip
    if proven:
        return Finding(
            WRONG, 0, n, e, est.step,
            f"wrong: analytic {a:.10g} and numerical {n:.10g} differ by {d:.3g}, "
            f"{d / bound:.3g} times the bound {bound:.3g} (the estimate's {e:.2g} and the "
            f"analytic side's round-off)",
        )  # fmt: skip
    if k >= MIN_DIGITS:  # if they are digits of the function's size, none is the slope's own
        of = f" of the function's size per unit of x, {zero:.3g} (the slope is 0 at the bound)"
        return Finding(
            AGREES, k, n, e, est.step,
            f"agrees to {k} digits{of if max(abs(a), abs(n)) <= d + bound else ''}: they differ "
            f"by {d:.3g}, within the bound {bound:.3g}",
        )  # fmt: skip
    proves = "no digit" if k == 0 else f"only {k} digits"
    if roundoff > e:
        own = f"is up to {roundoff:.3g} (its chain rule cancels large terms or underflows)"
        if math.isinf(roundoff):
            own = "is unbounded (an op of its graph has no slope at its point: sqrt at 0)"
        why = (
            f"the analytic side's own round-off {own}, and the numerical derivative is "
            f"{n:.10g} +- {e:.3g}: together they prove {proves} of the analytic {a:.10g}"
        )
    else:
        why = (
            f"the numerical derivative is {n:.10g} +- {e:.3g} here, which proves {proves} of "
            f"the analytic {a:.10g}: float64 cannot resolve this derivative better at this point"
        )
    return Finding(UNDECIDED, k, n, e, est.step, f"undecided: {why}")


def _unresolved(a: float, roundoff: float, est: Unresolved, tolerance: Tolerance | None) -> Finding:
    """The verdict where the estimator gives no bound (see :class:`Unresolved`)."""
    if est.why is Why.KINK:
        lo, hi = min(est.left, est.right), max(est.left, est.right)
        slack = est.error + roundoff + (tolerance.allowed(hi) if tolerance else 0.0)
        kink = "not differentiable at this point (a kink)"
        if hi - lo <= 2.0 * est.error:  # the slopes are one within their bound
            kink = "a kink or none (the one-sided slopes differ by less than their bound)"
        note = f"{kink}: left slope {est.left:.9g}, right slope {est.right:.9g}"
        if lo - slack <= a <= hi + slack:  # where outside, within what the numbers resolve
            where = "between them" if lo <= a <= hi else f"within their bound ({slack:.3g}) of them"
            return Finding(
                SUBGRADIENT, 0, (lo + hi) / 2.0, (hi - lo) / 2.0 + est.error, est.step,
                f"subgradient: {note}; the rule's {a:.9g} lies {where}",
                Cause.KINK, note,
            )  # fmt: skip
        return Finding(
            WRONG, 0, (lo + hi) / 2.0, (hi - lo) / 2.0 + est.error, est.step,
            f"wrong: {note}; the rule's {a:.9g} lies outside them",
            Cause.KINK, note,
        )  # fmt: skip
    jump, cause = est.why is Why.JUMP, Cause.JUMP if est.why is Why.JUMP else Cause.RANGE
    note = f"not differentiable at this point: the function {est.words}" if jump else est.words
    return Finding(UNDECIDED, 0, math.nan, math.inf, est.step, f"undecided: {note}", cause, note)


def passes(verdicts: Iterable[Verdict]) -> bool:
    """Whether a check with these verdicts passes: no entry is *wrong*.

    Example:
        >>> passes([AGREES, SUBGRADIENT, UNDECIDED]), passes([AGREES, WRONG])
        (True, False)
    """
    return all(v != WRONG for v in verdicts)
