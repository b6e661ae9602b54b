"""Forward mode: tangents pushed from the inputs towards the outputs through the same rules.

A node's tangent is ``sum_i partials[i](*args, out) * tangent(args[i])``, the
chain rule read from the same table as reverse mode, so no derivative is
written twice. :class:`Tangents` is what :func:`minigrad.jvp` and the
forward-mode checks run.

Design: forward mode runs over the recorded graph, not alongside evaluation.
:func:`jvp` calls ``func`` once (minigrad records the graph anyway), lists the
nodes that depend on the inputs in evaluation order (one :func:`toposort`)
and pushes the tangents through them. Dual numbers would need a second kind of
number, or a tangent slot on every Value, and a second forward for every op;
nested forward modes would need tags to keep their tangents apart
("perturbation confusion"). Over the recorded graph, every call keeps its
tangents in a dict of its own, keyed by node, so nesting needs nothing
special; and with ``create_graph=True`` the partials are applied to the
Values themselves, as ``grad(..., create_graph=True)`` does, so tangents are
differentiable Values and forward and reverse mode compose in any order, to
any depth. The price: forward mode keeps the graph in memory as reverse mode
does, where dual numbers could forget each node once it is used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minigrad.core.closure import Closure, closure_refusal
from minigrad.core.value import Value, _args, toposort

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Tangents"]

#: What the functional API differentiates: Values in, a Value or a tuple of Values out.
Func = Callable[..., "Value | Sequence[Value]"]

#: What a partial may raise that is turned into an error naming the op.
_CAUGHT = (ArithmeticError, ValueError, TypeError, AttributeError)
_STRATEGIES = ("auto", "forward-mode", "reverse-mode")


class Tangents:
    """Forward mode over a recorded graph: the tangents of ``outputs`` for tangents of ``inputs``.

    The nodes between the inputs and the outputs are listed once, in
    evaluation order, so pushing several tangents (a Jacobian's columns)
    costs one toposort in all. A push with a tangent on every input walks
    that list; a push with zeros on some (a unit tangent, say) walks only the
    nodes the others reach, as ``grad`` walks only an output's own graph.
    An input's tangent is the one given, whatever its own arguments (inputs
    are independent variables), and an output that does not depend on the
    inputs gets 0.

    Args:
        outputs: Recorded Values.
        inputs: The Values whose tangents are given.

    Example:
        >>> x, y = Value(2.0), Value(3.0)
        >>> push = Tangents([x * y, x.exp()], [x, y])
        >>> push([1.0, 0.0]), push([0.0, 1.0])
        ([3.0, 7.38905609893065], [2.0, 0.0])
    """

    __slots__ = ("_place", "_users", "inputs", "order", "outputs")

    def __init__(self, outputs: Sequence[Value], inputs: Sequence[Value]) -> None:
        self.outputs = list(outputs)
        self.inputs = list(inputs)
        order = toposort(self.outputs)
        order.reverse()  # evaluation order: every node after its arguments
        reached = set(self.inputs)
        self.order: list[Value] = []
        for node in order:
            if node in reached or node.rule is None:
                continue
            p: Any  # a Value of any class, or a float constant
            for p in _args(node):
                if type(p) is not float and p in reached:
                    if type(node._rule) is Closure:
                        raise closure_refusal(node._rule, "forward mode (jvp)")
                    reached.add(node)
                    self.order.append(node)
                    break
        self._users: dict[Value, list[Value]] = {}
        self._place: dict[Value, int] = {}

    def _reached(self, seeds: dict[Value, Any]) -> list[Value]:
        """The nodes of ``order`` that depend on the seeded inputs, in evaluation order."""
        if len(seeds) == len(self.inputs):
            return self.order
        users = self._users
        if not self._place:
            # Who uses each node, and each node's place in the order: built
            # once, on the first push that leaves some input out.
            p: Any  # a Value of any class, or a float constant
            for i, node in enumerate(self.order):
                self._place[node] = i
                for p in _args(node):
                    if type(p) is not float:  # a Value of any class
                        found = users.get(p)
                        if found is None:
                            users[p] = [node]
                        elif found[-1] is not node:  # x * x uses x once
                            found.append(node)
        seen = set(seeds)
        stack = list(seeds)
        reached: list[Value] = []
        while stack:
            for user in users.get(stack.pop(), ()):
                if user not in seen:
                    seen.add(user)
                    reached.append(user)
                    stack.append(user)
        reached.sort(key=self._place.__getitem__)
        return reached

    def __call__(
        self, tangents: Sequence[float | Value], *, create_graph: bool = False
    ) -> list[float | Value]:
        """The outputs' tangents: floats, or Values with ``create_graph``.

        Args:
            tangents: One per input: finite floats or Values (a Value's data
                is used without ``create_graph``; with it, the results are
                differentiable functions of the inputs and of Value tangents).
            create_graph: Apply the partials to Values, so the results can be
                differentiated again.
        """
        if create_graph:
            tan: dict[Value, Any] = {}
            for x, t in zip(self.inputs, tangents, strict=True):
                if isinstance(t, Value) or t != 0.0:  # a constant 0 carries nothing
                    tan[x] = t
            _push_values(self._reached(tan), tan)
            zero: Any = None
        else:
            tan = {}
            for x, t in zip(self.inputs, tangents, strict=True):
                f = t.data if isinstance(t, Value) else t
                if f != 0.0:
                    tan[x] = f
            _push_floats(self._reached(tan), tan)
            zero = 0.0
        out: list[float | Value] = []
        for y in self.outputs:
            t = tan.get(y, zero)
            if create_graph and not isinstance(t, Value):
                t = Value(0.0 if t is None else t)
            out.append(t)
        return out


def _push_floats(order: list[Value], tan: dict[Value, float]) -> None:
    """Add the tangent of every node of ``order`` to ``tan`` (a 0 tangent is left out).

    As in ``backward``, nothing flows through a node whose tangent is 0: its
    users' partials towards it are not evaluated, so a slope that does not
    exist where no tangent flows (d/dy x ** y at x < 0) raises nothing.
    """
    for node in order:
        rule = node.rule
        assert rule is not None
        args: tuple[Any, ...] = _args(node)  # Values of any class and float constants
        partials: tuple[Any, ...] = rule.partials
        xs: list[Any] | None = None
        total = 0.0
        for i, p in enumerate(args):
            if type(p) is float:
                continue
            t = tan.get(p)
            if t is None:
                continue
            d = partials[i]
            if type(d) is float:
                total += t * d
                continue
            if xs is None:
                xs = [a if type(a) is float else a.data for a in args]
                xs.append(node.data)
            try:
                d = d(*xs)
            except _CAUGHT as exc:
                raise _located(_partial_failed(node, i, exc, on_values=False), node, i) from exc
            if type(d) is not float and (isinstance(d, bool) or not isinstance(d, int)):
                raise _partial_returned(node, i, d, t, on_values=False)
            c = t * d
            if c - c != 0.0:  # not finite: d is NaN or inf, or the product overflowed
                raise _partial_returned(node, i, d, t, on_values=False)
            total += c
        if total:
            if total - total != 0.0:
                raise OverflowError(
                    f"op {rule.name!r} jvp: the tangent overflowed to {total!r} at "
                    f"{_point(node)} when its contributions (each finite) were added; "
                    "rescale the function, its inputs or the tangents"
                )
            tan[node] = total


def _push_values(order: list[Value], tan: dict[Value, Any]) -> None:
    """As :func:`_push_floats`, with the partials applied to Values (create_graph).

    A partial is called with the op's arguments and the node itself as
    ``out``, as ``grad(..., create_graph=True)`` calls it, so a tangent is a
    Value built from the inputs (and from Value tangents).
    """
    for node in order:
        rule = node.rule
        assert rule is not None
        args: tuple[Any, ...] = _args(node)  # Values of any class and float constants
        partials: tuple[Any, ...] = rule.partials
        total: Any = None
        for i, p in enumerate(args):
            if type(p) is float:
                continue
            t = tan.get(p)
            if t is None:
                continue
            d = partials[i]
            if type(d) is not float:
                try:
                    d = d(*args, node)
                except _CAUGHT as exc:
                    raise _located(_partial_failed(node, i, exc, on_values=True), node, i) from exc
                if not isinstance(d, Value) and (
                    isinstance(d, bool) or not isinstance(d, int | float) or d - d != 0.0
                ):
                    raise _partial_returned(node, i, d, t, on_values=True)
            if not isinstance(d, Value):
                if d == 0.0:
                    continue  # a zero slope adds nothing
                if d == 1.0:
                    total = t if total is None else total + t  # a unit slope passes t on
                    continue
            try:
                c = t * d
                total = c if total is None else total + c
            except (ArithmeticError, ValueError) as exc:
                raise OverflowError(
                    f"op {rule.name!r} jvp: the tangent overflowed on Values (create_graph=True) "
                    f"at {_point(node)}, passing through partials[{i}]: {exc}; rescale the "
                    "function, its inputs or the tangents"
                ) from exc
        if type(total) is float and total - total != 0.0:  # constants only: Values check
            raise OverflowError(
                f"op {rule.name!r} jvp: the tangent overflowed to {total!r} at {_point(node)}; "
                "rescale the function, its inputs or the tangents"
            )
        if total is not None:
            tan[node] = total


# Errors of forward mode: which op, which partial, at which point.


def _point(node: Value) -> str:
    """An op's arguments by name: ``x=0.5, y=2.0``."""
    rule = node.rule
    assert rule is not None
    return ", ".join(
        f"{n}={a.data if isinstance(a, Value) else a!r}"
        for n, a in zip(rule.arg_names, _args(node), strict=False)
    )


def _where(on_values: bool) -> str:
    return "on Values (create_graph=True)" if on_values else "on floats"


def _located(err: Exception, node: Value, i: int) -> Exception:
    """``err`` with the node and partial it came from, as backward's carry them (the
    checkers tell a slope beyond float64 from a wrong rule by them); not a partial that
    returned no number, as backward's do not."""
    err.node, err.partial = node, i  # type: ignore[attr-defined]
    return err


def _partial_failed(node: Value, i: int, exc: BaseException, *, on_values: bool) -> Exception:
    """An error of ``exc``'s type naming the op, the partial and the point."""
    rule = node.rule
    assert rule is not None
    message = (
        f"op {rule.name!r} jvp: partials[{i}] failed {_where(on_values)} at {_point(node)}: "
        f"{exc}; a partial is called as partials[i](*args, out), with floats and, with "
        "create_graph=True, with Values: write it with minigrad's functions "
        "(minigrad.cos, not math.cos)"
    )
    for kind in (type(exc), ZeroDivisionError, OverflowError, ArithmeticError, ValueError):
        if isinstance(exc, kind):
            try:
                new = kind(message)
            except Exception:
                continue
            if isinstance(new, Exception) and str(new) == message:
                return new
    return TypeError(message)


def _partial_returned(node: Value, i: int, d: object, t: object, *, on_values: bool) -> Exception:
    """The error for a partial whose value cannot scale a tangent."""
    rule = node.rule
    assert rule is not None
    shown = repr(d) if isinstance(d, int | float | Value) else f"{type(d).__name__} {d!r}"
    at = f"{_where(on_values)} at {_point(node)}"
    if isinstance(d, float) and d - d != 0.0:
        return _located(
            ValueError(
                f"op {rule.name!r} jvp: partials[{i}] returned {shown} {at}, which is not "
                "finite; a partial must be finite wherever a tangent flows through the op"
            ),
            node,
            i,
        )
    if isinstance(d, int | float) and not isinstance(d, bool):
        err = OverflowError(
            f"op {rule.name!r} jvp: the tangent overflowed: partials[{i}] is {shown} {at}, "
            f"and times the tangent {t!r} it is not finite; rescale the function, its "
            "inputs or the tangents"
        )
        err.times = t  # type: ignore[attr-defined]  # the tangent the partial scaled
        return _located(err, node, i)
    kind = "a Value or a number" if on_values else "a float"
    return TypeError(
        f"op {rule.name!r} jvp: partials[{i}] returned {shown} {at}, which is not {kind}; "
        "a partial must return a float when given floats and a Value or a float "
        "when given Values"
    )
