"""The evidence a conviction weighs: small named records, each saying what one method found.

The estimators (:mod:`minigrad.checking.numeric`) return estimates; the
methods that read them (:mod:`~minigrad.checking.verdicts.scales`,
:mod:`~minigrad.checking.verdicts.taylor`) and the runner (a derivative that
could not be computed) hand what they found against an analytic value to
:func:`~minigrad.checking.verdicts.convict.convict` as one of these records,
a *charge*, and never call a rule wrong themselves:

- :class:`Disagreement`: extrapolated estimates at two scales of step agree
  on a difference from the analytic value (the first method);
- :class:`Remainders`: the Taylor remainder with the analytic slope falls as
  ``h``, not ``h**2``, on one side or both (the second method);
- :class:`BrokenDerivative`: the analytic side itself is broken (not finite,
  not deterministic, different on floats and on Values, or not computable).

The first two carry what the fine steps measured when they were asked
(:func:`~minigrad.checking.numeric.fine.fine_mean`), as the evidence that
can set the charge aside.

A record is frozen: later evidence is added by making a new one
(``dataclasses.replace``), and the charge weighed again.

Example:
    >>> from minigrad.checking.numeric.steps import Estimate
    >>> one, two = Estimate(2.0, 1e-9, 1e-3), Estimate(2.0, 1e-9, 1e-2)
    >>> charge = Disagreement(analytic=2.2, roundoff=0.0, pair=(one, two), best=one,
    ...                       estimates=(one, two))
    >>> charge.gap
    0.2...
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from minigrad.checking.numeric.fine import FineMean
from minigrad.checking.numeric.steps import Estimate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.checking.verdicts.findings import Finding

__all__ = [
    "BrokenDerivative",
    "Cause",
    "Charge",
    "Disagreement",
    "LinearRemainder",
    "Remainders",
]


class Cause(enum.Enum):
    """What an entry's note is about, as data: other modules read this, never the note's words.

    ``NONE`` for an entry with no note.
    """

    NONE = "none"
    #: The function has no derivative at the point: its one-sided slopes differ.
    KINK = "kink"
    #: The function has no derivative at the point: its values jump.
    JUMP = "jump"
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


@dataclass(frozen=True, kw_only=True)
class Disagreement:
    """The first method's charge: two scales of step agree on a difference from ``analytic``.

    Attributes:
        analytic: The analytic value under test.
        roundoff: Its round-off.
        pair: The two smallest scales that resolve the difference and agree on
            it (steps at least 1.5 times apart): the two pieces of evidence.
        best: The sharpest estimate that resolves the difference and agrees
            with the pair: the number a conviction shows.
        estimates: Every estimate made (an agreeing one with a bound far below
            the difference contradicts the pair).
        what: How the estimates were made, for the reason ("extrapolated").
        second: The second method's finding, when it was asked (an agreement
            whose bound is well below the difference refutes the pair).
        fine: The fine steps' mean, when they were asked (nearer the analytic
            value than the pair, it shows the slope changing below their steps).
    """

    analytic: float
    roundoff: float
    pair: tuple[Estimate, Estimate]
    best: Estimate
    estimates: tuple[Estimate, ...]
    what: str = "extrapolated"
    second: Finding | None = None
    fine: FineMean | None = None

    @property
    def gap(self) -> float:
        """How far the best estimate lies from the analytic value."""
        return abs(self.analytic - self.best.value)


@dataclass(frozen=True, kw_only=True)
class LinearRemainder:
    """One side's Taylor remainders fall as ``h``: the analytic slope is off by ``off``.

    Only a side whose rates are steady, whose function moves at every step,
    and whose ``off`` is :data:`~minigrad.checking.verdicts.findings.SAFETY`
    times its error away is recorded (:mod:`~minigrad.checking.verdicts.taylor`).

    Attributes:
        numerical: The slope the remainder implies (the analytic slope plus ``off``).
        off: The slope the remainder implies, minus the analytic slope.
        error: A bound on ``off``'s error.
        step: The smallest step of the run.
        rates: The rates seen, in words.
    """

    numerical: float
    off: float
    error: float
    step: float
    rates: str


@dataclass(frozen=True, kw_only=True)
class Remainders:
    """The second method's charge: the sides whose remainder falls as ``h``.

    Attributes:
        slope: The analytic slope under test.
        roundoff: Its round-off.
        sides: The linear sides (the side ``+h`` first): the pieces of evidence.
        reached: Per side (``+h``, ``-h``), whether any step there was in the domain.
        first: The first method's estimates, when they are weighed too (one
            that agrees closely contradicts the charge).
        fine: The fine steps' mean, when they were asked (as for a
            :class:`Disagreement`).
    """

    slope: float
    roundoff: float
    sides: tuple[LinearRemainder, ...]
    reached: tuple[bool, bool]
    first: tuple[Estimate, ...] = ()
    fine: FineMean | None = None


@dataclass(frozen=True, kw_only=True)
class BrokenDerivative:
    """The analytic side is broken by itself: no number needs to be weighed.

    Attributes:
        cause: What is broken.
        words: It, in words.
    """

    cause: Cause
    words: str


#: Everything :func:`~minigrad.checking.verdicts.convict.convict` weighs.
Charge = Disagreement | Remainders | BrokenDerivative
