"""Hypothesis for a student's engine: random expressions over its ops, minigrad the second oracle.

Chapter 002's two-oracle policy for the scalar lab: a student's engine is
right when its gradients agree with a numerical derivative (the checkers,
:mod:`minigrad.checking.run.engines`) and with an independent engine's. Here
minigrad is that engine:

* :func:`engine_rules` -- the rules of minigrad's table whose op the
  engine has (``+``, ``*``, ``x.exp()``, ...), with ``x ** 2``, ``x ** 3``
  and ``x ** -1`` as rules of their own when the engine's ``**`` takes a
  number exponent only (micrograd's);
* :func:`engine_expressions` -- random expressions over those rules
  (:func:`~minigrad.checking.strategies.expressions`: shared nodes,
  diamonds, constants on either side), each with a point where every op is
  smooth;
* :func:`engine_values` -- a rule's points as fresh leaves of the engine;
* :func:`assert_same_gradients` -- one line in a property test: builds the
  expression with the engine's nodes, runs its ``backward()`` and compares
  the forward and every gradient with minigrad's.

Example:
    >>> from hypothesis import given, settings
    >>> from minigrad import Value
    >>> @settings(max_examples=20, database=None, deadline=None)
    ... @given(engine_expressions(Value))
    ... def test_engine(e):
    ...     assert_same_gradients(Value, e)
    >>> test_engine()
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from minigrad.checking.lab.battery import refused, support
from minigrad.checking.run.engines import engine_name
from minigrad.checking.strategies import Expression, expressions, points
from minigrad.core import rules as builtin_rules
from minigrad.core.grad import grad
from minigrad.core.rule import Rule
from minigrad.core.value import Value

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "EngineMismatchError",
    "assert_same_gradients",
    "engine_expressions",
    "engine_rules",
    "engine_values",
]


def _power(n: int) -> Rule:
    return Rule(
        f"pow{n}",
        lambda x: x**n,
        (lambda x, out: n * x ** (n - 1),),
        math=f"x**{n}",
        sample=((-3.0, 3.0),),
        avoid=(0.0,) if n < 0 else (),
    )


#: ``x ** n`` with a number exponent, as rules: the engine applies ``node ** n``.
POWERS: dict[Rule, int] = {_power(n): n for n in (2, 3, -1)}


def _works(call: object) -> bool:
    try:
        call()  # type: ignore[operator]
    except Exception as exc:
        if refused(exc):
            return False
        raise
    return True


def engine_rules(engine: type) -> tuple[Rule, ...]:
    """The rules whose op ``engine`` has: minigrad's table, and number powers.

    A method counts when the class has it (``exp``, ``tanh``, ...); ``**``
    with a node exponent and a number base counts when the engine takes both
    (tried once, here), else ``x ** 2``, ``x ** 3`` and ``x ** -1`` stand
    for it (:data:`POWERS`).

    Example:
        >>> from minigrad import Value
        >>> [r.name for r in engine_rules(Value)][:5]
        ['+', '-', '*', '/', '**']
    """
    has = support(engine)
    found: list[Rule] = []
    for rule in builtin_rules.TABLE:
        if rule.name == "**":
            continue
        if rule.name in has and not has[rule.name]:  # a rule's name is its feature's
            found.append(rule)
    a, b = engine(1.5), engine(0.75)
    full_power = (
        not has["**x"] and not has["r**"] and _works(lambda: a**b) and _works(lambda: 2.0**a)
    )
    if full_power:
        found.insert(4, builtin_rules.POW)
    elif not has["**n"]:
        found.extend(POWERS)
    if not found:
        raise TypeError(f"{engine_name(engine)} has none of the ops minigrad knows")
    return tuple(found)


def engine_expressions(
    engine: type,
    *,
    max_inputs: int = 3,
    max_ops: int = 6,
    max_depth: int = 4,
    constants: bool = True,
    margin: float | None = None,
) -> SearchStrategy[Expression]:
    """Random expressions over the ops ``engine`` has (:func:`engine_rules`).

    Arguments as for :func:`~minigrad.checking.strategies.expressions`; each
    draw comes with a point where every op is smooth.

    Example:
        >>> from hypothesis import find
        >>> from minigrad import Value
        >>> e = find(engine_expressions(Value), lambda e: len(e.nodes) >= 2)
        >>> len(e.nodes) >= 2
        True
    """
    # Squashing into a domain with sin or tanh, else with * and + alone.
    has = support(engine)
    squash = next((r for r in (builtin_rules.SIN, builtin_rules.TANH) if not has[r.name]), None)
    return expressions(
        engine_rules(engine),
        max_inputs=max_inputs,
        max_ops=max_ops,
        max_depth=max_depth,
        constants=constants,
        margin=margin,
        squash=squash,
    )


def engine_values(
    engine: type, rule: Rule, *, margin: float | None = None
) -> SearchStrategy[tuple[object, ...]]:
    """Tuples of fresh leaves of ``engine`` at points where ``rule`` is smooth.

    Example:
        >>> from hypothesis import find
        >>> from minigrad import Value, ops
        >>> x, y = find(engine_values(Value, ops.DIV), lambda xs: True)
        >>> type(x).__name__, abs(y.data) >= 0.01
        ('Value', True)
    """
    return points(rule, margin=margin).map(lambda xs: tuple(engine(x) for x in xs))


def _apply(engine: type, has: dict[str, str], rule: Rule, args: tuple[object, ...]) -> object:
    """``rule`` on the engine's nodes (and float constants), written as a user writes it."""
    if rule in POWERS:
        return args[0] ** POWERS[rule]  # type: ignore[operator]
    if len(args) == 2 and isinstance(args[0], float) and has.get("r" + rule.name):
        args = (engine(args[0]), args[1])  # no reflected form: the constant as a node
    return rule.as_written(*args)  # type: ignore[arg-type]


class EngineMismatchError(AssertionError):
    """An engine's forward or gradients differ from minigrad's (:func:`assert_same_gradients`)."""


def assert_same_gradients(
    engine: type, expression: Expression, *, rtol: float = 1e-7, atol: float = 1e-9
) -> None:
    """Assert that ``engine`` computes ``expression`` and its gradient as minigrad does.

    Builds the expression at its point with fresh leaves of ``engine``, runs
    ``backward()`` on the output, and compares the output and each leaf's
    ``.grad`` with minigrad's value and :func:`~minigrad.grad` (each within
    ``atol + rtol * max(|engine|, |minigrad|)``).

    Args:
        engine: The engine's node class (``cls(x)`` makes a leaf).
        expression: From :func:`engine_expressions`.
        rtol: Relative tolerance: the two engines may add in other orders.
        atol: Absolute tolerance.

    Raises:
        EngineMismatchError: An ``AssertionError`` showing the program, the point
            and every value that differs.

    Example:
        >>> from minigrad import Value, ops
        >>> from minigrad.testing import Expression, Node
        >>> e = Expression(inputs=(3.0,), nodes=(Node(ops.MUL, (0, 0)),))
        >>> assert_same_gradients(Value, e)
    """
    __tracebackhide__ = True
    has = support(engine)
    leaves = [engine(x) for x in expression.inputs]
    out = expression.build(leaves, lambda rule, args: _apply(engine, has, rule, args))
    for leaf in leaves:
        leaf.grad = 0.0
    out.backward()
    values = [Value(x) for x in expression.inputs]
    reference = expression(*values)
    expected = [reference.data] + [g.data for g in grad(reference, values)]
    got = [float(out.data)] + [float(leaf.grad or 0.0) for leaf in leaves]
    names = ["the output"] + [f"d/dx{i}" for i in range(len(values))]
    wrong = [
        f"{name}: {engine.__name__} {g!r}, minigrad {e!r}"
        for name, g, e in zip(names, got, expected, strict=True)
        if not (math.isfinite(g) and abs(g - e) <= atol + rtol * max(abs(g), abs(e)))
    ]
    if wrong:
        raise EngineMismatchError(
            f"{engine_name(engine)} differs from minigrad on\n{expression}\n" + "\n".join(wrong)
        )
