"""The ``minigrad`` command: ``check`` (the main job), ``demo`` and ``eps-curve``.

Results go to stdout; progress goes to stderr, and only when it is a terminal.
Colour is used only on a terminal and never when ``NO_COLOR`` is set.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from minigrad import ops
from minigrad.engine import Value
from minigrad.gradcheck import Report, check
from minigrad.ops import Rule

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


def _use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def _verdict(ok: bool, colour: bool) -> str:
    word = "ok" if ok else "FAIL"
    if not colour:
        return word
    return f"\033[32m{word}\033[0m" if ok else f"\033[31m{word}\033[0m"


def _check_points(
    func: Callable[..., Value],
    boxes: Sequence[tuple[float, float]],
    points: int,
    order: int,
    rng: random.Random,
    sample: Callable[[random.Random], tuple[float, ...]] | None = None,
) -> Report | None:
    """Check ``func`` at random points; the first failing report, or None."""
    for _ in range(points):
        xs = sample(rng) if sample else tuple(rng.uniform(lo, hi) for lo, hi in boxes)
        report = check(func, [Value(x) for x in xs], order=order)
        if not report.ok:
            return report
    return None


def _load_rules(path: str) -> list[Rule]:
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"minigrad check: no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"_minigrad_user_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise ImportError(f"minigrad check: cannot import {path} as Python")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [v for v in vars(module).values() if isinstance(v, Rule)]


def _run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    rng = random.Random(args.seed)
    started = time.perf_counter()
    if args.path:
        try:
            rules = _load_rules(args.path)
        except (OSError, ImportError) as exc:
            print(exc, file=err)
            return 2
        if not rules:
            print(f"minigrad check: no Rule found in {args.path}", file=err)
            return 2
        composites: Sequence[tuple[str, Callable[..., Value], tuple[tuple[float, float], ...]]]
        composites = ()
    else:
        rules = list(ops.TABLE)
        composites = COMPOSITES
    colour = _use_colour(out)
    progress = err.isatty()
    rows: list[tuple[str, str, str]] = []
    failures: list[tuple[str, Report]] = []
    total = len(rules) + len(composites)
    for n, rule in enumerate(rules, 1):
        if progress:
            print(f"\r[{n}/{total}] {rule.name:<12}", end="", file=err, flush=True)
        report = _check_points(rule, rule.domain, args.points, args.order, rng, rule.sample)
        rows.append((rule.name, str(args.points), "ok" if report is None else "FAIL"))
        if report is not None:
            failures.append((rule.name, report))
    for n, (name, func, boxes) in enumerate(composites, len(rules) + 1):
        if progress:
            print(f"\r[{n}/{total}] {name[:24]:<24}", end="", file=err, flush=True)
        report = _check_points(func, boxes, args.points, args.order, rng)
        rows.append((name, str(args.points), "ok" if report is None else "FAIL"))
        if report is not None:
            failures.append((name, report))
    if progress:
        print("\r" + " " * 40 + "\r", end="", file=err, flush=True)
    width = max(len(r[0]) for r in rows)
    orders = f"1-{args.order}" if args.order > 1 else "1"
    print(f"{'rule':<{width}}  points  orders  result", file=out)
    for name, points, result in rows:
        print(
            f"{name:<{width}}  {points:>6}  {orders:>6}  {_verdict(result == 'ok', colour)}",
            file=out,
        )
    for name, report in failures:
        print(f"\n{name}: {report.text(full=True)}", file=out)
    seconds = time.perf_counter() - started
    what = f"{len(rules)} rule(s)" + (f" and {len(composites)} composites" if composites else "")
    verdict = "passed" if not failures else f"FAILED ({len(failures)} failing)"
    print(
        f"\n{what} at {args.points} random points each, orders {orders}: {verdict} "
        f"in {seconds:.1f} s",
        file=out,
    )
    return 0 if not failures else 1


def _run_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from minigrad.demo import run

    status: int = run(out, err, seed=args.seed)
    return status


def _run_eps_curve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from minigrad import epscurve

    return epscurve.main(args.svg, out)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minigrad", description="Scalar autograd with derivative checks."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "check",
        help="check every rule (or the rules in a file) at orders 1-3",
        description="Check every derivative rule against central differences at random "
        "points of its domain, orders 1 to --order; with a path, check the Rule "
        "objects defined in that Python file instead.",
    )
    p.add_argument("path", nargs="?", help="a Python file defining minigrad.Rule objects")
    p.add_argument("--points", type=int, default=40, help="random points per rule (40)")
    p.add_argument("--order", type=int, default=3, help="highest order checked (3)")
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.set_defaults(run=_run_check)
    d = sub.add_parser("demo", help="train a small MLP on two moons")
    d.add_argument("--seed", type=int, default=0, help="random seed (0)")
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
