"""The playground in a real browser: headless Chromium, local Pyodide, the lesson run.

``minigrad playground --pyodide DIR`` is started as a teacher would start it,
from the environment the built wheel is installed in (``MINIGRAD_WHEEL_PYTHON``
under ``.ci/run``; this interpreter elsewhere). Chromium opens the page with
``?run=1``, which clicks Run once Python is ready, and prints the DOM when
the page is idle (``--virtual-time-budget``); the test reads what a person
sees there: the graph's SVG, the report naming the wrong op, the printed
output, and no error, neither in the page's error box (where the page
collects window errors, rejected promises and ``console.error``) nor on
Chromium's console log. A screenshot is taken too; with
``MINIGRAD_SCREENSHOT=docs/img/playground.png`` it is saved there.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import browsers

TIMEOUT = 120
#: The flags of a quiet headless Chromium on a machine with no network but loopback.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=60000",
)


@pytest.fixture(scope="module")
def page_url() -> Iterator[str]:
    browsers.chromium()  # before starting the server: fail or skip early when it is missing
    folder = browsers.pyodide()
    python = os.environ.get("MINIGRAD_WHEEL_PYTHON") or sys.executable
    command = [python, "-m", "minigrad", "playground", "--port", "0", "--no-browser"]
    command += ["--pyodide", str(folder)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            assert p.stdout is not None
            first = p.stdout.readline().strip()
            assert first.startswith("minigrad playground: http://127.0.0.1:"), first
            yield first.removeprefix("minigrad playground: ")
        finally:
            p.terminate()
            p.wait(timeout=10)


def _chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / "profile"
    profile.mkdir()
    return subprocess.run(
        [browsers.chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _console_errors(log: str) -> list[str]:
    lines = [line for line in log.splitlines() if ":CONSOLE" in line]
    return [line for line in lines if "rror" in line or "Uncaught" in line]


def _element(dom: str, element_id: str) -> str:
    """The inner HTML of the element with ``element_id`` (not nested in its own tag)."""
    found = re.search(rf'<(\w+)[^>]* id="{element_id}"[^>]*>(.*?)</\1>', dom, re.S)
    assert found is not None, f"no #{element_id} in the page"
    return found.group(2)


@pytest.fixture(scope="module")
def ran(page_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    done = _chromium(tmp_path_factory.mktemp("chromium"), "--dump-dom", page_url + "?run=1")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def test_the_lesson_ran_with_no_error_in_the_page_or_the_console(ran: tuple[str, str]) -> None:
    dom, log = ran
    state = re.search(r'<body[^>]* data-state="(\w+)"', dom)
    errors = html.unescape(_element(dom, "page-errors"))
    assert (state.group(1) if state else None, errors) == ("done", "")
    assert 'id="page-errors" hidden' in dom
    assert _console_errors(log) == []


def test_the_graph_is_an_svg_in_the_page(ran: tuple[str, str]) -> None:
    graph = _element(ran[0], "shown")
    assert re.search(r'<figure class="shown svg" id="shown-0"><svg[^>]*>', graph)
    for text in (">x1<", ">w1<", ">b<", ">x1*w1 + x2*w2<", ">tanh<", "data 0.7071", "grad -1.5"):
        assert text in graph, text


def test_the_report_names_the_wrong_op(ran: tuple[str, str]) -> None:
    shown = html.unescape(_element(ran[0], "shown"))
    assert '<figure class="shown html" id="shown-1">' in shown
    assert "<b>gradcheck failed</b>" in shown
    assert "cause: op 'my_tanh' at (0.6): its order-1 derivative with respect to arg 0" in shown
    assert "verdicts: 2 wrong" in shown


def test_the_output_is_the_lessons(ran: tuple[str, str]) -> None:
    output = html.unescape(_element(ran[0], "output"))
    assert output.splitlines() == [
        "o = 0.7071, do/dn = 1 - o**2 = 0.5000",
        "by hand:    x1.grad = -1.5000, w1.grad = 1.0000",
        "backward(): x1.grad = -1.5000, w1.grad = 1.0000",
        "check failed: fix the sign and press Run again",
    ]


def test_without_the_flag_it_waits_for_run_with_the_lesson_loaded(
    page_url: str, tmp_path: Path
) -> None:
    done = _chromium(tmp_path, "--dump-dom", page_url)
    dom = done.stdout
    assert re.search(r'<body[^>]* data-state="ready"', dom)
    assert '<button id="run" type="button">Run</button>' in dom  # enabled, not yet pressed
    lesson = html.unescape(_element(dom, "editor"))
    assert lesson.startswith("# The lecture's neuron") and "my_tanh" in lesson
    assert _element(dom, "output") == "" and _element(dom, "shown") == ""


def test_a_screenshot_of_the_page(page_url: str, tmp_path: Path) -> None:
    png = tmp_path / "playground.png"
    shot = (f"--screenshot={png}", page_url + "?run=1")
    done = _chromium(tmp_path, "--window-size=1400,1050", *shot)
    assert done.returncode == 0, done.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1400, 1050)
    assert len(data) > 50_000  # a page with text and a graph, not a blank one
    target = os.environ.get("MINIGRAD_SCREENSHOT")
    if target:
        shutil.copyfile(png, target)
