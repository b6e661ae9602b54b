"""micrograd's ``draw_dot``: the lecture's picture helper, needing nothing installed.

micrograd's lecture draws a graph with ``draw_dot(root, format='svg',
rankdir='LR')``, which returns a ``graphviz.Digraph``: Jupyter shows it, and
``dot.render('gout')`` writes it to files. :func:`draw_dot` takes the same
arguments and returns a :class:`Diagram` that does both with the standard
library alone: the picture of :func:`~minigrad.teach.viz.graph`, with the
DOT text of ``rankdir`` beside it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from minigrad.core.value import Value
from minigrad.teach.viz.dot import _dot
from minigrad.teach.viz.graph import _INSTALL_HINT, Graph, _run_dot, graph

__all__ = ["FORMATS", "RANKDIRS", "Diagram", "draw_dot"]

#: The directions Graphviz lays ranks out in: left to right, top to bottom, and back.
RANKDIRS = ("LR", "TB", "RL", "BT")
#: The formats a :class:`Diagram` writes; ``"png"`` and ``"pdf"`` need Graphviz's ``dot``.
FORMATS = ("svg", "dot", "png", "pdf")
_WITHOUT_DOT = ("svg", "dot")


class Diagram:
    """What :func:`draw_dot` returns: a picture Jupyter shows and that writes itself to files.

    The parts of a ``graphviz.Digraph`` that micrograd's lecture and its users
    touch, with no Graphviz needed: ``source`` (the DOT text), ``format``,
    :meth:`render`, :meth:`save`, :meth:`pipe`, and the SVG a notebook shows.
    In a notebook the picture is minigrad's own drawing
    (:meth:`Graph.svg <minigrad.teach.viz.Graph.svg>`), which runs left to
    right; for another ``rankdir`` it is drawn by Graphviz when ``dot`` is on
    PATH, and left to right by minigrad when it is not (the DOT text keeps
    the ``rankdir`` asked for).

    Attributes:
        graph: The :class:`~minigrad.teach.viz.Graph` drawn.
        format: What :meth:`render` and :meth:`pipe` make unless told otherwise.
        rankdir: The direction of the ranks, one of :data:`RANKDIRS`.
        source: The Graphviz DOT text, with ``rankdir``.

    Example:
        >>> from minigrad import Value
        >>> d = draw_dot(Value(2.0, label="x") * 3, rankdir="TB")
        >>> d
        Diagram(values=2, ops=1, constants=1, format='svg', rankdir='TB')
        >>> d.source.splitlines()[1]
        '  graph [rankdir=TB];'
    """

    def __init__(self, graph: Graph, format: str = "svg", rankdir: str = "LR") -> None:  # noqa: A002
        self.graph = graph
        self.format = _check_format(format, "Diagram: format")
        self.rankdir = _check_rankdir(rankdir, "Diagram: rankdir")
        self.source = graph.dot if rankdir == "LR" else _dot(graph._scene, rankdir)

    def __repr__(self) -> str:
        g = self.graph
        return (
            f"Diagram(values={g.values}, ops={g.ops}, constants={g.constants}, "
            f"format={self.format!r}, rankdir={self.rankdir!r})"
        )

    def __str__(self) -> str:
        return self.source

    def pipe(self, format: str | None = None) -> bytes:  # noqa: A002 (graphviz's name)
        """The picture as bytes, in ``format`` (this diagram's own when None).

        ``"dot"`` is the DOT text. ``"svg"`` is drawn by Graphviz's ``dot``
        when it is on PATH and by minigrad (left to right) when it is not;
        ``"png"`` and ``"pdf"`` need ``dot``.

        Args:
            format: One of :data:`FORMATS`, or None for :attr:`format`.

        Returns:
            The file's contents.

        Raises:
            ValueError: ``format`` is unknown, or needs ``dot`` and it is not on PATH.
            RuntimeError: ``dot`` failed; the message holds what it said.

        Example:
            >>> from minigrad import Value
            >>> d = draw_dot(Value(1.0).exp())
            >>> d.pipe("dot").startswith(b"digraph")
            True
            >>> b"</svg>" in d.pipe()
            True
        """
        fmt = self.format if format is None else _check_format(format, "Diagram.pipe: format")
        if fmt == "dot":
            return self.source.encode("utf-8")
        if fmt == "svg" and shutil.which("dot") is None:
            return self.graph.svg().encode("utf-8")
        return _run_dot(self.source, fmt, "Diagram.pipe")

    def save(
        self, filename: str | os.PathLike[str] | None = None, directory: str | os.PathLike[str] = ""
    ) -> str:
        """Write the DOT text to ``directory/filename``; return that path.

        As ``graphviz.Digraph.save``: the name is used as it is (no suffix
        added), ``"Digraph.gv"`` when None, and a missing directory is made.

        Args:
            filename: The file's name (or path).
            directory: Where to put it; the current directory by default.

        Returns:
            The path written, as a str.

        Example:
            >>> import pathlib, tempfile
            >>> from minigrad import Value
            >>> with tempfile.TemporaryDirectory() as tmp:
            ...     path = draw_dot(Value(1.0).exp()).save("g.gv", tmp)
            ...     print(pathlib.Path(path).name, pathlib.Path(path).read_text()[:7])
            g.gv digraph
        """
        path = Path(directory, "Digraph.gv" if filename is None else filename)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.source, encoding="utf-8")
        return str(path)

    def render(
        self,
        filename: str | os.PathLike[str] | None = None,
        directory: str | os.PathLike[str] = "",
        *,
        format: str | None = None,  # noqa: A002 (graphviz's name)
        cleanup: bool = False,
    ) -> str:
        """Write the DOT text to ``filename`` and the picture beside it; return the picture's path.

        As ``graphviz.Digraph.render``: ``render("gout")`` writes the DOT
        text to ``gout`` and the picture to ``gout.svg`` (``gout.`` and the
        format). The picture is made as :meth:`pipe` makes it, so an SVG
        needs no Graphviz.

        Args:
            filename: The DOT file's name (or path); ``"Digraph.gv"`` when None.
            directory: Where to put the files; the current directory by default.
            format: One of :data:`FORMATS`, or None for :attr:`format`.
            cleanup: Remove the DOT file once the picture is written.

        Returns:
            The path of the picture, as a str.

        Raises:
            ValueError: ``format`` is unknown, or needs ``dot`` and it is not on PATH.
            RuntimeError: ``dot`` failed; the message holds what it said.

        Example:
            >>> import pathlib, tempfile
            >>> from minigrad import Value
            >>> with tempfile.TemporaryDirectory() as tmp:
            ...     path = draw_dot(Value(1.0).exp()).render(pathlib.Path(tmp, "gout"))
            ...     print(pathlib.Path(path).name, "</svg>" in pathlib.Path(path).read_text())
            ...     print(sorted(p.name for p in pathlib.Path(tmp).iterdir()))
            gout.svg True
            ['gout', 'gout.svg']
        """
        fmt = self.format if format is None else _check_format(format, "Diagram.render: format")
        source = Path(self.save(filename, directory))
        picture = self.pipe(fmt)
        target = source.with_name(f"{source.name}.{fmt}")
        target.write_bytes(picture)
        if cleanup:
            source.unlink()
        return str(target)

    def _repr_svg_(self) -> str:
        """The SVG Jupyter shows: minigrad's own drawing, or Graphviz's for another ``rankdir``.

        Left to right, minigrad's drawing is shown as :class:`Graph` shows
        it (the same picture on every machine). Another direction needs
        Graphviz; without it, or if ``dot`` fails, minigrad's left-to-right
        drawing is shown rather than nothing.
        """
        if self.rankdir != "LR" and shutil.which("dot") is not None:
            try:
                return _run_dot(self.source, "svg", "Diagram").decode("utf-8")
            except (OSError, RuntimeError):
                pass
        return self.graph.svg()


def draw_dot(
    root: Value | Sequence[Value],
    format: str = "svg",  # noqa: A002 (the lecture's name)
    rankdir: str = "LR",
    *,
    max_nodes: int = 100,
) -> Diagram:
    """The picture of every Value ``root`` was computed from: micrograd's ``draw_dot``.

    The lecture's signature, returning a :class:`Diagram` in place of a
    ``graphviz.Digraph``: a notebook shows it, and ``.render("gout")``
    writes it to files, with nothing installed. Values are records of label,
    data and grad, ops are ellipses, as in :func:`~minigrad.teach.viz.graph`
    (which draws, and caps at ``max_nodes``).

    Args:
        root: The Value to draw back from, or several of them.
        format: What :meth:`Diagram.render` writes: ``"svg"`` or ``"dot"``
            (the DOT text), or ``"png"`` or ``"pdf"`` where Graphviz's
            ``dot`` is on PATH.
        rankdir: ``"LR"`` (left to right), ``"TB"``, ``"RL"`` or ``"BT"``.
        max_nodes: The most Values to draw (see :func:`~minigrad.teach.viz.graph`).

    Returns:
        The :class:`Diagram`.

    Raises:
        TypeError: ``root`` is not a Value (or a sequence of them), or
            ``format``, ``rankdir`` or ``max_nodes`` has the wrong type.
        ValueError: ``format`` or ``rankdir`` is not one of the above, or
            ``format`` needs ``dot`` and it is not on PATH.

    Example:
        >>> from minigrad import Value
        >>> a = Value(0.5, label="a")
        >>> o = (a * 2.0).tanh()
        >>> o.backward()
        >>> dot = draw_dot(o)
        >>> dot
        Diagram(values=3, ops=2, constants=1, format='svg', rankdir='LR')
        >>> "<td><b>a</b></td><td>data 0.5</td><td>grad 0.8399</td>" in dot.source
        True
        >>> dot._repr_svg_().startswith("<svg")
        True
        >>> draw_dot(o, rankdir="up")
        Traceback (most recent call last):
            ...
        ValueError: draw_dot: rankdir must be one of 'LR', 'TB', 'RL', 'BT', got 'up'
    """
    fmt = _check_format(format, "draw_dot: format")
    direction = _check_rankdir(rankdir, "draw_dot: rankdir")
    return Diagram(graph(root, max_nodes=max_nodes), fmt, direction)


def _check_format(fmt: object, what: str) -> str:
    if not isinstance(fmt, str):
        raise TypeError(f"{what} must be a str such as 'svg', got {type(fmt).__name__} {fmt!r}")
    if fmt in _WITHOUT_DOT:
        return fmt
    if fmt in FORMATS:
        if shutil.which("dot") is None:
            raise ValueError(
                f"{what} {fmt!r} needs Graphviz's `dot` program, which is not on PATH; "
                f"without it the format must be 'svg' or 'dot' ({_INSTALL_HINT})"
            )
        return fmt
    raise ValueError(
        f"{what} must be 'svg' or 'dot' (or, with Graphviz's `dot` on PATH, 'png' or 'pdf'), "
        f"got {fmt!r}"
    )


def _check_rankdir(rankdir: object, what: str) -> str:
    if not isinstance(rankdir, str):
        kind = type(rankdir).__name__
        raise TypeError(f"{what} must be a str such as 'LR', got {kind} {rankdir!r}")
    if rankdir not in RANKDIRS:
        choices = ", ".join(repr(r) for r in RANKDIRS)
        raise ValueError(f"{what} must be one of {choices}, got {rankdir!r}")
    return rankdir
