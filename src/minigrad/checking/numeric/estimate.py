"""The numerical derivative: one estimator, whose estimates carry a bound it stands behind.

Everything here works on a plain function ``evaluate(t) -> list[float] | None`` of one
coordinate (the values with that input set to ``t``; None off the domain) and knows nothing of
minigrad's types: the arithmetic can be read and tested alone.

A derivative is estimated in two stages (``docs/contributing.md`` derives each): **the pair**
(:func:`pair`), central differences at ``h`` and ``2h`` combined by Richardson, settled where the
two agree within their round-off (no smaller step can refute it) and the one-sided slopes' gap
halves with the step; and for the rest **the ladder** (:mod:`~minigrad.checking.numeric.ladder`):
tableaux at many scales, each with Ridders' error plus its round-off, an estimate counting only
where every smaller scale agrees.

A bound is each value's round-off (``noise``: read off the graph by the caller, and what its own
fourth differences show) over the step, plus the truncation left. Where none can be given,
:class:`Unresolved` says why: a kink (with both slopes), a jump, float64's range, no step.

Example:
    >>> import math
    >>> p = Point(lambda t: [math.exp(t)], 0.5, [math.exp(0.5)], 1e-6, [2.0**-52])
    >>> est = pair(p, [0])[0]
    >>> abs(est.value - math.exp(0.5)) <= est.error < 1e-9, est.settled
    (True, True)
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Sequence

__all__ = ["Estimate", "Evaluate", "Point", "Unresolved", "Why", "min_step", "nominal_step", "pair"]

#: The values of the checked functions at one coordinate, or None off the domain.
Evaluate = Callable[[float], "list[float] | None"]
#: The values at ``x + s`` and ``x - s``, and the half-step ``s``.
Sides = tuple[list[float], list[float], float]

#: Round-off of a computed value, relative to its magnitude, where nothing better is known (a
#: foreign engine's value): 64 ulps, for a function of a few dozen ops each rounded once.
MODEL_ROUNDOFF = 2.0**-46
#: The least round-off of any value, relative: an ulp (the last op rounds
#: once, by half an ulp; the graph's reading counts an ulp per op).
LEAST_ROUNDOFF = 2.0**-52
#: The least round-off of any value, absolute: 4 subnormal quanta (a product
#: such as ``1.0 * 5e-324`` cannot move by less than one).
NOISE_FLOOR = 4.0 * 2.0**-1074


class Why(enum.Enum):
    """Why the estimator gives no bound."""

    KINK = "kink"
    JUMP = "jump"
    RANGE = "range"
    EDGE = "edge"
    NOISE = "noise"


@dataclasses.dataclass(slots=True)
class Estimate:
    """A numerical derivative with a bound on its error.

    Attributes:
        value: The estimate.
        error: A bound on ``|value - derivative|``: the round-off the
            estimate carries plus the truncation its tableau still shows.
        step: The largest step it came from.
        roundoff: The part of ``error`` that is round-off.
        settled: Whether it needs no further confirmation: truncation was
            invisible (the pair), or every smaller scale agrees (the ladder).
    """

    value: float
    error: float
    step: float
    roundoff: float
    settled: bool


@dataclasses.dataclass(slots=True)
class Unresolved:
    """No bound: the derivative does not exist here, or float64 cannot show it.

    Attributes:
        why: A :class:`Why`.
        words: What was seen, in words.
        left, right: The one-sided slopes at a kink (NaN otherwise).
        error: Their bound at a kink (NaN otherwise).
        step: The step the slopes came from (NaN when none).
    """

    why: Why
    words: str
    left: float = math.nan
    right: float = math.nan
    error: float = math.nan
    step: float = math.nan


def min_step(x: float) -> float:
    """The smallest tableau start worth taking at ``x``: 4 ulps (its finest difference
    is over one ulp on each side, the finest float64 has).

    Example:
        >>> min_step(1.0) == 4 * math.ulp(1.0)
        True
    """
    return 4.0 * math.ulp(x)


def nominal_step(x: float, eps: float) -> float:
    """``eps`` scaled to ``x``: ``eps * max(1, sqrt(|x|))``, and at least 64 ulps of ``x``.

    Below 1 it is PyTorch's absolute ``eps``. Above, a power of ``x`` needs a step that grows
    with ``|x|`` (or round-off swamps it) and a periodic function one that does not (or it spans
    periods): the square root is between, and the ladder takes over where neither fits.

    Example:
        >>> nominal_step(0.5, 1e-6), nominal_step(-1e10, 1e-6)
        (1e-06, 0.1)
    """
    return max(eps * max(1.0, math.sqrt(abs(x))), 64.0 * math.ulp(x))


#: How much farther than the least step at which a hidden forward moved it may stand still and
#: show stairs (:meth:`Point.stairs`): 16 to 1024 decide alike (the constants table).
_STAIRS = 64.0
#: A value's grid counts as coarse when it is this many ulps of the value or more (random mantissas
#: put it at an ulp or two; 256 is no accident); but a value on a grid coarser than ROUND of itself
#: has under 10 bits: round by nature (a saturated op's 1.0, x - K a few ulps of K from a kink), not
#: rounded to it. Float32's cells are FLOAT32 of a value (24 bits).
_COARSE, ROUND, FLOAT32 = 256.0, 2.0**-10, 2.0**-24


def grid_of(v: float) -> float:
    """The spacing of the coarsest grid ``v`` lies on, where it is coarse; else 0.

    The lowest set bit of the mantissa gives it: ``30.000000000000092 - 30.0``
    is a multiple of an ulp of 30 (its own ulp is a billion times finer).

    Example:
        >>> grid_of(30.000000000000092 - 30.0) >= math.ulp(30.0), grid_of(0.1)
        (True, 0.0)
    """
    if v == 0.0 or not math.isfinite(v):
        return 0.0
    mantissa, exponent = math.frexp(abs(v))
    whole = int(mantissa * 2.0**53)
    spacing = math.ldexp(float(whole & -whole), exponent - 53)
    return spacing if spacing >= _COARSE * math.ulp(v) else 0.0


def _symmetric(x: float, s: float) -> float:
    """A step within an ulp or so of ``s`` for which ``x + s`` and ``x - s`` are exact,
    so the difference is centred on ``x`` itself; else ``(x + s) - x``."""
    t = (x + s) - x
    if t <= 0.0 or x - (x - t) == t:
        return t
    t2 = x - (x - t)
    return t2 if t2 > 0.0 and (x + t2) - x == t2 and x - (x - t2) == t2 else t


class Point:
    """One input as the numbers see it, with every evaluation made so far.

    ``evaluate(t)``: the values with the input moved to ``t`` (None off the domain);
    ``here``: those at ``x``; ``h``: the nominal step; ``noise``: per value, its absolute
    round-off where the caller knows it (read off the graph; None: :data:`MODEL_ROUNDOFF`
    of the value); ``hidden``: per value (or for all), whether a forward the caller
    cannot read computes it (a custom rule, a closure): its rounding may be hidden.
    """

    def __init__(
        self,
        evaluate: Evaluate,
        x: float,
        here: Sequence[float],
        h: float,
        noise: Sequence[float] | None = None,
        hidden: bool | Sequence[bool] = False,
        widest: float | Sequence[float] = math.inf,
    ) -> None:
        self.evaluate = evaluate
        #: Per value, the largest half-step a difference of it may take: beyond it a periodic
        #: op's argument turns by more than a radian, and a difference sees the average slope
        #: over its periods, not the slope (read off the graph); and the largest of them.
        self.reach = [widest] * len(here) if isinstance(widest, float) else list(widest)
        self.widest = max(self.reach, default=math.inf)
        self.hidden = [hidden] * len(here) if isinstance(hidden, bool) else list(hidden)
        self.x = x
        self.here = list(here)
        self.h = h
        self.noise = list(noise) if noise is not None else None
        #: Per value, the part of ``noise`` hidden forwards' cells hold (the caller's).
        self.cells: list[float] | None = None
        self._seen: dict[float, list[float] | None] = {}
        self._sizes: dict[tuple[float, int], list[float]] = {}
        #: Whether a value or a difference quotient overflowed (not a domain's edge).
        self.overflowed = False
        #: Per value, the coarse grid a hidden forward's values lie on (inf: none seen): one that
        #: cancels inside (cos(x) - 1 at 1e-4) leaves low bits of 0 (:func:`grid_of`).
        g = [grid_of(c) if hd else 0.0 for c, hd in zip(self.here, self.hidden, strict=True)]
        self.grid = [v or math.inf for v in g]
        #: Per value, how many distinct values near x lie on a coarse grid (one may by chance).
        self.coarse = [int(v > 0.0) for v in g]
        self._values: list[set[float]] = [{c} for c in self.here]
        #: Per value, the least change from ``here`` seen at any step (inf: none): on a grid
        #: values change by a cell at least, so it bounds a hidden forward's grid from above.
        self.least = [math.inf] * len(self.here)
        #: Per value, the steps at which it stood still, the least at which it moved: stairs.
        self.still: list[list[float]] = [[] for _ in self.here]
        self.moved = [math.inf] * len(self.here)
        #: The values of a hidden forward, the only ones whose grid is watched, within 1e3
        #: steps of x or 1e-3 of |x| (a cancellation's treads are ulps of |x|-sized ones).
        self.near = max(1e3 * h, 1e-3 * abs(x))
        self._watched = [r for r, h in enumerate(self.hidden) if h]
        #: Whether a moved point was off the function's domain (or a declared one), and whether
        #: moved points are held to a domain the user declared (smooth inside, on their word).
        self.off = False
        self.fenced = False
        #: Per value, whether a 0 there is terms the graph shows cancel (the caller's).
        self.cancelled = [False] * len(self.here)
        #: Per value, the pair's differences (at ``2h``, ``h``) and the noise its fourth showed.
        self.paired: dict[int, tuple[_Row, _Row, float]] = {}

    def at(self, t: float) -> list[float] | None:
        """The values at ``t`` (cached; None off the domain or not finite)."""
        if t in self._seen:
            return self._seen[t]
        got = self.evaluate(t) if math.isfinite(t) else None
        if got is None:
            self.off = True
        if got is not None and not all(map(math.isfinite, got)):
            self.overflowed = True
            got = None
        # Hidden forwards' grid near x only: far off, a value may be round by nature (1 / x
        # at 0.03 + 0.02 is 20.0). Stairs anywhere: ((X + y)**2 - (X - y)**2) / 4 at X = 1e15
        # moves from y = 0.0625 on, and steps crossing 1 to 3 risers agreed on a slope 47% off.
        if self._watched and got is not None and len(got) == len(self.here):
            near = abs(t - self.x) <= self.near
            for r in self._watched:
                v = got[r]
                if v != self.here[r]:
                    self.least[r] = min(self.least[r], abs(v - self.here[r]))
                    self.moved[r] = min(self.moved[r], abs(t - self.x))
                else:
                    self.still[r].append(abs(t - self.x))
                if not near:
                    continue
                # Each distinct value once: the same number seen twice is one piece of evidence.
                g = grid_of(v) if v not in self._values[r] else 0.0
                self._values[r].add(v)
                if 0.0 < g <= ROUND * abs(v):  # (under 10 bits: round by nature)
                    self.grid[r] = min(self.grid[r], g)
                    self.coarse[r] += 1
        self._seen[t] = got
        return got

    def sizes(self, within: float = math.inf) -> list[float]:
        """Per value, the function's size per unit of x: the largest value seen at a
        step up to ``within`` (``eps`` or an estimate's own step, the larger:
        exp(x - c) + c at c = 1e15 is of size 1 per unit of x within them, and
        1e12 at the pair's steps of 60), over ``max(|x|, 1)`` (a slope of 0 is
        counted in digits of it), never below the smallest normal float."""
        key = (within, len(self._seen))  # the same values seen, the same sizes
        if key in self._sizes:
            return self._sizes[key]
        x = self.x
        seen = [v for t, v in self._seen.items() if v is not None and abs(t - x) <= within]
        found = self._sizes[key] = [
            max(abs(c), *(abs(v[r]) for v in seen), 2.0**-1022 * max(abs(x), 1.0))
            / max(abs(x), 1.0)
            for r, c in enumerate(self.here)
        ]
        return found

    def delta(self, r: int, *values: float) -> float:
        """The absolute round-off of value ``r`` at points with these values.

        The graph's reading is of the point itself; where the values are
        smaller (far from a pole) it shrinks with them, and where larger it
        is at least :data:`LEAST_ROUNDOFF` of them.
        """
        return self._delta(r, max(map(abs, values)))

    def _delta(self, r: int, big: float) -> float:
        """:meth:`delta` at values no larger than ``big``."""
        if self.noise is None:
            known = MODEL_ROUNDOFF * big
        else:
            # Round-off relative to the value shrinks with it; what is beyond
            # that (intermediates of 1e16 that cancel to 2) does not.
            c = abs(self.here[r])
            noise = self.noise[r]
            known = max(noise * min(1.0, big / c), noise - MODEL_ROUNDOFF * c) if c else noise
            if self.cells and c:  # a hidden forward's cells grow with its results
                known = max(known, self.cells[r] * big / c)
        # A hidden forward (a rule's, a closure's) may round to a grid coarser than its value
        # (cos(x) - 1 inside one rule): still values show it, their least change its size.
        grid = 0.5 * self.grid[r] if self.hidden[r] and self.on_grid(r) else 0.0
        return max(known, grid, LEAST_ROUNDOFF * big, NOISE_FLOOR)

    def unseen(self, r: int, still: bool) -> float:
        """How far a value of ``r`` may be off at a step where it stood ``still``, or on stairs:
        a hidden forward still over a step changed by less than its grid, which no change seen
        is finer than (none seen: unknown, inf); on stairs any value may be a cell off."""
        return self.least[r] if (still and self.hidden[r]) or self.stairs(r) else 0.0

    def stairs(self, r: int) -> bool:
        """Whether value ``r``'s hidden forward stood still at a step from a quarter of
        the least at which it moved (the ladder's steps are 2 to 4 apart) to 64
        times it: a smooth forward moves by more at a larger step, a staircase
        (``x / 2 + 1`` inside rounds ``x`` to cells of 8 of its ulps) stands still
        until a step crosses into the next cell. Farther out a value may come back
        by the function's nature (``cos(x) - 1`` is even: at ``-x`` it is the same)."""
        low = self.moved[r]
        return self.hidden[r] and any(low <= 4.0 * t and t <= _STAIRS * low for t in self.still[r])

    def on_grid(self, r: int) -> bool:
        """Whether value ``r``'s forward is hidden and most distinct values seen near x
        lie on a coarse grid, two at least (a round value or two, 1 / x of a round x,
        is no grid)."""
        return self.hidden[r] and self.coarse[r] >= max(2, len(self._values[r]) // 2)

    def sides(self, s: float) -> Sides | None:
        """Values at ``x + s`` and ``x - s`` (``s`` made symmetric) and the half-step."""
        x = self.x
        t = _symmetric(x, s) if math.isfinite(x + s) else s
        hi, lo = x + t, x - t
        half = (hi - lo) / 2.0
        if not (half > 0.0 and math.isfinite(half)) or half > self.widest:
            return None
        up = self.at(hi)
        down = self.at(lo) if up is not None else None  # no call past a side off the domain
        return (up, down, half) if up is not None and down is not None else None


class _Row:
    """One scale of one value: the central difference, its round-off, the one-sided gap."""

    __slots__ = ("d", "flat", "gap", "gap_noise", "half", "jumpy", "left", "r", "right")

    def __init__(self, p: Point, r: int, up: list[float], down: list[float], half: float) -> None:
        u, c, w = up[r], p.here[r], down[r]
        self.half = half
        self.d = (u - w) / (2.0 * half)
        big = max(abs(u), abs(w))
        delta = p._delta(r, big)
        # Its grid at these values: float32's where the values near x lie on one; any that both
        # show where the moved inputs are not round (sin(t) - t at 2e-4: an ulp of t, not of x;
        # 1e6 + 1e4 is round, and its square exact and as round: no rounding's grid).
        if p.hidden[r]:
            exact = all(grid_of(v) > 0.0 for v in (p.x, p.x + half, p.x - half))
            seen = [g if (g := grid_of(v)) <= ROUND * abs(v) else 0.0 for v in (u, w)]
            kind = [g for g, v in zip(seen, (u, w), strict=True) if g >= FLOAT32 * abs(v)]
            both = seen if min(seen) > 0.0 and not exact else []
            delta = max(delta, 0.5 * min([*(kind if p.on_grid(r) else []), *both], default=0.0))
        self.r = max(delta / half, 2.0**-1074)  # round-off of the quotient
        self.flat = u == c == w
        self.r = max(self.r, p.unseen(r, self.flat) / half)
        self.right = (u - c) / ((p.x + half) - p.x)
        self.left = (c - w) / (p.x - (p.x - half))
        self.gap = self.right - self.left
        self.gap_noise = 4.0 * (delta if abs(c) <= big else p._delta(r, abs(c))) / half
        # The larger change from the point to a side, for telling a jump.
        self.jumpy = max(abs(u - c), abs(c - w))


def _quotient(p: Point, s: float) -> Sides | None:
    if (found := p.sides(s)) is None:
        return None
    up, down, half = found
    for u, d in zip(up, down, strict=True):
        if not math.isfinite((u - d) / (2.0 * half)):  # (float division overflows to inf)
            p.overflowed = True
            return None
    return found


def _measured(p: Point, r: int, outer: Sides, inner: Sides) -> float:
    """The noise of value ``r`` a fourth difference shows over ``x``, ``x +- s/2``, ``x +- s``."""
    (u2, d2, _), (u1, d1, _) = outer, inner
    fourth = u2[r] - 4.0 * u1[r] + 6.0 * p.here[r] - 4.0 * d1[r] + d2[r]
    # The 16 in front of the worst noise: |fourth| <= 16 max|noise|.
    return abs(fourth) / 16.0


def pair(p: Point, rows: Sequence[int]) -> dict[int, Estimate | Unresolved]:
    """Stage 1: the central differences at ``h`` and ``2h``, combined; per row.

    An estimate is ``settled`` when the two differences agree within their round-off (truncation
    is invisible: see the module) and the one-sided slopes' gap shrinks with the step (no kink
    or jump within ``2h``). Rows without a pair (a side off the domain) are left out.
    """
    fine, coarse = _quotient(p, p.h), _quotient(p, 2.0 * p.h)
    found: dict[int, Estimate | Unresolved] = {}
    if fine is None or coarse is None:
        return found
    for r in rows:
        if coarse[2] > p.reach[r]:
            continue  # an op of this value turns within the pair's steps
        a, b = _Row(p, r, *fine), _Row(p, r, *coarse)
        measured = _measured(p, r, coarse, fine)
        p.paired[r] = (b, a, measured)
        noise = measured / a.half  # structure or noise: it only widens
        factor = (b.half / a.half) ** 2
        value = a.d + (a.d - b.d) / (factor - 1.0)
        roundoff = (factor * a.r + b.r) / (factor - 1.0)
        moved = abs(a.d - b.d)
        # Settled by the graph's round-off alone: what the fourth difference measures may be
        # structure (a pole, a kink) as well as noise, so it only widens the bound.
        smooth = abs(a.gap) <= a.gap_noise + b.gap_noise or abs(a.gap) <= 0.75 * abs(b.gap)
        # Values of a hidden forward that did not move at all settle nothing (their
        # grid is unknown); the graph's own values are as fine as it says.
        still = (a.flat or b.flat) and p.hidden[r]
        settled = moved <= a.r + b.r and smooth and math.isfinite(roundoff) and not still
        error = roundoff + moved + (factor * noise + noise / 2.0) / (factor - 1.0)
        found[r] = Estimate(value, error, b.half, roundoff, settled)
    return found
