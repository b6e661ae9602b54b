"""``minigrad check --engine``: lab 03's battery on a student's engine, or a class of them.

A target names an engine's node class: ``path/to/engine.py:Value`` (``:Value``
may be left out), ``package.module:Value`` (``micrograd.engine:Value``), or
``path/to/folder`` (or ``folder:ClassName``): every ``*.py`` file in it, one
student each, named by the file.

Each target runs in a process of its own (:mod:`minigrad.cli.sandbox`) with a
time limit per check, so one student's syntax error, endless loop or crash
is that student's row, never the end of the run. :func:`grade` prints one
target's checks row by row (a failure's graph, expected, got and the
differences; its point under the table) or a class's table, check by
student, with each student's diagnosis (:mod:`minigrad.checking.lab.signature`);
``fmt`` ``json`` and ``csv`` give the same for a gradebook.
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import io
import json
import math
import os
import textwrap
import time
from pathlib import Path

from minigrad.checking.lab.battery import battery, load_engine, one_line
from minigrad.checking.lab.signature import diagnose, recursion
from minigrad.checking.lab.trials import FAILING, Outcome, Row, run
from minigrad.checking.run.engines import engine_name
from minigrad.cli.rulefile import FileError, load_file
from minigrad.cli.sandbox import Job, run_job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from minigrad.checking.lab.battery import Check

__all__ = ["Engine", "grade", "load_class", "targets"]

#: The class a target names when it names none.
DEFAULT_CLASS = "Value"

#: The deep chain's length when ``--depth`` is not given (its failure a note).
DEFAULT_DEPTH = 5000


def _split(spec: str) -> tuple[str, str]:
    """``where:Class`` as (where, Class); Class is the default when not given."""
    where, sep, name = spec.rpartition(":")
    if sep and name.isidentifier() and where and not where.endswith((":", "\\", "/")):
        return where, name
    return spec, DEFAULT_CLASS


def targets(specs: list[str]) -> list[dict[str, str]]:
    """The targets the specs name, a folder expanded to its ``*.py`` files.

    Each is plain data: ``spec`` (as written), ``student`` (the name a table
    shows), ``path`` (absolute, for a file) or ``module`` (for a module
    name), and ``cls``.

    Example:
        >>> [t["student"] for t in targets(["micrograd.engine:Value"])]
        ['micrograd.engine']
    """
    found: list[dict[str, str]] = []
    for spec in specs:
        where, cls = _split(spec)
        path = Path(where)
        looks_like_path = where.endswith(".py") or os.sep in where or "/" in where
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix == ".py" and p.is_file())
            if not files:
                found.append({"spec": spec, "student": path.name, "path": str(path), "cls": cls})
            for file in files:
                found.append(
                    {"spec": f"{file}:{cls}", "student": file.stem, "path": str(file), "cls": cls}
                )
        elif looks_like_path or path.exists():
            found.append({"spec": spec, "student": path.stem, "path": str(path), "cls": cls})
        else:
            found.append({"spec": spec, "student": where, "module": where, "cls": cls})
    names = [t["student"] for t in found]
    for t in found:  # two students of one name: tell them apart by their folder
        if names.count(t["student"]) > 1 and "path" in t:
            t["student"] = f"{Path(t['path']).parent.name}/{t['student']}"
    return found


class LoadError(Exception):
    """A target gives no engine: the one line to print, and the traceback."""

    def __init__(self, line: str, trace: str = "") -> None:
        super().__init__(line)
        self.trace = trace


def _trace(exc: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(exc)).rstrip()


def load_class(target: dict[str, str]) -> type:
    """The engine class a target names, imported here (the worker's side).

    Raises:
        LoadError: The file or module is missing or does not import, it has
            no such class, or the class does not fit the engine protocol.
    """
    name = target["cls"]
    if "module" in target:
        where = target["module"]
        try:
            module = importlib.import_module(where)
        except (Exception, SystemExit) as exc:
            raise LoadError(f"cannot import {where}: {one_line(exc)}", _trace(exc)) from exc
    else:
        where = target["path"]
        if Path(where).is_dir():
            raise LoadError(f"{where} is a folder without *.py files")
        try:
            module = load_file(where, "_minigrad_student_", own_folder=True)
        except FileError as exc:
            raise LoadError(str(exc), _trace(exc.cause) if exc.cause else "") from exc
    cls = getattr(module, name, None)
    if cls is None:
        classes = sorted(k for k, v in vars(module).items() if isinstance(v, type))
        listed = f" (its classes: {', '.join(classes)})" if classes else ""
        raise LoadError(f"{where} has no class {name}{listed}; name it as {where}:CLASS")
    try:
        return load_engine(cls)
    except TypeError as exc:
        raise LoadError(str(exc)) from exc


class Engine:
    """One target, graded: its rows, what it does not support, its diagnosis.

    Attributes:
        target: The target (see :func:`targets`).
        name: The engine's class (``module.Value``), once loaded.
        rows: One :class:`~minigrad.checking.lab.trials.Row` per check.
        missing: ``{check: why}`` for the checks the engine does not support.
        error, trace: Why the target could not be loaded ("" when it was).
        summary, notes: The diagnosis, one line per cause; ``{check: note}``.
        depth: Where ``backward()`` stops with RecursionError in the deep
            chain (0 when it does not, or the chain was left out).

    Args:
        target: The target.
        job: What its worker found.
        depth_counts: Whether a RecursionError in the deep chain fails the
            engine (``--depth`` given); if not, it is a note: a recursive
            sort is the lecture's, and no derivative is wrong.
    """

    def __init__(self, target: dict[str, str], job: Job, depth_counts: bool = True) -> None:
        self.target = target
        self.name = str(job.loaded.get("engine", ""))
        self.rows = [Row.from_dict(r) for r in job.results]
        self.depth = next((r.depth for r in self.rows if r.kind == "depth" and r.depth), 0)
        for row in self.rows:
            if row.kind == "depth" and row.depth and not depth_counts:
                row.verdict = Outcome.NOTE
        missing = job.loaded.get("missing", {})
        self.missing: dict[str, str] = dict(missing) if isinstance(missing, dict) else {}
        self.error = job.load_error
        self.trace = job.load_trace
        self.summary, self.notes = diagnose(self.rows)

    @property
    def status(self) -> str:
        """``passed``, ``failed`` or ``not loaded``."""
        if self.error:
            return "not loaded"
        failed = any(r.verdict in FAILING for r in self.rows)
        return "failed" if failed else "passed"


def _placeholder(name: str, why: str) -> dict[str, object]:
    return Row(name, "", Outcome.ERROR, note=why).as_dict()


def grade(
    specs: list[str],
    *,
    points: int = 3,
    seed: int = 0,
    depth: int | None = None,
    timeout: float = 20.0,
    fmt: str = "text",
    verbose: bool = False,
    out: TextIO,
    err: TextIO,
) -> int:
    """Run the battery on every target; print the results; the exit status.

    Args:
        specs: The targets (see :func:`targets`).
        points: Random points per check (more where a domain has pieces).
        seed: Seeds the points.
        depth: The deep chain's length, its RecursionError a failure; None
            for a chain of :data:`DEFAULT_DEPTH` whose RecursionError is a
            note (the exit status does not count it); 0 for no chain.
        timeout: Seconds one check may take.
        fmt: ``text``, ``json`` or ``csv``.
        verbose: Print the traceback of a target that does not load.
        out: Where the results go.
        err: Where progress and load errors go.

    Returns:
        0 when every engine passed every check, 1 when one failed (or, among
        several targets, one could not be loaded), 2 when no target could be
        loaded.
    """
    started = time.perf_counter()
    progress = err.isatty() and fmt == "text"
    engines: list[Engine] = []
    interrupted = False
    for target in targets(specs):
        job_spec = {"kind": "engine", "target": target, "points": points, "seed": seed}
        job_spec["depth"] = DEFAULT_DEPTH if depth is None else depth

        def show(i: int, n: int, name: str, student: str = target["student"]) -> None:
            if progress:
                print(f"\r{student[:16]} [{i + 1}/{n}] {name[:24]:<24}", end="", file=err)

        job = run_job(job_spec, timeout=timeout, placeholder=_placeholder, on_result=show)
        engines.append(Engine(target, job, depth_counts=depth is not None))
        if job.interrupted:
            interrupted = True
            break
    if progress:
        print("\r" + " " * 48 + "\r", end="", file=err, flush=True)
    nothing = not interrupted and all(e.error for e in engines)
    if nothing and fmt == "text":
        # Nothing to tabulate: one line per target, as for a rule file.
        for e in engines:
            print(f"minigrad check --engine {e.target['spec']}: {e.error}", file=err)
            if verbose and e.trace:
                print(e.trace, file=err)
        return 2
    if fmt == "json":
        print(json.dumps(_as_json(engines), indent=2), file=out)
    elif fmt == "csv":
        print(_as_csv(engines), end="", file=out)
    elif len(engines) == 1 and not interrupted:
        _one(engines[0], out)
    else:
        _table(engines, verbose, out)
    if fmt == "text":
        _totals(engines, points, time.perf_counter() - started, out)
    if interrupted:
        print("interrupted (Ctrl-C): the checks above are all that ran", file=err)
        return 130
    if nothing:
        return 2
    return 0 if all(e.status == "passed" for e in engines) else 1


# Showing the results.

#: The outcomes whose row shows its note (why it raised, was not checked, or is not counted).
_NOTED = frozenset({Outcome.ERROR, Outcome.SKIP, Outcome.NOTE})


def _cell(verdict: Outcome) -> str:
    """A verdict as tables show it: a check the engine does not support is ``-``."""
    return "-" if verdict is Outcome.SKIP else str(verdict)


def _number(x: object) -> str:
    return f"{x:.4g}" if isinstance(x, float | int) else str(x)


def _point(row: Row) -> str:
    return ", ".join(f"{n}={x:.6g}" for n, x in zip(row.operands, row.point, strict=False))


def _columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(map(len, rows)))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in rows]


def _one(engine: Engine, out: TextIO) -> None:
    """One engine: a row per check, with a failure's first graph, operand, expected, got and
    differences; the table fits 100 columns, each failure's point and why a row raised or was
    not checked are notes under it."""
    print(f"engine: {engine.name}", file=out)
    header = ["check", "result", "graph", "d/d", "expected", "got", "abs diff", "rel diff"]
    table, notes = [header], []
    for row in engine.rows:
        table.append([row.name, _cell(row.verdict)])
        if row.verdict in _NOTED:
            table[-1] += [[*row.where][-1]] if row.note.startswith("it raises") else []
            notes.append(f"{row.name}: {row.note}")
        elif row.forward is not None:
            expected, got = row.forward["expected"], row.forward["got"]
            diff = abs(got - expected)
            rel = diff / abs(expected) if expected else math.inf
            table[-1] += ["forward", "", *map(_number, (expected, got, diff, rel))]
        graphs = list(dict.fromkeys(str(e.get("graph", "alone")) for e in row.entries))
        for k, e in enumerate(e for e in row.entries if e.get("graph", "alone") == graphs[0]):
            cells = [graphs[0] if k == 0 else "", str(e["operand"])]
            cells += [_number(e[key]) for key in ("expected", "got", "abs", "rel")]
            table.append(table.pop() + cells if k == 0 else ["", "", *cells])
        if graphs:
            also = f"; it fails too in: {', '.join(graphs[1:])}" if graphs[1:] else ""
            where = row.where.get(graphs[0], f"at {_point(row)}").removeprefix(row.name + " ")
            notes.append(f"{row.name}: {where}{also}")
        if row.verdict is Outcome.FAIL and not row.entries and row.forward is None:
            notes.append(f"{row.name}: {row.note} at {_point(row)}")
    print("\n".join(_columns(table)), file=out)
    _section("where", notes, out)
    if engine.missing:
        text = "not supported, so not checked: " + ", ".join(engine.missing).replace(" ", "\0")
        print("\n" + textwrap.fill(text, 100, subsequent_indent="  ").replace("\0", " "), file=out)
    _section("diagnosis", engine.summary, out)
    noted = [recursion(r) for r in engine.rows if r.verdict is Outcome.NOTE]
    _section("note (not a wrong derivative; --depth N counts it as a failure)", noted, out)


def _section(title: str, lines: list[str], out: TextIO) -> None:
    """``title:`` and the lines under it, indented; nothing when there are none."""
    if lines:
        print(f"\n{title}:\n" + "\n".join(f"  {line}" for line in lines), file=out)


def _table(engines: list[Engine], verbose: bool, out: TextIO) -> None:
    """A class: a row per check, a column per student; then each student's diagnosis."""
    names = list(dict.fromkeys(row.name for e in engines for row in e.rows))
    students = [e.target["student"] for e in engines]
    table = [["check", *students]]
    for name in names:
        cells = [name]
        for e in engines:
            verdict = next((_cell(r.verdict) for r in e.rows if r.name == name), "")
            cells.append(verdict or ("n/a" if e.error else "-"))
        table.append(cells)
    print("\n".join(_columns(table)), file=out)
    width = max(len(s) for s in ["student", *students])
    depths = {e.target["student"]: _depth_cell(e) for e in engines}
    deep = any(depths.values())
    dwidth = max(len(d) for d in ["depth", *depths.values()]) if deep else 0
    head = f"{'student':<{width}}  {'result':<10}  " + (f"{'depth':<{dwidth}}  " if deep else "")
    print(f"\n{head}diagnosis", file=out)
    for e in engines:
        lines = [e.error] if e.error else e.summary or [""]
        status = e.status.upper()
        depth = f"{depths[e.target['student']]:<{dwidth}}  " if deep else ""
        first = f"{e.target['student']:<{width}}  {status:<10}  {depth}{lines[0]}"
        print(first.rstrip(), file=out)
        for line in lines[1:]:
            print(f"{'':<{len(head)}}{line}", file=out)
        if verbose and e.trace:
            print(e.trace, file=out)
    print("\n(-: not supported by that engine; n/a: the engine could not be loaded)", file=out)
    if any(e.depth for e in engines):
        print(
            "(depth: where backward() stops with RecursionError in the chain, a recursive "
            "topological sort: a note, not a wrong derivative, unless --depth is given)",
            file=out,
        )


def _depth_cell(engine: Engine) -> str:
    """The depth column: ``ok``, ``RecursionError at 991``, or "" when the chain did not run."""
    row = next((r for r in engine.rows if r.kind == "depth"), None)
    if row is None:
        return ""
    return f"RecursionError at {engine.depth}" if engine.depth else _cell(row.verdict)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _totals(engines: list[Engine], points: int, seconds: float, out: TextIO) -> None:
    failed = [e for e in engines if e.status == "failed"]
    unloaded = sum(e.status == "not loaded" for e in engines)
    bad = []
    if failed:
        checks = sum(r.verdict in FAILING for e in failed for r in e.rows)
        bad.append(_plural(checks, "failing check"))
        if len(engines) > 1:
            bad[-1] += f" in {_plural(len(failed), 'engine')}"
    if unloaded:
        bad.append(f"{_plural(unloaded, 'engine')} not loaded")
    notes = sum(r.verdict is Outcome.NOTE for e in engines for r in e.rows)
    verdict = f"FAILED ({', '.join(bad)})" if bad else "passed"
    if notes:
        verdict += f"; {_plural(notes, 'note')} (depth)"
    checks = sum(len(e.rows) for e in engines)
    what = f"{_plural(len(engines), 'engine')}, {_plural(checks, 'check')}"
    what += f" at up to {_plural(points, 'random point')} each"
    print(f"\n{what}: {verdict} in {seconds:.1f} s", file=out)


def _finite(x: object) -> object:
    """JSON has no NaN or infinity: those become strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def _as_json(engines: list[Engine]) -> object:
    return _finite(
        {
            "engines": [
                {
                    "student": e.target["student"],
                    "target": e.target["spec"],
                    "engine": e.name,
                    "status": e.status,
                    "error": e.error,
                    "diagnosis": e.summary,
                    "notes": [recursion(r) for r in e.rows if r.verdict is Outcome.NOTE],
                    "not_supported": e.missing,
                    "checks": [
                        {**row.as_dict(), "diagnosis": e.notes.get(row.name, "")} for row in e.rows
                    ],
                }
                for e in engines
            ]
        }
    )


def _as_csv(engines: list[Engine]) -> str:
    names = list(dict.fromkeys(row.name for e in engines for row in e.rows))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "target", "status", "diagnosis", "depth", *names])
    for e in engines:
        verdicts = {r.name: _cell(r.verdict) for r in e.rows}
        cells = [verdicts.get(n, "-" if n in e.missing else "") for n in names]
        diagnosis = e.error or " | ".join(e.summary)
        row = [e.target["student"], e.target["spec"], e.status, diagnosis, _depth_cell(e)]
        writer.writerow([*row, *cells])
    return buffer.getvalue()


# The worker's side (minigrad.cli.worker runs these).


def serve(job: dict[str, object]) -> tuple[dict[str, object], list[Check], type]:
    """Load the job's engine: the load message, the checks and the class."""
    target = job["target"]
    assert isinstance(target, dict)
    cls = load_class(target)
    depth = job.get("depth", 5000)
    checks, missing = battery(cls, depth=depth if isinstance(depth, int) else 5000)
    # A file's module has a name made up for it: the file names the engine.
    name = engine_name(cls) if "module" in target else f"{cls.__qualname__} of {target['path']}"
    loaded: dict[str, object] = {"names": [c.name for c in checks], "engine": name}
    loaded["missing"] = missing
    return loaded, checks, cls


def run_one(check: Check, cls: type, job: dict[str, object]) -> dict[str, object]:
    """One check's row, as plain data."""
    points, seed = job.get("points", 3), job.get("seed", 0)
    assert isinstance(points, int) and isinstance(seed, int)
    return run(check, cls, points=points, seed=seed).as_dict()
