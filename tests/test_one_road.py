"""One estimator, one decision, one conclusion: the road to a verdict, measured.

:func:`minigrad.checking.verdicts.decide.decide` is the only code that gives
an entry a verdict, and :func:`minigrad.checking.verdicts.decide.passes` the
only code that turns verdicts into pass or fail. Shown three ways: the
source of ``checking/`` names a verdict (``WRONG``, ``AGREES``,
``SUBGRADIENT``, ``UNDECIDED``) as a value it hands on only in ``decide.py``
(an AST scan; elsewhere verdicts are only compared); replacing ``decide``
changes every verdict of every path (the default form, the classic form, fast
mode, a broken analytic side); and replacing ``passes`` changes every
conclusion. The road from ``minigrad.gradcheck`` to the decision crosses at
most six modules of ``checking/``, and checking/ is held to its size.
"""

from __future__ import annotations

import ast
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import minigrad as mg
from minigrad import Rule, Value, check, gradcheck
from minigrad.checking.run import compare, fast, runner
from minigrad.checking.verdicts import decide as decide_module
from minigrad.checking.verdicts.decide import AGREES, WRONG, Finding

CHECKING = Path(mg.__file__).parent / "checking"
VERDICTS = {"WRONG", "AGREES", "SUBGRADIENT", "UNDECIDED"}
#: The most modules of checking/ the road from the public checker to a decision crosses.
MOST_MODULES = 6

WRONG_EXP = Rule("wrong_exp", math.exp, (lambda x, out: 1.01 * out,))


def _handed_on(tree: ast.Module) -> list[int]:
    """Lines where a verdict name is used as a value, not only compared or defined."""
    compared: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                compared.update(ast.walk(operand))
        if isinstance(node, ast.ImportFrom | ast.Import):
            compared.update(ast.walk(node))
    lines = []
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
        if isinstance(node, ast.Name | ast.Attribute) and name in VERDICTS:
            loaded, line = isinstance(node.ctx, ast.Load), node.lineno
        else:
            continue
        if loaded and node not in compared:
            lines.append(line)
    return lines


def test_only_decide_py_hands_a_verdict_on() -> None:
    found = {}
    for path in sorted(CHECKING.rglob("*.py")):
        lines = _handed_on(ast.parse(path.read_text()))
        if lines:
            found[str(path.relative_to(CHECKING))] = lines
    assert set(found) == {"verdicts/decide.py"}, found


def _wrong_rule_checks() -> Iterator[tuple[str, Callable[[], mg.Report]]]:
    nan = Rule("nan_partial", math.exp, (lambda x, out: math.nan,))
    x = Value(0.5)
    yield "default", lambda: check(lambda v: WRONG_EXP(v), [x])
    yield "classic", lambda: check(lambda v: WRONG_EXP(v), [x], atol=1e-8, rtol=1e-8)
    yield "exact step", lambda: check(lambda v: WRONG_EXP(v), [x], eps=1e-6, atol=1e-8)
    yield "fast mode", lambda: check(lambda v: WRONG_EXP(v), [x], fast_mode=True)
    yield "order 2", lambda: check(lambda v: WRONG_EXP(v), [x], order=2)
    yield "forward mode", lambda: check(lambda v: WRONG_EXP(v), [x], modes=("fwd",))
    yield "broken", lambda: check(lambda v: nan(v), [x])


@pytest.mark.parametrize("name", [name for name, _ in _wrong_rule_checks()])
def test_every_path_takes_its_verdict_from_decide(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = dict(_wrong_rule_checks())[name]
    assert not run().ok, name
    calls: list[Finding] = []
    real = decide_module.decide

    def agreeing(*args: Any, **kwargs: Any) -> Finding:
        f = real(*args, **kwargs)
        calls.append(f)
        return Finding(AGREES, 16, f.numerical, f.error, f.step, "agrees (patched)")

    for module in (decide_module, compare, fast, runner):
        if hasattr(module, "decide"):
            monkeypatch.setattr(module, "decide", agreeing)
    report = run()
    assert calls, name
    assert report.ok, report.text()
    assert all(e.verdict == AGREES for e in report.entries), report.text()


def test_every_conclusion_comes_from_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    def right() -> mg.Report:
        return check(lambda v: v.exp(), [Value(0.5)])

    def wrong() -> mg.Report:
        return check(lambda v: WRONG_EXP(v), [Value(0.5)])

    assert right().ok and not wrong().ok
    monkeypatch.setattr(runner, "passes", lambda verdicts: not list(verdicts))
    assert not right().ok
    monkeypatch.setattr(runner, "passes", lambda verdicts: True)
    assert wrong().ok


def _modules_on_the_stack(call: Callable[[], object]) -> set[str]:
    """The modules of checking/ on the stack each time ``decide`` runs."""
    seen: set[str] = set()
    root = str(CHECKING)

    def tracer(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code.co_name == "decide":
            f: FrameType | None = frame
            while f is not None:
                name = f.f_code.co_filename
                if name.startswith(root):
                    seen.add(str(Path(name).relative_to(root)))
                f = f.f_back

    sys.setprofile(tracer)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


@pytest.mark.parametrize("fast_mode", [False, True])
def test_the_road_to_a_decision_crosses_at_most_six_modules(fast_mode: bool) -> None:
    def failing() -> object:
        return gradcheck(lambda v: WRONG_EXP(v), [Value(0.5)], fast_mode=fast_mode,
                         raise_exception=False)  # fmt: skip

    modules = _modules_on_the_stack(failing)
    assert "verdicts/decide.py" in modules
    assert len(modules) <= MOST_MODULES, sorted(modules)


def _lines(folder: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in folder.rglob("*.py"))


def test_the_estimator_and_the_decision_are_small() -> None:
    assert _lines(CHECKING / "numeric") + _lines(CHECKING / "verdicts") <= 2000


def test_the_users_page_on_checking_is_at_most_400_lines() -> None:
    page = Path(__file__).parent.parent / "docs" / "checking.md"
    assert len(page.read_text().splitlines()) <= 400


def test_a_wrong_rule_is_wrong_in_the_report_and_right_one_agrees() -> None:
    wrong = check(lambda v: WRONG_EXP(v), [Value(0.5)])
    assert [e.verdict for e in wrong.entries] == [WRONG]
    right = check(lambda v: v.exp(), [Value(0.5)])
    assert [e.verdict for e in right.entries] == [AGREES] and right.entries[0].digits >= 9
