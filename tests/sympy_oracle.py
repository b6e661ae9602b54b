"""The exact oracle shared by the test modules: minigrad's derivatives against SymPy's.

:func:`compare` differentiates a function with minigrad to order 3 (every
partial, mixed ones in every order, by calling ``grad(..., create_graph=True)``
repeatedly; the first order also through ``backward()``) and checks each
number against SymPy's exact symbolic derivative, evaluated at the same point
with mpmath at 60 significant digits (the point's floats and the constants
enter exactly). Kinks (``Abs``, ``Max``) are resolved as they are near the
point first (:func:`localize`); the points tested stay away from them.

Tolerance, :data:`RTOL` = 1e-9 relative to ``max(|exact|, 1)``. Each float64
op rounds by ~1e-16 relative; a third-derivative graph here holds tens to a
few hundred ops, whose errors add up and grow under cancellation. The worst
error measured over ~13,000 comparisons (single rules, constants, custom ops
and random composite expressions) is ~1e-14, and pytest's summary prints the
worst per run, so 1e-9 leaves five orders of headroom against flaky failures,
while a wrong rule (a sign, a missing factor, a wrong constant, a partial for
the wrong argument, a partial that drops out of the graph at higher order) is
off by O(1) relative: see the mutants in ``test_rules_sympy.py``. The floor of
1 makes the check absolute for results near zero, where a relative one would
demand digits that cancellation has already destroyed.

Every comparison is counted in :data:`COUNTS`; the totals are printed in
pytest's terminal summary as "SymPy comparisons run: N".
"""

from __future__ import annotations

import collections
import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import mpmath  # type: ignore[import-untyped]
import sympy

from minigrad import Rule, Value, grad
from summary import closing_line

#: SymPy expressions are untyped; this alias marks where they flow.
SymExpr = Any

SYMBOLS: tuple[SymExpr, ...] = tuple(sympy.symbols("x y z u v w", real=True))
RTOL = 1e-9
DIGITS = 30
#: The precision points are substituted with: far beyond float64, so the
#: digits cancellation costs in a third derivative are still in excess.
WORKING_DIGITS = 60
MAX_ORDER = 3

#: Comparisons run so far, by category; printed at the end of the session.
COUNTS: collections.Counter[str] = collections.Counter()
#: The worst |minigrad - SymPy| / max(|SymPy|, 1) seen, by category.
WORST: dict[str, float] = {}


@functools.cache
def rule_sympy(rule: Rule) -> SymExpr:
    """``rule.math`` parsed with real symbols x, y, z, ... (one per argument)."""
    if not rule.math:
        raise AssertionError(f"rule {rule.name!r} has no `math`, so SymPy cannot check it")
    syms = SYMBOLS[: rule.arity]
    expr = sympy.sympify(rule.math, locals={s.name: s for s in syms})
    stray = expr.free_symbols - set(syms)
    if stray:
        raise AssertionError(
            f"rule {rule.name!r}: math {rule.math!r} uses {sorted(map(str, stray))}, "
            f"but the rule takes {rule.arity} argument(s) ({', '.join(map(str, syms))})"
        )
    return expr


def exact(x: float | SymExpr) -> SymExpr:
    """A float as the exact rational it is; anything else unchanged."""
    return sympy.Rational(x) if isinstance(x, float | int) else x


def apply_sympy(rule: Rule, args: tuple[SymExpr | float, ...]) -> SymExpr:
    """``rule`` applied to SymPy expressions or float constants (taken exactly)."""
    return rule_sympy(rule).xreplace({s: exact(a) for s, a in zip(SYMBOLS, args, strict=False)})


def partial_name(idx: tuple[int, ...], names: Sequence[str]) -> str:
    """``d2f/dx dy`` style name of the partial derivative ``idx``."""
    if not idx:
        return "value"
    return f"d{len(idx)}f/" + " ".join(f"d{names[i]}" for i in idx)


def minigrad_table(
    f: Callable[..., Value], point: Sequence[float], max_order: int = MAX_ORDER
) -> dict[tuple[int, ...], float]:
    """Every partial of ``f`` at ``point`` up to ``max_order``, by minigrad's ``grad``."""
    xs = [Value(p) for p in point]
    out = f(*xs)
    table: dict[tuple[int, ...], float] = {(): out.data}
    layer: dict[tuple[int, ...], Value] = {(): out}
    for order in range(1, max_order + 1):
        nxt: dict[tuple[int, ...], Value] = {}
        for idx, v in layer.items():
            ds = grad(v, xs, create_graph=order < max_order)
            if len(ds) != len(xs) or not all(type(d) is Value for d in ds):
                raise AssertionError(f"grad returned {ds!r} for {len(xs)} inputs")
            for i, d in enumerate(ds):
                nxt[(*idx, i)] = d
                table[(*idx, i)] = d.data
        layer = nxt
    return table


def backward_grads(f: Callable[..., Value], point: Sequence[float]) -> list[float]:
    """First partials of ``f`` at ``point`` by ``backward()`` (the float path)."""
    xs = [Value(p) for p in point]
    f(*xs).backward()
    return [x.grad for x in xs]


@functools.lru_cache(maxsize=4096)
def _derivative(expr: SymExpr, syms: tuple[SymExpr, ...], idx: tuple[int, ...]) -> SymExpr:
    if not idx:
        return expr
    return sympy.diff(_derivative(expr, syms, idx[:-1]), syms[idx[-1]])


@functools.lru_cache(maxsize=1024)
def _compiled(exprs: tuple[SymExpr, ...], syms: tuple[SymExpr, ...]) -> Callable[..., Any]:
    # Common subexpressions are computed once: third derivatives repeat the
    # lower ones many times over, and evaluating them as trees is ~100x slower.
    return sympy.lambdify(syms, list(exprs), modules="mpmath", cse=True)  # type: ignore[no-any-return]


_MPMATH_CONSTANT = type(mpmath.e)


def sympy_values(
    exprs: Sequence[SymExpr], syms: Sequence[SymExpr], point: Sequence[float]
) -> list[float]:
    """Each of ``exprs`` at ``point``, evaluated with :data:`WORKING_DIGITS` digits.

    The point's floats enter exactly (an mpmath number of that precision holds
    a float64 exactly), as do the expressions' rational constants.
    """
    f = _compiled(tuple(exprs), tuple(syms))
    with mpmath.workdps(WORKING_DIGITS):
        results = f(*(mpmath.mpf(p) for p in point))
    values: list[float] = []
    for expr, r in zip(exprs, results, strict=True):
        # A constant expression comes back as it is: an int, a SymPy rational,
        # or an mpmath constant such as e (exp(exp(x - x))) or pi.
        if not isinstance(r, mpmath.mpf | _MPMATH_CONSTANT | int | float | sympy.Rational):
            raise AssertionError(f"SymPy gives {r} (not a real number) for {expr} at {point}")
        values.append(float(r))
    return values


def localize(expr: SymExpr, syms: Sequence[SymExpr], point: Sequence[float]) -> SymExpr:
    """``expr`` with every kink resolved as it is near ``point``.

    ``Abs(u)`` becomes ``u`` or ``-u``, ``Max``/``Min`` their active argument,
    by the sign of ``u`` (which argument is larger) at ``point``. The result
    equals ``expr`` on a neighbourhood of ``point`` (the points tested stay
    away from kinks), so its derivatives there are ``expr``'s, and SymPy
    differentiates it without ``sign``, ``Heaviside`` and ``DiracDelta``
    terms, which it cannot always evaluate (``Derivative(sign(log(...)))``).
    """
    subs = {s: sympy.Float(p, WORKING_DIGITS) for s, p in zip(syms, point, strict=True)}

    def at_point(e: SymExpr) -> float:
        return float(e.xreplace(subs).evalf(DIGITS))

    def walk(e: SymExpr) -> SymExpr:
        if not e.args or not isinstance(e, sympy.Expr):
            return e
        e = e.func(*(walk(a) for a in e.args))
        if isinstance(e, sympy.Abs):
            (u,) = e.args
            value = at_point(u)
            if value == 0.0:
                raise AssertionError(f"{e} is at its kink at {point}")
            return u if value > 0.0 else -u
        if isinstance(e, sympy.Max | sympy.Min):
            ranked = sorted(e.args, key=at_point, reverse=isinstance(e, sympy.Max))
            if at_point(ranked[0]) == at_point(ranked[1]):
                raise AssertionError(f"{e} is at its kink at {point}")
            return ranked[0]
        return e

    # Rebuilding a node may make a new kink that was not among its arguments
    # (sqrt(4 * x**2) evaluates to 2 * Abs(x)): walk again until none is left.
    for _ in range(8):
        expr = walk(expr)
        if not expr.has(sympy.Abs, sympy.Max, sympy.Min):
            return expr
    raise AssertionError(f"kinks remain in {expr} after resolving them at {point}")


def exact_partials(
    expr: SymExpr, syms: Sequence[SymExpr], point: Sequence[float], max_order: int = MAX_ORDER
) -> dict[tuple[int, ...], float]:
    """Every partial of ``expr`` at ``point`` up to ``max_order``, exactly (then rounded).

    Keyed by the sorted indices of the symbols differentiated by (``()`` is
    the value): mixed partials in any order share one SymPy derivative, so
    look one up as ``table[tuple(sorted(idx))]``. Kinks are resolved as they
    are near the point (:func:`localize`).
    """
    syms = tuple(syms)
    expr = localize(expr, syms, point)
    keys = [
        key
        for order in range(max_order + 1)
        for key in itertools.combinations_with_replacement(range(len(point)), order)
    ]
    derivatives = [_derivative(expr, syms, key) for key in keys]
    return dict(zip(keys, sympy_values(derivatives, syms, point), strict=True))


def check(got: float, want: float, what: str, category: str) -> None:
    """Assert ``got`` matches ``want`` to :data:`RTOL` and count the comparison."""
    __tracebackhide__ = True
    COUNTS[category] += 1
    scale = max(abs(want), 1.0)
    error = abs(got - want) / scale if got - got == 0.0 else float("inf")
    WORST[category] = max(WORST.get(category, 0.0), error)
    if not error <= RTOL:
        raise AssertionError(
            f"{what}: minigrad {got!r}, SymPy {want!r}, "
            f"|difference| / max(|SymPy|, 1) = {error:.3g} > {RTOL:g}"
        )


def compare(
    label: str,
    f: Callable[..., Value],
    point: Sequence[float],
    expr: SymExpr,
    syms: Sequence[SymExpr],
    *,
    category: str,
    max_order: int = MAX_ORDER,
) -> None:
    """Check ``f``'s value and every partial up to ``max_order`` against SymPy.

    Args:
        label: Names the function in failure messages (rule, expression).
        f: Takes one Value per entry of ``point``.
        point: Where to compare.
        expr: The same function in SymPy, in ``syms``.
        syms: One symbol per input of ``f``.
        category: Which counter to add to.
        max_order: The highest order compared.
    """
    __tracebackhide__ = True
    names = [str(s) for s in syms]
    at = ", ".join(f"{n}={p!r}" for n, p in zip(names, point, strict=True))
    got = minigrad_table(f, point, max_order)
    exact_values = exact_partials(expr, syms, point, max_order)
    for order in range(max_order + 1):
        for idx in itertools.product(range(len(point)), repeat=order):
            key = tuple(sorted(idx))
            what = f"{label}: order {order}, {partial_name(idx, names)} at {at}"
            check(got[idx], exact_values[key], what, category)
    for i, g in enumerate(backward_grads(f, point)):
        what = f"{label}: backward(), d{names[i]} at {at}"
        check(g, exact_values[(i,)], what, category)


@closing_line("sympy comparisons")
def _closing() -> str:
    total = sum(COUNTS.values())
    if not total:
        return ""
    parts = ", ".join(
        f"{k} {n} (worst relative error {WORST.get(k, 0.0):.2g})" for k, n in sorted(COUNTS.items())
    )
    return f"SymPy comparisons run: {total}: {parts}"


def compare_rule(
    rule: Rule,
    point: Sequence[float],
    *,
    is_const: Sequence[bool] | None = None,
    category: str,
    label: str = "rule",
) -> None:
    """Check ``rule`` at ``point`` against its ``math``, to third order.

    Args:
        rule: The rule (built-in or custom), applied with ``rule(*args)``.
        point: One float per argument.
        is_const: Which arguments to pass as float constants rather than
            Values (their partials are then never needed); none by default.
        category: Which counter to add to.
        label: How to name the rule in failure messages.
    """
    __tracebackhide__ = True
    consts = list(is_const) if is_const is not None else [False] * rule.arity
    variable = [i for i in range(rule.arity) if not consts[i]]

    def f(*vs: Value) -> Value:
        args: list[Value | float] = list(point)
        for i, v in zip(variable, vs, strict=True):
            args[i] = v
        node = rule(*args)
        if node.op != rule.name or node.parents != vs:
            raise AssertionError(f"{rule.name}: op {node.op!r}, parents {node.parents!r}")
        return node

    syms = SYMBOLS[: rule.arity]
    expr = rule_sympy(rule).xreplace(
        {syms[i]: exact(point[i]) for i in range(rule.arity) if consts[i]}
    )
    where = f" with constant argument(s) {[i for i in range(rule.arity) if consts[i]]}"
    compare(
        f"{label} {rule.name!r}" + (where if any(consts) else ""),
        f,
        [point[i] for i in variable],
        expr,
        [syms[i] for i in variable],
        category=category,
    )
