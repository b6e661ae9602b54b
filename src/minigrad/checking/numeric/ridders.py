"""Extrapolation: Ridders' tableau over several scales of step, central and one-sided.

What :mod:`minigrad.checking.numeric.steps` starts (a step, a central
difference) this module carries on where the nominal comparison does not
settle an entry: :func:`extrapolate` runs Ridders' method (a Richardson
tableau over steps shrinking by 1.4, as in Numerical Recipes' ``dfridr``) from
several scales of step, and :func:`one_sided` does the same with one-sided
differences where a domain's edge leaves no room for central ones. Each
returns estimates with error bounds (:class:`~minigrad.checking.numeric.steps.Estimate`);
which to believe is the verdicts' question (:mod:`minigrad.checking.verdicts`).

Example:
    >>> import math
    >>> from minigrad.checking.numeric.steps import nominal_step
    >>> f = lambda x: [math.log(x)] if x > 0 else None  # log near its edge
    >>> est = min(extrapolate(f, 1e-7, nominal_step(1e-7, 1e-6), [0])[0], key=lambda e: e.error)
    >>> abs(est.value - 1e7) <= 1e7 * 1e-9 and est.error < 1e-2
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from minigrad.checking.numeric.grain import grained
from minigrad.checking.numeric.steps import (
    ROUNDOFF,
    Estimate,
    Evaluate,
    central,
    largest_valid_step,
    min_step,
    roundoff,
)

__all__ = ["SHARPER", "extrapolate", "one_sided"]

# Ridders' tableau: steps shrink by _RATIO per row, at most _DEPTH rows; a
# row whose diagonal moves more than _SAFE times the best error so far ends it.
_RATIO = 1.4
_DEPTH = 10
_SAFE = 2.0
# A best error above this many times its round-off is still truncation: the
# tableau goes on to smaller steps even where its diagonal moved.
_TRUNCATING = 4.0
# Successive changes of a difference in its asymptotic range shrink by the
# law's ratio (1/1.96 for the central difference's h**2 term at ratio 1.4,
# less where that term vanishes); an entry counts as an estimate only after
# two rows that shrink by at least this much with the same sign.
_SHRINK = 0.75
# Starts of the tableau above the nominal step, as multiples of it, and the
# most starts in all (see extrapolate()): enough to reach min_step from the
# nominal step in tenfold steps after the larger ones (a kink 1e-14 away is
# only resolved by steps below 1e-14).
_LARGER = (1e1, 1e2, 1e3, 1e4)
#: Starts for sharpening an estimate (``extrapolate(scales=SHARPER)``), as
#: multiples of the nominal step, smallest first: the first that settles a
#: row ends it, and a smaller step is less likely to reach a pole or span a
#: period.
SHARPER = (1e2, 1e3, 1e4, 1e5, 1e6)
_STARTS = 18


def _difference(
    evaluate: Evaluate, x: float, h: float, noise: Sequence[float] | None
) -> tuple[list[float], list[float], float] | None:
    """The central difference quotient at ``h``, its round-off per value, and the step."""
    sides = central(evaluate, x, h)
    if sides is None:
        return None
    up, down, half = sides
    quotient = [(u - d) / (2.0 * half) for u, d in zip(up, down, strict=True)]
    if not all(math.isfinite(q) for q in quotient):
        return None
    bigger = [max(abs(u), abs(d)) for u, d in zip(up, down, strict=True)]
    return quotient, roundoff(bigger, half, grained(up, down, noise, ROUNDOFF)), half


def _ridders(
    evaluate: Evaluate,
    x: float,
    h: float,
    rows: Sequence[int],
    noise: Sequence[float] | None = None,
    ratio: float = _RATIO,
    power: int = 2,
    enough: Callable[[int, Estimate], bool] | None = None,
) -> dict[int, Estimate]:
    """One Ridders tableau from step ``h`` for the given rows; the best estimate per row.

    Each column cancels the next power of h (``power`` 2: the even powers of
    a central difference; 1: every power, for a one-sided difference, see
    :func:`one_sided`). The round-off of each difference is carried through
    the columns' combinations (a column amplifies it by its weights), so an
    entry's error is never below the round-off it can hold.
    """
    return _tableau(lambda t: _difference(evaluate, x, t, noise), h, rows, ratio, power, enough)


def _tableau(
    differ: Callable[[float], tuple[list[float], list[float], float] | None],
    h: float,
    rows: Sequence[int],
    ratio: float,
    power: int,
    enough: Callable[[int, Estimate], bool] | None = None,
) -> dict[int, Estimate]:
    best: dict[int, Estimate] = {}
    previous: dict[int, tuple[list[float], list[float]]] = {}
    active = list(rows)
    steps: list[float] = []
    # Per row: the smallest nonzero change of the values seen, and whether a
    # step changed nothing at all. A function whose computed values do not
    # change over a step is quantized there (its large intermediates cancel,
    # or it is flat in floats): a change is then a whole number of quanta,
    # and the round-off of a difference is at least the smallest change seen.
    smallest = dict.fromkeys(rows, math.inf)
    still_seen: set[int] = set()
    changes = dict.fromkeys(rows, 0.0)
    flat: dict[int, Estimate] = {}
    trend = dict.fromkeys(rows, 0)
    for depth in range(_DEPTH):
        got = differ(h)
        if got is None:
            break
        quotient, noise, step = got
        steps.append(step)
        still: list[int] = []
        for r in active:
            change = abs(quotient[r]) * step
            if change == 0.0:
                still_seen.add(r)
                if smallest[r] == math.inf:
                    # Nothing changed yet: the values' own rounding bounds the slope.
                    bound = 2.0 * noise[r]
                    if r not in flat or bound < flat[r].error:
                        flat[r] = Estimate(0.0, bound, step, flat=True, roundoff=bound)
                    if depth >= 2:
                        continue  # three steps changed nothing: flat here, no use going on
            else:
                smallest[r] = min(smallest[r], change)
            rounded = noise[r]
            if r in still_seen and smallest[r] < math.inf:
                rounded = max(rounded, smallest[r] / step)
            column, carried = [quotient[r]], [rounded]
            before, before_noise = previous.get(r, ([], []))
            bound = best[r].error if r in best else math.inf
            # Extrapolation assumes the differences shrink as a power of the
            # step; where they grow (a step that straddles a pole: the
            # difference goes as 1/h**2) or wander (a step spanning periods),
            # the tableau's entries are not estimates at all.
            if depth >= 1:
                change = column[0] - before[0]
                if abs(change) <= 2.0 * (rounded + before_noise[0]):
                    trend[r] += 1  # round-off level: nothing to contradict the law
                else:
                    last = changes[r]
                    # The same sign, and shrinking by about the law's ratio.
                    shrinks = last * change > 0.0 and abs(change) <= _SHRINK * abs(last)
                    trend[r] = trend[r] + 1 if shrinks else 0
                changes[r] = change
            # Column j mixes the last j + 1 rows: each change among them
            # must follow the law (a row from before a pole was left behind
            # must not be in it).
            settled = trend[r]
            for j in range(1, min(depth, len(before)) + 1):
                # Each column cancels the next power of h (Neville's form:
                # the steps actually taken, whose ratios rounding has moved
                # off ``ratio`` by up to an ulp of x, and at x = 1e7 that
                # alone leaves an error of 1e-11 after the first column).
                factor = (steps[depth - j] / step) ** power
                if not factor > 1.01:  # steps rounded to the same few ulps: no law to use
                    break
                column.append((column[j - 1] * factor - before[j - 1]) / (factor - 1.0))
                carried.append((carried[j - 1] * factor + before_noise[j - 1]) / (factor - 1.0))
                error = max(abs(column[j] - column[j - 1]), abs(column[j] - before[j - 1]))
                error = max(error, 2.0 * carried[j])
                if settled >= max(2, j) and error <= bound:
                    bound = error
                    best[r] = Estimate(column[j], error, step, roundoff=2.0 * carried[j])
            previous[r] = (column, carried)
            if enough is not None and r in best and enough(r, best[r]):
                continue  # the caller needs no better estimate
            # Higher order made it worse: round-off has taken over. Not so while
            # the best error is still mostly truncation: the first rows were
            # beyond the radius where the series in h converges (tanh at 15 from
            # a step of 3.9, where it is pi/2), and the highest columns, which
            # mix them in, move; the lower columns of the next rows do not.
            calm = depth == 0 or (
                len(column) == depth + 1 and abs(column[depth] - before[depth - 1]) < _SAFE * bound
            )
            if calm or (r in best and best[r].error > _TRUNCATING * best[r].roundoff):
                still.append(r)
        active = still
        if not active:
            break
        h /= ratio
    # Values that never changed show only that the derivative is below their resolution.
    found = {r: e for r, e in best.items() if smallest[r] < math.inf}
    found.update((r, e) for r, e in flat.items() if smallest[r] == math.inf)
    return found


def extrapolate(
    evaluate: Evaluate,
    x: float,
    h: float,
    rows: Sequence[int],
    decided: Callable[[int, list[Estimate]], bool] | None = None,
    *,
    noise: Sequence[float] | None = None,
    scales: Sequence[float] | None = None,
    enough: Callable[[int, Estimate], bool] | None = None,
) -> dict[int, list[Estimate]]:
    """Derivative estimates with error bounds from several scales of step, per row.

    Ridders' tableau is started from the largest valid step up to ``h`` and
    from 10x smaller, then from ``10 * h`` up to ``1e4 * h`` when those fit
    in the domain, then from steps 100x, 1000x, ... smaller, down to
    :func:`min_step`: at most eighteen starts, each spanning a factor of 20
    in step. Each start gives each row its best estimate (the tableau entry
    with the smallest error). A row is
    done once ``decided(row, its estimates so far)`` says they settle the
    question the caller asks of it.

    Args:
        evaluate: The values of the checked functions at a coordinate, or None
            off the domain.
        x: The point.
        h: The nominal step.
        rows: The indices of the values to estimate.
        decided: When it returns True for a row, that row needs no more starts.
        noise: Per value (indexed like ``evaluate``'s), its absolute
            round-off when the caller knows it to exceed :func:`roundoff`'s.
        scales: Start only from these multiples of the nominal step, in
            this order (to sharpen an estimate the nominal step already
            gave: round-off falls as the step grows); :data:`SHARPER` is
            the usual choice. None: every start described above.
        enough: When it returns True for a row's estimate, that row's
            tableau stops there (the caller needs no better one).

    Returns:
        Per row, its estimates, one per start that gave one, in the order the
        starts ran; empty only when no central step fits in the domain at ``x``.

    Example:
        >>> ests = extrapolate(lambda x: [math.sin(x)], 1e8, 100.0, [0])[0]
        >>> best = min(ests, key=lambda e: e.error)
        >>> abs(best.value - math.cos(1e8)) < 1e-6
        True
    """
    found: dict[int, list[Estimate]] = {r: [] for r in rows}
    top = largest_valid_step(evaluate, x, h)
    if top is None:
        return found
    larger: list[float] = []
    if top < h:
        top /= 2.0  # off the domain's edge, where the first rows are not yet wild
    else:
        # Where f' is small beside f (tanh far out, sqrt(x*x + 1) near 0) only
        # a larger step resolves it above round-off.
        # (A start off the domain costs its first pair of evaluations only.)
        larger = [top * f for f in _LARGER]
    # Down to a few ulps: with both sides exact, a step of 4 ulps of x is a
    # fine difference (sin at 1e14, whose ulp is 0.016, needs steps near 0.1).
    finest = 4.0 * math.ulp(x)
    smaller = [top * 10.0**-j for j in range(_STARTS) if top * 10.0**-j >= finest]
    if 0.0 < abs(x) < 0.1 * top:
        # A step far above |x| straddles 0, where many functions have their
        # pole, cusp or edge (cbrt at 1e-300): steps below |x| come next.
        below = [abs(x) * 0.25 * 10.0**-j for j in range(4)]
        smaller = [smaller[0], *below, *smaller[1:]]
    # The nominal scale and the next smaller one first: most questions are
    # settled there; then the larger steps, then the rest of the smaller.
    if scales is not None:
        starts = [top * f for f in scales] if top == h else []
    else:
        starts = [*smaller[:2], *larger, *smaller[2:]][:_STARTS]
    pending = list(rows)
    for start in starts:
        if not pending:
            break
        got = _ridders(evaluate, x, start, pending, noise, enough=enough)
        pending = _gather(found, got, pending, decided)
    return found


def _gather(
    found: dict[int, list[Estimate]],
    got: dict[int, Estimate],
    pending: list[int],
    decided: Callable[[int, list[Estimate]], bool] | None,
) -> list[int]:
    """Add one start's estimates to ``found``; the rows still pending after it."""
    still: list[int] = []
    for r in pending:
        if r in got:
            found[r].append(got[r])
        if decided is None or not decided(r, found[r]):
            still.append(r)
    return still


def one_sided(
    evaluate: Evaluate,
    x: float,
    here: Sequence[float],
    h: float,
    rows: Sequence[int],
    decided: Callable[[int, list[Estimate]], bool] | None = None,
    *,
    noise: Sequence[float] | None = None,
) -> dict[int, list[Estimate]]:
    """Derivative estimates from one side only, for a point at the edge of a domain.

    Where no central step fits (``x`` is within a few ulps of the edge, or
    the steps that fit are too small to say anything), the side away from
    the edge may still take large steps. The forward difference
    ``(f(x + s) - f(x)) / s`` has an error in every power of ``s``, so its
    tableau cancels them one by one (ratio 2: h, h**2, h**3, ...), started
    from the largest step up to ``h`` that stays in the domain on that side
    and from steps 10x, 100x, ... smaller. Both sides are tried, the side
    with the larger step first.

    Args:
        evaluate: As for :func:`extrapolate`.
        x: The point.
        here: The values at ``x``.
        h: The largest step to try.
        rows: The indices of the values to estimate.
        decided: As for :func:`extrapolate`.
        noise: As for :func:`extrapolate`.

    Returns:
        Per row, its estimates, one per start that gave one.

    Example:
        >>> f = lambda x: [math.sqrt(x)] if x >= 0 else None  # sqrt on its edge's side
        >>> ests = one_sided(f, 1e-3, [math.sqrt(1e-3)], 1e-3, [0])[0]
        >>> best = min(ests, key=lambda e: e.error)
        >>> abs(best.value - 0.5 / math.sqrt(1e-3)) <= best.error
        True
    """
    found: dict[int, list[Estimate]] = {r: [] for r in rows}
    tops = [(t, side) for side in (1.0, -1.0) if (t := _largest_side(evaluate, x, h, side))]
    tops.sort(key=lambda pair: -pair[0])
    pending = list(rows)
    for top, side in tops:
        for start in (top * 10.0**-j for j in range(_STARTS // 2)):
            if not pending or start < min_step(x):
                break

            def differ(
                t: float, side: float = side
            ) -> tuple[list[float], list[float], float] | None:
                moved = x + side * t
                step = moved - x
                values = evaluate(moved) if step != 0.0 and math.isfinite(moved) else None
                if values is None:
                    return None
                quotient = [(v - c) / step for v, c in zip(values, here, strict=True)]
                if not all(math.isfinite(q) for q in quotient):
                    return None
                bigger = [max(abs(v), abs(c)) for v, c in zip(values, here, strict=True)]
                return quotient, roundoff(bigger, abs(step), noise), abs(step)

            got = _tableau(differ, start, pending, 2.0, 1)
            pending = _gather(found, got, pending, decided)
    return found


def _largest_side(evaluate: Evaluate, x: float, h: float, side: float) -> float | None:
    """The largest step up to ``h`` on one side that stays in the domain, within 2x."""

    def fits(t: float) -> bool:
        moved = x + side * t
        return moved != x and math.isfinite(moved) and evaluate(moved) is not None

    if fits(h):
        return h
    lo = min_step(x)
    if lo >= h or not fits(lo):
        return None
    hi = h
    while hi > 2.0 * lo:
        mid = math.sqrt(lo) * math.sqrt(hi)
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo
