"""What went wrong in an op or a reverse pass, in words: which op, which partial, where.

Every error the engine raises for a forward that failed (:func:`_domain_error`)
or a backward step that failed or gave NaN or inf (:func:`_failure`) is worded
here, so an error names the op, the point and what to do, whichever pass
(floats or ``create_graph``) met it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from minigrad.core.value import Value, _args

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from minigrad.core.rule import Rule

#: The names of minigrad's counterparts of Python's math functions, filled in
#: by :mod:`minigrad.core.functions` (a layer above, which defines them), so
#: an error can say "minigrad.cos, not math.cos" without importing upwards.
MATH_COUNTERPARTS: set[str] = set()


def _show(rule: Rule, xs: Sequence[float]) -> str:
    """The inputs of a forward error: ``-1.0``, or ``x=1.0, y=-1.0``."""
    return repr(xs[0]) if len(xs) == 1 else _point(rule, xs)


def _point(rule: Rule, xs: Sequence[Value | float]) -> str:
    """An op's arguments by name: ``x=0.5, y=2.0`` (a Value shows its data)."""
    return ", ".join(
        f"{n}={x._data if isinstance(x, Value) else x!r}"
        for n, x in zip(rule.arg_names, xs, strict=False)
    )


def _domain_error(
    rule: Rule, xs: Sequence[float], exc: BaseException | None, out: float = math.inf
) -> Exception:
    """The error for an op whose forward failed, naming the op and its inputs.

    ``out`` is what the forward returned when it returned a value that is not
    finite: NaN from finite inputs is no overflow, and is not called one.
    """
    kind: type[Exception]
    if exc is None and out != out and all(x - x == 0.0 for x in xs):
        return ValueError(
            f"{rule.name}: its forward returned NaN (not a number), got {_show(rule, xs)}"
        )
    if exc is None or isinstance(exc, OverflowError):
        finite = all(x - x == 0.0 for x in xs)
        kind = OverflowError if finite else ValueError
        detail = "result overflows a float" if finite else "input is not finite"
    else:
        kind = ZeroDivisionError if isinstance(exc, ZeroDivisionError) else ValueError
        detail = rule.requires or str(exc)
    return kind(f"{rule.name}: {detail}, got {_show(rule, xs)}")


# Errors of the reverse pass: what went wrong, in which op, at which point.

#: What a partial may raise that is turned into an error naming the op.
_CAUGHT = (ArithmeticError, ValueError, TypeError, AttributeError)

_NOT_FINITE_ADVICE = (
    "a partial must be finite wherever a gradient flows through the op: check its "
    "formula, or keep the op's inputs where it is differentiable"
)
_OVERFLOW_ADVICE = (
    "the derivative, or a product on the way to it (a gradient times a partial), is "
    "beyond the floats here: rescale the function or its inputs"
)


class _NotFiniteError(Exception):
    """A gradient came out NaN or inf; :func:`_failure` says where. Never escapes."""


def _grad_of(node: Value) -> float:
    return node._grad


def _failure(
    exc: BaseException,
    node: Value,
    done: list[Value],
    incoming: Callable[[Value], float | None],
    wanted: set[Value] | None,
) -> Exception | None:
    """The error to raise for a float reverse pass stopped by ``exc`` at ``node``.

    ``done`` holds the nodes whose step already ran, ``incoming`` gives the
    gradient that reached each. None: ``exc`` is no concern of the engine's
    (KeyboardInterrupt, or an exception type a partial made up) and goes on,
    of its own type, with a note naming the op it came from.
    """
    if isinstance(exc, _NotFiniteError):
        return _not_finite(node, done, incoming)
    if not isinstance(exc, _CAUGHT):
        note_op(exc, node, on_values=False)
        return None
    rule = node._rule
    args: tuple[Any, ...] = _args(node)  # Values of any class and float constants
    if getattr(rule, "step", None) is not None:
        # A node made micrograd's way (core/closure.py): its step is the
        # user's _backward, which raised; there are no partials to try again.
        assert rule is not None
        return _retyped(
            exc,
            f"op {rule.name!r} backward: its _backward closure raised {type(exc).__name__} at "
            f"{_point(rule, args) or 'no children'} (out.data={node._data!r}, "
            f"out.grad={node._grad!r}): {exc}",
        )
    if rule is not None:
        xs = [a if type(a) is float else a._data for a in args]
        xs.append(node._data)
        # Which partial? Evaluate them again, one at a time.
        for i, (p, partial) in enumerate(zip(args, rule.partials, strict=True)):
            if type(p) is float or isinstance(partial, float):
                continue
            if wanted is not None and p not in wanted:
                continue
            try:
                d = partial(*xs)
            except _CAUGHT as again:
                return _partial_raised(node, i, again, on_values=False)
            if not isinstance(d, int | float):
                return _partial_returned(node, i, d, "is not a number", on_values=False)
    if rule is None:
        return _retyped(exc, f"backward failed at {_describe(node)}: {exc}")
    return _retyped(exc, f"op {rule.name!r} backward failed at {_point(rule, args)}: {exc}")


def note_op(exc: BaseException, node: Value, *, on_values: bool) -> None:
    """Add to ``exc``, an exception of the user's own kind raised in ``node``'s backward
    step, a note naming the op and the point (a KeyboardInterrupt gets none).

    Example:
        >>> from minigrad import Rule, Value
        >>> bad = Rule("bad", lambda x: x, (lambda x, out: {}["k"],))
        >>> try:
        ...     bad(Value(0.5)).backward()
        ... except KeyError as exc:
        ...     print(exc.__notes__[0])
        op 'bad' backward raised KeyError at x=0.5 (on floats): a partial or _backward step of it
    """
    if not isinstance(exc, Exception):
        return
    rule = node._rule
    if rule is None:
        return
    where = f" at {_point(rule, _args(node))}" if _args(node) else ""
    done = "on Values (create_graph=True)" if on_values else "on floats"
    exc.add_note(
        f"op {rule.name!r} backward raised {type(exc).__name__}{where} ({done}): a partial "
        "or _backward step of it"
    )


def _not_finite(node: Value, done: list[Value], incoming: Callable[[Value], Any]) -> Exception:
    """The error for a NaN or infinite gradient reaching ``node``: which partial made it."""
    for user in done:
        rule = user._rule
        g = incoming(user)
        if rule is None or not g:
            continue
        args: tuple[Any, ...] = _args(user)  # Values of any class and float constants
        xs = [a if type(a) is float else a._data for a in args]
        xs.append(user._data)
        for i, (p, partial) in enumerate(zip(args, rule.partials, strict=True)):
            if p is not node:
                continue
            try:
                d = partial if isinstance(partial, float) else partial(*xs)
            except _CAUGHT:
                continue  # it did not raise the first time: not this one
            bad = _not_a_slope(d) if not isinstance(d, Value) else "is a Value, not a float"
            if bad:
                return _partial_returned(user, i, d, bad, on_values=False)
            if g * d - g * d != 0.0:
                err = OverflowError(
                    f"op {rule.name!r} backward: the gradient overflowed: partials[{i}] is "
                    f"{d!r} at {_point(rule, args)}, and times the gradient {g!r} reaching "
                    f"the op's result it is {g * d!r}, which is not finite; {_OVERFLOW_ADVICE}"
                )
                # For the checkers: where, and the gradient the partial scaled.
                err.node, err.partial, err.times = user, i, g  # type: ignore[attr-defined]
                return err
    return OverflowError(
        f"backward: the gradient of {_describe(node)} overflowed to {incoming(node)!r}, which "
        f"is not finite, when its contributions (each finite) were added; {_OVERFLOW_ADVICE}"
    )


def _describe(node: Value) -> str:
    """A node in words: ``the result of op 'exp'``, ``the leaf 'x'``."""
    if node._rule is not None:
        return f"the result of op {node._rule.name!r}"
    return f"the leaf {node.label!r}" if node.label else f"a leaf ({node._data!r})"


def _not_a_slope(d: object) -> str:
    """Why ``d`` cannot be a partial's value, or ``""``."""
    if isinstance(d, Value):
        return "" if d._data - d._data == 0.0 else "is not finite"
    if not isinstance(d, int | float):
        return "is not a number or a Value"
    return "" if d - d == 0.0 else "is not finite"


def _partial_returned(node: Value, i: int, d: object, bad: str, *, on_values: bool) -> Exception:
    """The error for a partial that returned something unusable."""
    rule = node._rule
    assert rule is not None
    where = "on Values (create_graph=True)" if on_values else "on floats"
    shown = repr(d) if isinstance(d, int | float | Value) else f"{type(d).__name__} {d!r}"
    if bad == "is not finite":
        err = ValueError(
            f"op {rule.name!r} backward: partials[{i}] returned {shown} {where} at "
            f"{_point(rule, _args(node))}, which {bad}; {_NOT_FINITE_ADVICE}"
        )
        err.node, err.partial = node, i  # type: ignore[attr-defined]  # for the checkers
        return err
    return TypeError(
        f"op {rule.name!r} backward: partials[{i}] returned {shown} {where} at "
        f"{_point(rule, _args(node))}, which {bad}; a partial must return a float when given "
        "floats (backward) and a Value or a float when given Values (create_graph)"
    )


def _partial_raised(node: Value, i: int, exc: BaseException, *, on_values: bool) -> Exception:
    """The error for a partial that raised ``exc``: same type, naming the op and the point."""
    rule = node._rule
    assert rule is not None
    where = "on Values (create_graph=True)" if on_values else "on floats"
    err = _retyped(
        exc,
        f"op {rule.name!r} backward: partials[{i}] failed {where} at {_point(rule, _args(node))}: "
        f"{exc}; {_advice(exc, rule.partials[i], on_values)}",
    )
    err.node, err.partial = node, i  # type: ignore[attr-defined]  # where, for the checkers
    return err


def _advice(exc: BaseException, partial: object, on_values: bool) -> str:
    """What to do about a partial that raised ``exc``."""
    if isinstance(exc, TypeError) and on_values:
        return (
            f"write partials with minigrad's functions ({_math_hint(partial)}), "
            "which accept floats and Values"
        )
    if isinstance(exc, AttributeError) and not on_values:
        name = getattr(exc, "name", None) or "cos"
        if not callable(getattr(Value, name, None)):  # .data, .grad: no method of a Value's
            return (
                f"backward passes a partial floats, which have no .{name}: use the argument "
                f"itself (x, not x.{name}), which works on floats and Values alike"
            )
        return (
            f"write partials with minigrad's functions (minigrad.{name}(x), not x.{name}()), "
            "which accept floats and Values"
        )
    if isinstance(exc, ArithmeticError | ValueError):
        return "the op is not differentiable at this point, or the partial is wrong there"
    return (
        "a partial is called as partials[i](*args, out), with floats by backward and with "
        "Values by grad(..., create_graph=True), and must work on both"
    )


def _math_hint(partial: object) -> str:
    """``minigrad.cos, not math.cos`` for the math function the partial calls, if seen."""
    code = getattr(partial, "__code__", None)
    scope = getattr(partial, "__globals__", None)
    if code is not None and isinstance(scope, dict):
        for name in code.co_names:
            found = scope.get(name)
            if found is math:  # math.cos(x): the attribute's name is among co_names too
                used = [n for n in code.co_names if callable(getattr(math, n, None))]
            elif callable(found) and getattr(found, "__module__", None) == "math":
                used = [found.__name__]  # from math import cos (as anything)
            else:
                continue
            for n in used:
                if n in MATH_COUNTERPARTS:
                    return f"minigrad.{n}, not math.{n}"
    return "such as minigrad.cos, not math.cos"


def _retyped(exc: BaseException, message: str) -> Exception:
    """An exception of ``exc``'s type carrying ``message``.

    An exception class that cannot be made from a message alone (such as
    UnicodeDecodeError) gives way to its nearest built-in base.
    """
    try:
        new = type(exc)(message)
        if isinstance(new, Exception) and str(new) == message:
            return new
    except Exception:
        pass
    for base in (ZeroDivisionError, OverflowError, ArithmeticError, ValueError, TypeError):
        if isinstance(exc, base):
            return base(message)
    return AttributeError(message) if isinstance(exc, AttributeError) else ValueError(message)
