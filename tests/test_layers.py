"""The package's layers hold: no import circle, no import upwards, no module too long.

The checker (``tools/layers.py``) is run on the package as it is, and fed
small packages with each fault, so that it is shown able to fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import load_script

layers = load_script("layers", "tools/layers.py")


def test_the_package_has_no_circle_no_import_upwards_and_no_long_module() -> None:
    assert layers.problems() == []


def test_every_layer_is_a_folder_and_holds_modules() -> None:
    _, files = layers.graph()
    for prefix in layers.LAYERS:
        inside = [m for m in files if m.startswith(prefix + ".")]
        assert files[prefix].name == "__init__.py"
        assert len(inside) >= 2, prefix


def _package(tmp_path: Path, sources: dict[str, str]) -> Path:
    for name, text in sources.items():
        path = tmp_path / "minigrad" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in ["minigrad", *(f"minigrad/{p}" for p in ("core", "checking", "teach"))]:
        init = tmp_path / folder / "__init__.py"
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text("")
    return tmp_path


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "core/a.py": "from minigrad.core import b\n",
            "core/b.py": "def f():\n    from minigrad.core.a import x\n",
        },
    )
    assert layers.problems(root) == [
        "import circle: minigrad.core.a -> minigrad.core.b -> minigrad.core.a"
    ]


def test_an_import_for_annotations_only_is_no_circle(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "core/a.py": "from minigrad.core import b\n",
            "core/b.py": (
                "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from minigrad.core.a import x\n"
                "else:\n    import math\n"
            ),
        },
    )
    assert layers.problems(root) == []


def test_an_import_from_a_layer_above_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "core/value.py": "def graph():\n    from minigrad.teach.viz import graph\n",
            "teach/viz.py": "",
            "checking/run.py": "import minigrad\n",
        },
    )
    assert layers.problems(root) == [
        "minigrad.checking.run imports minigrad, from a layer above its own "
        "(minigrad.checking below the top level)",
        "minigrad.core.value imports minigrad.teach.viz, from a layer above its own "
        "(minigrad.core below minigrad.teach)",
    ]


def test_a_relative_import_is_resolved_and_a_long_module_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "core/rules/__init__.py": "from . import trig\nfrom .. import value\n",
            "core/rules/trig.py": "from minigrad.core.rules import x\n",
            "core/value.py": "x = 1\n" * (layers.MAX_LINES + 1),
        },
    )
    assert layers.problems(root) == [
        "import circle: minigrad.core.rules -> minigrad.core.rules.trig -> minigrad.core.rules",
        f"minigrad.core.value has {layers.MAX_LINES + 1} lines, more than {layers.MAX_LINES}",
    ]


def test_an_import_from_a_room_above_in_checking_is_found(tmp_path: Path) -> None:
    # numeric < verdicts < run < the face (gradcheck.py, strategies.py) < lab.
    root = _package(
        tmp_path,
        {
            "checking/numeric/__init__.py": "",
            "checking/numeric/steps.py": "from minigrad.checking.verdicts import convict\n",
            "checking/verdicts/__init__.py": "",
            "checking/verdicts/convict.py": "from minigrad.checking.numeric import steps\n",
            "checking/run/__init__.py": "",
            "checking/run/runner.py": "from minigrad.checking.verdicts import convict\n",
            "checking/gradcheck.py": "from minigrad.checking.run import runner\n",
            "checking/lab/__init__.py": "",
            "checking/lab/trials.py": "def f():\n    from minigrad.checking import gradcheck\n",
            "checking/verdicts/scales.py": "from minigrad.checking.lab import trials\n",
        },
    )
    assert layers.problems(root) == [
        "import circle: minigrad.checking.numeric.steps -> minigrad.checking.verdicts.convict "
        "-> minigrad.checking.numeric.steps",
        "minigrad.checking.numeric.steps imports minigrad.checking.verdicts.convict, from a room "
        "above its own (minigrad.checking.numeric below minigrad.checking.verdicts)",
        "minigrad.checking.verdicts.scales imports minigrad.checking.lab.trials, from a room "
        "above its own (minigrad.checking.verdicts below minigrad.checking.lab)",
    ]


def test_the_rooms_are_folders_of_checking_and_a_long_module_there_is_found(
    tmp_path: Path,
) -> None:
    _, files = layers.graph()
    for prefix in layers.ROOMS:
        assert files[prefix].name == "__init__.py", prefix
    assert layers.room("minigrad.checking.gradcheck") == layers.ROOMS.index("minigrad.checking")
    assert layers.room("minigrad.core.value") is None
    long = "x = 1\n" * (layers.ROOM_MAX_LINES + 1)
    root = _package(tmp_path, {"checking/gradcheck.py": long, "core/value.py": long})
    assert layers.problems(root) == [
        f"minigrad.checking.gradcheck has {layers.ROOM_MAX_LINES + 1} lines, "
        f"more than {layers.ROOM_MAX_LINES}"
    ]


@pytest.mark.parametrize(("argv", "code"), [([], 0), (["--graph"], 0)])
def test_the_command_prints_and_exits_by_what_it_found(
    argv: list[str], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert layers.main(argv) == code
    out = capsys.readouterr().out
    assert out.strip().endswith("no module over 600 lines")
    assert ("minigrad.core.value: minigrad.core._validate" in out) == ("--graph" in argv)
