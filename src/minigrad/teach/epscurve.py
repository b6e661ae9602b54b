"""The eps curve: how the central difference's error depends on the step.

:func:`eps_curve` (``minigrad.eps_curve``) computes it, with the checker's
steps and central difference. ``python -m minigrad eps-curve --svg
docs/img/eps_curve.svg`` prints the curves and redraws the figure in
docs/checking.md with the standard library alone; :func:`plot` draws the same
on a matplotlib axis (the ``plot`` extra).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from minigrad.checking.numeric.estimate import Point, nominal_step
from minigrad.core._validate import positive
from minigrad.core.grad import grad
from minigrad.core.value import Value

if TYPE_CHECKING:
    from typing import Any

__all__ = ["CASES", "eps_curve", "main", "plot", "svg"]

#: The functions drawn in the docs: name, function, point.
CASES: tuple[tuple[str, Callable[[Value], Value], float], ...] = (
    ("sin(x) at 1", lambda v: v.sin(), 1.0),
    ("exp(x) at 2", lambda v: v.exp(), 2.0),
    ("tanh(3x) at 0.2", lambda v: (3.0 * v).tanh(), 0.2),
)


def eps_curve(
    func: Callable[[Value], Value], x: float, epsilons: Sequence[float] | None = None
) -> list[tuple[float, float]]:
    """The error of the central difference against the analytic derivative, per eps.

    Plotted on log axes it is U-shaped: round-off (about 1e-16 * |f| / h) on
    the left, truncation (about h**2 * |f'''| / 6) on the right. The step at
    each eps is the checker's: ``h = eps * max(1, sqrt(|x|))``, never so small that
    ``x + h == x``; an eps whose step leaves ``func``'s domain gives NaN.

    Args:
        func: A one-input function of a Value.
        x: The point.
        epsilons: The values of eps; by default 1e-1 down to 1e-13, two per decade.

    Returns:
        ``(eps, |central difference - analytic|)`` pairs, largest eps first.

    Example:
        >>> curve = eps_curve(lambda v: v.sin(), 1.0)
        >>> best = min(curve, key=lambda pair: pair[1])[0]
        >>> 1e-8 <= best <= 1e-3
        True
    """
    steps = list(epsilons) if epsilons is not None else [10 ** (-k / 2) for k in range(2, 27)]
    leaf = Value(x)
    (d,) = grad(func(leaf), [leaf])
    exact = d.data

    def evaluate(t: float) -> list[float] | None:
        try:
            return [func(Value(t)).data]
        except (ArithmeticError, ValueError):
            return None

    out = []
    for eps in steps:
        eps = positive(eps, "eps_curve: epsilons[i]")
        sides = Point(evaluate, x, [], nominal_step(x, eps)).sides(nominal_step(x, eps))
        if sides is None:
            out.append((eps, math.nan))
            continue
        up, down, half = sides
        out.append((eps, abs((up[0] - down[0]) / (2.0 * half) - exact)))
    return out


def svg(curves: Sequence[tuple[str, list[tuple[float, float]]]], *, width: int = 640) -> str:
    """A log-log line plot of the curves as SVG text (standard library only).

    Drawn by :func:`minigrad.plot.curves`, with the legend beside the plot.
    Errors of exactly 0 are drawn at the bottom of the plot (1e-17).

    Example:
        >>> text = svg([("sin", eps_curve(lambda v: v.sin(), 1.0))])
        >>> text.startswith("<svg") and "polyline" in text
        True
    """
    from minigrad.teach.plot import curves as draw

    return draw(
        curves,
        xlabel="eps",
        ylabel="|central difference - analytic|",
        log_x=True,
        log_y=True,
        x_range=(1e-13, 1e-1),
        y_range=(1e-17, 1.0),
        width=width,
        height=width * 5 // 8,
    ).svg


def plot(curve: list[tuple[float, float]], ax: Any = None, label: str = "") -> Any:
    """Draw one eps curve on a matplotlib axis (needs the ``plot`` extra).

    Returns the axis. Raises ImportError naming the extra when matplotlib
    is missing.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "minigrad.epscurve.plot needs matplotlib: pip install matplotlib"
        ) from None
    if ax is None:
        _, ax = plt.subplots()
    xs = [e for e, _ in curve]
    ys = [max(err, 1e-17) for _, err in curve]
    ax.loglog(xs, ys, marker="o", label=label or None)
    ax.set_xlabel("eps")
    ax.set_ylabel("|central difference - analytic|")
    return ax


def main(svg_path: str | None, out: TextIO, err: TextIO | None = None) -> int:
    """Print every case's curve and its best eps; write the SVG figure if asked.

    Returns 0, or 2 when the figure cannot be written (the reason goes to
    ``err``, standard error by default), as ``minigrad check`` does for a
    file it cannot read.

    Example:
        >>> import io
        >>> buf = io.StringIO()
        >>> main(None, buf)
        0
        >>> "best eps" in buf.getvalue()
        True
        >>> main("/nonexistent/x.svg", buf, buf)
        2
        >>> print(buf.getvalue().splitlines()[-1])
        minigrad eps-curve: cannot write --svg '/nonexistent/x.svg': ...
    """
    figure = None
    if svg_path:
        # Opened first: a path that cannot be written fails before the work.
        try:
            figure = open(svg_path, "w", encoding="utf-8")  # noqa: SIM115 (closed below)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            print(
                f"minigrad eps-curve: cannot write --svg {svg_path!r}: {reason}",
                file=sys.stderr if err is None else err,
            )
            return 2
    try:
        curves = [(name, eps_curve(func, x)) for name, func, x in CASES]
        for name, curve in curves:
            best_eps, best_err = min(curve, key=lambda pair: pair[1])
            print(f"{name}: best eps {best_eps:.1e} (error {best_err:.1e})", file=out)
            print("  " + "  ".join(f"{e:.0e}:{r:.1e}" for e, r in curve[::2]), file=out)
        if figure is not None:
            figure.write(svg(curves))
            print(f"wrote {svg_path}", file=out)
    finally:
        if figure is not None:
            figure.close()
    return 0
