"""minigrad.testing: the strategies keep their promises, and hypothesis stays optional."""

from __future__ import annotations

import doctest
import inspect
import math
import random
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

import minigrad
from minigrad import GradcheckWarning, Rule, Value, gradgradcheck, ops, toposort
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


@settings(max_examples=300, deadline=None)
@given(st.from_type(Value))
def test_from_type_value_draws_what_the_checkers_judge(v: Value) -> None:
    # 0, or a magnitude in [1e-8, 1e8]: no 1e300, no 1e-124, no -0.0.
    assert v.data == 0.0 or 1e-8 <= abs(v.data) <= 1e8
    assert math.copysign(1.0, v.data) == 1.0 or v.data != 0.0


def test_from_type_value_reaches_both_ends_of_its_range_and_never_beyond() -> None:
    quiet = settings(database=None, max_examples=300)
    assert find(st.from_type(Value), lambda v: v.data >= 1e7, settings=quiet).data <= 1e8
    assert find(st.from_type(Value), lambda v: v.data <= -1e7, settings=quiet).data >= -1e8
    tiny = find(st.from_type(Value), lambda v: 0.0 < abs(v.data) <= 1e-7, settings=quiet)
    assert abs(tiny.data) >= 1e-8
    assert find(st.from_type(Value), lambda v: v.data == 0.0, settings=quiet).data == 0.0
    for beyond in (lambda v: abs(v.data) > 1e8, lambda v: 0.0 < abs(v.data) < 1e-8):
        with pytest.raises(NoSuchExample):
            find(st.from_type(Value), beyond, settings=quiet)


def test_safe_intervals_cut_out_avoid_points_and_ends() -> None:
    m = DEFAULT_MARGIN
    pieces = safe_intervals(THREE_KINKS, 0)
    assert len(pieces) == 4  # 7.0 lies outside the domain
    cuts = [-2.0, -1.0, 0.0, 1.0, 2.0]
    for (lo, hi), left, right in zip(pieces, cuts, cuts[1:], strict=False):
        assert lo - left >= m and right - hi >= m
        assert lo == pytest.approx(left + m) and hi == pytest.approx(right - m)
    assert safe_intervals(ops.LOG, 0, margin=0.0) == ops.LOG.sample_box


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
    for x, (lo, hi), (d_lo, d_hi) in zip(point, rule.sample_box, rule.domain, strict=True):
        assert lo + margin <= x <= hi - margin
        assert all(abs(x - a) >= margin for a in rule.avoid)
        assert d_lo < x < d_hi


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


# A rule's whole contract: where it is defined, where it is drawn, how it is written.


def _plain(**kwargs: object) -> Rule:
    return Rule("plain", lambda x: x, (1.0,), **kwargs)  # type: ignore[arg-type]


def test_default_domain_is_the_whole_line_and_default_sample_is_minus_two_to_two() -> None:
    rule = Rule("twice", lambda x, y: 2.0 * x + y, (2.0, 1.0))
    assert rule.domain == ((-math.inf, math.inf), (-math.inf, math.inf))
    assert rule.sample_box == ((-2.0, 2.0), (-2.0, 2.0))
    assert rule.intervals(0, margin=0.0) == ((-2.0, 2.0),)


@pytest.mark.parametrize(
    ("domain", "sample_box"),
    [
        ((0.0, math.inf), (0.0, 2.0)),  # an infinite end is cut 2 away from the other
        ((-math.inf, -1.0), (-3.0, -1.0)),
        ((-1.0, 5.0), (-1.0, 5.0)),  # a finite domain is the sample
        ((-0.5, 0.5), (-0.5, 0.5)),
    ],
)
def test_default_sample_is_the_domain_cut_to_a_finite_width(
    domain: tuple[float, float], sample_box: tuple[float, float]
) -> None:
    assert _plain(domain=(domain,)).sample_box == (sample_box,)


def test_built_in_rules_declare_their_true_domains() -> None:
    inf = math.inf
    restricted = {
        "log": ((0.0, inf),),
        "log1p": ((-1.0, inf),),
        "sqrt": ((0.0, inf),),
        "**": ((0.0, inf), (-inf, inf)),
        "log2": ((0.0, inf),),
        "log10": ((0.0, inf),),
        "asin": ((-1.0, 1.0),),
        "acos": ((-1.0, 1.0),),
        "acosh": ((1.0, inf),),
        "atanh": ((-1.0, 1.0),),
    }
    for rule in ops.TABLE:
        whole = ((-inf, inf),) * rule.arity
        assert rule.domain == restricted.get(rule.name, whole), rule.name
    assert ops.DIV.avoid == (0.0,)


def test_built_in_rules_are_drawn_where_they_were_drawn_before_domains_were_true() -> None:
    # The intervals every test and `minigrad check` drew from when `domain` meant "sample".
    before = {
        "+": ((-3.0, 3.0), (-3.0, 3.0)),
        "-": ((-3.0, 3.0), (-3.0, 3.0)),
        "*": ((-3.0, 3.0), (-3.0, 3.0)),
        "/": ((-3.0, 3.0), (-3.0, 3.0)),
        "**": ((0.2, 3.0), (-2.5, 2.5)),
        "neg": ((-3.0, 3.0),),
        "abs": ((-3.0, 3.0),),
        "exp": ((-4.0, 4.0),),
        "log": ((0.05, 8.0),),
        "log1p": ((-0.9, 5.0),),
        "sqrt": ((0.05, 8.0),),
        "sin": ((-4.0, 4.0),),
        "cos": ((-4.0, 4.0),),
        "tanh": ((-3.0, 3.0),),
        "sigmoid": ((-4.0, 4.0),),
        "relu": ((-3.0, 3.0),),
        "softplus": ((-4.0, 4.0),),
        "erf": ((-3.0, 3.0),),
        "gelu": ((-3.0, 3.0),),
    }
    # The rest of Python's math module, added later with their own intervals.
    added = {
        "expm1": ((-3.0, 3.0),),
        "exp2": ((-4.0, 4.0),),
        "log2": ((0.05, 8.0),),
        "log10": ((0.05, 8.0),),
        "tan": ((-3.0, 3.0),),
        "asin": ((-0.95, 0.95),),
        "acos": ((-0.95, 0.95),),
        "atan": ((-4.0, 4.0),),
        "atan2": ((-3.0, 3.0), (-3.0, 3.0)),
        "hypot": ((-3.0, 3.0), (-3.0, 3.0)),
        "sinh": ((-3.0, 3.0),),
        "cosh": ((-3.0, 3.0),),
        "asinh": ((-4.0, 4.0),),
        "acosh": ((1.05, 5.0),),
        "atanh": ((-0.95, 0.95),),
        "cbrt": ((-3.0, 3.0),),
        "erfc": ((-3.0, 3.0),),
        "copysign": ((-3.0, 3.0), (-3.0, 3.0)),
        "lgamma": ((-2.5, 4.0),),
        "gamma": ((-2.5, 4.0),),
        "digamma": ((-2.5, 4.0),),
    }
    assert {rule.name: rule.sample_box for rule in ops.TABLE} == before | added


@pytest.mark.parametrize(
    "sample",
    [
        ((-1.0, 3.0),),  # leaves the domain (0, inf)
        ((0.5, math.inf),),  # not finite
        ((2.0, 1.0),),  # empty
        ((0.5, 1.0), (0.5, 1.0)),  # one interval per argument
    ],
)
def test_sample_must_be_finite_and_inside_the_domain(sample: tuple[tuple[float, float]]) -> None:
    with pytest.raises(ValueError, match="'plain': sample must give one finite interval"):
        _plain(domain=((0.0, math.inf),), sample=sample)


def test_domain_may_be_infinite_but_must_be_an_interval_per_argument() -> None:
    assert _plain(domain=((-math.inf, 0.0),)).domain == ((-math.inf, 0.0),)
    for bad in (((1.0, 1.0),), ((math.nan, 1.0),), ((0.0, 1.0), (0.0, 1.0))):
        with pytest.raises(ValueError, match="domain must give one interval"):
            _plain(domain=bad)


@pytest.mark.parametrize("avoid", [(math.inf,), (math.nan,), (True,), ("0",), [0.0]])
def test_avoid_must_be_a_tuple_of_finite_numbers(avoid: object) -> None:
    with pytest.raises(ValueError, match="avoid must be a tuple of finite numbers"):
        _plain(avoid=avoid)


# Rule.sample draws from Rule.intervals, the one implementation of "where".

NARROW_GAPS = Rule(
    "narrow_gaps",
    lambda x, y: x * y,
    (lambda x, y, out: y, lambda x, y, out: x),
    domain=((0.0, math.inf), (-math.inf, math.inf)),
    sample=((0.0, 1.0), (-1.0, 1.0)),
    avoid=(0.05, 0.1, 0.5, 0.97, 1.5),
)


@pytest.mark.parametrize(
    "rule", [*ops.TABLE, THREE_KINKS, TERNARY, NARROW_GAPS], ids=lambda r: r.name
)
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), margin=st.sampled_from([0.0, 1e-3, DEFAULT_MARGIN, 0.02]))
def test_rule_sample_draws_only_inside_its_intervals(rule: Rule, seed: int, margin: float) -> None:
    point = rule.sample(random.Random(seed), margin=margin)
    assert len(point) == rule.arity
    for i, x in enumerate(point):
        assert any(lo <= x <= hi for lo, hi in rule.intervals(i, margin=margin)), (i, x)
        lo, hi = rule.sample_box[i]
        assert lo + margin <= x <= hi - margin
        assert all(abs(x - a) >= margin for a in rule.avoid)


def test_rule_sample_spreads_over_every_gap_between_avoid_points() -> None:
    rng = random.Random(0)
    pieces = THREE_KINKS.intervals(0)
    hits = [0] * len(pieces)
    for _ in range(400):
        (x,) = THREE_KINKS.sample(rng)
        hits[next(k for k, (lo, hi) in enumerate(pieces) if lo <= x <= hi)] += 1
    # Four pieces of equal length: each gets a quarter, give or take.
    assert all(50 <= n <= 150 for n in hits), hits


def test_a_narrow_piece_keeps_a_quarter_of_its_width_unless_a_margin_is_given() -> None:
    narrow = _plain(domain=((0.0, math.inf),), sample=((1.0, 1.015),), avoid=(1.01,))
    (left, right) = narrow.intervals(0)
    assert left == pytest.approx((1.0025, 1.0075)) and right == pytest.approx((1.01125, 1.01375))
    assert all(1.0 < x < 1.015 and x != 1.01 for x in narrow.sample(random.Random(0)))
    with pytest.raises(ValueError, match="leaves no point"):
        narrow.intervals(0, margin=0.01)
    # A piece wider than four margins keeps the whole margin, as before.
    assert ops.DIV.intervals(1) == ops.DIV.intervals(1, margin=0.01)


def test_rule_sample_and_intervals_agree_with_safe_intervals_and_refuse_alike() -> None:
    for rule in (*ops.TABLE, THREE_KINKS, NARROW_GAPS):
        for i in range(rule.arity):
            assert rule.intervals(i) == safe_intervals(rule, i)
    # Every point of (-1, 1) is within 1.5 of the avoid point 0: nothing to draw.
    hole = _plain(domain=((-1.0, 1.0),), avoid=(0.0,))
    with pytest.raises(ValueError, match="leaves no point"):
        hole.sample(random.Random(0), margin=1.5)
    with pytest.raises(IndexError, match="no argument 2"):
        ops.MUL.intervals(2)


# Spelling, commutativity and argument names.


def test_custom_rules_get_a_call_spelling_no_commutativity_and_names_x_y_z() -> None:
    assert (TERNARY.spelling, TERNARY.commutative, TERNARY.arg_names) == (
        "fma(x, y, z)",
        False,
        ("x", "y", "z"),
    )
    seven = Rule("seven", lambda *xs: sum(xs), (1.0,) * 7)
    assert seven.arg_names == ("x0", "x1", "x2", "x3", "x4", "x5", "x6")
    assert seven.spelling == "seven(x0, x1, x2, x3, x4, x5, x6)"
    named = Rule("hyp", math.hypot, (1.0, 1.0), arg_names=("a", "b"))
    assert named.spelling == "hyp(a, b)"
    node = named.as_written(Value(3.0), 4.0)
    assert (node.op, node.data) == ("hyp", 5.0)


def test_built_in_commutativity_is_what_the_forward_does() -> None:
    for rule in ops.TABLE:
        if rule.arity == 2:
            swapped = rule.forward(0.7, 1.3) == rule.forward(1.3, 0.7)
            assert rule.commutative == swapped, rule.name
    assert {rule.name for rule in ops.TABLE if rule.commutative} == {"+", "*", "hypot"}


@pytest.mark.parametrize(
    ("arity", "spelling"),
    [(2, "x*y"), (2, "y * x"), (2, "x @@ y"), (1, "x.exp"), (1, "f(y)"), (1, "x + y"), (1, "-y")],
)
def test_a_spelling_must_be_an_operator_method_or_call_in_the_argument_names(
    arity: int, spelling: str
) -> None:
    with pytest.raises(ValueError, match=r"'bad': spelling must be an operator"):
        Rule("bad", lambda *xs: 0.0, (0.0,) * arity, spelling=spelling)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"commutative": True}, "commutative must be a bool, and True only for two"),
        ({"commutative": 1}, "commutative must be a bool"),
        ({"arg_names": ("a", "b")}, "arg_names must be 1 distinct identifier"),
        ({"arg_names": ("1a",)}, "arg_names must be 1 distinct identifier"),
        ({"arg_names": ["a"]}, "arg_names must be 1 distinct identifier"),
    ],
)
def test_commutativity_and_argument_names_are_validated(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _plain(**kwargs)
    with pytest.raises(ValueError, match="arg_names must be 2 distinct"):
        Rule("two", lambda x, y: x, (1.0, 0.0), arg_names=("a", "a"))


def test_expressions_apply_each_rule_as_its_spelling_writes_it() -> None:
    times = Rule("times", lambda x, y: x * y, (lambda x, y, out: y, lambda x, y, out: x))
    spelled_times = Rule(
        "times", lambda x, y: x * y, (lambda x, y, out: y, lambda x, y, out: x), spelling="x * y"
    )
    exp_method = Rule("my_exp", math.exp, (lambda x, out: out,), spelling="x.exp()")
    for rule, op in ((times, "times"), (spelled_times, "*"), (exp_method, "exp")):
        arity = rule.arity
        expr = Expression(inputs=(0.5,) * arity, nodes=(Node(rule, tuple(range(arity))),))
        out = expr(*(Value(0.5) for _ in range(arity)))
        assert out.op == op, rule


# The public names of minigrad.ops.


def test_ops_all_lists_every_rule_and_function_it_defines() -> None:
    public = {
        name
        for name, v in vars(ops).items()
        if not name.startswith("_")
        and (isinstance(v, Rule) or (inspect.isfunction(v) and v.__module__ == ops.__name__))
    }
    assert public <= set(ops.__all__)
    assert {"MUL", "TABLE", "Rule", "DEFAULT_MARGIN", "Partial"} <= set(ops.__all__)
    assert all(hasattr(ops, name) for name in ops.__all__)
    assert {rule.name for rule in ops.TABLE} == {
        getattr(ops, n).name for n in public if n.isupper()
    }


# The docs' own custom ops pass the checks wherever minigrad's strategies draw.

ROOT = Path(__file__).resolve().parent.parent


def _rules_of(path: str, start: str, stop: str) -> list[tuple[str, Rule]]:
    """The Rules the examples of one section of a doc define, run as the doctest runs them."""
    text = (ROOT / path).read_text(encoding="utf-8")
    begin = text.index(start)
    section = text[begin : text.index(stop, begin)]
    namespace: dict[str, object] = {"math": math, "mg": minigrad, "Rule": Rule, "Value": Value}
    for example in doctest.DocTestParser().get_examples(section):
        exec(example.source, namespace)
    return [(f"{path}:{v.name}", v) for v in namespace.values() if isinstance(v, Rule)]


DOC_RULES = [
    *_rules_of("README.md", "## Your own op", "## Checking derivatives"),
    *_rules_of("docs/tutorial.md", "## Ops of your own", "### Check a rule before you trust it"),
]


def test_the_docs_custom_ops_are_all_found() -> None:
    assert sorted(where for where, _ in DOC_RULES) == [
        "README.md:softsign",
        "docs/tutorial.md:hypot",
        "docs/tutorial.md:softsign",
        "docs/tutorial.md:swish",
    ]


@pytest.mark.parametrize(("where", "rule"), DOC_RULES, ids=[where for where, _ in DOC_RULES])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_the_docs_custom_ops_pass_gradgradcheck_wherever_points_draws(
    where: str, rule: Rule, data: st.DataObject
) -> None:
    point = data.draw(points(rule), label="point")
    with warnings.catch_warnings():
        # A warning here means a drawn point sits on an undeclared kink.
        warnings.simplefilter("error", GradcheckWarning)
        assert gradgradcheck(rule, [Value(x) for x in point])
