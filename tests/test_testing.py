"""minigrad.testing: the strategies keep their promises, and hypothesis stays optional."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad import Rule, Value, ops, toposort
from minigrad.testing import (
    DEFAULT_MARGIN,
    Expression,
    Node,
    expressions,
    points,
    safe_intervals,
    values,
)

EXAMPLES = settings(max_examples=50, deadline=None)

THREE_KINKS = Rule(
    "three_kinks",
    lambda x: abs(x - 1.0) + abs(x) + abs(x + 1.0),
    (lambda x, out: 0.0,),  # never differentiated here
    domain=((-2.0, 2.0),),
    avoid=(-1.0, 0.0, 1.0, 7.0),
)
TERNARY = Rule(
    "fma",
    lambda x, y, z: x * y + z,
    (lambda x, y, z, out: y, lambda x, y, z, out: x, 1.0),
    math="x*y + z",
)


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_importing_minigrad_and_its_testing_module_does_not_import_hypothesis() -> None:
    code = "import sys, minigrad, minigrad.testing; print('hypothesis' in sys.modules)"
    assert _python(code) == "False"


def test_hypothesis_plugin_registers_value_strategy() -> None:
    # Only hypothesis is imported: its entry point must load minigrad.testing.
    code = (
        "from hypothesis import find, strategies as st\n"
        "import sys\n"
        "from minigrad import Value\n"
        "print('minigrad.testing' in sys.modules)\n"
        "print(type(find(st.from_type(Value), lambda v: v.data > 1.5)).__name__)\n"
    )
    assert _python(code).split() == ["True", "Value"]


@EXAMPLES
@given(st.from_type(Value))
def test_from_type_value_draws_finite_leaves(v: Value) -> None:
    assert type(v) is Value and math.isfinite(v.data)
    assert (v.op, v.parents, v.grad) == ("", (), 0.0)


def test_safe_intervals_cut_out_avoid_points_and_ends() -> None:
    m = DEFAULT_MARGIN
    pieces = safe_intervals(THREE_KINKS, 0)
    assert len(pieces) == 4  # 7.0 lies outside the domain
    cuts = [-2.0, -1.0, 0.0, 1.0, 2.0]
    for (lo, hi), left, right in zip(pieces, cuts, cuts[1:], strict=False):
        assert lo - left >= m and right - hi >= m
        assert lo == pytest.approx(left + m) and hi == pytest.approx(right - m)
    assert safe_intervals(ops.LOG, 0, margin=0.0) == ops.LOG.domain


def test_safe_intervals_rejects_bad_requests() -> None:
    with pytest.raises(IndexError, match="no argument 1"):
        safe_intervals(ops.EXP, 1)
    with pytest.raises(ValueError, match="margin must be >= 0"):
        safe_intervals(ops.EXP, 0, margin=-1.0)
    with pytest.raises(ValueError, match="leaves no point"):
        safe_intervals(ops.EXP, 0, margin=5.0)


@pytest.mark.parametrize("rule", [*ops.TABLE, THREE_KINKS, TERNARY], ids=lambda r: r.name)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_points_are_in_the_domain_and_away_from_kinks(rule: Rule, data: st.DataObject) -> None:
    margin = data.draw(st.sampled_from([DEFAULT_MARGIN, 0.1]), label="margin")
    point = data.draw(points(rule, margin=margin), label="point")
    assert len(point) == rule.arity
    for x, (lo, hi) in zip(point, rule.domain, strict=True):
        assert lo + margin <= x <= hi - margin
        assert all(abs(x - a) >= margin for a in rule.avoid)


@settings(max_examples=20, deadline=None)
@given(values(ops.POW), values(ops.POW))
def test_values_are_fresh_leaves(a: tuple[Value, ...], b: tuple[Value, ...]) -> None:
    assert len(a) == 2 and len({id(v) for v in (*a, *b)}) == 4
    assert all((v.op, v.parents, v.grad) == ("", (), 0.0) for v in a)


def _depths_and_float_path(expr: Expression) -> tuple[list[int], list[float]]:
    """Check every drawn op's arguments are safe; return slot depths and values."""
    data = list(expr.inputs)
    depth = [0] * expr.n_inputs
    for node in expr.nodes:
        xs = [data[a] if isinstance(a, int) else a for a in node.args]
        refs = [a for a in node.args if isinstance(a, int)]
        assert refs, f"{node} has no Value argument"
        if not node.glue:
            for i, x in enumerate(xs):
                pieces = safe_intervals(node.rule, i)
                assert any(lo <= x <= hi for lo, hi in pieces), (node, i, x)
        depth.append(max(depth[r] for r in refs) + (0 if node.glue else 1))
        data.append(node.rule.forward(*xs))
    return depth, data


@EXAMPLES
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.tuples(
            st.just(n), expressions(max_inputs=n, max_ops=n + 2, max_depth=n, constants=n != 2)
        )
    )
)
def test_expressions_keep_their_promises(drawn: tuple[int, Expression]) -> None:
    n, expr = drawn
    depth, data = _depths_and_float_path(expr)
    assert 1 <= expr.n_inputs <= n
    assert 1 <= sum(not node.glue for node in expr.nodes) <= n + 2
    assert max(depth) <= n
    if n == 2:
        assert all(isinstance(a, int) for node in expr.nodes if not node.glue for a in node.args)
    # The Value path computes the same floats, bit for bit.
    xs = [Value(x) for x in expr.inputs]
    out = expr(*xs)
    assert out.data == data[-1] == expr.build(expr.inputs, lambda r, a: r.forward(*a))
    # Every drawn op is part of the output's graph.
    reach = {len(data) - 1}
    for k in reversed(range(len(expr.nodes))):
        if expr.n_inputs + k in reach:
            reach.update(a for a in expr.nodes[k].args if isinstance(a, int))
    drawn_slots = {expr.n_inputs + k for k, node in enumerate(expr.nodes) if not node.glue}
    assert drawn_slots <= reach
    assert len(toposort([out])) == len(reach)


@settings(max_examples=20, deadline=None)
@given(expressions([TERNARY, ops.LOG], max_ops=3))
def test_expressions_take_any_arity_and_stay_in_custom_domains(expr: Expression) -> None:
    _depths_and_float_path(expr)
    xs = [Value(x) for x in expr.inputs]
    assert math.isfinite(expr(*xs).data)


def test_expression_validates_its_program() -> None:
    with pytest.raises(ValueError, match="at least one node"):
        Expression(inputs=(1.0,), nodes=())
    with pytest.raises(ValueError, match="refers to slot 1"):
        Expression(inputs=(1.0,), nodes=(Node(ops.EXP, (1,)),))
    with pytest.raises(ValueError, match="takes 2"):
        Expression(inputs=(1.0,), nodes=(Node(ops.MUL, (0,)),))
    e = Expression(inputs=(1.0, 2.0), nodes=(Node(ops.MUL, (0, 1)),))
    with pytest.raises(TypeError, match="takes 2 input"):
        e(Value(1.0))


def test_expressions_rejects_bad_arguments() -> None:
    with pytest.raises(TypeError, match="rules"):
        expressions([])
    with pytest.raises(ValueError, match="max_ops"):
        expressions(max_ops=0)
