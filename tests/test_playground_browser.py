"""The playground in a real browser: headless Chromium, Pyodide from a folder or the CDN.

``minigrad playground`` is started as a teacher would start it, from the
environment the built wheel is installed in (``MINIGRAD_WHEEL_PYTHON`` under
``.ci/run``; this interpreter elsewhere), twice: with ``--pyodide DIR``, and
at its default, where the page loads Pyodide from its CDN. No test reaches
the internet: for the CDN, ``fake_cdn.py`` serves the same local Pyodide
over HTTPS on 127.0.0.1 under the CDN's URL path, and Chromium resolves the
CDN's host name to it and trusts its certificate alone, so the page loads
the very URL it names.

Chromium, driven by selenium and Debian's chromedriver (``pages.py``), opens
the page and does what a person does: waits until the status line says Python is ready, clicks Run,
and waits until it says the code ran. The tests then read what a person
sees: the graph's SVG shown in the page, the report naming the wrong op, the
printed numbers, an empty error box (where the page collects window errors,
rejected promises and ``console.error``) and no SEVERE entry on the
browser's console log; and where Pyodide's files came from (what the page
and its first Python worker fetched, and the CDN stand-in's count of
requests). A screenshot is taken too; with ``MINIGRAD_SCREENSHOTS=docs/img``
it is saved there as ``playground.png``.

What students do to the page (an endless loop, a patched minigrad,
``sys.exit()``) is in ``test_playground_classroom.py``.

When the CDN cannot be reached (a refused connection, a name that does not
resolve, a CDN that answers for ``pyodide.mjs`` alone), the page must say
that Pyodide could not be loaded from its CDN and name ``--pyodide DIR``.

Waiting polls the page with a timeout that only bounds a broken run; no
assertion is about time. A SEVERE console entry while waiting for the
lesson (a script that does not parse, a file that does not load) ends the
wait at once."""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pytest
from selenium.common.exceptions import NoSuchElementException

import browsers
import fake_cdn
from minigrad.cli.playground.server import CDN, STATIC
from pages import LOADING, READY, RUNNING, Page, open_page, playground

#: The viewport of the screenshot in the docs.
VIEWPORT = (1400, 1050)


class Served(NamedTuple):
    """The playground as the browser reaches it, with Pyodide from a folder or the CDN."""

    url: str  # the page's address
    pyodide: str  # the URL the page loads Pyodide from
    flags: tuple[str, ...]  # what Chromium needs besides pages.FLAGS to reach that
    cdn: fake_cdn.FakeCDN | None  # the CDN's stand-in, when the page uses the CDN


@pytest.fixture(scope="module", params=["pyodide-dir", "cdn"])
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    """The playground with ``--pyodide DIR``, or with its default, the CDN (a loopback stand-in)."""
    # Before starting anything: fail (under CI) or skip early when something is missing.
    browsers.chromium()
    browsers.chromedriver()
    folder = browsers.pyodide()
    if request.param == "pyodide-dir":
        with playground("--pyodide", str(folder)) as url:
            yield Served(url, url + "pyodide/", (), None)
    else:
        with fake_cdn.serve(folder) as cdn, playground() as url:
            flags = fake_cdn.chromium_flags(f"127.0.0.1:{cdn.port}")
            yield Served(url, CDN, flags, cdn)


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[Page]:
    """Chromium with the page open (the lesson not yet run)."""
    with open_page(served.url, served.flags, VIEWPORT) as page:
        yield page


class Before(NamedTuple):
    """What the page shows once Python is ready, before anyone presses Run."""

    status: str
    run_enabled: bool
    lesson: str
    output: str
    shown: int


@pytest.fixture(scope="module")
def before_run(browser: Page) -> Before:
    status = browser.status_leaves(LOADING)
    return Before(
        status=status,
        run_enabled=browser.find("#run").is_enabled(),
        lesson=str(browser.find("#editor").get_property("value")),
        output=browser.output(),
        shown=len(browser.find_all("#shown > *")),
    )


@pytest.fixture(scope="module")
def ran(browser: Page, before_run: Before) -> Page:
    """The page after a click on Run, once the status line says how the run ended."""
    assert before_run.status == READY, browser.page_errors()
    browser.find("#run").click()
    status = browser.status_leaves(READY, RUNNING)
    assert status.startswith("ran at "), (status, browser.page_errors())
    return browser


def test_once_python_is_ready_the_lesson_waits_for_run(before_run: Before) -> None:
    lesson = (STATIC / "lesson.txt").read_text(encoding="utf-8")
    assert before_run == Before(READY, run_enabled=True, lesson=lesson, output="", shown=0)


def test_the_error_box_stays_empty_and_hidden(ran: Page) -> None:
    box = ran.find("#page-errors")
    assert (box.get_property("textContent"), box.is_displayed()) == ("", False)


def test_no_severe_entry_on_the_browsers_console(ran: Page) -> None:
    ran.log()
    assert ran.severe() == []


def test_the_graph_is_an_svg_shown_in_the_page(ran: Page) -> None:
    graph = ran.find("#shown-0 > svg")
    assert graph.tag_name == "svg" and graph.is_displayed()
    box = graph.rect
    assert box["width"] > 100 and box["height"] > 100, box
    labels = graph.text.splitlines()  # each node's label, data and grad, as laid out
    assert labels[:3] == ["o", "data 0.7071", "grad 1.0"]
    for node in (["x1", "data 2.0", "grad -1.5"], ["w1", "data -3.0", "grad 1.0"]):
        at = labels.index(node[0])
        assert labels[at : at + 3] == node
    for label in ("tanh", "b", "x1*w1 + x2*w2", "x2", "w2"):
        assert label in labels, label


def test_the_report_names_the_wrong_op(ran: Page) -> None:
    # HTML is shown in a sandboxed frame: its text is read from inside it.
    frame = ran.find("#shown-2 > iframe")
    assert frame.is_displayed() and frame.get_attribute("sandbox") == "allow-scripts"
    assert frame.rect["height"] > 150, frame.rect  # grown to its content
    ran.driver.switch_to.frame(frame)
    try:
        lines = ran.find("body").text.splitlines()
    finally:
        ran.driver.switch_to.default_content()
    assert "gradcheck failed 1 2 exhaustive" in lines
    assert "verdicts: 2 wrong" in lines
    cause = [line for line in lines if line.startswith("cause: ")]
    assert len(cause) == 1
    assert re.fullmatch(
        r"cause: op 'my_tanh' at \(0\.6\): its order-1 derivative with respect to arg 0 is "
        r"-0\.71\d* by its rule but 0\.71\d* by a numerical derivative of its forward",
        cause[0],
    ), cause[0]


def test_the_output_is_the_lessons(ran: Page) -> None:
    assert ran.find("#output").text.splitlines() == [
        "o = 0.7071, do/dn = 1 - o**2 = 0.5000",
        "by hand:    x1.grad = -1.5000, w1.grad = 1.0000",
        "backward(): x1.grad = -1.5000, w1.grad = 1.0000",
        "check failed: fix the sign and press Run again",
    ]


def test_a_screenshot_of_the_page(ran: Page) -> None:
    png = ran.screenshot()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(png[16:20]), int.from_bytes(png[20:24])) == VIEWPORT
    assert len(png) > 50_000  # a page with text and a graph, not a blank one
    folder = os.environ.get("MINIGRAD_SCREENSHOTS")
    if folder:
        (Path(folder) / "playground.png").write_bytes(png)


def test_what_is_not_in_the_page_is_an_error_not_an_empty_answer(ran: Page) -> None:
    # The tests above lean on find() raising for a missing element rather than
    # answering something empty that an assertion might take for the page's.
    with pytest.raises(NoSuchElementException, match=r"#shown-3"):
        ran.find("#shown-3")
    assert [figure.tag_name for figure in ran.find_all("#shown > *")] == ["figure"] * 3


#: What a Python worker loads from Pyodide's folder, each once.
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)


def test_pyodide_came_from_where_the_page_names_it(served: Served, ran: Page) -> None:
    fetched = ran.driver.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name);"
    )
    assert isinstance(fetched, list), fetched
    names = [str(name) for name in fetched]  # the page's own: Python loads in its workers
    assert all(name.startswith(served.url) for name in names), names
    assert served.url + "minigrad.zip" in names and served.url + "lesson.py" in names
    worker = json.loads(str(ran.find("body").get_attribute("data-worker-fetched")))
    assert all(name.startswith(served.pyodide) for name in worker), worker
    assert sorted(name.removeprefix(served.pyodide) for name in worker) == sorted(PYODIDE_FILES)
    if served.cdn is not None:  # and not from a cache: the stand-in answered
        assert set(served.cdn.served_names()) == set(PYODIDE_FILES)
        assert not served.cdn.refused


@pytest.fixture(scope="module")
def cdn_page() -> Iterator[str]:
    """The playground at its default, the CDN, for a browser that cannot reach the CDN."""
    browsers.chromium()
    browsers.chromedriver()
    with playground() as url:
        yield url


@contextmanager
def _unreachable(how: str) -> Iterator[tuple[str, str, fake_cdn.FakeCDN | None]]:
    """Where the CDN's host leads, the console's word for the failure, and the stand-in if any."""
    if how == "connection-refused":
        # Bound and not listening: a connection is refused, and no one else can take the port.
        with socket.socket() as bound:
            bound.bind(("127.0.0.1", 0))
            yield f"127.0.0.1:{bound.getsockname()[1]}", "net::ERR_CONNECTION_REFUSED", None
    elif how == "name-not-resolved":  # the browser of a classroom without internet
        yield "~NOTFOUND", "net::ERR_NAME_NOT_RESOLVED", None
    else:  # the CDN answers for pyodide.mjs and not for the rest
        with fake_cdn.serve(browsers.pyodide(), only=frozenset({"pyodide.mjs"})) as cdn:
            yield f"127.0.0.1:{cdn.port}", "404", cdn


def _failed_start(page: Page) -> tuple[tuple[str, bool, bool], str]:
    """Once the page stops loading: (status, Run enabled, error box shown), and the box's text.

    Console errors are expected here: the wait ends on the status line alone.
    """
    status = page.wait(
        lambda: None if (said := page.status()) == LOADING else said,
        f"the status line to leave {LOADING!r}",
    )
    box = page.find("#page-errors")
    shown = (status, page.find("#run").is_enabled(), box.is_displayed())
    said = str(box.get_property("textContent"))
    page.log()
    return shown, said


@pytest.mark.parametrize("how", ["connection-refused", "name-not-resolved", "only-pyodide-mjs"])
def test_without_the_cdn_the_page_says_so_and_names_pyodide_dir(cdn_page: str, how: str) -> None:
    with (
        _unreachable(how) as (target, failure, cdn),
        open_page(cdn_page, fake_cdn.chromium_flags(target)) as page,
    ):
        shown, said = _failed_start(page)
    assert shown == ("could not load Python", False, True), said
    assert f"Pyodide could not be loaded from its CDN, {CDN}: " in said, said
    assert "start the playground with --pyodide DIR" in said, said
    severe = page.severe()
    assert any(failure in entry for entry in severe), severe
    if cdn is not None:  # the page asked for the file that failed, and says what it heard
        assert cdn.served_names() == {"pyodide.mjs": 1} and cdn.refused
        assert f"{CDN}pyodide.asm.mjs answered 404" in said, said
    else:
        assert f"{CDN}pyodide.mjs could not be fetched (TypeError: Failed to fetch" in said, said


def test_a_pyodide_folder_with_only_pyodide_mjs_is_named_as_the_cause(tmp_path: Path) -> None:
    browsers.chromium()
    browsers.chromedriver()
    (tmp_path / "pyodide.mjs").write_bytes((browsers.pyodide() / "pyodide.mjs").read_bytes())
    with playground("--pyodide", str(tmp_path)) as url, open_page(url) as page:
        shown, said = _failed_start(page)
    assert shown == ("could not load Python", False, True), said
    assert "could not be loaded from the folder given to --pyodide (served as /pyodide/): " in said
    assert 'Give the folder of the npm package "pyodide"' in said, said
    assert "/pyodide/pyodide.asm.mjs answered 404" in said, said
    assert "CDN" not in said, said
