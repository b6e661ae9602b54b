"""Pictures of a graph: Graphviz DOT text, written with the standard library alone.

:func:`graph` draws every Value as a box (its label, data and grad) and every
op as an ellipse between its arguments and its result, as micrograd's
``draw_dot`` does; float constants get small dashed boxes of their own, so
``x * 3`` shows the 3. The DOT text needs nothing installed. Rendering it to
SVG or PNG needs Graphviz's ``dot`` program: :meth:`Graph.save` says so
clearly when it is missing, and in Jupyter :meth:`Graph._repr_svg_` then
returns None, so the notebook quietly shows the text repr instead of a
traceback.

Example:
    >>> from minigrad import Value
    >>> x = Value(2.0, label="x")
    >>> g = graph(x * 3 + 1)
    >>> g
    Graph(values=3, ops=2, constants=2, omitted=0)
    >>> print(g.dot.splitlines()[0])
    digraph minigrad {
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from minigrad.engine import Value

__all__ = ["DotNotFoundError", "Graph", "graph"]

#: The formats :meth:`Graph.save` renders through ``dot`` (besides DOT itself).
RENDERED = (".svg", ".png", ".pdf")
_TEXT = (".dot", ".gv")

_INSTALL_HINT = (
    "install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
    "conda: conda install graphviz) and make sure `dot` is on PATH"
)


class DotNotFoundError(FileNotFoundError):
    """Graphviz's ``dot`` program, needed to render SVG or PNG, is not on PATH.

    A :class:`FileNotFoundError`, as ``subprocess`` raises for a missing
    program.

    Example:
        >>> issubclass(DotNotFoundError, FileNotFoundError)
        True
    """


class Graph:
    """A picture of a graph: DOT text, and SVG or PNG through Graphviz's ``dot``.

    Made by :func:`graph`. ``str(g)`` is the DOT text too.

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

    def __init__(self, dot: str, *, values: int, ops: int, constants: int, omitted: int) -> None:
        self.dot = dot
        self.values = values
        self.ops = ops
        self.constants = constants
        self.omitted = omitted

    def __repr__(self) -> str:
        # The text Jupyter falls back to when there is no SVG: short, not the DOT.
        return (
            f"Graph(values={self.values}, ops={self.ops}, constants={self.constants}, "
            f"omitted={self.omitted})"
        )

    def __str__(self) -> str:
        return self.dot

    def render(self, fmt: str = "svg") -> bytes:
        """The picture in format ``fmt`` (``"svg"``, ``"png"``, ``"pdf"``), made by ``dot``.

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
        program = shutil.which("dot")
        if program is None:
            raise DotNotFoundError(
                f"Graph.render: Graphviz's `dot` program was not found on PATH, so no "
                f"{fmt.upper()} can be made; {_INSTALL_HINT}. The DOT text is in Graph.dot."
            )
        try:
            done = subprocess.run(
                [program, f"-T{fmt}"],
                input=self.dot.encode("utf-8"),
                capture_output=True,
                check=False,
                timeout=60,
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"Graph.render: `dot -T{fmt}` took more than 60 s") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip()
            raise RuntimeError(f"Graph.render: `dot -T{fmt}` failed ({done.returncode}): {said}")
        return done.stdout

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the graph to ``path``; its suffix says what to write.

        The DOT text is always written: to ``path`` itself for ``.dot`` or
        ``.gv``, otherwise next to it with the suffix ``.dot``. For ``.svg``,
        ``.png`` or ``.pdf`` the picture is then rendered by ``dot`` as well.
        A path without a suffix gets ``.dot``.

        Args:
            path: Where to write, e.g. ``"graph.svg"``.

        Returns:
            The path of the file asked for (``.dot`` added when it had no suffix).

        Raises:
            DotNotFoundError: A picture was asked for and Graphviz's ``dot`` is
                not on PATH (the ``.dot`` file is written all the same).
            ValueError: The suffix is not one of the above.

        Example:
            >>> import pathlib, tempfile
            >>> from minigrad import Value
            >>> with tempfile.TemporaryDirectory() as tmp:
            ...     written = graph(Value(2.0).tanh()).save(pathlib.Path(tmp, "g"))
            ...     print(written.name, written.read_text().startswith("digraph"))
            g.dot True
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
        if suffix in RENDERED:
            try:
                picture = self.render(suffix[1:])
            except DotNotFoundError as exc:
                raise DotNotFoundError(f"{exc} It was written to {str(dot_path)!r}.") from None
            target.write_bytes(picture)
        return target

    def _repr_svg_(self) -> str | None:
        """The SVG for Jupyter, or None (text repr instead) when ``dot`` is missing.

        A ``_repr_*_`` method that raises prints a traceback in the cell; None
        makes Jupyter fall back to ``repr`` quietly, which is what a notebook
        without Graphviz should see.
        """
        try:
            return self.render("svg").decode("utf-8")
        except (OSError, RuntimeError):
            return None


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
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int):
        raise TypeError(
            f"graph: max_nodes must be an int, got {type(max_nodes).__name__} {max_nodes!r}"
        )
    if max_nodes < 1:
        raise ValueError(f"graph: max_nodes must be >= 1, got {max_nodes!r}")

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

    lines = [
        "digraph minigrad {",
        "  graph [rankdir=LR];",
        '  node [fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    ops = constants = 0
    cut_ops: list[str] = []
    for i, node in enumerate(drawn):
        lines.append(f"  v{i} {_value_node(node)};")
        rule = node.rule
        if rule is None:
            continue
        ops += 1
        op_id = f"v{i}op"
        lines.append(f"  {op_id} [shape=ellipse, label=<{_dot_escape(rule.name)}>];")
        lines.append(f"  {op_id} -> v{i};")
        args = node.args
        # A commutative op needs no argument names on its edges; any other op of
        # two or more arguments names them, so ``a - b`` is not read as ``b - a``.
        named = len(args) > 1 and not rule.commutative
        cut = False
        for k, arg in enumerate(args):
            edge = f" [label=<{_dot_escape(rule.arg_names[k])}>]" if named else ""
            if isinstance(arg, Value):
                j = index[arg]
                if j < max_nodes:
                    lines.append(f"  v{j} -> {op_id}{edge};")
                else:
                    cut = True
            else:
                constants += 1
                const_id = f"v{i}c{k}"
                lines.append(
                    f"  {const_id} [shape=box, style=dashed, fontcolor=gray30, "
                    f"label=<{_dot_escape(_number(arg))}>];"
                )
                lines.append(f"  {const_id} -> {op_id}{edge};")
        if cut:
            cut_ops.append(op_id)
    if omitted:
        noun = "Value" if omitted == 1 else "Values"
        lines.append(
            f"  omitted [shape=note, style=filled, fillcolor=gray92, "
            f"label=<{omitted:,} more {noun} not shown<br/>(max_nodes={max_nodes})>];"
        )
        lines.extend(f"  omitted -> {op_id} [style=dashed];" for op_id in cut_ops)
    lines.append("}")
    return Graph(
        "\n".join(lines) + "\n",
        values=len(drawn),
        ops=ops,
        constants=constants,
        omitted=omitted,
    )


def _roots(root: object) -> list[Value]:
    if isinstance(root, Value):
        return [root]
    if isinstance(root, str) or not isinstance(root, Sequence):
        raise TypeError(
            f"graph: root must be a Value or a sequence of Values, got {type(root).__name__}"
        )
    if not root:
        raise ValueError("graph: root is an empty sequence; there is nothing to draw")
    for i, r in enumerate(root):
        if not isinstance(r, Value):
            raise TypeError(f"graph: root[{i}] must be a Value, got {type(r).__name__} {r!r}")
    return list(root)


def _value_node(node: Value) -> str:
    """The DOT attributes of a Value's box: label, data and grad in a row."""
    cells = []
    if node.label:
        # str(): .label is a plain attribute, and a picture should not fail on a non-str one.
        cells.append(f"<td><b>{_dot_escape(str(node.label))}</b></td>")
    cells.append(f"<td>data {_dot_escape(_number(node.data))}</td>")
    cells.append(f"<td>grad {_dot_escape(_number(node.grad))}</td>")
    # Leaves (inputs, parameters) are tinted: they are what a gradient is for.
    tint = "" if node.op else ' bgcolor="#e8f0fe"'
    return (
        '[shape=none, margin=0, label=<<table border="0" cellborder="1" cellspacing="0" '
        f'cellpadding="4"{tint}><tr>{"".join(cells)}</tr></table>>]'
    )


def _number(x: float) -> str:
    """Four significant digits, which read well at any size (1e-07, 2.5e+08, 0.7616)."""
    # + 0.0 turns -0.0 (w * 0.0 for a negative w) into 0.0, which reads as it should.
    text = f"{x + 0.0:.4g}"
    # "1.0", not "1": a Value holds a float, and the picture should say so.
    return text if any(c in text for c in ".en") else text + ".0"


def _dot_escape(text: str) -> str:
    """``text`` made safe inside a Graphviz HTML-like label.

    ``&``, ``<``, ``>`` and quotes become entities; control characters (a
    newline in a label, say) are shown as their Python escapes, since
    Graphviz would otherwise drop or misread them.
    """
    shown = "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )
    return html.escape(shown, quote=True)
