"""The Graphviz DOT text of a scene: what :attr:`Graph.dot` holds."""

from __future__ import annotations

from minigrad.teach.svg import escape as _escape
from minigrad.teach.viz.scene import _LEAF_FILL, _Edge, _Node, _Scene


def _dot(scene: _Scene, rankdir: str = "LR") -> str:
    lines = [
        "digraph minigrad {",
        f"  graph [rankdir={rankdir}];",
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
