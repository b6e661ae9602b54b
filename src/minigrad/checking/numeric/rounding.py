"""How much round-off a computed value and its computed gradient can hold, read off the graph.

One walk backwards over the graph of a value ``f`` (a reverse pass with the partials and
their absolute values) bounds both, to first order:

- each node's result is rounded once, by up to an ulp (of 1 too for ops that cancel at
  their roots), and reaches ``f`` times ``d f / d node``: ``sum over nodes of ulp(node) *
  |d f / d node|`` (``(x + 1e10) - 1e10`` holds an ulp of 1e10; paths that cancel, none);
- each input's gradient is a sum over paths of products of partials, rounded at every
  step: a small multiple of the unit round-off times ``sum over paths of |product|`` (the
  "absolute gradient"; where paths cancel, the caller reads less).

A user's partial rounds by more where it cancels inside (``1 / (1 - x * x)`` at ``1 -
1e-9`` is 0.25 off 5e8): its share is read off its own graph (:func:`_partial_noise`), and
it is weighed at most as steep as its forward shows (:func:`held`). minigrad's own
partials are swept against SymPy to a few ulps.

Example:
    >>> from minigrad import Value
    >>> x = Value(0.3)
    >>> noise, (spread,) = read_roundoff((x + 1e10) - 1e10, [x])
    >>> 1e-6 < noise < 1e-4, spread == 1.0
    (True, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from minigrad.checking.numeric.estimate import FLOAT32, grid_of
from minigrad.core.closure import Closure
from minigrad.core.rule import Partial, Rule
from minigrad.core.rules import TABLE
from minigrad.core.rules.arithmetic import ADD, DIV, MUL, NEG, SUB
from minigrad.core.rules.special import DIGAMMA, LGAMMA
from minigrad.core.value import Value, _args, toposort

__all__ = [
    "ANALYTIC_ULPS",
    "SECANT",
    "Chain",
    "GraphRoundoff",
    "Shown",
    "analytic_roundoff",
    "held",
    "hidden",
    "minigrads_forward",
    "minigrads_own",
    "partial_at",
    "read_chain",
    "read_roundoff",
]

#: :func:`held`'s secant, of the argument: resolved by a change of ``1 / SECANT`` ulps.
SECANT = 2.0**-20
#: Closures' slopes as func shows them, by node id and argument (``run.allowances``).
Shown = dict[tuple[int, int], float]
#: Where the partials accurate to a few ulps are written: the rule table and its families
#: (pow's, the polar functions'), swept against SymPy to 1e-12 (``benchmarks/accuracy.py``).
_ACCURATE = "minigrad.core."
#: The built-in rules, and their partials, told apart from a user's at a glance.
_TABLE_RULES = frozenset(TABLE)
_TABLE_PARTIALS = frozenset(p for rule in TABLE for p in rule.partials if callable(p))

#: Relative round-off of one rounded result: an ulp (library functions good to one ulp too).
_ULP = 2.0**-52
#: Relative round-off of a correctly rounded arithmetic result: half an ulp (IEEE 754).
_HALF = 2.0**-53
#: The ops IEEE 754 rounds correctly: their results are off by half an ulp at most.
_EXACT = frozenset((ADD, SUB, MUL, DIV, NEG))
#: Ops made of terms that cancel at their roots, off by ulps of 1 there (against mpmath:
#: lgamma 7 near its roots, 7 of itself at 3.5; digamma 9.5): _LOOSE ulps of |out| + 2.
_CANCELLING, _LOOSE = frozenset((LGAMMA, DIGAMMA)), 8.0
#: Where a hidden forward is probed for a grid (:func:`_cell`): its arguments moved by these
#: fractions of their size (a unit at 0). Far enough that exact values beside a constant (``z - K``
#: at ``K``: multiples of an ulp of ``K``) lie on no grid 256 of their own ulps coarse (at a tenth
#: of ``K``, 16); float32 is 2**29. Irrational, not a short fraction: round arguments moved by one
#: are round (10**4 by 0.0911: 10911.0), and a power of them an exact integer, on a grid by nature.
_PROBES = ((math.sqrt(2.0) - 1.0) / 4.0, math.sqrt(3.0) - 1.5, 3.0 - math.pi)
#: How much further each probe's arguments move, of their size: float32's cells are 6e-8.
_NUDGE = 1e-4
#: :func:`_fixed`'s scales, about 64, 1024, 2**20, irrational (:data:`_PROBES`): a result growing
#: linearly is 16 times larger, a cancellation's grid (under ROUND) finer than float32's by the last
_OUT = tuple(m * (1.0 + _PROBES[0]) for m in (56.0, 900.0, 950000.0))
#: The least round-off of a result: a subnormal quantum.
_QUANTUM, _INF = 2.0**-1074, math.inf
#: How many ulps of the absolute gradient the analytic side may be off: each path is a product of a
#: few partials, each partial good to an ulp or two, and the sums add one rounding each. Tuned on
#: the checks of the test suite (products of a dozen ops, sums of a few hundred paths).
ANALYTIC_ULPS = 32.0


#: Round-off, per input the absolute gradient and partials' share, nodes' shares, cells.
_Reading = tuple[float, list[float], list[float], list[tuple[Value, float]], float]
#: Per node with an op ``d f / d node``, and by each Value argument its partial and that
#: partial's round-off (0 for minigrad's own; NaN unread), for the caller's passes.
Chain = list[tuple[Value, float, list[tuple[Value, float, float]]]]


def read_roundoff(f: Value, xs: Sequence[Value]) -> tuple[float, list[float]]:
    """``(noise, spread)``: a first-order bound on the round-off of ``f.data`` (inf where a
    partial could not be computed) and per input its absolute gradient, ``sum over paths
    of |product of partials|`` (-1: no path to ``f``). The graph is walked, not changed."""
    noise, spread, _, _, _ = _read(f, xs, partials=False)
    return noise, spread


def minigrads_own(partial: Partial) -> bool:
    """Whether ``partial`` is one of minigrad's own (see :data:`_ACCURATE`), not its user's.

    Example:
        >>> from minigrad.ops import TABLE
        >>> minigrads_own(TABLE[0].partials[0]), minigrads_own(lambda x, out: 2.0 * x)
        (True, False)
    """
    if isinstance(partial, float) or partial in _TABLE_PARTIALS:
        return True
    module = getattr(partial, "__module__", None)
    return isinstance(module, str) and module.startswith(_ACCURATE)


def read_chain(f: Value, xs: Sequence[Value]) -> Chain | None:
    """The walk of :func:`read_roundoff`, recorded; None where a partial fails."""
    chain: Chain = []
    return chain if math.isfinite(_read(f, xs, chain=chain)[0]) else None


def _read(
    f: Value,
    xs: Sequence[Value],
    *,
    partials: bool = True,
    chain: Chain | None = None,
    seen: Shown | None = None,
) -> _Reading:
    """:func:`read_roundoff`, per input the round-off the partials written outside
    minigrad add to its derivative (:func:`_partial_noise`; with ``partials``
    False, 0), each node's share of the value's round-off, and the part of it
    hidden forwards' cells hold (relative to their results: float32's)."""
    unknown = [math.inf] * len(xs)
    if not isinstance(f, Value):
        return math.inf, unknown, unknown, [], 0.0
    adjoint, signed = {f: 1.0}, {f: 1.0}  # abs(d f / d node) over each path, d f / d node
    # Per node: what inexact partials (and underflow) below f add to d f / d node, to first
    # order: each edge's round-off times the adjoint above, carried down by absolute partials.
    carried: dict[Value, float] = {}
    noise = cells = 0.0
    shares: list[tuple[Value, float]] = []
    # The slots and locals, not the properties: this walk runs per value of every level.
    get_adjoint, get_carried, get_signed = adjoint.get, carried.get, signed.get
    for node in toposort([f]):
        rule = node._rule
        if rule is None:
            continue
        weight = get_adjoint(node, 0.0)
        extra = get_carried(node, 0.0)
        args = _args(node)
        if weight == 0.0 and extra == 0.0 and not get_signed(node, 0.0):
            # A partial of 0 on the way (tanh far out): the inputs beyond are
            # still reached, with an absolute gradient of 0 but not "no path".
            for arg in args:
                if type(arg) is not float:
                    adjoint.setdefault(arg, 0.0)  # type: ignore[arg-type]
            shares.append((node, 0.0))
            continue
        out = node._data
        floats = [a if type(a) is float else a._data for a in args]  # type: ignore[union-attr]
        own = abs(out) * (_HALF if rule in _EXACT else _ULP)
        own = _LOOSE * _ULP * (abs(out) + 2.0) if rule in _CANCELLING else own
        opened = hidden(rule) and not isinstance(rule, Closure)  # whose forward it can call
        cell = _cell(rule, floats, [type(a) is not float for a in args], out) if opened else 0.0
        share = abs(slope_f := get_signed(node, 0.0)) * max(own, 0.5 * cell, _QUANTUM)
        noise += share
        if cell >= FLOAT32 * abs(out) and not _fixed(rule, floats, args, out):
            # float32's kind: its cells at out grow with it
            cells += abs(slope_f) * 0.5 * min(cell, 2.0 * FLOAT32 * abs(out))
        shares.append((node, share))
        inexact = partials and weight > 0.0
        partial_of = rule.partials
        if chain is not None:
            chain.append((node, slope_f, by := []))
        for j, arg in enumerate(args):
            if not isinstance(arg, Value):
                continue
            partial = partial_of[j]
            try:
                slope = partial_at(partial, arg, floats, out)
            except (ArithmeticError, ValueError, TypeError):
                return math.inf, unknown, unknown, [], 0.0
            own, mine = 0.0, minigrads_own(partial) and not isinstance(rule, Closure)
            kept = held(rule, j, floats, out, slope, (seen or {}).get((id(node), j), _INF))
            adjoint[arg] = get_adjoint(arg, 0.0) + weight * abs(kept)
            moves = kept or _kinked(rule, j, floats)  # (the value's reading, not the pass's)
            signed[arg] = get_signed(arg, 0.0) + slope_f * moves
            if inexact and not mine:
                own = _partial_noise(rule, j, floats, out)
            if chain is not None:  # (a partial on floats only: its round-off unread)
                by.append((arg, slope, own if own or mine else math.nan))
            under = _QUANTUM * (weight + 1.0)  # (in the partial, and in its product)
            carried[arg] = get_carried(arg, 0.0) + extra * abs(slope) + own * weight + under
    if not math.isfinite(noise):
        noise = math.inf
    # -1: no path from the input to f at all.
    spread = [adjoint.get(x, -1.0) for x in xs]
    return noise, spread, [carried.get(x, 0.0) for x in xs], shares, cells


def held(
    rule: Rule, j: int, floats: Sequence[float], out: float, slope: float, seen: float = _INF
) -> float:
    """``slope``, a user's partial by argument ``j``, as the readings (a value's round-off,
    in ``run.turns`` an argument's speed) take it: at most twice what the forward's own
    values show. They weigh nodes by products of partials under test, and a bound that
    grows with the error it is to find proves nothing (a tanh rule 10 times too large
    in 30 steps made them ``1e25`` too large). A central difference over :data:`SECANT`,
    with halves within a factor 2 (no pole or kink inside): a right slope is at most
    twice it. A closure's: ``seen`` (``run.allowances.closures_shown``).

        >>> pole = Rule("pole", lambda x: 1 / (x - 1), (lambda x, out: -out * out,))
        >>> round(held(pole, 0, [2.0], 1.0, -10.0), 6), held(pole, 0, [1 + 1e-7], 1e7, -1e14)
        (-2.0, -1e+14)
    """
    partial, a = rule.partials[j], floats[j]
    if isinstance(rule, Closure):  # (its slope as func's own values show it, if ``seen``)
        return math.copysign(min(abs(slope), 2.0 * seen), slope)
    if minigrads_own(partial):
        return slope
    d = SECANT * abs(a) or SECANT
    try:
        hi = rule.forward(*floats[:j], a + d, *floats[j + 1 :])
        lo = rule.forward(*floats[:j], a - d, *floats[j + 1 :])
        change, left, right = abs(hi - lo), out - lo, hi - out
        resolved = change > math.ulp(max(abs(hi), abs(lo))) / SECANT
        resolved = resolved and left * right > 0.0 and max(left / right, right / left) <= 2.0
    except Exception:  # off its domain, or no float: nothing shown
        return slope
    shown = change / (2.0 * d) if resolved and math.isfinite(change) else math.inf
    return math.copysign(min(abs(slope), 2.0 * shown), slope)


def _kinked(rule: Rule, j: int, floats: Sequence[float]) -> float:
    """A partial of 0 may be a kink's subgradient (abs at 0), where the argument's rounding
    still moves the op (``abs(a * b - c)`` at ``a * b == c``): the larger of its values
    an ulp to each side."""
    found, p = 0.0, rule.partials[j]
    for t in (math.nextafter(floats[j], math.inf), math.nextafter(floats[j], -math.inf)):
        moved = [*floats[:j], t, *floats[j + 1 :]]
        try:  # (off the op's domain there, or the user's partial refusing it: no slope)
            v = p if isinstance(p, float) else p(*moved, rule.forward(*moved))
            found = max(found, float(v._data if isinstance(v, Value) else v), key=abs)
        except Exception:
            continue
    return found


def _fixed(rule: Rule, floats: Sequence[float], args: Sequence[object], out: float) -> bool:
    """Whether a hidden forward's grid is a cancellation's, the same at far larger
    results (``exp(x) - 1`` near 0 rounds to ulps of 1), not float32's, which grows with
    them: a result 16 times ``out`` or more, its Value arguments scaled by :data:`_OUT`,
    on a grid finer than half float32's cell of itself (float32's 24 bits put it on
    its own ulp, at least FLOAT32 of it). Else (off the domain, no larger result, an
    overflow, float32's grid) nothing is shown, and the cells grow."""
    for scale in _OUT:
        moved = [
            a if type(arg) is float else (a * (1.0 + scale) if a else scale)
            for a, arg in zip(floats, args, strict=True)
        ]
        try:
            v = rule.forward(*moved)
        except Exception:  # off its domain there: no evidence
            continue
        big = type(v) is float and math.isfinite(v) and abs(v) >= 16.0 * abs(out)
        if big and grid_of(v) < 0.5 * FLOAT32 * abs(v):
            return True
    return False


def _cell(rule: Rule, floats: Sequence[float], moving: Sequence[bool], out: float) -> float:
    """The grid a hidden forward rounds its results to (float32 inside a custom rule,
    ``cos(x) - 1``), at ``out``'s size or the probes', the coarser: results on a
    coarse grid (:func:`grid_of`) at two or more probes (:data:`_PROBES`) that are no
    whole numbers or move a little further show it, however few their bits; else 0 (a
    clamp's bounds at ``1e8 +- 5``, a saturated 1.0 are whole and still). The graph shows
    none of it. Only Value arguments move (a constant's may be an exponent)."""
    relative: dict[float, float] = {}
    coarsest = 0.0
    for f in _PROBES:
        seen: list[tuple[float, float]] = []
        for nudge in (0.0, _NUDGE):
            moved = [
                a + (f + nudge) * (abs(a) or 1.0) if m else a
                for a, m in zip(floats, moving, strict=True)
            ]
            try:
                v = rule.forward(*moved)
            except Exception:  # off its domain there: no evidence
                break
            g = grid_of(v) if type(v) is float else 0.0
            if not g > 0.0:  # (a few bits may be a cancellation's: 1 - cos(t) at 3e-8)
                break
            seen.append((v, g / abs(v)))
        if len(seen) == 2 and (seen[0][0] != seen[1][0] or seen[0][0] % 1.0):
            finest = min(rel * abs(v) for v, rel in seen)  # each bounds the grid above
            relative[abs(seen[0][0])] = finest / abs(seen[0][0])
            coarsest = max(coarsest, finest)
    if len(relative) < 2:
        return 0.0
    # Where the results grow with the step (log in float32 at 1 + 1e-7), so does a cell:
    # the steps stay within the probes' reach, where the coarsest cell seen holds them all.
    return max(max(relative.values()) * abs(out), coarsest)


def _partial_noise(rule: Rule, j: int, floats: Sequence[float], out: float) -> float:
    """The round-off of ``rule``'s partial ``j`` at a point, read off its own graph: called
    with Values for its arguments and ``out`` (a rounded result, an ulp off, which reaches
    the partial too). 0 for a constant, or a partial that takes no Values (written with
    ``math.tanh``): the model of :func:`analytic_roundoff` then stands alone.

    Example:
        >>> from minigrad import Rule
        >>> import math
        >>> naive = Rule("atanh", math.atanh, (lambda x, out: 1.0 / (1.0 - x * x),))
        >>> x = 1.0 - 1e-9
        >>> 0.25 < _partial_noise(naive, 0, [x], math.atanh(x)) < 1e3  # of a slope of 5e8
        True
    """
    partial = rule.partials[j]
    if isinstance(rule, Closure):
        return rule.noise(j)
    if isinstance(partial, float):
        return 0.0
    leaves = [Value(v) for v in floats]
    result = Value(out)
    try:  # (what a partial written for floats raises on Values is no concern of the user's)
        got = partial(*leaves, result)
    except Exception:
        return 0.0
    if not isinstance(got, Value):
        return 0.0
    noise, spread = read_roundoff(got, [*leaves, result])
    if not math.isfinite(noise):
        return 0.0
    return noise + max(abs(out) * _ULP, _QUANTUM) * max(spread[-1], 0.0)


def hidden(rule: Rule) -> bool:
    """Whether ``rule``'s forward is written outside minigrad (a library function such
    as math.sin is one op, read as such; minigrad's own derivative rules hide nothing).

    Example:
        >>> from minigrad import Rule
        >>> from minigrad.ops import EXP
        >>> hidden(EXP), hidden(Rule("sin2", math.sin, (lambda x, out: math.cos(x),)))
        (False, False)
        >>> def square(x):
        ...     return x * x
        >>> square.__module__ = "my_ops"  # as if written in the user's file
        >>> hidden(Rule("tsq", square, (lambda x, out: 2.0 * x,)))
        True
    """
    if rule in _TABLE_RULES or type(rule.forward) is type(math.sin):
        return False
    return not minigrads_forward(rule)


def minigrads_forward(rule: Rule) -> bool:
    """Whether minigrad wrote ``rule``'s forward (a derivative rule's, such as tanh')."""
    return (getattr(rule.forward, "__module__", None) or "").startswith("minigrad.")


def partial_at(p: Partial, a: Value | float, floats: Sequence[float], out: float) -> float:
    """A partial by argument ``a`` as a float; 0 by a constant (pow's exponent: not asked)."""
    v = 0.0 if type(a) is float else p if isinstance(p, float) else p(*floats, out)
    return v._data if isinstance(v, Value) else float(v)


def analytic_roundoff(spread: float, analytic: float) -> float:
    """How far round-off alone can move an analytic derivative with this absolute gradient.

    Example:
        >>> analytic_roundoff(2.0, 1e-7) > 2.0 * 2.0**-52
        True
    """
    return ANALYTIC_ULPS * _ULP * max(spread, abs(analytic), 0.0) + _QUANTUM


class GraphRoundoff:
    """The round-off a level's values ``fs`` (Values; anything else holds an unknown
    round-off) and their gradients by the inputs ``xs`` hold, read off the graph on
    demand, once per value; ``seen``: closures' slopes (:data:`Shown`, :func:`held`)."""

    def __init__(self, fs: Sequence[Value], xs: Sequence[Value], seen: Shown | None = None) -> None:
        self.fs, self.seen = fs, seen or {}
        self.xs = xs
        self._read: dict[int, _Reading] = {}
        self._by: dict[int, list[float]] = {}

    def _of(self, r: int) -> _Reading:
        if (found := self._read.get(r)) is None:
            found = self._read[r] = _read(self.fs[r], self.xs, seen=self.seen)
        return found

    def noise(self, r: int) -> float:
        """The absolute round-off of value ``r`` (0 where the graph cannot tell: a value that
        is not a minigrad Value, a partial that fails on floats; the model then applies)."""
        noise = self._of(r)[0]
        return noise if math.isfinite(noise) else 0.0

    def cells(self, r: int) -> float:
        """The part of :meth:`noise` hidden forwards' cells that grow hold (float32's)."""
        return self._of(r)[4] if math.isfinite(self._of(r)[0]) else 0.0

    def noise_by(self, r: int, i: int) -> float:
        """The round-off of value ``r``'s differences by input ``i``: the shares of the nodes
        ``i`` reaches (:meth:`noise` where that cannot be told). The others have the same
        bits at every step of ``i``: ``sin(x) + ((y + 1e10) - 1e10)`` holds ``y``'s
        cancellation in its value, none in a difference by ``x`` (their rounding still moves
        the computed function's slope itself: that is the caller's to bound)."""
        if r not in self._by:
            self._by[r] = self._reached(r)
        return self._by[r][i]

    def _reached(self, r: int) -> list[float]:
        noise, _, _, shares, _ = self._of(r)
        f = self.fs[r]
        if not (math.isfinite(noise) and isinstance(f, Value)):
            return [self.noise(r)] * len(self.xs)
        # Which inputs each node depends on, as bits, from the inputs up (the shares
        # hold every node with an op, outputs first); an input computed from another
        # is held fixed while the others move, as grad holds it.
        where = {x: 1 << i for i, x in enumerate(self.xs)}
        bits: dict[Value, int] = dict(where)
        for node, _ in reversed(shares):
            b = where.get(node)
            if b is None:
                b = 0
                for a in _args(node):
                    if isinstance(a, Value):
                        b |= bits.get(a, 0)
            bits[node] = b
        found = [0.0] * len(self.xs)
        for node, share in shares:
            b = bits.get(node, 0)
            while b:
                low = b & -b
                found[low.bit_length() - 1] += share
                b ^= low
        return found

    def spread(self, r: int, i: int) -> float:
        """The absolute gradient of value ``r`` by input ``i`` (-1: no path; inf: unknown)."""
        return self._of(r)[1][i]

    def analytic(self, r: int, i: int, a: float) -> float:
        """The round-off of the analytic derivative of value ``r`` by input ``i``: the model of
        :func:`analytic_roundoff`, plus what the partials written outside minigrad hold."""
        spread = self._of(r)[1][i]
        if not math.isfinite(spread):
            return ANALYTIC_ULPS * _ULP * abs(a) + _QUANTUM
        return analytic_roundoff(spread, a) + self.carried(r, i)

    def carried(self, r: int, i: int) -> float:
        """What partials written outside minigrad, and underflow, add to :meth:`analytic`."""
        extra = self._of(r)[2][i]
        return extra if math.isfinite(extra) else 0.0
