"""The doctests of README.md and docs/*.md are compared exactly: no ``NUMBER`` there.

pyproject.toml turns on pytest's ``NUMBER`` flag for every doctest, so a
docstring may show ``0.1`` for ``0.09999999999999999``. A page of the docs
says its output is what the code prints, so there the flag would hide a
difference a reader can see (``-0.5`` shown, ``-0.49999999999999994``
printed). A page that means a rounded number rounds it in the code, or says
``# doctest: +NUMBER`` on that line, where a reader sees it.

At the root, so it applies however pytest is started (``pytest README.md``
loads no conftest of ``tests/``).
"""

from __future__ import annotations

import doctest

import pytest
from _pytest.doctest import DoctestItem

#: The pages checked exactly: text files collected by ``--doctest-glob``.
EXACT_SUFFIXES = (".md",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    number = doctest.OPTIONFLAGS_BY_NAME.get("NUMBER", 0)
    for item in items:
        if isinstance(item, DoctestItem) and item.path.suffix in EXACT_SUFFIXES:
            runner = item.runner
            if runner is not None:
                # The runner's flags are what every example of the page is checked with.
                runner.optionflags &= ~number
