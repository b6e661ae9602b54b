"""The mistakes people make when they write a Rule, one by one: each gets a verdict naming the op.

A wrong signature is refused when the Rule is made.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import pytest

import minigrad
from minigrad import Rule, Value

# Signatures, checked when the Rule is made.


def test_a_partial_without_its_out_argument_is_refused_naming_the_rule() -> None:
    with pytest.raises(TypeError) as info:
        Rule("softsign", lambda x: x / (1 + abs(x)), (lambda x: 1 / (1 + abs(x)) ** 2,))
    message = str(info.value)
    for text in (
        "Rule 'softsign'",
        "partials[0] takes 1 argument (x) but must take 2",
        "partials[0](x, out)",
    ):
        assert text in message, message


@pytest.mark.parametrize(
    ("forward", "partials", "shown"),
    [
        (lambda x: x, (1.0, 1.0), "forward takes 1 argument (x) but must take 2"),
        (lambda x, y: x * y, (lambda x, out: 1.0,), "forward takes 2 arguments (x, y)"),
        (
            lambda x, y: x * y,
            (lambda x, y, out: y, lambda x, out: x),
            "partials[1] takes 2 arguments (x, out) but must take 3",
        ),
        (
            lambda x: x,
            (lambda x, out, extra: 1.0,),
            "partials[0] takes 3 arguments (x, out, extra) but must take 2",
        ),
        (math.atan2, (lambda x, out: 1.0,), "forward takes 2 arguments (y, x)"),
        (math.sin, (lambda x, out: math.cos(x), 0.0), "forward takes 1 argument (x)"),
    ],
    ids=[
        "forward 1, partials 2",
        "forward 2, partials 1",
        "partials disagree",
        "a partial with too many",
        "built-in forward",
        "built-in forward, constant partial",
    ],
)
def test_forward_and_partials_of_different_arity_are_refused(
    forward: Callable[..., float], partials: tuple[object, ...], shown: str
) -> None:
    with pytest.raises(TypeError) as info:
        Rule("mismatched", forward, partials)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith("Rule 'mismatched': ") and shown in message, message


class _Scaled:
    """A callable object: its signature is read with inspect."""

    def __init__(self, k: float) -> None:
        self.k = k

    def __call__(self, x: float, out: float) -> float:
        return self.k * x


def _twice(x: float, out: float, k: float = 2.0) -> float:
    return k * x


def _scaled(k: float, x: float, out: float) -> float:
    return k * x


def test_a_callable_object_of_the_wrong_arity_is_refused_too() -> None:
    with pytest.raises(TypeError, match=r"partials\[0\] takes 2 arguments \(x, out\)"):
        Rule("scaled", lambda x, y: x * y, (_Scaled(1.0), _Scaled(1.0)))
    with pytest.raises(TypeError, match=r"partials\[1\] takes 2 arguments \(x, out\)"):
        Rule("scaled", lambda x, y: x * y, (lambda x, y, out: y, functools.partial(_scaled, 1.0)))


@pytest.mark.parametrize(
    ("forward", "partial"),
    [
        (lambda x: x * x, lambda *args: 2.0 * args[0]),
        (lambda x: x * x, _twice),
        (lambda *xs: xs[0] ** 2, lambda x, *rest: 2.0 * x),
        (math.log, lambda x, out: 1.0 / x),  # a built-in whose signature cannot be read
        (abs, _Scaled(1.0)),
        (lambda x: 3.0 * x, functools.partial(_twice, k=3.0)),
        (lambda x: 3.0 * x, functools.partial(_scaled, 3.0)),
        (lambda x: 2.0 * x, 2.0),
    ],
    ids=[
        "*args",
        "a default",
        "both *args",
        "math.log",
        "callable",
        "partial, keyword",
        "partial, positional",
        "constant",
    ],
)
def test_signatures_that_fit_or_cannot_be_read_are_accepted(
    forward: Callable[..., float], partial: Callable[..., float] | float
) -> None:
    rule = Rule("fits", forward, (partial,))
    x = Value(1.5)
    rule(x).backward()
    d = partial if isinstance(partial, float) else partial(1.5, rule.forward(1.5))
    assert x.grad == d


def test_every_built_in_rule_passes_its_own_signature_check() -> None:
    for rule in minigrad.ops.TABLE:
        again = Rule(rule.name, rule.forward, rule.partials, domain=rule.domain)
        assert (again.arity, again.partials) == (rule.arity, rule.partials)
