"""SVG text, written with the standard library: the one writer behind every picture of minigrad.

The plots of :mod:`minigrad.teach.plot` and the graph pictures of
:mod:`minigrad.teach.viz` are written with these few functions: a document
(:func:`document`) of elements (:func:`element`, :func:`group`), text escaped
for XML (:func:`escape`), numbers to a tenth of a pixel (:func:`num`) and
lists of points (:func:`points`). Keyword arguments are attributes, in the
order given; ``_`` in a name is written ``-`` (``text_anchor`` is
``text-anchor``), a trailing one is dropped (``class_`` is ``class``), and a
number is written by :func:`num`.

Example:
    >>> text = document(40, 20, [element("circle", cx=10.0, cy=10.0, r=4, fill="red")])
    >>> print(text[: text.index(" viewBox")])
    <svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"
    >>> for line in text.splitlines()[1:]:
    ...     print(line)
    <rect x="0" y="0" width="40" height="20" fill="white"/>
    <circle cx="10" cy="10" r="4" fill="red"/>
    </svg>
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

__all__ = ["document", "element", "escape", "group", "num", "points"]


def escape(text: str) -> str:
    """``text`` made safe inside SVG (XML), and in a Graphviz HTML-like label alike.

    ``&``, ``<``, ``>`` and quotes become entities; control characters (a
    newline in a label, say) are shown as their Python escapes, since XML does
    not allow most of them and Graphviz would drop or misread them.

    Example:
        >>> escape("<b>'x' & y</b>\\n")
        '&lt;b&gt;&#x27;x&#x27; &amp; y&lt;/b&gt;\\\\n'
    """
    shown = "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )
    return html.escape(shown, quote=True)


def num(x: float) -> str:
    """A coordinate to a tenth of a pixel, without a needless ``.0``.

    Example:
        >>> num(12.0), num(3.14159), num(7)
        ('12', '3.1', '7')
    """
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def points(pairs: Iterable[tuple[float, float]]) -> str:
    """``x,y x,y ...``: the ``points`` of a polyline or polygon.

    Example:
        >>> points([(0.0, 1.25), (2, 3.0)])
        '0,1.2 2,3'
    """
    return " ".join(f"{num(x)},{num(y)}" for x, y in pairs)


def element(tag: str, content: str | None = None, /, **attrs: str | float) -> str:
    """One element: ``<tag a="..."/>``, or with ``content`` (escaped) between its tags.

    Example:
        >>> element("text", "a < b", x=1.25, text_anchor="end")
        '<text x="1.2" text-anchor="end">a &lt; b</text>'
    """
    head = tag + _attributes(attrs)
    if content is None:
        return f"<{head}/>"
    return f"<{head}>{escape(content)}</{tag}>"


def group(children: Sequence[str], /, **attrs: str | float) -> list[str]:
    """A ``<g>`` element holding ``children`` (elements), as lines.

    Example:
        >>> group([element("title", "x")], class_="node")
        ['<g class="node">', '<title>x</title>', '</g>']
    """
    return [f"<g{_attributes(attrs)}>", *children, "</g>"]


def document(
    width: float,
    height: float,
    body: Sequence[str],
    *,
    font_family: str = "sans-serif",
    font_size: float = 12,
) -> str:
    """A self-contained ``<svg>`` of ``body`` (elements) on a white background, as text.

    Args:
        width: Width in pixels.
        height: Height in pixels.
        body: The elements, drawn in order (a later one on top).
        font_family: The font of every text.
        font_size: Its size in pixels.
    """
    w, h = num(width), num(height)
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}" font-family="{escape(font_family)}" '
            f'font-size="{num(font_size)}">',
            element("rect", x=0, y=0, width=width, height=height, fill="white"),
            *body,
            "</svg>\n",
        ]
    )


def _attributes(attrs: dict[str, str | float]) -> str:
    """`` a="1" b-c="x"``: the attributes, named and written as the module says."""
    return "".join(
        f" {name.rstrip('_').replace('_', '-')}="
        f'"{escape(value) if isinstance(value, str) else num(value)}"'
        for name, value in attrs.items()
    )
