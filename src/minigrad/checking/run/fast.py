"""Fast mode: one random direction per order instead of every entry.

The level's values are weighted at random (``w``) and every input moved
along a random direction ``d`` at once; the estimator
(:mod:`minigrad.checking.numeric.estimate`) estimates the derivative of
``sum_r w_r f_r(x + t d)`` at ``t = 0``, and the analytic side is one pass:
reverse mode's ``G = sum_r w_r grad f_r`` projected on ``d``, or forward
mode's jvp along ``d`` weighted by ``w``. The same decision as every entry
(:func:`~minigrad.checking.verdicts.decide.decide`) judges it.

The direction proves an entry only where it proves as much as the exhaustive
check would: an error ``e`` in entry (r, i) moves the direction's slope by
``|w_r d_i| e``, and the exhaustive check proves ``FAST_DIGITS`` digits of an
entry at a well-conditioned point, or, where round-off rules, as much as output
r's round-off leaves at the ladder's largest start (two million nominal steps,
times the tableau's 6.6), whichever is more; so the directional agreement's
bound must be below ``|w_r d_i|`` times that (the estimate widened as the
exhaustive check's is). The inputs with an entry it does not prove (a slope
1e-4 of the others, an output of 1e-8 beside one of 1e8, whose errors the
weighted sum's round-off would drown) are compared entry by entry after it;
where it proves no input, or may hide a whole row's error, and wherever it
does not agree (a wider bound, a disagreement, a kink, a step off the domain,
a closure op that misbehaves on its own, a weighted sum beyond float64),
every entry is, which says which one and why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from minigrad.checking.numeric.estimate import MODEL_ROUNDOFF, Estimate, Point, Unresolved, pair
from minigrad.checking.numeric.ladder import _UP, TARGET, ladder, widen
from minigrad.checking.numeric.rounding import GraphRoundoff
from minigrad.checking.run.compare import closure_problems, entry_of
from minigrad.checking.run.determinism import deterministic
from minigrad.checking.run.engines import ForeignLevels, keeps
from minigrad.checking.run.levels import (
    DerivativeError,
    Key,
    Levels,
    derivatives,
    forward_directional,
)
from minigrad.checking.run.report import Entry
from minigrad.checking.run.settings import Settings
from minigrad.checking.verdicts.decide import AGREES, Tolerance, decide
from minigrad.core.closure import ClosureOpError
from minigrad.core.value import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from random import Random

__all__ = ["FAST_DIGITS", "Direction", "fast"]

#: The digits of every entry a passing direction must prove: what the exhaustive
#: check proves of an entry at a well-conditioned point (10 or 11; a rule error of
#: 1e-9 is caught there). Measured: at 9, a rule 1e-9 off among 24 inputs passed
#: that the exhaustive check convicted at 2.6 times its bound; at 10, 90% of the
#: entries of such sums are compared one by one after the direction (78% at 9).
FAST_DIGITS = 10
#: The directions drawn, each proving every entry it does not send on: errors in
#: several entries (one rule used at two inputs) may all but cancel along one random
#: direction, with a chance of about the bound over their size (13 in 6,432 checks
#: of a rule 1e-9 to 1e-8 off, used at 2 to 8 inputs), along two at about its square.
_DIRECTIONS = 2
#: The round-off of a tableau's estimate over that of its first difference
#: (values off by ``delta`` at its step): differences at ratios 1, 2, 4 carry 1,
#: 2, 4 of it, Richardson's columns at a step ratio of 2 make (4 * 2 + 1) / 3 = 3
#: and (4 * 4 + 2) / 3 = 6 of them, and the last (16 * 6 + 3) / 15 = 6.6
#: (``widen``'s ``rr``): no tableau's bound is tighter.
_WIDENED = 6.6
#: The ladder's largest start, in nominal steps (``2 h * 10**_UP``): an entry
#: whose round-off rules its bound climbs up to it, so no exhaustive bound is
#: below ``_WIDENED * delta`` over this step.
_TOP = 2.0 * 10.0**_UP


def fast(levels: Levels, k: int, s: Settings, both: bool) -> Direction | None:
    """What the direction proves of level ``k``, else None (every entry is compared)."""
    try:
        return _fast(levels, k, s, both)
    except (ArithmeticError, DerivativeError, ClosureOpError):
        # The weighted sum, its slope, or a pass along the direction beyond float64 (exp at
        # 707 moved by 53 times its tangent): every entry, where the check names a failure
        # (a closure above order 1 too: refused by name once its own level passes).
        return None


def _fsum(terms: Iterable[float]) -> float:
    """``math.fsum``, whose infinities of both signs (``-inf + inf``) are an overflow too."""
    try:
        return math.fsum(terms)
    except ValueError as exc:
        raise OverflowError(f"a weighted sum beyond float64: {exc}") from exc


def _fast(levels: Levels, k: int, s: Settings, both: bool) -> Direction | None:
    import random  # only fast mode needs it; it costs an import

    xs = levels.xs
    rng = random.Random(s.seed * 1_000_003 + k)
    fs, keys = levels.level(k)
    twice = levels.survey(fs, fence=k == 1)
    if k == 1 and not isinstance(levels, ForeignLevels) and closure_problems(fs):
        return None  # each closure op is checked on its own: the exhaustive check names it
    w = s.weights(len(fs))
    # Each input moves by 1 to 2 of its nominal scale, of random sign: no
    # term is small beside the others, and none cancels another by design.
    directions = [
        [rng.choice((-1.0, 1.0)) * rng.uniform(1.0, 2.0) * max(1.0, math.sqrt(abs(x.data)))
         for x in xs]
        for _ in range(_DIRECTIONS)
    ]  # fmt: skip
    total: Value | None = None
    rows: list[list[float]] | None = None  # per output, its gradient (where more than one)
    if isinstance(levels, ForeignLevels):  # the engine's own backward(), on a fresh graph
        rows = levels.jacobian(fs, w)
        g = [_fsum(wr * row[i] for wr, row in zip(w, rows, strict=True)) for i in range(len(xs))]
        again = levels.weighted(fs, w) if twice else g
        # The pass from each input's .grad already there, as compare.py runs it:
        # a step that sets .grad (= for +=) loses it in any order.
        preset = levels.jacobian(levels.outputs(), w, rows)
        if not all(
            keeps(a, b)
            for row, lifted in zip(rows, preset, strict=True)
            for a, b in zip(row, lifted, strict=True)
        ):
            return None  # the exhaustive check names the entry and the two values
    else:
        total = w[0] * fs[0]
        for wf, f in zip(w[1:], fs[1:], strict=True):
            total = total + wf * f
        g = [x.data for x in derivatives(total, xs, False)]
        again = [x.data for x in derivatives(total, xs, False)] if twice else g
        if len(fs) > 1:
            rows = [[x.data for x in derivatives(f, xs, False)] for f in fs]
    if any(abs(a - b) > s.nondet_tol for a, b in zip(g, again, strict=True)):
        return None  # the exhaustive check names the entry and the two values
    if k == 1 or twice:  # as in the exhaustive check (compare.py)
        deterministic(levels, k, [float(f.data) for f in fs], s)
    lifted = [x.data for x in derivatives(total, xs, True)] if both and total is not None else None
    found = [_along(levels, k, s, both, d, w, g, rows, lifted, total, keys) for d in directions]
    if any(f is None for f in found) or (k > 1 and not _symmetric(levels, k, s, rng, keys)):
        return None
    entries = [e for f in found if f is not None for e in f.entries]
    rest = set().union(*(f.rest for f in found if f is not None))
    return Direction(entries, rest) if len(rest) < len(xs) else None


def _along(
    levels: Levels,
    k: int,
    s: Settings,
    both: bool,
    d: list[float],
    w: list[float],
    g: list[float],
    rows: list[list[float]] | None,
    lifted: list[float] | None,
    total: Value | None,
    keys: list[Key],
) -> Direction | None:
    """What direction ``d`` proves of level ``k`` (weights ``w``, weighted gradient ``g``,
    per-output gradients ``rows``, ``lifted`` on Values), else None."""
    xs = levels.xs
    fs = levels.level(k)[0]
    slopes: list[float] = []
    # Floats and Values (create_graph) must compute the same slope, each within
    # its round-off (as compare.py holds every entry), or the user's tolerance.
    slack = 2.0 * (MODEL_ROUNDOFF * _fsum(abs(di * gi) for di, gi in zip(d, g, strict=True)))

    def same(b: float, a: float) -> bool:
        return s.close(b, a) if s.tolerance is not None else b == a or abs(b - a) <= slack

    for mode in s.modes:
        if mode == "fwd":
            tangent = forward_directional(fs, xs, d, False)
            slope = _fsum(wf * t for wf, t in zip(w, tangent, strict=True))
            lifted_t = forward_directional(fs, xs, d, True) if both else tangent
            if not same(_fsum(wf * t for wf, t in zip(w, lifted_t, strict=True)), slope):
                return None
        else:
            slope = _fsum(di * gi for di, gi in zip(d, g, strict=True))
            moved = _fsum(di * gi for di, gi in zip(d, lifted, strict=True)) if lifted else slope
            if not same(moved, slope):
                return None
        slopes.append(slope)
    here = [_fsum(wf * f.data for wf, f in zip(w, fs, strict=True))]

    def along(t: float) -> list[float] | None:
        moved = levels.moved(k, [t * di for di in d])
        if moved is None:
            return None
        return [_fsum(wf * v for wf, v in zip(w, moved, strict=True))]

    noise = None
    if total is not None:
        noise = [GraphRoundoff([total], xs).noise(0)]
    point = Point(along, 0.0, here, s.eps, noise, any(levels.opaque_rows(fs)) or total is None)
    terms = [abs(di * gi) for di, gi in zip(d, g, strict=True) if gi != 0.0]
    # The exhaustive check proves FAST_DIGITS of entry (r, i), or what round-off of
    # output r leaves at the ladder's top, whichever is more; an error that large in
    # entry (r, i) moves the slope by |w_r d_i| times it. One output: its entries
    # are the weighted sum's, over w_0. An entry of 0 has no digits to count: any
    # slope the exhaustive check resolves there convicts it (a forgotten partial),
    # so only the round-off counts, but where the level is the graph itself (it was
    # built reading no value) and has no path from x_i to output r.
    delta = noise[0] if noise is not None else MODEL_ROUNDOFF * abs(here[0])
    graph = GraphRoundoff(fs, xs) if total is not None else None
    if rows is None:
        rows, deltas = [[gi / w[0] for gi in g]], [delta / abs(w[0])]
    elif graph is None:
        deltas = [MODEL_ROUNDOFF * abs(f.data) for f in fs]
    else:
        deltas = [graph.noise(r) or MODEL_ROUNDOFF * abs(f.data) for r, f in enumerate(fs)]
    cut = graph is None or levels.tapes.get(k) is None  # a graph short of the function
    # Per input, the least its entries and its column demand; and the rows' least.
    need = [math.inf] * len(xs)
    # A rule's error is often one relative error e of a whole row (a wrong rule at
    # the output) or column (at an input): it moves the slope by e times that
    # row's or column's part of it, which the direction may all but annul. The
    # exhaustive check sees e where it exceeds an entry's proven share: so that
    # share of each part is demanded too.
    rel = [[math.inf] * len(rows), [math.inf] * len(xs)]
    for r, (wr, row, dr) in enumerate(zip(w, rows, deltas, strict=True)):
        for i, (x, di) in enumerate(zip(xs, d, strict=True)):
            if row[i] == 0.0 and not cut and graph is not None and graph.spread(r, i) < 0.0:
                continue
            floor = _WIDENED * dr / (_TOP * s.step(x.data))
            proven = max(10.0**-FAST_DIGITS * abs(row[i]), floor)
            need[i] = min(need[i], abs(wr * di) * proven)
            if row[i] != 0.0:
                share = proven / abs(row[i])
                rel[0][r], rel[1][i] = min(rel[0][r], share), min(rel[1][i], share)
    need_row = math.inf
    for r, (wr, row) in enumerate(zip(w, rows, strict=True)):
        part = _fsum(di * ji for di, ji in zip(d, row, strict=True))
        need_row = min(need_row, abs(wr * part) * rel[0][r])
    for i, di in enumerate(d):
        part = _fsum(wr * row[i] for wr, row in zip(w, rows, strict=True))
        need[i] = min(need[i], abs(di * part) * rel[1][i])
    margin = min(need_row, *need) if need else need_row
    # The analytic slope's round-off, and the least bound an estimate of it can
    # have: its round-off at the ladder's top, or TARGET of the slope, where the
    # ladder stops climbing. A row's demand beneath them sends every entry on at once.
    roundoff = MODEL_ROUNDOFF * _fsum(terms) + 2.0**-1074
    roundoff += s.nondet_tol * _fsum(map(abs, d))  # passes may differ by that much
    least = max(_WIDENED * delta / (_TOP * s.eps), TARGET * min(map(abs, slopes)))
    if need_row < least + roundoff or all(n < least + roundoff for n in need):
        return None
    paired: dict[int, Estimate | Unresolved] = dict(pair(point, [0]))
    est = paired.get(0)
    if isinstance(est, Estimate) and est.settled:
        est = widen(point, paired, [0]).get(0, est)  # as the exhaustive check widens
    if not isinstance(est, Estimate) or not est.settled:
        est = ladder(point, [0])[0]  # as for an entry the pair does not settle
    elif not est.error <= margin:
        # The ladder climbs past the widening's scale while round-off rules: at F
        # times its step, round-off r falls to r / F and the truncation t left
        # after two columns grows to t F**6, so no climb gets below their least
        # sum, (7 / 6) r / F at F = (r / 6t)**(1/7). Short of the margin: the
        # widened estimate, and the inputs it does not prove entry by entry.
        rr, t = est.roundoff, max(est.error - est.roundoff, 0.0)
        climb = (rr / (6.0 * t)) ** (1.0 / 7.0) if t > 0.0 else math.inf
        reach = est.error if climb <= 1.0 else 7.0 / 6.0 * rr / climb
        if reach <= margin:
            est = ladder(point, [0])[0]
    tolerance = s.tolerance
    classic = None  # PyTorch's form: the difference at eps along the unit direction
    if tolerance is not None and s.exact_step:
        got = s.exact(point, s.eps / (math.sqrt(_fsum(x * x for x in d)) or 1.0))
        if got is None:
            return None
        classic = got[0]
    entries = []
    bound = 0.0
    for mode, slope in zip(s.modes, slopes, strict=True):
        found = decide(slope, roundoff, est, None)
        if found.verdict != AGREES:
            return None
        if tolerance is not None and not _tolerated(
            slope, found.numerical if classic is None else classic, d, tolerance
        ):
            return None
        bound = max(bound, found.error + roundoff)
        key = keys[0] if len(keys) == 1 else (-1, ())
        entries.append(entry_of(k, key, -1, mode, slope, found, s))
    rest = {i for i, n in enumerate(need) if not bound <= n}
    if not bound <= need_row:
        return None  # a whole row's error may hide in the bound
    return Direction(entries, rest)


def _symmetric(levels: Levels, k: int, s: Settings, rng: Random, keys: list[Key]) -> bool:
    """Whether level ``k``'s slopes are one number in two orders of differentiation, as
    the exhaustive check's mixed entries are compared (runner's ``_schwarz``): with the
    level's values ``d^(k-1) f / dx_a ...`` weighed by ``u_a`` (times ``v`` at the
    further indices, per output at random) and moved along ``v``, and with ``u`` and
    ``v`` swapped. A direction agrees with a rule right at the point alone (swish's
    slope by ``x`` with ``b`` left out, at ``b = 1``) as each entry does; its two orders
    differ. Where they differ beyond both bounds, or one has no bound, every entry is
    compared, and the mixed entries are then held to each other."""
    scale = [max(1.0, math.sqrt(abs(x.data))) for x in levels.xs]
    u, v = ([rng.choice((-1.0, 1.0)) * rng.uniform(1.0, 2.0) * c for c in scale] for _ in "uv")
    c = {o: rng.choice((-1.0, 1.0)) * rng.uniform(1.0, 2.0) for o, _ in keys}
    found = []
    for first, d in ((u, v), (v, u)):
        w = [c[o] * first[path[0]] * math.prod(v[a] for a in path[1:]) for o, path in keys]
        est = _estimate(levels, k, s, w, d)
        if not isinstance(est, Estimate) or not est.settled:
            return False
        found.append(est)
    a, b = found
    return abs(a.value - b.value) <= a.error + b.error


def _estimate(
    levels: Levels, k: int, s: Settings, w: list[float], d: list[float]
) -> Estimate | Unresolved | None:
    """The slope of level ``k``'s values weighed by ``w`` along ``d``, as the
    direction's is estimated (the pair, widened, else the ladder)."""
    fs = levels.level(k)[0]

    def along(t: float) -> list[float] | None:
        moved = levels.moved(k, [t * di for di in d])
        return None if moved is None else [_fsum(a * b for a, b in zip(w, moved, strict=True))]

    total = w[0] * fs[0]
    for wf, f in zip(w[1:], fs[1:], strict=True):
        total = total + wf * f
    here = [_fsum(wf * f.data for wf, f in zip(w, fs, strict=True))]
    noise = [GraphRoundoff([total], levels.xs).noise(0)]
    point = Point(along, 0.0, here, s.eps, noise, any(levels.opaque_rows(fs)))
    paired: dict[int, Estimate | Unresolved] = dict(pair(point, [0]))
    est = paired.get(0)
    if isinstance(est, Estimate) and est.settled:
        est = widen(point, paired, [0]).get(0, est)
    return est if isinstance(est, Estimate) and est.settled else ladder(point, [0])[0]


class Direction:
    """A direction that agrees: its entries (one per mode), and the inputs ``rest``
    whose entries it does not prove (a demand at most its bound), to compare entry
    by entry."""

    def __init__(self, entries: list[Entry], rest: set[int]) -> None:
        self.entries = entries
        self.rest = rest


def _tolerated(slope: float, numerical: float, d: list[float], tolerance: Tolerance) -> bool:
    """The caller's tolerance, per unit length of the direction (as PyTorch's and JAX's
    unit directions: it then weighs the slope as a derivative)."""
    length = math.sqrt(_fsum(x * x for x in d)) or 1.0
    return abs(slope - numerical) / length <= tolerance.allowed(numerical / length)
