"""Pictures of a graph, with the standard library alone: Graphviz DOT text and SVG.

:func:`graph` draws every Value as a box (its label, data and grad) and every
op as an ellipse between its arguments and its result, as micrograd's
``draw_dot`` does; float constants get small dashed boxes of their own, so
``x * 3`` shows the 3. Both the DOT text and the SVG need nothing installed:
:meth:`Graph.svg` lays the graph out itself, in layers from the inputs on the
left to the result on the right, as Graphviz's ``dot`` would. Jupyter shows
that SVG. Graphviz is used only when asked for, by :meth:`Graph.render`, and
by :meth:`Graph.save` for PNG and PDF (and for SVG when ``dot`` is on PATH).

Example:
    >>> from minigrad import Value
    >>> x = Value(2.0, label="x")
    >>> g = graph(x * 3 + 1)
    >>> g
    Graph(values=3, ops=2, constants=2, omitted=0)
    >>> print(g.dot.splitlines()[0])
    digraph minigrad {
    >>> g.svg().startswith("<svg")
    True
"""

from __future__ import annotations

import html
import itertools
import math
import os
import shutil
import subprocess
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from minigrad.core._validate import as_int
from minigrad.core.inputs import value_list
from minigrad.core.value import Value

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
        program = shutil.which("dot")
        if program is None:
            raise DotNotFoundError(
                f"Graph.render: Graphviz's `dot` program was not found on PATH, so no "
                f"{fmt.upper()} can be made; {_INSTALL_HINT}. The DOT text is in Graph.dot"
                + (", and Graph.svg() draws an SVG without Graphviz." if fmt == "svg" else ".")
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
        scene.add(_value_node(f"v{i}", node))
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
    return Graph(scene)


def _roots(root: object) -> list[Value]:
    return value_list(root, "graph: root", nonempty=True)


# One description of the picture, written out twice: as DOT and as SVG.


class _Node:
    """A box, ellipse or note of the picture, before it is written as DOT or SVG.

    ``kind`` is ``"value"`` (``texts``: label if any, ``data ...``,
    ``grad ...``; ``bold``: the first is a label), ``"op"`` (the op's name),
    ``"const"`` (the number) or ``"omitted"`` (the summary's lines). Texts
    are as shown, not yet escaped.
    """

    __slots__ = ("bold", "kind", "leaf", "name", "texts")

    def __init__(
        self,
        name: str,
        kind: str,
        texts: tuple[str, ...],
        *,
        bold: bool = False,
        leaf: bool = False,
    ) -> None:
        self.name = name
        self.kind = kind
        self.texts = texts
        self.bold = bold
        self.leaf = leaf


class _Edge:
    """An arrow from ``src`` to ``dst`` (node names), with an argument name or dashed."""

    __slots__ = ("dashed", "dst", "label", "src")

    def __init__(self, src: str, dst: str, label: str | None = None, *, dashed: bool = False):
        self.src = src
        self.dst = dst
        self.label = label
        self.dashed = dashed


class _Scene:
    """Nodes and edges in the order the DOT text lists them, with the counts."""

    def __init__(self, *, max_nodes: int, values: int, omitted: int) -> None:
        self.items: list[_Node | _Edge] = []
        self.nodes: list[_Node] = []
        self.edges: list[_Edge] = []
        self.max_nodes = max_nodes
        self.values = values
        self.omitted = omitted
        self.ops = 0
        self.constants = 0

    def add(self, item: _Node | _Edge) -> None:
        self.items.append(item)
        if isinstance(item, _Node):
            self.nodes.append(item)
        else:
            self.edges.append(item)


def _value_node(name: str, node: Value) -> _Node:
    texts = [f"data {_number(node.data)}", f"grad {_number(node.grad)}"]
    if node.label:
        # str(): .label is a plain attribute, and a picture should not fail on a non-str one.
        texts.insert(0, str(node.label))
    # Leaves (inputs, parameters) are tinted: they are what a gradient is for.
    return _Node(name, "value", tuple(texts), bold=bool(node.label), leaf=not node.op)


def _dot(scene: _Scene) -> str:
    lines = [
        "digraph minigrad {",
        "  graph [rankdir=LR];",
        '  node [fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for item in scene.items:
        if isinstance(item, _Edge):
            attrs = ""
            if item.label is not None:
                attrs = f" [label=<{_escape(item.label)}>]"
            elif item.dashed:
                attrs = " [style=dashed]"
            lines.append(f"  {item.src} -> {item.dst}{attrs};")
        else:
            lines.append(f"  {item.name} {_dot_node(item)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_node(node: _Node) -> str:
    """The DOT attributes of a node: HTML-like labels, so any text is safe."""
    if node.kind == "value":
        cells = [f"<td>{_escape(text)}</td>" for text in node.texts]
        if node.bold:
            cells[0] = f"<td><b>{_escape(node.texts[0])}</b></td>"
        tint = f' bgcolor="{_LEAF_FILL}"' if node.leaf else ""
        return (
            '[shape=none, margin=0, label=<<table border="0" cellborder="1" cellspacing="0" '
            f'cellpadding="4"{tint}><tr>{"".join(cells)}</tr></table>>]'
        )
    if node.kind == "op":
        return f"[shape=ellipse, label=<{_escape(node.texts[0])}>]"
    if node.kind == "const":
        return f"[shape=box, style=dashed, fontcolor=gray30, label=<{_escape(node.texts[0])}>]"
    return (
        "[shape=note, style=filled, fillcolor=gray92, "
        f"label=<{'<br/>'.join(_escape(line) for line in node.texts)}>]"
    )


# The SVG drawing: a layered ("Sugiyama") layout, as Graphviz's dot makes.
#
# 1. Ranks: every node as far right as its consumers allow (the longest path to
#    a result), so a constant or an input sits just left of the op that uses it.
# 2. An edge that spans several ranks is cut by invisible points, one per rank
#    it passes, so it runs through a reserved slot and never over a box.
# 3. Order within each rank: sweeps of the barycenter heuristic, keeping the
#    order with fewest crossings, then swaps of neighbours while they help.
# 4. Heights: each node is pulled towards the mean height of its neighbours,
#    rank by rank, as close as the order and the gaps between boxes allow (an
#    exact least-squares fit under those constraints: pool adjacent violators).
# 5. Edges: cubic curves between ranks with level ends, straight through the
#    ranks, an arrowhead at the head; argument names just before the arrowhead.

_FONT = 11.0  # px, the DOT text's fontsize
_EDGE_FONT = 9.0
_BOX_H = 24.0
_CELL_PAD = 6.0
_OP_RY = 12.0
_NODE_GAP = 14.0  # vertical, between two boxes of one rank
_LANE_GAP = 7.0  # vertical, around an edge passing through a rank
_RANK_GAP = 40.0  # horizontal, between ranks
_MARGIN = 10.0
_ARROW = 7.0
_PORT_STEP = 8.0
_NAMED_STEP = 12.0
_SWEEPS = 16
_PASSES = 24
_LEAF_FILL = "#e8f0fe"
_STROKE = "#333333"
_EDGE_STROKE = "#555555"

# Advance widths (1/1000 em) of ASCII 32-126: the larger of Helvetica's and
# DejaVu Sans's (Linux's usual sans-serif, the wider), so a box sized with them
# holds its text in any common sans-serif font. No font metrics are at hand.
_REGULAR_TEXT = (
    "318 401 460 838 636 950 780 275 390 390 500 838 318 361 318 337 636 636 636 "
    "636 636 636 636 636 636 636 337 337 838 838 838 556 1015 684 686 722 770 667 "
    "611 778 752 295 500 667 557 863 748 787 667 787 722 667 611 732 684 989 685 "
    "667 685 390 337 390 838 556 500 613 635 550 635 615 352 635 634 278 278 579 "
    "278 974 634 612 635 635 411 521 392 634 592 818 592 592 525 636 337 636 838"
)
_REGULAR = tuple(int(w) for w in _REGULAR_TEXT.split())
_BOLD_TEXT = (
    "348 456 521 838 696 1002 872 306 457 457 523 838 380 415 380 365 696 696 696 "
    "696 696 696 696 696 696 696 400 400 838 838 838 611 1000 774 762 734 830 683 "
    "683 821 837 372 556 775 637 995 837 850 733 850 770 720 682 812 774 1103 771 "
    "724 725 457 365 457 838 556 500 675 716 593 716 678 435 716 712 343 343 665 "
    "343 1042 712 687 716 716 493 595 478 712 652 924 645 652 582 712 365 712 838"
)
_BOLD = tuple(int(w) for w in _BOLD_TEXT.split())


def _text_width(text: str, size: float, *, bold: bool = False) -> float:
    """An estimate of ``text``'s width in px at font size ``size``, erring wide."""
    table = _BOLD if bold else _REGULAR
    total = 0
    for ch in text:
        code = ord(ch)
        if 32 <= code < 127:
            total += table[code - 32]
        else:
            import unicodedata  # only for text beyond ASCII

            if unicodedata.combining(ch):
                continue
            total += 1100 if unicodedata.east_asian_width(ch) in "WF" else 750
    return total * size / 1000


class _Layout:
    """Where the SVG puts every node and edge (px; y grows downwards).

    Vertices ``0 .. len(nodes) - 1`` are the scene's nodes, in its order; the
    rest are the points that carry long edges through the ranks they cross.
    """

    def __init__(self, scene: _Scene, sweeps: int) -> None:
        nodes = scene.nodes
        n = len(nodes)
        index = {node.name: i for i, node in enumerate(nodes)}
        ends = [(index[edge.src], index[edge.dst]) for edge in scene.edges]
        rank = _ranks(n, ends)

        # Size of each node, and of each cell of a Value's box.
        self.cells: list[list[float]] = []
        width: list[float] = []
        height: list[float] = []
        for node in nodes:
            w, h, cells = _size(node)
            width.append(w)
            height.append(h)
            self.cells.append(cells)
        # Argument names need room between their edges: an op with three or
        # more of them is drawn taller, so its ports are _NAMED_STEP apart.
        self.step = [_PORT_STEP] * n
        named = [0] * n
        for edge, (_, d) in zip(scene.edges, ends, strict=True):
            named[d] += edge.label is not None
        for v in range(n):
            if named[v] > 2:
                self.step[v] = _NAMED_STEP
                height[v] = max(height[v], _NAMED_STEP * (named[v] - 1) / 0.6)

        # Long edges become chains through one invisible point per rank crossed.
        self.chains: list[list[int]] = []
        for s, d in ends:
            chain = [s]
            for r in range(rank[s] + 1, rank[d]):
                chain.append(len(rank))
                rank.append(r)
                width.append(0.0)
                height.append(0.0)
            chain.append(d)
            self.chains.append(chain)
        up: list[list[int]] = [[] for _ in rank]
        down: list[list[int]] = [[] for _ in rank]
        for chain in self.chains:
            for a, b in itertools.pairwise(chain):
                down[a].append(b)
                up[b].append(a)
        layers: list[list[int]] = [[] for _ in range(max(rank) + 1)]
        for v, r in enumerate(rank):
            layers[r].append(v)

        _order(layers, up, down, sweeps)
        self.layers = layers
        self.rank = rank
        self.width = width
        self.height = height
        self.n = n
        self.y = _heights(layers, up, down, height, n)

        # Columns: as wide as their widest box; between them room for each
        # curve to climb gently, plus its arrowhead and argument name.
        room = [_RANK_GAP] * len(layers)
        for edge, chain in zip(scene.edges, self.chains, strict=True):
            for a, b in itertools.pairwise(chain):
                needed = min(max(24.0, abs(self.y[a] - self.y[b])), 120.0)
                if b == chain[-1]:
                    needed += _ARROW
                    if edge.label is not None:
                        needed += _text_width(edge.label, _EDGE_FONT) + 6.0
                room[rank[b]] = max(room[rank[b]], needed)
        self.left: list[float] = []
        self.right: list[float] = []
        x = _MARGIN
        for r, layer in enumerate(layers):
            if r:
                x += room[r]
            self.left.append(x)
            x += max((width[v] for v in layer if v < n), default=0.0)
            self.right.append(x)
        self.x = [(self.left[r] + self.right[r]) / 2 for r in rank]
        self.canvas = (
            x + _MARGIN,
            max(self.y[v] + height[v] / 2 for v in range(n)) + _MARGIN,
        )
        self._ports(nodes)

    def _ports(self, nodes: list[_Node]) -> None:
        """Where each edge leaves its tail and meets its head: spread along the sides."""
        y = self.y
        outs: list[list[int]] = [[] for _ in range(self.n)]
        ins: list[list[int]] = [[] for _ in range(self.n)]
        for e, chain in enumerate(self.chains):
            outs[chain[0]].append(e)
            ins[chain[-1]].append(e)
        self.exit = [(0.0, 0.0)] * len(self.chains)
        self.entry = [(0.0, 0.0)] * len(self.chains)
        self.below = [False] * len(self.chains)
        for v in range(self.n):
            ellipse = nodes[v].kind == "op"
            ordered = sorted(outs[v], key=lambda e: (y[self.chains[e][1]], e))
            for e, dy in zip(ordered, self._offsets(v, len(ordered)), strict=True):
                self.exit[e] = (self.x[v] + self._half_width(v, dy, ellipse), y[v] + dy)
        for v in range(self.n):
            ellipse = nodes[v].kind == "op"

            def came_from(e: int) -> tuple[float, int]:
                chain = self.chains[e]
                return (self.exit[e][1] if len(chain) == 2 else y[chain[-2]], e)

            ordered = sorted(ins[v], key=came_from)
            for i, (e, dy) in enumerate(zip(ordered, self._offsets(v, len(ordered)), strict=True)):
                self.entry[e] = (self.x[v] - self._half_width(v, dy, ellipse), y[v] + dy)
                # Of several arguments, the lower half's names go below their edges.
                self.below[e] = len(ordered) > 1 and 2 * i >= len(ordered)

    def _offsets(self, v: int, k: int) -> list[float]:
        if k < 2:
            return [0.0] * k
        span = min(self.step[v] * (k - 1), 0.6 * self.height[v])
        return [-span / 2 + i * span / (k - 1) for i in range(k)]

    def _half_width(self, v: int, dy: float, ellipse: bool) -> float:
        half = self.width[v] / 2
        if not ellipse:
            return half
        return half * math.sqrt(max(0.0, 1.0 - (2 * dy / self.height[v]) ** 2))

    def path(self, e: int, label_width: float) -> tuple[str, float]:
        """The SVG path of edge ``e`` up to its arrowhead, and where the arrowhead starts."""
        chain = self.chains[e]
        x0, y0 = self.exit[e]
        parts = [f"M{_f(x0)},{_f(y0)}"]
        if x0 < self.right[self.rank[chain[0]]]:
            x0 = self.right[self.rank[chain[0]]]
            parts.append(f"H{_f(x0)}")
        for v in chain[1:-1]:
            r = self.rank[v]
            parts.append(_curve(x0, y0, self.left[r], self.y[v]))
            x0, y0 = self.right[r], self.y[v]
            if self.right[r] > self.left[r]:
                parts.append(f"H{_f(x0)}")
        xt, yt = self.entry[e]
        base = xt - _ARROW
        # A named argument gets a level stretch before the arrowhead to sit on.
        level = base - label_width - 6.0 if label_width else base
        bend = min(self.left[self.rank[chain[-1]]], level)
        parts.append(_curve(x0, y0, bend, yt))
        if bend < base:
            parts.append(f"H{_f(base)}")
        return " ".join(parts), base


def _curve(x0: float, y0: float, x1: float, y1: float) -> str:
    """A cubic from (x0, y0) to (x1, y1) that leaves and arrives level."""
    if abs(y1 - y0) < 0.05:
        return f"H{_f(x1)}"
    mid = (x1 - x0) / 2
    return f"C{_f(x0 + mid)},{_f(y0)} {_f(x1 - mid)},{_f(y1)} {_f(x1)},{_f(y1)}"


def _size(node: _Node) -> tuple[float, float, list[float]]:
    """Width and height of a node, and the widths of a Value's cells."""
    if node.kind == "value":
        cells = [
            _text_width(text, _FONT, bold=node.bold and i == 0) + 2 * _CELL_PAD
            for i, text in enumerate(node.texts)
        ]
        return sum(cells), _BOX_H, cells
    if node.kind == "op":
        return max(2 * _OP_RY + 8, _text_width(node.texts[0], _FONT) + 22), 2 * _OP_RY, []
    if node.kind == "const":
        return max(32.0, _text_width(node.texts[0], _FONT) + 16), _BOX_H, []
    widest = max(_text_width(line, _FONT) for line in node.texts)
    return widest + 28, 14.0 * len(node.texts) + 12, []


def _ranks(n: int, ends: list[tuple[int, int]]) -> list[int]:
    """Each node's rank: results rightmost, everything else just left of its consumers."""
    preds: list[list[int]] = [[] for _ in range(n)]
    waiting = [0] * n
    for s, d in ends:
        preds[d].append(s)
        waiting[s] += 1
    depth = [0] * n
    ready = [v for v in range(n) if waiting[v] == 0]
    while ready:
        v = ready.pop()
        for p in preds[v]:
            depth[p] = max(depth[p], depth[v] + 1)
            waiting[p] -= 1
            if waiting[p] == 0:
                ready.append(p)
    top = max(depth)
    return [top - d for d in depth]


def _order(
    layers: list[list[int]], up: list[list[int]], down: list[list[int]], sweeps: int
) -> None:
    """Reorder each layer in place to cross few edges (none are moved when ``sweeps`` is 0)."""
    pos = [0] * len(up)

    def number() -> None:
        for layer in layers:
            for i, v in enumerate(layer):
                pos[v] = i

    number()
    best = _crossings(layers, down, pos)
    kept = [list(layer) for layer in layers]
    if sweeps:
        # Start from the order of a depth-first walk back from the results,
        # arguments in order: a tree is then drawn without crossings, and an
        # op's first argument above its second.
        seen = [-1] * len(up)
        count = 0
        stack = [v for layer in reversed(layers) for v in reversed(layer) if not down[v]]
        while stack:
            v = stack.pop()
            if seen[v] < 0:
                seen[v] = count
                count += 1
                stack.extend(reversed(up[v]))
        for layer in layers:
            layer.sort(key=seen.__getitem__)
        number()
        crossings = _crossings(layers, down, pos)
        if crossings <= best:
            best, kept = crossings, [list(layer) for layer in layers]
    for sweep in range(sweeps):
        if best == 0:
            break
        if sweep % 2 == 0:
            for r in range(1, len(layers)):
                _by_barycenter(layers[r], up, pos)
        else:
            for r in range(len(layers) - 2, -1, -1):
                _by_barycenter(layers[r], down, pos)
        crossings = _crossings(layers, down, pos)
        if crossings < best:
            best, kept = crossings, [list(layer) for layer in layers]
    layers[:] = kept
    number()
    if sweeps and best:
        _transpose(layers, up, down, pos)


def _by_barycenter(layer: list[int], nbrs: list[list[int]], pos: list[int]) -> None:
    # A vertex with no neighbours on that side keeps its place.
    key = {
        v: sum(pos[u] for u in nbrs[v]) / len(nbrs[v]) if nbrs[v] else float(i)
        for i, v in enumerate(layer)
    }
    layer.sort(key=key.__getitem__)
    for i, v in enumerate(layer):
        pos[v] = i


def _transpose(
    layers: list[list[int]], up: list[list[int]], down: list[list[int]], pos: list[int]
) -> None:
    """Swap neighbours within a layer while that removes crossings (a few passes)."""

    def cost(a: int, b: int) -> int:
        # Crossings among the edges of a and b when a is above b.
        return sum(1 for nbrs in (up, down) for p in nbrs[a] for q in nbrs[b] if pos[p] > pos[q])

    for _ in range(8):
        swapped = False
        for layer in layers:
            for i in range(len(layer) - 1):
                a, b = layer[i], layer[i + 1]
                if cost(b, a) < cost(a, b):
                    layer[i], layer[i + 1] = b, a
                    pos[a], pos[b] = i + 1, i
                    swapped = True
        if not swapped:
            break


def _crossings(layers: list[list[int]], down: list[list[int]], pos: list[int]) -> int:
    """How many pairs of edges cross between neighbouring layers: O(E log V)."""
    total = 0
    for layer in layers[:-1]:
        heads = [b for _, b in sorted((pos[u], pos[v]) for u in layer for v in down[u])]
        # Inversions of the heads' positions, counted with a Fenwick tree.
        size = max(heads, default=0) + 1
        tree = [0] * (size + 1)
        for seen, head in enumerate(heads):
            i = head + 1
            not_above = 0
            while i > 0:
                not_above += tree[i]
                i -= i & -i
            total += seen - not_above
            i = head + 1
            while i <= size:
                tree[i] += 1
                i += i & -i
    return total


def _heights(
    layers: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    height: list[float],
    n: int,
) -> list[float]:
    """The y of every vertex's centre, top margin included."""
    y = [0.0] * len(up)

    def gap(a: int, b: int) -> float:
        between = _NODE_GAP if a < n and b < n else _LANE_GAP
        return (height[a] + height[b]) / 2 + between

    for layer in layers:
        at = 0.0
        for i, v in enumerate(layer):
            if i:
                at += gap(layer[i - 1], v)
            y[v] = at
        for v in layer:
            y[v] -= at / 2
    for sweep in range(_PASSES):
        # Alternately towards the left and the right neighbours, ending with
        # the left: then every op's result sits level with its op.
        rightwards = sweep % 2 == (_PASSES - 1) % 2
        for layer in layers if rightwards else reversed(layers):
            targets: list[float] = []
            weights: list[float] = []
            for v in layer:
                nbrs, weight = (up[v], 1.0) if rightwards else (down[v], 1.0)
                if not nbrs:
                    # An input (or a result) follows its other side, gently: pinned
                    # where it is, it would be pushed a little further each pass.
                    nbrs, weight = (down[v], 0.05) if rightwards else (up[v], 0.05)
                if not nbrs:
                    targets.append(y[v])
                    weights.append(0.05)
                    continue
                # An input or constant pulls less than a Value with a history,
                # so the main line of the computation runs straight.
                pulls = [1.0 if up[u] else 0.1 for u in nbrs]
                targets.append(sum(p * y[u] for p, u in zip(pulls, nbrs, strict=True)) / sum(pulls))
                # Inputs and constants give way in turn (so the pulls balance and
                # nothing drifts); passing edges weigh more, so long edges run straight.
                own = 2.0 if v >= n else 1.0 if up[v] else 0.1
                weights.append(weight * sum(pulls) * own)
            gaps = [gap(a, b) for a, b in itertools.pairwise(layer)]
            for v, at in zip(layer, _fit_in_order(targets, weights, gaps), strict=True):
                y[v] = at
    top = min(y[v] - height[v] / 2 for v in range(n))
    return [at - top + _MARGIN for at in y]


def _fit_in_order(targets: list[float], weights: list[float], gaps: list[float]) -> list[float]:
    """Positions nearest ``targets`` (weighted least squares) that keep order and gaps.

    With ``z[i] = y[i] - (gaps before i)`` the constraints become ``z``
    non-decreasing: isotonic regression, solved exactly by pooling adjacent
    violators in O(len(targets)).
    """
    offsets = [0.0]
    for g in gaps:
        offsets.append(offsets[-1] + g)
    blocks: list[tuple[float, float, int]] = []  # (mean, weight, size)
    for t, w, o in zip(targets, weights, offsets, strict=True):
        block = (t - o, w, 1)
        while blocks and blocks[-1][0] > block[0]:
            mean, weight, size = blocks.pop()
            total = weight + block[1]
            block = ((mean * weight + block[0] * block[1]) / total, total, size + block[2])
        blocks.append(block)
    fitted = [mean for mean, _, size in blocks for _ in range(size)]
    return [z + o for z, o in zip(fitted, offsets, strict=True)]


def _svg(scene: _Scene, sweeps: int = _SWEEPS) -> str:
    """The scene as one self-contained SVG element (edges first, so boxes sit on top)."""
    layout = _Layout(scene, sweeps)
    width, height = layout.canvas
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" font-family="Helvetica, Arial, sans-serif" '
        f'font-size="{_f(_FONT)}">',
        f'<rect x="0" y="0" width="{_f(width)}" height="{_f(height)}" fill="white"/>',
    ]
    for e, edge in enumerate(scene.edges):
        label_width = 0.0 if edge.label is None else _text_width(edge.label, _EDGE_FONT)
        d, base = layout.path(e, label_width)
        xt, yt = layout.entry[e]
        dash = ' stroke-dasharray="5,3"' if edge.dashed else ""
        out.append('<g class="edge">')
        out.append(f"<title>{_escape(f'{edge.src}->{edge.dst}')}</title>")
        out.append(f'<path d="{d}" fill="none" stroke="{_EDGE_STROKE}"{dash}/>')
        out.append(
            f'<polygon points="{_f(xt)},{_f(yt)} {_f(base)},{_f(yt - 3.5)} '
            f'{_f(base)},{_f(yt + 3.5)}" fill="{_EDGE_STROKE}"/>'
        )
        if edge.label is not None:
            ty = yt + 9.5 if layout.below[e] else yt - 3.0
            out.append(
                f'<text x="{_f(base - 1)}" y="{_f(ty)}" text-anchor="end" '
                f'font-size="{_f(_EDGE_FONT)}" fill="#333333">{_escape(edge.label)}</text>'
            )
        out.append("</g>")
    for v, node in enumerate(scene.nodes):
        out.append('<g class="node">')
        out.append(f"<title>{_escape(node.name)}</title>")
        out.extend(_svg_node(node, layout, v))
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _svg_node(node: _Node, layout: _Layout, v: int) -> list[str]:
    cx, cy = layout.x[v], layout.y[v]
    w, h = layout.width[v], layout.height[v]
    x, y = cx - w / 2, cy - h / 2
    baseline = _f(cy + 0.35 * _FONT)
    if node.kind == "op":
        return [
            f'<ellipse cx="{_f(cx)}" cy="{_f(cy)}" rx="{_f(w / 2)}" ry="{_f(h / 2)}" '
            f'fill="white" stroke="{_STROKE}"/>',
            f'<text x="{_f(cx)}" y="{baseline}" text-anchor="middle">'
            f"{_escape(node.texts[0])}</text>",
        ]
    if node.kind == "const":
        return [
            f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" fill="white" '
            f'stroke="{_STROKE}" stroke-dasharray="4,2"/>',
            f'<text x="{_f(cx)}" y="{baseline}" text-anchor="middle" fill="#4d4d4d">'
            f"{_escape(node.texts[0])}</text>",
        ]
    if node.kind == "omitted":
        fold = 8.0
        lines = [
            f'<polygon points="{_f(x)},{_f(y)} {_f(x + w - fold)},{_f(y)} '
            f'{_f(x + w)},{_f(y + fold)} {_f(x + w)},{_f(y + h)} {_f(x)},{_f(y + h)}" '
            f'fill="#ebebeb" stroke="{_STROKE}"/>',
            f'<polyline points="{_f(x + w - fold)},{_f(y)} {_f(x + w - fold)},{_f(y + fold)} '
            f'{_f(x + w)},{_f(y + fold)}" fill="none" stroke="{_STROKE}"/>',
        ]
        first = cy - 7.0 * (len(node.texts) - 1)
        for i, text in enumerate(node.texts):
            lines.append(
                f'<text x="{_f(cx)}" y="{_f(first + 14.0 * i + 0.35 * _FONT)}" '
                f'text-anchor="middle">{_escape(text)}</text>'
            )
        return lines
    fill = _LEAF_FILL if node.leaf else "white"
    lines = [
        f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" fill="{fill}" '
        f'stroke="{_STROKE}"/>'
    ]
    left = x
    for i, (text, cell) in enumerate(zip(node.texts, layout.cells[v], strict=True)):
        if i:
            lines.append(
                f'<line x1="{_f(left)}" y1="{_f(y)}" x2="{_f(left)}" y2="{_f(y + h)}" '
                f'stroke="{_STROKE}"/>'
            )
        weight = ' font-weight="bold"' if node.bold and i == 0 else ""
        lines.append(
            f'<text x="{_f(left + cell / 2)}" y="{baseline}" text-anchor="middle"{weight}>'
            f"{_escape(text)}</text>"
        )
        left += cell
    return lines


def _f(x: float) -> str:
    """A coordinate to a tenth of a pixel, without a needless ``.0``."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _number(x: float) -> str:
    """Four significant digits, which read well at any size (1e-07, 2.5e+08, 0.7616)."""
    # + 0.0 turns -0.0 (w * 0.0 for a negative w) into 0.0, which reads as it should.
    text = f"{x + 0.0:.4g}"
    # "1.0", not "1": a Value holds a float, and the picture should say so.
    return text if any(c in text for c in ".en") else text + ".0"


def _escape(text: str) -> str:
    """``text`` made safe inside a Graphviz HTML-like label and in SVG (XML) alike.

    ``&``, ``<``, ``>`` and quotes become entities; control characters (a
    newline in a label, say) are shown as their Python escapes, since
    Graphviz would otherwise drop or misread them and XML does not allow most
    of them.
    """
    shown = "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )
    return html.escape(shown, quote=True)
