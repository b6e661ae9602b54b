"""minigrad.compile at NaN and inf: compiled results equal eager ones, errors included.

Issue 21, point 2: eager evaluation raises at the op that makes a number that
is not finite, but generated code checked only the loss, so an op that turns
such a number into a finite one (``relu(nan)`` was 0.0, ``tanh(inf)`` is 1.0,
``1.0 / inf`` is 0.0) returned a finite loss where eager raises. Each test
fails on that code; the property at the end compares compiled with eager on
random expressions at points that hold NaN, infinities and overflowing
magnitudes.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.compiler.templates as templates
from minigrad import Rule, Value, ops
from minigrad.compiler.trace import CompiledValue
from minigrad.testing import Expression, expressions

NAN, INF = math.nan, math.inf
#: Numbers no op should turn into a finite result unnoticed, and one that
#: overflows a product with a moderate factor.
BAD = (NAN, INF, -INF, 1e308)


def outcome(fn: Callable[[], Value]) -> tuple[str, Any]:
    """``("value", bits of .data)`` or ``("error", its type)``."""
    try:
        out = fn()
    except (ArithmeticError, ValueError, TypeError) as exc:
        return "error", type(exc)
    return "value", struct.pack("<d", out.data)


def test_relu_of_nan_raises_as_every_op_does() -> None:
    with pytest.raises(ValueError, match=r"^relu: input is not finite, got nan$"):
        Value(NAN).relu()
    assert Value(-INF).relu().data == 0.0  # the limit, as exp(-inf) is 0.0
    assert math.isnan(minigrad.relu(NAN))  # on floats: NaN in, NaN out, as math does


def test_the_issues_cases_raise_compiled_as_eager() -> None:
    w, u = Value(0.5), Value(0.3)
    relu = minigrad.compile(lambda x: (w * x).relu())
    assert relu(2.0).data == 1.0
    with pytest.raises(ValueError, match="input is not finite"):
        (w * NAN).relu()
    with pytest.raises(ValueError, match="input is not finite"):
        relu(NAN)
    tanh = minigrad.compile(lambda x: (u * x).tanh())
    assert tanh(1.0).data == math.tanh(0.3)
    with pytest.raises(ValueError, match="input is not finite"):
        tanh(INF)
    big = minigrad.compile(lambda x: (u * x * 1e10).tanh())
    assert big(1.0).data == math.tanh(3e9)
    with pytest.raises(OverflowError, match="result overflows"):
        big(1e300)  # u * x is finite, times 1e10 it overflows: tanh must not hide it


def _arguments(rule: Rule, i: int, w: Value, ps: list[Value]) -> Callable[[float], Value]:
    """``rule`` with argument i computed from the call's x (as ``w * x``), the others parameters."""

    def fn(x: float) -> Value:
        args: list[Value | float] = list(ps)
        args[i] = w * x
        return rule(*args)

    return fn


def _same(step: Callable[..., Value], fn: Callable[..., Value], *args: float) -> bool:
    return outcome(lambda: step(*args)) == outcome(lambda: fn(*args))


@pytest.mark.parametrize("rule", ops.TABLE, ids=lambda r: r.name)
def test_every_rule_raises_compiled_where_eager_raises(rule: Rule) -> None:
    # Each argument in turn is w * x, at x where w * x is NaN, inf or -inf;
    # or the argument is a parameter that holds such a number.
    rng = random.Random(5)
    for i in range(rule.arity):
        w = Value(1.0)
        ps = [Value(x) for x in rule.sample(rng)]
        fn = _arguments(rule, i, w, ps)
        good = ps[i].data
        step = minigrad.compile(fn)
        assert _same(step, fn, good)
        for x in BAD:
            for scale in (1.0, 10.0):
                w.data = scale
                assert _same(step, fn, x), (rule.name, i, x, scale)
        w.data = 1.0
        for x in BAD[:3]:  # a parameter that is not finite, used directly
            ps[i].data = x
            direct = minigrad.compile(lambda: rule(*ps))  # noqa: B023
            assert outcome(direct) == outcome(lambda: rule(*ps)), (rule.name, i, x)  # noqa: B023
        ps[i].data = good


@pytest.mark.parametrize(
    "rule", [rule for rule in ops.TABLE if rule.inline is not None], ids=lambda r: r.name
)
def test_unguarded_inline_arguments_carry_non_finite_numbers_on(rule: Rule) -> None:
    # Why the guards of the absorbing arguments suffice: through any other
    # argument of an inline form, a number that is not finite gives one that
    # is not finite, or raises. relu guards itself (nan and -inf give nan).
    form = rule.inline
    assert form is not None
    forward = form.forward
    namespace = {**templates._NAMESPACE, **form.names}
    others = (0.0, -0.0, 0.5, -0.5, 2.0, -3.0, 1e-300, 1e300, -1e300, NAN, INF, -INF)
    for i in range(rule.arity):
        for bad in (NAN, INF, -INF):
            for other in others:
                point = [other] * rule.arity
                point[i] = bad
                args = tuple(Value(x) if j == i else x for j, x in enumerate(point))
                if i in templates.guarded(form, args):
                    continue
                try:
                    out = eval(forward.format(*map(templates._const, point)), namespace)
                except (ArithmeticError, ValueError):
                    continue
                assert out - out != 0.0, (rule.name, i, point, out)


def test_constants_that_are_not_finite_compile() -> None:
    # repr(inf) is not a name in Python: the generated code used to raise NameError.
    w = Value(2.0)
    fns: list[Callable[[float], Value]] = [
        lambda x: w * x / INF,  # 0.0 eagerly too: a constant is the same number there
        lambda x: (w * x).exp() * 0.0 + w * (-INF) * 0.0,  # eager raises at the product
        lambda x: w * x + NAN,
    ]
    for fn in fns:
        assert _same(minigrad.compile(fn), fn, 1.5)


def test_a_custom_forward_is_refused_compiled_where_apply_refuses_it() -> None:
    w = Value(1.0)
    odd = {
        "an int": Rule("as_int", lambda x: 3 if x > 0 else 2**2000, (0.0,)),
        "a bool": Rule("as_bool", lambda x: x > 0 or True, (0.0,)),
        "a complex": Rule("as_complex", lambda x: x**0.5 if x > 0 else (x + 0j) ** 0.5, (1.0,)),
        "inf": Rule("blows_up", lambda x: x if x > 0 else INF, (1.0,)),
        "an absorber": Rule("clamp", lambda x: max(-1.0, min(1.0, x)), (1.0,)),
    }
    for name, rule in odd.items():

        def fn(x: float, rule: Rule = rule) -> Value:
            return rule(w * x) * 2.0

        step = minigrad.compile(fn)
        for x in (0.5, -0.5, *BAD):
            assert _same(step, fn, x), (name, x)


def test_a_relu_that_is_off_still_evaluates_a_slope_that_raises() -> None:
    # The gradient reaching a relu that is off is dropped by the generated
    # code, but eager backward computes it, and here atan2's slopes at (0, 0)
    # divide by zero: compiled backward must raise as eager does (it used to
    # return a gradient). A gate over a plain sum of products (an MLP's) is
    # not evaluated when off, as before.
    w = Value(0.0)

    def fn(x: float) -> Value:
        r = (w * x).relu()
        return minigrad.atan2(r, r) + w * x

    def gradient(make: Callable[[], Value]) -> tuple[str, Any]:
        w.grad = 0.0
        try:
            make().backward()
        except (ArithmeticError, ValueError, TypeError) as exc:
            return "error", type(exc)
        return "value", w.grad

    step = minigrad.compile(fn)
    for x in (1.0, -1.0):
        assert gradient(lambda: fn(x)) == ("error", ZeroDivisionError)  # noqa: B023
        assert gradient(lambda: step(x)) == ("error", ZeroDivisionError)  # noqa: B023
    w.data = 0.5  # the relu on at x = 1.0, off at -1.0
    for x in (1.0, -1.0):
        assert gradient(lambda: step(x)) == gradient(lambda: fn(x))  # noqa: B023
    source = step.program(1.0).source
    assert "* 0.0" in source  # the gradient reaching the relu, evaluated when it is off


# The property: random expressions, compiled against eager at bad points.

_HIDING = {"*", "+", "/", "**", "exp", "tanh", "sigmoid", "relu", "softplus", "erf", "atan", "erfc"}


#: What may be applied to an expression's result: nothing, or an op that
#: hides a number that is not finite (eager raises where it was made).
_TOPS: dict[str, Callable[[Value], Value] | None] = {
    "none": None,
    "tanh": lambda v: v.tanh(),
    "relu": lambda v: (v * 2.0).relu(),
    "1 / v": lambda v: 1.0 / v,
    "exp(-v)": lambda v: (-v).exp(),
    "sigmoid": lambda v: v.sigmoid(),
    "atan (by reference)": lambda v: ops.ATAN(v),
}


def _split(
    expr: Expression, mask: list[bool], top: Callable[[Value], Value] | None = None
) -> tuple[list[Value], Callable[..., Value]]:
    """Parameters (mask True) and a function of the other inputs, as a list of floats."""
    params = [Value(x) for x, is_param in zip(expr.inputs, mask, strict=True) if is_param]

    def fn(xs: list[Any]) -> Value:
        # Floats when called eagerly, the traced input Values under compile.
        it, ps = iter([x if isinstance(x, Value) else Value(x) for x in xs]), iter(params)
        out = expr(*[next(ps) if is_param else next(it) for is_param in mask])
        return out if top is None else top(out)

    return params, fn


def _run(fn: Callable[[list[Any]], Value], xs: list[float], params: list[Value]) -> tuple[str, Any]:
    """The loss's bits and the parameters' gradients, or the error's type.

    Compiled, by ``backward``; eagerly, by ``grad`` with respect to the
    parameters: the arguments of a compiled function are constants, which
    get no gradient, so eager ``backward`` would also evaluate slopes
    towards them that the compiled code never needs (asin's at 1.0, say).
    """
    for p in params:
        p.grad = 0.0
    try:
        loss = fn(xs)
        if isinstance(loss, CompiledValue):
            loss.backward()
            grads = [p.grad for p in params]
        else:
            grads = [g.data for g in minigrad.grad(loss, params)] if params else []
    except (ArithmeticError, ValueError, TypeError) as exc:
        return "error", type(exc)
    return "value", (struct.pack("<d", loss.data), grads)


#: Every rule, and the ones that can turn a number that is not finite into a
#: finite one drawn twice as often, with the ops that overflow: so that a drawn
#: expression often makes such a number inside and then hides it.
_RULES = [*ops.TABLE, *(r for r in ops.TABLE if r.name in _HIDING)]


@settings(max_examples=80, deadline=None)
@given(expressions(_RULES, max_ops=8), st.data())
def test_compiled_equals_eager_at_points_with_nan_and_inf(
    expr: Expression, data: st.DataObject
) -> None:
    n = expr.n_inputs
    mask = data.draw(st.lists(st.booleans(), min_size=n, max_size=n), label="is a parameter")
    top = data.draw(st.sampled_from(sorted(_TOPS)), label="applied to the result")
    params, fn = _split(expr, mask, _TOPS[top])
    step = minigrad.compile(fn)
    args = [x for x, is_param in zip(expr.inputs, mask, strict=True) if not is_param]
    assert _run(step, args, params) == _run(fn, args, params)  # traced here
    bad = st.sampled_from([*BAD, -1e308, 1e200, 0.0])
    point = data.draw(
        st.lists(st.one_of(bad, st.floats(-3.0, 3.0)), min_size=n, max_size=n), label="point"
    )
    for p, x in zip(params, (x for x, m in zip(point, mask, strict=True) if m), strict=True):
        p.data = x
    args = [x for x, is_param in zip(point, mask, strict=True) if not is_param]
    got, want = _run(step, args, params), _run(fn, args, params)
    if got[0] == "value" and want[0] == "value":
        assert got[1][0] == want[1][0]  # the loss, bit for bit
        for a, b in zip(got[1][1], want[1][1], strict=True):
            assert a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    else:
        assert got == want


def test_the_property_exercises_generated_code() -> None:
    # The compiled side of the property runs generated code, not eager: a
    # loss at a good point is a CompiledValue.
    w = Value(0.5)
    assert isinstance(minigrad.compile(lambda xs: (w * xs[0]).tanh())([1.0]), CompiledValue)
