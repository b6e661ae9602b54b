"""How an op is written: its arguments' names and its spelling in Python.

Example:
    >>> _arg_names("f", 2, None), _arg_names("f", 7, None)[-1]
    (('x', 'y'), 'x6')
"""

from __future__ import annotations

import operator
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.core.value import Value

#: Default argument names: the symbols ``Rule.math`` is written in.
_LETTERS = ("x", "y", "z", "u", "v", "w")
#: The binary operators a Value implements, as a spelling writes them.
_OPERATORS: dict[str, Callable[..., Value]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "**": operator.pow,
}


def _arg_names(name: str, arity: int, arg_names: tuple[str, ...] | None) -> tuple[str, ...]:
    if arg_names is None:
        if arity <= len(_LETTERS):
            return _LETTERS[:arity]
        return tuple(f"x{i}" for i in range(arity))
    if (
        not isinstance(arg_names, tuple)
        or len(arg_names) != arity
        or not all(isinstance(n, str) and n.isidentifier() for n in arg_names)
        or len(set(arg_names)) != arity
    ):
        raise ValueError(
            f"Rule {name!r}: arg_names must be {arity} distinct identifier(s), got {arg_names!r}"
        )
    return arg_names


def _parse_spelling(
    name: str, spelling: str, names: tuple[str, ...]
) -> Callable[..., Value] | None:
    """What applies a spelling: an operator, a builtin, a method; None to call the rule."""
    if not isinstance(spelling, str):
        raise TypeError(f"Rule {name!r}: spelling must be a str, got {spelling!r}")
    if len(names) == 2:
        x, y = names
        for symbol, binary in _OPERATORS.items():
            if spelling == f"{x} {symbol} {y}":
                return binary
    if len(names) == 1:
        (x,) = names
        if spelling == f"-{x}":
            return operator.neg
        if spelling == f"abs({x})":
            return abs
        method = spelling.removeprefix(f"{x}.").removesuffix("()")
        if spelling == f"{x}.{method}()" and method.isidentifier():
            return operator.methodcaller(method)
    callee = spelling.removesuffix(f"({', '.join(names)})")
    if callee != spelling and all(part.isidentifier() for part in callee.split(".")):
        return None
    shown = ", ".join(names)
    raise ValueError(
        f"Rule {name!r}: spelling must be an operator ('x + y', '-x'), 'abs(x)', a method "
        f"('x.exp()') or a call ('{name}({shown})'), written with the argument names "
        f"({shown}), got {spelling!r}"
    )
