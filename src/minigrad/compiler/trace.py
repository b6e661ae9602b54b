"""minigrad.compile: trace a loss function once, then run it as generated straight-line Python.

The eager engine makes a Python object per op, and no such engine gets near
plain float code in CPython. :func:`compile` records the graph once, by
running the function eagerly on input Values, and writes one Python function
for it: the forward pass as assignments of float expressions, the reverse
pass as sums of ``g_out * partial`` terms, each taken from the rule table.
Later calls run that code on floats only.

How the code is written:

* Built-in ops are inlined as expressions (:data:`TEMPLATES`, one per built-in
  rule; a test proves each equal to its rule's functions). A custom rule's
  ``forward`` and ``partials`` are called by reference: the rule stays the one
  source of truth.
* A temporary used once, whose value the reverse pass does not need, is fused
  into the expression that uses it (``b + w0 * x0 + w1 * x1 ...``), up to
  :data:`MAX_DEPTH` levels and :data:`MAX_FUSED` ops per expression (CPython
  refuses deeper nesting).
* A batch whose examples repeat one subgraph (of :data:`LOOP_MIN_OPS` ops or
  more) runs as one loop over the examples, forward and reverse, when every
  example's code is the same text (:func:`_units`, :func:`_write_loop`).
* A parameter's gradient is added into only when its user's gradient is not
  0 (``if g:``), as in eager ``backward``. A computed node's gradient is
  gathered where eager reaches it and inlined into its one use: behind a
  relu, into the true branch, so an idle neuron costs one test.
* relu and abs are expressions (``x if x > 0.0 else 0.0``) evaluated on every
  call: their branches are not frozen.
* Above :data:`CHUNK_ABOVE` statements the code is split into functions of
  :data:`CHUNK_SIZE` statements sharing one list of variables (below, one
  function compiles in linear time and runs faster; see docs/compile.md).

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
import functools
import math
import operator
import re
from typing import NamedTuple

from minigrad.core import rules
from minigrad.core import value as engine
from minigrad.core._validate import finite_float
from minigrad.core.failures import _describe
from minigrad.core.rule import Rule
from minigrad.core.value import Value, _args, toposort

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator
    from typing import Any

__all__ = [
    "CHUNK_ABOVE",
    "CHUNK_SIZE",
    "LOOP_MIN_OPS",
    "MAX_DEPTH",
    "MAX_FUSED",
    "TEMPLATES",
    "CheckError",
    "Compiled",
    "CompiledValue",
    "TracingError",
    "compile",
]

_py_compile = builtins.compile

#: Deepest nesting of fused ops in one expression (CPython refuses 200 parentheses).
MAX_DEPTH = 24
#: Most ops fused into one expression (a balanced tree of depth 24 would be huge).
MAX_FUSED = 64
#: Statements above which the code is split into functions sharing a list.
CHUNK_ABOVE = 500_000
#: Statements per function when split.
CHUNK_SIZE = 4_000
#: Ops in a repeated subgraph (an example's loss, say) from which the
#: repetitions run as one loop over the examples. Measured (500 examples, step
#: time of the loop over that of the code written out): 7 ops 1.35x, 24 ops
#: 0.96x, 67 ops 0.94x; the loop also compiles in a fraction of the time.
LOOP_MIN_OPS = 20

#: Per built-in rule with an inline form (the others, and custom rules, are
#: called by reference): the forward as an expression in ``{0}``, ``{1}``, and per
#: argument the partial: a constant slope, or an expression in the arguments and
#: ``{out}``. Each reads as its rule's own functions, operation for operation,
#: so compiled results equal eager ones bit for bit (``tests/test_compile.py``);
#: relu's slope tests its output, positive exactly when its input is, so the
#: reverse pass keeps one number per relu instead of two.
TEMPLATES: dict[Rule, tuple[str, tuple[float | str, ...]]] = {
    rules.ADD: ("({0} + {1})", (1.0, 1.0)),
    rules.SUB: ("({0} - {1})", (1.0, -1.0)),
    rules.MUL: ("({0} * {1})", ("{1}", "{0}")),
    rules.DIV: ("({0} / {1})", ("(1.0 / {1})", "(-{out} / {1})")),
    rules.POW: (
        "_pow({0}, {1})",
        ("({1} * {0} ** ({1} - 1.0))", "(0.0 if {out} == 0.0 else {out} * _log({0}))"),
    ),
    rules.NEG: ("(-{0})", (-1.0,)),
    rules.ABS: ("abs({0})", ("(1.0 if {0} > 0.0 else -1.0 if {0} < 0.0 else 0.0)",)),
    rules.EXP: ("_exp({0})", ("{out}",)),
    rules.LOG: ("_log({0})", ("(1.0 / {0})",)),
    rules.LOG1P: ("_log1p({0})", ("(1.0 / (1.0 + {0}))",)),
    rules.SQRT: ("_sqrt({0})", ("(0.5 / {out})",)),
    rules.SIN: ("_sin({0})", ("_cos({0})",)),
    rules.COS: ("_cos({0})", ("(-_sin({0}))",)),
    rules.TANH: ("_tanh({0})", ("(1.0 - {out} * {out})",)),
    rules.SIGMOID: ("_sigmoid({0})", ("({out} * (1.0 - {out}))",)),
    rules.RELU: ("({0} if {0} > 0.0 else 0.0)", ("(1.0 if {out} > 0.0 else 0.0)",)),
    rules.SOFTPLUS: ("_softplus({0})", ("_sigmoid({0})",)),
    rules.ERF: ("_erf({0})", ("(_TWO_OVER_SQRT_PI * _exp(-({0} * {0})))",)),
    rules.GELU: (
        "(0.5 * {0} * (1.0 + _erf({0} * _INV_SQRT2)))",
        ("(0.5 * (1.0 + _erf({0} * _INV_SQRT2)) + {0} * _exp(-0.5 * {0} * {0}) * _INV_SQRT_2PI)",),
    ),
}

#: The names the templates use, bound in the generated code's globals.
_NAMESPACE: dict[str, object] = {
    "_pow": rules._pow,
    "_exp": math.exp,
    "_log": math.log,
    "_log1p": math.log1p,
    "_sqrt": math.sqrt,
    "_sin": math.sin,
    "_cos": math.cos,
    "_tanh": math.tanh,
    "_erf": math.erf,
    "_sigmoid": rules._sigmoid,
    "_softplus": rules._softplus,
    "_TWO_OVER_SQRT_PI": rules._TWO_OVER_SQRT_PI,
    "_INV_SQRT2": rules._INV_SQRT2,
    "_INV_SQRT_2PI": rules._INV_SQRT_2PI,
}


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
            minigrad.GradcheckError: Eager gradients differ from central differences.

        Example:
            >>> from minigrad import Value, compile
            >>> w = Value(0.3)
            >>> compile(lambda x: (w * x).tanh()).check(2.0)
            True
        """
        from minigrad.checking.gradcheck import gradcheck

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
        if abs(loss._data - eager._data) > atol + rtol * abs(eager._data):
            raise CheckError(
                f"compile: {_name(self.fn)} compiled gives {loss._data!r}, eager {eager._data!r}"
            )
        for i, (p, a, b) in enumerate(zip(params, got, want, strict=True)):
            if abs(a - b) > atol + rtol * abs(b):
                raise CheckError(
                    f"compile: {_name(self.fn)} parameter {i} ({_describe(p)}): compiled "
                    f"gradient {a!r}, eager {b!r}"
                )
        values = [Value(x) for x in xs]
        return gradcheck(lambda *ps: self.fn(*_unflatten(key, iter(values))), params)


# The parameters' numbers in and gradients out, a C loop each (337 per MLP step).
_get_data = operator.attrgetter("_data")
_get_grad = operator.attrgetter("grad")
_set_grad = Value.__dict__["grad"].__set__


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
                self.grad += seed
                return
        # Something was not finite, or raised: eager gives minigrad's own error.
        program.eager_backward(self._ps, self._xs, seed)
        self.grad += seed


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


def _trace(fn: Callable[..., Value], args: list[Any]) -> Value:
    """Run ``fn`` eagerly with every ``.data`` read refused; its result."""
    name = _name(fn)

    def refuse(node: Value) -> None:
        raise TracingError(
            f"compile: {name} read .data of {_describe(node)} while being traced; the compiled "
            "code replays the recorded ops and would freeze this value (Python control flow on "
            "it, or a float made from it) at this call's number. Use ops such as relu() or abs(), "
            "whose branches are evaluated on every call, read values outside the compiled "
            "function, or run it eagerly"
        )

    before = engine._tracing
    engine._tracing = refuse
    try:
        out = fn(*args)
    finally:
        engine._tracing = before
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


def _const(x: float) -> str:
    r = repr(float(x))
    return f"({r})" if r.startswith("-") else r


def _units(
    fwd: list[Value], is_input: dict[Value, int]
) -> tuple[dict[Value, int], list[Value]] | None:
    """Repeated, self-contained subgraphs (an example's loss, say): ``(unit_of, roots)``.

    Every node gets an interned structural key: its rule and its arguments'
    keys, where a parameter is itself, all inputs are alike and a constant is
    its repr. Of the keys shared by at least two subgraphs of at least
    :data:`LOOP_MIN_OPS` ops, the family largest in count times size whose
    subgraphs are disjoint and used only through their roots gives the units,
    numbered in forward order. None when there is no such family.
    """
    intern: dict[object, int] = {}
    key_of: dict[Value, int] = {}
    size: dict[Value, int] = {}
    uses: dict[Value, int] = {}
    members: dict[int, list[Value]] = {}
    for n in fwd:
        rule = n._rule
        if rule is None:
            key_of[n] = intern.setdefault("x" if n in is_input else id(n), len(intern))
            size[n] = 0
            continue
        parts: list[object] = [id(rule)]
        total = 1
        for a in _args(n):
            if isinstance(a, Value):
                parts.append(key_of[a])
                total += size[a]
                uses[a] = uses.get(a, 0) + 1
            else:
                parts.append(repr(a))
        k = key_of[n] = intern.setdefault(tuple(parts), len(intern))
        size[n] = min(total, 1 << 40)  # a tree's size: shared nodes count again
        members.setdefault(k, []).append(n)
    families = [m for m in members.values() if len(m) >= 2 and size[m[0]] >= LOOP_MIN_OPS]
    families.sort(key=lambda m: len(m) * size[m[0]], reverse=True)
    for roots in families[:3]:
        unit_of = _claim(roots, uses)
        if unit_of is not None and fwd[-1] not in unit_of:
            return unit_of, roots
    return None


def _claim(roots: list[Value], uses: dict[Value, int]) -> dict[Value, int] | None:
    """Node -> unit for the roots' subgraphs, if disjoint and used only inside (else None)."""
    unit_of: dict[Value, int] = {}
    for e, root in enumerate(roots):
        inner = {root: 0}  # node -> its uses from inside the unit
        stack = [root]
        while stack:
            for a in _args(stack.pop()):
                if isinstance(a, Value) and a._rule is not None:
                    count = inner.get(a)
                    if count is None:
                        if a in unit_of:
                            return None  # shared with an earlier unit
                        stack.append(a)
                        count = 0
                    inner[a] = count + 1
        for n, count in inner.items():
            if n is not root and count != uses[n]:
                return None  # an inner value is used outside its unit
            unit_of[n] = e
    return unit_of


def _generate(
    order: list[Value], out: Value, is_input: dict[Value, int], params: list[Value]
) -> tuple[str, dict[str, object]]:
    """The source of ``_run(P, X)``, a generator: yields the loss, receives the seed, yields grads.

    The reverse pass visits the nodes in the order eager ``backward`` does and
    adds the same products in the same order, so gradients equal eager ones.
    """
    fwd = order[::-1]
    found = _units(fwd, is_input)
    unit_of, roots = found if found is not None else ({}, [])
    param_index = {p: i for i, p in enumerate(params)}
    names: dict[str, object] = {}
    custom: dict[int, tuple[str, tuple[float | str, ...]]] = {}

    def template(rule: Rule) -> tuple[str, tuple[float | str, ...]]:
        t = TEMPLATES.get(rule)
        if t is not None:
            return t
        t = custom.get(id(rule))
        if t is None:
            k = len(custom)
            names[f"_f{k}"] = rule.forward
            slots = ", ".join(f"{{{i}}}" for i in range(rule.arity))
            partials: list[float | str] = []
            for i, d in enumerate(rule.partials):
                if isinstance(d, float):
                    partials.append(d)
                else:
                    names[f"_d{k}_{i}"] = d
                    partials.append(f"_d{k}_{i}({slots}, {{out}})")
            t = custom[id(rule)] = (f"_f{k}({slots})", tuple(partials))
        return t

    # Which nodes depend on a parameter (need a gradient); each node's uses.
    needs: dict[Value, bool] = {}
    uses: dict[Value, int] = {}
    user: dict[Value, tuple[Value, int]] = {}
    for n in fwd:
        if n._rule is None:
            needs[n] = n in param_index
            continue
        flag = False
        for j, a in enumerate(_args(n)):
            if isinstance(a, Value):
                uses[a] = uses.get(a, 0) + 1
                user[a] = (n, j)
                flag = flag or needs[a]
        needs[n] = flag
    # The values the reverse pass reads, and the units' roots: never fused.
    kept: set[Value] = {out, *(r for r in roots)}
    for n in fwd:
        rule = n._rule
        if rule is None or not needs[n]:
            continue
        args = _args(n)
        partials = template(rule)[1]
        for i, a in enumerate(args):
            d = partials[i]
            if isinstance(d, float) or not (isinstance(a, Value) and needs[a]):
                continue
            for j, b in enumerate(args):
                if isinstance(b, Value) and f"{{{j}}}" in d:
                    kept.add(b)
            if "{out}" in d:
                kept.add(n)

    # Variable numbering: a slot per forward variable and per gradient.
    slots = 0
    var: dict[Value, int] = {}  # forward value -> slot (computed nodes)
    slot_unit: dict[int, int] = {}  # slot -> its unit, for the slots of a unit's nodes
    leaf: dict[Value, tuple[str, int]] = {p: ("P", i) for i, p in enumerate(params)}
    for v, i in is_input.items():
        leaf[v] = ("X", i)

    # Forward: fuse single-use temporaries the reverse pass does not read.
    fwd_lines: list[tuple[int, int, str]] = []  # (unit or -1, slot, expression)
    expr: dict[Value, tuple[str, int, int]] = {}  # fused: (text, depth, size)
    # Text is written with placeholders, \x00<slot>\x01 for a variable and
    # \x02P<i>\x01 or \x02X<i>\x01 for a leaf, replaced once the mode (locals,
    # or one list shared by chunks) is known.
    for n in fwd:
        rule = n._rule
        if rule is None:
            continue
        forward = template(rule)[0]
        parts = []
        depth = 0
        size = 1
        for a in _args(n):
            if isinstance(a, Value):
                fused = expr.pop(a, None)
                if fused is not None:
                    parts.append(fused[0])
                    depth = max(depth, fused[1])
                    size += fused[2]
                elif a in var:
                    parts.append(f"\x00{var[a]}\x01")
                else:
                    kind, i = leaf[a]
                    parts.append(f"\x02{kind}{i}\x01")
            else:
                parts.append(_const(a))
        text = forward.format(*parts)
        fusable = uses.get(n, 0) == 1 and n not in kept
        if fusable and depth + 1 < MAX_DEPTH and size < MAX_FUSED:
            u, j = user[n]
            fusable = template(u._rule).__getitem__(0).count(f"{{{j}}}") == 1  # type: ignore[arg-type]
        else:
            fusable = False
        if fusable:
            expr[n] = (text, depth + 1, size)
        else:
            var[n] = slots
            e = unit_of.get(n, -1)
            if e >= 0:
                slot_unit[slots] = e
            fwd_lines.append((e, slots, text))
            slots += 1

    def value_ref(a: Value | float) -> str:
        if not isinstance(a, Value):
            return _const(a)
        if a in var:
            return f"\x00{var[a]}\x01"
        if a not in leaf:
            return "<fused: never read by a partial>"
        kind, i = leaf[a]
        return f"\x02{kind}{i}\x01"

    # Gradients. A parameter's is a slot: zeroed up front when more than one
    # node uses it, and added into (``+=``) in the blocks ``if g:`` of its users.
    # A computed node's is gathered where eager backward reaches it, from the
    # terms its users left in ``pending``, in the order they left them: an
    # expression, inlined into the node's single use of it (the true branch
    # of a relu: an idle neuron costs nothing), or else stored in a slot first.
    # A node used once through a slope of exactly 1.0 shares its user's slot.
    seed = slots
    slots += 1
    gslot: dict[Value, int] = {out: seed}
    multi: list[int] = []
    for p in params:
        if p not in gslot:
            gslot[p] = slots
            if uses.get(p, 0) != 1:
                multi.append(slots)
            slots += 1
    pending: dict[Value, list[tuple[str, int]]] = {}  # node -> its gradient's terms, depths
    blocks: list[_Block] = []

    opened: dict[tuple[int, int], int] = {}  # (gradient slot, unit) -> its latest block
    written: dict[int, int] = {}  # parameter's slot -> the block that last added into it

    def block(g: int, e: int, target: int = -1) -> _Block:
        """The block ``if g:`` (unit ``e``) to add into slot ``target`` in: the last
        block, or an earlier one of the same gradient if nothing added into
        ``target`` since (one test instead of one per line), or a new one."""
        if blocks and blocks[-1][0] == g and blocks[-1][3] == e:
            k = len(blocks) - 1
        else:
            k = opened.get((g, e), -1)
            if g < 0 or k < 0 or written.get(target, -1) > k:
                k = opened[g, e] = len(blocks)
                blocks.append((g, [], [], e))
        if target >= 0:
            written[target] = k
        return blocks[k]

    for n in order:
        rule = n._rule
        if rule is None or not needs[n]:
            continue
        e = unit_of.get(n, -1)
        args = _args(n)
        partials = template(rule)[1]
        refs_n = [value_ref(a) for a in args]
        # What n passes back, per argument, with \x03 for n's gradient.
        # (argument, product, shares n's slot, the condition of a 0-or-1 slope)
        flows: list[tuple[Value, str, bool, str | None]] = []
        for i, a in enumerate(args):
            if not (isinstance(a, Value) and needs[a]):
                continue
            d = partials[i]
            cond: str | None = None
            if isinstance(d, float):
                product = "\x03" if d == 1.0 else "(-\x03)" if d == -1.0 else f"\x03 * {_const(d)}"
            elif (gate := _GATE.fullmatch(d)) is not None:
                # g * (1.0 if c else 0.0) (relu's slope), without the multiplication.
                cond = gate[1].format(*refs_n, out=value_ref(n))
                product = f"(\x03 if {cond} else 0.0)"
            else:
                product = "\x03 * " + d.format(*refs_n, out=value_ref(n))
            shares = a._rule is not None and d == 1.0 and uses[a] == 1
            flows.append((a, product, shares, cond))
        # n's gradient: its slot, or its gathered terms.
        g = gslot.get(n)
        terms = pending.pop(n, [])
        depth = max((t[1] for t in terms), default=0) + len(terms)
        single = len(flows) == 1 and not flows[0][2] and flows[0][0]._rule is not None
        if g is None and single and depth < MAX_DEPTH - 4:
            # Inlined into the one term n passes on: no line, no test.
            a, product, _, _ = flows[0]
            text = terms[0][0] if len(terms) == 1 else f"({' + '.join(t[0] for t in terms)})"
            pending.setdefault(a, []).append((product.replace("\x03", text), depth + 1))
            continue
        if g is None:
            g = gslot[n] = slots
            if e >= 0:
                slot_unit[slots] = e
            slots += 1
            gref = _ref(g)
            lines = [
                f"{gref} = {f'{gref} + ' if i else ''}{' + '.join(t[0] for t in terms[i : i + 16])}"
                for i in range(0, len(terms), 16)
            ]
            gate_on = flows[0][3] if single else None
            if gate_on is not None:
                # Too wide to inline: gathered only when the slope is 1 (a relu on).
                lines = [
                    f"if {gate_on}:",
                    *(f"    {line}" for line in lines),
                    "else:",
                    f"    {gref} = 0.0",
                ]
                flows = [(flows[0][0], "\x03", flows[0][2], None)]
            block(-1, e)[1].extend(lines)
        gref = _ref(g)
        for a, product, shares, _ in flows:
            if shares:
                gslot[a] = g
            elif a._rule is not None:
                pending.setdefault(a, []).append((product.replace("\x03", gref), 1))
            else:  # a parameter: added into its slot when n's gradient is not 0
                _, body, zeroed, _ = block(g, e, gslot[a])
                target = _ref(gslot[a])
                if uses[a] == 1:
                    body.append(f"{target} = {product.replace(chr(3), gref)}")
                    zeroed.append(gslot[a])
                elif product == "\x03":
                    body.append(f"{target} += {gref}")
                elif product == "(-\x03)":
                    body.append(f"{target} -= {gref}")
                else:
                    body.append(f"{target} += {product.replace(chr(3), gref)}")
    grads = [gslot[p] for p in params]
    statements = len(fwd_lines) + sum(len(b[1]) for b in blocks)
    code = _Code(
        fwd_lines, value_ref(out), seed, multi, blocks, grads, len(params), len(is_input), slots
    )
    if roots:
        units = _Units(roots, slot_unit, [var[r] for r in roots], [gslot.get(r, -1) for r in roots])
        source = _write_loop(code, units, names)
        if source is not None:
            return source, names
    return _write(code, statements > CHUNK_ABOVE, names), names


#: A block of the reverse pass: (gradient slot, lines, slots zeroed on skip, unit
#: or -1); lines run ``if g:``, or unconditionally when the slot is -1.
_Block = tuple[int, list[str], list[int], int]


class _Code(NamedTuple):
    """The generated statements, with placeholders for names (see :func:`_generate`)."""

    fwd_lines: list[tuple[int, int, str]]  # (unit or -1, slot, expression)
    out: str
    seed: int
    multi: list[int]  # parameters' gradient slots added into more than once: zeroed first
    blocks: list[_Block]
    grads: list[int]  # the parameters' gradient slots
    n_params: int
    n_inputs: int
    size: int  # slots in all


class _Units(NamedTuple):
    """Which slots belong to which unit, and each root's gradient slot (-1: none)."""

    roots: list[Value]
    slot_unit: dict[int, int]
    root_slot: list[int]
    root_grad: list[int]


class _Renamer:
    """Names for unit ``e``'s placeholders: ``a<k>`` for its own slots (in order of
    appearance), ``u<k>`` for its inputs (``inputs`` lists them), ``gr`` for its
    root's gradient; parameters and other slots keep their global names."""

    def __init__(self, units: _Units, e: int) -> None:
        self.units = units
        self.e = e
        self.local: dict[int, str] = {}
        self.inputs: dict[int, str] = {}

    def __call__(self, text: str) -> str:
        return _TOKEN.sub(self.name, text)

    def name(self, m: re.Match[str]) -> str:
        slot, kind, i = m.groups()
        if slot is not None:
            s = int(slot)
            if s == self.units.root_grad[self.e]:
                return "gr"
            if self.units.slot_unit.get(s) == self.e:
                return self.local.setdefault(s, f"a{len(self.local)}")
            return f"t{s}"
        if kind == "P":
            return f"p{i}"
        return self.inputs.setdefault(int(i), f"u{len(self.inputs)}")


#: A slope template that is 1.0 or 0.0 (relu's): its condition, so that the
#: product is ``(g if c else 0.0)`` and a wide gathered sum runs only ``if c:``.
_GATE = re.compile(r"\(1\.0 if ((?:(?! else ).)+) else 0\.0\)")

_TOKEN = re.compile("\x00(\\d+)\x01|\x02([PX])(\\d+)\x01")


def _name_of(chunked: bool) -> Callable[[re.Match[str]], str]:
    """Placeholder names: ``t<k>``, ``p<i>``, ``x<i>``; chunked, ``v[k]``, ``P[i]``, ``X[i]``."""

    def name(m: re.Match[str]) -> str:
        slot, kind, i = m.groups()
        if slot is not None:
            return f"v[{slot}]" if chunked else f"t{slot}"
        return f"{kind}[{i}]" if chunked else f"{kind.lower()}{i}"

    return name


def _ref(slot: int) -> str:
    """The placeholder of a slot."""
    return f"\x00{slot}\x01"


def _block_lines(block: _Block, zero_on_skip: bool = True) -> list[str]:
    """``if g:`` and the block's lines (placeholders kept), and else the zeroing."""
    g, body, zeroed, _ = block
    if g < 0:  # unconditional
        return list(body)
    lines = [f"if \x00{g}\x01:", *(f"    {line}" for line in body)]
    if zeroed and zero_on_skip:
        lines += ["else:", f"    {' = '.join(map(_ref, zeroed))} = 0.0"]
    return lines


def _zero(slots: list[int]) -> list[str]:
    """Lines setting the slots to 0.0, a hundred a line."""
    return [f"{' = '.join(map(_ref, slots[i : i + 100]))} = 0.0" for i in range(0, len(slots), 100)]


def _head(code: _Code) -> list[str]:
    head = ["def _run(P, X):"]
    if code.n_params:
        head.append(f"    {', '.join(f'p{i}' for i in range(code.n_params))}, = P")
    if code.n_inputs:
        head.append(f"    {', '.join(f'x{i}' for i in range(code.n_inputs))}, = X")
    return head


def _write_loop(code: _Code, units: _Units, names: dict[str, object]) -> str | None:
    """The source with one loop over the units (examples), or None if they do not repeat.

    Each unit's statements are written with its own names (``a<k>`` for its
    values and gradients, ``u<k>`` for its inputs, ``gr`` for its root's
    gradient); the loop form is used only when every unit's text is the same,
    and the reverse pass visits the units one after another, with no line of
    other code between them, as eager ``backward`` would.
    """
    n = len(units.roots)
    rest_blocks: list[list[_Block]] = [[], []]  # before the units, after them
    unit_blocks: list[list[_Block]] = [[] for _ in range(n)]
    visited: list[int] = []
    for block in code.blocks:
        if not block[1]:
            continue
        e = block[3]
        if e < 0:
            rest_blocks[1 if visited else 0].append(block)
            if visited and visited[-1] != -1:
                visited.append(-1)
        else:
            if visited[-1:] != [e]:
                visited.append(e)
            unit_blocks[e].append(block)
    if visited and visited[-1] == -1:
        visited.pop()
    if visited not in ([], list(range(n - 1, -1, -1))):
        return None  # the units are not visited one after another, last first
    unit_lines: list[list[str]] = [[] for _ in range(n)]
    rest_lines: list[str] = []
    for e, slot, text in code.fwd_lines:
        (rest_lines if e < 0 else unit_lines[e]).append(f"\x00{slot}\x01 = {text}")
    if unit_blocks[0] and -1 in units.root_grad:
        return None  # a root whose gradient has no slot of its own to hand the loop
    forward = backward = ""
    index: list[tuple[int, ...]] = []
    for e in range(n):
        back = [line for block in unit_blocks[e] for line in _block_lines(block)]
        rename = _Renamer(units, e)
        texts = (rename("\n".join(unit_lines[e])), rename("\n".join(back)))
        if e == 0:
            forward, backward = texts
            root_name = rename.local[units.root_slot[0]]
        elif texts != (forward, backward):
            return None
        index.append(tuple(rename.inputs))
    k = len(index[0])
    defined = set(re.findall(r"\b[au]\d+\b", forward))
    saved = [v for v in dict.fromkeys(re.findall(r"\b[au]\d+\b", backward)) if v in defined]

    sub = functools.partial(_TOKEN.sub, _name_of(False))
    rest = [sub(line) for line in rest_lines]
    rest_back = [
        [sub(line) for block in part for line in _block_lines(block)] for part in rest_blocks
    ]
    inputs = any(re.search(r"\bx\d", line) for line in [*rest, *rest_back[0], *rest_back[1]])
    lines = _head(code._replace(n_inputs=code.n_inputs if inputs else 0))
    # CPython numbers a function's locals in order of first appearance, and a
    # load of one numbered above 255 takes an EXTENDED_ARG prefix: the names
    # the loops use most are named first (5-10% off the MLP step).
    used = collections.Counter(re.findall(r"\b(?:[apu]\d+|t\d+|gr)\b", forward + backward))
    hot = [name for name, _ in used.most_common(240)]
    if hot:
        lines.insert(1, f"    {' = '.join(hot)} = None")
    names["_IDX"] = tuple(index)
    lines.append("    K = []")
    lines.append("    R = []")
    targets = ", ".join(f"i{j}" for j in range(k))
    lines.append(f"    for {targets + ',' if k else '_'} in _IDX:")
    lines += [f"        u{j} = X[i{j}]" for j in range(k)]
    lines += [f"        {line}" for line in forward.split("\n")]
    if backward:
        lines.append(f"        K.append(({''.join(f'{v}, ' for v in saved)}))")
    lines.append(f"        R.append({root_name})")
    for i in range(0, n, 100):
        roots = "".join(f"t{s}, " for s in units.root_slot[i : i + 100])
        lines.append(f"    {roots}= R[{i}:{i + 100}]")
    lines += [f"    {line}" for line in rest]
    lines.append(f"    t{code.seed} = yield {sub(code.out)}")
    lines += [f"    {sub(line)}" for line in _zero(code.multi)]  # parameters' slots
    lines += [f"    {line}" for line in rest_back[0]]
    if backward:
        grs = ", ".join(f"t{units.root_grad[e]}" for e in range(n - 1, -1, -1))
        unpack = f"({''.join(f'{v}, ' for v in saved)})" if saved else "_"
        lines.append(f"    for gr, {unpack} in zip(({grs},), reversed(K)):")
        lines += [f"        {line}" for line in backward.split("\n")]
    lines += [f"    {line}" for line in rest_back[1]]
    lines.append(f"    yield ({''.join(f't{k}, ' for k in code.grads)})")
    return "\n".join(lines) + "\n"


def _write(code: _Code, chunked: bool, names: dict[str, object]) -> str:
    """The source, in one generator of locals or in chunks sharing one list ``v``."""
    sub = functools.partial(_TOKEN.sub, _name_of(chunked))
    forward = [sub(f"\x00{k}\x01 = {text}") for _, k, text in code.fwd_lines]
    backward = [
        [sub(line) for line in _block_lines(block, zero_on_skip=not chunked)]
        for block in code.blocks
        if block[1]
    ]
    if not chunked:
        lines = _head(code) + [f"    {line}" for line in forward]
        lines.append(f"    t{code.seed} = yield {sub(code.out)}")
        lines += [f"    {sub(line)}" for line in _zero(code.multi)]
        for unit in backward:
            lines += [f"    {line}" for line in unit]
        lines.append(f"    yield ({''.join(f't{k}, ' for k in code.grads)})")
        return "\n".join(lines) + "\n"
    lines = []
    calls_f: list[str] = []
    for c, i in enumerate(range(0, len(forward), CHUNK_SIZE)):
        lines.append(f"def _f{c}(v, P, X):")
        lines += [f"    {line}" for line in forward[i : i + CHUNK_SIZE]]
        calls_f.append(f"    _f{c}(v, P, X)")
    calls_b: list[str] = []
    chunk: list[str] = []
    pieces: list[list[str] | None] = [*backward, None]
    for piece in pieces:
        if piece is None or len(chunk) >= CHUNK_SIZE:
            if chunk:
                lines.append(f"def _b{len(calls_b)}(v, P, X):")
                lines += chunk
                calls_b.append(f"    _b{len(calls_b)}(v, P, X)")
            chunk = []
        if piece is not None:
            chunk += [f"    {line}" for line in piece]
    lines.append("def _run(P, X):")
    lines.append(f"    v = [0.0] * {code.size}")
    lines += calls_f
    lines.append(f"    v[{code.seed}] = yield {sub(code.out)}")
    lines += calls_b
    names["_G"] = code.grads
    lines.append("    yield [v[k] for k in _G]")
    return "\n".join(lines) + "\n"
