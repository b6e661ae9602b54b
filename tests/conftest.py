"""Prints the counts the suite keeps (see ``summary.py``) at the end of a run."""

from __future__ import annotations

from typing import Any

from summary import LINES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in (make() for make in LINES.values()):
        if line:
            terminalreporter.write_line(line)
