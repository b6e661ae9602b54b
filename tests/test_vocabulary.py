"""Issue 28: one vocabulary for verdicts, written once.

The checker's entry verdicts are :class:`~minigrad.checking.verdicts.decide.Verdict`,
the lab's row outcomes (and ``minigrad check``'s result words) are
:class:`~minigrad.checking.lab.trials.Outcome`. No module spells their values
by hand where a verdict is decided or read: an AST scan of ``src/minigrad``
finds every string literal equal to one of their values that is compared
(``==``, ``!=``, ``in``, ``is``), assigned to a ``.verdict``, passed as a
verdict, gathered in a set of verdicts, used as a key of a table of
verdicts, or looked up by it, outside
the two enums' own definitions. The scan is fed a few lines of each kind, so
that it is shown able to fail.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import minigrad as mg
from minigrad.checking.lab.trials import FAILING, Outcome, Row
from minigrad.checking.verdicts import decide as findings
from minigrad.checking.verdicts.decide import AGREES, UNDECIDED, WRONG, Verdict

SRC = Path(mg.__file__).parent
#: The words, as every table, doc and stored notebook output prints them.
VERDICTS = {"wrong", "agrees", "subgradient", "undecided"}
OUTCOMES = {"ok", "FAIL", "ERROR", "skip", "note"}
#: Where the words are written: the enums' definitions.
ENUMS = {"Verdict", "Outcome"}
#: Calls whose arguments are verdicts.
MAKERS = {"Row", "Finding", "Entry", "Verdict", "Outcome"}


def _words(node: ast.AST) -> list[ast.Constant]:
    """The vocabulary's words ``node`` is, or holds as a tuple, list or set of them."""
    if isinstance(node, ast.Constant) and node.value in VERDICTS | OUTCOMES:
        return [node]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [w for elt in node.elts for w in _words(elt)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        return _words(node.args[0]) if node.func.id in {"frozenset", "set", "tuple"} else []
    return []


def _a_set_of_words(node: ast.AST | None) -> bool:
    """Whether ``node`` is a tuple, list or set of the vocabulary's words and nothing else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
        node = node.args[0] if node.func.id in {"frozenset", "set", "tuple"} else None
    if not isinstance(node, ast.Tuple | ast.List | ast.Set) or not node.elts:
        return False
    return all(isinstance(e, ast.Constant) and _words(e) for e in node.elts)


def _spelled(tree: ast.Module) -> list[ast.Constant]:
    """The words spelled by hand where a verdict is compared, set, passed or looked up."""
    skip: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in ENUMS:
            skip.update(ast.walk(node))
    found: list[ast.Constant] = []
    for node in ast.walk(tree):
        if node in skip:
            continue
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found += _words(operand)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            flat = [t for target in targets for t in ast.walk(target)]
            sets_a_verdict = any(isinstance(t, ast.Attribute) and t.attr == "verdict" for t in flat)
            # A set of verdicts under a name of its own is compared later.
            if node.value is not None and (sets_a_verdict or _a_set_of_words(node.value)):
                found += _words(node.value)
        elif isinstance(node, ast.keyword) and node.arg in {"verdict", "word"}:
            found += _words(node.value)
        elif isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else ""
            if name in MAKERS:
                found += [w for arg in node.args for w in _words(arg)]
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
            if keys and all(_words(k) for k in keys):  # a table keyed by verdicts
                found += [w for k in keys for w in _words(k)]
            for k, v in zip(node.keys, node.values, strict=True):
                if isinstance(k, ast.Constant) and k.value in {"word", "verdict"}:
                    found += _words(v)
        elif isinstance(node, ast.Subscript):
            found += _words(node.slice)
    return found


def _scan(root: Path) -> list[str]:
    spelled: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        where = path.relative_to(root).as_posix()
        spelled += [f"{where}:{w.lineno}: {w.value!r}" for w in _spelled(tree)]
    return spelled


def test_no_module_spells_a_verdict_or_an_outcome_by_hand() -> None:
    assert _scan(SRC) == []


@pytest.mark.parametrize(
    "line",
    [
        'if row.verdict == "FAIL": pass',
        'bad = [r for r in rows if r.verdict in ("FAIL", "ERROR")]',
        'ok = e.verdict != "wrong"',
        'ok = "agrees" is e.verdict',
        'row.verdict = "note"',
        'row.verdict, row.note = "ERROR", "it raised"',
        'e = e.replace(verdict="undecided")',
        'row = Row(name, "", "ERROR", note=why)',
        'f = Finding("agrees", 12, 2.2, 1e-12, 1e-4, "fine")',
        'COLOURS = {"ok": "32", "FAIL": "31", "ERROR": "35"}',
        'counts = {"wrong": 0, "agrees": 0, "undecided": 0}',
        'share = counts["undecided"]',
        'result = {"word": "ok", "reason": ""}',
        'BAD = frozenset({"FAIL", "ERROR"})\nif x in BAD: pass',
    ],
)
def test_the_scan_finds_a_word_spelled_by_hand(line: str) -> None:
    assert _spelled(ast.parse(line)), line


@pytest.mark.parametrize(
    "line",
    [
        "class Outcome(enum.StrEnum):\n    OK = 'ok'\n    FAIL = 'FAIL'",
        "class Verdict(enum.StrEnum):\n    WRONG = 'wrong'",
        "if row.verdict is Outcome.FAIL: pass",
        'print("undecided: the numbers can neither confirm nor refute")',
        'where = {"sampled": s, "decided": d, "undecided": u}',
        'FIELDS = ("passed", "note", "ok")',
        'FAILS, RIGHT, UNDECIDED = "wrong", "right", "undecided"',
    ],
)
def test_the_scan_leaves_the_definitions_and_plain_words_alone(line: str) -> None:
    assert _spelled(ast.parse(line)) == [], line


def test_the_words_are_those_every_table_prints() -> None:
    assert {str(v) for v in Verdict} == VERDICTS
    assert {str(o) for o in Outcome} == OUTCOMES
    assert (WRONG, AGREES, UNDECIDED) == (Verdict.WRONG, Verdict.AGREES, Verdict.UNDECIDED)
    assert findings.WRONG is Verdict.WRONG and f"{WRONG}" == "wrong"
    assert f"{Outcome.FAIL}" == "FAIL" and {Outcome.FAIL, Outcome.ERROR} == FAILING


def test_a_row_keeps_its_outcome_through_json() -> None:
    row = Row("x - y", "op", Outcome.FAIL, note="1 wrong")
    text = json.dumps(row.as_dict())
    assert '"verdict": "FAIL"' in text
    back = Row.from_dict(json.loads(text))
    assert back.verdict is Outcome.FAIL and back == row


def test_the_one_road_scan_sees_the_members_of_verdict() -> None:
    # test_one_road's scan (a verdict is handed on in decide.py alone) looks for
    # the names of the members; a member written as Verdict.WRONG is caught too.
    from test_one_road import _handed_on

    assert _handed_on(ast.parse("x = Verdict.WRONG")) == [1]
    assert _handed_on(ast.parse("f = Finding(WRONG, 0)")) == [1]
    assert _handed_on(ast.parse("ok = e.verdict == WRONG")) == []


def test_a_member_is_shown_as_its_word() -> None:
    # Stored outputs (docs, the notebook) show a verdict as the string it was.
    assert repr(WRONG) == "'wrong'" and repr(Outcome.SKIP) == "'skip'"
    assert repr([Row("x", "op", Outcome.ERROR).verdict, AGREES]) == "['ERROR', 'agrees']"
