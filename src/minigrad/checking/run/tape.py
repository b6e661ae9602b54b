"""A level's graph, recorded at the inputs, replayed on floats at moved inputs.

A check evaluates every level at 2N points and more. Calling the function
again builds a new graph at each, a Python object per op. The graph recorded
at the inputs holds the same ops, and where nothing the function did depended
on a value (no ``.data`` read while it ran: no comparison, no ``if v``, no
float made from a Value, no closure op, whose forward reads its operands), the
function at a moved point is those same ops on the moved numbers: the same
forwards (the rule table's, or a custom rule's), called on the same floats in
the same order, so the same bits. Moving input i changes only the nodes
downstream of it, its cone; the others keep their recorded values.

Anything a replayed op does that eager evaluation would not pass silently (an
exception, a value that is not a finite float) sends that point to eager
evaluation, which raises or refuses it exactly as the function does.

Example:
    >>> from minigrad import Value
    >>> x, y = Value(2.0), Value(3.0)
    >>> tape = Tape([(x * y).exp() + y], [x, y])
    >>> tape.along(0)(0.0) == [(Value(0.0) * 3.0).exp().data + 3.0]
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minigrad.checking.numeric.rounding import hidden
from minigrad.core import closure
from minigrad.core import value as engine
from minigrad.core.rule import Rule
from minigrad.core.rules.arithmetic import ADD, SUB
from minigrad.core.value import Value, _args, toposort

__all__ = ["Tape", "recording"]

#: An instruction: the slot it writes, the forward, and its argument slots
#: (``b`` is -1 for one argument; for three or more ``a`` is a tuple and ``b`` -2).
Step = tuple[int, Callable[..., float], "int | tuple[int, ...]", int]


class Tape:
    """The graph of ``fs`` over the inputs ``xs``, as float instructions.

    Args:
        fs: The level's values at the inputs (Values).
        xs: The inputs (one computed from another is held fixed, as ``grad``
            holds it), in the graph or not.
        below: The values of the levels below it (replayed, not returned).
    """

    def __init__(
        self, fs: Sequence[Value], xs: Sequence[Value], below: Sequence[Value] = ()
    ) -> None:
        # Each node after its arguments; with the levels below, whose ops the
        # function runs too (a derivative need not use them: atanh's is
        # 1 / (1 - x * x)), so that a point they refuse is refused here too.
        order = toposort([*fs, *below])[::-1]
        slot = {node: j for j, node in enumerate(order)}
        base = [node._data for node in order]
        steps: list[Step] = []

        def at(a: Value | float) -> int:
            if type(a) is float:
                base.append(a)
                return len(base) - 1
            return slot[a]  # type: ignore[index]

        # An input is held fixed while the others move, even one computed from
        # another (as grad holds it): its own op is not replayed.
        inputs = {slot[x] for x in xs if x in slot}
        for j, node in enumerate(order):
            rule = node._rule
            if rule is None or j in inputs:
                continue
            args = [at(a) for a in _args(node)]
            if len(args) == 1:
                steps.append((j, rule.forward, args[0], -1))
            elif len(args) == 2:
                steps.append((j, rule.forward, args[0], args[1]))
            else:
                steps.append((j, rule.forward, tuple(args), -2))
        self._inputs = [slot.get(x, -1) for x in xs]
        # Which inputs each slot depends on, as bits, and so each input's cone:
        # the instructions downstream of it, in the recorded order.
        depends = [0] * len(base)
        for i, w in enumerate(self._inputs):
            if w >= 0:
                depends[w] |= 1 << i
        cones: list[list[Step]] = [[] for _ in xs]
        for step in steps:
            j, _, a, b = step
            bits = depends[a] if b != -2 else 0  # type: ignore[index]
            if b >= 0:
                bits |= depends[b]
            elif b == -2:
                for q in a:  # type: ignore[union-attr]
                    bits |= depends[q]
            depends[j] = bits
            while bits:
                low = bits & -bits
                cones[low.bit_length() - 1].append(step)
                bits ^= low
        self._base = base
        self._steps = steps
        self._depends = depends
        self._cones = cones
        self._outs = [slot[f] for f in fs]

    def along(self, i: int) -> Callable[[float], list[float] | None]:
        """The level's values as a function of input i alone (None: evaluate eagerly)."""
        where = self._inputs[i]
        if where < 0:  # the level does not depend on input i
            outs = [self._base[o] for o in self._outs]
            return lambda t: list(outs)
        return self._runner(self._cones[i], [where])

    def moved(self, step: Sequence[float]) -> list[float] | None:
        """The level's values with input j moved by ``step[j]`` (None: evaluate eagerly)."""
        moving = [(w, s) for w, s in zip(self._inputs, step, strict=True) if s and w >= 0]
        bits = 0
        for i, s in enumerate(step):
            if s:
                bits |= 1 << i
        cone = [st for st in self._steps if self._depends[st[0]] & bits]
        run = self._runner(cone, [w for w, _ in moving])
        return run(*(self._base[w] + s for w, s in moving))

    def stands(self, eager: Callable[[list[float]], list[float] | None], at: list[float]) -> bool:
        """Whether the tape gives the function's own values (``eager(step)``: every input
        moved by ``step``) at a moved point, bit for bit. A value a function makes
        outside the graph with no ``.data`` read the recording sees (``grad`` without
        ``create_graph``, a copy, a read in another thread) is a constant here and
        moves with the inputs in the function alone: a gradient penalty without
        ``create_graph`` agreed with its rule of 1, replayed, where its slope is 13.3.
        Tried where both give values, the inputs ``at`` moved by ``2**-20`` of
        themselves, or ``2**-40``; at neither, it stands."""
        for part in (2.0**-20, 2.0**-40):
            step = [part * max(abs(x), 1.0) for x in at]
            replayed = self.moved(step)
            try:
                found = eager(step) if replayed is not None else None
            except Exception:  # the user's own error, at a point the check would not visit
                found = None
            if found is not None:
                return found == replayed
        return True

    def _runner(self, cone: list[Step], where: list[int]) -> Callable[..., list[float] | None]:
        base, outs = self._base, self._outs

        def run(*ts: float) -> list[float] | None:
            v = base.copy()
            for w, t in zip(where, ts, strict=True):
                v[w] = t
            try:
                for j, forward, a, b in cone:
                    if b >= 0:
                        out = forward(v[a], v[b])  # type: ignore[index]
                    elif b == -1:
                        out = forward(v[a])  # type: ignore[index]
                    else:
                        out = forward(*[v[q] for q in a])  # type: ignore[union-attr]
                    if type(out) is not float or out - out != 0.0:
                        return None  # an int, a complex, inf or NaN: eager says what it is
                    v[j] = out
            except Exception:  # a forward refusing the point: eager refuses it alike
                return None
            return [v[o] for o in outs]

        return run


class recording:  # noqa: N801 (a context manager used as a function)
    """While open, notes any ``.data`` read in this thread; ``replayable`` after.

    ``replayable(fs)`` is true when nothing read a value while the block ran,
    the graph of ``fs`` holds no closure op, and no trace of
    :func:`minigrad.compile` was already open in this thread.

    Example:
        >>> from minigrad import Value
        >>> x = Value(0.5)
        >>> with recording() as seen:
        ...     y = (x * x).sin()
        >>> seen.replayable([y])
        True
        >>> with recording() as seen:
        ...     y = x * x if x > 0 else -x
        >>> seen.replayable([y])
        False
    """

    def __init__(self) -> None:
        self.read = False
        self._before: Callable[[Value], None] | None = None

    def _hook(self, node: Value) -> None:
        self.read = True

    def __enter__(self) -> recording:
        self._before = engine._set_trace_hook(self._hook)
        self.read = self._before is not None
        return self

    def __exit__(self, *exc: object) -> None:
        engine._set_trace_hook(self._before)

    def replayable(self, fs: Sequence[Value]) -> bool:
        if self.read:
            return False
        return not has_closure(fs)


def shows(
    fs: list[Value],
    xs: Sequence[Value],
    below: Sequence[Value],
    eager: Callable[[list[float]], list[float] | None],
    fenced: object,
) -> bool:
    """Whether the graph of ``fs``, built while a value was read (``.data``), is all of the
    function: its replay gives the function's own values, bit for bit, with every input
    moved by ``2**-20`` of itself, or, where that differs, by ``2**-40`` where the function
    moves at all (``eager``; its errors are the user's). A comparison's read leaves it
    whole where the move crosses no branch (``2**-40`` of x crosses one ``3e-7`` away in no
    case); ``x * Value(sin(3 * x.data))`` is a line as recorded at any move: its noise,
    turns and size read off that line held the steps to a slope it does not have. A
    closure op cannot be replayed, nor may declared domains be left: taken as shown; so
    where the function refuses the moves."""
    if fenced or has_closure(fs):
        return True
    tape, at, here = Tape(fs, xs, below), [x._data for x in xs], [f._data for f in fs]
    differs = False
    for part in (2.0**-20, 2.0**-40):
        step = [part * max(abs(x), 1.0) for x in at]
        replayed = tape.moved(step)
        found = eager(step) if replayed is not None else None
        if found is not None and found == replayed and not (differs and found == here):
            return True
        differs = differs or found is not None
    return not differs


def has_closure(fs: Sequence[Value]) -> bool:
    """Whether the graph of ``fs`` holds a node made micrograd's way (a ``_backward`` closure)."""
    return bool(closure.made) and any(
        type(node._rule) is closure.Closure for node in toposort(list(fs))
    )


def cancelled(f: Value) -> bool:
    """Whether a value of 0 is made where the graph shows it: every 0 it comes from is a
    built-in ``+`` or ``-`` of two terms not 0, whose rounding the graph reads (a closure's
    ``tanh`` less ``x.tanh()``), none a forward's that may cancel inside (a custom rule's, a
    closure's: ``log1p(exp(x)) - x`` at 700 in one rule), a leaf's or an underflow's; and
    no such forward in the graph is 0 (one that cancels to 0 inside is off by all its value,
    and a term made of it rounds by more than the graph reads)."""
    if any(_hides(n._rule) and n._data == 0.0 for n in toposort([f])):
        return False
    stack, seen = [f], set[int]()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        rule = node._rule
        if rule is None or _hides(rule):
            return False
        args = _args(node)
        zeros = [a for a in args if isinstance(a, Value) and a._data == 0.0]
        if rule in (ADD, SUB) and all(_number(a) != 0.0 for a in args):
            continue  # terms that cancel, in the graph's view
        if not zeros:
            return False  # a 0 from terms not 0 but not by cancelling: an underflow
        stack.extend(zeros)
    return True


def _hides(rule: object) -> bool:
    """Whether a node's rule is a forward the graph cannot read: a closure's, a custom one's."""
    return type(rule) is closure.Closure or (isinstance(rule, Rule) and hidden(rule))


def _number(a: Value | float) -> float:
    return a._data if isinstance(a, Value) else a
