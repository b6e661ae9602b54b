"""How far a step may move an input before an op of the graph turns or bends.

A central difference sees an op's slope only over steps that keep the op's argument within
the op's own scale: a radian for the periodic ops, a unit or the distance to the nearest
singularity or kink for those that bend, have a pole or a kink (:func:`turn_scale`). A
forward written outside minigrad hides its ops (:func:`hidden`): it is held to a unit of
each argument, or the argument's own size (:func:`bend_scale`), and a custom rule's forward
of one argument to where its own differences turn (:func:`_smooth_over`). :func:`turns_of`
gives every value's limit by every input in one pass: a point's widest steps
(:class:`~minigrad.checking.numeric.estimate.Point`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from minigrad.checking.numeric import kinks
from minigrad.checking.numeric.estimate import MODEL_ROUNDOFF, grid_of, min_step
from minigrad.checking.numeric.rounding import (
    Shown,
    _cell,
    held,
    hidden,
    minigrads_forward,
    partial_at,
)
from minigrad.core.closure import Closure
from minigrad.core.rule import Rule
from minigrad.core.rules import TABLE
from minigrad.core.rules.arithmetic import DIV, POW
from minigrad.core.rules.exp_log import (
    CBRT,
    LOG,
    LOG1P,
    LOG2,
    LOG10,
    SIGMOID,
    SOFTPLUS,
    SQRT,
    tanh_growth,
)
from minigrad.core.rules.special import DIGAMMA, ERF, ERFC, GAMMA, GELU, LGAMMA, gauss_growth
from minigrad.core.rules.trig import (
    ACOS,
    ACOSH,
    ASIN,
    ASINH,
    ATAN,
    ATAN2,
    ATANH,
    COS,
    HYPOT,
    SIN,
    TAN,
    TANH,
)
from minigrad.core.value import Value, _args, toposort

__all__ = ["bend_scale", "turn_scale", "turns_of"]

#: The built-in rules, told apart from a user's at a glance.
_TABLE_RULES = frozenset(TABLE)
#: The ops that turn or bend on the scale of a unit of their argument: the periodic ones, over a
#: step that turns their argument by more than a radian, show the average slope over periods; the
#: bounded ones that saturate (and softplus and gelu, linear or flat beyond their bend), over a step
#: across the bend, show their whole rise over the step, which falls as ``1 / s`` at every larger
#: step alike and looks straight.
_PERIODIC = (SIN, COS, TAN, TANH, SIGMOID, ATAN, ASINH, ERF, ERFC, SOFTPLUS, GELU)
#: The ops with a pole or branch point at 0 of their argument (the divisor's for ``/``; at -1 for
#: log1p; see below for the rest), and ``**`` but for whole exponents from 0 up.
_POLAR = (DIV, LOG, LOG2, LOG10, LOG1P, SQRT, CBRT,
          ASIN, ACOS, ATANH, ACOSH, LGAMMA, GAMMA, DIGAMMA)  # fmt: skip
#: Of those, the ones whose branch points are at -1 and 1, and those with poles at every whole
#: number from 0 down.
_UNIT_BRANCHES = (ASIN, ACOS, ATANH, ACOSH)
_GAMMAS = (LGAMMA, GAMMA, DIGAMMA)
#: Of the ops that bend, those whose nearest singularities lie off the real line, at this distance
#: from it (erf, erfc and gelu: their bend, as if it were one); and a custom rule whose forward is
#: one of these math functions.
_OFF_AXIS: dict[Rule, float] = {TANH: math.pi / 2, SIGMOID: math.pi, SOFTPLUS: math.pi,
                                ATAN: 1.0, ASINH: 1.0, ERF: 1.0, ERFC: 1.0, GELU: 1.0}  # fmt: skip
_OFF_AXIS_MATH = ((math.tanh, math.pi / 2), (math.atan, 1.0), (math.asinh, 1.0), (math.erf, 1.0),
                  (math.erfc, 1.0))  # fmt: skip
#: A custom rule whose forward is one of these turns or bends too.
_PERIODIC_MATH = (math.sin, math.cos, math.tan, math.tanh, math.atan, math.asinh, math.erf,
                  math.erfc)  # fmt: skip
#: The ops of two arguments ``a``, ``b`` whose only singularity is at their origin: ``hypot`` and
#: ``atan2`` (``sqrt(a**2 + b**2)`` and ``atan(a / b)``, branch points at ``a = +-i b``), as
#: built-ins or as a custom rule's forward.
_ORIGIN = (ATAN2, HYPOT)
_ORIGIN_MATH = (math.atan2, math.hypot)
#: A custom rule whose forward is one of these math functions grows as the table's.
_GROWTH_MATH = {math.tanh: tanh_growth, math.erf: gauss_growth, math.erfc: gauss_growth}


def turn_scale(
    f: Value,
    x: Value,
    probed: dict[tuple[int, float], float] | None = None,
    seen: Shown | None = None,
) -> float:
    """The step of ``x`` that turns the argument of a periodic op of ``f`` by a radian,
    or moves that of an op that saturates by a unit (:data:`_PERIODIC`).

    Steps larger than that see ``sin``'s average over its periods, not its slope, and
    ``tanh``'s whole rise over the step (and, where an op has a pole, a step beyond it sees
    both sides: :func:`_radius`). ``t * t + sin(t)`` at 3e7 has central differences at steps
    of 279 and 2790 that agree on ``2 t`` and miss ``cos(t)``. A forward pass with the
    partials (signed, plus the rounding their paths' absolute sum may carry: :func:`_speed`)
    gives how fast each op's argument moves with ``x``. A rule written outside the table
    hides its forward, but its partials are graphs too: a periodic op there turns its
    derivative (``2 t + cos(t)`` for ``t * t + sin(t)`` in one rule), and steps beyond its
    scale average that derivative just the same. inf when no such op is found that ``x``
    reaches (or when a partial cannot be computed: the numbers decide alone).

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
    floor = 2.0 * min_step(x._data)  # (see _avoided)
    return _turns(f, {id(x): (1.0, 1.0)}, inside=True, probed=probed, seen=seen, floor=floor)


def _speed(signed: float, mass: float) -> float:
    """How fast a node moves: its signed speed summed over the paths from the input (``hypot(x,
    y) - x`` at ``x >> y`` nearly still), plus the rounding that sum and its partials carry,
    :data:`MODEL_ROUNDOFF` of the paths' absolute sum ``mass`` (a few dozen ops, each rounded
    once); ``mass`` at most. The absolute sum alone held ``sqrt`` of that difference, 3e-16
    from its branch point and moving by 4e-16 per unit, to steps of 3e-16."""
    return min(mass, abs(signed) + MODEL_ROUNDOFF * mass)


def _turns(
    f: Value,
    speed: dict[int, tuple[float, float]],
    *,
    inside: bool,
    probed: dict[tuple[int, float], float] | None = None,
    seen: Shown | None = None,
    floor: float = 0.0,
) -> float:
    """:func:`turn_scale` from the speeds of some of ``f``'s nodes, signed and their paths'
    absolute sum (``inside``: look into the partials of rules outside the table, once; ``seen``:
    closures' slopes, as in :func:`~.rounding.held`; ``floor``: see :func:`_avoided`)."""
    if not isinstance(f, Value):
        return math.inf
    smallest = math.inf
    for node in reversed(toposort([f])):
        rule = node._rule
        if rule is None:
            continue
        args = _args(node)
        moved = [speed.get(id(a), (0.0, 0.0)) if isinstance(a, Value) else (0.0, 0.0) for a in args]
        if not any(m for _, m in moved):
            continue
        for j, radius in _radius(node, probed):
            if moved[j][1] > 0.0:
                smallest = min(smallest, radius / _speed(*moved[j]))
        for j, radius in _avoided(rule, args):
            if moved[j][1] > 0.0 and (reach := radius / _speed(*moved[j])) >= floor:
                smallest = min(smallest, reach)
        floats = [a._data if isinstance(a, Value) else a for a in args]
        signed = mass = 0.0
        try:  # (the moved arguments' partials only)
            for j, (p, a, (v, m)) in enumerate(zip(rule.partials, args, moved, strict=False)):
                if m:
                    got = partial_at(p, a, floats, node._data)
                    slope = held(
                        rule, j, floats, node._data, got, (seen or {}).get((id(node), j), math.inf)
                    )
                    signed, mass = signed + slope * v, mass + abs(slope) * m
        except (ArithmeticError, ValueError, TypeError):
            return math.inf
        speed[id(node)] = (signed, mass)
        if inside and hidden(rule):
            seeds = [*moved, (signed, mass)]
            smallest = min(smallest, _inside(rule, floats, node._data, seeds, probed))
    return smallest


def _inside(
    rule: Rule,
    floats: Sequence[float],
    out: float,
    speeds: Sequence[tuple[float, float]],
    probed: dict[tuple[int, float], float] | None = None,
) -> float:
    """The turn scale of the periodic ops in ``rule``'s partials (called on Values for
    its arguments and ``out``, which move at ``speeds``: see :func:`_turns`); inf where
    none is found."""
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
            smallest = min(smallest, _turns(got, speed, inside=False, probed=probed))
    return smallest


def _radius(
    node: Value, probed: dict[tuple[int, float], float] | None = None
) -> list[tuple[int, float]]:
    """:func:`_reach`; for an op whose slope grows or decays exponentially (a rule's
    ``growth``: exp, tanh, erf, their derivatives), ``1 / growth`` of its argument at
    most, over which ``e**(g s)`` bends as a sine over its radian (the same Taylor
    terms, ``(g s)**k / k!``: the derivation is in ``docs/contributing.md``). Not
    where the slope is 0 (underflowed: tanh's at 1e20, where no step resolves one)."""
    found, rule, args = _reach(node, probed), node._rule, _args(node)
    growth = rule and (rule.growth or _GROWTH_MATH.get(rule.forward))
    if not rule or not growth or len(args) != 1 or not isinstance(u := args[0], Value):
        return found
    try:  # (a growth of 0, or a user's below it or NaN: no limit)
        rate = growth(u._data) if partial_at(rule.partials[0], u, [u._data], node._data) else 0.0
    except (ArithmeticError, ValueError, TypeError):
        return found
    cap = 1.0 / rate if rate > 0.0 else math.inf
    return [(j, min(r, cap)) for j, r in found] if found or cap == math.inf else [(0, cap)]


def _reach(
    node: Value, probed: dict[tuple[int, float], float] | None = None
) -> list[tuple[int, float]]:
    """Which argument of ``node``'s op a step may move by how much before a difference stops
    seeing the op's slope: a radian for the periodic ops; for the others that bend
    (:data:`_PERIODIC`) and those with a pole or branch point (:data:`_POLAR`), the distance
    from the argument to the nearest singularity, the radius of the op's Taylor series there
    (``1 / u`` at 0.44 from its pole: steps of 3e7 see ``c`` on both sides and agree on a
    slope of 0). None for the rest. A hidden op (outside the table) is held at each of its
    arguments: an argument of ``atan2`` written in a rule moves through 0 at 1e-12 of it,
    and steps of 2 saw the rule's shape there, not its slope."""
    rule = node._rule
    if rule is None:
        return []
    if rule in _ORIGIN or rule.forward in _ORIGIN_MATH:
        # Either argument reaches as far as the branch points, hypot(a, b) away: hypot(x, y) at 3e-9
        # bends within steps of 3e-9, and steps of 0.2 saw a straight line.
        args = _args(node)
        a, b = (v._data if isinstance(v, Value) else v for v in args)
        return [(j, math.hypot(a, b)) for j, v in enumerate(args) if isinstance(v, Value)]
    if rule not in _TABLE_RULES and rule.forward not in _PERIODIC_MATH:
        # Outside the table (sigmoid by hand, a closure, log1p with its pole at -1) an op may bend a
        # unit or its argument's size off.
        args = _args(node)
        first = args[0] if len(args) == 1 else None
        # A forward minigrad wrote (a derivative rule) is its own graph's: not probed.
        own = minigrads_forward(rule)
        if isinstance(first, Value) and not own and not isinstance(rule, Closure):
            at = first._data
            key = (id(rule), at)
            if probed is None or key not in probed:
                reach = _smooth_over(rule, at)
                if probed is None:
                    return [(0, reach)]
                probed[key] = reach
            return [(0, probed[key])]
        return [(j, _to_edge(rule, j, a._data)) for j, a in enumerate(args) if isinstance(a, Value)]
    if rule in _PERIODIC or rule.forward in _PERIODIC_MATH:
        # Those with poles off the real line (tanh's at +-i pi/2, sigmoid's and softplus's at +-i
        # pi, atan's branch points at +-i) reach as far as the nearest; erf, erfc and gelu, which
        # have none, as far as their bend at 0 as if it were one a unit off: a unit at the bend, far
        # more deep in saturation (erf at 1e20 is flat over every step float64 has there).
        pole = _OFF_AXIS.get(rule) or next(
            (d for f, d in _OFF_AXIS_MATH if rule.forward is f), None
        )
        if pole is None:
            return [(0, 1.0)]
        u = _args(node)[0]
        return [(0, max(1.0, math.hypot(u._data if isinstance(u, Value) else u, pole)))]
    if rule in _POLAR or rule is POW:
        args = _args(node)
        j = 1 if rule is DIV else 0
        u = args[j]
        if rule is POW and isinstance(args[1], float) and args[1] >= 0.0 and args[1] % 1.0 == 0.0:
            return []  # a power with a whole exponent >= 0 is a polynomial
        at = u._data if isinstance(u, Value) else u
        if rule in _UNIT_BRANCHES:  # branch points at -1 and 1
            return [(j, abs(1.0 - abs(at)))]
        if rule in _GAMMAS and at < 0.0:  # poles at 0, -1, -2, ...
            return [(j, abs(at - round(at)))]
        return [(j, abs(at + 1.0) if rule is LOG1P else abs(at))]
    return []


def _avoided(rule: Rule, args: Sequence[Value | float]) -> list[tuple[int, float]]:
    """Per argument of a hidden forward, how far it is from the nearest point its rule avoids
    (a kink or a pole it declares), where not at one (the ladder's to see): the noise floor's
    spacings across a kink 1.7e-6 off read it as noise, and a rule 0.5 off passed as a
    subgradient. Nearer to ``x`` than its finest steps, it is the ladder's too. A kink the
    forward shows (``abs``, ``relu``) the ladder sees from afar (``ladder._afar``)."""
    if not hidden(rule):
        return []
    near = ((j, [abs(a._data - e) for e in rule.avoid if e != a._data]) for j, a in
            enumerate(args) if isinstance(a, Value))  # fmt: skip
    return [(j, min(ds)) for j, ds in near if ds]


def turns_of(
    fs: Sequence[Value], xs: Sequence[Value], seen: Shown | None = None
) -> list[list[float]]:
    """:func:`turn_scale` for every value and input at once: per value of ``fs``, per input
    (an op in one value's graph does not hold another's steps: ``(R(a, b), sin(a))``, whose
    ``R`` is 1e-8 off, agreed to 7 digits held to ``sin``'s radian).

    Each op that turns or bends needs the speed of its argument by each input. One pass
    forwards over the graph of all those arguments together carries each node's speeds
    (:func:`_turns`) by the inputs it depends on (few, in a chain or an activation's
    argument): linear in the graph, where a walk back from each argument is quadratic in a
    chain of 10,000 tanh. Where a rule written outside minigrad hides its forward, its
    partials are read as :func:`turn_scale` does, one input at a time."""
    nodes = toposort(list(fs))
    unbounded = [[math.inf] * len(xs) for _ in fs]
    if any(n._rule is not None and hidden(n._rule) for n in nodes):
        probed: dict[tuple[int, float], float] = {}  # each hidden forward probed once
        return [[turn_scale(f, x, probed, seen) for x in xs] for f in fs]
    capped = []
    for node in nodes:
        for j, radius in _radius(node):
            arg = _args(node)[j]
            if isinstance(arg, Value):
                capped.append((node, arg, radius))
    if not capped:
        return unbounded
    where = {id(x): i for i, x in enumerate(xs)}
    speeds: dict[int, dict[int, tuple[float, float]]] = {}  # signed, and paths' (_turns)
    for n in reversed(toposort([arg for _, arg, _ in capped])):  # the inputs first
        mine: dict[int, tuple[float, float]] = {}
        if n._rule is not None:
            args = _args(n)
            floats = [a._data if isinstance(a, Value) else a for a in args]
            pairs = zip(args, n._rule.partials, strict=False)
            rule, out = n._rule, n._data  # (a closure's slopes as func shows them: seen)
            limits = [(seen or {}).get((id(n), j), math.inf) for j in range(len(args))]
            try:
                slopes = [
                    held(rule, j, floats, out, partial_at(p, a, floats, out), limits[j])
                    for j, (a, p) in enumerate(pairs)
                ]
            except (ArithmeticError, ValueError, TypeError):
                return unbounded  # as turn_scale: the numbers decide alone
            for a, slope in zip(args, slopes, strict=False):
                if isinstance(a, Value) and slope != 0.0:
                    for i, (v, m) in speeds[id(a)].items():
                        was, mass = mine.get(i, (0.0, 0.0))
                        mine[i] = (was + slope * v, mass + abs(slope) * m)
        at = where.get(id(n))
        if at is not None:
            was, mass = mine.get(at, (0.0, 0.0))
            mine[at] = (was + 1.0, mass + 1.0)
        speeds[id(n)] = mine
    turns = unbounded
    inside = [{id(n) for n in toposort([f])} for f in fs] if len(fs) > 1 else [set()]
    for node, arg, radius in capped:
        rows = [r for r in range(len(fs)) if len(fs) == 1 or id(node) in inside[r]]
        for i, (v, m) in speeds[id(arg)].items():
            if (speed := _speed(v, m)) > 0.0:  # (a subnormal mass has no part that rounds)
                for r in rows:
                    turns[r][i] = min(turns[r][i], radius / speed)
    return turns


#: How much of a difference's change from a step to its half the next halving may keep and still
#: follow the ``s**2`` law (a quarter, and the ``s**4`` terms).
_FALL = 0.3
#: The probe's first step, a millionth of a unit, and how much it grows from one probe to the next
#: (a cap is within 4 of where the law breaks: a cosine's 4, the table's radian). Measured: a first
#: step of 2**-16 gives the same verdicts on rounds 10, 12a and 13 and hard.py; 2**-24 three false
#: alarms more in round 10, where a staircase forward's cells break the law at the first probe's
#: steps.
_FIRST, _GROW = 2.0**-20, 4.0
#: The least change of a difference, as a part of the differences, that counts as the forward's
#: shape and not its rounding (a turn moves it by a part of itself). Measured: 2**-16 and 2**-24
#: give the same verdicts on those rounds and hard.py; gelu written with 1 + erf at -3.1 (800 ulps
#: of rounding inside) is held at 2**-28 and read as turning at 2**-32.
_TURN = 2.0**-20


def _smooth_over(rule: Rule, u: float) -> float:
    """How far a hidden forward's argument ``u`` may move, read off the forward itself: from a
    millionth of a unit up by :data:`_GROW`, the first step ``t`` at which its central
    differences at ``t``, ``t / 2``, ``t / 4`` break the ``s**2`` law (a smooth function's
    change falls by 4 per halving) beyond its round-off, as a cosine's do past a radian (at
    ``t = 4``; the table's periodic ops are held to a radian); :func:`bend_scale` at most, and
    where the law fails at the first probe (noise, or a turn finer still). A cosine hidden in
    a rule at ``1e6`` turns within a step of 4, and a graph beside it may hide that: ``x * x +
    1e-3 cos(x)`` there has differences at steps of ``1e4`` that agree on ``2 x`` (the
    cosine's slope is below ``x * x``'s round-off at every step that sees it). Going up, a
    step that follows the law by chance (a cosine's differences over many periods) is never
    reached. A kink breaks the law too, at the first step that crosses it; where the next
    step follows the ``1 / s`` law (a kink, a jump or a bend seen from afar) the cap stays
    :func:`bend_scale`: the kink is the ladder's to see (:mod:`~minigrad.checking.numeric.kinks`),
    from steps on both sides of it (a relu in a rule at ``1e8 + 1e-6``, capped at ``4e-6``,
    had slopes no step resolved)."""
    top = bend_scale(u)
    try:
        out = rule.forward(u)
    except Exception:  # (it gave the graph's value once; a forward that now refuses)
        return top
    cell = _cell(rule, [u], [True], out) if type(out) is float else 0.0
    t = max(_FIRST, 64.0 * math.ulp(u))
    first = _law(rule, u, t, cell) if t < top else True
    if first is None:
        # An edge of its domain within the first probe (asin 1e-8 from -1, sqrt at 1e-200): held
        # inside it, as the table's ops are held to their branch points.
        t = min(t, abs(u)) if u else t
        while t > 64.0 * math.ulp(u) and _law(rule, u, t, cell) is None:
            t /= _GROW
        return t if _law(rule, u, t, cell) is not None else top
    if t >= top or not first:
        return top
    searched = False  # once: a stair's height is every stair's
    while t < top:
        if not _law(rule, u, t, cell):
            # Broken by a riser (stairs: exp(c u) - 1 under u**3), the law holds over the stair's
            # height as over a grid's cell; broken by a turn, it holds over none.
            jump = (
                0.0 if searched else kinks.riser(functools.partial(_value, rule), 0, u - t, u + t)
            )
            if jump <= cell:
                break
            searched, cell = True, jump
            continue
        t *= _GROW
    if t < top and _law(rule, u, t * _GROW, cell, afar=True):
        return top  # a kink or a bend seen from afar: the ladder's to see, as before
    return min(t, top)


def _value(rule: Rule, u: float) -> list[float] | None:
    """``rule``'s forward at ``u``; None off its domain, or where it gives no finite float."""
    try:
        v = rule.forward(u)
    except Exception:  # off its domain
        return None
    return [v] if type(v) is float and math.isfinite(v) else None


def _law(rule: Rule, u: float, t: float, cell: float, afar: bool = False) -> bool | None:
    """Whether ``rule``'s forward at ``u`` follows the ``s**2`` law over ``t``, beyond its
    round-off (an ulp of its values, the grid they lie on, or the ``cell`` it rounds to); with
    ``afar``, the ``1 / s`` law instead (each change twice the last, within a quarter): a kink,
    a jump or a bend that every step crosses, whose whole rise each difference sees, where a
    turning forward's differences follow no law. None where it gives no finite float at a
    probe (off its domain)."""
    try:
        ds, quantum = [], cell
        for s in (t, t / 2.0, t / 4.0):
            hi, lo = rule.forward(u + s), rule.forward(u - s)
            if type(hi) is not float or type(lo) is not float:
                return None  # off its domain (a complex root), or not a float at all
            # An ulp of the values, or the grid they lie on (cos(x) - 1 near 0: an ulp of 1), the
            # coarser.
            quantum = max(quantum, *(max(math.ulp(v), grid_of(v)) for v in (hi, lo)))
            ds.append((hi - lo) / (2.0 * s))
    except Exception:  # off its domain at this step
        return None
    if not all(map(math.isfinite, ds)):
        return None
    noise = 16.0 * quantum / t  # over the finest step, twice
    # A turn moves the slope by a part of itself; a change of under a millionth of it is the
    # forward's own rounding (gelu by 1 + erf at -3.1 cancels 800 ulps of its value inside, more
    # than its ulp or any grid shows).
    noise = max(noise, _TURN * max(map(abs, ds)))
    if afar:
        return kinks.afar(ds[0], ds[1], ds[2], noise)
    return abs(ds[1] - ds[2]) <= _FALL * abs(ds[0] - ds[1]) + noise


def _to_edge(rule: Rule, j: int, u: float) -> float:
    """How far argument ``j`` of a hidden op of several arguments may move: :func:`bend_scale`,
    or to an end of its declared domain (its avoided points: :func:`_avoided`), the nearer:
    ``exp(log(x) + log(y))`` declared from 0 at ``y = 1e-150`` took steps of ``1e-22``."""
    lo, hi = rule.domain[j] if j < len(rule.domain) else (-math.inf, math.inf)
    ends = (abs(u - e) for e in (lo, hi) if math.isfinite(e) and e != u)
    return min([bend_scale(u), *ends])


def bend_scale(u: float) -> float:
    """How far a hidden op's argument ``u`` may move before it may bend: 1, or ``|u|``."""
    return max(1.0, abs(float(u)))
