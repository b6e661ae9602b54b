"""The estimator's second stage: Richardson tableaux at many scales, the local estimates only.

Where the pair does not settle a value, :func:`ladder` starts a tableau (differences at
``s``, ``s/2``, ``s/4``; Richardson's columns with Ridders' error plus their round-off) at
scales down from twice the nominal step by decades (and those of ``|x|`` where smaller)
until round-off has taken over, always at the finest float64 has at ``x``, and up while
round-off dominates the best bound. An estimate counts only where every finer difference
agrees (:func:`_local`); one-sided slopes tell kinks and jumps (:mod:`.kinks`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from minigrad.checking.numeric import kinks
from minigrad.checking.numeric.estimate import (
    MODEL_ROUNDOFF,
    Estimate,
    Point,
    Unresolved,
    Why,
    _quotient,
    _Row,
    min_step,
)

__all__ = ["ladder", "widen"]

#: Decades of tableau starts above the nominal step (round-off falls) and below (a pole 1e-16 off).
_UP, _DOWN = 6, 16
#: A start's error counts as round-off when its truncation is at most this many times it.
_ROUNDED = 2.0
#: The relative bound that stops the climb: a rule off by less is beyond float64's checks.
TARGET = 2.0**-42


class _Start:
    """One start of the tableau: per row its best estimate and its rows (differences)."""

    __slots__ = ("best", "from_", "requested", "rows", "step", "used")

    def __init__(self, step: float, requested: float) -> None:
        self.step = step
        self.requested = requested
        self.best: dict[int, Estimate] = {}
        self.rows: dict[int, list[_Row]] = {}
        #: Per row, the finest and the coarsest difference its best estimate is made of.
        self.used: dict[int, int] = {}
        self.from_: dict[int, int] = {}


def _tableau(p: Point, s: float, rows: Sequence[int]) -> _Start | None:
    """Central differences at ``s``, ``s/2``, ``s/4``; Richardson's columns with Ridders' error
    (the larger change from the two entries made of) plus their round-off. None off the domain."""
    got = [_quotient(p, s / 2.0**j) for j in range(3)]
    if got[0] is None or got[1] is None:
        return None
    start = _Start(got[0][2], s)
    for r in rows:
        table = [_Row(p, r, *g) for g in got if g is not None and g[2] <= p.reach[r]]
        if len(table) < 2:
            continue  # an op of this value turns within the start's steps
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
                    start.used[r], start.from_[r] = i, i - j
            prev = cur
        # A smooth start's gap shrinks with the step, and its differences change as s**2
        # does (by _LAW / 4 of the last change at most), or Ridders' error means nothing.
        a, b, c = table if len(table) == 3 else (table[0],) * 3
        law = abs(b.d - c.d) <= _LAW / 4.0 * abs(a.d - b.d) + a.r + 2.0 * b.r + c.r
        if best is not None and kinks.shrinks(table) and law and math.isfinite(best.error):
            start.best[r] = best
        start.rows[r] = table
    return start


def _noise_floor(p: Point, r: int, wide: float = 0.0) -> float:
    """The noise of value ``r`` as the function's own evaluations show it (section 5 of
    ``docs/contributing.md`` derives each part).

    Fourth differences over 7 points on each side of ``x`` (never ``x`` itself: a kink or a
    jump there shows nothing), where they are round-off alone: ``|fourth| <= 16 max|noise|``,
    the largest of three over two; the sixth where the fourth is the shape (_SHAPE). Spacings:
    2 ulps of ``x``, a thousandth of the step and every ``_BETWEEN`` decades between, the
    finest where the values move; for a hidden forward's stairs also 7 and 23 ulps, the golden
    part (_ALIAS) and a seventh of the steps taken (``wide``), a coarse read counting with a
    riser (:func:`.riser`, then at any size) or a rounding's sawtooth. 0 where nothing moves."""
    scale, most = min(p.h, abs(p.x)) if p.x != 0.0 else p.h, 0.0
    q = math.ulp(p.x)  # whole ulps of x: no jitter of the points x + k * sigma
    fine, coarse = 2.0 * q, max(16.0 * q, round(1e-3 * scale / q) * q if p.x else 1e-3 * scale)
    near = _ALIAS[1] * q  # fourths whole up to it (white rounding reads within 2; hard.py)
    between = [coarse * 10.0 ** (-_BETWEEN * k) for k in range(_SPAN // _BETWEEN, 0, -1)]
    spacings = {fine, *(s for s in between if s > fine), coarse}
    wider: set[float] = set()
    if p.hidden[r] and p.x:  # stairs inside (see _ALIAS, and above)
        spacings |= {_ALIAS[0] * q, _ALIAS[1] * q, round(_ALIAS[2] * coarse / q) * q}
        tops = (min(w, abs(p.x)) / 7.0 for w in (p.h, p.h / 10.0, wide, wide / _ALIAS[2]) if w)
        wider = {max(q, round(t / q) * q) for t in tops} - spacings
    for sigma in sorted(spacings | wider):
        if 7.0 * sigma > p.reach[r] / _WITHIN and sigma > fine:
            break  # an op turns within the points: its shape, not noise (see _WITHIN)
        if most > 0.0 and not (p.hidden[r] and p.x):
            break  # the finer spacing where the values move: the least structure
        # Coarser: a hidden forward's grid (log(1 + x * x) at 0.004), beyond its round-off.
        coarser, seen, slope = most > 0.0, 0.0, 0.0
        fourths, sixths, smooth = list[float](), list[float](), list[bool]()
        for side in (1.0, -1.0):
            got = [p.at(p.x + side * k * sigma) for k in range(1, 8)]
            vals = [v[r] for v in got if v is not None]
            if len(vals) < len(got) or len(set(vals)) == 1:
                continue
            a, b, c, d, e, f, g = vals
            slope = max(slope, abs(g - a) / (6.0 * sigma))  # the mean slope over the points
            if kinks.one_bend(vals):
                continue  # a kink between the points (abs(x - 1) at 1 + 2e-9) is no noise
            three = [a - 4 * b + 6 * c - 4 * d + e, b - 4 * c + 6 * d - 4 * e + f]
            three.append(c - 4.0 * d + 6.0 * e - 4.0 * f + g)
            # Fourths are noise where their signs differ (shape's keep theirs), or where a
            # stair's (2**20 ulps) is beside an ulp (log(cosh(x)) in a rule at 2.7e-6).
            ulp, low, top = math.ulp(max(map(abs, vals))), *sorted(map(abs, three))[::2]
            jumpy = min(three) < 0.0 < max(three) or (low <= 4.0 * ulp and top > 2.0**20 * ulp)
            seen = max(seen, *map(abs, vals)) if jumpy else math.inf
            fourths.append(max(map(abs, three)))
            smooth.append(not jumpy)
            sixths.append(abs(a + g - 6.0 * (b + f) + 15.0 * (c + e) - 20.0 * d))
        # Noise grows with the order of a difference (the sixth's weights are 4 times the fourth's);
        # shape falls with it, by the spacing over the distance to a pole or bend per order. A side
        # whose fourths keep their sign and are _SHAPE times its sixth shows shape: both sides'
        # sixths are read. A sixth of 0 is values on a grid (sin at 1e8); fourths of both signs are
        # noise (stairs 0.6 of a cell apart repeat every 5 points: log(1 + x) at 6e-5).
        shape = any(
            ok and 0.0 < _SHAPE * x < y for x, y, ok in zip(sixths, fourths, smooth, strict=True)
        )
        read = max(sixths if shape else fourths) / 2.0 if fourths else 0.0
        risen = False  # a riser found among the points: stairs, whatever their size
        if sigma in wider or (read > 16.0 * most and coarser and sigma > near):  # (x, hidden)
            far = read > 16.0 * most and kinks.riser(p.at, r, p.x + sigma, p.x + 7.0 * sigma)
            saw = sigma not in wider and read <= 16.0 * slope * q
            risen = bool(far) and far >= read / 16.0
            read = read if risen or saw else 0.0
        whole = seen < math.inf and sigma <= near and read > 2.0 * most  # (see near)
        if not coarser or read > MODEL_ROUNDOFF * seen or whole or risen:
            most = max(most, read)
    return most


def _starts(p: Point) -> tuple[list[float], list[float], list[float]]:
    """The scales above the nominal one (ascending), at and below it (descending),
    and those of ``|x|`` itself where it is below the nominal step."""
    h, x = p.h, p.x
    finest = min_step(x)
    up = [2.0 * h * 10.0**k for k in range(1, _UP + 1)]
    # Then scales of |x| up to a tenth of it (log at 1e16 resolves 12 digits at 1e13).
    up += [s for s in (abs(x) * 10.0**-j for j in (12, 9, 6, 3, 2, 1)) if s > up[-1]]
    down = [s for s in (2.0 * h * 10.0**-k for k in range(_DOWN + 1)) if s >= finest]
    if down and down[-1] > finest and len(down) <= _DOWN:
        down.append(finest)  # the finest differences float64 has at x, if no decade hit them
    below: list[float] = []
    if 0.0 < abs(x) < h:
        # A step beyond |x| straddles 0, where many functions have a pole, a cusp or an edge: the
        # scales of x itself come next, however far below the nominal step they are.
        below = [s for s in (abs(x) * 2.0**-j for j in (1, 4, 8)) if s >= finest]
    return up, down, below


#: The widening tableau's start, in nominal steps: round-off a thousandth of the pair's, and
#: truncation after two columns (``s**6``) 1e-18 of the seventh derivative at ``h = 1e-6``.
_WIDE = 1e3


def widen(
    p: Point, found: dict[int, Estimate | Unresolved], rows: Sequence[int], times: float = 1.0
) -> dict[int, Estimate]:
    """One tableau at a thousand nominal steps (``times`` that), for rows whose pair settled
    with a bound of round-off at ``h``; per row the tighter estimate, where it is local.

    Its estimate (the last column of :func:`_tableau`'s, Ridders' error plus round-off)
    counts only where the tableau passes the smooth screen and the pair's two differences
    agree with it as :func:`_local` holds every finer difference (a bend, kink or pole
    between the two scales fails it), and only where its bound is the tighter. The pair's
    fourth difference raises the graph's noise for these rows alone: it may be shape
    (1 - cos(x) at 1.6e-12 shows x**4 there; held to it, the ladder proved 80x less).
    """
    mine = [r for r in rows if r in p.paired and getattr(found.get(r), "settled", False)]
    far = times * _WIDE * p.h
    mine = [r for r in mine if far <= p.reach[r]]  # within each value's turns
    # The sides alone: a quotient that overflows gives no bound, so never a tighter one.
    got = [p.sides(far / 2.0**j) for j in range(3)] if mine else []
    if not mine or any(g is None for g in got):
        return {}
    if p.noise is None:
        p.noise = [MODEL_ROUNDOFF * abs(v) for v in p.here]
    better: dict[int, Estimate] = {}
    for r in mine:
        coarse, fine, measured = p.paired[r]
        known, p.noise[r] = p.noise[r], max(p.noise[r], measured)
        t0, t1, t2 = (_Row(p, r, *g) for g in got if g is not None)
        p.noise[r] = known
        f1, f2, f12 = ((a.half / b.half) ** 2 - 1.0 for a, b in ((t0, t1), (t0, t2), (t1, t2)))
        v01, v12 = t1.d + (t1.d - t0.d) / f1, t2.d + (t2.d - t1.d) / f12
        r01, r12 = ((f1 + 1.0) * t1.r + t0.r) / f1, ((f12 + 1.0) * t2.r + t1.r) / f12
        v = v12 + (v12 - v01) / f2
        rr = ((f2 + 1.0) * r12 + r01) / f2
        error = max(abs(v - v12), abs(v - v01)) + rr
        smooth = kinks.shrinks((t0, t1, t2))
        law = _LAW * max(abs(t0.d - v), abs(t1.d - v) * (f1 + 1.0), abs(t2.d - v) * (f2 + 1.0))
        local = abs(coarse.d - v) <= error + coarse.r + law * (coarse.half / t0.half) ** 2
        local = local and abs(fine.d - v) <= error + fine.r + law * (fine.half / t0.half) ** 2
        if smooth and local and min(f1, f12) > 0.01 and error < found[r].error:
            better[r] = Estimate(v, error, t0.half, rr, True)
    return better


def _rounded(e: Estimate | None) -> bool:
    return e is not None and e.error - e.roundoff <= _ROUNDED * e.roundoff


def ladder(p: Point, rows: Sequence[int]) -> dict[int, Estimate | Unresolved]:
    """Stage 2: the tableau at many scales, the local estimates only: per row an
    :class:`Estimate` (settled) or why there is none."""
    known = p.noise or [MODEL_ROUNDOFF * abs(v) for v in p.here]
    floor = {r: _noise_floor(p, r) for r in rows}
    p.noise = noise = [max(n, floor.get(r, 0.0)) for r, n in enumerate(known)]
    up, down, below = _starts(p)
    starts: list[_Start] = []
    pending = set(rows)
    # Down: until round-off has taken over (a start whose best error is mostly round-off)
    # and one more; a hidden forward's every decade (a bump 3e-9 wide); below |x| always.
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
        rounded.update({r: rounded[r] + 1 for r in pending if _rounded(start.best.get(r))})
        pending -= {r for r in pending if rounded[r] >= 2 and not p.hidden[r]}
        if not pending:
            break
    # And the finest differences float64 has at x: a candidate must hold against
    # them too (t - sin(t) at 3e15, whose period is a dozen ulps).
    if down and all(st.requested != down[-1] for st in starts):
        starts.extend(st for st in [_tableau(p, down[-1], rows)] if st is not None)
    # Up: while the best local bound is mostly round-off, a larger step may do better.
    for r in rows:
        for s in up:
            best = _local(starts, r)
            if best is not None and (best.error <= TARGET * abs(best.value) or not _rounded(best)):
                break  # good enough, or truncation dominates: larger steps only add to it
            start = _tableau(p, s, [r])
            if start is None or r not in start.rows:
                break  # off the domain, or beyond an op of this value that turns
            starts.insert(0, start)
    # Values whose noise between neighbouring floats is a sizeable part of their size at
    # every step (sin at 1e20) show no derivative, however smooth larger steps look.
    sizes, scale = p.sizes(), max(abs(p.x), 1.0)
    noisy = {r for r in rows if floor.get(r, 0.0) > _NOISY * sizes[r] * scale}
    found: dict[int, Estimate | Unresolved] = {}
    # Made again with every value in: a still row weighed with the grid all showed (cached).
    remade = (_tableau(p, st.requested, list(st.rows)) for st in starts)
    starts = sorted((st for st in remade if st is not None), key=lambda st: -st.step)
    for r in rows:
        mine = [st for st in starts if r in st.rows]
        if failed_below and p.overflowed:
            found[r] = kinks.edge(p)  # the steps below |x| overflow: beyond float64's range
            continue
        if mine and p.x != 0.0 and min(st.step for st in mine) >= 0.25 * abs(p.x):
            # No step below |x| fits in float64 (cbrt at 5e-324): every step spans
            # 0, where the function may bend, have a pole or a cusp.
            found[r] = Unresolved(
                Why.RANGE,
                f"no step smaller than the point itself ({p.x:.3g}) fits in float64, "
                "and every larger one spans 0",
            )
            continue
        if r in noisy:
            found[r] = Unresolved(
                Why.NOISE,
                f"the values change by {floor[r]:.3g} between points near x, a "
                "sizeable part of their own size: float64 shows no derivative here",
            )
            continue
        best = _still(p, r, mine, _local(mine, r)) if p.hidden[r] else _local(mine, r)
        for _ in range(3 if p.hidden[r] and p.x and mine else 0):  # at its steps' scale
            wide = max(best.step if best else 0.0, min(max(st.step for st in mine), p.near))
            more = _noise_floor(p, r, wide) if wide > p.h else 0.0
            if more <= noise[r]:
                break
            noise[r] = more  # (see _noise_floor), and the starts weighed with it
            mine = [st for st in (_tableau(p, st.requested, [r]) for st in mine) if st]
            best = _local(mine, r)
        odd = kinks.no_derivative(p, r, [st.rows[r] for st in mine])
        if odd is not None:
            found[r] = odd
        elif best is not None:
            found[r] = kinks.open_side(p, r, best, _UP, _DOWN) or best
        elif mine and all(st.rows[r][-1].flat for st in mine) and p.hidden[r]:
            found[r] = Unresolved(
                Why.RANGE,
                "the values do not change at any step taken, and a hidden forward computes them"
                " with no grid to read: how small a slope they round away cannot be told",
            )
        elif mine and all(st.rows[r][-1].flat for st in mine):
            # No step changed the value at all: the slope is below what the largest step resolves.
            top = mine[0]
            bound = max(p.delta(r, p.here[r]) / top.step, 2.0**-1074)
            found[r] = Estimate(0.0, bound, top.step, bound, True)
        elif p.overflowed:
            found[r] = kinks.edge(p)
        elif not mine and p.reach[r] < 2.0 * min_step(p.x):
            found[r] = Unresolved(
                Why.NOISE,
                f"an op turns or bends (by a radian, or a unit of its argument) over the finest "
                f"step float64 has here ({min_step(p.x):.3g}): no difference sees its slope",
            )
        elif mine:
            found[r] = Unresolved(
                Why.NOISE,
                "no step shows a derivative: at every step that fits in float64 here the "
                "differences change with the step (the values are noise at this scale, or "
                "the function turns faster than the finest step)",
            )
        else:
            found[r] = kinks.one_sided(p, r, _UP, _DOWN) or kinks.edge(p)
    return found


#: Still values are followed out to 4**_FAR times the last still step; the edge where they
#: move is bisected _BISECT times, then while the change there falls (a kink), to _MOST:
#: 64 halvings narrow any span of floats below an ulp of its ends (the constants table).
_FAR, _BISECT, _MOST = 8, 12, 64


def _still(p: Point, r: int, mine: Sequence[_Start], best: Estimate | None) -> Estimate | None:
    """``best``, or where tighter, what a hidden forward still at every step up to ``T`` proves:
    on a grid ``g``, still at ``T`` and ``T / 2`` means ``|s| <= 1.5 g / T`` (the cubic term
    eliminated), ``g`` at most the least change seen (a whole cell), or twice the values'
    round-off where that is more. The steps go out until the values move and the edge is
    bisected: past a kink (relu's flat side) the change falls with the step, on a grid never
    below a cell. Beyond a bend (``p.reach``) a still step only finds that change. Never
    moving, no grid shows: the model's round-off (a constant forward), ``4**k`` times where an
    edge cut ``k`` rounds of the walk; none for a 0 not of terms the graph shows cancel."""
    rows = sorted((row for st in mine for row in st.rows[r]), key=lambda row: row.half)
    flat = [row.half for row in itertools.takewhile(lambda row: row.flat, rows)]
    if len(flat) < 2 or flat[0] > flat[-1] / 2.0:
        return best
    still, moved = flat[-1], rows[len(flat)].half if len(flat) < len(rows) else math.inf
    saved, unseen = (p.off, p.overflowed), 1.0
    try:
        for k in range(_FAR if moved == math.inf else 0):
            lo, hi = p.at(p.x - 4.0 * still), p.at(p.x + 4.0 * still)
            if lo is None or hi is None:  # a domain's edge, or an overflow, cut the walk
                unseen = 4.0 ** (_FAR - k)  # short: a grid that much coarser goes unseen
                break
            if lo[r] != p.here[r] or hi[r] != p.here[r]:
                moved = 4.0 * still
                break
            still *= 4.0
        reach = 1.5 * p.least[r] / min(still, p.reach[r]) / 2**_BISECT
        if moved < math.inf and best is not None and best.error <= reach:
            return best  # no bisection can make a tighter bound
        ramp, enough = math.inf, TARGET * p.sizes()[r]  # (the change where they move)
        for k in range(_MOST if moved < math.inf else 0):
            t = (still + moved) / 2.0
            if k >= _BISECT and (1.5 * p.least[r] / min(still, p.reach[r]) <= enough or t == still):
                break  # past _BISECT, only while the bound can tighten to TARGET
            lo, hi = p.at(p.x - t), p.at(p.x + t)
            if lo is None or hi is None:
                break
            if lo[r] == p.here[r] == hi[r]:
                still = t
                continue
            moved, change = t, max(abs(lo[r] - p.here[r]), abs(hi[r] - p.here[r]))
            if k >= _BISECT and change > 0.75 * ramp:
                break  # a cell: past a kink each change is 1/2 the last at most, on a grid 1
            ramp = change
    finally:
        p.off, p.overflowed = saved
    if moved == math.inf and p.here[r] == 0.0 and not p.cancelled[r]:
        return best  # a 0 never moving shows no grid but its graph's terms' (Point.cancelled)
    # A value may be off by its round-off too, where the graph reads more than a
    # cell: a rule in float32 beside 1e-9 x stands still on its grid while x moves
    # the value by an ulp, the least change seen.
    delta = p.delta(r, p.here[r])
    grid = max(p.least[r], 2.0 * delta) if moved < math.inf else delta * unseen
    bound, at = max(1.5 * grid / min(still, p.reach[r]), 2.0**-1074), min(still, p.reach[r])
    return (
        best if best is not None and best.error <= bound else Estimate(0.0, bound, at, bound, True)
    )


#: The noise floor's points lie within this part of the value's reach (turn, pole, branch
#: point): a Taylor series falls 8 times per order there (the constants table measures it).
_WITHIN = 8.0
#: How much larger than a side's sixth difference its fourth must be to be read as shape
#: (noise makes the sixth the larger); measured in the constants table.
_SHAPE = 10.0
#: The noise floor's spacings between 2 ulps of x and a thousandth of the step, in decades
#: (a power of the spacing falls by 10**(30 p) between two, noise not at all; 300: subnormals).
_BETWEEN, _SPAN = 30, 300
#: Spacings for a hidden forward's stairs, which a near-whole number of treads apart show no
#: noise (2 ulps alone miss 17% of drifts, with 7 and 23 0.7%: the constants table).
_ALIAS = (7.0, 23.0, (1.0 + math.sqrt(5.0)) / 2.0)
#: Noise above this part of the values' size is all they show (a tenth of their change per float).
_NOISY = 1e-3
#: How much a smaller step's truncation may exceed the h**2 law from a larger one (h**4 terms).
_LAW = 4.0


def _afar(rows: Sequence[_Row]) -> tuple[float, float] | None:
    """``(A, B)`` where a start's differences follow ``D(s) = A + B / s`` (:func:`.kinks.afar`, by 8
    round-offs): steps all across a kink (``A`` its slopes' mean) or a jump, as finer ones may."""
    a, b, c = rows if len(rows) == 3 else (rows[0],) * 3  # (fewer than 3 rows: no change)
    if abs(b.d - a.d) <= 8.0 * (a.r + b.r) or not kinks.afar(a.d, b.d, c.d, 8.0 * (b.r + c.r)):
        return None
    slope = (b.d - a.d) / (1.0 / b.half - 1.0 / a.half)
    return a.d - slope / a.half, slope


def _local(starts: Sequence[_Start], r: int) -> Estimate | None:
    """The tightest estimate that every smaller step's difference agrees with.

    An estimate ``v`` from a start at step ``S`` claims the function is smooth at that
    scale: its finest difference implies a truncation ``c * s**2`` (``|D(s) - v| /
    s**2``, the nearest scale's: section 3 of ``docs/contributing.md``), and every
    ``D(s)`` at a smaller step must then lie within ``v``'s bound, its own round-off and
    that law (times :data:`_LAW`) of ``v``. A straight line seen by large steps across a
    bend the small steps resolve fails this, however noisy the small steps are."""
    ordered = sorted((st for st in starts if r in st.rows), key=lambda st: -st.step)
    best: Estimate | None = None
    afar: tuple[float, float] | None = None  # the finest coarser start's 1 / s law
    for j, st in enumerate(ordered):
        e = st.best.get(r)
        if j:
            afar = _afar(ordered[j - 1].rows[r]) or afar
        if e is None or (best is not None and e.error >= best.error):
            continue
        if afar is not None and any(
            e.error + row.r < abs(row.d - e.value) > 4.0 * abs(row.d - afar[0] - afar[1] / row.half)
            for row in st.rows[r][st.from_[r] : st.used[r] + 1]
        ):
            continue  # a difference it is made of is the coarser steps' kink, not its slope
        # The law from the finest difference the estimate is made of; every finer one is held.
        rows, used = st.rows[r], st.used[r]
        top = rows[0].half
        law = abs(rows[used].d - e.value) * (top / rows[used].half) ** 2
        finer = [*rows[used + 1 :], *(row for later in ordered[j + 1 :] for row in later.rows[r])]
        if all(
            abs(row.d - e.value) <= e.error + row.r + _LAW * law * (row.half / top) ** 2
            for row in finer
        ):
            best = e
    return (
        None if best is None else Estimate(best.value, best.error, best.step, best.roundoff, True)
    )
