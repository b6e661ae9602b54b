"""Closing lines of a test run: what the suite counted (comparisons, mutants, checks).

A test module registers a function that returns its line; ``conftest.py``
prints every non-empty one in pytest's terminal summary.
"""

from __future__ import annotations

from collections.abc import Callable

#: Name -> a function returning the closing line ("" when there is nothing to say).
LINES: dict[str, Callable[[], str]] = {}


def closing_line(name: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    """Register the decorated function's line under ``name``."""

    def register(line: Callable[[], str]) -> Callable[[], str]:
        LINES[name] = line
        return line

    return register
