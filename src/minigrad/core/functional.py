"""Forward mode and the functional API: jvp, vjp, jacobian, hessian, hvp.

Forward mode reads the same table of rules as reverse mode: a node's tangent
is ``sum_i partials[i](*args, out) * tangent(args[i])``, the chain rule run
from the inputs towards the outputs. No derivative is written twice.

Inputs are independent variables, as in PyTorch's functional API and JAX:
every derivative with respect to ``inputs[i]`` holds the other inputs fixed,
also when one was computed from another, in forward and in reverse mode
alike (``grad`` holds its inputs fixed the same way), so every strategy
gives the same numbers.

Cost, for a function with n inputs, m outputs and a graph of E edges: a
Jacobian by forward mode is n passes (one per input), by reverse mode m
passes (one per output); :func:`jacobian` picks the cheaper. :func:`hvp` is
forward over reverse: one reverse pass that builds the gradient as a graph,
and one forward pass over it, O(E) in all instead of the n passes a Hessian
takes.
"""

from __future__ import annotations

from collections.abc import Sequence

from minigrad.core._validate import compiled_refusal
from minigrad.core.forward import _STRATEGIES, Func, Tangents
from minigrad.core.grad import grad
from minigrad.core.inputs import value_list, weights
from minigrad.core.value import Value

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

__all__ = ["Tangents", "hessian", "hvp", "jacobian", "jvp", "vjp"]

# The public functions.


def _evaluate(func: object, xs: list[Value], where: str) -> tuple[object, list[Value]]:
    """``func(*xs)`` and its outputs as a list, or a TypeError saying what was wrong."""
    if not callable(func):
        raise TypeError(f"{where}: func must be callable, got {type(func).__name__} {func!r}")
    out = func(*xs)
    outs = [out] if isinstance(out, Value) else out  # a Value of any class
    if isinstance(outs, tuple | list) and outs and all(isinstance(y, Value) for y in outs):
        for y in outs:
            # Its graph lives in generated code: every derivative would be 0.
            if getattr(y, "_compiled", False):
                raise TypeError(compiled_refusal(f"{where}: func's result", y))
        return (out if isinstance(out, Value) else tuple(outs)), list(outs)
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
    if isinstance(v, Value) or (isinstance(v, int | float) and not isinstance(v, bool)):
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
    return values[0] if isinstance(like, Value) else tuple(values)


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
        ``rows[j][i] = d out_j / d inputs[i]``, the other inputs held fixed:
        floats, or Values with ``create_graph``.

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
