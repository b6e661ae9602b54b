"""The engine's node: :class:`Value`, its layout and its topological order.

No calculus lives here, and no op: a node keeps the :class:`~minigrad.core.rule.Rule`
that made it and its arguments (another Value or a float constant each). Its
backward step is its rule's partials applied to those arguments, so a node
owns no closure, holds no reference to itself, and a graph is freed by
reference counting alone.

The layers above finish the class, as HIPS autograd's rules attach themselves
to its box: :mod:`minigrad.core.backward` adds :meth:`Value.backward`,
:mod:`minigrad.core.protocol` the operators and methods (each its rule,
applied), and the top-level package ``Value.graph``. The annotations at the
end of the class body declare them for mypy.

A node's layout is written by :func:`_node` and read by :func:`_args`; the hot
paths (the operators of :mod:`~minigrad.core.protocol`, ``backward``,
:func:`_postorder`) inline them, and tests check the copies agree.
"""

from __future__ import annotations

from _thread import RLock, allocate_lock, get_ident
from collections.abc import Callable, Iterable, Sequence

from minigrad.core._validate import as_float, finite_float

# typing costs ~15 ms to import; annotations need it only for mypy, which
# takes any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from minigrad.core.rule import Rule
    from minigrad.teach.viz import Graph

__all__ = ["Value", "toposort"]

_new = object.__new__

# Held around every _postorder walk (its marks live in the nodes' _mark slots,
# shared by all threads): by toposort for the walk, by backward for its whole
# pass (each node's .grad is its accumulator) and by zero_grad, so each is
# atomic to other threads. Reentrant because a partial, run by backward under
# the lock, may call grad (a partial that waits for another thread calling
# minigrad would deadlock). threading.RLock is this same C lock; importing
# threading costs ~2 ms. Uncontended, it costs ~0.15 us per call.
_lock = RLock()

#: The hooks of the threads that :mod:`minigrad.compile` is tracing a function
#: in, by thread id (:func:`_set_trace_hook`); None while no thread traces, so
#: that a ``.data`` read outside any trace costs one test of a global, as it
#: did when a single hook was kept here. A hook is called with a Value whose
#: ``.data`` its own thread reads, and raises (a read then would be frozen into
#: the compiled code); other threads read on. Replaced, never changed in place,
#: so a reader needs no lock. The engine reads the ``_data`` slot and never
#: calls a hook.
_tracing: dict[int, Callable[[Value], None]] | None = None
_tracing_lock = allocate_lock()


def _set_trace_hook(hook: Callable[[Value], None] | None) -> Callable[[Value], None] | None:
    """Install ``hook`` for the calling thread (None removes it); return the one it replaces.

    A trace installs its hook and, when done, puts back what this returned
    (a trace started inside another in the same thread restores the outer one).
    """
    global _tracing
    me = get_ident()
    with _tracing_lock:
        hooks = dict(_tracing) if _tracing is not None else {}
        before = hooks.pop(me, None)
        if hook is not None:
            hooks[me] = hook
        _tracing = hooks or None
    return before


#: Makes a node micrograd's way, ``Value(data, _children, _op)``: set by
#: :mod:`minigrad.core.closure`, which knows rules (this module does not).
#: The package ``minigrad.core`` imports it before any Value can be made.
_make_closure_node: Callable[[Value, object, object], None]


# Finite means ``x - x == 0.0`` everywhere in minigrad (see minigrad._validate):
# inf - inf and nan - nan are nan, and it costs a subtraction and a comparison.


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
        _children: micrograd's form: the Values this node was computed from,
            for a node whose ``_backward`` the caller assigns (see
            :mod:`minigrad.core.closure`). Leave it out for a leaf.
        _op: micrograd's form: the op's name, shown as ``op``.
        label: A name for reports and pictures of the graph.

    Example:
        >>> x = Value(2.0, label="x")
        >>> y = x * x + 3 * x
        >>> y.backward()
        >>> y.data, x.grad
        (10.0, 7.0)
    """

    __slots__ = ("_a", "_b", "_data", "_grad", "_mark", "_rule", "label")

    _data: float
    # The gradient's slot: the engine's hot loops read and write it directly;
    # users go through the .grad property, which refuses what is not a finite float.
    _grad: float
    label: str
    _rule: Rule | None
    # Arguments: a Value or a float constant each, laid out by _node.
    _a: Any
    _b: Any
    # Traversal mark: which token of which sort last saw this node.
    _mark: object

    def __init__(
        self,
        data: float,
        _children: Iterable[Value] = (),
        _op: str = "",
        label: str = "",
    ) -> None:
        self._data = as_float(data, "Value: data")
        if not isinstance(label, str):
            raise TypeError(f"Value: label must be a str, got {type(label).__name__} {label!r}")
        self._grad = 0.0
        self.label = label
        self._rule = None
        self._a = None
        self._b = None
        self._mark = None
        if _children != () or _op != "":
            # micrograd's constructor: a node whose step is its _backward
            # closure (a no-op until one is assigned); see core/closure.py.
            _make_closure_node(self, _children, _op)  # noqa: F821 (declared above, set by closure.py)

    @property
    def data(self) -> float:
        """The number this node holds (read/write; an int is stored as a float)."""
        if _tracing is not None:
            # minigrad.compile is tracing in some thread: if in this one, a
            # value read now would be frozen into the compiled code.
            hook = _tracing.get(get_ident())
            if hook is not None:
                hook(self)
        return self._data

    @data.setter
    def data(self, value: float) -> None:
        self._data = as_float(value, "Value.data")

    @property
    def grad(self) -> float:
        """d root / d self summed over the ``backward`` calls so far (read/write; finite float).

        ``backward`` adds into it and ``zero_grad`` resets it; an assignment must
        be a finite int or float (a str, a bool, NaN or inf is refused).

        Example:
            >>> x = Value(2.0)
            >>> (x * x).backward()
            >>> x.grad
            4.0
            >>> x.grad = float("nan")
            Traceback (most recent call last):
                ...
            ValueError: Value.grad must be finite, got nan
        """
        return self._grad

    @grad.setter
    def grad(self, value: float) -> None:
        if type(value) is float and value - value == 0.0:
            self._grad = value  # the common case, without a call: optimizers zero every step
        else:
            self._grad = finite_float(value, "Value.grad")

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
        return tuple(a for a in self.args if isinstance(a, Value))

    # micrograd's names, read-only, so that code written for micrograd's nodes
    # (the notebook helpers trace and draw_dot walk v._prev and print v._op)
    # runs unchanged on minigrad's.

    @property
    def _prev(self) -> set[Value]:
        """micrograd's name: the set of Values this node was computed from.

        Example:
            >>> x = Value(2.0)
            >>> y = x * x + 1.0
            >>> [p._op for p in y._prev], y._op, x._prev
            (['*'], '+', set())
        """
        return {a for a in _args(self) if isinstance(a, Value)}

    @property
    def _op(self) -> str:
        """micrograd's name for :attr:`op`: the op's symbol, ``""`` for a leaf."""
        return "" if self._rule is None else self._rule.name

    def __repr__(self) -> str:
        extra = f", label={self.label!r}" if self.label else ""
        if self._rule is not None:
            extra += f", op={self._rule.name!r}"
        return f"Value(data={self._data!r}, grad={self._grad!r}{extra})"

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

    def __bool__(self) -> bool:
        """The truth of the data, as for a float or a PyTorch 0-d tensor: ``v.data != 0.0``.

        Example:
            >>> bool(Value(0.0)), bool(Value(-2.0))
            (False, True)
        """
        return self.data != 0.0  # the property: under a trace, `if v:` is refused

    # No __getattr__ (a hint for a missing method would be welcome): a class
    # that defines one loses CPython's specialised slot reads, and every
    # .data and .grad in the engine's loops gets ~30% slower (measured).
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
                node._grad = 0.0

    if TYPE_CHECKING:
        # Attached by the layers above (see the module docstring); declared
        # here so that mypy knows them. Never run: TYPE_CHECKING is False.
        def __add__(self, other: Value | float) -> Value: ...
        def __radd__(self, other: Value | float) -> Value: ...
        def __sub__(self, other: Value | float) -> Value: ...
        def __rsub__(self, other: Value | float) -> Value: ...
        def __mul__(self, other: Value | float) -> Value: ...
        def __rmul__(self, other: Value | float) -> Value: ...
        def __truediv__(self, other: Value | float) -> Value: ...
        def __rtruediv__(self, other: Value | float) -> Value: ...
        def __pow__(self, other: Value | float) -> Value: ...
        def __rpow__(self, other: Value | float) -> Value: ...
        def __lt__(self, other: Value | float) -> bool: ...
        def __le__(self, other: Value | float) -> bool: ...
        def __gt__(self, other: Value | float) -> bool: ...
        def __ge__(self, other: Value | float) -> bool: ...
        def __neg__(self) -> Value: ...
        def __abs__(self) -> Value: ...
        def exp(self) -> Value: ...
        def log(self) -> Value: ...
        def log1p(self) -> Value: ...
        def sqrt(self) -> Value: ...
        def sin(self) -> Value: ...
        def cos(self) -> Value: ...
        def tanh(self) -> Value: ...
        def sigmoid(self) -> Value: ...
        def relu(self) -> Value: ...
        def softplus(self) -> Value: ...
        def erf(self) -> Value: ...
        def gelu(self) -> Value: ...
        def expm1(self) -> Value: ...
        def exp2(self) -> Value: ...
        def log2(self) -> Value: ...
        def log10(self) -> Value: ...
        def tan(self) -> Value: ...
        def asin(self) -> Value: ...
        def acos(self) -> Value: ...
        def atan(self) -> Value: ...
        def sinh(self) -> Value: ...
        def cosh(self) -> Value: ...
        def asinh(self) -> Value: ...
        def acosh(self) -> Value: ...
        def atanh(self) -> Value: ...
        def cbrt(self) -> Value: ...
        def erfc(self) -> Value: ...
        def lgamma(self) -> Value: ...
        def gamma(self) -> Value: ...
        def digamma(self) -> Value: ...
        def backward(self, grad: float = 1.0) -> None: ...
        @property
        def _backward(self) -> Callable[[], None]: ...
        @_backward.setter
        def _backward(self, fn: Callable[[], None]) -> None: ...
        def graph(self, *, max_nodes: int = 100) -> Graph: ...


# The node's layout: written by _node, read by _args. Two slots instead of a
# tuple of arguments per node save a tuple per op (most ops have one or two
# arguments); the hot paths inline these two and test_engine checks they agree.


def _node(rule: Rule, out: float, args: Sequence[Value | float]) -> Value:
    """A new node: ``rule`` applied to ``args`` (Values and float constants) gave ``out``.

    Layout: one argument is ``_a`` with ``_b`` None; two are ``_a`` and
    ``_b``; three or more are a tuple in ``_a`` with ``_b`` None. A leaf has
    both None. A constant is always of type ``float`` (the door of every op,
    :func:`~minigrad.core.rule.apply`, and the operators convert ints), so
    the hot paths tell an argument that is a Value, of any class, from a
    constant by ``type(a) is not float``. Inlined in :func:`_operator` and
    :func:`_method`.
    """
    node: Value = _new(Value)
    node._data = out
    node._grad = 0.0
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
        if prior is not None and node._grad:
            prior[node] = node._grad
            node._grad = 0.0
        # _args, inlined: a leaf has _a and _b None, one argument leaves _b
        # None, and three or more are a tuple in _a. An argument is a Value
        # (of any class: a subclass of Value is a node too) or a float
        # constant, always of type float (see _node): the plain Value is
        # tested first, and the float test stands for "a node" where those
        # are the only two kinds, so a subclass costs the plain Value nothing.
        a = node._a
        b = node._b
        if b is not None:
            if type(a) is not float and a._mark is not done:
                node._mark = seen
                push(node)
                push(a)
                if type(b) is not float and b._mark is not done:
                    push(b)
                continue
            if type(b) is not float and b._mark is not done:
                node._mark = seen
                push(node)
                push(b)
                continue
        elif type(a) is Value or (a is not None and type(a) is not tuple and type(a) is not float):
            if a._mark is not done:
                node._mark = seen
                push(node)
                push(a)
                continue
        elif type(a) is tuple:
            waiting = [p for p in a if type(p) is not float and p._mark is not done]
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

    Args:
        roots: Values (a list, a tuple, any iterable of Values).

    Raises:
        TypeError: ``roots`` is not an iterable of Values (a single Value
            is refused too: pass ``[v]``).

    Example:
        >>> x = Value(1.0, label="x")
        >>> y = (x * 2).exp()
        >>> [n.op or n.label for n in toposort([y])]
        ['exp', '*', 'x']
    """
    # A list or a tuple, the common case, skips the ABC check (~1 us: grad
    # calls this on every pass).
    if type(roots) is not list and type(roots) is not tuple:
        if isinstance(roots, Value | str | bytes) or not isinstance(roots, Iterable):
            hint = "; pass [v] for one Value" if isinstance(roots, Value) else ""
            raise TypeError(
                f"toposort: roots must be an iterable of Values, got {type(roots).__name__} "
                f"{roots!r}{hint}"
            )
        roots = list(roots)
    for root in roots:
        if type(root) is not Value and not isinstance(root, Value):
            i = list(roots).index(root)
            raise TypeError(
                f"toposort: roots[{i}] must be a Value, got {type(root).__name__} {root!r}"
            )
    with _lock:
        order = _postorder(roots)
    order.reverse()
    return order
