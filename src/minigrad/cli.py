"""The ``minigrad`` command: ``check`` (the main job), ``demo`` and ``eps-curve``.

Results go to stdout; progress goes to stderr, and only when it is a terminal.
Colour is used only on a terminal and never when ``NO_COLOR`` is set.

``minigrad check FILE`` imports the file with its folder on ``sys.path`` and
checks every :class:`~minigrad.Rule` reachable from the module: its names, and
inside lists, tuples, dicts (values), sets and the attributes of classes the
file defines, searched to a depth of :data:`_DEPTH` containers. Exit status:
0 every rule passed, 1 a rule failed or crashed, 2 no rule could be checked
(the file is missing, does not import, or holds no Rule).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from minigrad.checking.gradcheck import Report, check
from minigrad.core import rules
from minigrad.core.rule import Rule
from minigrad.core.value import Value

# typing costs ~15 ms to import and is needed only by mypy (see engine.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import TextIO

__all__ = ["COMPOSITES", "main"]

#: Composite expressions ``minigrad check`` runs besides the single rules:
#: name, function, and the box each input is drawn from.
COMPOSITES: tuple[tuple[str, Callable[..., Value], tuple[tuple[float, float], ...]], ...] = (
    ("diamond (a*b + c) * (a - c)", lambda a, b, c: (a * b + c) * (a - c), ((-2, 2),) * 3),
    ("chain relu(a*b + c)", lambda a, b, c: (a * b + c).relu(), ((0.5, 2), (0.5, 2), (0.1, 1))),
    ("division a / (b + 1)", lambda a, b: a / (b + 1.0), ((-2, 2), (0.0, 2))),
    ("shared x*x + x + x", lambda x: x * x + x + x, ((-2, 2),)),
    ("value exponent x ** y", lambda x, y: x**y * y**x, ((0.3, 2), (0.3, 2))),
    ("real base 2 ** x", lambda x: 2.0**x - x**3.0, ((-2, 2),)),
    ("tanh neuron", lambda w, x, b: (w * x + b).tanh(), ((-1, 1),) * 3),
    ("softplus of sigmoid", lambda x, y: (x.sigmoid() * y).softplus(), ((-2, 2),) * 2),
    ("log-sum-exp", lambda x, y: (x.exp() + y.exp()).log(), ((-2, 2),) * 2),
    ("gelu of sin*cos", lambda x, y: (x.sin() * y.cos()).gelu(), ((-2, 2),) * 2),
    ("sqrt of square sum", lambda x, y: (x * x + y * y + 1.0).sqrt(), ((-2, 2),) * 2),
    ("erf ratio", lambda x, y: x.erf() / (1.0 + y * y), ((-2, 2),) * 2),
)

#: How many containers deep the search for Rules in a user's module goes: a
#: table of rules is rarely more than a few levels down, and the limit keeps a
#: deeply nested data structure from costing time or the recursion limit.
_DEPTH = 8

#: Where the verdict words are coloured on a terminal (ANSI codes).
_COLOURS = {"ok": "32", "FAIL": "31", "ERROR": "35"}


def _use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def _coloured(word: str, colour: bool) -> str:
    """``word`` in its verdict colour when ``colour``, else as it is."""
    return f"\033[{_COLOURS[word]}m{word}\033[0m" if colour else word


def _one_line(exc: BaseException) -> str:
    """``Type: message`` on one line (a long message is cut at its first line)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _show(xs: Sequence[float]) -> str:
    return "(" + ", ".join(f"{x:.8g}" for x in xs) + ")"


class _Item:
    """One row of the table: a function, its name, and how its points are drawn."""

    __slots__ = ("boxes", "draw", "func", "is_rule", "name")

    def __init__(
        self,
        name: str,
        func: Callable[..., Value],
        draw: Callable[[random.Random], tuple[float, ...]],
        boxes: Sequence[tuple[float, float]],
        *,
        is_rule: bool,
    ) -> None:
        self.name = name
        self.func = func
        self.draw = draw
        self.boxes = boxes
        self.is_rule = is_rule


def _rule_item(name: str, rule: Rule) -> _Item:
    return _Item(name, rule, rule.sample, rule.sample_box, is_rule=True)


def _composite_item(
    name: str, func: Callable[..., Value], boxes: Sequence[tuple[float, float]]
) -> _Item:
    def draw(rng: random.Random) -> tuple[float, ...]:
        return tuple(rng.uniform(lo, hi) for lo, hi in boxes)

    return _Item(name, func, draw, boxes, is_rule=False)


def _sampled(boxes: Sequence[tuple[float, float]]) -> str:
    """Where the points were drawn: ``(-2, 2)``, ``(0.1, 2) x (-2, 2)``."""
    return " x ".join(f"({lo:g}, {hi:g})" for lo, hi in boxes)


class _Tally:
    """The verdicts of every entry an item's checks compared."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts = {"wrong": 0, "agrees": 0, "undecided": 0}

    def add(self, report: Report) -> None:
        for verdict, n in report.verdicts().items():
            self.counts[verdict] = self.counts.get(verdict, 0) + n

    def shares(self) -> tuple[str, str]:
        """The shares decided (wrong or agrees) and undecided, in percent."""
        total = sum(self.counts.values())
        if not total:
            return "-", "-"
        undecided = self.counts["undecided"] / total
        return f"{100.0 * (1.0 - undecided):.0f}%", f"{100.0 * undecided:.0f}%"


class _Crash:
    """A check that could not give a verdict: a one-line reason and the exception."""

    __slots__ = ("exc", "reason")

    def __init__(self, reason: str, exc: BaseException) -> None:
        self.reason = reason
        self.exc = exc


def _check_item(
    item: _Item, points: int, order: int, rng: random.Random, tally: _Tally
) -> Report | _Crash | None:
    """Check ``item`` at ``points`` drawn points: the first failing report, a crash, or None.

    Every point is checked, also after a failing one, so ``tally`` counts the
    verdicts of all of them.
    """
    failing: Report | None = None
    for _ in range(points):
        try:
            xs = item.draw(rng)
        except Exception as exc:
            return _Crash(f"cannot draw a point: {_one_line(exc)}", exc)
        # The forward alone first, so that a point where the function is not
        # defined is told apart from a check that crashed.
        try:
            item.func(*[Value(x) for x in xs])
        except Exception as exc:
            hint = (
                "; declare where the rule is defined with domain= and where to draw "
                "points with sample= (by default (-2, 2)), or points to keep away "
                "from with avoid="
                if item.is_rule
                else ""
            )
            return _Crash(f"its forward raises at {_show(xs)}: {_one_line(exc)}{hint}", exc)
        try:
            report = check(item.func, [Value(x) for x in xs], order=order)
        except Exception as exc:
            return _Crash(f"the check raised at {_show(xs)}: {_one_line(exc)}", exc)
        tally.add(report)
        if not report.ok and failing is None:
            failing = report
    return failing


class _FileError(Exception):
    """The file gives nothing to check: the one line to print, and the cause."""

    def __init__(self, line: str, cause: BaseException | None = None) -> None:
        super().__init__(line)
        self.cause = cause


def _import_reason(exc: BaseException, file: Path) -> str:
    """The error and where in ``file`` it happened, on one line."""
    if isinstance(exc, SyntaxError):
        where = f"line {exc.lineno}"
        if exc.filename and Path(exc.filename).resolve() != file:
            where = f"{Path(exc.filename).name}, {where}"  # in a module it imports
        return f"{type(exc).__name__}: {exc.msg} ({where})"
    import traceback

    lines = [
        frame.lineno
        for frame in traceback.extract_tb(exc.__traceback__)
        if Path(frame.filename).resolve() == file
    ]
    return _one_line(exc) + (f" (line {lines[-1]})" if lines else "")


def _import(path: str) -> ModuleType:
    """Import the file at ``path`` as a module, or raise :class:`_FileError`."""
    file = Path(path)
    if file.is_dir():
        raise _FileError(f"minigrad check: {path} is a folder, not a Python file")
    if not file.is_file():
        raise _FileError(f"minigrad check: no such file: {path}")
    file = file.resolve()
    name = f"_minigrad_user_{file.stem}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise _FileError(f"minigrad check: cannot import {path}: not a Python file (.py)")
    module = importlib.util.module_from_spec(spec)
    # Registered while it runs, as the import system does: dataclasses and
    # pickle look a class's module up in sys.modules.
    sys.modules[name] = module
    importlib.invalidate_caches()  # the folder may have changed since it was last read
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        line = f"minigrad check: cannot import {path}: {_import_reason(exc, file)}"
        raise _FileError(line, exc) from exc
    return module


def _find_rules(module: ModuleType) -> list[tuple[str, Rule]]:
    """Every Rule reachable from ``module``, once each, named by where it was first found.

    A name ends with the rule's own name in parentheses unless the last key
    on the way already is that name: ``RULES[2] (cube)``, ``MyOps.cube``.
    """
    found: dict[int, tuple[str, Rule]] = {}
    opened: set[int] = set()  # containers already searched: cycles end here

    def visit(obj: object, path: str, key: object, depth: int) -> None:
        if isinstance(obj, Rule):
            if id(obj) not in found:
                found[id(obj)] = (path if key == obj.name else f"{path} ({obj.name})", obj)
            return
        if depth >= _DEPTH or id(obj) in opened:
            return
        if isinstance(obj, list | tuple):
            opened.add(id(obj))
            for i, item in enumerate(obj):
                visit(item, f"{path}[{i}]", None, depth + 1)
        elif isinstance(obj, dict):
            opened.add(id(obj))
            for k, item in list(obj.items()):
                visit(item, f"{path}[{k!r}]", k, depth + 1)
        elif isinstance(obj, set | frozenset):
            opened.add(id(obj))
            # A set has no order of its own: its rules go by name, so runs agree.
            rules = sorted((m for m in obj if isinstance(m, Rule)), key=lambda r: r.name)
            for rule in rules:
                visit(rule, f"{path}{{{rule.name}}}", rule.name, depth + 1)
            for item in obj:
                if not isinstance(item, Rule):
                    visit(item, f"{path}{{}}", None, depth + 1)
        elif isinstance(obj, type) and obj.__module__ == module.__name__:
            opened.add(id(obj))
            for k, item in list(vars(obj).items()):
                if not k.startswith("__"):
                    visit(item, f"{path}.{k}", k, depth + 1)

    for k, item in list(vars(module).items()):
        if not k.startswith("__"):
            visit(item, k, k, 0)
    return list(found.values())


def _rules_of(path: str) -> tuple[list[_Item], list[Rule]]:
    """The rules to check in the file at ``path``, and the built-in ones skipped.

    A file that imports rules of ``minigrad.ops`` beside its own is not
    asking to check the built-ins (``minigrad check`` alone does that); a
    file of nothing but built-ins is.
    """
    found = _find_rules(_import(path))
    if not found:
        raise _FileError(f"minigrad check: no Rule found in {path}")
    builtin = {id(rule) for rule in rules.TABLE}
    own = [(name, rule) for name, rule in found if id(rule) not in builtin]
    if not own:
        return [_rule_item(name, rule) for name, rule in found], []
    skipped = [rule for _, rule in found if id(rule) in builtin]
    return [_rule_item(name, rule) for name, rule in own], skipped


def _run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not args.path:
        items = [_rule_item(rule.name, rule) for rule in rules.TABLE]
        items += [_composite_item(*composite) for composite in COMPOSITES]
        return _report(items, len(rules.TABLE), [], args, out, err)
    # The file's folder is on sys.path while it is imported and checked (a
    # forward may import lazily); afterwards sys.path is as it was, and the
    # modules loaded from that folder are forgotten, so that another file's
    # helper of the same name is not mistaken for this one's.
    folder = Path(args.path).resolve().parent
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    sys.path.insert(0, str(folder))
    try:
        try:
            items, skipped = _rules_of(args.path)
        except _FileError as exc:
            print(exc, file=err)
            if args.verbose and exc.cause is not None:
                import traceback

                print("".join(traceback.format_exception(exc.cause)), end="", file=err)
            return 2
        return _report(items, len(items), skipped, args, out, err)
    finally:
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved_modules:
            file = getattr(sys.modules[name], "__file__", None)
            if name.startswith("_minigrad_user_") or (
                file and folder in Path(file).resolve().parents
            ):
                del sys.modules[name]


def _report(
    items: Sequence[_Item],
    rules: int,
    skipped: Sequence[Rule],
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
) -> int:
    """Check every item, print the table and the details; the exit status."""
    started = time.perf_counter()
    rng = random.Random(args.seed)
    progress = err.isatty()
    results: list[tuple[_Item, Report | _Crash | None, _Tally]] = []
    for n, item in enumerate(items, 1):
        if progress:
            print(f"\r[{n}/{len(items)}] {item.name[:24]:<24}", end="", file=err, flush=True)
        tally = _Tally()
        results.append((item, _check_item(item, args.points, args.order, rng, tally), tally))
    if progress:
        print("\r" + " " * 40 + "\r", end="", file=err, flush=True)
    colour = _use_colour(out)
    width = max(len(item.name) for item in items)
    where = max(len("sampled"), *(len(_sampled(item.boxes)) for item in items))
    orders = f"1-{args.order}" if args.order > 1 else "1"
    print(
        f"{'rule':<{width}}  points  orders  {'sampled':<{where}}  decided  undecided  result",
        file=out,
    )
    for item, result, tally in results:
        word = "ok" if result is None else "ERROR" if isinstance(result, _Crash) else "FAIL"
        decided, undecided = tally.shares()
        row = (
            f"{item.name:<{width}}  {args.points:>6}  {orders:>6}  "
            f"{_sampled(item.boxes):<{where}}  {decided:>7}  {undecided:>9}  "
            f"{_coloured(word, colour)}"
        )
        print(row + (f"  {result.reason}" if isinstance(result, _Crash) else ""), file=out)
    for item, result, _ in results:
        if isinstance(result, Report):
            print(f"\n{item.name}: {result.text(full=True)}", file=out)
        elif isinstance(result, _Crash) and args.verbose:
            import traceback

            trace = "".join(traceback.format_exception(result.exc)).rstrip()
            print(f"\n{item.name}: {result.reason}\n{trace}", file=out)
    if skipped:
        names = ", ".join(rule.name for rule in skipped)
        print(
            f"\nskipped {len(skipped)} built-in rule(s) of minigrad.ops the file imports "
            f"({names}); `minigrad check` without a file checks those",
            file=out,
        )
    failing = sum(isinstance(result, Report) for _, result, _ in results)
    crashed = sum(isinstance(result, _Crash) for _, result, _ in results)
    what = f"{rules} rule(s)"
    if len(items) > rules:
        what += f" and {len(items) - rules} composites"
    bad = [f"{failing} failing"] if failing else []
    bad += [f"{crashed} error" + "s" * (crashed > 1)] if crashed else []
    verdict = f"FAILED ({', '.join(bad)})" if bad else "passed"
    seconds = time.perf_counter() - started
    print(
        f"\n{what} at {args.points} random points each, orders {orders}: {verdict} "
        f"in {seconds:.1f} s",
        file=out,
    )
    return 1 if bad else 0


def _run_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from minigrad.teach.demo import run

    if args.steps < 1 or args.every < 0:
        print("minigrad demo: --steps must be >= 1 and --every >= 0", file=err)
        return 2
    result = run(
        out, err, seed=args.seed, steps=args.steps, every=args.every, compiled=not args.eager
    )
    return 0 if result.reached_target else 1


def _run_eps_curve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from minigrad.teach import epscurve

    return epscurve.main(args.svg, out)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minigrad", description="Scalar autograd with derivative checks."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "check",
        help="check every rule (or the rules in a file) at orders 1-3",
        description="Check every derivative rule against numerical derivatives at random "
        "points of its sample intervals, orders 1 to --order; with a path, check every Rule "
        "reachable from that Python file instead (its names, and inside lists, tuples, "
        "dicts, sets and the classes it defines). Exit status: 0 all passed, 1 a rule "
        "failed or crashed, 2 the file is missing, does not import or holds no Rule.",
    )
    p.add_argument("path", nargs="?", help="a Python file defining minigrad.Rule objects")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print the traceback of a file that does not import or a rule that crashes",
    )
    p.add_argument("--points", type=int, default=40, help="random points per rule (40)")
    p.add_argument("--order", type=int, default=3, help="highest order checked (3)")
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.set_defaults(run=_run_check)
    d = sub.add_parser(
        "demo",
        help="train a small MLP on two moons",
        description="Train micrograd's 2-16-16-1 MLP on 100 points of two moons until every "
        "point is classified correctly, the loss compiled by minigrad.compile (--eager: "
        "evaluated eagerly). Progress lines go to stderr, the results to stdout. "
        "Exit status: 0 when the training accuracy reaches 95%%, 1 when it does not.",
    )
    d.add_argument("--seed", type=int, default=0, help="random seed (0)")
    d.add_argument("--steps", type=int, default=100, help="most SGD updates (100)")
    d.add_argument(
        "--every", type=int, default=10, help="steps between progress lines, 0 for none (10)"
    )
    d.add_argument(
        "--eager",
        action="store_true",
        help="evaluate the loss eagerly instead of through minigrad.compile (same numbers)",
    )
    d.set_defaults(run=_run_demo)
    e = sub.add_parser("eps-curve", help="print the error of central differences against eps")
    e.add_argument("--svg", help="also write the figure to this SVG file")
    e.set_defaults(run=_run_eps_curve)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``minigrad`` command; return its exit status.

    Example:
        >>> import io, contextlib
        >>> buf = io.StringIO()
        >>> with contextlib.redirect_stdout(buf):
        ...     status = main(["check", "--points", "1", "--order", "1"])
        >>> status, "passed" in buf.getvalue()
        (0, True)
    """
    args = _parser().parse_args(argv)
    if getattr(args, "points", 1) < 1 or getattr(args, "order", 1) < 1:
        print("minigrad: --points and --order must be >= 1", file=sys.stderr)
        return 2
    status: int = args.run(args, sys.stdout, sys.stderr)
    return status
