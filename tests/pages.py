"""The playground in headless Chromium, driven by selenium, for the browser tests.

Selenium drives Debian's ``chromedriver``, named by its path (``Service``), so
it never looks for a driver of its own or downloads one. :func:`playground`
starts ``minigrad playground`` as a teacher does, from the environment the
built wheel is installed in (``MINIGRAD_WHEEL_PYTHON`` under ``.ci/run``;
this interpreter elsewhere); :func:`open_page` opens it in Chromium and
yields a :class:`Page`, which does what a person does (type code, press Run
or Stop, read the status line and the output) and keeps the browser's
console log.

Waiting polls the page with a timeout that only bounds a broken run; the
"within N s" checks of the tests measure around one click with generous
bounds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple, TypeVar

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.wait import WebDriverWait

import browsers
from minigrad.cli.playground.server import PYODIDE_VERSION

T = TypeVar("T")

#: A bound for waiting on Python to load and on a run to end, not an expectation.
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
LOADING = "loading Python..."
READY = f"Python {PYODIDE_VERSION} ready"  # the local Pyodide is the npm pin, the CDN's version
RUNNING = "running..."


class LogEntry(NamedTuple):
    """One entry of the browser's console log, as chromedriver reports it."""

    level: str  # SEVERE, WARNING, INFO, DEBUG
    source: str  # console-api, javascript, network, worker, ...
    message: str


@contextmanager
def playground(*options: str) -> Iterator[str]:
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


class Page:
    """The playground's page in Chromium, read and used as a person does."""

    def __init__(self, driver: webdriver.Chrome) -> None:
        self.driver = driver
        #: Every console entry read so far (chromedriver hands each out once).
        self.console: list[LogEntry] = []

    def find(self, selector: str) -> WebElement:
        """The element ``selector`` names; NoSuchElementException if there is none."""
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def find_all(self, selector: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def status(self) -> str:
        return self.find("#status").text

    def state(self) -> str:
        """The page's state: loading, ready, running, done, raised, exited, stopped, failed."""
        return str(self.find("body").get_attribute("data-state"))

    def output(self) -> str:
        return str(self.find("#output").get_property("textContent"))

    def page_errors(self) -> str:
        return str(self.find("#page-errors").get_property("textContent"))

    def log(self) -> list[LogEntry]:
        """The console's entries since the last call; they are kept in ``console`` too."""
        entries = [
            LogEntry(str(e.get("level")), str(e.get("source", "")), str(e.get("message")))
            for e in self.driver.get_log("browser")  # type: ignore[no-untyped-call]
        ]
        self.console += entries
        return entries

    def severe(self, entries: list[LogEntry] | None = None) -> list[str]:
        found = self.console if entries is None else entries
        return [f"{e.source}: {e.message}" for e in found if e.level == "SEVERE"]

    def wait(self, condition: Callable[[], T | None], what: str, timeout: float = TIMEOUT) -> T:
        """Poll ``condition`` until it returns something other than None, and return that."""
        found: list[T] = []

        def settled(_: object) -> bool:
            answer = condition()
            if answer is not None:
                found.append(answer)
            return answer is not None

        WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(
            settled, f"waited {timeout} s for {what}"
        )
        return found[0]

    def status_leaves(self, *waiting: str) -> str:
        """Wait until the status line says something other than ``waiting``; return what it says.

        A SEVERE console entry while waiting ends the wait at once.
        """

        def settled() -> str | None:
            errors = self.severe(self.log())
            if errors:
                raise AssertionError(f"the browser's console, while waiting: {errors}")
            said = self.status()
            return None if said in waiting else said

        return self.wait(settled, f"the status line to leave {waiting}")

    def type_code(self, code: str) -> None:
        """Put ``code`` in the editor, as typing does (the line numbers follow)."""
        self.driver.execute_script(
            "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));",
            self.find("#editor"),
            code,
        )

    def run(self, code: str | None = None) -> str:
        """Type ``code`` (if given), press Run, wait until the run ends; return the status."""
        if code is not None:
            self.type_code(code)
        self.find("#run").click()
        return self.status_leaves(RUNNING)

    def start(self, code: str, started: str) -> None:
        """Type ``code``, press Run, and wait until the output shows ``started``."""
        self.type_code(code)
        self.find("#run").click()
        self.wait(lambda: True if started in self.output() else None, f"{started!r} printed")

    def screenshot(self) -> bytes:
        """The viewport as a PNG image."""
        return self.driver.get_screenshot_as_png()


def set_viewport(driver: webdriver.Chrome, width: int, height: int) -> None:
    """Size the window so that the page's viewport is ``width`` by ``height``.

    A headless window has borders and a toolbar's height too, so the window is
    made larger than the viewport by what it measures around it.
    """
    frame = driver.execute_script(
        "return [window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight];"
    )
    driver.set_window_size(width + int(frame[0]), height + int(frame[1]))


@contextmanager
def open_page(
    url: str, flags: tuple[str, ...] = (), viewport: tuple[int, int] = (1400, 1050)
) -> Iterator[Page]:
    """Headless Chromium (FLAGS and ``flags``) with ``url`` open at ``viewport``."""
    options = webdriver.ChromeOptions()
    options.binary_location = browsers.chromium()
    for flag in (*FLAGS, *flags):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(browsers.chromedriver()), options=options)
    try:
        set_viewport(driver, *viewport)
        driver.get(url)
        yield Page(driver)
    finally:
        driver.quit()
