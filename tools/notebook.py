"""Run docs/notebook.ipynb in a Jupyter kernel and store its outputs, or check them.

    python tools/notebook.py            # run every cell, write the outputs into the notebook
    python tools/notebook.py --check    # run every cell, exit 1 if the stored outputs differ

The cells run as Jupyter runs them: nbclient starts an IPython kernel
(ipykernel) in this Python, and the outputs are what the kernel sends back,
made by IPython's display hooks and formatters: ``stream`` outputs for what
a cell prints, an ``execute_result`` for the value of its last line (its
``text/plain`` and every rich type its ``_repr_*_`` methods give), a
``display_data`` for each ``display()``. ``pip install nbclient ipykernel``
(the ``notebook`` extra) is all it needs; no Jupyter server or browser. The
cells import the ``minigrad`` this Python imports (from a clone: ``pip
install -e .`` first); the tool prints which one the kernel used.

The notebook runs as on a bare machine, so its outputs do not depend on what
this one has installed: Graphviz's ``dot`` is off PATH, matplotlib cannot be
imported in the kernel, and the kernel's working directory is a fresh
temporary one. The kernel is this Python's, whatever kernels Jupyter knows.

``--check`` compares text and numbers exactly and SVG pictures by structure:
the same elements in the same order with the same texts and colours, every
number in their attributes masked, so a coordinate printed one digit
differently is not a difference but a missing point or a changed label is.
HTML is compared exactly too, except for the SVG pictures inside it (compared
by structure) and the ids a stepper (``minigrad.step_backward``) draws at
random, so that two of them on one page never clash.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import json
import os
import re
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

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


#: The kernel's name here: a spec of our own, so no kernel Jupyter knows of is picked instead.
KERNEL = "minigrad-notebook"
#: A bound on one cell, for a cell that hangs; the whole notebook takes seconds.
CELL_TIMEOUT = 600
#: Run in the kernel as it starts, leaving no name behind and counting no execution:
#: matplotlib cannot be imported (a bare machine), and every warning shows every time.
KERNEL_SETUP = (
    '__import__("sys").modules.update(dict.fromkeys(("matplotlib", "matplotlib.pyplot")))',
    '__import__("warnings").simplefilter("always")',
)


class Ran(NamedTuple):
    """One run of a notebook in a kernel."""

    outputs: list[list[Output]]  # each code cell's, as nbformat stores them
    values: dict[str, str]  # the repr of each expression asked for, evaluated after the cells
    minigrad: str  # the minigrad the kernel imported: version and folder


@contextlib.contextmanager
def bare_machine() -> Iterator[Path]:
    """No ``dot`` on PATH and no pytest in the environment; a fresh directory to run in.

    The kernel started inside inherits the environment; the directory (yielded)
    is its working directory. matplotlib is kept out by :data:`KERNEL_SETUP`.
    """
    saved_env = {key: os.environ.get(key) for key in ("PATH", "PYTEST_CURRENT_TEST")}
    path = os.environ.get("PATH", "")
    # Every directory that holds a `dot` goes, so the picture does not depend on Graphviz.
    os.environ["PATH"] = os.pathsep.join(
        d for d in path.split(os.pathsep) if d and shutil.which("dot", path=d) is None
    )
    # Report texts are longer under pytest; the notebook shows what a person sees.
    os.environ.pop("PYTEST_CURRENT_TEST", None)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            yield Path(tmp)
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _kernel_spec() -> Iterator[Path]:
    """:data:`KERNEL`, a kernel spec that runs ipykernel in this very Python; its folder."""
    saved = os.environ.get("JUPYTER_PATH")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp, "kernels", KERNEL)
        folder.mkdir(parents=True)
        spec = {
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (minigrad's notebook check)",
            "language": "python",
        }
        (folder / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [tmp, saved]))
        try:
            yield Path(tmp)
        finally:
            if saved is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = saved


def execute(nb: dict[str, Any], *, cells: int | None = None, evaluate: Sequence[str] = ()) -> Ran:
    """Run the code cells in order in a fresh kernel; their outputs, as nbformat stores them.

    Args:
        nb: The notebook (not changed).
        cells: Run only the first this many code cells (all by default).
        evaluate: Expressions to evaluate in the kernel after the cells
            (``"a.grad"``); :attr:`Ran.values` holds the ``repr`` of each.

    Raises:
        RuntimeError: A cell raised; the message names the cell and the error.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from traitlets.config import Config

    code_cells = [
        {**cell, "source": source(cell)} for cell in nb["cells"] if cell["cell_type"] == "code"
    ][:cells]
    whole = {**copy.deepcopy(nb), "cells": copy.deepcopy(code_cells)}
    book = nbformat.from_dict(whole)  # type: ignore[no-untyped-call]
    outputs: list[list[Output]] = []
    with bare_machine() as tmp, _kernel_spec() as sockets:
        client = NotebookClient(
            book,
            # Local sockets, not TCP on 127.0.0.1: no port to open, and no kernel
            # warning that the connection is unencrypted.
            config=Config({"KernelManager": {"transport": "ipc", "ip": str(sockets / "kernel")}}),
            timeout=CELL_TIMEOUT,
            kernel_name=KERNEL,
            resources={"metadata": {"path": str(tmp)}},
            extra_arguments=[f"--IPKernelApp.exec_lines={line}" for line in KERNEL_SETUP],
            record_timing=False,
        )
        with client.setup_kernel():
            for index, cell in enumerate(book.cells):
                try:
                    client.execute_cell(cell, index)
                except CellExecutionError as exc:
                    raise RuntimeError(
                        f"notebook cell {cell.get('id', '?')!r} raised {exc.ename}: {exc.evalue}"
                        f"\nit printed: {_printed(cell)}"
                    ) from None
                outputs.append(_stored(cell["outputs"]))
            asked = [
                "(lambda m: f'minigrad {m.__version__} from {m.__path__[0]}')"
                "(__import__('minigrad'))"
            ]
            values = _evaluate(client, tmp, [*asked, *evaluate])
    version = values.pop(asked[0])
    return Ran(outputs, values, _literal(version))


def _printed(cell: Any) -> str:
    return "".join(
        o.get("text", "") for o in cell.get("outputs", []) if o["output_type"] == "stream"
    )


def _stored(outputs: list[Any]) -> list[Output]:
    """Outputs as Jupyter saves them: text as lists of lines, a cell's stream pieces joined.

    A kernel sends what a cell prints in pieces as it flushes; Jupyter shows
    them as one output, and the stored notebook has one per stream in a row.
    """
    stored: list[Output] = []
    for output in json.loads(json.dumps(outputs)):
        kind = output["output_type"]
        if kind == "stream":
            if (
                stored
                and stored[-1]["output_type"] == "stream"
                and stored[-1]["name"] == output["name"]
            ):
                stored[-1]["text"] = _lines(_text(stored[-1]["text"]) + _text(output["text"]))
                continue
            output["text"] = _lines(_text(output["text"]))
        elif "data" in output:
            output["data"] = {
                mime: _lines(value) if isinstance(value, str) else value
                for mime, value in output["data"].items()
            }
        stored.append(output)
    return stored


def _evaluate(client: Any, folder: Path, expressions: list[str]) -> dict[str, str]:
    """The repr of each expression in the kernel's namespace, written to a file and read back."""
    answer = folder / ".minigrad-notebook-values.json"
    code = (
        f"__import__('json').dump({{e: repr(eval(e)) for e in {expressions!r}}}, "
        f"open({str(answer)!r}, 'w', encoding='utf-8'))"
    )
    from nbclient.exceptions import CellExecutionError
    from nbformat.v4 import new_code_cell

    try:
        # Not stored in the history: the cells' execution counts stay as they were.
        client.nb.cells.append(new_code_cell(code))  # type: ignore[no-untyped-call]
        client.execute_cell(client.nb.cells[-1], len(client.nb.cells) - 1, store_history=False)
    except CellExecutionError as exc:
        raise RuntimeError(
            f"evaluating {expressions!r} in the kernel raised {exc.ename}: {exc.evalue}"
        ) from None
    values = json.loads(answer.read_text(encoding="utf-8"))
    answer.unlink()
    assert isinstance(values, dict)
    return values


def _literal(text: str) -> str:
    value = ast.literal_eval(text)  # a str's repr, made by the kernel
    assert isinstance(value, str)
    return value


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
                elif mime == "text/html":
                    (old_html, old_svgs), (new_html, new_svgs) = _html(old_text), _html(new_text)
                    if old_html != new_html:
                        found.append(f"{where}: {mime} stored {old_html!r}, now {new_html!r}")
                    elif old_svgs != new_svgs:
                        found.append(f"{where}: an SVG picture in the HTML differs in structure")
                elif old_text != new_text:
                    found.append(f"{where}: {mime} stored {old_text!r}, now {new_text!r}")
    return found


_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
#: The ids of a stepper: a number and a random part (see minigrad.teach.stepper).
_STEPPER_ID = re.compile(r"mg-stepper-\d+-[0-9a-f]+")


def _html(text: str) -> tuple[str, list[Any]]:
    """HTML to compare: its text, SVGs cut out and ids made one; and the SVGs' structures."""
    svgs = [svg_structure(svg) for svg in _SVG.findall(text)]
    return _STEPPER_ID.sub("mg-stepper-ID", _SVG.sub("<svg/>", text)), svgs


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
    ran = execute(nb, cells=args.cells)
    fresh = ran.outputs
    print(ran.minigrad)  # the one the kernel imported
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
