"""Tests for minigrad.viz: DOT structure, escaping, the cap, and rendering with or without dot.

Everything here but the tests marked ``needs_dot`` runs without Graphviz: its
absence is simulated by an empty PATH, and its presence by a small fake
``dot`` script, so both branches of the code are tested on every machine.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fake_dot import fake_dot, hide_dot
from minigrad import Rule, Value, toposort
from minigrad.teach.nn import MLP
from minigrad.teach.viz import DotNotFoundError, Graph, graph
from minigrad.teach.viz import drawing as viz_drawing

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
        ([], 10, ValueError, "graph: root is empty; give at least one Value"),
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
    hide_dot(tmp_path, monkeypatch)


@pytest.mark.usefixtures("no_dot")
def test_without_dot_the_svg_repr_is_minigrads_own_drawing() -> None:
    g = graph(Value(1.0, label="x").exp())
    svg = g._repr_svg_()
    assert isinstance(svg, str)
    assert svg == g.svg()
    drawing = Drawing(svg)
    assert set(drawing.nodes) == {"v0", "v0op", "v1"}


@pytest.mark.usefixtures("no_dot")
def test_without_dot_saving_a_picture_names_the_missing_program(tmp_path: Path) -> None:
    g = graph(Value(1.0).exp())
    target = tmp_path / "out" / "g.png"
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
def test_without_dot_an_svg_is_saved_all_the_same(tmp_path: Path) -> None:
    g = graph(Value(1.0, label="x").exp())
    assert g.save(tmp_path / "g.svg") == tmp_path / "g.svg"
    assert (tmp_path / "g.svg").read_text(encoding="utf-8") == g.svg()
    assert (tmp_path / "g.dot").read_text(encoding="utf-8") == g.dot


@pytest.mark.usefixtures("no_dot")
def test_without_dot_render_raises_and_dot_files_are_still_written(tmp_path: Path) -> None:
    g = graph(Value(1.0).exp())
    with pytest.raises(DotNotFoundError, match="`dot`"):
        g.render("png")
    # Asked for dot's SVG, the message points to the one that needs no dot.
    with pytest.raises(DotNotFoundError, match=r"Graph\.svg\(\) draws an SVG without Graphviz"):
        g.render("svg")
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
    fake_dot(
        tmp_path,
        monkeypatch,
        "sys.stdout.buffer.write(sys.argv[1].encode() + b'\\n' + sys.stdin.buffer.read())",
    )
    g = graph(Value(2.0, label="x").tanh())
    assert g.render("png") == f"-Tpng\n{g.dot}".encode()
    assert g.render("svg") == f"-Tsvg\n{g.dot}".encode()
    # Jupyter gets minigrad's own drawing even where dot is installed.
    assert g._repr_svg_() == g.svg()
    written = g.save(tmp_path / "g.svg")
    assert written == tmp_path / "g.svg"
    assert written.read_bytes() == f"-Tsvg\n{g.dot}".encode()
    assert (tmp_path / "g.dot").read_text(encoding="utf-8") == g.dot


@needs_sh
def test_a_failing_dot_is_an_error_but_the_notebook_still_gets_a_picture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dot(tmp_path, monkeypatch, "sys.exit('Error: syntax error in line 1')")
    g = graph(Value(2.0))
    with pytest.raises(RuntimeError, match=r"`dot -Tsvg` failed \(1\): Error: syntax error"):
        g.render("svg")
    svg = g._repr_svg_()
    assert svg == g.svg()
    assert list(Drawing(svg).nodes) == ["v0"]


# With the real dot (only where Graphviz is installed).


@needs_dot
def test_real_dot_renders_svg_and_png_with_escaped_labels(tmp_path: Path) -> None:
    y = Value(1.0, label='a<b> & "c"').exp()
    svg = graph(y).render("svg").decode("utf-8")
    root = ET.fromstring(svg[svg.index("<svg") :])
    texts = " ".join(t for t in root.itertext())
    assert 'a<b> & "c"' in texts
    assert "exp" in texts
    png = graph(y).save(tmp_path / "y.png")
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@needs_dot
def test_with_real_dot_the_svg_repr_is_still_an_svg() -> None:
    g = graph(_lecture_example())
    svg = g._repr_svg_()
    assert svg == g.svg()
    assert len(Drawing(svg).nodes) == len(Parsed(g.dot).nodes)


# The SVG drawn without Graphviz.

SVG = "{http://www.w3.org/2000/svg}"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class Box:
    """A node's outline in the SVG: its bounding box and whether it is an ellipse."""

    def __init__(self, shape: ET.Element) -> None:
        self.ellipse = shape.tag == f"{SVG}ellipse"
        if self.ellipse:
            cx, cy = float(shape.get("cx", "")), float(shape.get("cy", ""))
            rx, ry = float(shape.get("rx", "")), float(shape.get("ry", ""))
            self.left, self.top, self.right, self.bottom = cx - rx, cy - ry, cx + rx, cy + ry
        elif shape.tag == f"{SVG}rect":
            x, y = float(shape.get("x", "")), float(shape.get("y", ""))
            w, h = float(shape.get("width", "")), float(shape.get("height", ""))
            self.left, self.top, self.right, self.bottom = x, y, x + w, y + h
        else:
            xs, ys = _points(shape.get("points", ""))
            self.left, self.top, self.right, self.bottom = min(xs), min(ys), max(xs), max(ys)
        assert self.right > self.left and self.bottom > self.top

    @property
    def center(self) -> tuple[float, float]:
        return (self.left + self.right) / 2, (self.top + self.bottom) / 2

    def overlaps(self, other: Box) -> bool:
        return not (
            self.right <= other.left
            or other.right <= self.left
            or self.bottom <= other.top
            or other.bottom <= self.top
        )

    def on_border(self, x: float, y: float, side: str) -> bool:
        """Whether (x, y) is on the left or right side of this outline (to 0.1 px rounding)."""
        if not self.top <= y <= self.bottom:
            return False
        if self.ellipse:
            cx, cy = self.center
            rx, ry = (self.right - self.left) / 2, (self.bottom - self.top) / 2
            on = abs(math.hypot((x - cx) / rx, (y - cy) / ry) - 1.0) < 0.02
            return on and (x < cx if side == "left" else x > cx)
        return abs(x - (self.left if side == "left" else self.right)) < 0.11


def _points(text: str) -> tuple[list[float], list[float]]:
    numbers = [float(v) for v in _NUMBER.findall(text)]
    return numbers[0::2], numbers[1::2]


class Line:
    """An edge of the SVG: its ends, its path as points, its label."""

    def __init__(self, group: ET.Element) -> None:
        title = group.findtext(f"{SVG}title", "")
        self.src, self.dst = title.split("->")
        path = group.find(f"{SVG}path")
        assert path is not None
        self.dashed = path.get("stroke-dasharray") is not None
        self.points = _path_points(path.get("d", ""))
        arrow = group.find(f"{SVG}polygon")
        assert arrow is not None
        xs, ys = _points(arrow.get("points", ""))
        self.tip = (xs[0], ys[0])
        self.arrow_base = xs[1:]
        label = group.find(f"{SVG}text")
        self.label = "" if label is None else "".join(label.itertext())
        self.label_at = (0.0, 0.0) if label is None else _xy(label)


def _xy(text: ET.Element) -> tuple[float, float]:
    return float(text.get("x", "")), float(text.get("y", ""))


def _path_points(d: str) -> list[tuple[float, float]]:
    """The points along an SVG path of M, H and C commands; each cubic sampled 16 times."""
    points: list[tuple[float, float]] = []
    for command, args in re.findall(r"([A-Za-z])([^A-Za-z]*)", d):
        v = [float(x) for x in _NUMBER.findall(args)]
        if command == "M":
            points.append((v[0], v[1]))
        elif command == "H":
            points.append((v[0], points[-1][1]))
        elif command == "C":
            p0, p1, p2, p3 = points[-1], (v[0], v[1]), (v[2], v[3]), (v[4], v[5])
            for i in range(1, 17):
                t = i / 16
                c = ((1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t * t, t**3)
                points.append(
                    (
                        c[0] * p0[0] + c[1] * p1[0] + c[2] * p2[0] + c[3] * p3[0],
                        c[0] * p0[1] + c[1] * p1[1] + c[2] * p2[1] + c[3] * p3[1],
                    )
                )
        else:
            raise AssertionError(f"unexpected path command {command!r} in {d!r}")
    return points


class Drawing:
    """minigrad's SVG read back with ElementTree (which fails unless it is well-formed XML)."""

    def __init__(self, svg: str) -> None:
        self.root = ET.fromstring(svg)
        assert self.root.tag == f"{SVG}svg"
        self.width = float(self.root.get("width", ""))
        self.height = float(self.root.get("height", ""))
        assert self.root.get("viewBox") == f"0 0 {self.root.get('width')} {self.root.get('height')}"
        self.nodes: dict[str, Box] = {}
        self.texts: dict[str, list[str]] = {}
        self.text_anchors: dict[str, list[tuple[float, float]]] = {}
        self.lines: list[Line] = []
        for group in self.root.iter(f"{SVG}g"):
            if group.get("class") == "edge":
                self.lines.append(Line(group))
                continue
            assert group.get("class") == "node"
            name = group.findtext(f"{SVG}title", "")
            assert name not in self.nodes, f"node {name} drawn twice"
            shape = next(
                child
                for child in group
                if child.tag in (f"{SVG}rect", f"{SVG}ellipse", f"{SVG}polygon")
            )
            self.nodes[name] = Box(shape)
            texts = group.findall(f"{SVG}text")
            self.texts[name] = ["".join(t.itertext()) for t in texts]
            self.text_anchors[name] = [_xy(t) for t in texts]

    def crossings(self) -> int:
        """How many pairs of edges cross, measured on the drawn curves."""
        segments = [list(itertools.pairwise(line.points)) for line in self.lines]
        return sum(
            1
            for i, j in itertools.combinations(range(len(segments)), 2)
            if any(_cross(s, t) for s in segments[i] for t in segments[j])
        )


Point = tuple[float, float]


def _cross(s: tuple[Point, Point], t: tuple[Point, Point]) -> bool:
    def side(p: Point, q: Point, r: Point) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    return side(*t, s[0]) * side(*t, s[1]) < 0 and side(*s, t[0]) * side(*s, t[1]) < 0


def _pictures() -> list[Graph]:
    """Graphs of every kind: constants, named arguments, a repeated argument, the cap."""
    x = Value(3.0, label="x")
    mlp = MLP(2, [4, 4, 1], rng=random.Random(0))
    y = mlp.forward([1.0, -2.0])[0]
    y.backward()
    return [
        graph(_lecture_example()),
        graph(docs_expression()),
        graph(x * x - 1.0),
        graph([x.exp(), (2.0 - x) / x]),
        graph(Value(1.0)),
        graph(y, max_nodes=20),
        graph(y, max_nodes=100),
    ]


@pytest.mark.parametrize("g", _pictures(), ids=repr)
def test_svg_shows_every_node_and_edge_of_the_dot_text(g: Graph) -> None:
    parsed = Parsed(g.dot)
    drawing = Drawing(g.svg())
    assert list(drawing.nodes) == list(parsed.nodes)
    for name, attrs in parsed.nodes.items():
        (label,) = _labels(f"x [{attrs}]")
        assert "".join(drawing.texts[name]) == _text(label), name
    # Each edge once, with its argument name and its style.
    in_dot = sorted(
        (
            src,
            dst,
            _text(_labels(f"x [{attrs}]")[0]) if "label=" in attrs else "",
            attrs == "style=dashed",
        )
        for src, dst, attrs in parsed.edges
    )
    in_svg = sorted((line.src, line.dst, line.label, line.dashed) for line in drawing.lines)
    assert in_svg == in_dot


@pytest.mark.parametrize("g", _pictures(), ids=repr)
def test_svg_boxes_do_not_overlap_and_hold_their_text(g: Graph) -> None:
    drawing = Drawing(g.svg())
    boxes = list(drawing.nodes.items())
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        assert not box_a.overlaps(box_b), f"{a} and {b} overlap"
    for name, box in boxes:
        for x, y in drawing.text_anchors[name]:
            assert box.left < x < box.right and box.top < y < box.bottom, name


@pytest.mark.parametrize("g", _pictures(), ids=repr)
def test_svg_edges_run_rightwards_from_border_to_border(g: Graph) -> None:
    drawing = Drawing(g.svg())
    for line in drawing.lines:
        src, dst = drawing.nodes[line.src], drawing.nodes[line.dst]
        # Ranks increase along every edge: the tail lies wholly left of the head.
        assert src.right < dst.left, f"{line.src} -> {line.dst}"
        assert src.on_border(*line.points[0], "right"), f"{line.src} -> {line.dst} starts off"
        assert dst.on_border(*line.tip, "left"), f"{line.src} -> {line.dst} ends off"
        # The path reaches the arrowhead, which points right, into the head.
        assert line.points[-1][0] == pytest.approx(line.arrow_base[0], abs=0.11)
        assert line.points[-1][1] == pytest.approx(line.tip[1], abs=0.11)
        assert all(base < line.tip[0] for base in line.arrow_base)
        # Never backwards: every point of the path lies between the two boxes' sides.
        assert all(src.right - 0.11 <= x <= dst.left + 0.11 for x, _ in line.points)


def test_svg_of_a_hundred_values_stays_on_its_canvas() -> None:
    model = MLP(2, [8, 8, 1], rng=random.Random(1))
    g = graph(model.forward([0.5, -1.5])[0], max_nodes=100)
    assert (g.values, g.omitted > 0) == (100, True)
    drawing = Drawing(g.svg())
    assert len(drawing.nodes) == len(Parsed(g.dot).nodes)
    inside = [
        *((box.left, box.top) for box in drawing.nodes.values()),
        *((box.right, box.bottom) for box in drawing.nodes.values()),
        *(xy for anchors in drawing.text_anchors.values() for xy in anchors),
        *(xy for line in drawing.lines for xy in line.points),
        *(line.tip for line in drawing.lines),
    ]
    assert all(0 <= x <= drawing.width and 0 <= y <= drawing.height for x, y in inside)
    # Not a strip of boxes one above the other: ranks spread left to right.
    assert drawing.width > drawing.height


def test_svg_labels_are_escaped() -> None:
    nasty = "<b>x</b> & \"q\" 'it' ]]> \nnext"
    odd = Rule("<op>&", lambda x, y: x - y, (1.0, -1.0), arg_names=("u", "v"))
    g = graph(odd(Value(1.0, label=nasty), 2.0))
    svg = g.svg()
    assert "<b>" not in svg and "]]>" not in svg and "& " not in svg
    drawing = Drawing(svg)  # parses: the escaping kept it well-formed
    shown = "<b>x</b> & \"q\" 'it' ]]> \\nnext"
    assert drawing.texts["v1"] == [shown, "data 1.0", "grad 0.0"]
    assert drawing.texts["v0op"] == ["<op>&"]
    assert sorted(line.label for line in drawing.lines if line.dst == "v0op") == ["u", "v"]


def test_ordering_removes_the_crossings_of_a_naive_order() -> None:
    # Two products whose shared inputs come in crossed orders: drawn in the
    # order the DOT text lists the nodes, their edges cross seven times.
    a, b, c = Value(1.0, label="a"), Value(2.0, label="b"), Value(3.0, label="c")
    g = graph(b * (b * c) + a * (c * a))
    # sweeps=0 keeps that order: each rank as the DOT text lists it.
    naive = Drawing(viz_drawing._svg(g._scene, sweeps=0))
    ordered = Drawing(g.svg())
    assert naive.crossings() > 0
    assert ordered.crossings() < naive.crossings()
    assert ordered.crossings() == 0


def test_arguments_are_drawn_in_order_top_to_bottom() -> None:
    x = Value(5.0, label="x")
    drawing = Drawing(graph(x - 1.0).svg())
    into = {line.label: line.tip[1] for line in drawing.lines if line.dst == "v0op"}
    assert into["x"] < into["y"]


def test_argument_names_stay_clear_of_the_other_edges() -> None:
    partials = (lambda a, b, c, out: b, lambda a, b, c, out: a, lambda a, b, c, out: 1.0)
    fma = Rule("fma", lambda a, b, c: a * b + c, partials, arg_names=("a", "b", "c"))
    x = Value(2.0, label="x")
    for g in (graph(fma(x, Value(3.0), 0.5) - x), graph(docs_expression())):
        drawing = Drawing(g.svg())
        for line in drawing.lines:
            if not line.label:
                continue
            x_at, baseline = line.label_at
            # The name sits just before the arrowhead, over (or under) the edge's
            # own level stretch, and no other edge into that node runs through it.
            assert line.tip[0] - 12 < x_at < line.tip[0]
            assert 2 <= abs(baseline - line.tip[1]) <= 10
            for other in drawing.lines:
                if other is not line and other.dst == line.dst:
                    assert not baseline - 8 <= other.tip[1] <= baseline + 1, line.label


# The pictures in the docs are what the code draws today.


def test_docs_image_is_up_to_date() -> None:
    g = graph(docs_expression())
    how = (
        "regenerate it with `python -c \"import sys; sys.path.insert(0, 'tests'); "
        'import test_viz; test_viz.save_docs_image()"`'
    )
    assert (DOCS_IMG / "expression.dot").read_text(encoding="utf-8") == g.dot, (
        f"docs/img/expression.dot is stale: {how}"
    )
    assert (DOCS_IMG / "expression_stdlib.svg").read_text(encoding="utf-8") == g.svg(), (
        f"docs/img/expression_stdlib.svg is stale: {how}"
    )


def save_docs_image() -> Graph:
    """Write docs/img/expression.dot and expression_stdlib.svg (and expression.svg with dot)."""
    g = graph(docs_expression())
    (DOCS_IMG / "expression_stdlib.svg").write_text(g.svg(), encoding="utf-8")
    target = DOCS_IMG / ("expression.svg" if shutil.which("dot") else "expression.dot")
    g.save(target)
    return g
