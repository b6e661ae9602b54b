"""Issue 26's resolution: the smallest rule error a check catches, against what float64 resolves.

Ridders' tableau cancelled the wrong powers of the step in its higher columns
until 2026-11-27 (see ``tests/test_verdicts.py``), so its estimates were
poorer, and their bounds wider, than the method gives. With that mended a
check resolves what a textbook extrapolation resolves (``benchmarks/hard.py``).
The tests below say, each, whether it failed at 8946a82 (the tree before) or
guards a right rule against the sharper estimates.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import minigrad as mg
from minigrad import Report, Rule, Value, check
from minigrad.checking.numeric.fine import FineMean, fine_mean
from minigrad.checking.numeric.ridders import _ridders
from minigrad.checking.numeric.steps import Estimate
from minigrad.checking.verdicts.convict import convict
from minigrad.checking.verdicts.evidence import Disagreement
from minigrad.checking.verdicts.findings import AGREES, UNDECIDED, WRONG
from minigrad.checking.verdicts.scales import weigh

Slope = Callable[[Any, Any], Any]


def _checked(forward: Callable[[float], float], slope: Slope, x: float, r: float = 0.0) -> Report:
    """A check of a custom rule whose partial is ``(1 + r)`` times ``slope``."""
    rule = Rule("mine", forward, (lambda t, out: (1.0 + r) * slope(t, out),))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        return check(lambda v: rule(v), [Value(x)])


def _silent(report: Report) -> bool:
    return report.ok and not report.warnings


# Sharper estimates: what 8946a82 let pass.


@pytest.mark.parametrize("x", [1e-100, 1e-150])
def test_a_rule_1e_10_off_beside_the_edge_at_0_is_caught(x: float) -> None:
    # At 8946a82: "agrees to 9 digits with the one-sided derivative", although
    # a sharper central estimate resolved the difference.
    report = _checked(lambda t: 1.0 / t, lambda t, out: -out * out, x, 1e-10)
    assert not report.ok, report.text()


@pytest.mark.parametrize("distance", [1e-6, 1e-10])
def test_a_rule_1e_11_off_beside_a_pole_is_caught(distance: float) -> None:
    # At 8946a82 it agreed to 9 digits: what float64 resolves there is 1e-11.
    report = _checked(lambda t: 1.0 / (t - 1.0), lambda t, out: -out * out, 1.0 + distance, 1e-11)
    assert not report.ok, report.text()


def test_tanh_at_6_3_is_caught_from_1e_7() -> None:
    # At 8946a82 a rule 1e-7 off "agreed to 6 digits".
    report = _checked(math.tanh, lambda t, out: 1.0 - out * out, 6.3, 1e-7)
    assert not report.ok, report.text()


def test_cos_minus_1_near_0_is_caught_from_1e_9() -> None:
    # At 8946a82 the smallest error caught there was 1e-7.
    report = _checked(lambda t: math.cos(t) - 1.0, lambda t, out: -mg.sin(t), 1e-4, 1e-9)
    assert not report.ok, report.text()


def test_a_sharper_estimate_well_off_forbids_a_blunter_agreement() -> None:
    # At 8946a82 the blunt estimate's agreement stood (a sharper one had to
    # convict to overrule it, and 5 bounds do not).
    blunt, sharp = Estimate(2.0, 1e-6, 1e-3), Estimate(2.0, 1e-9, 1e-1)
    a = 2.0 + 5e-9
    found = weigh(a, 0.0, [blunt, sharp])
    assert found.verdict == UNDECIDED, found.reason
    assert "times its bound" in found.reason
    # Within 4 of its bounds (the broken bounds of the coverage sweep reach 4),
    # the agreement stands.
    assert weigh(2.0 + 3e-9, 0.0, [blunt, sharp]).verdict == AGREES


def test_log_at_1e6_1e_9_off_is_never_a_silent_pass() -> None:
    report = _checked(math.log, lambda t, out: 1.0 / t, 1e6, 1e-9)
    assert not _silent(report), report.text()


# The fine steps: their mean carries its own scatter.


def _charge(fine: FineMean) -> Disagreement:
    one, two = Estimate(2.0, 1e-9, 1e-3), Estimate(2.0, 1e-9, 1e-2)
    return Disagreement(
        analytic=2.2, roundoff=0.0, pair=(one, two), best=one, estimates=(one, two), fine=fine
    )


def test_a_fine_mean_that_scatters_sets_no_conviction_aside() -> None:
    # At 8946a82 a FineMean had no spread: any mean near the analytic value
    # set the conviction aside, and a gelu with 1 + erf at -3.1, whose
    # quotients scatter by 800 ulps, was acquitted by chance.
    noisy = FineMean(mean=2.2, spread=0.05, low=1e-8, high=2e-8)
    assert convict(_charge(noisy)).verdict == WRONG
    steady = FineMean(mean=2.2, spread=0.001, low=1e-8, high=2e-8)
    assert convict(_charge(steady)).verdict == UNDECIDED


def test_the_fine_mean_measures_its_scatter_without_overflow() -> None:
    def f(t: float) -> list[float]:
        return [1.0 / t]

    x = 1e-150
    got = fine_mean(f, x, 0, here=f(x), noise=0.0, gap=1e291, step=1e-151)
    assert got is not None and math.isfinite(got.spread) and got.spread >= 0.0


@pytest.mark.parametrize("r", [1e-6, 1e-8, 1e-9])
def test_gelu_with_1_plus_erf_at_minus_3_1_is_caught(r: float) -> None:
    s = 1.0 / math.sqrt(2.0)
    c = 1.0 / math.sqrt(2.0 * math.pi)
    report = _checked(
        lambda t: 0.5 * t * (1.0 + math.erf(t * s)),
        lambda t, out: 0.5 * (1.0 + mg.erf(t * s)) + t * mg.exp(-0.5 * t * t) * c,
        -3.1,
        r,
    )
    assert not report.ok, report.text()


# Right rules the sharper estimates must not convict.


@pytest.mark.parametrize(
    ("name", "forward", "slope", "x"),
    [
        ("atanh", math.atanh, lambda t, out: 1.0 / (1.0 - t * t), 1.0 - 1e-9),
        ("asin", math.asin, lambda t, out: 1.0 / mg.sqrt(1.0 - t * t), 1.0 - 1e-9),
        ("acos", math.acos, lambda t, out: -1.0 / mg.sqrt(1.0 - t * t), -1.0 + 1e-10),
        ("tanh", math.tanh, lambda t, out: 1.0 - out * out, 9.0),
    ],
)
def test_a_textbook_partial_that_rounds_is_not_called_wrong(
    name: str, forward: Callable[[float], float], slope: Slope, x: float
) -> None:
    # 1 / (1 - x * x) at 1 - 1e-9 is 0.25 off a slope of 5e8 (x * x rounds);
    # the numerical derivative is good to 0.03. The partial's own round-off,
    # read off its graph, is the analytic side's.
    report = _checked(forward, slope, x)
    assert report.ok, (name, report.text())
    assert not _checked(forward, slope, x, 1e-2).ok, name


def test_the_tableau_goes_on_below_a_start_beyond_the_series_radius() -> None:
    # tanh at 15 from a step of 3.9 (its series in h converges within pi / 2):
    # the first rows mislead the highest columns; the next rows' lower columns
    # do not. Stopping at the first row that moved left the estimate 2e-13 +-
    # 3e-12 off a slope of 3.7e-13.
    exact = 4.0 * math.exp(-30.0) / (1.0 + math.exp(-30.0)) ** 2
    got = _ridders(lambda t: [math.tanh(t)], 15.0, 3.87, [0], [2.0 * math.ulp(1.0)])[0]
    assert abs(got.value - exact) <= got.error < 0.1 * exact, got


def test_a_report_prints_derivatives_1e_10_apart_as_different_numbers() -> None:
    # At 8946a82 the table, the summary and the cause all printed -1e+12 for
    # both the rule's slope and the numerical one.
    report = _checked(lambda t: 1.0 / (t - 1.0), lambda t, out: -out * out, 1.0 + 1e-6, 1e-10)
    text = report.text()
    assert "-1.0000000003e+12" in text and "-1.0000000002e+12" in text, text
    cause = next(line for line in text.splitlines() if line.startswith("cause:"))
    assert "is -1.0000000003e+12 by its rule but -1.0000000002e+12" in cause, cause


def test_the_summary_of_a_domain_keeps_the_point_the_check_found_wrong() -> None:
    # At 8946a82: "simplest failing point found: recip_shift(1)" (the pole, in
    # 6 digits) and "right on [-2, 2]": the quicker checks of the summary do not
    # resolve 1e-10 and called the failing point itself right.
    rule = Rule(
        "recip_shift", lambda t: 1.0 / (t - 1.0), (lambda t, out: -(1 + 1e-10) * out * out,)
    )
    text = check(lambda v: rule(v), [Value(1.0 + 1e-6)]).text()
    assert "simplest failing point found: recip_shift(1.000001)" in text, text
    summary = next(line for line in text.splitlines() if "sample interval" in line)
    assert "wrong near 1.000001" in summary and "right on [-2, 2]" not in summary, summary
