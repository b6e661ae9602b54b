"""Tests for minigrad.viz: DOT structure, escaping, the cap, and rendering with or without dot.

Everything here but the tests marked ``needs_dot`` runs without Graphviz: its
absence is simulated by an empty PATH, and its presence by a small fake
``dot`` script, so both branches of the code are tested on every machine.
"""

from __future__ import annotations

import math
import os
import random
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from minigrad import Rule, Value, toposort
from minigrad.nn import MLP
from minigrad.viz import DotNotFoundError, Graph, graph

DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")
needs_sh = pytest.mark.skipif(os.name != "posix", reason="the fake `dot` is run by its #! line")

_NODE = re.compile(r"^  (\w+) \[(.*)\];$")
_EDGE = re.compile(r"^  (\w+) -> (\w+)(?: \[(.*)\])?;$")


class Parsed:
    """The nodes and edges of minigrad's DOT output, read line by line."""

    def __init__(self, dot: str) -> None:
        lines = dot.splitlines()
        assert lines[0] == "digraph minigrad {"
        assert lines[-1] == "}"
        assert dot.endswith("}\n")
        self.nodes: dict[str, str] = {}
        self.edges: list[tuple[str, str, str]] = []
        for line in lines[1:-1]:
            if line.startswith(("  graph [", "  node [", "  edge [")):
                continue
            edge = _EDGE.match(line)
            if edge:
                self.edges.append((edge[1], edge[2], edge[3] or ""))
                continue
            node = _NODE.match(line)
            assert node, f"not a node or an edge: {line!r}"
            assert node[1] not in self.nodes, f"node {node[1]} defined twice"
            self.nodes[node[1]] = node[2]
        for src, dst, _ in self.edges:
            assert src in self.nodes, f"edge from undefined node {src}"
            assert dst in self.nodes, f"edge to undefined node {dst}"

    def of_kind(self, pattern: str) -> list[str]:
        return [n for n in self.nodes if re.fullmatch(pattern, n)]

    def into(self, node: str) -> list[tuple[str, str]]:
        return [(src, attrs) for src, dst, attrs in self.edges if dst == node]


def _labels(dot: str) -> list[str]:
    """The text of every HTML-like label ``label=<...>``, nesting respected."""
    found = []
    start = 0
    while (at := dot.find("label=<", start)) != -1:
        i = at + len("label=<")
        depth = 1
        j = i
        while depth:
            depth += {"<": 1, ">": -1}.get(dot[j], 0)
            j += 1
        found.append(dot[i : j - 1])
        start = j
    return found


def _text(label: str) -> str:
    """A label parsed as XML (which fails unless it is escaped properly), as text."""
    return "".join(ET.fromstring(f"<label>{label}</label>").itertext())


def _lecture_example() -> Value:
    # Karpathy's first micrograd lecture example, with known gradients.
    a = Value(2.0, label="a")
    b = Value(-3.0, label="b")
    c = Value(10.0, label="c")
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    f = Value(-2.0, label="f")
    loss = d * f
    loss.label = "L"
    loss.backward()
    return loss


def docs_expression() -> Value:
    """The expression drawn in docs/nn.md and docs/img/expression.dot."""
    w1 = Value(-3.0, label="w1")
    w2 = Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    n = w1 * 2.0 + w2 * 0.0 + b
    n.label = "n"
    o = n.tanh()
    o.label = "o"
    loss = (o - 1.0) ** 2
    loss.label = "loss"
    loss.backward()
    return loss


# Structure.


def test_every_value_op_and_edge_is_drawn() -> None:
    g = graph(_lecture_example())
    parsed = Parsed(g.dot)
    assert (g.values, g.ops, g.constants, g.omitted) == (7, 3, 0, 0)
    values = parsed.of_kind(r"v\d+")
    ops = parsed.of_kind(r"v\d+op")
    assert len(values) == 7
    assert len(ops) == 3
    assert len(parsed.nodes) == 10
    # Each op feeds exactly its result, and each op has two arguments.
    for op in ops:
        assert [dst for src, dst, _ in parsed.edges if src == op] == [op[:-2]]
        assert len(parsed.into(op)) == 2
    assert len(parsed.edges) == 3 + 6
    # Label, data and grad of each Value, gradients as in the lecture.
    texts = sorted(_text(_labels(f"x [{parsed.nodes[v]}]")[0]) for v in values)
    assert texts == [
        "Ldata -8.0grad 1.0",
        "adata 2.0grad 6.0",
        "bdata -3.0grad -4.0",
        "cdata 10.0grad -2.0",
        "ddata 4.0grad -2.0",
        "edata -6.0grad -2.0",
        "fdata -2.0grad 4.0",
    ]


def test_edges_follow_the_computation_from_arguments_to_results() -> None:
    loss = _lecture_example()
    parsed = Parsed(graph(loss).dot)
    label_of = {
        v: _text(_labels(f"x [{parsed.nodes[v]}]")[0]).split("data")[0]
        for v in parsed.of_kind(r"v\d+")
    }
    flows = {
        (label_of[src], parsed.nodes[dst], label_of[dst[:-2]])
        for src, dst, _ in parsed.edges
        if dst.endswith("op")
    }
    assert flows == {
        ("d", "shape=ellipse, label=<*>", "L"),
        ("f", "shape=ellipse, label=<*>", "L"),
        ("e", "shape=ellipse, label=<+>", "d"),
        ("c", "shape=ellipse, label=<+>", "d"),
        ("a", "shape=ellipse, label=<*>", "e"),
        ("b", "shape=ellipse, label=<*>", "e"),
    }


def test_constants_get_nodes_and_non_commutative_ops_name_their_arguments() -> None:
    x = Value(5.0, label="x")
    y = (2.0 - x) * 3.0
    g = graph(y)
    parsed = Parsed(g.dot)
    assert (g.values, g.ops, g.constants) == (3, 2, 2)
    constants = {n: parsed.nodes[n] for n in parsed.of_kind(r"v\d+c\d+")}
    assert sorted(_text(_labels(f"x [{a}]")[0]) for a in constants.values()) == ["2.0", "3.0"]
    assert all("style=dashed" in attrs for attrs in constants.values())
    sub_op = next(op for op in parsed.of_kind(r"v\d+op") if "label=<->" in parsed.nodes[op])
    mul_op = next(op for op in parsed.of_kind(r"v\d+op") if "label=<*>" in parsed.nodes[op])
    # 2.0 - x: the constant is argument x, the Value (labelled x too) is argument y.
    into_sub = [
        (_text(_labels(f"x [{parsed.nodes[src]}]")[0]), attrs) for src, attrs in parsed.into(sub_op)
    ]
    assert into_sub == [("2.0", "label=<x>"), ("xdata 5.0grad 0.0", "label=<y>")]
    # + and * are commutative: their edges carry no argument names.
    assert [attrs for _, attrs in parsed.into(mul_op)] == ["", ""]


def test_edges_take_their_argument_names_and_commutativity_from_the_rule() -> None:
    def edge_names(rule: Rule) -> list[str]:
        y = rule(Value(3.0, label="p"), 4.0)
        parsed = Parsed(graph(y).dot)
        (op,) = parsed.of_kind(r"v\d+op")
        return [attrs for _, attrs in parsed.into(op)]

    partials = (lambda a, b, out: a / out, lambda a, b, out: b / out)
    named = Rule("hyp", math.hypot, partials, arg_names=("base", "height"))
    symmetric = Rule("hyp", math.hypot, partials, arg_names=("a", "b"), commutative=True)
    plain = Rule("hyp", math.hypot, partials)
    assert edge_names(named) == ["label=<base>", "label=<height>"]
    assert edge_names(symmetric) == ["", ""]
    assert edge_names(plain) == ["label=<x>", "label=<y>"]


def test_a_value_used_twice_is_drawn_once_with_two_edges() -> None:
    x = Value(3.0, label="x")
    g = graph(x * x)
    parsed = Parsed(g.dot)
    assert g.values == 2
    assert parsed.into("v0op") == [("v1", ""), ("v1", "")]


def test_several_roots_share_one_picture() -> None:
    x = Value(1.0, label="x")
    g = graph([x.exp(), x.sin()])
    parsed = Parsed(g.dot)
    assert (g.values, g.ops) == (3, 2)
    assert sorted(parsed.nodes[op] for op in parsed.of_kind(r"v\d+op")) == [
        "shape=ellipse, label=<exp>",
        "shape=ellipse, label=<sin>",
    ]


def test_leaves_are_tinted_and_results_are_not() -> None:
    parsed = Parsed(graph(Value(1.0, label="x").exp()).dot)
    assert "bgcolor" not in parsed.nodes["v0"]
    assert 'bgcolor="#e8f0fe"' in parsed.nodes["v1"]


def test_numbers_are_shown_with_four_significant_digits() -> None:
    x = Value(-0.0)
    y = Value(1.23456789e-7) + 2.5e8 * x
    labels = [_text(label) for label in _labels(graph([x, y]).dot)]
    assert "data 0.0grad 0.0" in labels  # -0.0 reads as 0.0
    assert "data 1.235e-07grad 0.0" in labels
    assert "2.5e+08" in labels


# Escaping.


def test_labels_and_op_names_are_escaped() -> None:
    nasty = "<b>x</b> & \"q\" 'it' \\ {a|b} [c]\nnext\ttab"
    odd = Rule("<op>&", lambda x: 2.0 * x, (2.0,))
    y = odd(Value(1.0, label=nasty))
    dot = graph(y).dot
    assert "<b>x</b> &" not in dot
    # Each label is well-formed: it parses as XML, and reads as the label did.
    texts = [_text(label) for label in _labels(dot)]
    shown = "<b>x</b> & \"q\" 'it' \\ {a|b} [c]\\nnext\\ttab"
    assert f"{shown}data 1.0grad 0.0" in texts
    assert "<op>&" in texts
    # No raw control character can break a line of the DOT text.
    assert all(_EDGE.match(line) or _NODE.match(line) for line in dot.splitlines()[4:-1])


# The cap.


def test_beyond_max_nodes_the_rest_is_one_summary_node() -> None:
    model = MLP(2, [4, 4, 1], rng=random.Random(0))
    y = model.forward([1.0, -2.0])[0]
    total = len(toposort([y]))
    g = graph(y, max_nodes=20)
    parsed = Parsed(g.dot)
    assert (g.values, g.omitted) == (20, total - 20)
    assert len(parsed.of_kind(r"v\d+")) == 20
    assert f"{total - 20:,} more Values not shown<br/>(max_nodes=20)" in parsed.nodes["omitted"]
    cut = {dst for src, dst, _ in parsed.edges if src == "omitted"}
    assert cut
    arity = {"+": 2, "*": 2, "relu": 1}
    for op in parsed.of_kind(r"v\d+op"):
        n_args = arity[_text(_labels(f"x [{parsed.nodes[op]}]")[0])]
        drawn = [src for src, _ in parsed.into(op) if src != "omitted"]
        # An op misses arguments exactly when the summary node stands in for them.
        assert (len(drawn) < n_args) == (op in cut), op
    # The Values nearest the root are the ones drawn: the root is v0.
    assert "omitted" not in {src for src, _ in parsed.into("v0op")} or total <= 2


def test_no_summary_node_when_everything_fits() -> None:
    model = MLP(2, [3, 1], rng=random.Random(0))
    y = model.forward([1.0, -2.0])[0]
    total = len(toposort([y]))
    g = graph(y, max_nodes=total)
    assert (g.values, g.omitted) == (total, 0)
    assert "omitted" not in Parsed(g.dot).nodes


def test_max_nodes_one_draws_the_root_alone() -> None:
    x = Value(2.0)
    g = graph(x * 3.0 + x, max_nodes=1)
    parsed = Parsed(g.dot)
    assert (g.values, g.omitted) == (1, 2)
    assert parsed.of_kind(r"v\d+") == ["v0"]
    assert "2 more Values not shown" in parsed.nodes["omitted"]
    assert ("omitted", "style=dashed") in parsed.into("v0op")


def test_a_deep_chain_needs_no_recursion() -> None:
    depth = 5 * sys.getrecursionlimit()
    y = Value(1.0)
    for _ in range(depth):
        y = -y
    capped = graph(y, max_nodes=10)
    assert (capped.values, capped.omitted) == (10, depth + 1 - 10)
    full = graph(y, max_nodes=depth + 1)
    assert full.values == depth + 1
    assert len(Parsed(full.dot).edges) == 2 * depth


# Arguments.


@pytest.mark.parametrize(
    ("root", "max_nodes", "error", "message"),
    [
        (3.0, 10, TypeError, "graph: root must be a Value or a sequence of Values, got float"),
        ([], 10, ValueError, "graph: root is an empty sequence"),
        ([Value(1.0), 2.0], 10, TypeError, r"graph: root\[1\] must be a Value, got float 2.0"),
        (Value(1.0), 0, ValueError, "graph: max_nodes must be >= 1, got 0"),
        (Value(1.0), 2.5, TypeError, "graph: max_nodes must be an int, got float 2.5"),
        (Value(1.0), True, TypeError, "graph: max_nodes must be an int, got bool True"),
    ],
)
def test_bad_arguments(
    root: object, max_nodes: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        graph(root, max_nodes=max_nodes)  # type: ignore[arg-type]


def test_repr_is_short_and_str_is_the_dot_text() -> None:
    g = graph(Value(1.0) * 2.0)
    assert repr(g) == "Graph(values=2, ops=1, constants=1, omitted=0)"
    assert str(g) == g.dot


# Without dot, with a fake dot, with a failing dot.


@pytest.fixture
def no_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert shutil.which("dot") is None


def _fake_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """Put a `dot` on PATH that runs ``body`` (Python) with this interpreter."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    program = bin_dir / "dot"
    program.write_text(f"#!{sys.executable}\nimport sys\n{body}\n", encoding="utf-8")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.usefixtures("no_dot")
def test_without_dot_the_svg_repr_is_none_quietly() -> None:
    assert graph(Value(1.0).exp())._repr_svg_() is None


@pytest.mark.usefixtures("no_dot")
def test_without_dot_saving_a_picture_names_the_missing_program(tmp_path: Path) -> None:
    g = graph(Value(1.0).exp())
    target = tmp_path / "out" / "g.svg"
    target.parent.mkdir()
    with pytest.raises(DotNotFoundError, match=r"`dot` program was not found on PATH") as caught:
        g.save(target)
    assert isinstance(caught.value, FileNotFoundError)
    assert "install Graphviz" in str(caught.value)
    assert str(target.with_suffix(".dot")) in str(caught.value)
    # The DOT text is written all the same; no half-made picture is.
    assert target.with_suffix(".dot").read_text(encoding="utf-8") == g.dot
    assert not target.exists()


@pytest.mark.usefixtures("no_dot")
def test_without_dot_render_raises_and_dot_files_are_still_written(tmp_path: Path) -> None:
    g = graph(Value(1.0).exp())
    with pytest.raises(DotNotFoundError, match="`dot`"):
        g.render("png")
    for name in ("a.dot", "b.gv"):
        assert g.save(tmp_path / name) == tmp_path / name
        assert (tmp_path / name).read_text(encoding="utf-8") == g.dot
    assert g.save(tmp_path / "c") == tmp_path / "c.dot"
    assert (tmp_path / "c.dot").read_text(encoding="utf-8") == g.dot


def test_unknown_suffix_and_format_are_refused(tmp_path: Path) -> None:
    g = graph(Value(1.0))
    with pytest.raises(ValueError, match=r"Graph.save: the file name must end in .dot.*g\.txt'"):
        g.save(tmp_path / "g.txt")
    assert list(tmp_path.iterdir()) == []  # refused before anything was written
    with pytest.raises(
        ValueError, match=r"Graph.render: fmt must be one of svg, png, pdf, got 'jpg'"
    ):
        g.render("jpg")


@needs_sh
def test_dot_receives_the_text_and_its_output_is_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This fake dot echoes its format flag and then the DOT text it was given.
    _fake_dot(
        tmp_path,
        monkeypatch,
        "sys.stdout.buffer.write(sys.argv[1].encode() + b'\\n' + sys.stdin.buffer.read())",
    )
    g = graph(Value(2.0, label="x").tanh())
    assert g.render("png") == f"-Tpng\n{g.dot}".encode()
    assert g._repr_svg_() == f"-Tsvg\n{g.dot}"
    written = g.save(tmp_path / "g.svg")
    assert written == tmp_path / "g.svg"
    assert written.read_bytes() == f"-Tsvg\n{g.dot}".encode()
    assert (tmp_path / "g.dot").read_text(encoding="utf-8") == g.dot


@needs_sh
def test_a_failing_dot_is_an_error_but_a_quiet_repr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_dot(tmp_path, monkeypatch, "sys.exit('Error: syntax error in line 1')")
    g = graph(Value(2.0))
    with pytest.raises(RuntimeError, match=r"`dot -Tsvg` failed \(1\): Error: syntax error"):
        g.render("svg")
    assert g._repr_svg_() is None


# With the real dot (only where Graphviz is installed).


@needs_dot
def test_real_dot_renders_svg_and_png_with_escaped_labels(tmp_path: Path) -> None:
    y = Value(1.0, label='a<b> & "c"').exp()
    svg = graph(y)._repr_svg_()
    assert svg is not None
    root = ET.fromstring(svg[svg.index("<svg") :])
    texts = " ".join(t for t in root.itertext())
    assert 'a<b> & "c"' in texts
    assert "exp" in texts
    png = graph(y).save(tmp_path / "y.png")
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


# The picture in the docs is what the code draws today.


def test_docs_image_is_up_to_date() -> None:
    g = graph(docs_expression())
    assert (DOCS_IMG / "expression.dot").read_text(encoding="utf-8") == g.dot, (
        "docs/img/expression.dot is stale: regenerate it with "
        "`python -c \"import sys; sys.path.insert(0, 'tests'); import test_viz; "
        'test_viz.save_docs_image()"`'
    )


def save_docs_image() -> Graph:
    """Write docs/img/expression.dot, and expression.svg when dot is installed."""
    g = graph(docs_expression())
    target = DOCS_IMG / ("expression.svg" if shutil.which("dot") else "expression.dot")
    g.save(target)
    return g
