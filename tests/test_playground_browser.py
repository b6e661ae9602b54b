"""The playground in a real browser: headless Chromium, Pyodide from a folder or the CDN.

``minigrad playground`` is started as a teacher would start it, from the
environment the built wheel is installed in (``MINIGRAD_WHEEL_PYTHON`` under
``.ci/run``; this interpreter elsewhere), twice: with ``--pyodide DIR``, and
at its default, where the page loads Pyodide from its CDN. No test reaches
the internet: for the CDN, ``fake_cdn.py`` serves the same local Pyodide
over HTTPS on 127.0.0.1 under the CDN's URL path, and Chromium resolves the
CDN's host name to it and trusts its certificate alone, so the page loads
the very URL it names.

Chromium, driven by chromedriver over the W3C WebDriver protocol
(``webdriver.py``, standard library only), opens the page and does what a
person does: waits until the status line says Python is ready, clicks Run,
and waits until it says the code ran. The tests then read what a person
sees: the graph's SVG shown in the page, the report naming the wrong op, the
printed numbers, an empty error box (where the page collects window errors,
rejected promises and ``console.error``) and no SEVERE entry on the
browser's console log; and where Pyodide's files came from (the browser's
list of what it fetched, and the CDN stand-in's count of requests). A
screenshot is taken through WebDriver too; with
``MINIGRAD_SCREENSHOT=docs/img/playground.png`` it is saved there.

When the CDN cannot be reached (a refused connection, a name that does not
resolve, a CDN that answers for ``pyodide.js`` alone), the page must say
that Pyodide could not be loaded from its CDN and name ``--pyodide DIR``.

Waiting polls the page with a timeout that only bounds a broken run; no
assertion is about time. A SEVERE console entry while waiting for the
lesson (a script that does not parse, a file that does not load) ends the
wait at once."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pytest

import browsers
import fake_cdn
import webdriver
from minigrad.cli.playground.server import CDN, PYODIDE_VERSION, STATIC

#: A bound for waiting on Python to load and on the lesson to run, not an expectation.
TIMEOUT = 120.0
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
)
#: The viewport of the screenshot in the docs.
VIEWPORT = (1400, 1050)
LOADING = "loading Python..."
READY = f"Python {PYODIDE_VERSION} ready"  # the local Pyodide is the npm pin, the CDN's version


class Served(NamedTuple):
    """The playground as the browser reaches it, with Pyodide from a folder or the CDN."""

    url: str  # the page's address
    pyodide: str  # the URL the page loads Pyodide from
    flags: tuple[str, ...]  # what Chromium needs besides FLAGS to reach that
    cdn: fake_cdn.FakeCDN | None  # the CDN's stand-in, when the page uses the CDN


@contextmanager
def _playground(*options: str) -> Iterator[str]:
    """``minigrad playground`` with ``options``, run as a teacher runs it; yields its address."""
    python = os.environ.get("MINIGRAD_WHEEL_PYTHON") or sys.executable
    command = [python, "-m", "minigrad", "playground", "--port", "0", "--no-browser", *options]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            assert p.stdout is not None
            first = p.stdout.readline().strip()
            assert first.startswith("minigrad playground: http://127.0.0.1:"), first
            yield first.removeprefix("minigrad playground: ")
        finally:
            p.terminate()
            p.wait(timeout=10)


@pytest.fixture(scope="module", params=["pyodide-dir", "cdn"])
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    """The playground with ``--pyodide DIR``, or with its default, the CDN (a loopback stand-in)."""
    # Before starting anything: fail (under CI) or skip early when something is missing.
    browsers.chromium()
    browsers.chromedriver()
    folder = browsers.pyodide()
    if request.param == "pyodide-dir":
        with _playground("--pyodide", str(folder)) as url:
            yield Served(url, url + "pyodide/", (), None)
    else:
        with fake_cdn.serve(folder) as cdn, _playground() as url:
            flags = fake_cdn.chromium_flags(f"127.0.0.1:{cdn.port}")
            yield Served(url, CDN, flags, cdn)


@contextmanager
def _chromium(url: str, flags: tuple[str, ...] = ()) -> Iterator[webdriver.Session]:
    """Headless Chromium (FLAGS and ``flags``) with ``url`` open."""
    capabilities: dict[str, object] = {
        "goog:chromeOptions": {"binary": browsers.chromium(), "args": [*FLAGS, *flags]},
        "goog:loggingPrefs": {"browser": "ALL"},
    }
    with (
        webdriver.chromedriver(browsers.chromedriver()) as driver,
        webdriver.session(driver, capabilities) as session,
    ):
        session.set_viewport(*VIEWPORT)
        session.go(url)
        yield session


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[webdriver.Session]:
    """Chromium with the page open (the lesson not yet run)."""
    with _chromium(served.url, served.flags) as session:
        yield session


def _severe(entries: list[webdriver.LogEntry]) -> list[str]:
    return [f"{e.source}: {e.message}" for e in entries if e.level == "SEVERE"]


def _status_leaves(session: webdriver.Session, *waiting: str) -> str:
    """Wait until the status line says something other than ``waiting``; return what it says."""

    def settled() -> str | None:
        errors = _severe(session.log())
        if errors:
            raise AssertionError(f"the browser's console, while waiting: {errors}")
        said = session.find("#status").text()
        return None if said in waiting else said

    return session.wait(settled, f"the status line to leave {waiting}", TIMEOUT)


class Before(NamedTuple):
    """What the page shows once Python is ready, before anyone presses Run."""

    status: str
    run_enabled: bool
    lesson: str
    output: str
    shown: int


@pytest.fixture(scope="module")
def before_run(browser: webdriver.Session) -> Before:
    status = _status_leaves(browser, LOADING)
    return Before(
        status=status,
        run_enabled=browser.find("#run").enabled(),
        lesson=str(browser.find("#editor").property("value")),
        output=browser.find("#output").text(),
        shown=len(browser.find_all("#shown > *")),
    )


@pytest.fixture(scope="module")
def ran(browser: webdriver.Session, before_run: Before) -> webdriver.Session:
    """The page after a click on Run, once the status line says how the run ended."""
    assert before_run.status == READY, _page_errors(browser)
    browser.find("#run").click()
    status = _status_leaves(browser, READY, "running...")
    assert status.startswith("ran at "), (status, _page_errors(browser))
    return browser


def _page_errors(session: webdriver.Session) -> str:
    return str(session.find("#page-errors").property("textContent"))


def test_once_python_is_ready_the_lesson_waits_for_run(before_run: Before) -> None:
    lesson = (STATIC / "lesson.txt").read_text(encoding="utf-8")
    assert before_run == Before(READY, run_enabled=True, lesson=lesson, output="", shown=0)


def test_the_error_box_stays_empty_and_hidden(ran: webdriver.Session) -> None:
    box = ran.find("#page-errors")
    assert (box.property("textContent"), box.displayed()) == ("", False)


def test_no_severe_entry_on_the_browsers_console(ran: webdriver.Session) -> None:
    ran.log()
    assert _severe(ran.console) == []


def test_the_graph_is_an_svg_shown_in_the_page(ran: webdriver.Session) -> None:
    graph = ran.find("#shown-0 > svg")
    assert graph.tag_name() == "svg" and graph.displayed()
    box = graph.rect()
    assert box.width > 100 and box.height > 100, box
    labels = graph.text().splitlines()  # each node's label, data and grad, as laid out
    assert labels[:3] == ["o", "data 0.7071", "grad 1.0"]
    for node in (["x1", "data 2.0", "grad -1.5"], ["w1", "data -3.0", "grad 1.0"]):
        at = labels.index(node[0])
        assert labels[at : at + 3] == node
    for label in ("tanh", "b", "x1*w1 + x2*w2", "x2", "w2"):
        assert label in labels, label


def test_the_report_names_the_wrong_op(ran: webdriver.Session) -> None:
    report = ran.find("#shown-1")
    assert report.displayed()
    lines = report.text().splitlines()
    assert "gradcheck failed 1 2 exhaustive" in lines
    assert "verdicts: 2 wrong" in lines
    cause = [line for line in lines if line.startswith("cause: ")]
    assert len(cause) == 1
    assert re.fullmatch(
        r"cause: op 'my_tanh' at \(0\.6\): its order-1 derivative with respect to arg 0 is "
        r"-0\.71\d* by its rule but 0\.71\d* by a numerical derivative of its forward",
        cause[0],
    ), cause[0]


def test_the_output_is_the_lessons(ran: webdriver.Session) -> None:
    assert ran.find("#output").text().splitlines() == [
        "o = 0.7071, do/dn = 1 - o**2 = 0.5000",
        "by hand:    x1.grad = -1.5000, w1.grad = 1.0000",
        "backward(): x1.grad = -1.5000, w1.grad = 1.0000",
        "check failed: fix the sign and press Run again",
    ]


def test_a_screenshot_of_the_page(ran: webdriver.Session) -> None:
    png = ran.screenshot()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(png[16:20]), int.from_bytes(png[20:24])) == VIEWPORT
    assert len(png) > 50_000  # a page with text and a graph, not a blank one
    target = os.environ.get("MINIGRAD_SCREENSHOT")
    if target:
        Path(target).write_bytes(png)


def test_what_is_not_in_the_page_is_an_error_not_an_empty_answer(ran: webdriver.Session) -> None:
    # The tests above lean on find() raising for a missing element rather than
    # answering something empty that an assertion might take for the page's.
    with pytest.raises(webdriver.WebDriverError, match=r"404 no such element: .*#shown-2"):
        ran.find("#shown-2")
    assert [figure.tag_name() for figure in ran.find_all("#shown > *")] == ["figure", "figure"]


#: What the page loads from Pyodide's folder, each once.
PYODIDE_FILES = (
    "pyodide.js",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)


def test_pyodide_came_from_where_the_page_names_it(served: Served, ran: webdriver.Session) -> None:
    fetched = ran.execute("return performance.getEntriesByType('resource').map((e) => e.name);")
    assert isinstance(fetched, list), fetched
    names = [str(name) for name in fetched]
    assert all(name.startswith((served.url, served.pyodide)) for name in names), names
    from_pyodide = sorted(
        n.removeprefix(served.pyodide) for n in names if n.startswith(served.pyodide)
    )
    assert from_pyodide == sorted(PYODIDE_FILES)
    if served.cdn is not None:  # and not from a cache: the stand-in answered each request
        assert served.cdn.served_names() == dict.fromkeys(PYODIDE_FILES, 1)
        assert not served.cdn.refused


@pytest.fixture(scope="module")
def cdn_page() -> Iterator[str]:
    """The playground at its default, the CDN, for a browser that cannot reach the CDN."""
    browsers.chromium()
    browsers.chromedriver()
    with _playground() as url:
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
    else:  # the CDN answers for pyodide.js and not for the rest
        with fake_cdn.serve(browsers.pyodide(), only=frozenset({"pyodide.js"})) as cdn:
            yield f"127.0.0.1:{cdn.port}", "404", cdn


def _failed_start(session: webdriver.Session) -> tuple[tuple[str, bool, bool], str]:
    """Once the page stops loading: (status, Run enabled, error box shown), and the box's text.

    Console errors are expected here: the wait ends on the status line alone.
    """
    status = session.wait(
        lambda: None if (said := session.find("#status").text()) == LOADING else said,
        f"the status line to leave {LOADING!r}",
        TIMEOUT,
    )
    box = session.find("#page-errors")
    shown = (status, session.find("#run").enabled(), box.displayed())
    said = str(box.property("textContent"))
    session.log()
    return shown, said


@pytest.mark.parametrize("how", ["connection-refused", "name-not-resolved", "only-pyodide-js"])
def test_without_the_cdn_the_page_says_so_and_names_pyodide_dir(cdn_page: str, how: str) -> None:
    with (
        _unreachable(how) as (target, failure, cdn),
        _chromium(cdn_page, fake_cdn.chromium_flags(target)) as session,
    ):
        shown, said = _failed_start(session)
    assert shown == ("could not load Python", False, True), said
    assert f"Pyodide could not be loaded from its CDN, {CDN}: " in said, said
    assert "start the playground with --pyodide DIR" in said, said
    severe = _severe(session.console)
    assert any(failure in entry for entry in severe), severe
    if cdn is not None:
        assert cdn.served_names() == {"pyodide.js": 1} and cdn.refused


def test_a_pyodide_folder_with_only_pyodide_js_is_named_as_the_cause(tmp_path: Path) -> None:
    browsers.chromium()
    browsers.chromedriver()
    (tmp_path / "pyodide.js").write_bytes((browsers.pyodide() / "pyodide.js").read_bytes())
    with _playground("--pyodide", str(tmp_path)) as url, _chromium(url) as session:
        shown, said = _failed_start(session)
    assert shown == ("could not load Python", False, True), said
    assert "could not be loaded from the folder given to --pyodide (served as /pyodide/): " in said
    assert 'Give the folder of the npm package "pyodide"' in said, said
    assert "CDN" not in said, said
