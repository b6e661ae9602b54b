"""The arithmetic rules: + - * / **, negation, abs, relu and copysign, with their functions.

Each op is written once, as a :class:`~minigrad.core.rule.Rule`: its forward on
floats, one partial per argument (the calculus-book entry for d out / d arg,
``out`` being the op's own result) and its contract (domain, sample, kinks).
The functions beside the rules take a float or a Value and return the same
kind: on floats each is math's own function, on a Value it applies its rule,
so a partial written with them serves the float backward and the
``create_graph`` backward alike.
"""

from __future__ import annotations

import math
import operator

from minigrad.core.rule import _INF, Rule, _binary, _unary, overload, value_of
from minigrad.core.rules.exp_log import log

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import overload

    from minigrad.core.rule import S
    from minigrad.core.value import Value


def step(x: float | Value) -> float:
    """1.0 where x > 0, else 0.0: the slope of relu (0 at the kink, as PyTorch)."""
    return 1.0 if value_of(x) > 0.0 else 0.0


def sign(x: float | Value) -> float:
    """-1.0, 0.0 or 1.0: the slope of abs (0 at the kink, as PyTorch)."""
    v = value_of(x)
    return 1.0 if v > 0.0 else -1.0 if v < 0.0 else 0.0


def relu(x: S) -> S:
    """max(x, 0) of a float or a Value (slope 0 at 0, as in PyTorch).

    Example:
        >>> relu(-2.0), relu(3.0)
        (0.0, 3.0)
    """
    return _unary(RELU, x)


def fabs(x: S) -> S:
    """|x| as a float, or ``abs(x)`` of a Value (slope 0 at 0, as in PyTorch).

    Python's ``abs`` works on Values too; ``fabs`` is math's name for it.

    Example:
        >>> fabs(-3), fabs(2.5)
        (3.0, 2.5)
    """
    return math.fabs(x) if isinstance(x, float | int) else abs(x)


def ldexp(x: S, i: int) -> S:
    """x * 2**i for a float or a Value ``x`` and an int ``i``.

    Example:
        >>> ldexp(0.75, 4)
        12.0
    """
    if isinstance(i, bool) or not isinstance(i, int):
        raise TypeError(f"ldexp: i must be an int, got {type(i).__name__} {i!r}")
    if isinstance(x, float | int):
        try:
            return math.ldexp(x, i)
        except OverflowError:
            raise OverflowError(
                f"ldexp: result overflows a float, got x={float(x)!r}, i={i!r}"
            ) from None
    try:
        scale = math.ldexp(1.0, i)
    except OverflowError:
        raise OverflowError(
            f"ldexp: 2 ** {i!r} overflows a float, got x={x.data!r}, i={i!r}"
        ) from None
    return x * scale


@overload
def copysign(x: float, y: float) -> float: ...
@overload
def copysign(x: Value, y: float | Value) -> Value: ...
@overload
def copysign(x: float, y: Value) -> Value: ...
def copysign(x: float | Value, y: float | Value) -> float | Value:
    """|x| with the sign of y (of its sign bit, so -0.0 counts as negative).

    Example:
        >>> copysign(3.0, -0.0)
        -3.0
    """
    return _binary(COPYSIGN, x, y)


def _pow_dy(x: S, out: S) -> S | float:
    return 0.0 if value_of(out) == 0.0 else out * log(x)


def _pow(x: float, y: float) -> float:
    if x == 0.0 and y < 0.0:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    if x < 0.0 and not y.is_integer():
        raise ValueError("a negative base needs an integer exponent")
    return math.pow(x, y)


# The rules.

ADD = Rule(
    "+",
    operator.add,
    (1.0, 1.0),
    math="x + y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    spelling="x + y",
    commutative=True,
)
SUB = Rule(
    "-",
    operator.sub,
    (1.0, -1.0),
    math="x - y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    spelling="x - y",
)
MUL = Rule(
    "*",
    operator.mul,
    (lambda x, y, out: y, lambda x, y, out: x),
    math="x*y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    spelling="x * y",
    commutative=True,
)
DIV = Rule(
    "/",
    operator.truediv,
    (lambda x, y, out: 1.0 / y, lambda x, y, out: -out / y),
    math="x/y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    avoid=(0.0,),  # the pole of y (kept for x too: avoid applies to every argument)
    requires="divisor must be non-zero",
    spelling="x / y",
)
POW = Rule(
    "**",
    _pow,
    # d/dy: where the power is 0 (x = 0, y > 0) it is 0 near y, so its slope is 0.
    (lambda x, y, out: y * x ** (y - 1.0), lambda x, y, out: _pow_dy(x, out)),
    math="x**y",
    # A negative base is defined only for integer exponents: no open interval.
    domain=((0.0, _INF), (-_INF, _INF)),
    sample=((0.2, 3.0), (-2.5, 2.5)),
    spelling="x ** y",
)
NEG = Rule("neg", operator.neg, (-1.0,), math="-x", sample=((-3.0, 3.0),), spelling="-x")
ABS = Rule(
    "abs",
    abs,
    (lambda x, out: sign(x),),
    math="Abs(x)",
    sample=((-3.0, 3.0),),
    avoid=(0.0,),
    spelling="abs(x)",
)
RELU = Rule(
    "relu",
    # NaN stays NaN (x > 0.0 is False for it), which the engine refuses as
    # for every other op: "input is not finite", never a silent 0.0.
    lambda x: x if x > 0.0 or x != x else 0.0,
    (lambda x, out: step(x),),
    math="Max(x, 0)",
    sample=((-3.0, 3.0),),
    avoid=(0.0,),
    spelling="x.relu()",
)
COPYSIGN = Rule(
    "copysign",
    math.copysign,
    # |x| times the sign of y: slope +-1 in x (0 at its kink, as abs), and
    # flat in y, apart from its jump at y = 0.
    (lambda x, y, out: sign(x) * math.copysign(1.0, value_of(y)), 0.0),
    math="Abs(x) * y / Abs(y)",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    avoid=(0.0,),
)
