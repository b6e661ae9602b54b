"""The public face of the pictures: :func:`graph`, :class:`Graph` and :class:`DotNotFoundError`.

:func:`graph` walks back from the root Values and describes what to draw as
a scene (:mod:`minigrad.teach.viz.scene`); :class:`Graph` holds it and writes
it out as DOT text (:mod:`~minigrad.teach.viz.dot`), as minigrad's own SVG
(:mod:`~minigrad.teach.viz.drawing`), or through Graphviz's ``dot`` program.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from minigrad.core._validate import as_int
from minigrad.core.inputs import value_list
from minigrad.core.value import Value
from minigrad.teach.viz.dot import _dot
from minigrad.teach.viz.drawing import _svg
from minigrad.teach.viz.scene import _Edge, _Node, _number, _Scene, _value_node

__all__ = ["DotNotFoundError", "Graph", "graph"]

#: The formats :meth:`Graph.save` renders through ``dot`` (besides DOT itself).
RENDERED = (".svg", ".png", ".pdf")
_TEXT = (".dot", ".gv")

_INSTALL_HINT = (
    "install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
    "conda: conda install graphviz) and make sure `dot` is on PATH"
)


class DotNotFoundError(FileNotFoundError):
    """Graphviz's ``dot`` program, needed to render PNG or PDF, is not on PATH.

    A :class:`FileNotFoundError`, as ``subprocess`` raises for a missing
    program.

    Example:
        >>> issubclass(DotNotFoundError, FileNotFoundError)
        True
    """


class Graph:
    """A picture of a graph: DOT text, SVG drawn by minigrad, or Graphviz's output.

    Made by :func:`graph`. ``str(g)`` is the DOT text too. The DOT text and
    the SVG of :meth:`svg` are written from one description of the nodes and
    edges, so they always show the same graph.

    Attributes:
        dot: The Graphviz DOT text.
        values: How many Values are drawn.
        ops: How many op nodes are drawn.
        constants: How many float constants are drawn.
        omitted: How many Values were left out (beyond ``max_nodes``).

    Example:
        >>> from minigrad import Value
        >>> g = graph(Value(1.0, label="a").exp())
        >>> "exp" in g.dot and "a" in str(g)
        True
    """

    def __init__(self, scene: _Scene) -> None:
        self._scene = scene
        self._svg: str | None = None
        self.dot = _dot(scene)
        self.values = scene.values
        self.ops = scene.ops
        self.constants = scene.constants
        self.omitted = scene.omitted

    def __repr__(self) -> str:
        # The plain-text form (a console, or a front end without SVG): short, not the DOT.
        return (
            f"Graph(values={self.values}, ops={self.ops}, constants={self.constants}, "
            f"omitted={self.omitted})"
        )

    def __str__(self) -> str:
        return self.dot

    def svg(self) -> str:
        """The picture as SVG, laid out and drawn by minigrad alone (no Graphviz).

        Ranks run left to right: inputs and constants on the left, each op's
        ellipse between its arguments and its result, the result on the
        right. The order within each rank is chosen to cross few edges, and
        edges into an op whose arguments are not interchangeable (``-``,
        ``**``) carry the argument names, as in the DOT text. The SVG is one
        self-contained element (no fonts, stylesheets or scripts), so it can
        be saved, embedded in HTML or shown in a notebook as it is. Boxes are
        sized for the widest common sans-serif fonts, so text stays inside
        them wherever it is shown. Made once and kept; about O((nodes +
        edges) log(nodes)) per ordering sweep, a fraction of a second for
        the default ``max_nodes=100``.

        Returns:
            The SVG text, starting ``<svg``.

        Example:
            >>> import xml.etree.ElementTree as ET
            >>> from minigrad import Value
            >>> picture = ET.fromstring(graph(Value(3.0, label="x") - 1.0).svg())
            >>> svg = "{http://www.w3.org/2000/svg}"
            >>> for group in picture.iter(f"{svg}g"):  # the edges, then the nodes
            ...     words = [t.text or "" for t in group.iter(f"{svg}text")]
            ...     print(group.get("class"), group.findtext(f"{svg}title"), words)
            edge v0op->v0 []
            edge v1->v0op ['x']
            edge v0c1->v0op ['y']
            node v0 ['data 2.0', 'grad 0.0']
            node v0op ['-']
            node v0c1 ['1.0']
            node v1 ['x', 'data 3.0', 'grad 0.0']
        """
        if self._svg is None:
            self._svg = _svg(self._scene)
        return self._svg

    def render(self, fmt: str = "svg") -> bytes:
        """The picture in format ``fmt`` (``"svg"``, ``"png"``, ``"pdf"``), made by ``dot``.

        For an SVG that needs no Graphviz, see :meth:`svg`.

        Raises:
            DotNotFoundError: Graphviz's ``dot`` program is not on PATH.
            ValueError: ``fmt`` is not one of the formats above.
            RuntimeError: ``dot`` failed; the message holds what it said.

        Example:
            >>> import shutil
            >>> from minigrad import Value
            >>> g = graph(Value(1.0) + 2)
            >>> try:
            ...     ok = g.render("svg").lstrip().startswith(b"<")
            ... except DotNotFoundError as exc:
            ...     ok = "`dot`" in str(exc)
            >>> ok
            True
        """
        if f".{fmt}" not in RENDERED:
            raise ValueError(f"Graph.render: fmt must be one of svg, png, pdf, got {fmt!r}")
        return _run_dot(self.dot, fmt, "Graph.render")

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the graph to ``path``; its suffix says what to write.

        The DOT text is always written: to ``path`` itself for ``.dot`` or
        ``.gv``, otherwise next to it with the suffix ``.dot``. For ``.svg``
        the picture is rendered by Graphviz's ``dot`` when it is on PATH and
        drawn by :meth:`svg` when it is not, so an SVG can always be saved.
        ``.png`` and ``.pdf`` need ``dot``. A path without a suffix gets ``.dot``.

        Args:
            path: Where to write, e.g. ``"graph.svg"``.

        Returns:
            The path of the file asked for (``.dot`` added when it had no suffix).

        Raises:
            DotNotFoundError: A PNG or PDF was asked for and Graphviz's ``dot``
                is not on PATH (the ``.dot`` file is written all the same).
            ValueError: The suffix is not one of the above.

        Example:
            >>> import pathlib, tempfile
            >>> from minigrad import Value
            >>> with tempfile.TemporaryDirectory() as tmp:
            ...     written = graph(Value(2.0).tanh()).save(pathlib.Path(tmp, "g"))
            ...     print(written.name, written.read_text().startswith("digraph"))
            ...     picture = graph(Value(2.0).tanh()).save(pathlib.Path(tmp, "g.svg"))
            ...     print(picture.name, "</svg>" in picture.read_text())
            g.dot True
            g.svg True
        """
        target = Path(path)
        suffix = target.suffix.lower()
        if not suffix:
            target = target.with_suffix(".dot")
            suffix = ".dot"
        if suffix not in _TEXT and suffix not in RENDERED:
            raise ValueError(
                f"Graph.save: the file name must end in .dot, .gv, .svg, .png or .pdf, "
                f"got {str(path)!r}"
            )
        dot_path = target if suffix in _TEXT else target.with_suffix(".dot")
        dot_path.write_text(self.dot, encoding="utf-8")
        if suffix == ".svg" and shutil.which("dot") is None:
            target.write_text(self.svg(), encoding="utf-8")
        elif suffix in RENDERED:
            try:
                picture = self.render(suffix[1:])
            except DotNotFoundError as exc:
                raise DotNotFoundError(f"{exc} It was written to {str(dot_path)!r}.") from None
            target.write_bytes(picture)
        return target

    def _repr_svg_(self) -> str:
        """The SVG Jupyter shows: always :meth:`svg`, whether or not ``dot`` is installed.

        minigrad's own drawing is used even where Graphviz is installed: for
        the graphs a notebook shows (up to ``max_nodes=100`` Values) it is as
        readable as ``dot``'s (same ranks, few crossings, argument names on
        the edges), it needs no subprocess while the notebook displays, and
        it is the same picture on every machine, so a notebook stored with
        its outputs does not change when it is re-run where Graphviz is (or
        is not) installed. Graphviz's own SVG is ``render("svg")``.
        """
        return self.svg()


def _run_dot(dot: str, fmt: str, who: str) -> bytes:
    """The DOT text ``dot`` rendered by Graphviz's ``dot`` program as ``fmt``.

    Raises:
        DotNotFoundError: ``dot`` is not on PATH.
        RuntimeError: ``dot`` failed or took more than 60 s.
    """
    program = shutil.which("dot")
    if program is None:
        raise DotNotFoundError(
            f"{who}: Graphviz's `dot` program was not found on PATH, so no "
            f"{fmt.upper()} can be made; {_INSTALL_HINT}. The DOT text is in Graph.dot"
            + (", and Graph.svg() draws an SVG without Graphviz." if fmt == "svg" else ".")
        )
    try:
        done = subprocess.run(
            [program, f"-T{fmt}"],
            input=dot.encode("utf-8"),
            capture_output=True,
            check=False,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{who}: `dot -T{fmt}` took more than 60 s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()
        raise RuntimeError(f"{who}: `dot -T{fmt}` failed ({done.returncode}): {said}")
    return done.stdout


def graph(root: Value | Sequence[Value], *, max_nodes: int = 100) -> Graph:
    """A picture of every Value ``root`` was computed from.

    Values are boxes showing label (if any), data and grad; ops are ellipses
    between their arguments and their result; float constants are dashed
    boxes; edges run from arguments to results (left to right). The Values
    nearest the root are drawn first (breadth first); beyond ``max_nodes``
    the rest are folded into one summary node that says how many were left
    out, joined to every op whose argument it stands for. Iterative, so a
    graph of any depth works; O(nodes + edges).

    Args:
        root: The Value to draw back from, or several of them.
        max_nodes: The most Values to draw (their ops and constants come
            with them).

    Returns:
        The :class:`Graph`: ``.dot``, ``.save(path)``, and an SVG repr in Jupyter.

    Raises:
        TypeError: ``root`` is not a Value (or a sequence of them), or
            ``max_nodes`` is not an int.
        ValueError: ``max_nodes`` < 1 or ``root`` is an empty sequence.

    Example:
        >>> from minigrad import Value
        >>> a = Value(-1.0, label="a")
        >>> b = (a * a).tanh()
        >>> b.backward()
        >>> g = graph(b)
        >>> g
        Graph(values=3, ops=2, constants=0, omitted=0)
        >>> for line in g.dot.splitlines():
        ...     if "->" in line:
        ...         print(line)
          v0op -> v0;
          v1 -> v0op;
          v1op -> v1;
          v2 -> v1op;
          v2 -> v1op;
        >>> "<td><b>a</b></td><td>data -1.0</td><td>grad -0.8399</td>" in g.dot
        True
    """
    roots = _roots(root)
    as_int(max_nodes, "graph: max_nodes", least=1)
    scene, _ = _scene(roots, max_nodes)
    return Graph(scene)


def _scene(
    roots: list[Value],
    max_nodes: int,
    value_node: Callable[[str, Value], _Node] = _value_node,
) -> tuple[_Scene, list[Value]]:
    """The scene of :func:`graph`, and the Values drawn: ``drawn[i]`` is node ``v{i}``.

    ``value_node`` makes each Value's box (the stepper of
    :mod:`minigrad.teach.stepper` sizes the grad cell for every gradient it
    will show).
    """
    # Breadth first from the roots, numbering every Value; those numbered
    # below max_nodes are drawn. The walk goes on to the end only to count.
    index: dict[Value, int] = {}
    order: list[Value] = []
    queue: deque[Value] = deque()
    for r in roots:
        if r not in index:
            index[r] = len(order)
            order.append(r)
            queue.append(r)
    while queue:
        node = queue.popleft()
        for p in node.parents:
            if p not in index:
                index[p] = len(order)
                order.append(p)
                queue.append(p)
    drawn = order[:max_nodes]
    omitted = len(order) - len(drawn)

    scene = _Scene(max_nodes=max_nodes, values=len(drawn), omitted=omitted)
    cut_ops: list[str] = []
    for i, node in enumerate(drawn):
        scene.add(value_node(f"v{i}", node))
        rule = node.rule
        if rule is None:
            continue
        scene.ops += 1
        op_id = f"v{i}op"
        scene.add(_Node(op_id, "op", (rule.name,)))
        scene.add(_Edge(op_id, f"v{i}"))
        args = node.args
        # A commutative op needs no argument names on its edges; any other op of
        # two or more arguments names them, so ``a - b`` is not read as ``b - a``.
        named = len(args) > 1 and not rule.commutative
        cut = False
        for k, arg in enumerate(args):
            name = rule.arg_names[k] if named else None
            if isinstance(arg, Value):
                j = index[arg]
                if j < max_nodes:
                    scene.add(_Edge(f"v{j}", op_id, name))
                else:
                    cut = True
            else:
                scene.constants += 1
                const_id = f"v{i}c{k}"
                scene.add(_Node(const_id, "const", (_number(arg),)))
                scene.add(_Edge(const_id, op_id, name))
        if cut:
            cut_ops.append(op_id)
    if omitted:
        noun = "Value" if omitted == 1 else "Values"
        lines = (f"{omitted:,} more {noun} not shown", f"(max_nodes={max_nodes})")
        scene.add(_Node("omitted", "omitted", lines))
        for op_id in cut_ops:
            scene.add(_Edge("omitted", op_id, dashed=True))
    return scene, drawn


def _roots(root: object) -> list[Value]:
    return value_list(root, "graph: root", nonempty=True)
