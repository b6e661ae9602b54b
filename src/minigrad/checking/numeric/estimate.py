"""The numerical derivative: one estimator, whose estimates carry a bound it stands behind.

Everything here works on a plain function ``evaluate(t) -> list[float] | None``
of one coordinate (the values of every function being checked with that
input set to ``t``; None off the domain) and knows nothing of minigrad's
types, so the arithmetic can be read and tested on its own.

A derivative is estimated in two stages; the second runs only for the rows
(values) the first does not settle, or whose verdict a caller wants
confirmed.

1. **The pair** (:func:`pair`): central differences at the nominal step
   ``h`` and at ``2h``. Their Richardson combination cancels the ``h**2``
   term. When the two differences agree within their round-off, truncation
   is invisible at ``2h`` and below: round-off has taken over there, so no
   smaller step can refute the estimate, and its bound is what round-off
   allows. A screen on the one-sided slopes (smooth: their gap halves with
   the step; a kink: it stays; a jump: it grows) sends a kink to stage 2.
2. **The ladder** (:func:`ladder`): a Richardson tableau (ratio 2, up to
   the ``h**4`` term cancelled) started at a sequence of scales, each with
   Ridders' error estimate plus the round-off its combinations carry. An
   estimate at a scale counts only when every estimate at every smaller
   scale agrees with it within the two bounds (a derivative is local: a
   step that spans a pole, a kink or the periods of a sine sees an
   average, and the smaller steps say so). Among the estimates that count,
   the tightest bound wins. The scales go down until round-off has taken
   over (a start whose error is mostly round-off, and one more), and up
   while round-off dominates the best bound and the step fits in the domain.

What a bound is made of, per value: the round-off of each computed value
(``noise``: read off the graph by the caller, at least a few ulps of the
value, and at least what the function's own evaluations show: a fourth
difference over five equally spaced points is pure noise where truncation is
invisible, and its size bounds the noise from below); a difference quotient
over a step ``s`` moves by at most twice that over ``2s``. Truncation is what
the tableau's columns still move.

When no bound can be given, the estimator says why (:class:`Unresolved`): a
kink (with both one-sided slopes and their bound), a jump, the edge of
float64's range, or a point where no step on either side is in the domain.

Example:
    >>> import math
    >>> p = Point(lambda t: [math.exp(t)], 0.5, [math.exp(0.5)], 1e-6)
    >>> est = pair(p, [0])[0]
    >>> abs(est.value - math.exp(0.5)) <= est.error < 1e-9, est.settled
    (True, True)
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence

__all__ = [
    "Estimate",
    "Evaluate",
    "Point",
    "Unresolved",
    "Why",
    "ladder",
    "min_step",
    "nominal_step",
    "pair",
]

#: The values of the checked functions at one coordinate, or None off the domain.
Evaluate = Callable[[float], "list[float] | None"]

#: Round-off of a computed value, relative to its magnitude, where nothing
#: better is known (a foreign engine's value): 64 ulps, for a function of a
#: few dozen ops each rounded once.
MODEL_ROUNDOFF = 2.0**-46
#: The least round-off of any value, relative: an ulp (the last op rounds
#: once, by half an ulp; the graph's reading counts an ulp per op).
LEAST_ROUNDOFF = 2.0**-52
#: The least round-off of any value, absolute: 4 subnormal quanta (a product
#: such as ``1.0 * 5e-324`` cannot move by less than one).
NOISE_FLOOR = 4.0 * 2.0**-1074
#: Tableau starts above the nominal step and below it, as powers of ten: the
#: ladder climbs at most 6 decades (round-off falls as the step grows) and
#: descends at most 16 (a kink or pole 1e-16 away is only resolved there).
_UP, _DOWN = 6, 16
#: A start's error counts as round-off when its truncation part is at most
#: this many times its round-off part.
_ROUNDED = 2.0
#: The ladder stops climbing once the best bound is this small, relative: a
#: rule off by less is beyond what any check resolves in float64.
TARGET = 2.0**-42


class Why(enum.Enum):
    """Why the estimator gives no bound."""

    KINK = "kink"
    JUMP = "jump"
    RANGE = "range"
    EDGE = "edge"


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

    __slots__ = ("error", "roundoff", "settled", "step", "value")

    def __init__(
        self, value: float, error: float, step: float, roundoff: float, settled: bool
    ) -> None:
        self.value = value
        self.error = error
        self.step = step
        self.roundoff = roundoff
        self.settled = settled

    def __repr__(self) -> str:
        return f"Estimate({self.value!r}, error={self.error!r}, step={self.step!r})"


class Unresolved:
    """No bound: the derivative does not exist here, or float64 cannot show it.

    Attributes:
        why: A :class:`Why`.
        words: What was seen, in words.
        left, right: The one-sided slopes at a kink (NaN otherwise).
        error: Their bound at a kink (NaN otherwise).
        step: The step the slopes came from (NaN when none).
    """

    __slots__ = ("error", "left", "right", "step", "why", "words")

    def __init__(
        self,
        why: Why,
        words: str,
        left: float = math.nan,
        right: float = math.nan,
        error: float = math.nan,
        step: float = math.nan,
    ) -> None:
        self.why = why
        self.words = words
        self.left = left
        self.right = right
        self.error = error
        self.step = step

    def __repr__(self) -> str:
        return f"Unresolved({self.why.value!r}, {self.words!r})"


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

    Below 1 it is PyTorch's absolute ``eps``. Above, a power of ``x`` needs a
    step that grows with ``|x|`` (or round-off swamps it) and a periodic
    function one that does not (or it spans periods): the square root is
    between, and the ladder takes over where neither fits.

    Example:
        >>> nominal_step(0.5, 1e-6), nominal_step(-1e10, 1e-6)
        (1e-06, 0.1)
    """
    return max(eps * max(1.0, math.sqrt(abs(x))), 64.0 * math.ulp(x))


def _symmetric(x: float, s: float) -> float:
    """A step within an ulp or so of ``s`` for which ``x + s`` and ``x - s`` are exact,
    so the difference is centred on ``x`` itself; else ``(x + s) - x``."""
    t = (x + s) - x
    if t <= 0.0 or x - (x - t) == t:
        return t
    t2 = x - (x - t)
    if t2 > 0.0 and (x + t2) - x == t2 and x - (x - t2) == t2:
        return t2
    return t


class Point:
    """One input as the numbers see it, with every evaluation made so far.

    Args:
        evaluate: The values with the input moved to ``t`` (None off the domain).
        x: The input's value.
        here: The values at ``x``.
        h: The nominal step.
        noise: Per value, its absolute round-off where the caller knows it
            (read off the graph); None: :data:`MODEL_ROUNDOFF` of the value.
        hidden: Whether a forward the caller cannot read computes the values (a
            custom rule, a closure): how finely they are rounded may be hidden.
    """

    def __init__(
        self,
        evaluate: Evaluate,
        x: float,
        here: Sequence[float],
        h: float,
        noise: Sequence[float] | None = None,
        hidden: bool = False,
    ) -> None:
        self.evaluate = evaluate
        self.hidden = hidden
        self.x = x
        self.here = list(here)
        self.h = h
        self.noise = list(noise) if noise is not None else None
        self._seen: dict[float, list[float] | None] = {}
        #: How many times ``evaluate`` ran.
        self.calls = 0
        #: Whether a value or a difference quotient overflowed (not a domain's edge).
        self.overflowed = False
        #: Per value, the smallest change from ``here`` seen at any step (inf: none
        #: yet). Values that did not change over a step may hide a slope up to
        #: that grain over the step: a function that cancels large intermediates
        #: inside a closure or a rule is quantized, and its graph does not show it.
        self.grain = [math.inf] * len(self.here)
        #: Per value, whether a moved point left it exactly unchanged: then it lies
        #: on a grid, and its round-off is half the grid's spacing at least.
        self.quantized = [False] * len(self.here)

    def at(self, t: float) -> list[float] | None:
        """The values at ``t`` (cached; None off the domain or not finite)."""
        if t in self._seen:
            return self._seen[t]
        self.calls += 1
        got = self.evaluate(t) if math.isfinite(t) else None
        if got is not None and not all(math.isfinite(v) for v in got):
            self.overflowed = True
            got = None
        if got is not None and len(got) == len(self.here):
            for r, (v, c) in enumerate(zip(got, self.here, strict=True)):
                if v != c:
                    self.grain[r] = min(self.grain[r], abs(v - c))
                elif t != self.x:
                    self.quantized[r] = True
        self._seen[t] = got
        return got

    def sizes(self) -> list[float]:
        """Per value, the function's size per unit of x: the largest value seen at any
        step, over ``max(|x|, 1)`` (a slope of 0 is counted in digits of it), never
        below the smallest normal float."""
        seen = [v for v in self._seen.values() if v is not None]
        return [
            max(abs(c), *(abs(v[r]) for v in seen), 2.0**-1022 * max(abs(self.x), 1.0))
            / max(abs(self.x), 1.0)
            for r, c in enumerate(self.here)
        ]

    def delta(self, r: int, *values: float) -> float:
        """The absolute round-off of value ``r`` at points with these values.

        The graph's reading is of the point itself; where the values are
        smaller (far from a pole) it shrinks with them, and where larger it
        is at least :data:`LEAST_ROUNDOFF` of them.
        """
        big = max(abs(v) for v in values)
        if self.noise is None:
            known = MODEL_ROUNDOFF * big
        else:
            c = abs(self.here[r])
            known = self.noise[r] * (min(1.0, big / c) if c > 0.0 else 1.0)
        # A forward the graph does not show (a custom rule's, a closure's) may round
        # to a grid coarser than its value (cos(x) - 1 inside one rule): values
        # that did not move over some step show it, and their smallest change is
        # the grid. The graph's own ops are read off the graph instead.
        grid = 0.0
        if self.hidden and self.quantized[r] and self.grain[r] < math.inf:
            grid = 0.5 * self.grain[r]
        return max(known, grid, LEAST_ROUNDOFF * big, NOISE_FLOOR)

    def sides(self, s: float) -> tuple[list[float], list[float], float] | None:
        """Values at ``x + s`` and ``x - s`` (``s`` made symmetric) and the half-step."""
        x = self.x
        t = _symmetric(x, s) if math.isfinite(x + s) else s
        hi, lo = x + t, x - t
        half = (hi - lo) / 2.0
        if not (half > 0.0 and math.isfinite(half)):
            return None
        up = self.at(hi)
        if up is None:
            return None
        down = self.at(lo)
        if down is None:
            return None
        return up, down, half


class _Row:
    """One scale of one value: the central difference, its round-off, the one-sided gap."""

    __slots__ = ("d", "flat", "gap", "gap_noise", "half", "jumpy", "left", "r", "right")

    def __init__(self, p: Point, r: int, up: list[float], down: list[float], half: float) -> None:
        u, c, w = up[r], p.here[r], down[r]
        self.half = half
        self.d = (u - w) / (2.0 * half)
        self.r = max(p.delta(r, u, w) / half, 2.0**-1074)  # round-off of the quotient
        self.flat = u == c == w
        if self.flat and p.hidden and p.grain[r] == math.inf:
            self.r = math.inf  # unmoved values of a hidden forward bound nothing yet
        right_step, left_step = (p.x + half) - p.x, p.x - (p.x - half)
        self.right = (u - c) / right_step
        self.left = (c - w) / left_step
        self.gap = self.right - self.left
        self.gap_noise = 4.0 * p.delta(r, u, c, w) / half
        # The larger change from the point to a side, for telling a jump.
        self.jumpy = max(abs(u - c), abs(c - w))


def _quotient(p: Point, s: float) -> tuple[list[float], list[float], float] | None:
    found = p.sides(s)
    if found is None:
        return None
    up, down, half = found
    for u, d in zip(up, down, strict=True):
        try:
            q = (u - d) / (2.0 * half)
        except OverflowError:
            q = math.inf
        if not math.isfinite(q):
            p.overflowed = True
            return None
    return found


def _measured(p: Point, r: int, s: float) -> float:
    """The noise of value ``r`` shown by a fourth difference over spacing ``s / 2``
    (the points ``x``, ``x +- s / 2``, ``x +- s``, all evaluated already), or 0."""
    outer, inner = p.sides(s), p.sides(s / 2.0)
    if outer is None or inner is None:
        return 0.0
    (u2, d2, _), (u1, d1, _) = outer, inner
    fourth = u2[r] - 4.0 * u1[r] + 6.0 * p.here[r] - 4.0 * d1[r] + d2[r]
    # The 16 in front of the worst noise: |fourth| <= 16 max|noise|.
    return abs(fourth) / 16.0


def pair(p: Point, rows: Sequence[int]) -> dict[int, Estimate | Unresolved]:
    """Stage 1: the central differences at ``h`` and ``2h``, combined; per row.

    An estimate is ``settled`` when the two differences agree within their
    round-off (truncation is invisible: see the module) and the one-sided
    slopes' gap shrinks with the step (no kink or jump within ``2h``).
    Rows without a pair (a side off the domain) are left out.
    """
    fine, coarse = _quotient(p, p.h), _quotient(p, 2.0 * p.h)
    found: dict[int, Estimate | Unresolved] = {}
    if fine is None or coarse is None:
        return found
    for r in rows:
        a, b = _Row(p, r, *fine), _Row(p, r, *coarse)
        noise = _measured(p, r, 2.0 * p.h) / a.half  # structure or noise: it only widens
        factor = (b.half / a.half) ** 2
        value = a.d + (a.d - b.d) / (factor - 1.0)
        roundoff = (factor * a.r + b.r) / (factor - 1.0)
        moved = abs(a.d - b.d)
        # Settled by the graph's round-off alone: what the fourth difference
        # measures may be structure (a pole, a kink) as well as noise, so it
        # only widens the bound.
        smooth = abs(a.gap) <= a.gap_noise + b.gap_noise or abs(a.gap) <= 0.75 * abs(b.gap)
        # Values that did not move at all settle nothing: their grain is unknown.
        still = a.flat or b.flat
        settled = moved <= a.r + b.r and smooth and math.isfinite(roundoff) and not still
        error = roundoff + moved + (factor * noise + noise / 2.0) / (factor - 1.0)
        found[r] = Estimate(value, error, b.half, roundoff, settled)
    return found


class _Start:
    """One start of the tableau: per row its best estimate and its rows (differences)."""

    __slots__ = ("best", "requested", "rows", "step", "used")

    def __init__(self, step: float, requested: float) -> None:
        self.step = step
        self.requested = requested
        self.best: dict[int, Estimate] = {}
        self.rows: dict[int, list[_Row]] = {}
        #: Per row, the index of the finest difference its best estimate is made of.
        self.used: dict[int, int] = {}

    def finest(self, r: int) -> _Row:
        return self.rows[r][-1]


def _tableau(p: Point, s: float, rows: Sequence[int]) -> _Start | None:
    """Central differences at ``s``, ``s/2``, ``s/4``; Richardson's columns with
    Ridders' error estimate (the larger change from the two entries they were
    made of) plus the round-off the combination carries. None off the domain."""
    got = [_quotient(p, s / 2.0**j) for j in range(3)]
    if got[0] is None or got[1] is None:
        return None
    start = _Start(got[0][2], s)
    for r in rows:
        table = [_Row(p, r, *g) for g in got if g is not None]
        prev: list[tuple[float, float]] = []
        best: Estimate | None = None
        for i, row in enumerate(table):
            cur = [(row.d, row.r)]
            for j in range(1, i + 1):
                factor = (table[i - j].half / row.half) ** 2
                if not factor > 1.01:
                    break
                (v0, r0), (v1, r1) = cur[j - 1], prev[j - 1]
                v = v0 + (v0 - v1) / (factor - 1.0)
                rr = (factor * r0 + r1) / (factor - 1.0)
                cur.append((v, rr))
                moved = max(abs(v - v0), abs(v - v1))
                if best is None or moved + rr < best.error:
                    best = Estimate(v, moved + rr, start.step, rr, False)
                    start.used[r] = i
            prev = cur
        # The start sees a smooth function only if its one-sided slopes' gap
        # shrinks with the step (with it, in proportion; noise aside): steps
        # that straddle a kink, a bend they cannot resolve or a pole, or span
        # periods, see averages of slopes, however straight they look.
        first, last = table[0], table[-1]
        smooth = abs(last.gap) <= 0.5 * abs(first.gap) + 2.0 * last.gap_noise
        if best is not None and smooth and math.isfinite(best.error):
            start.best[r] = best
        start.rows[r] = table
    return start


def _noise_floor(p: Point, r: int) -> float:
    """The noise of value ``r`` as the function's own evaluations show it.

    Fourth differences over points a little apart on one side of the point,
    where no structure of the function (curvature, a pole, a kink or a jump
    at the point) is left, are round-off alone, and ``|fourth| <= 16 *
    max|noise|``: the largest of three, over four (noise is seldom aligned at
    its worst), on the side that shows less. Two spacings: 2 ulps of x (a
    function that changes a lot per ulp, sin at 1e15, shows no structure
    there), and a thousandth of the step (a function rounded to a coarse
    grid, cos(x) - 1 at 1e-4, does not change over a few ulps of x); the
    lesser of those where the values move at all. 0 where nothing can be
    measured (the sides leave the domain, or the values never move).
    """
    scale = min(p.h, abs(p.x)) if p.x != 0.0 else p.h
    least = math.inf
    for sigma in (2.0 * math.ulp(p.x), max(16.0 * math.ulp(p.x), 1e-3 * scale)):
        for side in (1.0, -1.0):
            got = [p.at(p.x + side * k * sigma) for k in range(1, 8)]
            vals = [v[r] for v in got if v is not None]
            if len(vals) < len(got) or len(set(vals)) == 1:
                continue
            fourths = (
                vals[k] - 4.0 * vals[k + 1] + 6.0 * vals[k + 2] - 4.0 * vals[k + 3] + vals[k + 4]
                for k in range(3)
            )
            least = min(least, max(abs(f) for f in fourths) / 4.0)
    return 0.0 if least == math.inf else least


def _starts(p: Point) -> tuple[list[float], list[float], list[float]]:
    """The scales above the nominal one (ascending), at and below it (descending),
    and those of ``|x|`` itself where it is below the nominal step."""
    h, x = p.h, p.x
    finest = min_step(x)
    up = [2.0 * h * 10.0**k for k in range(1, _UP + 1)]
    down = [s for s in (2.0 * h * 10.0**-k for k in range(_DOWN + 1)) if s >= finest]
    if down and down[-1] > finest and len(down) <= _DOWN:
        down.append(finest)  # the finest differences float64 has at x, if no decade hit them
    below: list[float] = []
    if 0.0 < abs(x) < h:
        # A step beyond |x| straddles 0, where many functions have a pole, a
        # cusp or an edge: the scales of x itself come next, however far
        # below the nominal step they are.
        below = [s for s in (abs(x) * 2.0**-j for j in (1, 4, 8)) if s >= finest]
    return up, down, below


def _rounded(e: Estimate) -> bool:
    return e.error - e.roundoff <= _ROUNDED * e.roundoff


def ladder(p: Point, rows: Sequence[int]) -> dict[int, Estimate | Unresolved]:
    """Stage 2: the tableau at many scales, the local estimates only; per row.

    Returns:
        Per row, an :class:`Estimate` (settled) or why there is none.
    """
    known = p.noise or [MODEL_ROUNDOFF * abs(v) for v in p.here]
    floor = {r: _noise_floor(p, r) for r in rows}
    p.noise = [max(n, floor.get(r, 0.0)) for r, n in enumerate(known)]
    up, down, below = _starts(p)
    starts: list[_Start] = []
    pending = set(rows)
    # Down: until round-off has taken over (a start whose best error is mostly
    # round-off), and one more start after it; the scales below |x| always.
    rounded = dict.fromkeys(rows, 0)
    failed_below = False
    for s in [*down[:1], *below, *down[1:]]:
        start = _tableau(p, s, sorted(pending) if s not in below else rows)
        if start is None:
            # The steps below |x| overflow (1 / x at 1e-300): the derivative
            # is beyond float64, whatever the larger steps that straddle 0 see.
            failed_below = failed_below or (s in below and p.overflowed)
            continue
        starts.append(start)
        if s in below:
            continue
        for r in list(pending):
            e = start.best.get(r)
            if e is not None and _rounded(e):
                rounded[r] += 1
                if rounded[r] >= 2:
                    pending.discard(r)
        if not pending:
            break
    if down and all(st.requested != down[-1] for st in starts):
        # And the finest differences float64 has at x: a candidate must hold
        # against them too (t - sin(t) at 3e15, whose period is a dozen ulps).
        finest = _tableau(p, down[-1], rows)
        if finest is not None:
            starts.append(finest)
    # Up: while the best local bound is mostly round-off, a larger step may do better.
    for r in rows:
        for s in up:
            best = _local(starts, r)
            if best is not None and (best.error <= TARGET * abs(best.value) or not _rounded(best)):
                break  # good enough, or truncation dominates: larger steps only add to it
            start = _tableau(p, s, [r])
            if start is None:
                break
            starts.insert(0, start)
    found: dict[int, Estimate | Unresolved] = {}
    # Made again, now that every value is in: a row that did not move is
    # weighed with the grain the larger steps showed (all cached: no evaluation).
    remade = (_tableau(p, st.requested, list(st.rows)) for st in starts)
    starts = sorted((st for st in remade if st is not None), key=lambda st: -st.step)
    for r in rows:
        mine = [st for st in starts if r in st.rows]
        best = _local(mine, r)
        odd = _no_derivative(p, r, mine)
        if failed_below and p.overflowed:
            found[r] = _edge(p)  # the finest steps overflow: beyond float64's range
        elif odd is not None:
            found[r] = odd
        elif best is not None:
            found[r] = best
        elif mine and all(st.finest(r).flat for st in mine) and p.hidden:
            found[r] = Unresolved(
                Why.RANGE,
                f"the values do not change at any step up to {mine[0].step:.3g}, and a "
                "forward the graph does not show computes them: how finely they are "
                "rounded, and so how small a slope they could hide, cannot be told",
            )
        elif mine and all(st.finest(r).flat for st in mine):
            # No step changed the value at all: the slope is below what the
            # largest step resolves.
            top = mine[0]
            bound = max(p.delta(r, p.here[r]) / top.step, 2.0**-1074)
            found[r] = Estimate(0.0, bound, top.step, bound, True)
        elif p.overflowed:
            found[r] = _edge(p)
        else:
            found[r] = _one_sided(p, r) or _edge(p)
    return found


#: How much the truncation of a smaller step may exceed the h**2 law from a
#: larger one (the h**4 terms, and a step ratio off by rounding).
_LAW = 4.0


def _local(starts: Sequence[_Start], r: int) -> Estimate | None:
    """The tightest estimate that every smaller step's difference agrees with.

    An estimate ``v`` from a start at step ``S`` claims the function is smooth
    at that scale: its own differences imply a truncation ``c * s**2`` (the
    largest ``|D(s) - v| / s**2`` among them), and every difference ``D(s)`` at
    a smaller step must then lie within ``v``'s bound, its own round-off and
    that law (times :data:`_LAW`) of ``v``. A straight line seen by large
    steps across a bend the small steps resolve fails this, however noisy
    the small steps are.
    """
    ordered = sorted((st for st in starts if r in st.rows), key=lambda st: -st.step)
    best: Estimate | None = None
    for j, st in enumerate(ordered):
        e = st.best.get(r)
        if e is None or (best is not None and e.error >= best.error):
            continue
        # The law's coefficient as a truncation at the start's step, from the
        # differences the estimate is made of: (s / S)**2 scales it. Every
        # finer difference is held to it, this start's own unused ones too.
        rows, used = st.rows[r], st.used[r]
        top = rows[0].half
        law = max(abs(row.d - e.value) * (top / row.half) ** 2 for row in rows[: used + 1])
        finer = [*rows[used + 1 :], *(row for later in ordered[j + 1 :] for row in later.rows[r])]
        if all(
            abs(row.d - e.value) <= e.error + row.r + _LAW * law * (row.half / top) ** 2
            for row in finer
        ):
            best = e
    if best is None:
        return None
    return Estimate(best.value, best.error, best.step, best.roundoff, True)


def _no_derivative(p: Point, r: int, starts: Sequence[_Start]) -> Unresolved | None:
    """A jump or a kink at the point, from the finest start and one at least 8 times
    coarser: a jump, when the change from the point to a side does not shrink with
    the step; a kink, when the one-sided slopes' gap, resolved at both, does not
    (a smooth function's shrinks in proportion to the step)."""
    if not starts:
        return None
    fine = starts[-1].finest(r)
    coarser = [st.finest(r) for st in starts if st.finest(r).half >= 8.0 * fine.half]
    if not coarser:
        return None
    coarse = coarser[-1]
    if fine.jumpy > 0.5 * coarse.jumpy and fine.jumpy > 16.0 * p.delta(r, p.here[r]):
        return Unresolved(
            Why.JUMP,
            f"it jumps here (by about {fine.jumpy:.6g} even at a step of {fine.half:.3g}), "
            "so no derivative exists",
            step=fine.half,
        )
    resolved = abs(fine.gap) > 4.0 * fine.gap_noise and abs(coarse.gap) > 4.0 * coarse.gap_noise
    if not resolved or not 0.5 * abs(coarse.gap) < abs(fine.gap) <= 2.0 * abs(coarse.gap):
        return None  # no gap, one that shrinks (smooth), or one that grows (noise)
    if p.x != 0.0 and fine.half >= 0.25 * abs(p.x):
        # No step below |x| fits in float64 here: what looks like a kink may be
        # the function's shape at the scale of x itself.
        return Unresolved(
            Why.RANGE,
            f"no step smaller than the point itself ({p.x:.3g}) fits in float64, and the "
            f"larger ones see one-sided slopes {fine.left:.9g} and {fine.right:.9g}",
        )
    # Each slope's bound: its round-off and how far it still moved between the scales.
    error = fine.gap_noise + max(abs(fine.left - coarse.left), abs(fine.right - coarse.right))
    return Unresolved(
        Why.KINK,
        f"a kink: left slope {fine.left:.9g}, right slope {fine.right:.9g}",
        left=fine.left,
        right=fine.right,
        error=error,
        step=fine.half,
    )


def _one_sided(p: Point, r: int) -> Estimate | Unresolved | None:
    """Where no central step fits: forward differences from the side that fits,
    Richardson over every power of the step (ratio 2), the local estimate."""
    ests: list[Estimate] = []
    for side in (1.0, -1.0):
        for k in range(_UP, -_DOWN - 1, -1):
            s = p.h * 10.0**k
            if s < min_step(p.x):
                break
            vals = []
            for j in range(3):
                moved = p.x + side * s / 2.0**j
                step = moved - p.x
                got = p.at(moved) if step != 0.0 else None
                if got is None:
                    break
                c = p.here[r]
                vals.append(((got[r] - c) / step, 2.0 * p.delta(r, got[r], c) / abs(step)))
            if len(vals) < 3:
                continue
            (d0, r0), (d1, r1), (d2, r2) = vals
            c1a, c1b = 2.0 * d1 - d0, 2.0 * d2 - d1
            c2 = (4.0 * c1b - c1a) / 3.0
            rr = (4.0 * (2.0 * r2 + r1) + (2.0 * r1 + r0)) / 3.0
            moved = max(abs(c2 - c1b), abs(c2 - c1a))
            ests.append(Estimate(c2, moved + rr, s, rr, True))
        if ests:
            break
    if not ests:
        return None
    best: Estimate | None = None
    for j, e in enumerate(ests):
        if all(abs(e.value - f.value) <= e.error + f.error for f in ests[j + 1 :]) and (
            best is None or e.error < best.error
        ):
            best = e
    return best


def _edge(p: Point) -> Unresolved:
    """No step on either side gives a finite value: an edge of the domain or of float64."""
    if not p.overflowed:
        return Unresolved(
            Why.EDGE,
            "no step on either side of the point stays in the function's domain",
        )
    return Unresolved(
        Why.RANGE,
        "the derivative is beyond the range of float64 here (its difference quotients overflow)",
    )
