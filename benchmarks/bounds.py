"""An error bound you can stand on, measured: the coverage sweep of minigrad's numerical side.

For every entry (a function, a point, an input) the numerical derivative
minigrad's checker would use, with its stated error bound, is compared with
the exact derivative (SymPy and mpmath at 60 digits, :mod:`oracle`); and the
checker itself (``minigrad.check`` at its defaults) gives the entry its
verdict. The functions are correct (the built-in rules, compositions of them),
so any ``wrong`` verdict is a false alarm. Where the sweep looks is
:mod:`places`::

    python benchmarks/bounds.py             # the full sweep (>= 10,000 entries), Markdown
    python benchmarks/bounds.py --quick     # the small sweep CI runs (a few hundred)
    python benchmarks/run.py --only h         # the same, as section (h) of the report

It reports how often the true error exceeds the stated bound (the goal: never),
the distribution of bound / true error, the checker's verdicts (agrees, wrong,
undecided) and every entry where the bound fails, with its rule, point, bound
and true error.

The numerical side
------------------
The estimate and bound of an entry are the ones the checker states in its
report: ``minigrad.check`` at its defaults, ``Report.entries``, the entry's
``numerical +- error`` (:func:`stated`), so the sweep measures the bound the
verdict stands on. An undecided entry whose numbers bound nothing (a kink, a
jump, estimates that disagree) states an infinite error: it counts as *no
bound stated*, never as covered. :func:`mirror` is the older path (compare.py's
extrapolation from the nominal step, every start run, the smallest bound), kept
to look at single starts: ``numerical_side`` returns whichever a test puts there.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import minigrad
from harness import Target, git_revision, progress, table
from minigrad import Rule, Value, ops
from minigrad.checking.numeric.estimate import Estimate, Point, nominal_step
from minigrad.checking.numeric.ladder import ladder
from minigrad.checking.numeric.rounding import GraphRoundoff
from minigrad.checking.run.levels import Levels
from oracle import Exact, beyond, error_of, representable, to_float
from places import COMPOSITIONS, GROUPS, compositions, rule_points
from suite import Bench

Func = Callable[..., Value]

AGREES, WRONG, UNDECIDED, RAISED = "agrees", "wrong", "undecided", "raised"
SUBGRADIENT = "subgradient"
VERDICTS = (AGREES, WRONG, UNDECIDED, RAISED)

#: The full sweep and the quick one (CI's): compositions drawn, and every nth point kept.
FULL = (600, 1)
QUICK = (12, 12)


@dataclass(frozen=True)
class Site:
    """One function at one point, and the inputs whose derivatives are entries."""

    group: str
    name: str
    func: Func
    point: tuple[float, ...]
    exact: Exact
    wrt: tuple[int, ...]
    #: The rule swept, if the site is one rule at one point (None for a composition).
    rule: Rule | None = None


@dataclass
class Outcome:
    """One entry: the exact derivative, the numerical side's estimate, the checker's verdict."""

    site: Site
    wrt: int
    exact: float
    estimate: Estimate | None
    true_error: float
    #: Half an ulp of the exact derivative: a float estimate cannot do better.
    floor: float
    verdict: str
    #: Whether the stated bound is below the true error (beyond float rounding).
    broken: bool = False
    #: Why, when it is (one of CAUSES).
    why: str = ""
    #: Estimates of single starts whose own bound is below their true error, of all starts.
    starts_broken: int = 0
    starts: int = 0

    @property
    def decided(self) -> bool:
        """Whether the checker decided the entry (agrees or wrong) rather than not."""
        return self.verdict in (AGREES, WRONG)

    @property
    def ratio(self) -> float:
        """(bound + half an ulp of the exact value) / true error; inf when the error is 0."""
        e = self.estimate
        if e is None:
            return math.nan
        if self.broken:  # decided exactly; rounding must not move it across 1
            return min(e.error / self.true_error, math.nextafter(1.0, 0.0))
        if self.true_error <= self.floor:
            return math.inf
        return max((e.error + self.floor) / self.true_error, 1.0)

    def row(self) -> list[str]:
        """The entry's cells: function, group, entry, exact, estimate, bound, true error, ..."""
        s, e = self.site, self.estimate
        point = ", ".join(f"{p!r}" for p in s.point)
        cells = [s.name, s.group, f"d/d{'xyzuvw'[self.wrt]} at ({point})", f"{self.exact:.9g}"]
        if e is None:
            cells += ["none fits", "", "", ""]
        else:
            cells += [f"{e.value:.9g}", f"{e.error:.3g}", f"{self.true_error:.3g}", f"{e.step:.3g}"]
        return [*cells, self.verdict, self.why]


# The numerical side.


def mirror_all(func: Func, point: Sequence[float], i: int, eps: float = 1e-6) -> list[Estimate]:
    """The estimator's ladder for input ``i``, as compare.py makes it (no pair first)."""
    xs = [Value(p) for p in point]
    levels = Levels(func, xs, None, "coverage")
    fs, _ = levels.level(1)
    levels.survey(fs, fence=True)  # a custom rule's declared domain fences the steps
    x = point[i]
    noise = [GraphRoundoff(fs, xs).noise(0)]
    found = ladder(Point(levels.evaluator(1, i), x, [fs[0].data], nominal_step(x, eps), noise), [0])
    est = found[0]
    return [est] if isinstance(est, Estimate) else []


def mirror(func: Func, inputs: Sequence[Value], i: int) -> Estimate | None:
    """The ladder's estimate for an entry (None where it gives no bound)."""
    ests = mirror_all(func, [x.data for x in inputs], i)
    return ests[0] if ests else None


def stated(func: Func, inputs: Sequence[Value], i: int) -> Estimate | None:
    """The estimate and bound the checker's report states for input ``i`` (order 1).

    None when the check raised, or the entry states no bound (an undecided
    entry whose error is infinite or NaN).
    """
    return checked(func, [x.data for x in inputs])[1][i]


def checked(func: Func, point: Sequence[float]) -> tuple[list[str], list[Estimate | None]]:
    """One ``minigrad.check`` at its defaults: per input, its verdict and stated estimate."""
    try:
        report = minigrad.check(func, [Value(p) for p in point])
    except Exception:
        return [RAISED] * len(point), [None] * len(point)
    rank = {AGREES: 0, SUBGRADIENT: 0, UNDECIDED: 1, WRONG: 2}
    out = [AGREES] * len(point)
    ests: list[Estimate | None] = [None] * len(point)
    for e in report.entries:
        if e.order != 1 or rank.get(e.verdict, 2) < rank[out[e.wrt]]:
            continue
        out[e.wrt] = e.verdict if e.verdict in rank else WRONG
        bounded = math.isfinite(e.error) and math.isfinite(e.numerical)
        ests[e.wrt] = Estimate(e.numerical, e.error, e.step, 0.0, True) if bounded else None
    return out, ests


def numerical_side() -> Callable[[Func, Sequence[Value], int], Estimate | None]:
    """Where the sweep's estimates come from: :func:`stated` (a test may put another here)."""
    return stated


# Why a bound fails.

#: The factor on the bound that the sweep supports away from kinks, poles, periods and
#: inaccurate forwards: the worst bound / true error there is 0.31 (lgamma at 1.0),
#: and 0.15 within 1e-12 of a domain edge before the steps' rounding was weighed in.
SAFETY = 4.0

KINK = "a kink, pole or jump within 10 steps"
PERIOD = "a step longer than a radian (sin, cos, tan)"
EDGE = "a domain edge within 10 steps"
FORWARD = "the forward itself off by > 1e-9 relatively"
SMOOTH = "none of these: the bound is too small"
CAUSES = (KINK, PERIOD, EDGE, FORWARD, SMOOTH)
#: A false alarm's cause when there is no estimate at all.
NO_STEP = "no central step fits (within 64 ulps of a domain edge)"


def singular_points(rule: Rule, x: float) -> list[float]:
    """The kinks, poles and jumps of ``rule`` in the swept argument near ``x``.

    The declared ``avoid`` points, and the poles the declaration leaves out:
    every non-positive integer for the gamma family, pi/2 + k pi for tan.
    """
    points = list(rule.avoid)
    if rule.name in ("gamma", "lgamma", "digamma") and x < 0.5:
        points += [float(math.floor(x)), float(math.ceil(x))]
    if rule.name == "tan" and abs(x) < 1e15:
        k = round((x - math.pi / 2) / math.pi)
        points += [math.pi / 2 + j * math.pi for j in (k - 1, k, k + 1)]
    return points


def forward_error(site: Site) -> float:
    """The forward's relative error at the site's point, against the exact value."""
    with_floats = site.func(*(Value(p) for p in site.point)).data
    exact = site.exact.value(site.point)
    if exact != exact or exact == 0:
        return 0.0 if with_floats == 0.0 else math.inf
    return abs(error_of(with_floats, exact) / to_float(abs(exact)))


def cause(o: Outcome) -> str:
    """Why an entry's bound fails, in the words of :data:`CAUSES` (first that applies)."""
    e, rule = o.estimate, o.site.rule
    assert e is not None
    x = o.site.point[o.wrt]
    reach = 10.0 * e.step
    if rule is not None:
        if any(abs(x - p) < reach for p in singular_points(rule, x)):
            return KINK
        if rule.name in ("sin", "cos", "tan") and e.step >= 1.0:
            return PERIOD
        if any(math.isfinite(end) and abs(x - end) < reach for end in rule.domain[o.wrt]):
            return EDGE
    if forward_error(o.site) > 1e-9:
        return FORWARD
    return SMOOTH


def alarm_cause(o: Outcome) -> str:
    """Why the checker called a right entry wrong: :data:`NO_STEP` or one of CAUSES."""
    if o.estimate is None:
        return NO_STEP
    return cause(o).replace("none of these: the bound is too small", "none of these")


def alarms_table(outcomes: Sequence[Outcome]) -> str:
    """The false alarms (a right entry called wrong, or the check raised), by cause."""
    by_cause: dict[str, list[Outcome]] = {}
    for o in outcomes:
        if o.verdict in (WRONG, RAISED):
            by_cause.setdefault(alarm_cause(o), []).append(o)
    rows = []
    for c, alarms in sorted(by_cause.items(), key=lambda kv: -len(kv[1])):
        names = Counter(o.site.name if o.site.rule else "compositions" for o in alarms)
        listed = ", ".join(f"{n} {k}" for n, k in sorted(names.items()))
        rows.append([c, len(alarms), listed])
    return table(["cause", "false alarms", "functions (entries)"], rows)


def beyond_safety(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """Entries without a structural excuse whose true error exceeds SAFETY x the bound."""
    return [o for o in outcomes if o.broken and o.why in (EDGE, SMOOTH) and o.ratio * SAFETY < 1.0]


# The sweep.


def rule_sites(every: int = 1) -> list[Site]:
    """Every rule of the table, argument by argument, at every point of :mod:`places`."""
    sites = []
    for rule in ops.TABLE:
        exact = Exact.of_rule(rule)
        for index in range(rule.arity):
            for group, point in rule_points(rule, index)[::every]:
                sites.append(Site(group, rule.name, rule, point, exact, (index,), rule))
    return sites


def composition_sites(count: int) -> list[Site]:
    """Random compositions at their drawn points; every input is an entry."""
    sites = []
    for k, e in enumerate(compositions(count)):
        sites.append(
            Site(
                COMPOSITIONS,
                f"composition {k}",
                e,
                e.inputs,
                Exact.of_expression(e),
                tuple(range(e.n_inputs)),
            )
        )
    return sites


def measure(site: Site, with_verdicts: bool = True) -> list[Outcome]:
    """The outcomes of a site's entries whose exact derivative is a finite real float."""
    exact = site.exact.gradient(site.point)
    side = numerical_side()
    judged, stated_ests = checked(site.func, site.point)
    if not with_verdicts:
        judged = [""] * len(site.point)
    out = []
    for i in site.wrt:
        want = to_float(exact[i]) if exact[i] == exact[i] else math.nan
        if not math.isfinite(want):
            continue
        inputs = [Value(p) for p in site.point]
        est = stated_ests[i] if side is stated else side(site.func, inputs, i)
        if est is None:
            out.append(Outcome(site, i, want, None, math.nan, 0.0, judged[i]))
            continue
        floor = representable(exact[i])
        broken = beyond(est.value, est.error, exact[i])
        true_error = error_of(est.value, exact[i])
        outcome = Outcome(site, i, want, est, true_error, floor, judged[i], broken)
        if broken:
            outcome.why = cause(outcome)
        if side is mirror:
            starts = mirror_all(site.func, site.point, i)
            outcome.starts = len(starts)
            outcome.starts_broken = sum(beyond(s.value, s.error, exact[i]) for s in starts)
        out.append(outcome)
    return out


def sweep(compositions_drawn: int, every: int, label: str = "coverage") -> list[Outcome]:
    """Every outcome of the sweep: the rules' points (every ``every``-th), then compositions."""
    sites = rule_sites(every) + composition_sites(compositions_drawn)
    outcomes: list[Outcome] = []
    for n, site in enumerate(sites):
        if n % 200 == 0:
            progress(f"{label}: site {n + 1}/{len(sites)}")
        outcomes.extend(measure(site))
    return outcomes


# The tables.


def _ratio_cells(ratios: Sequence[float]) -> list[str]:
    finite = sorted(r for r in ratios if math.isfinite(r))
    if not finite:
        return ["", "", ""]
    p1 = finite[len(finite) // 100]
    return [f"{finite[0]:.3g}", f"{p1:.3g}", f"{statistics.median(finite):.3g}"]


def groups_table(outcomes: Sequence[Outcome]) -> str:
    """One row per group of points and a total: coverage, bound / true error, verdicts."""
    rows = []
    for group in (*GROUPS, "all"):
        inside = [o for o in outcomes if group in ("all", o.site.group)]
        if not inside:
            continue
        estimated = [o for o in inside if o.estimate is not None]
        verdict = Counter(o.verdict for o in inside)
        starts = sum(o.starts for o in estimated)
        rows.append(
            [
                f"**{group}**" if group == "all" else group,
                f"{len(inside):,}",
                len(inside) - len(estimated),
                sum(o.broken for o in estimated),
                sum(o.broken and o.decided for o in estimated),
                *_ratio_cells([o.ratio for o in estimated]),
                f"{sum(o.starts_broken for o in estimated)} of {starts:,}" if starts else "",
                *(verdict[v] for v in VERDICTS),
            ]
        )
    header = ["points", "entries", "no bound stated", "bound < true error", "of which decided"]
    header += ["bound / true error: min", "1st percentile", "median", "single starts broken"]
    return table([*header, *VERDICTS], rows)


#: The bins of bound / true error.
BINS = ((0.0, 1.0), (1.0, 2.0), (2.0, 10.0), (10.0, 1e2), (1e2, 1e4), (1e4, 1e8), (1e8, math.inf))


def distribution_table(outcomes: Sequence[Outcome]) -> str:
    """How many entries fall in each decade band of bound / true error."""
    ratios = [o.ratio for o in outcomes if o.estimate is not None]
    total = len(ratios) or 1
    rows = []
    for lo, hi in BINS:
        n = sum(lo <= r < hi for r in ratios if math.isfinite(r))
        label = "< 1 (bound broken)" if lo == 0.0 else f"{lo:g} to {hi:g}"
        rows.append([label, f"{n:,}", f"{100 * n / total:.1f}%"])
    exact = sum(r == math.inf for r in ratios)
    rows.append(
        ["error within half an ulp of the exact value", f"{exact:,}", f"{100 * exact / total:.1f}%"]
    )
    return table(["bound / true error", "entries", "share"], rows)


def broken_table(outcomes: Sequence[Outcome], every: bool) -> str:
    """The entries whose bound is below their true error, by cause, worst first.

    All of them with ``every``; otherwise every entry without a structural
    cause (EDGE, SMOOTH), and the worst entry per function for the others.
    """
    order = {c: k for k, c in enumerate(CAUSES)}
    broken = sorted((o for o in outcomes if o.broken), key=lambda o: (-order[o.why], o.ratio))
    if not every:
        seen: set[tuple[str, str]] = set()
        shown = []
        for o in broken:
            key = (o.why, o.site.name if o.site.rule else "")
            if o.why in (EDGE, SMOOTH) or key not in seen:
                shown.append(o)
                seen.add(key)
        broken = shown
    header = ["function", "points", "entry", "exact", "estimate", "bound", "true error"]
    return table([*header, "step", "verdict", "cause"], [o.row() for o in broken])


def causes_table(outcomes: Sequence[Outcome]) -> str:
    """The broken entries by cause: how many, the worst bound / true error, the functions."""
    by_cause: dict[str, list[Outcome]] = {c: [] for c in CAUSES}
    for o in outcomes:
        if o.broken:
            by_cause[o.why].append(o)
    rows = []
    for c, broken in by_cause.items():
        if broken:
            names = Counter(o.site.name if o.site.rule else "compositions" for o in broken)
            listed = ", ".join(f"{n} {k}" for n, k in sorted(names.items()))
            worst = min(o.ratio for o in broken)
            decided = sum(o.decided for o in broken)
            rows.append([c, len(broken), decided, f"{worst:.2g}", listed])
    header = ["cause", "entries", "of which decided", "worst bound / true error"]
    return table([*header, "functions (entries)"], rows)


def report(outcomes: Sequence[Outcome], details: bool = False) -> None:
    """Print the section: what was measured, the tables, the broken entries."""
    estimated = [o for o in outcomes if o.estimate is not None]
    broken = [o for o in estimated if o.broken]
    rules = {o.site.name for o in outcomes if o.site.rule is not None}
    drawn = {o.site.name for o in outcomes if o.site.rule is None}
    side = numerical_side()
    plain = [o for o in broken if o.why in (EDGE, SMOOTH)]
    beyond = beyond_safety(outcomes)
    print(
        f"{len(outcomes):,} entries at {len({id(o.site) for o in outcomes}):,} points "
        f"({len(rules)} rules of `minigrad.ops.TABLE`, {len(drawn)} compositions); "
        f"minigrad {minigrad.__version__} (git {git_revision()}); the numerical side: "
        f"`{side.__module__.replace('__main__', 'bounds')}.{side.__qualname__}`. "
        "The stated bound is below the true "
        f"error at **{len(broken):,}** of {len(estimated):,} entries that state one "
        f"({100 * len(broken) / max(len(estimated), 1):.2f}%); the checker decided "
        f"{sum(o.decided for o in broken):,} of those. {len(plain)} of the broken entries "
        "have none of the structural causes below (a kink, pole or jump, a period, an "
        f"inaccurate forward); {SAFETY:g} x the bound covers "
        + ("all of them" if not beyond else f"all but {len(beyond)} of them")
        + (
            f" (the worst bound / true error is {min(o.ratio for o in plain):.2g}).\n"
            if plain
            else ".\n"
        )
    )
    shares = Counter(o.verdict for o in outcomes)
    print(
        "The checker's verdicts over all entries: "
        + ", ".join(f"{v} {100 * shares[v] / len(outcomes):.1f}%" for v in VERDICTS)
        + f" (decided: {100 * (shares[AGREES] + shares[WRONG]) / len(outcomes):.1f}%).\n"
    )
    print(groups_table(outcomes))
    print(
        "\n*bound < true error*: |estimate - exact| > bound + half an ulp of the exact value "
        "(no float is closer), decided in exact arithmetic. *of which decided*: the "
        "checker's verdict on those entries was not `undecided`. *bound / true error*: "
        "over the entries with an estimate; an estimate within half an ulp of the exact "
        "value counts as infinite. *no bound stated*: the entry is undecided and its "
        "numbers bound nothing (a kink, a jump, estimates that disagree), so its error is "
        "infinite, or the check raised. *single starts broken* (only with `bounds.mirror` "
        "as the numerical side): each start's own estimate and bound. Verdicts and "
        "estimates: one `minigrad.check` at its defaults per function and point, its "
        "`Report.entries`; every function is right, so `wrong` is a false alarm.\n"
    )
    print(distribution_table(outcomes))
    if any(o.verdict in (WRONG, RAISED) for o in outcomes):
        print("\nThe checker's false alarms, by cause (as above, whether or not the bound held):\n")
        print(alarms_table(outcomes))
    if broken:
        print("\nWhere the bound fails, by cause (the first that applies, in this order):\n")
        print(causes_table(outcomes))
        which = "all" if details else "the worst per function and cause; `--details`: all"
        print(f"\nThe entries ({which}), worst first within a cause:\n")
        print(broken_table(outcomes, every=details))


def bench_coverage(bench: Bench, sizes: Sequence[int]) -> None:
    """Section (h): the sweep at ``sizes = (compositions drawn, every how many points)``."""
    drawn, every = sizes
    outcomes = sweep(drawn, every)
    report(outcomes)
    broken = [o for o in outcomes if o.broken]
    found = bench.found.numbers
    found["coverage entries"] = len(outcomes)
    found["coverage broken"] = len(broken)
    found["coverage broken decided"] = sum(o.decided for o in broken)
    found["coverage beyond safety"] = len(beyond_safety(outcomes))
    found["coverage undecided"] = sum(o.verdict == UNDECIDED for o in outcomes) / len(outcomes)


COVERAGE_TARGETS = (
    Target(
        "coverage sweep (>= 10,000 entries): the stated bound below the true error nowhere",
        "coverage broken",
        "<=",
        0,
        lambda m: (
            f"{m['coverage broken']:.0f} of {m['coverage entries']:,.0f} entries "
            f"({m['coverage broken decided']:.0f} decided on it; "
            f"{100 * m['coverage undecided']:.1f}% of all entries undecided)"
        ),
    ),
    Target(
        f"coverage sweep: {SAFETY:g} x the bound covers the true error away from kinks, "
        "poles, periods and inaccurate forwards",
        "coverage beyond safety",
        "<=",
        0,
        lambda m: f"{m['coverage beyond safety']:.0f} entries beyond it",
    ),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="the small sweep CI runs")
    parser.add_argument("--details", action="store_true", help="list every broken entry")
    args = parser.parse_args(argv)
    drawn, every = QUICK if args.quick else FULL
    start = time.perf_counter()
    outcomes = sweep(drawn, every)
    print("# Coverage of the numerical derivative's error bound\n")
    report(outcomes, args.details)
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
