"""Run docs/notebook.ipynb with the standard library and store its outputs, or check them.

    python tools/notebook.py            # run every cell, write the outputs into the notebook
    python tools/notebook.py --check    # run every cell, exit 1 if the stored outputs differ

The cells import the ``minigrad`` this Python imports, as a kernel would
(from a clone: ``pip install -e .`` first, or ``PYTHONPATH=src``); the tool
prints which one it used.

No Jupyter is needed: the code cells run in order in one namespace with plain
``exec``, as a kernel runs them. What a cell prints becomes a ``stream``
output; the value of its last line, when it is an expression and not None,
becomes an ``execute_result`` with the MIME types Jupyter would store: its
``repr`` as ``text/plain``, and ``image/svg+xml`` and ``text/html`` from its
``_repr_svg_`` and ``_repr_html_`` when they return text.

The notebook runs as on a bare machine, so its outputs do not depend on what
this one has installed: Graphviz's ``dot`` is off PATH and matplotlib cannot
be imported; the working directory is a fresh temporary one.

``--check`` compares text and numbers exactly and SVG pictures by structure:
the same elements in the same order with the same texts and colours, every
number in their attributes masked, so a coordinate printed one digit
differently is not a difference but a missing point or a changed label is.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "notebook.ipynb"
REGENERATE = "python tools/notebook.py"

Output = dict[str, Any]


def load(path: Path = NOTEBOOK) -> dict[str, Any]:
    """The notebook's JSON."""
    with path.open(encoding="utf-8") as f:
        nb = json.load(f)
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError(f"{path}: not a notebook (no list of cells)")
    return nb


def source(cell: dict[str, Any]) -> str:
    """A cell's source as one string (nbformat allows a string or a list of lines)."""
    text = cell["source"]
    return text if isinstance(text, str) else "".join(text)


def _lines(text: str) -> list[str]:
    """Text as nbformat stores it: a list of lines, each but the last ending in a newline."""
    return text.splitlines(keepends=True)


def _text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


@contextlib.contextmanager
def bare_machine() -> Iterator[None]:
    """No ``dot``, no matplotlib, no pytest in the environment, a fresh working directory."""
    saved_env = {key: os.environ.get(key) for key in ("PATH", "PYTEST_CURRENT_TEST")}
    saved_cwd = os.getcwd()
    blocked = {name: sys.modules.get(name) for name in ("matplotlib", "matplotlib.pyplot")}
    path = os.environ.get("PATH", "")
    # Every directory that holds a `dot` goes, so the picture does not depend on Graphviz.
    os.environ["PATH"] = os.pathsep.join(
        d for d in path.split(os.pathsep) if d and shutil.which("dot", path=d) is None
    )
    # Report texts are longer under pytest; the notebook shows what a person sees.
    os.environ.pop("PYTEST_CURRENT_TEST", None)
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # makes `import` raise ImportError
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            try:
                yield
            finally:
                os.chdir(saved_cwd)
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for name, module in blocked.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _display(value: object, count: int) -> Output:
    """The execute_result Jupyter stores for a cell whose last line has this value."""
    data: dict[str, list[str]] = {"text/plain": _lines(repr(value))}
    for method, mime in (("_repr_svg_", "image/svg+xml"), ("_repr_html_", "text/html")):
        show = getattr(value, method, None)
        if callable(show):
            shown = show()
            if isinstance(shown, str):
                data[mime] = _lines(shown)
    return {
        "data": data,
        "execution_count": count,
        "metadata": {},
        "output_type": "execute_result",
    }


def execute(
    nb: dict[str, Any], *, cells: int | None = None, namespace: dict[str, object] | None = None
) -> list[list[Output]]:
    """Run the code cells in order; the outputs of each, as nbformat stores them.

    Args:
        nb: The notebook.
        cells: Run only the first this many code cells (all by default).
        namespace: The cells' globals, to look at afterwards (a fresh dict
            by default).

    Raises:
        RuntimeError: A cell raised; the message names the cell and the error.
    """
    if namespace is None:
        namespace = {}
    namespace.update({"__name__": "__main__", "__builtins__": builtins})
    code_cells = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    results: list[list[Output]] = []
    with bare_machine(), warnings.catch_warnings():
        # Every warning, every time: the first run and a rerun print the same.
        warnings.simplefilter("always")
        for count, cell in enumerate(code_cells[:cells], start=1):
            results.append(_run_cell(source(cell), namespace, count, cell.get("id", "?")))
    return results


def _run_cell(text: str, namespace: dict[str, object], count: int, cell_id: str) -> list[Output]:
    tree = ast.parse(text, filename=f"<cell {cell_id}>")
    # The last line, when it is an expression, is shown rather than run for nothing.
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body.pop()
    else:
        last = None
    out, err = io.StringIO(), io.StringIO()
    value: object = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(compile(tree, f"<cell {cell_id}>", "exec"), namespace)
            if last is not None:
                expression = ast.Expression(last.value)
                value = eval(compile(expression, f"<cell {cell_id}>", "eval"), namespace)
    except Exception as exc:
        raise RuntimeError(
            f"notebook cell {cell_id!r} raised {type(exc).__name__}: {exc}\n"
            f"it printed: {out.getvalue()}{err.getvalue()}"
        ) from exc
    outputs: list[Output] = []
    for name, stream in (("stdout", out), ("stderr", err)):
        if stream.getvalue():
            outputs.append(
                {"name": name, "output_type": "stream", "text": _lines(stream.getvalue())}
            )
    if value is not None:
        outputs.append(_display(value, count))
    return outputs


def fill(nb: dict[str, Any], outputs: list[list[Output]]) -> dict[str, Any]:
    """The notebook with these outputs and execution counts in its code cells."""
    code_cells = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    if len(outputs) != len(code_cells):
        raise ValueError(f"{len(outputs)} cells' outputs for {len(code_cells)} code cells")
    for count, (cell, cell_outputs) in enumerate(zip(code_cells, outputs, strict=True), start=1):
        cell["execution_count"] = count
        cell["outputs"] = cell_outputs
    return nb


def dumps(nb: dict[str, Any]) -> str:
    """The notebook as Jupyter writes it: sorted keys, one-space indent, a final newline."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def svg_structure(svg: str) -> list[tuple[str, tuple[tuple[str, str], ...], str]]:
    """An SVG's elements in order: tag, attributes with numbers masked, and text.

    Colours (``#rrggbb``) are kept; every other number in an attribute becomes
    ``#``, so ``points="1.0,2.0 3.0,4.0"`` keeps its two points but not their
    digits. Text content (tick labels, legends, node labels) is kept exactly.
    """
    root = ET.fromstring(svg)
    structure = []
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1]
        attributes = tuple(
            sorted(
                (
                    name.rsplit("}", 1)[-1],
                    value if value.startswith("#") else _NUMBER.sub("#", value),
                )
                for name, value in element.attrib.items()
            )
        )
        structure.append((tag, attributes, (element.text or "").strip()))
    return structure


def differences(stored: list[list[Output]], fresh: list[list[Output]]) -> list[str]:
    """How the stored outputs differ from fresh ones, one line per difference (none: equal)."""
    found = []
    if len(stored) != len(fresh):
        found.append(f"{len(stored)} code cells have outputs stored, {len(fresh)} ran")
    for n, (old, new) in enumerate(zip(stored, fresh, strict=False), start=1):
        where = f"code cell {n}"
        if [o["output_type"] for o in old] != [o["output_type"] for o in new]:
            found.append(
                f"{where}: outputs {[o['output_type'] for o in old]} stored, "
                f"{[o['output_type'] for o in new]} now"
            )
            continue
        for a, b in zip(old, new, strict=True):
            if a["output_type"] == "stream":
                if (a["name"], _text(a["text"])) != (b["name"], _text(b["text"])):
                    found.append(
                        f"{where}: {a['name']} stored {_text(a['text'])!r}, now "
                        f"{b['name']} {_text(b['text'])!r}"
                    )
                continue
            if a.get("execution_count") != b.get("execution_count"):
                found.append(f"{where}: execution_count {a.get('execution_count')} stored")
            if sorted(a["data"]) != sorted(b["data"]):
                found.append(
                    f"{where}: MIME types {sorted(a['data'])} stored, {sorted(b['data'])} now"
                )
                continue
            for mime in a["data"]:
                old_text, new_text = _text(a["data"][mime]), _text(b["data"][mime])
                if mime == "image/svg+xml":
                    if svg_structure(old_text) != svg_structure(new_text):
                        found.append(f"{where}: the SVG picture's structure differs")
                elif old_text != new_text:
                    found.append(f"{where}: {mime} stored {old_text!r}, now {new_text!r}")
    return found


def stored_outputs(nb: dict[str, Any]) -> list[list[Output]]:
    """The outputs stored in the notebook, one list per code cell."""
    return [list(cell.get("outputs", [])) for cell in nb["cells"] if cell["cell_type"] == "code"]


def main(argv: list[str] | None = None) -> int:
    """Regenerate the notebook's outputs, or with ``--check`` compare them; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", nargs="?", type=Path, default=NOTEBOOK)
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 if the stored outputs differ"
    )
    parser.add_argument(
        "--cells", type=int, default=None, help="with --check: run and compare the first N only"
    )
    args = parser.parse_args(argv)
    nb = load(args.notebook)
    if not args.check and args.cells is not None:
        parser.error("--cells needs --check: the notebook is written whole or not at all")
    fresh = execute(nb, cells=args.cells)
    import minigrad  # the one the cells imported: say which, as a kernel would use it

    print(f"minigrad {minigrad.__version__} from {Path(minigrad.__file__).parent}")
    if args.check:
        stored = stored_outputs(nb)[: len(fresh)]
        found = differences(stored, fresh)
        for line in found:
            print(line, file=sys.stderr)
        if found:
            print(f"{args.notebook}: stored outputs are stale; run `{REGENERATE}`", file=sys.stderr)
            return 1
        print(f"{args.notebook}: the outputs of {len(fresh)} code cells are up to date")
        return 0
    args.notebook.write_text(dumps(fill(nb, fresh)), encoding="utf-8")
    print(f"wrote {args.notebook}: outputs of {len(fresh)} code cells")
    return 0


if __name__ == "__main__":
    sys.exit(main())
