"""One description of the picture, written out twice: as DOT and as SVG.

The nodes (Value boxes, op ellipses, constants, the summary of what was left
out) and the edges of a picture, in the order the DOT text lists them, with
their texts as shown; and the number format both writers use (the escaping
of text is :func:`minigrad.teach.svg.escape`).
"""

from __future__ import annotations

from minigrad.core.value import Value

#: The tint of a leaf's box (an input or parameter), in the DOT text and the SVG.
_LEAF_FILL = "#e8f0fe"


class _Node:
    """A box, ellipse or note of the picture, before it is written as DOT or SVG.

    ``kind`` is ``"value"`` (``texts``: label if any, ``data ...``,
    ``grad ...``; ``bold``: the first is a label), ``"op"`` (the op's name),
    ``"const"`` (the number) or ``"omitted"`` (the summary's lines). Texts
    are as shown, not yet escaped. ``room`` holds, cell by cell, the texts
    the node is sized for when they are not ``texts``: a picture whose texts
    change after it is drawn (the stepper's gradients) keeps its layout.
    """

    __slots__ = ("bold", "kind", "leaf", "name", "room", "texts")

    def __init__(
        self,
        name: str,
        kind: str,
        texts: tuple[str, ...],
        *,
        bold: bool = False,
        leaf: bool = False,
        room: tuple[str, ...] | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.texts = texts
        self.room = texts if room is None else room
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


def _value_node(name: str, node: Value, grad_room: str | None = None) -> _Node:
    """A Value's box: label (if any), data and grad; its grad cell as wide as ``grad_room``."""
    texts = [f"data {_number(node.data)}", f"grad {_number(node.grad)}"]
    if node.label:
        # str(): .label is a plain attribute, and a picture should not fail on a non-str one.
        texts.insert(0, str(node.label))
    room = None if grad_room is None else (*texts[:-1], grad_room)
    # Leaves (inputs, parameters) are tinted: they are what a gradient is for.
    return _Node(name, "value", tuple(texts), bold=bool(node.label), leaf=not node.op, room=room)


def _number(x: float) -> str:
    """Four significant digits, which read well at any size (1e-07, 2.5e+08, 0.7616)."""
    # + 0.0 turns -0.0 (w * 0.0 for a negative w) into 0.0, which reads as it should.
    text = f"{x + 0.0:.4g}"
    # "1.0", not "1": a Value holds a float, and the picture should say so.
    return text if any(c in text for c in ".en") else text + ".0"
