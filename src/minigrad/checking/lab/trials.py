"""Running one check of the battery on a student's engine: a :class:`Row` of plain data.

:func:`run` runs a check of :mod:`minigrad.checking.lab.battery` at random
points, in each of its graphs (:func:`~minigrad.checking.lab.battery.graphs`):
the engine's ``backward()`` against minigrad's reverse mode on the same
graph (its rules are checked against SymPy and numerically; far cheaper
than a numerical derivative, which pays for the graphs), and the forward
against minigrad's. A :class:`Row` is plain data, so that it
crosses a process boundary (the command runs each student's engine in a
process of its own) and goes into a gradebook as JSON.
"""

from __future__ import annotations

import enum
import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from minigrad.checking.lab.battery import METHODS, Check, Graph, chain, graphs, one_line, refused
from minigrad.checking.run.engines import fits
from minigrad.core.grad import grad
from minigrad.core.value import Value

__all__ = ["FAILING", "Outcome", "Row", "run"]


class Outcome(enum.StrEnum):
    """What one check of the battery found; the words every table of ``minigrad check`` prints.

    Decided here, by :func:`run` (:data:`NOTE` by the caller, for a failure it
    does not count); ``minigrad check`` on a rule file gives its rules the
    same words. A member is its word, printed and shown as the word
    (``str(Outcome.FAIL) == "FAIL"``, ``repr(Outcome.FAIL)`` is ``'FAIL'``).
    """

    #: Every point checked agrees.
    OK = "ok"
    #: A derivative (or the forward) differs.
    FAIL = "FAIL"
    #: The engine raised, hung, or returned something that is not its node.
    ERROR = "ERROR"
    #: An optional form the engine refuses: not checked.
    SKIP = "skip"
    #: A failure the caller does not count (the deep chain's RecursionError
    #: unless depth was asked for).
    NOTE = "note"

    def __repr__(self) -> str:
        return repr(self.value)


#: The outcomes that fail a check (and the engine that has one).
FAILING = frozenset({Outcome.FAIL, Outcome.ERROR})


@dataclass
class Row:
    """What one check found: plain data (see :meth:`as_dict`).

    Attributes:
        name: The check's name.
        kind: The check's kind.
        verdict: An :class:`Outcome`: ``"ok"``, ``"FAIL"``, ``"ERROR"`` (it raised or hung),
            ``"skip"`` (an optional form the engine refuses) or ``"note"``
            (set by the caller: a failure it does not count, the deep
            chain's RecursionError unless depth was asked for).
        operands: The names of the inputs and constants, as in ``point``.
        point: The failing point (or the last one checked): the inputs, then
            the constants.
        entries: One per graph and input where the derivative differs:
            ``graph`` (its label), ``operand``, ``role``, ``expected``
            (minigrad's), ``got`` (the engine's), ``abs`` and ``rel``.
        where: ``{label: the graph at its point}`` for each graph that
            failed or raised.
        forward: When the forward differs from minigrad's: ``got`` and ``expected``.
        note: Why, in words (an exception on one line, a time limit, a depth).
        ops: The op symbols of the engine's graph (``_op`` through ``_prev``),
            when the engine has them.
        depth: For the deep chain: the depth where ``backward()`` first
            raised RecursionError (0 when it did not).
        first_pass, replaces: For ``backward()`` twice: whether the first
            pass was right; whether the second replaced ``.grad``.
        seed: The output's ``.grad`` after ``backward()`` (None: none ran).
        weight: The weight ``w`` of the ``weighted`` graph at ``point``.
        raised_in: The engine's op it raised in (```*`'s `_backward```).
    """

    name: str
    kind: str
    verdict: Outcome = Outcome.OK
    operands: list[str] = field(default_factory=list)
    point: list[float] = field(default_factory=list)
    entries: list[dict[str, object]] = field(default_factory=list)
    forward: dict[str, float] | None = None
    note: str = ""
    ops: list[str] = field(default_factory=list)
    depth: int = 0
    first_pass: bool = True
    replaces: bool = False
    where: dict[str, str] = field(default_factory=dict)
    seed: float | None = None
    raised_in: str = ""
    weight: float = 0.0

    def __post_init__(self) -> None:
        # A row read back from JSON holds the word; the row holds the member.
        self.verdict = Outcome(self.verdict)

    def as_dict(self) -> dict[str, object]:
        """The row as a dict of JSON types (floats may be NaN or inf)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Row:
        """The row :meth:`as_dict` gave."""
        return cls(**data)  # type: ignore[arg-type]


#: How close the engine's forward must be to minigrad's (relative; ops in
#: another but equally good float formula differ by a few ulps).
_FORWARD_RTOL = 1e-9


def _close(got: float, expected: float, rtol: float) -> bool:
    return abs(got - expected) <= rtol * max(1.0, abs(expected))


#: The dunder a node of the engine was made in -> the op's symbol.
_DUNDERS = {"__neg__": "neg", "__abs__": "abs"} | {
    f"__{r}{name}__": symbol
    for symbol, name in (("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "truediv"), ("**", "pow"))
    for r in ("", "r")
}


def _op_of(qualname: object) -> str:
    """The op of a method's qualified name: ``*`` for ``Value.__mul__`` and what it defines."""
    parts = qualname.split(".") if isinstance(qualname, str) else []
    method = parts[parts.index("<locals>") - 1] if "<locals>" in parts[1:] else parts[-1]
    return _DUNDERS.get(method, method if method in METHODS and len(parts) > 1 else "")


def _raised_in(exc: BaseException) -> str:
    """The engine's op the innermost frame of ``exc`` that belongs to one is in, in words."""
    found, tb = "", exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if op := _op_of(code.co_qualname):
            found = f"`{op}`'s `{code.co_name}`" if code.co_name == "_backward" else f"`{op}`"
        tb = tb.tb_next
    return found


def _ops(out: object) -> list[str]:
    """The op symbols in the engine's graph of ``out``.

    Read from micrograd's ``_op`` through ``_prev``; where a node has no
    ``_op``, from the method its ``_backward`` closure was defined in
    (``*`` for ``Value.__mul__.<locals>._backward``).
    """
    found = set()
    for node in _graph(out) or ():
        op, made_in = (
            getattr(node, "_op", ""),
            str(getattr(getattr(node, "_backward", 0), "__qualname__", "")),
        )
        if not (isinstance(op, str) and op):
            op = _op_of(made_in) if "<locals>" in made_in else ""
        found.add(op)
    return sorted(found - {""})


def _entry(graph: Graph, check: Check, i: int, expected: float, got: float) -> dict[str, object]:
    diff, n = abs(got - expected), len(check.operands)
    role = check.roles[i % n] if i % n < len(check.roles) else check.operands[i % n]
    return {
        "graph": graph.label,
        "operand": graph.leaves[i],
        "role": role if i < n else f"{role} of the second node",
        "expected": expected,
        "got": got,
        "abs": diff if math.isfinite(diff) else math.inf,
        "rel": diff / abs(expected) if expected else math.inf if diff else 0.0,
    }


def run(check: Check, cls: type, *, points: int = 3, seed: int = 0) -> Row:
    """Run ``check`` on the engine ``cls`` at ``points`` random points; the first failure.

    Args:
        check: One of :func:`battery`'s checks.
        cls: The engine's node class.
        points: How many points to draw (the first failing one is reported,
            with every graph that fails there); at least one on each piece
            of a domain cut by a kink or a pole.
        seed: Seeds the points; each check draws its own, so a check's points
            do not depend on which checks ran before it.

    Returns:
        The :class:`Row` (``"ERROR"`` when the engine raised: its exception on one line).

    Example:
        >>> from minigrad.checking.lab.battery import battery
        >>> checks, _ = battery(Value)
        >>> run(checks[1], Value).verdict
        'ok'
    """
    rng = random.Random(f"{seed}:{check.name}")
    row = Row(check.name, check.kind, operands=[*check.operands, *check.constants])
    try:
        if check.kind == "depth":
            _run_chain(check, cls, row, rng)
        elif check.kind == "twice":
            _run_twice(check, cls, row, rng)
        else:
            shapes = graphs(check)
            for k in range(check.points(points)):
                if not _run_point(check, shapes, cls, row, rng, k):
                    break
    except Exception as exc:  # RecursionError included
        said = "" if isinstance(exc, RecursionError) else "it raises "
        at = (
            f"in {[*row.where.values()][-1]}"
            if row.where
            else f"at ({_at(row.operands, row.point)})"
        )
        row.verdict, row.note = Outcome.ERROR, f"{said}{one_line(exc)} {at}"
        row.raised_in = _raised_in(exc)
    return row


def _at(names: Sequence[str], point: Sequence[float]) -> str:
    return ", ".join(f"{n}={x:.6g}" for n, x in zip(names, point, strict=False))


#: How close the engine's gradient must be to minigrad's: two right formulas
#: differ by rounding, a few ulps of the terms they add.
_GRAD_RTOL = 1e-8


def _run_point(
    check: Check, shapes: list[Graph], cls: type, row: Row, rng: random.Random, k: int
) -> bool:
    """Check point ``k`` in every graph of ``shapes``; False once the row has failed."""
    n = len(check.operands)
    point, twin = check.draw(rng, k), check.draw(rng, k)[:n]
    weight = rng.choice((-1.0, 1.0)) * rng.uniform(1.5, 3.0)
    row.point, row.weight = list(point), weight
    consts = point[n:]
    for shape in shapes:
        xs = [*point[:n], *twin][: len(shape.leaves)]
        values = [Value(x) for x in xs]
        try:
            reference = shape.build(values, consts, weight)
        except (ArithmeticError, ValueError):  # outside the op's domain: x ** x at x < 0
            continue
        assert isinstance(reference, Value)  # minigrad's own ops on minigrad's Values
        w = [weight] if shape.label == "weighted" else []
        at = _at([*shape.leaves, *check.constants, "w"], [*xs, *consts, *w])
        row.where[shape.label] = f"{shape.expression} at {at}"
        nodes = [cls(x) for x in xs]
        alone = shape.label == "alone"
        try:
            out = shape.build(nodes, consts, weight)
        except Exception as exc:
            if not (alone and check.optional and refused(exc)):
                raise
            row.verdict, row.note = Outcome.SKIP, f"not supported: it raises {one_line(exc)}"
            return False
        if alone and not _fits_forward(out, cls, reference, row):
            return False
        out.backward()  # type: ignore[attr-defined]
        if alone:
            row.seed = float(out.grad or 0.0)  # type: ignore[attr-defined]
        got = [float(node.grad or 0.0) for node in nodes]
        expected = [g.data for g in grad(reference, values)]
        if not _wrong(row, check, expected, got, shape):
            row.where.pop(shape.label)
    return row.verdict is Outcome.OK


def _fits_forward(out: object, cls: type, reference: Value, row: Row) -> bool:
    """Whether ``out`` is a node of the engine whose forward is minigrad's; if not, the row says."""
    if fits(out) or (isinstance(out, Value) and cls is not Value):
        row.verdict = Outcome.ERROR
        row.note = f"it returns {type(out).__name__} {out!r}, not a node of the engine"
        return False
    got = float(out.data)  # type: ignore[attr-defined]
    row.ops = _ops(out)
    if _close(got, reference.data, _FORWARD_RTOL):
        return True
    row.verdict = Outcome.FAIL
    row.forward = {"got": got, "expected": reference.data}
    return False


def _grads(check: Check, leaves: list[object], zero: bool = True) -> tuple[list[float], object]:
    """A pass on a fresh graph of ``leaves`` (``.grad`` zeroed if ``zero``): ``.grad``, output."""
    for leaf in leaves if zero else ():
        leaf.grad = 0.0  # type: ignore[attr-defined]
    out = check.build(*leaves)
    out.backward()  # type: ignore[attr-defined]
    return [float(leaf.grad or 0.0) for leaf in leaves], out  # type: ignore[attr-defined]


def _run_twice(check: Check, cls: type, row: Row, rng: random.Random) -> None:
    """A pass, a second one that must add to it, a third on a graph built on the second's output.

    The second, on a fresh graph of the same leaves, their ``.grad`` as the
    first left it, must double it: the gradient once means that it zeroes
    or assigns first. The third, every ``.grad`` zeroed, shows a visited set
    kept between calls (``visited=set()``): it holds that output, and skips
    it; on fresh nodes only the leaves, which have no ``_backward``, are in it.
    """
    point = check.draw(rng, 0)
    row.point = list(point)
    values = [Value(x) for x in point]
    reference = check.build(*values)
    assert isinstance(reference, Value)
    expected = [g.data for g in grad(reference, values)]
    leaves = [cls(x) for x in point]
    got, out = _grads(check, leaves)
    row.seed = float(out.grad or 0.0)  # type: ignore[attr-defined]
    if _wrong(row, check, expected, got):
        row.first_pass = False
        return
    got, out = _grads(check, leaves, zero=False)
    if _wrong(row, check, [2 * e for e in expected], got):
        row.replaces = all(_close(g, e, _GRAD_RTOL) for g, e in zip(got, expected, strict=True))
        row.note = "the first backward() was right; the second, on a new graph of the same " + (
            "leaves, left their .grad at its own gradient instead of adding it to the first one's"
            if row.replaces
            else "leaves, did not add its gradient to the first one's"
        )
        return
    nodes = _graph(out)
    if nodes is None:  # no _prev: its nodes' .grad cannot be zeroed
        return
    for node in nodes:
        node.grad = 0.0  # type: ignore[attr-defined]
    on_top = out + leaves[0]
    on_top.backward()
    got = [float(leaf.grad or 0.0) for leaf in leaves]
    expected = [g.data for g in grad(reference + values[0], values)]
    if _wrong(row, check, expected, got):
        row.note = (
            "the first two backward() calls were right; a third, on a graph built on the "
            "second one's output (every .grad zeroed), was not"
        )


def _wrong(
    row: Row, check: Check, expected: list[float], got: list[float], shape: Graph | None = None
) -> bool:
    """Whether ``got`` differs from ``expected`` (in ``shape``, else alone); the row says where."""
    pairs = enumerate(zip(expected, got, strict=True))
    bad = [
        _entry(shape or graphs(check)[0], check, i, e, g)
        for i, (e, g) in pairs
        if not _close(g, e, _GRAD_RTOL)
    ]
    row.entries += bad
    row.verdict = Outcome.FAIL if bad else row.verdict
    return bool(bad)


def _graph(out: object) -> list[object] | None:
    """Every node of the engine's graph of ``out`` (through ``_prev``); None without ``_prev``."""
    found: dict[int, object] = {}
    stack = [out]
    while stack:
        node = stack.pop()
        if id(node) in found:
            continue
        found[id(node)] = node
        parents = getattr(node, "_prev", None)
        if not isinstance(parents, set | frozenset | tuple | list):
            return None
        stack.extend(parents)
    return list(found.values())


def _run_chain(check: Check, cls: type, row: Row, rng: random.Random) -> None:
    """The deep chain; on RecursionError, the depth where it starts (by bisection)."""
    depth = int(check.name.split()[2])
    x0 = check.draw(rng, 0)[0]
    row.point = [x0]

    def backward_at(n: int) -> float:
        x = cls(x0)
        y = chain(x, n)
        x.grad = 0.0
        y.backward()  # type: ignore[attr-defined]
        return float(x.grad or 0.0)

    try:
        got = backward_at(depth)
    except RecursionError:
        works, fails = 0, depth
        while fails - works > 1:
            mid = (works + fails) // 2
            try:
                backward_at(mid)
                works = mid
            except RecursionError:
                fails = mid
        row.verdict, row.depth = Outcome.FAIL, fails
        row.note = f"RecursionError at depth {fails}"
        return
    _wrong(row, check, [1.0], [got])
