"""Circular and hyperbolic functions, their inverses, atan2, hypot and dist.

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
from collections.abc import Sequence

from minigrad.core.rule import _INF, Rule, _binary, _not_a_number, _unary, overload
from minigrad.core.rules.arithmetic import ABS
from minigrad.core.rules.exp_log import sqrt
from minigrad.core.value import Value

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import overload

    from minigrad.core.rule import S


def sin(x: S) -> S:
    """Sine of a float or a Value."""
    if isinstance(x, float | int):
        return math.sin(x)
    try:
        return x.sin()
    except AttributeError:  # neither a number nor a Value
        raise _not_a_number(SIN, x) from None


def cos(x: S) -> S:
    """Cosine of a float or a Value."""
    if isinstance(x, float | int):
        return math.cos(x)
    try:
        return x.cos()
    except AttributeError:  # neither a number nor a Value
        raise _not_a_number(COS, x) from None


def tanh(x: S) -> S:
    """Hyperbolic tangent of a float or a Value."""
    if isinstance(x, float | int):
        return math.tanh(x)
    try:
        return x.tanh()
    except AttributeError:  # neither a number nor a Value
        raise _not_a_number(TANH, x) from None


def tan(x: S) -> S:
    """Tangent of a float or a Value.

    Example:
        >>> tan(0.25)
        0.255341921221
    """
    return _unary(TAN, x)


def asin(x: S) -> S:
    """Arcsine, in [-pi/2, pi/2], of a float or a Value in [-1, 1].

    Example:
        >>> asin(1.0) == math.pi / 2
        True
    """
    return _unary(ASIN, x)


def acos(x: S) -> S:
    """Arccosine, in [0, pi], of a float or a Value in [-1, 1].

    Example:
        >>> acos(-1.0) == math.pi
        True
    """
    return _unary(ACOS, x)


def atan(x: S) -> S:
    """Arctangent, in (-pi/2, pi/2), of a float or a Value.

    Example:
        >>> atan(1.0) == math.pi / 4
        True
    """
    return _unary(ATAN, x)


def sinh(x: S) -> S:
    """Hyperbolic sine of a float or a Value.

    Example:
        >>> sinh(1.0)
        1.175201193644
    """
    return _unary(SINH, x)


def cosh(x: S) -> S:
    """Hyperbolic cosine of a float or a Value.

    Example:
        >>> cosh(1.0)
        1.543080634815
    """
    return _unary(COSH, x)


def asinh(x: S) -> S:
    """Inverse hyperbolic sine of a float or a Value.

    Example:
        >>> asinh(sinh(1.0))
        1.0
    """
    return _unary(ASINH, x)


def acosh(x: S) -> S:
    """Inverse hyperbolic cosine (>= 0) of a float or a Value >= 1.

    Example:
        >>> acosh(cosh(1.0))
        1.0
    """
    return _unary(ACOSH, x)


def atanh(x: S) -> S:
    """Inverse hyperbolic tangent of a float or a Value in (-1, 1).

    Example:
        >>> atanh(0.5)  # doctest's NUMBER flag: to the digits written
        0.549306144334
    """
    return _unary(ATANH, x)


def degrees(x: S) -> S:
    """Radians to degrees, of a float or a Value.

    Example:
        >>> degrees(math.pi)
        180.0
    """
    return x * _DEGREES_PER_RADIAN


def radians(x: S) -> S:
    """Degrees to radians, of a float or a Value.

    Example:
        >>> radians(180.0) == math.pi
        True
    """
    return x * _RADIANS_PER_DEGREE


@overload
def atan2(y: float, x: float) -> float: ...
@overload
def atan2(y: Value, x: float | Value) -> Value: ...
@overload
def atan2(y: float, x: Value) -> Value: ...
def atan2(y: float | Value, x: float | Value) -> float | Value:
    """The angle of the point (x, y) from the positive x axis, in [-pi, pi].

    Floats or Values on either side: a float is a constant.

    Example:
        >>> atan2(1.0, -1.0) == 3 * math.pi / 4
        True
    """
    return _binary(ATAN2, y, x)


@overload
def hypot(*coordinates: float) -> float: ...  # type: ignore[overload-overlap]
@overload
def hypot(*coordinates: float | Value) -> Value: ...
def hypot(*coordinates: float | Value) -> float | Value:
    """The Euclidean norm sqrt(sum of squares) of the coordinates, without overflow.

    On floats it is ``math.hypot``. With a Value among the coordinates, two
    are one ``hypot`` op; more are nested, ``hypot(hypot(a, b), c)``.

    Example:
        >>> hypot(3.0, 4.0), hypot(2.0, 3.0, 6.0)
        (5.0, 7.0)
    """
    if all(isinstance(c, float | int) for c in coordinates):
        return math.hypot(*coordinates)  # type: ignore[arg-type]
    if len(coordinates) == 1:
        return ABS(coordinates[0])  # a Value: floats were handled above
    norm = HYPOT(coordinates[0], coordinates[1])
    for c in coordinates[2:]:
        norm = HYPOT(norm, c)
    return norm


@overload
def dist(p: Sequence[float], q: Sequence[float]) -> float: ...  # type: ignore[overload-overlap]
@overload
def dist(p: Sequence[float | Value], q: Sequence[float | Value]) -> Value: ...
def dist(p: Sequence[float | Value], q: Sequence[float | Value]) -> float | Value:
    """The Euclidean distance between points p and q (sequences of equal length).

    Example:
        >>> dist((1.0, 2.0), (4.0, 6.0))
        5.0
    """
    for name, point in (("p", p), ("q", q)):
        if isinstance(point, str | bytes) or not isinstance(point, Sequence):
            raise TypeError(
                f"dist: {name} must be a sequence of numbers or Values, "
                f"got {type(point).__name__} {point!r}"
            )
        for i, c in enumerate(point):
            if isinstance(c, bool) or not isinstance(c, float | int | Value):
                raise TypeError(
                    f"dist: {name}[{i}] must be a Value, an int or a float, "
                    f"got {type(c).__name__} {c!r}"
                )
    if len(p) != len(q):
        raise ValueError(
            f"dist: p and q must have the same number of coordinates, got {len(p)} and {len(q)}"
        )
    if all(isinstance(c, float | int) for c in (*p, *q)):
        return math.dist(p, q)  # type: ignore[arg-type]
    return hypot(*(a - b for a, b in zip(p, q, strict=True)))


_DEGREES_PER_RADIAN = 180.0 / math.pi  # the constants math.degrees and math.radians use


_RADIANS_PER_DEGREE = math.pi / 180.0


# The rules.

SIN = Rule(
    "sin",
    math.sin,
    (lambda x, out: cos(x),),
    math="sin(x)",
    sample=((-4.0, 4.0),),
    spelling="x.sin()",
)
COS = Rule(
    "cos",
    math.cos,
    (lambda x, out: -sin(x),),
    math="cos(x)",
    sample=((-4.0, 4.0),),
    spelling="x.cos()",
)
TANH = Rule(
    "tanh",
    math.tanh,
    (lambda x, out: 1.0 - out * out,),
    math="tanh(x)",
    sample=((-3.0, 3.0),),
    spelling="x.tanh()",
)
TAN = Rule(
    "tan",
    math.tan,
    (lambda x, out: 1.0 + out * out,),  # sec(x)**2
    math="tan(x)",
    # Smooth between its poles at pi/2 + k pi; drawn across the two at +-pi/2.
    sample=((-3.0, 3.0),),
    avoid=(-math.pi / 2, math.pi / 2),
    spelling="x.tan()",
)
ASIN = Rule(
    "asin",
    math.asin,
    # (1 - x)(1 + x), not 1 - x*x: no cancellation near +-1.
    (lambda x, out: 1.0 / sqrt((1.0 - x) * (1.0 + x)),),
    math="asin(x)",
    domain=((-1.0, 1.0),),  # asin(+-1) is defined, but its slope is not: open
    sample=((-0.95, 0.95),),
    requires="input must be in [-1, 1]",
    spelling="x.asin()",
)
ACOS = Rule(
    "acos",
    math.acos,
    (lambda x, out: -1.0 / sqrt((1.0 - x) * (1.0 + x)),),
    math="acos(x)",
    domain=((-1.0, 1.0),),
    sample=((-0.95, 0.95),),
    requires="input must be in [-1, 1]",
    spelling="x.acos()",
)
ATAN = Rule(
    "atan",
    math.atan,
    (lambda x, out: 1.0 / (1.0 + x * x),),
    math="atan(x)",
    sample=((-4.0, 4.0),),
    spelling="x.atan()",
)
ATAN2 = Rule(
    "atan2",
    math.atan2,
    (lambda y, x, out: x / (x * x + y * y), lambda y, x, out: -y / (x * x + y * y)),
    # `math` names the arguments by position: its x is the first, y here.
    math="atan2(x, y)",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    # The jump from pi to -pi where y = 0 < -x, and the origin: y and x stay off 0.
    avoid=(0.0,),
    arg_names=("y", "x"),
)
HYPOT = Rule(
    "hypot",
    math.hypot,
    (lambda x, y, out: x / out, lambda x, y, out: y / out),
    math="sqrt(x**2 + y**2)",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    avoid=(0.0,),  # its kink, at x = y = 0
    commutative=True,
)
SINH = Rule(
    "sinh",
    math.sinh,
    (lambda x, out: cosh(x),),
    math="sinh(x)",
    sample=((-3.0, 3.0),),
    spelling="x.sinh()",
)
COSH = Rule(
    "cosh",
    math.cosh,
    (lambda x, out: sinh(x),),
    math="cosh(x)",
    sample=((-3.0, 3.0),),
    spelling="x.cosh()",
)
ASINH = Rule(
    "asinh",
    math.asinh,
    (lambda x, out: 1.0 / sqrt(x * x + 1.0),),
    math="asinh(x)",
    sample=((-4.0, 4.0),),
    spelling="x.asinh()",
)
ACOSH = Rule(
    "acosh",
    math.acosh,
    (lambda x, out: 1.0 / sqrt((x - 1.0) * (x + 1.0)),),
    math="acosh(x)",
    domain=((1.0, _INF),),  # acosh(1) is defined, but its slope is not: open
    sample=((1.05, 5.0),),
    requires="input must be >= 1",
    spelling="x.acosh()",
)
ATANH = Rule(
    "atanh",
    math.atanh,
    (lambda x, out: 1.0 / ((1.0 - x) * (1.0 + x)),),
    math="atanh(x)",
    domain=((-1.0, 1.0),),
    sample=((-0.95, 0.95),),
    requires="input must be in (-1, 1)",
    spelling="x.atanh()",
)
