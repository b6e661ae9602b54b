"""Argument validation for the whole package: one wording for each kind of bad input.

Every function takes ``what``, the argument's name as the message should show
it (``"grad: grad_outputs"``, ``"gradcheck: eps"``), and raises a TypeError for
a value of the wrong kind or a ValueError for a value out of range, naming
``what`` and the value. A bool is never a number here: ``True`` as a tolerance
or a size is a mistake, even though Python lets it add.

Finite means ``x - x == 0.0``: that is 0.0 for every finite float and NaN for
NaN and the infinities. minigrad uses this one test everywhere (the engine's
hot paths too, where it is a subtraction and a comparison instead of a call to
``math.isfinite`` or a chained comparison with two global lookups).

It sits below everything else in minigrad and imports nothing from it; the
checks of Values and of sequences of Values are in :mod:`minigrad.core.inputs`,
above the node.
"""

from __future__ import annotations

import math

__all__ = [
    "ComplexNumberError",
    "as_bool",
    "as_float",
    "as_int",
    "finite_float",
    "non_negative",
    "positive",
    "signature_problem",
]


class ComplexNumberError(TypeError, ValueError):
    """A complex number where a real one is needed: of the wrong type, and a value no
    real function has (Python's float power of a negative base, ``(-0.5) ** 0.5``, is
    complex), so the checkers take it, at a point they moved to, as the edge of the
    function's domain, as they take ``math.sqrt``'s ValueError there."""


def as_float(x: object, what: str) -> float:
    """``x`` as a float: an int or a float, not a bool.

    Args:
        x: The value given.
        what: Its name in messages.

    Raises:
        TypeError: ``x`` is not an int or a float (or is a bool).
        OverflowError: ``x`` is an int too large for a float.

    Example:
        >>> as_float(3, "Value: data")
        3.0
        >>> as_float(True, "Value: data")
        Traceback (most recent call last):
            ...
        TypeError: Value: data must be an int or float, got bool True
        >>> as_float(-3 * 10**400, "+: the operand")
        Traceback (most recent call last):
            ...
        OverflowError: +: the operand, the int -3e+400, is too large for a float (at most 1.8e+308)
    """
    if type(x) is float:
        return x
    if isinstance(x, int | float) and not isinstance(x, bool):
        try:
            return float(x)
        except OverflowError:
            raise OverflowError(
                f"{what}, the int {_int_shown(x)}, is too large for a float (at most 1.8e+308)"
            ) from None
    if isinstance(x, complex):
        raise ComplexNumberError(
            f"{what} must be an int or float, got complex {x!r} (a float power of a "
            "negative base is complex)"
        )
    raise TypeError(f"{what} must be an int or float, got {type(x).__name__} {x!r}")


def _int_shown(x: object) -> str:
    """An int too large for a float, as ``-3e+400``: its repr runs to hundreds of
    digits (and Python refuses to write one of more than 4300)."""
    assert isinstance(x, int)
    exponent = math.log10(abs(x))  # math.log10 takes an int of any size
    whole = math.floor(exponent)
    mantissa = round(10.0 ** (exponent - whole), 2)
    if mantissa >= 10.0:
        mantissa, whole = mantissa / 10.0, whole + 1
    return f"{'-' if x < 0 else ''}{mantissa:g}e+{whole}"


def as_bool(x: object, what: str) -> bool:
    """``x`` itself if it is a bool: a flag such as ``create_graph``.

    A flag is never read for its truth: ``"False"`` is a true string, and
    ``fast_mode="False"`` turning fast mode on would be a silent mistake.

    Example:
        >>> as_bool(True, "grad: create_graph")
        True
        >>> as_bool("no", "grad: create_graph")
        Traceback (most recent call last):
            ...
        TypeError: grad: create_graph must be a bool (True or False), got str 'no'
    """
    if x is True or x is False:
        return x
    raise TypeError(f"{what} must be a bool (True or False), got {type(x).__name__} {x!r}")


def as_int(
    x: object, what: str, *, least: int | None = None, most: int | None = None, why: str = ""
) -> int:
    """``x`` as an int (not a bool) in ``[least, most]`` (each end when given): a count or an order.

    ``why`` explains the upper bound in the message.

    Example:
        >>> as_int(3, "check: order", least=1)
        3
        >>> as_int(0, "check: order", least=1)
        Traceback (most recent call last):
            ...
        ValueError: check: order must be >= 1, got 0
        >>> as_int(40, "check: order", least=1, most=8)
        Traceback (most recent call last):
            ...
        ValueError: check: order must be <= 8, got 40
    """
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{what} must be an int, got {type(x).__name__} {x!r}")
    if least is not None and x < least:
        raise ValueError(f"{what} must be >= {least}, got {x!r}")
    if most is not None and x > most:
        raise ValueError(f"{what} must be <= {most}, got {x!r}{why}")
    return x


def finite_float(x: object, what: str) -> float:
    """``x`` as a float (see :func:`as_float`) that is neither NaN nor infinite: an
    argument, so an int beyond the floats is a ValueError here, not an operand's
    OverflowError.

    Example:
        >>> finite_float(2, "backward: grad")
        2.0
        >>> finite_float(float("nan"), "backward: grad")
        Traceback (most recent call last):
            ...
        ValueError: backward: grad must be finite, got nan
        >>> finite_float(10**400, "weights[0]")
        Traceback (most recent call last):
            ...
        ValueError: weights[0], the int 1e+400, is too large for a float (at most 1.8e+308)
    """
    try:
        f = as_float(x, what)
    except OverflowError as exc:
        raise ValueError(str(exc)) from None
    if f - f != 0.0:
        raise ValueError(f"{what} must be finite, got {f!r}")
    return f


def non_negative(x: object, what: str) -> float:
    """``x`` as a finite float >= 0: a tolerance such as ``atol``.

    Example:
        >>> non_negative(0, "gradcheck: atol")
        0.0
        >>> non_negative(-1e-5, "gradcheck: atol")
        Traceback (most recent call last):
            ...
        ValueError: gradcheck: atol must be finite and >= 0, got -1e-05
    """
    return _at_least_zero(x, what, zero=True)


def positive(x: object, what: str) -> float:
    """``x`` as a finite float > 0: a step such as ``eps``.

    Example:
        >>> positive(1e-6, "gradcheck: eps")
        1e-06
        >>> positive(0.0, "gradcheck: eps")
        Traceback (most recent call last):
            ...
        ValueError: gradcheck: eps must be finite and > 0, got 0.0
    """
    return _at_least_zero(x, what, zero=False)


def _at_least_zero(x: object, what: str, *, zero: bool) -> float:
    try:
        f = as_float(x, what)
    except OverflowError as exc:  # an argument, not an operand: see finite_float
        raise ValueError(str(exc)) from None
    if f - f != 0.0 or f < 0.0 or (f == 0.0 and not zero):
        raise ValueError(f"{what} must be finite and {'>=' if zero else '>'} 0, got {x!r}")
    return f


def compiled_refusal(what: str, x: object) -> str:
    """Why a compiled loss cannot be differentiated by ``grad`` or the checkers.

    The loss ``minigrad.compile`` returns is a leaf to the engine (its graph
    lives in generated code), so ``grad`` would silently give 0.

    Example:
        >>> compiled_refusal("grad: outputs", 1.0)[:40]
        'grad: outputs is a compiled loss (minigr'
    """
    return (
        f"{what} is a compiled loss (minigrad.compile), {x!r}: grad does not see "
        "through its generated code and would give 0; call loss.backward() for "
        "first-order gradients, or differentiate the eager function"
    )


# Signatures: what the engine will call a forward or a partial with.


def signature_problem(fn: object, n: int) -> str:
    """Why ``fn(*n positional arguments)`` cannot work, or ``""`` if it can.

    Plain functions and lambdas are read from their code object (cheap: the
    built-in rules are made when minigrad is imported); functions written in
    C from their ``__text_signature__``; anything else with
    :func:`inspect.signature`, imported only then. A signature that cannot be
    read is taken to fit.

    Example:
        >>> signature_problem(lambda x: x, 2)
        'takes 1 argument (x)'
        >>> signature_problem(lambda x, out, k=2.0: k * x, 2)
        ''
    """
    if type(fn) is _FUNCTION:
        code, kept = fn.__code__, len(fn.__defaults__ or ())
        if code.co_argcount - kept <= n and (n <= code.co_argcount or code.co_flags & _CO_VARARGS):
            return ""  # (the common case, without the names a problem shows)
        fewest, most, names = _from_code(fn)
    elif type(fn) is _BUILTIN:
        read = _from_text_signature(getattr(fn, "__text_signature__", None))
        if read is None:
            return ""
        fewest, most, names = read
    else:
        read = _from_inspect(fn)
        if read is None:
            return ""
        fewest, most, names = read
    if fewest <= n and (most is None or n <= most):
        return ""
    shown = ", ".join(names)
    if most is None:
        count = f"at least {fewest} argument{'s' * (fewest != 1)}"
    elif fewest == most:
        count = f"{fewest} argument{'s' * (fewest != 1)}"
    else:
        count = f"{fewest} to {most} arguments"
    return f"takes {count} ({shown})"


_FUNCTION = type(signature_problem)
_BUILTIN = type(len)
_CO_VARARGS = 0x04  # inspect.CO_VARARGS, without importing inspect

#: (fewest, most or None for *args, names as shown) positional arguments.
_Positional = tuple[int, "int | None", list[str]]


def _from_code(fn: object) -> _Positional:
    code = fn.__code__  # type: ignore[attr-defined]
    count = code.co_argcount  # positional-only and positional-or-keyword
    defaults = len(fn.__defaults__ or ())  # type: ignore[attr-defined]
    names = list(code.co_varnames[:count])
    for i in range(count - defaults, count):
        names[i] += "=..."
    if code.co_flags & _CO_VARARGS:
        names.append("*" + code.co_varnames[count + code.co_kwonlyargcount])
        return count - defaults, None, names
    return count - defaults, count, names


def _from_text_signature(text: object) -> _Positional | None:
    """Read ``"($module, x, y=None, /)"``; None for anything less plain."""
    if not isinstance(text, str) or not (text.startswith("(") and text.endswith(")")):
        return None
    params = [p.strip() for p in text[1:-1].split(",")]
    if any(c in p for p in params for c in "()[]{}'\""):
        return None  # a default with commas of its own: not worth a parser
    fewest = most = 0
    names: list[str] = []
    for p in params:
        if p.startswith("$") or p in ("", "/"):
            continue
        if p == "*" or p.startswith("**"):
            break
        if p.startswith("*"):
            names.append(p)
            return fewest, None, names
        most += 1
        if "=" in p:
            names.append(p.partition("=")[0] + "=...")
        else:
            fewest += 1
            names.append(p)
    return fewest, most, names


def _from_inspect(fn: object) -> _Positional | None:
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    fewest = most = 0
    names: list[str] = []
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            names.append(f"*{p.name}")
            return fewest, None, names
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            most += 1
            if p.default is p.empty:
                fewest += 1
                names.append(p.name)
            else:
                names.append(f"{p.name}=...")
    return fewest, most, names
