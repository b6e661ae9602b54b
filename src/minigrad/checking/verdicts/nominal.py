"""What the nominal step settles: the central difference every check makes, against its round-off.

The first step of :func:`~minigrad.checking.verdicts.examine.examine`, for
each ``(mode, row)`` of one input: an entry whose analytic value lies within
the nominal difference's round-off agrees
(:func:`~minigrad.checking.verdicts.scales.agrees_at_nominal`). The
round-off is first the model's (a few dozen ulps of the values); an entry
outside it is looked at again with the round-off read off the graph
(:mod:`minigrad.checking.numeric.rounding`), which is larger where
intermediates cancel. Where a custom rule is checked with a few inputs, an
agreement must also be steady: the difference at 4 times the step agrees
with the nominal one, so the truncation that neither measures is too small
to matter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minigrad.checking.numeric.grain import grain
from minigrad.checking.numeric.rounding import GraphRoundoff
from minigrad.checking.numeric.steps import NominalDifference, roundoff
from minigrad.checking.verdicts.findings import AGREES, Finding
from minigrad.checking.verdicts.scales import agrees_at_nominal

__all__ = ["settle_at_nominal"]

#: How many times the two differences' round-off a steady pair may differ by.
_STEADY = 2.5


def settle_at_nominal(
    found: NominalDifference,
    pairs: Sequence[tuple[int, int]],
    analytic: Sequence[Sequence[float]],
    graph: GraphRoundoff,
    wrt: int,
    *,
    cheap: dict[tuple[int, int], float],
    a_err: Callable[[int, int], float],
    want: int,
    wider: Callable[[], list[float]] | None,
) -> dict[tuple[int, int], Finding]:
    """The findings the nominal difference settles, by ``(mode, row)``.

    Args:
        found: The nominal difference.
        pairs: The ``(mode, row)`` pairs to settle.
        analytic: Per mode, per row, the analytic derivative by the input.
        graph: The round-off of the level's values, read on demand.
        wrt: The input's index.
        cheap: Per pair, the analytic side's round-off before the graph is read.
        a_err: Per pair, the analytic side's round-off read off the graph.
        want: The digits the entry will be sharpened to (0: none); the graph
            is read for agreements of fewer, in the hope of sparing it.
        wider: The differences at 4 times the nominal step, per row (empty off
            the domain: nothing to compare, and the agreement stands), or None
            where agreements need not be steady. A rule can be off by just the
            truncation the nominal step does not measure: 1/x at 1e-3 with a
            rule 1e-6 off agrees to 11 digits with the difference at 1e-6, off
            by ``(h / x)**2 = 1e-6`` too.
    """
    settled: dict[tuple[int, int], Finding] = {}
    for m, r in pairs:
        a, n = analytic[m][r], found.values[r]
        if a == 0.0 and abs(n) <= found.roundoff[r] and graph.spread(r, wrt) < 0.0:
            # No path from the input to the value: its derivative is 0 by
            # construction, and moving the input changes the value by no
            # more than round-off (a lost path, .data read, would).
            settled[(m, r)] = Finding(
                AGREES,
                16,
                n,
                found.roundoff[r],
                found.half,
                "agrees exactly: the value does not depend on this input (no path in "
                "its graph, and moving the input changes it by no more than round-off)",
            )
            continue
        got = agrees_at_nominal(a, cheap[(m, r)], n, found.roundoff[r], found.half)
        if got is None or got.digits < want:
            # Read the graph's round-off: larger where intermediates cancel,
            # and, for a check of a few inputs, the tighter bound that
            # spares sharpening (sin: 1 ulp of the value, not 64).
            bigger = max(abs(found.up[r]), abs(found.down[r]))
            held = max(2.0 * graph.noise(r), grain(found.up[r], found.down[r]))
            noise = roundoff([bigger], found.half, [held])[0]
            if found.richardson:
                noise *= 3.0
            again = agrees_at_nominal(a, a_err(m, r), n, noise, found.half)
            if again is not None and (got is None or again.digits > got.digits):
                got = again
        if got is not None and wider is not None:
            wide = wider()
            if wide and not abs(wide[r] - n) <= _STEADY * got.error:
                continue  # truncation shows: the nominal step settles nothing
        if got is not None:
            settled[(m, r)] = got
    return settled
