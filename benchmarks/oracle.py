"""Exact first derivatives for the benchmarks: SymPy differentiates, mpmath evaluates.

A rule's ``math`` (or a composite expression built from the rules' ``math``)
is differentiated by SymPy once per input and evaluated with mpmath at
:data:`DIGITS` significant digits, the point's floats entering exactly. Far
beyond float64: at 1e300 or 1e-300, near a pole, and for ``sin(1e22)`` (mpmath
reduces the argument at the precision it needs) the result is exact to the
last bit of a float64.

Kinks are differentiated as SymPy knows them: ``Abs(u)`` gives ``sign(u)``,
``Max`` is rewritten with ``Abs`` first; the sweep's points never sit on a
kink, so the derivative there is the one-sided slope of the side they are on.
``log(Abs(gamma(u)))`` (lgamma) is rewritten as ``loggamma(u)``, whose
derivative is ``polygamma(0, u)`` on the whole real line, where SymPy's
derivative of the first form would evaluate gamma itself (``gamma(1e300)``).

Only the benchmarks and their tests use this (SymPy is a dev dependency).

Example:
    >>> from minigrad import ops
    >>> d = Exact.of_rule(ops.LOG)
    >>> float(d.gradient((4.0,))[0])
    0.25
    >>> float(Exact.of_rule(ops.COPYSIGN).gradient((0.75, 1e-320))[1])  # no cancellation residue
    0.0
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath  # type: ignore[import-untyped]
import sympy

from minigrad import Rule
from minigrad.testing import Expression

#: Significant digits of every exact evaluation.
DIGITS = 60
#: SymPy expressions are untyped; this alias marks where they flow.
SymExpr = Any

SYMBOLS: tuple[SymExpr, ...] = tuple(sympy.symbols("x y z u v w", real=True))


@functools.cache
def rule_expr(rule: Rule) -> SymExpr:
    """``rule.math`` as a SymPy expression in the real symbols x, y, ... (one per argument)."""
    if not rule.math:
        raise ValueError(f"rule {rule.name!r} has no math= to differentiate")
    syms = SYMBOLS[: rule.arity]
    return sympy.sympify(rule.math, locals={s.name: s for s in syms})


def _smooth_pieces(expr: SymExpr) -> SymExpr:
    """``Max``/``Min`` written with ``Abs``, ``log(Abs(gamma(u)))`` as ``loggamma(u)``."""
    expr = expr.replace(sympy.Max, lambda *a: _pairwise(a, 1))
    expr = expr.replace(sympy.Min, lambda *a: _pairwise(a, -1))

    def is_lgamma(e: SymExpr) -> bool:
        return (
            isinstance(e, sympy.log)
            and isinstance(e.args[0], sympy.Abs)
            and isinstance(e.args[0].args[0], sympy.gamma)
        )

    return expr.replace(is_lgamma, lambda e: sympy.loggamma(e.args[0].args[0].args[0]))


def _pairwise(args: Sequence[SymExpr], sign: int) -> SymExpr:
    out = args[0]
    for b in args[1:]:
        out = (out + b + sign * sympy.Abs(out - b)) / 2
    return out


class Exact:
    """The exact gradient of one SymPy expression, evaluated at float points.

    Args:
        expr: The function, in ``syms``.
        syms: One symbol per input, in order.
    """

    def __init__(self, expr: SymExpr, syms: Sequence[SymExpr]) -> None:
        self.syms = tuple(syms)
        smooth = _smooth_pieces(expr)
        partials = [sympy.diff(smooth, s) for s in self.syms]
        self._value: Callable[..., Any] = sympy.lambdify(self.syms, smooth, modules="mpmath")
        self._gradient: Callable[..., Any] = sympy.lambdify(
            self.syms, partials, modules="mpmath", cse=True
        )

    @classmethod
    def of_rule(cls, rule: Rule) -> Exact:
        """The gradient of a rule's ``math`` with respect to each of its arguments."""
        return _of_rule(rule)

    @classmethod
    def of_expression(cls, expression: Expression) -> Exact:
        """The gradient of a composite expression (each node's rule by its ``math``)."""
        syms = SYMBOLS[: expression.n_inputs] if expression.n_inputs <= len(SYMBOLS) else ()
        if len(syms) != expression.n_inputs:
            raise ValueError(f"at most {len(SYMBOLS)} inputs, got {expression.n_inputs}")

        def apply(rule: Rule, args: tuple[SymExpr | float, ...]) -> SymExpr:
            # Each argument replaces the rule's own symbol. A float constant enters
            # exactly as a binary Float of DIGITS digits: as a Rational, an exponent
            # such as -1.7197419737863076 sends SymPy after exact roots (gigabytes).
            own = SYMBOLS[: rule.arity]
            exact = [sympy.Float(a, DIGITS) if isinstance(a, float) else a for a in args]
            return rule_expr(rule).xreplace(dict(zip(own, exact, strict=True)))

        return cls(expression.build(list(syms), apply), syms)

    def gradient(self, point: Sequence[float]) -> list[Any]:
        """Every partial at ``point`` as an mpmath number (NaN where it is not real).

        Evaluated at :data:`DIGITS` digits and again at twice as many, doubling
        until two evaluations round to the same float64s: SymPy's derivative
        of copysign, ``Abs(x) * (1/Abs(y) - y*sign(y)/Abs(y)**2)``, is 0 by
        cancellation, and at y = 1e-320 each term is 1e320; at 60 digits,
        ``1 + erf(-20 / sqrt(2))`` is 0.
        """
        return _settled(lambda: list(self._gradient(*(mpmath.mpf(p) for p in point))))

    def value(self, point: Sequence[float]) -> Any:
        """The function itself at ``point`` (an mpmath number; NaN where not real)."""
        return _settled(lambda: [self._value(*(mpmath.mpf(p) for p in point))])[0]


#: Where :func:`_settled` stops doubling the digits.
_MOST_DIGITS = 2000


def _settled(evaluate: Callable[[], list[Any]]) -> list[Any]:
    """``evaluate()`` at DIGITS digits, then twice as many, ..., until it rounds the same."""
    digits, before = DIGITS, None
    while True:
        with mpmath.workdps(digits):
            got = [_real(v) for v in evaluate()]
        if (before is not None and all(map(_same, before, got))) or digits >= _MOST_DIGITS:
            return got
        before, digits = got, 2 * digits


def _same(a: Any, b: Any) -> bool:
    """Whether two mpmath numbers round to the same float64 (NaN is NaN)."""
    fa, fb = float(a), float(b)
    return fa == fb or (fa != fa and fb != fb)


@functools.cache
def _of_rule(rule: Rule) -> Exact:
    return Exact(rule_expr(rule), SYMBOLS[: rule.arity])


def _real(v: Any) -> Any:
    if isinstance(v, mpmath.mpc):
        return v.real if v.imag == 0 else mpmath.mpf("nan")
    if isinstance(v, mpmath.mpf):
        return v
    try:
        return mpmath.mpf(v)  # an int, a SymPy rational, an mpmath constant
    except (TypeError, ValueError):
        return mpmath.mpf("nan")


def to_float(v: Any) -> float:
    """An mpmath number rounded to the nearest float64 (inf beyond its range)."""
    return float(v)


def error_of(estimate: float, exact: Any) -> float:
    """``|estimate - exact|``, computed exactly and rounded up to a float64.

    Example:
        >>> with mpmath.workdps(DIGITS):
        ...     tenth = mpmath.mpf(1) / 10
        >>> 5e-18 < error_of(0.1, tenth) < 6e-18  # 0.1 is not 1/10
        True
    """
    with mpmath.workdps(DIGITS):
        diff = abs(mpmath.mpf(estimate) - exact)
        rounded = float(diff)
        return rounded if rounded >= diff else math.nextafter(rounded, math.inf)


def beyond(estimate: float, bound: float, exact: Any) -> bool:
    """Whether ``|estimate - exact| > bound + representable(exact)``, decided exactly.

    Example:
        >>> beyond(0.0, 0.0, mpmath.exp(-10**6))  # exp(-1e6) rounds to 0.0
        False
        >>> beyond(1.0, 1e-17, mpmath.mpf(1) + mpmath.mpf(2) ** -40)
        True
    """
    with mpmath.workdps(DIGITS):
        slack = mpmath.mpf(bound) + mpmath.mpf(math.ulp(to_float(exact))) / 2
        return bool(abs(mpmath.mpf(estimate) - exact) > slack)


def representable(exact: Any) -> float:
    """How far the float64 nearest to ``exact`` may lie from it: half an ulp.

    A numerical derivative is a float64: a bound below this would be unreachable.
    (Rounded to a float: half the smallest subnormal rounds to 0.0.)

    Example:
        >>> representable(mpmath.mpf(1)) == math.ulp(1.0) / 2
        True
    """
    return math.ulp(to_float(exact)) / 2.0
