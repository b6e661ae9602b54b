"""``grad``: derivatives as new Values, on floats or, with ``create_graph``, on Values.

Unlike :meth:`Value.backward`, :func:`grad` reads and writes no ``.grad``: it
runs the rules of the nodes between the outputs and the inputs into a dict of
its own, on floats (:func:`_propagate_floats`, sharing backward's step) or on
Values (:func:`_propagate_values`), whose results are differentiable again, so
derivatives of any order come from calling ``grad`` again.
"""

from __future__ import annotations

from collections.abc import Sequence

from minigrad.core._validate import as_bool
from minigrad.core.backward import _float_step
from minigrad.core.closure import Closure, closure_refusal
from minigrad.core.failures import (
    _CAUGHT,
    _OVERFLOW_ADVICE,
    _failure,
    _grad_of,
    _not_a_slope,
    _NotFiniteError,
    _partial_raised,
    _partial_returned,
    _point,
    _retyped,
    note_op,
)
from minigrad.core.inputs import value_list, weights
from minigrad.core.value import Value, _args, _lock, _postorder

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["grad"]


def _propagate_floats(
    order: list[Value], acc: dict[Value, float], keep: set[Value], wanted: set[Value]
) -> dict[Value, float]:
    """Run the rules of the nodes in ``order`` on floats; return d outputs / d node for ``keep``.

    ``order`` runs from the outputs down; ``acc`` holds the seeds and receives
    every node's gradient (entries stay, so a failure can be explained);
    ``wanted`` is the set of the nodes in ``order``: only the partials towards
    those are evaluated (a partial nobody asked for may not even exist there,
    such as d/dy x ** y at x < 0). No ``.grad`` is touched. A node of ``keep``
    (an input) passes nothing back: inputs are independent variables (see
    :func:`grad`).
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
                continue  # an input: held fixed while the others move
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


def _propagate_in_slots(
    order: list[Value], acc: dict[Value, float], keep: set[Value], wanted: set[Value]
) -> dict[Value, float]:
    """As :func:`_propagate_floats`, through ``_backward`` closures: in the ``.grad`` slots.

    A closure adds into its children's ``.grad`` itself, so the pass runs
    where ``backward`` runs it, in the slots: every node's ``.grad`` is set
    aside, the pass runs from zero, the results are read and every ``.grad``
    is put back, also when the pass fails. The caller holds ``_lock``. A
    closure that writes the ``.grad`` of a Value outside the graph is beyond
    what can be put back; a micrograd closure writes only its children's.
    """
    kept: dict[Value, float] = {}
    every = _postorder(list(acc))  # the whole graph: a closure writes all its children
    saved = [n._grad for n in every]
    node = None
    try:
        for n in every:
            n._grad = 0.0
        for out, seed in acc.items():
            out._grad += seed
        for node in order:
            g = node._grad
            if g - g != 0.0:
                raise _NotFiniteError  # as in backward
            if node in keep:
                kept[node] = g
                continue  # an input: held fixed while the others move
            if g and node._rule is not None:
                _float_step(node, g, wanted, None)
    except BaseException as exc:
        assert node is not None
        error = _failure(exc, node, order[: order.index(node)], _grad_of, None)
        if error is None:
            raise
        raise error from (None if isinstance(exc, _NotFiniteError) else exc)
    finally:
        for n, g in zip(every, saved, strict=True):
            n._grad = g
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
            continue  # an input: held fixed while the others move
        rule = node._rule
        if rule is None:
            continue
        args = _args(node)
        xs = (*args, node)
        partials: tuple[Any, ...] = rule.partials
        for i, p in enumerate(args):
            if type(p) is float or p not in wanted:
                continue
            d = partials[i]
            if type(d) is not float:
                try:
                    d = d(*xs)
                except _CAUGHT as exc:
                    raise _partial_raised(node, i, exc, on_values=True) from exc
                except Exception as exc:  # the user's own kind: it goes on, named
                    note_op(exc, node, on_values=True)
                    raise
                # A Value is finite unless a partial made a leaf of NaN or inf,
                # which g * d refuses below; anything else is checked here. A
                # partial may return one of its arguments: a Value of any class.
                if type(d) is not Value and not isinstance(d, Value):
                    bad = _not_a_slope(d)
                    if bad:
                        raise _partial_returned(node, i, d, bad, on_values=True)
            try:
                if type(d) is Value or isinstance(d, Value):
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

    The inputs are independent variables, as in the functional APIs of
    PyTorch (``torch.autograd.functional``) and JAX: the derivative with
    respect to ``inputs[i]`` holds every other input fixed, also when one
    input was computed from another. With ``y = 2 * x``,
    ``grad(x * y, [x, y])`` is ``(y, x)``, where ``backward`` (and
    ``torch.autograd.grad``) would give ``x`` the total derivative ``4 * x``
    through ``y``. An input that is not computed from another input gets
    the same derivative either way.

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
        TypeError, ValueError: A bad argument; the message names it.
        ArithmeticError, ValueError, TypeError, AttributeError: A partial
            failed or gave NaN or inf; the message names the op and the point.

    Example:
        >>> x = Value(3.0)
        >>> (dx,) = grad(x**3, [x], create_graph=True)
        >>> (dxx,) = grad(dx, [x], create_graph=True)
        >>> (dxxx,) = grad(dxx, [x])
        >>> dx.data, dxx.data, dxxx.data
        (27.0, 18.0, 6.0)
        >>> y = 2 * x
        >>> [d.data for d in grad(x * y, [x, y])]  # inputs are independent
        [6.0, 3.0]
    """
    if create_graph is not False and create_graph is not True:  # as_bool, without a call
        as_bool(create_graph, "grad: create_graph")
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
        # toposort's walk, without its checks: outs is a list of Values already.
        order = _postorder(outs)
        order.reverse()
        # Only nodes that depend on some input need their rule run: walk from
        # the leaves up, marking every node with a marked argument.
        needed = set(keep)
        closure: Closure | None = None
        for node in reversed(order):
            rule = node._rule
            if rule is None or node in needed:
                continue
            for p in _args(node):
                if type(p) is not float and p in needed:
                    needed.add(node)
                    if type(rule) is Closure:
                        closure = rule
                    break
        order = [node for node in order if node in needed]
        if closure is not None:
            if create_graph:
                raise closure_refusal(closure, "grad(..., create_graph=True)")
            kept: dict[Value, Any] = _propagate_in_slots(order, acc, keep, needed)
        elif create_graph:
            kept = _propagate_values(order, acc, keep, needed)
        else:
            kept = _propagate_floats(order, acc, keep, needed)
    result: list[Value] = []
    for x in ins:
        g = kept.get(x)
        if g is None:
            result.append(Value(0.0))
        elif type(g) is Value or isinstance(g, Value):
            result.append(g)
        else:
            result.append(Value(g))
    return tuple(result)
