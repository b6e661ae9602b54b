"""The engine: composite graphs against SymPy, backward/grad semantics, errors, memory.

Derivatives are never hard-coded: they come from SymPy (``sympy_oracle``), a
closed form computed from the inputs, or a second minigrad path.
"""

from __future__ import annotations

import ast
import gc
import math
import operator
import random
import re
import subprocess
import sys
from collections.abc import Callable

import pytest
import sympy
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

import minigrad
from minigrad import Rule, Value, apply, cos, exp, grad, ops, sin, toposort
from minigrad.core._validate import as_float, finite_float, non_negative, positive
from minigrad.core.backward import _float_step
from minigrad.core.inputs import value_list
from minigrad.core.inputs import weights as valid_weights
from minigrad.core.value import _args, _node, _postorder
from minigrad.testing import Expression, Node, expressions, points, safe_intervals
from sympy_oracle import apply_sympy, compare, compare_rule

#: Symbols named like the inputs in ``str(Expression)``, so messages line up.
INPUTS = tuple(sympy.symbols("x0:4", real=True))
EXAMPLES = settings(max_examples=30, deadline=None)


def leaves(expr: Expression) -> list[Value]:
    return [Value(x) for x in expr.inputs]


def expression_sympy(expr: Expression) -> object:
    return expr.build(INPUTS[: expr.n_inputs], apply_sympy)


def check_expression(expr: Expression, category: str) -> None:
    __tracebackhide__ = True
    compare(
        f"expression\n{expr}\n",
        expr,
        expr.inputs,
        expression_sympy(expr),
        INPUTS[: expr.n_inputs],
        category=category,
    )


# Composite expressions against SymPy, to third order.


@settings(max_examples=60, deadline=None)
@given(expressions())
def test_random_expressions_match_sympy_to_third_order(expr: Expression) -> None:
    check_expression(expr, "expressions")


def _refs(node: Node) -> list[int]:
    return [a for a in node.args if isinstance(a, int)]


def _drawn(expr: Expression, rule: Rule) -> list[list[int]]:
    """The slot arguments of every drawn (not glue) ``rule`` node."""
    return [_refs(n) for n in expr.nodes if n.rule is rule and not n.glue]


def _ancestors(expr: Expression) -> list[set[int]]:
    """For each slot, the slots it is computed from (itself included)."""
    sets: list[set[int]] = [{i} for i in range(expr.n_inputs)]
    for k, node in enumerate(expr.nodes):
        sets.append({expr.n_inputs + k}.union(*(sets[r] for r in _refs(node))))
    return sets


def _has_diamond(expr: Expression) -> bool:
    # a -> b, a -> c, (b, c) -> d with a a drawn op and b != c.
    anc = _ancestors(expr)
    drawn_ops = {expr.n_inputs + k for k, n in enumerate(expr.nodes) if not n.glue}
    for node in expr.nodes:
        refs = _refs(node)
        if len(refs) == 2 and refs[0] != refs[1]:
            b, c = refs
            if (anc[b] - {b}) & (anc[c] - {c}) & drawn_ops:
                return True
    return False


def _shared(expr: Expression) -> bool:
    # A drawn op's result used by two different ops.
    users: dict[int, set[int]] = {}
    for k, node in enumerate(expr.nodes):
        for r in _refs(node):
            users.setdefault(r, set()).add(k)
    return any(
        r >= expr.n_inputs and not expr.nodes[r - expr.n_inputs].glue and len(ks) >= 2
        for r, ks in users.items()
    )


SHAPES: dict[str, Callable[[Expression], bool]] = {
    "x * x": lambda e: any(len(r) == 2 and r[0] == r[1] for r in _drawn(e, ops.MUL)),
    "x + x": lambda e: any(len(r) == 2 and r[0] == r[1] for r in _drawn(e, ops.ADD)),
    "x ** y (Value exponent)": lambda e: any(len(r) == 2 for r in _drawn(e, ops.POW)),
    "x ** x": lambda e: any(len(r) == 2 and r[0] == r[1] for r in _drawn(e, ops.POW)),
    "c ** x (constant base)": lambda e: any(
        not isinstance(n.args[0], int) for n in e.nodes if n.rule is ops.POW and not n.glue
    ),
    "shared subexpression": _shared,
    "diamond": _has_diamond,
    "squashed into a domain": lambda e: any(n.glue and n.rule is ops.SIN for n in e.nodes),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_expressions_produce_shape_and_it_matches_sympy(shape: str) -> None:
    # The strategy must be able to produce each shape (find fails otherwise),
    # and each found expression must match SymPy. No shrinking: the first
    # hit is a richer expression than the minimal one.
    found = find(
        expressions(),
        SHAPES[shape],
        settings=settings(
            max_examples=3000, database=None, derandomize=True, phases=[Phase.generate]
        ),
    )
    check_expression(found, "expression shapes")


# backward: accumulation, seed, agreement with grad.


@EXAMPLES
@given(expressions(), st.floats(-2.0, 2.0))
def test_backward_accumulates_exactly_and_matches_grad(expr: Expression, seed: float) -> None:
    xs = leaves(expr)
    out = expr(*xs)
    nodes = toposort([out])
    out.backward(seed)
    first = [n.grad for n in nodes]
    # grad() of the output w.r.t. each node, leaves and intermediates, one at
    # a time: grad holds its other inputs fixed, where .grad is d out / d node
    # along every path.
    for n, g in zip(nodes, first, strict=True):
        (e,) = grad(out, [n], [seed])
        assert g == pytest.approx(e.data, rel=1e-12, abs=1e-12), f"node {n!r}"
    out.backward(seed)
    second = [n.grad for n in nodes]
    assert second == [2.0 * g for g in first]
    assert out.grad == 2.0 * seed


def test_backward_on_shared_leaf_adds_every_path() -> None:
    # y = (x*x) * (x*x) + x + x: x reaches y along four paths, two through
    # the diamond sq -> (sq * sq), and x * x uses one node twice.
    a = 1.7
    x = Value(a)
    sq = x * x
    y = sq * sq + x + x  # x**4 + 2x
    y.backward()
    assert x.grad == pytest.approx(4 * a**3 + 2)
    assert sq.grad == pytest.approx(2 * a**2)
    y.backward()
    assert x.grad == pytest.approx(2 * (4 * a**3 + 2))


def test_backward_seed_must_be_a_number() -> None:
    with pytest.raises(TypeError, match="str"):
        Value(1.0).exp().backward("1")  # type: ignore[arg-type]


# grad: .grad untouched, unused inputs, grad_outputs.


@EXAMPLES
@given(expressions(), st.floats(-100.0, 100.0))
def test_grad_neither_reads_nor_changes_dot_grad(expr: Expression, junk: float) -> None:
    xs = leaves(expr)
    out = expr(*xs)
    clean = [g.data for g in grad(out, xs)]
    clean2 = [g.data for g in grad(grad(out, xs, create_graph=True)[0], xs)]
    nodes = toposort([out])
    for i, n in enumerate(nodes):
        n.grad = junk + i
    before = [n.grad for n in nodes]
    assert [g.data for g in grad(out, xs)] == clean
    first = grad(out, xs, create_graph=True)
    assert [g.data for g in grad(first[0], xs)] == clean2
    assert [n.grad for n in nodes] == before
    old = set(nodes)
    assert all(n.grad == 0.0 for g in first for n in toposort([g]) if n not in old)


def test_unused_inputs_get_a_fresh_zero() -> None:
    x, z = Value(0.3), Value(5.0)
    c = Value(2.0)
    for create_graph in (False, True):
        dx, dz = grad(x.sin() * 3.0, [x, z], create_graph=create_graph)
        assert dx.data == pytest.approx(3.0 * math.cos(0.3))
        assert type(dz) is Value and dz.data == 0.0 and dz is not z
        (dc,) = grad(c * 3.0, [x], create_graph=create_graph)
        assert type(dc) is Value and dc.data == 0.0
    # The derivative of a linear function's derivative is a zero as well.
    (d1,) = grad(x * 3.0 + 1.0, [x], create_graph=True)
    (d2,) = grad(d1, [x], create_graph=True)
    (d3,) = grad(d2, [x])
    assert (d1.data, d2.data, d3.data) == (3.0, 0.0, 0.0)


def test_grad_of_an_input_itself_is_one() -> None:
    x, y = Value(2.0), Value(3.0)
    assert [g.data for g in grad(x, [x, y])] == [1.0, 0.0]
    assert [g.data for g in grad([x, y], [x, y], [4.0, 5.0])] == [4.0, 5.0]


def _two_outputs(xs: list[Value], expr: Expression) -> list[Value]:
    out = expr(*xs)
    return [out, (xs[0] * out).tanh() + xs[0] * xs[0]]


@EXAMPLES
@given(expressions(), st.floats(-3.0, 3.0), st.floats(-3.0, 3.0))
def test_grad_outputs_weights_are_honoured(expr: Expression, w1: float, w2: float) -> None:
    xs = leaves(expr)
    outs = _two_outputs(xs, expr)
    d1 = [g.data for g in grad(outs[0], xs)]
    d2 = [g.data for g in grad(outs[1], xs)]
    want = [w1 * a + w2 * b for a, b in zip(d1, d2, strict=True)]
    for weights in ([w1, w2], [Value(w1), Value(w2)]):
        got = [g.data for g in grad(outs, xs, weights)]
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    # The same output twice: its weights add.
    twice = [g.data for g in grad([outs[0], outs[0]], xs, [w1, w2])]
    assert twice == pytest.approx([(w1 + w2) * a for a in d1], rel=1e-12, abs=1e-12)


@EXAMPLES
@given(expressions(), st.floats(-3.0, 3.0), st.floats(-3.0, 3.0))
def test_value_weights_are_differentiable_with_create_graph(
    expr: Expression, w1: float, w2: float
) -> None:
    xs = leaves(expr)
    outs = _two_outputs(xs, expr)
    d1 = [g.data for g in grad(outs[0], xs)]
    d2 = [g.data for g in grad(outs[1], xs)]
    ws = [Value(w1), Value(w2)]
    weighted = grad(outs, xs, ws, create_graph=True)
    for i, g in enumerate(weighted):
        # d/dw_j of sum_k w_k d outs_k / dx_i is d outs_j / dx_i.
        dw = [h.data for h in grad(g, ws)]
        assert dw == pytest.approx([d1[i], d2[i]], rel=1e-12, abs=1e-12)


def test_grad_rejects_bad_arguments() -> None:
    x = Value(1.0)
    y = x.exp()
    with pytest.raises(ValueError, match="2 entries for 1 output"):
        grad(y, [x], [1.0, 2.0])
    with pytest.raises(TypeError, match="inputs"):
        grad(y, [1.0])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="empty"):
        grad([], [x])


# zero_grad, repr, identity, op/parents/label.


@EXAMPLES
@given(expressions())
def test_zero_grad_clears_exactly_this_graph(expr: Expression) -> None:
    xs = leaves(expr)
    out = expr(*xs)
    downstream = out * 2.0
    outsider = Value(1.0)
    outsider.grad = 5.0
    downstream.backward()
    assert out.grad == 2.0
    out.zero_grad()
    assert all(n.grad == 0.0 for n in toposort([out]))
    assert downstream.grad == 1.0  # not part of out's graph
    assert outsider.grad == 5.0


def test_repr_shows_data_grad_label_and_op() -> None:
    assert repr(Value(2.0)) == "Value(data=2.0, grad=0.0)"
    assert repr(Value(3)) == "Value(data=3.0, grad=0.0)"
    x = Value(0.1, label="x")
    y = x * 3.0
    y.backward()
    assert "data=0.1" in repr(x) and "grad=3.0" in repr(x) and "'x'" in repr(x)
    assert repr(y).startswith("Value(data=0.30000000000000004, grad=1.0")
    assert "'*'" in repr(y)


def test_equality_and_hash_are_by_identity() -> None:
    a, b = Value(1.0), Value(1.0)
    assert a == a and a != b and (a == b) is False
    assert len({a, b}) == 2 and {a: 1}[a] == 1
    assert hash(a) == hash(a)
    assert Value.__eq__ is object.__eq__ and Value.__hash__ is object.__hash__


def test_leaf_attributes() -> None:
    x = Value(2, label="x")
    assert (x.data, type(x.data), x.grad, x.label, x.op, x.parents) == (
        2.0,
        float,
        0.0,
        "x",
        "",
        (),
    )
    assert Value(1.0).label == ""
    _set_data(x, 5)
    assert x.data == 5.0 and type(x.data) is float
    with pytest.raises(TypeError, match="str"):
        _set_data(x, "5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="label"):
        Value(1.0, label=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="_children must be a tuple of Values"):
        Value(1.0, "x")  # type: ignore[arg-type]


def _set_data(v: Value, data: float) -> None:
    # A function, so the type checker does not narrow v.data to the int.
    v.data = data


def test_op_parents_and_args_of_operators() -> None:
    x, y = Value(2.0, label="x"), Value(3.0, label="y")
    cases: list[tuple[Value, str, tuple[Value, ...], tuple[Value | float, ...]]] = [
        (x + y, "+", (x, y), (x, y)),
        (x * 2.0, "*", (x,), (x, 2.0)),
        (2.0 - x, "-", (x,), (2.0, x)),
        (2 / x, "/", (x,), (2.0, x)),
        (x * x, "*", (x, x), (x, x)),
        (x**y, "**", (x, y), (x, y)),
        (2.0**x, "**", (x,), (2.0, x)),
        (x**3, "**", (x,), (x, 3.0)),
        (-x, "neg", (x,), (x,)),
        (abs(x), "abs", (x,), (x,)),
    ]
    for node, op, parents, args in cases:
        assert (node.op, node.parents, node.args, node.label) == (op, parents, args, "")
        assert all(type(a) is float for a in node.args if type(a) is not Value)
    z = x.tanh()
    z.label = "z"
    assert (z.op, z.parents, z.label) == ("tanh", (x,), "z")


_API_METHODS = ("exp", "log", "tanh", "sigmoid", "relu", "sin", "cos", "sqrt")
METHODS: dict[str, Callable[[Value], Value]] = {
    "neg": lambda v: -v,
    "abs": abs,
    **{name: getattr(Value, name) for name in _API_METHODS},
}


@pytest.mark.parametrize("name", METHODS)
def test_methods_apply_the_rule_of_the_same_name(name: str) -> None:
    (rule,) = (r for r in ops.TABLE if r.name == name)
    lo, hi = safe_intervals(rule, 0)[-1]
    x = Value((lo + hi) / 2)
    node = METHODS[name](x)
    assert (node.op, node.parents, node.data) == (name, (x,), rule.forward(x.data))


@pytest.mark.parametrize("rule", ops.TABLE, ids=lambda r: r.name)
def test_each_rule_is_spelled_as_the_operator_or_method_that_applies_it(rule: Rule) -> None:
    # The spelling in ops.py and the dunder block here must agree: the
    # spelling, run as Python on Values (and with a float constant on either
    # side), makes a node of this very rule, as rule.as_written does.
    point = rule.sample(random.Random(0))
    constants = [None, *range(rule.arity)] if rule.arity > 1 else [None]
    for constant in constants:
        args = [x if i == constant else Value(x) for i, x in enumerate(point)]
        names = dict(zip(rule.arg_names, args, strict=True))
        # Only abs among the builtins: a call of anything else is not Python's
        # spelling; a call spelling (atan2(y, x)) names minigrad's function.
        functions = {name: getattr(minigrad, name) for name in minigrad.__all__}
        written = eval(rule.spelling, {"__builtins__": {"abs": abs}, **functions}, names)
        assert type(written) is Value and written.rule is rule, rule.spelling
        assert written.data == rule.forward(*point)
        as_written = rule.as_written(*args)
        assert as_written.rule is rule and as_written.args == written.args


def test_errors_name_the_arguments_as_the_rule_names_them() -> None:
    ratio = Rule(
        "ratio",
        lambda num, den: num / den,
        (lambda n, d, out: 1.0 / d, lambda n, d, out: -out / d),
        arg_names=("num", "den"),
        requires="den must be non-zero",
    )
    with pytest.raises(
        ZeroDivisionError, match=r"ratio: den must be non-zero, got num=1.0, den=0.0"
    ):
        ratio(Value(1.0), 0.0)
    root_of_product = Rule(
        "root_of_product",
        lambda a, b: math.sqrt(a * b),
        (lambda a, b, out: 0.5 * b / out, lambda a, b, out: 0.5 * a / out),
        arg_names=("a", "b"),
    )
    with pytest.raises(
        ZeroDivisionError, match=r"backward: partials\[0\] failed on floats at a=0.0, b=1.0"
    ):
        root_of_product(Value(0.0), Value(1.0)).backward()
    # A partial that reads .data gets floats from backward: the advice is the argument
    # itself, not a function minigrad does not have (minigrad.data is its datasets).
    reads_data = Rule("reads_data", math.exp, (lambda x, out: x.data * 0.0 + out,))
    with pytest.raises(AttributeError, match=r"floats, which have no \.data: use the argument"):
        reads_data(Value(0.5)).backward()
    # Beyond six arguments every one is still named (x0 ... x6), none dropped.
    seven = Rule("seven", lambda *xs: math.log(sum(xs)), (lambda *a: 1.0 / sum(a[:-1]),) * 7)
    with pytest.raises(ValueError, match=r"got x0=-1.0, x1=0.0, x2=0.0, .*, x6=0.0$"):
        seven(Value(-1.0), *(Value(0.0) for _ in range(6)))


# Errors: constructor, operands, domain.


@pytest.mark.parametrize(
    ("bad", "type_name"),
    [("1", "str"), (None, "NoneType"), (1j, "complex"), (Value(1.0), "Value"), (True, "bool")],
)
def test_constructor_rejects_non_numbers_naming_the_type(bad: object, type_name: str) -> None:
    with pytest.raises(TypeError) as info:
        Value(bad)  # type: ignore[arg-type]
    # The message starts "Value: ..."; the type must be named after that.
    assert re.search(rf"\b{type_name}\b", str(info.value).removeprefix("Value:")), info.value


BINARY: list[tuple[str, Callable[[object, object], object]]] = [
    ("+", lambda a, b: a + b),  # type: ignore[operator]
    ("-", lambda a, b: a - b),  # type: ignore[operator]
    ("*", lambda a, b: a * b),  # type: ignore[operator]
    ("/", lambda a, b: a / b),  # type: ignore[operator]
    ("**", lambda a, b: a**b),  # type: ignore[operator]
]


@pytest.mark.parametrize(("name", "op"), BINARY, ids=[n for n, _ in BINARY])
@pytest.mark.parametrize("other", ["a", None, 1j, [1.0], object()], ids=repr)
def test_unsupported_operands_raise_type_error(
    name: str, op: Callable[[object, object], object], other: object
) -> None:
    v = Value(1.0)
    with pytest.raises(TypeError):
        op(v, other)
    with pytest.raises(TypeError):
        op(other, v)


def test_dunders_return_not_implemented_for_unsupported_operands() -> None:
    v = Value(1.0)
    for name in ("add", "sub", "mul", "truediv", "pow"):
        for prefix in ("__", "__r"):
            method = getattr(v, f"{prefix}{name}__")
            assert method("a") is NotImplemented, method


@pytest.mark.parametrize(
    ("make", "error", "op", "shown"),
    [
        (lambda: Value(0.0).log(), ValueError, "log", "0.0"),
        (lambda: Value(-1.0).log(), ValueError, "log", "-1.0"),
        (lambda: Value(-1.0).sqrt(), ValueError, "sqrt", "-1.0"),
        (lambda: Value(-1.5).log1p(), ValueError, "log1p", "-1.5"),
        (lambda: Value(0.0) ** -1, ZeroDivisionError, "**", "0.0"),
        (lambda: Value(0.0) ** Value(-1.0), ZeroDivisionError, "**", "-1.0"),
        (lambda: 0.0 ** Value(-1.0), ZeroDivisionError, "**", "0.0"),
        (lambda: Value(-8.0) ** (1 / 3), ValueError, "**", "-8.0"),
        (lambda: Value(1000.0).exp(), OverflowError, "exp", "1000.0"),
        (lambda: Value(1e200) * 1e200, OverflowError, "*", "1e+200"),
        (lambda: Value(10.0) ** 400, OverflowError, "**", "400"),
        (lambda: Value(1.0) / 0, ZeroDivisionError, "/", "0.0"),
        (lambda: Value(1.0) / Value(0.0), ZeroDivisionError, "/", "0.0"),
        (lambda: 1.0 / Value(0.0), ZeroDivisionError, "/", "0.0"),
    ],
    ids=lambda p: p if isinstance(p, str) else "",
)
def test_domain_errors_name_the_op_and_the_value(
    make: Callable[[], Value], error: type[Exception], op: str, shown: str
) -> None:
    with pytest.raises(error) as info:
        make()
    message = str(info.value)
    assert message.startswith(f"{op}:") and shown in message, message


def _sqrt_at_zero() -> tuple[Value, list[Value]]:
    x = Value(0.0)
    return x.sqrt(), [x]


def _negative_base_value_exponent() -> tuple[Value, list[Value]]:
    x, p = Value(-2.0), Value(2.0)
    return x**p, [x, p]  # d/dp needs log(-2.0)


@pytest.mark.parametrize(
    ("make", "op", "shown"),
    [(_sqrt_at_zero, "sqrt", "0.0"), (_negative_base_value_exponent, "**", "-2.0")],
    ids=["sqrt at 0", "negative base, Value exponent"],
)
@pytest.mark.parametrize("how", ["backward", "grad", "grad create_graph"])
def test_backward_time_domain_errors_name_the_op(
    make: Callable[[], tuple[Value, list[Value]]], op: str, shown: str, how: str
) -> None:
    y, inputs = make()  # the forward is fine...
    with pytest.raises((ArithmeticError, ValueError)) as info:  # ...a derivative is not
        if how == "backward":
            y.backward()
        else:
            grad(y, inputs, create_graph=how == "grad create_graph")
    message = str(info.value)
    assert message.startswith(f"op {op!r} backward") and shown in message, message


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_only_needs_the_partials_of_the_inputs_asked_for(create_graph: bool) -> None:
    # d/dx x**p = p * x**(p - 1) is defined at x = -2, p = 2; d/dp (log(-2))
    # is not, and grad was not asked for it.
    a, b = -2.0, 2.0
    x, p = Value(a), Value(b)
    (dx,) = grad(x**p, [x], create_graph=create_graph)
    assert dx.data == b * a ** (b - 1)


def test_constant_zero_base_pow_has_zero_derivative() -> None:
    # For y > 0, 0.0 ** y is 0 on a neighbourhood of y, so its derivative is
    # 0 (PyTorch also gives 0), not a domain error.
    y = Value(2.0)
    assert grad(0.0**y, [y])[0].data == 0.0
    (0.0**y).backward()
    assert y.grad == 0.0


# The deep chain and memory.


def test_million_deep_chain_backward_with_default_recursion_limit() -> None:
    # x_{k+1} = relu(1.0001 x_k + 0.001) stays positive from 0.5, so
    # d x_n / d x_0 = 1.0001 ** n; the float loop multiplies in the order
    # backward does, so it must agree to the last bit.
    n = 1_000_000
    x0 = Value(0.5)
    x = x0
    data = 0.5
    for _ in range(n):
        x = (x * 1.0001 + 0.001).relu()
        data = max(data * 1.0001 + 0.001, 0.0)
    x.backward()
    slope = 1.0
    for _ in range(n):
        slope *= 1.0001
    assert x.data == data
    assert x0.grad == slope
    assert x0.grad == pytest.approx(1.0001**n, rel=1e-9)


def _live_values() -> int:
    return sum(type(o) is Value for o in gc.get_objects())


def test_graphs_are_freed_by_reference_counting_alone() -> None:
    gc.collect()
    gc.disable()
    try:
        baseline = _live_values()
        x = Value(0.7)
        w = Value(-1.3)
        y = x
        for _ in range(200):
            y = (y * w + x).tanh() + (y * y).sigmoid()
        y.backward()
        g = grad(y, [x, w], [Value(2.0)], create_graph=True)
        (gg,) = grad(g[0], [w], create_graph=True)
        assert _live_values() > baseline + 1000
        del x, w, y, g, gg
        # Nothing left for the cycle collector: reference counting freed it all.
        assert _live_values() == baseline
        assert gc.collect() == 0
    finally:
        gc.enable()


# Custom ops: one, two and three arguments, constant partials, float constants.


SIN_CUBED = Rule(
    "sin_cubed",
    lambda x: math.sin(x) ** 3,
    (lambda x, out: 3.0 * sin(x) ** 2 * cos(x),),
    math="sin(x)**3",
    domain=((-3.0, 3.0),),
)
HYPOT = Rule(
    "hypot",
    math.hypot,
    (lambda x, y, out: x / out, lambda x, y, out: y / out),
    math="sqrt(x**2 + y**2)",
    domain=((0.5, 3.0), (-3.0, 3.0)),
)
SCALE_PLUS_LOG = Rule(
    "scale_plus_log",
    lambda x, y: 3.0 * x + math.log(y),
    (3.0, lambda x, y, out: 1.0 / y),
    math="3*x + log(y)",
    domain=((-3.0, 3.0), (0.1, 4.0)),
    requires="y must be > 0",
)
X_EXP_YZ = Rule(
    "x_exp_yz",
    lambda x, y, z: x * math.exp(y * z),
    (
        lambda x, y, z, out: exp(y * z),
        lambda x, y, z, out: z * out,
        lambda x, y, z, out: y * out,
    ),
    math="x*exp(y*z)",
    domain=((-2.0, 2.0), (-1.5, 1.5), (-1.5, 1.5)),
)
AFFINE3 = Rule(
    "affine3",
    lambda x, y, z: 2.0 * x - y + 0.5 * z,
    (2.0, -1.0, 0.5),
    math="2*x - y + z/2",
)
CUSTOM = (SIN_CUBED, HYPOT, SCALE_PLUS_LOG, X_EXP_YZ, AFFINE3)


@pytest.mark.parametrize("rule", CUSTOM, ids=lambda r: r.name)
@EXAMPLES
@given(data=st.data())
def test_custom_op_matches_sympy_to_third_order(rule: Rule, data: st.DataObject) -> None:
    point = data.draw(points(rule), label="point")
    compare_rule(rule, point, category="custom ops", label="custom op")


@pytest.mark.parametrize("rule", [r for r in CUSTOM if r.arity > 1], ids=lambda r: r.name)
@EXAMPLES
@given(data=st.data())
def test_custom_op_with_float_constant_arguments(rule: Rule, data: st.DataObject) -> None:
    point = data.draw(points(rule), label="point")
    is_const = data.draw(
        st.lists(st.booleans(), min_size=rule.arity, max_size=rule.arity).filter(
            lambda m: not all(m)
        ),
        label="is_const",
    )
    compare_rule(rule, point, is_const=is_const, category="custom ops", label="custom op")


@settings(max_examples=25, deadline=None)
@given(expressions([*CUSTOM, ops.MUL, ops.ADD, ops.TANH], max_ops=4))
def test_expressions_of_custom_ops_match_sympy(expr: Expression) -> None:
    check_expression(expr, "custom ops")


def test_custom_op_forward_errors_name_the_op() -> None:
    with pytest.raises(ValueError, match=r"scale_plus_log: y must be > 0, got x=1.0, y=-1.0"):
        SCALE_PLUS_LOG(Value(1.0), Value(-1.0))
    with pytest.raises(TypeError, match="takes 3 argument"):
        X_EXP_YZ(Value(1.0), 2.0)


# Where no gradient flows, a node's partials are not evaluated.


def test_no_gradient_flows_through_a_dead_relu_so_an_undefined_slope_is_not_reached() -> None:
    # relu(sqrt(x) - 1) at x = 0: the relu is off, so d/dx is 0 and the slope
    # of sqrt at 0 (infinite) is never needed: backward and grad agree on 0.
    x = Value(0.0)
    y = (x.sqrt() - 1.0).relu()
    y.backward()
    assert x.grad == 0.0
    assert grad(y, [x])[0].data == 0.0


def test_where_gradient_flows_an_undefined_slope_raises_naming_the_op() -> None:
    x = Value(0.0)
    y = x.sqrt() + 1.0
    with pytest.raises(ZeroDivisionError, match="op 'sqrt' backward"):
        y.backward()
    with pytest.raises(ZeroDivisionError, match="op 'sqrt' backward"):
        grad(y, [x])


# The node's layout: the hot paths' inlined copies agree with the reference.

#: Each built-in rule as its operator or method is spelled.
SPELLED: dict[str, Callable[..., Value]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "**": operator.pow,
    "neg": operator.neg,
    "abs": abs,
}


def _slots(node: Value) -> tuple[object, ...]:
    return tuple(getattr(node, slot) for slot in Value.__slots__)


@pytest.mark.parametrize("rule", ops.TABLE, ids=lambda r: r.name)
def test_operators_and_methods_build_the_node_apply_builds(rule: Rule) -> None:
    point = rule.sample(random.Random(1))
    # An operator, a method, or (atan2, hypot) the function of the same name.
    spelled = (
        SPELLED.get(rule.name) or getattr(Value, rule.name, None) or getattr(minigrad, rule.name)
    )
    # Every way to pass the arguments: Values, and (binary) a number on either side.
    shapes = [(True,)] if rule.arity == 1 else [(True, True), (True, False), (False, True)]
    for shape in shapes:
        for number in (float, int):
            args: list[Value | float] = [
                Value(x) if is_value else number(round(x)) if number is int else x
                for x, is_value in zip(point, shape, strict=True)
            ]
            if rule.name == "**" and isinstance(args[0], int) and args[0] <= 0:
                continue  # 0 ** negative or a negative base: not this test's subject
            try:
                by_operator = spelled(*args)
            except (ArithmeticError, ValueError):
                continue  # a rounded int left the domain
            by_apply = apply(rule, *args)
            assert _slots(by_operator) == _slots(by_apply), (rule.name, args)
            assert _args(by_operator) == tuple(float(a) if isinstance(a, int) else a for a in args)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_node_and_args_are_inverse(n: int) -> None:
    args: list[Value | float] = [Value(float(i)) if i % 2 == 0 else float(i) for i in range(n)]
    node = _node(ops.ADD, 1.5, args)
    assert _args(node) == tuple(args)
    assert node.parents == tuple(a for a in args if isinstance(a, Value))
    assert (node.data, node.grad, node.label, node.rule) == (1.5, 0.0, "", ops.ADD)
    assert _args(Value(1.0)) == ()


def _reference_postorder(roots: list[Value]) -> list[Value]:
    """_postorder, written plainly with _args: recursive, a set for the marks."""
    order: list[Value] = []
    done: set[Value] = set()

    def visit(node: Value) -> None:
        if node in done:
            return
        # _postorder takes a node's last argument first (a stack), so this does too.
        for a in reversed(_args(node)):
            if isinstance(a, Value):
                visit(a)
        if node not in done:
            done.add(node)
            order.append(node)

    for root in reversed(roots):
        visit(root)
    return order


GRAPH_RULES = [*CUSTOM, ops.MUL, ops.ADD, ops.TANH, ops.POW, ops.EXP]


@EXAMPLES
@given(expressions(GRAPH_RULES, max_ops=8), st.data())
def test_postorder_equals_the_reference_traversal(expr: Expression, data: st.DataObject) -> None:
    xs = leaves(expr)
    out = expr(*xs)
    nodes = toposort([out])
    roots = data.draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=4), label="roots")
    assert _postorder(roots) == _reference_postorder(roots)
    # Moving the grads aside changes neither the order nor anything but .grad.
    for i, n in enumerate(nodes):
        n.grad = float(i % 3)
    prior: dict[Value, float] = {}
    order = _postorder(roots, move_grads_to=prior)
    assert order == _reference_postorder(roots)
    assert prior == {n: float(i % 3) for i, n in enumerate(nodes) if i % 3 and n in order}
    assert all(n.grad == 0.0 for n in order)


@EXAMPLES
@given(expressions(GRAPH_RULES, max_ops=8), st.floats(-2.0, 2.0))
def test_backward_agrees_bit_for_bit_with_the_reference_float_step(
    expr: Expression, seed: float
) -> None:
    xs = leaves(expr)
    out = expr(*xs)
    nodes = toposort([out])
    # The reference: _float_step on every node, in the order backward takes.
    acc: dict[Value, float] = {out: seed}
    for node in nodes:
        if acc.get(node) and node.rule is not None:
            _float_step(node, acc[node], None, acc)
    out.backward(seed)
    assert [n.grad for n in nodes] == [acc.get(n, 0.0) for n in nodes]


# Argument validation (minigrad._validate), shared by the whole package.


@pytest.mark.parametrize(
    ("call", "error", "shown"),
    [
        (lambda: as_float(True, "eps"), TypeError, "eps must be an int or float, got bool True"),
        (lambda: as_float("1", "eps"), TypeError, "eps must be an int or float, got str '1'"),
        (lambda: as_float(10**400, "eps"), OverflowError, "eps, the int 1e+400, is too large"),
        (lambda: finite_float(math.inf, "grad"), ValueError, "grad must be finite, got inf"),
        (lambda: finite_float(None, "grad"), TypeError, "grad must be an int or float"),
        (lambda: non_negative(-0.5, "atol"), ValueError, "atol must be finite and >= 0, got -0.5"),
        (lambda: non_negative(math.nan, "atol"), ValueError, "atol must be finite and >= 0"),
        (lambda: non_negative(False, "atol"), TypeError, "atol must be an int or float, got bool"),
        (lambda: positive(0, "eps"), ValueError, "eps must be finite and > 0, got 0"),
        (lambda: positive(math.inf, "eps"), ValueError, "eps must be finite and > 0, got inf"),
        (lambda: value_list("ab", "f: xs"), TypeError, "f: xs must be a Value or a sequence"),
        (lambda: value_list(3.0, "f: xs"), TypeError, "got float 3.0"),
        (lambda: value_list([Value(1.0), 2], "f: xs"), TypeError, "f: xs[1] must be a Value"),
        (lambda: value_list([], "f: xs", nonempty=True), ValueError, "f: xs is empty"),
        (lambda: value_list([Value(math.nan)], "f: xs", finite=True), ValueError, "xs[0]"),
        (
            lambda: valid_weights([1.0, 2.0], 1, "g: w"),
            ValueError,
            "g: w has 2 entries for 1 output",
        ),
        (lambda: valid_weights(2.0, 1, "g: w"), TypeError, "g: w must be a sequence of floats"),
        (lambda: valid_weights([True], 1, "g: w"), TypeError, "g: w[0] must be a finite float or"),
        (
            lambda: valid_weights([math.nan], 1, "g: w"),
            ValueError,
            "g: w[0] must be finite, got nan",
        ),
        (lambda: valid_weights([Value(math.inf)], 1, "g: w"), ValueError, "g: w[0] must be finite"),
        (lambda: valid_weights([], None, "g: w"), ValueError, "g: w is empty"),
        (lambda: valid_weights(None, None, "g: w"), ValueError, "g: w is None"),
    ],
)
def test_validation_names_the_argument_and_the_value(
    call: Callable[[], object], error: type[Exception], shown: str
) -> None:
    with pytest.raises(error) as info:
        call()
    assert shown in str(info.value), str(info.value)


def test_validation_passes_good_values_through() -> None:
    x, y = Value(1.0), Value(2.0)
    assert (as_float(3, "n"), type(as_float(3, "n"))) == (3.0, float)
    assert value_list(x, "xs") == [x]
    assert value_list((x, y, x), "xs") == [x, y, x]
    with pytest.raises(ValueError, match=r"xs\[2\] is the same Value as xs\[0\]"):
        value_list((x, y, x), "xs", distinct=True)
    assert valid_weights([x, 2], 2, "w") == [x, 2.0]
    assert valid_weights([0.5], None, "w") == [0.5]
    assert valid_weights(None, 3, "w") == [1.0, 1.0, 1.0]


def test_import_minigrad_loads_only_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules); import minigrad; "
        "new = set(sys.modules) - before; "
        "print(sorted(m for m in new if m.split('.')[0] not in sys.stdlib_module_names))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(done.stdout.strip())
    assert "minigrad.core.value" in loaded
    outside = [m for m in loaded if m != "minigrad" and not m.startswith("minigrad.")]
    assert outside == []
