"""One check: the analytic side against the numerical side, entry by entry.

:func:`run_check` runs one check for the public checkers
(:mod:`minigrad.checking.gradcheck`) under one
:class:`~minigrad.checking.run.settings.Settings`, handed down to every part of
it: it validates the inputs, compares the levels of orders 1 to n
(:mod:`minigrad.checking.run.levels`) in every mode asked for, and puts every
input back bit for bit.

How an entry is judged:

1. The evidence (:mod:`minigrad.checking.verdicts.examine`): the central difference
   at the nominal step ``eps * max(1, sqrt(|x|))`` first, which settles most
   entries within its round-off for the two evaluations every check makes;
   then extrapolation, sharpening and the Taylor test, only for the entries
   still open.
2. The verdict (:mod:`minigrad.checking.verdicts.scales`): *wrong*, *agrees* to k
   digits, or *undecided*; and the decision (:mod:`minigrad.checking.run.decide`):
   by default the verdict decides and the classic test (PyTorch's) judges
   what stays undecided; with ``atol``/``rtol`` the classic test decides,
   and cautions name the differences it forgave.
3. A check of many inputs (more than :data:`SHARPEN_INPUTS`) whose graph
   holds a rule outside the built-in table, where entries agree to fewer
   than :data:`~minigrad.checking.verdicts.scales.SHARP_DIGITS` digits, also
   compares the whole gradient along one balanced random direction,
   extrapolated (:mod:`minigrad.checking.run.direction`): a dozen evaluations,
   where sharpening every entry would cost a dozen per input.

Failures are then explained (:mod:`minigrad.checking.run.fault`): the op whose
own rule disagrees with its forward.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from minigrad.checking.numeric.steps import central
from minigrad.checking.run.decide import decide, entry_of
from minigrad.checking.run.direction import Direction
from minigrad.checking.run.engines import ForeignLevels, as_values, prepare_inputs, refuse_foreign
from minigrad.checking.run.fast import fast
from minigrad.checking.run.fault import faulty_node, kink_note, looks_kinked, one_sided_slopes
from minigrad.checking.run.levels import (
    DerivativeError,
    Func,
    Key,
    Levels,
    derivatives,
    forward_jacobian,
)
from minigrad.checking.run.locate import narrow
from minigrad.checking.run.report import Entry, Report, modes_in_words, where
from minigrad.checking.run.settings import Settings
from minigrad.checking.verdicts.examine import Examined, Holdings, examine, nominal_difference
from minigrad.checking.verdicts.scales import AGREES, SHARP_DIGITS, UNDECIDED, WRONG
from minigrad.core._validate import as_int
from minigrad.core.inputs import weights
from minigrad.core.value import Value
from minigrad.core.value import _lock as _engine_lock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.checking.run.engines import Inputs

__all__ = ["SHARPEN_INPUTS", "run_check"]


#: A mode's pass, as notes name it.
_PASSES = {"rev": "backward", "fwd": "forward mode (jvp)"}
#: Up to this many inputs, entries that agree to few digits are sharpened one
#: by one (a dozen evaluations each); beyond it, one random direction over
#: all the inputs is extrapolated instead.
SHARPEN_INPUTS = 3
#: A rate of change beyond this is taken as beyond float64's range.
_BEYOND = 1e300


class _Level:
    """What comparing one level found."""

    def __init__(self) -> None:
        self.compared = 0
        self.entries: list[Entry] = []
        self.failures: list[Entry] = []
        self.kinks: list[str] = []
        self.cautions: list[str] = []
        self.remarks: list[str] = []

    def add(self, entry: Entry, caution: str = "") -> None:
        self.entries.append(entry)
        if not entry.passed:
            self.failures.append(entry)
        if caution:
            self.cautions.append(caution)


class _Checker:
    """One check: the levels of ``func`` under one :class:`Settings`."""

    def __init__(self, levels: Levels, settings: Settings, *, localize: bool) -> None:
        self.levels = levels
        self.settings = settings
        self.localize = localize
        # A partial that failed on Values (create_graph) while it worked on floats.
        self.dropped: DerivativeError | None = None

    def run(self, order: int) -> Report:
        s = self.settings
        whole = _Level()
        for k in range(1, order + 1):
            # Below the top order, the derivative the next level is built from
            # (create_graph, partials applied to Values) must equal the one
            # checked here (partials applied to floats). Fault localisation's
            # single-rule checks always compare the two: they are small.
            both = (k < order or not self.localize) and not isinstance(self.levels, ForeignLevels)
            try:
                if s.fast_mode:
                    passed = fast(self.levels, k, s, both)
                    if passed is not None:
                        whole.compared += 1
                        whole.entries.extend(passed)
                        continue
                    whole.compared += 1
                found = self.compare(k, both)
            except DerivativeError as exc:
                beyond = self._overflows(k) if k > 1 else ""
                if beyond:
                    # Not the rule's fault: the derivatives are not floats here.
                    whole.compared += 1
                    whole.cautions.append(
                        f"order {k}: the order-{k} derivatives cannot be checked here: {beyond}, "
                        f"beyond the range of float64, and the analytic pass overflowed too "
                        f"({exc}); orders below {k} were checked"
                    )
                    return self._report(k - 1, whole, failed=False)
                note = f"the order-{k} derivatives could not be computed: {exc}"
                # Building a level is reverse mode's work, which forward over
                # reverse needs too: a check in forward mode alone owns it.
                mode = exc.mode if exc.mode in s.modes else s.modes[0]
                failed = _note_entry(k, note, mode, WRONG, s.atol)
                whole.compared += 1
                whole.add(failed)
                return self._report(k, whole, failed=True)
            whole.compared += found.compared
            whole.entries.extend(found.entries)
            whole.kinks.extend(found.kinks)
            whole.cautions.extend(found.cautions)
            whole.remarks.extend(found.remarks)
            if found.failures:
                whole.failures = sorted(found.failures, key=_severity)
                return self._report(k, whole, failed=True)
            if self.dropped is not None and k < order:
                return self._dropped(k, whole, self.dropped)
        return self._report(order, whole, failed=False)

    def _dropped(self, k: int, whole: _Level, exc: DerivativeError) -> Report:
        """Order ``k`` passed on floats, but a partial drops the graph: order ``k + 1``
        cannot be checked, and the report says which partial, not that a rule is wrong."""
        s = self.settings
        note = (
            f"order {k + 1} cannot be checked, and order {k} passed on floats: a partial "
            f"computes on floats only, which drops the graph the order-{k + 1} derivatives "
            f"are built from: {exc}"
        )
        mode = exc.mode if exc.mode in s.modes else s.modes[0]
        entry = _note_entry(k + 1, note, mode, UNDECIDED, s.atol)
        whole.compared += 1
        whole.add(entry)
        report = self._report(k + 1, whole, failed=True, localize=False)
        report.fault = note
        return report

    def _overflows(self, k: int) -> str:
        """Where level ``k``'s values change faster than float64 can hold, in words ("" if nowhere).

        A difference quotient over a step a millionth of the input: when it
        overflows, or passes 1e300, the next derivative is beyond the floats
        (``x / y`` at y = 1e-150 has the second derivative 6e450), and an
        analytic pass that overflowed there did what it could.
        """
        levels = self.levels
        worst, where = 0.0, -1
        for i, x in enumerate(levels.xs):
            at = x.data
            h = abs(at) * 1e-6 if at != 0.0 else self.settings.step(at)
            sides = central(levels.evaluator(k, i), at, h)
            if sides is None:
                continue
            up, down, half = sides
            for u, d in zip(up, down, strict=True):
                try:
                    q = (u - d) / (2.0 * half)
                except (ArithmeticError, ValueError):
                    q = math.inf
                if not abs(q) <= abs(worst):
                    worst, where = q, i
        if abs(worst) <= _BEYOND:
            return ""
        name = levels.names[where]
        return f"the order-{k - 1} derivative changes with {name} at a rate of {worst:.3g}"

    def _report(self, k: int, whole: _Level, *, failed: bool, localize: bool = True) -> Report:
        s = self.settings
        fault = ""
        narrowing: Value | None = None
        if not localize:
            pass
        elif failed and s.exact_step and all(e.verdict == AGREES for e in whole.failures):
            fault = (
                "every failing entry agrees with the extrapolated derivative: the central "
                f"difference at eps={s.eps:g} is off by its own truncation or round-off, not "
                "the rule; another eps, or the default verdicts (no atol, rtol), pass it"
            )
        elif failed and self.localize:
            # Each op's own rule is checked in the modes that disagreed here.
            modes = tuple(m for m in s.modes if any(e.mode == m for e in whole.failures))
            local = _Checker(self.levels, s.with_modes(modes or s.modes), localize=False)
            flipped = all(
                e.numerical != 0.0 and abs(e.analytic + e.numerical) <= 1e-6 * abs(e.numerical)
                for e in whole.failures
            )
            fault, node = faulty_node(self.levels.outputs(), k, local._check_rule, flipped=flipped)
            if s.modes != ("rev",):
                fault = f"in {modes_in_words(modes)}, {fault}"
            narrowing = node
        report = Report(
            not failed,
            k,
            whole.compared,
            whole.failures if failed else [],
            self.levels.names,
            fault,
            s.fast_mode,
            whole.kinks,
            whole.cautions,
            s.modes,
            whole.entries,
            (s.atol, s.rtol) if s.classic else None,
            whole.remarks,
        )
        if narrowing is not None and narrowing.rule is not None:
            rule, args = narrowing.rule, narrowing.args
            quick = _Checker(self.levels, s.narrowing(), localize=False)
            report.remark_later(lambda: narrow(rule, args, k, quick._check_rule))
        return report

    def _check_rule(self, func: Callable[..., Value], inputs: list[Value], k: int) -> Report:
        levels = Levels(func, inputs, None, self.settings.where)
        return _Checker(levels, self.settings, localize=False).run(k)

    def _analytic(
        self, mode: str, fs: list[Value], both: bool, twice: bool
    ) -> tuple[list[list[float]], list[list[float]], list[list[float]] | None]:
        """Level k's Jacobian in ``mode``: on floats, again (``twice``), on Values (``both``)."""
        if isinstance(self.levels, ForeignLevels):  # backward() on a fresh graph per pass
            analytic = self.levels.jacobian(fs)
            again = self.levels.jacobian(self.levels.outputs()) if twice else analytic
            return analytic, again, None
        xs = self.levels.xs
        if mode == "fwd":
            # One forward pass per input: column i is the jvp along e_i.
            analytic = forward_jacobian(fs, xs, False)
            again = forward_jacobian(fs, xs, False) if twice else analytic
            return analytic, again, self._lifted(lambda: forward_jacobian(fs, xs, True), both)
        analytic = [[g.data for g in derivatives(f, xs, False)] for f in fs]
        again = [[g.data for g in derivatives(f, xs, False)] for f in fs] if twice else analytic
        lifted = self._lifted(
            lambda: [[g.data for g in derivatives(f, xs, True)] for f in fs], both
        )
        return analytic, again, lifted

    def _lifted(
        self, compute: Callable[[], list[list[float]]], both: bool
    ) -> list[list[float]] | None:
        """The level's derivatives on Values (create_graph), or None where a partial
        cannot take Values: it computes on floats only and drops the graph, so
        this level is checked on floats and the next cannot be (``self.dropped``)."""
        if not both:
            return None
        try:
            return compute()
        except DerivativeError as exc:
            self.dropped = exc
            return None

    def compare(self, k: int, both: bool) -> _Level:
        """Compare every entry of level k in every mode (with ``both``, create_graph too).

        The numerical side is gathered once per input and shared by the modes.
        """
        levels, s = self.levels, self.settings
        xs = levels.xs
        fs, keys = levels.level(k)
        here = [f.data for f in fs]
        # The determinism check (nondet_tol) runs every pass twice, as
        # PyTorch does; through the built-in rules alone it cannot differ.
        twice = levels.survey(fs, fence=k == 1)
        sides = [(mode, *self._analytic(mode, fs, both, twice)) for mode in s.modes]
        holdings_of = Holdings(fs, xs)
        found = _Level()
        found.compared = len(keys) * len(xs) * len(sides)
        few = len(xs) <= SHARPEN_INPUTS
        for i, x in enumerate(xs):
            evaluate = levels.evaluator(k, i)
            at = x.data
            h = s.step(at)
            nominal = nominal_difference(evaluate, at, h, s.method == "richardson")
            notes: dict[tuple[int, int], str] = {}
            for m, (mode, analytic, again, lifted) in enumerate(sides):
                for r in range(len(keys)):
                    note = _broken(mode, analytic[r][i], again[r][i], lifted, r, i, s)
                    if note:
                        notes[(m, r)] = note
            pairs = [
                (m, r) for m in range(len(sides)) for r in range(len(keys)) if (m, r) not in notes
            ]
            column = [[analytic[r][i] for r in range(len(keys))] for _, analytic, _, _ in sides]
            examined = examine(
                evaluate,
                at,
                h,
                here,
                column,
                pairs,
                holdings_of,
                i,
                nominal,
                thorough=not s.classic,
                # Agreements of few digits are sharpened entry by entry in a check
                # of a few inputs, and at any number where the graph holds a rule
                # outside the built-in table (where a rule error can hide in them).
                sharpen=(few or twice) and s.sharpen,
                tight=s.classic and s.tight,
            )
            probe = (evaluate, at, here, h)
            for m, (mode, analytic, _, _) in enumerate(sides):
                for r, key in enumerate(keys):
                    a = analytic[r][i]
                    if (m, r) in notes:
                        n = nominal.values[r] if nominal is not None else math.nan
                        found.add(
                            Entry(
                                k,
                                *key,
                                i,
                                a,
                                n,
                                s.allowed(n),
                                False,
                                notes[(m, r)],
                                mode=mode,
                                verdict=WRONG,
                                reason=notes[(m, r)],
                            )
                        )
                        continue
                    entry, caution = decide(
                        s,
                        k,
                        key,
                        i,
                        mode,
                        a,
                        examined.findings[(m, r)],
                        examined,
                        m,
                        r,
                        probe,
                        levels.names,
                    )
                    found.add(entry, caution)
                    if m == 0 and entry.passed and entry.note:
                        # No derivative here, but the rule's choice passed (abs at 0).
                        found.kinks.append(f"{where(entry, levels.names)}: {entry.note}")
                    elif m == 0 and entry.passed and nominal is not None:
                        self._kink(found, k, key, i, r, probe, examined, entry.step)
        # The whole gradient along one direction, for a graph with a rule
        # outside the built-in table: the built-in rules are each checked
        # against their exact derivatives (tests/test_rules_sympy.py), and a
        # graph of them alone goes wrong only where a derivative is lost
        # between ops (func reads .data), which no entry's own difference misses.
        if not s.classic and not few and s.sharpen and not found.failures and twice:
            self._direction(found, k, fs, keys, here, sides)
        return found

    def _kink(
        self,
        found: _Level,
        k: int,
        key: Key,
        i: int,
        r: int,
        probe: tuple[Callable[[float], list[float] | None], float, list[float], float],
        examined: Examined,
        entry_step: float,
    ) -> None:
        """A passing entry sits on a kink (a kink is the function's, looked for in one mode)."""
        nominal = examined.nominal
        if nominal is None:
            return
        evaluate, at, here, h = probe
        # Where the agreement came from a smaller step (sin at 1e14, whose
        # nominal step spans periods), the kink is looked for there.
        step = entry_step if 0.0 < entry_step < 0.5 * h else h
        if step == h:
            left = (here[r] - nominal.down[r]) / nominal.left
            right = (nominal.up[r] - here[r]) / nominal.right
        else:
            slopes = one_sided_slopes(evaluate, at, here, step)
            if slopes is None:
                return
            left, right = slopes[0][r], slopes[1][r]
        if looks_kinked(left, right):
            note = kink_note(evaluate, at, here, r, step, k)
            if note:
                entry = Entry(k, *key, i, math.nan, math.nan, 0.0, True)
                found.kinks.append(f"{where(entry, self.levels.names)}: {note}")

    def _direction(
        self,
        found: _Level,
        k: int,
        fs: list[Value],
        keys: list[Key],
        here: list[float],
        sides: list[tuple[str, list[list[float]], list[list[float]], list[list[float]] | None]],
    ) -> None:
        """The whole gradient along one balanced direction, where entries agree to few digits."""
        blunt = [e for e in found.entries if e.verdict == AGREES and e.digits < SHARP_DIGITS]
        if not blunt:
            return
        s, xs = self.settings, self.levels.xs
        import random  # only fast mode and the direction need it; it costs an import

        rng = random.Random(s.seed * 1_000_003 + k)
        w = [rng.gauss(0.0, 1.0) for _ in fs]
        grads = [
            [math.fsum(wr * analytic[r][i] for r, wr in enumerate(w)) for i in range(len(xs))]
            for _, analytic, _, _ in sides
        ]
        direction = Direction(self.levels, k, here, w, grads[0], rng, s.step)
        slopes = [direction.analytic(g) for g in grads]
        findings = direction.judge(slopes, sharp=True)
        key = keys[0] if len(keys) == 1 else (-1, ())
        for (mode, *_), slope, f in zip(sides, slopes, findings, strict=False):
            entry = entry_of(s, k, key, -1, mode, slope, f, f.verdict != WRONG)
            found.compared += 1
            if f.verdict == WRONG:
                found.add(entry)
            else:
                found.entries.append(entry)
                found.remarks.append(
                    f"order {k}{'' if mode == 'rev' else f' ({mode})'}: the whole gradient, "
                    f"{f.reason}"
                )


def _note_entry(k: int, note: str, mode: str, verdict: str, atol: float) -> Entry:
    """An entry of order ``k`` that no number decides: a derivative that could not be built."""
    return Entry(
        k, 0, (), 0, math.nan, math.nan, atol, False, note, mode=mode, verdict=verdict, reason=note
    )


def _severity(e: Entry) -> tuple[bool, float]:
    """Wrong entries first, then by how many tolerances apart (as PyTorch's ``allclose``)."""
    return e.verdict != WRONG, -e.diff / max(e.allowed, 1e-300)


def _broken(
    mode: str,
    a: float,
    again: float,
    lifted: list[list[float]] | None,
    r: int,
    i: int,
    s: Settings,
) -> str:
    """What is wrong with the analytic side itself, in words ("" when nothing)."""
    if not math.isfinite(a):
        return "a derivative is not finite (NaN or inf never passes)"
    if abs(again - a) > s.nondet_tol:
        return (
            f"{_PASSES[mode]} is not deterministic: two passes gave {a!r} and {again!r} "
            f"(nondet_tol={s.nondet_tol})"
        )
    if lifted is not None and not s.close(lifted[r][i], a):
        return (
            f"a partial gives {a!r} on floats ({_PASSES[mode]}) but {lifted[r][i]!r} on Values "
            "(create_graph): it must compute the same on both"
        )
    return ""


# Argument checking: the package's one wording (minigrad.core._validate).


#: The highest order a check takes. Level k holds (inputs ** (k - 1)) functions
#: per output, each a graph larger than the last: a two-input check of order 8
#: takes about a second, and each order above multiplies that by about 5.
MAX_ORDER = 8
_MAX_ORDER_WHY = (
    f": a check of order k compares about inputs ** k derivatives, each a graph larger "
    f"than the last, so the time grows about fivefold per order above {MAX_ORDER}"
)


def _weights(grad_outputs: object, where: str) -> list[float | Value] | None:
    if grad_outputs is None:
        return None
    if isinstance(grad_outputs, Value | int | float):
        grad_outputs = [grad_outputs]  # one output's weight, as PyTorch accepts
    # The count is checked against the outputs where they are made (Levels.level).
    return weights(grad_outputs, None, f"{where}: grad_outputs")


def run_check(
    func: Func,
    inputs: Inputs,
    order: int,
    grad_outputs: Sequence[float | Value] | None,
    settings: Settings,
) -> Report:
    """Validate, check, and put every input back bit for bit."""
    where = settings.where
    # Numbers become fresh Values; a foreign engine's nodes are checked by
    # its own backward() (minigrad.checking.run.engines).
    xs, engine = prepare_inputs(inputs, where)
    as_int(order, f"{where}: order", least=1, most=MAX_ORDER, why=_MAX_ORDER_WHY)
    if not callable(func):
        raise TypeError(f"{where}: func must be callable, got {type(func).__name__} {func!r}")
    levels: Levels
    if engine is None:
        levels = Levels(func, as_values(xs), _weights(grad_outputs, where), where)
    else:
        refuse_foreign(engine, order, settings)
        weights = _weights(grad_outputs, where)
        levels = ForeignLevels(func, xs, weights, where, engine, settings.nondet_tol > 0)
    # A check moves its inputs' .data: another thread's check, backward or grad
    # on a graph that shares them must not see them moved, so the whole check
    # holds the engine's (reentrant) lock, as backward does for its pass.
    with _engine_lock:
        saved = [(x, x.data, x.grad) for x in levels.xs]
        try:
            return _Checker(levels, settings, localize=engine is None).run(order)
        finally:
            # Bit-exact: the very float objects the inputs held are put back.
            for x, data, g in saved:
                x.data = data
                x.grad = g
