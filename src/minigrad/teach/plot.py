"""Small pictures as SVG, drawn with the standard library: points, curves, decision boundaries.

Each function returns a :class:`Picture`: SVG text (written with
:mod:`minigrad.teach.svg`, as the graph pictures are) that a notebook shows by
itself (``_repr_svg_``) and :meth:`Picture.save` writes to a file. Nothing
needs to be installed, so the pictures work where matplotlib does not (a
browser notebook, a locked-down lab machine). :func:`grid` gives the numbers
behind :func:`boundary`, for drawing them with matplotlib instead.

Points are ``(x1, x2)`` pairs; labels are ``-1`` (drawn blue) and ``+1``
(drawn red), as :mod:`minigrad.data` makes them. Legends sit to the right of
the plot area, never over the data.

Example:
    >>> from minigrad.teach import plot
    >>> picture = plot.scatter([(0.0, 0.0), (1.0, 1.0)], [-1, 1])
    >>> picture
    Picture('2 points', 560x340)
    >>> picture.svg.count("<circle")  # the two points and the legend's two dots
    4
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from minigrad.core._validate import as_int
from minigrad.teach.svg import document, element, num
from minigrad.teach.svg import points as polyline

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["COLOURS", "Picture", "boundary", "curves", "grid", "scatter"]

#: The colours of curves, in turn (matplotlib's first five).
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")

# Per class: the colour of its points and the lighter one of its region.
_CLASS_COLOURS = {-1: ("#1f77b4", "#cfe2f3"), 1: ("#d62728", "#f8d0cd")}

_FONT = 12
_INK = "#555"  # the frame and the ticks
_GRID = "#e5e5e5"
_CHAR = 7.0  # a generous width of one character at _FONT, for laying out text


class Picture:
    """An SVG picture: shown by a notebook, written to a file by :meth:`save`.

    Attributes:
        svg: The SVG text.
        title: What the picture shows, in a few words (its ``repr``).
        width: Width in pixels.
        height: Height in pixels.

    Example:
        >>> p = Picture('<svg xmlns="http://www.w3.org/2000/svg"/>', "nothing", 10, 20)
        >>> p
        Picture('nothing', 10x20)
        >>> p._repr_svg_() == p.svg == str(p)
        True
    """

    def __init__(self, svg: str, title: str, width: int, height: int) -> None:
        self.svg = svg
        self.title = title
        self.width = width
        self.height = height

    def _repr_svg_(self) -> str:
        """The SVG text, for Jupyter."""
        return self.svg

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the SVG text to ``path`` and return the path.

        Example:
            >>> import pathlib, tempfile
            >>> with tempfile.TemporaryDirectory() as tmp:
            ...     written = scatter([(0.0, 1.0)], [1]).save(pathlib.Path(tmp, "p.svg"))
            ...     written.read_text().startswith("<svg")
            True
        """
        from pathlib import Path

        target = Path(path)
        target.write_text(self.svg, encoding="utf-8")
        return target

    def __str__(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"Picture({self.title!r}, {self.width}x{self.height})"


def scatter(
    points: Sequence[tuple[float, float]],
    labels: Sequence[int],
    *,
    title: str = "",
    width: int = 560,
    height: int = 340,
) -> Picture:
    """The points as dots coloured by label, on axes of equal scale.

    Args:
        points: ``(x1, x2)`` pairs.
        labels: One per point, ``-1`` or ``+1``.
        title: Drawn above the plot; its repr says how many points otherwise.
        width: Width in pixels.
        height: Height in pixels.

    Raises:
        ValueError: ``points`` is empty, the lengths differ, or a label is not
            -1 or +1.

    Example:
        >>> picture = scatter([(0.0, 0.0), (2.0, 1.0), (1.0, -1.0)], [-1, 1, 1], title="three")
        >>> picture
        Picture('three', 560x340)
        >>> picture.svg.count('fill="#d62728"')  # two red (+1) points, one red legend dot
        3
    """
    _check_points(points, labels, "scatter")
    axes = _Axes.around(points, width, height, legend=_class_legend(labels), title=title)
    return axes.picture(
        axes.frame("x1", "x2") + _dots(axes, points, labels), title or f"{len(points)} points"
    )


def curves(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    log_x: bool = False,
    log_y: bool = False,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    width: int = 560,
    height: int = 340,
) -> Picture:
    """Line plots of ``(x, y)`` series, each named in a legend beside the plot.

    A value outside the range (or not positive on a log axis, or not finite)
    is drawn at the nearest edge, so a curve never leaves the frame.

    Args:
        series: ``(name, [(x, y), ...])`` pairs, one per curve.
        xlabel: The x axis' label.
        ylabel: The y axis' label.
        title: Drawn above the plot.
        log_x: A logarithmic x axis.
        log_y: A logarithmic y axis.
        x_range: The x axis' ends; by default the data's, with a margin.
        y_range: The y axis' ends; by default the data's, with a margin.
        width: Width in pixels.
        height: Height in pixels.

    Raises:
        ValueError: There is no series, a series is empty, or a range is
            empty (or not positive on a log axis).

    Example:
        >>> losses = [1.0, 0.5, 0.3, 0.2]
        >>> picture = curves([("loss", list(enumerate(losses)))], xlabel="step")
        >>> picture
        Picture('loss', 560x340)
        >>> picture.svg.count("<polyline")
        1
    """
    if not series:
        raise ValueError("curves: series is empty; give at least one (name, points) pair")
    for name, pairs in series:
        if not pairs:
            raise ValueError(f"curves: the series {name!r} has no points")
    xs = [x for _, pairs in series for x, _ in pairs]
    ys = [y for _, pairs in series for _, y in pairs]
    legend = [(name, COLOURS[n % len(COLOURS)], "line") for n, (name, _) in enumerate(series)]
    axes = _Axes(
        width,
        height,
        x_range or _data_range(xs, log_x, "x"),
        y_range or _data_range(ys, log_y, "y"),
        log_x=log_x,
        log_y=log_y,
        legend=legend,
        title=title,
    )
    parts = axes.frame(xlabel, ylabel)
    for n, (_, pairs) in enumerate(series):
        line = polyline((axes.px(x), axes.py(y)) for x, y in pairs)
        colour = COLOURS[n % len(COLOURS)]
        parts.append(element("polyline", fill="none", stroke=colour, stroke_width=2, points=line))
    return axes.picture(parts, title or ", ".join(name for name, _ in series))


def grid(
    score: Callable[[tuple[float, float]], float],
    points: Sequence[tuple[float, float]],
    *,
    steps: int = 60,
    margin: float = 0.5,
) -> tuple[list[float], list[float], list[list[float]]]:
    """A classifier's score on a grid around the points: the numbers behind :func:`boundary`.

    Args:
        score: Maps a point ``(x1, x2)`` to a number; its sign is the class.
        points: The data; the grid covers them with ``margin`` to spare.
        steps: Grid points along each axis (at least 2).
        margin: Added on every side of the points' range.

    Returns:
        ``xs``, ``ys`` and ``zs`` with ``zs[j][i] = score((xs[i], ys[j]))``,
        the shapes matplotlib's ``contourf(xs, ys, zs)`` takes.

    Raises:
        TypeError: ``score`` returns something that is not a number.
        ValueError: ``points`` is empty or ``steps`` < 2.

    Example:
        >>> xs, ys, zs = grid(lambda p: p[0] - p[1], [(0.0, 0.0), (1.0, 1.0)], steps=3, margin=0)
        >>> xs, ys
        ([0.0, 0.5, 1.0], [0.0, 0.5, 1.0])
        >>> zs[0]
        [0.0, 0.5, 1.0]
    """
    if not points:
        raise ValueError("grid: points is empty")
    as_int(steps, "grid: steps", least=2)
    x_lo, x_hi = _padded(min(p[0] for p in points), max(p[0] for p in points), margin)
    y_lo, y_hi = _padded(min(p[1] for p in points), max(p[1] for p in points), margin)
    xs = [x_lo + (x_hi - x_lo) * i / (steps - 1) for i in range(steps)]
    ys = [y_lo + (y_hi - y_lo) * j / (steps - 1) for j in range(steps)]
    zs = [[_number(score((x, y))) for x in xs] for y in ys]
    return xs, ys, zs


def boundary(
    score: Callable[[tuple[float, float]], float],
    points: Sequence[tuple[float, float]],
    labels: Sequence[int],
    *,
    steps: int = 60,
    title: str = "",
    width: int = 560,
    height: int = 340,
) -> Picture:
    """The points over the regions a classifier gives each class (the sign of ``score``).

    Args:
        score: Maps a point ``(x1, x2)`` to a number, e.g.
            ``lambda p: model.predict(p)[0]``; > 0 means class +1.
        points: ``(x1, x2)`` pairs.
        labels: One per point, ``-1`` or ``+1``.
        steps: Grid cells along each axis: finer is smoother and slower
            (``score`` is called ``steps**2`` times).
        title: Drawn above the plot.
        width: Width in pixels.
        height: Height in pixels.

    Raises:
        TypeError: ``score`` returns something that is not a number.
        ValueError: As :func:`scatter`, or ``steps`` < 2.

    Example:
        >>> picture = boundary(lambda p: p[0] - 1.0, [(0.0, 0.0), (2.0, 1.0)], [-1, 1], steps=4)
        >>> region = picture.svg.split('<path d="')[1].split('"')[0]
        >>> region.count("M")  # the +1 region: one run of cells in each of the 4 rows
        4
    """
    _check_points(points, labels, "boundary")
    as_int(steps, "boundary: steps", least=2)
    legend = _class_legend(labels)
    legend.append(("score < 0", _CLASS_COLOURS[-1][1], "box"))
    legend.append(("score > 0", _CLASS_COLOURS[1][1], "box"))
    axes = _Axes.around(points, width, height, legend=legend, title=title)
    # One cell per grid step across the whole plot area, scored at its centre.
    (x_lo, x_hi), (y_lo, y_hi) = axes.x_range, axes.y_range
    dx, dy = (x_hi - x_lo) / steps, (y_hi - y_lo) / steps
    # The plane is the -1 region; the +1 region is one path of rectangles, a
    # run of cells per row. One path is filled as one shape, so the rows meet
    # without the hairline seams that separate rectangles leave.
    runs = []
    for j in range(steps):
        y = y_lo + (j + 0.5) * dy
        positive = [_number(score((x_lo + (i + 0.5) * dx, y))) > 0 for i in range(steps)]
        top, bottom = axes.py(y_lo + (j + 1) * dy), axes.py(y_lo + j * dy)
        i = 0
        while i < steps:
            if not positive[i]:
                i += 1
                continue
            start = i
            while i < steps and positive[i]:
                i += 1
            left, right = axes.px(x_lo + start * dx), axes.px(x_lo + i * dx)
            runs.append(f"M{num(left)} {num(top)}H{num(right)}V{num(bottom)}H{num(left)}Z")
    parts = [axes.area(fill=_CLASS_COLOURS[-1][1])]
    if runs:
        parts.append(element("path", d="".join(runs), fill=_CLASS_COLOURS[1][1]))
    parts += axes.frame("x1", "x2", grid=False) + _dots(axes, points, labels)
    return axes.picture(parts, title or "decision boundary")


class _Axes:
    """Maps data to pixels and draws the frame, ticks, labels, title and legend."""

    left, top_plain, top_titled, bottom = 62, 14, 34, 44

    def __init__(
        self,
        width: int,
        height: int,
        x_range: tuple[float, float],
        y_range: tuple[float, float],
        *,
        log_x: bool = False,
        log_y: bool = False,
        legend: Sequence[tuple[str, str, str]] = (),
        title: str = "",
    ) -> None:
        for (lo, hi), log, axis in ((x_range, log_x, "x"), (y_range, log_y, "y")):
            if not (lo < hi) or (log and lo <= 0) or not math.isfinite(hi - lo):
                raise ValueError(f"{axis}_range must be (low, high) with low < high, got {lo, hi}")
        self.width, self.height = width, height
        self.x_range, self.y_range = x_range, y_range
        self.log_x, self.log_y = log_x, log_y
        self.legend = list(legend)
        self.title = title
        self.legend_width = (
            int(24 + _CHAR * max(len(name) for name, _, _ in self.legend)) if self.legend else 0
        )
        self.x0 = self.left
        self.x1 = width - 16 - (self.legend_width + 12 if self.legend else 0)
        self.y0 = self.top_titled if title else self.top_plain
        self.y1 = height - self.bottom

    @classmethod
    def around(
        cls,
        points: Sequence[tuple[float, float]],
        width: int,
        height: int,
        *,
        legend: Sequence[tuple[str, str, str]],
        title: str,
    ) -> _Axes:
        """Axes of equal scale on both directions that hold every point with a margin."""
        draft = cls(width, height, (0.0, 1.0), (0.0, 1.0), legend=legend, title=title)
        x_lo, x_hi = _padded(min(p[0] for p in points), max(p[0] for p in points), 0.25)
        y_lo, y_hi = _padded(min(p[1] for p in points), max(p[1] for p in points), 0.25)
        # The same data units per pixel both ways, so a circle looks round:
        # widen whichever range is the short one for its side of the box.
        per_pixel = max(
            (x_hi - x_lo) / (draft.x1 - draft.x0), (y_hi - y_lo) / (draft.y1 - draft.y0)
        )
        x_mid, y_mid = (x_lo + x_hi) / 2, (y_lo + y_hi) / 2
        half_w, half_h = (
            per_pixel * (draft.x1 - draft.x0) / 2,
            per_pixel * (draft.y1 - draft.y0) / 2,
        )
        return cls(
            width,
            height,
            (x_mid - half_w, x_mid + half_w),
            (y_mid - half_h, y_mid + half_h),
            legend=legend,
            title=title,
        )

    def _fraction(self, v: float, lo: float, hi: float, log: bool) -> float:
        if log:
            v = math.log10(v) if v > 0 and math.isfinite(v) else -math.inf
            lo, hi = math.log10(lo), math.log10(hi)
        if math.isnan(v):
            return 0.0
        return min(max((v - lo) / (hi - lo), 0.0), 1.0)

    def px(self, x: float) -> float:
        """The pixel column of ``x`` (clamped to the plot area)."""
        return self.x0 + self._fraction(x, *self.x_range, self.log_x) * (self.x1 - self.x0)

    def py(self, y: float) -> float:
        """The pixel row of ``y`` (clamped to the plot area; up is larger)."""
        return self.y1 - self._fraction(y, *self.y_range, self.log_y) * (self.y1 - self.y0)

    def area(self, **attrs: str | float) -> str:
        """A rectangle over the plot area, with ``attrs`` (its fill, its stroke)."""
        x0, y0, x1, y1 = self.x0, self.y0, self.x1, self.y1
        return element("rect", x=x0, y=y0, width=x1 - x0, height=y1 - y0, **attrs)

    def picture(self, body: list[str], title: str) -> Picture:
        """A :class:`Picture` of ``body`` (the plot's elements) with the title and legend."""
        parts = []
        if self.title:
            middle = (self.x0 + self.x1) / 2
            parts.append(
                element(
                    "text", self.title, x=middle, y=20, text_anchor="middle", font_weight="bold"
                )
            )
        parts += body + self.key()
        svg = document(self.width, self.height, parts, font_size=_FONT)
        return Picture(svg, title, self.width, self.height)

    def frame(self, xlabel: str, ylabel: str, *, grid: bool = True) -> list[str]:
        """Grid lines (optional), ticks, tick labels, the frame and the axis labels."""
        parts = []
        x0, y0, x1, y1 = self.x0, self.y0, self.x1, self.y1
        for value, text in _ticks(*self.x_range, self.log_x):
            x = self.px(value)
            if grid:
                parts.append(element("line", x1=x, y1=y0, x2=x, y2=y1, stroke=_GRID))
            parts.append(element("line", x1=x, y1=y1, x2=x, y2=y1 + 4, stroke=_INK))
            parts.append(element("text", text, x=x, y=y1 + 17, text_anchor="middle"))
        for value, text in _ticks(*self.y_range, self.log_y):
            y = self.py(value)
            if grid:
                parts.append(element("line", x1=x0, y1=y, x2=x1, y2=y, stroke=_GRID))
            parts.append(element("line", x1=x0 - 4, y1=y, x2=x0, y2=y, stroke=_INK))
            parts.append(element("text", text, x=x0 - 7, y=y + 4, text_anchor="end"))
        parts.append(self.area(fill="none", stroke=_INK))
        if xlabel:
            middle = (x0 + x1) / 2
            parts.append(element("text", xlabel, x=middle, y=self.height - 8, text_anchor="middle"))
        if ylabel:
            middle = (y0 + y1) / 2
            turn = f"rotate(-90 14 {num(middle)})"
            parts.append(
                element("text", ylabel, x=14, y=middle, text_anchor="middle", transform=turn)
            )
        return parts

    def key(self) -> list[str]:
        """The legend, right of the plot area."""
        parts = []
        x = self.x1 + 14
        for n, (name, colour, kind) in enumerate(self.legend):
            y = self.y0 + 10 + 18 * n
            if kind == "line":
                parts.append(
                    element("line", x1=x, y1=y, x2=x + 16, y2=y, stroke=colour, stroke_width=2)
                )
            elif kind == "dot":
                parts.append(element("circle", cx=x + 8, cy=y, r=4, fill=colour, stroke="white"))
            else:
                parts.append(
                    element(
                        "rect", x=x + 2, y=y - 6, width=12, height=12, fill=colour, stroke="#999"
                    )
                )
            parts.append(element("text", name, x=x + 22, y=y + 4))
        return parts


def _dots(axes: _Axes, points: Sequence[tuple[float, float]], labels: Sequence[int]) -> list[str]:
    return [
        element(
            "circle",
            cx=axes.px(x),
            cy=axes.py(y),
            r=4,
            fill=_CLASS_COLOURS[label][0],
            stroke="white",
            stroke_width=0.8,
        )
        for (x, y), label in zip(points, labels, strict=True)
    ]


def _class_legend(labels: Sequence[int]) -> list[tuple[str, str, str]]:
    return [
        (f"y = {label:+d}", _CLASS_COLOURS[label][0], "dot") for label in (-1, 1) if label in labels
    ]


def _check_points(points: Sequence[tuple[float, float]], labels: Sequence[int], who: str) -> None:
    if not points:
        raise ValueError(f"{who}: points is empty")
    if len(points) != len(labels):
        raise ValueError(
            f"{who}: points and labels must have the same length, got {len(points)} and "
            f"{len(labels)}"
        )
    for i, label in enumerate(labels):
        if label not in (-1, 1) or isinstance(label, bool):
            raise ValueError(f"{who}: labels[{i}] must be -1 or +1, got {label!r}")


def _number(value: object) -> float:
    """A score as a float; a Value or anything else is a mistake worth naming."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(
            f"score must return a number, got {type(value).__name__} {value!r} "
            "(for a model, use model.predict(p)[0] or model(p).data)"
        )
    return float(value)


def _padded(lo: float, hi: float, margin: float) -> tuple[float, float]:
    if hi - lo <= 0:
        return lo - max(margin, 1.0), hi + max(margin, 1.0)
    return lo - margin, hi + margin


def _data_range(values: list[float], log: bool, axis: str) -> tuple[float, float]:
    """The data's range with a margin of 5% (on a log axis: of decades)."""
    finite = [v for v in values if math.isfinite(v) and (v > 0 or not log)]
    if not finite:
        raise ValueError(f"curves: no {axis} value can be drawn ({'positive ' * log}finite)")
    lo, hi = min(finite), max(finite)
    if log:
        a, b = math.log10(lo), math.log10(hi)
        pad = 0.05 * (b - a) or 0.5
        return 10 ** (a - pad), 10 ** (b + pad)
    pad = 0.05 * (hi - lo) or max(abs(lo) * 0.1, 1.0)
    return lo - pad, hi + pad


def _ticks(lo: float, hi: float, log: bool) -> list[tuple[float, str]]:
    """Round values between ``lo`` and ``hi`` with their labels: 5 to 10 of them."""
    if log:
        first, last = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
        stride = max(1, math.ceil((last - first + 1) / 8))
        return [(10.0**k, f"1e{k}") for k in range(first, last + 1, stride)]
    raw = (hi - lo) / 6
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    extra = 1 if step / power == 2.5 else 0  # 0.25 needs one decimal more than 0.2
    decimals = max(0, extra - math.floor(math.log10(step) + 1e-9))
    start = math.ceil(lo / step - 1e-9)
    ticks = []
    for k in range(start, math.floor(hi / step + 1e-9) + 1):
        text = f"{k * step:.{decimals}f}"
        ticks.append((k * step, "0" if float(text) == 0 else text))
    return ticks
