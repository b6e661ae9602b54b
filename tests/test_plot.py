"""Tests for minigrad.plot: the SVG says what the data says, and the legend stays outside.

The pictures are read back as XML: where a point lands, how many lines a
curve has, which cells of a boundary are coloured, where the legend sits.
"""

from __future__ import annotations

import itertools
import math
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from minigrad import Value, eps_curve
from minigrad.teach import epscurve, plot
from minigrad.teach.data import make_moons

SVG = "{http://www.w3.org/2000/svg}"
BLUE, RED = "#1f77b4", "#d62728"


def _parse(picture: plot.Picture) -> ET.Element:
    root = ET.fromstring(picture.svg)
    assert root.tag == f"{SVG}svg"
    assert (root.get("width"), root.get("height")) == (str(picture.width), str(picture.height))
    return root


def _frame(root: ET.Element) -> tuple[float, float, float, float]:
    """The plot area: the one unfilled rectangle with a grey stroke."""
    (frame,) = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == "none"]
    x, y = float(frame.get("x", "")), float(frame.get("y", ""))
    return x, y, x + float(frame.get("width", "")), y + float(frame.get("height", ""))


def _texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def _data_dots(root: ET.Element) -> list[ET.Element]:
    return [c for c in root.iter(f"{SVG}circle") if c.get("stroke-width") == "0.8"]


def _legend_xs(root: ET.Element, names: list[str]) -> list[float]:
    return [float(t.get("x", "")) for t in root.iter(f"{SVG}text") if t.text in names]


# scatter


def test_scatter_draws_every_point_in_its_class_colour() -> None:
    points, labels = make_moons(30, noise=0.1, rng=random.Random(1))
    root = _parse(plot.scatter(points, labels))
    dots = _data_dots(root)
    assert len(dots) == 30
    assert [d.get("fill") for d in dots] == [BLUE if y < 0 else RED for y in labels]
    left, top, right, bottom = _frame(root)
    for d in dots:
        assert left < float(d.get("cx", "")) < right
        assert top < float(d.get("cy", "")) < bottom


def test_scatter_uses_one_scale_for_both_axes_and_up_is_up() -> None:
    # A unit step right and a unit step up are the same number of pixels.
    root = _parse(plot.scatter([(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)], [-1, 1, 1]))
    (ox, oy), (rx, ry), (ux, uy) = [
        (float(d.get("cx", "")), float(d.get("cy", ""))) for d in _data_dots(root)
    ]
    assert ry == oy
    assert ux == ox
    assert rx - ox == pytest.approx(oy - uy, abs=0.15)  # coordinates are rounded to 0.1 px
    assert rx > ox
    assert uy < oy  # larger x2 is higher on the screen


def test_the_legend_is_right_of_the_plot_area() -> None:
    points, labels = make_moons(20, noise=0.1, rng=random.Random(0))
    for picture, names in [
        (plot.scatter(points, labels), ["y = -1", "y = +1"]),
        (plot.boundary(lambda p: p[0], points, labels, steps=5), ["score < 0", "score > 0"]),
        (plot.curves([("loss", [(0, 1.0), (1, 0.5)])]), ["loss"]),
    ]:
        root = _parse(picture)
        _, _, right, _ = _frame(root)
        xs = _legend_xs(root, names)
        assert len(xs) == len(names)
        assert all(x > right for x in xs)
        assert all(x < picture.width for x in xs)


def _legend_clear_of_curves(svg: str) -> None:
    """Each case's name starts right of every point of every curve."""
    root = ET.fromstring(svg)
    names = [name for name, _, _ in epscurve.CASES]
    legend = [t for t in root.iter(f"{SVG}text") if t.text in names]
    assert len(legend) == len(names)
    # Anchored at its start, a text's x is its left edge.
    assert all(t.get("text-anchor", "start") == "start" for t in legend)
    rightmost = max(
        float(pair.split(",")[0])
        for line in root.iter(f"{SVG}polyline")
        for pair in (line.get("points") or "").split()
    )
    assert min(float(t.get("x", "")) for t in legend) > rightmost


def test_the_eps_curve_figure_keeps_its_legend_outside_the_curves() -> None:
    curves = [(name, eps_curve(func, x)) for name, func, x in epscurve.CASES]
    _legend_clear_of_curves(epscurve.svg(curves))


def test_the_stored_eps_curve_figure_has_its_legend_outside() -> None:
    stored = Path(__file__).resolve().parent.parent / "docs" / "img" / "eps_curve.svg"
    _legend_clear_of_curves(stored.read_text(encoding="utf-8"))


def test_titles_and_labels_are_escaped() -> None:
    picture = plot.scatter([(0.0, 0.0)], [1], title="a < b & 'c'")
    root = _parse(picture)
    assert "a < b & 'c'" in _texts(root)
    assert repr(picture) == "Picture(\"a < b & 'c'\", 560x340)"


def test_save_writes_the_svg(tmp_path: Path) -> None:
    picture = plot.scatter([(0.0, 0.0), (1.0, 2.0)], [1, -1])
    written = picture.save(tmp_path / "p.svg")
    assert written == tmp_path / "p.svg"
    assert written.read_text(encoding="utf-8") == picture.svg == picture._repr_svg_()


# curves


def test_curves_draw_one_line_per_series_through_every_point() -> None:
    picture = plot.curves(
        [("a", [(0, 0.0), (1, 1.0), (2, 4.0)]), ("b", [(0, 2.0), (2, 2.0)])], xlabel="step"
    )
    root = _parse(picture)
    lines = list(root.iter(f"{SVG}polyline"))
    assert [len((line.get("points") or "").split()) for line in lines] == [3, 2]
    assert [line.get("stroke") for line in lines] == list(plot.COLOURS[:2])
    a = [tuple(map(float, p.split(","))) for p in (lines[0].get("points") or "").split()]
    # Right for larger x, up for larger y; equal steps in x are equal in pixels.
    assert a[0][0] < a[1][0] < a[2][0]
    assert a[0][1] > a[1][1] > a[2][1]
    assert a[1][0] - a[0][0] == pytest.approx(a[2][0] - a[1][0], abs=0.15)
    assert "step" in _texts(root)


def test_linear_ticks_are_round_evenly_spaced_and_inside_the_range() -> None:
    root = _parse(plot.curves([("x", [(0, 0.013), (10, 2.71)])]))
    _, top, _, bottom = _frame(root)
    y_ticks = [t for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
    values = [float(t.text or "") for t in y_ticks]
    assert 4 <= len(values) <= 11
    steps = {round(b - a, 9) for a, b in itertools.pairwise(values)}
    assert len(steps) == 1
    (step,) = steps
    assert step in (0.5, 0.25, 0.2, 1.0)
    assert all(top <= float(t.get("y", "")) - 4 <= bottom for t in y_ticks)


def test_log_axes_put_zero_and_nan_on_the_bottom_edge() -> None:
    picture = plot.curves(
        [("e", [(1e-3, 0.0), (1e-2, 1e-4), (1e-1, math.nan)])],
        log_x=True,
        log_y=True,
        y_range=(1e-8, 1.0),
    )
    root = _parse(picture)
    _, _, _, bottom = _frame(root)
    (line,) = root.iter(f"{SVG}polyline")
    ys = [float(p.split(",")[1]) for p in (line.get("points") or "").split()]
    assert ys[0] == pytest.approx(bottom)
    assert ys[2] == pytest.approx(bottom)
    assert ys[1] < bottom
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
    assert labels[0] == "1e-8"
    assert labels[-1] == "1e0"


# grid and boundary


def test_grid_scores_every_grid_point() -> None:
    seen: list[tuple[float, float]] = []

    def score(p: tuple[float, float]) -> float:
        seen.append(p)
        return 3 * p[0] - p[1]

    xs, ys, zs = plot.grid(score, [(0.0, 0.0), (2.0, 1.0)], steps=5, margin=0.5)
    assert xs[0] == -0.5
    assert xs[-1] == 2.5
    assert ys[0] == -0.5
    assert ys[-1] == 1.5
    assert len(xs) == len(ys) == 5
    assert len(zs) == len(ys)
    assert all(len(row) == len(xs) for row in zs)
    for j, y in enumerate(ys):
        for i, x in enumerate(xs):
            assert zs[j][i] == 3 * x - y
    assert len(seen) == 25


def test_boundary_colours_the_cells_where_the_score_is_positive() -> None:
    # Score x1 - 1: the +1 region is the right part of each row, from x1 = 1 on.
    points = [(0.0, 0.0), (2.0, 1.0)]
    picture = plot.boundary(lambda p: p[0] - 1.0, points, [-1, 1], steps=8)
    root = _parse(picture)
    (path,) = root.iter(f"{SVG}path")
    assert path.get("fill") == "#f8d0cd"
    runs = (path.get("d") or "").split("M")[1:]
    assert len(runs) == 8  # one run per row
    dots = _data_dots(root)
    # The first point has x1 = 0, the second x1 = 2: the boundary lies between.
    x_left, x_right = float(dots[0].get("cx", "")), float(dots[1].get("cx", ""))
    _, _, right, _ = _frame(root)
    cell = (right - _frame(root)[0]) / 8
    for run in runs:
        start = float(run.split()[0])
        end = float(run.split("H")[1].split("V")[0])
        assert end == pytest.approx(right, abs=0.1)  # runs to the right edge
        assert abs(start - (x_left + x_right) / 2) <= cell  # starts at x1 = 1, within a cell


def test_a_boundary_with_one_class_everywhere_has_no_second_region() -> None:
    root = _parse(plot.boundary(lambda p: -1.0, [(0.0, 0.0), (1.0, 1.0)], [-1, 1], steps=4))
    assert list(root.iter(f"{SVG}path")) == []


def test_boundary_draws_the_points_over_the_regions() -> None:
    points, labels = make_moons(12, noise=0.0, rng=random.Random(0))
    root = _parse(plot.boundary(lambda p: p[1], points, labels, steps=4))
    order = [el.tag for el in root.iter() if el.tag in (f"{SVG}path", f"{SVG}circle")]
    assert order[0] == f"{SVG}path"
    assert len(_data_dots(root)) == 12


# errors


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: plot.scatter([], []), ValueError, "scatter: points is empty"),
        (
            lambda: plot.scatter([(0.0, 0.0)], [1, -1]),
            ValueError,
            "scatter: points and labels must have the same length, got 1 and 2",
        ),
        (
            lambda: plot.scatter([(0.0, 0.0)], [0]),
            ValueError,
            r"scatter: labels\[0\] must be -1 or \+1, got 0",
        ),
        (
            lambda: plot.boundary(lambda p: 0.0, [(0.0, 0.0)], [1], steps=1),
            ValueError,
            "boundary: steps must be >= 2, got 1",
        ),
        (
            lambda: plot.boundary(lambda p: Value(1.0), [(0.0, 0.0)], [1], steps=2),  # type: ignore[arg-type, return-value]
            TypeError,
            r"score must return a number, got Value .*model.predict\(p\)\[0\]",
        ),
        (lambda: plot.grid(lambda p: 0.0, []), ValueError, "grid: points is empty"),
        (lambda: plot.curves([]), ValueError, "curves: series is empty"),
        (lambda: plot.curves([("a", [])]), ValueError, "curves: the series 'a' has no points"),
        (
            lambda: plot.curves([("a", [(1.0, 1.0)])], x_range=(2.0, 1.0)),
            ValueError,
            r"x_range must be \(low, high\) with low < high, got \(2.0, 1.0\)",
        ),
        (
            lambda: plot.curves([("a", [(1.0, 0.0)])], log_y=True),
            ValueError,
            "curves: no y value can be drawn",
        ),
    ],
)
def test_bad_arguments(make: object, error: type[Exception], message: str) -> None:
    assert callable(make)
    with pytest.raises(error, match=message):
        make()


def test_teach_has_one_svg_writer_and_its_own_escaping() -> None:
    # Issue 28: plot.py and viz/svg.py each wrote SVG, and plot.py escaped its
    # text with the checker's report. Now teach/svg.py alone opens an <svg>
    # document, and no module of teach/ reads the report.
    import minigrad.teach

    teach = Path(minigrad.teach.__file__).parent
    sources = {str(p.relative_to(teach)): p.read_text() for p in teach.rglob("*.py")}
    writers = sorted(
        name for name, text in sources.items() if 'http://www.w3.org/2000/svg" w' in text
    )
    assert writers == ["svg.py"]
    assert not [name for name, text in sources.items() if "checking.report" in text]


def test_eps_curve_is_public_where_it_was_and_lives_with_its_pictures() -> None:
    import minigrad

    assert minigrad.eps_curve is eps_curve is epscurve.eps_curve
    assert "eps_curve" in minigrad.__all__
