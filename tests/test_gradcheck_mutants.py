"""The checkers against wrong rules: every mutant must be caught, by the right check.

A checker that cannot fail is worthless, so each test here feeds the checkers a
deliberately wrong derivative rule, written through the public custom-op API
(:class:`minigrad.Rule`), and asserts three things: the check of the order at
which the rule is wrong fails (and the check one order below passes, so the
mutant really is of that order), the failing entries are of that order, and
the report names the op (``report.fault`` and the error message).

Mutant classes (``KINDS``): a sign flip, a missing factor, swapped partials, a
derivative taken at the wrong point, a partial computed from ``value_of`` or
``.data`` (right at first order, wrong at second), wrong mixed partials whose
Hessian column sums are right (invisible to lucid's sum-of-gradients helper),
a shift-invariant ``g(x - y)`` with a wrong ``g''`` (Hessian columns sum to
zero, so column sums see nothing), a wrong first derivative under
gradgradcheck (PyTorch's gradgradcheck passes it), and third-order mutants; and
a partial that is right on floats but wrong on Values (the create_graph path).
Each mutant is tried alone and inside a composite, at several points, in
exhaustive mode, fast mode and with Richardson extrapolation.

The number of mutants caught is printed in pytest's terminal summary.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from minigrad import (
    GradcheckError,
    Report,
    Rule,
    Value,
    check,
    check_grads,
    cos,
    exp,
    grad,
    gradcheck,
    gradgradcheck,
)
from minigrad.ops import value_of
from summary import closing_line

#: Mutants caught, per class; printed at the end of the session.
CAUGHT: Counter[str] = Counter()

Fn = Callable[..., Value]


def _bump(u: float | Value) -> float | Value:
    """Zero in value, slope one: ``u - value_of(u)`` (a wrong derivative, invisibly)."""
    return u - value_of(u)


def _lift(rule: Rule, on_floats: Callable[[float], float]) -> Callable[[float | Value], Any]:
    """A partial that applies ``rule`` to Values and ``on_floats`` to floats."""

    def partial(x: float | Value) -> Any:
        return rule(x) if isinstance(x, Value) else on_floats(x)

    return partial


# Sign flip of a partial.
SIN_SIGNFLIP = Rule("sin_signflip", math.sin, (lambda x, out: -cos(x),))
EXP_SIGNFLIP = Rule("exp_signflip", math.exp, (lambda x, out: -out,))
TANH_SIGNFLIP = Rule("tanh_signflip", math.tanh, (lambda x, out: out * out - 1.0,))
XY2_SIGNFLIP = Rule(
    "xy2_signflip",
    lambda x, y: x * y * y,
    (lambda x, y, out: y * y, lambda x, y, out: -2.0 * x * y),
)

# A missing factor: d/dx sin(2x) without the 2, d/dx exp(x**2) without 2x.
SIN2X_NOFACTOR = Rule("sin2x_nofactor", lambda x: math.sin(2.0 * x), (lambda x, out: cos(2.0 * x),))
EXPSQ_NOFACTOR = Rule("expsq_nofactor", lambda x: math.exp(x * x), (lambda x, out: out,))

# Swapped partials of two-input ops: x * y**2 and x * exp(y).
XY2_SWAPPED = Rule(
    "xy2_swapped",
    lambda x, y: x * y * y,
    (lambda x, y, out: 2.0 * x * y, lambda x, y, out: y * y),
)
XEXPY_SWAPPED = Rule(
    "xexpy_swapped",
    lambda x, y: x * math.exp(y),
    (lambda x, y, out: out, lambda x, y, out: exp(y)),
)

# The derivative evaluated at the wrong point.
SIN_SHIFTED = Rule("sin_shifted", math.sin, (lambda x, out: cos(x + 0.1),))
EXP_SHIFTED = Rule("exp_shifted", math.exp, (lambda x, out: exp(x + 0.1),))

# A partial computed from value_of / .data: the right number, a dead graph.
SIN_DATA = Rule("sin_data", math.sin, (lambda x, out: math.cos(value_of(x)),))
TANH_DATA = Rule("tanh_data", math.tanh, (lambda x, out: 1.0 - value_of(out) ** 2,))
LOG_DOTDATA = Rule(
    "log_dotdata",
    math.log,
    (lambda x, out: 1.0 / (x.data if isinstance(x, Value) else x),),
)
MUL_DATA = Rule(
    "mul_data",
    operator.mul,
    (lambda x, y, out: value_of(y), lambda x, y, out: value_of(x)),
)

# Wrong mixed partials, right column sums: each partial gets +-E * _bump(y - x),
# which adds [[-E, E], [E, -E]] to the Hessian (columns sum to zero) and
# leaves every first derivative right.
E = 0.5
MUL_MIXED = Rule(
    "mul_mixed",
    operator.mul,
    (
        lambda x, y, out: y + E * _bump(y - x),
        lambda x, y, out: x - E * _bump(y - x),
    ),
)
EXPMUL_MIXED = Rule(
    "expmul_mixed",
    lambda x, y: math.exp(x) * y,
    (
        lambda x, y, out: out + E * _bump(y - x),
        lambda x, y, out: exp(x) - E * _bump(y - x),
    ),
)

# Shift-invariant g(x - y), g(u) = log(cosh(u)), with a wrong g''. Its Hessian
# is g'' * [[1, -1], [-1, 1]]: every column sums to zero, whatever g'' is.
TANH_FLIPPED = Rule("tanh_flipped", math.tanh, (lambda u, out: 1.0 + out * out,))
LOGCOSH = Rule(
    "logcosh",
    lambda u: math.log(math.cosh(u)),
    (lambda u, out: _lift(TANH_FLIPPED, math.tanh)(u),),
)
LOGCOSH_DIFF = Rule(
    "logcosh_diff",
    lambda x, y: math.log(math.cosh(x - y)),
    (
        lambda x, y, out: math.tanh(value_of(x) - value_of(y)),
        lambda x, y, out: -math.tanh(value_of(x) - value_of(y)),
    ),
)

# A wrong first derivative that is its own consistent function: the gradient
# of the gradient matches the gradient, so only a first-order check sees it.
SIN_DOUBLED = Rule("sin_doubled", math.sin, (lambda x, out: 2.0 * cos(x),))
# (Written with exp(x), not out: out is the node itself, whose slope is doubled too.)
EXP_DOUBLED = Rule("exp_doubled", math.exp, (lambda x, out: 2.0 * exp(x),))

# Right to order 2, wrong at 3: the partial is an op whose own partial is
# computed from value_of.
COS_L2 = Rule("cos_l2", math.cos, (lambda x, out: -math.sin(value_of(x)),))
SIN_O3 = Rule("sin_o3", math.sin, (lambda x, out: _lift(COS_L2, math.cos)(x),))
EXP_L2 = Rule("exp_l2", math.exp, (lambda x, out: math.exp(value_of(x)),))
EXP_O3 = Rule("exp_o3", math.exp, (lambda x, out: _lift(EXP_L2, math.exp)(x),))


def _unary(rule: Rule) -> Fn:
    return lambda x: rule(x)


def _binary(rule: Rule) -> Fn:
    return lambda x, y: rule(x, y)


def _of_difference(rule: Rule) -> Fn:
    return lambda x, y: rule(x - y)


@dataclass(frozen=True)
class Mutant:
    """A wrong rule, a function that uses it, a point, and where it goes wrong.

    Attributes:
        kind: The mutant class.
        rule: The wrong op; the report must name it.
        func: The function checked.
        point: Where (one float per input).
        order: The lowest derivative order that is wrong.
        context: "bare" (the op alone) or "composite" (inside right ops).
    """

    kind: str
    rule: Rule
    func: Fn
    point: tuple[float, ...]
    order: int
    context: str = "bare"

    def inputs(self) -> list[Value]:
        return [Value(p) for p in self.point]

    def __str__(self) -> str:
        at = ",".join(f"{p:g}" for p in self.point)
        return f"{self.kind}-{self.rule.name}-{self.context}-({at})"


def _in_composite(func: Fn) -> Fn:
    """``func`` inside other ops, each right, so fault localisation has work to do."""

    def composite(*xs: Value) -> Value:
        return 2.0 * func(*(0.9 * x for x in xs)) + xs[0].tanh()

    return composite


# kind, rule, func, points, order
_SPECS: list[tuple[str, Rule, Fn, list[tuple[float, ...]], int]] = [
    ("sign-flip", SIN_SIGNFLIP, _unary(SIN_SIGNFLIP), [(0.3,), (-1.2,), (2.5,)], 1),
    ("sign-flip", EXP_SIGNFLIP, _unary(EXP_SIGNFLIP), [(0.5,), (-1.0,)], 1),
    ("sign-flip", TANH_SIGNFLIP, _unary(TANH_SIGNFLIP), [(0.2,), (-0.9,)], 1),
    ("sign-flip", XY2_SIGNFLIP, _binary(XY2_SIGNFLIP), [(0.7, 1.3), (-1.1, 0.4)], 1),
    ("missing-factor", SIN2X_NOFACTOR, _unary(SIN2X_NOFACTOR), [(0.3,), (-1.0,), (1.4,)], 1),
    ("missing-factor", EXPSQ_NOFACTOR, _unary(EXPSQ_NOFACTOR), [(0.2,), (-0.8,), (1.1,)], 1),
    ("swapped", XY2_SWAPPED, _binary(XY2_SWAPPED), [(0.7, 1.3), (-1.1, 0.4), (0.5, -1.5)], 1),
    ("swapped", XEXPY_SWAPPED, _binary(XEXPY_SWAPPED), [(0.4, 0.3), (-1.5, 0.8)], 1),
    ("wrong-point", SIN_SHIFTED, _unary(SIN_SHIFTED), [(0.5,), (1.5,), (-2.0,)], 1),
    ("wrong-point", EXP_SHIFTED, _unary(EXP_SHIFTED), [(0.3,), (-1.0,)], 1),
    ("value-of", SIN_DATA, _unary(SIN_DATA), [(0.5,), (1.5,), (-2.0,)], 2),
    ("value-of", TANH_DATA, _unary(TANH_DATA), [(0.5,), (-1.0,)], 2),
    ("value-of", LOG_DOTDATA, _unary(LOG_DOTDATA), [(0.5,), (2.0,)], 2),
    ("value-of", MUL_DATA, _binary(MUL_DATA), [(0.3, -0.8), (1.2, 0.7)], 2),
    ("mixed-partials", MUL_MIXED, _binary(MUL_MIXED), [(0.3, -0.8), (1.2, 0.7)], 2),
    ("mixed-partials", EXPMUL_MIXED, _binary(EXPMUL_MIXED), [(0.2, 1.5), (-0.7, -0.4)], 2),
    ("shift-invariant", LOGCOSH, _of_difference(LOGCOSH), [(0.3, -0.4), (1.0, 0.2)], 2),
    ("shift-invariant", LOGCOSH_DIFF, _binary(LOGCOSH_DIFF), [(0.3, -0.4), (1.0, 0.2)], 2),
    ("first-order-under-gradgrad", SIN_DOUBLED, _unary(SIN_DOUBLED), [(0.5,), (-1.3,)], 1),
    ("first-order-under-gradgrad", EXP_DOUBLED, _unary(EXP_DOUBLED), [(0.3,), (-0.5,)], 1),
    ("third-order", SIN_O3, _unary(SIN_O3), [(0.5,), (-1.0,), (2.5,)], 3),
    ("third-order", EXP_O3, _unary(EXP_O3), [(0.3,), (-0.6,)], 3),
]

KINDS = sorted({kind for kind, *_ in _SPECS})

MUTANTS: list[Mutant] = [
    Mutant(kind, rule, wrapped, point, order, context)
    for kind, rule, func, points, order in _SPECS
    for context, wrapped in (("bare", func), ("composite", _in_composite(func)))
    for point in points
]


def _assert_names_the_op(report: Report, rule: Rule) -> None:
    __tracebackhide__ = True
    assert f"op {rule.name!r}" in report.fault, report.text()
    assert f"'{rule.name}'" in report.text()


def _assert_wrong_rule_diagnosis(report: Report) -> None:
    """A genuine wrong rule is never explained away as a kink or as truncation."""
    __tracebackhide__ = True
    for entry in report.failures:
        assert "kink" not in entry.note, report.text()
        assert "not differentiable" not in entry.note, report.text()
        assert "rule looks right" not in entry.note, report.text()
    assert "kink" not in report.fault, report.text()
    assert report.kinks == [], report.text()


# Every mutant, through check(): caught at its order, not below, op named.


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_mutant_is_caught_at_its_order_and_named(mutant: Mutant) -> None:
    report = check(mutant.func, mutant.inputs(), order=mutant.order)
    assert not report.ok, f"{mutant} passed: {report.text()}"
    assert report.order == mutant.order
    assert report.failures
    assert {e.order for e in report.failures} == {mutant.order}
    assert all(not e.passed for e in report.failures)
    _assert_names_the_op(report, mutant.rule)
    _assert_wrong_rule_diagnosis(report)
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.order > 1], ids=str)
def test_mutant_is_right_below_its_order(mutant: Mutant) -> None:
    # The mutant design itself: a second-order mutant passes the first-order
    # check, a third-order one the second-order check.
    report = check(mutant.func, mutant.inputs(), order=mutant.order - 1)
    assert report.ok, report.text()
    assert report.checked > 0


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_the_public_checker_of_its_order_raises_naming_the_op(mutant: Mutant) -> None:
    checkers: dict[int, Callable[[Fn, list[Value]], bool]] = {
        1: gradcheck,
        2: gradgradcheck,
        3: lambda f, xs: check_grads(f, xs, order=3),
    }
    checker = checkers[mutant.order]
    with pytest.raises(GradcheckError) as excinfo:
        checker(mutant.func, mutant.inputs())
    message = str(excinfo.value)
    assert f"op {mutant.rule.name!r}" in message
    assert excinfo.value.report.order == mutant.order
    _assert_names_the_op(excinfo.value.report, mutant.rule)
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_fast_mode_catches_the_mutant_and_lists_exact_entries(mutant: Mutant) -> None:
    exhaustive = check(mutant.func, mutant.inputs(), order=mutant.order)
    fast = check(mutant.func, mutant.inputs(), order=mutant.order, fast_mode=True)
    assert not fast.ok, fast.text()
    assert fast.fast
    assert fast.order == mutant.order
    # After the fast direction fails, the level is rerun entry by entry.
    assert fast.failures == exhaustive.failures
    assert fast.fault == exhaustive.fault
    assert "then exhaustive" in fast.text()
    _assert_names_the_op(fast, mutant.rule)
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.context == "bare"], ids=str)
def test_fast_mode_catches_the_mutant_for_any_seed(mutant: Mutant, seed: int) -> None:
    report = check(mutant.func, mutant.inputs(), order=mutant.order, fast_mode=True, seed=seed)
    assert not report.ok, report.text()
    assert report.order == mutant.order
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_richardson_catches_the_mutant(mutant: Mutant) -> None:
    report = check(mutant.func, mutant.inputs(), order=mutant.order, method="richardson")
    assert not report.ok, report.text()
    assert report.order == mutant.order
    _assert_names_the_op(report, mutant.rule)
    _assert_wrong_rule_diagnosis(report)
    CAUGHT[mutant.kind] += 1


# Class by class: what makes each one hard, and the check that sees it anyway.


@pytest.mark.parametrize("point", [0.5, 1.5, -2.0])
def test_value_of_partial_passes_gradcheck_and_fails_gradgradcheck(point: float) -> None:
    x = Value(point)
    assert gradcheck(lambda a: SIN_DATA(a), [x]) is True
    with pytest.raises(GradcheckError) as excinfo:
        gradgradcheck(lambda a: SIN_DATA(a), [x])
    report = excinfo.value.report
    (entry,) = report.failures
    assert (entry.order, entry.path, entry.wrt) == (2, (0,), 0)
    # The dead graph differentiates to 0; the truth is -sin(x).
    assert entry.analytic == 0.0
    assert entry.numerical == pytest.approx(-math.sin(point), rel=1e-6)
    assert "'sin_data'" in report.fault
    CAUGHT["value-of"] += 1


def _lucid_helper(func: Fn) -> Fn:
    """lucid's gradgradcheck helper: the sum of the gradient's components."""

    def helper(*xs: Value) -> Value:
        total = Value(0.0)
        for g in grad(func(*xs), list(xs), create_graph=True):
            total = total + g
        return total

    return helper


def _flat(rows: list[list[float]]) -> list[float]:
    return [v for row in rows for v in row]


def _hessian(func: Fn, point: tuple[float, ...]) -> list[list[float]]:
    """The analytic Hessian by reverse over reverse: row i is grad of d f / d x_i."""
    xs = [Value(p) for p in point]
    first = grad(func(*xs), xs, create_graph=True)
    return [[h.data for h in grad(g, xs)] for g in first]


_MIXED_CASES: list[tuple[Rule, Fn, Callable[[float, float], list[list[float]]]]] = [
    (MUL_MIXED, lambda x, y: x * y, lambda x, y: [[0.0, 1.0], [1.0, 0.0]]),
    (
        EXPMUL_MIXED,
        lambda x, y: x.exp() * y,
        lambda x, y: [[math.exp(x) * y, math.exp(x)], [math.exp(x), 0.0]],
    ),
]


@pytest.mark.parametrize("point", [(0.3, -0.8), (1.2, 0.7), (-0.7, -0.4)])
@pytest.mark.parametrize(
    ("rule", "correct", "exact"), _MIXED_CASES, ids=[rule.name for rule, *_ in _MIXED_CASES]
)
def test_wrong_mixed_partials_with_right_column_sums(
    rule: Rule,
    correct: Fn,
    exact: Callable[[float, float], list[list[float]]],
    point: tuple[float, float],
) -> None:
    mutant = _binary(rule)
    truth = exact(*point)
    wrong = _hessian(mutant, point)
    assert _flat(_hessian(correct, point)) == pytest.approx(_flat(truth), rel=1e-12, abs=1e-12)
    # d2/dxdy is wrong (so is every entry) ...
    assert wrong[0][1] == pytest.approx(truth[0][1] + E, rel=1e-12)
    assert wrong[1][0] == pytest.approx(truth[1][0] + E, rel=1e-12)
    assert wrong[0][0] == pytest.approx(truth[0][0] - E, rel=1e-12, abs=1e-12)
    # ... yet sum_i d/dx_j (sum_k df/dx_k), all lucid's helper looks at, is right.
    xs = [Value(p) for p in point]
    column_sums = [g.data for g in grad(_lucid_helper(mutant)(*xs), xs)]
    exact_sums = [truth[0][j] + truth[1][j] for j in range(2)]
    assert column_sums == pytest.approx(exact_sums, rel=1e-12, abs=1e-12)
    # So lucid's gradgradcheck (gradcheck of the helper) passes the mutant ...
    assert gradcheck(_lucid_helper(mutant), [Value(p) for p in point]) is True
    # ... and minigrad's, which compares the whole Hessian, fails it.
    with pytest.raises(GradcheckError) as excinfo:
        gradgradcheck(mutant, [Value(p) for p in point])
    report = excinfo.value.report
    assert report.order == 2
    assert {(e.path, e.wrt) for e in report.failures} == {
        ((0,), 0),
        ((0,), 1),
        ((1,), 0),
        ((1,), 1),
    }
    _assert_names_the_op(report, rule)
    CAUGHT["mixed-partials"] += 1


@pytest.mark.parametrize("point", [(0.3, -0.4), (1.0, 0.2), (-0.6, 0.9)])
@pytest.mark.parametrize(
    ("rule", "func"),
    [(LOGCOSH, _of_difference(LOGCOSH)), (LOGCOSH_DIFF, _binary(LOGCOSH_DIFF))],
    ids=["logcosh(x - y)", "logcosh_diff(x, y)"],
)
def test_shift_invariant_function_with_wrong_second_derivative(
    rule: Rule, func: Fn, point: tuple[float, float]
) -> None:
    xs = [Value(p) for p in point]
    # Column sums are zero for the right g'' and for the wrong one alike.
    sums = [g.data for g in grad(_lucid_helper(func)(*xs), xs)]
    assert sums == pytest.approx([0.0, 0.0], abs=1e-12)
    assert gradcheck(_lucid_helper(func), xs) is True
    assert gradcheck(func, xs) is True
    with pytest.raises(GradcheckError) as excinfo:
        gradgradcheck(func, xs)
    report = excinfo.value.report
    assert report.order == 2
    g2 = 1.0 - math.tanh(point[0] - point[1]) ** 2
    worst = report.failures[0]
    assert abs(worst.numerical) == pytest.approx(g2, rel=1e-5)
    _assert_names_the_op(report, rule)
    CAUGHT["shift-invariant"] += 1


@pytest.mark.parametrize("point", [0.5, -1.3, 2.2])
@pytest.mark.parametrize("rule", [SIN_DOUBLED, EXP_DOUBLED], ids=lambda r: r.name)
def test_wrong_first_derivative_fails_gradgradcheck_at_order_one(rule: Rule, point: float) -> None:
    func = _unary(rule)
    # PyTorch's gradgradcheck only checks the gradient of the gradient, and
    # the doubled rule's gradient is a consistent function: that check passes.
    first = lambda a: grad(func(a), [a], create_graph=True)[0]  # noqa: E731
    assert gradcheck(first, [Value(point)]) is True
    with pytest.raises(GradcheckError) as excinfo:
        gradgradcheck(func, [Value(point)])
    report = excinfo.value.report
    assert report.order == 1
    assert [e.order for e in report.failures] == [1]
    assert report.failures[0].analytic == pytest.approx(
        2.0 * report.failures[0].numerical, rel=1e-6
    )
    assert "gradcheck failed at order 1" in str(excinfo.value)
    _assert_names_the_op(report, rule)
    CAUGHT["first-order-under-gradgrad"] += 1


@pytest.mark.parametrize("point", [0.5, -1.0, 2.5])
@pytest.mark.parametrize("rule", [SIN_O3, EXP_O3], ids=lambda r: r.name)
def test_third_order_mutant(rule: Rule, point: float) -> None:
    func = _unary(rule)
    assert gradcheck(func, [Value(point)]) is True
    assert gradgradcheck(func, [Value(point)]) is True
    assert check_grads(func, [Value(point)], order=2) is True
    assert check_grads(func, [Value(point)], order=3, raise_exception=False) is False
    with pytest.raises(GradcheckError) as excinfo:
        check_grads(func, [Value(point)], order=3)
    report = excinfo.value.report
    (entry,) = report.failures
    assert (entry.order, entry.path, entry.wrt) == (3, (0, 0), 0)
    assert entry.analytic == 0.0
    assert "gradcheck failed at order 3" in str(excinfo.value)
    _assert_names_the_op(report, rule)
    CAUGHT["third-order"] += 1


# A partial that takes a fast path on floats: right there, wrong on Values.
# The create_graph gradient (level 2's values) is then a wrong first
# derivative, consistent with its own derivative; only comparing it with the
# first-order (float) Jacobian, or with a central difference of func, shows it.
SIN_SPLIT = Rule(
    "sin_split",
    math.sin,
    (lambda x, out: math.cos(x) if isinstance(x, float) else 2.0 * cos(x),),
)


@pytest.mark.parametrize("point", [0.5, -1.3])
def test_partial_right_on_floats_wrong_on_values_fails_gradgradcheck(point: float) -> None:
    x = Value(point)
    (slope,) = grad(SIN_SPLIT(x), [x], create_graph=True)
    assert slope.data == pytest.approx(2.0 * math.cos(point))  # the mutant is real
    assert gradcheck(lambda a: SIN_SPLIT(a), [x]) is True
    report = check(lambda a: SIN_SPLIT(a), [x], order=2)
    assert not report.ok, (
        "gradgradcheck passed a rule whose create_graph first derivative is "
        f"{slope.data!r} instead of {math.cos(point)!r}: {report.text()}"
    )
    _assert_names_the_op(report, SIN_SPLIT)
    CAUGHT["float-path-differs"] += 1


# The report points at the right output and input.


def test_wrong_op_on_the_second_output_is_reported_there() -> None:
    x, y = Value(0.4, label="x"), Value(-0.9, label="y")
    with pytest.raises(GradcheckError) as excinfo:
        gradcheck(lambda a, b: ((a * b).sin(), SIN_SHIFTED(b) * a), [x, y])
    report = excinfo.value.report
    assert {e.output for e in report.failures} == {1}
    assert {e.wrt for e in report.failures} == {1}
    assert report.names == ["x[0] 'x'", "x[1] 'y'"]
    assert "out[1]" in str(excinfo.value)
    assert "x[1] 'y'" in str(excinfo.value)
    _assert_names_the_op(report, SIN_SHIFTED)
    CAUGHT["wrong-point"] += 1


def test_fault_names_the_label_of_the_wrong_node() -> None:
    def func(a: Value) -> Value:
        inner = SIN_SIGNFLIP(a * 2.0)
        inner.label = "hidden"
        return inner.exp() + a

    report = check(func, [Value(0.3)])
    assert not report.ok
    assert "op 'sin_signflip' (label 'hidden')" in report.fault
    CAUGHT["sign-flip"] += 1


# grad_outputs are honoured: only the weighted sum of the outputs is checked
# above order 1, so a second-order mutant on an output of weight zero passes.


def _two_outputs(a: Value, b: Value) -> tuple[Value, Value]:
    return (a * b).sin(), SIN_DATA(a) * b


@pytest.mark.parametrize("weights", [[1.0, 0.0], [-2.5, 0.0]])
def test_second_order_mutant_on_an_output_of_weight_zero_passes(weights: list[float]) -> None:
    xs = [Value(0.7), Value(-1.2)]
    assert gradgradcheck(_two_outputs, xs, weights) is True
    report = check(_two_outputs, xs, order=2, grad_outputs=weights)
    assert report.ok
    # The Jacobian of both outputs (2 x 2) and the Hessian of the sum (2 x 2).
    assert report.checked == 8


@pytest.mark.parametrize("weights", [None, [0.0, 1.0], [0.5, -2.0], [1.0, 1e-2]])
def test_second_order_mutant_on_an_output_of_nonzero_weight_fails(
    weights: list[float] | None,
) -> None:
    xs = [Value(0.7), Value(-1.2)]
    with pytest.raises(GradcheckError) as excinfo:
        gradgradcheck(_two_outputs, xs, weights)
    report = excinfo.value.report
    assert report.order == 2
    # The d2/dx2 entry; the wrong term is weight * -sin(x) * y.
    worst = report.failures[0]
    assert (worst.path, worst.wrt) == ((0,), 0)
    w1 = 1.0 if weights is None else weights[1]
    assert worst.numerical - worst.analytic == pytest.approx(w1 * -math.sin(0.7) * -1.2, rel=1e-4)
    if weights is not None:
        assert {e.output for e in report.failures} == {-1}
        assert "v . out" in str(excinfo.value)
    _assert_names_the_op(report, SIN_DATA)
    CAUGHT["value-of"] += 1


def test_value_weights_are_checked_as_inputs_and_honoured() -> None:
    xs = [Value(0.7), Value(-1.2)]
    zero = [Value(1.0, label="w0"), Value(0.0)]
    report = check(_two_outputs, xs, order=2, grad_outputs=zero)
    assert report.ok, report.text()
    assert report.names == ["x[0]", "x[1]", "v[0] 'w0'", "v[1]"]
    # The Jacobian against all four inputs and the 4 x 4 Hessian, and the
    # whole gradient along a random direction where entries agree to few digits.
    directions = sum(e.wrt < 0 for e in report.entries)
    assert report.checked == 2 * 4 + 4 * 4 + directions
    assert len(report.entries) == report.checked

    nonzero = [Value(1.0, label="w0"), Value(2.0)]
    with pytest.raises(GradcheckError) as excinfo:
        gradgradcheck(_two_outputs, xs, nonzero)
    report = excinfo.value.report
    assert report.names == ["x[0]", "x[1]", "v[0] 'w0'", "v[1]"]
    assert "v[0] 'w0'" not in {report.names[e.wrt] for e in report.failures}
    worst = report.failures[0]
    assert worst.numerical - worst.analytic == pytest.approx(2.0 * -math.sin(0.7) * -1.2, rel=1e-4)
    _assert_names_the_op(report, SIN_DATA)
    CAUGHT["value-of"] += 1


def test_value_weight_rows_and_columns_are_compared() -> None:
    v = Value(1.5, label="v")
    x = Value(0.6)
    report = check(lambda a: a.sin(), [x], order=2, grad_outputs=[v])
    assert report.ok, report.text()
    assert report.names == ["x[0]", "v[0] 'v'"]
    # Jacobian 1 x 2, Hessian of v * sin(x) over (x, v): 2 x 2.
    assert report.checked == 1 * 2 + 2 * 2
    wrong = check(lambda a: SIN_SHIFTED(a), [x], order=2, grad_outputs=[v])
    assert not wrong.ok
    assert wrong.names == ["x[0]", "v[0] 'v'"]
    _assert_names_the_op(wrong, SIN_SHIFTED)
    CAUGHT["wrong-point"] += 1


@pytest.mark.parametrize("fast_mode", [False, True])
def test_grad_outputs_are_honoured_in_fast_mode_too(fast_mode: bool) -> None:
    xs = [Value(0.7), Value(-1.2)]
    assert check(_two_outputs, xs, order=2, grad_outputs=[1.0, 0.0], fast_mode=fast_mode).ok
    report = check(_two_outputs, xs, order=2, grad_outputs=[0.0, 1.0], fast_mode=fast_mode)
    assert not report.ok
    _assert_names_the_op(report, SIN_DATA)
    CAUGHT["value-of"] += 1


# method="richardson" on correct rules (the mutants are above).


@pytest.mark.parametrize(
    ("func", "point"),
    [
        (lambda x: x.sin() * x.exp(), (0.7,)),
        (lambda x, y: (x * y).tanh() / (1.0 + y * y), (0.3, -1.4)),
        (lambda x, y: x ** y.sigmoid(), (1.7, 0.2)),
    ],
)
@pytest.mark.parametrize("order", [1, 2, 3])
def test_richardson_passes_correct_functions(
    func: Fn, point: tuple[float, ...], order: int
) -> None:
    report = check(func, [Value(p) for p in point], order=order, method="richardson")
    assert report.ok, report.text()
    assert report.order == order


# The summary line.


@closing_line("gradcheck mutants")
def _closing() -> str:
    total = sum(CAUGHT.values())
    if not total:
        return ""
    parts = ", ".join(f"{k} {n}" for k, n in sorted(CAUGHT.items()))
    return f"gradcheck mutants caught: {total} in {len(CAUGHT)} classes: {parts}"


def test_a_wrong_partial_in_a_derivative_rule_minigrad_made_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """tanh's second derivative is the slope of the rule tanh', made when first
    needed. A check takes minigrad's own rules as pure, the same on floats and
    on Values, only with the partials they were made with: with a wrong one in
    their place, order 2 fails; with one wrong on floats alone, too (within a
    check of order 3, where the next level's values, built on Values, could have
    stood for the floats)."""
    from minigrad.core.rules.exp_log import _tanh_rule, tanh_derivative

    def floats_off(x: Any, out: Any) -> Any:
        right = tanh_derivative(2, x)
        return right if isinstance(x, Value) else 1.001 * right

    rule = _tanh_rule(1)
    xs = [Value(0.4)]
    monkeypatch.setattr(rule, "partials", (lambda x, out: 1.001 * tanh_derivative(2, x),))
    assert check(lambda x: x.tanh(), xs, order=1)
    report = check(lambda x: x.tanh(), xs, order=2)
    assert {e.order for e in report.failures} == {2}
    monkeypatch.setattr(rule, "partials", (floats_off,))
    report = check(lambda x: x.tanh(), xs, order=3)
    assert {e.order for e in report.failures} == {2}
