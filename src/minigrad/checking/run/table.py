"""A report's rows and words: the cells of an entry, the table, which derivative it is.

Example:
    >>> mode_label("fwd", 2), modes_in_words(("rev",))
    ('fwd over rev', 'reverse mode')
"""

from __future__ import annotations

import math
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.checking.run.report import Entry

__all__ = [
    "cells",
    "header_of",
    "mode_label",
    "modes_in_words",
    "notes",
    "orders",
    "reasons",
    "row",
    "table",
    "where",
]

#: The modes of a check, as the headlines of a report name them.
_MODE_WORDS = {"rev": "reverse", "fwd": "forward"}


def modes_in_words(modes: Sequence[str]) -> str:
    """``forward mode``, ``reverse and forward mode``.

    Example:
        >>> modes_in_words(("fwd", "rev"))
        'forward and reverse mode'
    """
    return " and ".join(_MODE_WORDS.get(m, m) for m in modes) + " mode"


def orders(order: int) -> str:
    """``order 1``, ``orders 1-3``."""
    return "order 1" if order == 1 else f"orders 1-{order}"


_HEADER = (
    "order",
    "output",
    "with respect to",
    "analytic",
    "numerical",
    "abs diff",
    "rel diff",
    "allowed",
    "error bound",
    "step",
    "digits",
    "verdict",
)


def mode_label(mode: str, order: int) -> str:
    """How an entry's analytic value was computed: ``fwd``, ``fwd over rev``, ...

    Levels above the first are built by reverse mode, so an order-k entry in
    forward mode is forward over k - 1 reverse passes.

    Example:
        >>> mode_label("fwd", 1), mode_label("fwd", 2), mode_label("rev", 3)
        ('fwd', 'fwd over rev', 'rev over rev over rev')
    """
    return " over ".join([mode] + ["rev"] * (order - 1))


def header_of(named: bool, classic: bool = True) -> tuple[str, ...]:
    header = _HEADER if classic else tuple(c for c in _HEADER if c != "allowed")
    return ("order", "mode", *header[1:]) if named else header


def cells(e: Entry, names: Sequence[str], named: bool, classic: bool = True) -> tuple[str, ...]:
    shown = row(e, names)
    if not classic:
        shown = (*shown[:7], *shown[8:])
    return (shown[0], mode_label(e.mode, e.order), *shown[1:]) if named else shown


def notes(entries: Sequence[Entry]) -> list[str]:
    return sorted({e.note for e in entries if e.note})


def reasons(entries: Sequence[Entry], names: Sequence[str]) -> list[str]:
    """One line per entry with a reason: which derivative, then why (once per reason)."""
    lines: list[str] = []
    seen: set[str] = set()
    one = len({(e.order, e.output, e.path, e.mode) for e in entries}) == 1
    for e in entries:
        if not e.reason or e.reason in seen:
            continue
        seen.add(e.reason)
        label = row(e, names)[2] if one and e.order == 1 and e.mode == "rev" else where(e, names)
        lines.append(f"{label}: {e.reason}")
    return lines


def _maybe(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.3g}"


def apart(a: float, n: float) -> tuple[str, str]:
    """Two derivatives in 9 significant digits, or in as many more as tell them apart.

    A rule 1e-10 off beside a pole is -1000000000264.5 where the slope is
    -1000000000164.5: both are -1e+12 in 9 digits.

    Example:
        >>> apart(2.5, 2.25), apart(-1000000000264.5, -1000000000164.5)
        (('2.5', '2.25'), ('-1.0000000003e+12', '-1.0000000002e+12'))
    """
    for k in range(9, 18):
        one, two = f"{a:.{k}g}", f"{n:.{k}g}"
        if one != two or a == n or not (math.isfinite(a) and math.isfinite(n)):
            return one, two
    return one, two


def row(e: Entry, names: Sequence[str]) -> tuple[str, ...]:
    """The cells of one entry's row of the table."""
    output = "v . out" if e.output < 0 else f"out[{e.output}]"
    if e.wrt >= 0:
        wrt = ", ".join(names[i] for i in (*e.path, e.wrt))
    else:  # -1: fast mode's direction; -2: a closure's _backward on its own
        wrt = "a random direction" if e.wrt == -1 else "its own _backward"
    analytic, numerical = apart(e.analytic, e.numerical)
    return (
        str(e.order),
        output,
        wrt,
        analytic,
        numerical,
        f"{e.diff:.3g}",
        f"{e.rel:.3g}",
        f"{e.allowed:.3g}",
        _maybe(e.error),
        _maybe(e.step),
        str(e.digits),
        e.verdict,
    )


def where(e: Entry, names: Sequence[str]) -> str:
    """Which derivative an entry is, in words: ``order 1, out[0] with respect to x[0]``.

    An entry of forward mode says so: ``order 2 (fwd over rev), out[0] ...``.
    """
    _, output, wrt, *_ = row(e, names)
    mode = f" ({mode_label(e.mode, e.order)})" if e.mode != "rev" else ""
    return f"order {e.order}{mode}, {output} with respect to {wrt}"


def table(
    entries: Sequence[Entry], names: Sequence[str], named: bool = False, classic: bool = True
) -> str:
    header = header_of(named, classic)
    rows = [header, *(cells(e, names, named, classic) for e in entries)]
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )
