"""The fine steps: a difference quotient below the steps that settled an estimate.

Steps that settle an estimate can be far larger than the scale on which the
slope changes: ``t * t + sin(t)`` at 3e7 inside a custom rule (whose forward
shows the graph no sine) is a parabola to steps of 279 and 2790, which agree
on ``2 t``. :func:`fine_mean` looks where round-off allows no finer look
at a difference ``gap``: between the step at which round-off can move a
difference quotient by ``gap``, and half of it. Round-off there is as large
as the difference, so one quotient proves nothing; the mean of :data:`FINE`
of them does, since their round-off averages down and a slope that changes
below the large steps does not. How far it can be trusted is measured, not
modelled: the quotients' own scatter gives the mean's standard error
(``FineMean.spread``), which is large where a forward holds more round-off
than its graph shows (a gelu written with ``1 + erf`` at -3.1: 800 ulps).
What the mean says about a conviction is
:func:`~minigrad.checking.verdicts.convict.convict`'s to decide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from minigrad.checking.numeric.steps import NOISE_FLOOR, Evaluate, central, roundoff

__all__ = ["FINE", "FineMean", "fine_mean"]

#: How many fine steps are averaged.
FINE = 8


@dataclass(frozen=True, kw_only=True)
class FineMean:
    """The mean of :data:`FINE` difference quotients at steps ``low`` to ``high``.

    Attributes:
        mean: Their mean.
        spread: The mean's standard error, from the quotients' own scatter
            (their sample standard deviation over the square root of
            :data:`FINE`).
        low, high: The smallest and largest step.
    """

    mean: float
    spread: float
    low: float
    high: float

    @property
    def words(self) -> str:
        """What was measured, in words."""
        return (
            f"the mean {self.mean:.9g} +- {self.spread:.2g} of {FINE} difference quotients at "
            f"steps {self.low:.3g} to {self.high:.3g}, where round-off is about the difference"
        )


def fine_mean(
    evaluate: Evaluate,
    at: float,
    r: int,
    *,
    here: Sequence[float],
    noise: float,
    gap: float,
    step: float,
) -> FineMean | None:
    """The fine steps' mean quotient of value ``r`` for a difference ``gap`` found at ``step``.

    Args:
        evaluate: The level's values as a function of the input's data.
        at: The input's data.
        r: The row (value) of the level.
        here: The level's values at ``at``.
        noise: Value ``r``'s round-off read off the graph (0: unknown).
        gap: The difference to look for.
        step: The step it was found at.

    Returns:
        The mean, or None: no step a quarter of ``step`` or finer resolves
        ``gap``, or a fine step leaves the domain.

    Example:
        >>> f = lambda t: [t * t + math.sin(t)]
        >>> x = 3e7
        >>> got = fine_mean(f, x, 0, here=f(x), noise=0.0, gap=0.266, step=2794.5)
        >>> abs(got.mean - (2 * x + math.cos(x))) < 0.1  # the sine's slope, seen
        True
        >>> g = lambda t: [t * t]
        >>> abs(fine_mean(g, x, 0, here=g(x), noise=0.0, gap=0.06, step=2794.5).mean - 2 * x) < 0.01
        True
    """
    value = max(abs(here[r]), NOISE_FLOOR)
    fine = roundoff([value], 1.0, [noise])[0] / gap
    if not fine < 0.25 * step:
        return None
    quotients = []
    for j in range(FINE):
        sides = central(evaluate, at, fine * (0.5 + 0.5 * j / (FINE - 1)))
        if sides is None:
            return None
        up, down, half = sides
        quotients.append((up[r] - down[r]) / (2.0 * half))
    mean = math.fsum(quotients) / FINE
    return FineMean(mean=mean, spread=_standard_error(quotients, mean), low=0.5 * fine, high=fine)


def _standard_error(quotients: Sequence[float], mean: float) -> float:
    """The standard error of the mean of ``quotients`` (scaled first: at 1e200 their
    squares overflow); inf when it cannot be computed.

    Example:
        >>> _standard_error([1.0, 3.0], 2.0), _standard_error([2e200, 4e200], 3e200)
        (1.0, 1e+200)
    """
    deviations = [q - mean for q in quotients]
    largest = max(map(abs, deviations))
    if largest == 0.0:
        return 0.0
    if not math.isfinite(largest):
        return math.inf
    n = len(deviations)
    variance = math.fsum((d / largest) ** 2 for d in deviations) / (n - 1)
    return largest * math.sqrt(variance / n)
