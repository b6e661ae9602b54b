"""minigrad's counterparts of Python's math module: same numbers, Values in, named errors.

Each ``minigrad.NAME`` of a one-argument function of ``math`` returns exactly
``math.NAME(x)`` for a float and a node of the rule of the same name holding
exactly that number for a Value; the two-argument ones take a float or a
Value on either side. Domain errors name the op and the value, for floats and
Values alike. The rules' derivatives are compared with SymPy in
``test_rules_sympy.py`` (every rule of ``ops.TABLE``); here, to order 3, the
functions built from rules (a logarithm to a base, hypot of three, dist,
degrees, ldexp) and the polygamma rules made on demand, which the table
reaches only through digamma's slopes.
"""

from __future__ import annotations

import math
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mpmath  # type: ignore[import-untyped]
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad import Rule, Value, ops
from minigrad.testing import points
from sympy_oracle import SYMBOLS, compare

X, Y, Z = SYMBOLS[:3]
EXAMPLES = settings(max_examples=30, deadline=None)
Fn = Callable[..., Any]

#: One-argument functions of Python's math module and the rule minigrad applies.
MATH_UNARY: dict[str, tuple[Fn, Rule]] = {
    "exp": (math.exp, ops.EXP),
    "expm1": (math.expm1, ops.EXPM1),
    "exp2": (math.exp2, ops.EXP2),
    "log": (math.log, ops.LOG),
    "log1p": (math.log1p, ops.LOG1P),
    "log2": (math.log2, ops.LOG2),
    "log10": (math.log10, ops.LOG10),
    "sqrt": (math.sqrt, ops.SQRT),
    "cbrt": (math.cbrt, ops.CBRT),
    "sin": (math.sin, ops.SIN),
    "cos": (math.cos, ops.COS),
    "tan": (math.tan, ops.TAN),
    "asin": (math.asin, ops.ASIN),
    "acos": (math.acos, ops.ACOS),
    "atan": (math.atan, ops.ATAN),
    "sinh": (math.sinh, ops.SINH),
    "cosh": (math.cosh, ops.COSH),
    "tanh": (math.tanh, ops.TANH),
    "asinh": (math.asinh, ops.ASINH),
    "acosh": (math.acosh, ops.ACOSH),
    "atanh": (math.atanh, ops.ATANH),
    "erf": (math.erf, ops.ERF),
    "erfc": (math.erfc, ops.ERFC),
    "lgamma": (math.lgamma, ops.LGAMMA),
    "gamma": (math.gamma, ops.GAMMA),
    "fabs": (math.fabs, ops.ABS),
}
MATH_BINARY: dict[str, tuple[Fn, Rule]] = {
    "atan2": (math.atan2, ops.ATAN2),
    "hypot": (math.hypot, ops.HYPOT),
    "copysign": (math.copysign, ops.COPYSIGN),
}
#: minigrad's own one-argument functions, each with an independent formula.
OWN_UNARY: dict[str, tuple[Fn, Rule]] = {
    "sigmoid": (lambda x: 1.0 / (1.0 + math.exp(-x)), ops.SIGMOID),
    "relu": (lambda x: max(x, 0.0), ops.RELU),
    "softplus": (lambda x: math.log(1.0 + math.exp(x)), ops.SOFTPLUS),
    "gelu": (lambda x: x * (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0, ops.GELU),
    "digamma": (lambda x: float(mpmath.digamma(x)), ops.DIGAMMA),
}
#: Points inside the domain but outside the sample box: far out, between other poles.
FAR: dict[str, list[float]] = {
    "tan": [10.0, -7.5, 1e6],
    "lgamma": [-5.5, -100.25, 171.5, 1e10],
    "gamma": [-5.5, -30.25, 150.0],
    "digamma": [-5.5, 1e-8, 1e12],
    "acosh": [1.0000001, 1e300],
    "atanh": [0.999999, -0.999999],
    "asin": [1.0, -1.0],
    "cbrt": [-1e300, 1e-300],
}


def _name(item: tuple[str, tuple[Fn, Rule]] | str) -> str:
    return item if isinstance(item, str) else item[0]


@pytest.mark.parametrize("name", MATH_UNARY)
@EXAMPLES
@given(data=st.data())
def test_each_function_is_math_s_on_floats_and_its_rule_on_values(
    name: str, data: st.DataObject
) -> None:
    reference, rule = MATH_UNARY[name]
    function = getattr(minigrad, name)
    (drawn,) = data.draw(points(rule), label="x")
    for x in (drawn, *FAR.get(name, [])):
        want = reference(x)
        got = function(x)
        assert type(got) is float and got == want, (name, x, got, want)
        v = Value(x)
        node = function(v)
        assert type(node) is Value and node.rule is rule and node.parents == (v,)
        assert node.data == want, (name, x, node.data, want)


@pytest.mark.parametrize("name", OWN_UNARY)
@EXAMPLES
@given(data=st.data())
def test_minigrad_s_own_functions_match_their_formulas(name: str, data: st.DataObject) -> None:
    reference, rule = OWN_UNARY[name]
    function = getattr(minigrad, name)
    (drawn,) = data.draw(points(rule), label="x")
    for x in (drawn, *FAR.get(name, [])):
        want = reference(x)
        got = function(x)
        assert type(got) is float and math.isclose(got, want, rel_tol=1e-13, abs_tol=1e-15)
        node = function(Value(x))
        assert node.rule is rule and node.data == got


@pytest.mark.parametrize("name", MATH_BINARY)
@EXAMPLES
@given(data=st.data())
def test_two_argument_functions_take_a_float_or_a_value_on_either_side(
    name: str, data: st.DataObject
) -> None:
    reference, rule = MATH_BINARY[name]
    function = getattr(minigrad, name)
    a, b = data.draw(points(rule), label="point")
    want = reference(a, b)
    got = function(a, b)
    assert type(got) is float and got == want
    va, vb = Value(a), Value(b)
    for args, parents in (((va, vb), (va, vb)), ((va, b), (va,)), ((a, vb), (vb,))):
        node = function(*args)
        assert type(node) is Value and node.rule is rule, args
        assert node.parents == parents and node.data == want
        # A float is kept as a constant argument, not made into a node.
        assert node.args == args


@pytest.mark.parametrize("name", [*MATH_UNARY, *OWN_UNARY])
def test_methods_exist_for_the_one_argument_functions(name: str) -> None:
    _, rule = MATH_UNARY.get(name) or OWN_UNARY[name]
    (x,) = rule.sample(random.Random(name))
    v = Value(x)
    by_function = getattr(minigrad, name)(v)
    by_method = abs(v) if name == "fabs" else getattr(v, name)()
    assert by_method.rule is by_function.rule is rule
    assert by_method.data == by_function.data


# Domain errors: the op and the value, for floats and for Values.

OUTSIDE: list[tuple[str, float, type[Exception]]] = [
    ("asin", 2.0, ValueError),
    ("acos", -1.5, ValueError),
    ("acosh", 0.5, ValueError),
    ("atanh", 1.0, ValueError),
    ("atanh", -3.0, ValueError),
    ("log", -1.0, ValueError),
    ("log2", 0.0, ValueError),
    ("log10", -2.5, ValueError),
    ("log1p", -1.0, ValueError),
    ("sqrt", -4.0, ValueError),
    ("lgamma", -2.0, ValueError),
    ("gamma", 0.0, ValueError),
    ("digamma", -3.0, ValueError),
    ("sinh", 1000.0, OverflowError),
    ("cosh", -1000.0, OverflowError),
    ("exp", 1000.0, OverflowError),
    ("exp2", 1100.0, OverflowError),
    ("expm1", 710.0, OverflowError),
    ("gamma", 200.0, OverflowError),
]


@pytest.mark.parametrize(("name", "x", "error"), OUTSIDE, ids=lambda p: str(p))
@pytest.mark.parametrize("kind", ["float", "Value", "method"])
def test_domain_errors_name_the_op_and_the_value(
    name: str, x: float, error: type[Exception], kind: str
) -> None:
    if kind == "method" and not hasattr(Value, name):
        pytest.skip(f"no method {name}")
    call: Callable[[], object] = {
        "float": lambda: getattr(minigrad, name)(x),
        "Value": lambda: getattr(minigrad, name)(Value(x)),
        "method": lambda: getattr(Value(x), name)(),
    }[kind]
    with pytest.raises(error, match=rf"^{name}: .*, got {re.escape(repr(x))}$") as info:
        call()
    assert "math domain error" not in str(info.value)
    assert "math range error" not in str(info.value)


def test_two_argument_errors_name_both_arguments() -> None:
    with pytest.raises(ValueError, match=r"^log: input must be > 0, got -8.0$"):
        minigrad.log(-8.0, 2.0)
    for base in (1.0, 0.0, -2.0):
        for x in (8.0, Value(8.0)):
            with pytest.raises(ValueError, match=rf"^log: base must be > 0 and != 1, got {base}$"):
                minigrad.log(x, base)
    with pytest.raises(ValueError, match=r"^dist: p and q must have the same number"):
        minigrad.dist([Value(1.0), 2.0], [1.0])


def test_bad_types_are_refused_naming_the_function() -> None:
    either = "must be a Value, an int or a float"
    with pytest.raises(TypeError, match=rf"tan: argument 0 \(x\) {either}, got str 'a'"):
        minigrad.tan("a")  # type: ignore[type-var]
    with pytest.raises(TypeError, match=rf"atan2: argument 1 \(x\) {either}, got NoneType None"):
        minigrad.atan2(Value(1.0), None)  # type: ignore[call-overload]
    for n in (1.5, True, "1"):
        with pytest.raises(TypeError, match=rf"polygamma: n must be an int, got \w+ {n!r}"):
            minigrad.polygamma(n, 0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"polygamma: n must be >= 0, got -1"):
        minigrad.polygamma(-1, 0.5)
    with pytest.raises(TypeError, match=r"ldexp: i must be an int, got float 2.0"):
        minigrad.ldexp(Value(1.0), 2.0)  # type: ignore[arg-type]


def test_an_int_gives_a_float_as_in_math() -> None:
    for name in ("relu", "fabs", "tan", "lgamma", "softplus"):
        got = getattr(minigrad, name)(3)
        assert type(got) is float and got == getattr(minigrad, name)(3.0), name
    assert minigrad.fabs(-3) == 3.0 and type(minigrad.fabs(-3)) is float


# Functions composed of rules: the same numbers as math, derivatives to order 3.


@EXAMPLES
@given(x=st.floats(0.05, 50.0), base=st.floats(0.05, 50.0).filter(lambda b: abs(b - 1) > 0.05))
def test_log_to_a_base_is_math_s_and_differentiable_in_both(x: float, base: float) -> None:
    assert minigrad.log(x, base) == math.log(x, base)
    assert minigrad.log(Value(x), base).data == math.log(x, base)
    compare(
        "log(x, base)",
        minigrad.log,
        (x, base),
        sympy.log(X) / sympy.log(Y),
        (X, Y),
        category="math",
    )

    def log2(v: Value) -> Value:
        return minigrad.log(v, 2.0)

    compare("log(x, 2.0)", log2, (x,), sympy.log(X, 2), (X,), category="math")


@EXAMPLES
@given(coords=st.lists(st.floats(0.1, 3.0) | st.floats(-3.0, -0.1), min_size=3, max_size=3))
def test_hypot_and_dist_of_three_coordinates(coords: list[float]) -> None:
    a, b, c = coords
    norm = sympy.sqrt(X**2 + Y**2 + Z**2)
    assert minigrad.hypot(a, b, c) == math.hypot(a, b, c)
    assert math.isclose(minigrad.hypot(Value(a), b, c).data, math.hypot(a, b, c), rel_tol=1e-15)
    compare("hypot(x, y, z)", minigrad.hypot, coords, norm, (X, Y, Z), category="math")
    q = (0.5, -0.25, 1.0)
    assert minigrad.dist(coords, q) == math.dist(coords, q)
    shifted = norm.xreplace({X: X - sympy.Rational(1, 2), Y: Y + sympy.Rational(1, 4), Z: Z - 1})
    compare(
        "dist(p, q)", lambda *p: minigrad.dist(p, q), coords, shifted, (X, Y, Z), category="math"
    )


def test_hypot_of_one_or_no_coordinates_is_math_s() -> None:
    assert minigrad.hypot() == math.hypot() == 0.0
    assert minigrad.hypot(-2.5) == math.hypot(-2.5) == 2.5
    node = minigrad.hypot(Value(-2.5))
    assert (node.op, node.data) == ("abs", 2.5)


@EXAMPLES
@given(x=st.floats(-10.0, 10.0), i=st.integers(-5, 5))
def test_degrees_radians_and_ldexp_are_math_s(x: float, i: int) -> None:
    for name, exact in (("degrees", 180 / sympy.pi), ("radians", sympy.pi / 180)):
        function = getattr(minigrad, name)
        assert function(x) == getattr(math, name)(x)
        assert function(Value(x)).data == getattr(math, name)(x)
        compare(name, function, (x,), exact * X, (X,), category="math")
    assert minigrad.ldexp(x, i) == math.ldexp(x, i)
    assert minigrad.ldexp(Value(x), i).data == math.ldexp(x, i)
    scale = sympy.Integer(2) ** i

    def scaled(v: Value) -> Value:
        return minigrad.ldexp(v, i)

    compare("ldexp", scaled, (x,), scale * X, (X,), category="math")


def test_ldexp_overflow_names_the_function() -> None:
    with pytest.raises(
        OverflowError, match=r"^ldexp: result overflows a float, got x=1.0, i=2000$"
    ):
        minigrad.ldexp(1.0, 2000)
    with pytest.raises(OverflowError, match=r"^ldexp: 2 \*\* 2000 overflows a float, got x=1.0"):
        minigrad.ldexp(Value(1.0), 2000)


# Polygamma: minigrad's own, so against mpmath; its rules are made on demand.


@pytest.mark.parametrize("n", range(6))
@settings(max_examples=60, deadline=None)
@given(x=st.floats(-6.0, 30.0) | st.floats(1e-6, 1e6))
def test_polygamma_matches_mpmath(n: int, x: float) -> None:
    if x <= 0.0 and x == round(x):  # a pole
        with pytest.raises(ValueError, match=rf"^(digamma|polygamma_{n}): .*, got {x!r}$"):
            minigrad.polygamma(n, x)
        return
    with mpmath.workdps(40):
        exact = mpmath.polygamma(n, x)
    if abs(exact) > sys.float_info.max:
        with pytest.raises(OverflowError, match=rf"^(digamma|polygamma_{n}): result overflows"):
            minigrad.polygamma(n, x)
        return
    got = minigrad.polygamma(n, x)
    want = float(exact)
    assert abs(got - want) <= 1e-12 * max(abs(want), 1.0), (n, x, got, want)


@pytest.mark.parametrize("n", [1, 2, 3])
@EXAMPLES
@given(data=st.data())
def test_polygamma_rules_match_sympy_to_third_order(n: int, data: st.DataObject) -> None:
    (x,) = data.draw(points(ops.DIGAMMA), label="x")
    assert minigrad.polygamma(n, Value(x)).op == f"polygamma_{n}"
    compare(
        f"polygamma({n}, x)",
        lambda v: minigrad.polygamma(n, v),
        (x,),
        sympy.polygamma(n, X),
        (X,),
        category="math",
    )


def test_polygamma_zero_is_digamma_and_each_order_has_one_rule() -> None:
    v = Value(0.75)
    assert minigrad.polygamma(0, v).rule is ops.DIGAMMA
    assert minigrad.polygamma(0, 0.75) == minigrad.digamma(0.75)
    assert minigrad.polygamma(2, v).rule is minigrad.polygamma(2, Value(1.5)).rule


# What minigrad does not define, because Python's own already works on Values.


def test_builtin_abs_pow_and_math_prod_already_work_on_values() -> None:
    v = Value(-2.0)
    assert (abs(v).rule, abs(v).data) == (ops.ABS, 2.0)
    assert (pow(Value(2.0), 3.0).rule, pow(2.0, Value(3.0)).rule) == (ops.POW, ops.POW)
    factors: list[Value | float] = [Value(2.0), Value(3.0), 4.0]
    product = math.prod(factors)
    assert type(product) is Value and product.data == 24.0 and product.op == "*"
    # minigrad.pow would shadow the builtin in `from minigrad import *`; minigrad.abs
    # exists but stays out of __all__ (see the test below).
    assert not hasattr(minigrad, "pow")


def test_every_differentiable_function_of_math_has_a_counterpart() -> None:
    # The names of math left out on purpose, each with its reason in docs/api.md.
    left_out = {
        "pow": "x ** y and the builtin pow",
        "fsum": "the builtin sum",
        "prod": "works on Values as it is",
        "ceil": "piecewise constant",
        "floor": "piecewise constant",
        "trunc": "piecewise constant",
        "modf": "piecewise",
        "frexp": "piecewise",
        "fmod": "jumps along lines x = k y",
        "remainder": "jumps along lines x = (k + 1/2) y",
        "nextafter": "piecewise constant",
        "ulp": "piecewise constant",
        "sumprod": "works on Values as it is (Python 3.12+)",
        "fma": "x * y + z (Python 3.13+)",
    }
    integer_or_predicate = {
        "comb", "factorial", "gcd", "isqrt", "lcm", "perm",
        "isclose", "isfinite", "isinf", "isnan",
    }  # fmt: skip
    functions = {n for n in dir(math) if not n.startswith("_") and callable(getattr(math, n))}
    missing = functions - set(minigrad.__all__) - set(left_out) - integer_or_predicate
    assert missing == set()
    # The reasons name real functions of math (of this Python or a later one).
    assert set(left_out) - {"sumprod", "fma"} <= functions
    api = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text(encoding="utf-8")
    for name in left_out:
        assert f"`math.{name}`" in api, name


def test_minigrad_abs_is_fabs_but_never_shadows_the_builtin() -> None:
    import minigrad as mg

    v = mg.Value(-2.5)
    y = mg.abs(v)
    assert isinstance(y, mg.Value) and y.data == 2.5 and y.op == "abs"
    assert mg.abs(-3) == 3.0 and isinstance(mg.abs(-3), float)
    assert "abs" not in mg.__all__
    namespace: dict[str, object] = {}
    exec("from minigrad import *", namespace)
    assert "abs" not in namespace
