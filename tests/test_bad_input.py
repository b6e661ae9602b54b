"""Bad input gets a TypeError or ValueError that names the argument and the value.

Issue 21, point 9: each call here used to reach minigrad's internals and
fail there (an AttributeError on a str, a bare OverflowError), or, worse,
to be accepted: a flag read for its truth (``fast_mode="False"`` turned fast
mode on), a str or NaN stored as a gradient, bytes taken as weights, a NaN
constant slope, a check of order 40 left to run for hours.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import minigrad as mg
from minigrad import GradcheckError, Rule, Value, ops
from minigrad.cli import main

q = Value(1.0)
square: Callable[[Value], Value] = lambda v: v * v  # noqa: E731
# Typed Any: the calls below pass what the annotations refuse, on purpose.
M: Any = mg
AnyRule: Any = Rule
AnyError: Any = GradcheckError
EXP: Any = ops.EXP

CASES: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    ("sin of a str", lambda: M.sin("a"), TypeError, "sin: argument 0 (x) must be a Value"),
    ("exp of None", lambda: M.exp(None), TypeError, "exp: argument 0 (x) must be a Value"),
    ("sqrt of a list", lambda: M.sqrt([1.0]), TypeError, "got list [1.0]"),
    ("log with a str base", lambda: M.log(2.0, "e"), TypeError, "log: base must be a Value"),
    ("log of a str", lambda: M.log("a"), TypeError, "log: argument 0 (x) must be a Value"),
    ("tanh of a str", lambda: M.tanh("a"), TypeError, "got str 'a'"),
    ("sigmoid of a str", lambda: M.sigmoid("a"), TypeError, "sigmoid: argument 0"),
    ("erf of a str", lambda: M.erf("a"), TypeError, "erf: argument 0"),
    ("cos of a str", lambda: M.cos("a"), TypeError, "cos: argument 0"),
    ("toposort of strs", lambda: M.toposort(["a"]), TypeError, "roots[0] must be a Value"),
    ("toposort of a str", lambda: M.toposort("a"), TypeError, "roots must be an iterable"),
    ("toposort of a Value", lambda: M.toposort(q), TypeError, "pass [v] for one Value"),
    (
        "an int beyond the floats",
        lambda: Value(0.5) + 10**400,
        OverflowError,
        "+: the operand, the int 1e+400, is too large for a float",
    ),
    ("a huge reflected int", lambda: -(10**999) * Value(0.5), OverflowError, "the int -1e+999"),
    ("sample with a str rng", lambda: EXP.sample("a"), TypeError, "rng must be a random"),
    ("sample with a str margin", lambda: EXP.intervals(0, margin="a"), TypeError, "margin"),
    (
        "a str domain",
        lambda: AnyRule("f", lambda x: x, (1.0,), domain="a"),
        TypeError,
        "Rule 'f': domain must give one interval (lo, hi) with lo < hi per argument (1), got 'a'",
    ),
    (
        "a domain of strs",
        lambda: AnyRule("f", lambda x: x, (1.0,), domain=(("a", "b"),)),
        TypeError,
        "domain must give one interval",
    ),
    (
        "a domain of one number",
        lambda: AnyRule("f", lambda x: x, (1.0,), domain=(1.0,)),
        TypeError,
        "domain must give one interval",
    ),
    (
        "a sample of Nones",
        lambda: AnyRule("f", lambda x: x, (1.0,), sample=((None, 1.0),)),
        TypeError,
        "sample must give one finite interval",
    ),
    ("dist of None", lambda: M.dist(None, [q]), TypeError, "dist: p must be a sequence"),
    ("dist to None", lambda: M.dist([q], None), TypeError, "dist: q must be a sequence"),
    ("dist of strs", lambda: M.dist(["a"], [q]), TypeError, "dist: p[0] must be a Value"),
    (
        "fast_mode as a str",
        lambda: M.gradcheck(square, [Value(1.0)], fast_mode="False"),
        TypeError,
        "gradcheck: fast_mode must be a bool, got str 'False'",
    ),
    (
        "create_graph as a str",
        lambda: M.grad(q * q, [q], create_graph="no"),
        TypeError,
        "grad: create_graph must be a bool (True or False), got str 'no'",
    ),
    (
        "raise_exception as a str",
        lambda: M.gradcheck(square, [Value(1.0)], raise_exception="no"),
        TypeError,
        "gradcheck: raise_exception must be a bool (True or False), got str 'no'",
    ),
    (
        "raise_exception as None",
        lambda: M.gradgradcheck(square, [Value(1.0)], raise_exception=None),
        TypeError,
        "gradgradcheck: raise_exception must be a bool",
    ),
    (
        "raise_exception as an int",
        lambda: M.check_grads(square, [Value(1.0)], raise_exception=0),
        TypeError,
        "check_grads: raise_exception must be a bool",
    ),
    (
        "a NaN constant slope",
        lambda: AnyRule("f", lambda x: x, (math.nan,)),
        ValueError,
        "Rule 'f': partials[0] must be finite, got nan",
    ),
    (
        "an infinite constant slope",
        lambda: AnyRule("f", lambda x, y: x, (1.0, -math.inf)),
        ValueError,
        "Rule 'f': partials[1] must be finite, got -inf",
    ),
    (
        "a bool as a slope",
        lambda: AnyRule("f", lambda x: x, (True,)),
        TypeError,
        "Rule 'f': partials[0] must be a function or a constant float, got bool True",
    ),
    (
        "bytes as grad_outputs",
        lambda: M.grad(q * q, [q], grad_outputs=b"x"),
        TypeError,
        "grad: grad_outputs must be a sequence of floats or Values, got bytes b'x'",
    ),
    (
        "bytes as gradgradcheck's grad_outputs",
        lambda: M.gradgradcheck(square, [Value(1.0)], grad_outputs=b"x"),
        TypeError,
        "gradgradcheck: grad_outputs must be a sequence",
    ),
    (
        "bytes as vjp's v",
        lambda: M.vjp(square, [q], b"x"),
        TypeError,
        "vjp: v must be a sequence",
    ),
    ("True as a weight", lambda: M.grad(q * q, [q], [True]), TypeError, "grad_outputs[0]"),
    (
        "an int beyond the floats as a weight",
        lambda: M.gradgradcheck(square, [Value(0.3)], grad_outputs=[10**400]),
        ValueError,
        "gradgradcheck: grad_outputs[0], the int 1e+400, is too large for a float",
    ),
    *(
        (
            f"an int beyond the floats as {name}",
            lambda name=name: M.gradcheck(square, [Value(0.3)], **{name: 10**400}),
            ValueError,
            f"gradcheck: {name}, the int 1e+400, is too large for a float",
        )
        for name in ("eps", "atol", "rtol", "nondet_tol")
    ),
    (
        "an eps that does not move an input, in PyTorch's form",
        lambda: M.gradcheck(square, [0.4], eps=1e-20, atol=1e-5, rtol=1e-3),
        ValueError,
        "gradcheck: eps=1e-20 does not move x[0] (0.4): x + eps and x - eps are x itself",
    ),
    (
        "a Decimal as an input",
        lambda: M.check(square, [Decimal("0.5")]),
        TypeError,
        "check: inputs[0] is a Decimal, Decimal('0.5'): a number, but the checks compute in "
        "float64, from real numbers (an int, a float, a Fraction): pass float(x)",
    ),
    (
        "a complex as an input",
        lambda: M.gradcheck(square, [1.0, 1j]),
        TypeError,
        "gradcheck: inputs[1] is a complex, 1j: a number, but the checks compute in float64",
    ),
    (
        "an order without bound",
        lambda: M.check(square, [Value(1.0)], order=40),
        ValueError,
        "check: order must be <= 8, got 40",
    ),
    ("a GradcheckError of a number", lambda: AnyError(3), TypeError, "got int 3"),
    (
        "a float among a func's outputs",
        lambda: M.gradcheck(lambda v: (v * 2, 3.0, v.exp()), [Value(0.5)]),
        TypeError,
        "gradcheck: func must return a Value or a tuple of Values, got tuple (",
    ),
    (
        "which output is the float",
        lambda: M.gradcheck(lambda v: (v * 2, 3.0, v.exp()), [Value(0.5)]),
        TypeError,
        "): out[1] is float 3.0",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "shown"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_named(call: Callable[[], object], error: type[Exception], shown: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert shown in str(info.value), str(info.value)
    assert type(info.value) is error  # not an AttributeError from deep inside


@pytest.mark.parametrize("bad", ["a", None, math.nan, math.inf, -math.inf, True, Value(1.0)])
def test_a_gradient_must_be_a_finite_float(bad: object) -> None:
    x = Value(1.0)
    x.grad = 2.5
    with pytest.raises((TypeError, ValueError), match=r"Value\.grad must be"):
        x.grad = bad  # type: ignore[assignment]
    assert x.grad == 2.5  # unchanged
    x.grad = 3  # an int is a number, stored as a float
    assert x.grad == 3.0 and type(x.grad) is float


def test_backward_and_the_checkers_still_write_gradients() -> None:
    # .grad is a property over a slot now: the engine writes the slot.
    x = Value(0.5)
    (x * x).backward()
    (x * x).backward()
    assert x.grad == 2.0
    assert mg.gradcheck(square, [x]) and x.grad == 2.0  # restored


def test_a_gradcheck_error_takes_a_plain_message() -> None:
    err = GradcheckError("my message")
    assert str(err) == "my message" and isinstance(err, AssertionError)
    assert err.report.fault == "my message" and not err.report.ok and err.report.failures == []
    assert err._repr_html_() is None
    with pytest.raises(GradcheckError, match=r"^my message$"):
        raise err


def test_the_flags_are_still_taken_as_bools() -> None:
    x = Value(0.4)
    assert mg.gradcheck(square, [x], fast_mode=True, raise_exception=False)
    wrong = Rule("wrong_exp", math.exp, (lambda v, out: 2.0 * out,))
    assert mg.gradcheck(lambda v: wrong(v), [x], raise_exception=False) is False
    assert mg.check(square, [x], order=8).ok  # the bound itself is allowed
    assert len(mg.grad(x * x, [x], create_graph=True)) == 1


def test_a_rule_sample_takes_any_random_source() -> None:
    class Source:
        """Not a random.Random, but with the two methods Rule.sample draws with."""

        def __init__(self) -> None:
            self.rng = random.Random(1)

        def choices(self, population: list[Any], weights: list[float]) -> list[Any]:
            return self.rng.choices(population, weights=weights)

        def uniform(self, a: float, b: float) -> float:
            return self.rng.uniform(a, b)

    (x,) = EXP.sample(Source())
    lo, hi = ops.EXP.sample_box[0]
    assert lo < x < hi


def test_eps_curve_reports_a_path_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no such folder" / "x.svg"
    assert main(["eps-curve", "--svg", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"minigrad eps-curve: cannot write --svg {str(missing)!r}: ")
    assert "No such file" in err and "Traceback" not in err + out
    assert not missing.parent.exists()


def test_a_fraction_is_a_number_the_checks_take_and_it_is_left_as_it_was() -> None:
    third = Fraction(1, 3)
    report = M.check(lambda x, y: (x * y).exp(), [third, 2])
    assert report.ok and report.entries[0].verdict == "agrees"
    assert third == Fraction(1, 3)
