"""minigrad.compile: trace a loss function once, then run it as generated straight-line Python.

The eager engine makes a Python object per op, and no such engine gets near
plain float code in CPython. :func:`compile` records the graph once, by
running the function eagerly on input Values, and writes one Python function
for it: the forward pass as assignments of float expressions, the reverse
pass as sums of ``g_out * partial`` terms, each taken from the rule table.
Later calls run that code on floats only.

This module traces, and holds what a caller meets: :func:`compile`,
:class:`Compiled`, the loss it returns (:class:`CompiledValue`) and the
errors. :mod:`minigrad.compiler.generate` writes the code (how: see there),
from the pieces in :mod:`minigrad.compiler.templates`, one statement after
another (:mod:`minigrad.compiler.straight`) or as one loop over the examples
(:mod:`minigrad.compiler.loop`).

Example:
    >>> from minigrad import Value, compile
    >>> w = Value(0.5)
    >>> step = compile(lambda x, y: (w * x - y) ** 2)
    >>> loss = step(2.0, 3.0)
    >>> loss.backward()
    >>> loss.data, w.grad
    (4.0, -8.0)
"""

from __future__ import annotations

import builtins
import collections
import math
import operator
import sys
from pathlib import Path

from minigrad.compiler.generate import _generate
from minigrad.compiler.templates import _NAMESPACE
from minigrad.core import value as engine
from minigrad.core._validate import finite_float, non_negative
from minigrad.core.closure import Closure, closure_refusal, closure_refusal_example
from minigrad.core.failures import _describe
from minigrad.core.value import Value, toposort

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator
    from typing import Any

__all__ = ["CheckError", "Compiled", "CompiledValue", "TracingError", "compile"]

_py_compile = builtins.compile


class CheckError(AssertionError):
    """:meth:`Compiled.check` found the compiled code disagreeing with eager evaluation."""


class TracingError(RuntimeError):
    """A compiled function read a Value's number while being traced.

    The generated code replays the recorded ops; Python control flow on a
    computed value (``if y.data > 0:``) would be frozen at the traced call's
    value and silently wrong on later calls, so it is refused.
    """


def compile(fn: Callable[..., Value]) -> Compiled:  # noqa: A001 (minigrad.compile, as in the API)
    """Compile ``fn`` (floats or nested lists of floats -> a loss Value) into generated code.

    The first call with an argument structure traces ``fn`` eagerly and writes
    Python for the recorded graph; later calls with that structure run the
    generated code. ``loss.backward()`` adds d loss / d p into ``p.grad`` for
    every parameter ``p``: the leaf Values ``fn`` reaches that are not its
    arguments, whose ``.data`` is read afresh on every call.

    Args:
        fn: The function; it must return a Value, and must not read ``.data``
            of any Value while it runs (see :class:`TracingError`).

    Returns:
        A :class:`Compiled`: call it as ``fn``.

    Raises:
        TypeError: ``fn`` is not callable.

    Example:
        >>> from minigrad import Value, compile
        >>> w = Value(3.0)
        >>> step = compile(lambda x: (w * x).relu())
        >>> step(2.0).data, step(-2.0).data  # the relu is evaluated on every call
        (6.0, 0.0)
    """
    if not callable(fn):
        raise TypeError(f"compile: fn must be callable, got {type(fn).__name__} {fn!r}")
    return Compiled(fn)


class Compiled:
    """A function compiled by :func:`compile`; call it as the function itself.

    Attributes:
        fn: The function compiled.

    Example:
        >>> from minigrad import Value, compile
        >>> w = Value(2.0)
        >>> step = compile(lambda xs: sum((w * x for x in xs), Value(0.0) * 0.0))
        >>> step([1.0, 2.0]).data
        6.0
        >>> step.check([1.0, 2.0])
        True
    """

    def __init__(self, fn: Callable[..., Value]) -> None:
        self.fn = fn
        self._programs: dict[object, _Program] = {}

    def __repr__(self) -> str:
        return f"minigrad.compile({_name(self.fn)})"

    def __call__(self, *args: Any) -> Value:
        """Run the generated code for ``args`` (tracing first for a new structure)."""
        key, xs = _flatten(args)
        program = self._programs.get(key)
        if program is None:
            program = self._programs[key] = _Program(self.fn, args, key, xs)
        return program.call(xs)

    def program(self, *args: Any) -> _Program:
        """The generated program for the structure of ``args`` (traced if new).

        Example:
            >>> from minigrad import Value, compile
            >>> w = Value(2.0)
            >>> print(compile(lambda x: w * x).program(1.0).source)
            def _run(P, X):
                p0, = P
                x0, = X
                t0 = (p0 * x0)
                t1 = yield t0
                if t1:
                    t2 = t1 * x0
                else:
                    t2 = 0.0
                yield (t2, )
            <BLANKLINE>
        """
        key, xs = _flatten(args)
        program = self._programs.get(key)
        if program is None:
            program = self._programs[key] = _Program(self.fn, args, key, xs)
        return program

    def check(self, *args: Any, rtol: float = 1e-12, atol: float = 1e-12) -> bool:
        """Compare the compiled loss and gradients with eager evaluation and central differences.

        Runs the compiled code and the function eagerly at ``args``; every
        gradient must agree within ``atol + rtol * |eager|``. Then
        :func:`minigrad.gradcheck` checks the eager gradients against central
        differences, so the compiled ones are checked transitively. ``.grad``
        of every parameter is left as it was.

        Returns:
            True.

        Raises:
            CheckError: A loss or a gradient differs from eager; the message
                names the parameter.
            ValueError: ``rtol`` or ``atol`` is negative or not finite, or no
                parameter is on the graph.
            minigrad.GradcheckError: Eager gradients differ from central differences.

        Example:
            >>> from minigrad import Value, compile
            >>> w = Value(0.3)
            >>> compile(lambda x: (w * x).tanh()).check(2.0)
            True
        """
        from minigrad.checking.gradcheck import gradcheck

        rtol = non_negative(rtol, "check: rtol")
        atol = non_negative(atol, "check: atol")
        program = self.program(*args)
        key, xs = _flatten(args)
        params = program.params
        saved = [p.grad for p in params]
        try:
            for p in params:
                p.grad = 0.0
            loss = program.call(xs)
            loss.backward()
            got = [p.grad for p in params]
            for p in params:
                p.grad = 0.0
            eager = self.fn(*_unflatten(key, iter([Value(x) for x in xs])))
            eager.backward()
            want = [p.grad for p in params]
        finally:
            for p, g in zip(params, saved, strict=True):
                p.grad = g
        # A leaf fn makes on each call (total = Value(0.0)) is a constant, not a
        # parameter: eager's call made another, and its gradient says nothing here.
        kept = {n for n in toposort([eager]) if n._rule is None}
        pairs = [(i, p) for i, p in enumerate(params) if p in kept]
        if abs(loss._data - eager._data) > atol + rtol * abs(eager._data):
            raise CheckError(
                f"compile: {_name(self.fn)} compiled gives {loss._data!r}, eager {eager._data!r}"
            )
        for i, p in pairs:
            a, b = got[i], want[i]
            if abs(a - b) > atol + rtol * abs(b):
                raise CheckError(
                    f"compile: {_name(self.fn)} parameter {i} ({_describe(p)}): compiled "
                    f"gradient {a!r}, eager {b!r}"
                )
        if not pairs:
            raise ValueError(
                f"compile: {_name(self.fn)} reaches no parameter (no Value it closes over is "
                "on its graph): there is no gradient to check"
            )
        values = [Value(x) for x in xs]
        real = [p for _, p in pairs]
        return gradcheck(lambda *ps: self.fn(*_unflatten(key, iter(values))), real)


# The parameters' numbers in and gradients out, a C loop each (337 per MLP step).
_get_data = operator.attrgetter("_data")
_get_grad = operator.attrgetter("_grad")
_set_grad = Value.__dict__["_grad"].__set__


class CompiledValue(Value):
    """The loss returned by a compiled function: a leaf whose ``backward`` runs generated code.

    ``.data`` is the loss; ``.backward(grad=1.0)`` adds ``grad`` times
    d loss / d p into ``p.grad`` of every parameter ``p`` (and ``grad`` into
    this value's own ``.grad``), all or nothing, as eager ``backward``. No
    intermediate Value exists, so no intermediate ``.grad`` is set, and the
    arguments (floats) get none. Ops applied to this value treat it as a
    constant leaf: compile the whole objective.

    Example:
        >>> from minigrad import Value, compile
        >>> w = Value(1.5)
        >>> loss = compile(lambda x: w * x)(2.0)
        >>> loss.backward(); loss.backward()  # accumulates, as eager backward does
        >>> w.grad, loss.grad
        (4.0, 2.0)
    """

    __slots__ = ("_gen", "_program", "_ps", "_xs")

    #: Read by grad's validation (the engine does not import this module).
    _compiled = True

    _gen: Generator[Any, float, Any] | None
    _program: _Program
    _ps: list[float]
    _xs: list[float]

    def backward(self, grad: float = 1.0) -> None:
        """Add ``grad`` times d loss / d p into ``p.grad`` for every parameter ``p``.

        Example:
            >>> from minigrad import Value, compile
            >>> w = Value(2.0)
            >>> loss = compile(lambda x: (w * x).exp())(0.0)
            >>> loss.backward(3.0)
            >>> w.grad
            0.0
        """
        seed = finite_float(grad, "backward: grad")
        program = self._program
        gen = self._gen
        self._gen = None
        grads = None
        try:
            if gen is None:  # a second backward: run the recorded point again
                gen = program.run(self._ps, self._xs)
                next(gen)
            grads = gen.send(seed)
        except (ArithmeticError, ValueError):
            pass
        params = program.params
        if grads is not None:
            totals = list(map(operator.add, map(_get_grad, params), grads))
            total = sum(totals)  # finite if every one is (an overflow goes the slow way)
            if total - total == 0.0:
                collections.deque(map(_set_grad, params, totals), maxlen=0)
                self._grad += seed
                return
        # Something was not finite, or raised: eager gives minigrad's own error.
        program.eager_backward(self._ps, self._xs, seed)
        self._grad += seed


class _Program:
    """The generated code for one argument structure of one function."""

    def __init__(
        self, fn: Callable[..., Value], args: tuple[Any, ...], key: object, xs: list[float]
    ) -> None:
        self.fn = fn
        self.key = key
        inputs = [Value(x) for x in xs]
        out = _trace(fn, _unflatten(key, iter(inputs)))
        order = toposort([out])  # the loss first
        for node in order:
            if type(node._rule) is Closure:
                raise closure_refusal(node._rule, "minigrad.compile")
        is_input = {v: i for i, v in enumerate(inputs)}
        self.params: list[Value] = [
            n for n in reversed(order) if n._rule is None and n not in is_input
        ]
        self.nodes = len(order)
        self.ops = sum(1 for n in order if n._rule is not None)
        self.source, names = _generate(order, out, is_input, self.params)
        namespace = dict(_NAMESPACE)
        namespace.update(names)
        filename = f"<minigrad.compile {_name(fn)}>"
        code = _py_compile(self.source, filename, "exec")
        exec(code, namespace)
        self.run: Callable[[list[float], list[float]], Generator[Any, float, Any]] = namespace[
            "_run"
        ]  # type: ignore[assignment]

    def call(self, xs: list[float]) -> Value:
        ps = list(map(_get_data, self.params))
        gen = self.run(ps, xs)
        try:
            out = next(gen)
        except (ArithmeticError, ValueError):
            out = math.nan
        if out - out != 0.0:
            # Eager raises minigrad's usual error (naming the op and the point).
            return self.fn(*_unflatten(self.key, iter([Value(x) for x in xs])))
        node = CompiledValue(out)  # a leaf to the engine, made by the one constructor
        node._gen = gen
        node._program = self
        node._ps = ps
        node._xs = xs
        return node

    def eager_backward(self, ps: list[float], xs: list[float], seed: float) -> None:
        """Backward evaluated eagerly at the recorded point: minigrad's own errors."""
        params = self.params
        now = [p._data for p in params]
        try:
            for p, x in zip(params, ps, strict=True):
                p._data = x
            loss = self.fn(*_unflatten(self.key, iter([Value(x) for x in xs])))
            loss.backward(seed)
        finally:
            for p, x in zip(params, now, strict=True):
                p._data = x


def _name(fn: object) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _closure_op_hint(node: Value, traced: object) -> str:
    """Where the read is a method of ``node``'s class written micrograd's way, say so by name;
    where it is in a function other than the ``traced`` one, name it, and say what it needs
    if it is such an op (``def ctanh(x)`` of the lecture, written as a free function).

    Such an op (``Value.exp = exp``, its forward on ``self.data`` and its
    derivative a ``_backward`` closure) reads ``.data`` before its node
    exists, so the read is where a trace meets it. Frames: 0 this, 1 the
    hook, 2 the ``.data`` property, 3 the reader.
    """
    try:
        frame = sys._getframe(3)
    except ValueError:
        return ""
    reader = frame.f_code
    # The method's name on the class, which may not be the function's own
    # (Value.exp = my_exp).
    names = [
        name
        for klass in type(node).__mro__
        for name, attr in vars(klass).items()
        if getattr(attr, "__code__", None) is reader
    ]
    if not names:
        if reader is getattr(traced, "__code__", None) or reader.co_name.startswith("<"):
            return ""
        where = f"{reader.co_name}() ({Path(reader.co_filename).name}:{frame.f_lineno})"
        return (
            f". The read is in {where}; if that is an op written micrograd's way (its forward "
            "on .data, its derivative a _backward closure), minigrad.compile needs it as a "
            f"minigrad.Rule: {closure_refusal_example(reader.co_name)}"
        )
    return (
        f". Here the reader is the method {names[0]}() of {type(node).__name__}, an op "
        "written micrograd's way (its forward on .data, its derivative a _backward closure); "
        f"minigrad.compile needs it as a minigrad.Rule: {closure_refusal_example(names[0])}"
    )


def _trace(fn: Callable[..., Value], args: list[Any]) -> Value:
    """Run ``fn`` eagerly with every ``.data`` read refused; its result."""
    name = _name(fn)

    def refuse(node: Value) -> None:
        raise TracingError(
            f"compile: {name} read .data of {_describe(node)} while being traced; the compiled "
            "code replays the recorded ops and would freeze this value (Python control flow on "
            "it, or a float made from it) at this call's number. Use ops such as relu() or abs(), "
            "whose branches are evaluated on every call, read values outside the compiled "
            f"function, or run it eagerly{_closure_op_hint(node, fn)}"
        )

    # Only this thread's reads are refused: another thread may read .data
    # (or trace a function of its own) meanwhile.
    before = engine._set_trace_hook(refuse)
    try:
        out = fn(*args)
    finally:
        engine._set_trace_hook(before)
    if not isinstance(out, Value):
        raise TypeError(
            f"compile: {name} must return a Value (the loss), got {type(out).__name__} {out!r}"
        )
    return out


_FLOAT = {float}
_LIST = {list}
_NONES = [(None,) * k for k in range(64)]


def _flatten(args: tuple[Any, ...]) -> tuple[object, list[float]]:
    """The structure of ``args`` (a hashable key) and their floats in order."""
    xs: list[float] = []
    extend = xs.extend

    def walk(a: object, where: str) -> object:
        t = type(a)
        if t is float:
            xs.append(a)  # type: ignore[arg-type]
            return None
        if t is list or t is tuple:
            items: Any = a
            types = set(map(type, items))
            if types == _FLOAT:  # a row of floats
                extend(items)
                return _NONES[len(items)] if len(items) < 64 else (None,) * len(items)
            if types == _LIST:  # rows of floats
                keys: list[object] = []
                for i, row in enumerate(items):
                    if set(map(type, row)) <= _FLOAT:
                        extend(row)
                        keys.append(_NONES[len(row)] if len(row) < 64 else (None,) * len(row))
                    else:
                        keys.append(walk(row, f"{where}[{i}]"))
                return tuple(keys)
            return tuple(walk(b, f"{where}[{i}]") for i, b in enumerate(items))
        if t is int:
            xs.append(float(a))  # type: ignore[arg-type]
            return None
        raise TypeError(
            f"compile: argument {where} must be a float or a (nested) list of floats, got "
            f"{t.__name__} {a!r}; parameters are the Values the function reaches, not arguments"
        )

    key = tuple(walk(a, str(i)) for i, a in enumerate(args))
    return key, xs


def _unflatten(key: object, values: Iterator[Any]) -> list[Any]:
    """``key``'s structure filled with ``values`` in order (lists for lists and tuples)."""
    assert isinstance(key, tuple)
    return [next(values) if k is None else _unflatten(k, values) for k in key]
