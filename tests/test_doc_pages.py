"""The pages of the docs show exactly what their code prints; docstrings may use ``NUMBER``.

The root ``conftest.py`` takes pytest's ``NUMBER`` flag off the doctests of
Markdown pages. These tests run pytest, with this repository's doctest
settings and that conftest, on a page and a module that both show ``0.3``
for ``0.1 + 0.2``: the module passes (``NUMBER`` compares to the digits
written) and the page fails with the number it printed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = ">>> 0.1 + 0.2\n0.3\n"


def _project(tmp_path: Path) -> Path:
    """A project with this repository's doctest settings and root conftest."""
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    flags = settings["tool"]["pytest"]["ini_options"]["doctest_optionflags"]
    assert "NUMBER" in flags  # what the conftest has to undo on pages
    (tmp_path / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\n"
        "addopts = \"--doctest-modules --doctest-glob='*.md' -p no:cacheprovider\"\n"
        f"doctest_optionflags = {flags!r}\n",
        encoding="utf-8",
    )
    shutil.copy(REPO / "conftest.py", tmp_path / "conftest.py")
    return tmp_path


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--doctest-continue-on-failure", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_page_that_shows_a_rounded_number_fails_and_a_docstring_passes(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "page.md").write_text(f"```python\n{EXAMPLE}\n```\n", encoding="utf-8")
    (project / "module.py").write_text(f'"""\n{EXAMPLE}"""\n', encoding="utf-8")
    done = _pytest(project, "page.md", "module.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED page.md::page.md" in done.stdout
    assert "module.py" not in done.stdout.split("short test summary")[-1]
    assert "0.30000000000000004" in done.stdout
    assert "1 failed, 1 passed" in done.stdout


def test_a_page_may_ask_for_number_on_a_line_where_the_reader_sees_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    example = EXAMPLE.replace("0.2\n", "0.2  # doctest: +NUMBER\n")
    (project / "page.md").write_text(f"```python\n{example}\n```\n", encoding="utf-8")
    done = _pytest(project, "page.md")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
