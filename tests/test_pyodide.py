"""minigrad in Pyodide (CPython on WebAssembly), as a browser runs it, driven by Node.

The built wheel (``MINIGRAD_WHEEL``, from ``.ci/run``) is unzipped into
Pyodide's site-packages, with no micropip and no network, and
``pyodide_probe.py`` runs there; its results are checked against known
numbers and texts and against the same probe run here under CPython.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

import browsers
from pyodide_probe import probe

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def in_pyodide(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    node, folder = browsers.node(), browsers.pyodide()
    package = browsers.package(tmp_path_factory.mktemp("pyodide"))
    done = subprocess.run(
        [
            node,
            str(HERE / "pyodide_run.mjs"),
            str(folder),
            str(package),
            str(HERE / "pyodide_probe.py"),
            "probe_json()",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.fixture(scope="module")
def in_cpython() -> dict[str, object]:
    return probe()


def test_it_is_pyodide_with_the_package_in_site_packages(in_pyodide: dict[str, object]) -> None:
    assert in_pyodide["platform"] == "emscripten"
    assert str(in_pyodide["file"]).endswith("site-packages/minigrad/__init__.py")


def test_the_readme_first_example(in_pyodide: dict[str, object]) -> None:
    assert in_pyodide["first example"] == [10.0, 7.0, 12.0, 12.0]


def test_a_passing_check_and_its_report(
    in_pyodide: dict[str, object], in_cpython: dict[str, object]
) -> None:
    assert in_pyodide["gradcheck"] is True
    report = str(in_pyodide["check report"])
    assert report.startswith(
        "gradcheck passed: orders 1-3, 14 comparisons (exhaustive)\nverdicts: 14 agree ("
    )
    # The same floats give the same verdicts, to the digit, in the browser.
    assert report == in_cpython["check report"]


def test_a_failing_gradcheck_names_the_wrong_op(
    in_pyodide: dict[str, object], in_cpython: dict[str, object]
) -> None:
    text = str(in_pyodide["failure"])
    assert text.startswith("gradcheck failed at order 1: 1 of 2 entries differ")
    assert "-2.29736198  2.29736198" in text
    assert "cause: op 'bad_sin' at (0.7)" in text
    assert text == in_cpython["failure"]


def test_minigrad_check_passes_every_rule(
    in_pyodide: dict[str, object], in_cpython: dict[str, object]
) -> None:
    command = in_pyodide["check command"]
    assert isinstance(command, list), command
    status, printed = command
    table = str(printed).splitlines()
    assert status == 0, printed
    rows = {line.split()[0]: line.split()[-1] for line in table[1:] if line.strip()}
    for rule in ("tanh", "exp", "log", "sin", "relu", "**"):
        assert rows.get(rule) == "ok", (rule, table)
    assert "passed in" in table[-1]
    # The same table as under CPython, but for the time it took.
    native = str(in_cpython["check command"][1]).splitlines()  # type: ignore[index]
    assert table[:-1] == native[:-1]


def test_the_demo_trains_as_it_does_here(
    in_pyodide: dict[str, object], in_cpython: dict[str, object]
) -> None:
    trained, native = in_pyodide["demo"], in_cpython["demo"]
    assert isinstance(trained, list) and isinstance(native, list), trained
    (losses, accuracies), (native_losses, native_accuracies) = trained, native
    assert len(losses) == 4 and losses[-1] < losses[0]
    assert all(
        math.isclose(a, b, rel_tol=1e-12) for a, b in zip(losses, native_losses, strict=True)
    )
    assert accuracies == native_accuracies


def test_the_graph_picture_is_the_same_svg(
    in_pyodide: dict[str, object], in_cpython: dict[str, object]
) -> None:
    svg = str(in_pyodide["graph"])
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    for text in (">x1<", ">w1<", ">tanh<", "data 0.7071", "grad -1.5"):
        assert text in svg, text
    assert svg == in_cpython["graph"]


def test_draw_dot_draws_the_lectures_neuron(
    in_pyodide: dict[str, object], in_cpython: dict[str, object]
) -> None:
    drawn = in_pyodide["draw_dot"]
    assert isinstance(drawn, list), drawn
    text, svg = drawn
    assert text == "Diagram(values=10, ops=5, constants=0, format='svg', rankdir='LR')"
    assert svg.startswith("<svg") and ">tanh<" in svg and "grad -1.5" in svg
    assert drawn == in_cpython["draw_dot"]
