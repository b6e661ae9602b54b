"""Tests for ``minigrad.draw_dot``: micrograd's lecture helper, with and without Graphviz.

Graphviz's absence is simulated by an empty PATH and its presence by a small
fake ``dot`` script (as in test_viz.py), so every branch runs on every machine.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

import minigrad
from fake_dot import fake_dot, hide_dot
from lecture import neuron
from minigrad import Value
from minigrad.teach.viz import Diagram, graph

needs_sh = pytest.mark.skipif(os.name != "posix", reason="the fake `dot` is run by its #! line")


@pytest.fixture
def no_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hide_dot(tmp_path, monkeypatch)


# This fake dot echoes its format flag and then the DOT text it was given.
_ECHO = "sys.stdout.buffer.write(sys.argv[1].encode() + b'\\n' + sys.stdin.buffer.read())"


def _lecture_neuron() -> Value:
    # The lecture's tanh neuron, built with labels as in the lecture.
    o = neuron()["o"]
    o.backward()
    return o


def test_draw_dot_has_the_lectures_signature_and_is_importable_from_minigrad() -> None:
    from minigrad import draw_dot

    assert draw_dot is minigrad.draw_dot
    params = inspect.signature(draw_dot).parameters
    assert list(params)[:3] == ["root", "format", "rankdir"]
    assert params["format"].default == "svg" and params["rankdir"].default == "LR"
    assert "draw_dot" in minigrad.__all__


@pytest.mark.usefixtures("no_dot")
def test_the_lectures_neuron_is_drawn_with_labels_data_and_grads() -> None:
    o = _lecture_neuron()
    dot = minigrad.draw_dot(o)
    assert repr(dot) == "Diagram(values=10, ops=5, constants=0, format='svg', rankdir='LR')"
    # The records of the lecture's picture: label, data and grad, rounded to 4 digits.
    for record in (
        "<td><b>x1</b></td><td>data 2.0</td><td>grad -1.5</td>",
        "<td><b>w1</b></td><td>data -3.0</td><td>grad 1.0</td>",
        "<td><b>x2</b></td><td>data 0.0</td><td>grad 0.5</td>",
        "<td><b>w2</b></td><td>data 1.0</td><td>grad 0.0</td>",
        "<td><b>n</b></td><td>data 0.8814</td><td>grad 0.5</td>",
        "<td><b>o</b></td><td>data 0.7071</td><td>grad 1.0</td>",
    ):
        assert record in dot.source, record
    assert sorted(
        line.split("label=<")[1][:-3] for line in dot.source.splitlines() if "ellipse" in line
    ) == [
        "*",
        "*",
        "+",
        "+",
        "tanh",
    ]
    # Left to right, the notebook shows the same picture as o.graph() does.
    assert dot.source == graph(o).dot == str(dot)
    svg = dot._repr_svg_()
    assert svg == graph(o).svg() and svg.startswith("<svg")


def test_rankdir_is_written_into_the_dot_text() -> None:
    o = _lecture_neuron()
    lr = minigrad.draw_dot(o).source.splitlines()
    for rankdir in ("TB", "RL", "BT"):
        other = minigrad.draw_dot(o, rankdir=rankdir).source.splitlines()
        assert other[1] == f"  graph [rankdir={rankdir}];"
        assert other[:1] + other[2:] == lr[:1] + lr[2:]
    assert lr[1] == "  graph [rankdir=LR];"


@pytest.mark.usefixtures("no_dot")
def test_without_dot_only_svg_and_dot_can_be_asked_for() -> None:
    x = Value(1.0)
    assert minigrad.draw_dot(x, format="dot").format == "dot"
    for fmt in ("png", "pdf"):
        with pytest.raises(ValueError, match=rf"draw_dot: format '{fmt}' needs Graphviz's `dot`"):
            minigrad.draw_dot(x, format=fmt)
    with pytest.raises(ValueError, match=r"must be 'svg' or 'dot' \(or, with Graphviz.*got 'jpeg'"):
        minigrad.draw_dot(x, format="jpeg")
    with pytest.raises(ValueError, match=r"must be 'svg' or 'dot'.*got 'SVG'"):
        minigrad.draw_dot(x, format="SVG")


def test_bad_rankdir_format_and_root_are_refused_naming_the_value() -> None:
    x = Value(1.0)
    with pytest.raises(
        ValueError, match=r"^draw_dot: rankdir must be one of 'LR', 'TB', 'RL', 'BT', got 'lr'$"
    ):
        minigrad.draw_dot(x, rankdir="lr")
    with pytest.raises(
        TypeError, match=r"^draw_dot: rankdir must be a str such as 'LR', got NoneType None$"
    ):
        minigrad.draw_dot(x, rankdir=None)  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"^draw_dot: format must be a str such as 'svg', got int 1$"
    ):
        minigrad.draw_dot(x, format=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="graph: root"):
        minigrad.draw_dot(1.0)  # type: ignore[arg-type]


@pytest.mark.usefixtures("no_dot")
def test_without_dot_render_writes_the_dot_text_and_minigrads_svg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    x = Value(2.0, label="x")
    dot = minigrad.draw_dot(x.tanh())
    # dot.render('gout'), as graphviz: the DOT text in gout, the picture in gout.svg.
    assert dot.render("gout") == "gout.svg"
    assert Path("gout").read_text(encoding="utf-8") == dot.source
    assert Path("gout.svg").read_text(encoding="utf-8") == dot.graph.svg()
    assert dot.render("g2", "out", format="dot", cleanup=True) == str(Path("out", "g2.dot"))
    assert sorted(p.name for p in Path("out").iterdir()) == ["g2.dot"]
    assert Path("out", "g2.dot").read_text(encoding="utf-8") == dot.source
    assert dot.save() == "Digraph.gv"
    assert Path("Digraph.gv").read_text(encoding="utf-8") == dot.source
    assert dot.pipe() == dot.graph.svg().encode() and dot.pipe("dot") == dot.source.encode()
    with pytest.raises(ValueError, match=r"Diagram.render: format 'png' needs Graphviz's `dot`"):
        dot.render("g3", format="png")
    assert not Path("g3").exists()  # refused before anything was written


@pytest.mark.usefixtures("no_dot")
def test_without_dot_another_rankdir_is_still_shown_left_to_right() -> None:
    o = _lecture_neuron()
    dot = minigrad.draw_dot(o, rankdir="TB")
    assert dot._repr_svg_() == graph(o).svg()
    assert "rankdir=TB" in dot.source


@needs_sh
def test_with_dot_png_is_rendered_by_it_from_the_text_with_the_rankdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dot(tmp_path, monkeypatch, _ECHO)
    monkeypatch.chdir(tmp_path)
    dot = minigrad.draw_dot(Value(1.0, label="x").exp(), format="png", rankdir="BT")
    assert dot.render("g") == "g.png"
    assert Path("g.png").read_bytes() == f"-Tpng\n{dot.source}".encode()
    assert "rankdir=BT" in dot.source
    # Jupyter gets Graphviz's SVG for a rankdir minigrad does not draw itself ...
    assert dot._repr_svg_() == f"-Tsvg\n{dot.source}"
    # ... and minigrad's own drawing left to right, as Graph does.
    lr = minigrad.draw_dot(Value(1.0, label="x").exp())
    assert lr._repr_svg_() == lr.graph.svg()


@needs_sh
def test_a_failing_dot_still_leaves_the_notebook_a_picture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dot(tmp_path, monkeypatch, "sys.exit('Error: syntax error in line 1')")
    dot = minigrad.draw_dot(Value(1.0).exp(), rankdir="TB")
    assert dot._repr_svg_() == dot.graph.svg()
    with pytest.raises(
        RuntimeError, match=r"Diagram.pipe: `dot -Tpng` failed \(1\): Error: syntax"
    ):
        dot.pipe("png")


def test_a_diagram_is_built_from_a_graph_as_draw_dot_builds_it() -> None:
    g = graph(Value(3.0) * 2)
    d = Diagram(g, "dot", "RL")
    assert (d.graph, d.format, d.rankdir) == (g, "dot", "RL")
    with pytest.raises(ValueError, match=r"^Diagram: rankdir must be one of .* got 'XY'$"):
        Diagram(g, "svg", "XY")
