"""The error function and its kin (erfc, gelu), Gamma, its logarithm and the polygamma functions.

How a rule and its functions are written: :mod:`minigrad.core.rules`.
"""

from __future__ import annotations

import math

from minigrad.core.inline import Inline
from minigrad.core.rule import BUILT_IN, Rule, _not_a_number, _unary, own
from minigrad.core.value import Value

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.core.rule import S


def erf(x: S) -> S:
    """Error function of a float or a Value."""
    if isinstance(x, float | int):
        return math.erf(x)
    try:
        return BUILT_IN["erf"](x) if isinstance(x, Value) else x.erf()
    except AttributeError:  # neither a number nor a Value
        raise _not_a_number(ERF, x) from None


def erfc(x: S) -> S:
    """Complementary error function 1 - erf(x), accurate for large x.

    Example:
        >>> erfc(0.0)
        1.0
    """
    return _unary(ERFC, x)


def gelu(x: S) -> S:
    """x * Phi(x), Phi the exact normal CDF, of a float or a Value.

    Example:
        >>> gelu(0.0), round(gelu(1.0), 6)
        (0.0, 0.841345)
    """
    return _unary(GELU, x)


def gaussian_derivative(n: int, x: S, a: float = 1.0) -> S:
    """(-1)**n d^n/dx^n e**(-a x**2) for a = 1 or 1/2, of a float or a Value.

    That is a polynomial of degree n (Hermite's, scaled) times e**(-a x**2):
    ``gaussian_derivative(0, x)`` is e**-x**2, and with ``a=0.5`` it is the
    normal density without its 1/sqrt(2 pi). Each order is a rule whose slope
    is minus the next, so the derivatives of erf, erfc and gelu are one op
    each at every order: finite for every x (``exp(-(x * x))`` on Values
    overflows in ``x * x`` for |x| > 1.3e154), a product near 0, and within
    a few units in the last place (e**(-a x**2) is computed with the rounding
    error of x*x added back, which alone would cost 1e-13 at |x| = 30).

    Example:
        >>> gaussian_derivative(0, 1.0) == math.exp(-1.0)
        True
        >>> gaussian_derivative(1, 2.0, a=0.5) == 2.0 * math.exp(-2.0)  # -d/dx e**(-x**2/2)
        True
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"gaussian_derivative: n must be an int >= 0, got {n!r}")
    if a not in (1.0, 0.5):
        raise ValueError(f"gaussian_derivative: a must be 1.0 or 0.5, got {a!r}")
    return _unary(_gaussian_rule(n, a), x)


def lgamma(x: S) -> S:
    """log |Gamma(x)| of a float or a Value (not 0 or a negative integer).

    Example:
        >>> lgamma(5.0), math.log(24.0)  # log 4!
        (3.178053830348, 3.178053830348)
    """
    return _unary(LGAMMA, x)


def gamma(x: S) -> S:
    """The Gamma function of a float or a Value (not 0 or a negative integer).

    Example:
        >>> gamma(5.0)
        24.0
    """
    return _unary(GAMMA, x)


def digamma(x: S) -> S:
    """The digamma function psi(x) = d/dx log |Gamma(x)|, of a float or a Value.

    Not in Python's math module: minigrad's own (the slope of :func:`lgamma`),
    accurate to a few units in the last place away from its poles.

    Example:
        >>> round(-digamma(1.0), 12)  # the Euler-Mascheroni constant
        0.577215664902
    """
    return _unary(DIGAMMA, x)


def polygamma(n: int, x: S) -> S:
    """The n-th derivative of :func:`digamma` (``polygamma(0, x)`` is digamma).

    Args:
        n: The order, an int >= 0.
        x: A float or a Value, not 0 or a negative integer.

    Example:
        >>> round(polygamma(1, 1.0), 12) == round(math.pi**2 / 6, 12)
        True
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma: n must be an int, got {type(n).__name__} {n!r}")
    if n < 0:
        raise ValueError(f"polygamma: n must be >= 0, got {n!r}")
    return _unary(_polygamma_rule(n), x)


#: Bernoulli numbers B_2, B_4, ..., B_24, as used by the asymptotic series.
_BERNOULLI = (
    1 / 6,
    -1 / 30,
    1 / 42,
    -1 / 30,
    5 / 66,
    -691 / 2730,
    7 / 6,
    -3617 / 510,
    43867 / 798,
    -174611 / 330,
    854513 / 138,
    -236364091 / 2730,
)


#: Where the asymptotic series starts: with x >= 20 + n and twelve terms its
#: truncation error is below 1e-18 relative for every n (measured against mpmath).
_PSI_SHIFT = 20.0


def _cot_derivative(n: int) -> tuple[int, ...]:
    """Coefficients (by power of c) of P_n with d^n/du^n cot(u) = P_n(cot(u)).

    P_0(c) = c and, as cot' = -(1 + cot**2), P_(k+1)(c) = -(1 + c**2) P_k'(c).
    """
    coeffs = [0, 1]
    for _ in range(n):
        slope = [i * a for i, a in enumerate(coeffs)][1:] or [0]
        times = [0] * (len(slope) + 2)
        for i, a in enumerate(slope):
            times[i] -= a
            times[i + 2] -= a
        coeffs = times
    return tuple(coeffs)


def _cot_pi(r: float) -> float:
    """cot(pi r) for |r| <= 1/2, 0 at r = +-1/2 exactly (1 / tan(pi r) is 6e-17 there)."""
    if abs(r) <= 0.25:
        return 1.0 / math.tan(math.pi * r)
    return math.copysign(math.tan(math.pi * (0.5 - abs(r))), r)


def _polygamma(n: int, x: float) -> float:
    """psi^(n)(x) on a float: the forward of digamma (n = 0) and of the polygamma rules."""
    if x <= 0.0 and x == math.floor(x):
        raise ValueError("math domain error")  # a pole
    if x < 0.0:
        r = x - round(x)  # exact; cot has period pi, so cot(pi x) = cot(pi r)
        c = _cot_pi(r)
        poly = 0.0
        for a in reversed(_cot_derivative(n)):
            poly = poly * c + a
        result = (-1.0) ** n * _polygamma(n, 1.0 - x) - math.pi ** (n + 1) * poly
    else:
        # psi^(n)(x) = psi^(n)(x + m) - (-1)**n n! sum_k 1 / (x + k)**(n+1)
        shift = 0.0
        while x < _PSI_SHIFT + n:
            shift += (1.0 / x) ** (n + 1)  # OverflowError where psi^(n)(x) is beyond floats
            x += 1.0
        z = 1.0 / x
        if n == 0:
            # psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x**2k)
            series = 0.0
            for k in range(len(_BERNOULLI), 0, -1):
                series = (series + _BERNOULLI[k - 1] / (2 * k)) * z * z
            result = math.log(x) - 0.5 * z - series - shift
        else:
            # psi^(n)(x) ~ (-1)**(n+1) [(n-1)!/x**n + n!/(2 x**(n+1))
            #                           + sum_k B_2k (2k+n-1)! / ((2k)! x**(2k+n))]
            series = 0.0
            for k in range(len(_BERNOULLI), 0, -1):
                term = _BERNOULLI[k - 1] * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
                series = (series + term) * z * z
            tail = math.factorial(n - 1) + math.factorial(n) * 0.5 * z + series
            sign = -1.0 if n % 2 == 0 else 1.0
            result = sign * (tail * z**n + math.factorial(n) * shift)
    if result - result != 0.0:
        raise OverflowError("math range error")
    return result


def _exp_minus_square(x: float, a: float) -> float:
    """e**(-a x**2) for a = 1 or 1/2 (a x**2 exact), to about one unit in the last place.

    The rounding error of x*x, d (exact, by Dekker's split of x into halves
    of 26 bits), is put back as e**(-a d): x*x alone is off by up to
    |x|**2 / 2**53, so e**-(x*x) is off by that much relative, 6e-14 at |x| = 23.
    (Below 750, as here, |d| < 1e-13: e**(-a d) is 1 - a d to the last bit.)
    """
    p = x * x
    c = 134217729.0 * x  # 2**27 + 1; |x| < 40 here, so no overflow
    hi = c - (c - x)
    lo = x - hi
    d = ((hi * hi - p) + 2.0 * hi * lo) + lo * lo
    return math.exp(-a * p) * (1.0 - a * d)  # e**(-a d): |a d| < 1e-13, so 1 - a d


def _gaussian(n: int, x: float, a: float = 1.0) -> float:
    """(-1)**n d^n/dx^n e**(-a x**2) on a float: R_n(x) e**(-a x**2).

    R_0 = 1, R_1 = 2ax, R_(k+1) = 2a x R_k - 2a k R_(k-1) (Hermite's
    recurrence, for H_n(sqrt(a) x) a**(n/2)).
    """
    if not a * x * x < 750.0:
        # e**-750 is 1e-326: times R_n (at most (2|x|)**n, here n is small)
        # it is below every float, and R_n alone may overflow to inf, inf * 0 = nan.
        return 0.0
    if not n:
        return _exp_minus_square(x, a)
    h, previous = 1.0, 0.0
    for k in range(n):
        h, previous = 2.0 * a * x * h - 2.0 * a * k * previous, h
    return h * _exp_minus_square(x, a)


def _gauss(x: float) -> float:
    """e**-x**2 on a float (compiled code calls it)."""
    return _gaussian(0, x, 1.0)


def _half_gauss(x: float) -> float:
    """e**(-x**2/2) on a float (compiled code calls it)."""
    return _gaussian(0, x, 0.5)


def _gauss_of(x: S) -> S:
    """e**-x**2 of a float or a Value: gaussian_derivative(0, x), in fewer steps on a float."""
    return _gauss(x) if type(x) is float else _unary(_gaussian_rule(0, 1.0), x)


def _half_gauss_of(x: S) -> S:
    """e**(-x**2/2) of a float or a Value: gaussian_derivative(0, x, 0.5)."""
    return _half_gauss(x) if type(x) is float else _unary(_gaussian_rule(0, 0.5), x)


#: The rules of (-1)**n d^n/dx^n e**(-a x**2), by (n, a), made when first needed.
_GAUSSIAN: dict[tuple[int, float], Rule] = {}


def _gaussian_rule(n: int, a: float) -> Rule:
    rule = _GAUSSIAN.get((n, a))
    if rule is None:
        forward = {(0, 1.0): _gauss, (0, 0.5): _half_gauss}.get((n, a))
        rule = _GAUSSIAN[(n, a)] = Rule(
            f"gaussian_{n}" if a == 1.0 else f"half_gaussian_{n}",
            forward or (lambda x: _gaussian(n, x, a)),
            (lambda x, out: -gaussian_derivative(n + 1, x, a),),
            math=f"(-1)**{n} * diff(exp(-{'x**2' if a == 1.0 else 'x**2/2'}), x, {n})",
            sample=((-3.0, 3.0),),
            growth=lambda x: 2.0 * a * abs(x),  # e**(-a x**2)' / e**(-a x**2), far out
        )
        own(rule)
    return rule


_INV_SQRT2 = 1.0 / math.sqrt(2.0)


def gauss_growth(x: float) -> float:
    """How fast the slope of erf and erfc, ``e**-x**2`` times a constant, changes: ``2 |x|``."""
    return 2.0 * abs(x)


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# The rules.

ERF = Rule(
    "erf",
    math.erf,
    (lambda x, out: _TWO_OVER_SQRT_PI * _gauss_of(x),),
    math="erf(x)",
    sample=((-3.0, 3.0),),
    spelling="x.erf()",
    growth=gauss_growth,
    inline=Inline(
        "_erf({0})",
        ("(_TWO_OVER_SQRT_PI * _gauss({0}))",),
        names={"_erf": math.erf, "_gauss": _gauss, "_TWO_OVER_SQRT_PI": _TWO_OVER_SQRT_PI},
        absorbing=(0,),
    ),
)
ERFC = Rule(
    "erfc",
    math.erfc,
    (lambda x, out: -_TWO_OVER_SQRT_PI * _gauss_of(x),),
    math="erfc(x)",
    sample=((-3.0, 3.0),),
    spelling="x.erfc()",
    growth=gauss_growth,
)
GELU = Rule(
    "gelu",
    # Phi(x) = erfc(-x / sqrt(2)) / 2, not (1 + erf(x / sqrt(2))) / 2, which
    # cancels for x < 0 (all digits lost by x = -8.5).
    lambda x: 0.5 * x * math.erfc(-x * _INV_SQRT2),
    (lambda x, out: 0.5 * erfc(-x * _INV_SQRT2) + x * _half_gauss_of(x) * _INV_SQRT_2PI,),
    math="x*(1 + erf(x/sqrt(2)))/2",
    sample=((-3.0, 3.0),),
    spelling="x.gelu()",
    growth=lambda x: max(-x, 0.0),  # its slope decays as e**(-x**2 / 2) for x < 0 only
    inline=Inline(
        "(0.5 * {0} * _erfc(-{0} * _INV_SQRT2))",
        ("(0.5 * _erfc(-{0} * _INV_SQRT2) + {0} * _half_gauss({0}) * _INV_SQRT_2PI)",),
        names={
            "_erfc": math.erfc,
            "_half_gauss": _half_gauss,
            "_INV_SQRT2": _INV_SQRT2,
            "_INV_SQRT_2PI": _INV_SQRT_2PI,
        },
    ),
)
# Gamma and its kin have poles at 0, -1, -2, ...: smooth between them, and
# drawn across the last three.
_GAMMA_POLES = (-2.0, -1.0, 0.0)
LGAMMA = Rule(
    "lgamma",
    math.lgamma,
    (lambda x, out: digamma(x),),
    math="log(Abs(gamma(x)))",
    sample=((-2.5, 4.0),),
    avoid=_GAMMA_POLES,
    requires="input must not be 0 or a negative integer",
    spelling="x.lgamma()",
)
GAMMA = Rule(
    "gamma",
    math.gamma,
    (lambda x, out: out * digamma(x),),
    math="gamma(x)",
    sample=((-2.5, 4.0),),
    avoid=_GAMMA_POLES,
    requires="input must not be 0 or a negative integer",
    spelling="x.gamma()",
)
DIGAMMA = Rule(
    "digamma",
    lambda x: _polygamma(0, x),
    (lambda x, out: polygamma(1, x),),
    math="polygamma(0, x)",
    sample=((-2.5, 4.0),),
    avoid=_GAMMA_POLES,
    requires="input must not be 0 or a negative integer",
    spelling="x.digamma()",
)
#: The rules of polygamma(n, x) for n >= 1, made when first needed: each
#: one's slope is the next.
_POLYGAMMA: dict[int, Rule] = {0: DIGAMMA}


def _polygamma_rule(n: int) -> Rule:
    rule = _POLYGAMMA.get(n)
    if rule is None:
        rule = _POLYGAMMA[n] = Rule(
            f"polygamma_{n}",
            lambda x: _polygamma(n, x),
            (lambda x, out: polygamma(n + 1, x),),
            math=f"polygamma({n}, x)",
            sample=DIGAMMA.sample_box,
            avoid=_GAMMA_POLES,
            requires=DIGAMMA.requires,
        )
        own(rule)
    return rule
