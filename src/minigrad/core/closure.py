"""micrograd's door: a node whose backward step is the user's own ``_backward`` closure.

micrograd writes an op as a forward on floats plus a closure that adds
``local partial * out.grad`` into each child's ``.grad``::

    out = Value(math.exp(x.data), (x,), "exp")
    def _backward():
        x.grad += out.data * out.grad
    out._backward = _backward

minigrad's built-in nodes hold a :class:`~minigrad.core.rule.Rule` and no
closure; a node made this way holds a :class:`Closure`, a rule whose one
step is the user's function. It runs wherever minigrad works on floats at
first order: ``backward()``, ``grad()`` without ``create_graph`` (in the
nodes' ``.grad`` slots, put back afterwards) and the checks of order 1. A
closure is not a formula: it cannot be applied to Values, pushed forward or
inlined, so ``create_graph=True`` (derivatives of order 2 and up,
``gradgradcheck``), forward mode and ``minigrad.compile`` refuse the node
with a :class:`ClosureOpError` that names the op and shows it as a ``Rule``.

Its partials on floats are still known at the recorded point: run the
closure once with ``out.grad = 1`` and read what reached each child. That is
how error messages and the checkers' round-off bounds see through it.

Example:
    >>> import math
    >>> from minigrad import Value
    >>> x = Value(0.5)
    >>> out = Value(math.exp(x.data), (x,), "exp")
    >>> def _backward():
    ...     x.grad += out.data * out.grad
    >>> out._backward = _backward
    >>> out.backward()
    >>> round(x.grad, 6), out.op
    (1.648721, 'exp')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from minigrad.core import value as _value_module
from minigrad.core._validate import signature_problem
from minigrad.core.failures import MATH_COUNTERPARTS
from minigrad.core.rule import Rule
from minigrad.core.spelling import _arg_names
from minigrad.core.value import Value, _lock

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Closure",
    "ClosureOpError",
    "closure_refusal",
    "closure_refusal_example",
    "misbehaviour",
    "run_step",
]

_INF = float("inf")

#: How many closure nodes this process has made: while 0, nothing needs to look for one.
made = 0


class ClosureOpError(NotImplementedError):
    """A pass that needs an op's partials as formulas met an op written as a closure.

    Raised by ``grad(..., create_graph=True)`` (so by ``gradgradcheck``,
    ``hessian`` and every check of order 2 and up), by forward mode and by
    ``minigrad.compile``. The message names the op and shows it as a
    :class:`~minigrad.Rule`, which works at every order.

    A ``NotImplementedError``: it is not a wrong derivative and not a domain
    error, so no checker takes it for evidence against the user's rule.

    Attributes:
        op: The op's name, its node's ``_op``.
    """

    def __init__(self, message: str, op: str) -> None:
        super().__init__(message)
        self.op = op


def _noop() -> None:
    """The step of a node whose ``_backward`` was never set: nothing, as in micrograd."""


def run_step(
    node: Any,
    kids: Sequence[Any],
    step: Callable[[], None],
    upstream: float = 1.0,
    start: float = 0.0,
    slot: str = "grad",
) -> list[float]:
    """What ``step`` adds to each of ``kids``' gradient run with ``node``'s at ``upstream`` and
    theirs at ``start``; every one it touched is put back. Any engine's nodes: a closure's
    (:meth:`Closure.local_partials`, through the ``_grad`` slot: a gradient that overflowed
    to inf is put back too), a foreign engine's ``.grad`` (fault localisation)."""
    saved, out = [getattr(k, slot) for k in kids], getattr(node, slot)
    try:
        for k in kids:
            setattr(k, slot, start)
        setattr(node, slot, upstream)
        step()
        return [float(getattr(k, slot)) - start for k in kids]
    finally:
        setattr(node, slot, out)
        for k, g in zip(kids, saved, strict=True):
            setattr(k, slot, g)


def misbehaviour(local: Callable[..., list[float]]) -> str:
    """:meth:`Closure.misbehaviour` of any node's step, run by ``local(upstream=, start=)``
    (what it adds to each child, from ``out.grad = upstream`` and children's ``start``)."""
    once = local()
    for upstream in (2.0, -0.5):
        scaled = local(upstream=upstream)
        for a, b in zip(once, scaled, strict=True):
            if b == upstream * a or abs(b - upstream * a) <= 1e-12 * abs(b):
                continue
            ignored = b == a
            return (
                "its _backward "
                + ("ignores out.grad" if ignored else "does not scale with out.grad")
                + f" (it adds {a!r} when out.grad is 1 and {b!r} when it is {upstream}): "
                "a step adds local partial * out.grad, so write child.grad += ... * "
                "out.grad. (The checkers weight their backward pass at random and divide "
                "it back out, so their analytic value shows this even where backward() "
                "from a weight of 1 happens to come out right.)"
            )
    kept = local(start=0.75)
    for a, b in zip(once, kept, strict=True):
        if b != a and abs(b - a) > 1e-12 * (abs(a) + 0.75):
            if abs(b - (a - 0.75)) > 1e-12 * (abs(a) + 0.75):  # not what = leaves
                return (
                    f"what its _backward adds depends on the child's own .grad (it adds {a!r} "
                    f"where that is 0 and {b!r} where it is 0.75): a step adds local partial "
                    "* out.grad, so it reads out.grad, never child.grad"
                )
            return (
                "its _backward sets .grad (=) where it must add into it (+=): a child's "
                "gradient from its other uses is lost (x + x, or a Value used twice)"
            )
    return ""


class Closure(Rule):
    """The rule of one node made micrograd's way: its step is the user's ``_backward``.

    One per node (it keeps the node, as the user's closure does). ``partials[i]``
    on floats is d out / d children[i] at the recorded point, read by running
    the closure once with ``out.grad = 1``; on Values it raises
    :class:`ClosureOpError`, and so does ``forward``.

    Args:
        name: The op's name (micrograd's ``_op``; may be ``""``).
        node: The node whose step this is; its children are already in place.
        step: The user's closure, or None for micrograd's default, a no-op.
    """

    __slots__ = ("node", "step")

    node: Value
    step: Callable[[], None]

    def __init__(self, name: str, node: Value, step: Callable[[], None] | None) -> None:
        children: tuple[Value, ...] = node._a
        arity = len(children)
        # Rule.__init__ validates a forward and partials this rule has not got:
        # the slots are set here, with the defaults a Rule would give.
        self.name = name
        self.arity = arity
        self.arg_names = _arg_names(name, arity, None)
        self.forward = self._no_forward
        self.math = ""
        self.domain = ((-_INF, _INF),) * arity
        self.sample_box = ((-2.0, 2.0),) * arity
        self.avoid = ()
        self.requires = ""
        self.commutative = False
        self._written = None
        self.inline = None  # never inlined: compile refuses a closure node
        self.growth = None
        self.node = node
        self.step = _noop if step is None else step
        global made
        made += 1

    # Made when asked, not per node: a closure node is built as often as micrograd's.
    @property
    def partials(self) -> tuple[Callable[..., float], ...]:  # type: ignore[override]
        """Per child, d out / d child at the recorded point (one run of the closure)."""
        return tuple(self._partial(i) for i in range(self.arity))

    @property
    def spelling(self) -> str:  # type: ignore[override]
        """How the op reads: its name applied to its arguments."""
        return f"{self.name or 'op'}({', '.join(self.arg_names)})"

    def _no_forward(self, *xs: float) -> float:
        raise closure_refusal(self, "evaluating it at another point (its forward)")

    def _partial(self, i: int) -> Callable[..., float]:
        def partial(*xs: Any) -> float:
            if any(isinstance(x, Value) for x in xs):
                raise closure_refusal(self, "grad(..., create_graph=True)")
            return self.local_partials()[i]

        return partial

    def local_partials(self, upstream: float = 1.0, start: float = 0.0) -> list[float]:
        """d out / d child for each child, at the recorded point: one run of the closure.

        The closure runs with ``out.grad = upstream`` and every child's
        ``.grad`` at ``start``; what it added is returned, and every ``.grad``
        it touched is put back afterwards. (:meth:`misbehaviour` runs it with
        other ``upstream`` and ``start`` values.)

        Example:
            >>> a, b = Value(2.0), Value(3.0)
            >>> out = Value(a.data * b.data, (a, b), "*")
            >>> def _backward():
            ...     a.grad += b.data * out.grad
            ...     b.grad += a.data * out.grad
            >>> out._backward = _backward
            >>> out.rule.local_partials()
            [3.0, 2.0]
        """
        with _lock:
            return run_step(self.node, self.node._a, self.step, upstream, start, "_grad")

    def misbehaviour(self) -> str:
        """What the closure does that no chain-rule step does, in words; ``""`` if nothing seen.

        Two exact tests, at the recorded point: a step is linear in
        ``out.grad`` (an upstream of 2 adds twice as much as one of 1, and one
        of -0.5 minus half as much: powers of 2, so exactly, and of both
        signs, so that ``abs(out.grad)`` or a gradient clipped at 0 shows),
        and it adds into ``.grad`` (a child's earlier gradient stays).
        micrograd's commonest closure bugs fail them: a forgotten
        ``* out.grad``, and ``=`` where ``+=`` belongs.

        Example:
            >>> x = Value(3.0)
            >>> out = Value(9.0, (x,), "square")
            >>> def _backward():
            ...     x.grad = 2 * x.data * out.grad
            >>> out._backward = _backward
            >>> print(out.rule.misbehaviour())  # doctest: +ELLIPSIS
            its _backward sets .grad (=) where it must add into it (+=)...
        """
        return misbehaviour(self.local_partials)

    def noise(self, i: int) -> float:
        """How far round-off may move partial ``i`` as this closure computes it, as its own
        runs show it, its children and result moved together by ``k`` ulps (none across or onto
        0: a mask such as relu's ``out.data > 0`` flips there): at k = -3 to 3, by fourth
        differences (a smooth partial's shape is far below them: up to 16 times the jitter,
        over 2); at k = +-64, by the partial's change per ulp moved, where its two halves
        agree within a factor 2 (no kink between): what the ulp its formula rounds its
        arguments by makes of it (the textbook ``-1 / sqrt(1 - x * x)`` at ``1 - 1e-9`` is
        2.5e-10 off, the same way at each of those ulps). 0 where a moved point is refused.

        Example:
            >>> import math
            >>> x = Value(1.0 - 1e-9)
            >>> out = Value(math.acos(x.data), (x,), "acos")
            >>> def _backward():
            ...     x.grad += -out.grad / math.sqrt(1 - x.data * x.data)
            >>> out._backward = _backward
            >>> 1e-9 < out.rule.noise(0) / abs(out.rule.local_partials()[0]) < 1e-6
            True
        """
        movers = [*self.node._a, self.node]
        saved = [m._data for m in movers]
        got: list[float] = []
        try:
            for k in (*range(-3, 4), -64, 64):
                for m, v in zip(movers, saved, strict=True):
                    t = v + k * math.ulp(v)
                    m._data = t if t * v > 0.0 else v  # never across 0 or onto it
                got.append(self.local_partials()[i])
        except Exception:  # its step refuses a moved point (math.sqrt of -1e-16)
            return 0.0
        finally:
            for m, v in zip(movers, saved, strict=True):
                m._data = v
        fourths = [abs(a - 4.0 * b + 6.0 * c - 4.0 * d + e) for a, b, c, d, e in
                   zip(got, got[1:], got[2:], got[3:], got[4:7], strict=False)]  # fmt: skip
        down, up = got[3] - got[7], got[8] - got[3]
        smooth = down * up > 0.0 and max(down / up, up / down) <= 2.0
        found = max(*fourths, abs(up + down) / 128.0 if smooth else 0.0) / 2.0
        return found if math.isfinite(found) else 0.0

    def __repr__(self) -> str:
        return f"Closure({self.name!r}, arity={self.arity})"


def closure_refusal(rule: Rule, what: str) -> ClosureOpError:
    """The error for ``what`` meeting op ``rule``, written as a closure: the way that works.

    Example:
        >>> from minigrad import Value
        >>> x = Value(1.0)
        >>> out = Value(2.0, (x,), "twice")
        >>> print(closure_refusal(out.rule, "forward mode (jvp)"))  # doctest: +ELLIPSIS
        forward mode (jvp) cannot go through op 'twice': its derivative is a _backward closure ...
            twice = minigrad.Rule("twice", lambda x: ..., (lambda x, out: ...,))
            y = twice(x)...
    """
    name = rule.name or "(unnamed)"
    built_in = (
        f" minigrad has {rule.name!r} built in (minigrad.{rule.name}(x), differentiable to any "
        "order); for your own version,"
        if rule.name in MATH_COUNTERPARTS or rule.name in ("relu", "sigmoid", "softplus", "gelu")
        else ""
    )
    return ClosureOpError(
        f"{what} cannot go through op {name!r}: its derivative is a _backward closure "
        "(micrograd's way of writing an op), which minigrad runs only on floats, in "
        "backward(), grad() without create_graph and the checks of order 1. Derivatives of "
        "order 2 and up (create_graph=True, gradgradcheck, hessian), forward mode (jvp, "
        "check_forward_ad) and minigrad.compile need the partial derivatives as formulas."
        f"{built_in} write the same op as a minigrad.Rule, its partials with minigrad's "
        "functions (minigrad.exp, not math.exp) so they work on floats and on Values:\n"
        f"    {closure_refusal_example(rule.name, rule.arg_names)}",
        rule.name,
    )


def closure_refusal_example(name: str, arg_names: Sequence[str] = ("x",)) -> str:
    """The op ``name`` as a Rule, in two lines of code, for error messages.

    Example:
        >>> print(closure_refusal_example("cube"))
        cube = minigrad.Rule("cube", lambda x: ..., (lambda x, out: ...,))
            y = cube(x)  # in place of the closure op
    """
    ident = name if name.isidentifier() else "my_op"
    names = ", ".join(arg_names) or "x"
    partials = " ".join(f"lambda {names}, out: ...," for _ in arg_names) or "lambda x, out: ...,"
    return (
        f'{ident} = minigrad.Rule("{name or ident}", lambda {names}: ..., ({partials}))\n'
        f"    y = {ident}({names})  # in place of the closure op"
    )


def _children(given: object) -> tuple[Value, ...]:
    """micrograd's ``_children`` as a tuple of distinct Values, or a TypeError saying why.

    Distinct, as micrograd keeps them (``set(_children)``): ``Value(a*a, (a, a), '*')``
    has one child, and its closure's two ``+=`` both reach it.
    """
    if type(given) is tuple and 0 < len(given) <= 2 and isinstance(given[0], Value):
        if len(given) == 1:  # (the lecture's (self,) and (self, other), quickly)
            return given
        if isinstance(given[1], Value):
            return given if given[0] is not given[1] else given[:1]
    if isinstance(given, Value | str | bytes):
        hint = "; pass (v,) for one child" if isinstance(given, Value) else ""
        raise TypeError(
            f"Value: _children must be a tuple of Values, got {type(given).__name__} {given!r}"
            f"{hint}"
        )
    try:
        items = list(given)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(
            f"Value: _children must be a tuple of Values, got {type(given).__name__} {given!r}"
        ) from None
    seen: dict[Value, None] = {}
    for i, child in enumerate(items):
        if not isinstance(child, Value):
            raise TypeError(
                f"Value: _children[{i}] must be a Value, got {type(child).__name__} {child!r}"
            )
        seen[child] = None
    return tuple(seen)


def make_closure_node(node: Value, children: object, op: object) -> None:
    """Make ``node`` (being constructed) a closure node with ``children`` and ``op``."""
    if not isinstance(op, str):
        raise TypeError(f"Value: _op must be a str, got {type(op).__name__} {op!r}")
    kids = _children(children)
    if not kids and not op:
        return  # Value(x, ()): a leaf, as micrograd's is
    node._a = kids
    node._b = None
    node._rule = Closure(op, node, None)


def set_step(node: Value, fn: object) -> None:
    """``node._backward = fn``: ``fn`` becomes the node's step (a built-in node becomes a closure).

    A built-in node keeps its op's name and its Value arguments as children
    (constants drop out, as micrograd keeps only Values).
    """
    if not callable(fn):
        raise TypeError(
            f"Value._backward must be a function of no arguments, got {type(fn).__name__} {fn!r}"
        )
    problem = signature_problem(fn, 0)
    if problem:
        raise TypeError(
            f"Value._backward must be a function of no arguments (backward() calls "
            f"node._backward()), but it {problem}"
        )
    rule = node._rule
    if type(rule) is Closure:
        rule.step = fn
        return
    args: Sequence[Any] = _value_module._args(node)
    node._a = tuple(dict.fromkeys(a for a in args if type(a) is not float))
    node._b = None
    node._rule = Closure("" if rule is None else rule.name, node, fn)


_value_module._make_closure_node = make_closure_node
