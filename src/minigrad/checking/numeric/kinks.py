"""Where a function has no derivative: kinks and jumps, probed with one-sided slopes.

Floats in, a record out, no verdict: the left and right difference quotients
at a step and at a tenth and a hundredth of it. A kink: the one-sided slopes
settle at different values; a jump: the function's values differ on the two
sides however small the step. The runner asks where an entry disagrees (a
difference there is no rule's fault) and where a passing entry's slopes look
kinked (``abs`` at 0 passes, as in PyTorch, but the kink is worth a warning).

Example:
    >>> no_derivative(lambda x: [abs(x)], 0.0, [0.0], 0, 1e-3, 1).jump
    False
    >>> no_derivative(lambda x: [x * x], 1.0, [1.0], 0, 1e-3, 1) is None
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from minigrad.checking.numeric.steps import Evaluate, central

__all__ = ["NoDerivative", "looks_kinked", "no_derivative", "one_sided_slopes"]

# One-sided slopes are compared at the step and at these fractions of it.
_FRACTIONS = (1.0, 0.1, 0.01)


@dataclass(frozen=True, kw_only=True)
class NoDerivative:
    """No derivative exists at the point.

    Attributes:
        jump: True for a jump (the values differ on the two sides), False for
            a kink (the one-sided slopes differ).
        words: What was seen, in words.
    """

    jump: bool
    words: str


def one_sided_slopes(
    evaluate: Evaluate, x: float, here: Sequence[float], h: float
) -> tuple[list[float], list[float], float] | None:
    """Left and right difference quotients at step ``h``, per value, and the step.

    Example:
        >>> left, right, _ = one_sided_slopes(lambda x: [abs(x)], 0.0, [0.0], 1e-3)
        >>> left, right
        ([-1.0], [1.0])
    """
    sides = central(evaluate, x, h)
    if sides is None:
        return None
    up, down, _ = sides
    right_step, left_step = (x + h) - x, x - (x - h)
    left = [(c - d) / left_step for c, d in zip(here, down, strict=True)]
    right = [(u - c) / right_step for u, c in zip(up, here, strict=True)]
    return left, right, h


def looks_kinked(left: float, right: float) -> bool:
    """Whether one-sided slopes differ enough to look for a kink (cheap screen).

    Smooth curvature makes them differ too, in proportion to the step:
    :func:`no_derivative` tells the two apart with smaller steps.
    """
    return abs(left - right) > 1e-2 * (1.0 + max(abs(left), abs(right)))


def no_derivative(
    evaluate: Evaluate, x: float, here: Sequence[float], r: int, h: float, k: int
) -> NoDerivative | None:
    """What shows that value ``r`` has no derivative at ``x`` (a kink or a jump), or None.

    Args:
        evaluate: The level's values as a function of the input.
        x: The point.
        here: The level's values at ``x``.
        r: Which value.
        h: The step to start from (slopes are also taken at h/10 and h/100).
        k: The level (1 for ``func`` itself), for the wording.
    """
    probes = [one_sided_slopes(evaluate, x, here, h * f) for f in _FRACTIONS]
    if any(p is None for p in probes):
        return None
    left = [p[0][r] for p in probes if p is not None]
    right = [p[1][r] for p in probes if p is not None]
    steps = [p[2] for p in probes if p is not None]
    what = "the function" if k == 1 else f"the order-{k - 1} derivative"
    # A jump: f(x + s) - f(x) does not shrink with s (a smooth function's does).
    for side, slopes in (("right", right), ("left", left)):
        coarse, fine = slopes[0] * steps[0], slopes[-1] * steps[-1]
        if abs(coarse) > 1e-9 * (1.0 + abs(here[r])) and abs(fine) > 0.5 * abs(coarse):
            return NoDerivative(
                jump=True,
                words=f"not differentiable at this point: {what} jumps here (by about "
                f"{fine:.6g} on the {side}, even at a step of {steps[-1]:.3g}), so no "
                "derivative exists; a difference quotient only measures the jump divided "
                "by the step",
            )

    def same(a: float, b: float, tol: float = 1e-3) -> bool:
        return abs(a - b) <= tol * (1.0 + max(abs(a), abs(b)))

    # A kink: each one-sided slope has settled, and they differ.
    settled = all(same(s, side[-1]) for side in (left, right) for s in side)
    if settled and not same(left[-1], right[-1], 1e-2):
        return NoDerivative(
            jump=False,
            words=f"not differentiable at this point (a kink): left slope {left[-1]:.6g}, "
            f"right slope {right[-1]:.6g}; the rule's value is a choice there, and a "
            f"central difference averages the slopes to {(left[-1] + right[-1]) / 2:.6g}",
        )
    return None
