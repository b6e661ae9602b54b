"""A small W3C WebDriver client on the standard library alone, for the browser tests.

It speaks the WebDriver HTTP protocol (JSON over HTTP, https://w3c.github.io/webdriver/)
to ``chromedriver`` on the loopback address: start the driver, open a session,
navigate, find elements by CSS selector, click them, read what they show,
take a screenshot, and read the browser's console through chromedriver's
``POST /session/{id}/se/log`` (the endpoint Selenium uses; ``GET`` there is
an unknown command, and the plain ``/log`` is the older JSON wire protocol's).

Only what the tests use is here; every answer is checked for its type, and an
error the driver reports is raised as :class:`WebDriverError` with its W3C
error code and message.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import NamedTuple, TypeVar

#: The key of an element reference in W3C WebDriver's answers.
ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"
#: How long one command may take: a click waits while the page's handler runs Python.
COMMAND_TIMEOUT = 120.0

T = TypeVar("T")


class WebDriverError(Exception):
    """The driver answered a command with an error, or with something unexpected."""


def _typed(value: object, kind: type[T], what: str) -> T:
    if not isinstance(value, kind):
        raise WebDriverError(f"{what}: expected a {kind.__name__}, got {value!r:.300}")
    return value


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WebDriverError(f"{what}: expected a number, got {value!r:.300}")
    return float(value)


class LogEntry(NamedTuple):
    """One entry of the browser's console log, as chromedriver reports it."""

    level: str  # SEVERE, WARNING, INFO, DEBUG
    source: str  # console-api, javascript, network, ...
    message: str


class Rect(NamedTuple):
    """An element's box on the page, in CSS pixels."""

    x: float
    y: float
    width: float
    height: float


class Element:
    """An element of the page of a :class:`Session`."""

    def __init__(self, session: Session, element_id: str, selector: str) -> None:
        self.session = session
        self.element_id = element_id
        self.selector = selector

    def _call(self, method: str, command: str, body: dict[str, object] | None = None) -> object:
        return self.session.call(method, f"element/{self.element_id}/{command}", body)

    def click(self) -> None:
        """Click it as a person would (scrolled into view, the mouse at its centre)."""
        self._call("POST", "click", {})

    def text(self) -> str:
        """Its rendered text: what a person reads (empty when it is hidden)."""
        return _typed(self._call("GET", "text"), str, f"text of {self.selector}")

    def tag_name(self) -> str:
        """Its tag name (``svg``, ``button``, ...)."""
        return _typed(self._call("GET", "name"), str, f"tag name of {self.selector}")

    def displayed(self) -> bool:
        """Whether a person can see it (not hidden, not of zero size)."""
        return _typed(self._call("GET", "displayed"), bool, f"displayed of {self.selector}")

    def enabled(self) -> bool:
        """Whether it is enabled (a form control that is not ``disabled``)."""
        return _typed(self._call("GET", "enabled"), bool, f"enabled of {self.selector}")

    def property(self, name: str) -> object:
        """The DOM property ``name`` (e.g. ``value`` of a textarea, ``textContent``)."""
        return self._call("GET", f"property/{name}")

    def rect(self) -> Rect:
        """Its box on the page."""
        found = _typed(self._call("GET", "rect"), dict, f"rect of {self.selector}")
        return Rect(*(_number(found.get(key), "rect") for key in ("x", "y", "width", "height")))


class Session:
    """A browser session opened by :func:`session`; ``console`` keeps every log entry read."""

    def __init__(self, driver_url: str, session_id: str) -> None:
        self.url = f"{driver_url}session/{session_id}/"
        self.console: list[LogEntry] = []

    def call(self, method: str, command: str, body: dict[str, object] | None = None) -> object:
        """Send ``command`` (a path below the session's) and return the answer's ``value``."""
        return _request(method, self.url + command, body)

    def go(self, url: str) -> None:
        """Navigate to ``url`` and wait until the page has loaded."""
        self.call("POST", "url", {"url": url})

    def find(self, selector: str) -> Element:
        """The first element matching the CSS ``selector``; WebDriverError when there is none."""
        found = self.call("POST", "element", {"using": "css selector", "value": selector})
        reference = _typed(found, dict, f"element {selector}")
        return Element(self, _typed(reference.get(ELEMENT_KEY), str, selector), selector)

    def find_all(self, selector: str) -> list[Element]:
        """Every element matching the CSS ``selector``, in document order."""
        found = self.call("POST", "elements", {"using": "css selector", "value": selector})
        references = _typed(found, list, f"elements {selector}")
        return [
            Element(
                self, _typed(_typed(r, dict, selector).get(ELEMENT_KEY), str, selector), selector
            )
            for r in references
        ]

    def execute(self, script: str, *args: object) -> object:
        """Run ``script`` (a function body; ``arguments`` holds ``args``) and return its value."""
        return self.call("POST", "execute/sync", {"script": script, "args": list(args)})

    def set_viewport(self, width: int, height: int) -> None:
        """Size the window so that the page's viewport is ``width`` by ``height``.

        A headless window has borders and a toolbar's height too, so the
        window is made larger than the viewport by what it measures around it.
        """
        frame = _typed(
            self.execute(
                "return [window.outerWidth - window.innerWidth, "
                "window.outerHeight - window.innerHeight];"
            ),
            list,
            "window frame",
        )
        extra_width, extra_height = (_typed(n, int, "window frame") for n in frame)
        rect = {"width": width + extra_width, "height": height + extra_height}
        self.call("POST", "window/rect", dict(rect))

    def screenshot(self) -> bytes:
        """The viewport as a PNG image."""
        encoded = _typed(self.call("GET", "screenshot"), str, "screenshot")
        return base64.b64decode(encoded)

    def log(self) -> list[LogEntry]:
        """The browser console's entries since the last call; they are kept in ``console`` too."""
        found = _typed(self.call("POST", "se/log", {"type": "browser"}), list, "browser log")
        entries = []
        for item in found:
            entry = _typed(item, dict, "log entry")
            entries.append(
                LogEntry(
                    _typed(entry.get("level"), str, "log level"),
                    str(entry.get("source", "")),
                    _typed(entry.get("message"), str, "log message"),
                )
            )
        self.console += entries
        return entries

    def wait(self, condition: Callable[[], T | None], what: str, timeout: float) -> T:
        """Poll ``condition`` until it returns something other than None, and return that.

        Raises:
            WebDriverError: ``timeout`` seconds passed first; the message says ``what``
                was awaited.
        """
        deadline = time.monotonic() + timeout
        while True:
            found = condition()
            if found is not None:
                return found
            if time.monotonic() > deadline:
                raise WebDriverError(f"waited {timeout:g} s for {what}")
            time.sleep(0.1)


def _request(method: str, url: str, body: dict[str, object] | None = None) -> object:
    data = None if body is None else json.dumps(body).encode("utf-8")
    headers = {"Content-Type": "application/json; charset=utf-8"}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=COMMAND_TIMEOUT) as answer:
            text = answer.read()
    except urllib.error.HTTPError as failure:
        text = failure.read()
        try:
            value = _typed(json.loads(text), dict, "error").get("value")
            error = _typed(value, dict, "error")
            said = f"{error.get('error')}: {str(error.get('message')).splitlines()[0]}"
        except (ValueError, WebDriverError):
            said = text.decode("utf-8", "replace")[:300]
        raise WebDriverError(f"{method} {url}: {failure.code} {said}") from None
    return _typed(json.loads(text), dict, f"{method} {url}").get("value")


@contextmanager
def chromedriver(executable: str, timeout: float = 60.0) -> Iterator[str]:
    """Run ``chromedriver`` on a free loopback port; yield its URL and stop it on the way out.

    The driver picks the port itself (``--port=0``) and says which on its
    first lines, so no other process can take it between choosing and
    binding. What it says goes to a file, not a pipe: the browsers it starts
    inherit its output, and a pipe they hold open would never end.

    It runs in a process group of its own, which the browsers it starts
    join; leaving, the whole group is ended, so a browser whose session
    could not be deleted does not outlive the test.
    """
    with tempfile.TemporaryDirectory(prefix="chromedriver-") as folder:
        log = Path(folder) / "chromedriver.log"
        command = [executable, "--port=0", "--log-level=SEVERE"]
        with log.open("w", encoding="utf-8") as out:
            process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            yield f"http://127.0.0.1:{_announced_port(process, log, timeout)}/"
        finally:
            # The group's id is the driver's pid, not reused before the driver is waited for.
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _announced_port(process: subprocess.Popen[bytes], log: Path, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while True:
        said = log.read_text(encoding="utf-8", errors="replace")
        started = re.search(r"started successfully on port (\d+)", said)
        if started:
            return int(started.group(1))
        if process.poll() is not None:
            raise WebDriverError(f"{process.args!r} exited {process.returncode}: {said[-2000:]}")
        if time.monotonic() > deadline:
            raise WebDriverError(f"{process.args!r} named no port in {timeout:g} s: {said[-2000:]}")
        time.sleep(0.05)


@contextmanager
def session(driver_url: str, capabilities: dict[str, object]) -> Iterator[Session]:
    """Open a browser session with ``capabilities``; yield it and delete it on the way out.

    A failed delete is let go: the browser ends with its driver's process
    group (see :func:`chromedriver`), and the error that brought us here, if
    any, is the one worth reading.
    """
    new: dict[str, object] = {"capabilities": {"alwaysMatch": capabilities}}
    created = _request("POST", driver_url + "session", new)
    session_id = _typed(_typed(created, dict, "new session").get("sessionId"), str, "session id")
    try:
        yield Session(driver_url, session_id)
    finally:
        with suppress(WebDriverError, OSError):
            _request("DELETE", f"{driver_url}session/{session_id}")
