"""The autograd engine: Value nodes, their topological order, backward and grad.

No calculus lives here: every derivative comes from a :class:`~minigrad.ops.Rule`.
A node keeps its rule and its arguments (another Value or a float constant
each). Its backward step is its rule's partials applied to those arguments,
so a node owns no closure, holds no reference to itself, and a graph is freed
by reference counting alone. Operators and methods are generated from their
rules (:func:`_operator`, :func:`_method`), so each is the rule, applied.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from minigrad import ops
from minigrad.ops import Rule

# typing costs ~15 ms to import; annotations need it only for mypy, which
# takes any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from minigrad.viz import Graph

__all__ = ["Value", "apply", "grad", "toposort"]

_INF = math.inf
_new = object.__new__


def _operator(rule: Rule, *, reflected: bool = False) -> Callable[[Value, Value | float], Value]:
    """A binary dunder that applies ``rule`` (``other <op> self`` when reflected)."""
    forward = rule.forward

    def op(self: Value, other: Value | float) -> Value:
        if type(other) is Value:
            y = other._data
        elif type(other) is float:
            y = other
        elif isinstance(other, int | float) and not isinstance(other, bool):
            y = other = float(other)
        else:
            # Python then tries the other operand's reflected method.
            return NotImplemented  # type: ignore[no-any-return]
        x = self._data
        a: Value | float = self
        if reflected:
            x, y, a, other = y, x, other, self
        try:
            out = forward(x, y)
        except (ArithmeticError, ValueError) as exc:
            raise _domain_error(rule, (x, y), exc) from None
        if out - out != 0.0:  # not finite: inf - inf and nan - nan are nan
            raise _domain_error(rule, (x, y), None)
        node: Value = _new(Value)
        node._data = out
        node.grad = 0.0
        node.label = ""
        node._rule = rule
        node._a = a
        node._b = other
        node._mark = None
        return node

    op.__name__ = op.__qualname__ = f"{'r' if reflected else ''}{rule.name}"
    return op


def _method(rule: Rule, doc: str) -> Callable[[Value], Value]:
    """A one-argument method (``x.exp()``, ``-x``) that applies ``rule``."""
    forward = rule.forward

    def method(self: Value) -> Value:
        x = self._data
        try:
            out = forward(x)
        except (ArithmeticError, ValueError) as exc:
            raise _domain_error(rule, (x,), exc) from None
        if out - out != 0.0:  # not finite
            raise _domain_error(rule, (x,), None)
        node: Value = _new(Value)
        node._data = out
        node.grad = 0.0
        node.label = ""
        node._rule = rule
        node._a = self
        node._b = None
        node._mark = None
        return node

    method.__name__ = method.__qualname__ = rule.name
    method.__doc__ = doc
    return method


class Value:
    """A float that remembers the op that made it.

    Args:
        data: The number (an int is stored as a float).
        label: A name for reports and pictures of the graph.

    Example:
        >>> x = Value(2.0, label="x")
        >>> y = x * x + 3 * x
        >>> y.backward()
        >>> y.data, x.grad
        (10.0, 7.0)
    """

    __slots__ = ("_a", "_b", "_data", "_mark", "_rule", "grad", "label")

    _data: float
    grad: float
    label: str
    _rule: Rule | None
    # Arguments: a Value or a float constant each; for an op of three or more
    # arguments ``_a`` holds all of them as a tuple and ``_b`` is None.
    _a: Any
    _b: Any
    # Traversal mark: which token of which sort last saw this node.
    _mark: object

    def __init__(self, data: float, *, label: str = "") -> None:
        self._data = _as_float(data, "Value: data")
        if not isinstance(label, str):
            raise TypeError(f"Value: label must be a str, got {type(label).__name__} {label!r}")
        self.grad = 0.0
        self.label = label
        self._rule = None
        self._a = None
        self._b = None
        self._mark = None

    @property
    def data(self) -> float:
        """The number this node holds (read/write; an int is stored as a float)."""
        return self._data

    @data.setter
    def data(self, value: float) -> None:
        self._data = _as_float(value, "Value.data")

    @property
    def op(self) -> str:
        """The name of the op that made this node; ``""`` for a leaf."""
        return "" if self._rule is None else self._rule.name

    @property
    def rule(self) -> Rule | None:
        """The rule that made this node; None for a leaf."""
        return self._rule

    @property
    def args(self) -> tuple[Value | float, ...]:
        """The op's arguments as recorded: Values and float constants."""
        rule = self._rule
        if rule is None:
            return ()
        if rule.arity == 1:
            return (self._a,)
        if rule.arity == 2:
            return (self._a, self._b)
        return tuple(self._a)

    @property
    def parents(self) -> tuple[Value, ...]:
        """The Values this node was computed from (constants left out)."""
        return tuple(a for a in self.args if type(a) is Value)

    def __repr__(self) -> str:
        extra = f", label={self.label!r}" if self.label else ""
        if self._rule is not None:
            extra += f", op={self._rule.name!r}"
        return f"Value(data={self._data!r}, grad={self.grad!r}{extra})"

    # Operators and methods: each is its rule, applied (see _operator, _method).

    __add__ = _operator(ops.ADD)
    __radd__ = _operator(ops.ADD, reflected=True)
    __sub__ = _operator(ops.SUB)
    __rsub__ = _operator(ops.SUB, reflected=True)
    __mul__ = _operator(ops.MUL)
    __rmul__ = _operator(ops.MUL, reflected=True)
    __truediv__ = _operator(ops.DIV)
    __rtruediv__ = _operator(ops.DIV, reflected=True)
    __pow__ = _operator(ops.POW)
    __rpow__ = _operator(ops.POW, reflected=True)
    __neg__ = _method(ops.NEG, "-self.")
    __abs__ = _method(ops.ABS, "abs(self); its slope at 0 is taken as 0, as in PyTorch.")
    exp = _method(ops.EXP, "e ** self.")
    log = _method(ops.LOG, "Natural logarithm; ValueError unless self > 0.")
    log1p = _method(ops.LOG1P, "log(1 + self), accurate near 0; ValueError unless self > -1.")
    sqrt = _method(ops.SQRT, "Square root; ValueError for a negative number.")
    sin = _method(ops.SIN, "Sine.")
    cos = _method(ops.COS, "Cosine.")
    tanh = _method(ops.TANH, "Hyperbolic tangent.")
    sigmoid = _method(ops.SIGMOID, "Logistic sigmoid 1 / (1 + e ** -self).")
    relu = _method(ops.RELU, "max(self, 0); its slope at 0 is taken as 0, as in PyTorch.")
    softplus = _method(ops.SOFTPLUS, "log(1 + e ** self), computed without overflow.")
    erf = _method(ops.ERF, "The error function.")
    gelu = _method(ops.GELU, "x * Phi(x) with the exact normal CDF (not the tanh approximation).")

    # Reverse mode.

    def backward(self, grad: float = 1.0) -> None:
        """Add d self / d node, times ``grad``, into ``.grad`` of every node reached.

        Gradients accumulate across calls, as in PyTorch and micrograd; call
        :meth:`zero_grad` between steps. Iterative, O(nodes + edges). A node
        whose gradient is 0 passes nothing back: its partials are not
        evaluated, so a slope that is undefined (or infinite) where no
        gradient flows raises no error and makes no NaN.

        Args:
            grad: The upstream weight of this node (d loss / d self).

        Example:
            >>> a = Value(3.0)
            >>> b = a.tanh() * a
            >>> b.backward()
            >>> round(a.grad, 6)
            1.024653
        """
        seed = _as_float(grad, "backward: grad")
        # Each node's .grad is its accumulator for this pass; what it held
        # before is set aside and added back at the end, so that earlier
        # calls accumulate instead of being propagated a second time.
        prior: dict[Value, float] = {}
        order = _postorder([self], prior)
        self.grad = seed
        node = self
        try:
            for node in reversed(order):
                g = node.grad
                if not g:
                    # Nothing flows back through this node (half the nodes of
                    # a relu network): its partials are not even evaluated.
                    continue
                rule = node._rule
                if rule is None:
                    continue  # a leaf
                a = node._a
                b = node._b
                partials: tuple[Any, ...] = rule.partials
                if b is None:  # one argument, or three and more (a tuple in _a)
                    if type(a) is Value:
                        d = partials[0]
                        a.grad += g * (d if type(d) is float else d(a._data, node._data))
                    elif type(a) is tuple:
                        _backward_nary(node, g)
                    continue
                # Two arguments; a partial is a function or a constant slope.
                da, db = partials
                if type(a) is Value:
                    x = a._data
                    if type(b) is Value:
                        y = b._data
                        a.grad += g * (da if type(da) is float else da(x, y, node._data))
                        b.grad += g * (db if type(db) is float else db(x, y, node._data))
                    else:
                        a.grad += g * (da if type(da) is float else da(x, b, node._data))
                elif type(b) is Value:
                    b.grad += g * (db if type(db) is float else db(a, b._data, node._data))
        except (ArithmeticError, ValueError) as exc:
            raise _backward_error(node, exc) from exc
        finally:
            for n, before in prior.items():
                n.grad += before

    def graph(self, *, max_nodes: int = 100) -> Graph:
        """A picture of this node's graph (see :func:`minigrad.viz.graph`).

        Example:
            >>> "digraph" in (Value(2.0) * 3).graph().dot
            True
        """
        from minigrad.viz import graph

        return graph(self, max_nodes=max_nodes)

    def zero_grad(self) -> None:
        """Set ``.grad = 0.0`` on this node and every node it was computed from.

        Example:
            >>> x = Value(1.0)
            >>> y = x.exp()
            >>> y.backward()
            >>> y.zero_grad()
            >>> x.grad, y.grad
            (0.0, 0.0)
        """
        for node in _postorder([self], None):
            node.grad = 0.0


def _as_float(x: object, what: str) -> float:
    """``x`` as a float, or a TypeError that names ``what`` and the value."""
    if type(x) is float:
        return x
    if isinstance(x, int | float) and not isinstance(x, bool):
        try:
            return float(x)
        except OverflowError:
            raise OverflowError(f"{what}: {x!r} is too large for a float") from None
    raise TypeError(f"{what} must be an int or float, got {type(x).__name__} {x!r}")


def apply(rule: Rule, *args: Value | float) -> Value:
    """Apply ``rule`` to Values (numbers are taken as constants).

    This is the door every custom op goes through; the built-in operators
    are the same code, generated per rule for speed.

    Example:
        >>> from minigrad import ops
        >>> apply(ops.MUL, Value(2.0), 3).data
        6.0
    """
    if not isinstance(rule, Rule):
        raise TypeError(f"apply: rule must be a Rule, got {type(rule).__name__} {rule!r}")
    if len(args) != rule.arity:
        raise TypeError(f"{rule.name}: takes {rule.arity} argument(s), got {len(args)}")
    kept: list[Value | float] = []
    xs: list[float] = []
    for i, arg in enumerate(args):
        if type(arg) is Value:
            kept.append(arg)
            xs.append(arg._data)
        else:
            x = _as_float(arg, f"{rule.name}: argument {i}")
            kept.append(x)
            xs.append(x)
    try:
        out = rule.forward(*xs)
    except (ArithmeticError, ValueError) as exc:
        raise _domain_error(rule, xs, exc) from None
    if isinstance(out, bool) or not isinstance(out, int | float):
        raise TypeError(
            f"{rule.name}: forward must return a float, got {type(out).__name__} {out!r}"
        )
    out = float(out)
    if not -_INF < out < _INF:
        raise _domain_error(rule, xs, None)
    node: Value = _new(Value)
    node._data = out
    node.grad = 0.0
    node.label = ""
    node._rule = rule
    node._a = kept[0] if rule.arity <= 2 else tuple(kept)
    node._b = kept[1] if rule.arity == 2 else None
    node._mark = None
    return node


def _show(rule: Rule | None, xs: Sequence[float]) -> str:
    if len(xs) == 1 or rule is None:
        return ", ".join(map(repr, xs))
    return ", ".join(f"{name}={x!r}" for name, x in zip(rule.arg_names, xs, strict=False))


def _domain_error(rule: Rule, xs: Sequence[float], exc: BaseException | None) -> Exception:
    """The error for an op whose forward failed, naming the op and its inputs."""
    kind: type[Exception]
    if exc is None or isinstance(exc, OverflowError):
        finite = all(-_INF < x < _INF for x in xs)
        kind = OverflowError if finite else ValueError
        detail = "result overflows a float" if finite else "input is not finite"
    else:
        kind = ZeroDivisionError if isinstance(exc, ZeroDivisionError) else ValueError
        detail = rule.requires or str(exc)
    return kind(f"{rule.name}: {detail}, got {_show(rule, xs)}")


def _backward_error(node: Value, exc: Exception) -> Exception:
    """The error for a partial that failed, naming the op and its inputs."""
    name = node.op
    xs = [a.data if isinstance(a, Value) else a for a in node.args]
    return type(exc)(f"{name} backward: derivative undefined at {_show(node.rule, xs)} ({exc})")


def _postorder(roots: Iterable[Value], prior: dict[Value, float] | None) -> list[Value]:
    """Every node the roots depend on, each after all the nodes it was made from.

    An iterative depth-first search (no recursion, so any depth works). Nodes
    are marked through their ``_mark`` slot with tokens made for this call, so
    no hashing is needed and no mark has to be cleared afterwards. A node with
    an argument not yet done goes back on the stack under its arguments and is
    emitted when it comes up again; a node with none (a leaf, say) is emitted
    at once. When ``prior`` is a dict, each node's non-zero ``.grad`` is moved
    into it.
    """
    seen = object()
    done = object()
    order: list[Value] = []
    stack = list(roots)
    # This loop runs about twice per node: bound methods, and pop() rather
    # than stack[-1] (a negative index takes CPython's slow path).
    push, pop, emit = stack.append, stack.pop, order.append
    while stack:
        node = pop()
        mark = node._mark
        if mark is done:
            continue
        if mark is seen:
            # Every argument is done: the node can follow them.
            node._mark = done
            emit(node)
            continue
        if prior is not None and node.grad:
            prior[node] = node.grad
            node.grad = 0.0
        # A leaf has no arguments (_a and _b None), one argument leaves _b
        # None, and three or more are a tuple in _a.
        a = node._a
        b = node._b
        if b is not None:
            if type(a) is Value and a._mark is not done:
                node._mark = seen
                push(node)
                push(a)
                if type(b) is Value and b._mark is not done:
                    push(b)
                continue
            if type(b) is Value and b._mark is not done:
                node._mark = seen
                push(node)
                push(b)
                continue
        elif type(a) is Value:
            if a._mark is not done:
                node._mark = seen
                push(node)
                push(a)
                continue
        elif type(a) is tuple:
            waiting = [p for p in a if type(p) is Value and p._mark is not done]
            if waiting:
                node._mark = seen
                push(node)
                stack.extend(waiting)
                continue
        node._mark = done
        emit(node)
    return order


def _backward_nary(node: Value, g: float) -> None:
    """The float backward step of an op with three or more arguments."""
    rule = node._rule
    assert rule is not None
    args = node._a
    xs = [a._data if type(a) is Value else a for a in args]
    xs.append(node._data)
    partials: tuple[Any, ...] = rule.partials
    for p, d in zip(args, partials, strict=True):
        if type(p) is Value:
            p.grad += g * (d if type(d) is float else d(*xs))


def toposort(roots: Iterable[Value]) -> list[Value]:
    """Every node the roots depend on, each before the nodes it was made from.

    Iterative (no recursion), so a graph of any depth works.
    Cost: O(nodes + edges) time and memory.

    Example:
        >>> x = Value(1.0, label="x")
        >>> y = (x * 2).exp()
        >>> [n.op or n.label for n in toposort([y])]
        ['exp', '*', 'x']
    """
    order = _postorder(roots, None)
    order.reverse()
    return order


def _propagate(
    order: list[Value],
    acc: dict[Value, Any],
    keep: set[Value],
    wanted: set[Value],
    *,
    create_graph: bool,
) -> dict[Value, Any]:
    """Run the rules of the nodes in ``order``; return d outputs / d node for ``keep``.

    ``acc`` holds the seeds; ``wanted`` is the set of the nodes in ``order``.
    Only the partials towards those are evaluated (a partial nobody asked for
    may not even exist there, such as d/dy x ** y at x < 0). No ``.grad`` is
    touched. With ``create_graph`` the partials are applied to Values, so the
    results are differentiable.
    """
    kept: dict[Value, Any] = {}
    node = None
    try:
        for node in order:
            g = acc.pop(node, None)
            if g is None:
                continue
            if node in keep:
                kept[node] = g
            if not create_graph and g == 0.0:
                continue  # as in backward: nothing flows back through this node
            rule = node._rule
            if rule is None:
                continue
            if rule.arity == 1:
                a = node._a
                args: tuple[Any, ...] = (a,)
                if create_graph:
                    xs: tuple[Any, ...] = (a, node)
                else:
                    xs = (a._data if type(a) is Value else a, node._data)
            elif rule.arity == 2:
                a, b = node._a, node._b
                args = (a, b)
                if create_graph:
                    xs = (a, b, node)
                else:
                    xs = (
                        a._data if type(a) is Value else a,
                        b._data if type(b) is Value else b,
                        node._data,
                    )
            else:
                args = node._a
                if create_graph:
                    xs = (*args, node)
                else:
                    xs = (*[a._data if type(a) is Value else a for a in args], node._data)
            partials: tuple[Any, ...] = rule.partials
            for p, partial in zip(args, partials, strict=True):
                if type(p) is not Value or p not in wanted:
                    continue
                d = partial if type(partial) is float else partial(*xs)
                if type(d) is Value:
                    c = g * d
                elif d == 0.0 and create_graph:
                    continue  # a constant zero slope adds nothing
                elif d == 1.0 and create_graph:
                    c = g  # a constant unit slope passes g through
                else:
                    c = g * d
                old = acc.get(p)
                acc[p] = c if old is None else old + c
    except (ArithmeticError, ValueError) as exc:
        assert node is not None
        raise _backward_error(node, exc) from exc
    return kept


def grad(
    outputs: Value | Sequence[Value],
    inputs: Value | Sequence[Value],
    grad_outputs: Sequence[float | Value] | None = None,
    *,
    create_graph: bool = False,
) -> tuple[Value, ...]:
    """d(sum_j v_j * outputs[j]) / d inputs[i] for each input; ``.grad`` untouched.

    Args:
        outputs: A Value or a sequence of Values.
        inputs: The Values to differentiate with respect to.
        grad_outputs: The weights v (floats or Values); ones when None.
        create_graph: Return Values that are differentiable functions of the
            inputs (and of Value weights), so ``grad`` can be applied again.

    Returns:
        One Value per input; ``Value(0.0)`` for an input the outputs do not
        depend on.

    Example:
        >>> x = Value(3.0)
        >>> (dx,) = grad(x**3, [x], create_graph=True)
        >>> (dxx,) = grad(dx, [x], create_graph=True)
        >>> (dxxx,) = grad(dxx, [x])
        >>> dx.data, dxx.data, dxxx.data
        (27.0, 18.0, 6.0)
    """
    outs = _value_list(outputs, "outputs")
    ins = _value_list(inputs, "inputs")
    if not outs:
        raise ValueError("grad: outputs is empty")
    weights = _weights(grad_outputs, len(outs), create_graph)
    acc: dict[Value, Any] = {}
    for out, w in zip(outs, weights, strict=True):
        old = acc.get(out)
        acc[out] = w if old is None else old + w
    wanted = set(ins)
    order = toposort(outs)
    # Only nodes that depend on some input need their rule run: walk from
    # the leaves up, marking every node with a marked argument.
    needed = set(wanted)
    for node in reversed(order):
        rule = node._rule
        if rule is None or node in needed:
            continue
        for p in (node._a, node._b) if rule.arity <= 2 else node._a:
            if type(p) is Value and p in needed:
                needed.add(node)
                break
    order = [node for node in order if node in needed]
    kept = _propagate(order, acc, wanted, needed, create_graph=create_graph)
    result: list[Value] = []
    for x in ins:
        g = kept.get(x)
        if g is None:
            result.append(Value(0.0))
        elif type(g) is Value:
            result.append(g)
        else:
            result.append(Value(g))
    return tuple(result)


def _value_list(xs: Value | Sequence[Value], what: str) -> list[Value]:
    if type(xs) is Value:
        return [xs]
    if isinstance(xs, str) or not isinstance(xs, Sequence):
        raise TypeError(
            f"grad: {what} must be a Value or a sequence of Values, got {type(xs).__name__}"
        )
    items = list(xs)
    for i, x in enumerate(items):
        if type(x) is not Value:
            raise TypeError(f"grad: {what}[{i}] must be a Value, got {type(x).__name__} {x!r}")
    return items


def _weights(grad_outputs: Sequence[float | Value] | None, n: int, create_graph: bool) -> list[Any]:
    if grad_outputs is None:
        raw: list[float | Value] = [1.0] * n
    else:
        if isinstance(grad_outputs, str) or not isinstance(grad_outputs, Sequence):
            raise TypeError(
                "grad: grad_outputs must be a sequence of floats or Values, "
                f"got {type(grad_outputs).__name__}"
            )
        raw = list(grad_outputs)
        if len(raw) != n:
            raise ValueError(f"grad: grad_outputs has {len(raw)} entries for {n} output(s)")
    weights: list[Any] = []
    for i, w in enumerate(raw):
        if type(w) is Value:
            weights.append(w if create_graph else w._data)
        else:
            x = _as_float(w, f"grad: grad_outputs[{i}]")
            weights.append(Value(x) if create_graph else x)
    return weights
