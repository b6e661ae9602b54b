"""The reverse pass on floats: :meth:`Value.backward`, and the step it shares with ``grad``.

``backward`` is attached to :class:`~minigrad.core.value.Value` here, where
the errors of a failed pass (:mod:`minigrad.core.failures`) are known; the
node itself knows neither. :func:`_float_step` is one node's step, also run
by :func:`minigrad.grad` without ``create_graph``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from minigrad.core._validate import finite_float
from minigrad.core.closure import Closure, _noop, set_step
from minigrad.core.failures import _describe, _failure, _grad_of, _NotFiniteError
from minigrad.core.value import Value, _args, _lock, _postorder

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__: list[str] = []


def backward(self: Value, grad: float = 1.0) -> None:
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
                n._grad = before
            raise
        self._grad = seed
        node = self
        try:
            for node in reversed(order):
                g = node._grad
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
                # node's layout (_args) straight from its slots. An argument is
                # a Value of any class or a float constant (see _postorder).
                a = node._a
                b = node._b
                partials: tuple[Any, ...] = rule.partials
                if b is None:  # one argument, or three and more (a tuple in _a)
                    if type(a) is Value or (type(a) is not tuple and type(a) is not float):
                        d = partials[0]
                        a._grad += g * (d if type(d) is float else d(a._data, node._data))
                    elif type(a) is tuple:
                        _float_step(node, g, None, None)
                    continue
                # Two arguments; a partial is a function or a constant slope.
                da, db = partials
                if type(a) is not float:
                    x = a._data
                    if type(b) is not float:
                        y = b._data
                        a._grad += g * (da if type(da) is float else da(x, y, node._data))
                        b._grad += g * (db if type(db) is float else db(x, y, node._data))
                    else:
                        a._grad += g * (da if type(da) is float else da(x, b, node._data))
                elif type(b) is not float:
                    b._grad += g * (db if type(db) is float else db(a, b._data, node._data))
        except BaseException as exc:
            try:
                # Explained before the grads are put back: the explanation
                # reads the gradients that reached the nodes done so far.
                done = order[order.index(node) + 1 :]
                error = _failure(exc, node, done, _grad_of, None)
            finally:
                for n in order:
                    n._grad = prior.get(n, 0.0)
            if error is None:
                raise
            raise error from (None if isinstance(exc, _NotFiniteError) else exc)
        for n, before in prior.items():
            total = n._grad + before
            if total - total != 0.0 and before - before == 0.0:
                for m in order:
                    m._grad = prior.get(m, 0.0)
                raise OverflowError(
                    f"backward: {_describe(n)} held the gradient {before!r} from earlier "
                    f"calls, and adding this call's {n._grad!r} overflows a float; call "
                    "zero_grad() between steps, or rescale the loss"
                )
            n._grad = total


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
    if type(rule) is Closure:
        # The user's own step (micrograd's _backward): it adds into the
        # children's .grad itself, reading node.grad (grad() never comes here
        # with acc: it runs closure graphs in the .grad slots).
        rule.step()
        return
    args: tuple[Any, ...] = _args(node)  # Values of any class and float constants
    partials: tuple[Any, ...] = rule.partials
    xs: list[Any] | None = None
    for p, d in zip(args, partials, strict=True):
        # p is a Value of any class, or a float constant (see _postorder).
        if type(p) is not float and (wanted is None or p in wanted):
            if type(d) is not float:
                if xs is None:
                    xs = []
                    for a in args:
                        xs.append(a if type(a) is float else a._data)
                    xs.append(node._data)
                d = d(*xs)
            if acc is None:
                p._grad += g * d
            else:
                old = acc.get(p)
                acc[p] = g * d if old is None else old + g * d


def _own_step(node: Value) -> None:
    """A built-in node's step: add ``partial * node.grad`` into each argument's ``.grad``."""
    g = node._grad
    if g:
        _float_step(node, g, None, None)


def _get_step(self: Value) -> Callable[[], None]:
    """micrograd's ``_backward``: this node's own step of the chain rule, on floats.

    It adds ``d self / d child * self.grad`` into the ``.grad`` of each
    child, and does nothing else: calling it on every node in reverse
    topological order, after ``root.grad = 1.0``, is ``root.backward()`` done
    by hand. A built-in node's step is its rule, made on each read (the node
    holds no closure); a leaf's does nothing; a node whose ``_backward`` was
    assigned returns that function.

    Example:
        >>> a, b = Value(2.0), Value(-3.0)
        >>> c = a * b
        >>> c.grad = 1.0
        >>> c._backward()
        >>> a.grad, b.grad
        (-3.0, 2.0)
    """
    rule = self._rule
    if rule is None:
        return _noop
    if type(rule) is Closure:
        return rule.step
    return partial(_own_step, self)


# Methods of every Value (declared in value.py's class body for mypy).
Value.backward = backward  # type: ignore[method-assign]
Value._backward = property(_get_step, set_step, doc=_get_step.__doc__)  # type: ignore[method-assign, assignment]
