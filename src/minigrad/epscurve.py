"""The eps curve: how the central difference's error depends on the step.

``python -m minigrad eps-curve --svg docs/img/eps_curve.svg`` prints the
curves and redraws the figure in docs/checking.md with the standard library
alone; :func:`plot` draws the same on a matplotlib axis (the ``plot`` extra).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from minigrad.engine import Value
from minigrad.gradcheck import eps_curve
from minigrad.report import escape_html

if TYPE_CHECKING:
    from typing import Any

__all__ = ["CASES", "main", "plot", "svg"]

#: The functions drawn in the docs: name, function, point.
CASES: tuple[tuple[str, Callable[[Value], Value], float], ...] = (
    ("sin(x) at 1", lambda v: v.sin(), 1.0),
    ("exp(x) at 2", lambda v: v.exp(), 2.0),
    ("tanh(3x) at 0.2", lambda v: (3.0 * v).tanh(), 0.2),
)

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


def svg(curves: Sequence[tuple[str, list[tuple[float, float]]]], *, width: int = 640) -> str:
    """A log-log line plot of the curves as SVG text (standard library only).

    Errors of exactly 0 are drawn at the bottom of the plot (1e-17).

    Example:
        >>> text = svg([("sin", eps_curve(lambda v: v.sin(), 1.0))])
        >>> text.startswith("<svg") and "polyline" in text
        True
    """
    height = width * 5 // 8
    left, right, top, bottom = 70, 20, 20, 50
    x_lo, x_hi, y_lo, y_hi = -13.0, -1.0, -17.0, 0.0

    def px(e: float) -> float:
        return left + (math.log10(e) - x_lo) / (x_hi - x_lo) * (width - left - right)

    def py(err: float) -> float:
        y = math.log10(err) if err > 0 else y_lo
        y = min(max(y, y_lo), y_hi)
        return top + (y_hi - y) / (y_hi - y_lo) * (height - top - bottom)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    for k in range(int(x_lo), int(x_hi) + 1, 2):
        x = px(10.0**k)
        parts.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}" stroke="#ddd"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle">1e{k}</text>'
        )
    for k in range(int(y_lo), int(y_hi) + 1, 3):
        y = py(10.0**k)
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#ddd"/>'
        )
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">1e{k}</text>')
    parts.append(
        f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">eps</text>'
    )
    parts.append(
        f'<text x="16" y="{(top + height - bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {(top + height - bottom) / 2})">'
        "|central difference - analytic|</text>"
    )
    for n, (name, curve) in enumerate(curves):
        colour = _COLOURS[n % len(_COLOURS)]
        points = " ".join(f"{px(e):.1f},{py(err):.1f}" for e, err in curve)
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>'
        )
        y = top + 16 + 16 * n
        parts.append(
            f'<text x="{width - right - 8}" y="{y}" text-anchor="end" '
            f'fill="{colour}">{escape_html(name)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def plot(curve: list[tuple[float, float]], ax: Any = None, label: str = "") -> Any:
    """Draw one eps curve on a matplotlib axis (needs the ``plot`` extra).

    Returns the axis. Raises ImportError naming the extra when matplotlib
    is missing.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "minigrad.epscurve.plot needs matplotlib: pip install 'minigrad[plot]'"
        ) from None
    if ax is None:
        _, ax = plt.subplots()
    xs = [e for e, _ in curve]
    ys = [max(err, 1e-17) for _, err in curve]
    ax.loglog(xs, ys, marker="o", label=label or None)
    ax.set_xlabel("eps")
    ax.set_ylabel("|central difference - analytic|")
    return ax


def main(svg_path: str | None, out: TextIO) -> int:
    """Print every case's curve and its best eps; write the SVG figure if asked.

    Example:
        >>> import io
        >>> buf = io.StringIO()
        >>> main(None, buf)
        0
        >>> "best eps" in buf.getvalue()
        True
    """
    curves = [(name, eps_curve(func, x)) for name, func, x in CASES]
    for name, curve in curves:
        best_eps, best_err = min(curve, key=lambda pair: pair[1])
        print(f"{name}: best eps {best_eps:.1e} (error {best_err:.1e})", file=out)
        print("  " + "  ".join(f"{e:.0e}:{err:.1e}" for e, err in curve[::2]), file=out)
    if svg_path:
        with open(svg_path, "w", encoding="utf-8") as f:
            f.write(svg(curves))
        print(f"wrote {svg_path}", file=out)
    return 0
