"""Graphviz's ``dot`` for the picture tests: taken off PATH, or faked by a script."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest


def hide_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leave only an empty folder on PATH, so no ``dot`` is found."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert shutil.which("dot") is None


def fake_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """Put a `dot` on PATH that runs ``body`` (Python) with this interpreter."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    program = bin_dir / "dot"
    program.write_text(f"#!{sys.executable}\nimport sys\n{body}\n", encoding="utf-8")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
