"""Foreign engines: the checkers on the nodes of any micrograd-style scalar engine.

The protocol, duck-typed and minimal (what lab 03's ``Value`` has): a node has a
float ``.data`` (an int is read as a float) that can be set, and a ``.grad``;
arithmetic on nodes and numbers builds new nodes; ``.backward()`` on an output
fills the ``.grad`` of the leaves it depends on, accumulating (``+=``).

Optional parts (``exp``, ``tanh``, reflected operators, ...) are detected
where used. The checkers move an input by setting its ``.data`` and compute
the analytic side with ``.backward()``, on a fresh graph each pass with the
inputs' ``.grad`` zeroed (``backward`` adds into every node it reaches); after
the check every input's ``.data`` and ``.grad`` is put back, and the ``.grad``
of any other leaf the graphs reached through ``_prev`` (a parameter ``func``
closes over). A foreign engine has no ``create_graph``: first derivatives, in
reverse mode, only.

:class:`ForeignLevels` stands in for :class:`~minigrad.checking.run.levels.Levels`
in :mod:`minigrad.checking.run.compare`; :func:`prepare_inputs` sorts the inputs
of a check into minigrad's Values (numbers are wrapped into fresh Values) or a
foreign engine's nodes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from minigrad.checking.run import levels as lv
from minigrad.checking.run.allowances import spread_of
from minigrad.checking.run.levels import DOMAIN_ERRORS, DerivativeError, Func, Key, Levels
from minigrad.checking.run.settings import Settings
from minigrad.core._validate import ComplexNumberError, compiled_refusal
from minigrad.core.value import Value

TYPE_CHECKING = False
if not TYPE_CHECKING:

    def cast(_type, value):  # typing.cast, without importing typing (~6 ms)
        return value


if TYPE_CHECKING:
    from typing import Any, Protocol, cast

    from minigrad.checking.numeric.estimate import Evaluate

    class EngineNode(Protocol):
        """A node of a micrograd-style engine, as the checkers use it."""

        data: float
        grad: float

        def backward(self) -> None: ...

    #: What the checkers take as ``inputs``: Values, numbers or a foreign
    #: engine's nodes, in a sequence (or one alone).
    Inputs = Sequence[Value | float | EngineNode] | Value | float | EngineNode


__all__ = ["ForeignLevels", "as_values", "engine_name", "fits", "prepare_inputs", "refuse_foreign"]


def as_values(nodes: list[EngineNode]) -> list[Value]:
    """The inputs as minigrad Values: what :func:`prepare_inputs` gives when its engine is None."""
    return cast("list[Value]", nodes)


def engine_name(cls: type) -> str:
    """``module.Class``, as messages name an engine.

    Example:
        >>> engine_name(Value)
        'minigrad.Value'
    """
    module = getattr(cls, "__module__", "") or ""
    if module.startswith("minigrad."):
        module = "minigrad"
    if module in ("", "__main__", "builtins"):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _is_real(x: object) -> bool:
    """Whether ``x`` is a real number (a Fraction too; never a bool)."""
    if isinstance(x, int | float):
        return not isinstance(x, bool)
    import numbers  # paid only for what is neither an int nor a float

    return isinstance(x, numbers.Real)


def fits(node: object) -> str:
    """What keeps ``node`` from being a node of a micrograd-style engine; ``""`` if nothing.

    Example:
        >>> class Half:
        ...     def __init__(self, data):
        ...         self.data = data
        >>> fits(Half(1.0))
        'Half has no .grad (the gradient backward() fills)'
        >>> fits(Value(1.0))
        ''
    """
    name = type(node).__name__
    try:
        data = node.data  # type: ignore[attr-defined]
    except AttributeError:
        return f"{name} has no .data (the node's number)"
    if not _is_real(data):
        return f"{name}'s .data must be a float, got {type(data).__name__} {data!r}"
    if not hasattr(node, "grad"):
        return f"{name} has no .grad (the gradient backward() fills)"
    if not callable(getattr(node, "backward", None)):
        return f"{name} has no .backward() method"
    return ""


def _refusal(where: str, i: int, x: object, problem: str) -> TypeError:
    return TypeError(
        f"{where}: inputs[{i}] must be a Value, a number, or a node of a micrograd-style "
        "engine (a float .data, a .grad and .backward()); "
        f"{problem}: {type(x).__name__} {x!r}"
    )


def prepare_inputs(inputs: object, where: str) -> tuple[list[EngineNode], type | None]:
    """The inputs of a check as a new list, and the foreign engine's class (None for minigrad).

    A number becomes a fresh leaf: a minigrad :class:`Value`, or a node of the
    foreign engine the other inputs belong to (made by calling its class with
    the float). Any subclass of Value is minigrad's.

    Raises:
        TypeError: ``inputs`` is not a node, number or sequence of them; an
            item fits no kind (the message names the part it lacks); or
            minigrad's Values and another engine's nodes are mixed.
        ValueError: Empty, an input that is not finite, or one input twice.

    Example:
        >>> xs, engine = prepare_inputs([2, Value(1.0)], "gradcheck")
        >>> [type(x).__name__ for x in xs], [x.data for x in xs], engine
        (['Value', 'Value'], [2.0, 1.0], None)
    """
    what = f"{where}: inputs"
    if isinstance(inputs, str | bytes) or not isinstance(inputs, Sequence):
        single = isinstance(inputs, Value) or _is_real(inputs) or hasattr(inputs, "backward")
        if not single:
            raise TypeError(
                f"{what} must be a Value, a number, a node of a micrograd-style engine or "
                f"a sequence of them, got {type(inputs).__name__} {inputs!r}"
            )
        inputs = [inputs]
    items = list(cast("Sequence[object]", inputs))
    if not items:
        raise ValueError(f"{what} is empty; give at least one input")
    engine: type | None = None
    for i, x in enumerate(items):
        if getattr(x, "_compiled", False):  # a compiled loss: a leaf with no graph
            raise TypeError(compiled_refusal(f"{what}[{i}]", x))
        if isinstance(x, Value):
            continue
        if _is_real(x):
            try:
                float(cast("float", x))
            except OverflowError:
                raise ValueError(
                    f"{what}[{i}] is too large for a float: {x!r:.60} (an int of "
                    f"{len(str(x))} digits; float64 holds up to about 1.8e308)"
                ) from None
            continue
        if isinstance(x, bool):
            raise TypeError(f"{what}[{i}] must be a Value or a number, got bool {x!r}")
        import numbers

        if isinstance(x, numbers.Number) and not hasattr(x, "backward"):  # a Decimal, a complex
            raise TypeError(
                f"{what}[{i}] is a {type(x).__name__}, {x!r}: a number, but the checks compute "
                "in float64, from real numbers (an int, a float, a Fraction)"
                + (": pass float(x)" if hasattr(type(x), "__float__") else "")
            )
        problem = fits(x)
        if problem:
            raise _refusal(where, i, x, problem)
        if engine is None:
            engine = type(x)
        elif not isinstance(x, engine):
            raise TypeError(
                f"{what}[{i}] is a node of {engine_name(type(x))}, inputs[0..{i - 1}] of "
                f"{engine_name(engine)}: one check takes the nodes of one engine"
            )
    out: list[EngineNode] = []
    for i, x in enumerate(items):
        if _is_real(x):
            out.append(_leaf(engine, cast("float", x), f"{what}[{i}]"))
        elif isinstance(x, Value) and engine is not None:
            raise TypeError(
                f"{what}[{i}] is a minigrad Value, the others are nodes of "
                f"{engine_name(engine)}: one check takes the nodes of one engine"
            )
        else:
            out.append(cast("EngineNode", x))
    for i, node in enumerate(out):
        # The slot for minigrad's Values: no tracing guard (minigrad.compile) here.
        try:
            data = node._data if isinstance(node, Value) else float(node.data)
        except OverflowError:  # an int beyond float64
            raise ValueError(f"{what}[{i}] is too large for a float: {node.data!r:.60}") from None
        if data - data != 0.0:
            raise ValueError(f"{what}[{i}] is not finite: {node.data!r}")
    first: dict[int, int] = {}
    for i, node in enumerate(out):
        j = first.setdefault(id(node), i)
        if j != i:
            raise ValueError(
                f"{what}[{i}] is the same node as inputs[{j}]; perturbing one would move both"
            )
    if engine is not None:
        _apart(out, what)
    return out, engine


def _apart(nodes: Sequence[object], what: str) -> None:
    """Refuse a foreign input made from another: ``backward()`` goes on into the other."""
    where = {id(n): i for i, n in enumerate(nodes)}
    for i, node in enumerate(nodes):
        for n in (_graph(node) or [node])[1:]:
            if id(n) in where:
                raise ValueError(
                    f"{what}[{i}] is made from inputs[{where[id(n)]}] in its engine's graph; "
                    "backward() would flow through it: pass leaves (nodes made from numbers)"
                )


def _graph(y: object) -> list[object] | None:
    """``y`` and every node it is made from, through micrograd's ``_prev`` (None for an
    engine that keeps its parents its own way: they cannot be found)."""
    seen, found, stack = set[int](), list[object](), [y]
    while stack:
        if id(node := stack.pop()) not in seen:
            seen.add(id(node))
            found.append(node)
            parents = getattr(node, "_prev", None)
            if not isinstance(parents, set | frozenset | tuple | list):
                return None
            stack.extend(parents)
    return found


def refuse_foreign(engine: type, order: int, settings: Settings) -> None:
    """Refuse what a foreign engine cannot be checked for: orders above 1, forward mode.

    Raises:
        ValueError: ``order`` is above 1 or ``settings.modes`` holds ``"fwd"``.
    """
    where, name = settings.where, engine_name(engine)
    if order > 1:
        raise ValueError(
            f"{where}: order {order} needs create_graph (first derivatives built as nodes, "
            f"to be differentiated again), which {name} does not have; a foreign engine's "
            "nodes are checked at order 1 (first derivatives) only"
        )
    if "fwd" in settings.modes:
        raise ValueError(
            f"{where}: forward mode ('fwd') needs minigrad's Values (their jvp); the nodes of "
            f"{name} are checked in reverse mode ('rev': their backward()) only"
        )


def _leaf(engine: type | None, x: float, what: str) -> EngineNode:
    """A fresh leaf holding ``x``: a minigrad Value, or one made by ``engine(x)``."""
    if engine is None:
        return Value(float(x))
    try:
        node = engine(float(x))
    except Exception as exc:
        raise TypeError(
            f"{what} is a number; wrapping it as a node of {engine_name(engine)} "
            f"({engine.__name__}({float(x)!r})) raised {type(exc).__name__}: {exc}"
        ) from exc
    problem = fits(node)
    if problem:
        raise TypeError(f"{what}: {engine.__name__}({float(x)!r}) is not a node: {problem}")
    return cast("EngineNode", node)


def _number(x: object, what: str) -> float:
    if x is None:
        return 0.0  # an engine that leaves .grad None where nothing arrived
    if not _is_real(x):
        raise TypeError(f"{what} must be a number, got {type(x).__name__} {x!r}")
    return float(cast("float", x))


class ForeignLevels(Levels):
    """``func`` at the nodes of a foreign engine: level 1 only (no create_graph).

    :class:`~minigrad.checking.run.levels.Levels` as :mod:`minigrad.checking.run.compare`
    uses it, plus :meth:`jacobian` (the analytic side, by ``backward()``) and
    :meth:`weighted` (fast mode's). Its ``xs`` are the nodes, typed as Values (``.data`` read).

    Args:
        func: The checked function.
        inputs: The engine's nodes.
        weights: ``grad_outputs`` or None (at order 1 only their count matters).
        where: The public function's name, for messages.
        engine: The engine's class.
        repeat: Whether every analytic pass runs twice (``nondet_tol > 0``).
    """

    def __init__(
        self,
        func: Func,
        inputs: list[EngineNode],
        weights: list[float | Value] | None,
        where: str,
        engine: type,
        repeat: bool,
    ) -> None:
        super().__init__(func, as_values(inputs), None, where)
        self.nodes = inputs
        self.weights = weights  # at order 1, only their count matters
        self.engine = engine
        self.repeat = repeat
        self._scaling: bool | None = None
        self.spread, self.spreads = 0.0, list[float]()  # (spread_of: the last pass's, per output)
        labels = [getattr(x, "label", "") for x in inputs]
        self.names = [f"x[{i}] {b!r}" if isinstance(b, str) and b else f"x[{i}]"
                      for i, b in enumerate(labels)]  # fmt: skip

    def outputs(self) -> list[Value]:
        """``func``'s outputs (a fresh graph) at the inputs' current data."""
        out: object = self.func(*self.nodes)
        ys = list(out) if isinstance(out, tuple | list) else [out]
        for y in ys:
            if isinstance(getattr(y, "data", None), complex):  # (moved: the domain's edge)
                raise ComplexNumberError(f"{self.where}: func returned {y!r:.80}, of complex .data")
            if isinstance(y, Value) or fits(y):
                raise TypeError(
                    f"{self.where}: func must return a node of {engine_name(self.engine)} "
                    f"(the inputs' engine) or a tuple of them, got {type(out).__name__} {out!r}"
                )
        if not ys:
            raise TypeError(f"{self.where}: func returned an empty {type(out).__name__}")
        return cast("list[Value]", ys)

    def level(self, k: int) -> tuple[list[Value], list[Key]]:
        """The outputs and their keys (``k`` is 1: the only level there is)."""
        ys, inputs = self.outputs(), {id(x) for x in self.nodes}
        again = {id(n) for y in self.outputs() for n in _graph(y) or ()}  # a second call's
        for r, y in enumerate(ys):
            for n in _graph(y) or ():
                if id(n) in again and id(n) not in inputs and inputs & {*map(id, _graph(n) or ())}:
                    raise ValueError(
                        f"{self.where}: out[{r}] holds {n!r:.60}, a node made from the inputs "
                        "that two calls of func share: built before the call (or kept), it does "
                        "not follow their .data, and its .grad carries from one backward() to "
                        "the next; build it inside func"
                    )
        if self.weights is not None and len(self.weights) != len(ys):
            raise ValueError(
                f"{self.where}: grad_outputs has {len(self.weights)} entries "
                f"for {len(ys)} output(s)"
            )
        self.counts.setdefault(k, len(ys))
        return ys, [(j, ()) for j in range(len(ys))]

    def values(self, k: int) -> list[float]:
        """The outputs' values at the inputs' current data."""
        return [float(y.data) for y in self.outputs()]

    def survey(self, fs: Sequence[object], *, fence: bool) -> bool:
        """Whether to run every analytic pass twice; a foreign engine declares no domains.

        Two passes over two graphs of an engine that keeps its parents in a set (micrograd)
        may add the same terms in another order, so they are compared only when the caller
        allows a difference (nondet_tol)."""
        return self.repeat

    def evaluator(self, k: int, i: int) -> Evaluate:
        """The outputs' values as a function of input i's data (None off the domain)."""
        x, name, count, values = self.nodes[i], self.names[i], self.counts.get(k), self.values
        orig = x.data

        def evaluate(t: float) -> list[float] | None:
            try:
                x.data = t
                found = values(k)
            except Exception as exc:  # the edge of the domain, or the user's: named
                if isinstance(exc, DOMAIN_ERRORS):
                    return None
                lv._raise_at_moved_point(exc, self.where, name, orig, t)
            finally:
                x.data = orig
            if count is not None and len(found) != count:
                raise lv.OutputCountError(self.where, count, len(found), name, orig, t)
            return found

        return evaluate

    def moved(self, k: int, step: Sequence[float]) -> list[float] | None:
        """The outputs' values with every input moved by ``step`` (None off the domain)."""
        saved = [x.data for x in self.nodes]
        try:
            for x, orig, s in zip(self.nodes, saved, step, strict=True):
                if s:
                    x.data = orig + s
            return self.values(k)
        except DOMAIN_ERRORS:
            return None
        finally:
            for x, orig in zip(self.nodes, saved, strict=True):
                x.data = orig

    def jacobian(
        self,
        fs: Sequence[Value],
        w: Sequence[float] | None = None,
        preset: list[list[float]] | None = None,
    ) -> list[list[float]]:
        """``rows[r][i] = d out[r] / d inputs[i]`` by ``backward()``, one graph per output
        (``fs``, no pass run on it yet, is the first's), and each graph's spread.

        ``backward()`` starts from 1, where a step that forgets ``out.grad`` at an
        output's top node comes out right: with weights ``w``, each pass starts from
        ``out[r] * w[r]`` and is divided back, where the engine's own ``*`` passes a
        number on exactly (:meth:`_scales`). With ``preset`` (rows of a pass before)
        each input's ``.grad`` starts at :data:`START`, read less it: a step that sets
        ``.grad`` (``=`` for ``+=``) loses it in any order the engine's sort happens to
        take (:func:`keeps`)."""
        rows, spreads = [], []
        for r in range(len(fs)):
            y = cast("Any", fs[0] if r == 0 else self.outputs()[r])
            wr = w[r] if w is not None and self.weighing() else 1.0
            start = [START * wr for _ in preset[r]] if preset is not None else None
            rows.append([g / wr for g in self._backward(y * wr if wr != 1.0 else y, start)])
            spreads.append(self.spread / abs(wr))
        self.spreads = spreads if preset is None else self.spreads
        return rows

    def weighing(self) -> bool:
        """Whether the analytic passes start from weighted outputs (:meth:`jacobian`):
        whether ``node * 1.5`` passes 1.5 back to the node, exactly (tried once)."""
        if self._scaling is None:
            try:
                grads = self._backward(cast("Any", self.nodes[0]) * 1.5)
            except Exception:  # no * with a number, or one that fails: no weights
                grads = [0.0]
            self._scaling = grads[0] == 1.5
        return self._scaling

    def weighted(self, fs: Sequence[Value], w: Sequence[float]) -> list[float]:
        """The gradient of ``sum_r w[r] * out[r]``, from the rows of :meth:`jacobian`
        (each pass weighted, then divided back), summed here rather than with the
        engine's own ``+``, which may be under test."""
        rows = self.jacobian(fs, w)
        return [
            math.fsum(wr * row[i] for wr, row in zip(w, rows, strict=True))
            for i in range(len(self.nodes))
        ]

    def _backward(self, y: EngineNode, start: list[float] | None = None) -> list[float]:
        """One pass: the inputs' .grad set to ``start`` (or 0) and every other node's to 0,
        ``y.backward()``, the inputs' read (less ``start``) and the others' put back (a
        parameter func closes over keeps its own)."""
        inputs = {id(x) for x in self.nodes}
        others = [(n, getattr(n, "grad", None)) for n in _graph(y) or () if id(n) not in inputs]
        start = start or [0.0] * len(self.nodes)
        for x, g in zip(self.nodes, start, strict=True):
            x.grad = g
        for node, grad in others:
            if _is_real(grad):
                node.grad = 0.0  # type: ignore[attr-defined]
        try:
            y.backward()
            self.spread = spread_of(others)  # (while the nodes hold this pass's gradients)
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise DerivativeError(exc) from exc
        except Exception as exc:  # the user's own kind: it goes on, and says where
            exc.add_note(f"{self.where}: raised by the engine's backward() from {y!r:.80}")
            raise
        finally:
            for node, grad in others:
                node.grad = grad  # type: ignore[attr-defined]
        return [
            _number(x.grad, f"{self.where}: inputs[{i}].grad") - g
            for i, (x, g) in enumerate(zip(self.nodes, start, strict=True))
        ]


#: Where a second pass starts each input's ``.grad``: a power of two beyond any gradient
#: (adding terms that cancel onto it rounds to its ulps however large: from the gradient
#: itself, terms of 1e3 rounded beyond those) and below float64's top, ``2**1023``.
START = 2.0**900


def keeps(a: float, b: float) -> bool:
    """Whether a pass from :data:`START` that added ``b`` to it kept the start: a step that
    sets ``.grad`` (``=`` for ``+=``) loses all of it; what rounds is a few of its ulps."""
    return b == a or abs(b - a) <= START / 2.0
