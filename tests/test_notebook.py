"""The teaching notebook runs top to bottom and computes what its text says.

Its code cells are run in order in one namespace with plain ``exec``, as a
kernel would run them, so no Jupyter is needed; its JSON is checked against
the parts of nbformat 4 that Jupyter relies on.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import shutil
from pathlib import Path

import pytest

from minigrad import Value
from minigrad.viz import Graph

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "notebook.ipynb"


def _load() -> dict[str, object]:
    with NOTEBOOK.open(encoding="utf-8") as f:
        nb = json.load(f)
    assert isinstance(nb, dict)
    return nb


def _cells() -> list[dict[str, object]]:
    cells = _load()["cells"]
    assert isinstance(cells, list)
    return cells


def _source(cell: dict[str, object]) -> str:
    source = cell["source"]
    if isinstance(source, str):
        return source
    assert isinstance(source, list)
    assert all(isinstance(line, str) for line in source)
    return "".join(source)


@pytest.fixture(scope="module")
def run() -> tuple[dict[str, object], str]:
    """Every code cell, in order, in one namespace; with what they printed."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for i, cell in enumerate(_cells()):
            if cell["cell_type"] == "code":
                exec(compile(_source(cell), f"<notebook cell {i}>", "exec"), namespace)
    return namespace, printed.getvalue()


def test_the_json_is_an_nbformat_4_notebook() -> None:
    nb = _load()
    assert nb["nbformat"] == 4
    minor = nb["nbformat_minor"]
    assert isinstance(minor, int)
    assert minor >= 5  # 4.5 is the version where every cell needs an id
    metadata = nb["metadata"]
    assert isinstance(metadata, dict)
    assert metadata["kernelspec"]["name"] == "python3"
    ids = []
    for cell in _cells():
        assert cell["cell_type"] in {"markdown", "code"}
        assert isinstance(cell["metadata"], dict)
        cell_id = cell["id"]
        assert isinstance(cell_id, str)
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", cell_id)
        ids.append(cell_id)
        _source(cell)
        if cell["cell_type"] == "code":
            # Stored clean: no outputs, so the file shows no stale results.
            assert cell["outputs"] == []
            assert cell["execution_count"] is None
        else:
            assert "outputs" not in cell
    assert len(ids) == len(set(ids))
    kinds = [cell["cell_type"] for cell in _cells()]
    assert kinds[0] == "markdown"
    assert kinds.count("code") >= 5


def test_no_cell_needs_ipython() -> None:
    for cell in _cells():
        if cell["cell_type"] == "code":
            for line in _source(cell).splitlines():
                assert not line.lstrip().startswith(("%", "!")), line


def test_backward_gives_the_gradients_the_text_derives(run: tuple[dict[str, object], str]) -> None:
    ns, printed = run
    a, b, c = ns["a"], ns["b"], ns["c"]
    assert isinstance(a, Value)
    assert isinstance(b, Value)
    assert isinstance(c, Value)
    assert a.grad == pytest.approx(b.data + 1 - math.tanh(a.data) ** 2, rel=1e-12)
    assert b.grad == a.data
    assert "dc/da = -2.9293   dc/db = 2.0000" in printed
    assert "by hand:      dc/da = -2.9293" in printed


def test_derivatives_of_x_cubed(run: tuple[dict[str, object], str]) -> None:
    ns, _ = run
    derivatives = [ns[name] for name in ("dx", "dxx", "dxxx")]
    assert all(isinstance(d, Value) for d in derivatives)
    assert [d.data for d in derivatives if isinstance(d, Value)] == [27.0, 18.0, 6.0]


def test_the_tiny_network_learns(run: tuple[dict[str, object], str]) -> None:
    ns, printed = run
    losses = ns["losses"]
    assert isinstance(losses, list)
    assert len(losses) == 20
    assert losses[-1] < 0.5 * losses[0]
    accuracy = ns["accuracy"]
    assert isinstance(accuracy, float)
    assert accuracy >= 0.8
    assert re.search(r"^after 20 steps: loss \d\.\d{4}  accuracy \d+%$", printed, re.MULTILINE)


def test_the_graph_cell_makes_a_picture_or_a_quiet_fallback(
    run: tuple[dict[str, object], str],
) -> None:
    ns, printed = run
    g = ns["g"]
    assert isinstance(g, Graph)
    assert (g.values, g.ops) == (5, 3)  # a, b, a*b, tanh(a), c
    assert "<td><b>c</b></td>" in g.dot
    assert printed.rstrip().endswith(g.dot.rstrip())
    svg = g._repr_svg_()
    if shutil.which("dot") is None:
        assert svg is None
    else:
        assert svg is not None
        assert "<svg" in svg
