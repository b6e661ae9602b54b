"""The teaching notebook is stored with its outputs, and they are what it computes today.

``tools/notebook.py`` runs the code cells in a real Jupyter kernel (nbclient
and ipykernel), on a bare machine (no Graphviz, no matplotlib), so the outputs
are made by IPython's display hooks and formatters, as in Jupyter. These tests
run it once, compare what it shows with the outputs stored in
``docs/notebook.ipynb`` (text and numbers exactly, pictures by structure) and
check that it shows what its text promises, reading the kernel's variables
back through expressions the tool evaluates there after the cells.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from minigrad.teach import BackwardStepper
from scripts import load_script
from test_stepper import lecture_neuron


def _load_tool() -> ModuleType:
    return load_script("notebook_tool", "tools/notebook.py")


tool = _load_tool()
NOTEBOOK: Path = tool.NOTEBOOK
SVG = "{http://www.w3.org/2000/svg}"


def _load() -> dict[str, Any]:
    nb = tool.load(NOTEBOOK)
    assert isinstance(nb, dict)
    return nb


def _cells() -> list[dict[str, Any]]:
    cells = _load()["cells"]
    assert isinstance(cells, list)
    return cells


def _code_ids() -> list[str]:
    return [cell["id"] for cell in _cells() if cell["cell_type"] == "code"]


#: What the tests read from the kernel after the cells, by expression.
ASKED = (
    "(a.data, a.grad, b.data, b.grad)",
    "(dx.data, dxx.data, dxxx.data)",
    "(len(points), labels)",
    "(steps, losses, accuracies, accuracy)",
    "(g.values, g.ops, g.dot)",
    "g._repr_svg_() == g.svg()",
    "g",
)


class Ran:
    """One run of the notebook: the outputs of each code cell by id, and values read back."""

    def __init__(self) -> None:
        ran = tool.execute(_load(), evaluate=ASKED)
        self.outputs: list[list[dict[str, Any]]] = ran.outputs
        self.values: dict[str, str] = ran.values
        self.minigrad: str = ran.minigrad
        self.by_id = dict(zip(_code_ids(), self.outputs, strict=True))

    def value(self, expression: str) -> Any:
        """The value of ``expression`` in the kernel after the last cell (a Python literal)."""
        return ast.literal_eval(self.values[expression])

    def stdout(self, cell_id: str | None = None) -> str:
        cells = self.outputs if cell_id is None else [self.by_id[cell_id]]
        return "".join(
            "".join(o["text"])
            for outputs in cells
            for o in outputs
            if o["output_type"] == "stream" and o["name"] == "stdout"
        )

    def shown(self, cell_id: str) -> dict[str, str]:
        """What the cell's last line shows: MIME type -> text."""
        (result,) = [o for o in self.by_id[cell_id] if o["output_type"] == "execute_result"]
        return {mime: "".join(lines) for mime, lines in result["data"].items()}

    def svg(self, cell_id: str) -> ET.Element:
        return ET.fromstring(self.shown(cell_id)["image/svg+xml"])


@pytest.fixture(scope="module")
def run() -> Ran:
    return Ran()


# The file.


def test_the_json_is_an_nbformat_4_notebook_stored_with_its_outputs() -> None:
    nb = _load()
    assert nb["nbformat"] == 4
    minor = nb["nbformat_minor"]
    assert isinstance(minor, int)
    assert minor >= 5  # 4.5 is the version where every cell needs an id
    metadata = nb["metadata"]
    assert isinstance(metadata, dict)
    assert metadata["kernelspec"]["name"] == "python3"
    ids = []
    count = 0
    for cell in _cells():
        assert cell["cell_type"] in {"markdown", "code"}
        assert isinstance(cell["metadata"], dict)
        cell_id = cell["id"]
        assert isinstance(cell_id, str)
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", cell_id)
        ids.append(cell_id)
        tool.source(cell)
        if cell["cell_type"] == "code":
            # Stored executed, in order, as "Run All" leaves it.
            count += 1
            assert cell["execution_count"] == count
            for output in cell["outputs"]:
                _check_output(output, count)
        else:
            assert "outputs" not in cell
    assert len(ids) == len(set(ids))
    kinds = [cell["cell_type"] for cell in _cells()]
    assert kinds[0] == "markdown"
    assert kinds.count("code") >= 5
    # Saved as Jupyter saves it, so running the tool on an unchanged notebook changes nothing.
    assert NOTEBOOK.read_text(encoding="utf-8") == tool.dumps(nb)


def _check_output(output: dict[str, Any], count: int) -> None:
    if output["output_type"] == "stream":
        assert output["name"] in ("stdout", "stderr")
        lines = output["text"]
    else:
        assert output["output_type"] in ("execute_result", "display_data")
        if output["output_type"] == "execute_result":
            assert output["execution_count"] == count
        assert output["metadata"] == {}
        assert "text/plain" in output["data"]
        assert set(output["data"]) <= {"text/plain", "text/html", "image/svg+xml"}
        lines = [line for value in output["data"].values() for line in value]
    assert all(isinstance(line, str) for line in lines)


def test_no_cell_needs_ipython() -> None:
    for cell in _cells():
        if cell["cell_type"] == "code":
            for line in tool.source(cell).splitlines():
                assert not line.lstrip().startswith(("%", "!")), line


def test_the_stored_outputs_are_what_the_notebook_shows_today(run: Ran) -> None:
    stale = tool.differences(tool.stored_outputs(_load()), run.outputs)
    assert stale == [], f"docs/notebook.ipynb is stale; run `{tool.REGENERATE}`"


# What it shows.


def test_backward_gives_the_gradients_the_text_derives(run: Ran) -> None:
    a_data, a_grad, b_data, b_grad = run.value("(a.data, a.grad, b.data, b.grad)")
    assert a_grad == pytest.approx(b_data + 1 - math.tanh(a_data) ** 2, rel=1e-12)
    assert b_grad == a_data
    printed = run.stdout()
    assert "dc/da = -2.9293   dc/db = 2.0000" in printed
    assert "by hand:      dc/da = -2.9293" in printed


def test_derivatives_of_x_cubed(run: Ran) -> None:
    assert run.value("(dx.data, dxx.data, dxxx.data)") == (27.0, 18.0, 6.0)
    assert run.shown("higher")["text/plain"] == "(27.0, 18.0, 6.0)"


def test_a_check_passes_and_a_wrong_rule_is_caught(run: Ran) -> None:
    passed = run.shown("check")["text/html"]
    assert "gradcheck passed" in passed
    assert "<td>1-3</td>" in passed  # orders 1 to 3
    assert run.stdout("wrong") == "passed: False\n"
    caught = run.shown("wrong")["text/html"]
    assert "gradcheck failed" in caught
    assert "cause: op &#x27;bad_sin&#x27; at (0.7)" in caught


def test_the_data_is_drawn_point_by_point(run: Ran) -> None:
    points, labels = run.value("(len(points), labels)")
    dots = [c for c in run.svg("data").iter(f"{SVG}circle") if c.get("stroke-width") == "0.8"]
    assert len(dots) == points == 60
    assert [d.get("fill") for d in dots] == ["#1f77b4" if y < 0 else "#d62728" for y in labels]


def test_the_network_learns_with_a_progress_line_every_5_steps(run: Ran) -> None:
    steps, losses, accuracies, accuracy = run.value("(steps, losses, accuracies, accuracy)")
    assert isinstance(steps, int)
    assert len(losses) == len(accuracies) == steps + 1
    assert losses[-1] < 0.5 * losses[0]
    assert isinstance(accuracy, float)
    assert accuracy >= 0.95
    printed = run.stdout("mlp").splitlines()
    progress = [
        re.fullmatch(r"step +(\d+)  loss (\d\.\d{4})  accuracy (\d+)%", line)
        for line in printed[:-1]
    ]
    assert [int(m[1]) for m in progress if m] == list(range(0, steps, 5))
    for m in progress:
        assert m is not None
        assert m[2] == f"{losses[int(m[1])]:.4f}"
    assert re.fullmatch(rf"after {steps} steps: loss \d\.\d{{4}}  accuracy \d+%", printed[-1])


def test_the_loss_curve_has_a_point_per_step(run: Ran) -> None:
    steps = run.value("(steps, losses, accuracies, accuracy)")[0]
    assert isinstance(steps, int)
    lines = list(run.svg("curve").iter(f"{SVG}polyline"))
    assert [len((line.get("points") or "").split()) for line in lines] == [steps + 1] * 2
    texts = [t.text for t in run.svg("curve").iter(f"{SVG}text")]
    assert "loss" in texts
    assert "accuracy" in texts


def test_the_decision_boundary_is_drawn_with_the_standard_library(run: Ran) -> None:
    svg = run.svg("boundary")
    assert len(list(svg.iter(f"{SVG}path"))) == 1  # the +1 region
    assert len([c for c in svg.iter(f"{SVG}circle") if c.get("stroke-width") == "0.8"]) == 60
    # On a bare machine the matplotlib cell says so instead of failing.
    assert run.stdout("matplotlib") == (
        "matplotlib is not installed here: the SVG picture above needs nothing\n"
    )


def test_the_model_is_saved_and_loaded_back(run: Ran) -> None:
    printed = run.stdout("save")
    assert printed.startswith('{"format": "minigrad.nn.MLP", "version": 1, "nin": 2,')
    assert printed.endswith("MLP(2, [16, 16, 1], nonlin='relu') gives the same scores: True\n")


def test_the_graph_cell_makes_a_graph_and_prints_its_dot_text_last(run: Ran) -> None:
    values, ops, dot = run.value("(g.values, g.ops, g.dot)")
    assert (values, ops) == (5, 3)  # a, b, a*b, tanh(a), c
    assert "<td><b>c</b></td>" in dot
    assert run.stdout().rstrip().endswith(dot.rstrip())
    assert run.shown("graph")["text/plain"] == run.values["g"]  # repr(g), the kernel's
    assert run.values["g"].startswith(f"Graph(values={values}, ops={ops}, ")
    # minigrad's own picture, with or without Graphviz installed.
    assert run.value("g._repr_svg_() == g.svg()") is True


def test_the_stepper_cell_steps_through_the_lectures_neuron(run: Ran) -> None:
    shown = run.shown("stepper")
    assert shown["text/plain"] == "BackwardStepper(values=10, steps=6)"
    html = shown["text/html"]
    found = re.search(r"var data = (\{.*?\});\n", html)
    assert found is not None
    captions = [step["caption"] for step in json.loads(found[1])["steps"]]
    # The same steps as a stepper of the lecture's neuron made here, in pytest's process.
    o, _ = lecture_neuron()
    mine = BackwardStepper(o).steps
    assert captions == [f"step {s.number} of 5: {s.caption}" for s in mine]
    assert captions[4] == (
        "step 4 of 5: x1w1._backward(): x1.grad += -1.4999999999999996, "
        "w1.grad += 0.9999999999999997"
    )
    assert html.count("<svg") == 1
    assert "Next" in html and 'type="range"' in html


def test_the_graph_cell_shows_a_picture_without_graphviz(run: Ran) -> None:
    svg = run.svg("graph")
    text = " ".join(t.strip() for t in svg.itertext())
    for word in ("a", "b", "c", "tanh"):
        assert re.search(rf"\b{word}\b", text), word


# The tool: a bare machine, the display of a cell, the staleness check.


def test_the_bare_machine_has_no_dot_and_no_pytest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_dot(tmp_path, monkeypatch)
    path, cwd = os.environ["PATH"], os.getcwd()
    assert "PYTEST_CURRENT_TEST" in os.environ
    with tool.bare_machine() as folder:
        assert shutil.which("dot") is None
        assert str(fake) not in os.environ["PATH"].split(os.pathsep)
        assert list(folder.iterdir()) == []
        assert "PYTEST_CURRENT_TEST" not in os.environ
    assert not folder.exists()
    assert os.environ["PATH"] == path
    assert os.getcwd() == cwd
    assert "PYTEST_CURRENT_TEST" in os.environ


def _fake_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``dot`` first on PATH, which the bare machine must take away."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "dot").write_text("#!/bin/sh\n", encoding="utf-8")
    (fake / "dot").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ.get('PATH', '')}")
    assert shutil.which("dot") == str(fake / "dot")
    return fake


def _notebook(*sources: str) -> dict[str, Any]:
    return {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"c{n}",
                "metadata": {},
                "outputs": [],
                "source": text,
            }
            for n, text in enumerate(sources)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def test_the_kernel_is_this_python_on_a_bare_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_dot(tmp_path, monkeypatch)
    ran = tool.execute(
        _notebook(
            "import os, shutil, sys\n"
            "print(sys.executable)\n"
            "print(shutil.which('dot'), os.listdir('.'), 'PYTEST_CURRENT_TEST' in os.environ)",
            "try:\n    import matplotlib.pyplot\nexcept ImportError:\n    print('no matplotlib')",
            # The kernel's setup leaves no name behind ('sys' is this notebook's own).
            "print([name for name in ('warnings', 'matplotlib') if name in dir()])",
            "import warnings\nfor _ in range(2):\n    warnings.warn('again')",
        ),
        evaluate=["sys.executable"],
    )
    printed = ["".join(o["text"]) for cell in ran.outputs for o in cell]
    kernel = ast.literal_eval(ran.values["sys.executable"])
    assert kernel == sys.executable
    assert printed[:3] == [f"{kernel}\nNone [] False\n", "no matplotlib\n", "[]\n"]
    # Every warning, every time: the first run and a rerun print the same.
    assert ran.outputs[3][0]["name"] == "stderr"
    assert printed[3].count("UserWarning: again") == 2
    assert ran.minigrad.startswith("minigrad ")


def test_a_cell_shows_what_it_prints_and_what_ipython_displays() -> None:
    shows = (
        "class Shows:\n"
        "    def __init__(self, svg):\n"
        "        self.svg = svg\n"
        "    def _repr_svg_(self):\n"
        "        return self.svg\n"
        "    def _repr_html_(self):\n"
        "        return '<b>html</b>'\n"
        "    def __repr__(self):\n"
        "        return 'Shows()'"
    )
    ran = tool.execute(
        _notebook(
            shows,
            "print('one')\nprint('two')\n1 + 1",
            "x = 3",
            "None",
            "import sys\nprint('oops', file=sys.stderr)\nShows('<svg/>')",
            "Shows(None)",
            "x",
            "display(Shows(None))\nx + 1;",
        ),
        evaluate=["x"],
    )
    outputs = ran.outputs
    assert outputs[0] == []  # a class definition shows nothing
    assert outputs[1] == [
        {"name": "stdout", "output_type": "stream", "text": ["one\n", "two\n"]},
        {
            "data": {"text/plain": ["2"]},
            "execution_count": 2,
            "metadata": {},
            "output_type": "execute_result",
        },
    ]
    assert outputs[2] == []  # an assignment shows nothing
    assert outputs[3] == []  # nor does None
    assert outputs[4][0] == {"name": "stderr", "output_type": "stream", "text": ["oops\n"]}
    assert outputs[4][1]["data"] == {
        "text/plain": ["Shows()"],
        "image/svg+xml": ["<svg/>"],
        "text/html": ["<b>html</b>"],
    }
    # _repr_svg_ returning None: IPython shows the other types.
    assert outputs[5][0]["data"] == {"text/plain": ["Shows()"], "text/html": ["<b>html</b>"]}
    assert outputs[6][0]["data"] == {"text/plain": ["3"]}
    # display() is IPython's, and a trailing ; hides the last value, as in Jupyter.
    assert outputs[7] == [
        {
            "data": {"text/plain": ["Shows()"], "text/html": ["<b>html</b>"]},
            "metadata": {},
            "output_type": "display_data",
        }
    ]
    assert ran.values == {"x": "3"}


def test_a_cell_that_raises_is_named() -> None:
    with pytest.raises(RuntimeError, match=r"notebook cell 'c1' raised ZeroDivisionError"):
        tool.execute(_notebook("y = 1", "print('before')\n1 / 0"))


def _result(svg: str) -> list[list[dict[str, Any]]]:
    return [
        [
            {
                "data": {"image/svg+xml": [svg], "text/plain": ["P"]},
                "execution_count": 1,
                "metadata": {},
                "output_type": "execute_result",
            }
        ]
    ]


PICTURE = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50">'
    '<circle cx="10.5" cy="20.25" r="4" fill="#1f77b4"/>'
    '<polyline points="1.0,2.0 3.0,4.0" stroke="#d62728"/>'
    '<text x="5" y="6" text-anchor="end">0.5</text></svg>'
)


@pytest.mark.parametrize(
    ("changed", "stale"),
    [
        (PICTURE, False),
        (PICTURE.replace('cx="10.5"', 'cx="10.50"').replace("3.0,4.0", "3,4.001"), False),
        (PICTURE.replace('<circle cx="10.5" cy="20.25" r="4" fill="#1f77b4"/>', ""), True),
        (PICTURE.replace("3.0,4.0", "3.0,4.0 5.0,6.0"), True),  # a point more
        (PICTURE.replace(">0.5<", ">0.6<"), True),  # a tick label
        (PICTURE.replace("#1f77b4", "#d62728"), True),  # a colour
        (PICTURE.replace('text-anchor="end"', 'text-anchor="start"'), True),
    ],
)
def test_pictures_are_compared_by_structure(changed: str, stale: bool) -> None:
    assert bool(tool.differences(_result(PICTURE), _result(changed))) is stale


def test_text_and_numbers_are_compared_exactly() -> None:
    def stream(text: str) -> list[list[dict[str, Any]]]:
        return [[{"name": "stdout", "output_type": "stream", "text": [text]}]]

    assert tool.differences(stream("loss 0.1234\n"), stream("loss 0.1234\n")) == []
    (found,) = tool.differences(stream("loss 0.1234\n"), stream("loss 0.1235\n"))
    assert found == "code cell 1: stdout stored 'loss 0.1234\\n', now stdout 'loss 0.1235\\n'"
    assert tool.differences(stream("x\n"), []) == ["1 code cells have outputs stored, 0 ran"]
    assert tool.differences(stream("x\n"), _result(PICTURE)) != []
    html = _result(PICTURE)
    html[0][0]["data"] = {"text/html": ["<td>0.5</td>"], "text/plain": ["P"]}
    other = json.loads(json.dumps(html))
    other[0][0]["data"]["text/html"] = ["<td>0.50</td>"]
    assert tool.differences(html, other) != []


def test_the_command_writes_outputs_and_then_finds_them_up_to_date(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(_notebook("print(6 * 7)", "[1, 2]")), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert tool.main([str(path)]) == 0
        assert tool.main([str(path), "--check"]) == 0
        assert tool.main([str(path), "--check", "--cells", "1"]) == 0
    written = json.loads(path.read_text(encoding="utf-8"))
    assert [c["execution_count"] for c in written["cells"]] == [1, 2]
    assert written["cells"][0]["outputs"][0]["text"] == ["42\n"]
    assert written["cells"][1]["outputs"][0]["data"] == {"text/plain": ["[1, 2]"]}
    assert "up to date" in out.getvalue()
    # A stale notebook: the check fails and says how to regenerate.
    written["cells"][0]["source"] = "print(6 * 9)"
    path.write_text(json.dumps(written), encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert tool.main([str(path), "--check"]) == 1
    assert "code cell 1: stdout stored '42\\n', now stdout '54\\n'" in err.getvalue()
    assert f"run `{tool.REGENERATE}`" in err.getvalue()


def test_html_is_compared_exactly_but_for_stepper_ids_and_picture_coordinates() -> None:
    def html(text: str) -> list[list[dict[str, Any]]]:
        return [
            [
                {
                    "data": {"text/html": [text], "text/plain": ["S"]},
                    "execution_count": 1,
                    "metadata": {},
                    "output_type": "execute_result",
                }
            ]
        ]

    page = f'<div id="mg-stepper-1-0a1b2c3d"><p>step 0 of 2</p>{PICTURE}</div>'
    same = [
        page.replace("mg-stepper-1-0a1b2c3d", "mg-stepper-7-ffee0011"),  # drawn at random
        page.replace('cx="10.5"', 'cx="10.6"'),  # a coordinate in the picture
    ]
    for other in same:
        assert tool.differences(html(page), html(other)) == []
    changed = [
        page.replace("step 0 of 2", "step 0 of 3"),  # the text around the picture
        page.replace(">0.5<", ">0.6<"),  # a text in the picture
        page.replace('id="mg-stepper-1-0a1b2c3d"', 'id="other"'),  # an id that is not a stepper's
    ]
    for other in changed:
        assert tool.differences(html(page), html(other)) != [], other
