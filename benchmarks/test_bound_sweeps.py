"""The small CI versions of sections (h) and (i): the bound's coverage and the sensitivity.

``bounds.QUICK`` (every 12th point of every rule, a dozen compositions, about
900 entries) and ``sensitivity`` with ``quick=True`` on minigrad alone (torch
and jax are never test dependencies) run in a few seconds. The goals the
issue sets (the stated bound below the true error nowhere; every error of
1e-8 or more caught where float64 resolves it) are asserted.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import pytest

import bounds
import hard
import minigrad
import sensitivity
from minigrad import Value, ops
from minigrad.checking.numeric.estimate import Estimate
from mistakes import FLOAT32, FLOATS, MISTAKES, f32, injected
from oracle import Exact
from places import GROUPS, rule_points
from sweep import FAIL, FUNCTIONS


@functools.cache
def _quick_sweep() -> tuple[bounds.Outcome, ...]:
    return tuple(bounds.sweep(*bounds.QUICK))


@functools.cache
def _quick_sensitivity() -> tuple[sensitivity.Result, ...]:
    tool = sensitivity.minigrad_tool()
    cases = sensitivity.injected_cases(quick=True) + sensitivity.realistic_cases(quick=True)
    return tuple(sensitivity.run_all(tool, cases))


def _listed(outcomes: Sequence[bounds.Outcome]) -> str:
    return "\n".join(" | ".join(o.row()) for o in outcomes[:20])


# The oracle and the sweep can fail.


@pytest.mark.parametrize("rule", ops.TABLE, ids=[r.name for r in ops.TABLE])
def test_the_oracle_agrees_with_minigrads_derivatives_at_ordinary_points(
    rule: minigrad.Rule,
) -> None:
    exact = Exact.of_rule(rule)
    for index in range(rule.arity):
        sample = [point for group, point in rule_points(rule, index) if group == "sample box"]
        assert len(sample) >= 8
        for point in sample:
            xs = [Value(p) for p in point]
            rule(*xs).backward()
            want = float(exact.gradient(point)[index])
            assert xs[index].grad == pytest.approx(want, rel=1e-9, abs=1e-12), (rule.name, point)


def test_the_quick_sweep_covers_every_rule_every_group_and_compositions() -> None:
    outcomes = _quick_sweep()
    assert len(outcomes) >= 800
    assert {o.site.name for o in outcomes if o.site.rule} == {r.name for r in ops.TABLE}
    assert {o.site.group for o in outcomes} == set(GROUPS)
    assert all(o.verdict in bounds.VERDICTS for o in outcomes)


def test_a_bound_below_the_true_error_is_found_and_explained(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def overconfident(func: bounds.Func, inputs: Sequence[Value], i: int) -> Estimate | None:
        e = bounds.mirror(func, inputs, i)
        return (
            None if e is None else Estimate(e.value * (1 + 1e-6), e.error * 1e-6, e.step, 0.0, True)
        )

    monkeypatch.setattr(bounds, "numerical_side", lambda: overconfident)
    site = bounds.Site("sample box", "sin", ops.SIN, (0.7,), Exact.of_rule(ops.SIN), (0,), ops.SIN)
    (outcome,) = bounds.measure(site)
    assert outcome.broken and outcome.ratio < 1e-3
    assert outcome.why == bounds.SMOOTH
    # The injected 1e-6 dominates; the estimate's own error (a few 1e-12) is the slack.
    assert outcome.true_error == pytest.approx(1e-6 * math.cos(0.7), rel=1e-5)


def test_kinks_poles_and_periods_are_named_as_the_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    # The checker states no bound at these points (they are undecided): the
    # causes are named for the extrapolation's own estimates.
    monkeypatch.setattr(bounds, "numerical_side", lambda: bounds.mirror)

    def measured(rule: minigrad.Rule, x: float) -> bounds.Outcome:
        site = bounds.Site(
            "kinks and poles", rule.name, rule, (x,), Exact.of_rule(rule), (0,), rule
        )
        (outcome,) = bounds.measure(site, with_verdicts=False)
        return outcome

    # No bound the ladder states is broken beside a kink (abs at 1e-300: steps
    # below |x| see one side), at a pole 1e-15 away, or where 64 ulps span
    # thousands of periods (no bound at all there).
    assert not measured(ops.ABS, 1e-300).broken
    assert not measured(ops.LGAMMA, -2.000000000000001).broken
    assert measured(ops.SIN, 1e20).estimate is None
    smooth = measured(ops.SIN, 0.7)
    assert smooth.estimate is not None and not smooth.broken and smooth.why == ""


# The bound: what holds today, and the goal.


def test_the_bound_with_its_safety_factor_covers_the_true_error_away_from_kinks() -> None:
    beyond = bounds.beyond_safety(_quick_sweep())
    assert beyond == [], f"true error > {bounds.SAFETY} x bound at:\n{_listed(beyond)}"


def test_no_verdict_rests_on_a_broken_bound() -> None:
    outcomes = _quick_sweep()
    broken = [o for o in outcomes if o.broken]
    assert broken == [], f"the stated bound is below the true error at:\n{_listed(broken)}"


def test_the_sweep_reads_the_bound_the_report_states() -> None:
    # Decided: the report's own numbers. At a kink (abs at 5e-324: every step
    # straddles 0) the entry is undecided and states no bound.
    report = minigrad.check(ops.SIN, [Value(0.7)])
    (entry,) = report.entries
    est = bounds.stated(ops.SIN, [Value(0.7)], 0)
    assert est is not None and (est.value, est.error) == (entry.numerical, entry.error)
    assert bounds.stated(ops.ABS, [Value(5e-324)], 0) is None


def test_no_right_rule_is_called_wrong() -> None:
    wrong = [o for o in _quick_sweep() if o.verdict in (bounds.WRONG, bounds.RAISED)]
    assert wrong == [], _listed(wrong)


# Sensitivity.


def test_the_injected_and_realistic_errors_are_the_sizes_they_claim() -> None:
    sin = FUNCTIONS[3]
    assert injected(sin, 1e-3).df(FLOATS, 0.5, math.sin(0.5)) / math.cos(0.5) == 1.001
    cases = [c for c, _, _ in _quick_sensitivity()]
    rounded = [c for c in cases if c.family == FLOAT32]
    assert rounded
    for c in rounded:
        written = abs(c.op.df(FLOATS, c.x, c.op.f(FLOATS, c.x)))
        # Rounded to float32: 2**-24 relatively at most, unless beyond its normal range.
        assert 0.0 < c.error <= 2.0**-24 or not 1.2e-38 < written < 3.4e38, (c.op.name, c.x)
    softplus = next(wrong for name, wrong, _ in MISTAKES if name.startswith("softplus"))
    written = softplus.df(FLOATS, 10.5, softplus.f(FLOATS, 10.5))
    assert written == 1.0 and 1.0 / (1.0 + math.exp(-10.5)) == pytest.approx(1 - 2.75e-5, rel=1e-6)
    assert f32(1.0 / 3.0) != 1.0 / 3.0


def test_minigrad_catches_a_10_percent_error_where_the_derivative_is_of_order_one() -> None:
    sin_off = injected(FUNCTIONS[3], 0.1)
    outcome, message = sensitivity.minigrad_tool().run(sin_off, 0.7)
    assert outcome == FAIL, message


def test_no_false_alarm_on_the_right_rules_of_the_sensitivity_section() -> None:
    alarms = [
        (c.family, c.op.name, c.x, o, m)
        for c, o, m in _quick_sensitivity()
        if c.error == 0.0 and o not in ("pass", "warn")
    ]
    assert alarms == []


def test_every_error_of_1e_9_or_more_is_caught_where_float64_resolves_it() -> None:
    results = _quick_sensitivity()
    goal = [
        (c.family, c.op.name, c.x, c.error, o)
        for c, o, _ in results
        if c.error >= sensitivity.CAUGHT
        and (c.well_conditioned if c.family == "injected" else c.resolvable)
    ]
    missed = [g for g in goal if g[-1] != FAIL]
    assert goal and missed == []


# The hard places of issue 26 (benchmarks/hard.py), minigrad's default alone.


@functools.cache
def _hard() -> tuple[list[list[object]], dict[str, object]]:
    rows, _, summary = hard.measure(["minigrad"], ways=("default",))
    return rows, summary


def test_no_false_alarm_at_the_hard_places() -> None:
    rows, summary = _hard()
    mine = summary["minigrad"]
    assert isinstance(mine, dict)
    assert mine["alarms"] == 0, [r for r in rows if "FALSE ALARM" in str(r[-1])]


def test_no_false_alarm_with_the_sine_inside_the_rule() -> None:
    _, summary = _hard()
    mine = summary["minigrad"]
    assert isinstance(mine, dict)
    assert mine["inside"] == 0


@pytest.mark.parametrize(
    ("counted", "beyond", "least"),
    [
        ("within a decade", "beyond", 15),  # of what central differences resolve
        ("of extrapolation", "beyond extrapolation", 14),  # of what dfridr resolves
    ],
    ids=["central differences", "extrapolation"],
)
def test_the_smallest_error_caught_is_within_a_decade_of_what_float64_resolves(
    counted: str, beyond: str, least: int
) -> None:
    _, summary = _hard()
    found = summary[counted]
    assert isinstance(found, list)
    within = int(found[0])
    assert within >= least, summary.get(beyond)


@pytest.mark.parametrize(
    ("f", "x", "h", "exact", "within"),
    [
        (math.exp, 0.0, 0.1, 1.0, 1e-13),
        (lambda t: 1.0 / t, 1e-100, 5e-101, -1e200, 1e-13),
        (math.sin, 1e8, 0.1, math.cos(1e8), 1e-7),
    ],
)
def test_the_yardstick_is_ridders_method_as_the_textbook_gives_it(
    f: Callable[[float], float], x: float, h: float, exact: float, within: float
) -> None:
    # Numerical Recipes' dfridr: its own tableau, apart from minigrad's, so
    # the yardstick does not move with the checker it measures.
    got = hard.dfridr(f, x, h)
    assert got is not None and abs(got - exact) <= within * abs(exact), got
