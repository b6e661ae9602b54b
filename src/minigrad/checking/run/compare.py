"""Comparing one level: the analytic side against the numerical side, entry by entry.

For each input of level ``k`` (:mod:`minigrad.checking.run.levels`),
:class:`Comparison` gathers the evidence of every entry
(:func:`~minigrad.checking.verdicts.examine.examine`: the central difference
at the nominal step ``eps * max(1, sqrt(|x|))`` first, which settles most
entries within its round-off for the two evaluations every check makes;
then extrapolation, sharpening and the Taylor test, only for the entries
still open) and decides each entry
(:func:`~minigrad.checking.run.decide.decide_entry`). An analytic side that
is broken by itself (NaN or inf, not deterministic, floats and Values that
differ) is charged as such
(:class:`~minigrad.checking.verdicts.evidence.BrokenDerivative`), and
:func:`~minigrad.checking.verdicts.convict.convict` calls it wrong.

A check of many inputs (more than :data:`SHARPEN_INPUTS`) whose graph
holds a rule outside the built-in table, where entries agree to fewer
than :data:`~minigrad.checking.verdicts.findings.SHARP_DIGITS` digits, also
compares the whole gradient along one balanced random direction,
extrapolated (:mod:`minigrad.checking.run.direction`): a dozen evaluations,
where sharpening every entry would cost a dozen per input.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from minigrad.checking.numeric.kinks import looks_kinked, no_derivative, one_sided_slopes
from minigrad.checking.numeric.rounding import GraphRoundoff
from minigrad.checking.numeric.steps import Coordinate, nominal_difference
from minigrad.checking.run.decide import Place, decide_entry, entry_of
from minigrad.checking.run.direction import Direction
from minigrad.checking.run.engines import ForeignLevels
from minigrad.checking.run.levels import DerivativeError, Key, Levels, derivatives, forward_jacobian
from minigrad.checking.run.report import Entry
from minigrad.checking.run.settings import Settings
from minigrad.checking.run.table import where
from minigrad.checking.verdicts.convict import convict
from minigrad.checking.verdicts.evidence import BrokenDerivative, Cause
from minigrad.checking.verdicts.examine import Examined, examine
from minigrad.checking.verdicts.findings import AGREES, SHARP_DIGITS, WRONG
from minigrad.core.value import Value

__all__ = ["SHARPEN_INPUTS", "Comparison", "LevelFindings"]


#: A mode's pass, as notes name it.
_PASSES = {"rev": "backward", "fwd": "forward mode (jvp)"}
#: Up to this many inputs, entries that agree to few digits are sharpened one
#: by one (a dozen evaluations each); beyond it, one random direction over
#: all the inputs is extrapolated instead.
SHARPEN_INPUTS = 3


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

    def add(self, entry: Entry, caution: str = "") -> None:
        self.entries.append(entry)
        if not entry.passed:
            self.failures.append(entry)
        if caution:
            self.cautions.append(caution)


class Comparison:
    """The levels of one check compared one at a time, under one :class:`Settings`."""

    def __init__(self, levels: Levels, settings: Settings) -> None:
        self.levels = levels
        self.settings = settings
        # A partial that failed on Values (create_graph) while it worked on floats.
        self.dropped: DerivativeError | None = None

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

    def compare(self, k: int, both: bool) -> LevelFindings:
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
        graph = GraphRoundoff(fs, xs)
        found = LevelFindings()
        found.compared = len(keys) * len(xs) * len(sides)
        few = len(xs) <= SHARPEN_INPUTS
        # A rule its user wrote, checked with a few inputs: its author's own
        # question, sharpened to what float64 resolves (minigrad's own rules are
        # checked against their exact derivatives in its tests).
        sharpest = few and levels.authored
        for i, x in enumerate(xs):
            evaluate = levels.evaluator(k, i)
            at = x.data
            h = s.step(at)
            nominal = nominal_difference(evaluate, at, h, s.method == "richardson")
            broken: dict[tuple[int, int], BrokenDerivative] = {}
            for m, (mode, analytic, again, lifted) in enumerate(sides):
                for r in range(len(keys)):
                    charge = _broken(mode, analytic[r][i], again[r][i], lifted, r, i, s)
                    if charge is not None:
                        broken[(m, r)] = charge
            pairs = [
                (m, r) for m in range(len(sides)) for r in range(len(keys)) if (m, r) not in broken
            ]
            column = [[analytic[r][i] for r in range(len(keys))] for _, analytic, _, _ in sides]
            point = Coordinate(evaluate, at, here, h)
            examined = examine(
                point,
                wrt=i,
                analytic=column,
                pairs=pairs,
                graph=graph,
                nominal=nominal,
                thorough=not s.classic,
                # Agreements of few digits are sharpened entry by entry in a check
                # of a few inputs, and at any number where the graph holds a rule
                # outside the built-in table (where a rule error can hide in them).
                sharpen=(few or twice) and s.sharpen,
                tight=s.classic and s.tight,
                sharpest=sharpest,
            )
            for m, (mode, analytic, _, _) in enumerate(sides):
                for r, key in enumerate(keys):
                    a = analytic[r][i]
                    place = Place(order=k, key=key, wrt=i, mode=mode)
                    if (m, r) in broken:
                        # The analytic side fails by itself: no number is weighed.
                        charge = broken[(m, r)]
                        n = nominal.values[r] if nominal is not None else math.nan
                        f = convict(charge)
                        found.add(
                            entry_of(
                                s,
                                place,
                                a,
                                f,
                                passed=False,
                                note=charge.words,
                                numerical=n,
                                cause=charge.cause,
                            )
                        )
                        continue
                    entry, caution = decide_entry(
                        s,
                        place,
                        analytic=a,
                        finding=examined.findings[(m, r)],
                        examined=examined,
                        index=(m, r),
                        point=point,
                        names=levels.names,
                    )
                    found.add(entry, caution)
                    if m == 0 and entry.passed and entry.note:
                        # No derivative here, but the rule's choice passed (abs at 0).
                        found.kinks.append(f"{where(entry, levels.names)}: {entry.note}")
                    elif m == 0 and entry.passed and nominal is not None:
                        self._kink(found, k, key, i, r, point, examined, entry.step)
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
        found: LevelFindings,
        k: int,
        key: Key,
        i: int,
        r: int,
        point: Coordinate,
        examined: Examined,
        entry_step: float,
    ) -> None:
        """A passing entry sits on a kink (a kink is the function's, looked for in one mode)."""
        nominal = examined.nominal
        if nominal is None:
            return
        evaluate, at, here, h = point.evaluate, point.x, point.here, point.h
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
            kink = no_derivative(evaluate, at, here, r, step, k)
            if kink is not None:
                out, path = key
                entry = Entry(
                    order=k,
                    output=out,
                    path=path,
                    wrt=i,
                    analytic=math.nan,
                    numerical=math.nan,
                    allowed=0.0,
                    passed=True,
                    verdict=AGREES,
                )
                found.kinks.append(f"{where(entry, self.levels.names)}: {kink.words}")

    def _direction(
        self,
        found: LevelFindings,
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
        findings = direction.examine(slopes, sharp=True)
        key = keys[0] if len(keys) == 1 else (-1, ())
        for (mode, *_), slope, f in zip(sides, slopes, findings, strict=False):
            place = Place(order=k, key=key, wrt=-1, mode=mode)
            entry = entry_of(s, place, slope, f, passed=f.verdict != WRONG)
            found.compared += 1
            if f.verdict == WRONG:
                found.add(entry)
            else:
                found.entries.append(entry)
                found.remarks.append(
                    f"order {k}{'' if mode == 'rev' else f' ({mode})'}: the whole gradient, "
                    f"{f.reason}"
                )


def _broken(
    mode: str,
    a: float,
    again: float,
    lifted: list[list[float]] | None,
    r: int,
    i: int,
    s: Settings,
) -> BrokenDerivative | None:
    """What is wrong with the analytic side itself (None when nothing)."""
    if not math.isfinite(a):
        return BrokenDerivative(
            cause=Cause.NOT_FINITE, words="a derivative is not finite (NaN or inf never passes)"
        )
    if abs(again - a) > s.nondet_tol:
        return BrokenDerivative(
            cause=Cause.NOT_DETERMINISTIC,
            words=f"{_PASSES[mode]} is not deterministic: two passes gave {a!r} and {again!r} "
            f"(nondet_tol={s.nondet_tol})",
        )
    if lifted is not None and not s.close(lifted[r][i], a):
        return BrokenDerivative(
            cause=Cause.FLOATS_DIFFER,
            words=f"a partial gives {a!r} on floats ({_PASSES[mode]}) but {lifted[r][i]!r} on "
            "Values (create_graph): it must compute the same on both",
        )
    return None
