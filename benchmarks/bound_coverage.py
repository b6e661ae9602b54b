"""How far the checker's error bounds can be trusted: the measurement behind ``SAFETY``.

``python benchmarks/bound_coverage.py`` estimates derivatives the way a check
does (:func:`minigrad.checking.numeric.ridders.extrapolate`, with the round-off of
each value read off its graph by :mod:`minigrad.checking.numeric.rounding`) for 17
functions written with minigrad's ops, at |x| = 1 and 3 per decade from 1e-8
to 1e8 with both signs, and near domain edges, and compares every estimate
with the exact derivative (mpmath, 50 digits). It prints how often the true
error exceeds the stated bound, the largest ratio of true error to bound, and
its quantiles. A rule is called wrong only where the difference exceeds
``SAFETY`` times the bound (at two scales of step that agree), so the margin
of ``SAFETY`` over the largest ratio is what stands between a right rule and
a false alarm.

mpmath comes with SymPy (the test oracle); the script needs nothing else.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Callable
from typing import Any

import minigrad as mg
from minigrad import Value
from minigrad.checking.numeric.ridders import extrapolate
from minigrad.checking.numeric.rounding import read_roundoff
from minigrad.checking.numeric.steps import nominal_step
from minigrad.checking.verdicts.findings import SAFETY

#: name -> (the function on Values, on mpmath numbers, the open domain).
Fn = Callable[[Any], Any]
FUNCTIONS: dict[str, tuple[Fn, Fn, tuple[float, float]]] = {
    "sin": (lambda v: v.sin(), lambda m: m.sin, (-math.inf, math.inf)),
    "cos": (lambda v: v.cos(), lambda m: m.cos, (-math.inf, math.inf)),
    "exp": (lambda v: v.exp(), lambda m: m.exp, (-700.0, 700.0)),
    "log": (lambda v: v.log(), lambda m: m.log, (0.0, math.inf)),
    "sqrt": (lambda v: v.sqrt(), lambda m: m.sqrt, (0.0, math.inf)),
    "tanh": (lambda v: v.tanh(), lambda m: m.tanh, (-math.inf, math.inf)),
    "atan": (lambda v: mg.atan(v), lambda m: m.atan, (-math.inf, math.inf)),
    "asin": (lambda v: mg.asin(v), lambda m: m.asin, (-1.0, 1.0)),
    "log1p": (lambda v: v.log1p(), lambda m: lambda x: m.log(1 + x), (-1.0, math.inf)),
    "1/x": (lambda v: 1.0 / v, lambda m: lambda x: 1 / x, (-math.inf, math.inf)),
    "x**3": (lambda v: v**3, lambda m: lambda x: x**3, (-1e100, 1e100)),
    "sigmoid": (lambda v: v.sigmoid(), lambda m: lambda x: 1 / (1 + m.exp(-x)), (-700.0, 700.0)),
    "erf": (lambda v: v.erf(), lambda m: m.erf, (-math.inf, math.inf)),
    "x*x": (lambda v: v * v, lambda m: lambda x: x * x, (-1e150, 1e150)),
    "(x + 1e10) - 1e10": (lambda v: (v + 1e10) - 1e10, lambda m: lambda x: x, (-1e300, 1e300)),
    "log1p(exp(x)) - x": (
        lambda v: v.exp().log1p() - v,
        lambda m: lambda x: m.log(1 + m.exp(x)) - x,
        (-700.0, 700.0),
    ),
    "sqrt(x*x + 1)": (
        lambda v: (v * v + 1.0).sqrt(),
        lambda m: lambda x: m.sqrt(x * x + 1),
        (-1e150, 1e150),
    ),
}
EDGES = {
    "log": [1e-9, 1e-300],
    "sqrt": [1e-9, 1e-300],
    "asin": [1 - 1e-12, -1 + 1e-9],
    "log1p": [-1 + 1e-9],
    "1/x": [2e-7, -3e-9],
}


def points(name: str) -> list[float]:
    """The points of one function: magnitudes 1e-8 to 1e8, both signs, and its edges."""
    lo, hi = FUNCTIONS[name][2]
    grid = [s * m * 10.0**k for k in range(-8, 9) for m in (1.0, 3.0) for s in (1.0, -1.0)]
    return [x for x in grid + EDGES.get(name, []) if lo < x < hi]


def ratios(name: str, mp: Any) -> list[tuple[float, float, float, float]]:
    """(true error / bound, x, estimate, bound) for every estimate of one function."""
    f, exact_of, (lo, hi) = FUNCTIONS[name]
    out = []
    for x in points(name):

        def evaluate(t: float) -> list[float] | None:
            if not lo < t < hi:
                return None
            try:
                return [f(Value(t)).data]
            except (ArithmeticError, ValueError):
                return None

        try:
            noise, _ = read_roundoff(f(Value(x)), [])
        except (ArithmeticError, ValueError):
            continue
        exact = mp.diff(exact_of(mp), mp.mpf(x))
        if isinstance(exact, mp.mpc):
            continue
        ests = extrapolate(evaluate, x, nominal_step(x, 1e-6), [0], noise=[2.0 * noise])[0]
        for e in ests:
            true = float(abs(mp.mpf(e.value) - exact))
            ratio = true / e.error if e.error > 0.0 else (math.inf if true > 0.0 else 0.0)
            out.append((ratio, x, e.value, e.error))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated function names (default: all)")
    args = parser.parse_args(argv)
    import mpmath  # type: ignore[import-untyped]

    mpmath.mp.dps = 50
    names = args.only.split(",") if args.only else list(FUNCTIONS)
    found: list[tuple[float, str, float, float, float]] = []
    for name in names:
        found.extend((r, name, x, v, e) for r, x, v, e in ratios(name, mpmath))
    found.sort(reverse=True)
    values = [r for r, *_ in found]
    over = sum(r > 1.0 for r in values)
    worst = values[0] if values else 0.0
    print(f"{len(values)} extrapolated estimates of {len(names)} functions")
    print(f"true error above the stated bound: {over} ({100.0 * over / max(len(values), 1):.2f}%)")
    margin = SAFETY / worst if worst > 0.0 else math.inf
    print(f"largest true error / bound: {worst:.3g}; SAFETY = {SAFETY:g}: margin {margin:.3g}")
    cuts = statistics.quantiles(values, n=100)
    print(
        "quantiles of true error / bound (50%, 90%, 99%): "
        + ", ".join(f"{cuts[i]:.2g}" for i in (49, 89, 98))
    )
    print("\nthe largest ratios:")
    print("| ratio | function | x | estimate | bound |")
    print("|---|---|---|---|---|")
    for r, name, x, v, e in found[:10]:
        print(f"| {r:.3g} | {name} | {x:.6g} | {v:.12g} | {e:.3g} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
