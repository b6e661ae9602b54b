"""Forward mode and the functional API against exact SymPy derivatives, and their contract.

Every number is compared with SymPy (``sympy_oracle``): jvp, vjp, jacobian
(both strategies), hessian (both outer strategies) and hvp on random
expressions (``minigrad.testing.expressions``) with several outputs, and every
composition of forward and reverse mode to order 3: each of the eight words
``fwd/rev x fwd/rev x fwd/rev`` through the public ``jvp``/``vjp`` along
random directions, and through ``jacobian`` towers entry by entry. A k-th
derivative along directions d1..dk is SymPy's k-th partials contracted with
them in exact rational arithmetic (:func:`contract`).

The rest pins the contract: results are floats without ``create_graph`` and
differentiable Values with it, the result has ``func``'s structure, forward
mode runs the rules' own partials (one call per node and input direction),
inputs are independent variables, and bad arguments name themselves.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import Rule, Value, grad, hessian, hvp, jacobian, jvp, vjp
from minigrad.core.forward import Tangents
from minigrad.testing import Expression, expressions
from summary import closing_line
from sympy_oracle import COUNTS, SymExpr, apply_sympy, check, exact_partials

INPUTS = tuple(sympy.symbols("x0:4", real=True))
EXAMPLES = settings(max_examples=10, deadline=None)
Table = dict[tuple[int, ...], float]
Fn = Callable[..., Value]
WORDS = ["".join(w) for w in itertools.product("fr", repeat=3)]
MODE = {"f": "fwd", "r": "rev"}
#: The SymPy comparison categories of this module.
CATEGORIES = ("jvp", "vjp", "jacobian", "hessian", "hvp", "compositions of forward and reverse")


def directions(n: int, k: int) -> st.SearchStrategy[list[list[float]]]:
    """``k`` directions over ``n`` inputs, entries in [-2, 2]."""
    entry = st.floats(-2.0, 2.0, allow_nan=False)
    return st.lists(st.lists(entry, min_size=n, max_size=n), min_size=k, max_size=k)


def contract(table: Table, dirs: Sequence[Sequence[float]]) -> float:
    """The k-th derivative along d1..dk: sum T[a1..ak] * d1[a1] * ... * dk[ak], exactly.

    The partials are SymPy's (rounded once to float), the directions floats;
    the sum is taken in rationals, so it adds no rounding of its own.
    """
    n = len(dirs[0]) if dirs else 0
    if not dirs:
        return table[()]
    total = Fraction(0)
    for idx in itertools.product(range(n), repeat=len(dirs)):
        term = Fraction(table[tuple(sorted(idx))])
        for d, a in zip(dirs, idx, strict=True):
            term *= Fraction(d[a])
        total += term
    return float(total)


class Several:
    """A random expression as a function with several outputs, and its SymPy tables.

    The outputs are the expression's last two drawn ops and its final output
    (every drawn op is smooth at the expression's point, so each is a smooth
    function of the inputs there).
    """

    def __init__(self, expr: Expression) -> None:
        self.expr = expr
        self.n = expr.n_inputs
        self.point = expr.inputs
        drawn = [k for k, node in enumerate(expr.nodes) if not node.glue][-2:]
        last = len(expr.nodes) - 1
        self.picks = [*(k for k in drawn if k != last), last]
        slots: list[SymExpr] = []

        def record(rule: Rule, args: tuple[SymExpr | float, ...]) -> SymExpr:
            slots.append(apply_sympy(rule, args))
            return slots[-1]

        expr.build(INPUTS[: self.n], record)
        self.syms = INPUTS[: self.n]
        self.exprs = [slots[k] for k in self.picks]
        self._tables: dict[tuple[int, int], Table] = {}

    def tables(self, order: int) -> list[Table]:
        """Each output's partials to ``order``, by SymPy (the costly part: asked for as needed)."""
        return [self.table(j, order) for j in range(len(self.exprs))]

    def table(self, j: int, order: int) -> Table:
        """Output j's partials to ``order`` (j = -1: the final output)."""
        j %= len(self.exprs)
        if (j, order) not in self._tables:
            self._tables[j, order] = exact_partials(self.exprs[j], self.syms, self.point, order)
        return self._tables[j, order]

    def __call__(self, *xs: Value) -> tuple[Value, ...]:
        slots: list[Value] = []

        def record(rule: Rule, args: tuple[Value | float, ...]) -> Value:
            slots.append(rule.as_written(*args))
            return slots[-1]

        self.expr.build(xs, record)
        return tuple(slots[k] for k in self.picks)

    def leaves(self) -> list[Value]:
        return [Value(p) for p in self.point]

    def where(self, what: str) -> str:
        return f"{what} of\n{self.expr}\n"


def several_expressions() -> st.SearchStrategy[Several]:
    return expressions(max_inputs=3, max_ops=5).map(Several)


def number(t: float | Value, create_graph: bool) -> float:
    """A result as a float, asserting its kind: a Value with create_graph, else a float."""
    __tracebackhide__ = True
    if create_graph:
        assert type(t) is Value, f"create_graph=True gave {t!r}, not a Value"
        return t.data
    assert type(t) is float, f"create_graph=False gave {t!r}, not a float"
    return t


def unit(n: int, i: int) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(n)]


# First order: jvp, vjp, jacobian.


@EXAMPLES
@given(e=several_expressions(), data=st.data(), create_graph=st.booleans())
def test_jvp_matches_sympy(e: Several, data: st.DataObject, create_graph: bool) -> None:
    (t,) = data.draw(directions(e.n, 1), label="tangents")
    xs = e.leaves()
    outs, ts = jvp(e, xs, t, create_graph=create_graph)
    assert isinstance(outs, tuple) and isinstance(ts, tuple)
    assert len(outs) == len(ts) == len(e.exprs)
    for j, (table, y, tj) in enumerate(zip(e.tables(1), outs, ts, strict=True)):
        check(y.data, table[()], e.where(f"jvp: output {j}"), "jvp")
        check(number(tj, create_graph), contract(table, [t]), e.where(f"jvp {t}: out {j}"), "jvp")


@EXAMPLES
@given(e=several_expressions(), data=st.data(), create_graph=st.booleans())
def test_vjp_matches_sympy(e: Several, data: st.DataObject, create_graph: bool) -> None:
    v = data.draw(st.lists(st.floats(-2.0, 2.0), min_size=len(e.exprs), max_size=len(e.exprs)))
    xs = e.leaves()
    outs, vs = vjp(e, xs, v, create_graph=create_graph)
    assert isinstance(outs, tuple) and len(vs) == e.n
    for i, got in enumerate(vs):
        want = float(
            sum(
                (
                    Fraction(w) * Fraction(table[(i,)])
                    for w, table in zip(v, e.tables(1), strict=True)
                ),
                Fraction(0),
            )
        )
        check(number(got, create_graph), want, e.where(f"vjp {v}: d/dx{i}"), "vjp")


@EXAMPLES
@given(
    e=several_expressions(),
    strategy=st.sampled_from(["forward-mode", "reverse-mode", "auto"]),
    create_graph=st.booleans(),
)
def test_jacobian_matches_sympy(e: Several, strategy: str, create_graph: bool) -> None:
    rows = jacobian(e, e.leaves(), create_graph=create_graph, strategy=strategy)
    assert len(rows) == len(e.exprs) and all(len(row) == e.n for row in rows)
    for j, (row, table) in enumerate(zip(rows, e.tables(1), strict=True)):
        for i, got in enumerate(row):
            what = e.where(f"jacobian ({strategy}): d out{j} / d x{i}")
            check(number(got, create_graph), table[(i,)], what, "jacobian")


# Second order: hessian and hvp.


def scalar(e: Several) -> Fn:
    """The expression's final output alone."""
    return lambda *xs: e(*xs)[-1]


@EXAMPLES
@given(
    e=several_expressions(),
    outer=st.sampled_from(["forward-mode", "reverse-mode", "auto"]),
    create_graph=st.booleans(),
)
def test_hessian_matches_sympy(e: Several, outer: str, create_graph: bool) -> None:
    rows = hessian(scalar(e), e.leaves(), create_graph=create_graph, outer_jacobian_strategy=outer)
    assert len(rows) == e.n and all(len(row) == e.n for row in rows)
    table = e.table(-1, 2)
    for i, k in itertools.product(range(e.n), repeat=2):
        what = e.where(f"hessian ({outer} over reverse): d2f / dx{i} dx{k}")
        check(number(rows[i][k], create_graph), table[tuple(sorted((i, k)))], what, "hessian")


@EXAMPLES
@given(e=several_expressions(), data=st.data(), create_graph=st.booleans())
def test_hvp_matches_sympy(e: Several, data: st.DataObject, create_graph: bool) -> None:
    (v,) = data.draw(directions(e.n, 1), label="v")
    out, hv = hvp(scalar(e), e.leaves(), v, create_graph=create_graph)
    table = e.table(-1, 2)
    check(out.data, table[()], e.where("hvp: output"), "hvp")
    assert len(hv) == e.n
    for i, got in enumerate(hv):
        want = contract(table, [unit(e.n, i), v])
        check(number(got, create_graph), want, e.where(f"hvp {v}: row {i}"), "hvp")


# Every composition of forward and reverse mode, to order 3.


def _along(g: Fn, mode: str, d: list[float], *, create_graph: bool) -> Callable[..., float | Value]:
    """The derivative of ``g`` along ``d``: by jvp (forward) or by vjp dotted with d (reverse)."""

    def derivative(*xs: Value) -> float | Value:
        if mode == "fwd":
            _, t = jvp(g, list(xs), d, create_graph=create_graph)
            assert not isinstance(t, tuple)
            return t
        _, gs = vjp(g, list(xs), create_graph=create_graph)
        total: float | Value = 0.0
        for di, gi in zip(d, gs, strict=True):
            total = total + di * gi
        return total

    return derivative


def _lifted(g: Fn, mode: str, d: list[float]) -> Fn:
    """:func:`_along` with create_graph: a differentiable function again."""
    along = _along(g, mode, d, create_graph=True)

    def derivative(*xs: Value) -> Value:
        t = along(*xs)
        assert type(t) is Value, f"create_graph=True gave {t!r}"
        return t

    return derivative


@pytest.mark.parametrize("word", WORDS)
@settings(max_examples=5, deadline=None)
@given(e=several_expressions(), data=st.data())
def test_compositions_of_jvp_and_vjp_to_third_order(
    word: str, e: Several, data: st.DataObject
) -> None:
    # The word is read innermost first: "frr" is reverse over reverse over forward.
    dirs = data.draw(directions(e.n, 3), label="directions")
    table = e.table(-1, 3)
    g: Fn = scalar(e)
    for k, (letter, d) in enumerate(zip(word, dirs, strict=True), start=1):
        mode = MODE[letter]
        last = _along(g, mode, d, create_graph=False)(*e.leaves())
        g = _lifted(g, mode, d)
        lifted = g(*e.leaves())
        assert type(last) is float
        want = contract(table, dirs[:k])
        what = e.where(f"{' over '.join(MODE[c] for c in reversed(word[:k]))} along {dirs[:k]}")
        check(lifted.data, want, what, "compositions of forward and reverse")
        check(last, want, what + " (last step on floats)", "compositions of forward and reverse")


def _tower(f: Callable[..., tuple[Value, ...]], strategy: str) -> Callable[..., tuple[Value, ...]]:
    """The Jacobian of ``f`` as a function with one output per entry, row by row."""

    def jac(*xs: Value) -> tuple[Value, ...]:
        rows = jacobian(f, list(xs), create_graph=True, strategy=strategy)
        return tuple(v for row in rows for v in row if isinstance(v, Value))

    return jac


@pytest.mark.parametrize("word", WORDS)
@settings(max_examples=3, deadline=None)
@given(e=several_expressions())
def test_jacobian_towers_match_sympy_entry_by_entry(word: str, e: Several) -> None:
    f: Callable[..., tuple[Value, ...]] = lambda *xs: (scalar(e)(*xs),)  # noqa: E731
    table = e.table(-1, 3)
    for k, letter in enumerate(word, start=1):
        f = _tower(f, {"f": "forward-mode", "r": "reverse-mode"}[letter])
        values = f(*e.leaves())
        assert len(values) == e.n**k  # no entry was a float: every one is a Value
        for idx, got in zip(itertools.product(range(e.n), repeat=k), values, strict=True):
            what = e.where(f"jacobian tower {word[:k]}: d/d{idx}")
            check(got.data, table[tuple(sorted(idx))], what, "compositions of forward and reverse")


@settings(max_examples=6, deadline=None)
@given(e=several_expressions(), data=st.data())
def test_reverse_over_hvp_and_over_hessian_give_third_derivatives(
    e: Several, data: st.DataObject
) -> None:
    v, w = data.draw(directions(e.n, 2), label="v, w")
    xs = e.leaves()
    table = e.table(-1, 3)
    _, hv = hvp(scalar(e), xs, v, create_graph=True)
    total: float | Value = 0.0
    for wi, h in zip(w, hv, strict=True):
        total = total + wi * h
    assert isinstance(total, Value)
    for i, got in enumerate(grad(total, xs)):
        what = e.where(f"grad of w . hvp(v): d/dx{i}")
        check(got.data, contract(table, [w, v, unit(e.n, i)]), what, "hvp")
    rows = hessian(scalar(e), xs, create_graph=True)
    for i, k in itertools.product(range(e.n), repeat=2):
        h = rows[i][k]
        assert isinstance(h, Value)
        for m, got in enumerate(grad(h, xs)):
            what = e.where(f"grad of hessian[{i}][{k}]: d/dx{m}")
            check(got.data, table[tuple(sorted((i, k, m)))], what, "hessian")


@EXAMPLES
@given(e=several_expressions(), data=st.data())
def test_tangents_given_as_values_are_differentiable(e: Several, data: st.DataObject) -> None:
    # d (J t) / d t = J and d (J t) / d x = H t: the tangent is linear in t,
    # and reverse mode through it transposes forward mode.
    (t0,) = data.draw(directions(e.n, 1), label="tangents")
    xs = e.leaves()
    ts = [Value(t) for t in t0]
    _, jt = jvp(scalar(e), xs, ts, create_graph=True)
    assert isinstance(jt, Value)
    table = e.table(-1, 2)
    by_t = grad(jt, ts)
    by_x = grad(jt, xs)
    for i in range(e.n):
        check(by_t[i].data, table[(i,)], e.where(f"d jvp / d t{i}"), "jvp")
        check(by_x[i].data, contract(table, [t0, unit(e.n, i)]), e.where(f"d jvp / d x{i}"), "jvp")


# The contract, without SymPy.


def test_results_are_floats_without_create_graph_and_values_with_it() -> None:
    x, y = Value(0.5), Value(2.0)
    f: Fn = lambda a, b: a * b.exp()  # noqa: E731
    out, t = jvp(f, [x, y], [1.0, 0.0])
    assert isinstance(out, Value) and out.data == 0.5 * math.exp(2.0) and type(t) is float
    assert t == math.exp(2.0)
    _, (dx, dy) = vjp(f, [x, y])
    assert (type(dx), type(dy)) == (float, float)
    assert (dx, dy) == (math.exp(2.0), 0.5 * math.exp(2.0))
    _, t2 = jvp(f, [x, y], [1.0, 0.0], create_graph=True)
    assert isinstance(t2, Value) and t2.data == math.exp(2.0)
    # d/dy of the tangent e**y is e**y: the tangent is a function of the inputs.
    assert grad(t2, [y])[0].data == math.exp(2.0)


def test_structure_follows_funcs_result() -> None:
    x = Value(3.0)
    out, t = jvp(lambda a: a * a, x, 1.0)
    assert isinstance(out, Value) and t == 6.0
    outs, ts = jvp(lambda a: [a * a, -a], [x], [2.0])  # a list is returned as a tuple
    assert isinstance(outs, tuple) and ts == (12.0, -2.0)
    outs, ts = jvp(lambda a: (a * a,), [x], [1.0])
    assert isinstance(outs, tuple) and ts == (6.0,)
    _, vs = vjp(lambda a: a * a, x)
    assert vs == (6.0,)


def test_an_output_that_does_not_depend_on_the_inputs_has_tangent_zero() -> None:
    x, c = Value(1.0), Value(5.0)
    _, ts = jvp(lambda a: (c * 2.0, a + 0.0, a), [x], [3.0])
    assert ts == (0.0, 3.0, 3.0)
    _, ts = jvp(lambda a: (c * 2.0, a), [x], [3.0], create_graph=True)
    assert isinstance(ts, tuple)
    assert [type(t) for t in ts] == [Value, Value]
    assert [t.data for t in ts if isinstance(t, Value)] == [0.0, 3.0]
    assert jacobian(lambda a: (c * a, c), [x]) == [[5.0], [0.0]]


def test_inputs_are_independent_variables() -> None:
    # An input computed from another input is still a variable of its own:
    # its tangent is the one given, as in PyTorch's and JAX's jvp.
    x = Value(2.0)
    y = x * 3.0
    _, t = jvp(lambda a, b: a * b, [x, y], [1.0, 0.0])
    assert t == y.data
    _, t = jvp(lambda a, b: a * b, [x, y], [0.0, 1.0])
    assert t == x.data


def test_every_strategy_holds_the_other_inputs_fixed() -> None:
    # Issue 21, point 4: with y = 2x an input too, reverse mode gave d/dx the
    # total derivative through y ([[6.0, 1.5]]) and forward mode the partial
    # ([[3.0, 1.5]]). Every strategy now gives the partial, as PyTorch's and
    # JAX's functional APIs do; backward still gives .grad the total.
    x = Value(1.5)
    y = x * 2.0
    f: Fn = lambda a, b: a * b  # noqa: E731
    for strategy in ("reverse-mode", "forward-mode", "auto"):
        assert jacobian(f, [x, y], strategy=strategy) == [[3.0, 1.5]], strategy
    rows = jacobian(f, [x, y], strategy="reverse-mode", create_graph=True)
    assert [d.data for d in rows[0] if isinstance(d, Value)] == [3.0, 1.5]
    assert [d.data for d in grad(f(x, y), [x, y])] == [3.0, 1.5]
    assert vjp(f, [x, y])[1] == (3.0, 1.5)
    assert jvp(f, [x, y], [1.0, 1.0])[1] == 4.5
    f(x, y).backward()
    assert x.grad == 6.0  # .grad is along every path: x * (2x) has slope 4x
    # Second order: f = a * a * b, b = 2a; d2f = [[2b, 2a], [2a, 0]] at fixed b.
    g: Fn = lambda a, b: a * a * b  # noqa: E731
    want = [[6.0, 3.0], [3.0, 0.0]]
    for outer in ("forward-mode", "reverse-mode"):
        assert hessian(g, [x, y], outer_jacobian_strategy=outer) == want, outer
    assert hvp(g, [x, y], [1.0, -1.0])[1] == (3.0, 3.0)
    # An input computed from an input below it, and an output that is an input.
    z = y.exp()
    assert jacobian(lambda a, c: (a * c, c), [x, z]) == [[z.data, 1.5], [0.0, 1.0]]


def test_the_checkers_agree_when_one_input_is_computed_from_another() -> None:
    # The numerical side moves each input's .data with the others fixed; the
    # analytic side holds them fixed too, so a correct function passes (it
    # used to fail, blaming a read of .data).
    x = Value(0.7)
    inputs = [x, x * 2.0, (x * 2.0).sin()]
    f: Fn = lambda a, b, c: (a * b).exp() * c  # noqa: E731
    assert mg.gradcheck(f, inputs, check_forward_ad=True)
    assert mg.gradgradcheck(f, inputs, check_fwd_over_rev=True)
    assert mg.check(f, inputs, order=3, modes=("fwd", "rev")).ok
    assert mg.gradcheck(f, inputs, fast_mode=True)


def test_nothing_reads_or_changes_grad() -> None:
    x, y = Value(0.3), Value(-0.7)
    x.grad, y.grad = 1.5, -2.5
    f: Fn = lambda a, b: (a * b).sin() + a.exp()  # noqa: E731
    jvp(f, [x, y], [1.0, 1.0])
    vjp(f, [x, y])
    jacobian(f, [x, y], strategy="forward-mode")
    hessian(f, [x, y])
    hvp(f, [x, y], [1.0, 0.0])
    assert (x.grad, y.grad) == (1.5, -2.5)


def _counting(name: str) -> tuple[Rule, list[int]]:
    """sin as a custom rule whose partial counts its calls."""
    calls = [0]

    def slope(x: Any, out: Any) -> Any:
        calls[0] += 1
        return mg.cos(x)

    return Rule(name, math.sin, (slope,)), calls


def test_forward_mode_runs_the_rules_own_partials_once_per_node_and_direction() -> None:
    # A partial that is wrong on purpose (a doubled slope) shows up in the jvp:
    # forward mode reads the table, it does not differentiate any other way.
    doubled = Rule("sin_doubled", math.sin, (lambda x, out: 2.0 * mg.cos(x),))
    x = Value(0.4)
    _, t = jvp(lambda a: doubled(a), x, 1.0)
    assert t == 2.0 * math.cos(0.4)
    # One call per node for one tangent; a Jacobian by forward mode of a tall
    # function (1 input, 5 outputs sharing the node) still calls it once.
    counted, calls = _counting("sin_counted")
    _, t = jvp(lambda a: counted(a) * 3.0, x, 1.0)
    assert calls == [1] and t == 3.0 * math.cos(0.4)
    calls[0] = 0

    def tall(a: Value) -> tuple[Value, ...]:
        shared = counted(a)
        return tuple(shared * k for k in range(1, 6))

    rows = jacobian(tall, [x], strategy="forward-mode")
    assert calls == [1]
    assert rows == [[math.cos(0.4) * k] for k in range(1, 6)]
    calls[0] = 0
    assert jacobian(tall, [x], strategy="reverse-mode") == rows
    assert calls == [5]  # one reverse pass per output
    calls[0] = 0
    assert jacobian(tall, [x]) == rows  # auto: fewer inputs than outputs, forward mode
    assert calls == [1]


def test_a_zero_tangent_evaluates_no_partial() -> None:
    # d/dy x ** y needs log(x), which does not exist at x < 0; with no tangent
    # on y it is never evaluated, as backward skips what no gradient reaches.
    x, y = Value(-2.0), Value(3.0)
    _, t = jvp(lambda a, b: a**b, [x, y], [1.0, 0.0])
    assert t == 3.0 * (-2.0) ** 2
    with pytest.raises(ValueError, match=r"op '\*\*' jvp: partials\[1\] failed on floats"):
        jvp(lambda a, b: a**b, [x, y], [1.0, 1.0])


def test_hvp_is_one_pass_over_the_gradient_where_hessian_takes_one_per_input() -> None:
    # sin's slope is a cos whose own partial counts its calls: a pass over
    # the gradient's graph calls it once per cos node it reaches.
    calls = [0]

    def minus_sin(x: Any, out: Any) -> Any:
        calls[0] += 1
        return -mg.sin(x)

    cos_counted = Rule("cos_counted", math.cos, (minus_sin,))
    sin_counted = Rule(
        "sin_counted",
        math.sin,
        (lambda x, out: cos_counted(x) if isinstance(x, Value) else math.cos(x),),
    )
    xs = [Value(0.1 * i) for i in range(1, 5)]

    def f(*vs: Value) -> Value:
        total = vs[0] * 1.0
        for k, v in enumerate(vs[1:], start=2):
            total = total + k * v
        return sin_counted(total)

    v = [1.0, -0.5, 0.25, 2.0]
    _, hv = hvp(f, xs, v)
    assert calls == [1]
    calls[0] = 0
    rows = hessian(f, xs)
    assert calls == [len(xs)]
    calls[0] = 0
    by_reverse = hessian(f, xs, outer_jacobian_strategy="reverse-mode")
    for row, again in zip(rows, by_reverse, strict=True):
        assert again == pytest.approx(row, rel=1e-12)
    assert calls == [len(xs)]
    expected = [
        math.fsum(number(h, False) * vk for h, vk in zip(row, v, strict=True)) for row in rows
    ]
    assert list(hv) == pytest.approx(expected, rel=1e-12)


# Bad arguments name themselves.

#: minigrad as mypy sees it when arguments are wrong on purpose.
LOOSE: Any = mg


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: LOOSE.jvp(3, [Value(1.0)], [1.0]),
            TypeError,
            "jvp: func must be callable, got int 3",
        ),
        (lambda: LOOSE.jvp(lambda a: a, [], []), ValueError, "jvp: inputs is empty"),
        (
            lambda: LOOSE.jvp(lambda a: a, [1.0], [1.0]),
            TypeError,
            r"jvp: inputs\[0\] must be a Value",
        ),
        (lambda: LOOSE.jvp(lambda a: a, "x", [1.0]), TypeError, "jvp: inputs must be a Value or"),
        (
            lambda: LOOSE.jvp(lambda a, b: a, [X := Value(1.0), X], [1.0, 1.0]),
            ValueError,
            r"jvp: inputs\[1\] is the same Value as inputs\[0\]",
        ),
        (lambda: LOOSE.jvp(lambda a: a, [Value(1.0)], None), TypeError, "jvp: tangents is None"),
        (
            lambda: LOOSE.jvp(lambda a: a, [Value(1.0)], [1.0, 2.0]),
            ValueError,
            r"jvp: tangents has 2 entries for 1 input\(s\)",
        ),
        (
            lambda: LOOSE.jvp(lambda a: a, [Value(1.0)], [math.nan]),
            ValueError,
            r"jvp: tangents\[0\] must be finite, got nan",
        ),
        (
            lambda: LOOSE.jvp(lambda a: a, [Value(1.0)], ["1"]),
            TypeError,
            r"jvp: tangents\[0\] must be a finite float or a Value, got str",
        ),
        (
            lambda: LOOSE.jvp(lambda a: a, [Value(1.0)], [1.0], create_graph=1),
            TypeError,
            "jvp: create_graph must be a bool, got int 1",
        ),
        (
            lambda: LOOSE.jvp(lambda a: a.data, [Value(1.0)], [1.0]),
            TypeError,
            "jvp: func must return a Value or a tuple of Values, got float 1.0",
        ),
        (
            lambda: LOOSE.vjp(lambda a: (a, a), [Value(1.0)], [1.0]),
            ValueError,
            r"vjp: v has 1 entries for 2 output\(s\)",
        ),
        (
            lambda: LOOSE.jacobian(lambda a: a, [Value(1.0)], strategy="forward"),
            ValueError,
            "jacobian: strategy must be one of 'auto', 'forward-mode', 'reverse-mode', "
            "got 'forward'",
        ),
        (
            lambda: LOOSE.hessian(lambda a: (a, a * a), [Value(1.0)]),
            ValueError,
            "hessian: func must have exactly one output, got 2",
        ),
        (
            lambda: LOOSE.hessian(lambda a: a, [Value(1.0)], outer_jacobian_strategy="x"),
            ValueError,
            "hessian: outer_jacobian_strategy: strategy must be one of",
        ),
        (lambda: LOOSE.hvp(lambda a: a, [Value(1.0)], None), TypeError, "hvp: v is None"),
        (
            lambda: LOOSE.hvp(lambda a: (a, a), [Value(1.0)], [1.0]),
            ValueError,
            "hvp: func must have exactly one output, got 2",
        ),
    ],
)
def test_bad_arguments_are_named(call: Callable[[], object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_a_failing_partial_names_the_op_and_forward_mode() -> None:
    # Written with math.cos: right on floats, a TypeError on Values.
    mycos = Rule("mycos", math.sin, (lambda x, out: math.cos(x),))
    x = Value(0.5)
    _, t = jvp(lambda a: mycos(a), x, 1.0)
    assert t == math.cos(0.5)
    with pytest.raises(TypeError, match=r"op 'mycos' jvp: partials\[0\] failed on Values"):
        jvp(lambda a: mycos(a), x, 1.0, create_graph=True)
    nan_slope = Rule("nan_slope", math.sin, (lambda x, out: math.nan,))
    with pytest.raises(ValueError, match=r"op 'nan_slope' jvp: partials\[0\] returned nan"):
        jvp(lambda a: nan_slope(a), x, 1.0)
    with pytest.raises(ValueError, match=r"op 'nan_slope' jvp: partials\[0\] returned nan"):
        jvp(lambda a: nan_slope(a), x, 1.0, create_graph=True)
    text_slope = Rule("text_slope", math.sin, (lambda x, out: "cos",))  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match=r"op 'text_slope' jvp: partials\[0\] returned str"):
        jvp(lambda a: text_slope(a), x, 1.0)
    with pytest.raises(OverflowError, match="op 'exp' jvp: the tangent overflowed"):
        jvp(lambda a: (a * 700.0).exp(), x, 1e300)


def test_tangents_rejects_a_wrong_number_of_tangents() -> None:
    x = Value(1.0)
    push = Tangents([x * 2.0], [x])
    assert push([1.5]) == [3.0]
    with pytest.raises(ValueError):
        push([1.0, 2.0])


@closing_line("sympy comparisons of forward mode and the functional API")
def _closing() -> str:
    total = sum(COUNTS[c] for c in CATEGORIES)
    if not total:
        return ""
    return f"SymPy comparisons of forward mode and the functional API: {total}"
