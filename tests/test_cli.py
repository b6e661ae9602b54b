"""The ``minigrad`` command: the main job, user files, exit codes, streams."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from minigrad import ops
from minigrad.cli import COMPOSITES, main

GOOD_OPS = """
import math
import minigrad as mg

cube = mg.Rule("cube", lambda x: x**3, (lambda x, out: 3 * x**2,))
hypot = mg.Rule(
    "hypot",
    math.hypot,
    (lambda x, y, out: x / out, lambda x, y, out: y / out),
    domain=((0.5, 2.0), (0.5, 2.0)),
)
"""

BROKEN_OPS = (
    GOOD_OPS
    + """
# The slope of sin with its sign flipped: a wrong rule.
bad_sin = mg.Rule("bad_sin", math.sin, (lambda x, out: -mg.cos(x),))
"""
)


def test_check_runs_every_rule_and_composite(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", "--points", "2"])
    out = capsys.readouterr().out
    assert status == 0
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    names = {line[: line.index("  ")] if "  " in line else line for line in out.splitlines()}
    for rule in ops.TABLE:
        assert any(r and r[0] == rule.name and r[-1] == "ok" for r in rows), rule.name
    for name, _, _ in COMPOSITES:
        assert any(n.startswith(name) for n in names), name
    assert "orders 1-3: passed" in out


def test_check_user_file_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "good_ops.py"
    path.write_text(GOOD_OPS)
    assert main(["check", str(path), "--points", "3"]) == 0
    out = capsys.readouterr().out
    assert "cube" in out and "hypot" in out and "2 rule(s)" in out


def test_check_user_file_with_a_wrong_rule_fails_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken_ops.py"
    path.write_text(BROKEN_OPS)
    assert main(["check", str(path), "--points", "3"]) == 1
    out = capsys.readouterr().out
    failing = [line for line in out.splitlines() if line.endswith("FAIL")]
    assert [line.split()[0] for line in failing] == ["bad_sin"]
    assert "cause: op 'bad_sin'" in out
    assert "FAILED (1 failing)" in out


def test_check_without_rules_or_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    assert main(["check", str(empty)]) == 2
    assert "no Rule found" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_bad_numbers_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--points", "0"]) == 2
    assert "--points" in capsys.readouterr().err


def test_progress_stays_off_a_non_terminal_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "--points", "1", "--order", "1"])
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "\033[" not in captured.out  # no colour off a terminal


def test_eps_curve_writes_the_figure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = tmp_path / "curve.svg"
    assert main(["eps-curve", "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    best = [
        float(line.split("best eps ")[1].split()[0]) for line in out.splitlines() if "best" in line
    ]
    # The U's minimum sits between truncation and round-off: near 1e-16 ** (1/3).
    assert best and all(1e-8 <= b <= 1e-4 for b in best)
    text = svg.read_text()
    assert text.startswith("<svg") and text.count("<polyline") == 3


def test_python_dash_m_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "minigrad", "check", "--points", "1", "--order", "1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "passed" in done.stdout
