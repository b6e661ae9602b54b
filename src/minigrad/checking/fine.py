"""The fine steps' appeal: a difference that large steps found, heard below them.

Steps that settle an estimate can be far larger than the scale on which the
slope changes: ``t * t + sin(t)`` at 3e7 inside a custom rule (whose forward
shows the graph no sine) is a parabola to steps of 279 and 2790, which agree
on ``2 t`` and would convict the rule's right ``2 t + cos(t)``. The appeal
looks where round-off allows no finer look: between the step at which
round-off can move a difference quotient by the difference found, and half
of it. Round-off there is as large as the difference, so one quotient proves
nothing; the mean of :data:`FINE` of them does, since their round-off
averages down and a slope that changes below the large steps does not. A
mean nearer the analytic value than the convicting estimate contradicts the
conviction. A smooth forward (``x * x`` with a rule 1e-9 off) keeps its
conviction: its fine quotients scatter around the large steps' estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from minigrad.checking.numeric import NOISE_FLOOR, Evaluate, central, roundoff

__all__ = ["FINE", "Heard", "appeal"]

#: How many fine steps hear an appeal (their quotients averaged).
FINE = 8


@dataclass(frozen=True)
class Heard:
    """The fine steps' answer to a conviction they contradict.

    Attributes:
        mean: The mean of their difference quotients.
        low, high: The smallest and largest of them: no estimate from a step
            above ``high`` stands (it is of a slope averaged over changes).
    """

    mean: float
    low: float
    high: float

    @property
    def reason(self) -> str:
        """The contradiction in words."""
        return (
            f"the mean {self.mean:.9g} of {FINE} difference quotients at steps "
            f"{self.low:.3g} to {self.high:.3g}, where round-off is about the difference, "
            "sides with the analytic value: the slope changes below the steps that found it"
        )


def appeal(
    evaluate: Evaluate,
    at: float,
    r: int,
    *,
    value: float,
    noise: float,
    analytic: tuple[float, float],
    gap: float,
    step: float,
) -> Heard | None:
    """Why the difference ``gap`` found at ``step`` does not hold at the fine steps.

    Args:
        evaluate: The level's values as a function of the input's data.
        at: The input's data.
        r: The row (value) of the level.
        value: Its magnitude at ``at``.
        noise: Its round-off read off the graph (0: unknown).
        analytic: The analytic derivative and its round-off.
        gap: The difference between ``a`` and the convicting estimate.
        step: The step the convicting estimate came from.

    Returns:
        What the fine steps heard, or None: the fine steps side with the estimate,
        or there is no step finer than ``step`` to look at, or one leaves the
        domain.

    Example:
        >>> import math
        >>> f = lambda t: [t * t + math.sin(t)]
        >>> x = 3e7
        >>> right = (2 * x + math.cos(x), 0.0)
        >>> heard = appeal(f, x, 0, value=x * x, noise=0.0, analytic=right, gap=0.266, step=2794.5)
        >>> heard.reason
        'the mean ... sides with the analytic value: the slope changes below the steps ...'
        >>> g = lambda t: [t * t]  # a rule 1e-9 off: the fine steps agree with 2 t
        >>> off = (2 * x * (1 + 1e-9), 0.0)
        >>> appeal(g, x, 0, value=x * x, noise=0.0, analytic=off, gap=0.06, step=2794.5) is None
        True
    """
    a, a_err = analytic
    fine = roundoff([max(value, NOISE_FLOOR)], 1.0, [noise])[0] / gap
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
    if not abs(mean - a) <= 0.5 * gap + a_err:
        return None
    return Heard(mean, 0.5 * fine, fine)
