"""The half of ``minigrad check FILE`` that runs the user's code: find its rules, check one.

The command (:mod:`minigrad.cli`) runs this in a process of its own
(:mod:`minigrad.cli.sandbox`), so that a file that loops at import, a rule that
hangs or calls ``sys.exit``, and a crash of the interpreter each end as one
line of the table, never as the end of the run. :func:`rules_of` imports the
file and finds every :class:`~minigrad.Rule` reachable from it; :func:`check_item`
checks one rule (or composite) at random points; :func:`outcome` turns what
that found into plain data for the table.
"""

from __future__ import annotations

import importlib
import importlib.util
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from minigrad.checking.gradcheck import Report, check
from minigrad.checking.lab.trials import Outcome
from minigrad.checking.verdicts.decide import UNDECIDED, Verdict
from minigrad.core import rules
from minigrad.core.rule import Rule
from minigrad.core.value import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "Crash",
    "FileError",
    "Item",
    "check_item",
    "composite_item",
    "import_file",
    "one_line",
    "outcome",
    "rule_item",
    "rules_of",
]

#: How many containers deep the search for Rules in a user's module goes: a
#: table of rules is rarely more than a few levels down, and the limit keeps a
#: deeply nested data structure from costing time or the recursion limit.
_DEPTH = 8


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line (a long message is cut at its first line)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def show(xs: Sequence[float]) -> str:
    return "(" + ", ".join(f"{x:.8g}" for x in xs) + ")"


class Item:
    """One row of the table: a function, its name, and how its points are drawn."""

    __slots__ = ("boxes", "draw", "func", "is_rule", "name", "verdicts")

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
        #: The verdicts of every entry its checks compared, counted.
        self.verdicts = {str(v): 0 for v in Verdict}

    def sampled(self) -> str:
        """Where the points were drawn: ``(-2, 2)``, ``(0.1, 2) x (-2, 2)``."""
        return " x ".join(f"({lo:g}, {hi:g})" for lo, hi in self.boxes)

    def shares(self) -> tuple[str, str]:
        """The shares of the compared entries decided (wrong or agrees) and undecided."""
        total = sum(self.verdicts.values())
        if not total:
            return "-", "-"
        undecided = self.verdicts[UNDECIDED] / total
        return f"{100.0 * (1.0 - undecided):.0f}%", f"{100.0 * undecided:.0f}%"


def rule_item(name: str, rule: Rule) -> Item:
    return Item(name, rule, rule.sample, rule.sample_box, is_rule=True)


def composite_item(
    name: str, func: Callable[..., Value], boxes: Sequence[tuple[float, float]]
) -> Item:
    def draw(rng: random.Random) -> tuple[float, ...]:
        return tuple(rng.uniform(lo, hi) for lo, hi in boxes)

    return Item(name, func, draw, boxes, is_rule=False)


class Crash:
    """A check that could not give a verdict: a one-line reason and the exception."""

    __slots__ = ("exc", "reason")

    def __init__(self, reason: str, exc: BaseException) -> None:
        self.reason = reason
        self.exc = exc


#: What a rule's code may raise that ends its check, not the run: any error,
#: and SystemExit (a rule that calls sys.exit() has failed, not passed).
_RULE_ERRORS = (Exception, SystemExit)


def check_item(item: Item, points: int, order: int, rng: random.Random) -> Report | Crash | None:
    """Check ``item`` at ``points`` drawn points: the first failing report, a crash, or None.

    Every point is checked, also after a failing one, so that ``item.verdicts``
    counts the verdicts of all of them.
    """
    failing: Report | None = None
    for _ in range(points):
        try:
            xs = item.draw(rng)
        except _RULE_ERRORS as exc:
            return Crash(f"cannot draw a point: {one_line(exc)}", exc)
        # The forward alone first, so that a point where the function is not
        # defined is told apart from a check that crashed.
        try:
            item.func(*[Value(x) for x in xs])
        except _RULE_ERRORS as exc:
            hint = (
                "; declare where the rule is defined with domain= and where to draw "
                "points with sample= (by default (-2, 2)), or points to keep away "
                "from with avoid="
                if item.is_rule and isinstance(exc, ArithmeticError | ValueError)
                else ""
            )
            return Crash(f"its forward raises at {show(xs)}: {one_line(exc)}{hint}", exc)
        try:
            report = check(item.func, [Value(x) for x in xs], order=order)
        except _RULE_ERRORS as exc:
            return Crash(f"the check raised at {show(xs)}: {one_line(exc)}", exc)
        for verdict, n in report.verdicts().items():
            item.verdicts[verdict] = item.verdicts.get(verdict, 0) + n
        if not report.ok and failing is None:
            failing = report
    return failing


class FileError(Exception):
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
    return one_line(exc) + (f" (line {lines[-1]})" if lines else "")


def import_file(path: str) -> ModuleType:
    """Import the file at ``path`` as a module, or raise :class:`FileError`."""
    return load_file(path, "_minigrad_user_", label="minigrad check: ")


def load_file(path: str, prefix: str, *, label: str = "", own_folder: bool = False) -> ModuleType:
    """Import the Python file at ``path`` as the module ``prefix + its stem``.

    Args:
        path: The file.
        prefix: The module name's prefix (the name must not shadow the user's own modules).
        label: Put before every error's line (the command's name).
        own_folder: Put the file's folder first on ``sys.path``, so that it
            can import the modules beside it (a student's helpers).

    Raises:
        FileError: The path is a folder or missing, or the file does not import
            (its line says why, and where in the file).
    """
    file = Path(path)
    if file.is_dir():
        raise FileError(f"{label}{path} is a folder, not a Python file")
    if not file.is_file():
        raise FileError(f"{label}no such file: {path}")
    file = file.resolve()
    if own_folder:
        sys.path.insert(0, str(file.parent))
    name = f"{prefix}{file.stem}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise FileError(f"{label}cannot import {path}: not a Python file (.py)")
    module = importlib.util.module_from_spec(spec)
    # Registered while it runs, as the import system does: dataclasses and
    # pickle look a class's module up in sys.modules.
    sys.modules[name] = module
    importlib.invalidate_caches()  # the folder may have changed since it was last read
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        raise FileError(f"{label}cannot import {path}: {_import_reason(exc, file)}", exc) from exc
    return module


def find_rules(module: ModuleType) -> list[tuple[str, Rule]]:
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


def rules_of(path: str) -> tuple[list[Item], list[Rule]]:
    """The rules to check in the file at ``path``, and the built-in ones skipped.

    A file that imports rules of ``minigrad.ops`` beside its own is not
    asking to check the built-ins (``minigrad check`` alone does that); a
    file of nothing but built-ins is.
    """
    found = find_rules(import_file(path))
    if not found:
        raise FileError(f"minigrad check: no Rule found in {path}")
    builtin = {id(rule) for rule in rules.TABLE}
    own = [(name, rule) for name, rule in found if id(rule) not in builtin]
    if not own:
        return [rule_item(name, rule) for name, rule in found], []
    skipped = [rule for _, rule in found if id(rule) in builtin]
    return [rule_item(name, rule) for name, rule in own], skipped


def outcome(item: Item, result: Report | Crash | None, *, verbose: bool) -> dict[str, str]:
    """What checking ``item`` found, as the table shows it: plain data.

    ``word`` is ``ok``, ``FAIL`` or ``ERROR``; ``reason`` the one-line reason
    of an error; ``text`` a failing report in full; ``trace`` an error's
    traceback (with ``verbose``); ``sampled`` where the points were drawn,
    ``decided`` and ``undecided`` the shares of the entries' verdicts.
    """
    decided, undecided = item.shares()
    where = {"sampled": item.sampled(), "decided": decided, "undecided": undecided}
    if result is None:
        return {"word": Outcome.OK, "reason": "", "text": "", "trace": "", **where}
    if isinstance(result, Report):
        text = result.text(full=True)
        return {"word": Outcome.FAIL, "reason": "", "text": text, "trace": "", **where}
    trace = ""
    if verbose:
        import traceback

        trace = "".join(traceback.format_exception(result.exc)).rstrip()
    return {"word": Outcome.ERROR, "reason": result.reason, "text": "", "trace": trace, **where}
