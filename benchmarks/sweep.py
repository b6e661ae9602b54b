"""Derivative checkers side by side: false alarms and misses over a sweep of checks.

One command runs the same sweep of first-derivative checks on minigrad's
``gradcheck`` and, when they are installed, PyTorch's
``torch.autograd.gradcheck`` and JAX's ``jax.test_util.check_grads``, each at
its DEFAULT settings (JAX's ``order`` has no default: it is 1, the order the
other two check), in float64 (torch double tensors, ``jax_enable_x64``)::

    python benchmarks/sweep.py                      # the tables (Markdown on stdout)
    python benchmarks/sweep.py --details            # and every case not judged right
    python benchmarks/sweep.py --tools minigrad,jax # some tools only

A tool that is not installed is skipped with a line saying so. Only the
standard library is needed besides the tools. The sweep is deterministic
(no tool draws random numbers here: JAX seeds its direction with 0).

The sweep
---------
Twelve smooth functions of one input, each with its open domain (and poles)::

    x*x, x**3, 1/x (x != 0), sin(x), tanh(x), sqrt(x*x+1), exp(x) (|x| <= 700),
    log(x) (x > 0), sqrt(x) (x > 0), x**0.5 + x**1.5 (x > 0),
    log1p(x) (x > -1), sqrt(1-x*x) (-1 < x < 1)

Points: ``|x|`` = 1, 2 and 5 times every power of ten from 1e-8 to 1e7, and 1e8
(49 magnitudes), with both signs wherever the point is in the domain; and
points 2e-7, 1e-7, 5e-8, 2e-8, 1e-8, 5e-9, 2e-9 and 1e-9 from each domain edge
or pole, on the side inside the domain (log, sqrt, x**0.5 + x**1.5 near 0;
1/x near 0 from both sides; log1p near -1; sqrt(1-x*x) near -1 and 1). Every
point is inside the domain and every forward and derivative is finite there
(``tests/test_sweep.py`` checks it).

Four kinds of check at each point:

- ``built-in``: the function written with the tool's own operations
  (minigrad Values, torch tensors, ``jax.numpy``). Its derivative is right.
- ``custom, right``: the function as ONE custom op with a right derivative:
  a ``minigrad.Rule`` (with its true ``domain=`` and poles as ``avoid=``), a
  ``torch.autograd.Function``, a ``jax.custom_jvp``. Counted with the right
  checks, so a checker that rejects every custom op cannot look perfect.
- ``custom, 10% off``: the same op whose derivative is 1.1 times the true one.
- ``custom, sign flip``: the same op whose derivative is -1 times the true one.

The wrong kinds are built for x*x, x**3, 1/x, sin, sqrt(x*x+1), exp, log,
sqrt and log1p (not tanh, whose derivative underflows to 0 for |x| > 20, and
not the two sums of powers, which repeat sqrt), at every point where the true
derivative is not 0 (there a wrong rule would be right).

Outcomes and what the tables count
----------------------------------
Each check runs under ``warnings.catch_warnings(record=True)`` and catches
every exception, and ends in one of:

- ``pass``: it passed with no warning from the checker;
- ``warn``: it passed, but the checker warned (minigrad's ``GradcheckWarning``;
  the other two tools have no such warning);
- ``fail``: the checker's own failure: ``minigrad.GradcheckError``, torch's
  ``GradcheckError``, JAX's ``AssertionError`` (or a False verdict);
- ``raise``: any other exception (a domain error of the function at a
  perturbed point, a ZeroDivisionError, ...).

For a right derivative, a **false alarm** is ``fail`` or ``raise`` (the
raised ones are also counted on their own), and ``warn`` is counted as
**right but warned** (a warning the user must read and that cries wolf). For
a wrong derivative, ``fail`` is **caught**, ``warn`` is **warned** (passed, but
with a warning), ``pass`` is a **miss** (passed silently), and ``raise`` is
**raised** (stopped, but not by the checker saying that the derivative is
wrong).

The first table gives these totals per tool (the line the docs quote); the
second splits them by band of the input: within 2e-7 of a domain edge or
pole (``edge``, taking precedence over the others), ``abs(x) < 1e-2``,
``1e-2 <= abs(x) <= 1e2`` and ``abs(x) > 1e2`` (no ``|`` in a Markdown
cell); the third gives the raw outcome counts per kind of check.
``--details`` lists, per tool, every case not judged as it should be, with
the message on one line.

Running it beside the dev venv (the peers are big)::

    python3 -m venv /work/benchvenv
    /work/benchvenv/bin/pip install torch==2.13.0 jax jaxlib   # torch: the CPU wheel
    /work/benchvenv/bin/pip install -e .
    PYTHONPATH=$PWD/src /work/benchvenv/bin/python benchmarks/sweep.py

This file is not a test, and pytest does not collect it.
"""

from __future__ import annotations

import argparse
import importlib
import math
import operator
import os
import platform
import subprocess
import sys
import time
import types
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import minigrad as mg

INF = math.inf

# Kinds of check, and the factor a custom op multiplies its true derivative by.
BUILTIN = "built-in"
RIGHT = "custom, right"
OFF = "custom, 10% off"
FLIP = "custom, sign flip"
KINDS = (BUILTIN, RIGHT, OFF, FLIP)
FACTORS = {RIGHT: 1.0, OFF: 1.1, FLIP: -1.0}
WRONG = (OFF, FLIP)

# Outcomes of one check.
PASS = "pass"
WARN = "warn"
FAIL = "fail"
RAISE = "raise"
OUTCOMES = (PASS, WARN, FAIL, RAISE)

#: |x| for the magnitude sweep: 1, 2, 5 per decade from 1e-8, and 1e8.
GRID = (*(float(f"{m}e{k}") for k in range(-8, 8) for m in (1, 2, 5)), 1e8)
#: Distances from a domain edge or pole.
NEAR = (2e-7, 1e-7, 5e-8, 2e-8, 1e-8, 5e-9, 2e-9, 1e-9)
#: A point this close to an edge or pole is in the ``edge`` band.
EDGE = 2e-7

BANDS = ("edge: within 2e-7", "abs(x) < 1e-2", "1e-2 <= abs(x) <= 1e2", "abs(x) > 1e2")

#: The names every namespace of operations (math, minigrad, torch, jax.numpy) offers.
OPS = ("sin", "cos", "tan", "tanh", "exp", "log", "log1p", "sqrt")


@dataclass(frozen=True)
class Fn:
    """A smooth function of one input, written once for every tool.

    ``f(ns, x)`` and its derivative ``df(ns, x, out)`` use arithmetic and the
    operations ``ns.sin``, ``ns.log``, ... of a namespace: :mod:`math` on
    floats, minigrad's, torch's or ``jax.numpy``'s on their own numbers.
    """

    name: str
    f: Callable[[Any, Any], Any]
    df: Callable[[Any, Any, Any], Any]
    lo: float = -INF
    hi: float = INF
    poles: tuple[float, ...] = ()
    max_abs: float = INF
    wrong: bool = True
    #: Points of its own (the hard places of ``--hard``) instead of the grid.
    at: tuple[float, ...] = ()

    @property
    def edges(self) -> tuple[float, ...]:
        """The finite ends of the domain and the poles: the sweep goes near them."""
        return tuple(e for e in (self.lo, self.hi) if math.isfinite(e)) + self.poles

    def inside(self, x: float) -> bool:
        """Whether x is in the open domain, off every pole, within max_abs."""
        return self.lo < x < self.hi and x not in self.poles and abs(x) <= self.max_abs


FUNCTIONS = (
    Fn("x*x", lambda m, x: x * x, lambda m, x, out: 2.0 * x),
    Fn("x**3", lambda m, x: x**3, lambda m, x, out: 3.0 * x * x),
    Fn("1/x", lambda m, x: 1.0 / x, lambda m, x, out: -1.0 / (x * x), poles=(0.0,)),
    Fn("sin(x)", lambda m, x: m.sin(x), lambda m, x, out: m.cos(x)),
    Fn("tanh(x)", lambda m, x: m.tanh(x), lambda m, x, out: 1.0 - out * out, wrong=False),
    Fn("sqrt(x*x+1)", lambda m, x: m.sqrt(x * x + 1.0), lambda m, x, out: x / out),
    Fn("exp(x)", lambda m, x: m.exp(x), lambda m, x, out: out, max_abs=700.0),
    Fn("log(x)", lambda m, x: m.log(x), lambda m, x, out: 1.0 / x, lo=0.0),
    Fn("sqrt(x)", lambda m, x: m.sqrt(x), lambda m, x, out: 0.5 / out, lo=0.0),
    Fn(
        "x**0.5+x**1.5",
        lambda m, x: x**0.5 + x**1.5,
        lambda m, x, out: 0.5 * x**-0.5 + 1.5 * x**0.5,
        lo=0.0,
        wrong=False,
    ),
    Fn("log1p(x)", lambda m, x: m.log1p(x), lambda m, x, out: 1.0 / (1.0 + x), lo=-1.0),
    Fn(
        "sqrt(1-x*x)",
        lambda m, x: m.sqrt(1.0 - x * x),
        lambda m, x, out: -x / out,
        lo=-1.0,
        hi=1.0,
        wrong=False,
    ),
)


#: The hard places of issue 26 (``--hard``): oscillating far out, forwards that
#: cancel inside, poles away from 0, tiny magnitudes (benchmarks/hard.py has
#: them as injected errors). In the custom kinds the sine is inside the rule.
HARD_FUNCTIONS = (
    Fn(
        "t*t+sin(t)",
        lambda m, x: x * x + m.sin(x),
        lambda m, x, out: 2.0 * x + m.cos(x),
        at=(1.2345e7, 1.7e7, 3e7),
    ),
    Fn("t-sin(t)", lambda m, x: x - m.sin(x), lambda m, x, out: 1.0 - m.cos(x), at=(1e15, 3e15)),
    Fn(
        "exp(t/10)+sin(50t)/100",
        lambda m, x: m.exp(x / 10.0) + 0.01 * m.sin(50.0 * x),
        lambda m, x, out: m.exp(x / 10.0) / 10.0 + 0.5 * m.cos(50.0 * x),
        at=(3.3, 7.1),
    ),
    Fn(
        "log1p(exp(x))-x",
        lambda m, x: m.log1p(m.exp(x)) - x,
        lambda m, x, out: -1.0 / (1.0 + m.exp(x)),
        at=(15.2, 30.0, 100.0),
    ),
    Fn("cos(x)-1", lambda m, x: m.cos(x) - 1.0, lambda m, x, out: -m.sin(x), at=(1e-4, 1e-10)),
    Fn(
        "1/(x-1)",
        lambda m, x: 1.0 / (x - 1.0),
        lambda m, x, out: -out * out,
        poles=(1.0,),
        at=(1.0 + 1e-6, 1.0 + 1e-10, 1.0 - 1e-8),
    ),
    Fn(
        "tan(x)",
        lambda m, x: m.tan(x),
        lambda m, x, out: 1.0 + out * out,
        at=tuple(math.pi / 2 - d for d in (1e-6, 1e-10, 1e-13)),
    ),
    Fn("x*x tiny", lambda m, x: x * x, lambda m, x, out: 2.0 * x, at=(1e-100, 1e-150)),
    Fn("1/x tiny", lambda m, x: 1.0 / x, lambda m, x, out: -out * out, at=(1e-100, 1e-150)),
    Fn(
        "sqrt tiny",
        lambda m, x: m.sqrt(x),
        lambda m, x, out: 0.5 / out,
        lo=0.0,
        at=(1e-200, 1e-300),
    ),
)


def points(fn: Fn) -> list[float]:
    """The sweep's points for ``fn``: its own (``at``), or the magnitudes with both
    signs, then near its edges."""
    if fn.at:
        return sorted(fn.at)
    xs = {s * a for a in GRID for s in (1.0, -1.0)}
    xs.update(e + s * d for e in fn.edges for d in NEAR for s in (1.0, -1.0))
    return sorted(x for x in xs if fn.inside(x))


def band(fn: Fn, x: float) -> str:
    """The band of ``x`` for ``fn``: near an edge first, else by magnitude."""
    # 1% slack: -1 + 2e-7 is 2.00000000006e-7 from -1 once rounded.
    if any(abs(x - e) <= 1.01 * EDGE for e in fn.edges):
        return BANDS[0]
    if abs(x) < 1e-2:
        return BANDS[1]
    if abs(x) <= 1e2:
        return BANDS[2]
    return BANDS[3]


@dataclass(frozen=True)
class Case:
    """One check: a kind, a function and a point."""

    kind: str
    fn: Fn
    x: float

    @property
    def right(self) -> bool:
        """Whether the derivative the tool is given is the true one."""
        return self.kind not in WRONG

    @property
    def band(self) -> str:
        return band(self.fn, self.x)

    def __str__(self) -> str:
        return f"{self.kind:17} {self.fn.name:13} x={self.x!r}"


def cases(functions: Iterable[Fn] = FUNCTIONS) -> list[Case]:
    """Every check of the sweep, built-in and custom, right and wrong."""
    out = []
    for fn in functions:
        for x in points(fn):
            out.append(Case(BUILTIN, fn, x))
            if fn.wrong:
                out.append(Case(RIGHT, fn, x))
                if fn.df(math, x, fn.f(math, x)) != 0.0:
                    out.extend(Case(kind, fn, x) for kind in WRONG)
    return out


# Running one check.


def first_lines(message: object, width: int = 240) -> str:
    """A message on one line (its lines joined by " / ", spaces squeezed), cut to ``width``."""
    lines = (" ".join(line.split()) for line in str(message).splitlines())
    text = " / ".join(line for line in lines if line)
    return text if len(text) <= width else text[: width - 3] + "..."


def judge(
    check: Callable[[], object],
    failure: tuple[type[BaseException], ...],
    warning: type[Warning] | None,
) -> tuple[str, str]:
    """Run one check; its outcome (pass, warn, fail, raise) and the message on one line.

    ``failure`` are the checker's own failure exceptions; ``warning`` its
    warning class, if it has one (other warnings are not the checker's verdict).
    """
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            verdict = check()
        except failure as exc:
            return FAIL, first_lines(exc)
        except Exception as exc:
            return RAISE, f"{type(exc).__name__}: {first_lines(exc)}"
    if verdict is False:
        return FAIL, "returned False"
    for w in seen:
        if warning is not None and issubclass(w.category, warning):
            return WARN, first_lines(w.message)
    return PASS, ""


@dataclass
class Tool:
    """A checker under test: its name, version and how it runs one case."""

    name: str
    version: str
    run: Callable[[Case], tuple[str, str]]


def _namespace(ops: dict[str, Callable[[Any], Any]]) -> types.SimpleNamespace:
    return types.SimpleNamespace(**ops)


def minigrad_tool() -> Tool:
    """minigrad's ``gradcheck`` at its defaults; custom ops are ``minigrad.Rule``s."""
    # On Values, the built-in ops are the methods; in a partial (called with
    # floats or Values) the module functions, which take both.
    on_values = _namespace({n: operator.methodcaller(n) for n in OPS})
    in_partials = _namespace({n: getattr(mg, n) for n in OPS if hasattr(mg, n)})
    rules: dict[tuple[str, str], mg.Rule] = {}

    def rule(fn: Fn, kind: str) -> mg.Rule:
        key = (fn.name, kind)
        if key not in rules:
            factor = FACTORS[kind]
            rules[key] = mg.Rule(
                f"my_{fn.name}",
                lambda x: fn.f(math, x),
                (lambda x, out: factor * fn.df(in_partials, x, out),),
                domain=((fn.lo, fn.hi),),
                avoid=fn.poles,
            )
        return rules[key]

    def run(case: Case) -> tuple[str, str]:
        fn = case.fn
        func: Callable[[mg.Value], mg.Value] = (
            (lambda v: fn.f(on_values, v)) if case.kind == BUILTIN else rule(fn, case.kind)
        )
        return judge(
            lambda: mg.gradcheck(func, [mg.Value(case.x)]),
            (mg.GradcheckError,),
            mg.GradcheckWarning,
        )

    return Tool("minigrad", f"{mg.__version__} ({source_commit()})", run)


def source_commit() -> str:
    """The last git commit to the imported package's folder, "+ changes" if it has edits."""
    where = os.path.dirname(os.path.abspath(mg.__file__))
    try:
        commit = subprocess.run(
            ["git", "-C", where, "log", "-1", "--format=%h %cs", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", where, "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return f"commit {commit}" + (" + changes" if dirty else "")


def torch_tool() -> Tool:
    """``torch.autograd.gradcheck`` at its defaults; custom ops are ``autograd.Function``s."""
    torch: Any = importlib.import_module("torch")
    failure: Any = importlib.import_module("torch.autograd.gradcheck").GradcheckError
    functions: dict[tuple[str, str], Any] = {}

    def custom(fn: Fn, kind: str) -> Any:
        key = (fn.name, kind)
        if key not in functions:
            factor = FACTORS[kind]

            def forward(ctx: Any, x: Any) -> Any:
                out = fn.f(torch, x)
                ctx.save_for_backward(x, out)
                return out

            def backward(ctx: Any, g: Any) -> Any:
                x, out = ctx.saved_tensors
                return g * (factor * fn.df(torch, x, out))

            op: Any = type(
                "MyOp",
                (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)},
            )
            functions[key] = op.apply
        return functions[key]

    def run(case: Case) -> tuple[str, str]:
        fn = case.fn
        func = (lambda t: fn.f(torch, t)) if case.kind == BUILTIN else custom(fn, case.kind)
        x = torch.tensor(case.x, dtype=torch.float64, requires_grad=True)
        return judge(lambda: torch.autograd.gradcheck(func, (x,)), (failure,), None)

    return Tool("torch", torch.__version__, run)


def jax_tool() -> Tool:
    """``jax.test_util.check_grads(f, args, order=1)`` at its defaults; custom ops: custom_jvp."""
    jax: Any = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    jnp: Any = importlib.import_module("jax.numpy")
    check_grads: Any = importlib.import_module("jax.test_util").check_grads
    functions: dict[tuple[str, str], Any] = {}

    def custom(fn: Fn, kind: str) -> Any:
        key = (fn.name, kind)
        if key not in functions:
            factor = FACTORS[kind]
            op = jax.custom_jvp(lambda x: fn.f(jnp, x))

            def jvp(primals: Any, tangents: Any) -> Any:
                (x,), (t,) = primals, tangents
                out = fn.f(jnp, x)
                return out, factor * fn.df(jnp, x, out) * t

            op.defjvp(jvp)
            functions[key] = op
        return functions[key]

    def run(case: Case) -> tuple[str, str]:
        fn = case.fn
        func = (lambda t: fn.f(jnp, t)) if case.kind == BUILTIN else custom(fn, case.kind)
        x = jnp.asarray(case.x, dtype=jnp.float64)
        return judge(lambda: check_grads(func, (x,), 1), (AssertionError,), None)

    return Tool("jax", jax.__version__, run)


TOOLS: dict[str, Callable[[], Tool]] = {
    "minigrad": minigrad_tool,
    "torch": torch_tool,
    "jax": jax_tool,
}


# Counting and the tables.

Result = tuple[Case, str, str]

COLUMNS = (
    "right checks",
    "false alarms",
    "of which raised",
    "right but warned",
    "wrong checks",
    "caught",
    "warned",
    "missed",
    "raised",
)


def tally(results: Iterable[Result]) -> dict[str, int]:
    """The counts of :data:`COLUMNS` over some results."""
    n = dict.fromkeys(COLUMNS, 0)
    for case, outcome, _ in results:
        if case.right:
            n["right checks"] += 1
            n["false alarms"] += outcome in (FAIL, RAISE)
            n["of which raised"] += outcome == RAISE
            n["right but warned"] += outcome == WARN
        else:
            n["wrong checks"] += 1
            n["caught"] += outcome == FAIL
            n["warned"] += outcome == WARN
            n["missed"] += outcome == PASS
            n["raised"] += outcome == RAISE
    return n


def markdown(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def totals_table(by_tool: dict[str, list[Result]]) -> str:
    """One row per tool: the totals of :data:`COLUMNS`."""
    rows = []
    for name, results in by_tool.items():
        n = tally(results)
        rows.append([f"**{name}**", *(n[c] for c in COLUMNS)])
    return markdown(["tool", *COLUMNS], rows)


def bands_table(by_tool: dict[str, list[Result]]) -> str:
    """One row per tool and band (bands with no checks are left out)."""
    rows = []
    for name, results in by_tool.items():
        for b in BANDS:
            inside = [r for r in results if r[0].band == b]
            if inside:
                n = tally(inside)
                rows.append([name, b, *(n[c] for c in COLUMNS)])
    return markdown(["tool", "band", *COLUMNS], rows)


def kinds_table(by_tool: dict[str, list[Result]]) -> str:
    """One row per tool and kind of check: how many checks ended in each outcome."""
    rows = []
    for name, results in by_tool.items():
        for kind in KINDS:
            count = Counter(outcome for case, outcome, _ in results if case.kind == kind)
            rows.append([name, kind, sum(count.values()), *(count[o] for o in OUTCOMES)])
    return markdown(["tool", "kind", "checks", *OUTCOMES], rows)


def verdict_word(case: Case, outcome: str) -> str:
    """What an outcome means for this case; '' when the tool judged it right."""
    if case.right:
        return {FAIL: "false alarm", RAISE: "false alarm (raised)", WARN: "right but warned"}.get(
            outcome, ""
        )
    return {PASS: "missed", WARN: "warned", RAISE: "raised"}.get(outcome, "")


def details(name: str, results: Sequence[Result]) -> str:
    """Every case of one tool that was not judged right, one line each."""
    lines = []
    for case, outcome, message in results:
        word = verdict_word(case, outcome)
        if word:
            lines.append(f"- {word}: {case}" + (f": {message}" if message else ""))
    return f"### {name}: {len(lines)} cases not judged right\n\n" + "\n".join(lines)


def version_of(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="comma-separated: " + ",".join(TOOLS)
    )
    parser.add_argument(
        "--details", action="store_true", help="list every case not judged right, per tool"
    )
    parser.add_argument(
        "--hard", action="store_true", help="the hard places of issue 26 instead of the grid"
    )
    args = parser.parse_args(argv)
    names = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in names if t not in TOOLS]
    if unknown:
        parser.error(f"--tools: unknown {', '.join(unknown)}; choose from {', '.join(TOOLS)}")

    functions = HARD_FUNCTIONS if args.hard else FUNCTIONS
    sweep = cases(functions)
    right = sum(c.right for c in sweep)
    print("# Derivative checkers side by side\n")
    print(
        f"{len(sweep)} checks per tool: {right} of a right derivative, "
        f"{len(sweep) - right} of a wrong one (10% off or sign-flipped), "
        f"over {len(functions)} functions; every tool at its default settings, float64. "
        f"Python {platform.python_version()} on {platform.machine()}.\n"
    )
    by_tool: dict[str, list[Result]] = {}
    for name in names:
        try:
            tool = TOOLS[name]()
        except ImportError as exc:
            print(f"- {name}: not installed ({exc}), skipped")
            continue
        start = time.perf_counter()
        by_tool[name] = [(case, *tool.run(case)) for case in sweep]
        elapsed = time.perf_counter() - start
        print(f"- {tool.name} {tool.version}: {elapsed:.1f} s")
        print(f"  {name} done in {elapsed:.1f} s", file=sys.stderr)
    if "jax" in by_tool:
        print(f"- (jaxlib {version_of('jaxlib')})")
    if not by_tool:
        return 0
    print("\n## Totals\n")
    print(totals_table(by_tool))
    print("\n## By band of the input\n")
    print(bands_table(by_tool))
    print("\n## By kind of check (outcomes)\n")
    print(kinds_table(by_tool))
    if args.details:
        print("\n## Cases not judged right\n")
        for name, results in by_tool.items():
            print(details(name, results) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
