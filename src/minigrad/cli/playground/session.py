"""What the playground page runs inside Pyodide: the editor's code, and what it shows.

The page calls :func:`run_json` with the code in its editor; the code runs in
a fresh namespace that holds one extra name, ``show(obj)``, which puts a
picture or a report on the page: an object's ``_repr_svg_`` (a graph from
``value.graph()``), else its ``_repr_html_`` (a check's report), else its
text. What the code prints, what it shows and its traceback, if it raises,
come back as one JSON object. Nothing here is browser-specific, so the same
function runs under plain CPython in the tests.
"""

from __future__ import annotations

import contextlib
import io
import json
import traceback

__all__ = ["rich", "run", "run_json"]


def rich(obj: object) -> dict[str, str]:
    """How the page shows ``obj``: ``{"kind": "svg" | "html" | "text", "content": ...}``.

    SVG text (a string starting ``<svg``) and ``_repr_svg_`` are pictures,
    ``_repr_html_`` is HTML; a method that returns ``None`` is passed over,
    as Jupyter does; anything else is shown as its ``str``.

    Example:
        >>> from minigrad import Value
        >>> rich(Value(1.0, label="x").graph())["kind"]
        'svg'
        >>> rich(42)
        {'kind': 'text', 'content': '42'}
    """
    if isinstance(obj, str) and obj.lstrip().startswith("<svg"):
        return {"kind": "svg", "content": obj}
    for kind in ("svg", "html"):
        method = getattr(obj, f"_repr_{kind}_", None)
        if callable(method):
            content = method()
            if isinstance(content, str):
                return {"kind": kind, "content": content}
    return {"kind": "text", "content": str(obj)}


def run(code: str) -> dict[str, object]:
    """Run ``code`` as the playground does and collect what it prints and shows.

    Args:
        code: Python source, as typed in the page's editor.

    Returns:
        ``stdout`` (the printed text), ``shown`` (one :func:`rich` item per
        ``show()`` call, in order) and ``error`` (the traceback of an
        exception the code raised, from the code's own frames on; ``""``
        when it ran to the end).

    Raises:
        TypeError: ``code`` is not a string.

    Example:
        >>> result = run("print(1 + 1)\\nshow('done')\\n1 / 0")
        >>> result["stdout"], result["shown"]
        ('2\\n', [{'kind': 'text', 'content': 'done'}])
        >>> result["error"].splitlines()[-1]
        'ZeroDivisionError: division by zero'
    """
    if not isinstance(code, str):
        raise TypeError(f"run: code must be a str, got {type(code).__name__}")
    shown: list[dict[str, str]] = []

    def show(obj: object) -> None:
        shown.append(rich(obj))

    namespace: dict[str, object] = {"__name__": "__main__", "show": show}
    printed = io.StringIO()
    error = ""
    with contextlib.redirect_stdout(printed):
        try:
            exec(compile(code, "<editor>", "exec"), namespace)
        except Exception as exc:
            # The first frame is this function's: the user's own start after it.
            frames = exc.__traceback__
            frames = frames.tb_next if frames is not None else None
            error = "".join(traceback.format_exception(type(exc), exc, frames))
    return {"stdout": printed.getvalue(), "shown": shown, "error": error}


def run_json(code: str) -> str:
    """:func:`run`, as JSON text (what crosses from Python to the page's JavaScript).

    Example:
        >>> run_json("print('hi')")
        '{"stdout": "hi\\\\n", "shown": [], "error": ""}'
    """
    return json.dumps(run(code))
