"""Where the point has no two-sided derivative: a kink, a jump, an edge.

:func:`no_derivative` reads the one-sided slopes of the ladder's starts (:mod:`.ladder`) for a
kink (their gap does not shrink with the step) or a jump (the change to a side does not);
:func:`one_sided` estimates from the side that fits where no central step does (:func:`open_side`:
beside one, at a declared edge); :func:`edge` says why there is none; :func:`riser` and
:func:`one_bend` find a jump and a kink among the noise floor's points.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import pairwise

from minigrad.checking.numeric.estimate import Estimate, Point, Unresolved, Why, _Row, min_step

__all__ = ["edge", "no_derivative", "one_bend", "one_sided", "open_side", "riser", "shrinks"]


def no_derivative(p: Point, r: int, starts: Sequence[Sequence[_Row]]) -> Unresolved | None:
    """A jump or a kink at the point, from the differences of the ladder's starts (coarsest first,
    each its steps ``s``, ``s/2``, ``s/4``): a jump, when the change from the point to a side does
    not shrink with the step; a kink, when the gap of the one-sided slopes does not (a smooth
    function's shrinks with the step), at two starts 8 apart, and every finer step sees it."""
    if not starts:
        return None
    finest = [rows[-1] for rows in starts]
    fine = finest[-1]
    coarser = [row for row in finest if row.half >= 8.0 * fine.half]
    if not coarser:
        return None
    coarse = coarser[-1]
    if fine.jumpy > 0.5 * coarse.jumpy and fine.jumpy > 16.0 * p.delta(r, p.here[r]):
        jumps = f"jumps here (by about {fine.jumpy:.6g} even at a step of {fine.half:.3g})"
        return Unresolved(Why.JUMP, f"{jumps}, so no derivative exists", step=fine.half)
    # The kink's evidence: the finest start that resolves a gap its own steps do not
    # shrink; else the finest whose gap at a step of 0 is resolved (curvature hides it).
    finer = finest[::-1]  # finest first
    unshrunk = [rows[-1] for rows in starts[::-1] if not shrinks(rows)]
    kink = next((row for row in unshrunk if _resolved(row.gap, row.gap_noise)), None)
    zero = next((rows[-1] for rows in starts[::-1] if _resolved(*_at_zero(rows))), None)
    tried = [(row, by) for row, by in ((kink, False), (zero, True)) if row is not None]
    found = (_kink(starts, row, by) for row, by in tried or [(fine, False)])
    shown = next((row for row in found if row is not None), None)
    if shown is None:
        return None  # no gap, one that shrinks (smooth), or one that grows (noise)
    fine = shown
    coarser = [row for row in finest if row.half >= 8.0 * fine.half]
    coarse = coarser[-1] if coarser else fine
    if p.x != 0.0 and fine.half >= 0.25 * abs(p.x):
        # No step below |x| fits in float64: a "kink" may be the shape at the scale of x.
        return Unresolved(
            Why.RANGE,
            f"no step smaller than the point itself ({p.x:.3g}) fits in float64, and the "
            f"larger ones see one-sided slopes {fine.left:.9g} and {fine.right:.9g}",
        )

    # A slope's bound: its round-off and how far it still moves to the next start that sees
    # the kink (its gap within the kink test's factor 2), from the start where that is least.
    def bound(a: _Row, b: _Row) -> float:
        return a.gap_noise + max(abs(a.left - b.left), abs(a.right - b.right))

    seen = [row for row in finer if row.half >= fine.half and abs(row.gap) > 0.5 * abs(fine.gap)]
    best, error = min(
        ((a, bound(a, b)) for a, b in pairwise(seen)),
        key=lambda pair: pair[1],
        default=(fine, bound(fine, coarse)),
    )
    left, right, step = best.left, best.right, best.half
    # Each side is smooth up to the kink, so its slope's error is a series in the step:
    # Richardson over a start's three steps takes out the first two terms (a kink plus x**2
    # curves its slopes by the step itself), where its slopes hold the kink the steps read
    # (their gap within both errors, the reading's twice: each slope is off by its bound): a
    # start across a second kink extrapolates that one's curve (relu(x*x - c) at sqrt(c)).
    gap, first = right - left, error
    for rows in starts:
        sees = all(abs(row.gap) > 0.5 * abs(fine.gap) for row in rows)
        if len(rows) == 3 and rows[-1].half >= fine.half and sees:
            (lv, le), (rv, re) = _extrapolated(rows, True), _extrapolated(rows, False)
            if max(le, re) < error and abs(rv - lv - gap) <= le + re + 2.0 * first:
                left, right, error, step = lv, rv, max(le, re), rows[-1].half
    # Local: finer steps see slopes between these (a kink beside x gives any) or outside by
    # no more than their own step does (curvature's share shrinks), within their bound and
    # round-off; else x is smooth at that scale. A side that stood still shows no slope.
    lo, hi = min(left, right), max(left, right)
    below = [row for rows in starts for row in rows if row.half <= step]
    sides = [(row.left, row.right) for row in below]
    off = [max((max(lo - d, d - hi, 0.0) for d in both if d != 0.0), default=0.0) for both in sides]
    near = max((o for o, row in zip(off, below, strict=True) if row.half == step), default=0.0)
    if any(o > near + error + row.gap_noise for o, row in zip(off, below, strict=True)):
        return None
    words = f"a kink: left slope {left:.9g}, right slope {right:.9g}"
    return Unresolved(Why.KINK, words, left=left, right=right, error=error, step=step)


def _kink(starts: Sequence[Sequence[_Row]], fine: _Row, by_zero: bool) -> _Row | None:
    """``fine`` where it shows a kink: its gap (or its gap at a step of 0) is resolved and stays
    within a factor 2 at a start 8 times coarser (or, with none, over its own steps), and no
    finer start sees a smooth function (one with 8 round-offs below the gap would have resolved
    half of it). The gap at a step of 0 is a kink's at every start whose steps straddle it, so
    no other start may resolve a smaller one (section 4 of ``docs/contributing.md``)."""
    rows_of = {id(rows[-1]): rows for rows in starts}
    finer = [rows for rows in starts if rows[-1].half < fine.half]
    if by_zero:
        c = abs(_at_zero(rows_of[id(fine)])[0])
        others = [_at_zero(rows) for rows in starts if rows[-1] is not fine]
        if any(8.0 * n < c and abs(z) < 0.5 * c for z, n in others):
            return None
        # Nor may a finer step resolve a gap under half of it: each straddles x, and a
        # kink there shows in every gap (a relu rule at 1e14 - 1 stands still, exactly,
        # over every step up to 1: no kink at x, one 64 ulps away).
        if any(8.0 * rows[-1].gap_noise < c and abs(rows[-1].gap) < 0.5 * c for rows in finer):
            return None
    elif any(8.0 * rows[-1].gap_noise < abs(fine.gap) for rows in finer):
        return None
    coarser = [rows[-1] for rows in starts if rows[-1].half >= 8.0 * fine.half]
    coarse = coarser[-1] if coarser else fine
    # No start 8 times coarser: the gap must stay over the start's own steps (curvature's shrinks).
    alone = coarse is fine and shrinks(rows_of[id(fine)])
    # A start whose gaps shrink is held by its gap at a step of 0 (a smooth one's may pass 0).
    raw = not (alone or by_zero) and _stays(fine.gap, fine.gap_noise, coarse.gap, coarse.gap_noise)
    at_zero = coarse is not fine and _stays(
        *_at_zero(rows_of[id(fine)]), *_at_zero(rows_of[id(coarse)])
    )
    return fine if raw or at_zero else None


def _resolved(gap: float, noise: float) -> bool:
    return abs(gap) > 4.0 * noise


def _stays(fine: float, fine_noise: float, coarse: float, coarse_noise: float) -> bool:
    """Whether a gap is resolved at two starts (above 4 of its round-offs) and stays
    within a factor 2 between them, of one sign (compared: a product of 1e-200s is 0)."""
    if not (_resolved(fine, fine_noise) and _resolved(coarse, coarse_noise)):
        return False
    return (fine > 0.0) == (coarse > 0.0) and 0.5 * abs(coarse) < abs(fine) <= 2.0 * abs(coarse)


def _at_zero(rows: Sequence[_Row]) -> tuple[float, float]:
    """A start's gap at a step of 0, and its round-off. A smooth function's gap is odd in the step
    (``f'' s``, then ``s**3``, ``s**5``); a kink's is its constant, which curvature hides in the
    gap itself (``relu(x) + 1e9 x**2``: ``1 + 2e9 s``). Two steps take out ``s`` and leave
    ``s**3``; a start's three take out ``s**3`` too and leave ``s**5``. A kink at a distance
    ``d`` from x gives ``c (1 - 45 d / (7 s))``. The steps' own ratios are used: each is rounded
    to x's grid (``docs/contributing.md``, section 4, has the examples)."""
    if len(rows) < 2:
        return 0.0, 0.0
    z, n = _zero(rows[-2], rows[-1])
    if len(rows) < 3:
        return z, n
    z0, n0 = _zero(rows[-3], rows[-2])
    s0, s1, s2 = (row.half for row in rows[-3:])
    # Each pair leaves the s**3 term times s s' (s + s'): the finer's w times the coarser's.
    w = (s2 / s0) * ((s1 + s2) / (s0 + s1))
    if not 0.0 < w < 0.5:
        return z, n
    return (z - w * z0) / (1.0 - w), (n + w * n0) / (1.0 - w)


def _zero(a: _Row, b: _Row) -> tuple[float, float]:
    """The gap at a step of 0 from the rows at ``s`` and about ``s/2`` (for a gap ``c +
    k s``), and its round-off; the finer's gap where the steps do not differ."""
    s, t = a.half, b.half
    if not s > t:
        return b.gap, b.gap_noise
    return (s * b.gap - t * a.gap) / (s - t), (s * b.gap_noise + t * a.gap_noise) / (s - t)


def _extrapolated(rows: Sequence[_Row], left: bool) -> tuple[float, float]:
    """One side's slope from a start's steps ``s``, ``s/2``, ``s/4`` (:func:`_second`),
    and its error (a slope's round-off is half its gap's)."""
    slopes = [(row.left if left else row.right, row.gap_noise / 2.0) for row in rows]
    return _second(slopes)[:2]


def _second(slopes: Sequence[tuple[float, float]]) -> tuple[float, float, float]:
    """Richardson's second column over one-sided slopes at steps ``s``, ``s/2``,
    ``s/4`` (each with its round-off): ``2 D(s/2) - D(s)`` cancels ``s``, then
    ``(4 C(s/2) - C(s)) / 3`` cancels ``s**2``. The value; its error, the larger
    change from the two entries it was made of plus the round-off it carries; that round-off."""
    (d0, r0), (d1, r1), (d2, r2) = slopes
    c1a, c1b = 2.0 * d1 - d0, 2.0 * d2 - d1
    c2 = (4.0 * c1b - c1a) / 3.0
    rr = (4.0 * (2.0 * r2 + r1) + (2.0 * r1 + r0)) / 3.0
    return c2, max(abs(c2 - c1b), abs(c2 - c1a)) + rr, rr


def shrinks(rows: Sequence[_Row]) -> bool:
    """The smooth screen: whether the one-sided slopes' gap shrinks from the largest
    of these steps to the smallest, as a smooth function's does in proportion
    (noise aside). Steps that straddle a kink, a bend they cannot resolve or a
    pole, or span periods, see averages of slopes, however straight they look."""
    return abs(rows[-1].gap) <= 0.5 * abs(rows[0].gap) + 2.0 * rows[-1].gap_noise


def one_sided(p: Point, r: int, up: int, down: int) -> Estimate | Unresolved | None:
    """Forward differences from each side, Richardson over every power of the step
    (ratio 2), the local estimate; the side whose bound is the tighter (the
    open one, where an edge of the domain is near on the other)."""
    found = [_one_side(p, r, up, down, side) for side in (1.0, -1.0)]
    ests = [f for f in found if isinstance(f, Estimate)]
    return min(ests, key=lambda e: e.error) if ests else next((f for f in found if f), None)


def _one_side(p: Point, r: int, up: int, down: int, side: float) -> Estimate | Unresolved | None:
    ests: list[Estimate] = []
    far = p.reach[r] < p.h * 10.0**-down  # an op turns within every start (a pole 1e-200
    for k in range(up + down + 1):  # from 0): the steps begin at half its reach
        s = p.reach[r] / 2.0 * 10.0**-k if far else p.h * 10.0 ** (up - k)
        if s < min_step(p.x):
            break
        vals = []
        for j in range(3):
            moved = p.x + side * s / 2.0**j
            step = moved - p.x
            if abs(step) > p.reach[r]:
                break
            got = p.at(moved) if step != 0.0 else None
            if got is None:
                break
            c, v = p.here[r], got[r]
            err = max(2.0 * p.delta(r, v, c), p.unseen(r, v == c)) / abs(step)
            vals.append(((v - c) / step, err))
        if len(vals) < 3:
            continue
        value, error, rr = _second(vals)
        ests.append(Estimate(value, error, s, rr, True))
    if not ests:
        return None
    if p.overflowed or (
        len(ests) >= 2 and abs(ests[-1].value - ests[-2].value) > ests[-1].error + ests[-2].error
    ):
        # The finest do not settle: they grow as the step shrinks (sqrt at 0), or overflow.
        return Unresolved(
            Why.RANGE,
            "the one-sided differences do not settle as the step shrinks: the derivative is "
            "infinite here, or beyond the range of float64",
        )
    held = [e for j, e in enumerate(ests) if all(abs(e.value - f.value) <= e.error + f.error
                                                 for f in ests[j + 1 :])]  # fmt: skip
    best = min(held, key=lambda e: e.error, default=None)
    if best is not None and len(ests) >= 3:
        # Estimates moving by a steady fraction per decade (sqrt(s) at an edge: x ** 1.5
        # at 0) are no closer to their limit than the geometric tail of those moves.
        d1 = abs(ests[-2].value - ests[-3].value)
        d2 = abs(ests[-1].value - ests[-2].value)
        if 0.0 < d2 < d1:
            q = d2 / d1
            tail = abs(best.value - ests[-1].value) + d2 * q / (1.0 - q) + best.error
            if tail > best.error:
                best = Estimate(best.value, tail, best.step, best.roundoff, True)
    return best


def edge(p: Point) -> Unresolved:
    """No step on either side gives a finite value: an edge of the domain or of float64."""
    inside = "no step on either side of the point stays in the function's domain"
    over = "the derivative is beyond the range of float64 here (its difference quotients overflow)"
    return Unresolved(Why.RANGE, over) if p.overflowed else Unresolved(Why.EDGE, inside)


def open_side(p: Point, r: int, best: Estimate, up: int, down: int) -> Estimate | None:
    """Where a declared domain's edge cut the central steps short, the open side's
    one-sided estimate, if it is tighter than the central ``best``: ``x * x``
    declared on (0.5, inf), at 0.5 + 1e-12. Only there: the user declared the
    function smooth inside, and a side that goes flat far off (``exp2(x - c) +
    c`` to the left, at 7e14) has nothing to hold its slope to. And only beside
    a central estimate: one-sided differences alone at steps that turn the
    function (``sin(50 x)``) bound their truncation too tightly."""
    side = one_sided(p, r, up, down) if p.fenced and p.off and not p.overflowed else None
    if not isinstance(side, Estimate) or side.error >= best.error:
        return None
    return side if abs(side.value - best.value) <= side.error + best.error else None


def riser(at: Callable[[float], Sequence[float] | None], r: int, a: float, b: float) -> float:
    """The largest jump of value ``r`` between two neighbouring floats in ``(a, b)``, beyond the
    mean slope and 4 times the ulps beside: a stair's riser. Risers of one rounding share a
    sign: the midpoint's departure from the chord, ``(left - right) H / 2`` for ``left`` and
    ``right`` risers a side, points to a half holding one for the right sign (both are tried);
    at an ulp the jump is whole, where smooth structure (a bump, a wiggle of 1e-8) moves by
    its slope times an ulp, and a kink as the ulps beside it."""
    ends, jump = (at(a), at(b)), 0.0
    if ends[0] is None or ends[1] is None:
        return jump
    slope = abs(ends[1][r] - ends[0][r]) / (b - a)
    for sign in (1.0, -1.0):
        (lo, ya), (hi, yb) = (a, ends[0][r]), (b, ends[1][r])
        while lo < (m := lo + (hi - lo) / 2.0) < hi and (got := at(m)) is not None:
            if sign * (got[r] - (ya + yb) / 2.0) > 0.0:
                hi, yb = m, got[r]
            else:
                lo, ya = m, got[r]
        w = hi - lo
        n0, n1 = at(lo - w), at(hi + w)  # the ulps beside: a kink's move by as much
        side = max(abs(ya - n0[r]), abs(n1[r] - yb)) if n0 and n1 else math.inf
        jump = max(jump, abs(yb - ya) - max(slope * w, 4.0 * side))
    return jump


def afar(d0: float, d1: float, d2: float, noise: float) -> bool:
    """Whether differences at ``s``, ``s/2``, ``s/4`` follow the ``1 / s`` law of a kink, jump or
    bend every step crosses: each change twice the last, one sign, within a quarter and noise."""
    near, far = d1 - d2, d0 - d1
    same = near != 0.0 and far != 0.0 and (near > 0.0) == (far > 0.0)
    return same and abs(abs(near) - 2.0 * abs(far)) <= 0.5 * abs(far) + noise


def one_bend(v: Sequence[float]) -> bool:
    """Second differences of one sign at one place or two neighbours, 2**10 ulps of the
    values at least and the rest 2**-10 of them: one kink (round-off and a grid's steps
    change sign or are ulps; a pole's fall by 8 at most per point: 8**3 over five)."""
    d2 = [u - 2.0 * m + w for u, m, w in zip(v, v[1:], v[2:], strict=False)]
    top = max(map(abs, d2))
    big = [k for k, e in enumerate(d2) if abs(e) > top * 2.0**-10]
    bend = 2.0**10 * math.ulp(max(map(abs, v))) < top < math.inf and big[-1] - big[0] <= 1
    return bend and (d2[big[0]] > 0.0) == (d2[big[-1]] > 0.0)  # (both nonzero: big)
