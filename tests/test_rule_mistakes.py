"""The mistakes people make when they write a Rule, one by one: each gets a verdict naming the op.

A wrong signature is refused when the Rule is made; a partial that fails on
floats or on Values, or returns NaN or inf, raises an error of its own type
that names the op, the partial, the point and what to do; and a backward that
fails leaves every ``.grad`` exactly as it was.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from math import cos as math_cos

import pytest

import minigrad
from minigrad import Rule, Value, grad, toposort

# A partial written with math.cos instead of minigrad.cos: right on floats
# (order 1), a TypeError on Values (create_graph, order 2).
MYCOS = Rule("mycos", math.sin, (lambda x, out: math.cos(x),))
# The same with ``from math import cos``.
MYCOS_IMPORTED = Rule("mycos_imported", math.sin, (lambda x, out: math_cos(x),))
# A partial written with a Value method: right on Values, fails on floats.
MYCOS_METHOD = Rule("mycos_method", math.sin, (lambda x, out: x.cos(),))


def _partial_error(how: str, rule: Rule, at: float) -> BaseException:
    x = Value(at)
    with pytest.raises(Exception) as info:
        if how == "backward":
            rule(x).backward()
        else:
            grad(rule(x), [x], create_graph=how == "grad create_graph")
    return info.value


def test_math_cos_partial_passes_order_one_and_names_the_op_at_order_two() -> None:
    x = Value(0.5)
    (d,) = grad(MYCOS(x), [x])
    assert d.data == math.cos(0.5)
    with pytest.raises(TypeError) as info:
        grad(MYCOS(x), [x], create_graph=True)
    message = str(info.value)
    for text in (
        "op 'mycos' backward",
        "partials[0]",
        "on Values (create_graph=True)",
        "x=0.5",
        "minigrad.cos, not math.cos",
    ):
        assert text in message, message
    # The original error is chained, not lost.
    assert isinstance(info.value.__cause__, TypeError)
    assert str(info.value.__cause__) in message


def test_the_second_derivative_through_grad_of_grad_names_the_op_too() -> None:
    # The user's way to order 2: grad of a create_graph gradient.
    x = Value(0.5)
    with pytest.raises(TypeError, match=r"op 'mycos' backward.*minigrad\.cos"):
        (dx,) = grad(MYCOS(x) * 2.0, [x], create_graph=True)
        grad(dx, [x])


def test_a_math_function_imported_by_name_is_named_in_the_advice() -> None:
    error = _partial_error("grad create_graph", MYCOS_IMPORTED, 0.25)
    assert isinstance(error, TypeError)
    assert "op 'mycos_imported' backward" in str(error)
    assert "minigrad.cos, not math.cos" in str(error)


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_a_value_method_in_a_partial_fails_on_floats_naming_the_op(how: str) -> None:
    error = _partial_error(how, MYCOS_METHOD, 0.25)
    assert isinstance(error, AttributeError)
    message = str(error)
    for text in ("op 'mycos_method' backward", "partials[0]", "on floats", "x=0.25", "minigrad"):
        assert text in message, message
    # On Values the same partial is right.
    x = Value(0.25)
    (d,) = grad(MYCOS_METHOD(x), [x], create_graph=True)
    assert d.data == math.cos(0.25)


# Signatures, checked when the Rule is made.


def test_a_partial_without_its_out_argument_is_refused_naming_the_rule() -> None:
    with pytest.raises(TypeError) as info:
        Rule("softsign", lambda x: x / (1 + abs(x)), (lambda x: 1 / (1 + abs(x)) ** 2,))
    message = str(info.value)
    for text in (
        "Rule 'softsign'",
        "partials[0] takes 1 argument (x) but must take 2",
        "partials[0](x, out)",
    ):
        assert text in message, message


@pytest.mark.parametrize(
    ("forward", "partials", "shown"),
    [
        (lambda x: x, (1.0, 1.0), "forward takes 1 argument (x) but must take 2"),
        (lambda x, y: x * y, (lambda x, out: 1.0,), "forward takes 2 arguments (x, y)"),
        (
            lambda x, y: x * y,
            (lambda x, y, out: y, lambda x, out: x),
            "partials[1] takes 2 arguments (x, out) but must take 3",
        ),
        (
            lambda x: x,
            (lambda x, out, extra: 1.0,),
            "partials[0] takes 3 arguments (x, out, extra) but must take 2",
        ),
        (math.atan2, (lambda x, out: 1.0,), "forward takes 2 arguments (y, x)"),
        (math.sin, (lambda x, out: math.cos(x), 0.0), "forward takes 1 argument (x)"),
    ],
    ids=[
        "forward 1, partials 2",
        "forward 2, partials 1",
        "partials disagree",
        "a partial with too many",
        "built-in forward",
        "built-in forward, constant partial",
    ],
)
def test_forward_and_partials_of_different_arity_are_refused(
    forward: Callable[..., float], partials: tuple[object, ...], shown: str
) -> None:
    with pytest.raises(TypeError) as info:
        Rule("mismatched", forward, partials)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith("Rule 'mismatched': ") and shown in message, message


class _Scaled:
    """A callable object: its signature is read with inspect."""

    def __init__(self, k: float) -> None:
        self.k = k

    def __call__(self, x: float, out: float) -> float:
        return self.k * x


def _twice(x: float, out: float, k: float = 2.0) -> float:
    return k * x


def _scaled(k: float, x: float, out: float) -> float:
    return k * x


def test_a_callable_object_of_the_wrong_arity_is_refused_too() -> None:
    with pytest.raises(TypeError, match=r"partials\[0\] takes 2 arguments \(x, out\)"):
        Rule("scaled", lambda x, y: x * y, (_Scaled(1.0), _Scaled(1.0)))
    with pytest.raises(TypeError, match=r"partials\[1\] takes 2 arguments \(x, out\)"):
        Rule("scaled", lambda x, y: x * y, (lambda x, y, out: y, functools.partial(_scaled, 1.0)))


@pytest.mark.parametrize(
    ("forward", "partial"),
    [
        (lambda x: x * x, lambda *args: 2.0 * args[0]),
        (lambda x: x * x, _twice),
        (lambda *xs: xs[0] ** 2, lambda x, *rest: 2.0 * x),
        (math.log, lambda x, out: 1.0 / x),  # a built-in whose signature cannot be read
        (abs, _Scaled(1.0)),
        (lambda x: 3.0 * x, functools.partial(_twice, k=3.0)),
        (lambda x: 3.0 * x, functools.partial(_scaled, 3.0)),
        (lambda x: 2.0 * x, 2.0),
    ],
    ids=[
        "*args",
        "a default",
        "both *args",
        "math.log",
        "callable",
        "partial, keyword",
        "partial, positional",
        "constant",
    ],
)
def test_signatures_that_fit_or_cannot_be_read_are_accepted(
    forward: Callable[..., float], partial: Callable[..., float] | float
) -> None:
    rule = Rule("fits", forward, (partial,))
    x = Value(1.5)
    rule(x).backward()
    d = partial if isinstance(partial, float) else partial(1.5, rule.forward(1.5))
    assert x.grad == d


def test_every_built_in_rule_passes_its_own_signature_check() -> None:
    for rule in minigrad.ops.TABLE:
        again = Rule(rule.name, rule.forward, rule.partials, domain=rule.domain)
        assert (again.arity, again.partials) == (rule.arity, rule.partials)


# NaN and inf never land in .grad or in grad()'s results.

NAN_SLOPE = Rule("nan_slope", math.sin, (lambda x, out: math.nan,))
INF_SLOPE = Rule("inf_slope", math.sin, (lambda x, out: -math.inf,))
HUGE_SLOPE = Rule("huge_slope", lambda x: 2.0 * x, (lambda x, out: 1e300,))


@pytest.mark.parametrize(("rule", "shown"), [(NAN_SLOPE, "nan"), (INF_SLOPE, "-inf")])
@pytest.mark.parametrize("how", ["backward", "grad", "grad create_graph"])
def test_a_partial_returning_nan_or_inf_raises_naming_the_op(
    rule: Rule, shown: str, how: str
) -> None:
    x = Value(0.3)
    y = rule(x * 0.5) + x  # inside a composite: the NaN would flow on to x
    with pytest.raises(ValueError) as info:
        if how == "backward":
            y.backward()
        else:
            grad(y, [x], create_graph=how == "grad create_graph")
    message = str(info.value)
    for text in (f"op '{rule.name}' backward", "partials[0]", f"returned {shown}", "x=0.15"):
        assert text in message, message
    assert "not finite" in message
    assert all(n.grad == 0.0 for n in toposort([y]))


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_a_gradient_that_overflows_from_finite_partials_is_an_overflow_error(how: str) -> None:
    x = Value(0.4)
    y = HUGE_SLOPE(x) * 1e10  # 1e300 * 1e10 is inf, though each factor is finite
    with pytest.raises(OverflowError) as info:
        if how == "backward":
            y.backward()
        else:
            grad(y, [x])
    message = str(info.value)
    for text in ("op 'huge_slope' backward", "overflow", "1e+300", "not finite"):
        assert text in message, message
    assert x.grad == 0.0


def test_a_gradient_that_overflows_on_values_is_an_overflow_error() -> None:
    x = Value(0.4)
    with pytest.raises(OverflowError, match="op 'huge_slope' backward"):
        grad(HUGE_SLOPE(x) * 1e10, [x], create_graph=True)


@pytest.mark.parametrize("seed", [math.nan, math.inf, -math.inf])
def test_a_non_finite_seed_is_refused(seed: float) -> None:
    x = Value(0.3)
    y = x.exp()
    with pytest.raises(ValueError, match=r"backward: grad must be finite, got -?(nan|inf)"):
        y.backward(seed)
    assert (x.grad, y.grad) == (0.0, 0.0)
    with pytest.raises(ValueError, match=r"grad_outputs\[0\] must be finite"):
        grad(y, [x], [seed])


# backward is atomic: it completes or changes no .grad.


def test_a_failing_backward_leaves_every_grad_as_it_was() -> None:
    # The example: d/db a**b needs log(a), undefined at a = -3, and
    # backward used to add d/da = -6 into a.grad before it got there.
    a, b = Value(-3.0), Value(2.0)
    with pytest.raises(ValueError, match=r"op '\*\*' backward"):
        (a**b).backward()
    assert (a.grad, b.grad) == (0.0, 0.0)


def test_a_failing_backward_keeps_gradients_accumulated_before() -> None:
    a, b, c = Value(-3.0), Value(2.0), Value(0.5)
    loss = (a * c).tanh() + b * c
    loss.backward()
    earlier = (a.grad, b.grad, c.grad)
    slope = 1.0 - math.tanh(-1.5) ** 2
    assert earlier == pytest.approx((slope * 0.5, 0.5, 2.0 + slope * -3.0))
    # The outer * and the + are done, and a.grad has d/da of a**b, when
    # d/db of a**b fails.
    bad = (a**b + (c * b).exp()) * c
    nodes = toposort([bad])
    for i, n in enumerate(nodes):
        if n.op:
            n.grad = 10.0 + i  # junk left by an earlier backward through bad
    before = [n.grad for n in nodes]
    with pytest.raises(ValueError, match=r"op '\*\*' backward"):
        bad.backward()
    assert [n.grad for n in nodes] == before
    assert (a.grad, b.grad, c.grad) == earlier


class _BoomError(Exception):
    pass


def _boom(x: float, out: float) -> float:
    raise _BoomError("a partial that raises an exception of its own")


BOOM = Rule("boom", math.exp, (_boom,))


def test_any_exception_leaves_every_grad_as_it_was() -> None:
    x = Value(0.2)
    x.grad = 7.0
    y = BOOM(x * 3.0) + x
    nodes = toposort([y])
    with pytest.raises(_BoomError):
        y.backward()
    assert [n.grad for n in nodes] == [0.0, 0.0, 0.0, 7.0]


def test_grad_changes_no_grad_when_it_fails() -> None:
    a, b = Value(-3.0), Value(2.0)
    a.grad, b.grad = 1.5, -2.5
    for create_graph in (False, True):
        with pytest.raises(ValueError, match=r"op '\*\*' backward"):
            grad(a**b, [a, b], create_graph=create_graph)
        assert (a.grad, b.grad) == (1.5, -2.5)


def test_gradients_that_overflow_when_accumulated_are_refused_and_kept() -> None:
    x = Value(1.0, label="x")
    y = x * 1e308
    y.backward()
    with pytest.raises(OverflowError, match=r"the leaf 'x' held the gradient 1e\+308"):
        y.backward()
    assert (x.grad, y.grad) == (1e308, 1.0)


def test_a_forward_that_answers_with_a_complex_number_is_off_its_domain() -> None:
    # x ** 0.5 of a negative float is complex in Python: a domain error, so a
    # checker that steps there treats it like log of a negative number.
    root = Rule("root", lambda x: x**0.5, (lambda x, out: 0.5 / out,))
    with pytest.raises(ValueError, match=r"root: outside its real domain, got -4.0 \(its forward"):
        root(Value(-4.0))
    assert minigrad.gradcheck(lambda v: root(v), [Value(1e-8)])
