"""One random direction over all the inputs: fast mode, and a sharp test of the whole gradient.

Moving every input at once along a direction ``d`` (``x + t d``), the
weighted sum of a level's values ``phi(t) = sum_r w_r f_r(x + t d)`` has the
derivative ``sum_i G_i d_i`` at ``t = 0``, with ``G = w . J`` the weighted
gradient. Comparing that with a numerical derivative of ``phi`` checks every
entry of ``J`` in one difference (two evaluations), which is fast mode
(PyTorch's and JAX's too); and, extrapolated, checks the whole gradient to
ten digits and more for a dozen evaluations, which the exhaustive check of
many inputs uses where each entry's own central difference leaves fewer.

The direction is balanced per input: ``d_i = s_i u_i c_i h_i``, with ``s_i``
a random sign, ``u_i`` a random size in [0.5, 1], ``h_i`` the input's nominal
step, and ``c_i <= 1`` chosen so that no term ``|G_i h_i c_i|`` is larger
than the median term (nor shrunk below 1e-6 of the largest). With equal scales, in
``a * 1e4 + f(b)`` a wrong derivative of ``f`` would be 1e-4 of the sum and
pass any tolerance; balanced, it is about half.

The analytic side's linear part is subtracted with the displacements the
inputs actually took (``x_i + t d_i`` rounds), so rounding never looks like
a wrong slope: what is extrapolated is the remainder
``phi(t) - sum_i G_i (x_i(t) - x_i)``, whose central difference tends to 0
exactly when ``G`` is right.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from minigrad.checking.numeric.ridders import extrapolate
from minigrad.checking.numeric.steps import ROUNDOFF, Estimate
from minigrad.checking.run.levels import Levels
from minigrad.checking.verdicts.findings import AGREES, MIN_DIGITS, SHARP_DIGITS, Finding, digits
from minigrad.checking.verdicts.scales import agrees_at_nominal, settled, weigh

# random costs an import that only fast mode and the direction need (the
# callers import it when they run); the annotations are for mypy alone.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import random

__all__ = ["Direction", "balanced"]

#: The smallest scale a term of the direction is shrunk to, beside the largest.
_SPAN = 1e-6
#: Where sharpening along the direction starts, in balanced steps: every
#: input moved by up to a thousand of its nominal steps first (1e-3 for an
#: input near 1), then a hundred, then ten thousand.
_SCALES = (1e3, 1e2, 1e4)
#: Relative round-off of an analytic directional derivative.
_ANALYTIC = 32.0 * 2.0**-52


def balanced(gradient: Sequence[float], steps: Sequence[float], rng: random.Random) -> list[float]:
    """A direction with random signs and every term ``|G_i d_i|`` of about one size.

    Example:
        >>> import random
        >>> d = balanced([1e4, 2.0], [1e-6, 1e-6], random.Random(0))
        >>> 0.5 <= abs(d[0] * 1e4) / abs(d[1] * 2.0) <= 2.0
        True
    """
    terms = [abs(g) * h for g, h in zip(gradient, steps, strict=True)]
    top = max(terms, default=0.0)
    nonzero = sorted(t for t in terms if t > 0.0)
    # Terms above the (lower) median are shrunk to it: no term is larger than
    # half the others' together, and the sum keeps the size of the many
    # (shrinking all to the smallest would leave a sum below round-off).
    target = max(nonzero[(len(nonzero) - 1) // 2], _SPAN * top) if nonzero else 0.0
    out = []
    for t, h in zip(terms, steps, strict=True):
        scale = min(1.0, target / t) if t > 0.0 else 1.0
        # A random size within a factor of 2 too: with sizes all equal, a
        # direction like (1, 1) lies in the null space of every Hessian of
        # g(x - y), and a wrong g'' would never show.
        size = 0.5 + 0.5 * rng.random()
        out.append((1.0 if rng.random() < 0.5 else -1.0) * size * scale * h)
    return out


class Direction:
    """Level ``k``'s weighted values along one balanced direction.

    Args:
        levels: The check's levels.
        k: The level.
        here: The level's values at the inputs.
        weights: One weight per value of the level.
        gradient: The weighted gradient ``w . J`` that balances the direction
            (and corrects for rounded displacements).
        rng: Where the signs come from.
        step: The nominal step at a coordinate (``Settings.step``).
    """

    def __init__(
        self,
        levels: Levels,
        k: int,
        here: Sequence[float],
        weights: Sequence[float],
        gradient: Sequence[float],
        rng: random.Random,
        step: Callable[[float], float],
    ) -> None:
        self.levels = levels
        self.k = k
        self.weights = list(weights)
        self.gradient = list(gradient)
        self.origin = [x.data for x in levels.xs]
        steps = [step(x) for x in self.origin]
        self.d = balanced(self.gradient, steps, rng)
        self.size = math.fsum(abs(w * f) for w, f in zip(weights, here, strict=True))

    def analytic(self, gradient: Sequence[float]) -> float:
        """``sum_i G_i d_i``: the derivative of ``phi`` by ``t`` with this gradient."""
        return math.fsum(g * d for g, d in zip(gradient, self.d, strict=True))

    def phi(self, t: float, slopes: Sequence[float]) -> list[float] | None:
        """Per slope ``P``: ``phi(t)`` minus ``P t``, with the rounding of each displacement."""
        moved = [x + t * d for x, d in zip(self.origin, self.d, strict=True)]
        if not all(math.isfinite(m) for m in moved):
            return None
        # A step below the inputs' resolution moves them by less than asked (or
        # not at all: asin at 1 - 1e-12 moved by 5e-17); the remainder then
        # tests the slope along a displacement that did not happen, and agrees
        # with any slope. Half of the intended weighted displacement must be there.
        meant = math.fsum(abs(g * t * d) for g, d in zip(self.gradient, self.d, strict=True))
        taken = math.fsum(
            abs(g * (m - x)) for g, m, x in zip(self.gradient, moved, self.origin, strict=True)
        )
        if taken < 0.5 * meant:
            return None
        values = self.levels.moved(self.k, [m - x for m, x in zip(moved, self.origin, strict=True)])
        if values is None:
            return None
        phi = math.fsum(w * v for w, v in zip(self.weights, values, strict=True))
        # What rounding moved each input off t * d_i, as the gradient sees it.
        off = math.fsum(
            g * ((m - x) - t * d)
            for g, m, x, d in zip(self.gradient, moved, self.origin, self.d, strict=True)
        )
        return [phi - slope * t - off for slope in slopes]

    def at_unit_step(
        self, slopes: Sequence[float], up: Sequence[float], down: Sequence[float]
    ) -> list[Finding | None]:
        """Per slope, an agreement within round-off of the difference at ``t = +-1``, or None."""
        noise = ROUNDOFF * self.size
        err = _ANALYTIC * math.fsum(abs(g * d) for g, d in zip(self.gradient, self.d, strict=True))
        found: list[Finding | None] = []
        for m, slope in enumerate(slopes):
            rest = (up[m] - down[m]) / 2.0
            rounding = max(noise, ROUNDOFF * max(abs(up[m]), abs(down[m])))
            found.append(agrees_at_nominal(slope, err, slope + rest, rounding, 1.0))
        return found

    def examine(self, slopes: Sequence[float], *, sharp: bool) -> list[Finding]:
        """Per analytic slope: what the numerical derivative of ``phi`` says of it.

        Fast mode (not ``sharp``) first takes the central difference at
        ``t = 1`` (every input moved by its balanced step), which agrees
        within its round-off for two evaluations. ``sharp`` (the exhaustive
        check's test of the whole gradient, which must reach
        :data:`~minigrad.checking.verdicts.findings.SHARP_DIGITS`) starts from larger
        steps, where round-off weighs less. What neither settles is
        extrapolated over every scale of step.
        """
        noise = ROUNDOFF * self.size
        err = _ANALYTIC * math.fsum(abs(g * d) for g, d in zip(self.gradient, self.d, strict=True))
        count = len(slopes)
        findings: list[Finding | None] = [None] * count
        found: dict[int, list[Estimate]] = {m: [] for m in range(count)}
        # Only a confirmed difference ends early; agreement ends by _enough.
        check = settled([(0.0, err)], 17, 1.0)

        def rests(t: float) -> list[float] | None:
            return self.phi(t, slopes)

        def extend(rows: list[int], scales: Sequence[float] | None) -> None:
            ests = extrapolate(
                rests,
                0.0,
                1.0,
                rows,
                lambda m, e: _enough(slopes[m], err, e, sharp) or check(e),
                noise=[noise] * count,
                scales=scales,
                enough=lambda m, e: _enough(slopes[m], err, [e], sharp),
            )
            for m in rows:
                found[m] += [
                    Estimate(slopes[m] + e.value, e.error, e.step, roundoff=e.roundoff)
                    for e in ests[m]
                ]

        if sharp:
            extend(list(range(count)), _SCALES)
            for m in range(count):
                got = weigh(slopes[m], err, found[m], what="directional")
                if got.verdict == AGREES:
                    findings[m] = _along(got)
        else:
            up, down = self.phi(1.0, slopes), self.phi(-1.0, slopes)
            if up is not None and down is not None:
                for m, got_nominal in enumerate(self.at_unit_step(slopes, up, down)):
                    if got_nominal is not None:
                        findings[m] = _along(got_nominal)
        pending = [m for m, f in enumerate(findings) if f is None]
        if pending:
            extend(pending, None)
            for m in pending:
                findings[m] = _along(weigh(slopes[m], err, found[m], what="directional"))
        return [f for f in findings if f is not None]


def _want(sharp: bool) -> int:
    return SHARP_DIGITS if sharp else MIN_DIGITS


def _enough(slope: float, err: float, ests: list[Estimate], sharp: bool) -> bool:
    want = _want(sharp)
    return any(
        abs(e.value) <= e.error + err and digits(slope, slope + e.value, e.error) >= want
        for e in ests
    )


def _along(found: Finding) -> Finding:
    """The finding, its reason saying it is about a random direction over all the inputs."""
    if found.verdict == AGREES:
        found.reason = (
            f"along a random direction over all the inputs (each moved by up to its "
            f"nominal step, balanced so that no input's term hides another's), {found.reason}"
        )
    else:
        found.reason = f"along a random direction over all the inputs, {found.reason}"
    return found
