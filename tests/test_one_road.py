"""Issue 28: one road to a verdict.

Exactly one function, :func:`minigrad.checking.verdicts.convict.convict`, can
call a derivative wrong; every evidence path (extrapolation, the Taylor rate
test, the direction over all inputs, a failed derivative, fast mode, the
classic call form) hands it a charge. Shown three ways: the source of
``checking/`` writes the verdict *wrong* in that function only (an AST scan);
wrapping it, every wrong entry of a report is a finding it returned; and
replacing it with one that never convicts leaves no wrong verdict anywhere.
The road from ``minigrad.gradcheck`` to the conviction crosses at most six
modules.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import math
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

import minigrad as mg
from minigrad import GradcheckError, Report, Rule, Value, check, gradcheck
from minigrad.checking.numeric.steps import nominal_step
from minigrad.checking.run.direction import Direction
from minigrad.checking.run.levels import Levels, derivatives
from minigrad.checking.verdicts import convict as convict_module
from minigrad.checking.verdicts.evidence import Cause, Charge, Disagreement, Remainders
from minigrad.checking.verdicts.findings import UNDECIDED, WRONG, Finding
from minigrad.checking.verdicts.taylor import rate_test

CHECKING = Path(mg.__file__).parent / "checking"
CONVICT = "minigrad.checking.verdicts.convict"
#: The most modules the road from the public checker to a conviction may cross.
MOST_MODULES = 6


# The source: WRONG is written in convict() alone.


def _enclosing(tree: ast.Module) -> dict[ast.AST, str]:
    """Every node of ``tree`` with the name of the function it lies in ("" at module level)."""
    inside: dict[ast.AST, str] = {}

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, ast.FunctionDef) else function
            inside[child] = name
            visit(child, name)

    visit(tree, "")
    return inside


def _compared(tree: ast.Module) -> set[ast.AST]:
    """The nodes that are read in a comparison (``f.verdict == WRONG``, ``WRONG in seen``)."""
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found.update(ast.walk(operand))
    return found


def _is_wrong(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "WRONG") or (
        isinstance(node, ast.Attribute) and node.attr == "WRONG"
    )


def _gives_a_verdict(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether the literal ``"wrong"`` at ``node`` is handed on as a verdict."""
    parent = parents.get(node)
    if isinstance(parent, ast.Call) and node in parent.args:
        return True
    if isinstance(parent, ast.keyword) and parent.arg == "verdict":
        return True
    if isinstance(parent, ast.Return):
        return True
    return isinstance(parent, ast.Assign) and any(
        isinstance(t, ast.Attribute) and t.attr == "verdict" for t in parent.targets
    )


def test_the_verdict_wrong_is_written_in_convict_alone() -> None:
    minted: list[str] = []
    for path in sorted(CHECKING.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        inside, compared = _enclosing(tree), _compared(tree)
        parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        where = path.relative_to(CHECKING).as_posix()
        for node in ast.walk(tree):
            if node in compared:
                continue  # reading a verdict is everyone's right
            if _is_wrong(node):
                definition = isinstance(parents.get(node), ast.Assign) and inside[node] == ""
                if where == "verdicts/findings.py" and definition:
                    continue  # WRONG = "wrong"
            elif not (
                isinstance(node, ast.Constant)
                and node.value == "wrong"
                and _gives_a_verdict(node, parents)
            ):
                continue
            if (where, inside[node]) != ("verdicts/convict.py", "convict"):
                minted.append(f"{where}:{getattr(node, 'lineno', '?')} in {inside[node] or '-'}")
    assert minted == []
    # And convict() does write it: the scan looks at the right names.
    source = inspect.getsource(convict_module.convict)
    assert source.count("Finding(WRONG,") >= 3


# Wrapping convict: every conviction is its return value.


@dataclass
class Recorder:
    """Every call of convict: the charge, the finding returned, the road of modules to it."""

    real: Callable[[Charge], Finding]
    calls: list[tuple[Charge, Finding, list[str]]] = field(default_factory=list)

    def __call__(self, charge: Charge) -> Finding:
        found = self.real(charge)
        self.calls.append((charge, found, _road()))
        return found

    def convictions(self) -> list[Finding]:
        return [f for _, f, _ in self.calls if f.verdict == WRONG]


def _road() -> list[str]:
    """The minigrad modules on the stack, outermost first, from the public checker to convict."""
    names = [
        str(frame.frame.f_globals.get("__name__", "")) for frame in reversed(inspect.stack()[2:])
    ]
    names = [n for n in names if n.startswith("minigrad.")]
    public = "minigrad.checking.gradcheck"
    if public in names:
        names = names[names.index(public) :]
    road: list[str] = []
    for name in [*names, CONVICT]:
        if not road or road[-1] != name:
            road.append(name)
    return road


def _patch(monkeypatch: pytest.MonkeyPatch, fake: Callable[[Charge], Finding]) -> None:
    """``fake`` in place of convict, in every module that calls it by its name."""
    real = convict_module.convict
    patched = 0
    for name, module in list(sys.modules.items()):
        if name.startswith("minigrad.checking") and getattr(module, "convict", None) is real:
            monkeypatch.setattr(module, "convict", fake)
            patched += 1
    assert patched >= 4  # the convict module itself (reweigh), scales, taylor, the runner...


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    rec = Recorder(convict_module.convict)
    _patch(monkeypatch, rec)
    yield rec


def _raises(x: Value, out: Value) -> Value:
    raise ZeroDivisionError("this partial cannot be computed")


BAD_SIN = Rule("bad_sin", math.sin, (lambda x, out: 1.01 * mg.cos(x),))
NAN_SIN = Rule("nan_sin", math.sin, (lambda x, out: math.nan,))
RAISING_SIN = Rule("raising_sin", math.sin, (_raises,))
_calls = itertools.count()
#: A partial that gives another value every other call.
FLAKY_SIN = Rule(
    "flaky_sin", math.sin, (lambda x, out: mg.cos(x) * (1.0 + 1e-3 * (next(_calls) % 2)),)
)

#: A wrong rule down each evidence path that runs through the public checker.
PATHS: dict[str, Callable[[], Report]] = {
    "extrapolation": lambda: check(lambda v: BAD_SIN(v), [Value(0.7)]),
    "classic form": lambda: check(lambda v: BAD_SIN(v), [Value(0.7)], atol=1e-5, rtol=1e-3),
    "fast mode": lambda: check(
        lambda a, b: BAD_SIN(a) * b, [Value(0.7), Value(0.3)], fast_mode=True
    ),
    "failed derivative: NaN": lambda: check(lambda v: NAN_SIN(v), [Value(0.7)]),
    "failed derivative: raised": lambda: check(lambda v: RAISING_SIN(v), [Value(0.7)]),
    "failed derivative: not deterministic": lambda: check(lambda v: FLAKY_SIN(v), [Value(0.7)]),
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_wrong_entry_is_a_conviction_convict_returned(path: str, recorder: Recorder) -> None:
    report = PATHS[path]()
    assert not report.ok
    wrong = [e for e in report.failures if e.verdict == WRONG]
    assert wrong, report.text()
    convictions = recorder.convictions()
    for e in wrong:
        # The entry carries the finding's words and number (or none, for a
        # derivative that no number decides).
        assert any(
            f.reason == e.reason and (f.numerical == e.numerical or math.isnan(f.numerical))
            for f in convictions
        ), (e.reason, [f.reason for f in convictions])


def test_fast_mode_hands_the_direction_to_convict(recorder: Recorder) -> None:
    report = PATHS["fast mode"]()
    assert report.fast and not report.ok
    assert any("minigrad.checking.run.direction" in road for _, _, road in recorder.calls)


def test_a_failed_derivative_is_a_charge_with_its_cause(recorder: Recorder) -> None:
    for path, cause in (
        ("failed derivative: NaN", Cause.NOT_COMPUTED),
        ("failed derivative: raised", Cause.NOT_COMPUTED),
        ("failed derivative: not deterministic", Cause.NOT_DETERMINISTIC),
    ):
        report = PATHS[path]()
        assert [e.cause for e in report.failures] == [cause], path
        charges = [c for c, f, _ in recorder.calls if f.verdict == WRONG]
        assert any(getattr(c, "cause", None) is cause for c in charges), path


def test_the_rate_test_hands_its_charge_to_convict(recorder: Recorder) -> None:
    def f(t: float) -> list[float] | None:
        return [math.sin(t)]

    got = rate_test(f, 0.7, [math.sin(0.7)], 0, math.cos(0.7) * (1.0 + 1e-4), 0.0, 1e-2)
    assert got.verdict == WRONG
    ((charge, found, _),) = recorder.calls
    assert got is found and type(charge).__name__ == "Remainders"


def _direction() -> tuple[Direction, float]:
    """A direction over three inputs of a sum with a rule 1% off, and its wrong slope."""
    xs = [Value(0.3), Value(0.5), Value(-0.4)]
    levels = Levels(lambda *v: sum((BAD_SIN(t) for t in v), Value(0.0)), xs, None, "check")
    fs, _ = levels.level(1)
    gradient = [d.data for d in derivatives(fs[0], levels.xs, False)]
    rng = random.Random(0)
    direction = Direction(
        levels, 1, [f.data for f in fs], [1.0], gradient, rng, lambda x: nominal_step(x, 1e-6)
    )
    return direction, direction.analytic(gradient)


@pytest.mark.parametrize("sharp", [False, True])
def test_the_direction_hands_its_charge_to_convict(recorder: Recorder, sharp: bool) -> None:
    direction, slope = _direction()
    (got,) = direction.examine([slope], sharp=sharp)
    assert got.verdict == WRONG, got.reason
    assert any(got is f for f in recorder.convictions())


def test_a_convict_that_never_convicts_leaves_no_wrong_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = convict_module.convict

    def acquit(charge: Charge) -> Finding:
        found = real(charge)
        if found.verdict != WRONG:
            return found
        return Finding(UNDECIDED, 0, found.numerical, math.inf, found.step, "acquitted")

    _patch(monkeypatch, acquit)
    for path, run in PATHS.items():
        report = run()
        assert all(e.verdict != WRONG for e in report.entries), (path, report.text())

    def f(t: float) -> list[float] | None:
        return [math.sin(t)]

    rate = rate_test(f, 0.7, [math.sin(0.7)], 0, math.cos(0.7) * (1.0 + 1e-4), 0.0, 1e-2)
    assert rate.verdict != WRONG
    direction, slope = _direction()
    assert all(f.verdict != WRONG for f in direction.examine([slope], sharp=True))


# The road: from minigrad.gradcheck to the conviction, at most six modules.


@pytest.mark.parametrize("path", sorted(PATHS))
def test_the_road_to_a_conviction_crosses_at_most_six_modules(
    path: str, recorder: Recorder
) -> None:
    PATHS[path]()
    # Convictions of the check itself; fault localisation (which op's rule,
    # and where it is wrong) checks single rules afterwards, and its own
    # convictions are the same road from there.
    roads = [
        road
        for _, f, road in recorder.calls
        if f.verdict == WRONG
        and "minigrad.checking.run.fault" not in road
        and "minigrad.checking.run.locate" not in road
    ]
    assert roads
    for road in roads:
        assert road[0] == "minigrad.checking.gradcheck" and road[-1] == CONVICT, road
        assert len(set(road)) <= MOST_MODULES, road


def test_gradcheck_raises_with_the_conviction_in_its_message(recorder: Recorder) -> None:
    with pytest.raises(GradcheckError) as excinfo:
        gradcheck(lambda v: BAD_SIN(v), [Value(0.7)])
    (worst, *_) = excinfo.value.report.failures
    assert worst.verdict == WRONG
    assert worst.reason in str(excinfo.value)
    assert any(f.reason == worst.reason for f in recorder.convictions())


#: A sine inside one custom rule's forward, whose large steps see a parabola.
HIDDEN_SINE = Rule("t2_sin", lambda t: t * t + math.sin(t), (lambda t, out: 2.0 * t + mg.cos(t),))


def test_the_fine_steps_are_evidence_convict_weighs(recorder: Recorder) -> None:
    # The large steps' charge convicts; the same charge with the fine steps'
    # mean is set aside, by convict, not by the examiner that measured it.
    report = check(lambda v: HIDDEN_SINE(v), [Value(3e7)])
    assert report.ok and [e.verdict for e in report.entries] == ["undecided"], report.text()
    heard = [(c, f) for c, f, _ in recorder.calls if getattr(c, "fine", None) is not None]
    assert heard, [type(c).__name__ for c, _, _ in recorder.calls]
    for charge, found in heard:
        assert isinstance(charge, Disagreement | Remainders)
        assert found.verdict == "undecided" and "the steps disagree" in found.reason
        assert recorder.real(replace(charge, fine=None)).verdict == WRONG
