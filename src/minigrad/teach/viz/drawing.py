"""A scene drawn by minigrad alone (no Graphviz): what :meth:`Graph.svg` returns.

Draws the layout of :mod:`minigrad.teach.viz.layout` with the SVG writer of
:mod:`minigrad.teach.svg`, as one self-contained ``<svg>`` element: edges as
level-ended curves with arrowheads and argument names, then the boxes,
ellipses and notes on top.
"""

from __future__ import annotations

from minigrad.teach.svg import document, element, group, num, points
from minigrad.teach.viz.layout import _ARROW, _EDGE_FONT, _FONT, _SWEEPS, _Layout, _text_width
from minigrad.teach.viz.scene import _LEAF_FILL, _Node, _Scene

_STROKE = "#333333"
_EDGE_STROKE = "#555555"


def _svg(scene: _Scene, sweeps: int = _SWEEPS) -> str:
    """The scene as one self-contained SVG element (edges first, so boxes sit on top)."""
    layout = _Layout(scene, sweeps)
    out: list[str] = []
    for e, edge in enumerate(scene.edges):
        label_width = 0.0 if edge.label is None else _text_width(edge.label, _EDGE_FONT)
        d, base = _path(layout, e, label_width)
        xt, yt = layout.entry[e]
        dash = {"stroke_dasharray": "5,3"} if edge.dashed else {}
        parts = [
            element("title", f"{edge.src}->{edge.dst}"),
            element("path", d=d, fill="none", stroke=_EDGE_STROKE, **dash),
            element(
                "polygon",
                points=points([(xt, yt), (base, yt - 3.5), (base, yt + 3.5)]),
                fill=_EDGE_STROKE,
            ),
        ]
        if edge.label is not None:
            ty = yt + 9.5 if layout.below[e] else yt - 3.0
            parts.append(
                element(
                    "text",
                    edge.label,
                    x=base - 1,
                    y=ty,
                    text_anchor="end",
                    font_size=_EDGE_FONT,
                    fill="#333333",
                )
            )
        out += group(parts, class_="edge")
    for v, node in enumerate(scene.nodes):
        out += group([element("title", node.name), *_svg_node(node, layout, v)], class_="node")
    width, height = layout.canvas
    return document(width, height, out, font_family="Helvetica, Arial, sans-serif", font_size=_FONT)


def _svg_node(node: _Node, layout: _Layout, v: int) -> list[str]:
    cx, cy = layout.x[v], layout.y[v]
    w, h = layout.width[v], layout.height[v]
    x, y = cx - w / 2, cy - h / 2
    baseline = cy + 0.35 * _FONT
    if node.kind == "op":
        return [
            element("ellipse", cx=cx, cy=cy, rx=w / 2, ry=h / 2, fill="white", stroke=_STROKE),
            element("text", node.texts[0], x=cx, y=baseline, text_anchor="middle"),
        ]
    if node.kind == "const":
        return [
            element(
                "rect",
                x=x,
                y=y,
                width=w,
                height=h,
                fill="white",
                stroke=_STROKE,
                stroke_dasharray="4,2",
            ),
            element("text", node.texts[0], x=cx, y=baseline, text_anchor="middle", fill="#4d4d4d"),
        ]
    if node.kind == "omitted":
        fold = 8.0
        corner = [(x, y), (x + w - fold, y), (x + w, y + fold), (x + w, y + h), (x, y + h)]
        crease = [(x + w - fold, y), (x + w - fold, y + fold), (x + w, y + fold)]
        lines = [
            element("polygon", points=points(corner), fill="#ebebeb", stroke=_STROKE),
            element("polyline", points=points(crease), fill="none", stroke=_STROKE),
        ]
        first = cy - 7.0 * (len(node.texts) - 1)
        for i, text in enumerate(node.texts):
            lines.append(
                element("text", text, x=cx, y=first + 14.0 * i + 0.35 * _FONT, text_anchor="middle")
            )
        return lines
    fill = _LEAF_FILL if node.leaf else "white"
    lines = [element("rect", x=x, y=y, width=w, height=h, fill=fill, stroke=_STROKE)]
    left = x
    for i, (text, cell) in enumerate(zip(node.texts, layout.cells[v], strict=True)):
        if i:
            lines.append(element("line", x1=left, y1=y, x2=left, y2=y + h, stroke=_STROKE))
        bold = {"font_weight": "bold"} if node.bold and i == 0 else {}
        lines.append(
            element("text", text, x=left + cell / 2, y=baseline, text_anchor="middle", **bold)
        )
        left += cell
    return lines


def _path(layout: _Layout, e: int, label_width: float) -> tuple[str, float]:
    """The SVG path of edge ``e`` up to its arrowhead, and where the arrowhead starts."""
    chain = layout.chains[e]
    x0, y0 = layout.exit[e]
    parts = [f"M{num(x0)},{num(y0)}"]
    if x0 < layout.right[layout.rank[chain[0]]]:
        x0 = layout.right[layout.rank[chain[0]]]
        parts.append(f"H{num(x0)}")
    for v in chain[1:-1]:
        r = layout.rank[v]
        parts.append(_curve(x0, y0, layout.left[r], layout.y[v]))
        x0, y0 = layout.right[r], layout.y[v]
        if layout.right[r] > layout.left[r]:
            parts.append(f"H{num(x0)}")
    xt, yt = layout.entry[e]
    base = xt - _ARROW
    # A named argument gets a level stretch before the arrowhead to sit on.
    level = base - label_width - 6.0 if label_width else base
    bend = min(layout.left[layout.rank[chain[-1]]], level)
    parts.append(_curve(x0, y0, bend, yt))
    if bend < base:
        parts.append(f"H{num(base)}")
    return " ".join(parts), base


def _curve(x0: float, y0: float, x1: float, y1: float) -> str:
    """A cubic from (x0, y0) to (x1, y1) that leaves and arrives level."""
    if abs(y1 - y0) < 0.05:
        return f"H{num(x1)}"
    mid = (x1 - x0) / 2
    return f"C{num(x0 + mid)},{num(y0)} {num(x1 - mid)},{num(y1)} {num(x1)},{num(y1)}"
