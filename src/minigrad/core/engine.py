"""The autograd engine: Value nodes, their topological order, backward and grad.

No calculus lives here: every derivative comes from a :class:`~minigrad.ops.Rule`.
A node keeps its rule and its arguments (another Value or a float constant
each). Its backward step is its rule's partials applied to those arguments,
so a node owns no closure, holds no reference to itself, and a graph is freed
by reference counting alone. Operators and methods are generated from their
rules (:func:`_operator`, :func:`_method`), so each is the rule, applied.

A node's layout is written by :func:`_node` and read by :func:`_args`; the hot
paths (:func:`_operator`, :func:`_method`, :meth:`Value.backward`,
:func:`_postorder`) inline them, and tests check the copies agree.

A reverse pass either completes or raises: a partial that fails, or returns
NaN or inf, raises an error of its own type naming the op, the partial, the
point and what to do, and ``backward`` then leaves every ``.grad`` as it was.
"""

from __future__ import annotations

import math
import operator
from _thread import RLock
from collections.abc import Callable, Iterable, Sequence

from minigrad.core import ops
from minigrad.core._validate import as_float, finite_float, value_list, weights
from minigrad.core.ops import Rule

# typing costs ~15 ms to import; annotations need it only for mypy, which
# takes any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from minigrad.teach.viz import Graph

__all__ = ["Value", "apply", "grad", "toposort"]

_new = object.__new__

# Held around every _postorder walk (its marks live in the nodes' _mark slots,
# shared by all threads): by toposort for the walk, by backward for its whole
# pass (each node's .grad is its accumulator) and by zero_grad, so each is
# atomic to other threads. Reentrant because a partial, run by backward under
# the lock, may call grad (a partial that waits for another thread calling
# minigrad would deadlock). threading.RLock is this same C lock; importing
# threading costs ~2 ms. Uncontended, it costs ~0.15 us per call.
_lock = RLock()

#: Set by :mod:`minigrad.compile` while it traces a function: called with a
#: Value whose ``.data`` is read, it raises (a read then would be frozen into
#: the compiled code). The engine reads the ``_data`` slot and never calls it.
_tracing: Callable[[Value], None] | None = None

# Finite means ``x - x == 0.0`` everywhere in minigrad (see minigrad._validate):
# inf - inf and nan - nan are nan, and it costs a subtraction and a comparison.


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
        if out - out != 0.0:  # not finite
            raise _domain_error(rule, (x, y), None)
        # _node(rule, out, (a, other)), inlined: this runs once per op.
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
        # _node(rule, out, (self,)), inlined: this runs once per op.
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


_COMPARISONS: dict[str, tuple[str, Callable[[float, float], bool]]] = {
    "<": ("__lt__", operator.lt),
    "<=": ("__le__", operator.le),
    ">": ("__gt__", operator.gt),
    ">=": ("__ge__", operator.ge),
}


def _comparison(symbol: str) -> Callable[[Value, Value | float], bool]:
    """``self <symbol> other`` on the data; ``other`` a Value, an int or a float.

    The operands are those arithmetic takes (a bool is not a number here);
    anything else gets NotImplemented, so Python tries the other side and
    then raises its TypeError. An int is compared as Python compares an int
    with a float: exactly, never converted (``10**400`` is larger than any
    Value, not an OverflowError).
    """
    name, test = _COMPARISONS[symbol]

    # Through the .data property, not the slot: a comparison decides control
    # flow, which minigrad.compile's trace must refuse to freeze.
    def compare(self: Value, other: Value | float) -> bool:
        if type(other) is Value:
            return test(self.data, other.data)
        if isinstance(other, int | float) and not isinstance(other, bool):
            return test(self.data, other)
        return NotImplemented  # type: ignore[no-any-return]

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"``self.data {symbol} other``, other a Value or a real number."
    return compare


def _drops_graph(v: Value, what: str) -> TypeError:
    """The error for converting ``v`` to a plain number: what to use instead.

    ``what`` names the conversion as the user may have met it: math.sin(v)
    calls float(v), so one message must read right for both.
    """
    return TypeError(
        f"Value: {what} would drop its graph, and with it the derivative. "
        f"For the number use v.data (here {v._data!r}); for math on a Value use "
        "minigrad's functions, which keep the derivative: minigrad.sin(v) or v.sin(), "
        "not math.sin(v)"
    )


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
    # Arguments: a Value or a float constant each, laid out by _node.
    _a: Any
    _b: Any
    # Traversal mark: which token of which sort last saw this node.
    _mark: object

    def __init__(self, data: float, *, label: str = "") -> None:
        self._data = as_float(data, "Value: data")
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
        if _tracing is not None:
            # minigrad.compile is tracing: a value read now would be frozen.
            _tracing(self)
        return self._data

    @data.setter
    def data(self, value: float) -> None:
        self._data = as_float(value, "Value.data")

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
        return _args(self)

    @property
    def parents(self) -> tuple[Value, ...]:
        """The Values this node was computed from (constants left out)."""
        return tuple(a for a in self.args if type(a) is Value)

    def __repr__(self) -> str:
        extra = f", label={self.label!r}" if self.label else ""
        if self._rule is not None:
            extra += f", op={self._rule.name!r}"
        return f"Value(data={self._data!r}, grad={self.grad!r}{extra})"

    # The number protocol (see docs/api.md): what cannot lose a derivative
    # works on the data; what would drop the graph raises, saying what to use.
    # == and hash stay identity: Values are dict keys and set members all over
    # the engine, and a == that compared data would merge distinct nodes.

    def __format__(self, spec: str) -> str:
        """``f"{v:.3f}"`` formats ``v.data``; ``f"{v}"`` is ``str(v)``, as for any object.

        Example:
            >>> v = Value(2.0 / 3.0)
            >>> f"{v:.3f}", f"{v:>8.2e}", f"{Value(2.0)}"
            ('0.667', '6.67e-01', 'Value(data=2.0, grad=0.0)')
        """
        if not spec:
            return str(self)
        try:
            return format(self.data, spec)  # the property: a trace must see the read
        except ValueError as exc:
            raise ValueError(
                f"Value: format spec {spec!r} does not apply to v.data, a float: {exc}"
            ) from None

    __lt__ = _comparison("<")
    __le__ = _comparison("<=")
    __gt__ = _comparison(">")
    __ge__ = _comparison(">=")

    def __bool__(self) -> bool:
        """The truth of the data, as for a float or a PyTorch 0-d tensor: ``v.data != 0.0``.

        Example:
            >>> bool(Value(0.0)), bool(Value(-2.0))
            (False, True)
        """
        return self.data != 0.0  # the property: under a trace, `if v:` is refused

    # Hidden from mypy, so that float(v) and math.sin(v) stay type errors
    # there too (a __float__ makes a class SupportsFloat, even one that raises).
    if not TYPE_CHECKING:

        def __float__(self):
            raise _drops_graph(
                self, "float(v) (called by math.sin(v) and every other math function)"
            )

        def __int__(self):
            raise _drops_graph(self, "int(v)")

        def __index__(self):
            raise _drops_graph(self, "v as an integer (an index, range(v), math.factorial(v))")

        def __complex__(self):
            raise _drops_graph(
                self, "complex(v) (called by cmath.sin(v) and every other cmath function)"
            )

        def __round__(self, ndigits=None):
            raise _drops_graph(self, "round(v)")

        def __trunc__(self):
            raise _drops_graph(self, "math.trunc(v)")

        def __floor__(self):
            raise _drops_graph(self, "math.floor(v)")

        def __ceil__(self):
            raise _drops_graph(self, "math.ceil(v)")

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
    expm1 = _method(ops.EXPM1, "e ** self - 1, accurate near 0.")
    exp2 = _method(ops.EXP2, "2 ** self.")
    log2 = _method(ops.LOG2, "Base-2 logarithm; ValueError unless self > 0.")
    log10 = _method(ops.LOG10, "Base-10 logarithm; ValueError unless self > 0.")
    tan = _method(ops.TAN, "Tangent.")
    asin = _method(ops.ASIN, "Arcsine, in [-pi/2, pi/2]; ValueError unless -1 <= self <= 1.")
    acos = _method(ops.ACOS, "Arccosine, in [0, pi]; ValueError unless -1 <= self <= 1.")
    atan = _method(ops.ATAN, "Arctangent, in (-pi/2, pi/2).")
    sinh = _method(ops.SINH, "Hyperbolic sine.")
    cosh = _method(ops.COSH, "Hyperbolic cosine.")
    asinh = _method(ops.ASINH, "Inverse hyperbolic sine.")
    acosh = _method(ops.ACOSH, "Inverse hyperbolic cosine; ValueError unless self >= 1.")
    atanh = _method(ops.ATANH, "Inverse hyperbolic tangent; ValueError unless -1 < self < 1.")
    cbrt = _method(ops.CBRT, "Real cube root (negative for a negative self).")
    erfc = _method(ops.ERFC, "Complementary error function 1 - erf(self), accurate for large self.")
    lgamma = _method(ops.LGAMMA, "log |Gamma(self)|; ValueError at 0 and the negative integers.")
    gamma = _method(ops.GAMMA, "The Gamma function; ValueError at 0 and the negative integers.")
    digamma = _method(ops.DIGAMMA, "d/dx log |Gamma(x)| at self; ValueError at 0, -1, -2, ...")

    # Reverse mode.

    def backward(self, grad: float = 1.0) -> None:
        """Add d self / d node, times ``grad``, into ``.grad`` of every node reached.

        Gradients accumulate across calls, as in PyTorch and micrograd; call
        :meth:`zero_grad` between steps. Iterative, O(nodes + edges). A node
        whose gradient is 0 passes nothing back: its partials are not
        evaluated, so a slope that is undefined (or infinite) where no
        gradient flows raises no error and makes no NaN.

        All or nothing: if a partial raises, or a gradient comes out NaN or
        infinite, the error names the op and the point, and every ``.grad``
        is left exactly as it was before the call.

        Thread-safe: calls from several threads on graphs that share nodes
        run one after the other, so shared ``.grad`` totals add up as on
        one thread.

        Args:
            grad: The upstream weight of this node (d loss / d self); finite.

        Example:
            >>> a = Value(3.0)
            >>> b = a.tanh() * a
            >>> b.backward()
            >>> round(a.grad, 6)
            1.024653
        """
        seed = finite_float(grad, "backward: grad")
        with _lock:
            # Each node's .grad is its accumulator for this pass; what it held
            # before is set aside and added back at the end, so that earlier
            # calls accumulate instead of being propagated a second time, and a
            # pass that fails can put every .grad back.
            prior: dict[Value, float] = {}
            try:
                order = _postorder([self], move_grads_to=prior)
            except BaseException:  # KeyboardInterrupt, MemoryError: put back what moved
                for n, before in prior.items():
                    n.grad = before
                raise
            self.grad = seed
            node = self
            try:
                for node in reversed(order):
                    g = node.grad
                    if not g:
                        # Nothing flows back through this node (half the nodes of
                        # a relu network): its partials are not even evaluated.
                        continue
                    if g - g != 0.0:
                        # NaN or inf: one test per node covers every partial that
                        # fed it; _failure finds the culprit by evaluating again.
                        raise _NotFiniteError
                    rule = node._rule
                    if rule is None:
                        continue  # a leaf
                    # _float_step, inlined for one and two arguments, reading the
                    # node's layout (_args) straight from its slots.
                    a = node._a
                    b = node._b
                    partials: tuple[Any, ...] = rule.partials
                    if b is None:  # one argument, or three and more (a tuple in _a)
                        if type(a) is Value:
                            d = partials[0]
                            a.grad += g * (d if type(d) is float else d(a._data, node._data))
                        elif type(a) is tuple:
                            _float_step(node, g, None, None)
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
            except BaseException as exc:
                try:
                    # Explained before the grads are put back: the explanation
                    # reads the gradients that reached the nodes done so far.
                    done = order[order.index(node) + 1 :]
                    error = _failure(exc, node, done, _grad_of, None)
                finally:
                    for n in order:
                        n.grad = prior.get(n, 0.0)
                if error is None:
                    raise
                raise error from (None if isinstance(exc, _NotFiniteError) else exc)
            for n, before in prior.items():
                total = n.grad + before
                if total - total != 0.0 and before - before == 0.0:
                    for m in order:
                        m.grad = prior.get(m, 0.0)
                    raise OverflowError(
                        f"backward: {_describe(n)} held the gradient {before!r} from earlier "
                        f"calls, and adding this call's {n.grad!r} overflows a float; call "
                        "zero_grad() between steps, or rescale the loss"
                    )
                n.grad = total

    def graph(self, *, max_nodes: int = 100) -> Graph:
        """A picture of this node's graph (see :func:`minigrad.viz.graph`).

        Example:
            >>> "digraph" in (Value(2.0) * 3).graph().dot
            True
        """
        from minigrad.teach.viz import graph

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
        with _lock:  # not between two steps of another thread's backward
            for node in _postorder([self]):
                node.grad = 0.0


# The node's layout: written by _node, read by _args. Two slots instead of a
# tuple of arguments per node save a tuple per op (most ops have one or two
# arguments); the hot paths inline these two and test_engine checks they agree.


def _node(rule: Rule, out: float, args: Sequence[Value | float]) -> Value:
    """A new node: ``rule`` applied to ``args`` (Values and float constants) gave ``out``.

    Layout: one argument is ``_a`` with ``_b`` None; two are ``_a`` and
    ``_b``; three or more are a tuple in ``_a`` with ``_b`` None. A leaf has
    both None. Inlined in :func:`_operator` and :func:`_method`.
    """
    node: Value = _new(Value)
    node._data = out
    node.grad = 0.0
    node.label = ""
    node._rule = rule
    if len(args) == 2:
        node._a, node._b = args
    elif len(args) == 1:
        node._a = args[0]
        node._b = None
    else:
        node._a = tuple(args)
        node._b = None
    node._mark = None
    return node


def _args(node: Value) -> tuple[Value | float, ...]:
    """A node's arguments as recorded (see :func:`_node`); ``()`` for a leaf.

    Inlined in :meth:`Value.backward` and :func:`_postorder`.
    """
    a = node._a
    b = node._b
    if b is not None:
        return (a, b)
    if a is None:
        return ()
    if type(a) is tuple:
        return a
    return (a,)


def apply(rule: Rule, *args: Value | float) -> Value:
    """Apply ``rule`` to Values (numbers are taken as constants).

    This is the door every custom op goes through; the built-in operators
    are the same code, generated per rule for speed.

    Example:
        >>> from minigrad.core import ops
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
            x = as_float(arg, f"{rule.name}: argument {i}")
            kept.append(x)
            xs.append(x)
    try:
        out = rule.forward(*xs)
    except (ArithmeticError, ValueError) as exc:
        raise _domain_error(rule, xs, exc) from None
    if isinstance(out, complex):
        # Python's ** and a few others answer off their real domain with a
        # complex number (-1.0 ** 0.5): that is a domain error, not a bad type.
        raise ValueError(
            f"{rule.name}: outside its real domain, got {_show(rule, xs)} "
            f"(its forward returned the complex {out!r})"
        )
    if isinstance(out, bool) or not isinstance(out, int | float):
        raise TypeError(
            f"{rule.name}: forward must return a float, got {type(out).__name__} {out!r}"
        )
    try:
        out = float(out)
    except OverflowError:  # an int beyond the floats
        raise _domain_error(rule, xs, None) from None
    if out - out != 0.0:  # not finite
        raise _domain_error(rule, xs, None)
    return _node(rule, out, kept)


def _show(rule: Rule, xs: Sequence[float]) -> str:
    """The inputs of a forward error: ``-1.0``, or ``x=1.0, y=-1.0``."""
    return repr(xs[0]) if len(xs) == 1 else _point(rule, xs)


def _point(rule: Rule, xs: Sequence[Value | float]) -> str:
    """An op's arguments by name: ``x=0.5, y=2.0`` (a Value shows its data)."""
    return ", ".join(
        f"{n}={x._data if type(x) is Value else x!r}"
        for n, x in zip(rule.arg_names, xs, strict=False)
    )


def _domain_error(rule: Rule, xs: Sequence[float], exc: BaseException | None) -> Exception:
    """The error for an op whose forward failed, naming the op and its inputs."""
    kind: type[Exception]
    if exc is None or isinstance(exc, OverflowError):
        finite = all(x - x == 0.0 for x in xs)
        kind = OverflowError if finite else ValueError
        detail = "result overflows a float" if finite else "input is not finite"
    else:
        kind = ZeroDivisionError if isinstance(exc, ZeroDivisionError) else ValueError
        detail = rule.requires or str(exc)
    return kind(f"{rule.name}: {detail}, got {_show(rule, xs)}")


def _postorder(
    roots: Iterable[Value], *, move_grads_to: dict[Value, float] | None = None
) -> list[Value]:
    """Every node the roots depend on, each after all the nodes it was made from.

    An iterative depth-first search (no recursion, so any depth works). Nodes
    are marked through their ``_mark`` slot with tokens made for this call, so
    no hashing is needed and no mark has to be cleared afterwards. A node with
    an argument not yet done goes back on the stack under its arguments and is
    emitted when it comes up again; a node with none (a leaf, say) is emitted
    at once. With ``move_grads_to`` (backward's use), each node's non-zero
    ``.grad`` is moved into that dict on the way: one walk instead of two.
    The caller holds ``_lock``: another thread's walk would overwrite the marks.
    """
    prior = move_grads_to
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
        # _args, inlined: a leaf has _a and _b None, one argument leaves _b
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
    with _lock:
        order = _postorder(roots)
    order.reverse()
    return order


# The reverse step, on floats and on Values.


def _float_step(
    node: Value, g: float, wanted: set[Value] | None, acc: dict[Value, float] | None
) -> None:
    """Add g * d node / d arg into ``acc[arg]`` (into ``arg.grad`` when ``acc`` is None).

    For each argument that is a Value (and in ``wanted``, if given): the
    reverse step on floats. :meth:`Value.backward` inlines it for one and two
    arguments. The floats a partial is called with are gathered only when a
    partial is a function (``+`` and ``-`` have constant slopes), in a loop
    rather than a comprehension, which costs a frame in CPython 3.11: this
    runs once per node in ``grad``.
    """
    rule = node._rule
    assert rule is not None
    args = _args(node)
    partials: tuple[Any, ...] = rule.partials
    xs: list[Any] | None = None
    for p, d in zip(args, partials, strict=True):
        if type(p) is Value and (wanted is None or p in wanted):
            if type(d) is not float:
                if xs is None:
                    xs = []
                    for a in args:
                        xs.append(a._data if type(a) is Value else a)
                    xs.append(node._data)
                d = d(*xs)
            if acc is None:
                p.grad += g * d
            else:
                old = acc.get(p)
                acc[p] = g * d if old is None else old + g * d


def _propagate_floats(
    order: list[Value], acc: dict[Value, float], keep: set[Value], wanted: set[Value]
) -> dict[Value, float]:
    """Run the rules of the nodes in ``order`` on floats; return d outputs / d node for ``keep``.

    ``order`` runs from the outputs down; ``acc`` holds the seeds and receives
    every node's gradient (entries stay, so a failure can be explained);
    ``wanted`` is the set of the nodes in ``order``: only the partials towards
    those are evaluated (a partial nobody asked for may not even exist there,
    such as d/dy x ** y at x < 0). No ``.grad`` is touched.
    """
    kept: dict[Value, float] = {}
    node = None
    try:
        for node in order:
            g = acc.get(node)
            if g is None:
                continue
            if g - g != 0.0:
                raise _NotFiniteError  # as in backward
            if node in keep:
                kept[node] = g
            if not g or node._rule is None:
                continue  # as in backward: nothing flows back through this node
            _float_step(node, g, wanted, acc)
    except BaseException as exc:
        assert node is not None
        error = _failure(exc, node, order[: order.index(node)], acc.get, wanted)
        if error is None:
            raise
        raise error from (None if isinstance(exc, _NotFiniteError) else exc)
    return kept


def _propagate_values(
    order: list[Value], acc: dict[Value, Value], keep: set[Value], wanted: set[Value]
) -> dict[Value, Value]:
    """As :func:`_propagate_floats`, with the partials applied to Values (create_graph).

    The results are Values built from the inputs, so they are differentiable.
    """
    kept: dict[Value, Value] = {}
    for node in order:
        g = acc.pop(node, None)
        if g is None:
            continue
        if node in keep:
            kept[node] = g
        rule = node._rule
        if rule is None:
            continue
        args = _args(node)
        xs = (*args, node)
        partials: tuple[Any, ...] = rule.partials
        for i, p in enumerate(args):
            if type(p) is not Value or p not in wanted:
                continue
            d = partials[i]
            if type(d) is not float:
                try:
                    d = d(*xs)
                except _CAUGHT as exc:
                    raise _partial_raised(node, i, exc, on_values=True) from exc
                # A Value is finite unless a partial made a leaf of NaN or inf,
                # which g * d refuses below; anything else is checked here.
                if type(d) is not Value:
                    bad = _not_a_slope(d)
                    if bad:
                        raise _partial_returned(node, i, d, bad, on_values=True)
            try:
                if type(d) is Value:
                    c = g * d
                elif d == 0.0:
                    continue  # a zero slope adds nothing
                elif d == 1.0:
                    c = g  # a unit slope passes g through
                else:
                    c = g * d
                old = acc.get(p)
                acc[p] = c if old is None else old + c
            except (ArithmeticError, ValueError) as exc:
                bad = _not_a_slope(d)
                if bad:
                    raise _partial_returned(node, i, d, bad, on_values=True) from exc
                raise _retyped(
                    exc,
                    f"op {rule.name!r} backward: the gradient overflowed on Values "
                    f"(create_graph=True) at {_point(rule, args)}, passing through partials[{i}]: "
                    f"{exc}; {_OVERFLOW_ADVICE}",
                ) from exc
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
        grad_outputs: The weights v (finite floats or Values); ones when None.
        create_graph: Return Values that are differentiable functions of the
            inputs (and of Value weights), so ``grad`` can be applied again.

    Returns:
        One Value per input; ``Value(0.0)`` for an input the outputs do not
        depend on.

    Raises:
        ArithmeticError, ValueError, TypeError, AttributeError: A partial
            failed or gave NaN or inf; the message names the op and the point.

    Example:
        >>> x = Value(3.0)
        >>> (dx,) = grad(x**3, [x], create_graph=True)
        >>> (dxx,) = grad(dx, [x], create_graph=True)
        >>> (dxxx,) = grad(dxx, [x])
        >>> dx.data, dxx.data, dxxx.data
        (27.0, 18.0, 6.0)
    """
    outs = value_list(outputs, "grad: outputs", nonempty=True)
    ins = value_list(inputs, "grad: inputs")
    acc: dict[Value, Any] = {}
    for out, w in zip(outs, weights(grad_outputs, len(outs), "grad: grad_outputs"), strict=True):
        seed: Any = w
        if isinstance(w, Value):
            seed = w if create_graph else w._data
        elif create_graph:
            seed = Value(w)
        old = acc.get(out)
        acc[out] = seed if old is None else old + seed
    keep = set(ins)
    # The partials read the nodes' .data: a check in another thread moves its
    # inputs' .data while it holds the lock, so the whole pass holds it too.
    with _lock:
        order = toposort(outs)
        # Only nodes that depend on some input need their rule run: walk from
        # the leaves up, marking every node with a marked argument.
        needed = set(keep)
        for node in reversed(order):
            if node._rule is None or node in needed:
                continue
            for p in _args(node):
                if type(p) is Value and p in needed:
                    needed.add(node)
                    break
        order = [node for node in order if node in needed]
        if create_graph:
            kept: dict[Value, Any] = _propagate_values(order, acc, keep, needed)
        else:
            kept = _propagate_floats(order, acc, keep, needed)
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


# Errors of the reverse pass: what went wrong, in which op, at which point.

#: What a partial may raise that is turned into an error naming the op.
_CAUGHT = (ArithmeticError, ValueError, TypeError, AttributeError)

_NOT_FINITE_ADVICE = (
    "a partial must be finite wherever a gradient flows through the op: check its "
    "formula, or keep the op's inputs where it is differentiable"
)
_OVERFLOW_ADVICE = (
    "the derivative is too large for a float here: rescale the function or its inputs"
)


class _NotFiniteError(Exception):
    """A gradient came out NaN or inf; :func:`_failure` says where. Never escapes."""


def _grad_of(node: Value) -> float:
    return node.grad


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
    (KeyboardInterrupt, or an exception type a partial made up) and goes on.
    """
    if isinstance(exc, _NotFiniteError):
        return _not_finite(node, done, incoming)
    if not isinstance(exc, _CAUGHT):
        return None
    rule = node._rule
    args = _args(node)
    if rule is not None:
        xs = [a._data if type(a) is Value else a for a in args]
        xs.append(node._data)
        # Which partial? Evaluate them again, one at a time.
        for i, (p, partial) in enumerate(zip(args, rule.partials, strict=True)):
            if type(p) is not Value or isinstance(partial, float):
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


def _not_finite(node: Value, done: list[Value], incoming: Callable[[Value], Any]) -> Exception:
    """The error for a NaN or infinite gradient reaching ``node``: which partial made it."""
    for user in done:
        rule = user._rule
        g = incoming(user)
        if rule is None or not g:
            continue
        args = _args(user)
        xs = [a._data if type(a) is Value else a for a in args]
        xs.append(user._data)
        for i, (p, partial) in enumerate(zip(args, rule.partials, strict=True)):
            if p is not node:
                continue
            try:
                d = partial if isinstance(partial, float) else partial(*xs)
            except _CAUGHT:
                continue  # it did not raise the first time: not this one
            bad = _not_a_slope(d) if type(d) is not Value else "is a Value, not a float"
            if bad:
                return _partial_returned(user, i, d, bad, on_values=False)
            if g * d - g * d != 0.0:
                return OverflowError(
                    f"op {rule.name!r} backward: the gradient overflowed: partials[{i}] is "
                    f"{d!r} at {_point(rule, args)}, and times the gradient {g!r} reaching "
                    f"the op's result it is {g * d!r}, which is not finite; {_OVERFLOW_ADVICE}"
                )
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
    if type(d) is Value:
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
        return ValueError(
            f"op {rule.name!r} backward: partials[{i}] returned {shown} {where} at "
            f"{_point(rule, _args(node))}, which {bad}; {_NOT_FINITE_ADVICE}"
        )
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
    return _retyped(
        exc,
        f"op {rule.name!r} backward: partials[{i}] failed {where} at {_point(rule, _args(node))}: "
        f"{exc}; {_advice(exc, rule.partials[i], on_values)}",
    )


def _advice(exc: BaseException, partial: object, on_values: bool) -> str:
    """What to do about a partial that raised ``exc``."""
    if isinstance(exc, TypeError) and on_values:
        return (
            f"write partials with minigrad's functions ({_math_hint(partial)}), "
            "which accept floats and Values"
        )
    if isinstance(exc, AttributeError) and not on_values:
        name = getattr(exc, "name", None) or "cos"
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
        import minigrad

        for name in code.co_names:
            found = scope.get(name)
            if found is math:  # math.cos(x): the attribute's name is among co_names too
                used = [n for n in code.co_names if callable(getattr(math, n, None))]
            elif callable(found) and getattr(found, "__module__", None) == "math":
                used = [found.__name__]  # from math import cos (as anything)
            else:
                continue
            for n in used:
                if callable(getattr(minigrad, n, None)):
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
