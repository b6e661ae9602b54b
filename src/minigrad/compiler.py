"""minigrad.compile: trace a loss function once, then run it as generated straight-line Python.

The eager engine makes a Python object per op, and no such engine gets near
plain float code in CPython. :func:`compile` records the graph once, by
running the function eagerly on input Values, and writes one Python function
for it: the forward pass as assignments of float expressions, the reverse
pass as ``g += g_out * partial`` lines, each taken from the rule table. Later
calls run that code on floats only.

How the code is written:

* Built-in ops are inlined as expressions (:data:`TEMPLATES`, one per built-in
  rule; a test proves each equal to its rule's functions). A custom rule's
  ``forward`` and ``partials`` are called by reference: the rule stays the one
  source of truth.
* A temporary used once, whose value the reverse pass does not need, is fused
  into the expression that uses it (``b + w0 * x0 + w1 * x1 ...``), up to
  :data:`MAX_DEPTH` levels and :data:`MAX_FUSED` ops per expression (CPython
  refuses deeper nesting).
* A gradient that is 0 passes nothing back (``if g:``), as in eager
  ``backward``: the backward of a relu that is off costs one test.
* relu and abs are expressions (``x if x > 0.0 else 0.0``) evaluated on every
  call: their branches are not frozen.
* Above :data:`CHUNK_ABOVE` statements the code is split into functions of
  :data:`CHUNK_SIZE` statements sharing one list of variables, since
  CPython's ``compile()`` of one huge function grows faster than its size.

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
import math

from minigrad import engine, ops
from minigrad._validate import finite_float
from minigrad.engine import Value, _args, _describe, toposort
from minigrad.ops import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator
    from typing import Any

__all__ = [
    "CHUNK_ABOVE",
    "CHUNK_SIZE",
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
CHUNK_ABOVE = 150_000
#: Statements per function when split.
CHUNK_SIZE = 4_000

#: Per built-in rule with an inline form (the others, and custom rules, are
#: called by reference): the forward as an expression in ``{0}``, ``{1}``, and per
#: argument the partial: a constant slope, or an expression in the arguments and
#: ``{out}``. Each reads as its rule's own functions, operation for operation,
#: so compiled results equal eager ones bit for bit (``tests/test_compile.py``).
TEMPLATES: dict[Rule, tuple[str, tuple[float | str, ...]]] = {
    ops.ADD: ("({0} + {1})", (1.0, 1.0)),
    ops.SUB: ("({0} - {1})", (1.0, -1.0)),
    ops.MUL: ("({0} * {1})", ("{1}", "{0}")),
    ops.DIV: ("({0} / {1})", ("(1.0 / {1})", "(-{out} / {1})")),
    ops.POW: (
        "_pow({0}, {1})",
        ("({1} * {0} ** ({1} - 1.0))", "(0.0 if {out} == 0.0 else {out} * _log({0}))"),
    ),
    ops.NEG: ("(-{0})", (-1.0,)),
    ops.ABS: ("abs({0})", ("(1.0 if {0} > 0.0 else -1.0 if {0} < 0.0 else 0.0)",)),
    ops.EXP: ("_exp({0})", ("{out}",)),
    ops.LOG: ("_log({0})", ("(1.0 / {0})",)),
    ops.LOG1P: ("_log1p({0})", ("(1.0 / (1.0 + {0}))",)),
    ops.SQRT: ("_sqrt({0})", ("(0.5 / {out})",)),
    ops.SIN: ("_sin({0})", ("_cos({0})",)),
    ops.COS: ("_cos({0})", ("(-_sin({0}))",)),
    ops.TANH: ("_tanh({0})", ("(1.0 - {out} * {out})",)),
    ops.SIGMOID: ("_sigmoid({0})", ("({out} * (1.0 - {out}))",)),
    ops.RELU: ("({0} if {0} > 0.0 else 0.0)", ("(1.0 if {0} > 0.0 else 0.0)",)),
    ops.SOFTPLUS: ("_softplus({0})", ("_sigmoid({0})",)),
    ops.ERF: ("_erf({0})", ("(_TWO_OVER_SQRT_PI * _exp(-({0} * {0})))",)),
    ops.GELU: (
        "(0.5 * {0} * (1.0 + _erf({0} * _INV_SQRT2)))",
        ("(0.5 * (1.0 + _erf({0} * _INV_SQRT2)) + {0} * _exp(-0.5 * {0} * {0}) * _INV_SQRT_2PI)",),
    ),
}

#: The names the templates use, bound in the generated code's globals.
_NAMESPACE: dict[str, object] = {
    "_pow": ops._pow,
    "_exp": math.exp,
    "_log": math.log,
    "_log1p": math.log1p,
    "_sqrt": math.sqrt,
    "_sin": math.sin,
    "_cos": math.cos,
    "_tanh": math.tanh,
    "_erf": math.erf,
    "_sigmoid": ops._sigmoid,
    "_softplus": ops._softplus,
    "_TWO_OVER_SQRT_PI": ops._TWO_OVER_SQRT_PI,
    "_INV_SQRT2": ops._INV_SQRT2,
    "_INV_SQRT_2PI": ops._INV_SQRT_2PI,
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
        from minigrad.gradcheck import gradcheck

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
            totals = [p.grad + g for p, g in zip(params, grads, strict=True)]
            if all(t - t == 0.0 for t in totals):
                for p, t in zip(params, totals, strict=True):
                    p.grad = t
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
        is_input = {id(v): i for i, v in enumerate(inputs)}
        self.params: list[Value] = [
            n for n in reversed(order) if n._rule is None and id(n) not in is_input
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
        ps = [p._data for p in self.params]
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


def _flatten(args: tuple[Any, ...]) -> tuple[object, list[float]]:
    """The structure of ``args`` (a hashable key) and their floats in order."""
    xs: list[float] = []

    def walk(a: object, where: str) -> object:
        t = type(a)
        if t is float:
            xs.append(a)  # type: ignore[arg-type]
            return None
        if isinstance(a, list | tuple) and (t is list or t is tuple):
            return tuple(walk(b, f"{where}[{i}]") for i, b in enumerate(a))
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


def _generate(
    order: list[Value], out: Value, is_input: dict[int, int], params: list[Value]
) -> tuple[str, dict[str, object]]:
    """The source of ``_run(P, X)``, a generator: yields the loss, receives the seed, yields grads.

    The reverse pass visits the nodes in the order eager ``backward`` does and
    adds the same products in the same order, so gradients equal eager ones.
    """
    fwd = order[::-1]
    param_index = {id(p): i for i, p in enumerate(params)}
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
    needs: dict[int, bool] = {}
    uses: dict[int, int] = {}
    user: dict[int, tuple[Value, int]] = {}
    for n in fwd:
        if n._rule is None:
            needs[id(n)] = id(n) in param_index
            continue
        flag = False
        for j, a in enumerate(_args(n)):
            if isinstance(a, Value):
                uses[id(a)] = uses.get(id(a), 0) + 1
                user[id(a)] = (n, j)
                flag = flag or needs[id(a)]
        needs[id(n)] = flag
    # The values the reverse pass reads: never fused.
    kept: set[int] = {id(out)}
    for n in fwd:
        rule = n._rule
        if rule is None or not needs[id(n)]:
            continue
        args = _args(n)
        partials = template(rule)[1]
        for i, a in enumerate(args):
            d = partials[i]
            if isinstance(d, float) or not (isinstance(a, Value) and needs[id(a)]):
                continue
            for j, b in enumerate(args):
                if isinstance(b, Value) and f"{{{j}}}" in d:
                    kept.add(id(b))
            if "{out}" in d:
                kept.add(id(n))

    # Variable numbering: a slot per forward variable and per gradient.
    slots = 0
    var: dict[int, int] = {}  # forward value -> slot (computed nodes)
    leaf: dict[int, tuple[str, int]] = {id(p): ("P", i) for i, p in enumerate(params)}
    for v_id, i in is_input.items():
        leaf[v_id] = ("X", i)

    # Forward: fuse single-use temporaries the reverse pass does not read.
    fwd_lines: list[tuple[str, int, str]] = []  # (kind, slot, expression)
    expr: dict[int, tuple[str, int, int]] = {}  # fused: (text, depth, size)
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
                fused = expr.pop(id(a), None)
                if fused is not None:
                    parts.append(fused[0])
                    depth = max(depth, fused[1])
                    size += fused[2]
                elif id(a) in var:
                    parts.append(f"\x00{var[id(a)]}\x01")
                else:
                    kind, i = leaf[id(a)]
                    parts.append(f"\x02{kind}{i}\x01")
            else:
                parts.append(_const(a))
        text = forward.format(*parts)
        fusable = uses.get(id(n), 0) == 1 and id(n) not in kept
        if fusable and depth + 1 < MAX_DEPTH and size < MAX_FUSED:
            u, j = user[id(n)]
            fusable = template(u._rule).__getitem__(0).count(f"{{{j}}}") == 1  # type: ignore[arg-type]
        else:
            fusable = False
        if fusable:
            expr[id(n)] = (text, depth + 1, size)
        else:
            var[id(n)] = slots
            fwd_lines.append(("t", slots, text))
            slots += 1

    def value_ref(a: Value | float) -> str:
        if not isinstance(a, Value):
            return _const(a)
        if id(a) in var:
            return f"\x00{var[id(a)]}\x01"
        if id(a) not in leaf:
            return "<fused: never read by a partial>"
        kind, i = leaf[id(a)]
        return f"\x02{kind}{i}\x01"

    # Gradients: a node used once through a slope of exactly 1.0 shares its
    # user's gradient (no line at all); another node used once gets its own,
    # set in its user's block (and zeroed on the path that skips the block);
    # a node used more often is zeroed up front and accumulated.
    seed = slots
    slots += 1
    gslot: dict[int, int] = {id(out): seed}
    multi: list[int] = []
    blocks: list[tuple[int, list[str], list[int]]] = []  # (gradient slot, lines, zeroed on skip)
    for n in order:
        rule = n._rule
        if rule is None or not needs[id(n)]:
            continue
        g = gslot[id(n)]
        gref = f"\x00{g}\x01"
        if blocks and blocks[-1][0] == g:
            body, zeroed = blocks[-1][1], blocks[-1][2]
        else:
            body, zeroed = [], []
            blocks.append((g, body, zeroed))
        args = _args(n)
        partials = template(rule)[1]
        refs_n = [value_ref(a) for a in args]
        for i, a in enumerate(args):
            if not (isinstance(a, Value) and needs[id(a)]):
                continue
            d = partials[i]
            once = uses[id(a)] == 1
            if once and d == 1.0:
                gslot[id(a)] = g
                continue
            if id(a) not in gslot:
                gslot[id(a)] = slots
                slots += 1
                if not once:
                    multi.append(gslot[id(a)])
            target = f"\x00{gslot[id(a)]}\x01"
            if isinstance(d, float):
                if d == 1.0:  # used more than once: accumulate
                    body.append(f"{target} += {gref}")
                    continue
                if d == -1.0:
                    if once:
                        body.append(f"{target} = -{gref}")
                        zeroed.append(gslot[id(a)])
                    else:
                        body.append(f"{target} -= {gref}")
                    continue
                product = f"{gref} * {_const(d)}"
            elif rule is ops.RELU:
                # g * (1.0 if x > 0.0 else 0.0), without the multiplication.
                product = f"({gref} if {refs_n[0]} > 0.0 else 0.0)"
            else:
                product = f"{gref} * " + d.format(*refs_n, out=value_ref(n))
            if once:
                body.append(f"{target} = {product}")
                zeroed.append(gslot[id(a)])
            else:
                body.append(f"{target} += {product}")
    grads = [gslot[id(p)] for p in params]
    statements = len(fwd_lines) + sum(len(b[1]) for b in blocks)
    chunked = statements > CHUNK_ABOVE
    names["_slots"] = slots
    return _write(
        fwd_lines, value_ref(out), seed, multi, blocks, grads, params, is_input, chunked, names
    ), names


def _write(
    fwd_lines: list[tuple[str, int, str]],
    out: str,
    seed: int,
    multi: list[int],
    blocks: list[tuple[int, list[str], list[int]]],
    grads: list[int],
    params: list[Value],
    is_input: dict[int, int],
    chunked: bool,
    names: dict[str, object],
) -> str:
    """The source, in one generator of locals or in chunks sharing one list ``v``."""
    import re

    size = names.pop("_slots")
    var = r"v[\1]" if chunked else r"t\1"
    var_re = re.compile("\x00(\\d+)\x01")
    leaf_re = re.compile("\x02([PX])(\\d+)\x01")

    def sub(text: str) -> str:
        text = var_re.sub(var, text)
        if chunked:
            return leaf_re.sub(r"\1[\2]", text)
        return leaf_re.sub(lambda m: f"{m.group(1).lower()}{m.group(2)}", text)

    def slot(k: int) -> str:
        return f"v[{k}]" if chunked else f"t{k}"

    forward = [f"{slot(k)} = {sub(text)}" for _, k, text in fwd_lines]
    backward: list[list[str]] = []
    for g, body, zeroed in blocks:
        if not body:
            continue
        unit = [f"if {slot(g)}:", *(f"    {sub(line)}" for line in body)]
        if zeroed and not chunked:
            unit += ["else:", f"    {' = '.join(slot(k) for k in zeroed)} = 0.0"]
        backward.append(unit)
    if not chunked:
        head = ["def _run(P, X):"]
        if params:
            head.append(f"    {', '.join(f'p{i}' for i in range(len(params)))}, = P")
        if is_input:
            head.append(f"    {', '.join(f'x{i}' for i in range(len(is_input)))}, = X")
        lines = head + [f"    {line}" for line in forward]
        lines.append(f"    {slot(seed)} = yield {sub(out)}")
        for i in range(0, len(multi), 100):
            lines.append(f"    {' = '.join(slot(k) for k in multi[i : i + 100])} = 0.0")
        for unit in backward:
            lines += [f"    {line}" for line in unit]
        lines.append(f"    yield ({''.join(f'{slot(k)}, ' for k in grads)})")
        return "\n".join(lines) + "\n"
    lines = []
    calls_f: list[str] = []
    for c, i in enumerate(range(0, len(forward), CHUNK_SIZE)):
        lines.append(f"def _f{c}(v, P, X):")
        lines += [f"    {line}" for line in forward[i : i + CHUNK_SIZE]]
        calls_f.append(f"    _f{c}(v, P, X)")
    calls_b: list[str] = []
    chunk: list[str] = []
    units: list[list[str] | None] = [*backward, None]
    for piece in units:
        if piece is None or len(chunk) >= CHUNK_SIZE:
            if chunk:
                lines.append(f"def _b{len(calls_b)}(v, P, X):")
                lines += chunk
                calls_b.append(f"    _b{len(calls_b)}(v, P, X)")
            chunk = []
        if piece is not None:
            chunk += [f"    {line}" for line in piece]
    lines.append("def _run(P, X):")
    lines.append(f"    v = [0.0] * {size}")
    lines += calls_f
    lines.append(f"    v[{seed}] = yield {sub(out)}")
    lines += calls_b
    names["_G"] = grads
    lines.append("    yield [v[k] for k in _G]")
    return "\n".join(lines) + "\n"
