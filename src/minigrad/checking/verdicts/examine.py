"""The evidence for the entries of one input: from the cheapest step that settles them on.

For input i of a level, every value of the level (a row) has an analytic
derivative per mode; :func:`examine` gathers what the numbers say about each,
spending evaluations only where the cheaper evidence did not settle it:

1. **The nominal central difference** (two evaluations, which every check
   makes): an entry whose difference from the analytic value is within the
   difference's round-off agrees (:mod:`minigrad.checking.verdicts.nominal`;
   where a custom rule is checked with a few inputs, only where the
   difference at 4 times the step agrees too: two more evaluations).
2. **Extrapolation** (:func:`minigrad.checking.numeric.ridders.extrapolate`) for the
   entries still open, until each is settled or the steps run out.
3. **Sharpening** (``thorough``, and only for a check of a few inputs): an
   entry that agrees to fewer than :data:`~minigrad.checking.verdicts.findings.SHARP_DIGITS`
   digits (:data:`~minigrad.checking.verdicts.findings.SHARPEST_DIGITS` where
   a custom rule is checked) is extrapolated again from larger steps, where round-off weighs
   less (``x * x`` at 1e8 agrees to 6 digits at the nominal step and to 14
   at a step of 100), and from every scale where those give nothing sharper.
   An agreement that a sharper estimate puts
   :data:`~minigrad.checking.verdicts.findings.DOUBT` bounds away from is
   undecided.
4. **The second method** (``thorough``): what stays undecided gets the Taylor
   remainder's rate (:mod:`minigrad.checking.verdicts.taylor`), and one-sided
   differences where the domain's edge cut the central steps short.

A check with ``atol``/``rtol`` (the classic test) makes steps 1 and 2 only:
enough to prove the differences its tolerance forgives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from minigrad.checking.numeric.fine import fine_mean
from minigrad.checking.numeric.ridders import SHARPER, extrapolate, one_sided
from minigrad.checking.numeric.rounding import GraphRoundoff
from minigrad.checking.numeric.steps import (
    NOISE_FLOOR,
    Coordinate,
    Estimate,
    NominalDifference,
    central,
)
from minigrad.checking.verdicts.convict import reweigh
from minigrad.checking.verdicts.evidence import BrokenDerivative, Remainders
from minigrad.checking.verdicts.findings import (
    AGREES,
    MIN_DIGITS,
    SHARP_DIGITS,
    SHARPEST_DIGITS,
    UNDECIDED,
    WRONG,
    Finding,
    Verdict,
    digits,
    finest_step,
    zero_scale,
)
from minigrad.checking.verdicts.nominal import settle_at_nominal
from minigrad.checking.verdicts.scales import (
    resolves,
    settled,
    sharper_against,
    weigh,
)
from minigrad.checking.verdicts.taylor import rate_test

__all__ = ["Examined", "examine"]

#: Relative round-off of an analytic value before the graph is read.
_ANALYTIC = 32.0 * 2.0**-52
#: The Taylor test starts this many nominal steps out (and halves 24 times).
_TAYLOR_REACH = 1e3
#: Starts around the step of a lone estimate that resolves a difference, as
#: multiples of it (a tableau's best row is 2 to 20 times below its start).
_AROUND = (4.0, 40.0, 0.4)
#: One-sided differences start up to this many nominal steps out.
_ONE_SIDED_REACH = 1e4


class Examined:
    """What the numbers say about each (mode, row) of one input.

    Attributes:
        findings: Per ``(mode index, row)``, its :class:`Finding`.
        estimates: Per row, every extrapolated estimate made (for the classic test).
        nominal: The nominal difference (None when a side left the domain).
        roundoff: Per ``(mode index, row)``, the analytic side's round-off used.
        trusted: Per row, the largest step whose differences stand (:mod:`.fine`).
    """

    __slots__ = ("estimates", "findings", "nominal", "roundoff", "trusted")

    def __init__(self, nominal: NominalDifference | None) -> None:
        self.findings: dict[tuple[int, int], Finding] = {}
        self.estimates: dict[int, list[Estimate]] = {}
        self.nominal = nominal
        self.roundoff: dict[tuple[int, int], float] = {}
        self.trusted: dict[int, float] = {}


def examine(
    point: Coordinate,
    *,
    wrt: int,
    analytic: Sequence[Sequence[float]],
    pairs: Sequence[tuple[int, int]],
    graph: GraphRoundoff,
    nominal: NominalDifference | None,
    thorough: bool,
    sharpen: bool,
    tight: bool = False,
    sharpest: bool = False,
) -> Examined:
    """Findings for the ``(mode, row)`` pairs of input ``wrt``; see the module's steps.

    Args:
        point: Input ``wrt`` as the numbers see it (its values, data and nominal step).
        wrt: The input's index.
        analytic: Per mode, per row, the analytic derivative by the input.
        pairs: The ``(mode, row)`` pairs to examine.
        graph: The round-off of the level's values, read on demand.
        nominal: The nominal difference (already computed), or None.
        thorough: Sharpen and try the second method (the default verdicts).
        sharpen: Whether sharpening is affordable (a check of a few inputs).
        tight: Sharpen even without ``thorough``: the classic test with a
            tolerance tighter than a few digits needs estimates that sharp.
        sharpest: Sharpen to :data:`SHARPEST_DIGITS`, and take an agreement at
            the nominal step only where it is steady (a custom rule checked with
            a few inputs: what a rule's author asks, and cheap there).
    """
    found, i = nominal, wrt
    e = _Examining(point, analytic, graph, i, Examined(found))
    out = e.out
    rows = sorted({r for _, r in pairs})
    e.modes_of = {r: [m for m, rr in pairs if rr == r] for r in rows}
    e.want = SHARPEST_DIGITS if sharpest else SHARP_DIGITS
    cheap = {(m, r): _ANALYTIC * abs(analytic[m][r]) + 2.0**-1074 for m, r in pairs}
    out.roundoff = dict(cheap)
    # 1. The nominal difference, against its round-off.
    if found is not None:
        out.findings.update(
            settle_at_nominal(
                found,
                pairs,
                analytic,
                graph,
                i,
                cheap=cheap,
                a_err=e.a_err,
                want=e.want if sharpen else 0,
                wider=e.wider if sharpen and sharpest else None,
            )
        )
    # 2. Extrapolation, for the entries the nominal step did not settle.
    pending = [r for r in rows if any((m, r) not in out.findings for m in e.modes_of[r])]
    if pending:
        e.extrapolate(pending, MIN_DIGITS)
    # 3. Sharpening, where the nominal difference agreed to few digits.
    # A check of many inputs sharpens only what is still open (undecided): an
    # agreement of few digits there is left to the direction over all inputs.
    if thorough or tight:
        blunt = e.blunt(rows, (AGREES, UNDECIDED) if sharpen else (UNDECIDED,))
        if blunt:
            e.sharpen(blunt)
    # A difference seen at larger steps must hold at the smaller ones too
    # (after sharpening, or where a pole next to x spoils the nominal scale).
    if thorough:
        suspect = [
            r for r in rows if any(out.findings[(m, r)].verdict == WRONG for m in e.modes_of[r])
        ]
        if suspect:
            e.extrapolate(suspect, 17)
        # One scale of step resolved a difference and none confirms it: starts
        # on either side of that scale look for the second piece of evidence.
        e.confirm(rows)
        # A conviction must not be contradicted by the second method.
        convicted = [p for p in pairs if out.findings[p].verdict == WRONG]
        if convicted:
            e.cross_examine(convicted)
    # 4. The second method, for what stays undecided.
    if thorough:
        open_pairs = [p for p in pairs if out.findings[p].verdict == UNDECIDED]
        if open_pairs:
            e.second(open_pairs)
    return out


def _outweighed(a: float, a_err: float, ests: Sequence[Estimate], agreed: Finding) -> bool:
    """Whether an estimate sharper than an agreement puts the analytic value more than
    DOUBT of its bounds away (too little to convict, but it forbids the agreement: tanh
    at 6.3 with a rule 1e-6 off; see :func:`~minigrad.checking.verdicts.scales.sharper_against`)."""
    return agreed.verdict == AGREES and sharper_against(a, a_err, ests, agreed.error) is not None


def _sharpest(ests: Sequence[Estimate]) -> float:
    """The smallest bound of the estimates that know their own value (inf: none)."""
    return min((e.error for e in ests if not e.flat and abs(e.value) > e.error), default=math.inf)


def _better(before: Finding | None, fresh: Finding) -> Finding:
    """The stronger of two findings for one entry: a proof of wrong, else more digits.

    A fresh finding judges every estimate made so far, the earlier ones too:
    where the earlier finding was a proof of wrong, the fresh one (which may
    have found that smaller steps contradict it) stands.
    """
    if before is None or fresh.verdict == WRONG or before.verdict == WRONG:
        return fresh
    if fresh.verdict == AGREES and (before.verdict != AGREES or fresh.digits > before.digits):
        return fresh
    return before


class _Examining:
    """One input's examination under way: what every pass after the nominal step needs.

    Attributes are :func:`examine`'s arguments (``point`` taken apart); ``out``
    collects the evidence; ``modes_of`` maps a row to its modes examined.
    """

    __slots__ = (
        "analytic",
        "at",
        "evaluate",
        "graph",
        "h",
        "here",
        "i",
        "modes_of",
        "out",
        "want",
        "wide",
    )

    def __init__(
        self,
        point: Coordinate,
        analytic: Sequence[Sequence[float]],
        graph: GraphRoundoff,
        i: int,
        out: Examined,
    ) -> None:
        self.evaluate = point.evaluate
        self.at = point.x
        self.h = point.h
        self.here = point.here
        self.analytic = analytic
        self.graph = graph
        self.i = i
        self.out = out
        self.modes_of: dict[int, list[int]] = {}
        #: The digits sharpening aims at (:data:`SHARPEST_DIGITS` for a custom rule).
        self.want = SHARP_DIGITS
        #: The differences at 4 times the nominal step, once made (empty: off the domain).
        self.wide: list[float] | None = None

    def wider(self) -> list[float]:
        """The differences at 4 times the nominal step, made once (empty: off the domain)."""
        if self.wide is None:
            got = central(self.evaluate, self.at, 4.0 * self.h)
            self.wide = (
                []
                if got is None
                else [(u - d) / (2.0 * got[2]) for u, d in zip(got[0], got[1], strict=True)]
            )
        return self.wide

    def a_err(self, m: int, r: int) -> float:
        """The analytic side's round-off for ``(m, r)``, read off the graph (and kept)."""
        got = self.graph.analytic(r, self.i, self.analytic[m][r])
        self.out.roundoff[(m, r)] = got
        return got

    def noise(self, rows: Sequence[int]) -> list[float]:
        """Per row, the round-off read off the graph, with a margin of 2 (0 for rows not asked)."""
        noise = [0.0] * len(self.here)
        for r in rows:
            noise[r] = 2.0 * self.graph.noise(r)
        return noise

    def blunt(self, rows: Sequence[int], verdicts: tuple[Verdict, ...]) -> list[int]:
        """The rows with an entry of one of ``verdicts`` and fewer digits than sharpening wants."""
        found = self.out.findings
        return [
            r
            for r in rows
            if any(
                found[(m, r)].verdict in verdicts and found[(m, r)].digits < self.want
                for m in self.modes_of[r]
            )
        ]

    def extrapolate(
        self, rows: Sequence[int], want: int, *, scales: Sequence[float] | None = None
    ) -> None:
        """Extrapolated estimates for ``rows`` until each settles to ``want`` digits."""
        out, analytic, modes_of = self.out, self.analytic, self.modes_of
        errs = {(m, r): self.a_err(m, r) for r in rows for m in modes_of[r]}
        finest = finest_step(self.at)
        checks = {
            r: settled([(analytic[m][r], errs[(m, r)]) for m in modes_of[r]], want, self.h, finest)
            for r in rows
        }
        ests = extrapolate(
            self.evaluate,
            self.at,
            self.h,
            rows,
            lambda r, e: checks[r](e),
            noise=self.noise(rows),
            scales=scales,
            enough=lambda r, e: all(
                digits(analytic[m][r], e.value, e.error) >= want
                and abs(analytic[m][r] - e.value) <= e.error + errs[(m, r)]
                for m in modes_of[r]
            ),
        )
        for r in rows:
            known = out.estimates.setdefault(r, [])
            seen = {(e.value, e.step) for e in known}
            # Steps that span periods of a periodic op average its slope away:
            # their estimates are of another function, and decide nothing.
            turn = self.graph.turn(r, self.i) if ests[r] else math.inf
            known.extend(e for e in ests[r] if (e.value, e.step) not in seen and e.step <= turn)
            for m in modes_of[r]:
                a, a_err = analytic[m][r], errs[(m, r)]
                fresh = weigh(a, a_err, out.estimates[r], finest=finest)
                before = out.findings.get((m, r))
                if before is not None and _outweighed(a, a_err, out.estimates[r], before):
                    before = None  # a sharper estimate forbids the earlier agreement
                out.findings[(m, r)] = _better(before, fresh)

    def _reach(self, r: int) -> float:
        """How far out the Taylor test starts for row ``r``."""
        at, h = self.at, self.h
        # Steps below |x| where x is near 0, where many functions have their
        # pole, cusp or kink (relu at -1e-300 is flat on both sides below 1e-300).
        reach = min(_TAYLOR_REACH * h, 0.25 * abs(at)) if at != 0.0 else _TAYLOR_REACH * h
        # Not beyond a radian of a periodic op's argument (t - sin(t) at 1e15).
        return min(reach, self.graph.turn(r, self.i))

    def cross_examine(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Each conviction weighed again with the Taylor remainder's rate (it falls
        as ``h**2`` down to steps that bound the slope's error well below the
        difference) and the fine steps below it: either can set it aside."""
        out = self.out
        for m, r in pairs:
            a, a_err = self.analytic[m][r], out.roundoff[(m, r)]
            convicted = out.findings[(m, r)]
            got = rate_test(
                self.evaluate,
                self.at,
                self.here,
                r,
                a,
                a_err,
                self._reach(r),
                self.graph.noise(r),
            )
            # The charge weighed again, with the second method's finding.
            out.findings[(m, r)] = self._hear(r, reweigh(convicted, second=got))

    def _hear(self, r: int, found: Finding) -> Finding:
        """A conviction weighed again with the fine steps below it (:func:`fine_mean`).

        Where they set it aside, what the steps above them gave is of a slope
        averaged over its changes, and decides nothing: those estimates go.
        """
        charge = found.charge
        if found.verdict != WRONG or isinstance(charge, BrokenDerivative) or charge is None:
            return found
        a = charge.slope if isinstance(charge, Remainders) else charge.analytic
        gap = abs(a - found.numerical)
        fine = fine_mean(
            self.evaluate,
            self.at,
            r,
            here=self.here,
            noise=self.graph.noise(r),
            gap=gap,
            step=found.step,
        )
        heard = reweigh(found, fine=fine) if fine is not None else found
        if heard.verdict != WRONG and fine is not None:
            out = self.out
            out.trusted[r] = min(out.trusted.get(r, math.inf), fine.high)
            out.estimates[r] = [e for e in out.estimates.get(r, []) if e.step <= fine.high]
        return heard

    def confirm(self, rows: Sequence[int]) -> None:
        """For undecided rows where one estimate resolves a difference, starts
        around its step, for a second scale that confirms (or contradicts) it."""
        out, finest = self.out, finest_step(self.at)
        for r in rows:
            pairs = [(m, r) for m in self.modes_of[r] if out.findings[(m, r)].verdict == UNDECIDED]
            lone = [
                e
                for e in out.estimates.get(r, [])
                for m, _ in pairs
                if resolves(self.analytic[m][r], out.roundoff[(m, r)], e, finest)
            ]
            if lone:
                step = min(lone, key=lambda e: e.error).step
                self.extrapolate([r], 17, scales=[step * f / self.h for f in _AROUND])

    def sharpen(self, rows: Sequence[int]) -> None:
        """Larger steps for agreements of few digits; a difference they find is confirmed small."""
        out = self.out
        known = {r: _sharpest(out.estimates.get(r, ())) for r in rows}
        self.extrapolate(rows, self.want, scales=SHARPER)
        # Where the larger steps gave no sharper estimate (a domain edge or a
        # pole near x cuts them off: 1/x at 1e-6; or they straddle it: 1/x at
        # 1e-100 with no domain declared, whose steps from 1e-4 up see 1/x on
        # both sides of 0), every scale of step is tried, until the entry agrees
        # to the digits wanted or a pair resolves a difference. Where they gave
        # sharper estimates and still few digits, float64 has no more to give
        # there (sin(x) * cos(x) at 2.9 agrees to 8 at every scale). An
        # undecided entry has had every scale already; an agreement stopped at
        # the first that gave MIN_DIGITS.
        fresh = {r for r in rows if _sharpest(out.estimates.get(r, ())) < known[r]}
        still = [r for r in self.blunt(rows, (AGREES,)) if r not in fresh]
        if still:
            self.extrapolate(still, self.want)

    def _flat(self, r: int, a: float) -> Finding | None:
        """A slope of 0 where the values at the nominal step equal f(x) exactly, or None.

        What the Taylor test cannot say where its steps must stay below
        ``|x|`` (``0 * y`` at y = 2e-308): not a digit of the values moved
        over the nominal step, on either side, so the slope is 0 to within a
        quantum of them per step.
        """
        found, here = self.out.nominal, self.here
        if a != 0.0 or found is None or not found.up[r] == found.down[r] == here[r]:
            return None
        bound = max(math.ulp(here[r]), NOISE_FLOOR) / min(found.left, found.right)
        k = digits(0.0, 0.0, bound, zero_scale(here[r], self.at))
        if k < MIN_DIGITS:
            return None
        return Finding(
            AGREES,
            k,
            0.0,
            bound,
            found.half,
            f"agrees to {k} digits: the values at x +- {found.half:.3g} equal f(x) exactly, "
            f"so the slope is 0 to within {bound:.2g}",
        )

    def second(self, pairs: Sequence[tuple[int, int]]) -> None:
        """The Taylor rate test and, where the domain cut the steps, one-sided differences."""
        out, at, h, here = self.out, self.at, self.h, self.here
        rows = sorted({r for _, r in pairs})
        sided: dict[int, list[Estimate]] = {}
        turns = {r: self.graph.turn(r, self.i) for r in rows}
        if out.nominal is None:  # the domain cut the central steps short
            reach = min([_ONE_SIDED_REACH * h, *turns.values()])
            sided = one_sided(self.evaluate, at, here, reach, rows, noise=self.noise(rows))
        for m, r in pairs:
            a, a_err = self.analytic[m][r], out.roundoff[(m, r)]
            if sided.get(r):
                got = weigh(a, a_err, sided[r], what="one-sided", finest=finest_step(at))
                if got.verdict == WRONG or (
                    got.verdict == AGREES
                    and not _outweighed(a, a_err, out.estimates.get(r, []), got)
                ):
                    out.findings[(m, r)] = got
                    continue
            got = rate_test(
                self.evaluate, at, here, r, a, a_err, self._reach(r), self.graph.noise(r)
            )
            if got.verdict == UNDECIDED:
                got = self._flat(r, a) or got
            elif got.verdict == AGREES and _outweighed(a, a_err, out.estimates.get(r, []), got):
                got = Finding(UNDECIDED, 0, math.nan, math.nan, math.nan, got.reason)
            elif got.verdict == WRONG:
                # The remainder's rate convicts alone only where the first method's
                # estimates do not agree closely with the slope: two methods that
                # disagree decide nothing.
                got = self._hear(r, reweigh(got, first=out.estimates.get(r, [])))
            if got.verdict != UNDECIDED:
                out.findings[(m, r)] = got
            else:
                # The first method's evidence stays, unless the fine steps set its steps
                # aside; the reason says the second method did not settle it.
                f = out.findings[(m, r)]
                why = f"{f.reason}; {got.reason}"
                if f.step > out.trusted.get(r, math.inf):
                    f = Finding(UNDECIDED, 0, math.nan, math.nan, math.nan, why)
                out.findings[(m, r)] = Finding(
                    UNDECIDED, f.digits, f.numerical, f.error, f.step, why
                )
