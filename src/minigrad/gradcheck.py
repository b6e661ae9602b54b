"""Derivative checks: gradcheck, gradgradcheck and check_grads of any order.

One machinery serves every order. Level 1 is ``func``'s outputs; level k + 1
is every analytic derivative of every level-k function with respect to every
input, built with ``grad(..., create_graph=True)``. Checking order n compares,
for levels 1 to n, the analytic Jacobian of the level (reverse mode) with a
central difference of the level's values (perturbing ``.data`` by +-eps). So a
second-order check also checks the first derivative, and it sees the whole
Hessian of each output, not only its column sums.

Why eps = 1e-6 by default: a central difference has truncation error of order
eps**2 * |f'''| and round-off error of order 1e-16 * |f| / eps (float64). Their
sum is smallest near eps = 1e-16 ** (1/3) ~ 5e-6; 1e-6 keeps both below 1e-10
for functions of moderate size, far inside the default tolerances (see
:func:`eps_curve` and docs/checking.md).

Only the public engine API is used: ``Value``, ``grad``, ``toposort``, ``Rule``.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence

from minigrad.engine import Value, grad, toposort
from minigrad.ops import TABLE, Rule

__all__ = [
    "Entry",
    "GradcheckError",
    "GradcheckWarning",
    "Report",
    "check",
    "check_grads",
    "eps_curve",
    "gradcheck",
    "gradgradcheck",
]

#: What a checked function may return: a Value or a sequence of Values.
Func = Callable[..., "Value | Sequence[Value]"]

# One-sided slopes are compared at eps and at these fractions of it.
_STEPS = (1.0, 0.1, 0.01)
# How many distinct op nodes fault localisation examines at most.
_MAX_LOCALIZE = 500
# How kink notes begin (passing entries keep only these).
_KINK_NOTES = ("not differentiable at this point", "a kink lies within eps")
# Rows of a report shown outside pytest before "... and N more".
_SHORT_ROWS = 8
# The built-in rules with the partials they were made with: pure functions of
# their floats, so a reverse pass through them alone is deterministic.
_PURE_PARTIALS = {rule: rule.partials for rule in TABLE}


class Entry:
    """One compared derivative: d^order out[output] / d inputs[path..., input].

    Attributes:
        order: The derivative's order (1 for the Jacobian).
        output: Index of ``func``'s output; -1 for the ``grad_outputs``
            weighted sum of the outputs.
        path: Inputs already differentiated by, outermost first (order - 1).
        input: Index of the input of this last derivative.
        analytic: From reverse mode.
        numerical: From the central difference.
        allowed: The tolerance ``atol + rtol * |numerical|``.
        passed: Whether the entry is within tolerance (never when not finite).
        note: A diagnosis when it failed (kink, noise, truncation), else "".
    """

    __slots__ = (
        "allowed",
        "analytic",
        "input",
        "note",
        "numerical",
        "order",
        "output",
        "passed",
        "path",
    )

    def __init__(
        self,
        order: int,
        output: int,
        path: tuple[int, ...],
        input_: int,
        analytic: float,
        numerical: float,
        allowed: float,
        passed: bool,
        note: str = "",
    ) -> None:
        self.order = order
        self.output = output
        self.path = path
        self.input = input_
        self.analytic = analytic
        self.numerical = numerical
        self.allowed = allowed
        self.passed = passed
        self.note = note

    @property
    def diff(self) -> float:
        """|analytic - numerical| (inf when either is not finite)."""
        d = abs(self.analytic - self.numerical)
        return d if math.isfinite(d) else math.inf

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _ENTRY_FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entry):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _ENTRY_FIELDS)
        return f"Entry({fields})"


_ENTRY_FIELDS = (
    "order",
    "output",
    "path",
    "input",
    "analytic",
    "numerical",
    "allowed",
    "passed",
    "note",
)


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
            passes, and :func:`check_grads` warns with GradcheckWarning).
    """

    __slots__ = ("checked", "failures", "fast", "fault", "kinks", "names", "ok", "order")

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
    ) -> None:
        self.ok = ok
        self.order = order
        self.checked = checked
        self.failures = failures if failures is not None else []
        self.names = names if names is not None else []
        self.fault = fault
        self.fast = fast
        self.kinks = kinks if kinks is not None else []

    def __repr__(self) -> str:
        return (
            f"Report(ok={self.ok!r}, order={self.order!r}, checked={self.checked!r}, "
            f"failures={self.failures!r}, fault={self.fault!r}, kinks={self.kinks!r})"
        )

    def text(self, *, full: bool = True) -> str:
        """The report as plain text; ``full=False`` keeps the worst rows only."""
        mode = (
            "fast mode, then exhaustive"
            if self.fast and not self.ok
            else ("fast mode" if self.fast else "exhaustive")
        )
        if self.ok:
            passed = f"gradcheck passed: orders 1-{self.order}, {self.checked} comparisons ({mode})"
            return "\n".join([passed, *(f"warning: {k}" for k in self.kinks)])
        worst = self.failures[0]
        lines = [
            f"gradcheck failed at order {worst.order}: {len(self.failures)} of "
            f"{self.checked} entries differ ({mode}); worst first:",
            _table(self.failures if full else self.failures[:_SHORT_ROWS], self.names),
        ]
        if not full and len(self.failures) > _SHORT_ROWS:
            lines.append(f"... and {len(self.failures) - _SHORT_ROWS} more")
        notes = {e.note for e in self.failures if e.note}
        lines.extend(f"note: {n}" for n in sorted(notes))
        if self.fault:
            lines.append(f"cause: {self.fault}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text(full=True)

    def _repr_html_(self) -> str:
        mode = "fast mode" if self.fast else "exhaustive"
        status = "passed" if self.ok else "failed"
        summary = (
            f"<table><tr><th>result</th><th>orders</th><th>compared</th><th>mode</th></tr>"
            f"<tr><td><b>gradcheck {status}</b></td><td>1-{self.order}</td>"
            f"<td>{self.checked}</td><td>{mode}</td></tr></table>"
        )
        kinks = "".join(f"<p>warning: {_escape(k)}</p>" for k in self.kinks)
        if self.ok:
            return summary + kinks
        cells = "".join(
            "<tr>" + "".join(f"<td>{_escape(c)}</td>" for c in _row(e, self.names)) + "</tr>"
            for e in self.failures
        )
        header = "".join(f"<th>{_escape(c)}</th>" for c in _HEADER)
        notes = "".join(
            f"<p>note: {_escape(n)}</p>" for n in sorted({e.note for e in self.failures} - {""})
        )
        fault = f"<p>cause: {_escape(self.fault)}</p>" if self.fault else ""
        return f"{summary}<table><tr>{header}</tr>{cells}</table>{notes}{fault}"


_HEADER = ("order", "output", "with respect to", "analytic", "numerical", "|diff|", "allowed")


def _escape(text: str) -> str:
    """Text made safe inside HTML (the ``html`` module costs an import)."""
    for raw, safe in (
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ('"', "&quot;"),
        ("'", "&#x27;"),
    ):
        text = text.replace(raw, safe)
    return text


def _row(e: Entry, names: Sequence[str]) -> tuple[str, ...]:
    output = "v . out" if e.output < 0 else f"out[{e.output}]"
    wrt = ", ".join(names[i] for i in (*e.path, e.input))
    return (
        str(e.order),
        output,
        wrt,
        f"{e.analytic:.9g}",
        f"{e.numerical:.9g}",
        f"{e.diff:.3g}",
        f"{e.allowed:.3g}",
    )


def _table(entries: Sequence[Entry], names: Sequence[str]) -> str:
    rows = [_HEADER, *(_row(e, names) for e in entries)]
    widths = [max(len(r[c]) for r in rows) for c in range(len(_HEADER))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


class GradcheckWarning(UserWarning):
    """A check passed at a point where the function has a kink."""


class GradcheckError(AssertionError):
    """A derivative check failed; ``.report`` holds every failing entry.

    The message is the report: short in a terminal, complete under pytest.
    """

    def __init__(self, report: Report) -> None:
        super().__init__(report.text(full="PYTEST_CURRENT_TEST" in os.environ))
        self.report = report

    def _repr_html_(self) -> str:
        return self.report._repr_html_()


def _close(analytic: float, numerical: float, atol: float, rtol: float) -> bool:
    if not (math.isfinite(analytic) and math.isfinite(numerical)):
        return False
    return abs(analytic - numerical) <= atol + rtol * abs(numerical)


class _DerivativeError(Exception):
    """Building a derivative raised (a partial gave NaN, a domain error, ...)."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(str(exc))
        self.exc = exc


def _derivatives(f: Value, xs: list[Value], create_graph: bool) -> tuple[Value, ...]:
    try:
        return grad(f, xs, create_graph=create_graph)
    except (ArithmeticError, ValueError) as exc:
        raise _DerivativeError(exc) from exc


class _Checker:
    """The state of one check: the inputs, their saved state and the settings."""

    def __init__(
        self,
        func: Func,
        inputs: list[Value],
        weights: list[float | Value] | None,
        *,
        eps: float,
        atol: float,
        rtol: float,
        nondet_tol: float,
        fast_mode: bool,
        method: str,
        seed: int,
        localize: bool,
    ) -> None:
        self.func = func
        self.inputs = inputs
        self.weights = weights
        # Value weights are inputs of every level above the first.
        extra = [w for w in weights or () if isinstance(w, Value)]
        self.xs = inputs + extra
        self.names = [_name("x", i, x) for i, x in enumerate(inputs)] + [
            _name("v", i, w) for i, w in enumerate(weights or ()) if isinstance(w, Value)
        ]
        self.eps = eps
        self.atol = atol
        self.rtol = rtol
        self.nondet_tol = nondet_tol
        self.fast_mode = fast_mode
        self.method = method
        self.seed = seed
        self.localize = localize

    # Evaluating the levels.

    def outputs(self) -> list[Value]:
        return self._as_outputs(self.func(*self.inputs))

    def _as_outputs(self, out: object) -> list[Value]:
        if isinstance(out, Value):
            return [out]
        if isinstance(out, tuple | list) and out and all(isinstance(y, Value) for y in out):
            return list(out)
        shown = f"{type(out).__name__} {out!r}"
        raise TypeError(f"gradcheck: func must return a Value or a tuple of Values, got {shown}")

    def level(self, k: int) -> tuple[list[Value], list[tuple[int, tuple[int, ...]]]]:
        """The level-k functions at the inputs' current data, and their keys."""
        ys = self.outputs()
        fs = ys
        keys: list[tuple[int, tuple[int, ...]]] = [(j, ()) for j in range(len(ys))]
        if k == 1:
            return fs, keys
        if self.weights is not None:
            if len(self.weights) != len(ys):
                raise ValueError(
                    f"gradgradcheck: grad_outputs has {len(self.weights)} entries "
                    f"for {len(ys)} output(s)"
                )
            total = self.weights[0] * ys[0]
            for w, y in zip(self.weights[1:], ys[1:], strict=True):
                total = total + w * y
            fs, keys = [total], [(-1, ())]
        for _ in range(k - 1):
            new: list[Value] = []
            new_keys: list[tuple[int, tuple[int, ...]]] = []
            for f, (out, path) in zip(fs, keys, strict=True):
                new.extend(_derivatives(f, self.xs, True))
                new_keys.extend((out, (*path, i)) for i in range(len(self.xs)))
            fs, keys = new, new_keys
        return fs, keys

    def values(self, k: int) -> list[float]:
        if k > 1:
            return [f.data for f in self.level(k)[0]]
        # The 2N evaluations of a first-order check come through here: the
        # common case (one output) takes no further call.
        out = self.func(*self.inputs)
        if type(out) is Value:
            return [out.data]
        return [f.data for f in self._as_outputs(out)]

    def shifted(self, k: int, step: Sequence[float]) -> list[float]:
        """Level-k values with every input moved by ``step`` (then put back)."""
        saved = [x.data for x in self.xs]
        try:
            for x, orig, s in zip(self.xs, saved, step, strict=True):
                if s:
                    x.data = orig + s
            return self.values(k)
        finally:
            for x, orig in zip(self.xs, saved, strict=True):
                x.data = orig

    # The check.

    def run(self, order: int) -> Report:
        if self.weights is not None and len(self.weights) != len(self.outputs()):
            raise ValueError(
                f"check: grad_outputs has {len(self.weights)} entries "
                f"for {len(self.outputs())} output(s)"
            )
        checked = 0
        kinks: list[str] = []
        for k in range(1, order + 1):
            # Below the top order, the derivative the next level is built from
            # (create_graph, partials applied to Values) must equal the one
            # checked here (partials applied to floats). Fault localisation's
            # single-rule checks always compare the two: they are small.
            both = k < order or not self.localize
            try:
                if self.fast_mode:
                    checked += 1
                    if self.fast(k, both):
                        continue
                compared, failures, jumps = self.exhaustive(k, both)
            except _DerivativeError as exc:
                note = f"the order-{k} derivatives could not be computed: {exc}"
                failed = Entry(k, 0, (), 0, math.nan, math.nan, self.atol, False, note)
                fault = self.find_fault(k) if self.localize else ""
                return Report(
                    False, k, checked + 1, [failed], self.names, fault, self.fast_mode, kinks
                )
            checked += compared
            if failures:
                failures = self.diagnose(k, failures)
                failures.sort(key=lambda e: -e.diff / max(e.allowed, 1e-300))
                fault = self.find_fault(k) if self.localize else ""
                return Report(False, k, checked, failures, self.names, fault, self.fast_mode, kinks)
            # A passing entry can sit on a kink too (abs at 0: the central
            # difference averages -1 and 1 to the 0 the rule picks). Say so.
            for e in self.diagnose(k, jumps):
                if e.note.startswith(_KINK_NOTES):
                    kinks.append(f"{_where(e, self.names)}: {e.note}")
        return Report(True, order, checked, [], self.names, "", self.fast_mode, kinks)

    def exhaustive(self, k: int, both: bool) -> tuple[int, list[Entry], list[Entry]]:
        """Compare every entry of level k: how many, the failing ones, and the
        passing ones whose one-sided slopes jump (a kink may lie there).

        With ``both``, the create_graph derivative is compared with the
        float one as well.
        """
        fs, keys = self.level(k)
        here = [f.data for f in fs]
        analytic = [[g.data for g in grad(f, self.xs)] for f in fs]
        # The determinism check (nondet_tol) runs every reverse pass twice, as
        # PyTorch does; through built-in rules alone it cannot differ.
        again = [[g.data for g in grad(f, self.xs)] for f in fs] if _impure(fs) else analytic
        if both:
            lifted = [[g.data for g in _derivatives(f, self.xs, True)] for f in fs]
        numeric: list[list[float]] = []
        sides: list[tuple[list[float], list[float], float]] = []
        for i in range(len(self.xs)):
            up, down, h = self.sides(k, i, self.eps)
            column = [(a - b) / (2 * h) for a, b in zip(up, down, strict=True)]
            if self.method == "richardson":
                # Differences at eps and eps/2 cancel the eps**2 error term.
                up2, down2, h2 = self.sides(k, i, self.eps / 2)
                fine = [(a - b) / (2 * h2) for a, b in zip(up2, down2, strict=True)]
                column = [(4.0 * f - c) / 3.0 for c, f in zip(column, fine, strict=True)]
            numeric.append(column)
            sides.append((up, down, h))
        failures: list[Entry] = []
        jumps: list[Entry] = []
        atol, rtol = self.atol, self.rtol
        for r, (out, path) in enumerate(keys):
            for i, (up, down, h) in enumerate(sides):
                a, n = analytic[r][i], numeric[i][r]
                ok = _close(a, n, atol, rtol)
                note = ""
                if abs(again[r][i] - a) > self.nondet_tol:
                    ok = False
                    note = (
                        f"backward is not deterministic: two passes gave {a!r} and "
                        f"{again[r][i]!r} (nondet_tol={self.nondet_tol})"
                    )
                elif both and not _close(lifted[r][i], a, atol, rtol):
                    ok = False
                    note = (
                        f"a partial gives {a!r} on floats (backward) but {lifted[r][i]!r} "
                        "on Values (create_graph): it must compute the same on both"
                    )
                if ok:
                    left, right = (here[r] - down[r]) / h, (up[r] - here[r]) / h
                    if abs(left - right) <= 1e-2 * (1.0 + max(abs(left), abs(right))):
                        continue  # passed, and no sign of a kink: nothing to keep
                entry = Entry(k, out, path, i, a, n, atol + rtol * abs(n), ok, note)
                (jumps if ok else failures).append(entry)
        return len(keys) * len(sides), failures, jumps

    def sides(self, k: int, i: int, h: float) -> tuple[list[float], list[float], float]:
        """Level-k values with input i moved by +h and by -h, and the half-step taken."""
        x = self.xs[i]
        orig = x.data
        try:
            x.data = orig + h
            up = self.values(k)
            x.data = orig - h
            down = self.values(k)
        finally:
            x.data = orig
        # The step actually taken, after rounding x + h and x - h.
        return up, down, ((orig + h) - (orig - h)) / 2

    def fast(self, k: int, both: bool) -> bool:
        """One random direction u over the inputs, one weighting w of the level."""
        import random  # only fast mode needs it; it costs an import

        rng = random.Random(self.seed * 1_000_003 + k)
        u = _unit([rng.gauss(0.0, 1.0) for _ in self.xs])
        fs, _ = self.level(k)
        w = _unit([rng.gauss(0.0, 1.0) for _ in fs])
        total = w[0] * fs[0]
        for wf, f in zip(w[1:], fs[1:], strict=True):
            total = total + wf * f
        analytic = math.fsum(ui * g.data for ui, g in zip(u, grad(total, self.xs), strict=True))
        if both:
            lifted = _derivatives(total, self.xs, True)
            projected = math.fsum(ui * g.data for ui, g in zip(u, lifted, strict=True))
            if not _close(projected, analytic, self.atol, self.rtol):
                return False
        h = self.eps
        up = self.shifted(k, [h * ui for ui in u])
        down = self.shifted(k, [-h * ui for ui in u])
        numeric = math.fsum(wf * (a - b) for wf, a, b in zip(w, up, down, strict=True)) / (2 * h)
        return _close(analytic, numeric, self.atol, self.rtol)

    # Explaining a failure.

    def diagnose(self, k: int, failures: list[Entry]) -> list[Entry]:
        """Tell kinks, truncation and noise from a wrong rule, per failing entry."""
        if not failures:
            return []
        here = self.values(k)
        probes: dict[int, list[tuple[list[float], list[float], float]]] = {}
        out: list[Entry] = []
        rows = {key: r for r, key in enumerate(self.level(k)[1])}
        for e in failures:
            if e.note or not (math.isfinite(e.analytic) and math.isfinite(e.numerical)):
                note = e.note or "a derivative is not finite (NaN or inf never passes)"
                out.append(_with_note(e, note))
                continue
            if e.input not in probes:
                probes[e.input] = [self.sides(k, e.input, self.eps * s) for s in _STEPS]
            r = rows[(e.output, e.path)]
            jump = _jump(here[r], [(up[r], down[r]) for up, down, _ in probes[e.input]], k)
            if jump:
                out.append(_with_note(e, jump))
                continue
            left = [(here[r] - down[r]) / h for up, down, h in probes[e.input]]
            right = [(up[r] - here[r]) / h for up, down, h in probes[e.input]]
            middle = [(up[r] - down[r]) / (2 * h) for up, down, h in probes[e.input]]
            out.append(_with_note(e, self.explain(e, left, right, middle)))
        return out

    def explain(self, e: Entry, left: list[float], right: list[float], middle: list[float]) -> str:
        def same(a: float, b: float, tol: float = 1e-3) -> bool:
            return abs(a - b) <= tol * (1.0 + max(abs(a), abs(b)))

        # Steady: each one-sided slope has settled at the two smallest steps.
        steady = same(left[1], left[2]) and same(right[1], right[2])
        # Settled: the slopes at eps already equal those at eps/100.
        settled = same(left[0], left[2]) and same(right[0], right[2])
        jump = not same(left[2], right[2], 1e-2)
        if steady and settled and jump:
            return (
                f"not differentiable at this point (a kink): left slope {left[2]:.6g}, "
                f"right slope {right[2]:.6g}; the rule's value {e.analytic:.6g} is a choice "
                f"there, and the central difference {e.numerical:.6g} averages the slopes"
            )
        if steady and not settled:
            return (
                f"a kink lies within eps={self.eps:g} of this point: one-sided slopes change "
                f"with the step (left {left[0]:.6g} at eps, {left[2]:.6g} at eps/100; right "
                f"{right[0]:.6g} at eps, {right[2]:.6g} at eps/100); move the point away "
                "from the kink or use a smaller eps"
            )
        if _close(e.analytic, middle[1], self.atol, self.rtol) and _close(
            e.analytic, middle[2], self.atol, self.rtol
        ):
            return (
                f"the central difference at eps={self.eps:g} is off (truncation), but at "
                f"eps/10 it gives {middle[1]:.9g}, which agrees: the rule looks right; "
                "use a smaller eps"
            )
        if not same(middle[0], middle[2]):
            return (
                f"the numerical derivative is unstable here (central differences "
                f"{middle[0]:.6g}, {middle[1]:.6g}, {middle[2]:.6g} at eps, eps/10, eps/100): "
                "the function may be noisy or badly scaled; the verdict is uncertain"
            )
        return ""

    def find_fault(self, k: int) -> str:
        """Name the first op (in evaluation order) whose own rule fails order k."""
        seen: set[tuple[int, tuple[float, ...]]] = set()
        for node in reversed(toposort(self.outputs())):
            rule = node.rule
            if rule is None:
                continue
            args = node.args
            key = (id(rule), tuple(a.data if isinstance(a, Value) else a for a in args))
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > _MAX_LOCALIZE:
                return f"not found among the first {_MAX_LOCALIZE} ops"
            report = _check_rule(rule, args, self, k)
            if report is not None and not report.ok:
                return _describe(node, rule, args, report)
        return (
            "every op's own rule agrees with a numerical derivative of its forward at its "
            "inputs, so the ops are combined wrongly: does func read .data, call float() on "
            "a Value, or use a value computed outside minigrad?"
        )


def _impure(fs: list[Value]) -> bool:
    """Whether a graph holds a rule other than the built-in ones as they were made."""
    for node in toposort(fs):
        rule = node.rule
        if rule is not None and _PURE_PARTIALS.get(rule) is not rule.partials:
            return True
    return False


def _check_rule(
    rule: Rule, args: tuple[Value | float, ...], outer: _Checker, k: int
) -> Report | None:
    """Check one rule up to order k at the node's recorded arguments."""
    places = [i for i, a in enumerate(args) if isinstance(a, Value)]
    if not places:
        return None
    fixed = [a.data if isinstance(a, Value) else a for a in args]

    def local(*vs: Value) -> Value:
        full: list[Value | float] = list(fixed)
        for i, v in zip(places, vs, strict=True):
            full[i] = v
        return rule(*full)

    leaves = [Value(fixed[i]) for i in places]
    checker = _Checker(
        local,
        leaves,
        None,
        eps=outer.eps,
        atol=outer.atol,
        rtol=outer.rtol,
        nondet_tol=outer.nondet_tol,
        fast_mode=False,
        method=outer.method,
        seed=outer.seed,
        localize=False,
    )
    return checker.run(k)


def _describe(node: Value, rule: Rule, args: tuple[Value | float, ...], report: Report) -> str:
    shown = ", ".join(f"{a.data if isinstance(a, Value) else a!r}" for a in args)
    label = f" (label {node.label!r})" if node.label else ""
    places = [i for i, a in enumerate(args) if isinstance(a, Value)]
    worst = report.failures[0]
    if worst.note:
        return f"op {rule.name!r}{label} at ({shown}): {worst.note}"
    wrt = ", ".join(f"arg {places[i]}" for i in (*worst.path, worst.input))
    text = (
        f"op {rule.name!r}{label} at ({shown}): its order-{worst.order} derivative with "
        f"respect to {wrt} is {worst.analytic:.9g} by its rule but {worst.numerical:.9g} "
        "by a central difference of its forward"
    )
    return text


def _jump(here: float, sides: Sequence[tuple[float, float]], k: int) -> str:
    """A note when the function jumps at this point (a discontinuity), else "".

    For a smooth function f(x + s) - f(x) shrinks in proportion to s; across
    a jump it stays near the size of the jump however small s gets.
    """
    floor = 1e-9 * (1.0 + abs(here))
    for side, index in (("right", 0), ("left", 1)):
        coarse = sides[0][index] - here
        fine = sides[-1][index] - here
        if abs(coarse) > floor and abs(fine) > 0.5 * abs(coarse):
            what = "the function" if k == 1 else f"the order-{k - 1} derivative"
            return (
                f"not differentiable at this point: {what} jumps here (by about {fine:.6g} "
                f"on the {side}, even at eps/100), so no derivative exists; the numerical "
                "value only measures the jump divided by eps"
            )
    return ""


def _where(e: Entry, names: Sequence[str]) -> str:
    _, output, wrt, *_ = _row(e, names)
    return f"order {e.order}, {output} with respect to {wrt}"


def _with_note(e: Entry, note: str) -> Entry:
    return Entry(
        e.order, e.output, e.path, e.input, e.analytic, e.numerical, e.allowed, e.passed, note
    )


def _unit(v: list[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


def _name(prefix: str, i: int, x: float | Value) -> str:
    label = x.label if isinstance(x, Value) else ""
    return f"{prefix}[{i}] {label!r}" if label else f"{prefix}[{i}]"


# Argument checking shared by every entry point.


def _inputs(inputs: object, where: str) -> list[Value]:
    if isinstance(inputs, Value):
        return [inputs]
    if isinstance(inputs, str) or not isinstance(inputs, Sequence):
        raise TypeError(
            f"{where}: inputs must be a sequence of Values, got {type(inputs).__name__} {inputs!r}"
        )
    xs = list(inputs)
    if not xs:
        raise ValueError(f"{where}: inputs is empty; give at least one Value")
    first: dict[int, int] = {}  # id -> the first index of that Value
    for i, x in enumerate(xs):
        if not isinstance(x, Value):
            raise TypeError(f"{where}: inputs[{i}] must be a Value, got {type(x).__name__} {x!r}")
        if not math.isfinite(x.data):
            raise ValueError(f"{where}: inputs[{i}] is not finite: {x.data!r}")
        j = first.setdefault(id(x), i)
        if j != i:
            raise ValueError(
                f"{where}: inputs[{i}] is the same Value as inputs[{j}]; "
                "perturbing one would move both"
            )
    return xs


def _positive(value: object, name: str, where: str, *, allow_zero: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{where}: {name} must be a float, got {type(value).__name__} {value!r}")
    x = float(value)
    if not math.isfinite(x) or x < 0.0 or (x == 0.0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{where}: {name} must be finite and {bound}, got {value!r}")
    return x


def _weights(grad_outputs: object, where: str) -> list[float | Value] | None:
    if grad_outputs is None:
        return None
    if isinstance(grad_outputs, Value | int | float):
        grad_outputs = [grad_outputs]
    if isinstance(grad_outputs, str) or not isinstance(grad_outputs, Sequence):
        raise TypeError(
            f"{where}: grad_outputs must be a sequence of floats or Values, "
            f"got {type(grad_outputs).__name__}"
        )
    out: list[float | Value] = []
    for j, w in enumerate(grad_outputs):
        if isinstance(w, Value):
            out.append(w)
        elif isinstance(w, int | float) and not isinstance(w, bool) and math.isfinite(w):
            out.append(float(w))
        else:
            raise TypeError(
                f"{where}: grad_outputs[{j}] must be a finite float or a Value, "
                f"got {type(w).__name__} {w!r}"
            )
    if not out:
        raise ValueError(f"{where}: grad_outputs is empty")
    return out


def check(
    func: Func,
    inputs: Sequence[Value],
    *,
    order: int = 1,
    grad_outputs: Sequence[float | Value] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    seed: int = 0,
) -> Report:
    """Check every derivative of ``func`` up to ``order``; return the report.

    The engine behind :func:`gradcheck`, :func:`gradgradcheck` and
    :func:`check_grads`: it never raises on a mismatch, and the report shows
    itself as a table (HTML in a notebook). Inputs are restored bit for bit.

    Args:
        func: Takes the inputs, returns a Value or a tuple of Values.
        inputs: The Values to perturb (each exactly once).
        order: Check derivatives of orders 1 to ``order``.
        grad_outputs: Weights v: above order 1, the derivatives of
            sum_j v_j * out_j are checked; Value weights are checked as inputs.
        eps: The perturbation of ``.data``.
        atol: Absolute tolerance.
        rtol: Relative tolerance (to the numerical value).
        nondet_tol: How far two reverse passes over one graph may differ
            (the second runs only when the graph holds a rule that is not
            one of ``ops.TABLE`` as built: those are pure).
        fast_mode: Compare one random directional derivative per order first
            (2 evaluations instead of 2N); only if it fails, compare every entry.
        method: ``"central"`` or ``"richardson"`` (extrapolated from eps and
            eps/2: more accurate, twice the evaluations).
        seed: Seed of fast mode's random directions.

    Returns:
        The :class:`Report`.

    Example:
        >>> from minigrad import Value
        >>> x, y = Value(0.5), Value(2.0)
        >>> check(lambda a, b: (a * b).sin(), [x, y], order=2).ok
        True
    """
    where = "check"
    xs = _inputs(inputs, where)
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"{where}: order must be an int >= 1, got {order!r}")
    if method not in ("central", "richardson"):
        raise ValueError(f"{where}: method must be 'central' or 'richardson', got {method!r}")
    if not callable(func):
        raise TypeError(f"{where}: func must be callable, got {type(func).__name__} {func!r}")
    weights = _weights(grad_outputs, where)
    checker = _Checker(
        func,
        xs,
        weights,
        eps=_positive(eps, "eps", where, allow_zero=False),
        atol=_positive(atol, "atol", where, allow_zero=True),
        rtol=_positive(rtol, "rtol", where, allow_zero=True),
        nondet_tol=_positive(nondet_tol, "nondet_tol", where, allow_zero=True),
        fast_mode=bool(fast_mode),
        method=method,
        seed=seed,
        localize=True,
    )
    saved = [(x, x.data, x.grad) for x in checker.xs]
    try:
        return checker.run(order)
    finally:
        # Bit-exact: the very float objects the inputs held are put back.
        for x, data, g in saved:
            x.data = data
            x.grad = g


def _verdict(report: Report, raise_exception: bool) -> bool:
    """True, or GradcheckError/False; warns of kinks the passing check sat on.

    Called straight from each public checker, so stacklevel 3 is its caller.
    """
    __tracebackhide__ = True
    if report.ok:
        for kink in report.kinks:
            warnings.warn(f"gradcheck passed, but {kink}", GradcheckWarning, stacklevel=3)
        return True
    if raise_exception:
        raise GradcheckError(report)
    return False


def check_grads(
    func: Func,
    inputs: Sequence[Value],
    *,
    order: int = 1,
    grad_outputs: Sequence[float | Value] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    seed: int = 0,
) -> bool:
    """Check every derivative of ``func`` up to ``order`` against central differences.

    Raises :class:`GradcheckError` on a mismatch (or returns False when
    ``raise_exception`` is False). Arguments as in :func:`check`.

    Example:
        >>> from minigrad import Value
        >>> check_grads(lambda x: x.tanh() * x, [Value(0.3)], order=3)
        True
    """
    __tracebackhide__ = True
    report = check(
        func,
        inputs,
        order=order,
        grad_outputs=grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        nondet_tol=nondet_tol,
        fast_mode=fast_mode,
        method=method,
        seed=seed,
    )
    return _verdict(report, raise_exception)


def gradcheck(
    func: Func,
    inputs: Sequence[Value],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
) -> bool:
    """Check first derivatives: every output against every input.

    Example:
        >>> from minigrad import Value
        >>> gradcheck(lambda a, b: a * b.exp(), [Value(1.5), Value(-0.5)])
        True
    """
    __tracebackhide__ = True
    report = check(
        func,
        inputs,
        order=1,
        eps=eps,
        atol=atol,
        rtol=rtol,
        nondet_tol=nondet_tol,
        fast_mode=fast_mode,
        method=method,
    )
    return _verdict(report, raise_exception)


def gradgradcheck(
    func: Func,
    inputs: Sequence[Value],
    grad_outputs: Sequence[float | Value] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
) -> bool:
    """Check first and second derivatives (the whole Hessian of each output).

    With ``grad_outputs`` v, the second order checked is that of
    sum_j v_j * out_j, and Value weights are checked as inputs too.

    Example:
        >>> from minigrad import Value
        >>> gradgradcheck(lambda x, y: (x - y).exp(), [Value(0.2), Value(0.7)])
        True
    """
    __tracebackhide__ = True
    report = check(
        func,
        inputs,
        order=2,
        grad_outputs=grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        nondet_tol=nondet_tol,
        fast_mode=fast_mode,
        method=method,
    )
    return _verdict(report, raise_exception)


def eps_curve(
    func: Callable[[Value], Value], x: float, epsilons: Sequence[float] | None = None
) -> list[tuple[float, float]]:
    """The error of the central difference against the analytic derivative, per eps.

    Plotted on log axes it is U-shaped: round-off (about 1e-16 * |f| / eps)
    on the left, truncation (about eps**2 * |f'''| / 6) on the right.

    Args:
        func: A one-input function of a Value.
        x: The point.
        epsilons: The steps; by default 1e-1 down to 1e-13, two per decade.

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
    out = []
    for h in steps:
        h = _positive(h, "epsilons[i]", "eps_curve", allow_zero=False)
        up, down = func(Value(x + h)).data, func(Value(x - h)).data
        out.append((h, abs((up - down) / ((x + h) - (x - h)) - exact)))
    return out
