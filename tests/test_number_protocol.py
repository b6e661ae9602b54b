"""A Value behaves like a number where no derivative can be lost, and says so where it would.

Formatting and comparisons read the data; ``bool(v)`` is the data's truth, as
for a float or a PyTorch 0-d tensor; ``==`` and ``hash`` stay identity.
Conversions to a plain number (``float``, ``int``, ``math.sin``, ``round``)
raise a TypeError naming what to use instead.
"""

from __future__ import annotations

import cmath
import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

import pytest

import minigrad
from minigrad import Value, grad

# Data with ties, signed zeros, and numbers whose order differs from that of
# their magnitudes, so a comparison of the wrong thing shows.
DATA = [-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 1.0, 3.0, 1e300]
COMPARISONS: list[tuple[str, Callable[[Any, Any], bool]]] = [
    ("<", operator.lt),
    ("<=", operator.le),
    (">", operator.gt),
    (">=", operator.ge),
]


# Formatting.


@pytest.mark.parametrize("spec", [".3f", ".2e", "g", ">12.4f", "+.1%", "08.3f", ".0f"])
def test_a_format_spec_formats_the_data(spec: str) -> None:
    for x in [2.0 / 3.0, -1234.5678, 0.0, 1e-7]:
        v = Value(x)
        assert format(v, spec) == format(x, spec)
        assert f"{v:{spec}}" == f"{x:{spec}}"


def test_an_empty_format_spec_gives_str_as_for_any_object() -> None:
    v = Value(2.0, label="x")
    assert f"{v}" == str(v) == repr(v) == "Value(data=2.0, grad=0.0, label='x')"
    assert format(v) == str(v)


def test_a_spec_that_does_not_apply_to_a_float_names_the_value_and_its_data() -> None:
    with pytest.raises(ValueError, match=r"Value: format spec 'd' does not apply to v\.data"):
        f"{Value(2.0):d}"


# Comparisons.


@pytest.mark.parametrize(("symbol", "compare"), COMPARISONS)
def test_comparisons_compare_the_data_with_a_value_or_a_number_on_either_side(
    symbol: str, compare: Callable[[Any, Any], bool]
) -> None:
    for x, y in itertools.product(DATA, repeat=2):
        expected = compare(x, y)
        where = f"{x!r} {symbol} {y!r}"
        assert compare(Value(x), Value(y)) is expected, where
        assert compare(Value(x), y) is expected, where
        assert compare(x, Value(y)) is expected, where
        if y == int(y) and abs(y) < 1e20:
            assert compare(Value(x), int(y)) is expected, where
            assert compare(int(y), Value(x)) is compare(int(y), x), where


def test_an_int_beyond_the_floats_is_compared_exactly_not_converted() -> None:
    big = 10**400  # float(big) raises OverflowError
    assert Value(1e300) < big
    assert big > Value(1e300)
    assert not Value(-1e300) >= big


@pytest.mark.parametrize("other", ["1", None, True, 1j, [1.0], (1.0,)])
@pytest.mark.parametrize(("symbol", "compare"), COMPARISONS)
def test_a_comparison_with_anything_else_is_a_type_error(
    symbol: str, compare: Callable[[Any, Any], bool], other: object
) -> None:
    # A bool is not a number here, as in arithmetic (Value(1.0) + True raises too).
    assert getattr(Value(1.0), f"__{compare.__name__}__")(other) is NotImplemented
    with pytest.raises(TypeError, match="not supported between instances of"):
        compare(Value(1.0), other)
    with pytest.raises(TypeError, match="not supported between instances of"):
        compare(other, Value(1.0))


def test_max_min_and_sorted_return_the_values_themselves() -> None:
    values = [Value(x) for x in [3.0, -1.0, 2.0, -1.0, 5.0, 0.0]]
    assert max(values) is values[4]
    assert min(values) is values[1]  # the first of the ties, as for floats
    assert max(values[0], values[2]) is values[0]
    assert min(values[0], 2.5) == 2.5
    ordered = sorted(values)
    assert [v.data for v in ordered] == sorted(v.data for v in values)
    assert all(any(o is v for v in values) for o in ordered)
    assert ordered[0] is values[1] and ordered[1] is values[3]  # stable on ties
    assert sorted(values, reverse=True)[0] is values[4]


def test_a_value_chosen_by_max_keeps_its_graph() -> None:
    a, b = Value(2.0), Value(3.0)
    m = max(a * a, b * 2)  # 4.0 against 6.0
    assert m.op == "*"
    assert [g.data for g in grad(m, [a, b])] == [0.0, 2.0]
    relu_like = [max(x, 0.0) for x in (Value(-1.0), Value(2.0))]
    assert relu_like[0] == 0.0 and isinstance(relu_like[1], Value)


def test_equality_and_hash_stay_identity() -> None:
    a, b = Value(1.0), Value(1.0)
    assert (a == a) is True and (a == b) is False and (a != b) is True
    # Equal data is not equality: a Value is never == a number (mypy knows it too).
    assert operator.eq(a, 1.0) is False and operator.ne(a, 1.0) is True
    assert "__eq__" not in vars(Value) and "__hash__" not in vars(Value)
    assert hash(a) == object.__hash__(a)
    assert len({a, b}) == 2 and {a: 1, b: 2}[b] == 2
    assert a <= b and a >= b  # equal data, distinct nodes


# Truth.


def test_bool_is_the_truth_of_the_data_as_for_a_float() -> None:
    for x in [0.0, -0.0, 1.0, -2.5, 1e-300, math.nan, math.inf]:
        assert bool(Value(x)) is bool(x), x
    assert not Value(0.0)
    assert (Value(0.0) or "empty") == "empty"


def test_if_on_a_comparison_branches_on_the_data() -> None:
    def clipped(v: Value) -> Value:
        return v if v > 0 else v * 0.0

    x, y = Value(2.0), Value(-3.0)
    assert [g.data for g in grad(clipped(x) + clipped(y), [x, y])] == [1.0, 0.0]


# Conversions that would drop the graph.


def convert(v: Any, how: str) -> object:
    """Each way Python turns a Value into a plain number (typed Any: mypy rejects them)."""
    conversions: dict[str, Callable[[Any], object]] = {
        "float": float,
        "int": int,
        "complex": complex,
        "index": operator.index,
        "round": round,
        "round2": lambda v: round(v, 2),
        "trunc": math.trunc,
        "floor": math.floor,
        "ceil": math.ceil,
        "math.sin": math.sin,
        "math.exp": math.exp,
        "math.isfinite": math.isfinite,
        "math.factorial": math.factorial,
        "cmath.sin": cmath.sin,
        "%f": lambda v: "%f" % v,  # noqa: UP031, the % operator's own float conversion
        "list index": lambda v: [1, 2, 3][v],
        "range": range,
    }
    return conversions[how](v)


@pytest.mark.parametrize(
    ("how", "named"),
    [
        ("float", "float(v)"),
        ("int", "int(v)"),
        ("complex", "complex(v)"),
        ("index", "v as an integer"),
        ("round", "round(v)"),
        ("round2", "round(v)"),
        ("trunc", "math.trunc(v)"),
        ("floor", "math.floor(v)"),
        ("ceil", "math.ceil(v)"),
        ("math.sin", "math.sin(v)"),
        ("math.exp", "math.sin(v) and every other math function"),
        ("math.isfinite", "every other math function"),
        ("math.factorial", "math.factorial(v)"),
        ("cmath.sin", "cmath.sin(v)"),
        ("%f", "float(v)"),
        ("list index", "an index"),
        ("range", "range(v)"),
    ],
)
def test_converting_a_value_to_a_number_raises_and_says_what_to_use(how: str, named: str) -> None:
    with pytest.raises(TypeError) as info:
        convert(Value(2.5), how)
    message = str(info.value)
    assert message.startswith("Value: ")
    assert named in message
    assert "would drop its graph" in message
    assert "use v.data (here 2.5)" in message  # the number
    assert "minigrad.sin(v) or v.sin(), not math.sin(v)" in message  # the differentiable way


def test_the_suggested_alternatives_work() -> None:
    v = Value(2.5)
    assert float(v.data) == 2.5 and round(v.data) == 2
    s = minigrad.sin(v)
    assert s.data == math.sin(2.5) == v.sin().data
    assert grad(s, [v])[0].data == math.cos(2.5)


def test_a_value_is_still_not_accepted_where_a_float_is_required() -> None:
    # Value(data) takes an int or a float; a Value is refused, not unwrapped.
    with pytest.raises(TypeError, match="Value: data must be an int or float, got Value"):
        Value(Value(1.0))  # type: ignore[arg-type]


# Arithmetic is untouched by the protocol.


def test_arithmetic_and_sum_still_build_graphs() -> None:
    v = Value(2.0)
    sq, neg, ab, rp = v**2, -v, abs(Value(-3.0)), 2**v
    assert (sq.data, sq.op, neg.data, neg.op, ab.data, ab.op, rp.data) == (
        4.0,
        "**",
        -2.0,
        "neg",
        3.0,
        "abs",
        4.0,
    )
    total = sum([v, v * 3.0, Value(1.0)])
    assert isinstance(total, Value) and total.data == 9.0
    assert [g.data for g in grad(total + sq + neg + rp, [v])] == [
        4.0 + 4.0 - 1.0 + 4.0 * math.log(2.0)
    ]


def test_mypy_still_rejects_float_and_math_sin_of_a_value() -> None:
    # The conversions are hidden from type checkers, so these lines are type
    # errors: were they not, mypy --strict (warn_unused_ignores) would fail here.
    v = Value(1.0)
    with pytest.raises(TypeError, match=r"float\(v\)"):
        float(v)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"math\.sin\(v\)"):
        math.sin(v)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"int\(v\)"):
        int(v)  # type: ignore[call-overload]
