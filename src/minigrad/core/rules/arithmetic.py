"""The arithmetic rules: + - * / **, negation, abs, relu and copysign, with their functions.

How a rule and its functions are written: :mod:`minigrad.core.rules`.
"""

from __future__ import annotations

import math
import operator

from minigrad.core.inline import Inline
from minigrad.core.rule import _INF, Rule, _binary, _unary, overload, own, value_of
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


@overload
def pow_derivative(n: int, k: int, x: float, y: float) -> float: ...
@overload
def pow_derivative(n: int, k: int, x: Value, y: float | Value) -> Value: ...
@overload
def pow_derivative(n: int, k: int, x: float, y: Value) -> Value: ...
def pow_derivative(n: int, k: int, x: float | Value, y: float | Value) -> float | Value:
    """d^(n+k)/dx^n dy^k of x ** y, of floats or Values: one op for every n, k.

    Each is x**(y - n) times a polynomial in y and log(x) (``y * x**(y-1)``,
    ``x**y * log(x)``, ``y (y - 1) x**(y - 2)``, ...), computed in one piece,
    scaled through logarithms where x**(y - n) alone would over- or
    underflow. Its slopes are the next ones (d/dx adds 1 to n, d/dy to k), so
    every derivative of ``**``, to any order, is a single op: none is a sum of
    terms beyond the floats (the Hessian of ``x ** y`` at x = y = 1e-170 has
    terms of 1e340 in the graph of ``y * x ** (y - 1)``).

    Args:
        n: How many times by x, >= 0.
        k: How many times by y, >= 0.
        x: The base, a float or a Value.
        y: The exponent, a float or a Value.

    Example:
        >>> pow_derivative(2, 0, 3.0, 4.0)  # 4 * 3 * 3.0**2
        108.0
    """
    if isinstance(n, bool) or not isinstance(n, int) or isinstance(k, bool):
        raise TypeError(f"pow_derivative: n and k must be ints, got {n!r}, {k!r}")
    if not isinstance(k, int) or n < 0 or k < 0:
        raise ValueError(f"pow_derivative: n and k must be ints >= 0, got {n!r}, {k!r}")
    if k and value_of(x) < 0.0:
        log(value_of(x))  # raises log's own error: a slope in y needs log(x)
    return _binary(_pow_rule(n, k), x, y)


def _pow_slope(n: int, k: int, x: float | Value, y: float | Value) -> float | Value:
    """:func:`pow_derivative` for the partials: no checks of n and k, floats the short way."""
    if type(x) is float and type(y) is float:
        if n == 1 and k == 0:
            return _pow_x(x, y)  # the slopes of every x ** y on floats: the short way
        if n == 0 and k == 1 and x > 0.0:
            return _pow_y(x, y)
        if x < 0.0 and k:
            log(x)  # raises log's own error: a slope in y needs log(x)
        return _pow_derivative(n, k, x, y)
    # The slot, not .data: this check only names the error early (the rule's
    # own forward refuses a negative base too), and never changes the graph,
    # so a check may replay the graph without it (checking/run/tape.py).
    base = x if isinstance(x, float | int) else x._data
    if k and base < 0.0:
        log(base)
    return _binary(_pow_rule(n, k), x, y)


def _pow_polynomial(n: int, k: int) -> dict[tuple[int, int], int]:
    """p with d^(n+k)/dx^n dy^k x**y = x**(y - n) p(y, log x), as {(i, j): c} for c y**i L**j.

    From p = 1: by x, x**(y-m) p becomes x**(y-m-1) ((y - m) p + dp/dL);
    by y, x**(y-m) p becomes x**(y-m) (L p + dp/dy).
    """
    p: dict[tuple[int, int], int] = {(0, 0): 1}
    for m in range(n):
        q: dict[tuple[int, int], int] = {}
        for (i, j), c in p.items():
            q[(i + 1, j)] = q.get((i + 1, j), 0) + c
            q[(i, j)] = q.get((i, j), 0) - m * c
            if j:
                q[(i, j - 1)] = q.get((i, j - 1), 0) + j * c
        p = {key: c for key, c in q.items() if c}
    for _ in range(k):
        q = {}
        for (i, j), c in p.items():
            q[(i, j + 1)] = q.get((i, j + 1), 0) + c
            if i:
                q[(i - 1, j)] = q.get((i - 1, j), 0) + i * c
        p = {key: c for key, c in q.items() if c}
    return p


def _log_abs_sum(terms: list[tuple[float, float]]) -> tuple[float, float]:
    """Sign and log|sum| of sum(sign * e**logabs) over ``terms``, without overflow."""
    top = max(t for _, t in terms)
    total = math.fsum(s * math.exp(t - top) for s, t in terms)
    if total == 0.0:
        return 0.0, -_INF
    return math.copysign(1.0, total), top + math.log(abs(total))


def _pow_derivative(n: int, k: int, x: float, y: float) -> float:
    """The forward of a pow derivative rule on floats: x**(y - n) p(y, log x), scaled."""
    if x == 0.0:
        # 0 ** y: d^n/dx^n is y (y-1) ... (y-n+1) 0**(y-n): 0 where y > n or
        # where the product is 0 (0 ** 0 = 1 is flat, as in PyTorch and JAX),
        # and infinite (0 ** negative raises) for y < n. In y it is 0 ** y
        # times powers of log(0): 0 for y > n, and 0 at 0 ** 0 as in PyTorch.
        if k:
            if y > n or (n == 0 and k == 1 and y == 0.0):
                return 0.0
            raise ZeroDivisionError("log(0) is -inf: the slope in y is not finite at x = 0")
        falling = math.prod(y - m for m in range(n))
        return 0.0 if falling == 0.0 else falling * _pow(x, y - n)
    if x < 0.0 and k:
        raise ValueError("a negative base has no slope in y: log(x) is not real")
    lx = math.log(abs(x))
    if k == 0:
        # y (y - 1) ... (y - n + 1) as a product: exactly 0 at an integer
        # y < n, and accurate near one, where the expanded polynomial cancels.
        factors = [y - m for m in range(n)]
        p = math.prod(factors)  # inf if it overflows
    else:
        terms = [(i, j, float(c)) for (i, j), c in _pow_polynomial(n, k).items()]
        try:
            p = math.fsum(c * y**i * lx**j for i, j, c in terms)
        except OverflowError:
            p = _INF
    if p == 0.0:
        return 0.0
    power, err = _shifted(y, n)
    try:
        scale = _pow(x, power)
    except OverflowError:
        scale = _INF
    # x**(y - n) may have lost digits where p times it has not (3 x**2 at 1.5e-154):
    # p x**(power/2) x**(power/2), normal all the way, is 4 ulps off where the
    # logarithms below are 1e-13 (a sawtooth in x an estimator reads as slope).
    halves = _halves(x, power, p) if 0.0 < abs(scale) < _TINY and p - p == 0.0 else 0.0
    if _TINY <= abs(scale) < _INF and p - p == 0.0:
        result = scale * p * (1.0 + err * lx)  # both in range: one rounding (two with err)
    elif abs(halves) >= _TINY:
        result = halves * (1.0 + err * lx)
    else:
        # x**(y - n) is beyond the floats or has lost digits, or p overflowed:
        # multiply through logarithms (1e-13 relative at worst, from log|x|).
        if k == 0:
            sign = math.prod(math.copysign(1.0, f) for f in factors)
            log_p = math.fsum(math.log(abs(f)) for f in factors)
        elif p - p == 0.0:
            sign, log_p = math.copysign(1.0, p), math.log(abs(p))
        else:  # a term overflowed: add them as logarithms
            sign, log_p = _log_abs_sum(
                [
                    (
                        math.copysign(1.0, c)
                        * math.copysign(1.0, y) ** i
                        * math.copysign(1.0, lx) ** j,
                        math.log(abs(c))
                        + (i * math.log(abs(y)) if i else 0.0)
                        + (j * math.log(abs(lx)) if j else 0.0),
                    )
                    for i, j, c in terms
                    if not (i and y == 0.0) and not (j and lx == 0.0)
                ]
            )
            if sign == 0.0:
                return 0.0
        if x < 0.0 and power % 2.0:  # an odd integer power of a negative base
            sign = -sign
        total = power * lx + log_p + err * lx
        result = math.copysign(math.exp(total), sign) if total < 710.0 else _INF
    if result - result != 0.0:
        raise OverflowError("math range error")
    return result


def _pow_x(x: float, y: float) -> float:
    """y x**(y - 1): the slope of x ** y in x, on floats (compiled code calls it)."""
    if x:
        # The usual case at once: x**(y - 1) a normal float, times y.
        power, err = _shifted(y, 1)
        try:
            scale = math.pow(x, power)
        except OverflowError:
            scale = _INF
        if _TINY <= abs(scale) < _INF:
            slope = y * scale * (1.0 + err * math.log(abs(x))) if err else y * scale
            if slope - slope == 0.0:
                return slope
    return _pow_derivative(1, 0, x, y)


def _pow_y(x: float, y: float) -> float:
    """x**y log(x): the slope of x ** y in y, on floats (compiled code calls it)."""
    if x > 0.0:
        try:
            scale = math.pow(x, y)
        except OverflowError:
            scale = _INF
        if _TINY <= scale < _INF:
            return scale * math.log(x)  # the usual case at once (finite: |log x| < 745)
    return _pow_derivative(0, 1, x, y)


#: The smallest positive normal float: below it a float has lost digits.
_TINY = 2.2250738585072014e-308


#: The rules of pow's derivatives by (n, k), made when first needed.
_POW_DERIVATIVES: dict[tuple[int, int], Rule] = {}


def _pow_rule(n: int, k: int) -> Rule:
    rule = _POW_DERIVATIVES.get((n, k))
    if rule is None:
        by = (f", x, {n}" if n else "") + (f", y, {k}" if k else "")
        rule = _POW_DERIVATIVES[(n, k)] = Rule(
            "pow_" + "x" * n + "y" * k,
            _pow_x
            if (n, k) == (1, 0)
            else _pow_y
            if (n, k) == (0, 1)
            else lambda x, y: _pow_derivative(n, k, x, y),
            (
                lambda x, y, out: _pow_slope(n + 1, k, x, y),
                lambda x, y, out: _pow_slope(n, k + 1, x, y),
            ),
            math=f"diff(x**y{by})",
            domain=POW.domain,
            sample=POW.sample_box,
        )
        own(rule)
    return rule


def _shifted(y: float, n: int) -> tuple[float, float]:
    """``y - n`` and its rounding error, exactly (Knuth's two-sum). ``x**(y - n)`` is
    ``x**power * (1 + err * log|x|)``: the rounding costs ``|err log x|`` (4e-14 for
    ``y = 1/3`` at ``x = 1e-300``, beyond the analytic round-off the checker allows)."""
    power = y - n
    back = power - y
    return power, (y - (power - back)) + (-n - back)


def _halves(x: float, power: float, p: float) -> float:
    """``p * x**power`` as ``(p * |x|**(power/2)) * |x|**(power/2)``, signed (0.0 where a
    half is out of range): no subnormal on the way while the result is normal."""
    half = math.pow(abs(x), power / 2.0)
    if not _TINY <= half < _INF:
        return 0.0
    sign = -1.0 if x < 0.0 and power % 2.0 else 1.0  # an odd integer power of a negative x
    return sign * (p * half) * half


def _pow(x: float, y: float) -> float:
    if x == 0.0 and y < 0.0:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    if x < 0.0 and not y.is_integer():
        raise ValueError("a negative base needs an integer exponent")
    return math.pow(x, y)


def _pow_absorbing(x: float | None, y: float | None) -> tuple[int, ...]:
    """The arguments of ``x ** y`` that turn inf or NaN into a finite number (see Inline).

    nan ** 0.0 and 1.0 ** nan are 1.0, inf ** -1.0 is 0.0; but with a constant
    y > 0 (the square of an error, say) x ** y keeps inf and NaN.
    """
    return () if y is not None and y > 0.0 else (0, 1)


# The rules.

ADD = Rule(
    "+",
    operator.add,
    (1.0, 1.0),
    math="x + y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    spelling="x + y",
    inline=Inline("({0} + {1})", (1.0, 1.0)),
    commutative=True,
)
SUB = Rule(
    "-",
    operator.sub,
    (1.0, -1.0),
    math="x - y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    spelling="x - y",
    inline=Inline("({0} - {1})", (1.0, -1.0)),
)
MUL = Rule(
    "*",
    operator.mul,
    (lambda x, y, out: y, lambda x, y, out: x),
    math="x*y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    spelling="x * y",
    inline=Inline("({0} * {1})", ("{1}", "{0}")),
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
    inline=Inline("({0} / {1})", ("(1.0 / {1})", "(-{out} / {1})"), absorbing=(1,)),
)
POW = Rule(
    "**",
    _pow,
    # y x**(y-1) and x**y log(x), each one op of the family of pow's derivatives.
    (lambda x, y, out: _pow_slope(1, 0, x, y), lambda x, y, out: _pow_slope(0, 1, x, y)),
    math="x**y",
    # A negative base is defined only for integer exponents: no open interval.
    domain=((0.0, _INF), (-_INF, _INF)),
    sample=((0.2, 3.0), (-2.5, 2.5)),
    spelling="x ** y",
    inline=Inline(
        "_pow({0}, {1})",
        ("_pow_x({0}, {1})", "_pow_y({0}, {1})"),
        names={"_pow": _pow, "_pow_x": _pow_x, "_pow_y": _pow_y},
        absorbing=_pow_absorbing,
    ),
)
NEG = Rule(
    "neg",
    operator.neg,
    (-1.0,),
    math="-x",
    sample=((-3.0, 3.0),),
    spelling="-x",
    inline=Inline("(-{0})", (-1.0,)),
)
ABS = Rule(
    "abs",
    abs,
    (lambda x, out: sign(x),),
    math="Abs(x)",
    sample=((-3.0, 3.0),),
    avoid=(0.0,),
    spelling="abs(x)",
    inline=Inline("abs({0})", ("(1.0 if {0} > 0.0 else -1.0 if {0} < 0.0 else 0.0)",)),
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
    # The slope tests the output, positive exactly when the input is, so the
    # reverse pass keeps one number per relu. The forward gives 0.0 only for a
    # finite x and NaN for NaN and -inf, which then reaches the loss (see
    # Inline's absorbing): a test against the most negative float, which costs
    # nothing measurable where a guard, x - x, cost the MLP step's forward 6%.
    inline=Inline(
        "({0} if {0} > 0.0 else 0.0 if {0} >= -1.7976931348623157e+308 else _NAN)",
        ("(1.0 if {out} > 0.0 else 0.0)",),
        names={"_NAN": math.nan},
    ),
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
