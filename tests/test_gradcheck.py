"""gradcheck, gradgradcheck and check_grads: no false alarms, kinks, state, arguments, reports.

The mutants (wrong rules the checkers must catch) are in
``test_gradcheck_mutants.py``. Here:

* no false alarms: every rule of ``ops.TABLE`` at random points of its domain,
  and random composite expressions (``minigrad.testing``), pass at the default
  tolerances, at orders 1 to 3, in fast mode and with Richardson. The number
  of random correct checks run is printed in pytest's terminal summary
  (``RANDOM_CHECKS_PLANNED`` is the arithmetic: at least 1,000);
* kinks: relu and abs at 0, and a point within eps of a kink, are diagnosed;
* state: every input's ``.data`` and ``.grad`` (and Value ``grad_outputs``)
  are restored bit for bit after a pass, a failure and a ``func`` that raises;
* bad arguments, NaN and inf, ``raise_exception``, the error message, the
  traceback pytest shows, and the HTML report.
"""

from __future__ import annotations

import html
import importlib
import math
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad import (
    GradcheckError,
    GradcheckWarning,
    Report,
    Rule,
    Value,
    check,
    check_grads,
    cos,
    gradcheck,
    gradgradcheck,
    ops,
)
from minigrad.checking.run.compare import UNDECIDED_WARNING
from minigrad.testing import Expression, expressions, points
from summary import closing_line

Fn = Callable[..., Any]

#: Random correct checks that passed, per test; printed at the end of the session.
CHECKS: Counter[str] = Counter()

# The budget of random correct checks: examples x checks per example.
RULE_EXAMPLES = 25  # per rule of ops.TABLE
RULE_CHECKS = 5  # gradcheck, gradgradcheck, order 3, fast mode, richardson
EXPR_EXAMPLES = 150
EXPR_CHECKS = 3  # gradcheck, gradgradcheck, fast-mode gradgradcheck
ORDER3_EXAMPLES = 40
ORDER3_CHECKS = 1
MULTI_EXAMPLES = 60
MULTI_CHECKS = 3  # gradcheck, gradgradcheck with float and with Value weights
RANDOM_CHECKS_PLANNED = (
    len(ops.TABLE) * RULE_EXAMPLES * RULE_CHECKS
    + EXPR_EXAMPLES * EXPR_CHECKS
    + ORDER3_EXAMPLES * ORDER3_CHECKS
    + MULTI_EXAMPLES * MULTI_CHECKS
)


def test_the_random_check_budget_is_at_least_a_thousand() -> None:
    assert RANDOM_CHECKS_PLANNED >= 1000


def _passes(name: str, report: Report, what: object) -> None:
    """Assert that a correct function passed, and count it."""
    __tracebackhide__ = True
    assert report.ok, f"false alarm on a correct function: {what}\n{report.text()}"
    assert report.checked > 0
    CHECKS[name] += 1


def _no_kink_warning(caught: Sequence[warnings.WarningMessage]) -> None:
    __tracebackhide__ = True
    # An entry the numbers cannot decide (tanh far out, flat in float64) passes
    # with a warning that says so (issue 26); no other warning is expected.
    kinks = [
        str(w.message)
        for w in caught
        if issubclass(w.category, GradcheckWarning) and UNDECIDED_WARNING not in str(w.message)
    ]
    assert not kinks, kinks


# No false alarms: every rule of the table, at random points of its domain.


def _rule_id(rule: Rule) -> str:
    return rule.name


def _apply_with_constants(rule: Rule, point: Sequence[float], mask: Sequence[bool]) -> Fn:
    """``rule`` applied to Values where ``mask`` is true and to constants elsewhere."""

    def func(*xs: Value) -> Value:
        it = iter(xs)
        args = [next(it) if m else p for p, m in zip(point, mask, strict=True)]
        return rule(*args)

    return func


@pytest.mark.parametrize("rule", ops.TABLE, ids=_rule_id)
@settings(max_examples=RULE_EXAMPLES, deadline=None)
@given(data=st.data())
def test_every_rule_passes_every_check_inside_its_domain(rule: Rule, data: st.DataObject) -> None:
    point = data.draw(points(rule), label="point")
    mask = [True] * rule.arity
    if rule.arity > 1:
        # Sometimes one argument is a float constant (x ** 2.5, 2.5 ** y).
        constant = data.draw(st.sampled_from([None, *range(rule.arity)]), label="constant")
        if constant is not None:
            mask[constant] = False
    func = _apply_with_constants(rule, point, mask)
    xs = [Value(p) for p, m in zip(point, mask, strict=True) if m]
    what = f"{rule.name} at {point} (Values: {mask})"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert gradcheck(func, xs) is True
        CHECKS["rules"] += 1
        assert gradgradcheck(func, xs) is True
        CHECKS["rules"] += 1
    _no_kink_warning(caught)
    _passes("rules", check(func, xs, order=3), what)
    _passes("rules", check(func, xs, order=2, fast_mode=True), what)
    _passes("rules", check(func, xs, order=2, method="richardson"), what)


# No false alarms: random composite expressions.


def _leaves(e: Expression) -> list[Value]:
    return [Value(x) for x in e.inputs]


@settings(max_examples=EXPR_EXAMPLES, deadline=None)
@given(e=expressions())
def test_random_expressions_pass_gradcheck_and_gradgradcheck(e: Expression) -> None:
    _passes("expressions", check(e, _leaves(e), order=1), e)
    _passes("expressions", check(e, _leaves(e), order=2), e)
    _passes("expressions", check(e, _leaves(e), order=2, fast_mode=True), e)


@settings(max_examples=ORDER3_EXAMPLES, deadline=None)
@given(e=expressions(max_inputs=2, max_ops=4))
def test_random_expressions_pass_third_order(e: Expression) -> None:
    _passes("expressions order 3", check(e, _leaves(e), order=3), e)


weights = st.floats(-2.0, 2.0, allow_nan=False)


@settings(max_examples=MULTI_EXAMPLES, deadline=None)
@given(
    first=expressions(max_inputs=2, max_ops=4),
    second=expressions(max_inputs=2, max_ops=4),
    w=st.tuples(weights, weights, weights),
)
def test_random_multi_output_functions_pass_with_grad_outputs(
    first: Expression, second: Expression, w: tuple[float, float, float]
) -> None:
    n = first.n_inputs

    def func(*xs: Value) -> tuple[Value, Value, Value]:
        a, b = first(*xs[:n]), second(*xs[n:])
        return a, b, a * b

    what = f"outputs ({first}), ({second}), their product; weights {w}"
    xs = _leaves(first) + _leaves(second)
    _passes("multi-output", check(func, xs), what)
    _passes("multi-output", check(func, xs, order=2, grad_outputs=list(w)), what)
    values = [Value(v, label=f"w{i}") for i, v in enumerate(w)]
    report = check(func, xs, order=2, grad_outputs=values)
    _passes("multi-output", report, what)
    assert report.names[-3:] == ["v[0] 'w0'", "v[1] 'w1'", "v[2] 'w2'"]


# Kinks.


def test_relu_at_zero_is_a_subgradient_with_the_kink_note() -> None:
    # No derivative exists at 0; the rule's 0 lies between the one-sided
    # slopes 0 and 1, which the calculus of subgradients allows: it passes,
    # with the kink named.
    with pytest.warns(GradcheckWarning, match="not differentiable at this point"):
        assert gradcheck(lambda a: a.relu(), [Value(0.0)]) is True
    report = check(lambda a: a.relu(), [Value(0.0)])
    (entry,) = report.entries
    assert entry.verdict == "subgradient" and entry.passed
    assert entry.note.startswith("not differentiable at this point")
    assert "left slope 0" in entry.note and "right slope 1" in entry.note


def test_a_relu_kink_inside_a_composite_is_a_subgradient_and_outside_it_wrong() -> None:
    report = check(lambda a, b: (a - 0.5).relu() * b.exp(), [Value(0.5), Value(0.2)])
    assert report.ok and [e.verdict for e in report.entries] == ["subgradient", "agrees"]
    steep = Rule("steep_relu", lambda x: max(x, 0.0), (lambda x, out: 2.0,))
    report = check(lambda a, b: steep(a - 0.5) * b.exp(), [Value(0.5), Value(0.2)])
    assert not report.ok and [e.wrt for e in report.failures] == [0]
    assert "op 'steep_relu'" in report.fault


def test_abs_at_zero_passes_with_a_kink_warning() -> None:
    # The central difference averages the slopes -1 and 1 to the 0 the rule
    # picks, so the entry agrees; the kink is still reported.
    x = Value(0.0)
    report = check(lambda a: abs(a), [x])
    assert report.ok
    assert len(report.kinks) == 1
    assert "not differentiable at this point" in report.kinks[0]
    assert "not differentiable at this point" in report.text()
    with pytest.warns(GradcheckWarning, match="not differentiable at this point") as record:
        assert gradcheck(lambda a: abs(a), [x]) is True
    # The warning points at the line that called gradcheck.
    assert record[0].filename == __file__


def test_check_grads_kink_warning_points_at_the_caller() -> None:
    with pytest.warns(GradcheckWarning, match="not differentiable at this point") as record:
        assert check_grads(lambda a: abs(a) * 2.0, [Value(0.0)]) is True
    assert record[0].filename == __file__


def test_abs_at_zero_under_gradgradcheck_is_diagnosed_as_a_kink() -> None:
    # The derivative of abs jumps from -1 to 1 at 0: the second-order check
    # cannot agree there, and the report must say why (not call it noise).
    report = check(lambda a: abs(a), [Value(0.0)], order=2)
    text = report.text()
    assert "not differentiable at this point" in text, text
    assert "noisy" not in text, text


# Near a kink, but not on it: the function is differentiable there and a right
# rule must pass. The central difference at eps straddles the kink and is off;
# extrapolation from steps that stay on one side settles it.

KINK_FUNCS = [("abs", lambda a: abs(a)), ("relu", lambda a: a.relu())]


@pytest.mark.parametrize(("name", "func"), KINK_FUNCS)
@pytest.mark.parametrize("point", [1e-7, -3e-7, 5e-7])
def test_a_point_within_eps_of_a_kink_passes_without_a_kink_note(
    name: str, func: Fn, point: float
) -> None:
    report = check(func, [Value(point)])
    assert report.ok, report.text()
    assert report.kinks == [] and report.cautions == [], report.text()


def test_two_input_point_within_eps_of_a_kink_passes() -> None:
    x, y = Value(0.3 + 2e-7), Value(0.3)
    report = check(lambda a, b: abs(a - b), [x, y])
    assert report.ok, report.text()
    assert report.warnings == []


SLOPE_TWO_ABS = Rule("slope_two_abs", abs, (lambda x, out: 2.0 * ops.sign(x),), avoid=(0.0,))


@pytest.mark.parametrize("point", [1e-7, -3e-7, 5e-7])
def test_a_wrong_rule_within_eps_of_its_kink_still_fails(point: float) -> None:
    report = check(lambda a: SLOPE_TWO_ABS(a), [Value(point)])
    assert not report.ok
    (entry,) = report.failures
    assert entry.analytic == pytest.approx(2.0 * math.copysign(1.0, point))
    assert entry.numerical == pytest.approx(math.copysign(1.0, point), rel=1e-6)
    assert entry.note == ""  # a wrong rule, not a kink
    assert "op 'slope_two_abs'" in report.fault


@pytest.mark.parametrize("point", [0.05, -0.05, 1.5])
def test_no_kink_note_away_from_the_kink(point: float) -> None:
    for func in (lambda a: abs(a), lambda a: a.relu()):
        report = check(func, [Value(point)], order=2)
        assert report.ok, report.text()
        assert report.kinks == []


# State: .data and .grad restored bit for bit.


def _fresh(values: Sequence[float], grads: Sequence[float]) -> list[Value]:
    xs = [Value(v, label=f"x{i}") for i, v in enumerate(values)]
    for x, g in zip(xs, grads, strict=True):
        x.grad = g
    return xs


def _snapshot(xs: Sequence[Value]) -> list[tuple[Value, float, float]]:
    return [(x, x.data, x.grad) for x in xs]


def _assert_restored(snapshot: Sequence[tuple[Value, float, float]]) -> None:
    __tracebackhide__ = True
    for x, data, g in snapshot:
        assert x.data is data, (x, data)
        assert x.data == data
        assert x.grad is g, (x, g)
        assert x.grad == g


def _values() -> list[float]:
    # Computed floats: distinct objects, no literal shared with the checker.
    return [math.pi / 7.0, -math.e / 5.0]


def _grads() -> list[float]:
    return [math.sqrt(2.0) / 3.0, -math.log(3.0)]


SIN_FLIP = Rule("sin_flip", math.sin, (lambda x, out: -cos(x),))


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize(
    ("func", "ok"),
    [
        (lambda a, b: (a * b).sin() + b.exp(), True),
        (lambda a, b: SIN_FLIP(a * b) + b.exp(), False),
    ],
    ids=["passing", "failing"],
)
def test_inputs_restored_after_pass_and_fail(
    func: Fn, ok: bool, order: int, fast_mode: bool
) -> None:
    xs = _fresh(_values(), _grads())
    w = Value(math.pi / 9.0, label="w")
    w.grad = math.e / 11.0
    snapshot = _snapshot([*xs, w])
    report = check(func, xs, order=order, grad_outputs=[w], fast_mode=fast_mode)
    assert report.ok is ok
    _assert_restored(snapshot)
    # And through the raising entry points.
    if ok:
        assert check_grads(func, xs, order=order, grad_outputs=[w], fast_mode=fast_mode)
    else:
        with pytest.raises(GradcheckError):
            check_grads(func, xs, order=order, grad_outputs=[w], fast_mode=fast_mode)
    _assert_restored(snapshot)


class BoomError(Exception):
    """Raised by a func on purpose."""


def _two_outputs(a: Value, b: Value) -> tuple[Value, Value]:
    # The branch on a value makes the check call func at every moved point
    # (a graph that reads no value is replayed there instead; see run/tape.py).
    return (a * b).sin() if a.data > -1e300 else a, a + b.exp()


@pytest.mark.parametrize("order", [1, 2])
def test_inputs_restored_when_func_raises(order: int) -> None:
    counted = 0

    def counting(a: Value, b: Value) -> tuple[Value, Value]:
        nonlocal counted
        counted += 1
        return _two_outputs(a, b)

    assert check(counting, _fresh(_values(), _grads()), order=order, grad_outputs=[1.0, 0.5]).ok
    perturbed_when_raised: list[bool] = []
    for nth in range(1, counted + 1):
        xs = _fresh(_values(), _grads())
        w = Value(math.pi / 9.0, label="w")
        w.grad = math.e / 11.0
        weights: list[float | Value] = [w, 0.75]
        before = list(weights)
        snapshot = _snapshot([*xs, w])
        func = _raising_on_call(nth, [*xs, w], perturbed_when_raised)
        with pytest.raises(BoomError, match=f"call {nth}"):
            check(func, xs, order=order, grad_outputs=weights)
        _assert_restored(snapshot)
        assert weights == before
        assert all(a is b for a, b in zip(weights, before, strict=True))
    # The raise happened while inputs were moved, most of the time.
    assert sum(perturbed_when_raised) >= counted // 2


def _raising_on_call(nth: int, watched: list[Value], log: list[bool]) -> Fn:
    """``_two_outputs`` that raises on call ``nth``, logging whether inputs were moved."""
    originals = [x.data for x in watched]
    calls = 0

    def func(a: Value, b: Value) -> tuple[Value, Value]:
        nonlocal calls
        calls += 1
        if calls == nth:
            log.append([x.data for x in watched] != originals)
            raise BoomError(f"call {nth}")
        return _two_outputs(a, b)

    return func


def test_gradcheck_restores_state_when_func_raises_on_the_third_call() -> None:
    xs = _fresh(_values(), _grads())
    snapshot = _snapshot(xs)
    calls = 0

    def func(a: Value, b: Value) -> Value:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise BoomError("third call")
        return a * b

    with pytest.raises(BoomError, match="third call"):
        gradcheck(func, xs)
    assert calls == 3
    _assert_restored(snapshot)


def test_grad_outputs_sequence_is_not_mutated() -> None:
    xs = _fresh(_values(), _grads())
    v = Value(1.25, label="v")
    weights: tuple[float | Value, ...] = (v, -0.5)
    as_list: list[float | Value] = list(weights)
    assert gradgradcheck(lambda a, b: ((a * b).tanh(), a - b), xs, as_list) is True
    assert as_list == list(weights)
    assert as_list[0] is v
    assert gradgradcheck(lambda a, b: ((a * b).tanh(), a - b), xs, weights) is True
    assert weights == (v, -0.5)


def test_state_restored_when_grad_outputs_has_the_wrong_length() -> None:
    xs = _fresh(_values(), _grads())
    snapshot = _snapshot(xs)
    with pytest.raises(ValueError, match="grad_outputs"):
        gradgradcheck(lambda a, b: (a * b, a + b), xs, [1.0, 2.0, 3.0])
    _assert_restored(snapshot)


# Bad arguments: TypeError/ValueError naming the argument and the value.

X = Value(0.5)
Y = Value(-1.5)


def _sin(a: Value) -> Value:
    return a.sin()


def _returning(value: object) -> Fn:
    return lambda *xs: value


def _returning_sin_and(value: object) -> Fn:
    return lambda a: (a.sin(), value)


BAD_ARGUMENTS: list[tuple[str, Callable[[], object], type[Exception], list[str]]] = [
    ("empty inputs", lambda: gradcheck(_sin, []), ValueError, ["inputs", "empty"]),
    ("empty tuple", lambda: gradgradcheck(_sin, ()), ValueError, ["inputs", "empty"]),
    ("bool input", lambda: gradcheck(_sin, [True]), TypeError, ["inputs[0]", "bool", "True"]),
    (
        "second input neither a Value, a number nor a node",
        lambda: gradcheck(lambda a, b: a * b, [X, "2.5"]),  # type: ignore[list-item]
        TypeError,
        ["inputs[1]", "'2.5'", "no .data"],
    ),
    ("string inputs", lambda: gradcheck(_sin, "ab"), TypeError, ["inputs", "'ab'"]),  # type: ignore[arg-type]
    ("None inputs", lambda: gradcheck(_sin, None), TypeError, ["inputs", "None"]),  # type: ignore[arg-type]
    (
        "duplicate inputs",
        lambda: gradcheck(lambda a, b: a * b, [X, X]),
        ValueError,
        ["inputs[1]", "inputs[0]"],
    ),
    ("eps zero", lambda: gradcheck(_sin, [X], eps=0.0), ValueError, ["eps", "0.0"]),
    ("eps negative", lambda: gradcheck(_sin, [X], eps=-1e-6), ValueError, ["eps", "-1e-06"]),
    ("eps NaN", lambda: gradcheck(_sin, [X], eps=math.nan), ValueError, ["eps", "nan"]),
    ("eps inf", lambda: gradgradcheck(_sin, [X], eps=math.inf), ValueError, ["eps", "inf"]),
    ("eps str", lambda: gradcheck(_sin, [X], eps="1e-6"), TypeError, ["eps", "'1e-6'"]),  # type: ignore[arg-type]
    ("atol negative", lambda: gradcheck(_sin, [X], atol=-1.0), ValueError, ["atol", "-1.0"]),
    ("atol NaN", lambda: gradcheck(_sin, [X], atol=math.nan), ValueError, ["atol", "nan"]),
    ("rtol negative", lambda: gradgradcheck(_sin, [X], rtol=-0.5), ValueError, ["rtol", "-0.5"]),
    (
        "nondet_tol negative",
        lambda: gradcheck(_sin, [X], nondet_tol=-1e-9),
        ValueError,
        ["nondet_tol", "-1e-09"],
    ),
    ("order zero", lambda: check_grads(_sin, [X], order=0), ValueError, ["order", "0"]),
    ("order negative", lambda: check(_sin, [X], order=-2), ValueError, ["order", "-2"]),
    ("order float", lambda: check(_sin, [X], order=1.5), TypeError, ["order", "1.5"]),  # type: ignore[arg-type]
    (
        "func returns a float",
        lambda: gradcheck(_returning(2.5), [X]),
        TypeError,
        ["func", "float", "2.5"],
    ),
    (
        "func returns a tuple with a float",
        lambda: gradcheck(_returning_sin_and(3.25), [X]),
        TypeError,
        ["func", "tuple", "3.25"],
    ),
    (
        "func returns an empty tuple",
        lambda: gradgradcheck(lambda a: (), [X]),
        TypeError,
        ["func", "tuple", "()"],
    ),
    ("func returns None", lambda: gradcheck(_returning(None), [X]), TypeError, ["func", "None"]),
    ("func not callable", lambda: gradcheck(3, [X]), TypeError, ["func", "3"]),  # type: ignore[arg-type]
    (
        "grad_outputs too short",
        lambda: gradgradcheck(lambda a, b: (a * b, a + b), [X, Y], [1.0]),
        ValueError,
        ["grad_outputs", "1", "2"],
    ),
    (
        "grad_outputs too long",
        lambda: gradgradcheck(_sin, [X], [1.0, 2.0, 3.0]),
        ValueError,
        ["grad_outputs", "3", "1"],
    ),
    (
        "grad_outputs NaN",
        # A number out of range: ValueError, as grad's own grad_outputs check.
        lambda: gradgradcheck(_sin, [X], [math.nan]),
        ValueError,
        ["grad_outputs[0]", "nan"],
    ),
    (
        "grad_outputs str",
        lambda: gradgradcheck(_sin, [X], ["1"]),  # type: ignore[list-item]
        TypeError,
        ["grad_outputs[0]", "'1'"],
    ),
    ("grad_outputs empty", lambda: gradgradcheck(_sin, [X], []), ValueError, ["grad_outputs"]),
    (
        "method unknown",
        lambda: gradcheck(_sin, [X], method="forward"),
        ValueError,
        ["method", "'forward'"],
    ),
]


@pytest.mark.parametrize(
    ("call", "kind", "words"),
    [case[1:] for case in BAD_ARGUMENTS],
    ids=[case[0] for case in BAD_ARGUMENTS],
)
def test_bad_arguments_raise_naming_argument_and_value(
    call: Callable[[], object], kind: type[Exception], words: list[str]
) -> None:
    before = (X.data, X.grad, Y.data, Y.grad)
    with pytest.raises(kind) as excinfo:
        call()
    assert type(excinfo.value) is kind
    message = str(excinfo.value)
    for word in words:
        assert word in message, message
    assert (X.data, X.grad, Y.data, Y.grad) == before


@pytest.mark.parametrize("order", [1, 2])
def test_wrong_length_grad_outputs_is_rejected_at_any_order(order: int) -> None:
    # A weight list that does not match the outputs is a mistake even when
    # the order checked does not use it: silently ignoring it is how lucid's
    # gradgradcheck went wrong.
    with pytest.raises(ValueError, match="grad_outputs") as excinfo:
        check(_sin, [Value(0.5)], order=order, grad_outputs=[1.0, 2.0, 3.0])
    assert "3" in str(excinfo.value)


def test_non_finite_input_is_rejected() -> None:
    x = Value(1.0)
    x.data = math.inf
    with pytest.raises(ValueError, match=r"inputs\[0\].*inf"):
        gradcheck(_sin, [x])


# NaN and inf never pass.

NAN_SLOPE = Rule("nan_slope", math.sin, (lambda x, out: math.nan,))
HUGE_SLOPE = Rule("huge_slope", lambda x: 2.0 * x, (lambda x, out: 1e300,))
NAN_CURVE_INNER = Rule("nan_curve_inner", math.cos, (lambda x, out: math.nan,))
NAN_CURVE = Rule(
    "nan_curve",
    math.sin,
    (lambda x, out: NAN_CURVE_INNER(x) if isinstance(x, Value) else math.cos(x),),
)


@pytest.mark.parametrize("atol", [1e-5, 1e300])
@pytest.mark.parametrize(
    ("func", "order"),
    [
        (lambda a: NAN_SLOPE(a), 1),
        (lambda a: NAN_SLOPE(a * 0.5) + a, 1),
        (lambda a: HUGE_SLOPE(a) * 1e10, 1),
        (lambda a: NAN_CURVE(a), 2),
    ],
    ids=["nan", "nan-in-composite", "inf", "nan-at-second-order"],
)
def test_nan_and_inf_never_pass(func: Fn, order: int, atol: float) -> None:
    x = Value(0.4)
    report = check(func, [x], order=order, atol=atol, rtol=1e300)
    assert not report.ok
    assert report.order == order
    worst = report.failures[0]
    assert not math.isfinite(worst.analytic)
    assert not worst.passed
    assert "not finite" in worst.note
    assert check_grads(func, [x], order=order, raise_exception=False) is False
    if order == 2:
        assert gradcheck(func, [x]) is True


# raise_exception, the error type and its message.


def test_raise_exception_false_returns_false_and_true() -> None:
    x = Value(0.3)
    assert gradcheck(lambda a: SIN_FLIP(a), [x], raise_exception=False) is False
    assert gradgradcheck(lambda a: SIN_FLIP(a), [x], raise_exception=False) is False
    assert check_grads(lambda a: SIN_FLIP(a), [x], order=3, raise_exception=False) is False
    assert gradcheck(lambda a: a.sin(), [x], raise_exception=False) is True
    assert gradgradcheck(lambda a: a.sin(), [x], raise_exception=False) is True


def test_gradcheck_error_is_an_assertion_error_with_the_report() -> None:
    assert issubclass(GradcheckError, AssertionError)
    with pytest.raises(AssertionError) as excinfo:
        gradgradcheck(lambda a: SIN_FLIP(a), [Value(0.3)])
    assert isinstance(excinfo.value, GradcheckError)
    assert isinstance(excinfo.value.report, Report)
    assert not excinfo.value.report.ok


LINEAR = Rule("linear", lambda x: 3.5 * x, (1.25,))


def test_message_names_output_input_analytic_numerical_and_difference() -> None:
    a, b = Value(0.5, label="a"), Value(2.0, label="b")
    with pytest.raises(GradcheckError) as excinfo:
        gradcheck(lambda p, q: (p * q, LINEAR(q)), [a, b])
    message = str(excinfo.value)
    report = excinfo.value.report
    (entry,) = report.failures
    assert (entry.output, entry.wrt) == (1, 1)
    assert entry.analytic == 1.25
    assert entry.numerical == pytest.approx(3.5, rel=1e-9)
    assert entry.diff == pytest.approx(2.25, rel=1e-9)
    for text in ("out[1]", "x[1] 'b'", "1.25", "3.5", "2.25", "analytic", "numerical", "diff"):
        assert text in message, message
    assert "op 'linear'" in message
    # The row of the right output, not of out[0].
    row = next(line for line in message.splitlines() if "out[1]" in line)
    assert "1.25" in row and "3.5" in row and "2.25" in row


def test_short_text_keeps_the_worst_rows() -> None:
    xs = [Value(0.1 * i + 0.05) for i in range(10)]

    def func(*vs: Value) -> tuple[Value, ...]:
        # Output i is wrong by a factor growing with i: out[9] is the worst.
        return tuple(LINEAR(v) * (i + 1.0) for i, v in enumerate(vs))

    report = check(func, xs)
    assert len(report.failures) == 10
    assert report.failures[0].output == 9
    full, short = report.text(full=True), report.text(full=False)
    assert all(f"out[{i}]" in full for i in range(10))
    assert "... and 2 more" in short
    assert short.count("\n") < full.count("\n")


def test_nondeterministic_backward_fails_unless_tolerated() -> None:
    calls = [0]

    def jitter(x: Any, out: Any) -> Any:
        calls[0] += 1
        return cos(x) + 1e-9 * (calls[0] % 2)

    noisy = Rule("noisy", math.sin, (jitter,))
    report = check(lambda a: noisy(a), [Value(0.4)])
    assert not report.ok
    assert "not deterministic" in report.failures[0].note
    assert check(lambda a: noisy(a), [Value(0.4)], nondet_tol=1e-8).ok


def _reverse_passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the float reverse passes (grad without create_graph) the checker makes."""
    levels_module = importlib.import_module("minigrad.checking.run.levels")
    passes = [0]
    real = levels_module.grad

    def counting(*args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("create_graph"):
            passes[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(levels_module, "grad", counting)
    return passes


def test_determinism_pass_runs_only_through_rules_that_could_differ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Built-in rules are pure functions of their floats: one pass suffices.
    passes = _reverse_passes(monkeypatch)
    assert gradcheck(lambda a, b: (a * b).tanh() + a.exp(), [Value(0.3), Value(-0.7)])
    assert passes[0] == 1
    # A custom rule may hide state: its graph gets the second pass.
    passes[0] = 0
    cube = Rule("cube", lambda x: x**3, (lambda x, out: 3 * x**2,))
    assert gradcheck(lambda a, b: cube(a) * b, [Value(0.3), Value(-0.7)])
    assert passes[0] == 2


def test_a_builtin_rule_given_other_partials_is_checked_for_determinism(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = [0]

    def jitter(x: Any, out: Any) -> Any:
        calls[0] += 1
        return cos(x) + 1e-9 * (calls[0] % 2)

    monkeypatch.setattr(ops.SIN, "partials", (jitter,))
    report = check(lambda a: a.sin(), [Value(0.4)])
    assert not report.ok
    assert "not deterministic" in report.failures[0].note


# The traceback pytest shows points at the caller.


def _frames(excinfo: pytest.ExceptionInfo[GradcheckError]) -> list[tuple[str, bool]]:
    return [(entry.name, entry.ishidden(excinfo)) for entry in excinfo.traceback]


@pytest.mark.parametrize(
    "call",
    [
        lambda: gradcheck(lambda a: SIN_FLIP(a), [Value(0.3)]),
        lambda: gradgradcheck(lambda a: SIN_FLIP(a), [Value(0.3)]),
        lambda: check_grads(lambda a: SIN_FLIP(a), [Value(0.3)], order=2),
    ],
    ids=["gradcheck", "gradgradcheck", "check_grads"],
)
def test_checker_frames_are_hidden_from_pytest_tracebacks(call: Callable[[], object]) -> None:
    with pytest.raises(GradcheckError) as excinfo:
        call()
    frames = _frames(excinfo)
    checkers = [(n, hidden) for n, hidden in frames if n in CHECKER_NAMES]
    assert checkers, frames
    assert all(hidden for _, hidden in checkers), frames
    for entry in excinfo.traceback:
        if entry.name in CHECKER_NAMES:
            assert entry.frame.f_locals.get("__tracebackhide__") is True
    shown = excinfo.traceback.filter(excinfo)
    assert Path(shown[-1].path) == Path(__file__)


CHECKER_NAMES = {"gradcheck", "gradgradcheck", "check_grads"}


# The HTML report.


def test_html_report_has_a_table_of_failing_rows_and_escapes_labels() -> None:
    odd = Rule("<i>odd", math.sin, (lambda x, out: -cos(x),))
    a, b = Value(0.3, label="<b>"), Value(-0.7, label="a&b")
    report = check(lambda p, q: (odd(p * q), p + q), [a, b])
    assert not report.ok
    page = report._repr_html_()
    assert "<table>" in page and "</table>" in page
    # Two summary rows, the failure header, one row per failing entry.
    assert page.count("<tr>") == 2 + 1 + len(report.failures)
    for e in report.failures:
        assert f"{e.analytic:.9g}" in page
        assert f"{e.numerical:.9g}" in page
    assert html.escape("x[0] '<b>'") in page
    assert "'<b>'" not in page
    assert "a&amp;b" in page
    assert "&lt;i&gt;odd" in page
    assert "<i>odd" not in page
    with pytest.raises(GradcheckError) as excinfo:
        gradcheck(lambda p, q: (odd(p * q), p + q), [a, b])
    assert excinfo.value._repr_html_() == page


def test_html_report_of_a_pass_is_a_summary_table_only() -> None:
    page = check(lambda p: p.sin(), [Value(0.3)], order=2)._repr_html_()
    assert "<b>gradcheck passed</b>" in page
    assert "<td>1-2</td><td>2</td><td>exhaustive</td>" in page
    assert page.count("<table>") == 1
    assert "with respect to" not in page  # no failure rows


# The summary line.


@closing_line("gradcheck random checks")
def _closing() -> str:
    total = sum(CHECKS.values())
    if not total:
        return ""
    parts = ", ".join(f"{k} {n}" for k, n in sorted(CHECKS.items()))
    return (
        f"gradcheck random correct checks passed (no false alarm): {total} "
        f"(planned {RANDOM_CHECKS_PLANNED}): {parts}"
    )


def test_validated_settings_are_reused_but_a_bool_never_passes_for_an_int() -> None:
    settings_module = importlib.import_module("minigrad.checking.run.settings")
    assert gradcheck(_sin, [X], atol=1)  # an int atol is fine
    cached = len(settings_module._VALIDATED)
    assert gradcheck(_sin, [X], atol=1)
    assert len(settings_module._VALIDATED) == cached  # the same arguments: reused
    with pytest.raises(TypeError, match="atol must be an int or float, got bool True"):
        gradcheck(_sin, [X], atol=True)  # True == 1, but never a tolerance
