"""The hard places of issue 26: the smallest error caught against what float64 resolves.

Each function below is a custom op of one input (written once against a
namespace of operations, as in :mod:`mistakes`), at points where a checker
has been wrong before: oscillating functions far out (steps span periods),
forwards that cancel inside themselves (their round-off hides from a graph),
poles away from 0, and tiny magnitudes. At each point:

- *float64 resolves*: the smallest injected relative error ``r`` (of
  ``mistakes.ERRORS``) that float64 central differences of the forward can
  tell from the right derivative there: ``r >= 100 *`` the best relative
  error any central difference reaches (``sensitivity.floor``, against
  mpmath); "none" where no step resolves even 1e-1;
- *extrapolation resolves*: the same for Ridders' extrapolation, the careful
  float64 method issue 26 names: the textbook tableau (:func:`dfridr`,
  written here apart from minigrad's) in place of the single difference;
- per checker at its defaults (minigrad's ``check``, its fast mode, forward
  mode and the rule as one of four inputs; PyTorch's ``gradcheck`` and its
  fast mode; JAX's ``check_grads``): the smallest ``r`` such that every
  injected error from 1e-1 down to it is caught, and whether the right rule
  (r = 0) is a false alarm (it fails or raises: marked ``FALSE ALARM``) or
  passes with a warning (marked ``(w)``).

The goal (issue 26): no false alarm anywhere, and minigrad's default within
one decade of what float64 resolves at every point, by either measure::

    python benchmarks/hard.py                 # every tool installed, Markdown
    python benchmarks/hard.py --tools minigrad
    python benchmarks/run.py --only i         # the same, within section (i)
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import mpmath  # type: ignore[import-untyped]

from harness import progress, table
from mistakes import ERRORS, FLOATS, Op, _gelu, _gelu_exact, in_domain
from sensitivity import (
    _MP,
    MARGIN,
    MINIGRAD_WAYS,
    TOOLS,
    Tool,
    floor,
    load_tools,
    minigrad_tool,
    torch_tool,
)
from sweep import FAIL, RAISE, WARN

HALF_PI = math.pi / 2.0
#: mpmath's operations, for the exact derivative.
MP = _MP


def _op(
    family: str,
    name: str,
    f: Callable[[Any, Any], Any],
    df: Callable[[Any, Any, Any], Any],
    points: tuple[float, ...],
    lo: float = -math.inf,
    hi: float = math.inf,
    native: tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]] | None = None,
) -> Op:
    """An op; ``native`` is a part added with the tool's own operations and its derivative."""
    op = Op(name, f, df, points, lo, hi, (), family, native[0] if native else None)
    if native is not None:
        NATIVE_SLOPES[op.name] = native[1]
    return op


#: The derivative of each op's native part, by name.
NATIVE_SLOPES: dict[str, Callable[[Any, Any], Any]] = {}


#: The hard places. The oscillating ones are a custom op (the smooth part,
#: where the rule error is injected) plus a sine in the tool's own operations,
#: as a user writes them (``t * t + sin(t)``).
HARD: tuple[Op, ...] = (
    _op(
        "oscillating",
        "t*t + sin(t)",
        lambda m, x: x * x,
        lambda m, x, out: 2.0 * x,
        (3e7, 1.2345e7, 1.7e7),
        native=(lambda m, x: m.sin(x), lambda m, x: m.cos(x)),
    ),
    _op(
        "oscillating",
        "t - sin(t)",
        lambda m, x: 1.0 * x,
        lambda m, x, out: 1.0,
        (1e15, 3e15),
        native=(lambda m, x: -m.sin(x), lambda m, x: -m.cos(x)),
    ),
    _op(
        "oscillating",
        "exp(t/10) + 0.01 sin(50 t)",
        lambda m, x: m.exp(x / 10.0),
        lambda m, x, out: out / 10.0,
        (3.3, 7.1),
        native=(lambda m, x: 0.01 * m.sin(50.0 * x), lambda m, x: 0.5 * m.cos(50.0 * x)),
    ),
    _op(
        "oscillating, inside the rule",
        "t*t + sin(t)",
        lambda m, x: x * x + m.sin(x),
        lambda m, x, out: 2.0 * x + m.cos(x),
        (3e7, 1.2345e7),
    ),
    _op(
        "cancelling forward",
        "log1p(exp(x)) - x",
        lambda m, x: m.log1p(m.exp(x)) - x,
        lambda m, x, out: -1.0 / (1.0 + m.exp(x)),
        (15.2, 30.0, 100.0),
    ),
    _op(
        "cancelling forward",
        "gelu: x (1 + erf(x/sqrt 2)) / 2",
        _gelu,
        _gelu_exact,
        (-3.1,),
    ),
    _op(
        "flat far out",
        "tanh(x)",
        lambda m, x: m.tanh(x),
        lambda m, x, out: 1.0 - out * out,
        (6.3,),
    ),
    _op(
        "cancelling forward",
        "cos(x) - 1",
        lambda m, x: m.cos(x) - 1.0,
        lambda m, x, out: -m.sin(x),
        (1e-4, 1e-10, 1e-50),
    ),
    _op(
        "pole away from 0",
        "1/(x-1)",
        lambda m, x: 1.0 / (x - 1.0),
        lambda m, x, out: -out * out,
        (1.0 + 1e-6, 1.0 + 1e-10),
        lo=1.0,
    ),
    _op(
        "pole away from 0",
        "tan(x)",
        lambda m, x: m.tan(x),
        lambda m, x, out: 1.0 + out * out,
        (HALF_PI - 1e-6, HALF_PI - 1e-10, HALF_PI - 1e-13),
        lo=-HALF_PI,
        hi=HALF_PI,
    ),
    _op(
        "tiny magnitude",
        "x*x",
        lambda m, x: x * x,
        lambda m, x, out: 2.0 * x,
        (1e-100, 1e-150),
    ),
    _op(
        "tiny magnitude",
        "1/x",
        lambda m, x: 1.0 / x,
        lambda m, x, out: -out * out,
        (1e-100, 1e-150),
        lo=0.0,
    ),
    _op(
        "tiny magnitude",
        "sqrt(x)",
        lambda m, x: m.sqrt(x),
        lambda m, x, out: 0.5 / out,
        (1e-200, 1e-300),
        lo=0.0,
    ),
)


def _scaled(op: Op, r: float) -> Op:
    if r == 0.0:
        return op
    factor = 1.0 + r
    return Op(
        op.name,
        op.f,
        lambda ns, x, out: factor * op.df(ns, x, out),
        op.points,
        op.lo,
        op.hi,
        op.poles,
        op.family,
        op.native,
    )


def whole(op: Op) -> Op:
    """The function the tools check, as one op: the custom part plus the native one."""
    native = op.native
    if native is None:
        return op
    slope = NATIVE_SLOPES[op.name]
    return Op(
        op.name,
        lambda m, x: op.f(m, x) + native(m, x),
        lambda m, x, out: op.df(m, x, op.f(m, x)) + slope(m, x),
        op.points,
        op.lo,
        op.hi,
        op.poles,
        op.family,
    )


#: The family whose sine hides inside a custom rule's forward: a known limit
#: (the graph shows no period there; see docs/checking.md), reported apart.
INSIDE = "oscillating, inside the rule"


def all_tools(
    names: Sequence[str], ways: Sequence[str] = MINIGRAD_WAYS
) -> tuple[list[Tool], list[str]]:
    """minigrad in each of ``ways``, torch and its fast mode, jax: those installed."""
    tools: list[Tool] = []
    missing: list[str] = []
    for name in names:
        if name == "minigrad":
            tools.extend(minigrad_tool(way) for way in ways)
            continue
        found, lost = load_tools([name])
        tools.extend(found)
        missing.extend(lost)
        if name == "torch" and found:
            tools.append(torch_tool(fast_mode=True))
    return tools, missing


def exact(op: Op, x: float) -> float:
    """The right derivative at x: its formula evaluated by mpmath at 50 digits
    (``mpmath.diff`` would step across 0 at sqrt(1e-300))."""
    with mpmath.workdps(50):
        t = mpmath.mpf(x)
        return float(op.df(MP, t, op.f(MP, t)))


def resolves(op: Op, x: float) -> float:
    """The smallest r of ERRORS float64 resolves at x (inf: none)."""
    exact_ = exact(op, x)
    best = floor(op, x, exact_)
    found = [r for r in ERRORS if r >= MARGIN * best]
    return min(found) if found else math.inf


def dfridr(
    f: Callable[[float], float], x: float, h: float, con: float = 1.4, rows: int = 10
) -> float | None:
    """Ridders' extrapolation as Numerical Recipes' ``dfridr`` gives it, from step ``h``.

    Written here from the textbook, apart from minigrad's own tableau, so
    that the yardstick does not move when minigrad's extrapolation does:
    central differences at steps shrinking by ``con``, each column of the
    tableau cancelling the next even power of the step, the entry whose own
    error estimate is smallest returned; the tableau stops when a new
    diagonal entry is worse than twice that error. None when a step leaves
    the domain or a difference is not finite before any entry was made.
    """
    table: list[list[float]] = []
    best: float | None = None
    error = math.inf
    for i in range(rows):
        up, down = x + h, x - h
        try:
            q = (f(up) - f(down)) / (up - down) if up != down else math.nan
        except (ArithmeticError, ValueError):
            q = math.nan
        if not math.isfinite(q):
            break
        row = [q]
        factor = con * con
        for j in range(1, i + 1):
            row.append((row[j - 1] * factor - table[i - 1][j - 1]) / (factor - 1.0))
            factor *= con * con
            moved = max(abs(row[j] - row[j - 1]), abs(row[j] - table[i - 1][j - 1]))
            if moved <= error:
                error, best = moved, row[j]
        table.append(row)
        if i and abs(row[i] - table[i - 1][i - 1]) >= 2.0 * error:
            break
        h /= con
    return best


def extrapolated(op: Op, x: float) -> float:
    """The smallest r of ERRORS that Ridders' extrapolation resolves at x (inf: none).

    The same measure as :func:`resolves` gives a single central difference,
    with Ridders' method in its place: the textbook tableau (:func:`dfridr`,
    not minigrad's) started from steps ``|x| * 10**-k`` and ``10**-k``
    (k = 0 ... 15) inside the domain, each start's relative error against
    mpmath, and an error counting only where the next start, 10x smaller, is
    as good (one lucky rounding does not make a point look better than it
    is); ``r`` must be 100 times the best such error. Until 2026-11-27 this
    column took the best of a hundred estimates of minigrad's own
    extrapolation, unguarded: a yardstick that moved with the thing it
    measured and rewarded the luckiest rounding.
    """
    exact_ = exact(op, x)
    if exact_ == 0.0:
        return math.inf

    def f(t: float) -> float:
        if not in_domain(op, t):
            raise ValueError(t)
        return float(op.f(FLOATS, t))

    best = math.inf
    for scale in (abs(x), 1.0):
        errors = []
        for k in range(16):
            h = scale * 10.0**-k
            got = dfridr(f, x, h) if h >= 4.0 * math.ulp(x) else None
            errors.append(abs(got - exact_) / abs(exact_) if got is not None else math.inf)
        best = min([best, *(max(a, b) for a, b in itertools.pairwise(errors))])
    found = [r for r in ERRORS if r >= MARGIN * best]
    return min(found) if found else math.inf


def smallest_caught(tool: Tool, ops: dict[float, Op], x: float) -> tuple[float, str]:
    """The smallest r such that every r' >= r is caught (inf: not even 1e-1), and the
    outcome of the right rule."""
    right, _ = tool.run(ops[0.0], x)
    smallest = math.inf
    for r in ERRORS:
        outcome, _ = tool.run(ops[r], x)
        if outcome != FAIL:
            break
        smallest = r
    return smallest, right


def _r(r: float) -> str:
    return "none" if not math.isfinite(r) else f"{r:.0e}"


def measure(
    names: Sequence[str], ways: Sequence[str] = MINIGRAD_WAYS
) -> tuple[list[list[object]], list[str], dict[str, Any]]:
    """The table's rows, the tools not installed, and the summary: per tool its false
    alarms, warned right rules and points; ``within a decade`` (minigrad's default,
    [within, of]) and ``beyond`` (those points), both without the family :data:`INSIDE`."""
    tools, missing = all_tools(names, ways)
    rows: list[list[object]] = []
    summary: dict[str, Any] = {
        t.name: {"alarms": 0, "inside": 0, "warned": 0, "points": 0} for t in tools
    }
    summary["within a decade"] = [0, 0]
    summary["of extrapolation"] = [0, 0]
    for op in HARD:
        ops = {r: _scaled(op, r) for r in (0.0, *ERRORS)}
        for x in op.points:
            progress(f"hard places: {op.name} at {x:.6g}")
            floor_r = resolves(whole(op), x)
            ridders_r = extrapolated(whole(op), x)
            row: list[object] = [op.family, op.name, f"{x:.6g}", _r(floor_r), _r(ridders_r)]
            for tool in tools:
                caught, right = smallest_caught(tool, ops, x)
                cell = _r(caught)
                s = summary[tool.name]
                s["points"] += 1
                if right in (FAIL, RAISE):
                    cell += " FALSE ALARM"
                    s["alarms" if op.family != INSIDE else "inside"] += 1
                elif right == WARN:
                    cell += " (w)"
                    s["warned"] += 1
                if tool.name == "minigrad" and math.isfinite(floor_r) and op.family != INSIDE:
                    summary["within a decade"][1] += 1
                    if caught <= 10.0 * floor_r * (1.0 + 1e-9):  # one decade, inclusive
                        summary["within a decade"][0] += 1
                    else:
                        summary.setdefault("beyond", []).append(f"{op.name} at {x:.6g}")
                if tool.name == "minigrad" and math.isfinite(ridders_r) and op.family != INSIDE:
                    summary["of extrapolation"][1] += 1
                    if caught <= 10.0 * ridders_r * (1.0 + 1e-9):
                        summary["of extrapolation"][0] += 1
                    else:
                        gap = f"{op.name} at {x:.6g}: {_r(caught)} against {_r(ridders_r)}"
                        summary.setdefault("beyond extrapolation", []).append(gap)
                row.append(cell)
            rows.append(row)
    header = [
        "family",
        "function",
        "x",
        "float64 resolves",
        "extrapolation resolves",
        *(t.name for t in tools),
    ]
    summary["header"] = header
    return rows, missing, summary


def report(rows: list[list[object]], missing: Sequence[str], summary: dict[str, Any]) -> None:
    for line in missing:
        print(f"- {line}")
    print(
        "\nThe hard places of issue 26: per point, the smallest injected relative error r "
        "that float64 central differences resolve (r >= 100x the best one's error, against "
        "mpmath, an error counting where the next step, 10x smaller, is as good), and what "
        "extrapolation resolves (the same, for Ridders' method as Numerical Recipes' dfridr "
        "gives it, from each start), and per checker at its defaults the smallest r such that "
        "every error from 1e-1 down to it is caught; FALSE ALARM where the right rule fails "
        "or raises, (w) where it passes with a warning.\n"
    )
    print(table(summary["header"], rows))
    print()
    lines = []
    for name, s in summary.items():
        if isinstance(s, dict):
            lines.append(
                f"{name}: {s['alarms']} false alarms ({s['inside']} more with the sine inside "
                f"the rule), {s['warned']} right rules warned, of {s['points']} points"
            )
    within, of = summary["within a decade"]
    beyond = summary.get("beyond", [])
    lines.append(
        f"minigrad (default) within one decade of what float64 resolves: {within} of {of} "
        "points where float64 resolves an error of 1e-1 or less"
        + (f" (beyond it: {', '.join(beyond)})" if beyond else "")
    )
    within, of = summary["of extrapolation"]
    beyond = summary.get("beyond extrapolation", [])
    lines.append(
        f"minigrad (default) within one decade of what extrapolation resolves: {within} of "
        f"{of} points" + (f" (beyond it: {'; '.join(beyond)})" if beyond else "")
    )
    for line in lines:
        print(f"- {line}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="comma-separated: " + ",".join(TOOLS)
    )
    args = parser.parse_args(argv)
    names = [t.strip() for t in args.tools.split(",") if t.strip()]
    print("# Hard places, side by side\n")
    report(*measure(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
