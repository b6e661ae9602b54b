"""Forward mode and the functional API: jvp, vjp, jacobian, hessian, hvp.

Forward mode reads the same table of rules as reverse mode: a node's tangent
is ``sum_i partials[i](*args, out) * tangent(args[i])``, the chain rule run
from the inputs towards the outputs. No derivative is written twice.

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

Cost, for a function with n inputs, m outputs and a graph of E edges: a
Jacobian by forward mode is n passes (one per input), by reverse mode m
passes (one per output); :func:`jacobian` picks the cheaper. :func:`hvp` is
forward over reverse: one reverse pass that builds the gradient as a graph,
and one forward pass over it, O(E) in all instead of the n passes a Hessian
takes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minigrad.core._validate import value_list, weights
from minigrad.core.engine import Value, _args, grad, toposort

# typing costs ~15 ms to import and is needed only by mypy (see engine.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Tangents", "hessian", "hvp", "jacobian", "jvp", "vjp"]

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
            for p in _args(node):
                if type(p) is Value and p in reached:
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
            for i, node in enumerate(self.order):
                self._place[node] = i
                for p in _args(node):
                    if type(p) is Value:
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
                if type(t) is Value or t != 0.0:  # a constant 0 carries nothing
                    tan[x] = t
            _push_values(self._reached(tan), tan)
            zero: Any = None
        else:
            tan = {}
            for x, t in zip(self.inputs, tangents, strict=True):
                f = t.data if type(t) is Value else t
                if f != 0.0:
                    tan[x] = f
            _push_floats(self._reached(tan), tan)
            zero = 0.0
        out: list[float | Value] = []
        for y in self.outputs:
            t = tan.get(y, zero)
            if create_graph and type(t) is not Value:
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
        args = _args(node)
        partials: tuple[Any, ...] = rule.partials
        xs: list[Any] | None = None
        total = 0.0
        for i, p in enumerate(args):
            if type(p) is not Value:
                continue
            t = tan.get(p)
            if t is None:
                continue
            d = partials[i]
            if type(d) is float:
                total += t * d
                continue
            if xs is None:
                xs = [a.data if type(a) is Value else a for a in args]
                xs.append(node.data)
            try:
                d = d(*xs)
            except _CAUGHT as exc:
                raise _partial_failed(node, i, exc, on_values=False) from exc
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
        args = _args(node)
        partials: tuple[Any, ...] = rule.partials
        total: Any = None
        for i, p in enumerate(args):
            if type(p) is not Value:
                continue
            t = tan.get(p)
            if t is None:
                continue
            d = partials[i]
            if type(d) is not float:
                try:
                    d = d(*args, node)
                except _CAUGHT as exc:
                    raise _partial_failed(node, i, exc, on_values=True) from exc
                if type(d) is not Value and (
                    isinstance(d, bool) or not isinstance(d, int | float) or d - d != 0.0
                ):
                    raise _partial_returned(node, i, d, t, on_values=True)
            if type(d) is not Value:
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
        f"{n}={a.data if type(a) is Value else a!r}"
        for n, a in zip(rule.arg_names, _args(node), strict=False)
    )


def _where(on_values: bool) -> str:
    return "on Values (create_graph=True)" if on_values else "on floats"


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
        return ValueError(
            f"op {rule.name!r} jvp: partials[{i}] returned {shown} {at}, which is not finite; "
            "a partial must be finite wherever a tangent flows through the op"
        )
    if isinstance(d, int | float) and not isinstance(d, bool):
        return OverflowError(
            f"op {rule.name!r} jvp: the tangent overflowed: partials[{i}] is {shown} {at}, "
            f"and times the tangent {t!r} it is not finite; rescale the function, its "
            "inputs or the tangents"
        )
    kind = "a Value or a number" if on_values else "a float"
    return TypeError(
        f"op {rule.name!r} jvp: partials[{i}] returned {shown} {at}, which is not {kind}; "
        "a partial must return a float when given floats and a Value or a float "
        "when given Values"
    )


# The public functions.


def _evaluate(func: object, xs: list[Value], where: str) -> tuple[object, list[Value]]:
    """``func(*xs)`` and its outputs as a list, or a TypeError saying what was wrong."""
    if not callable(func):
        raise TypeError(f"{where}: func must be callable, got {type(func).__name__} {func!r}")
    out = func(*xs)
    if type(out) is Value:
        return out, [out]
    if isinstance(out, tuple | list) and out and all(type(y) is Value for y in out):
        return tuple(out), list(out)
    raise TypeError(
        f"{where}: func must return a Value or a tuple of Values, got {type(out).__name__} {out!r}"
    )


def _inputs(inputs: object, where: str) -> list[Value]:
    """The inputs: Values, at least one, none twice (a tangent or a row per input)."""
    xs = value_list(inputs, f"{where}: inputs", nonempty=True)
    if len({id(x) for x in xs}) < len(xs):
        first: dict[int, int] = {}
        for i, x in enumerate(xs):
            j = first.setdefault(id(x), i)
            if j != i:
                raise ValueError(
                    f"{where}: inputs[{i}] is the same Value as inputs[{j}]; give each input once"
                )
    return xs


def _vector(v: object, n: int, what: str, per: str) -> list[float | Value]:
    """One finite float or Value per input (or output); a bare one when there is one."""
    if v is None:
        raise TypeError(f"{what} is None; give one float or Value per {per}")
    if type(v) is Value or (isinstance(v, int | float) and not isinstance(v, bool)):
        v = [v]
    found = weights(v, None, what)
    if len(found) != n:
        raise ValueError(f"{what} has {len(found)} entries for {n} {per}(s)")
    return found


def _strategy(strategy: object, where: str) -> str:
    if strategy not in _STRATEGIES:
        raise ValueError(
            f"{where}: strategy must be one of {', '.join(map(repr, _STRATEGIES))}, "
            f"got {strategy!r}"
        )
    return str(strategy)


def _flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be a bool, got {type(value).__name__} {value!r}")
    return value


def _shaped(values: list[float | Value], like: object) -> float | Value | tuple[float | Value, ...]:
    """One result per output, shaped as ``func``'s result: one, or a tuple."""
    return values[0] if type(like) is Value else tuple(values)


def jvp(
    func: Func,
    inputs: Value | Sequence[Value],
    tangents: float | Value | Sequence[float | Value],
    *,
    create_graph: bool = False,
) -> tuple[Value | tuple[Value, ...], float | Value | tuple[float | Value, ...]]:
    """Forward mode: the directional derivative J(inputs) @ tangents of ``func``.

    ``func`` is evaluated once; the tangents are then pushed from the inputs
    to the outputs through the recorded graph with the rules' own partials
    (d out = sum_i partials[i](*args, out) * d args[i]). Cost: one pass over
    the graph, whatever the number of outputs.

    Args:
        func: Takes one Value per input; returns a Value or a tuple of Values.
        inputs: A Value or a sequence of Values (each once).
        tangents: One finite float or Value per input (a bare number for one input).
        create_graph: Return the tangents as Values that are differentiable
            functions of the inputs (and of Value tangents), so forward and
            reverse mode compose to any order.

    Returns:
        ``(outputs, tangents_out)``: what ``func`` returned (a Value or a tuple
        of Values) and, in the same structure, the tangent of each output:
        floats, or Values with ``create_graph``.

    Raises:
        TypeError, ValueError: A bad argument (the message names it), or a
            partial that failed or gave NaN or inf (the message names the op).

    Example:
        >>> x, y = Value(2.0), Value(3.0)
        >>> out, t = jvp(lambda a, b: a * b + a.exp(), [x, y], [1.0, 0.0])
        >>> round(out.data, 6), round(t, 6)  # d/dx (x * y + e**x) = y + e**x
        (13.389056, 10.389056)
        >>> outs, ts = jvp(lambda a: (a * a, a.sin()), x, 1.0)
        >>> ts[0], round(ts[1], 6)
        (4.0, -0.416147)
    """
    xs = _inputs(inputs, "jvp")
    ts = _vector(tangents, len(xs), "jvp: tangents", "input")
    cg = _flag(create_graph, "jvp: create_graph")
    out, outs = _evaluate(func, xs, "jvp")
    return out, _shaped(Tangents(outs, xs)(ts, create_graph=cg), out)  # type: ignore[return-value]


def vjp(
    func: Func,
    inputs: Value | Sequence[Value],
    v: float | Value | Sequence[float | Value] | None = None,
    *,
    create_graph: bool = False,
) -> tuple[Value | tuple[Value, ...], tuple[float | Value, ...]]:
    """Reverse mode: v @ J(inputs) of ``func``, one derivative per input.

    Cost: one reverse pass over the graph, whatever the number of inputs.

    Args:
        func: Takes one Value per input; returns a Value or a tuple of Values.
        inputs: A Value or a sequence of Values (each once).
        v: One weight per output, finite floats or Values (ones when None,
            as for :func:`~minigrad.grad`; a bare number for one output).
        create_graph: Return Values that are differentiable functions of the
            inputs (and of Value weights).

    Returns:
        ``(outputs, vjp_out)``: what ``func`` returned, and a tuple with
        d(sum_j v_j * out_j) / d inputs[i] for each input: floats, or Values
        with ``create_graph``.

    Example:
        >>> x, y = Value(2.0), Value(3.0)
        >>> out, (dx, dy) = vjp(lambda a, b: (a * b, a + b), [x, y], [1.0, 10.0])
        >>> [o.data for o in out], dx, dy
        ([6.0, 5.0], 13.0, 12.0)
    """
    xs = _inputs(inputs, "vjp")
    cg = _flag(create_graph, "vjp: create_graph")
    out, outs = _evaluate(func, xs, "vjp")
    ws = None if v is None else _vector(v, len(outs), "vjp: v", "output")
    gs = grad(outs, xs, ws, create_graph=cg)
    return out, gs if cg else tuple(g.data for g in gs)  # type: ignore[return-value]


def _jacobian(
    outs: list[Value], xs: list[Value], create_graph: bool, strategy: str
) -> list[list[float | Value]]:
    """The rows d outs[j] / d xs[i], by forward mode (per input) or reverse (per output)."""
    if strategy == "auto":
        strategy = "forward-mode" if len(xs) < len(outs) else "reverse-mode"
    if strategy == "reverse-mode":
        if create_graph:
            return [list(grad(y, xs, create_graph=True)) for y in outs]
        return [[g.data for g in grad(y, xs)] for y in outs]
    push = Tangents(outs, xs)
    unit = [0.0] * len(xs)
    columns = []
    for i in range(len(xs)):
        unit[i] = 1.0
        columns.append(push(unit, create_graph=create_graph))
        unit[i] = 0.0
    return [[column[j] for column in columns] for j in range(len(outs))]


def jacobian(
    func: Func,
    inputs: Value | Sequence[Value],
    *,
    create_graph: bool = False,
    strategy: str = "auto",
) -> list[list[float | Value]]:
    """The Jacobian of ``func``: one row per output, one column per input.

    Args:
        func: Takes one Value per input; returns a Value or a tuple of Values.
        inputs: A Value or a sequence of Values (each once).
        create_graph: Return Values that are differentiable functions of the inputs.
        strategy: ``"forward-mode"`` (one forward pass per input),
            ``"reverse-mode"`` (one reverse pass per output), or ``"auto"``:
            forward mode when there are fewer inputs than outputs.

    Returns:
        ``rows[j][i] = d out_j / d inputs[i]``: floats, or Values with ``create_graph``.

    Example:
        >>> x, y = Value(2.0), Value(3.0)
        >>> jacobian(lambda a, b: (a * b, a - b), [x, y])
        [[3.0, 2.0], [1.0, -1.0]]
        >>> jacobian(lambda a: (a * a, a * a * a), x, strategy="forward-mode")
        [[4.0], [12.0]]
    """
    xs = _inputs(inputs, "jacobian")
    cg = _flag(create_graph, "jacobian: create_graph")
    how = _strategy(strategy, "jacobian")
    _, outs = _evaluate(func, xs, "jacobian")
    return _jacobian(outs, xs, cg, how)


def _one_output(func: Func, xs: list[Value], where: str) -> Value:
    _, outs = _evaluate(func, xs, where)
    if len(outs) != 1:
        raise ValueError(
            f"{where}: func must have exactly one output, got {len(outs)}; for several, "
            "apply it to each output, or use jacobian"
        )
    return outs[0]


def hessian(
    func: Func,
    inputs: Value | Sequence[Value],
    *,
    create_graph: bool = False,
    outer_jacobian_strategy: str = "forward-mode",
) -> list[list[float | Value]]:
    """The Hessian of a function of one output: the Jacobian of its gradient.

    The gradient is built by reverse mode as a graph (``create_graph=True``);
    its Jacobian is taken by forward mode (forward over reverse, the default:
    one forward pass per input over the gradient's graph) or by reverse mode
    (``outer_jacobian_strategy="reverse-mode"``: one reverse pass per input).

    Args:
        func: Takes one Value per input; returns one Value (or a 1-tuple).
        inputs: A Value or a sequence of Values (each once).
        create_graph: Return Values that are differentiable functions of the inputs.
        outer_jacobian_strategy: ``"forward-mode"``, ``"reverse-mode"`` or ``"auto"``
            (as for :func:`jacobian`), PyTorch's name.

    Returns:
        ``rows[i][k] = d2 out / d inputs[i] d inputs[k]``: floats, or Values
        with ``create_graph``.

    Raises:
        ValueError: ``func`` has more than one output.

    Example:
        >>> x, y = Value(1.5), Value(-2.0)
        >>> hessian(lambda a, b: a * b**2, [x, y])  # [[0, 2y], [2y, 2x]]
        [[0.0, -4.0], [-4.0, 3.0]]
    """
    xs = _inputs(inputs, "hessian")
    cg = _flag(create_graph, "hessian: create_graph")
    how = _strategy(outer_jacobian_strategy, "hessian: outer_jacobian_strategy")
    out = _one_output(func, xs, "hessian")
    return _jacobian(list(grad(out, xs, create_graph=True)), xs, cg, how)


def hvp(
    func: Func,
    inputs: Value | Sequence[Value],
    v: float | Value | Sequence[float | Value],
    *,
    create_graph: bool = False,
) -> tuple[Value, tuple[float | Value, ...]]:
    """The Hessian of a function of one output times a vector, without the Hessian.

    Forward over reverse: one reverse pass builds the gradient as a graph,
    and one forward pass pushes ``v`` through it, O(graph) in all, where
    :func:`hessian` takes a pass per input.

    Args:
        func: Takes one Value per input; returns one Value (or a 1-tuple).
        inputs: A Value or a sequence of Values (each once).
        v: One finite float or Value per input (a bare number for one input).
        create_graph: Return Values that are differentiable functions of the
            inputs (and of Value entries of ``v``).

    Returns:
        ``(output, hvp_out)``: ``func``'s output and a tuple with
        ``sum_k H[i][k] * v[k]`` for each input i: floats, or Values with ``create_graph``.

    Example:
        >>> x, y = Value(1.5), Value(-2.0)
        >>> out, hv = hvp(lambda a, b: a * b**2, [x, y], [1.0, 0.5])
        >>> out.data, hv  # [[0, -4], [-4, 3]] @ [1, 0.5]
        (6.0, (-2.0, -2.5))
    """
    xs = _inputs(inputs, "hvp")
    vs = _vector(v, len(xs), "hvp: v", "input")
    cg = _flag(create_graph, "hvp: create_graph")
    out = _one_output(func, xs, "hvp")
    gradient = grad(out, xs, create_graph=True)
    return out, tuple(Tangents(gradient, xs)(vs, create_graph=cg))
