"""How much round-off a computed value and its computed gradient can hold, read off the graph.

A check compares two computed numbers, and each carries the round-off of the
floats it was made from. :mod:`minigrad.checking.numeric.estimate` models the
numerical side's share as an ulp or so of the function's value, which is
right for most functions and far too small where large intermediates cancel:
``(x + 1e10) - 1e10`` is about ``x`` but off by up to an ulp of 1e10 (2e-6),
and so is ``log1p(exp(x)) - x`` at 15 by an ulp of 15. The analytic side has
the same problem where the paths of the chain rule cancel.

One walk backwards over the graph of a value ``f`` (a reverse pass with the
absolute values of the partials) gives both, by first-order error analysis:

- each node's result is rounded once, by up to an ulp of its value, and that
  error reaches ``f`` scaled by ``|d f / d node|``: the value's round-off is
  at most ``sum over nodes of ulp(node) * |adjoint|`` (an ulp of 1e10 times 1
  in the example above);
- each input's gradient is a sum over paths of products of partials, each
  product rounded at every step: its round-off is a small multiple of the
  unit round-off times ``sum over paths of |product|`` (the "absolute
  gradient").

A partial of the user's own rule rounds by more where it cancels inside
(``1 / (1 - x * x)`` for atanh at ``1 - 1e-9`` is 0.25 off 5e8): its share is
read off the partial's own graph, called once with Values
(:func:`_partial_noise`). minigrad's own partials are swept against SymPy to
a few ulps. One float pass per value, made only where a check needs it.

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

from minigrad.core.rule import Partial, Rule
from minigrad.core.rules import TABLE
from minigrad.core.rules.arithmetic import ADD, DIV, MUL, NEG, POW, SUB
from minigrad.core.rules.exp_log import CBRT, LOG, LOG1P, LOG2, LOG10, SIGMOID, SOFTPLUS, SQRT
from minigrad.core.rules.special import DIGAMMA, ERF, ERFC, GAMMA, GELU, LGAMMA
from minigrad.core.rules.trig import ACOS, ACOSH, ASIN, ATAN, ATANH, COS, SIN, TAN, TANH
from minigrad.core.value import Value, _args, toposort

__all__ = [
    "ANALYTIC_ULPS",
    "GraphRoundoff",
    "analytic_roundoff",
    "bend_scale",
    "hidden",
    "minigrads_own",
    "partial_at",
    "read_roundoff",
    "turn_scale",
]

#: Where the partials accurate to a few ulps are written: the rule table and
#: its families (pow's and the polar functions' derivatives), swept against
#: SymPy to 1e-12 at every magnitude (``benchmarks/accuracy.py``).
_ACCURATE = "minigrad.core."
#: The built-in rules, and their partials, told apart from a user's at a glance.
_TABLE_RULES = frozenset(TABLE)
_TABLE_PARTIALS = frozenset(p for rule in TABLE for p in rule.partials if callable(p))

#: Relative round-off of one rounded result: an ulp (twice the unit round-off,
#: which also covers library functions good to one ulp).
_ULP = 2.0**-52
#: The ops that turn or bend on the scale of a unit of their argument: the
#: periodic ones, over a step that turns their argument by more than a radian,
#: show the average slope over periods; the bounded ones that saturate (and
#: softplus and gelu, linear or flat beyond their bend), over a step that moves
#: their argument across the bend, show their whole rise over the step, which
#: falls as ``1 / s`` at every larger step alike and looks straight.
_PERIODIC = (SIN, COS, TAN, TANH, SIGMOID, ATAN, ERF, ERFC, SOFTPLUS, GELU)
#: The ops with a pole or branch point at 0 of their argument (the divisor's
#: for ``/``; at -1 for log1p; see below for the rest), and ``**`` but for
#: whole exponents from 0 up.
_POLAR = (DIV, LOG, LOG2, LOG10, LOG1P, SQRT, CBRT,
          ASIN, ACOS, ATANH, ACOSH, LGAMMA, GAMMA, DIGAMMA)  # fmt: skip
#: Of those, the ones whose branch points are at -1 and 1, and those with poles
#: at every whole number from 0 down.
_UNIT_BRANCHES = (ASIN, ACOS, ATANH, ACOSH)
_GAMMAS = (LGAMMA, GAMMA, DIGAMMA)
#: Of the ops that bend, those whose nearest singularities lie off the real
#: line, at this distance from it (erf, erfc and gelu: their bend, as if it
#: were one); and a custom rule whose forward is one of these math functions.
_OFF_AXIS: dict[Rule, float] = {
    TANH: math.pi / 2, SIGMOID: math.pi, SOFTPLUS: math.pi, ATAN: 1.0, ERF: 1.0, ERFC: 1.0,
    GELU: 1.0,
}  # fmt: skip
_OFF_AXIS_MATH = ((math.tanh, math.pi / 2), (math.atan, 1.0), (math.erf, 1.0), (math.erfc, 1.0))
#: A custom rule whose forward is one of these turns or bends too.
_PERIODIC_MATH = (math.sin, math.cos, math.tan, math.tanh, math.atan, math.erf, math.erfc)
#: Relative round-off of a correctly rounded arithmetic result (+, -, *, /,
#: negation): half an ulp, the unit round-off, as IEEE 754 guarantees.
_HALF = 2.0**-53
#: The ops IEEE 754 rounds correctly: their results are off by half an ulp at most.
_EXACT = frozenset((ADD, SUB, MUL, DIV, NEG))
#: The least round-off of a result: a subnormal quantum.
_QUANTUM = 2.0**-1074
#: How many ulps of the absolute gradient the analytic side may be off: each
#: path is a product of a few partials, each partial good to an ulp or two,
#: and the sums add one rounding each. Tuned on the checks of the test suite
#: (products of a dozen ops, sums of a few hundred paths).
ANALYTIC_ULPS = 32.0


def read_roundoff(f: Value, xs: Sequence[Value]) -> tuple[float, list[float]]:
    """The round-off ``f``'s computed value may hold, and per input its absolute gradient.

    Args:
        f: A computed value (its graph is walked, nothing is changed).
        xs: The inputs.

    Returns:
        ``(noise, spread)``: an absolute bound on the round-off of ``f.data``
        (first order, inf when a partial could not be computed) and, per
        input, ``sum over paths of |product of partials|``, or -1 when no
        path leads from the input to ``f``.
    """
    noise, spread, _ = _read(f, xs, partials=False)
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


def _read(
    f: Value, xs: Sequence[Value], *, partials: bool = True
) -> tuple[float, list[float], list[float]]:
    """:func:`read_roundoff`, and per input the round-off the partials written
    outside minigrad add to its derivative (:func:`_partial_noise`; with
    ``partials`` False, 0)."""
    if not isinstance(f, Value):
        return math.inf, [math.inf] * len(xs), [math.inf] * len(xs)
    adjoint: dict[Value, float] = {f: 1.0}
    # Per node: what the inexact partials below f add to d f / d node, to first
    # order: over each edge, the partial's round-off times the adjoint above it,
    # carried down the rest of the path by the absolute partials.
    carried: dict[Value, float] = {}
    noise = 0.0
    # The slots and locals, not the properties: this walk runs per value of every level.
    get_adjoint, get_carried = adjoint.get, carried.get
    for node in toposort([f]):
        rule = node._rule
        if rule is None:
            continue
        weight = get_adjoint(node, 0.0)
        extra = get_carried(node, 0.0)
        args = _args(node)
        if weight == 0.0 and extra == 0.0:
            # A partial of 0 on the way (tanh far out): the inputs beyond are
            # still reached, with an absolute gradient of 0 but not "no path".
            for arg in args:
                if type(arg) is not float:
                    adjoint.setdefault(arg, 0.0)  # type: ignore[arg-type]
            continue
        out = node._data
        noise += weight * max(abs(out) * (_HALF if rule in _EXACT else _ULP), _QUANTUM)
        floats = [a if type(a) is float else a._data for a in args]  # type: ignore[union-attr]
        inexact = partials and weight > 0.0
        partial_of = rule.partials
        for j, arg in enumerate(args):
            if not isinstance(arg, Value):
                continue
            partial = partial_of[j]
            try:
                slope = partial_at(partial, arg, floats, out)
            except (ArithmeticError, ValueError, TypeError):
                return math.inf, [math.inf] * len(xs), [math.inf] * len(xs)
            adjoint[arg] = get_adjoint(arg, 0.0) + weight * abs(slope)
            own = 0.0
            if inexact and not minigrads_own(partial):
                own = _partial_noise(rule, j, floats, out) * weight
            carried[arg] = get_carried(arg, 0.0) + extra * abs(slope) + own
    if not math.isfinite(noise):
        noise = math.inf
    # -1: no path from the input to f at all.
    spread = [adjoint.get(x, -1.0) for x in xs]
    return noise, spread, [carried.get(x, 0.0) for x in xs]


def _partial_noise(rule: Rule, j: int, floats: Sequence[float], out: float) -> float:
    """The round-off of ``rule``'s partial ``j`` at a point, read off its own graph.

    The partial is called with Values for its arguments and ``out`` (its
    graph read as any value's); ``out`` is a rounded result, an ulp off,
    and that reaches the partial too. 0 where the partial is a constant, or
    cannot be called with Values (a partial written with ``math.tanh``): the
    model of :func:`analytic_roundoff` then stands alone.

    Example:
        >>> from minigrad import Rule
        >>> import math
        >>> naive = Rule("atanh", math.atanh, (lambda x, out: 1.0 / (1.0 - x * x),))
        >>> x = 1.0 - 1e-9
        >>> 0.25 < _partial_noise(naive, 0, [x], math.atanh(x)) < 1e3  # of a slope of 5e8
        True
    """
    partial = rule.partials[j]
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


def analytic_roundoff(spread: float, analytic: float) -> float:
    """How far round-off alone can move an analytic derivative with this absolute gradient.

    Example:
        >>> analytic_roundoff(2.0, 1e-7) > 2.0 * 2.0**-52
        True
    """
    return ANALYTIC_ULPS * _ULP * max(spread, abs(analytic), 0.0) + _QUANTUM


def turn_scale(f: Value, x: Value) -> float:
    """The step of ``x`` that turns the argument of a periodic op of ``f`` by a radian,
    or moves that of an op that saturates by a unit (:data:`_PERIODIC`).

    Steps larger than that see ``sin``'s average over its periods, not its
    slope, and ``tanh``'s whole rise over the step (and, where an op has a
    pole, a step beyond it sees both sides: :func:`_radius`). ``t * t +
    sin(t)`` at 3e7 has central differences at steps of 279 and 2790 that
    agree on ``2 t`` and miss ``cos(t)``. A forward pass with the absolute
    values of the partials bounds how fast each op's argument moves with
    ``x``. A rule written outside the table hides its forward, but its
    partials are graphs too: a periodic op there turns its derivative (``2 t
    + cos(t)`` for ``t * t + sin(t)`` in one rule), and steps beyond its
    scale average that derivative just the same. inf when no such op is
    found that ``x`` reaches (or when a partial cannot be computed: the
    numbers decide alone).

    Example:
        >>> from minigrad import Rule, Value, cos, sin
        >>> t = Value(3e7)
        >>> turn_scale(t * t + sin(t), t), turn_scale(t * t, t)
        (1.0, inf)
        >>> round(turn_scale(sin(1e3 * t), t), 12)
        0.001
        >>> def tsq_sin(x):
        ...     return x * x + math.sin(x)
        >>> tsq_sin.__module__ = "my_ops"  # a forward the graph does not show
        >>> inside = Rule("tsq_sin", tsq_sin, (lambda x, out: 2 * x + cos(x),))
        >>> turn_scale(inside(t), t)
        1.0
    """
    return _turns(f, {id(x): 1.0}, inside=True)


def _turns(f: Value, speed: dict[int, float], *, inside: bool) -> float:
    """:func:`turn_scale` from the speeds of some of ``f``'s nodes (``inside``: look
    into the partials of rules written outside the table, once)."""
    if not isinstance(f, Value):
        return math.inf
    smallest = math.inf
    for node in reversed(toposort([f])):
        rule = node._rule
        if rule is None:
            continue
        args = _args(node)
        moved = [speed.get(id(a), 0.0) if isinstance(a, Value) else 0.0 for a in args]
        if not any(moved):
            continue
        reach = _radius(node)
        if reach is not None and moved[reach[0]] > 0.0:
            smallest = min(smallest, reach[1] / moved[reach[0]])
        floats = [a._data if isinstance(a, Value) else a for a in args]
        each = zip(rule.partials, args, moved, strict=False)
        try:  # (the moved arguments' partials only)
            total = sum(m * abs(partial_at(p, a, floats, node._data)) for p, a, m in each if m)
        except (ArithmeticError, ValueError, TypeError):
            return math.inf
        speed[id(node)] = total
        if inside and hidden(rule):
            smallest = min(smallest, _inside(rule, floats, node._data, [*moved, total]))
    return smallest


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
    return not (getattr(rule.forward, "__module__", None) or "").startswith("minigrad.")


def _inside(rule: Rule, floats: Sequence[float], out: float, speeds: Sequence[float]) -> float:
    """The turn scale of the periodic ops in ``rule``'s partials (called on Values for
    its arguments and ``out``, which move at ``speeds``); inf where none is found."""
    smallest = math.inf
    leaves = [Value(v) for v in (*floats, out)]
    for partial in rule.partials:
        if isinstance(partial, float):
            continue
        try:
            got = partial(*leaves)
        except Exception:  # a partial that takes no Values: nothing to read
            continue
        if isinstance(got, Value):
            speed = {id(leaf): v for leaf, v in zip(leaves, speeds, strict=True)}
            smallest = min(smallest, _turns(got, speed, inside=False))
    return smallest


def _radius(node: Value) -> tuple[int, float] | None:
    """Which argument of ``node``'s op a step may move by how much before a
    difference stops seeing the op's slope: a radian for the periodic ops; for
    the others that bend (:data:`_PERIODIC`) and those with a pole or branch
    point (:data:`_POLAR`), the distance from the argument to the nearest
    singularity, the radius of the op's Taylor series there (``1 / u`` at 0.44
    from its pole: steps of 3e7 see ``c`` on both sides and agree on a slope
    of 0). None for the rest."""
    rule = node._rule
    if rule is None:
        return None
    if rule not in _TABLE_RULES and rule.forward not in _PERIODIC_MATH:
        # Outside the table (sigmoid by hand, a closure, log1p with its pole at -1) an
        # op may bend a unit or its argument's size off.
        one = _args(node)
        if len(one) == 1 and isinstance(one[0], Value):
            return 0, bend_scale(one[0]._data)
        return None
    if rule in _PERIODIC or rule.forward in _PERIODIC_MATH:
        # Those with poles off the real line (tanh's at +-i pi/2, sigmoid's and
        # softplus's at +-i pi, atan's branch points at +-i) reach as far as the
        # nearest; erf, erfc and gelu, which have none, as far as their bend at 0
        # as if it were one a unit off: a unit at the bend, far more deep in
        # saturation (erf at 1e20 is flat over every step float64 has there).
        pole = _OFF_AXIS.get(rule) or next(
            (d for f, d in _OFF_AXIS_MATH if rule.forward is f), None
        )
        if pole is None:
            return 0, 1.0
        u = _args(node)[0]
        return 0, max(1.0, math.hypot(u._data if isinstance(u, Value) else u, pole))
    if rule in _POLAR or rule is POW:
        args = _args(node)
        j = 1 if rule is DIV else 0
        u = args[j]
        if rule is POW and isinstance(args[1], float) and args[1] >= 0.0 and args[1] % 1.0 == 0.0:
            return None  # a power with a whole exponent >= 0 is a polynomial
        at = u._data if isinstance(u, Value) else u
        if rule in _UNIT_BRANCHES:  # branch points at -1 and 1
            return j, abs(1.0 - abs(at))
        if rule in _GAMMAS and at < 0.0:  # poles at 0, -1, -2, ...
            return j, abs(at - round(at))
        return j, abs(at + 1.0) if rule is LOG1P else abs(at)
    return None


def _turns_of(fs: Sequence[Value], xs: Sequence[Value]) -> list[float]:
    """:func:`turn_scale` for every input at once (the smallest over ``fs``).

    Each op that turns or bends needs the speed of its argument by each input.
    One pass forwards over the graph of all those arguments together, with the
    absolute partials, carries each node's speeds by the inputs it depends on
    (few, in a chain or an activation's argument): linear in the graph, where
    a walk back from each argument is quadratic in a chain of 10,000 tanh.
    Where a rule written outside minigrad hides its forward, its partials are
    read as :func:`turn_scale` does, one input at a time.
    """
    nodes = toposort(list(fs))
    turns = [math.inf] * len(xs)
    if any(n._rule is not None and hidden(n._rule) for n in nodes):
        return [min((turn_scale(f, x) for f in fs), default=math.inf) for x in xs]
    capped = []
    for node in nodes:
        reach = _radius(node)
        arg = _args(node)[reach[0]] if reach is not None else None
        if reach is not None and isinstance(arg, Value):
            capped.append((arg, reach[1]))
    if not capped:
        return turns
    where = {id(x): i for i, x in enumerate(xs)}
    speeds: dict[int, dict[int, float]] = {}
    for n in reversed(toposort([arg for arg, _ in capped])):  # the inputs first
        mine: dict[int, float] = {}
        if n._rule is not None:
            args = _args(n)
            floats = [a._data if isinstance(a, Value) else a for a in args]
            pairs = zip(args, n._rule.partials, strict=False)
            try:
                slopes = [abs(partial_at(p, a, floats, n._data)) for a, p in pairs]
            except (ArithmeticError, ValueError, TypeError):
                return [math.inf] * len(xs)  # as turn_scale: the numbers decide alone
            for a, slope in zip(args, slopes, strict=False):
                if isinstance(a, Value) and slope > 0.0:
                    for i, v in speeds[id(a)].items():
                        mine[i] = mine.get(i, 0.0) + slope * v
        at = where.get(id(n))
        if at is not None:
            mine[at] = mine.get(at, 0.0) + 1.0
        speeds[id(n)] = mine
    for arg, radius in capped:
        for i, v in speeds[id(arg)].items():
            if v > 0.0:
                turns[i] = min(turns[i], radius / v)
    return turns


def partial_at(p: Partial, a: Value | float, floats: Sequence[float], out: float) -> float:
    """A partial by argument ``a`` as a float; 0 by a constant (pow's exponent: not asked)."""
    v = 0.0 if type(a) is float else p if isinstance(p, float) else p(*floats, out)
    return v._data if isinstance(v, Value) else float(v)


def bend_scale(u: float) -> float:
    """How far a hidden op's argument ``u`` may move before it may bend: 1, or ``|u|``."""
    return max(1.0, abs(u))


class GraphRoundoff:
    """The round-off a level's values and their gradients hold, read off the graph on demand
    (:func:`read_roundoff` once per value).

    Args:
        fs: The level's values (Values; anything else holds an unknown round-off).
        xs: The inputs.
    """

    def __init__(self, fs: Sequence[Value], xs: Sequence[Value]) -> None:
        self.fs = fs
        self.xs = xs
        self._read: dict[int, tuple[float, list[float], list[float]]] = {}
        self._turns: list[float] | None = None

    def _of(self, r: int) -> tuple[float, list[float], list[float]]:
        found = self._read.get(r)
        if found is None:
            found = self._read[r] = _read(self.fs[r], self.xs)
        return found

    def noise(self, r: int) -> float:
        """The absolute round-off of value ``r`` (0 where the graph cannot tell: a
        value that is not a minigrad Value, a partial that fails on floats; the
        estimator's model then applies)."""
        noise = self._of(r)[0]
        return noise if math.isfinite(noise) else 0.0

    def spread(self, r: int, i: int) -> float:
        """The absolute gradient of value ``r`` by input ``i`` (-1: no path in the
        graph; inf: the graph cannot tell)."""
        return self._of(r)[1][i]

    def turn(self, i: int) -> float:
        """The largest step of input ``i`` that turns or bends no op of any value by
        more than a unit of its argument (:func:`turn_scale`; inf where there is none)."""
        if self._turns is None:
            self._turns = _turns_of(self.fs, self.xs)
        return self._turns[i]

    def analytic(self, r: int, i: int, a: float) -> float:
        """The round-off of the analytic derivative of value ``r`` by input ``i``: the
        model of :func:`analytic_roundoff`, plus what the partials written outside
        minigrad hold (:func:`_partial_noise`)."""
        _, spreads, carried = self._of(r)
        spread = spreads[i]
        if not math.isfinite(spread):
            return ANALYTIC_ULPS * _ULP * abs(a) + _QUANTUM
        extra = carried[i] if math.isfinite(carried[i]) else 0.0
        return analytic_roundoff(spread, a) + extra
