"""How accurate are minigrad's derivatives? Every built-in rule, orders 1-3, against exact ones.

One command sweeps every rule of ``minigrad.ops.TABLE`` over magnitudes from
1e-300 to 1e300 (both signs, wherever the rule is defined), over the ordinary
range in fine steps and up to the ends of its domain, and compares each
derivative of order 1, 2 and 3 (mixed ones of two-argument rules included)
with SymPy's exact derivative of the rule's ``math``, evaluated by mpmath with
as many digits as it takes; then every one-argument rule at e**x and e**-x
(x up to 700), where its argument is beyond anything its sample draws::

    python benchmarks/accuracy.py            # the full sweep (3-4 min): Markdown on stdout
    python benchmarks/accuracy.py --quick    # the size the test suite runs (~10 s)
    python benchmarks/accuracy.py --details  # and every comparison above the goal
    python benchmarks/accuracy.py --write    # and the tables into results.md
    python benchmarks/accuracy.py --only tanh,atan2

``tests/test_accuracy.py`` runs the quick sweep and asserts the goal, so the
figures here are the ones CI checks, at a larger size. Needs SymPy (and its
mpmath), as the test suite does.

The goal
--------
Every derivative within 1e-12 relative, or 1e-300 absolute, of the exact
value wherever that value is a finite float; where it is not (beyond the
largest float), minigrad must raise, not return a number. A derivative is
measured four ways, each against the same exact value:

- ``graph``: ``grad(..., create_graph=True)`` repeated, the result's ``.data``
  (the partials applied to Values: the route to every higher order);
- ``floats``: the same, the last order on floats (``create_graph=False``);
- ``backward``: order 1 by ``Value.backward()``;
- ``hessian``: order 2 by ``minigrad.hessian`` (forward mode over reverse).

Each derivative is taken with respect to one input at a time
(``grad(v, [x])``), and only along a path of lower derivatives that are
finite: d2/dy dx of ``x / y`` is finite at (1e250, 1e-50), d/dy is not.

The oracle
----------
SymPy differentiates the rule's ``math``; mpmath evaluates each derivative at
the point (its floats taken exactly) with 30 digits, then 60, 120, ... up to
1920, until two precisions agree to 25 digits. A value below 1e-330 at the
two highest precisions is taken as 0: it is below every float (so
cancellation in SymPy's formula, ``1 - tanh(x)**2`` at ``x = 350``, 4e-304
after 300 digits, never passes for an exact 0 at 30 or 60). A value beyond
10**-10000 or 10**10000 at two precisions is taken as it is, digits or not
(e**-(x**2) at x = 1e300). And e**z for z < -10**4 is taken as 0 (see
:func:`_exp`): mpmath needs up to a second for each such power.

The points
----------
Magnitudes ``m * 10**k`` for ``m`` in 1 and 3 and ``k`` from -300 to 300
(every 2nd ``k`` in the full sweep, every 25th in the quick one), both signs;
the ordinary range ``0.137 * i`` (full) or ``1.37 * i`` (quick) up to 60,
both signs; ``1e-k`` inside every finite end of the domain (``asin`` at
``1 - 1e-k``, ``log1p`` at ``-1 + 1e-k``, ``acosh`` at ``1 + 1e-k``), next to
``tan``'s poles and to the gamma family's (0, -1, -2, -10, -100, -170). For
two-argument rules, every pair of ``+-10**k`` (every 20th ``k``, times 1 and
3, in the full sweep; every 100th in the quick one) and +-0.37, 1.3, 2.9,
7.1: so the diagonal ``y = x`` and arguments 1e600 apart are in. A point where
the forward is not a finite float (``exp(1000)``) is left out: there is no
derivative to measure.

What is left out, and why
-------------------------
Near a zero of a derivative that is not an exact float, no float64 formula
keeps a relative error: the derivative is a sum of terms that cancel there,
each with a rounding error of its own size, so the error grows as
``1e-16 / distance``. :data:`NEAR_ZEROS` lists them for the one-argument
rules (the third derivative of tanh at +-0.6585, of sigmoid at +-2.2924, of
erf at +-1/sqrt(2), of atan at +-1/sqrt(3); the first of gelu at -0.7518,
...); an order is not measured within 1e-2 (relative) of its zeros, and the
report counts the points so left out (none, at these grids). The third
derivative of gelu is listed at +-2, an exact float: x (x**2 - 4) phi(x) is a
sum in minigrad's graph. The two-argument rules have such curves too
(``x**2 = 3 y**2`` for atan2, ``1 + y log(x) = 0`` for d2(x**y)/dx dy), which
the grid does not meet; their zeros that are exact floats (0, the diagonal
``y = x`` of atan2, ``x = 1`` and integer ``y`` of ``x ** y``) are swept.

The composites measure what reverse mode can hold: the error of
``d^k/dx^k f(e**x)`` is relative to the sum of the magnitudes of its chain
rule's terms, ``S(k, j) u**j f^(j)(u)`` (``log(e**x)`` has the second
derivative 0 as 1 - 1). Raising is right where a factor of a term is beyond
the floats (the third derivative of ``tanh(e**400)`` multiplies u**3 =
1e521 by 0). Where a slope ``f^(j)(u)`` is below the smallest float
(``atan'(u) = 1/(1 + u**2)`` at u = e**400, 3.7e-348), every float reverse
pass (minigrad's, PyTorch's, JAX's) makes it 0 before the factor u**j that
would bring the product back into range: the report counts those points as
"lost", apart from the misses.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mpmath  # type: ignore[import-untyped]
import sympy

import minigrad
from minigrad import Rule, Value, grad, ops

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))  # the SymPy oracle the tests share
sys.path.insert(0, HERE)
from publish import KEPT  # noqa: E402
from sympy_oracle import SYMBOLS, _derivative, localize, rule_sympy  # noqa: E402

#: The goal: relative error, or absolute error where the value is below every normal float.
RTOL = 1e-12
ATOL = 1e-300
MAX_ORDER = 3
#: The precisions the oracle tries, in decimal digits; two neighbours must agree.
PRECISIONS = (30, 60, 120, 240, 480, 960, 1920)
AGREE = mpmath.mpf(10) ** -25
#: Below this at the two highest precisions, the exact value is taken as 0.
BELOW_FLOATS = mpmath.mpf(10) ** -330
FLOAT_MAX = mpmath.mpf(sys.float_info.max)
#: Values this far beyond the floats at two precisions are taken as they are
#: (0, or beyond the largest float) without digits agreeing: a cancellation
#: leaves a value near 10**-digits times its terms, never 10**-10000.
FAR_BELOW = mpmath.mpf(10) ** -10000
FAR_ABOVE = mpmath.mpf(10) ** 10000
RESULTS = os.path.join(HERE, "results.md")
#: The markers of the tables in results.md (``run.py --readme`` keeps them).
BEGIN, END = KEPT[0]
MODES = ("graph", "floats", "backward", "hessian")

#: Zeros of a derivative that are not exact floats, by rule and order: near
#: them no float64 evaluation keeps a relative error (see the module's text).
#: Points are kept 1e-2 (relative) away; one-argument rules only.
NEAR_ZEROS: dict[str, dict[int, tuple[float, ...]]] = {
    "tanh": {3: (0.6584789484624084, -0.6584789484624084)},
    "sigmoid": {3: (2.2924316695611777, -2.2924316695611777)},
    "softplus": {},
    "erf": {3: (0.7071067811865476, -0.7071067811865476)},
    "erfc": {3: (0.7071067811865476, -0.7071067811865476)},
    "gelu": {
        1: (-0.7517915243319229,),
        2: (1.4142135623730951, -1.4142135623730951),
        3: (2.0, -2.0),
    },
    "atan": {3: (0.5773502691896258, -0.5773502691896258)},
    "asinh": {3: (0.7071067811865476, -0.7071067811865476)},
    "lgamma": {1: (1.4616321449683622,)},
    "gamma": {1: (1.4616321449683622,)},
    "digamma": {0: (1.4616321449683622,)},
}
#: How close to a zero of NEAR_ZEROS a point may come (relative).
ZERO_MARGIN = 1e-2


@dataclass(frozen=True)
class Size:
    """How many points: every ``step``-th power of ten, ordinary points every ``spacing``."""

    step: int
    spacing: float
    edges: int  # 1e-k inside a domain end for k = 1 .. 16, every ``edges``-th
    pair_step: int  # powers of ten for each argument of a two-argument rule
    pair_mantissas: tuple[float, ...]  # times each power of ten


FULL = Size(step=2, spacing=0.137, edges=1, pair_step=20, pair_mantissas=(1.0, 3.0))
QUICK = Size(step=25, spacing=1.37, edges=3, pair_step=100, pair_mantissas=(1.0,))


# The points.


def _inside(rule: Rule, point: Sequence[float]) -> bool:
    return all(lo < x < hi for x, (lo, hi) in zip(point, rule.domain, strict=True))


def _magnitudes(step: int, mantissas: tuple[float, ...] = (1.0, 3.0)) -> list[float]:
    return [m * 10.0**k for k in range(-300, 301, step) for m in mantissas]


#: The poles of the gamma family the sweep goes up to (it has one at every integer <= 0).
GAMMA_POLES = (0.0, -1.0, -2.0, -10.0, -100.0, -170.0)


def _gamma_like(rule: Rule) -> bool:
    return rule in (ops.LGAMMA, ops.GAMMA, ops.DIGAMMA)


def _edges(rule: Rule, size: Size) -> list[float]:
    """Points just inside every finite end of the domain, and next to every pole."""
    (lo, hi) = rule.domain[0]
    ks = range(1, 17, size.edges)
    near: list[float] = []
    for end, side in ((lo, 1.0), (hi, -1.0)):
        if math.isfinite(end):
            near += [end + side * max(1.0, abs(end)) * 10.0**-k for k in ks]
    if _gamma_like(rule):
        for pole in GAMMA_POLES:
            near += [pole + s * max(1.0, abs(pole)) * 10.0**-k for k in ks for s in (1.0, -1.0)]
    elif rule is ops.TAN:
        near += [a + s * 10.0**-k for a in rule.avoid for k in ks for s in (1.0, -1.0)]
    return near


def points_of(rule: Rule, size: Size) -> list[tuple[float, ...]]:
    """The points the sweep measures ``rule`` at (the forward may still fail at some)."""
    if rule.arity == 1:
        base = _magnitudes(size.step)
        base += [size.spacing * i for i in range(1, int(60 / size.spacing) + 1)]
        xs = {s * x for x in base for s in (1.0, -1.0)} | set(_edges(rule, size))
        found: list[tuple[float, ...]] = [(x,) for x in sorted(xs) if _inside(rule, (x,))]
    else:
        side = [*_magnitudes(size.pair_step, size.pair_mantissas), 0.37, 1.3, 2.9, 7.1]
        values = sorted({s * x for x in side for s in (1.0, -1.0)})
        found = [p for p in itertools.product(values, values) if _inside(rule, p)]
    return [p for p in found if not any(x == a for x in p for a in rule.avoid)]


def skipped_orders(rule: Rule, point: Sequence[float]) -> set[int]:
    """The orders not measured at ``point``: those with a zero of NEAR_ZEROS too close."""
    zeros = NEAR_ZEROS.get(rule.name, {})
    return {
        order
        for order, roots in zeros.items()
        for r in roots
        if abs(point[0] - r) < ZERO_MARGIN * abs(r)
    }


def check_points(rule: Rule, size: Size) -> int:
    """How many points are kept out of a near zero (must be none for the ordinary grid)."""
    return sum(1 for p in points_of(rule, size) if rule.arity == 1 and skipped_orders(rule, p))


# The exact side.


def _exp(z: Any) -> Any:
    """mpmath's exp, but 0 below -10**4, where e**z < 10**-4342.

    mpmath takes up to a second for e**-(x**2) at x = 1e300, over and over as
    the precision grows; SymPy multiplies such a power only by polynomials
    and quotients (it merges exp(a) * exp(b) into exp(a + b)), so 0 changes
    no derivative that is a float. An exact 0 must still hold at the two
    highest precisions to be taken (see :func:`exact_derivatives`).
    """
    return mpmath.mpf(0) if z < -10_000 else mpmath.exp(z)


@functools.lru_cache(maxsize=512)
def _lambdified(exprs: tuple[Any, ...], syms: tuple[Any, ...]) -> Callable[..., Any]:
    modules = [{"exp": _exp}, "mpmath"]
    return sympy.lambdify(syms, list(exprs), modules=modules, cse=True)  # type: ignore[no-any-return]


def _keys(arity: int) -> list[tuple[int, ...]]:
    return [
        key
        for order in range(1, MAX_ORDER + 1)
        for key in itertools.combinations_with_replacement(range(arity), order)
    ]


def exact_derivatives(rule: Rule, point: Sequence[float]) -> dict[tuple[int, ...], Any]:
    """Every derivative of orders 1-3 at ``point`` as an mpmath number (None: unresolved).

    Keyed by sorted argument indices. See the module's text for the precisions.
    """
    syms = tuple(SYMBOLS[: rule.arity])
    expr = localize(rule_sympy(rule), syms, point)
    keys = _keys(rule.arity)
    values = exact_values(tuple(_derivative(expr, syms, key) for key in keys), syms, point)
    return dict(zip(keys, values, strict=True))


def exact_values(
    exprs: tuple[Any, ...], syms: tuple[Any, ...], point: Sequence[float]
) -> list[Any]:
    """Each SymPy expression at ``point``, exactly (see the module's text); None: unresolved."""
    f = _lambdified(exprs, syms)
    found: dict[int, Any] = {}
    for i, e in enumerate(exprs):
        if e.is_Number:
            found[i] = mpmath.mpf(sympy.Rational(e).p) / sympy.Rational(e).q
    previous: list[Any] | None = None
    values: list[Any] = []
    for digits in PRECISIONS:
        with mpmath.workdps(digits):
            try:
                values = [mpmath.mpf(v) for v in f(*(mpmath.mpf(p) for p in point))]
            except (ArithmeticError, ValueError, TypeError):
                values = [mpmath.nan] * len(exprs)
        if previous is not None:
            for i, (a, b) in enumerate(zip(previous, values, strict=True)):
                if i in found:
                    continue
                if b != 0 and abs(a - b) <= AGREE * abs(b):
                    found[i] = b
                elif a != 0 and b != 0 and abs(a) < FAR_BELOW and abs(b) < FAR_BELOW:
                    found[i] = mpmath.mpf(0)  # e**-(x**2) at x = 1e300: no digits to agree on
                elif abs(a) > FAR_ABOVE and abs(b) > FAR_ABOVE and a * b > 0:
                    found[i] = b
        if len(found) == len(exprs):
            break
        previous = values
    result: list[Any] = []
    for i, (a, b) in enumerate(zip(previous or values, values, strict=True)):
        if i in found:
            result.append(found[i])
        elif abs(a) < BELOW_FLOATS and abs(b) < BELOW_FLOATS:
            result.append(mpmath.mpf(0))
        else:
            result.append(None)
    return result


# minigrad's side.


def _call(rule: Rule, xs: Sequence[Value | float]) -> Value:
    return rule(*xs)


def minigrad_derivatives(
    rule: Rule, point: Sequence[float]
) -> dict[tuple[str, tuple[int, ...]], float | BaseException] | None:
    """Every derivative of orders 1-3 at ``point``, by every mode; None if the forward fails."""
    xs = [Value(p) for p in point]
    try:
        out = _call(rule, xs)
    except (ArithmeticError, ValueError):
        return None
    got: dict[tuple[str, tuple[int, ...]], float | BaseException] = {}
    layer: dict[tuple[int, ...], Value | BaseException] = {(): out}
    for order in range(1, MAX_ORDER + 1):
        following: dict[tuple[int, ...], Value | BaseException] = {}
        for idx, v in layer.items():
            for i, x in enumerate(xs):
                key = (*idx, i)
                if isinstance(v, BaseException):
                    following[key] = got[("graph", key)] = got[("floats", key)] = v
                    continue
                try:
                    (d,) = grad(v, [x], create_graph=order < MAX_ORDER)
                    following[key] = d
                    got[("graph", key)] = d.data
                except (ArithmeticError, ValueError) as exc:
                    following[key] = got[("graph", key)] = exc
                if order < MAX_ORDER:
                    try:
                        got[("floats", key)] = grad(v, [x])[0].data
                    except (ArithmeticError, ValueError) as exc:
                        got[("floats", key)] = exc
        layer = following
    for i in range(rule.arity):
        # The other arguments as float constants: only this partial is evaluated.
        args: list[Value | float] = list(point)
        leaf = args[i] = Value(point[i])
        try:
            _call(rule, args).backward()
            got[("backward", (i,))] = leaf.grad
        except (ArithmeticError, ValueError) as exc:
            got[("backward", (i,))] = exc
    try:
        rows = minigrad.hessian(lambda *vs: _call(rule, vs), [Value(p) for p in point])
        for i, row in enumerate(rows):
            for j, h in enumerate(row):
                got[("hessian", (i, j))] = float(h.data if isinstance(h, Value) else h)
    except (ArithmeticError, ValueError) as exc:
        for i, j in itertools.product(range(rule.arity), repeat=2):
            got[("hessian", (i, j))] = exc
    return got


# Comparing.


@dataclass
class Worst:
    """The worst comparison of one rule at one order."""

    error: float = 0.0
    point: tuple[float, ...] = ()
    mode: str = ""
    idx: tuple[int, ...] = ()
    got: float | BaseException | None = None
    exact: Any = None
    count: int = 0


@dataclass
class RuleResult:
    """One rule's sweep: the worst error per order, and everything above the goal."""

    rule: Rule
    points: int = 0
    no_forward: int = 0
    near_zero: int = 0
    unresolved: int = 0
    worst: dict[int, Worst] = field(default_factory=dict)
    misses: list[tuple[float, tuple[float, ...], str, tuple[int, ...], Any, Any]] = field(
        default_factory=list
    )
    seconds: float = 0.0


def error_of(got: float | BaseException, exact: Any) -> float:
    """The relative error of ``got`` (0 within ATOL); inf for a wrong raise or a silent number."""
    finite = abs(exact) <= FLOAT_MAX
    if isinstance(got, BaseException):
        return math.inf if finite else 0.0
    if not finite or got - got != 0.0:
        return math.inf
    diff = abs(mpmath.mpf(got) - exact)
    if diff <= ATOL:
        return 0.0
    return float(diff / abs(exact)) if exact != 0 else math.inf


def measure(rule: Rule, point: Sequence[float], result: RuleResult) -> None:
    """Add ``rule``'s comparisons at ``point`` to ``result``."""
    got = minigrad_derivatives(rule, point)
    if got is None:
        result.no_forward += 1
        return
    result.points += 1
    exact = exact_derivatives(rule, point)
    skip = skipped_orders(rule, point) if rule.arity == 1 else set()
    if skip:
        result.near_zero += 1
    finite = {k: v is not None and abs(v) <= FLOAT_MAX for k, v in exact.items()}
    hessian_finite = all(finite[k] for k in _keys(rule.arity) if len(k) == 2)
    for (mode, idx), value in got.items():
        order = len(idx)
        if order in skip or (mode == "hessian" and not hessian_finite):
            continue
        # A derivative taken along a path of lower ones that are not finite
        # (d/dy then d/dx of x/y where x/y**2 overflows) cannot be had.
        if not all(finite[tuple(sorted(idx[:k]))] for k in range(1, order)):
            continue
        want = exact[tuple(sorted(idx))]
        if want is None:
            result.unresolved += 1
            continue
        error = error_of(value, want)
        worst = result.worst.setdefault(order, Worst())
        worst.count += 1
        if error > worst.error or not worst.point:
            worst.error, worst.point, worst.mode, worst.idx = error, tuple(point), mode, idx
            worst.got, worst.exact = value, want
        if error > RTOL:
            result.misses.append((error, tuple(point), mode, idx, value, want))


def sweep(rules: Iterable[Rule], size: Size) -> list[RuleResult]:
    """Measure every rule at every point of ``size``."""
    results = []
    for rule in rules:
        start = time.process_time()
        result = RuleResult(rule)
        for point in points_of(rule, size):
            measure(rule, point, result)
        result.seconds = time.process_time() - start
        results.append(result)
    return results


# Composites: a rule at e**x and e**-x, where its argument is far beyond its sample.

#: x in f(e**x) and f(e**-x): e**x from 5e8 to 1e304.
COMPOSITE_XS = (20.0, 50.0, 120.0, 200.0, 300.0, 400.0, 600.0, 700.0)
#: d^k/dx^k f(e**x) = sum_j S(k, j) u**j f^(j)(u), u = e**x (Stirling numbers S).
_STIRLING = {1: {1: 1}, 2: {1: 1, 2: 1}, 3: {1: 1, 2: 3, 3: 1}}
_TINY = mpmath.mpf(sys.float_info.min)


@dataclass
class CompositeResult:
    """One rule's composites: the worst error relative to the chain rule's terms, per order."""

    rule: Rule
    points: int = 0
    worst: dict[int, float] = field(default_factory=dict)
    raised: int = 0  # where an intermediate is beyond the floats: allowed
    lost: int = 0  # an adjoint below the floats, flushed to 0: see the module's text
    misses: list[tuple[float, float, int, Any, Any]] = field(default_factory=list)


def composite(rule: Rule, sign: float, x: float, result: CompositeResult) -> None:
    """Add ``rule(e**(sign x))``'s derivatives of orders 1-3 at ``x`` to ``result``.

    The reference is the chain rule's sum at u, the float e**(sign x) that
    minigrad computed (so the rounding of u, which the composite cannot
    undo, is not counted): sign**k sum_j S(k, j) u**j f^(j)(u), f^(j)(u)
    exact. The error is measured against the sum of the terms' magnitudes
    (a composite can cancel: log(e**x) has the second derivative 0 as
    1 - 1). Raising is right where a term's factor u**j or f^(j)(u) is
    beyond the floats; a number must be within the goal.
    """
    v = Value(x)
    try:
        inner = (v * sign).exp()
        node = _call(rule, [inner])
    except (ArithmeticError, ValueError):
        return
    result.points += 1
    u = mpmath.mpf(inner.data)
    exact = exact_derivatives(rule, (inner.data,))
    for k in range(1, MAX_ORDER + 1):
        slopes = [exact[(0,) * j] for j in range(1, k + 1)]
        if any(d is None for d in slopes):
            raise AssertionError(f"oracle unresolved: {rule.name} at {inner.data!r}")
        terms = [c * u**j * slopes[j - 1] for j, c in _STIRLING[k].items()]
        want = sign**k * mpmath.fsum(terms)
        scale = mpmath.fsum(abs(t) for t in terms)
        beyond = any(abs(u) ** j > FLOAT_MAX for j in range(1, k + 1)) or any(
            d != 0 and not _TINY <= abs(d) <= FLOAT_MAX for d in slopes
        )
        try:
            (node,) = grad(node, [v], create_graph=True)
        except (ArithmeticError, ValueError) as exc:
            if beyond:
                result.raised += 1
            else:
                result.misses.append((math.inf, x * sign, k, exc, want))
            return
        error = float(abs(mpmath.mpf(node.data) - want) / scale) if scale else 0.0
        if abs(mpmath.mpf(node.data) - want) <= ATOL:
            error = 0.0
        if error > RTOL and any(d != 0 and abs(d) < _TINY for d in slopes):
            # A slope of f at u is below the floats (atan'(u) = 1/(1 + u**2) at
            # u = e**400): the partial is 0 in any float reverse pass, and the
            # factor u**j that would bring the product back comes after it.
            result.lost += 1
            return
        result.worst[k] = max(result.worst.get(k, 0.0), error)
        if error > RTOL:
            result.misses.append((error, x * sign, k, node.data, want))


def composites(rules: Iterable[Rule]) -> list[CompositeResult]:
    """Every one-argument rule at e**x and e**-x for x in COMPOSITE_XS."""
    results = []
    for rule in rules:
        if rule.arity != 1:
            continue
        result = CompositeResult(rule)
        for x in COMPOSITE_XS:
            for sign in (1.0, -1.0):
                composite(rule, sign, x, result)
        results.append(result)
    return results


# The report.


def _fmt(error: float) -> str:
    if error == 0.0:
        return "0"
    if math.isinf(error):
        return "**wrong**"
    shown = f"{error:.1e}"
    return f"**{shown}**" if error > RTOL else shown


def _at(point: Sequence[float]) -> str:
    return ", ".join(f"{x:.4g}" for x in point)


def table(results: Sequence[RuleResult]) -> str:
    """The Markdown table: worst relative error per rule and order, and where."""
    lines = [
        "| rule | points | order 1 | order 2 | order 3 | worst at (by) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        cells = [_fmt(r.worst[o].error) if o in r.worst else "" for o in (1, 2, 3)]
        worst = max(r.worst.values(), key=lambda w: w.error, default=None)
        where = f"{_at(worst.point)} ({worst.mode})" if worst and worst.error else ""
        lines.append(f"| {r.rule.name} | {r.points} | {' | '.join(cells)} | {where} |")
    return "\n".join(lines)


def composite_table(results: Sequence[CompositeResult]) -> str:
    """The Markdown table of the composites f(e**x) and f(e**-x)."""
    lines = [
        "| rule | points | order 1 | order 2 | order 3 | raised | lost |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        cells = [_fmt(r.worst[o]) if o in r.worst else "" for o in (1, 2, 3)]
        lines.append(
            f"| {r.rule.name} | {r.points} | {' | '.join(cells)} | {r.raised or ''} "
            f"| {r.lost or ''} |"
        )
    return "\n".join(lines)


def details(results: Sequence[RuleResult], limit: int = 8) -> str:
    """Every rule's comparisons above the goal (the worst ``limit`` of each)."""
    lines = []
    for r in results:
        for error, point, mode, idx, got, want in sorted(r.misses, key=lambda m: -m[0])[:limit]:
            shown = got if not isinstance(got, BaseException) else f"raised {got}"[:200]
            lines.append(
                f"{r.rule.name} d{idx} at ({_at(point)}) by {mode}: error {error:.3g}, "
                f"minigrad {shown}, exact {mpmath.nstr(want, 17, max_fixed=0)[:40]}"
            )
    return "\n".join(lines)


def report(
    results: Sequence[RuleResult], mixed: Sequence[CompositeResult], size: Size, seconds: float
) -> str:
    """The tables with the words around them: the goal, the size, how many comparisons."""
    compared = sum(w.count for r in results for w in r.worst.values())
    misses = sum(len(r.misses) for r in results)
    unresolved = sum(r.unresolved for r in results)
    near = sum(r.near_zero for r in results)
    mixed_misses = sum(len(r.misses) for r in mixed)
    lost = sorted({r.rule.name for r in mixed if r.lost})
    command = f"python benchmarks/accuracy.py{' --quick' if size is QUICK else ''}"
    return "\n\n".join(
        [
            "## Derivative accuracy: every rule, orders 1-3, against an exact oracle",
            f"`{command}` (minigrad {minigrad.__version__}, SymPy {sympy.__version__}, "
            f"mpmath {mpmath.__version__}; {seconds:.0f} s of CPU time): {compared:,} "
            f"comparisons at {sum(r.points for r in results):,} points, magnitudes 1e-300 to "
            "1e300, both signs, the ordinary range and the ends of each domain. A cell is the "
            f"worst relative error (0 where within {ATOL:g} absolute) of the rule's derivatives "
            "of that order, mixed ones included, by grad with create_graph, on floats, by "
            "backward and by hessian, against SymPy's exact derivative evaluated by mpmath "
            f"until two precisions agree to 25 digits. Goal: {RTOL:g}. **wrong** would mark a "
            "raise where the value is a finite float, or a number where it is not. Left out: "
            "points where the forward itself is not finite, and orders within 1e-2 of a zero "
            f"that is not an exact float ({near} points); the script's text says why.",
            table(results),
            f"Comparisons above the goal: {misses}; oracle unresolved: {unresolved}.",
            "Each one-argument rule at u = e**x and e**-x, x = "
            f"{', '.join(f'{x:g}' for x in COMPOSITE_XS)} (u up to 1e304): the error of "
            "d^k/dx^k f(u) relative to the sum of the magnitudes of the chain rule's terms "
            "S(k, j) u**j f^(j)(u). *raised*: points where minigrad raised and a factor of a "
            "term is beyond the floats (allowed). *lost*: points where a slope f^(j)(u) is "
            "below the smallest float, so any float reverse pass has it 0 before the factor "
            "u**j that would bring the product back (the result is then wrong without an "
            f"error: {', '.join(lost) or 'none'}).",
            composite_table(mixed),
            f"Composite comparisons above the goal, apart from *lost*: {mixed_misses}.",
        ]
    )


def write_results(text: str, path: str = RESULTS) -> None:
    """Put ``text`` between the markers in results.md (appended the first time)."""
    with open(path, encoding="utf-8") as f:
        old = f.read()
    block = f"{BEGIN}\n{text}\n{END}"
    start, end = old.find(BEGIN), old.find(END)
    if start >= 0 and end > start:
        new = old[:start] + block + old[end + len(END) :]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="the test suite's size")
    parser.add_argument("--details", action="store_true", help="every miss, worst first")
    parser.add_argument("--write", action="store_true", help="write the tables into results.md")
    parser.add_argument("--only", default="", help="comma-separated rule names")
    args = parser.parse_args(argv)
    size = QUICK if args.quick else FULL
    names = {n for n in args.only.split(",") if n}
    rules = [r for r in ops.TABLE if not names or r.name in names]
    start = time.process_time()
    results = sweep(rules, size)
    mixed = composites(rules)
    text = report(results, mixed, size, time.process_time() - start)
    print(text)
    if args.details:
        print()
        print(details(results))
        for r in mixed:
            for error, x, k, got, _ in r.misses:
                print(f"{r.rule.name}(e**{x:g}) order {k}: error {error:.3g}, minigrad {got}")
    if args.write:
        write_results(text)
    failed = any(r.misses or r.unresolved for r in results) or any(r.misses for r in mixed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
