"""What a derivative check found: one :class:`Entry` per compared derivative, one :class:`Report`.

A report is plain data plus two views of it: ``str(report)`` is a text table
(short in a terminal, complete under pytest) and ``report._repr_html_()`` is the
table a notebook shows.

Example:
    >>> e = Entry(1, 0, (), 0, analytic=-1.0, numerical=1.0, allowed=0.001, passed=False)
    >>> print(Report(False, 1, 1, [e], ["x[0]"]))  # doctest: +NORMALIZE_WHITESPACE
    gradcheck failed at order 1: 1 of 1 entries differ (exhaustive); worst first:
    order  output  with respect to  analytic  numerical  |diff|  allowed  error bound  step
    1      out[0]  x[0]             -1        1          2       0.001    -            -
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["Entry", "Report", "escape_html", "mode_label", "modes_in_words"]

# Rows of a report shown outside pytest before "... and N more".
_SHORT_ROWS = 8

_FIELDS = (
    "order",
    "output",
    "path",
    "wrt",
    "analytic",
    "numerical",
    "allowed",
    "passed",
    "note",
    "error",
    "step",
    "mode",
)

#: The modes of a check, as the headlines of a report name them.
_MODE_WORDS = {"rev": "reverse", "fwd": "forward"}


def modes_in_words(modes: Sequence[str]) -> str:
    """``forward mode``, ``reverse and forward mode``.

    Example:
        >>> modes_in_words(("fwd", "rev"))
        'forward and reverse mode'
    """
    return " and ".join(_MODE_WORDS.get(m, m) for m in modes) + " mode"


class Entry:
    """One compared derivative: d^order out[output] / d inputs[path..., wrt].

    Attributes:
        order: The derivative's order (1 for the Jacobian).
        output: Index of ``func``'s output; -1 for the ``grad_outputs``
            weighted sum of the outputs.
        path: Inputs already differentiated by, outermost first (order - 1).
        wrt: Index of the input of this last derivative ("with respect to").
        analytic: From reverse mode.
        numerical: The numerical derivative: the central difference at the
            nominal step, or the extrapolated estimate when one was needed.
        allowed: The tolerance ``atol + rtol * |numerical|``.
        passed: Whether the entry is within tolerance (never when not finite).
        note: Why it failed, in words (kink, jump, a partial that failed), or "".
        error: The error bound of ``numerical`` (NaN when none was estimated).
        step: The step ``numerical`` came from (NaN when none).
        mode: How ``analytic`` was computed: ``"rev"`` (reverse mode) or
            ``"fwd"`` (forward mode; above order 1, forward over reverse:
            the jvp of the reverse-mode derivatives of the order below).
    """

    __slots__ = _FIELDS

    def __init__(
        self,
        order: int,
        output: int,
        path: tuple[int, ...],
        wrt: int,
        analytic: float,
        numerical: float,
        allowed: float,
        passed: bool,
        note: str = "",
        error: float = math.nan,
        step: float = math.nan,
        mode: str = "rev",
    ) -> None:
        self.order = order
        self.output = output
        self.path = path
        self.wrt = wrt
        self.analytic = analytic
        self.numerical = numerical
        self.allowed = allowed
        self.passed = passed
        self.note = note
        self.error = error
        self.step = step
        self.mode = mode

    @property
    def diff(self) -> float:
        """|analytic - numerical| (inf when either is not finite)."""
        d = abs(self.analytic - self.numerical)
        return d if math.isfinite(d) else math.inf

    def replace(
        self,
        *,
        numerical: float | None = None,
        allowed: float | None = None,
        passed: bool | None = None,
        note: str | None = None,
        error: float | None = None,
        step: float | None = None,
    ) -> Entry:
        """A copy with the given fields changed (Entries are treated as values)."""
        return Entry(
            self.order,
            self.output,
            self.path,
            self.wrt,
            self.analytic,
            self.numerical if numerical is None else numerical,
            self.allowed if allowed is None else allowed,
            self.passed if passed is None else passed,
            self.note if note is None else note,
            self.error if error is None else error,
            self.step if step is None else step,
            self.mode,
        )

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entry):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
        return f"Entry({fields})"


class Report:
    """The outcome of a check: what was compared and every entry that failed.

    ``str(report)`` is a plain-text table; in a notebook the report shows
    itself as an HTML table.

    Attributes:
        ok: True when every compared entry passed.
        order: The highest order checked.
        checked: How many entries (or fast-mode directions) were compared.
        failures: The failing entries, worst first.
        names: A display name per input (``x[0] 'a'``, ``v[1]``).
        fault: The op whose own rule disagrees with its forward, in words.
        fast: Whether the check ran in fast mode.
        kinks: Passing entries that sit on a kink, in words (such a check
            passes, and the checkers warn with GradcheckWarning).
        cautions: Other passing entries worth a warning, in words: passed by
            ``atol`` only while the derivatives disagree relatively, or a
            numerical derivative too uncertain to confirm the analytic one.
        modes: The modes the analytic derivatives were computed in
            (``"rev"``, ``"fwd"``); a report of any mode but reverse alone
            names the mode of every row.
    """

    __slots__ = (
        "cautions",
        "checked",
        "failures",
        "fast",
        "fault",
        "kinks",
        "modes",
        "names",
        "ok",
        "order",
    )

    def __init__(
        self,
        ok: bool,
        order: int,
        checked: int,
        failures: list[Entry] | None = None,
        names: list[str] | None = None,
        fault: str = "",
        fast: bool = False,
        kinks: list[str] | None = None,
        cautions: list[str] | None = None,
        modes: tuple[str, ...] = ("rev",),
    ) -> None:
        self.ok = ok
        self.order = order
        self.checked = checked
        self.failures = failures if failures is not None else []
        self.names = names if names is not None else []
        self.fault = fault
        self.fast = fast
        self.kinks = kinks if kinks is not None else []
        self.cautions = cautions if cautions is not None else []
        self.modes = modes

    def __repr__(self) -> str:
        return (
            f"Report(ok={self.ok!r}, order={self.order!r}, checked={self.checked!r}, "
            f"failures={self.failures!r}, fault={self.fault!r}, kinks={self.kinks!r}, "
            f"cautions={self.cautions!r}, modes={self.modes!r})"
        )

    @property
    def warnings(self) -> list[str]:
        """Everything a passing check warns about: kinks, then cautions."""
        return [*self.kinks, *self.cautions]

    def _mode(self) -> str:
        if not self.fast:
            how = "exhaustive"
        else:
            how = "fast mode" if self.ok else "fast mode, then exhaustive"
        if self._named():
            how += "; " + modes_in_words(self.modes)
        return how

    def _named(self) -> bool:
        """Whether rows and headlines name their mode: any mode but reverse alone."""
        return tuple(self.modes) != ("rev",)

    def text(self, *, full: bool = True) -> str:
        """The report as plain text; ``full=False`` keeps the worst rows only."""
        if self.ok:
            passed = (
                f"gradcheck passed: orders 1-{self.order}, {self.checked} comparisons "
                f"({self._mode()})"
            )
            return "\n".join([passed, *(f"warning: {w}" for w in self.warnings)])
        worst = self.failures[0]
        shown = self.failures if full else self.failures[:_SHORT_ROWS]
        lines = [
            f"gradcheck failed at order {worst.order}{self._failed_modes()}: "
            f"{len(self.failures)} of {self.checked} entries differ ({self._mode()}); "
            "worst first:",
            _table(shown, self.names, self._named()),
        ]
        if not full and len(self.failures) > _SHORT_ROWS:
            lines.append(f"... and {len(self.failures) - _SHORT_ROWS} more")
        lines.extend(f"note: {n}" for n in _notes(self.failures))
        if self.fault:
            lines.append(f"cause: {self.fault}")
        return "\n".join(lines)

    def _failed_modes(self) -> str:
        """`` in forward mode`` (the modes of the failing rows) when rows name modes."""
        if not self._named():
            return ""
        failed = [m for m in self.modes if any(e.mode == m for e in self.failures)]
        return " in " + modes_in_words(failed)

    def __str__(self) -> str:
        return self.text(full=True)

    def _repr_html_(self) -> str:
        status = "passed" if self.ok else "failed"
        summary = (
            "<table><tr><th>result</th><th>orders</th><th>compared</th><th>mode</th></tr>"
            f"<tr><td><b>gradcheck {status}</b></td><td>1-{self.order}</td>"
            f"<td>{self.checked}</td><td>{self._mode()}</td></tr></table>"
        )
        warned = "".join(f"<p>warning: {escape_html(w)}</p>" for w in self.warnings)
        if self.ok:
            return summary + warned
        named = self._named()
        header = "".join(f"<th>{escape_html(c)}</th>" for c in _header(named))
        cells = "".join(
            "<tr>"
            + "".join(f"<td>{escape_html(c)}</td>" for c in _cells(e, self.names, named))
            + "</tr>"
            for e in self.failures
        )
        notes = "".join(f"<p>note: {escape_html(n)}</p>" for n in _notes(self.failures))
        fault = f"<p>cause: {escape_html(self.fault)}</p>" if self.fault else ""
        return f"{summary}<table><tr>{header}</tr>{cells}</table>{notes}{fault}"


_HEADER = (
    "order",
    "output",
    "with respect to",
    "analytic",
    "numerical",
    "|diff|",
    "allowed",
    "error bound",
    "step",
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


def _header(named: bool) -> tuple[str, ...]:
    return ("order", "mode", *_HEADER[1:]) if named else _HEADER


def _cells(e: Entry, names: Sequence[str], named: bool) -> tuple[str, ...]:
    cells = row(e, names)
    return (cells[0], mode_label(e.mode, e.order), *cells[1:]) if named else cells


def _notes(entries: Sequence[Entry]) -> list[str]:
    return sorted({e.note for e in entries if e.note})


def _maybe(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.3g}"


def row(e: Entry, names: Sequence[str]) -> tuple[str, ...]:
    """The cells of one entry's row of the table."""
    output = "v . out" if e.output < 0 else f"out[{e.output}]"
    wrt = ", ".join(names[i] for i in (*e.path, e.wrt))
    return (
        str(e.order),
        output,
        wrt,
        f"{e.analytic:.9g}",
        f"{e.numerical:.9g}",
        f"{e.diff:.3g}",
        f"{e.allowed:.3g}",
        _maybe(e.error),
        _maybe(e.step),
    )


def where(e: Entry, names: Sequence[str]) -> str:
    """Which derivative an entry is, in words: ``order 1, out[0] with respect to x[0]``.

    An entry of forward mode says so: ``order 2 (fwd over rev), out[0] ...``.
    """
    _, output, wrt, *_ = row(e, names)
    mode = f" ({mode_label(e.mode, e.order)})" if e.mode != "rev" else ""
    return f"order {e.order}{mode}, {output} with respect to {wrt}"


def _table(entries: Sequence[Entry], names: Sequence[str], named: bool = False) -> str:
    header = _header(named)
    rows = [header, *(_cells(e, names, named) for e in entries)]
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def escape_html(text: str) -> str:
    """Text made safe inside HTML (the ``html`` module costs an import).

    Example:
        >>> escape_html("<b>'x' & y</b>")
        '&lt;b&gt;&#x27;x&#x27; &amp; y&lt;/b&gt;'
    """
    for raw, safe in (
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ('"', "&quot;"),
        ("'", "&#x27;"),
    ):
        text = text.replace(raw, safe)
    return text
