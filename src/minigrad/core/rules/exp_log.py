"""Exponentials and logarithms: exp, log and their variants, sqrt and cbrt, sigmoid, softplus.

How a rule and its functions are written: :mod:`minigrad.core.rules`.
"""

from __future__ import annotations

import math

from minigrad.core.inline import Inline
from minigrad.core.rule import (
    _INF,
    BUILT_IN,
    Rule,
    _float_error,
    _not_a_number,
    _unary,
    overload,
    own,
    value_of,
)
from minigrad.core.value import Value

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import overload

    from minigrad.core.rule import S


def exp(x: S) -> S:
    """e ** x for a float or a Value."""
    if isinstance(x, float | int):
        try:
            return math.exp(x)
        except OverflowError as exc:
            raise _float_error(EXP, (x,), exc) from None
    try:
        return BUILT_IN["exp"](x) if isinstance(x, Value) else x.exp()
    except AttributeError:  # neither a number nor a Value
        raise _not_a_number(EXP, x) from None


@overload
def log(x: float, base: float | None = None) -> float: ...
@overload
def log(x: Value, base: float | Value | None = None) -> Value: ...
@overload
def log(x: float, base: Value) -> Value: ...
def log(x: float | Value, base: float | Value | None = None) -> float | Value:
    """Natural logarithm of a float or a Value; with ``base``, log(x) / log(base).

    Example:
        >>> log(math.e), log(8.0, 2.0)
        (1.0, 3.0)
    """
    if base is None:
        if isinstance(x, float | int):
            try:
                return math.log(x)
            except ValueError as exc:
                raise _float_error(LOG, (x,), exc) from None
        try:
            return BUILT_IN["log"](x) if isinstance(x, Value) else x.log()
        except AttributeError:  # neither a number nor a Value
            raise _not_a_number(LOG, x) from None
    if isinstance(base, bool) or not isinstance(base, float | int | Value):
        raise TypeError(
            f"log: base must be a Value, an int or a float, got {type(base).__name__} {base!r}"
        )
    b = value_of(base)
    if not (b > 0.0 and b != 1.0):
        raise ValueError(f"log: base must be > 0 and != 1, got {b!r}")
    if isinstance(x, float | int) and isinstance(base, float | int):
        try:
            return math.log(x, base)
        except ValueError as exc:
            raise _float_error(LOG, (x,), exc) from None
    return log(x) / log(base)


def sqrt(x: S) -> S:
    """Square root of a float or a Value."""
    if isinstance(x, float | int):
        try:
            return math.sqrt(x)
        except ValueError as exc:
            raise _float_error(SQRT, (x,), exc) from None
    try:
        return BUILT_IN["sqrt"](x) if isinstance(x, Value) else x.sqrt()
    except AttributeError:  # neither a number nor a Value
        raise _not_a_number(SQRT, x) from None


def sigmoid(x: S) -> S:
    """Logistic sigmoid 1 / (1 + e**-x) of a float or a Value."""
    if isinstance(x, float | int):
        return _sigmoid(x)
    try:
        return BUILT_IN["sigmoid"](x) if isinstance(x, Value) else x.sigmoid()
    except AttributeError:  # neither a number nor a Value
        raise _not_a_number(SIGMOID, x) from None


def log1p(x: S) -> S:
    """log(1 + x), accurate near 0, of a float or a Value.

    Example:
        >>> log1p(1e-10)
        9.9999999995e-11
    """
    return _unary(LOG1P, x)


def expm1(x: S) -> S:
    """e**x - 1, accurate near 0, of a float or a Value.

    Example:
        >>> expm1(1e-10)
        1.00000000005e-10
    """
    return _unary(EXPM1, x)


def exp2(x: S) -> S:
    """2**x of a float or a Value.

    Example:
        >>> exp2(10.0)
        1024.0
    """
    return _unary(EXP2, x)


def log2(x: S) -> S:
    """Base-2 logarithm of a float or a Value.

    Example:
        >>> log2(1024.0)
        10.0
    """
    return _unary(LOG2, x)


def log10(x: S) -> S:
    """Base-10 logarithm of a float or a Value.

    Example:
        >>> log10(1000.0)
        3.0
    """
    return _unary(LOG10, x)


def cbrt(x: S) -> S:
    """Real cube root (negative for a negative input) of a float or a Value.

    Example:
        >>> cbrt(-8.0)
        -2.0
    """
    return _unary(CBRT, x)


def softplus(x: S) -> S:
    """log(1 + e**x) of a float or a Value, computed without overflow.

    Example:
        >>> softplus(1000.0)
        1000.0
    """
    return _unary(SOFTPLUS, x)


def sech2(x: S) -> S:
    """sech(x)**2 = 1 - tanh(x)**2, the slope of tanh, of a float or a Value, without cancellation.

    Example:
        >>> sech2(30.0), 1.0 - math.tanh(30.0) ** 2
        (3.502604305079e-26, 0.0)
    """
    return _sech2(x) if type(x) is float else _unary(_tanh_rule(1), x)


def tanh_derivative(n: int, x: S) -> S:
    """The n-th derivative of tanh (n >= 1) at a float or a Value, accurate at every x.

    ``tanh_derivative(1, x)`` is sech(x)**2, computed from e**-2|x| rather
    than as ``1 - tanh(x)**2``, which cancels to 0 for |x| >= 19; higher
    orders are sech(x)**2 times a polynomial in tanh(x). Each order is a rule
    whose slope is the next, so derivatives of tanh and sigmoid stay accurate
    to any order.

    Example:
        >>> tanh_derivative(2, 0.5) == -2.0 * math.tanh(0.5) * sech2(0.5)
        True
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"tanh_derivative: n must be an int >= 1, got {n!r}")
    return _unary(_tanh_rule(n), x)


def _sigmoid(x: float) -> float:
    # Two branches so that exp never overflows for large |x|.
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _softplus(x: float) -> float:
    # log(1 + e**x) without overflow: max(x, 0) + log1p(e**-|x|).
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _sech2(x: float) -> float:
    # sech(x)**2 = 4 e / (1 + e)**2 with e = e**-2|x| (2|x| is exact): no
    # cancellation, and it underflows only where sech(x)**2 does.
    e = math.exp(-2.0 * abs(x))
    return 4.0 * e / ((1.0 + e) * (1.0 + e))


def e_growth(x: float) -> float:
    """How fast the slope of ``e**x`` (exp's, expm1's; sinh's and cosh's far out) grows: by e
    per unit of ``x`` (:class:`~minigrad.core.rule.Rule`'s ``growth``)."""
    return 1.0


def tanh_growth(x: float) -> float:
    """How fast the slopes of tanh and its derivatives change: ``|sech**2' / sech**2| = 2
    |tanh x|``, which tends to 2 where they decay as ``e**-2|x|``."""
    return 2.0 * abs(math.tanh(x))


def _tanh_polynomial(n: int) -> tuple[int, ...]:
    """Coefficients (by power of t) of R_n with d^n/dx^n tanh(x) = sech(x)**2 R_n(tanh(x)).

    R_1 = 1 and, as tanh' = sech**2 and sech**2' = -2 tanh sech**2,
    R_(k+1)(t) = -2 t R_k(t) + (1 - t**2) R_k'(t).
    """
    coeffs = [1]
    for _ in range(n - 1):
        new = [0] * (len(coeffs) + 1)
        for i, a in enumerate(coeffs):
            new[i + 1] -= 2 * a  # -2 t R
            if i:
                new[i - 1] += i * a  # R'
                new[i + 1] -= i * a  # -t**2 R'
        coeffs = new
    return tuple(coeffs)


def _tanh_derivative(n: int, x: float) -> float:
    """d^n/dx^n tanh(x) on a float: sech(x)**2 times R_n(tanh(x)) (Horner)."""
    s = _sech2(x)
    if n == 1:
        return s
    t = math.tanh(x)
    poly = 0.0
    for a in reversed(_tanh_polynomial(n)):
        poly = poly * t + a
    return s * poly


#: The rules of tanh's derivatives, made when first needed: each one's slope is the next.
_TANH_DERIVATIVES: dict[int, Rule] = {}


def _tanh_rule(n: int) -> Rule:
    rule = _TANH_DERIVATIVES.get(n)
    if rule is None:
        rule = _TANH_DERIVATIVES[n] = Rule(
            "tanh" + "'" * n if n <= 3 else f"tanh^({n})",
            _sech2 if n == 1 else lambda x: _tanh_derivative(n, x),
            (lambda x, out: tanh_derivative(n + 1, x),),
            math=f"diff(tanh(x), x, {n})",
            sample=((-3.0, 3.0),),
            growth=tanh_growth,
        )
        own(rule)
    return rule


_LN2 = math.log(2.0)


_LN10 = math.log(10.0)


_INV_LN2 = 1.0 / _LN2


_INV_LN10 = 1.0 / _LN10


_ONE_THIRD = 1.0 / 3.0


# The rules.

EXP = Rule(
    "exp",
    math.exp,
    (lambda x, out: out,),
    math="exp(x)",
    sample=((-4.0, 4.0),),
    spelling="x.exp()",
    growth=e_growth,
    inline=Inline("_exp({0})", ("{out}",), names={"_exp": math.exp}, absorbing=(0,)),
)
# The slopes of the logarithms are 1/x written as e**-log(x): equal (to
# 1e-13 relative at worst, the rounding of log(x) times |log(x)|), but the
# graph of 1/x has the slope -1/x**2, which underflows for x > 1.3e154
# where a gradient multiplying it need not (the second derivative of
# log(exp(x)) at x = 400); e**-out has the slope -e**-out, and out's own
# slope is this partial again, never beyond the range of 1/x.
LOG = Rule(
    "log",
    math.log,
    (lambda x, out: exp(-out),),
    math="log(x)",
    domain=((0.0, _INF),),
    sample=((0.05, 8.0),),
    requires="input must be > 0",
    spelling="x.log()",
    inline=Inline("_log({0})", ("_exp(-{out})",), names={"_log": math.log, "_exp": math.exp}),
)
LOG1P = Rule(
    "log1p",
    math.log1p,
    (lambda x, out: exp(-out),),  # 1 / (1 + x), as for log
    math="log(1 + x)",
    domain=((-1.0, _INF),),
    sample=((-0.9, 5.0),),
    requires="input must be > -1",
    spelling="x.log1p()",
    inline=Inline("_log1p({0})", ("_exp(-{out})",), names={"_log1p": math.log1p, "_exp": math.exp}),
)
SQRT = Rule(
    "sqrt",
    math.sqrt,
    (lambda x, out: 0.5 / out,),
    math="sqrt(x)",
    domain=((0.0, _INF),),  # sqrt(0) is defined, but its slope is not: open at 0
    sample=((0.05, 8.0),),
    requires="input must be >= 0",
    spelling="x.sqrt()",
    inline=Inline("_sqrt({0})", ("(0.5 / {out})",), names={"_sqrt": math.sqrt}),
)
SIGMOID = Rule(
    "sigmoid",
    _sigmoid,
    # sigmoid(x) = (1 + tanh(x/2)) / 2. Not out * (1 - out): 1 - out is 0 for
    # x >= 37, and its own slope cancels to 0 near x = 0.
    (lambda x, out: 0.25 * sech2(0.5 * x),),
    math="1/(1 + exp(-x))",
    sample=((-4.0, 4.0),),
    spelling="x.sigmoid()",
    growth=lambda x: abs(math.tanh(0.5 * x)),  # its slope is sech(x / 2)**2 / 4
    inline=Inline(
        "_sigmoid({0})",
        ("(0.25 * _sech2(0.5 * {0}))",),
        names={"_sigmoid": _sigmoid, "_sech2": _sech2},
        absorbing=(0,),
    ),
)
SOFTPLUS = Rule(
    "softplus",
    _softplus,
    (lambda x, out: sigmoid(x),),
    math="log(1 + exp(x))",
    sample=((-4.0, 4.0),),
    spelling="x.softplus()",
    growth=lambda x: 0.5 - 0.5 * math.tanh(0.5 * x),  # sigmoid'(x) / sigmoid(x) = sigmoid(-x)
    inline=Inline(
        "_softplus({0})",
        ("_sigmoid({0})",),
        names={"_softplus": _softplus, "_sigmoid": _sigmoid},
        absorbing=(0,),
    ),
)
EXPM1 = Rule(
    "expm1",
    math.expm1,
    (lambda x, out: exp(x),),  # not out + 1.0: out is -1.0 for x <= -38
    math="exp(x) - 1",
    sample=((-3.0, 3.0),),
    spelling="x.expm1()",
    growth=e_growth,
)
EXP2 = Rule(
    "exp2",
    math.exp2,
    (lambda x, out: _LN2 * out,),
    math="2**x",
    sample=((-4.0, 4.0),),
    spelling="x.exp2()",
    growth=lambda x: _LN2,
)
LOG2 = Rule(
    "log2",
    math.log2,
    (lambda x, out: _INV_LN2 * exp(-(_LN2 * out)),),  # 1 / (x ln 2), as for log
    math="log(x, 2)",
    domain=((0.0, _INF),),
    sample=((0.05, 8.0),),
    requires="input must be > 0",
    spelling="x.log2()",
)
LOG10 = Rule(
    "log10",
    math.log10,
    (lambda x, out: _INV_LN10 * exp(-(_LN10 * out)),),  # 1 / (x ln 10), as for log
    math="log(x, 10)",
    domain=((0.0, _INF),),
    sample=((0.05, 8.0),),
    requires="input must be > 0",
    spelling="x.log10()",
)
CBRT = Rule(
    "cbrt",
    math.cbrt,
    # 1 / (3 out**2), through logarithms as log's: see there.
    (lambda x, out: _ONE_THIRD * exp(-2.0 * log(abs(out))),),
    # The real cube root; SymPy's cbrt is the principal one, complex for x < 0.
    math="x / Abs(x)**(2/3)",
    sample=((-3.0, 3.0),),
    avoid=(0.0,),  # the slope is infinite there
    spelling="x.cbrt()",
)
