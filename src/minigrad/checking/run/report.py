"""What a derivative check found: one :class:`Entry` per compared derivative, one :class:`Report`.

A report is plain data plus two views of it: ``str(report)`` is a text table
(short in a terminal, complete under pytest) and ``report._repr_html_()`` is the
table a notebook shows. Every entry carries its verdict (``"wrong"``,
``"agrees"``, ``"subgradient"``, ``"undecided"``), the digits of agreement and the reason in
words (:func:`minigrad.checking.verdicts.decide.decide`).

Example:
    >>> e = Entry(order=1, output=0, path=(), wrt=0, analytic=-1.0, numerical=1.0,
    ...           allowed=0.001, passed=False, error=1e-10, step=1e-3, verdict=WRONG,
    ...           reason="wrong: 2e10 bounds apart")
    >>> r = Report(ok=False, order=1, checked=1, failures=[e], names=["x[0]"], entries=[e])
    >>> print(r)  # doctest: +NORMALIZE_WHITESPACE
    gradcheck failed at order 1: 1 of 1 entries differ (exhaustive);
        worst: x[0]: expected (numerical) 1, got (analytic) -1, abs diff 2, rel diff 2
    order  output  with respect to  analytic  numerical  abs diff  rel diff
        error bound  step   digits  verdict
    1      out[0]  x[0]             -1        1          2         2
        1e-10        0.001  0       wrong
    x[0]: wrong: 2e10 bounds apart
    verdicts: 1 wrong
    random weights and directions drawn with seed=0
"""

from __future__ import annotations

import math
from collections.abc import Callable

from minigrad.checking.run.table import (
    apart,
    cells,
    header_of,
    modes_in_words,
    notes,
    orders,
    reasons,
    row,
    table,
    where,
)
from minigrad.checking.verdicts.decide import AGREES, SUBGRADIENT, UNDECIDED, WRONG, Cause, Verdict

__all__ = ["Entry", "Report"]

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
    "digits",
    "verdict",
    "reason",
)


class Entry:
    """One compared derivative: d^order out[output] / d inputs[path..., wrt].

    Attributes:
        order: The derivative's order (1 for the Jacobian).
        output: Index of ``func``'s output; -1 for the ``grad_outputs``
            weighted sum of the outputs.
        path: Inputs already differentiated by, outermost first (order - 1).
        wrt: Index of the input of this last derivative ("with respect to").
        analytic: From reverse mode (or forward mode, see ``mode``).
        numerical: The numerical derivative the verdict rests on: the central
            difference at the nominal step, or an extrapolated estimate.
        allowed: What the difference may be: the caller's tolerance
            ``atol + rtol * |numerical|`` with ``atol``/``rtol``, else the
            error bound.
        passed: Whether the check let the entry pass (never when not finite).
        note: What else the check found, in words (a kink, a jump, a partial
            that failed), or "".
        error: The error bound of ``numerical``: NaN when there is no
            numerical value, infinite when the entry is undecided because its
            numbers bound nothing (estimates that disagree, a kink, a jump).
        step: The step ``numerical`` came from (NaN when none).
        mode: How ``analytic`` was computed: ``"rev"`` (reverse mode) or
            ``"fwd"`` (forward mode; above order 1, forward over reverse:
            the jvp of the reverse-mode derivatives of the order below).
        digits: Significant digits to which the numbers prove ``analytic``
            right (0 when they prove nothing, or it is wrong in the first).
        verdict: What the numbers prove (a :class:`Verdict`): ``"wrong"`` (the difference is
            beyond the error bound), ``"agrees"`` (within it, to ``digits``
            digits), ``"subgradient"`` (at a kink, between the one-sided
            slopes) or ``"undecided"`` (passes, with a warning).
        reason: The verdict in words.
        cause: What ``note`` is about, as data (:class:`Cause`: a kink, a
            jump, a derivative that could not be computed, ...); code reads
            this, never the note's words.

    An entry is built by keyword: ``Entry(order=1, output=0, ...)``.
    """

    __slots__ = (*_FIELDS, "cause")

    def __init__(
        self,
        *,
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
        digits: int = 0,
        verdict: Verdict,
        reason: str = "",
        cause: Cause = Cause.NONE,
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
        self.digits = digits
        self.verdict = verdict
        self.reason = reason
        self.cause = cause

    @property
    def diff(self) -> float:
        """|analytic - numerical| (inf when either is not finite)."""
        d = abs(self.analytic - self.numerical)
        return d if math.isfinite(d) else math.inf

    @property
    def rel(self) -> float:
        """|analytic - numerical| / |numerical|: lab 03's rel diff (0 when both are 0)."""
        d = self.diff
        if d == 0.0:
            return 0.0
        return d / abs(self.numerical) if self.numerical and math.isfinite(d) else math.inf

    def replace(
        self,
        *,
        numerical: float | None = None,
        allowed: float | None = None,
        passed: bool | None = None,
        note: str | None = None,
        error: float | None = None,
        step: float | None = None,
        digits: int | None = None,
        verdict: Verdict | None = None,
        reason: str | None = None,
    ) -> Entry:
        """A copy with the given fields changed (Entries are treated as values)."""
        return Entry(
            order=self.order,
            output=self.output,
            path=self.path,
            wrt=self.wrt,
            analytic=self.analytic,
            numerical=self.numerical if numerical is None else numerical,
            allowed=self.allowed if allowed is None else allowed,
            passed=self.passed if passed is None else passed,
            note=self.note if note is None else note,
            error=self.error if error is None else error,
            step=self.step if step is None else step,
            mode=self.mode,
            digits=self.digits if digits is None else digits,
            verdict=self.verdict if verdict is None else verdict,
            reason=self.reason if reason is None else reason,
            cause=self.cause,
        )

    def _fields(self) -> tuple[object, ...]:
        return (*(getattr(self, name) for name in _FIELDS), self.cause)

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
    """The outcome of a check: every compared entry with its verdict, and the failures.

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
        fell_back: Whether fast mode sent an order on to every entry (where it
            sent some inputs' entries on, they are among ``entries``).
        kinks: Passing entries that sit on a kink, in words (such a check
            passes, and the checkers warn with GradcheckWarning).
        cautions: Other passing entries worth a warning, in words: a
            difference the numbers prove but the caller's tolerance forgave,
            or a numerical derivative too uncertain to confirm the analytic
            one.
        modes: The modes the analytic derivatives were computed in
            (``"rev"``, ``"fwd"``); a report of any mode but reverse alone
            names the mode of every row.
        entries: Every compared entry, passing or not, in the order compared,
            each with its evidence, verdict, digits and reason.
        tolerances: ``(atol, rtol)`` when the caller passed either (the
            classic test decided), else None (the error bound decided).
        remarks: What the check found beyond the entries, in words: where a
            wrong rule is wrong (its simplest failing point and intervals:
            worked out the first time they are read, since that takes a few
            dozen checks of the rule).
        seed: The seed the random weights of the reverse passes and fast
            mode's directions were drawn with (a failing report names it).

    A report is built by keyword: ``Report(ok=True, order=1, checked=2, ...)``.
    """

    __slots__ = (
        "_later",
        "_remarks",
        "cautions",
        "checked",
        "entries",
        "failures",
        "fast",
        "fault",
        "fell_back",
        "kinks",
        "modes",
        "names",
        "ok",
        "order",
        "seed",
        "tolerances",
    )

    def __init__(
        self,
        *,
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
        entries: list[Entry] | None = None,
        tolerances: tuple[float, float] | None = None,
        remarks: list[str] | None = None,
        seed: int = 0,
        fell_back: bool = False,
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
        self.entries = entries if entries is not None else list(self.failures)
        self.tolerances = tolerances
        self.seed = seed
        self.fell_back = fell_back
        self._remarks = remarks if remarks is not None else []
        self._later: Callable[[], list[str]] | None = None

    @property
    def remarks(self) -> list[str]:
        """What the check found beyond the entries (see the class)."""
        if self._later is not None:
            later, self._later = self._later, None
            self._remarks.extend(later())
        return self._remarks

    def remark_later(self, work: Callable[[], list[str]]) -> None:
        """Add the lines ``work()`` gives to the remarks when they are first read."""
        self._later = work

    def __bool__(self) -> bool:
        """``report.ok``: ``assert minigrad.check(f, xs)`` fails on a wrong rule.

        Example:
            >>> bool(Report(ok=False, order=1, checked=0))
            False
        """
        return self.ok

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

    def verdicts(self) -> dict[str, int]:
        """How many entries got each verdict.

        Example:
            >>> Report(ok=True, order=1, checked=0).verdicts()
            {'wrong': 0, 'agrees': 0, 'subgradient': 0, 'undecided': 0}
        """
        counts = {str(v): 0 for v in Verdict}
        for e in self.entries:
            counts[str(e.verdict)] = counts.get(str(e.verdict), 0) + 1
        return counts

    def _mode(self) -> str:
        rest = len({e.wrt for e in self.entries if e.wrt >= 0})
        if not self.fast:
            how = "exhaustive"
        elif self.fell_back or rest >= len(self.names) > 0:
            how = "fast mode, then exhaustive"
        else:
            how = (
                f"fast mode, then {rest} of {len(self.names)} inputs entry by entry"
                if rest
                else "fast mode"
            )
        if self._named():
            how += "; " + modes_in_words(self.modes)
        return how

    def _named(self) -> bool:
        """Whether rows and headlines name their mode: any mode but reverse alone."""
        return tuple(self.modes) != ("rev",)

    def tally(self) -> str:
        """The verdicts in one line: ``verdicts: 3 agree (9 to 12 digits), ...``; "" if none."""
        if not self.entries:
            return ""
        parts = []
        agreed = [e.digits for e in self.entries if e.verdict == AGREES]
        if agreed:
            low, high = min(agreed), max(agreed)
            span = f"{low} digits" if low == high else f"{low} to {high} digits"
            parts.append(f"{len(agreed)} agree ({span})")
        wrong = [e.passed for e in self.entries if e.verdict == WRONG]
        if wrong:
            forgiven = sum(wrong)
            parts.append(
                f"{len(wrong)} wrong"
                + (f" ({forgiven} forgiven by the tolerance)" * (forgiven > 0))
            )
        kinked = [e for e in self.entries if e.verdict == SUBGRADIENT]
        if kinked:
            parts.append(f"{len(kinked)} subgradient{'s' * (len(kinked) != 1)} (at a kink)")
        undecided = [e for e in self.entries if e.verdict == UNDECIDED]
        if undecided:
            parts.append(f"{len(undecided)} undecided (warned)")
        if self.tolerances is not None:
            atol, rtol = self.tolerances
            how = f"; the classic test decided (atol={atol:g}, rtol={rtol:g})"
        else:
            how = ""
        return "verdicts: " + ", ".join(parts) + how

    def text(self, *, full: bool = True) -> str:
        """The report as plain text; ``full=False`` keeps the worst rows only."""
        tally = self.tally()
        if self.ok:
            passed = (
                f"gradcheck passed: {orders(self.order)}, "
                f"{self.checked} comparison{'s' * (self.checked != 1)} ({self._mode()})"
            )
            return "\n".join(
                [passed, *([tally] if tally else []), *self.remarks]
                + [f"warning: {w}" for w in self.warnings]
            )
        if not self.failures:
            return "\n".join(
                [f"gradcheck failed at order {self.order}: {self.fault or 'no entry failed'}"]
                + ([tally] if tally else [])
            )
        worst = self.failures[0]
        shown = self.failures if full else self.failures[:_SHORT_ROWS]
        lines = [
            f"gradcheck failed at order {worst.order}{self._failed_modes()}: "
            f"{len(self.failures)} of {len(self.entries) or self.checked} entries differ "
            f"({self._mode()}); "
            f"worst: {self._lab_words(worst)}",
            table(shown, self.names, self._named(), self._classic()),
        ]
        if not full and len(self.failures) > _SHORT_ROWS:
            lines.append(f"... and {len(self.failures) - _SHORT_ROWS} more")
        lines.extend(reasons(shown, self.names))
        lines.extend(f"note: {n}" for n in notes(self.failures))
        if self.fault:
            lines.append(f"cause: {self.fault}")
        lines.extend(self.remarks)
        if tally:
            lines.append(tally)
        lines.append(f"random weights and directions drawn with seed={self.seed}")
        return "\n".join(lines)

    def _lab_words(self, e: Entry) -> str:
        """An entry as lab 03 prints a failure: input, expected, got, abs diff, rel diff."""
        one = e.order == 1 and e.output == 0 and not self._named() and e.wrt >= 0
        label = row(e, self.names)[2] if one else where(e, self.names)
        if math.isnan(e.numerical):  # an analytic side broken by itself: no number weighed
            return f"{label}: {e.reason}"
        got, expected = apart(e.analytic, e.numerical)
        return (
            f"{label}: expected (numerical) {expected}, got (analytic) "
            f"{got}, abs diff {e.diff:.3g}, rel diff {e.rel:.3g}"
        )

    def _classic(self) -> bool:
        return self.tolerances is not None

    def _failed_modes(self) -> str:
        """`` in forward mode`` (the modes of the failing rows) when rows name modes."""
        if not self._named():
            return ""
        failed = [m for m in self.modes if any(e.mode == m for e in self.failures)]
        return " in " + modes_in_words(failed)

    def __str__(self) -> str:
        return self.text(full=True)

    def _repr_html_(self) -> str:
        from html import escape as escape_html  # an import paid only where HTML is shown

        status = "passed" if self.ok else "failed"
        plural = "order" if self.order == 1 else "orders"
        summary = (
            f"<table><tr><th>result</th><th>{plural}</th><th>compared</th><th>mode</th></tr>"
            f"<tr><td><b>gradcheck {status}</b></td><td>{orders(self.order).split()[1]}</td>"
            f"<td>{self.checked}</td><td>{self._mode()}</td></tr></table>"
        )
        tally = self.tally()
        summary += f"<p>{escape_html(tally)}</p>" if tally else ""
        summary += "".join(f"<p>{escape_html(r)}</p>" for r in self.remarks)
        warned = "".join(f"<p>warning: {escape_html(w)}</p>" for w in self.warnings)
        if self.ok:
            return summary + warned
        named, classic = self._named(), self._classic()
        header = "".join(
            f"<th>{escape_html(c)}</th>" for c in (*header_of(named, classic), "reason")
        )
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{escape_html(c)}</td>"
                for c in (*cells(e, self.names, named, classic), e.reason)
            )
            + "</tr>"
            for e in self.failures
        )
        noted = "".join(f"<p>note: {escape_html(n)}</p>" for n in notes(self.failures))
        fault = f"<p>cause: {escape_html(self.fault)}</p>" if self.fault else ""
        return f"{summary}<table><tr>{header}</tr>{body}</table>{noted}{fault}"
