"""Lab 03's battery for a student's engine: which checks there are for what it supports.

:func:`battery` builds the checks from whatever the engine's class supports
(:func:`support`): every operator and method, with nodes on both sides and
a number on either side, each also inside bigger graphs (:func:`graphs`);
powers with a number exponent; intermediate nodes used by two ops (where a
wrong topological order shows); a node beside a copy of the same data
(equality by value); a deep chain (a recursive sort); and ``backward()``
twice (a pass that replaces ``.grad``, or state kept between calls).

Each check draws its points the way minigrad draws its own rules' points
(:meth:`Rule.intervals <minigrad.Rule.intervals>`: inside the sample box,
away from domain edges and kinks), and from every piece of the domain in
turn: both sides of a kink, both sides of a pole (:class:`Draw`).
:mod:`minigrad.checking.lab.trials` runs a check, :mod:`minigrad.checking.lab.signature`
names the bug from the results.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from minigrad.checking.run.engines import engine_name, fits
from minigrad.core import rules
from minigrad.core.rule import Rule

__all__ = ["KINDS", "METHODS", "Check", "Graph", "battery", "chain", "graphs", "load_engine"]
__all__ += ["one_line", "refused", "support"]

#: The methods of minigrad's ``Value`` a student's engine may have, checked
#: against minigrad's rule of the same name when it does.
METHODS = (
    *("exp", "log", "tanh", "relu", "sigmoid", "sin", "cos", "sqrt", "softplus", "log1p"),
    *("expm1", "tan", "atan", "sinh", "cosh", "asinh", "erf"),
)

#: The kinds of check, in the order rows are listed.
KINDS = ("op", "number", "reflected", "order", "identity", "depth", "twice")

#: Features: what a check needs of the engine (see :func:`support`).
_BINARY = {"+": "__add__", "-": "__sub__", "*": "__mul__", "/": "__truediv__"}
_REFLECTED = {"+": "__radd__", "-": "__rsub__", "*": "__rmul__", "/": "__rtruediv__"}

Build = Callable[..., object]


@dataclass
class Check:
    """One check of the battery.

    Attributes:
        name: How the row is named: the expression (``x - y``, ``2.5 - x``).
        kind: One of :data:`KINDS`.
        operands: The names of the inputs that are nodes (``x``, ``y``).
        build: ``build(*nodes, *constants)`` returns the output.
        draw: ``draw(rng, k)`` returns point ``k``: inputs, then constants.
        roles: What each input is to the op ("the right operand y").
        constants: The names of the constants (``c``), drawn after the inputs.
        optional: An optional form (a node exponent, a number base): when the
            engine refuses it (:func:`refused`), the check is skipped.
    """

    name: str
    kind: str
    operands: tuple[str, ...]
    build: Build
    draw: Draw
    roles: tuple[str, ...] = ()
    constants: tuple[str, ...] = ()
    optional: bool = False

    def points(self, asked: int) -> int:
        """How many points to check: ``asked``, and at least one per piece of the domain."""
        return max(asked, self.draw.pieces)


#: The kinds of check whose op is also checked inside bigger graphs.
OP_KINDS = ("op", "number", "reflected")


@dataclass(frozen=True)
class Graph:
    """One graph a check runs: its op at the output, or inside a bigger graph.

    ``label`` says where the op is (``alone``, ``weighted``, ``pair``,
    ``reused x``, ``x - x``: see :func:`graphs`), ``expression`` writes the
    graph out, ``leaves`` names its inputs, and ``build(leaves, constants,
    w)`` makes it, ``w`` a weight.
    """

    label: str
    expression: str
    leaves: tuple[str, ...]
    build: Callable[[Sequence[object], Sequence[float], float], object]


def graphs(check: Check) -> list[Graph]:
    """The graphs ``check`` runs: its op alone (at the output), then an op inside bigger ones.

    At the output ``out.grad`` is 1, which hides a ``_backward`` that leaves
    it out (``weighted``: times a weight); one node of an op hides one that
    reads a number another node overwrote (``pair``: two nodes of it); an
    input used once hides one that assigns ``.grad =`` (``reused x``: plus x,
    whose other user ran first), one node as both operands one that skips
    ``other`` when it is ``self``.

    Example:
        >>> from minigrad import Value
        >>> check = battery(Value)[0][1]
        >>> [(g.label, g.expression) for g in graphs(check)]  # doctest: +NORMALIZE_WHITESPACE
        [('alone', 'x - y'), ('weighted', '(x - y) * w'), ('pair', "(x - y) * (x' - y')"),
         ('reused x', '(x - y) + x'), ('reused y', '(x - y) + y'), ('x - x', 'x - x')]
    """
    f, names, n = check.build, check.operands, len(check.operands)
    own = Graph("alone", check.name, names, lambda xs, cs, w: f(*xs, *cs))
    if check.kind not in OP_KINDS:
        return [own]
    term = f"({check.name})" if " " in check.name else check.name
    twin, pair = re.sub(r"\b([xy])\b", r"\1'", term), names + tuple(f"{x}'" for x in names)
    weighted = lambda xs, cs, w: f(*xs, *cs) * w  # noqa: E731
    two = lambda xs, cs, w: f(*xs[:n], *cs) * f(*xs[n:], *cs)  # type: ignore[operator]  # noqa: E731
    found = [own, Graph("weighted", f"{term} * w", names, weighted)]
    found.append(Graph("pair", f"{term} * {twin}", pair, two))
    for i, x in enumerate(names):
        reuse = lambda xs, cs, w, i=i: f(*xs, *cs) + xs[i]  # noqa: E731
        found.append(Graph(f"reused {x}", f"{term} + {x}", names, reuse))
    if n == 2:
        same = check.name.replace("y", "x")
        found.append(Graph(same, same, names[:1], lambda xs, cs, w: f(xs[0], xs[0], *cs)))
    return found


def one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def load_engine(cls: object) -> type:
    """``cls`` checked as an engine's node class: ``cls(1.5)`` must make a node.

    Raises:
        TypeError: ``cls`` is not a class, ``cls(1.5)`` raises, or what it
            makes lacks part of the protocol (the message names the part).

    Example:
        >>> from minigrad import Value
        >>> load_engine(Value) is Value
        True
        >>> load_engine(float)
        Traceback (most recent call last):
            ...
        TypeError: float is not a micrograd-style engine: float has no .data (the node's number)
    """
    if not isinstance(cls, type):
        raise TypeError(f"an engine is a class of nodes, got {type(cls).__name__} {cls!r}")
    try:
        node = cls(1.5)
    except Exception as exc:
        raise TypeError(
            f"{engine_name(cls)} is not a micrograd-style engine: {cls.__name__}(1.5) raised "
            f"{one_line(exc)} (a node is made from its float, as Value(1.5))"
        ) from exc
    problem = fits(node)
    if problem:
        raise TypeError(f"{engine_name(cls)} is not a micrograd-style engine: {problem}")
    return cls


def refused(exc: BaseException) -> bool:
    """Whether an exception from an optional form means "not supported" rather than "broken"
    (micrograd 0.1.0 asserts that an exponent is a number; without ``__rpow__``, TypeError)."""
    return isinstance(exc, TypeError | AssertionError | NotImplementedError)


#: feature -> the method it needs.
_FEATURES = {**_BINARY, **{"r" + symbol: dunder for symbol, dunder in _REFLECTED.items()}}
_FEATURES |= {"**n": "__pow__", "**x": "__pow__", "r**": "__rpow__", "neg": "__neg__"}
_FEATURES |= {"abs": "__abs__", **{method: method for method in METHODS}}


def support(cls: type) -> dict[str, str]:
    """What ``cls`` supports: feature -> ``""`` when it has the method, else why not.

    Features: ``+ - * /`` (a number on the right), ``r+ r- r* r/`` (on the
    left), ``**n``, ``**x`` and ``r**`` (a number exponent, a node exponent,
    a number base), ``neg``, ``abs`` and :data:`METHODS`. Nothing is called:
    code under check runs in the checks, under their time limit; an optional
    form (``**x``, ``r**``) the engine refuses (:func:`refused`) is skipped.

    Example:
        >>> from minigrad import Value
        >>> s = support(Value)
        >>> s["+"], s["**x"], s["relu"]
        ('', '', '')
        >>> support(float)["exp"]
        'float has no exp'
    """
    return {
        feature: "" if callable(getattr(cls, method, None)) else f"{cls.__name__} has no {method}"
        for feature, method in _FEATURES.items()
    }


# Drawing points: inside a rule's sample box, away from its edges and kinks.


def _uniform(rng: random.Random, piece: tuple[float, float]) -> float:
    lo, hi = piece
    return min(max(rng.uniform(lo, hi), lo), hi)


class Draw:
    """Draws a check's points: point ``k`` from a piece of each input's domain.

    An input whose domain is cut into pieces (relu's and abs' by their kink,
    a divisor's by its pole) gets its pieces in turn, so that the first
    :attr:`pieces` points visit every piece of every input: a backward that
    is right on one side of a kink only (relu's mask forgotten, abs' sign)
    cannot pass by chance. Later points shift the pieces of the second input
    against the first, to meet every combination in time.

    Args:
        boxes: One tuple of disjoint ``(lo, hi)`` pieces per input or constant.

    Example:
        >>> draw = Draw(((-3.0, -1.0), (1.0, 3.0)))
        >>> rng = random.Random(0)
        >>> [draw(rng, k)[0] > 0 for k in range(draw.pieces)]
        [False, True]
    """

    def __init__(self, *boxes: Sequence[tuple[float, float]]) -> None:
        self.boxes = [tuple(pieces) for pieces in boxes]
        #: Points needed to visit every piece of every input once.
        self.pieces = max((len(pieces) for pieces in self.boxes), default=1)

    def __call__(self, rng: random.Random, k: int = 0) -> tuple[float, ...]:
        """Point ``k`` (0-based)."""
        turn = k // self.pieces
        return tuple(
            _uniform(rng, pieces[(k + j * turn) % len(pieces)])
            for j, pieces in enumerate(self.boxes)
        )


_RULES = {rule.name: rule for rule in rules.TABLE}
_ANY = ((-3.0, 3.0),)
_NONZERO = ((-3.0, -0.2), (0.2, 3.0))
_POSITIVE = ((0.2, 3.0),)
_OPERATORS: dict[str, Callable[[object, object], object]] = {
    "+": lambda a, b: a + b,  # type: ignore[operator]
    "-": lambda a, b: a - b,  # type: ignore[operator]
    "*": lambda a, b: a * b,  # type: ignore[operator]
    "/": lambda a, b: a / b,  # type: ignore[operator]
    "**": lambda a, b: a**b,  # type: ignore[operator]
}


def _operand_check(symbol: str, kind: str, rule: Rule) -> Check:
    """``x op y``, ``x op c`` or ``c op x`` (the kind says which), drawn as ``rule``."""
    op, left, right = _OPERATORS[symbol], rule.intervals(0), rule.intervals(1)
    power = symbol == "**"
    if kind == "op":
        roles = (
            ("the base x", "the exponent y")
            if power
            else ("the left operand x", "the right operand y")
        )
        return Check(f"x {symbol} y", kind, ("x", "y"), op, Draw(left, right), roles)
    if kind == "number":
        role = "the base x" if power else "the left operand x (a number on the right)"
        return Check(f"x {symbol} c", kind, ("x",), op, Draw(left, right), (role,), ("c",))
    role = "the exponent x" if power else "the right operand x (a number on the left)"
    build = lambda x, c: op(c, x)  # noqa: E731
    return Check(f"c {symbol} x", kind, ("x",), build, Draw(right, left), (role,), ("c",))


def _unary(name: str, build: Build, box: Sequence[tuple[float, float]], role: str) -> Check:
    return Check(name, "op", ("x",), build, Draw(box), (role,))


def _power(n: float, box: Sequence[tuple[float, float]]) -> Check:
    return _unary(f"x ** {n:g}", lambda x: x**n, box, "the base x")


def _method(name: str) -> Check:
    build = lambda x: getattr(x, name)()  # noqa: E731
    return _unary(f"x.{name}()", build, _RULES[name].intervals(0), "its input x")


def _ladder(x: object) -> object:
    """Six rungs, ``v + v * 0.5`` and ``v * 0.5 + v`` in turn: a node used by two ops on paths
    of different lengths, so a sort that runs a node's backward before every user of it has
    added its gradient gets some rung wrong, whichever order it takes a node's parents in."""
    u = x
    for rung in range(6):
        v = u * 0.9  # type: ignore[operator]
        u = v + v * 0.5 if rung % 2 == 0 else v * 0.5 + v
    return u


def _shared(x: object, y: object) -> object:
    u = x * y  # type: ignore[operator]
    return u + u * u  # the node u, used by + and by *


def _copy(x: object, y: object) -> object:
    """``u * 1.0``, of the same data as ``u``: a chain, so no order of it is wrong; but an
    engine whose ``__eq__``/``__hash__`` go by value finds ``u * 1.0`` in its visited set when
    it reaches ``u``, never runs ``u``'s ``_backward``, and x and y get nothing."""
    u = x * y  # type: ignore[operator]
    return u * 1.0 * 2.0


def _diamond(a: object, b: object, c: object) -> object:
    """``(a*b + c) * (a - c)``: a and c each reach the output by two paths."""
    return (a * b + c) * (a - c)  # type: ignore[operator]


def chain(x: object, n: int) -> object:
    """``x + 1.0 + 1.0 + ...``: ``n`` ops deep."""
    y = x
    for _ in range(n):
        y = y + 1.0  # type: ignore[operator]
    return y


def battery(cls: type, *, depth: int = 5000) -> tuple[list[Check], dict[str, str]]:
    """The checks for the engine ``cls``, and the ones left out with the reason.

    Args:
        cls: The engine's node class (see :func:`load_engine`).
        depth: The chain's depth (0 leaves the deep chain out).

    Returns:
        The checks, in the order of :data:`KINDS`; and ``{name: why}`` for
        each check the engine does not support.

    Example:
        >>> from minigrad import Value
        >>> checks, left_out = battery(Value)
        >>> [c.name for c in checks][:3], left_out
        (['x + y', 'x - y', 'x * y'], {})
    """
    has = support(cls)
    checks: list[Check] = []
    missing: dict[str, str] = {}

    def add(check: Check, *needs: str) -> None:
        lacking = [f"{n}: {has[n]}" for n in needs if has.get(n)]
        if lacking:
            missing[check.name] = "; ".join(lacking)
        else:
            checks.append(check)

    arithmetic = (("+", rules.ADD), ("-", rules.SUB), ("*", rules.MUL), ("/", rules.DIV))
    for symbol, rule in arithmetic:
        add(_operand_check(symbol, "op", rule), symbol)
    add(_operand_check("**", "op", rules.POW), "**x")
    for n, box in ((2, _ANY), (3, _ANY), (-1, _NONZERO), (0.5, _POSITIVE), (-1.5, _POSITIVE)):
        add(_power(n, box), "**n")
    add(_unary("-x", lambda x: -x, _ANY, "its input x"), "neg")
    add(_unary("abs(x)", abs, rules.ABS.intervals(0), "its input x"), "abs")
    for method in METHODS:
        add(_method(method), method)
    for kind, prefix in (("number", ""), ("reflected", "r")):
        for symbol, rule in arithmetic:
            add(_operand_check(symbol, kind, rule), prefix + symbol)
    add(_operand_check("**", "reflected", rules.POW), "r**")
    for name, kind, build, n in (
        ("shared node u = x*y: u + u*u", "order", _shared, 2),
        ("ladder of shared nodes", "order", _ladder, 1),
        ("u = x*y; (u * 1.0) * 2.0", "identity", _copy, 2),
    ):
        add(Check(name, kind, ("x", "y")[:n], build, Draw(*[_ANY] * n)), "+", "*")
    if depth > 0:
        build = lambda x: chain(x, depth)  # noqa: E731
        checks.append(Check(f"chain of {depth} ops", "depth", ("x",), build, Draw(_ANY)))
    add(
        Check("backward() twice", "twice", ("a", "b", "c"), _diamond, Draw(*[_ANY] * 3)),
        "+",
        "-",
        "*",
    )
    for check in checks:  # a node exponent, a number base: forms an engine may refuse
        check.optional = check.name in ("x ** y", "c ** x")
    return checks, missing
