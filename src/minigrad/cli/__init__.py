"""The ``minigrad`` command: ``check`` (the main job), ``demo``, ``eps-curve`` and ``playground``.

Results go to stdout; progress goes to stderr, and only when it is a terminal.
Colour is used only on a terminal and never when ``NO_COLOR`` is set.

``minigrad check FILE`` imports the file with its folder on ``sys.path`` and
checks every :class:`~minigrad.Rule` reachable from the module
(:mod:`minigrad.cli.rulefile`): its names, and inside lists, tuples, dicts
(values), sets and the attributes of classes the file defines. The file runs
in a process of its own with a time limit per rule (:mod:`minigrad.cli.sandbox`):
a rule that hangs, calls ``sys.exit()``, raises ``KeyboardInterrupt`` or
crashes the interpreter is that rule's error, and every rule gets a verdict.
Exit status: 0 every rule passed, 1 a rule failed or crashed, 2 no rule could
be checked (the file is missing, does not import in time, or holds no Rule),
130 interrupted by Ctrl-C.

``minigrad check --engine TARGET ...`` runs lab 03's battery on a student's
engine, or on a class of them (:mod:`minigrad.cli.lab`).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from minigrad.checking.lab.trials import Outcome
from minigrad.checking.run.runner import MAX_ORDER
from minigrad.cli import lab
from minigrad.cli.playground import TIME_LIMIT
from minigrad.cli.rulefile import Item, check_item, composite_item, outcome, rule_item
from minigrad.cli.sandbox import run_job
from minigrad.core import rules
from minigrad.core.value import Value

# typing costs ~15 ms to import and is needed only by mypy (see engine.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
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

#: Where the verdict words are coloured on a terminal (ANSI codes).
_COLOURS = {Outcome.OK: "32", Outcome.FAIL: "31", Outcome.ERROR: "35"}


def _use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def _coloured(word: str, colour: bool) -> str:
    """``word`` in its verdict colour when ``colour``, else as it is."""
    return f"\033[{_COLOURS[Outcome(word)]}m{word}\033[0m" if colour else word


def _run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.engine:
        if args.path:
            print("minigrad check: give a rule file or --engine, not both", file=err)
            return 2
        return lab.grade(
            args.engine,
            points=args.points,
            seed=args.seed,
            depth=args.depth,
            timeout=args.timeout,
            fmt=args.format,
            verbose=args.verbose,
            out=out,
            err=err,
        )
    if args.format != "text":
        print("minigrad check: --format json or csv is for --engine's gradebook", file=err)
        return 2
    if not args.path:
        # minigrad's own rules: no user code, so no worker process.
        items = [rule_item(rule.name, rule) for rule in rules.TABLE]
        items += [composite_item(*composite) for composite in COMPOSITES]
        return _check_here(items, args, out, err)
    path = Path(args.path)
    if path.is_dir():
        print(f"minigrad check: {args.path} is a folder, not a Python file", file=err)
        return 2
    if not path.is_file():
        print(f"minigrad check: no such file: {args.path}", file=err)
        return 2
    # The user's file runs in a process of its own, with a time limit per
    # rule (minigrad.cli.sandbox): an endless loop, sys.exit() or a crash in one
    # rule is that rule's error, and every rule gets a verdict.
    job = {
        "kind": "rules",
        "path": str(path.resolve()),
        "points": args.points,
        "order": args.order,
        "seed": args.seed,
        "verbose": args.verbose,
    }
    started = time.perf_counter()
    show = _progress(err)
    found = run_job(job, timeout=args.timeout, placeholder=_placeholder, on_result=show)
    if show is not None:
        print("\r" + " " * 60 + "\r", end="", file=err, flush=True)
    if found.load_error:
        line = found.load_error
        if not line.startswith("minigrad check"):  # it timed out, or the worker died
            line = f"minigrad check: cannot import {args.path}: {line}"
        print(line, file=err)
        if args.verbose and found.load_trace:
            print(found.load_trace, file=err)
        return 2
    skipped = found.loaded.get("skipped", [])
    results = [
        (name, {k: str(v) for k, v in result.items()})
        for name, result in zip(found.names, found.results, strict=False)
    ]
    shown = [str(s) for s in skipped] if isinstance(skipped, list) else []
    status = _report(results, len(found.names), shown, args, out, started)
    if found.interrupted:
        print("interrupted (Ctrl-C): the rules above are all that were checked", file=err)
        return 130
    return status


def _placeholder(name: str, why: str) -> dict[str, object]:
    return {"word": Outcome.ERROR, "reason": why, "text": "", "trace": ""}


def _progress(err: TextIO) -> Callable[[int, int, str], None] | None:
    """Progress on a terminal's stderr: ``rule n of N: name (s)``; None off a terminal.

    One line, rewritten in place (``\\r``), so a piped or redirected run
    (stderr not a terminal) gets none of it, and the results on stdout are
    the same either way.
    """
    if not err.isatty():
        return None
    started = time.perf_counter()

    def show(i: int, n: int, name: str) -> None:
        seconds = time.perf_counter() - started
        line = f"rule {i + 1} of {n}: {name[:28]} ({seconds:.1f} s)"
        print(f"\r{line:<60}", end="", file=err, flush=True)

    return show


def _check_here(items: Sequence[Item], args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Check minigrad's own rules and composites: in this process, or spread over
    ``--jobs`` processes forked from it (:func:`_each_checked`)."""
    started = time.perf_counter()
    show = _progress(err)
    results: list[tuple[str, dict[str, str]]] = []
    interrupted = False
    try:
        for i, (name, found) in enumerate(_each_checked(items, args)):
            if show is not None:
                show(i, len(items), name)
            results.append((name, found))
    except KeyboardInterrupt:
        interrupted = True
    if show is not None:
        print("\r" + " " * 60 + "\r", end="", file=err, flush=True)
    if interrupted:
        if results:
            _report(results, len(rules.TABLE), [], args, out, started)
        print("interrupted (Ctrl-C): the rules above are all that were checked", file=err)
        return 130
    return _report(results, len(rules.TABLE), [], args, out, started)


#: What the forked workers of :func:`_each_checked` check: the items and the options.
_WORK: tuple[Sequence[Item], argparse.Namespace] | None = None


def _checked(i: int) -> tuple[str, dict[str, str]]:
    """Item ``i`` of :data:`_WORK`, checked at its own seeded points: its name and outcome."""
    assert _WORK is not None
    items, args = _WORK
    item = items[i]
    rng = random.Random(f"{args.seed}:{i}:{item.name}")
    found = check_item(item, args.points, args.order, rng)
    return item.name, outcome(item, found, verbose=args.verbose)


def _each_checked(
    items: Sequence[Item], args: argparse.Namespace
) -> Iterator[tuple[str, dict[str, str]]]:
    """Each item's name and outcome, in order.

    The items are independent, and each draws its points from a generator
    seeded by the seed, its place and its name, so the outcomes are the
    same whichever process checks an item. With more than one job, workers
    forked from this process (they inherit the rule table as it is here, a
    test's changes too) check an item each at a time. A system without
    ``fork`` (Windows, a browser) or a process running threads (forking one
    can deadlock) checks them here, one after another.
    """
    global _WORK
    _WORK = (items, args)
    try:
        jobs = min(args.jobs if args.jobs is not None else _cpus(), len(items))
        if jobs > 1 and threading.active_count() == 1:
            try:
                import multiprocessing

                # A forked worker flushes its copy of the streams when it ends.
                sys.stdout.flush()
                sys.stderr.flush()
                pool = multiprocessing.get_context("fork").Pool(jobs, _ignore_ctrl_c)
            except (ImportError, OSError, ValueError):  # no fork here
                pass
            else:
                with pool:
                    yield from pool.imap(_checked, range(len(items)))
                return
        yield from map(_checked, range(len(items)))
    finally:
        _WORK = None


def _ignore_ctrl_c() -> None:
    """In a worker: Ctrl-C is the parent's to handle (it ends the workers)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _report(
    results: Sequence[tuple[str, dict[str, str]]],
    rules: int,
    skipped: Sequence[str],
    args: argparse.Namespace,
    out: TextIO,
    started: float,
) -> int:
    """Print the table and the details of every checked item; the exit status."""
    colour = _use_colour(out)
    width = max(len(name) for name, _ in results)
    orders = f"1-{args.order}" if args.order > 1 else "1"
    # Where each rule was sampled, and the shares of its entries the error
    # bound decided (wrong or agrees) and left undecided (docs/checking.md).
    where = max(len("sampled"), *(len(r.get("sampled", "")) for _, r in results))
    print(
        f"{'rule':<{width}}  points  orders  {'sampled':<{where}}  decided  undecided  result",
        file=out,
    )
    for name, result in results:
        word = result["word"]
        row = (
            f"{name:<{width}}  {args.points:>6}  {orders:>6}  "
            f"{result.get('sampled', '-'):<{where}}  {result.get('decided', '-'):>7}  "
            f"{result.get('undecided', '-'):>9}  {_coloured(word, colour)}"
        )
        print(row + (f"  {result['reason']}" if word == Outcome.ERROR else ""), file=out)
    for name, result in results:
        if result["word"] == Outcome.FAIL:
            print(f"\n{name}: {result['text']}", file=out)
        elif result["word"] == Outcome.ERROR and args.verbose and result["trace"]:
            print(f"\n{name}: {result['reason']}\n{result['trace']}", file=out)
    if skipped:
        print(
            f"\nskipped {len(skipped)} built-in rule(s) of minigrad.ops the file imports "
            f"({', '.join(skipped)}); `minigrad check` without a file checks those",
            file=out,
        )
    failing = sum(result["word"] == Outcome.FAIL for _, result in results)
    crashed = sum(result["word"] == Outcome.ERROR for _, result in results)
    what = f"{rules} rule(s)"
    if len(results) > rules:
        what += f" and {len(results) - rules} composites"
    bad = [f"{failing} failing"] if failing else []
    bad += [f"{crashed} error" + "s" * (crashed > 1)] if crashed else []
    verdict = f"FAILED ({', '.join(bad)})" if bad else "passed"
    seconds = time.perf_counter() - started
    print(
        f"\n{what} at {args.points} random points each, order{'s' * (args.order > 1)} "
        f"{orders}: {verdict} "
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


def _run_playground(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from minigrad.cli.playground.server import Playground, open_browser

    if not 0 <= args.port <= 65535:
        print(f"minigrad playground: --port must be 0-65535, got {args.port}", file=err)
        return 2
    try:
        playground = Playground(args.host, args.port, args.pyodide, args.time_limit)
    except ValueError as exc:
        print(f"minigrad playground: {exc}", file=err)
        return 2
    except OSError as exc:
        print(f"minigrad playground: cannot serve on {args.host}:{args.port}: {exc}", file=err)
        return 2
    print(playground.banner(), file=out, flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"minigrad playground: --host {args.host} lets other machines open the page",
            file=err,
        )
    if not args.no_browser:
        open_browser(playground.url)
    try:
        playground.serve_forever()
    except KeyboardInterrupt:
        print("\nminigrad playground: stopped", file=err)
    finally:
        playground.stop()
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minigrad", description="Scalar autograd with derivative checks."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "check",
        help="check every rule (or the rules in a file, or a student's engine)",
        description="Check every derivative rule against numerical derivatives at random "
        "points of its sample intervals, orders 1 to --order; with a path, check every Rule "
        "reachable from that Python file instead (its names, and inside lists, tuples, "
        "dicts, sets and the classes it defines), each in a process of its own with a time "
        "limit. With --engine, run lab 03's battery on a micrograd-style engine (or one per "
        "student: several targets or a folder) and diagnose its bugs. Exit status: 0 all "
        "passed, 1 a rule (or engine) failed or crashed, 2 the file (or every engine) is "
        "missing, does not import or holds nothing to check.",
    )
    p.add_argument("path", nargs="?", help="a Python file defining minigrad.Rule objects")
    p.add_argument(
        "--engine",
        nargs="+",
        action="extend",
        metavar="TARGET",
        help="an engine's node class: FILE.py[:CLASS], MODULE:CLASS or a FOLDER of *.py files "
        "(one student each); CLASS is Value unless given",
    )
    p.add_argument(
        "--format",
        choices=("text", "json", "csv"),
        default="text",
        help="with --engine: a table (text), or JSON or CSV for a gradebook",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=20.0,
        help="seconds one rule (or one check of an engine) may take (20; inf: no limit)",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=None,
        help="with --engine: the deep chain's ops, and a recursive sort's RecursionError there "
        "counts as a failure (without --depth: a chain of 5000 ops, its RecursionError a "
        "note; 0: no chain)",
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print the traceback of a file that does not import or a rule that crashes",
    )
    p.add_argument(
        "--points", type=int, help="random points per rule (40), per check of an engine (3)"
    )
    p.add_argument("--order", type=int, default=3, help="highest order checked (3)")
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.add_argument(
        "--jobs",
        type=int,
        help="processes that check minigrad's own rules side by side (the CPUs this process "
        "may use; 1: in this process). The results are the same for any number",
    )
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
    g = sub.add_parser(
        "playground",
        help="serve a page that runs minigrad in the browser (Pyodide)",
        description="Serve the playground page on this machine and print its address: an "
        "editor preloaded with a lesson (the lecture's neuron, its graph, a manual backward, "
        "a custom op with a sign error and the check that catches it), run in the browser by "
        "Pyodide. It serves only its own files: the page, this minigrad package and, with "
        "--pyodide, Pyodide from a local folder (otherwise the page loads Pyodide from its "
        "CDN, which needs the internet).",
    )
    g.add_argument("--port", type=int, default=8000, help="port (8000; 0: any free one)")
    g.add_argument(
        "--host", default="127.0.0.1", help="address to bind (127.0.0.1: this machine only)"
    )
    g.add_argument(
        "--pyodide",
        metavar="DIR",
        help="serve Pyodide from this folder (e.g. node_modules/pyodide) instead of its CDN",
    )
    g.add_argument(
        "--time-limit",
        type=int,
        default=TIME_LIMIT,
        metavar="SECONDS",
        help=f"stop a run after this long ({TIME_LIMIT}; the page shows it and can change it)",
    )
    g.add_argument(
        "--no-browser", action="store_true", help="print the address, do not open a browser"
    )
    g.set_defaults(run=_run_playground)
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
    if args.command == "check":
        if args.points is None:
            args.points = 3 if args.engine else 40
        if not args.timeout > 0 or (args.depth is not None and args.depth < 0):
            print("minigrad: --timeout must be > 0 and --depth >= 0", file=sys.stderr)
            return 2
        args.timeout = min(args.timeout, threading.TIMEOUT_MAX)  # inf: no limit
    if getattr(args, "points", 1) < 1 or getattr(args, "order", 1) < 1:
        print("minigrad: --points and --order must be >= 1", file=sys.stderr)
        return 2
    if getattr(args, "order", 1) > MAX_ORDER:
        print(f"minigrad: --order must be <= {MAX_ORDER}, got {args.order}", file=sys.stderr)
        return 2
    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        print(f"minigrad: --jobs must be >= 1, got {args.jobs}", file=sys.stderr)
        return 2
    try:
        status: int = args.run(args, sys.stdout, sys.stderr)
    except BrokenPipeError:
        # The reader left (`minigrad check | head`): say nothing more, and let
        # the interpreter's last flush of stdout go nowhere, not to a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return status
