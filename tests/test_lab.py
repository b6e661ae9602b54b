"""``minigrad check --engine``: lab 03's battery on a student's engine, and on a class of them.

micrograd 0.1.0 stands in for a correct student (a test dependency); the five
engines of ``student_engines.BROKEN`` each carry one classic bug, and each
must be named by its signature. A teacher's run over a class is one table,
and one student's crash (a syntax error, an endless loop, an op that raises)
is that student's row, never the end of the run.
"""

from __future__ import annotations

import csv
import inspect
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import find, given, settings

from minigrad import GradcheckError, Rule, Value, check, gradcheck, ops, testing
from minigrad.checking.lab.battery import battery, load_engine, support
from minigrad.checking.lab.signature import diagnose
from minigrad.checking.lab.trials import Row, run
from minigrad.cli import main
from minigrad.cli.lab import targets
from minigrad.testing import Expression
from student_engines import BROKEN, ENGINE, LAB_BUGS, load


def _micrograd() -> ModuleType:
    module: ModuleType = pytest.importorskip(
        "micrograd.engine", reason="micrograd==0.1.0 is a test dependency"
    )
    return module


def _rows_of(cls: type) -> tuple[list[Row], list[str]]:
    checks, _ = battery(cls)
    rows = [run(check, cls) for check in checks]
    summary, _ = diagnose(rows)
    return rows, summary


def _table(out: str) -> dict[str, list[str]]:
    """The check rows of a printed table: name -> the cells after it."""
    rows: dict[str, list[str]] = {}
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("check "))
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        cells = [c.strip() for c in line.split("  ") if c.strip()]
        if cells and not line.startswith(" "):
            rows[cells[0]] = cells[1:]
    return rows


# One engine.


def test_micrograd_passes_every_op_it_supports(capsys: pytest.CaptureFixture[str]) -> None:
    _micrograd()
    assert main(["check", "--engine", "micrograd.engine:Value"]) == 0
    out = capsys.readouterr().out
    rows = _table(out)
    for op in ("x + y", "x - y", "x * y", "x / y", "x ** 2", "x ** -1", "x.relu()", "c - x"):
        assert rows[op][0] == "ok", op
    for graph in ("shared node u = x*y: u + u*u", "ladder of shared nodes", "backward() twice"):
        assert rows[graph][0] == "ok", graph
    failing = [name for name, cells in rows.items() if cells[0] not in ("ok", "-")]
    # Its one row that is not ok is not an op: micrograd 0.1.0's build_topo
    # is recursive, which is a note (no derivative is wrong), not a failure.
    assert failing == ["chain of 5000 ops"] and rows["chain of 5000 ops"][0] == "note"
    assert "diagnosis:" not in out and "\nnote (not a wrong derivative" in out
    assert "RecursionError at depth" in out and "explicit stack" in out
    assert "passed; 1 note (depth)" in out
    # What it lacks is left out, and said so: no exp, no node exponent.
    assert rows["x ** y"] == ["-"] and "x ** y: not supported: it raises AssertionError" in out
    assert "not supported, so not checked:" in out and "x.exp()" in out
    # Asked for with --depth, the chain counts; --depth 0 leaves it out.
    assert main(["check", "--engine", "micrograd.engine:Value", "--depth", "5000"]) == 1
    out = capsys.readouterr().out
    assert "diagnosis:" in out and "FAILED (1 failing check)" in out
    assert main(["check", "--engine", "micrograd.engine:Value", "--depth", "0"]) == 0
    assert "chain of" not in capsys.readouterr().out


def test_a_failing_row_shows_input_expected_got_and_both_differences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "student.py"
    path.write_text(BROKEN["sign_sub"])
    assert main(["check", "--engine", f"{path}:Value"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = lines[1]
    assert header.split()[:4] == ["check", "result", "graph", "d/d"]
    for column in ("expected", "got", "abs diff", "rel diff"):
        assert column in header
    cells = next(line for line in lines if line.startswith("x - y ")).split()
    # x - y  FAIL  alone  y  -1  1  2  2: the first graph that fails
    assert cells[:2] == ["x", "-"] and cells[3] == "FAIL"
    assert cells[-6:] == ["alone", "y", "-1", "1", "2", "2"]
    # The table fits 100 columns; the point, and the other graphs that fail, are notes under it.
    table = lines[1 : lines.index("")]
    assert len(table) == 1 + len(battery(load(BROKEN["sign_sub"]))[0])
    assert max(map(len, table)) <= 100
    assert re.search(r"\n  x - y: at x=\S+, y=\S+; it fails too in: weighted, pair, reused x", out)
    assert "`-` is wrong on its own" in out and "the right operand y" in out
    assert "sign flipped" in out


@pytest.mark.parametrize(
    ("variant", "failing", "cause"),
    [
        (
            "sign_sub",
            {"x - y", "backward() twice"},
            ["`-` is wrong on its own", "the right operand y", "sign flipped"],
        ),
        (
            "assign",
            {"x + y", "x * y", "x.exp()", "shared node u = x*y: u + u*u"},
            ["every op is right on its own", "must add, `.grad += ...`"],
        ),
        (
            "pow_derivative",
            {"x ** 2", "x ** 3", "x ** -1", "x ** 0.5", "x / y", "c / x"},
            ["`**` is wrong on its own", "the base x", "`/` fails too", "built from `**`"],
        ),
        (
            "preorder",
            {"shared node u = x*y: u + u*u", "ladder of shared nodes"},
            ["with a node used twice in one op", "The topological order is wrong"],
        ),
        (
            "recursive",
            {"chain of 5000 ops"},
            ["RecursionError at depth", "calls itself once per node"],
        ),
    ],
)
def test_each_broken_engine_fails_with_its_diagnosis(
    variant: str, failing: set[str], cause: list[str]
) -> None:
    rows, summary = _rows_of(load(BROKEN[variant], variant))
    bad = {r.name for r in rows if r.verdict in ("FAIL", "ERROR")}
    assert failing <= bad, bad
    text = "\n".join(summary)
    for words in cause:
        assert words in text, (words, text)
    # The diagnosis names this bug and no other.
    others = {
        "sign_sub": "`-` is wrong",
        "assign": "must add",
        "pow_derivative": "`**` is wrong",
        "preorder": "topological order is wrong",
        "recursive": "RecursionError",
    }
    for other, words in others.items():
        if other != variant:
            assert words not in text, (other, text)
    ops = [r for r in rows if r.kind in ("op", "number", "reflected")]
    if variant in ("preorder", "recursive"):
        # right for every op, wherever it sits in a graph: that is the signature
        assert not bad & {r.name for r in ops}
    if variant == "assign":
        # right for every op on its own; wrong where its input is used by another op too
        graphs = {str(e["graph"]) for r in ops for e in r.entries}
        assert graphs and all(g.startswith("reused") or " x" in g for g in graphs), graphs


#: Issue 26, items 11-13: for each bug, what its diagnosis must say, and what not.
LAB_DIAGNOSES: dict[str, tuple[list[str], list[str]]] = {
    # 11: each side of the kink is drawn, so the forgotten mask and sign show
    "relu_mask": (["`relu` is wrong on its own", "x.relu() at x=-", "should be 0, got 1"], []),
    "abs_sign": (["`abs` is wrong on its own", "abs(x) at x=-", "sign flipped"], []),
    # 13: the op, the cause, both causes, the relative error, the state
    "mul_assign": (
        ["a node used twice by `*` gets one", "(unlike `+`)", "`*`'s _backward assigns"],
        ["is wrong on its own"],
    ),
    "by_value": (
        ["two nodes of equal data are taken for one", "`__eq__` and `__hash__` compare .data"],
        ["topological order"],
    ),
    "no_op_mul_left": (
        ["`*` is wrong on its own", "the left operand x", "twice the right value", "`-` fails too"],
        ["`-` is wrong", "`neg` is wrong"],
    ),
    "mul_and_add_assign": (
        ["`*` is wrong on its own", "sign flipped", "a node used twice by `+`", "`+`'s _backward"],
        [],
    ),
    "mul_1e-6": (["`*` is wrong on its own", "(off by a relative 1e-06)"], ["factor of 1"]),
    "visited_default": (
        ["backward() keeps state between calls", "a graph built on the second one's output"],
        [],
    ),
}


@pytest.mark.parametrize("variant", sorted(LAB_DIAGNOSES))
def test_each_bug_of_the_lab_is_named_for_what_it_is(variant: str) -> None:
    _, summary = _rows_of(load(LAB_BUGS[variant], variant))
    text = "\n".join(summary)
    must, must_not = LAB_DIAGNOSES[variant]
    for words in must:
        assert words in text, (words, text)
    for words in must_not:
        assert words not in text, (words, text)
    assert "RecursionError" not in text  # the student's sort is iterative


def test_every_piece_of_a_kinked_domain_is_drawn_even_at_one_point() -> None:
    relu, abs_ = (load(LAB_BUGS[v], v) for v in ("relu_mask", "abs_sign"))
    for cls, name in ((relu, "x.relu()"), (abs_, "abs(x)")):
        (check,) = [c for c in battery(cls)[0] if c.name == name]
        assert check.points(1) == 2
        row = run(check, cls, points=1)
        assert row.verdict == "FAIL" and row.point[0] < 0, row
        # and the correct engine passes on both sides
        good = load(ENGINE)
        assert run(check, good, points=1).verdict == "ok"


def test_the_correct_engine_and_minigrads_own_value_pass_the_whole_battery() -> None:
    for cls in (load(ENGINE), Value):
        rows, summary = _rows_of(cls)
        assert [r.name for r in rows if r.verdict not in ("ok", "skip")] == [], cls
        assert summary == []
    # minigrad's Value has every op the battery knows.
    checks, missing = battery(Value)
    assert missing == {} and len(checks) > 40
    assert all(v == "" for v in support(Value).values())


def test_an_engine_that_does_not_fit_is_refused_naming_the_part(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class NoGrad:
        def __init__(self, data: float) -> None:
            self.data = data

        def backward(self) -> None:
            pass

    with pytest.raises(TypeError, match=r"NoGrad has no \.grad"):
        load_engine(NoGrad)
    path = tmp_path / "half.py"
    path.write_text(
        "class Value:\n    def __init__(self, data):\n        self.data = data\n"
        "    def backward(self):\n        pass\n"
    )
    assert main(["check", "--engine", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Value has no .grad" in err
    for target, words in (
        (str(tmp_path / "missing.py"), "no such file"),
        ("no_such_module_anywhere:Value", "No module named 'no_such_module_anywhere'"),
        (f"{path}:Engine", "has no class Engine (its classes: Value)"),
    ):
        assert main(["check", "--engine", target]) == 2
        assert words in capsys.readouterr().err, target


# A class.


def _class_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "class"
    folder.mkdir()
    for name, source in BROKEN.items():
        (folder / f"{name}.py").write_text(source)
    return folder


def test_a_teachers_run_over_all_six_prints_one_table_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _micrograd()
    folder = _class_folder(tmp_path)
    assert main(["check", "--engine", str(folder), "micrograd.engine:Value"]) == 1
    out = capsys.readouterr().out
    students = ["assign", "pow_derivative", "preorder", "recursive", "sign_sub", "micrograd.engine"]
    header = next(line for line in out.splitlines() if line.startswith("check "))
    assert header.split() == ["check", *students]
    rows = _table(out)
    assert rows["x - y"] == ["FAIL", "ok", "ok", "ok", "FAIL", "ok"]  # assign: `-` assigns too
    assert rows["x * y"] == ["FAIL", "ok", "ok", "ok", "ok", "ok"]
    assert rows["ladder of shared nodes"][2] == "FAIL"
    assert rows["x.exp()"][-1] == "-"  # micrograd 0.1.0 has no exp
    # One line per student with the diagnosis.
    verdicts = {
        line.split()[0]: line
        for line in out.split("student ", 1)[1].splitlines()
        if line and line.split()[0] in students
    }
    assert "must add" in verdicts["assign"]
    assert "`**` is wrong on its own" in verdicts["pow_derivative"]
    assert "topological order is wrong" in verdicts["preorder"]
    assert "`-` is wrong on its own" in verdicts["sign_sub"]
    # A recursive sort is a note in the depth column, not a failure.
    for correct in ("recursive", "micrograd.engine"):
        assert verdicts[correct].split()[1:4] == ["PASSED", "RecursionError", "at"]
    assert "6 engines" in out and "failing checks in 4 engines); 2 notes (depth)" in out


def test_the_gradebook_as_json_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _class_folder(tmp_path)
    (folder / "good.py").write_text(ENGINE)
    assert main(["check", "--engine", str(folder), "--format", "json"]) == 1
    book = json.loads(capsys.readouterr().out)
    by_student = {e["student"]: e for e in book["engines"]}
    assert by_student["good"]["status"] == "passed" and by_student["good"]["diagnosis"] == []
    sign = by_student["sign_sub"]
    assert sign["status"] == "failed"
    (row,) = [c for c in sign["checks"] if c["name"] == "x - y"]
    assert row["verdict"] == "FAIL" and row["diagnosis"] == "the right operand y: sign flipped"
    (entry,) = [e for e in row["entries"] if e["graph"] == "alone"]
    assert (entry["operand"], entry["expected"], entry["got"]) == ("y", pytest.approx(-1.0), 1.0)
    assert main(["check", "--engine", str(folder), "--format", "csv"]) == 1
    table = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    header, *lines = table
    assert header[:4] == ["student", "target", "status", "diagnosis"]
    assert [line[0] for line in lines] == sorted([*BROKEN, "good"])
    by_name = {line[0]: dict(zip(header, line, strict=True)) for line in lines}
    assert by_name["assign"]["x * y"] == "FAIL" and by_name["good"]["x * y"] == "ok"
    assert by_name["good"]["status"] == "passed"


HANGS_IN_EXP = ENGINE.replace(
    "    def exp(self):\n", "    def exp(self):\n        while True:\n            pass\n"
)
RAISES_IN_MUL = ENGINE.replace(
    '        out = Value(self.data * other.data, (self, other), "*")',
    '        out = Value(self.data * other.dta, (self, other), "*")',
)


def test_one_students_crash_is_that_students_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "good.py").write_text(ENGINE)
    (folder / "typo.py").write_text("class Value:\n    def __init__(self, data)\n")
    (folder / "loops.py").write_text("while True:\n    pass\n")
    (folder / "hangs.py").write_text(HANGS_IN_EXP)
    (folder / "raises.py").write_text(RAISES_IN_MUL)
    (folder / "other.py").write_text("class Engine:\n    pass\n")
    assert main(["check", "--engine", str(folder), "--timeout", "3"]) == 1
    out = capsys.readouterr().out
    status = {
        line.split()[0]: line
        for line in out.split("\nstudent ", 1)[1].splitlines()[1:]
        if line.strip() and not line.startswith(" ")
    }
    assert status["good"].split()[1] == "PASSED"
    assert "NOT LOADED" in status["typo"] and "SyntaxError" in status["typo"]
    assert "NOT LOADED" in status["loops"] and "timed out after 3 s" in status["loops"]
    assert "has no class Value (its classes: Engine)" in status["other"]
    assert "FAILED" in status["hangs"] and "FAILED" in status["raises"]
    rows = _table(out)
    students = next(line for line in out.splitlines() if line.startswith("check ")).split()[1:]
    hangs, raises = students.index("hangs"), students.index("raises")
    assert rows["x.exp()"][hangs] == "ERROR" and rows["x.log()"][hangs] == "ok"
    # Every op's row multiplies (by a weight), so each raises; a chain of + does not.
    assert rows["x * y"][raises] == "ERROR" and rows["chain of 5000 ops"][raises] == "ok"
    assert "x.exp(): timed out after 3 s" in status["hangs"]
    assert "AttributeError: 'Value' object has no attribute 'dta'" in status["raises"]


def test_targets_spell_files_modules_and_folders(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    found = targets([f"{tmp_path}:Node", str(tmp_path / "a.py"), "pkg.engine:Val"])
    # A folder is its *.py files, in order; a file's class is Value unless named.
    assert [t.get("path", t.get("module")) for t in found] == [
        str(tmp_path / "a.py"),
        str(tmp_path / "b.py"),
        str(tmp_path / "a.py"),
        "pkg.engine",
    ]
    assert [t["cls"] for t in found] == ["Node", "Node", "Value", "Val"]
    # Two students of one name are told apart by their folder.
    assert found[0]["student"] == found[2]["student"] == f"{tmp_path.name}/a"
    assert found[1]["student"] == "b" and found[3]["student"] == "pkg.engine"


# hypothesis for a student's engine: minigrad as the second oracle.


def _property(cls: type, examples: int) -> Callable[[], None]:
    @settings(max_examples=examples, database=None, deadline=None)
    @given(testing.engine_expressions(cls))
    def same_gradients(e: Expression) -> None:
        testing.assert_same_gradients(cls, e)

    return same_gradients


def test_a_correct_engine_and_micrograd_agree_with_minigrad_on_random_expressions() -> None:
    _property(load(ENGINE), 100)()
    micrograd = _micrograd().Value
    # micrograd's ** takes a number exponent only: x ** 2, x ** 3 and x ** -1
    # stand for it; with neither sin nor tanh, 2x / (1 + x**2) squashes.
    names = [r.name for r in testing.engine_rules(micrograd)]
    assert names == ["+", "-", "*", "/", "neg", "relu", "pow2", "pow3", "pow-1"]
    _property(micrograd, 100)()


@pytest.mark.parametrize("variant", ["sign_sub", "assign", "pow_derivative", "preorder"])
def test_random_expressions_catch_each_wrong_gradient(variant: str) -> None:
    cls = load(BROKEN[variant], variant)
    with pytest.raises(testing.EngineMismatchError, match="differs from minigrad on"):
        _property(cls, 200)()


def test_engine_values_are_fresh_leaves_of_the_engine_where_the_rule_is_smooth() -> None:
    cls = load(ENGINE)
    drawn = find(testing.engine_values(cls, ops.DIV), lambda xs: True)
    assert all(type(x) is cls for x in drawn) and abs(vars(drawn[1])["data"]) >= 0.01
    with pytest.raises(TypeError, match="has none of the ops minigrad knows"):
        testing.engine_rules(type("Bare", (), {"__init__": lambda self, data: None}))


def test_after_three_time_outs_the_rest_of_an_engine_is_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every check that takes a power hangs: a time limit each would add up; three do.
    path = tmp_path / "stuck.py"
    path.write_text(
        ENGINE.replace(
            "    def __pow__(self, other):\n",
            "    def __pow__(self, other):\n        while True:\n            pass\n",
        )
    )
    assert main(["check", "--engine", str(path), "--timeout", "0.5", "--format", "json"]) == 1
    (engine,) = json.loads(capsys.readouterr().out)["engines"]
    notes = {c["name"]: (c["verdict"], c["note"]) for c in engine["checks"]}
    timed_out = [n for n, (v, note) in notes.items() if "timed out after 0.5 s" in note]
    assert timed_out == ["x / y", "x ** y", "x ** 2"]
    assert notes["x * y"] == ("ok", "")  # before the third time-out, checks go on
    assert notes["x ** 3"][0] == "ERROR" and notes["x ** 3"][1].startswith("not run: 3 checks")
    assert len(notes) == len(battery(load(ENGINE))[0])  # every check has a verdict


def _students(out: str) -> dict[str, str]:
    """Each student's lines under the table: result, depth and diagnosis, joined."""
    blocks: dict[str, str] = {}
    name = ""
    for line in out.split("\nstudent ", 1)[1].splitlines()[1:]:
        if line.startswith("("):
            break
        if not line.strip():
            continue
        if not line.startswith(" "):
            name = line.split()[0]
            blocks[name] = line
        elif name:
            blocks[name] += "\n" + line.strip()
    return blocks


def test_a_class_with_every_bug_of_the_lab_and_a_recursive_sort(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    for name, source in LAB_BUGS.items():
        (folder / f"{name}.py").write_text(source)
    assert main(["check", "--engine", str(folder)]) == 1
    out = capsys.readouterr().out
    students = _students(out)
    assert sorted(students) == sorted(LAB_BUGS)
    for variant, (must, must_not) in LAB_DIAGNOSES.items():
        result, depth = students[variant].split()[1:3]
        assert (result, depth) == ("FAILED", "ok"), students[variant]
        # The diagnosis lines wrap cells onto lines of their own: compare words.
        text = " ".join(students[variant].split())
        for words in must:
            assert " ".join(words.split()) in text, (variant, words, text)
        for words in must_not:
            assert words not in text, (variant, words)
        assert "RecursionError" not in text  # 12: not added to every buggy student's
    # 12: the recursive sort passes, its depth a note in a column of its own
    assert students["recursive"].split()[1:4] == ["PASSED", "RecursionError", "at"]
    assert _table(out)["chain of 5000 ops"][list(sorted(LAB_BUGS)).index("recursive")] == "note"
    # 13: the totals count failing checks, and say in how many engines
    assert re.search(
        r"9 engines, \d+ checks .*: FAILED \(\d+ failing checks in 8 engines\); 1 note", out
    )
    # The correct engine alone: passed, unless depth is asked for.
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "recursive.py").write_text(LAB_BUGS["recursive"])
    (alone / "good.py").write_text(ENGINE)
    assert main(["check", "--engine", str(alone)]) == 0
    out = capsys.readouterr().out
    assert "2 engines" in out and "passed; 1 note (depth)" in out
    assert main(["check", "--engine", str(alone), "--depth", "5000"]) == 1
    out = capsys.readouterr().out
    assert "FAILED (1 failing check in 1 engine)" in out
    assert "RecursionError at depth" in _students(out)["recursive"]
    book = main(["check", "--engine", str(alone), "--format", "json"])
    engines = {e["student"]: e for e in json.loads(capsys.readouterr().out)["engines"]}
    assert book == 0 and engines["recursive"]["status"] == "passed"
    assert (
        engines["recursive"]["diagnosis"] == []
        and "RecursionError" in engines["recursive"]["notes"][0]
    )


# The report in lab 03's words: input, expected (numerical), got (analytic),
# abs diff, rel diff.


def test_a_failed_report_says_it_in_the_labs_words_in_its_first_line() -> None:
    cls = load(BROKEN["sign_sub"], "sign_sub")
    report = check(lambda x, y: x - y, [cls(2.0), cls(3.0)])
    first, header, row = str(report).splitlines()[:3]
    assert first.endswith(
        "worst: x[1]: expected (numerical) -1, got (analytic) 1, abs diff 2, rel diff 2"
    ), first
    columns = re.split(r"\s{2,}", header)
    assert columns[3:7] == ["analytic", "numerical", "abs diff", "rel diff"]
    assert re.split(r"\s{2,}", row)[3:7] == ["1", "-1", "2", "2"]
    with pytest.raises(GradcheckError, match=r"expected \(numerical\) -1, got \(analytic\) 1"):
        gradcheck(lambda x, y: x - y, [cls(2.0), cls(3.0)])
    # Above order 1, and in several modes, the worst entry says which derivative it is.
    wrong = Rule("wrong_sq", lambda x: x * x, (lambda x, out: 2 * x + x * x,))
    twice = check(lambda x: wrong(x), [Value(0.5)], order=2, modes=("fwd", "rev"))
    assert "worst: order 1 (fwd), out[0] with respect to x[0]: expected (numerical) 1," in str(
        twice
    )


def test_a_passed_report_counts_in_the_singular_when_it_is_one() -> None:
    assert str(check(lambda x: x.exp(), [Value(0.5)])).splitlines()[0] == (
        "gradcheck passed: order 1, 1 comparison (exhaustive)"
    )
    assert str(check(lambda x: x.exp(), [Value(0.5)], order=2)).splitlines()[0] == (
        "gradcheck passed: orders 1-2, 2 comparisons (exhaustive)"
    )
    assert "<th>order</th>" in check(lambda x: x.exp(), [Value(0.5)])._repr_html_()


def test_help_of_gradcheck_documents_its_own_arguments() -> None:
    text = inspect.getdoc(gradcheck) or ""  # what help(minigrad.gradcheck) shows
    assert "as in :func:`check`" not in text and "as in check" not in text
    args = text.split("Args:", 1)[1].split("Returns:", 1)[0]
    for name in inspect.signature(gradcheck).parameters:
        assert re.search(rf"^\s+{name}: \S", args, re.MULTILINE), name
