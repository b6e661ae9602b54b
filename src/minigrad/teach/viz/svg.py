"""The SVG of a scene, drawn by minigrad alone (no Graphviz): what :meth:`Graph.svg` returns.

Writes out the layout of :mod:`minigrad.teach.viz.layout` as one
self-contained ``<svg>`` element: edges as level-ended curves with arrowheads
and argument names, then the boxes, ellipses and notes on top.
"""

from __future__ import annotations

from minigrad.teach.viz.layout import _ARROW, _EDGE_FONT, _FONT, _SWEEPS, _Layout, _text_width
from minigrad.teach.viz.scene import _LEAF_FILL, _escape, _Node, _Scene

_STROKE = "#333333"
_EDGE_STROKE = "#555555"


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
        d, base = _path(layout, e, label_width)
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


def _path(layout: _Layout, e: int, label_width: float) -> tuple[str, float]:
    """The SVG path of edge ``e`` up to its arrowhead, and where the arrowhead starts."""
    chain = layout.chains[e]
    x0, y0 = layout.exit[e]
    parts = [f"M{_f(x0)},{_f(y0)}"]
    if x0 < layout.right[layout.rank[chain[0]]]:
        x0 = layout.right[layout.rank[chain[0]]]
        parts.append(f"H{_f(x0)}")
    for v in chain[1:-1]:
        r = layout.rank[v]
        parts.append(_curve(x0, y0, layout.left[r], layout.y[v]))
        x0, y0 = layout.right[r], layout.y[v]
        if layout.right[r] > layout.left[r]:
            parts.append(f"H{_f(x0)}")
    xt, yt = layout.entry[e]
    base = xt - _ARROW
    # A named argument gets a level stretch before the arrowhead to sit on.
    level = base - label_width - 6.0 if label_width else base
    bend = min(layout.left[layout.rank[chain[-1]]], level)
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


def _f(x: float) -> str:
    """A coordinate to a tenth of a pixel, without a needless ``.0``."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text
