"""Subclasses of Value work wherever a Value does (issue 21, point 1).

A user's ``class Param(Value)`` used to be a constant to the engine: its
gradient stayed 0 and ``Value(2.0) * w`` raised a confusing TypeError. Each
test here fails on that engine. The property at the end evaluates random
expressions once on plain Value leaves and once on subclass leaves and
requires the very same bits: values, ``backward``'s gradients, ``grad`` of
first and second order, and forward mode.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import Rule, Value, apply, grad, toposort
from minigrad.testing import Expression, expressions


class Param(Value):
    """A parameter as users write one: a subclass with nothing of its own."""


class Tagged(Value):
    """A subclass with state and a constructor of its own, as a framework might add."""

    def __init__(self, data: float, tag: str = "") -> None:
        super().__init__(data)
        self.tag = tag


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def test_a_subclass_leaf_gets_its_gradient() -> None:
    w = Param(0.5)
    (w * 3.0).exp().backward()
    assert w.grad == 3.0 * math.exp(1.5)  # 13.445..., where it used to be 0.0


@pytest.mark.parametrize("cls", [Param, Tagged])
def test_every_operator_takes_a_subclass_on_either_side(cls: type[Value]) -> None:
    w = cls(0.5)
    v = Value(2.0)
    cases: dict[str, tuple[Callable[[], Value], float, float | None, float]] = {
        "v * w": (lambda: v * w, 1.0, 0.5, 2.0),
        "w * v": (lambda: w * v, 1.0, 0.5, 2.0),
        "w * w": (lambda: w * w, 0.25, None, 1.0),
        "v - w": (lambda: v - w, 1.5, 1.0, -1.0),
        "v / w": (lambda: v / w, 4.0, 2.0, -8.0),
        "v ** w": (lambda: v**w, math.sqrt(2.0), None, math.sqrt(2.0) * math.log(2.0)),
        "2.0 ** w": (lambda: 2.0**w, math.sqrt(2.0), None, math.sqrt(2.0) * math.log(2.0)),
        "-w": (lambda: -w, -0.5, None, -1.0),
        "abs(w)": (lambda: abs(w), 0.5, None, 1.0),
        "w.tanh()": (lambda: w.tanh(), math.tanh(0.5), None, 1.0 - math.tanh(0.5) ** 2),
    }
    for name, (make, value, dv, dw) in cases.items():
        v.grad = w.grad = 0.0
        out = make()
        assert type(out) is Value, name  # arithmetic on a subclass gives a plain Value
        assert out.data == pytest.approx(value, rel=1e-15), name
        out.backward()
        assert w.grad == pytest.approx(dw, rel=1e-15), name
        if dv is not None:
            assert v.grad == pytest.approx(dv, rel=1e-15), name
    assert Value(0.25) < w < Value(0.75) and max(w, Value(0.1)) is w


def test_subclass_nodes_are_walked_and_kept() -> None:
    w = Tagged(0.5, tag="w")
    y = (w + 1.0) * w
    assert y.parents[1] is w and w in toposort([y])
    y.backward()
    assert w.grad == 2.0
    y.zero_grad()
    assert w.grad == 0.0 and w.tag == "w"


def test_apply_and_custom_rules_take_a_subclass() -> None:
    cube = Rule("cube", lambda x: x**3, (lambda x, out: 3.0 * x**2,))
    w = Param(2.0)
    y = apply(cube, w)
    assert y.data == 8.0 and y.parents == (w,)
    (dw,) = grad(cube(w), [w], create_graph=True)
    (dww,) = grad(dw, [w])
    assert (dw.data, dww.data) == (12.0, 12.0)


def test_a_partial_that_returns_its_subclass_argument_is_a_slope() -> None:
    # MUL's partial d/dx (x * y) = y returns y itself: a Param on Values.
    a, b = Param(1.5), Param(-2.0)
    (da, db) = grad(a * b, [a, b], create_graph=True)
    assert (da.data, db.data) == (-2.0, 1.5)
    (dab,) = grad(da, [b])
    assert dab.data == 1.0


def test_the_functional_api_takes_subclass_inputs_and_outputs() -> None:
    x, y = Param(2.0), Tagged(3.0)
    assert mg.jacobian(lambda a, b: (a * b, a), [x, y]) == [[3.0, 2.0], [1.0, 0.0]]
    out, t = mg.jvp(lambda a: a, [x], [1.0])  # func returns the subclass input itself
    assert out is x and t == 1.0
    out, (d,) = mg.vjp(lambda a: a * a, x)
    assert d == 4.0
    assert mg.hessian(lambda a, b: a * a * b, [x, y]) == [[6.0, 4.0], [4.0, 0.0]]
    _, hv = mg.hvp(lambda a, b: a * a * b, [x, y], [Param(1.0), 0.0])
    assert hv == (6.0, 4.0)


def test_the_checkers_take_subclass_inputs() -> None:
    x, y = Param(0.7), Tagged(-0.3)
    assert mg.gradcheck(lambda a, b: (a * b).sin(), [x, y])
    assert mg.gradgradcheck(lambda a, b: (a * b).sin(), [x, y])
    assert mg.check(lambda a: a, [x]).ok  # returns its subclass input
    assert mg.check(lambda a, b: a.exp() * b, [x, y], order=3, modes=("fwd", "rev")).ok
    assert mg.gradcheck(lambda a: a * a, [x], fast_mode=True)


def test_compile_takes_subclass_parameters() -> None:
    w = Param(0.5)
    step = mg.compile(lambda x: (w * x).tanh())
    step(2.0).backward()
    plain = Value(0.5)
    (plain * 2.0).tanh().backward()
    assert w.grad == plain.grad  # compiled through a subclass parameter, as eager on a Value
    assert math.isclose(w.grad, 2.0 * (1.0 - math.tanh(1.0) ** 2), rel_tol=1e-15)
    assert step.check(2.0)


def test_a_compiled_loss_is_still_refused_where_its_graph_would_be_lost() -> None:
    # CompiledValue is a subclass of Value too, but a leaf to the engine.
    w = Value(0.5)
    loss = mg.compile(lambda x: w * x)(2.0)
    with pytest.raises(TypeError, match="compiled loss"):
        grad(loss, [w])
    with pytest.raises(TypeError, match="compiled loss"):
        mg.jacobian(lambda a: mg.compile(lambda x: a * x)(1.0), [w])


# Random expressions, plain leaves against subclass leaves, bit for bit.


def _run(expr: Expression, leaves: list[Value]) -> list[bytes]:
    """Every number the engine gives for ``expr`` on ``leaves``, as bits."""
    out = expr(*leaves)
    seen = [bits(out.data)]
    out.backward(0.75)
    seen += [bits(x.grad) for x in leaves]
    first = grad(out, leaves, create_graph=True)
    seen += [bits(d.data) for d in first]
    for d in first:
        seen += [bits(dd.data) for dd in grad(d, leaves)]
    _, tangent = mg.jvp(lambda *xs: expr(*xs), leaves, [0.5 - i for i in range(len(leaves))])
    assert isinstance(tangent, float)
    seen.append(bits(tangent))
    return seen


@settings(max_examples=60, deadline=None)
@given(expressions(max_ops=8), st.randoms(use_true_random=False))
def test_subclass_leaves_give_the_bits_plain_leaves_give(
    expr: Expression, rng: random.Random
) -> None:
    plain = [Value(x) for x in expr.inputs]
    mixed = [rng.choice((Param, Tagged, Value))(x) for x in expr.inputs]
    assert _run(expr, plain) == _run(expr, mixed)
