"""Comparing one level: every entry's analytic value against the estimator, one decision each.

For each input of level ``k`` (:mod:`minigrad.checking.run.levels`) the
estimator (:mod:`minigrad.checking.numeric.estimate`) makes its pair at the
nominal step for every value of the level at once; each entry is decided
(:func:`~minigrad.checking.verdicts.decide.decide`) on the pair where it is
settled, and on the ladder where it is not or where the pair would not let
it agree (a difference must be local before it convicts). An analytic side
that is broken by itself (NaN or inf, not deterministic, floats and Values
that differ, a closure that ignores ``out.grad`` or sets ``.grad``) fails as
such, named.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from minigrad.checking.numeric.estimate import MODEL_ROUNDOFF, Estimate, Point, Unresolved, pair
from minigrad.checking.numeric.ladder import ladder, widen
from minigrad.checking.numeric.rounding import GraphRoundoff
from minigrad.checking.run.allowances import (
    Walk,
    backward_share,
    closures_shown,
    foreign_noise,
    forward_share,
    moved_size,
    reached,
    stepped,
)
from minigrad.checking.run.determinism import deterministic
from minigrad.checking.run.engines import ForeignLevels, keeps
from minigrad.checking.run.levels import DerivativeError, Key, Levels, derivatives, forward_jacobian
from minigrad.checking.run.report import Entry
from minigrad.checking.run.settings import Settings
from minigrad.checking.run.table import mode_label, where
from minigrad.checking.run.tape import cancelled
from minigrad.checking.run.turns import bend_scale, turns_of
from minigrad.checking.verdicts.decide import (
    AGREES,
    SUBGRADIENT,
    UNDECIDED,
    WRONG,
    Broken,
    Cause,
    Finding,
    decide,
)
from minigrad.core import closure
from minigrad.core.value import Value, toposort

__all__ = ["UNDECIDED_WARNING", "Comparison", "LevelFindings", "broken", "entry_of"]


#: The ``wrt`` of an entry that is a closure's ``_backward`` checked on its own.
CLOSURE_STEP = -2

#: What the warning for an entry the numbers could not decide says (after
#: where it is and the analytic value): such an entry passes, never silently.
UNDECIDED_WARNING = "could be neither confirmed nor refuted"


#: A mode's pass, as notes name it.
_PASSES = {"rev": "backward", "fwd": "forward mode (jvp)"}


class LevelFindings:
    """What comparing one level found."""

    def __init__(self) -> None:
        # Entries compared (or fast-mode directions), every entry, the failing ones,
        # and the lines the report gathers from passing ones.
        self.compared = 0
        self.entries: list[Entry] = []
        self.failures: list[Entry] = []
        self.kinks: list[str] = []
        self.cautions: list[str] = []
        self.remarks: list[str] = []

    def add(self, entry: Entry, names: list[str], forgiven: bool = False) -> None:
        """Add an entry; a failing one is a failure, a passing one may be warned of."""
        self.entries.append(entry)
        if not entry.passed:
            self.failures.append(entry)
        elif entry.verdict == SUBGRADIENT:
            kink = f"{where(entry, names)}: {entry.reason}"
            if entry.mode == "fwd":  # a kink is the function's: named once, as reverse mode's
                kink = kink.replace(f" ({mode_label('fwd', entry.order)})", "")
            if kink not in self.kinks:
                self.kinks.append(kink)
        elif entry.verdict == UNDECIDED:
            self.cautions.append(
                f"{where(entry, names)}: the analytic {entry.analytic:.9g} {UNDECIDED_WARNING}: "
                f"{entry.reason}"
            )
        elif forgiven:
            self.cautions.append(
                f"{where(entry, names)}: {entry.reason} (without atol and rtol the check fails it)"
            )

    def extend(self, other: LevelFindings) -> None:
        self.compared += other.compared
        self.entries.extend(other.entries)
        self.failures.extend(other.failures)
        self.kinks.extend(other.kinks)
        self.cautions.extend(other.cautions)
        self.remarks.extend(other.remarks)


def entry_of(
    k: int, key: Key, wrt: int, mode: str, analytic: float, f: Finding, s: Settings
) -> Entry:
    """The entry for a finding: its numbers, verdict and reason are the finding's."""
    out, path = key
    tolerated = s.tolerance
    allowed = tolerated.allowed(f.numerical) if tolerated is not None else f.error
    return Entry(
        order=k,
        output=out,
        path=path,
        wrt=wrt,
        analytic=analytic,
        numerical=f.numerical,
        allowed=allowed,
        passed=f.verdict != WRONG,
        note=f.note,
        error=f.error,
        step=f.step,
        mode=mode,
        digits=f.digits,
        verdict=f.verdict,
        reason=f.reason,
        cause=f.cause,
    )


def broken(k: int, key: Key, wrt: int, mode: str, words: str, cause: Cause, s: Settings) -> Entry:
    """A failing entry whose analytic side fails by itself: no number is weighed."""
    return entry_of(k, key, wrt, mode, math.nan, decide(math.nan, 0.0, Broken(words, cause)), s)


class Comparison:
    """The levels of one check compared one at a time, under one :class:`Settings`."""

    def __init__(self, levels: Levels, settings: Settings) -> None:
        self.levels = levels
        self.settings = settings
        # A partial that failed on Values (create_graph) while it worked on floats.
        self.dropped: DerivativeError | closure.ClosureOpError | None = None
        # Per level below the one compared: its graph's round-off (the next level's noise).
        self.below: dict[int, GraphRoundoff] = {}

    def _inherited(self, k: int, here: list[float]) -> list[float]:
        """The round-off level k's values hold as level k - 1's derivatives beyond what their
        graph reads: what the analytic side below carries outside its relative model
        (:meth:`GraphRoundoff.carried`; of the weighted outputs at level 2 if weighted)."""
        levels, n, w = self.levels, len(self.levels.xs), self.levels.weights
        if k == 1:
            return [0.0] * len(here)
        if k - 1 not in self.below:
            self.below[k - 1] = GraphRoundoff(levels.level(k - 1)[0], levels.xs)
        below, tol = self.below[k - 1], self.settings.nondet_tol
        if k == 2 and w is not None:
            sizes = [abs(wj.data if isinstance(wj, Value) else wj) for wj in w]
            return [tol + math.fsum(a * below.carried(j, i) for j, a in enumerate(sizes))
                    for i in range(len(here))]  # fmt: skip
        return [tol + below.carried(r // n, r % n) for r in range(len(here))]

    def _analytic(
        self, k: int, mode: str, fs: list[Value], both: bool, twice: bool
    ) -> tuple[list[list[float]], list[list[float]], list[list[float]] | None]:
        """Level k's Jacobian in ``mode``: on floats, again (``twice``), on Values (``both``)."""
        levels, s = self.levels, self.settings
        if isinstance(levels, ForeignLevels):  # backward() on a fresh graph per pass
            w = s.weights(len(fs))
            analytic = levels.jacobian(fs, w)
            again = levels.jacobian(levels.outputs(), w) if twice else analytic
            return analytic, again, levels.jacobian(levels.outputs(), w, analytic)
        xs = levels.xs
        if mode == "fwd":
            analytic = forward_jacobian(fs, xs, False)
            again = forward_jacobian(fs, xs, False) if twice else analytic
            return analytic, again, self._lifted(lambda: forward_jacobian(fs, xs, True), both)
        if both and not twice:
            # Through minigrad's own rules alone (each partial written once, for
            # floats and Values alike), the next level's values are this level's
            # Jacobian: a second pass on floats would compute the same numbers.
            same = levels.lifted(k)
            if same is not None:
                return same, same, same
        w = s.weights(len(fs))
        rows = [
            [g.data for g in derivatives(f, xs, False, wr)] for f, wr in zip(fs, w, strict=True)
        ]
        again = rows
        if twice:
            again = [
                [g.data for g in derivatives(f, xs, False, wr)] for f, wr in zip(fs, w, strict=True)
            ]
        lifted = self._lifted(
            lambda: levels.lifted(k) or [[g.data for g in derivatives(f, xs, True)] for f in fs],
            both,
        )
        return rows, again, lifted

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
        except closure.ClosureOpError as exc:
            self.dropped = exc  # raised by name above order 1, once this level passes
        except Exception as exc:  # a partial written for floats may raise anything on Values
            self.dropped = DerivativeError(exc)
        return None

    def compare(self, k: int, both: bool, only: set[int] | None = None) -> LevelFindings:
        """Compare every entry of level k in every mode (with ``both``, create_graph too),
        by the inputs ``only`` where given."""
        levels, s = self.levels, self.settings
        names = levels.names
        xs = levels.xs
        fs, keys = levels.level(k)
        here = [float(f.data) for f in fs]  # (a foreign engine's may be a Fraction)
        found = LevelFindings()
        # The determinism check runs every pass twice (PyTorch's); built-in rules cannot differ.
        twice = levels.survey(fs, fence=k == 1)
        if k == 1 and not isinstance(levels, ForeignLevels):
            self._closures(found, fs, keys)
        sides = [(mode, *self._analytic(k, mode, fs, both, twice)) for mode in s.modes]
        foreign = isinstance(levels, ForeignLevels)
        seen = closures_shown(levels, fs) if k == 1 and not foreign and closure.made else {}
        graph = GraphRoundoff(fs, xs, seen) if not foreign else None
        if graph is not None:
            self.below[k] = graph  # (the next level's noise: _inherited)
        # A graph not all of func (x * Value(sin(3 * x.data)): tape.shows) is held as hidden.
        shown = graph if graph is not None and levels.whole(k) else None
        held = self._inherited(k, here) if graph is not None else []
        noise = [
            max(graph.noise(r) if shown else MODEL_ROUNDOFF * abs(here[r]), held[r])
            for r in range(len(fs))
        ] if graph else foreign_noise(levels, here) if foreign else None  # fmt: skip
        cells = [shown.cells(r) for r in range(len(fs))] if shown is not None else None
        turns = turns_of(fs, xs, seen) if shown is not None else None
        found.compared += len(keys) * len(xs if only is None else only) * len(sides)
        opaque = levels.opaque_rows(fs) if shown is not None else [True] * len(fs)
        naught = [v == 0.0 and not foreign and cancelled(f) for v, f in zip(here, fs, strict=True)]
        made: dict[int, tuple[Value, ...] | None] = {}  # derivative graphs (forward_share)
        walks: dict[int, Walk | None] = {}  # reverse walks (backward_share)
        for i, x in enumerate(xs):
            if only is not None and i not in only:
                continue
            at = x.data
            # A foreign engine's ops are held as hidden ops are (a micrograd tanh beside 1e16).
            widest = [row[i] for row in turns] if turns is not None else bend_scale(at)
            mine, shifts = (noise, {}) if shown is None else reached(shown, noise, fs, xs, i, made)
            point = Point(levels.evaluator(k, i), at, here, s.step(at), mine, opaque, widest)
            point.fenced = bool(getattr(levels, "fences", None))
            point.cells, point.cancelled = cells, naught
            ests: dict[int, Estimate | Unresolved] = dict(pair(point, range(len(keys))))
            zero = point.sizes()
            exact = s.exact(point) if s.exact_step else None
            if s.exact_step and exact is None:  # PyTorch's would be NaN: said, not hidden
                found.cautions.append(
                    f"{names[i]}: the central difference at eps={s.eps:g} leaves the domain at "
                    f"{at:.17g}; its entries were decided from smaller steps, with atol and rtol"
                )

            def judge(
                m: int,
                r: int,
                est: Estimate | Unresolved,
                i: int = i,
                exact: list[float] | None = exact,
                zero: list[float] = zero,
                point: Point = point,
                x: Value = x,
                shifts: dict[int, float] = shifts,
            ) -> Finding:
                if r in shifts and isinstance(est, Estimate):  # the slope's own shift: see reached
                    est = Estimate(est.value, est.error + shifts[r], est.step,
                                   est.roundoff + shifts[r], est.settled)  # fmt: skip
                if (foreign or shown) and isinstance(est, Estimate):
                    est = stepped(levels, k, point, r, i, est)  # (a foreign engine's: its pass)
                a = sides[m][1][r][i]
                a_err = graph.analytic(r, i, a) if graph is not None else foreign_roundoff(a)
                # (where a_err is under est.error / 16, it moves the bound by 6% at most)
                if graph is not None and isinstance(est, Estimate) and a_err > est.error / 16.0:
                    a_err = min(a_err, backward_share(fs[r], xs, i, walks, sides[m][0]))
                a_err += s.nondet_tol  # the passes may differ by that much, on the user's word
                c = exact[r] if exact is not None else None
                size = zero[r]
                if isinstance(est, Estimate) and max(abs(a), abs(est.value)) <= (
                    abs(a - est.value) + est.error + a_err
                ):  # counted against the function's size: the size where it looked,
                    size = point.sizes(max(est.step, s.eps))[r]
                    if shown is not None:
                        size = moved_size(fs[r], x, size)
                    elif abs(a) > a_err:  # a foreign engine's graph cannot be read: only
                        size = 0.0  # a slope of 0 is counted against the function's size
                f = decide(a, a_err, est, s.tolerance, zero=size, classic=c)
                if f.verdict == WRONG and s.tolerance is None and graph is not None:
                    # Before convicting: the share of the forward's own round-off.
                    share = forward_share(fs[r], xs, i, made)
                    if share:
                        f = decide(a, a_err + share, est, None, zero=size)
                if c is not None:
                    f.step = s.eps  # the classic test's difference is PyTorch's, at eps
                return f

            # Each row's findings in every mode, made once per estimate.
            findings: dict[int, list[Finding]] = {}

            def sharp(
                r: int,
                i: int = i,
                ests: dict[int, Estimate | Unresolved] = ests,
                findings: dict[int, list[Finding]] = findings,
            ) -> bool:
                fs = findings[r] = [judge(m, r, ests[r]) for m in range(len(sides))]
                return all(_sharp(f, r, i, graph) for f in fs)

            # The ladder for a value whose pair is unsettled or short of SHARP_DIGITS' agreement.
            rows = range(len(keys))
            settled = [r for r in rows if getattr(ests.get(r), "settled", False)]
            unsure = {r for r in rows if r not in settled or not sharp(r)}

            # An agreement short of WIDE_DIGITS may hide a rule error in the pair's round-off:
            # a larger step rounds less (widen), and stands where the pair confirms it. One
            # short of SHARP_DIGITS too, where that is the graph's round-off (a small slope of
            # a large function), not the pair's fourth difference (structure: a bump of 1e-8;
            # shape: log(cosh(x)) at 3.6e-12 shows x**4): that stands at WIDE_DIGITS only,
            # else the ladder decides (and widening's estimate stands where they agree).
            def quiet(
                r: int, p: Point = point, ests: dict[int, Estimate | Unresolved] = ests
            ) -> bool:
                _, fine, measured = p.paired[r]
                est = ests[r]
                return isinstance(est, Estimate) and measured / fine.half <= est.roundoff

            short = [
                r
                for r in settled
                if all(f.verdict == AGREES for f in findings[r])
                and (quiet(r) if r in unsure else min(f.digits for f in findings[r]) < WIDE_DIGITS)
            ]
            loud = {r for r in short if r not in unsure and not quiet(r)}
            wider: dict[int, Estimate] = widen(point, ests, short) if short else {}
            ests.update(wider)
            for r in short:
                need = WIDE_DIGITS if r in unsure or r in loud else SHARP_DIGITS
                if r in wider and sharp(r) and min(f.digits for f in findings[r]) >= need:
                    unsure.discard(r)
                else:
                    unsure.add(r)
            # Round-off assumed, not read (a closure, a foreign graph): 20, else 2 times farther.
            for times in (20.0, 2.0):
                far = [r for r in unsure & wider.keys() if shown is None or (opaque[r] and seen)]
                for r, got in widen(point, ests, far, times).items() if far else ():
                    if abs(got.value - wider[r].value) <= got.error + wider[r].error:
                        ests[r] = got
                        if sharp(r) and min(f.digits for f in findings[r]) >= WIDE_DIGITS:
                            unsure.discard(r)
            if unsure:
                ests.update(ladder(point, sorted(unsure)))
                for r in loud & unsure & wider.keys():
                    w, e = wider[r], ests[r]
                    if isinstance(e, Estimate) and abs(w.value - e.value) <= w.error + e.error:
                        ests[r] = min(w, e, key=lambda est: est.error)
                for r in unsure:
                    findings[r] = [judge(m, r, ests[r]) for m in range(len(sides))]
            for m, (mode, analytic, again, lifted) in enumerate(sides):
                for r, key in enumerate(keys):
                    a = analytic[r][i]
                    a_err = graph.analytic(r, i, a) if graph is not None else foreign_roundoff(a)
                    problem = _broken(mode, a, again[r][i], lifted, r, i, s, a_err, graph is None)
                    if problem is not None:
                        f = decide(a, 0.0, Broken(*problem))
                        found.add(entry_of(k, key, i, mode, a, f, s), names)
                        continue
                    f = findings[r][m]
                    found.add(entry_of(k, key, i, mode, a, f, s), names, f.forgiven)
        if k == 1 or twice:
            # Above level 1 the values are func's graph (looked at on level 1)
            # through partials; the built-in ones are pure functions of their
            # floats, so only other partials need a second look.
            deterministic(levels, k, here, s)  # (a random mask or a counter is refused)
        return found

    def _closures(self, found: LevelFindings, fs: list[Value], keys: list[Key]) -> None:
        """Each ``_backward`` closure run on its own with upstream gradients of 1, 2
        and -0.5 and with gradients already in its children: a step that is not
        linear in ``out.grad`` or sets ``.grad`` (``=`` for ``+=``) is wrong
        wherever the op is used, whatever the rest of the graph makes of it."""
        for name, problem in closure_problems(fs):
            words = f"op {name!r} (a _backward closure): {problem}"
            entry = broken(1, keys[0], CLOSURE_STEP, "rev", words, Cause.CLOSURE, self.settings)
            found.compared += 1
            found.add(entry, self.levels.names)


def closure_problems(fs: Sequence[Value]) -> list[tuple[str, str]]:
    """Each ``_backward`` closure in the graph of ``fs`` that misbehaves on its own
    (:meth:`~minigrad.core.closure.Closure.misbehaviour`, or raises): its name and what."""
    found: list[tuple[str, str]] = []
    if not closure.made:
        return found
    seen: set[int] = set()
    for node in toposort(list(fs)):
        rule = node._rule
        if type(rule) is not closure.Closure or id(rule) in seen:
            continue
        seen.add(id(rule))
        try:
            problem = rule.misbehaviour()
        except Exception as exc:  # the user's closure raised: named, as backward() does
            problem = f"its _backward raised {type(exc).__name__}: {exc}"
        if problem:
            found.append((rule.name, problem))
    return found


#: The digits an agreement on the pair alone must prove; fewer send the entry up the
#: ladder. A well-conditioned pair proves 8 to 10 (a few round-offs of the values over
#: 1e-6); fewer: the values' round-off is large beside the slope (tanh far out).
SHARP_DIGITS = 7
#: The digits below which an agreement on the pair is widened (:func:`widen`): a
#: rule error ``r`` hides inside a bound only where the agreement counts ``r`` and
#: the bound, so at most ``log10(1 / 2r)`` digits: 8 for a rule error of 1e-9.
WIDE_DIGITS = 9


def _sharp(f: Finding, r: int, i: int, graph: GraphRoundoff | None) -> bool:
    """Whether the pair's agreement is sharp enough to stand: SHARP_DIGITS of the
    derivative itself (an agreement counted in digits of the function's size, a
    slope below the bound, is no measure of a slope the input reaches: tanh' at
    -15 is 3.7e-13, and a rule of 0 there agrees to 8 such digits)."""
    if f.verdict != AGREES or f.digits < SHARP_DIGITS:
        return False
    resolved = abs(f.numerical) > f.error
    reached = graph is None or graph.spread(r, i) >= 0.0
    return resolved or not reached


def foreign_roundoff(a: float) -> float:
    """A foreign engine's analytic round-off: a few dozen ulps of the value."""
    return MODEL_ROUNDOFF * abs(a) + 2.0**-1074


def _broken(
    mode: str,
    a: float,
    again: float,
    lifted: list[list[float]] | None,
    r: int,
    i: int,
    s: Settings,
    a_err: float,
    foreign: bool = False,
) -> tuple[str, Cause] | None:
    """What is wrong with the analytic side by itself (None when nothing).

    The same partials on floats and on Values (create_graph) compute the same
    numbers, each within its round-off ``a_err`` of the truth: a difference
    beyond twice that is the partials' (or, with ``atol``/``rtol``, beyond
    the user's tolerance).
    """
    if math.isnan(a):
        return "a derivative is NaN (NaN never passes)", Cause.NOT_FINITE
    if abs(again - a) > s.nondet_tol:
        return (
            f"{_PASSES[mode]} is not deterministic: two passes gave {a!r} and {again!r} "
            f"(nondet_tol={s.nondet_tol})",
            Cause.NOT_DETERMINISTIC,
        )
    b = lifted[r][i] if lifted is not None else a
    if foreign and not keeps(a, b):
        return (
            f"backward() does not add to an input's .grad: from 0 it gave {a!r}, and from "
            "a .grad of 2**900 already there it left less than half of that (a step sets .grad:"
            " = for +=)",
            Cause.CLOSURE,
        )
    same = s.close(b, a) if s.tolerance is not None else b == a or abs(b - a) <= 2.0 * a_err
    if not same and not foreign:
        return (
            f"a partial gives {a!r} on floats ({_PASSES[mode]}) but {b!r} on "
            "Values (create_graph): it must compute the same on both",
            Cause.FLOATS_DIFFER,
        )
    return None
