"""What the browser tests need (Node, Pyodide, Chromium, chromedriver) and what if it is missing.

``.ci/run`` installs all of it and sets ``CI``; there a missing piece fails
the test. Elsewhere (a developer's ``pytest``) it skips the test and says
what to install. ``.ci/run`` also names the built wheel in
``MINIGRAD_WHEEL`` and Pyodide's folder in ``MINIGRAD_PYODIDE``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from minigrad.cli.playground.server import package_zip

REPO = Path(__file__).resolve().parent.parent
#: Where ``npm ci`` in ``.ci/pyodide`` puts Pyodide on a developer's machine.
LOCAL_PYODIDE = REPO / ".ci" / "pyodide" / "node_modules" / "pyodide"


def missing(what: str) -> None:
    """Fail under CI, skip elsewhere: ``what`` is needed and not there."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} (CI is set: .ci/run installs it, so this test never skips there)")
    pytest.skip(what)


def _executable(name: str, install: str = "") -> str:
    """The path of ``name`` on PATH; ``install`` says how to get it when missing."""
    found = shutil.which(name)
    if found is None:
        missing(f"{name} is not on PATH{install}")
    assert found is not None
    return found


def node() -> str:
    """The ``node`` executable."""
    return _executable("node")


def pyodide() -> Path:
    """The folder of the npm package ``pyodide`` (it holds ``pyodide.mjs``)."""
    folder = Path(os.environ.get("MINIGRAD_PYODIDE") or LOCAL_PYODIDE)
    if not (folder / "pyodide.mjs").is_file():
        missing(f"no Pyodide in {folder}: run `npm ci` in .ci/pyodide")
    return folder


def chromium() -> str:
    """Debian's ``chromium``."""
    return _executable("chromium", ": apt-get install chromium chromium-driver")


def chromedriver() -> str:
    """Debian's ``chromedriver`` (the package ``chromium-driver``), which drives ``chromium``."""
    return _executable("chromedriver", ": apt-get install chromium chromium-driver")


def package(tmp: Path) -> Path:
    """The wheel ``.ci/run`` built, or else this checkout's package zipped as the page serves it."""
    wheel = os.environ.get("MINIGRAD_WHEEL")
    if wheel:
        return Path(wheel)
    if os.environ.get("CI"):
        pytest.fail("CI is set but MINIGRAD_WHEEL is not: .ci/run names the wheel it built")
    path = tmp / "minigrad.zip"
    path.write_bytes(package_zip())
    return path
