"""What the graph adds to an entry's bound and size, beyond the estimator's own reading.

- :func:`reached`: the round-off of a value's differences by one input is that
  of the nodes the input reaches; the rest move the computed slope itself, by
  :func:`forward_share`.
- :func:`forward_share`: how far the forward's rounding moves the analytic
  derivative, read off the derivative's own graph.
- :func:`backward_share`: how far the reverse pass's own rounding moves the analytic
  derivative, where its paths cancel.
- :func:`moved_size`: the size a slope is counted against, from what the input
  moves.
- :func:`stepped`: the graph's round-off read where an estimate's step put the values.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Sequence

from minigrad.checking.numeric.estimate import LEAST_ROUNDOFF, MODEL_ROUNDOFF, Estimate, Point
from minigrad.checking.numeric.rounding import (
    SECANT,
    Chain,
    GraphRoundoff,
    Shown,
    _read,
    hidden,
    minigrads_own,
    partial_at,
    read_chain,
    read_roundoff,
)
from minigrad.checking.run.levels import Levels, derivatives
from minigrad.checking.run.tape import Tape
from minigrad.core import closure
from minigrad.core.value import Value, _args, toposort

TYPE_CHECKING = False
if TYPE_CHECKING:  # (typing costs import minigrad 3 ms)
    from typing import Any

__all__ = [
    "Walk",
    "backward_share",
    "closures_shown",
    "foreign_noise",
    "forward_share",
    "moved_size",
    "reached",
    "spread_of",
    "stepped",
]

#: A term ``d f / d c * partial``'s relative round-off in the reverse pass: the partial's
#: own (the accuracy sweep's worst, 1.6e-13: ``benchmarks/accuracy.py``) and the product's.
_TERM = 2.0**-42


#: The part of a value's round-off the nodes an input reaches must hold at most
#: for the input's differences to be held to them alone (see reached): below it,
#: the whole round-off costs more than a digit; above, building the derivative's
#: graph (create_graph) for every such input made gradcheck of a ring of 10 tanh
#: 2.5 times slower (at 1/2), where nothing changed a verdict.
_APART = 1.0 / 16.0


def reached(
    graph: GraphRoundoff,
    noise: list[float] | None,
    fs: Sequence[Value],
    xs: Sequence[Value],
    i: int,
    made: dict[int, tuple[Value, ...] | None],
) -> tuple[list[float] | None, dict[int, float]]:
    """Per value, the round-off its differences by input ``i`` hold, and where that is
    less than its whole round-off, how far the rest moves its slope.

    The nodes ``i`` does not reach keep their bits at every step of ``i``
    (:meth:`GraphRoundoff.noise_by`): ``s(x) + ((y + 1e10) - 1e10)`` holds ``y``'s
    cancellation, 2e-6, in no difference by ``x``, and held to it, a rule
    ``1e-5`` off agreed to 4 digits. But their rounding moves the computed
    function's slope itself: ``(x * 1e300) * (y * 1e-300)`` at ``y = 1e-100``
    has a slope of 0 by ``x`` in float64. That is :func:`forward_share`, the
    derivative's own round-off, added to each estimate's bound; where no graph
    of the derivative can be built (a closure op), the whole round-off stands.
    Only where the nodes ``i`` reaches hold under :data:`_APART` of it, or the value has
    no first-order round-off at all (a loss of 0 at a fit: its residual's rounding moves
    the slope, not the value): elsewhere the whole costs a digit at most."""
    if noise is None:
        return noise, {}
    mine, moved = list(noise), {}
    for r, whole in enumerate(noise):
        reached = graph.noise_by(r, i)
        if reached < _APART * whole or whole < 2.0**-1022:  # (no normal float's worth)
            share = forward_share(fs[r], xs, i, made, whole=True)
            if share is not None:
                mine[r], moved[r] = reached, share
    return mine, moved


def forward_share(
    f: Value,
    xs: Sequence[Value],
    i: int,
    made: dict[int, tuple[Value, ...] | None],
    *,
    whole: bool = False,
) -> float | None:
    """How far the forward's own round-off moves the analytic derivative of ``f`` by
    ``xs[i]``: the rules are evaluated at rounded values (``log(1 + b * b)`` at ``b
    = 1e-6`` is 1e-4 off, and so is every derivative made from it), and the
    derivative moves by ``ulp(node) * |d derivative / d node|`` for each node, read
    off its own graph (create_graph) as a value's round-off is. Where an op of that
    graph has no slope at its point, that op's share (:func:`_singular_share`), unless
    ``whole`` asks for every node's. None where no graph of the derivative can be built
    (a closure op, a partial on floats only) or the share cannot be read."""
    if id(f) not in made:  # every derivative of f at once, kept for its other entries
        try:  # (a partial written for floats may raise anything on Values)
            made[id(f)] = derivatives(f, xs, True)
        except Exception:
            made[id(f)] = None
    ds = made[id(f)]
    if ds is None:
        return None
    d = ds[i]
    if not isinstance(d, Value):
        return 0.0  # a constant slope: no rounding moves it
    share, _ = read_roundoff(d, xs)
    if math.isfinite(share) or whole:
        return share if math.isfinite(share) else None
    return _singular_share(d, xs)


def _singular_share(d: Value, xs: Sequence[Value]) -> float | None:
    """Where first-order analysis has no bound: how far the derivative ``d`` moves when
    the rounded argument of an op whose slope does not exist there (its partial raises:
    sqrt's at 0, asin's at 1) moves by its own round-off, the op called there (the graph
    replayed: :class:`~minigrad.checking.run.tape.Tape`). ``sqrt`` of a sum that
    cancelled to 0 moves by the root of the sum's round-off, no multiple of it: hypot's
    slope by ``y`` written ``sqrt(h * h - x * x) / h`` computes 0 at ``y = 1e-9``, ``x =
    2``, and may be off by ``1.5e-8``, 30 times the slope. The rest of the graph's
    first-order share is not read then (a known limit). None where no such op
    exists (a slope beyond float64's range, ``1 / t**2`` at ``t = 1e-95``, is no pole; an
    input or a constant there is exact and holds no rounding to amplify)."""
    moved: float | None = None
    for node in toposort([d]):
        rule, args = node._rule, _args(node)
        if rule is None:
            continue
        at = [a if type(a) is float else a._data for a in args]  # type: ignore[union-attr]
        for partial, a in zip(rule.partials, args, strict=False):  # no error from in here
            if not isinstance(a, Value) or a._rule is None:
                continue
            try:
                partial_at(partial, a, at, node._data)
                continue
            except (ZeroDivisionError, ValueError):
                pass  # no slope here
            except Exception:  # beyond the range, or the user's own error: no pole
                continue
            delta, _ = read_roundoff(a, xs)
            if not math.isfinite(delta):
                return math.inf
            replay = Tape([d], [a]).along(0)
            for t in (a._data + delta, a._data - delta):
                got = replay(t)
                if got is not None:  # (a side off the op's domain moves nothing)
                    moved = max(moved or 0.0, abs(got[0] - d._data))
            moved = moved or 0.0
    return moved


#: A value's recorded walk (:func:`~minigrad.checking.numeric.rounding.read_chain`) and per
#: node the terms its adjoint sums (``|d f / d c * partial|``), their number, and the
#: partials' own round-off times ``|d f / d c|``.
Walk = tuple[Chain, dict[Value, list[float]]]


def backward_share(
    f: Value, xs: Sequence[Value], i: int, memo: dict[int, Walk | None], mode: str = "rev"
) -> float:
    """How far the rounding of the chain rule moves the analytic derivative of ``f`` by
    ``xs[i]``, to first order, with the partials' signs. In reverse mode each node's
    adjoint sums ``d f / d c * partial`` over the nodes ``c`` it feeds, each term off by
    :data:`_TERM` of itself (more for a partial written outside minigrad: its own
    round-off) and each addition by half an ulp of them all, and an error there reaches
    the derivative times ``d node / d xs[i]`` (one forward pass); in forward mode each
    node's tangent sums ``partial * d arg / d xs[i]`` over its arguments, and an error
    there reaches it times ``d f / d node``. The model of
    :func:`~minigrad.checking.numeric.rounding.analytic_roundoff` counts every path's
    size, where ``r x (1 - x)`` iterated 20 times holds 1e-13 of the 3e10 they sum to.
    inf where a partial cannot be computed, or its round-off read (one on floats only:
    the model stands). The walk is kept in ``memo``."""
    if id(f) not in memo:
        memo[id(f)] = _gathered(read_chain(f, xs))
    walk = memo[id(f)]
    if walk is None:
        return math.inf
    chain, gathered = walk
    tangent = {x: 0.0 for x in xs}  # an input computed from another is held fixed
    tangent[xs[i]] = 1.0
    half = 2.0**-53
    total = quantum = 2.0**-1074
    for node, weight, by in reversed(chain):
        if node in tangent:
            continue
        # (each product also off by underflow's quantum, in the partial and in the product)
        terms = [
            (s * (t := tangent.get(a, 0.0)), (own + quantum) * abs(t) + quantum) for a, s, own in by
        ]
        tangent[node] = sum(t for t, _ in terms)
        if mode == "fwd":
            summed = sum(abs(t) for t, _ in terms) * (_TERM + len(terms) * half)
            total += abs(weight) * (summed + sum(e for _, e in terms))
    if mode == "fwd":
        return total
    for n, (t, k, e) in gathered.items():
        total += (t * (_TERM + k * half) + e) * abs(tangent.get(n, 0.0))
    return total


def _gathered(chain: Chain | None) -> Walk | None:
    """Per node, what its adjoint sums (see :data:`Walk`); None where a round-off is unread."""
    if chain is None:
        return None
    gathered: dict[Value, list[float]] = {}
    for _, weight, by in chain:
        for a, s, own in by:
            if math.isnan(own):
                return None
            g = gathered.setdefault(a, [0.0, 0.0, 0.0])
            under = (abs(weight) + 1.0) * 2.0**-1074  # underflow's quantum, as in backward_share
            g[0], g[1], g[2] = g[0] + abs(weight * s), g[1] + 1.0, g[2] + abs(weight) * own + under
    return chain, gathered


def moved_size(f: Value, x: Value, size: float) -> float:
    """The function's size per unit of ``x`` (``size``, :meth:`Point.sizes`) counted
    from what ``x`` moves, not from what it does not: tanh(v) + 1e16 is of size
    0.29 in v, not 1e16 (a slope counted in digits of 1e16 would "agree" to 14
    digits where float64 proves none; so would one of ``(tanh(v) + 1e16) ** 1``
    or ``1e17 * exp(v / 1e17)``). ``x`` moves by ``max(|x|, 1)``; each op moves by
    the larger of its partials times its arguments' moves and the change of its
    forward with every argument moved at once (cos at 1e-300 moves by 0.46, not
    by its slope); an op whose forward cannot be called (a closure) by its whole
    value. ``size`` where nothing moves (relu's flat side, ``x - x + c``)."""
    scale = max(abs(x._data), 1.0)
    moves: dict[Value, float] = {x: scale}
    unseen = False
    for node in reversed(toposort([f])):
        rule, args = node._rule, _args(node)
        ms = [moves.get(a, 0.0) if isinstance(a, Value) else 0.0 for a in args]
        if rule is None or node is x or not any(ms):
            continue
        at = [a if type(a) is float else a._data for a in args]  # type: ignore[union-attr]
        out, moved = node._data, 0.0
        partials = rule.partials
        failed = (ArithmeticError, ValueError, TypeError, closure.ClosureOpError)
        for side in (1.0, -1.0):  # off the domain (however it says so): the other side
            with contextlib.suppress(Exception):
                moved_at = rule.forward(*(v + side * m for v, m in zip(at, ms, strict=True)))
                moved = max(moved, abs(moved_at - out))
        try:  # the partials of the arguments that move
            each = zip(partials, args, ms, strict=True)
            lin = [m * abs(partial_at(p, a, at, out)) for p, a, m in each if m]
            moved = max(moved, math.fsum(lin))
        except failed:
            moved = max(moved, abs(out))
        moves[node] = moved if math.isfinite(moved) else abs(out)
        # A partial under test that says 0 where the forward's move rounds away
        # (1e17 * R(v / 1e17)) is no evidence that nothing moves.
        own = type(rule) is not closure.Closure and all(map(minigrads_own, rule.partials))
        unseen = unseen or (moved == 0.0 and not own)
    moved = moves.get(f, 0.0)
    if moved == 0.0 and unseen:
        return 2.0**-1022
    return min(size, max(moved / scale, 2.0**-1022)) if moved > 0.0 else size


#: The most arguments of a closure :func:`closures_shown` reads: each one more costs two
#: more calls of ``func`` (a pattern of moves), and ops of more arguments are rare.
_MOST_ARGS = 3


def _nudge(i: int, p: int) -> float:
    """How far pattern ``p`` of :func:`closures_shown` moves input ``i``, a part of its size
    (a unit at 0), as :func:`~minigrad.checking.numeric.rounding.held` moves a rule's
    argument. Pattern 0: alternate signs, sizes 1 to 2 apart by the golden ratio's
    multiples, so two inputs' moves cancel in a sum or a difference only by chance (a
    node whose argument stands still is skipped). The others: signs and sizes drawn
    apart from pattern 0's, so the patterns move two arguments in directions apart
    (their matrix is tested before it is solved)."""
    if p == 0:
        return (-1.0) ** i * (1.0 + (i * 0.6180339887498949) % 1.0) * SECANT
    draw = random.Random(p * 1_000_003 + i)
    return draw.choice((-1.0, 1.0)) * (1.0 + draw.random()) * SECANT


def closures_shown(levels: Levels, fs: Sequence[Value]) -> Shown:
    """Per ``_backward`` closure in the graph of level 1, ``fs``, its slopes (by node id and
    argument) as ``func``'s own values show them. Its partials are under test: a tanh
    closure 10 times too steep in a 30-step recurrence made the readings ``1e25`` too
    large. ``func`` is called with the inputs moved by :func:`_nudge` either way, one
    pattern of moves per argument of the widest closure, and its graph matched node for
    node (the same ops in the same order); a closure's changes over its arguments' then
    give its slopes (:func:`_slopes`). Nothing where the moved graphs differ or leave the
    domain."""
    nodes = toposort(list(fs))
    ops = [k for k, n in enumerate(nodes) if type(n._rule) is closure.Closure]
    if not ops:
        return {}
    xs, saved = levels.inputs, [x._data for x in levels.inputs]
    patterns: list[tuple[list[Value], list[Value]]] = []
    for p in range(min(max(len(nodes[k]._a) for k in ops), _MOST_ARGS)):
        sides = []
        for side in (1.0, -1.0):
            try:
                for i, (x, at) in enumerate(zip(xs, saved, strict=True)):
                    x._data = at + side * _nudge(i, p) * (abs(at) or 1.0)
                got = toposort(levels.outputs())
            except Exception:  # (off the domain, or the user's error: the estimator names it)
                got = []
            finally:
                for x, at in zip(xs, saved, strict=True):
                    x._data = at
            same = len(got) == len(nodes) and all(  # (a closure's children, each once)
                type(a._rule) is type(b._rule) and a._op == b._op and len(_args(a)) == len(_args(b))
                for a, b in zip(got, nodes, strict=True)
            )
            if not same:
                break
            sides.append(got)
        if len(sides) < 2:
            break
        patterns.append((sides[0], sides[1]))
    seen: Shown = {}
    for k in ops:
        moves = [(up[k], down[k]) for up, down in patterns]
        for j, slope in _slopes(nodes[k], moves).items():
            seen[id(nodes[k]), j] = slope
    return seen


def _slopes(node: Value, moves: Sequence[tuple[Value, Value]]) -> dict[int, float]:
    """A closure's slope by each argument that moves, from its changes ``node`` to each
    pattern's moved nodes (up, down): the linear system of the changes over the
    arguments' solved up, down and across (one argument: the changes' quotients).

    With ``n`` arguments that move (a constant stands still in every pattern), the first
    ``n`` patterns are used; in each every such argument must move through its value by
    a million ulps, the system must be well apart from singular (:func:`_solve`), each
    slope's share of the change must be resolved (a million ulps), and the up and down
    slopes must agree within a factor 2 (no pole or kink between), as
    :func:`~minigrad.checking.numeric.rounding.held`'s halves."""
    args, here = node._a, node._data
    moving = [
        j for j, a in enumerate(args) if any(m._a[j]._data != a._data for u in moves for m in u)
    ]
    n = len(moving)
    if not 0 < n <= len(moves):
        return {}
    up = [[m[0]._a[j]._data - args[j]._data for j in moving] for m in moves[:n]]
    down = [[args[j]._data - m[1]._a[j]._data for j in moving] for m in moves[:n]]
    across = [[u + d for u, d in zip(ru, rd, strict=True)] for ru, rd in zip(up, down, strict=True)]
    for q, j in enumerate(moving):
        a = args[j]._data
        grain = math.ulp(max(abs(a), *(abs(v._a[j]._data) for m in moves[:n] for v in m))) / SECANT
        if any(
            ru[q] * rd[q] <= 0.0 or abs(ra[q]) <= grain
            for ru, rd, ra in zip(up, down, across, strict=True)
        ):
            return {}
    changes = [(m[0]._data - here, here - m[1]._data) for m in moves[:n]]
    right = _solve(up, [c[0] for c in changes])
    left = _solve(down, [c[1] for c in changes])
    central = _solve(across, [c[0] + c[1] for c in changes])
    if right is None or left is None or central is None:
        return {}
    noise = math.ulp(max(abs(here), *(abs(v._data) for m in moves[:n] for v in m))) / SECANT
    found = {}
    for q, j in enumerate(moving):
        share = abs(central[q]) * max(abs(row[q]) for row in across)
        agree = left[q] * right[q] > 0.0 and max(left[q] / right[q], right[q] / left[q]) <= 2.0
        if share > noise and agree:
            found[j] = abs(central[q])
    return found


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float] | None:
    """``x`` with ``matrix x = rhs`` (1 to 3 unknowns) by Cramer's rule, or None where the
    determinant is below a sixteenth of its columns' largest entries' product (nearly
    singular: the round-off of the entries grows 16-fold at most)."""
    n = len(rhs)

    def det(m: list[list[float]]) -> float:
        if n == 1:
            return m[0][0]
        if n == 2:
            return m[0][0] * m[1][1] - m[0][1] * m[1][0]
        return sum(
            m[0][c]
            * (m[1][(c + 1) % 3] * m[2][(c + 2) % 3] - m[1][(c + 2) % 3] * m[2][(c + 1) % 3])
            for c in range(3)
        )

    whole = det(matrix)
    columns = math.prod(max(abs(row[c]) for row in matrix) for c in range(n))
    if not abs(whole) >= columns / 16.0 or columns == 0.0:
        return None
    return [
        det([[rhs[r] if c == q else matrix[r][c] for c in range(n)] for r in range(n)]) / whole
        for q in range(n)
    ]


#: How far a Richardson estimate carries the round-off of its widest step's values, over
#: that step: (4 r + r') / 3 for two steps a factor 2 apart, up to 4 over a tableau's rows.
_CARRIED = 4.0
#: How much larger than at x a value must be at the step for its graph to be read again: 2 to
#: 64 decide alike on round 29's near-fit losses (3,614 entries, built-in and custom); at 1,
#: where any growth counts, a 100-input least squares reads 3.4 times as often.
_GROWN = 2.0


def stepped(levels: Levels, k: int, p: Point, r: int, i: int, est: Estimate) -> Estimate:
    """``est`` with value ``r``'s round-off read off level ``k``'s graph built where the
    estimate's widest step moved input ``i``, where the values there are over twice those at
    ``x``: the graph's reading at ``x`` is held there (a point near a root keeps its absolute
    round-off), but a small difference of large terms grows with them. ``(w * a + c - y)**3``
    at a residual of ``-5.9e-7`` holds the rounding of ``w * a``, ``1e-17``, times ``3 u**2``:
    at steps of ``2e-5`` the residual is 50 times larger, and so is that; read at ``x`` the
    bound was 18 times too small, and the right graph was *wrong*."""
    found = p.sides(est.step)  # (the values there are known: no new evaluation)
    if found is None:
        return est
    up, down, s = found
    big = max(abs(up[r]), abs(down[r]))
    if big <= _GROWN * abs(p.here[r]):
        return est
    foreign: Any = levels if hasattr(levels, "spreads") else None  # (ForeignLevels)
    x, field = levels.xs[i], "_data" if foreign is None else "data"
    orig = getattr(x, field)
    try:  # at the side of the larger value, whose terms are the larger
        setattr(x, field, p.x + s if abs(up[r]) >= abs(down[r]) else p.x - s)
        if foreign is not None:  # a foreign engine's own pass there (see foreign_noise)
            foreign._backward(foreign.outputs()[r])
            return _grown(p, r, est, big, s, LEAST_ROUNDOFF * foreign.spread)
        shares = _read(levels._level(k)[0][r], [], partials=False)[3]
    except Exception:  # the function's own refusal there: the reading at x stands
        return est
    finally:
        setattr(x, field, orig)
    # The shares of the nodes x reaches (see reached), but a hidden forward's own: the
    # estimator reads its rounding at each step (its grid, its cells).
    reached, read = {x}, 0.0
    for node, share in reversed(shares):  # each node after its arguments
        if any(a in reached for a in _args(node) if isinstance(a, Value)):
            reached.add(node)
            read += 0.0 if node._rule is None or hidden(node._rule) else share
    return _grown(p, r, est, big, s, read)


def _grown(p: Point, r: int, est: Estimate, big: float, s: float, read: float) -> Estimate:
    """``est`` with the round-off ``read`` at its widest step ``s`` (values of ``big``)."""
    extra = _CARRIED * max(0.0, read - p.delta(r, big)) / s
    if not extra:
        return est
    return Estimate(est.value, est.error + extra, s, est.roundoff + extra, est.settled)


def foreign_noise(levels: Levels, here: list[float]) -> list[float] | None:
    """A foreign engine's values' round-off, which its graph does not show: an ulp of each
    op's value times its gradient (:func:`spread_of`, read off the engine's own pass),
    where that is more than :data:`MODEL_ROUNDOFF` of the value, else None (that model,
    which scales with the values). A trained MLP's loss of ``7e-7`` is a sum of residuals
    of ``1e-3`` made of outputs near 0.5, which round 100 times more than the loss's
    64 ulps: micrograd MLPs fit to 1 to 3 points were *wrong* in 31 of 60 checks."""
    read = [LEAST_ROUNDOFF * t for t in getattr(levels, "spreads", ())]
    model = [MODEL_ROUNDOFF * abs(v) for v in here]
    if len(read) != len(here) or all(t <= m for t, m in zip(read, model, strict=True)):
        return None
    return [max(t, m) for t, m in zip(read, model, strict=True)]


def spread_of(nodes: Sequence[tuple[object, object]]) -> float:
    """Each computed node's value times its gradient, summed: how far a rounding of
    every op reaches the output, to first order (a node without parents is exact)."""
    found = [
        (getattr(n, "_prev", None), getattr(n, "data", 0), getattr(n, "grad", 0)) for n, _ in nodes
    ]
    return math.fsum(abs(float(d) * float(g)) for up, d, g in found if up and _real(d) and _real(g))


def _real(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
