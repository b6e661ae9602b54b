"""Sensitivity, side by side: the smallest rule error minigrad, PyTorch and JAX catch.

Every check runs at the tool's default settings on a custom op of one input
whose derivative is known to be wrong by a known relative amount
(:mod:`mistakes`): minigrad's ``check`` (a ``minigrad.Rule``), PyTorch's
``torch.autograd.gradcheck`` (a ``torch.autograd.Function`` on a double
tensor) and JAX's ``jax.test_util.check_grads`` (a ``jax.custom_vjp``, with
``jax_enable_x64``; ``modes=("rev",)``, since a custom_vjp has no forward
mode, and ``order=1``, which has no default)::

    python benchmarks/sensitivity.py                  # every tool installed, Markdown
    python benchmarks/sensitivity.py --tools minigrad # one tool
    python benchmarks/sensitivity.py --quick          # a few points per function
    python benchmarks/run.py --only i                 # the same, as section (i) of the report

torch and jax are never test dependencies: a tool that is not installed is
named in a line and its rows are skipped. To have them, a separate
environment: ``python3 -m venv /work/venv-bench && /work/venv-bench/bin/pip
install -c constraints.txt -e '.[dev]' && /work/venv-bench/bin/pip install
torch==2.13.0 jax jaxlib`` (torch pinned to the CPU wheel).

A check's outcome is ``sweep.judge``'s: pass, warn (passed with the
checker's warning), fail (the checker's verdict: caught) or raise. Caught
means fail; a right derivative that fails or raises is a false alarm.

Where a rule error can be seen at all: at each point the exact derivative
(mpmath, 50 digits) is compared with float64 central differences of the
forward at steps |x| * 10**-k and 10**-k (k = 1 ... 15) that stay in the
domain; the best relative error any of them reaches is the point's floor.
An error of relative size r is *resolvable* there when r >= 100 * floor, and
a point is *well conditioned* when 1e-8 is resolvable (floor <= 1e-10). The
issue's goal: every r >= 1e-9 (:data:`CAUGHT`) caught at well-conditioned points, and no
false alarm on the right rules.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import math
import sys
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath  # type: ignore[import-untyped]

import minigrad as mg
from harness import Target, git_revision, progress, table
from mistakes import (
    ERRORS,
    FLOAT32,
    FLOATS,
    MISTAKES,
    Op,
    float32_ops,
    in_domain,
    injected,
    minigrad_namespace,
)
from suite import Bench
from sweep import FAIL, FUNCTIONS, PASS, RAISE, WARN, first_lines, judge

#: An r is resolvable at a point when the best central difference is this much more accurate.
MARGIN = 100.0
#: The error the goal names: caught wherever it is resolvable.
GOAL = 1e-8
#: The least error that must be caught at every well-conditioned point (those
#: where GOAL is resolvable a hundred times over): what a bound of round-off at
#: a step of 1e-3 leaves room for.
CAUGHT = 1e-9


# The tools.


@dataclass
class Tool:
    """A checker under test: how it checks one op at one point."""

    name: str
    version: str
    run: Callable[[Op, float], tuple[str, str]]


#: minigrad's ways of checking one rule: its default, fast mode, forward mode,
#: and the rule as one of four inputs (``rule(b) + a * c * d``).
MINIGRAD_WAYS = ("default", "fast mode", "forward mode", "4 inputs")


def minigrad_tool(way: str = "default") -> Tool:
    """``minigrad.check`` at its defaults on a ``minigrad.Rule``, one of :data:`MINIGRAD_WAYS`."""
    ns = minigrad_namespace()
    rules: dict[int, mg.Rule] = {}

    def rule(op: Op) -> mg.Rule:
        if id(op) not in rules:
            rules[id(op)] = mg.Rule(
                f"my_{op.name}",
                lambda x: op.f(FLOATS, x),
                (lambda x, out: op.df(ns, x, out),),
                domain=((op.lo, op.hi),),
                avoid=op.poles,
            )
        return rules[id(op)]

    def checked(op: Op, x: float) -> mg.Report:
        custom = rule(op)
        native = op.native

        def r(v: mg.Value) -> mg.Value:
            return custom(v) if native is None else custom(v) + native(ns, v)

        if way == "fast mode":
            return mg.check(r, [mg.Value(x)], fast_mode=True)
        if way == "forward mode":
            return mg.check(r, [mg.Value(x)], modes=("fwd",))
        if way == "4 inputs":
            others = [mg.Value(0.3), mg.Value(1.1), mg.Value(0.4)]
            return mg.check(
                lambda a, b, c, d: r(b) + a * c * d, [others[0], mg.Value(x), *others[1:]]
            )
        return mg.check(r, [mg.Value(x)])

    def run(op: Op, x: float) -> tuple[str, str]:
        try:
            report = checked(op, x)
        except Exception as exc:
            return RAISE, f"{type(exc).__name__}: {first_lines(exc)}"
        if not report.ok:
            return FAIL, first_lines(report)
        if report.warnings:
            return WARN, first_lines(report.warnings[0])
        return PASS, ""

    name = "minigrad" if way == "default" else f"minigrad, {way}"
    return Tool(name, f"{mg.__version__} (git {git_revision()})", run)


def torch_tool(fast_mode: bool = False) -> Tool:
    """``torch.autograd.gradcheck`` at its defaults on a ``torch.autograd.Function``
    (with ``fast_mode``, its fast mode)."""
    torch: Any = importlib.import_module("torch")
    failure: Any = importlib.import_module("torch.autograd.gradcheck").GradcheckError
    ns = types.SimpleNamespace(
        **{
            n: getattr(torch, n)
            for n in (
                *("sin", "cos", "tan", "tanh", "exp", "log", "log1p", "sqrt", "erf"),
                *("abs", "where"),
            )
        },
        f32=lambda t: t.to(torch.float32).to(torch.float64),
        data=lambda t: t,
    )
    functions: dict[int, Any] = {}

    def custom(op: Op) -> Any:
        if id(op) not in functions:

            def forward(ctx: Any, x: Any) -> Any:
                out = op.f(ns, x)
                ctx.save_for_backward(x, out)
                return out

            def backward(ctx: Any, g: Any) -> Any:
                x, out = ctx.saved_tensors
                return g * op.df(ns, x, out)

            cls: Any = type(
                "Op",
                (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)},
            )
            functions[id(op)] = cls.apply
        return functions[id(op)]

    def run(op: Op, x: float) -> tuple[str, str]:
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        f, native = custom(op), op.native
        whole = f if native is None else (lambda v: f(v) + native(ns, v))
        return judge(
            lambda: torch.autograd.gradcheck(whole, (t,), fast_mode=fast_mode),
            (failure,),
            None,
        )

    return Tool("torch, fast mode" if fast_mode else "torch", torch.__version__, run)


def jax_tool() -> Tool:
    """``jax.test_util.check_grads(f, (x,), order=1, modes=("rev",))`` on a ``jax.custom_vjp``."""
    jax: Any = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    jnp: Any = importlib.import_module("jax.numpy")
    special: Any = importlib.import_module("jax.scipy.special")
    check_grads: Any = importlib.import_module("jax.test_util").check_grads
    ns = types.SimpleNamespace(
        **{
            n: getattr(jnp, n)
            for n in ("sin", "cos", "tan", "tanh", "exp", "log", "log1p", "sqrt", "abs", "where")
        },
        erf=special.erf,
        f32=lambda a: a.astype(jnp.float32).astype(jnp.float64),
        data=lambda a: a,
    )
    functions: dict[int, Any] = {}

    def custom(op: Op) -> Any:
        if id(op) not in functions:
            f = jax.custom_vjp(lambda x: op.f(ns, x))

            def fwd(x: Any) -> Any:
                out = op.f(ns, x)
                return out, (x, out)

            def bwd(saved: Any, g: Any) -> Any:
                x, out = saved
                return (g * op.df(ns, x, out),)

            f.defvjp(fwd, bwd)
            functions[id(op)] = f
        return functions[id(op)]

    def run(op: Op, x: float) -> tuple[str, str]:
        a = jnp.asarray(x, dtype=jnp.float64)
        f, native = custom(op), op.native
        whole = f if native is None else (lambda v: f(v) + native(ns, v))
        return judge(lambda: check_grads(whole, (a,), 1, modes=("rev",)), (AssertionError,), None)

    version = f"{jax.__version__} (jaxlib {importlib.import_module('jaxlib').__version__})"
    return Tool("jax", version, run)


TOOLS: dict[str, Callable[[], Tool]] = {
    "minigrad": minigrad_tool,
    "torch": torch_tool,
    "jax": jax_tool,
}


def load_tools(names: Sequence[str]) -> tuple[list[Tool], list[str]]:
    """The tools that import, and a line for each that does not."""
    tools, missing = [], []
    for name in names:
        try:
            tools.append(TOOLS[name]())
        except ImportError as exc:
            missing.append(f"{name}: not installed ({exc}); its rows are skipped")
    return tools, missing


# What float64 can resolve at a point.

_MP = types.SimpleNamespace(
    **{
        n: getattr(mpmath, n)
        for n in ("sin", "cos", "tan", "tanh", "exp", "log", "log1p", "sqrt", "erf")
    },
    abs=abs,
    where=lambda c, a, b: a if c else b,
    data=lambda x: x,
)


def exact_derivative(op: Op, x: float) -> float:
    """d op.f / dx at x, by mpmath at 50 digits, rounded to a float."""
    with mpmath.workdps(50):
        return float(mpmath.diff(lambda t: op.f(_MP, t), mpmath.mpf(x)))


def floor(op: Op, x: float, exact: float) -> float:
    """The best relative error float64 central differences of the forward reach at x.

    Over steps ``|x| * 10**-k`` and ``10**-k`` (k = 1 ... 15) inside the domain;
    an error counts when the next step, 10x smaller, is as good, so that one
    lucky rounding does not make a point look better than it is.
    """

    def error(h: float) -> float:
        up, down = x + h, x - h
        if up == down or not (in_domain(op, up) and in_domain(op, down)):
            return math.inf
        try:
            q = float(op.f(FLOATS, up) - op.f(FLOATS, down)) / (up - down)
        except (ArithmeticError, ValueError):
            return math.inf
        return abs(q - exact) / abs(exact) if exact else abs(q)

    if exact == 0.0:
        # The derivative rounds to 0 in float64 (tanh at 1e6: 4 exp(-2e6)), and
        # so does any relative error of it: the injected rule is the right one.
        return math.inf
    best = math.inf
    for scale in (abs(x), 1.0):
        errors = [error(scale * 10.0**-k) for k in range(1, 16)]
        best = min([best, *(max(a, b) for a, b in itertools.pairwise(errors))])
    return best


@dataclass(frozen=True)
class Case:
    """One check: an op at a point, the relative error of its derivative, and its floor."""

    family: str
    op: Op
    x: float
    error: float
    floor: float

    @property
    def resolvable(self) -> bool:
        return self.error == 0.0 or self.error >= MARGIN * self.floor

    @property
    def well_conditioned(self) -> bool:
        return MARGIN * self.floor <= GOAL


def injected_cases(quick: bool = False) -> list[Case]:
    """Every smooth function, right (r = 0) and with each error of ERRORS, at every point."""
    out: list[Case] = []
    for fn in FUNCTIONS:
        right = injected(fn, 0.0)
        xs = right.points[:: 4 if quick else 1]
        floors = {x: floor(right, x, exact_derivative(right, x)) for x in xs}
        for r in (0.0, *ERRORS):
            op = right if r == 0.0 else injected(fn, r)
            out.extend(Case("injected", op, x, r, floors[x]) for x in xs)
    return out


def realistic_cases(quick: bool = False) -> list[Case]:
    """The realistic mistakes and their right versions (family = the mistake, or ``right: ...``)."""
    pairs = [(name, wrong, right) for name, wrong, right in MISTAKES]
    pairs += [(FLOAT32, wrong, right) for wrong, right in float32_ops()]
    out = []
    for name, wrong, right in pairs:
        for x in wrong.points[:: 3 if quick else 1]:
            exact = exact_derivative(right, x)
            written = float(wrong.df(FLOATS, x, wrong.f(FLOATS, x)))
            error = abs(written - exact) / abs(exact) if exact else abs(written)
            f = floor(right, x, exact)
            if error > 0.0:  # a float32 rounding can be exact: no mistake there
                out.append(Case(name, wrong, x, error, f))
            out.append(Case(f"right: {name}", right, x, 0.0, f))
    return out


Result = tuple[Case, str, str]


def run_all(tool: Tool, cases: Sequence[Case]) -> list[Result]:
    results = []
    for n, case in enumerate(cases):
        if n % 250 == 0:
            progress(f"sensitivity: {tool.name} {n + 1}/{len(cases)}")
        results.append((case, *tool.run(case.op, case.x)))
    return results


# The tables.


def _cell(results: Sequence[Result]) -> str:
    if not results:
        return ""
    caught = sum(o == FAIL for _, o, _ in results)
    warned = sum(o == WARN for _, o, _ in results)
    return f"{caught}/{len(results)}" + (f" (+{warned} warned)" if warned else "")


def smallest_caught(results: Sequence[Result]) -> str:
    """The smallest r such that every case of every r >= it was caught."""
    smallest = "none"
    for r in ERRORS:
        mine = [o for c, o, _ in results if c.error == r]
        if not mine or any(o != FAIL for o in mine):
            break
        smallest = f"{r:.0e}"
    return smallest


def smallest_mostly(results: Sequence[Result], share: float = 0.9) -> str:
    """The smallest r caught at ``share`` of its cases or more."""
    smallest = "none"
    for r in ERRORS:
        mine = [o for c, o, _ in results if c.error == r]
        if mine and sum(o == FAIL for o in mine) >= share * len(mine):
            smallest = f"{r:.0e}"
    return smallest


def _alarms(results: Sequence[Result]) -> str:
    right = [o for c, o, _ in results if c.error == 0.0]
    alarms = sum(o in (FAIL, RAISE) for o in right)
    raised = sum(o == RAISE for o in right)
    warned = sum(o == WARN for o in right)
    cell = f"{alarms}/{len(right)}"
    if raised:
        cell += f" ({raised} raised)"
    return cell + (f", {warned} warned" if warned else "")


def injected_table(by_tool: dict[str, list[Result]], well: bool) -> str:
    rows = []
    for name, results in by_tool.items():
        inside = [
            r for r in results if r[0].family == "injected" and (r[0].well_conditioned or not well)
        ]
        cells = [_cell([res for res in inside if res[0].error == e]) for e in ERRORS]
        smallest = [smallest_caught(inside), smallest_mostly(inside)]
        rows.append([f"**{name}**", _alarms(inside), *cells, *smallest])
    header = ["tool", "false alarms (right rule)", *(f"r={e:.0e}" for e in ERRORS)]
    return table([*header, "smallest r caught: everywhere", "at 90%"], rows)


def realistic_table(by_tool: dict[str, list[Result]]) -> str:
    """A row per mistake: caught/cases (caught/cases where resolvable) per tool; then
    a row of the false alarms on the right versions of all of them."""
    first = next(iter(by_tool.values()))
    families = list(
        dict.fromkeys(
            c.family
            for c, _, _ in first
            if c.family != "injected" and not c.family.startswith("right: ")
        )
    )
    rows: list[list[object]] = []
    for family in families:
        cases = [c for c, _, _ in first if c.family == family]
        errors = [c.error for c in cases]
        seen = sum(c.resolvable for c in cases)
        row: list[object] = [family, len(cases), f"{min(errors):.1e} to {max(errors):.1e}", seen]
        for results in by_tool.values():
            mine = [res for res in results if res[0].family == family]
            caught = [res[0].resolvable for res in mine if res[1] == FAIL]
            warned = sum(res[1] == WARN for res in mine)
            cell = f"{len(caught)}/{len(mine)} ({sum(caught)}/{seen})"
            row.append(cell + (f", {warned} warned" if warned else ""))
        rows.append(row)
    alarms: list[object] = ["**right versions: false alarms**", "", "", ""]
    for results in by_tool.values():
        right = [o for c, o, _ in results if c.family.startswith("right: ")]
        alarms.append(f"{sum(o in (FAIL, RAISE) for o in right)}/{len(right)}")
    rows.append(alarms)
    header = ["mistake", "cases", "relative error of the rule", "resolvable"]
    return table([*header, *by_tool], rows)


def report(
    by_tool: dict[str, list[Result]], missing: Sequence[str], versions: Sequence[str]
) -> None:
    for line in [*versions, *missing]:
        print(f"- {line}")
    if not by_tool:
        return
    print(
        "\nInjected errors: the twelve smooth functions of `benchmarks/sweep.py` as custom ops "
        "whose derivative is (1 + r) times the true one, at +-1e-8 ... 1e8 where defined. "
        "A cell is caught/checked (+ passed with a warning). First at the well-conditioned "
        f"points (a float64 central difference resolves the derivative to <= {GOAL / MARGIN:.0e}), "
        "then at every point.\n"
    )
    print(injected_table(by_tool, well=True))
    print()
    print(injected_table(by_tool, well=False))
    print(
        "\nRealistic mistakes: a cell is caught/cases over all the mistake's points, and in "
        "brackets over the points where it is resolvable (its relative error >= "
        f"{MARGIN:g}x the best float64 central difference there). The last row: false "
        "alarms on the same ops with their true derivatives.\n"
    )
    print(realistic_table(by_tool))


def measure(
    names: Sequence[str], quick: bool
) -> tuple[dict[str, list[Result]], list[str], list[str]]:
    tools, missing = load_tools(names)
    cases = injected_cases(quick) + realistic_cases(quick)
    by_tool: dict[str, list[Result]] = {}
    versions = []
    for tool in tools:
        start = time.perf_counter()
        by_tool[tool.name] = run_all(tool, cases)
        versions.append(
            f"{tool.name} {tool.version}: {len(cases)} checks, {time.perf_counter() - start:.1f} s"
        )
    return by_tool, missing, versions


def bench_sensitivity(bench: Bench, sizes: Sequence[int]) -> None:
    """Section (i): ``sizes = (quick,)``."""
    import hard  # the hard places import this module

    (quick,) = sizes
    by_tool, missing, versions = measure(list(TOOLS), bool(quick))
    report(by_tool, missing, versions)
    print("\n### The hard places of issue 26\n")
    rows, lost, summary = hard.measure(list(TOOLS))
    hard.report(rows, lost, summary)
    bench.found.numbers["hard false alarms"] = summary["minigrad"]["alarms"]
    bench.found.numbers["hard points"] = summary["minigrad"]["points"]
    within, of = summary["within a decade"]
    bench.found.numbers["hard beyond a decade"] = of - within
    bench.found.numbers["hard resolvable"] = of
    within, of = summary["of extrapolation"]
    bench.found.numbers["hard beyond extrapolation"] = of - within
    bench.found.numbers["hard extrapolated"] = of
    mine = by_tool.get("minigrad", [])
    goal = [
        res
        for res in mine
        if res[0].family == "injected" and res[0].well_conditioned and res[0].error >= CAUGHT
    ]
    bench.found.numbers["sensitivity missed"] = sum(o != FAIL for _, o, _ in goal)
    bench.found.numbers["sensitivity goal cases"] = len(goal)
    right = [o for c, o, _ in mine if c.error == 0.0]
    bench.found.numbers["sensitivity false alarms"] = sum(o in (FAIL, RAISE) for o in right)
    bench.found.numbers["sensitivity right cases"] = len(right)
    resolvable = [
        res
        for res in mine
        if res[0].family != "injected" and res[0].error > 0.0 and res[0].resolvable
    ]
    # The goal is errors of 1e-8 and more; smaller ones are counted beside it.
    realistic = [res for res in resolvable if res[0].error >= GOAL]
    small = [res for res in resolvable if res[0].error < GOAL]
    bench.found.numbers["realistic missed"] = sum(o != FAIL for _, o, _ in realistic)
    bench.found.numbers["realistic cases"] = len(realistic)
    bench.found.numbers["realistic small caught"] = sum(o == FAIL for _, o, _ in small)
    bench.found.numbers["realistic small cases"] = len(small)


SENSITIVITY_TARGETS = (
    Target(
        "no false alarm at the hard places of issue 26 (a sine the graph shows)",
        "hard false alarms",
        "<=",
        0,
        lambda m: f"{m['hard false alarms']:.0f} of {m['hard points']:.0f}",
    ),
    Target(
        "the smallest error caught within one decade of what float64 resolves (hard places)",
        "hard beyond a decade",
        "<=",
        0,
        lambda m: f"{m['hard beyond a decade']:.0f} of {m['hard resolvable']:.0f} beyond it",
    ),
    Target(
        "the same within one decade of what Ridders' extrapolation resolves (textbook dfridr)",
        "hard beyond extrapolation",
        "<=",
        0,
        lambda m: f"{m['hard beyond extrapolation']:.0f} of {m['hard extrapolated']:.0f} beyond it",
    ),
    Target(
        "every injected error >= 1e-9 caught at well-conditioned points",
        "sensitivity missed",
        "<=",
        0,
        lambda m: f"{m['sensitivity missed']:.0f} of {m['sensitivity goal cases']:.0f} missed",
    ),
    Target(
        "no false alarm on the right rules (sensitivity section)",
        "sensitivity false alarms",
        "<=",
        0,
        lambda m: f"{m['sensitivity false alarms']:.0f} of {m['sensitivity right cases']:.0f}",
    ),
    Target(
        "every realistic mistake of 1e-8 or more caught where resolvable",
        "realistic missed",
        "<=",
        0,
        lambda m: (
            f"{m['realistic missed']:.0f} of {m['realistic cases']:.0f} missed (below 1e-8 "
            f"and resolvable: {m['realistic small caught']:.0f} of "
            f"{m['realistic small cases']:.0f} caught)"
        ),
    ),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="comma-separated: " + ",".join(TOOLS)
    )
    parser.add_argument("--quick", action="store_true", help="a few points per function")
    args = parser.parse_args(argv)
    names = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in names if t not in TOOLS]
    if unknown:
        parser.error(f"--tools: unknown {', '.join(unknown)}; choose from {', '.join(TOOLS)}")
    print("# Sensitivity, side by side\n")
    report(*measure(names, args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
