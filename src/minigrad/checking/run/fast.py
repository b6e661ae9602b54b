"""Fast mode: one balanced random direction per order instead of every entry.

Reverse mode computes ``G = w . J`` (one pass of a random weighting of the
level's values) and projects it on the direction; forward mode computes
``J . d`` (one pass) and weights it. Both are compared with the numerical
derivative of the weighted values along the direction
(:class:`~minigrad.checking.run.direction.Direction`), by the same verdicts as
every entry: the error bound by default, the caller's tolerance when given.
Only an agreement passes; anything else sends the check on to every entry.

A graph with a rule outside the built-in table gets its analytic pass twice,
as the exhaustive check does, and two passes that differ by more than
``nondet_tol`` end fast mode (PyTorch's ``fast_mode`` ignores ``nondet_tol``).
"""

from __future__ import annotations

import math

from minigrad.checking.run.decide import Place, entry_of
from minigrad.checking.run.direction import Direction
from minigrad.checking.run.engines import ForeignLevels
from minigrad.checking.run.levels import Levels, derivatives, forward_directional
from minigrad.checking.run.report import Entry
from minigrad.checking.run.settings import Settings
from minigrad.checking.verdicts.findings import AGREES
from minigrad.core.value import Value

__all__ = ["fast"]


def fast(levels: Levels, k: int, s: Settings, both: bool) -> list[Entry] | None:
    """The direction's entries (one per mode) when level ``k`` passes, else None."""
    xs = levels.xs
    import random  # only fast mode needs it; it costs an import

    rng = random.Random(s.seed * 1_000_003 + k)
    fs, keys = levels.level(k)
    twice = levels.survey(fs, fence=k == 1)
    w = _unit([rng.gauss(0.0, 1.0) for _ in fs])
    total: Value | None = None
    if isinstance(levels, ForeignLevels):  # the engine's own backward(), on a fresh graph
        g = levels.weighted(fs, w)
    else:
        total = w[0] * fs[0]
        for wf, f in zip(w[1:], fs[1:], strict=True):
            total = total + wf * f
        g = [d.data for d in derivatives(total, xs, False)]
    if twice:
        if total is None:
            again = levels.weighted(fs, w)  # type: ignore[attr-defined]
        else:
            again = [d.data for d in derivatives(total, xs, False)]
        if any(abs(a - b) > s.nondet_tol for a, b in zip(g, again, strict=True)):
            return None  # the exhaustive check names the entry and the two values
    here = [f.data for f in fs]
    direction = Direction(levels, k, here, w, g, rng, s.step)
    slopes: list[float] = []
    for mode in s.modes:
        if mode == "fwd":
            tangent = forward_directional(fs, xs, direction.d, False)
            slope = math.fsum(wf * t for wf, t in zip(w, tangent, strict=True))
            if twice:
                again_t = forward_directional(fs, xs, direction.d, False)
                if abs(slope - math.fsum(wf * t for wf, t in zip(w, again_t, strict=True))) > (
                    s.nondet_tol * math.fsum(abs(wf) for wf in w)
                ):
                    return None
            if both:
                lifted = forward_directional(fs, xs, direction.d, True)
                if not s.close(math.fsum(wf * t for wf, t in zip(w, lifted, strict=True)), slope):
                    return None
        else:
            slope = direction.analytic(g)
            if both and total is not None:
                lifted = [d.data for d in derivatives(total, xs, True)]
                if not s.close(direction.analytic(lifted), slope):
                    return None
        slopes.append(slope)
    out, path = keys[0] if len(keys) == 1 else (-1, ())
    if s.classic:
        up, down = direction.phi(1.0, slopes), direction.phi(-1.0, slopes)
        if up is None or down is None:
            return None  # the exhaustive check finds steps that fit
        if any(f is None for f in direction.at_unit_step(slopes, up, down)):
            # The numbers do not confirm the slope within round-off: the tolerance
            # may forgive a difference they prove, and only the exhaustive check
            # says which entry and cautions (issue 26).
            return None
        entries = []
        # Per unit length of the direction, as PyTorch's and JAX's unit
        # directions: the tolerance then weighs it as a derivative.
        length = math.sqrt(math.fsum(d * d for d in direction.d)) or 1.0
        for m, slope in enumerate(slopes):
            numeric = (slope + (up[m] - down[m]) / 2.0) / length
            slope /= length
            if not s.close(slope, numeric):
                return None
            entries.append(
                Entry(
                    order=k,
                    output=out,
                    path=path,
                    wrt=-1,
                    analytic=slope,
                    numerical=numeric,
                    allowed=s.allowed(numeric),
                    passed=True,
                    mode=s.modes[m],
                    verdict=AGREES,
                    reason="along a random direction over all the inputs: within the tolerance",
                )
            )
        return entries
    findings = direction.examine(slopes, sharp=False)
    if len(findings) != len(slopes) or any(f.verdict != AGREES for f in findings):
        return None
    return [
        entry_of(s, Place(order=k, key=(out, path), wrt=-1, mode=s.modes[m]), slope, f, passed=True)
        for m, (slope, f) in enumerate(zip(slopes, findings, strict=True))
    ]


def _unit(v: list[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in v)) or 1.0
    return [x / norm for x in v]
