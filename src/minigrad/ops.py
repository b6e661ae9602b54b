"""The table of derivative rules: every derivative minigrad knows, side by side.

A :class:`Rule` is an op written once: its ``forward`` on floats and one
partial derivative per argument, ``partials[i](*args, out) = d out / d args[i]``.
The partials are written with arithmetic operators and the functions of this
module (:func:`exp`, :func:`log`, ...), which take a float or a
:class:`~minigrad.Value` and return the same kind. The engine calls a partial
with floats for the fast first-order ``backward`` and with Values when
``grad(..., create_graph=True)`` builds a differentiable gradient, so the same
line serves every order of derivative. A user's custom op is a ``Rule`` too and
goes through the same door.

Example:
    >>> from minigrad import Value, ops
    >>> ops.TANH.partials[0](0.5, math.tanh(0.5))  # 1 - tanh(x)**2 on floats
    0.7864477329659274
    >>> [rule.name for rule in ops.TABLE][:5]
    ['+', '-', '*', '/', '**']
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

from minigrad._validate import arg_names, signature_problem

# typing costs ~15 ms to import and is needed only by mypy (see engine.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import random
    from typing import TypeVar

    from minigrad.engine import Value

    #: A float or a Value: what a partial derivative receives and returns.
    S = TypeVar("S", float, "Value")

__all__ = [
    "TABLE",
    "Rule",
    "cos",
    "erf",
    "exp",
    "log",
    "sigmoid",
    "sign",
    "sin",
    "sqrt",
    "step",
    "tanh",
    "value_of",
]

#: d out / d arg: a function of (*args, out), or a constant float.
Partial = Callable[..., "float | Value"] | float


class Rule:
    """A scalar op: a forward on floats and its partial derivatives.

    Args:
        name: The op's name, shown as ``Value.op`` and in every report.
        forward: ``forward(*xs) -> float`` on plain floats.
        partials: One entry per argument: ``partials[i](*xs, out)`` is
            d out / d xs[i], written with operators and the functions of
            :mod:`minigrad.ops` so it works on floats and on Values alike;
            a constant slope may be given as a plain float.
        math: The op as a SymPy expression in ``x`` (and ``y``, ``z``, ...),
            used by the exact-derivative tests and the docs. Optional.
        domain: Per argument, an open interval ``(lo, hi)`` where the op is
            smooth; tests and ``minigrad check`` draw points from it.
        avoid: Points (kinks, poles) to keep away from when drawing points.
        requires: The domain in words, used in error messages
            (e.g. ``"input must be > 0"``).

    Calling a rule applies it: ``rule(x, y)`` returns a new Value, exactly
    as the built-in operators do.

    Example:
        >>> from minigrad import Rule, Value
        >>> cube = Rule("cube", lambda x: x**3, (lambda x, out: 3 * x**2,))
        >>> y = cube(Value(2.0))
        >>> y.op, y.data
        ('cube', 8.0)
    """

    __slots__ = ("arity", "avoid", "domain", "forward", "math", "name", "partials", "requires")

    def __init__(
        self,
        name: str,
        forward: Callable[..., float],
        partials: tuple[Partial, ...],
        *,
        math: str = "",
        domain: tuple[tuple[float, float], ...] | None = None,
        avoid: tuple[float, ...] = (),
        requires: str = "",
    ) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"Rule: name must be a non-empty str, got {name!r}")
        if not callable(forward):
            raise TypeError(f"Rule {name!r}: forward must be callable, got {forward!r}")
        if not isinstance(partials, tuple) or not partials:
            raise TypeError(
                f"Rule {name!r}: partials must be a non-empty tuple of functions, "
                f"one per argument, got {partials!r}"
            )
        partials = tuple(float(d) if isinstance(d, int) else d for d in partials)
        for i, partial in enumerate(partials):
            if not (callable(partial) or isinstance(partial, float)):
                raise TypeError(
                    f"Rule {name!r}: partials[{i}] must be a function or a constant float, "
                    f"got {partial!r}"
                )
        arity = len(partials)
        # The engine calls forward(*args) and partials[i](*args, out): a wrong
        # count is refused here, naming the rule, not deep inside backward.
        names = arg_names(arity)
        problem = signature_problem(forward, arity)
        if problem:
            raise TypeError(
                f"Rule {name!r}: forward {problem} but must take {arity}, one per partial: "
                f"forward({', '.join(names)})"
            )
        for i, partial in enumerate(partials):
            problem = "" if isinstance(partial, float) else signature_problem(partial, arity + 1)
            if problem:
                raise TypeError(
                    f"Rule {name!r}: partials[{i}] {problem} but must take {arity + 1}: the op's "
                    f"arguments then its result, partials[{i}]({', '.join(names)}, out) "
                    f"= d out / d {names[i]}"
                )
        if domain is None:
            domain = ((-2.0, 2.0),) * arity
        if len(domain) != arity or any(not lo < hi for lo, hi in domain):
            raise ValueError(
                f"Rule {name!r}: domain must give one interval (lo, hi) with lo < hi "
                f"per argument ({arity}), got {domain!r}"
            )
        self.name = name
        self.forward = forward
        self.partials = partials
        self.arity = arity
        self.math = math
        self.domain = domain
        self.avoid = avoid
        self.requires = requires

    def sample(self, rng: random.Random, *, margin: float = 1e-2) -> tuple[float, ...]:
        """A random point inside the domain, ``margin`` away from its ends and avoid points.

        Example:
            >>> import random
            >>> x, y = DIV.sample(random.Random(0))
            >>> abs(y) >= 1e-2
            True
        """
        point = []
        for lo, hi in self.domain:
            while True:
                x = rng.uniform(lo + margin, hi - margin)
                if all(abs(x - a) >= margin for a in self.avoid):
                    break
            point.append(x)
        return tuple(point)

    def __call__(self, *args: Value | float) -> Value:
        """Apply the op to Values (or plain numbers, taken as constants)."""
        from minigrad.engine import apply

        return apply(self, *args)

    def __repr__(self) -> str:
        return f"Rule({self.name!r}, arity={self.arity})"


# Functions that take a float or a Value. Partials are written with these so a
# single line serves the float backward and the create_graph backward.


def value_of(x: float | Value) -> float:
    """The float inside ``x`` (``x`` itself when it is a number)."""
    return x if isinstance(x, float | int) else x.data


def exp(x: S) -> S:
    """e ** x for a float or a Value."""
    return math.exp(x) if isinstance(x, float | int) else x.exp()


def log(x: S) -> S:
    """Natural logarithm of a float or a Value."""
    return math.log(x) if isinstance(x, float | int) else x.log()


def sin(x: S) -> S:
    """Sine of a float or a Value."""
    return math.sin(x) if isinstance(x, float | int) else x.sin()


def cos(x: S) -> S:
    """Cosine of a float or a Value."""
    return math.cos(x) if isinstance(x, float | int) else x.cos()


def tanh(x: S) -> S:
    """Hyperbolic tangent of a float or a Value."""
    return math.tanh(x) if isinstance(x, float | int) else x.tanh()


def sqrt(x: S) -> S:
    """Square root of a float or a Value."""
    return math.sqrt(x) if isinstance(x, float | int) else x.sqrt()


def sigmoid(x: S) -> S:
    """Logistic sigmoid 1 / (1 + e**-x) of a float or a Value."""
    return _sigmoid(x) if isinstance(x, float | int) else x.sigmoid()


def erf(x: S) -> S:
    """Error function of a float or a Value."""
    return math.erf(x) if isinstance(x, float | int) else x.erf()


def step(x: float | Value) -> float:
    """1.0 where x > 0, else 0.0: the slope of relu (0 at the kink, as PyTorch)."""
    return 1.0 if value_of(x) > 0.0 else 0.0


def sign(x: float | Value) -> float:
    """-1.0, 0.0 or 1.0: the slope of abs (0 at the kink, as PyTorch)."""
    v = value_of(x)
    return 1.0 if v > 0.0 else -1.0 if v < 0.0 else 0.0


# Forwards that need more than one math call.


def _sigmoid(x: float) -> float:
    # Two branches so that exp never overflows for large |x|.
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _softplus(x: float) -> float:
    # log(1 + e**x) without overflow: max(x, 0) + log1p(e**-|x|).
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _pow_dy(x: S, out: S) -> S | float:
    return 0.0 if value_of(out) == 0.0 else out * log(x)


def _pow(x: float, y: float) -> float:
    if x == 0.0 and y < 0.0:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    if x < 0.0 and not y.is_integer():
        raise ValueError("a negative base needs an integer exponent")
    return math.pow(x, y)


_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# The table. Each partial reads as the calculus-book entry for d out / d arg;
# ``out`` is the op's own result, reused where it makes the rule cheaper.

ADD = Rule(
    "+",
    operator.add,
    (1.0, 1.0),
    math="x + y",
    domain=((-3.0, 3.0), (-3.0, 3.0)),
)
SUB = Rule(
    "-",
    operator.sub,
    (1.0, -1.0),
    math="x - y",
    domain=((-3.0, 3.0), (-3.0, 3.0)),
)
MUL = Rule(
    "*",
    operator.mul,
    (lambda x, y, out: y, lambda x, y, out: x),
    math="x*y",
    domain=((-3.0, 3.0), (-3.0, 3.0)),
)
DIV = Rule(
    "/",
    operator.truediv,
    (lambda x, y, out: 1.0 / y, lambda x, y, out: -out / y),
    math="x/y",
    domain=((-3.0, 3.0), (-3.0, 3.0)),
    avoid=(0.0,),
    requires="divisor must be non-zero",
)
POW = Rule(
    "**",
    _pow,
    # d/dy: where the power is 0 (x = 0, y > 0) it is 0 near y, so its slope is 0.
    (lambda x, y, out: y * x ** (y - 1.0), lambda x, y, out: _pow_dy(x, out)),
    math="x**y",
    domain=((0.2, 3.0), (-2.5, 2.5)),
)
NEG = Rule("neg", operator.neg, (-1.0,), math="-x", domain=((-3.0, 3.0),))
ABS = Rule(
    "abs",
    abs,
    (lambda x, out: sign(x),),
    math="Abs(x)",
    domain=((-3.0, 3.0),),
    avoid=(0.0,),
)
EXP = Rule("exp", math.exp, (lambda x, out: out,), math="exp(x)", domain=((-4.0, 4.0),))
LOG = Rule(
    "log",
    math.log,
    (lambda x, out: 1.0 / x,),
    math="log(x)",
    domain=((0.05, 8.0),),
    requires="input must be > 0",
)
LOG1P = Rule(
    "log1p",
    math.log1p,
    (lambda x, out: 1.0 / (1.0 + x),),
    math="log(1 + x)",
    domain=((-0.9, 5.0),),
    requires="input must be > -1",
)
SQRT = Rule(
    "sqrt",
    math.sqrt,
    (lambda x, out: 0.5 / out,),
    math="sqrt(x)",
    domain=((0.05, 8.0),),
    requires="input must be >= 0",
)
SIN = Rule("sin", math.sin, (lambda x, out: cos(x),), math="sin(x)", domain=((-4.0, 4.0),))
COS = Rule("cos", math.cos, (lambda x, out: -sin(x),), math="cos(x)", domain=((-4.0, 4.0),))
TANH = Rule(
    "tanh",
    math.tanh,
    (lambda x, out: 1.0 - out * out,),
    math="tanh(x)",
    domain=((-3.0, 3.0),),
)
SIGMOID = Rule(
    "sigmoid",
    _sigmoid,
    (lambda x, out: out * (1.0 - out),),
    math="1/(1 + exp(-x))",
    domain=((-4.0, 4.0),),
)
RELU = Rule(
    "relu",
    lambda x: x if x > 0.0 else 0.0,
    (lambda x, out: step(x),),
    math="Max(x, 0)",
    domain=((-3.0, 3.0),),
    avoid=(0.0,),
)
SOFTPLUS = Rule(
    "softplus",
    _softplus,
    (lambda x, out: sigmoid(x),),
    math="log(1 + exp(x))",
    domain=((-4.0, 4.0),),
)
ERF = Rule(
    "erf",
    math.erf,
    (lambda x, out: _TWO_OVER_SQRT_PI * exp(-(x * x)),),
    math="erf(x)",
    domain=((-3.0, 3.0),),
)
GELU = Rule(
    "gelu",
    lambda x: 0.5 * x * (1.0 + math.erf(x * _INV_SQRT2)),
    (lambda x, out: 0.5 * (1.0 + erf(x * _INV_SQRT2)) + x * exp(-0.5 * x * x) * _INV_SQRT_2PI,),
    math="x*(1 + erf(x/sqrt(2)))/2",
    domain=((-3.0, 3.0),),
)

#: Every built-in rule, in the order the docs and ``minigrad check`` list them.
TABLE: tuple[Rule, ...] = (
    ADD,
    SUB,
    MUL,
    DIV,
    POW,
    NEG,
    ABS,
    EXP,
    LOG,
    LOG1P,
    SQRT,
    SIN,
    COS,
    TANH,
    SIGMOID,
    RELU,
    SOFTPLUS,
    ERF,
    GELU,
)
