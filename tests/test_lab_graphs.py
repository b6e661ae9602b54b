"""Issue 34: the lab's battery sees each op inside a graph, and names the bugs students write.

Each engine of ``student_engines.ISSUE_34`` is the lab-01 engine with one
bug that the round-4 battery passed or named wrong: an op whose
``_backward`` leaves out ``out.grad`` (right at the output, where it is 1),
a ``tanh`` that reads the last ``t`` from its class, a ``backward()`` that
zeroes before its pass, one that never starts the output's grad at 1, a
missing ``__radd__``, a ``*`` whose closure reads the raw number ``other``,
and a ``*`` that skips ``other`` when it is ``self``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import ModuleType

import pytest

from minigrad.checking.lab.battery import battery, graphs
from minigrad.checking.lab.signature import diagnose
from minigrad.checking.lab.trials import Row, run
from minigrad.cli import main
from student_engines import ENGINE, ISSUE_34, LAB_BUGS, load

#: For each engine: the failing row that shows it, words its diagnosis must
#: say, and words it must not (a second op, the order, a wrong kind of bug).
DIAGNOSES: dict[str, tuple[str, list[str], list[str]]] = {
    "tanh_out_grad": ("x.tanh()", ["`tanh`'s `_backward` leaves out `out.grad`"], []),
    "exp_out_grad": ("x.exp()", ["`exp`'s `_backward` leaves out `out.grad`"], []),
    "relu_out_grad": ("x.relu()", ["`relu`'s `_backward` leaves out `out.grad`"], []),
    "pow_out_grad": (
        "x ** 2",
        ["`**`'s `_backward` leaves out `out.grad`", "`/` fails too", "built from `**`"],
        ["`/` is wrong on its own"],
    ),
    "tanh_class_t": (
        "x.tanh()",
        ["`tanh`'s `_backward` reads a value from another node", "x.tanh() * x'.tanh() at"],
        ["leaves out"],
    ),
    "backward_zeroes": (
        "backward() twice",
        ["`backward()` replaces `.grad` instead of adding", "(half)"],
        ["keeps state between calls"],
    ),
    "no_radd": ("c - x", ["`__radd__` is missing, so `2 + x` fails", "c - x"], ["`-`"]),
    "unseeded": ("x + y", ["`backward()` does not start the output's grad at 1"], []),
    "raw_other": (
        "x * c",
        ["`*`'s `_backward` raises AttributeError", "has no attribute 'data'"],
        [],
    ),
    "mul_skips_self": (
        "x * y",
        ["`*`'s `_backward` gets x * x wrong", "when `other` is `self`", "(half)"],
        ["assign", "must add"],
    ),
}


def _graded(source: str, name: str) -> tuple[list[Row], list[str]]:
    cls = load(source, name)
    rows = [run(check, cls) for check in battery(cls)[0]]
    return rows, diagnose(rows)[0]


@pytest.mark.parametrize("variant", sorted(ISSUE_34))
def test_each_bug_of_issue_34_fails_its_engine_named_in_words(variant: str) -> None:
    rows, summary = _graded(ISSUE_34[variant], variant)
    shows, must, must_not = DIAGNOSES[variant]
    (row,) = [r for r in rows if r.name == shows]
    assert row.verdict in ("FAIL", "ERROR"), row
    # One cause, one line first; what follows from it after, never a second cause.
    text = "\n".join(summary)
    for words in must:
        assert words in text, (words, text)
    for words in [*must_not, "topological order", "RecursionError", "equal data"]:
        assert words not in text, (words, text)
    assert all(line.startswith(("`", "every op")) for line in summary), summary


def test_an_op_right_alone_is_caught_under_a_weight_and_the_ratio_is_its_weight() -> None:
    cls = load(ISSUE_34["tanh_out_grad"], "tanh_out_grad")
    (check,) = [c for c in battery(cls)[0] if c.name == "x.tanh()"]
    row = run(check, cls)
    failed = {str(e["graph"]) for e in row.entries}
    assert "alone" not in failed and "weighted" in failed
    (entry,) = [e for e in row.entries if e["graph"] == "weighted"]
    got, expected = float(entry["got"]), float(entry["expected"])  # type: ignore[arg-type]
    # The weight is neither 0 nor 1, so the missing factor shows: got * w is expected.
    assert 1.5 <= abs(row.weight) <= 3.0
    assert math.isclose(got * row.weight, expected, rel_tol=1e-12)
    assert re.fullmatch(r"x\.tanh\(\) \* w at x=\S+, w=\S+", row.where["weighted"])


def test_every_op_runs_in_graphs_that_witness_each_bug_class() -> None:
    checks = {c.name: c for c in battery(load(ENGINE))[0]}
    binary = [g.label for g in graphs(checks["x * y"])]
    assert binary == ["alone", "weighted", "pair", "reused x", "reused y", "x * x"]
    assert [g.label for g in graphs(checks["x.tanh()"])] == [
        "alone",
        "weighted",
        "pair",
        "reused x",
    ]
    assert [g.label for g in graphs(checks["ladder of shared nodes"])] == ["alone"]


@pytest.mark.parametrize("variant", ["tanh_out_grad", "raw_other", "no_radd", "backward_zeroes"])
def test_one_engines_table_fits_100_columns_with_its_notes_under_it(
    variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{variant}.py"
    path.write_text(ISSUE_34[variant])
    assert main(["check", "--engine", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    table = lines[1 : lines.index("")]
    assert table[0].startswith("check ") and len(table) > 25
    assert max(map(len, table)) <= 100, max(table, key=len)
    # The notes under it hold the points and what raised or was not checked.
    notes = lines[lines.index("where:") + 1 :]
    shows = DIAGNOSES[variant][0]
    assert any(line.startswith(f"  {shows}: ") for line in notes), notes


def test_a_class_of_issue_34_gets_one_verdict_and_its_own_diagnosis_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, source in [*ISSUE_34.items(), ("good", ENGINE)]:
        (tmp_path / f"{name}.py").write_text(source)
    assert main(["check", "--engine", str(tmp_path), "--format", "json"]) == 1
    import json

    engines = {e["student"]: e for e in json.loads(capsys.readouterr().out)["engines"]}
    assert engines["good"]["status"] == "passed" and engines["good"]["diagnosis"] == []
    for variant, (_, must, _) in DIAGNOSES.items():
        assert engines[variant]["status"] == "failed", variant
        assert must[0] in "\n".join(engines[variant]["diagnosis"]), variant


def _lecture_engine() -> str:
    """micrograd 0.1.0's engine.py with the lecture's tanh and exp: a correct student."""
    module: ModuleType = pytest.importorskip("micrograd.engine", reason="a test dependency")
    source = Path(str(module.__file__)).read_text()
    methods = LAB_BUGS["recursive"]
    tanh_exp = methods[methods.index("    def exp(self):") : methods.index("    def relu(self):")]
    return "import math\n" + source.replace(
        "    def backward(self):", tanh_exp + "    def backward(self):"
    )


def test_micrograd_with_the_lectures_tanh_and_exp_passes_its_depth_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lecture.py"
    path.write_text(_lecture_engine())
    assert main(["check", "--engine", str(path)]) == 0
    out = capsys.readouterr().out
    assert "diagnosis:" not in out and "passed; 1 note (depth)" in out
    table = out.splitlines()[2 : out.splitlines().index("")]
    rows = {line[:30].strip(): line[30:].split() for line in table}
    assert rows["x.tanh()"] == rows["x.exp()"] == ["ok"] and rows["x ** 2"] == ["ok"]
