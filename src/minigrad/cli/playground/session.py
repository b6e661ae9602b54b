"""What the playground runs inside Pyodide: the editor's code, and what it prints and shows.

The page's Web Worker calls :func:`run_json` with the code in its editor;
the code runs in a fresh namespace that holds two extra names, ``show(obj)``
and its Jupyter spelling ``display(obj)``, which put a picture or a report
on the page: an object's ``_repr_svg_`` (a graph from ``value.graph()``),
else its ``_repr_html_`` (a check's report, a view with its own script),
else its text. What the code prints to stdout and stderr, the warnings it
raises, what it shows and its traceback, if it raises, come back in the
order they happened, each also passed to ``emit`` as it happens, so the page
shows them while the code still runs (and keeps them when Stop ends it).
Nothing here is browser-specific, so the same function runs under plain
CPython in the tests.
"""

from __future__ import annotations

import contextlib
import json
import linecache
import traceback
import warnings
from collections.abc import Callable
from types import TracebackType

__all__ = ["MAX_CHARS", "MAX_LINES", "SOURCE", "rich", "run", "run_json"]

#: The file name the editor's code runs under, as tracebacks and warnings name it.
SOURCE = "<editor>"
#: How much printed text one run shows; a loop that prints forever stops being shown here.
MAX_LINES = 2000
MAX_CHARS = 200_000

Event = dict[str, str]


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


class _Output:
    """One run's events in order, each passed on to ``emit``; printed text capped.

    Text past :data:`MAX_LINES` lines or :data:`MAX_CHARS` characters is
    counted, not kept: one event (``kind`` ``"capped"``) says where the
    output stops, so a page never grows without bound.
    """

    def __init__(self, emit: Callable[[Event], None] | None) -> None:
        self.events: list[Event] = []
        self.emit = emit
        self.lines = 0
        self.chars = 0
        self.dropped = 0

    def add(self, event: Event) -> None:
        self.events.append(event)
        if self.emit is not None:
            self.emit(event)

    def text(self, kind: str, text: str) -> None:
        if not text:
            return
        if self.dropped:
            self.dropped += len(text)
            return
        room = min(MAX_CHARS - self.chars, _room_in_lines(text, MAX_LINES - self.lines))
        kept = text[:room]
        self.lines += kept.count("\n")
        self.chars += len(kept)
        if kept:
            self.add({"kind": kind, "text": kept})
        if len(kept) < len(text):
            self.dropped = len(text) - len(kept)
            self.add(
                {
                    "kind": "capped",
                    "text": f"[output capped at {MAX_LINES} lines or {MAX_CHARS} characters: "
                    "the rest is not shown]\n",
                }
            )


def _room_in_lines(text: str, lines: int) -> int:
    """How many characters of ``text`` hold at most ``lines`` line ends."""
    at = -1
    for _ in range(lines):
        at = text.find("\n", at + 1)
        if at < 0:
            return len(text)
    return at + 1


class _Stream:
    """A text file whose writes become events of one kind (``stdout`` or ``stderr``)."""

    def __init__(self, output: _Output, kind: str) -> None:
        self.output = output
        self.kind = kind

    def write(self, text: str) -> int:
        self.output.text(self.kind, text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _user_traceback(exc: BaseException) -> str:
    """``exc``'s traceback from the user's own frames on (the first frame is :func:`run`'s)."""
    frames: TracebackType | None = exc.__traceback__
    frames = frames.tb_next if frames is not None else None
    return "".join(traceback.format_exception(type(exc), exc, frames))


def run(code: str, emit: Callable[[Event], None] | None = None) -> dict[str, object]:
    """Run ``code`` as the playground does and collect what it prints, warns and shows.

    Args:
        code: Python source, as typed in the page's editor.
        emit: Called with each event as it happens (the page's worker passes
            them on to the page); None collects them only.

    Returns:
        ``events`` (in order: ``{"kind": "stdout" | "stderr" | "warning" |
        "capped", "text": ...}`` and ``{"kind": "show", "as": "svg" | "html"
        | "text", "content": ...}`` from :func:`rich`), and, for a quick
        look, ``stdout`` (the printed text), ``shown`` (one :func:`rich`
        item per ``show()``), ``error`` (the traceback of an exception the
        code raised, from the code's own frames on, with its lines' text;
        ``""`` when it ran to the end) and ``exit`` (``repr`` of the code
        ``sys.exit`` was called with; None when it was not called).

    Raises:
        TypeError: ``code`` is not a string.

    Example:
        >>> result = run("print(1 + 1)\\nshow('done')\\n1 / 0")
        >>> result["stdout"], result["shown"]
        ('2\\n', [{'kind': 'text', 'content': 'done'}])
        >>> print(result["error"])
        Traceback (most recent call last):
          File "<editor>", line 3, in <module>
            1 / 0
            ~~^~~
        ZeroDivisionError: division by zero
        <BLANKLINE>
        >>> run("import sys\\nsys.exit(3)")["exit"]
        '3'
    """
    if not isinstance(code, str):
        raise TypeError(f"run: code must be a str, got {type(code).__name__}")
    output = _Output(emit)

    def show(obj: object) -> None:
        item = rich(obj)
        output.add({"kind": "show", "as": item["kind"], "content": item["content"]})

    def warn(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: object = None,
        line: str | None = None,
    ) -> None:
        output.text("warning", warnings.formatwarning(message, category, filename, lineno, line))

    # Tracebacks and warnings read the editor's lines from linecache, as for a file.
    linecache.cache[SOURCE] = (len(code), None, code.splitlines(keepends=True), SOURCE)
    namespace: dict[str, object] = {"__name__": "__main__", "show": show, "display": show}
    error = ""
    exit_code: str | None = None
    stdout, stderr = _Stream(output, "stdout"), _Stream(output, "stderr")
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
    ):
        # Each warning once per place, as a script run from a terminal shows them.
        warnings.simplefilter("default")
        warnings.showwarning = warn
        try:
            exec(compile(code, SOURCE, "exec"), namespace)
        except SystemExit as exc:
            exit_code = repr(exc.code)
        except BaseException as exc:  # KeyboardInterrupt too: the page, not Python, ends a run
            error = _user_traceback(exc)
    events = output.events
    return {
        "events": events,
        "stdout": "".join(e["text"] for e in events if e["kind"] == "stdout"),
        "shown": [
            {"kind": e["as"], "content": e["content"]} for e in events if e["kind"] == "show"
        ],
        "error": error,
        "exit": exit_code,
    }


def run_json(code: str, emit: Callable[[str], None] | None = None) -> str:
    """:func:`run`, as JSON text (what crosses from Python to the page's JavaScript).

    Args:
        code: Python source.
        emit: Called with each event as JSON text, as it happens.

    Example:
        >>> import json
        >>> json.loads(run_json("print('hi')"))["events"]
        [{'kind': 'stdout', 'text': 'hi'}, {'kind': 'stdout', 'text': '\\n'}]
    """

    def emit_json(event: Event) -> None:
        if emit is not None:
            emit(json.dumps(event))

    return json.dumps(run(code, emit_json if emit is not None else None))
