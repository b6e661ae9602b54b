"""The stepper's page in headless Chromium, driven by selenium: forward, back and the slider.

The page is what ``BackwardStepper.save`` writes, opened from a file, as a
teacher opens it. Chromium (Debian's, driven by Debian's ``chromedriver``
through selenium) clicks Next and Prev and moves the slider with the
keyboard, and the test reads what a person sees: the grad in every box of
the graph, which boxes are highlighted, the caption and the step count. They
must be the numbers of the walk by hand (``test_stepper.by_hand``) at each
step. Two steppers on one page must not move each other. No SEVERE entry
may reach the browser's console.

With ``MINIGRAD_STEPPER_SCREENSHOT=docs/img/stepper.png`` the screenshot of
the lecture's neuron at step 3 is saved there. These tests fail, never skip,
when CI is set (``.ci/run`` installs Chromium and selenium).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import browsers
from minigrad import Value
from minigrad.teach import BackwardStepper
from minigrad.teach.viz.scene import _number
from test_stepper import by_hand, lecture_neuron

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

#: The window: narrower than the lecture's neuron, whose graph then scrolls.
WINDOW = (1000, 420)
#: The window of the screenshot in the docs and README, where the whole graph fits.
SCREENSHOT = (1360, 240)


@pytest.fixture(scope="module")
def driver() -> Iterator[WebDriver]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        browsers.missing("selenium is not installed: pip install -e '.[dev]'")
    options = webdriver.ChromeOptions()
    options.binary_location = browsers.chromium()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(flag)
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Debian's driver by its path: selenium must never try to download one.
    service = Service(browsers.chromedriver())
    session = webdriver.Chrome(service=service, options=options)
    try:
        yield session
    finally:
        session.quit()


class Page:
    """One stepper of the page, read as a person reads it."""

    def __init__(self, driver: WebDriver, stepper: WebElement) -> None:
        from selenium.webdriver.common.by import By

        self.driver = driver
        self.root = stepper
        self.by = By
        uid = stepper.get_attribute("id")
        assert uid
        self.uid = uid

    def part(self, name: str) -> WebElement:
        return self.root.find_element(self.by.ID, f"{self.uid}-{name}")

    def boxes(self) -> list[dict[str, object]]:
        """Every box and ellipse of the graph: its title, texts and classes, read in one call."""
        found = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#' + arguments[0] + ' g.node'))"
            ".map(function (g) { return {"
            "  title: g.querySelector('title').textContent,"
            "  texts: Array.from(g.querySelectorAll('text')).map(function (t) {"
            "    return t.textContent; }),"
            "  classes: Array.from(g.classList)}; });",
            self.uid,
        )
        assert isinstance(found, list)
        return found

    def grads(self) -> dict[str, str]:
        """Each labelled Value's box: its label (first text) and its grad (last)."""
        return {
            str(texts[0]): str(texts[-1])
            for box in self.boxes()
            if isinstance(texts := box["texts"], list) and len(texts) == 3
        }

    def marked(self, name: str) -> list[str]:
        """The titles of the boxes and ellipses marked ``name`` (mg-current, mg-written)."""
        return sorted(
            str(box["title"])
            for box in self.boxes()
            if isinstance(classes := box["classes"], list) and name in classes
        )

    def title_of(self) -> dict[str, str]:
        """The SVG title of each labelled Value's box, by its label."""
        return {
            str(texts[0]): str(box["title"])
            for box in self.boxes()
            if isinstance(texts := box["texts"], list) and len(texts) == 3
        }

    def caption(self) -> str:
        return self.part("caption").text


def _open(driver: WebDriver, path: Path) -> list[Page]:
    from selenium.webdriver.common.by import By

    driver.get(path.as_uri())
    pages = [Page(driver, s) for s in driver.find_elements(By.CSS_SELECTOR, "div.mg-stepper")]
    assert pages
    return pages


def _no_severe_entries(driver: WebDriver) -> None:
    logs = driver.get_log("browser")  # type: ignore[no-untyped-call]
    assert [entry for entry in logs if entry["level"] == "SEVERE"] == []


def _expected(stepper: BackwardStepper, k: int) -> dict[str, str]:
    return {
        node.label: f"grad {_number(grad)}"
        for node, grad in stepper.steps[k].grads.items()
        if node.label
    }


def _titles(stepper: BackwardStepper, page: Page, k: int) -> tuple[list[str], list[str]]:
    """The boxes step ``k`` should mark current and written, by their titles in the SVG."""
    ids = page.title_of()
    step = stepper.steps[k]
    current = [ids[step.node.label]] + ([ids[step.node.label] + "op"] if k else [])
    return sorted(current), sorted(ids[c.label] for c, _ in step.written)


def test_next_prev_and_the_slider_show_the_grads_of_each_step(
    driver: WebDriver, tmp_path: Path
) -> None:
    from selenium.webdriver.common.keys import Keys

    o, _ = lecture_neuron()
    stepper = BackwardStepper(o)
    walk = by_hand(o)  # the lecture's numbers, step by step
    o.zero_grad()
    assert [dict(s.grads) for s in stepper.steps] == walk
    (page,) = _open(driver, stepper.save(tmp_path / "steps.html"))
    last = len(stepper.steps) - 1

    def shows(k: int) -> None:
        assert page.grads() == _expected(stepper, k), k
        assert page.part("count").text == f"step {k} of {last}"
        assert page.caption() == f"step {k} of {last}: {stepper.steps[k].caption}"
        assert page.part("slider").get_attribute("value") == str(k)
        current, written = _titles(stepper, page, k)
        assert page.marked("mg-current") == current
        assert page.marked("mg-written") == written
        assert page.part("prev").is_enabled() == (k > 0)
        assert page.part("next").is_enabled() == (k < last)

    shows(0)
    for k in range(1, last + 1):  # forward to the end
        page.part("next").click()
        shows(k)
    for k in range(last - 1, 1, -1):  # and back
        page.part("prev").click()
        shows(k)
    slider = page.part("slider")
    slider.send_keys(Keys.END)
    shows(last)
    slider.send_keys(Keys.HOME)
    shows(0)
    for k in (1, 2):
        slider.send_keys(Keys.ARROW_RIGHT)
        shows(k)
    slider.send_keys(Keys.ARROW_LEFT)
    shows(1)
    # The lecture's numbers at the end, as the boxes show them.
    slider.send_keys(Keys.END)
    assert [page.grads()[label] for label in ("x1", "w1", "x2", "w2", "n")] == [
        "grad -1.5",
        "grad 1.0",
        "grad 0.5",
        "grad 0.0",
        "grad 0.5",
    ]
    _no_severe_entries(driver)


def test_two_steppers_on_one_page_move_apart(driver: WebDriver, tmp_path: Path) -> None:
    a = Value(2.0, label="a")
    first = BackwardStepper((a * a).exp())
    b = Value(-1.0, label="b")
    second = BackwardStepper(b.tanh() * 3.0)
    body = first._repr_html_() + "\n" + second._repr_html_()
    path = tmp_path / "two.html"
    path.write_text(f"<!DOCTYPE html><html><body>{body}</body></html>", encoding="utf-8")
    one, two = _open(driver, path)
    assert one.uid != two.uid
    two.part("next").click()
    two.part("next").click()
    assert two.grads() == _expected(second, 2)
    assert one.grads() == _expected(first, 0)
    assert one.part("count").text == f"step 0 of {len(first.steps) - 1}"
    one.part("next").click()
    assert one.grads() == _expected(first, 1)
    assert two.grads() == _expected(second, 2)
    _no_severe_entries(driver)


def test_a_screenshot_of_the_lectures_neuron_at_step_3(driver: WebDriver, tmp_path: Path) -> None:
    o, _ = lecture_neuron()
    (page,) = _open(driver, BackwardStepper(o).save(tmp_path / "steps.html"))
    for _ in range(3):
        page.part("next").click()
    assert page.caption().startswith("step 3 of 5: x1w1x2w2._backward()")
    # The graph is wider than the window, and the step's nodes are in the panel's view.
    inside = driver.execute_script(
        "var panel = document.getElementById(arguments[0] + '-picture');"
        "var shown = panel.getBoundingClientRect();"
        "return [panel.scrollWidth > panel.clientWidth].concat("
        "  Array.from(panel.querySelectorAll('g.mg-current, g.mg-written')).map(function (g) {"
        "    var box = g.getBoundingClientRect();"
        "    return box.left >= shown.left && box.right <= shown.right; }));",
        page.uid,
    )
    assert inside == [True] * 5  # wider; x1w1x2w2 and its + ellipse, x1w1 and x2w2 in view
    # The page at the screenshot's size (headless Chromium keeps its window's).
    metrics = {"width": SCREENSHOT[0], "height": SCREENSHOT[1], "deviceScaleFactor": 1}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "mobile": False})
    try:
        fits = driver.execute_script(
            "var panel = document.getElementById(arguments[0] + '-picture');"
            "panel.scrollLeft = 0; return panel.scrollWidth <= panel.clientWidth;",
            page.uid,
        )
        assert fits is True
        png = driver.get_screenshot_as_png()
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert (int.from_bytes(png[16:20]), int.from_bytes(png[20:24])) == SCREENSHOT
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) > 10_000  # a graph and its text, not a blank page
    target = os.environ.get("MINIGRAD_STEPPER_SCREENSHOT")
    if target:
        Path(target).write_bytes(png)
