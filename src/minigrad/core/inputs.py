"""Inputs that are Values: one wording for a Value, or a sequence of Values, given wrong.

As :mod:`minigrad.core._validate` for numbers, each function takes ``what``,
the argument's name as the message should show it, and raises a TypeError or
a ValueError naming ``what`` and the value.
"""

from __future__ import annotations

from collections.abc import Sequence

from minigrad.core._validate import compiled_refusal, finite_float
from minigrad.core.value import Value

__all__ = ["value_list", "weights"]


def value_list(
    xs: object,
    what: str,
    *,
    nonempty: bool = False,
    finite: bool = False,
    distinct: bool = False,
) -> list[Value]:
    """A Value or a sequence of Values, as a new list.

    Args:
        xs: The argument given.
        what: Its name in messages.
        nonempty: Refuse an empty sequence.
        finite: Refuse a Value whose data is NaN or infinite.
        distinct: Refuse the same Value twice (checkers perturb each once).

    Raises:
        TypeError: ``xs`` is neither a Value nor a sequence (a str is not one),
            or an item is not a Value (the message gives its index).
        ValueError: Empty, not finite or repeated, when refused.

    Example:
        >>> from minigrad import Value
        >>> x = Value(1.0)
        >>> value_list(x, "grad: inputs") == [x]
        True
        >>> value_list([x, 2.0], "grad: inputs")
        Traceback (most recent call last):
            ...
        TypeError: grad: inputs[1] must be a Value, got float 2.0
    """
    if type(xs) is Value:
        items = [xs]
    elif type(xs) is list or type(xs) is tuple:
        items = list(xs)  # the common case, without the ABC check's cost (~1 us)
    elif getattr(xs, "_compiled", False):
        raise TypeError(compiled_refusal(what, xs))
    elif isinstance(xs, Value):  # a subclass of Value
        items = [xs]
    elif isinstance(xs, str | bytes | bytearray) or not isinstance(xs, Sequence):
        raise TypeError(
            f"{what} must be a Value or a sequence of Values, got {type(xs).__name__} {xs!r}"
        )
    else:
        items = list(xs)
    if nonempty and not items:
        raise ValueError(f"{what} is empty; give at least one Value")
    for i, x in enumerate(items):
        if type(x) is not Value:
            if getattr(x, "_compiled", False):
                raise TypeError(compiled_refusal(f"{what}[{i}]", x))
            if not isinstance(x, Value):
                raise TypeError(f"{what}[{i}] must be a Value, got {type(x).__name__} {x!r}")
        if finite and x._data - x._data != 0.0:  # the slot: no tracing guard here
            raise ValueError(f"{what}[{i}] is not finite: {x.data!r}")
    if distinct and len({id(x) for x in items}) < len(items):
        first: dict[int, int] = {}  # id -> the first index of that Value
        for i, x in enumerate(items):
            j = first.setdefault(id(x), i)
            if j != i:
                raise ValueError(
                    f"{what}[{i}] is the same Value as {what.rpartition(' ')[2]}[{j}]; "
                    "perturbing one would move both"
                )
    return items


def weights(grad_outputs: object, n: int | None, what: str) -> list[float | Value]:
    """Upstream weights: one finite float or Value per output; ones when None.

    Args:
        grad_outputs: The argument given: None or a sequence.
        n: How many outputs there are (None: any number but none at all).
        what: Its name in messages.

    Raises:
        TypeError: Not a sequence, or an entry is neither a number nor a Value.
        ValueError: An entry is NaN or infinite, or the count is wrong.

    Example:
        >>> weights(None, 2, "grad: grad_outputs")
        [1.0, 1.0]
        >>> weights([1, 0.5], 2, "grad: grad_outputs")
        [1.0, 0.5]
        >>> weights([1.0], 2, "grad: grad_outputs")
        Traceback (most recent call last):
            ...
        ValueError: grad: grad_outputs has 1 entries for 2 output(s)
    """
    if grad_outputs is None:
        if n is None:
            raise ValueError(f"{what} is None, and the number of outputs is not known")
        return [1.0] * n
    # A str or bytes is a sequence, but not of weights (b"x" would be [120.0]).
    if isinstance(grad_outputs, str | bytes | bytearray) or not isinstance(grad_outputs, Sequence):
        raise TypeError(
            f"{what} must be a sequence of floats or Values, got {type(grad_outputs).__name__} "
            f"{grad_outputs!r}"
        )
    if n is not None and len(grad_outputs) != n:
        raise ValueError(f"{what} has {len(grad_outputs)} entries for {n} output(s)")
    if not grad_outputs:
        raise ValueError(f"{what} is empty")
    out: list[float | Value] = []
    for i, w in enumerate(grad_outputs):
        if isinstance(w, Value):
            if w.data - w.data != 0.0:
                raise ValueError(f"{what}[{i}] must be finite, got a Value holding {w.data!r}")
            out.append(w)
        elif isinstance(w, int | float) and not isinstance(w, bool):
            out.append(finite_float(w, f"{what}[{i}]"))
        else:
            raise TypeError(
                f"{what}[{i}] must be a finite float or a Value, got {type(w).__name__} {w!r}"
            )
    return out
