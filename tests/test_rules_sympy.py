"""Every rule of ``ops.TABLE`` against exact SymPy derivatives, to third order.

The tests walk ``ops.TABLE``, so a rule added to the table is tested here
without touching this file: its ``math`` must parse, and at points drawn from
its declared ``domain`` (away from its ``avoid`` points) its value and every
partial derivative of order 1, 2 and 3 (mixed ones in every order) must match
SymPy's, through ``grad(..., create_graph=True)`` and, at first order,
through ``backward()``. See ``sympy_oracle`` for the tolerance.
"""

from __future__ import annotations

import math
import operator

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad import Rule, Value, cos, ops
from minigrad.ops import value_of
from minigrad.testing import points
from sympy_oracle import (
    SYMBOLS,
    compare,
    compare_rule,
    exact,
    localize,
    rule_sympy,
    sympy_values,
)

X, Y = SYMBOLS[:2]
EXAMPLES = settings(max_examples=25, deadline=None)


def _rule_id(rule: Rule) -> str:
    return rule.name


@pytest.mark.parametrize("rule", ops.TABLE, ids=_rule_id)
def test_rule_declares_math_domain_and_arity(rule: Rule) -> None:
    expr = rule_sympy(rule)  # raises if math is missing or uses stray symbols
    assert expr.free_symbols <= set(SYMBOLS[: rule.arity])
    assert len(rule.domain) == rule.arity == len(rule.partials) == len(rule.sample_box)


def _probe(rule: Rule, i: int, x: float) -> tuple[float, ...]:
    """A point with argument ``i`` at ``x``, the others at ordinary drawable values."""
    # 0.37 / 0.63 of the way along: not a midpoint, so no integer or 0 by symmetry
    # (an integer exponent would make a negative base of ** real).
    point = [0.37 * lo + 0.63 * hi for lo, hi in (rule.intervals(j)[0] for j in range(rule.arity))]
    point[i] = x
    return tuple(point)


@pytest.mark.parametrize("rule", ops.TABLE, ids=_rule_id)
def test_rule_domain_is_exactly_where_the_op_is_real_and_smooth(rule: Rule) -> None:
    # Just inside every finite end, and far out along every infinite one, the
    # op and its slope are real and finite; just outside a finite end, SymPy's
    # value is not real. So a declared end is the op's own, not a test's choice.
    # Far out is +-100.25, not an integer: gamma and its kin have a pole at
    # every negative integer, and none of them is an end of their domain.
    expr = rule_sympy(rule)
    syms = SYMBOLS[: rule.arity]
    for i, (lo, hi) in enumerate(rule.domain):
        inside = [lo + 1e-6 if math.isfinite(lo) else -100.25]
        inside.append(hi - 1e-6 if math.isfinite(hi) else 100.25)
        for x in inside:
            point = _probe(rule, i, x)
            local = localize(expr, syms, point)
            values = sympy_values([local, sympy.diff(local, syms[i])], syms, point)
            assert all(math.isfinite(v) for v in values), (rule.name, i, x, values)
        for x in [lo - 1e-6] * math.isfinite(lo) + [hi + 1e-6] * math.isfinite(hi):
            with pytest.raises(AssertionError, match="not a real number"):
                sympy_values([expr], syms, _probe(rule, i, x))


def constant_masks(arity: int) -> st.SearchStrategy[list[bool]]:
    """Which arguments are float constants: any choice that leaves a Value."""
    return st.lists(st.booleans(), min_size=arity, max_size=arity).filter(lambda m: not all(m))


@pytest.mark.parametrize("rule", ops.TABLE, ids=_rule_id)
@EXAMPLES
@given(data=st.data())
def test_rule_matches_sympy_to_third_order(rule: Rule, data: st.DataObject) -> None:
    compare_rule(rule, data.draw(points(rule), label="point"), category="rules")


@pytest.mark.parametrize("rule", [r for r in ops.TABLE if r.arity > 1], ids=_rule_id)
@EXAMPLES
@given(data=st.data())
def test_rule_with_float_constant_arguments(rule: Rule, data: st.DataObject) -> None:
    # A constant argument is stored as a float, not a node, and its partial
    # is never needed: the derivatives w.r.t. the remaining Values must
    # still be the rule's.
    point = data.draw(points(rule), label="point")
    is_const = data.draw(constant_masks(rule.arity), label="is_const")
    compare_rule(rule, point, is_const=is_const, category="rules with constants")


@EXAMPLES
@given(x=st.floats(-3.0, -0.1), c=st.integers(-3, 4), as_float=st.booleans())
def test_pow_constant_integer_exponent_at_negative_base(x: float, c: int, as_float: bool) -> None:
    exponent = float(c) if as_float else c
    compare(
        f"x ** {exponent!r}",
        lambda v: v**exponent,
        (x,),
        X ** sympy.Integer(c),
        (X,),
        category="pow with a constant",
    )


@EXAMPLES
@given(c=st.floats(0.05, 4.0), x=st.floats(-2.5, 2.5), as_int=st.booleans())
def test_pow_constant_base_value_exponent(c: float, x: float, as_int: bool) -> None:
    base = round(c) if as_int and round(c) > 0 else c
    compare(
        f"{base!r} ** y",
        lambda v: base**v,
        (x,),
        exact(base) ** Y,
        (Y,),
        category="pow with a constant",
    )


@EXAMPLES
@given(x=st.floats(0.05, 3.0), c=st.floats(-2.5, 2.5))
def test_pow_constant_float_exponent_at_positive_base(x: float, c: float) -> None:
    compare(
        f"x ** {c!r}",
        lambda v: v**c,
        (x,),
        X ** exact(c),
        (X,),
        category="pow with a constant",
    )


# The oracle itself must fail, and at the right order, on wrong rules.


def _detached(x: Value | float, out: Value | float) -> float:
    # The right slope as a number: first order right, second order 0.
    return math.cos(value_of(x))


def _linearized(x: Value | float, out: Value | float) -> Value | float:
    # cos(x0) - sin(x0) * (x - x0): right to second order, third order 0.
    x0 = value_of(x)
    return math.cos(x0) - math.sin(x0) * (x - x0)


def _mul_detached_y(x: Value | float, y: Value | float, out: Value | float) -> float:
    # d(x*y)/dx = y as a number: first order right, d2/dx dy = 0 instead of 1.
    return value_of(y)


MUTANTS = [
    (Rule("sin_wrong_sign", math.sin, (lambda x, out: -cos(x),), math="sin(x)"), 1, "d1f/dx"),
    (Rule("sin_detached", math.sin, (_detached,), math="sin(x)"), 2, "d2f/dx dx"),
    (Rule("sin_linearized", math.sin, (_linearized,), math="sin(x)"), 3, "d3f/dx dx dx"),
    (
        Rule("mul_swapped", operator.mul, (lambda x, y, out: x, lambda x, y, out: y), math="x*y"),
        1,
        "d1f/dx",
    ),
    (
        Rule("mul_detached", operator.mul, (_mul_detached_y, lambda x, y, out: x), math="x*y"),
        2,
        "d2f/dx dy",
    ),
]


@pytest.mark.parametrize(
    ("rule", "order", "partial"), MUTANTS, ids=lambda p: getattr(p, "name", "")
)
def test_oracle_catches_wrong_rules_at_the_first_wrong_order(
    rule: Rule, order: int, partial: str
) -> None:
    point = (0.7, -1.3)[: rule.arity]
    with pytest.raises(AssertionError, match=rf"order {order}, {partial} at") as info:
        compare_rule(rule, point, category="oracle self-test (must fail)")
    assert rule.name in str(info.value)


def test_oracle_evaluates_constant_expressions() -> None:
    # exp(exp(x - x)) is the constant e: lambdify hands back mpmath's e, not an mpf.
    x = SYMBOLS[0]
    exprs = [sympy.exp(sympy.exp(x - x)), sympy.pi, sympy.Rational(1, 2), sympy.Integer(0), x]
    assert sympy_values(exprs, (x,), (0.25,)) == [math.e, math.pi, 0.5, 0.0, 0.25]
    with pytest.raises(AssertionError, match="not a real number"):
        sympy_values([sympy.sqrt(x)], (x,), (-1.0,))
