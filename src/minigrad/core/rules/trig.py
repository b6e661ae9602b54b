"""Circular and hyperbolic functions, their inverses, atan2, hypot and dist.

How a rule and its functions are written: :mod:`minigrad.core.rules`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from minigrad.core.inline import Inline
from minigrad.core.rule import _INF, BUILT_IN, Rule, _binary, _not_a_number, _unary, overload, own
from minigrad.core.rules.arithmetic import ABS
from minigrad.core.rules.exp_log import _sech2, e_growth, exp, log, sech2, sqrt, tanh_growth
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
        return BUILT_IN["sin"](x) if isinstance(x, Value) else x.sin()
    except AttributeError:  # neither a number nor a Value
        raise _not_a_number(SIN, x) from None


def cos(x: S) -> S:
    """Cosine of a float or a Value."""
    if isinstance(x, float | int):
        return math.cos(x)
    try:
        return BUILT_IN["cos"](x) if isinstance(x, Value) else x.cos()
    except AttributeError:  # neither a number nor a Value
        raise _not_a_number(COS, x) from None


def tanh(x: S) -> S:
    """Hyperbolic tangent of a float or a Value."""
    if isinstance(x, float | int):
        return math.tanh(x)
    try:
        return BUILT_IN["tanh"](x) if isinstance(x, Value) else x.tanh()
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


def one_minus_square(x: S) -> S:
    """1 - x**2, computed as (1 - x)(1 + x), of a float or a Value.

    Accurate for every x: near +-1 the product keeps the digits that
    ``1 - x*x`` cancels, and its slope is -2x, a product, where the slope of
    ``(1 - x) * (1 + x)`` as a graph, (1 - x) - (1 + x), cancels near 0.
    The slopes of asin, acos and atanh are written with it.

    Example:
        >>> x = 1.0 - 2.0**-30  # 1 - x**2 = 2**-29 - 2**-60 exactly
        >>> one_minus_square(x) == 2.0**-29 - 2.0**-60, 1.0 - x * x == 2.0**-29
        (True, True)
    """
    return _unary(ONE_MINUS_SQUARE, x)


Terms = tuple[tuple[int, int, int], ...]


@overload
def polar(terms: Terms, k: int, x: float, y: float) -> float: ...
@overload
def polar(terms: Terms, k: int, x: Value, y: float | Value) -> Value: ...
@overload
def polar(terms: Terms, k: int, x: float, y: Value) -> Value: ...
def polar(terms: Terms, k: int, x: float | Value, y: float | Value) -> float | Value:
    """P(c, s) / r**k at the point (x, y): r = hypot(x, y), c = x / r, s = y / r.

    ``terms`` is the polynomial P, a tuple of ``(coefficient, a, b)`` for the
    terms ``coefficient * c**a * s**b``. Every derivative of hypot and atan2
    (and, at (1, x), of atan and asinh) has this form, and each partial of
    one is one more such function, with r**(k+1): so those derivatives are
    computed from the unit vector (c, s) and a power of r, scaled by powers
    of two, and stay finite wherever their value is, at every order
    (``y / (x*x + y*y)`` overflows in ``x*x`` at 1e200 and divides by 0 at
    1e-170). Each ``(terms, k)`` is a rule, made when first needed.

    Args:
        terms: The polynomial, ``((coefficient, a, b), ...)``.
        k: The power of r divided by, >= 0.
        x: The first coordinate, a float or a Value.
        y: The second coordinate, a float or a Value.

    Example:
        >>> polar(((1, 1, 0),), 1, 1e200, 1e200)  # d atan2(y, x) / dy = x / r**2
        5e-201
    """
    if (
        isinstance(k, bool)
        or not isinstance(k, int)
        or k < 0
        or not isinstance(terms, tuple)
        or not all(
            isinstance(t, tuple)
            and len(t) == 3
            and all(isinstance(i, int) and not isinstance(i, bool) for i in t)
            and t[1] >= 0
            and t[2] >= 0
            for t in terms
        )
    ):
        raise ValueError(
            "polar: terms must be a tuple of (coefficient, a, b) ints with a, b >= 0 and k "
            f"an int >= 0, got terms={terms!r}, k={k!r}"
        )
    return _binary(_polar_rule(terms, k), x, y)


def _polar(terms: Terms, k: int, x: float, y: float) -> float:
    """The forward of a polar rule on floats, every factor kept as mantissa and exponent.

    c = x / r and s = y / r may underflow (y = 1e-300, r = 1e100) and r**k
    over- or underflow where P(c, s) / r**k is an ordinary float (the third
    derivative of hypot at (3e-100, 3e-300) is y**2 x / r**5 = 3e-201):
    so each term is a mantissa in [1/2, 2)**n times a power of two, summed
    at the largest term's exponent and scaled once, by ldexp, at the end.
    """
    if x - x != 0.0 or y - y != 0.0:
        raise ValueError("input is not finite")
    r = math.hypot(x, y)
    if k <= 4 and 1e-75 < r < 1e75:
        # The common case, directly: no factor below 1e-300 or beyond 1e300.
        c = x / r
        s = y / r
        if (c == 0.0 or abs(c) > 1e-40) and (s == 0.0 or abs(s) > 1e-40):
            if len(terms) == 1:
                ((coefficient, a, b),) = terms
                return coefficient * c**a * s**b / r**k
            return math.fsum(v * c**a * s**b for v, a, b in terms) / r**k
    # r = hypot(x, y) as mr * 2**er, from the coordinates scaled by a power
    # of two, so that r itself cannot overflow (at 1.7e308) or lose digits.
    shift = max(math.frexp(x)[1], math.frexp(y)[1])
    mr, er = math.frexp(math.hypot(math.ldexp(x, -shift), math.ldexp(y, -shift)))
    if mr == 0.0:
        raise ZeroDivisionError("the origin: c = x / r and s = y / r are not defined there")
    er += shift
    mx, ex = math.frexp(x)
    my, ey = math.frexp(y)
    mc, ec = mx / mr, ex - er  # c = mc * 2**ec
    ms, es = my / mr, ey - er
    parts = []
    for coefficient, a, b in terms:
        mantissa = coefficient * mc**a * ms**b
        if mantissa:
            parts.append((mantissa / mr**k, a * ec + b * es - k * er))
    if not parts:
        return 0.0
    top = max(e for _, e in parts)
    total = math.fsum(math.ldexp(m, e - top) for m, e in parts)
    return math.ldexp(total, top)


def _polar_slopes(terms: Terms, k: int) -> tuple[Terms, Terms]:
    """The polynomials of d/dx and d/dy of P(c, s) / r**k (both with r**(k+1)).

    With dc/dx = s**2/r, ds/dx = -c s/r, dr/dx = c (and the same with x, y and
    c, s swapped), c**2 + s**2 = 1 folds the terms:
    d/dx c**a s**b r**-k = c**(a-1) s**b r**-(k+1) (a s**2 - (b + k) c**2),
    d/dy c**a s**b r**-k = c**a s**(b-1) r**-(k+1) (b c**2 - (a + k) s**2).
    """
    dx: dict[tuple[int, int], int] = {}
    dy: dict[tuple[int, int], int] = {}
    for coefficient, a, b in terms:
        for out, key, value in (
            (dx, (a - 1, b + 2), coefficient * a),
            (dx, (a + 1, b), -coefficient * (b + k)),
            (dy, (a + 2, b - 1), coefficient * b),
            (dy, (a, b + 1), -coefficient * (a + k)),
        ):
            if value:
                out[key] = out.get(key, 0) + value

    def ordered(found: dict[tuple[int, int], int]) -> Terms:
        return tuple((v, a, b) for (a, b), v in sorted(found.items()) if v)

    return ordered(dx), ordered(dy)


#: The polar rules, by (terms, k), made when first needed.
_POLAR: dict[tuple[Terms, int], Rule] = {}


def _polar_rule(terms: Terms, k: int) -> Rule:
    rule = _POLAR.get((terms, k))
    if rule is None:
        dx, dy = _polar_slopes(terms, k)
        poly = " + ".join(f"({v})*(x/r)**{a}*(y/r)**{b}" for v, a, b in terms) or "0"
        rule = _POLAR[(terms, k)] = Rule(
            "polar" + "".join(f"[{v}c{a}s{b}]" for v, a, b in terms) + f"/r{k}",
            lambda x, y: _polar(terms, k, x, y),
            (
                lambda x, y, out: polar(dx, k + 1, x, y),
                lambda x, y, out: polar(dy, k + 1, x, y),
            ),
            math=f"({poly}) / r**{k}".replace("r", "sqrt(x**2 + y**2)"),
            sample=((-3.0, 3.0), (-3.0, 3.0)),
            avoid=(0.0,),
        )
        own(rule)
    return rule


#: c = x / r and s = y / r, and c / r and -s / r: the slopes of hypot and atan2.
_HYPOT_DX = _polar_rule(((1, 1, 0),), 0)
_HYPOT_DY = _polar_rule(((1, 0, 1),), 0)
_ATAN2_DY = _polar_rule(((1, 1, 0),), 1)
_ATAN2_DX = _polar_rule(((-1, 0, 1),), 1)


def _hypot_1(x: S) -> S:
    """hypot(1, x) of a float or a Value, in fewer steps than :func:`hypot` on a float."""
    return math.hypot(1.0, x) if type(x) is float else _binary(HYPOT, 1.0, x)  # type: ignore[return-value]


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
    inline=Inline("_sin({0})", ("_cos({0})",), names={"_sin": math.sin, "_cos": math.cos}),
)
COS = Rule(
    "cos",
    math.cos,
    (lambda x, out: -sin(x),),
    math="cos(x)",
    sample=((-4.0, 4.0),),
    spelling="x.cos()",
    inline=Inline("_cos({0})", ("(-_sin({0}))",), names={"_sin": math.sin, "_cos": math.cos}),
)
TANH = Rule(
    "tanh",
    math.tanh,
    # sech(x)**2, not 1 - out * out: that is 1e-8 off at |x| = 10 and 0 from 19.
    (lambda x, out: sech2(x),),
    math="tanh(x)",
    sample=((-3.0, 3.0),),
    spelling="x.tanh()",
    growth=tanh_growth,
    inline=Inline(
        "_tanh({0})", ("_sech2({0})",), names={"_tanh": math.tanh, "_sech2": _sech2}, absorbing=(0,)
    ),
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
    # (1 - x)(1 + x), not 1 - x*x: no cancellation near +-1; as one op whose
    # slope is -2x, so the second derivative is not 0 near x = 0.
    (lambda x, out: 1.0 / sqrt(one_minus_square(x)),),
    math="asin(x)",
    domain=((-1.0, 1.0),),  # asin(+-1) is defined, but its slope is not: open
    sample=((-0.95, 0.95),),
    requires="input must be in [-1, 1]",
    spelling="x.asin()",
)
ACOS = Rule(
    "acos",
    math.acos,
    (lambda x, out: -1.0 / sqrt(one_minus_square(x)),),
    math="acos(x)",
    domain=((-1.0, 1.0),),
    sample=((-0.95, 0.95),),
    requires="input must be in [-1, 1]",
    spelling="x.acos()",
)
ATAN = Rule(
    "atan",
    math.atan,
    # 1 / (1 + x**2) as e**(-2 log hypot(1, x)): finite where x*x overflows,
    # and every op in it has a slope at most 1/|x| times its value, so the
    # second derivative of atan(u) with u = e**400 (-2u/(1 + u**2)**2, below
    # the floats) is never a factor on its own: see log.
    (lambda x, out: exp(-2.0 * log(_hypot_1(x))),),
    math="atan(x)",
    sample=((-4.0, 4.0),),
    spelling="x.atan()",
)
ATAN2 = Rule(
    "atan2",
    math.atan2,
    # x / r**2 and -y / r**2, scaled: x*x + y*y overflows at 1e200 and is 0 at 1e-170.
    (lambda y, x, out: _binary(_ATAN2_DY, x, y), lambda y, x, out: _binary(_ATAN2_DX, x, y)),
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
    # x / r and y / r, as polar rules: the graph of x / out differentiates to
    # 1/r - x**2/r**3, which cancels (to 0 at (1e150, 1e100)) where y**2/r**3 does not.
    (lambda x, y, out: _binary(_HYPOT_DX, x, y), lambda x, y, out: _binary(_HYPOT_DY, x, y)),
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
    growth=e_growth,  # |cosh' / cosh| = |tanh x| <= 1
)
COSH = Rule(
    "cosh",
    math.cosh,
    (lambda x, out: sinh(x),),
    math="cosh(x)",
    sample=((-3.0, 3.0),),
    spelling="x.cosh()",
    growth=e_growth,  # sinh grows as e**|x| (near 0 it crosses 0 as x does: no growth)
)
ASINH = Rule(
    "asinh",
    math.asinh,
    (lambda x, out: exp(-log(_hypot_1(x))),),  # 1 / sqrt(1 + x**2): see atan
    math="asinh(x)",
    sample=((-4.0, 4.0),),
    spelling="x.asinh()",
)
ACOSH = Rule(
    "acosh",
    math.acosh,
    # ((x - 1)(x + 1))**-1/2 through logarithms, as atan's: the product
    # overflows for x > 1.3e154, where the slope is 1/x; x - 1 is exact near 1;
    # and the slope, -(1/(x-1) + 1/(x+1))/2 times this, adds terms of one sign.
    (lambda x, out: exp(-0.5 * (log(x - 1.0) + log(x + 1.0))),),
    math="acosh(x)",
    domain=((1.0, _INF),),  # acosh(1) is defined, but its slope is not: open
    sample=((1.05, 5.0),),
    requires="input must be >= 1",
    spelling="x.acosh()",
)
ATANH = Rule(
    "atanh",
    math.atanh,
    (lambda x, out: 1.0 / one_minus_square(x),),
    math="atanh(x)",
    domain=((-1.0, 1.0),),
    sample=((-0.95, 0.95),),
    requires="input must be in (-1, 1)",
    spelling="x.atanh()",
)
ONE_MINUS_SQUARE = Rule(
    "one_minus_square",
    lambda x: (1.0 - x) * (1.0 + x),
    (lambda x, out: -2.0 * x,),
    math="1 - x**2",
    sample=((-3.0, 3.0),),
)
