"""Fault localisation: the op whose own rule is wrong.

A failing entry has already survived extrapolation
(:mod:`minigrad.checking.numeric`): its best numerical estimate, error bound
included, disagrees with reverse mode, and the function has a derivative
there (the estimator looked). What is left to say is
which op's own rule disagrees with a numerical derivative of its own
forward (:func:`find_fault`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from functools import partial

from minigrad.checking.numeric.estimate import MODEL_ROUNDOFF
from minigrad.checking.run.engines import ForeignLevels, _graph
from minigrad.checking.run.report import Entry, Report
from minigrad.checking.run.table import apart
from minigrad.checking.verdicts.decide import SUBGRADIENT, WRONG, Cause
from minigrad.core.closure import Closure, _noop, misbehaviour, run_step
from minigrad.core.rule import OWN, Rule
from minigrad.core.value import Value, toposort

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["faulty_node", "find_fault", "foreign_fault"]

# How many distinct op nodes fault localisation examines at most.
_MAX_LOCALIZE = 500


#: Runs a check of one rule at its recorded arguments: (function, inputs, order).
RunCheck = Callable[[Callable[..., Value], list[Value], int], Report]


def find_fault(outputs: Sequence[Value], k: int, run: RunCheck) -> str:
    """Name the first op (in evaluation order) whose own rule fails order k.

    Each distinct (rule, arguments) of the graph is checked on its own, as a
    function of its Value arguments with the constants fixed.
    """
    return faulty_node(outputs, k, run)[0]


def faulty_node(
    outputs: Sequence[Value], k: int, run: RunCheck, failures: Sequence[Entry] = ()
) -> tuple[str, Value | None]:
    """:func:`find_fault`'s words, and the node whose rule is wrong (None if none).

    ``failures``, the check's: where every analytic value is minus its numerical one,
    that is worth saying of a closure's fault; where each is at a kink of the function,
    the ops whose own points are kinks of theirs (relu at 0) are named: where several
    meet, each op's one value there (relu's 0, a subgradient of its own) composes to a
    value outside the function's one-sided slopes, and no rule need be wrong.
    """
    flipped = bool(failures) and all(
        e.numerical != 0.0 and abs(e.analytic + e.numerical) <= 1e-6 * abs(e.numerical)
        for e in failures
    )
    kinked = bool(failures) and all(e.cause is Cause.KINK for e in failures)
    bent: dict[str, None] = {}  # ops whose own check found a kink at their point
    seen: set[tuple[int, tuple[float, ...]]] = set()
    closures: dict[str, None] = {}
    unset: dict[str, None] = {}  # closures whose _backward was never assigned
    kinks: set[str] = set()  # closures at their own kink (relu at 0)
    nodes = [n for n in reversed(toposort(outputs)) if n.rule is not None]
    # The user's rules and closures first; minigrad's own rules (swept against SymPy) after,
    # and only where no closure is left to name: in an MLP of 105 parameters, 500 checks of
    # built-in ops took 50 s and stopped before the closure that was wrong.
    for own in (False, True):
        for node in nodes if not (own and closures) else []:
            rule = node.rule
            if rule is None or (OWN.get(rule) is rule.partials) is not own:
                continue
            if type(rule) is Closure:
                # A closure has no forward to check it against; what it does
                # that no chain-rule step does is seen exactly, at its point.
                try:
                    problem = _strays(node, rule) or rule.misbehaviour()
                except Exception as exc:  # the user's closure raised: named, as backward() does
                    problem = f"its _backward raised {type(exc).__name__}: {exc}"
                xs, unassigned = [c.data for c in node._a], rule.step is _noop
                slope = _known_slope(rule.name, xs, node.data, rule.local_partials, unassigned)
                if problem := problem or slope or "":
                    return f"op {rule.name!r}{_labelled(node)}: {problem}", None
                closures[rule.name or "(unnamed)"] = None
                if (sides := _kink(rule.name, xs, node.data)) is not None:
                    (adds,) = rule.local_partials()  # at its own kink: a subgradient is right
                    if not sides[0] <= adds <= sides[1]:
                        return (
                            f"op {rule.name!r}{_labelled(node)}: its value is {rule.name} of "
                            f"its child at {xs[0] + 0.0:g}, its kink, where a subgradient lies "
                            f"between the slopes {sides[0]:g} and {sides[1]:g}, but its "
                            f"_backward adds {adds:.6g} per unit of out.grad"
                        ), None
                    kinks.add(rule.name)
                    bent[f"{rule.name!r} at ({xs[0] + 0.0:g})"] = None
                if rule.step is _noop:
                    unset[rule.name or "(unnamed)"] = None
                continue
            args = node.args
            key = (id(rule), tuple(map(_data, args)))
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > _MAX_LOCALIZE:
                return f"not found among the first {_MAX_LOCALIZE} ops", None
            report = _check_rule(rule, args, k, run)
            if report is not None and not report.ok:
                wrong = any(e.verdict == WRONG for e in report.failures)
                return _describe(node, rule, args, report), node if wrong else None
            if report is not None and any(e.verdict == SUBGRADIENT for e in report.entries):
                bent[f"{rule.name!r} at ({_shown(args)})"] = None
    meet = (
        "the chain rule composes each op's one value at its own kink (relu's 0 at 0, a "
        "subgradient of its own), and where such kinks meet, that need not lie between the "
        "function's one-sided slopes"
    )
    if bent and closures.keys() <= kinks:  # (every closure a relu at 0, if any)
        ops = ", ".join(bent)
        if not kinked:  # the function is smooth here: kinks meeting, or a value read
            return (
                f"every op's own rule agrees with a numerical derivative of its forward, and "
                f"ops are at kinks of their own ({ops}): {meet}; or the derivative is lost "
                "between the ops (does func read .data, or call float() on a Value?)"
            ), None
        return f"no op's own rule is wrong, but ops are at kinks of their own ({ops}): {meet}", None
    if unset and unset.keys() == closures.keys() and not kinked:
        return f"{_never(unset)} (every other op agrees with its numerical derivative here)", None
    if closures:
        names = ", ".join(repr(name) for name in closures)
        which = f"op {names}" if len(closures) == 1 else f"one of the ops {names}"
        return (
            f"{which}, written as a _backward closure: every rule of yours agrees with a "
            "numerical derivative of its forward here (minigrad's own are swept against "
            "SymPy), so the closure adds the wrong local partial"
            + (
                ": the analytic derivative is minus the numerical one, so its sign is flipped "
                "(-= for +=, or a minus lost)"
                if flipped
                else " (a sign, a factor, or the derivative of another function)"
            )
            + (f"; or, at this kink of the function, none is wrong and {meet}" if kinked else "")
            + (f"; {_never(unset)}" if unset else "")
        ), None
    return (
        "every op's own rule agrees with a numerical derivative of its forward at its "
        "inputs, so the derivative is lost between the ops: does func read .data, call "
        "float() on a Value, or use a value computed outside minigrad?"
    ), None


def foreign_fault(levels: ForeignLevels, failures: Sequence[Entry]) -> str:
    """Why a foreign engine's check fails: :func:`_unweighted`, else a node (micrograd's
    kind: ``_prev``, ``_op``, ``_backward``) whose step, run on its own, misbehaves
    (:func:`~minigrad.core.closure.misbehaviour`) or adds other than the slopes of the
    lecture's op its value is of its children's (:func:`_known_slope`), named as a closure of
    minigrad's is. Where every step adds its op's slopes, the pass that runs them is at fault
    (``failures`` tell how); ``""`` where no ``_prev`` is kept."""
    if not failures:
        return ""
    if plain := _unweighted(levels, failures[0]):
        return plain
    outputs = levels.outputs()
    seen: set[int] = set()
    told = True  # every node's op told by its value, and its step right
    nodes: list[Any] = [n for y in outputs for n in _graph(y) or ()]
    for node in nodes:
        kids: list[Any] = list(getattr(node, "_prev", ()))
        step = getattr(node, "_backward", None)
        if not kids or not callable(step) or id(node) in seen:
            continue
        seen.add(id(node))
        name = str(getattr(node, "_op", "") or "")
        try:
            problem = misbehaviour(partial(run_step, node, kids, step))
        except Exception as exc:  # the user's step raised: named, as backward() does
            problem = f"its _backward raised {type(exc).__name__}: {exc}"
        # A set of parents has no order: an op of two is tried both ways (a - b, b - a).
        ways = [kids, kids[::-1]] if isinstance(node._prev, set | frozenset) else [kids]
        seen_as: list[str | None] = []  # per order, what its value tells of its step
        for order in ways if len({id(k) for k in kids}) == len(kids) and not problem else ():
            xs, local = [float(k.data) for k in order], partial(run_step, node, order, step)
            seen_as.append(_known_slope(name, xs, float(node.data), local, False))
            if problem := seen_as[-1] or "":
                break
        told = told and "" in seen_as
        if problem:
            return f"op {name!r} (a node of value {float(node.data):.6g}): {problem}"
    if not (told and seen and failures):
        return ""
    if all(e.analytic == 0.0 for e in failures):
        how = "every input's gradient is 0: does it set the output's own .grad to 1 first?"
    elif any(e.cause is Cause.CLOSURE for e in failures):
        how = "it does not add to .grad already there: does it set every .grad to 0 first? "
        how += "(that is the training loop's zero_grad(), before backward())"
    else:
        how = "does it run each node's _backward after those of every node that uses it?"
    return (
        "every op's _backward, run on its own, adds its op's slopes here, so backward(), which "
        f"runs them, is at fault: {how}"
    )


def _unweighted(levels: ForeignLevels, worst: Entry) -> str:
    """Where a foreign engine's ``backward()`` from the output itself (an upstream
    gradient of 1) agrees with the numbers and the weighted pass does not: why."""
    if worst.output < 0 or not levels.weighing():
        return ""
    try:
        plain = levels.jacobian(levels.outputs())[worst.output][worst.wrt]
    except Exception:  # the pass fails by itself: the entry says so already
        return ""
    if not abs(plain - worst.numerical) <= worst.allowed:  # the entry's own bound
        return ""
    return (
        f"backward() from out[{worst.output}] itself gives {plain:.10g}, which agrees; the "
        "checker's pass starts from out * w (a random w, divided back out) and does not: "
        "a _backward that ignores out.grad (+= partial, not += partial * out.grad) "
        "comes out right only where out.grad is 1"
    )


#: The lecture's ops, told by a closure's value: each forward of its children's values and
#: its slopes there (by the children, and the op's own value ``o``). A closure whose value
#: is one of them alone, to ``MODEL_ROUNDOFF`` of itself (64 ulps), has that op's slopes,
#: which what its ``_backward`` adds is held to (``1e-8`` of them: two ways to write one
#: slope round apart by ulps). None at a kink (relu at 0) or off a domain.
_ONE: dict[str, tuple[Callable[[float], float], Callable[[float, float], float]]] = {
    "tanh": (math.tanh, lambda x, o: 1.0 - o * o),
    "exp": (math.exp, lambda x, o: o),
    "relu": (lambda x: max(x, 0.0), lambda x, o: 1.0 if x > 0.0 else 0.0),
    "sigmoid": (lambda x: 1.0 / (1.0 + math.exp(-x)), lambda x, o: o * (1.0 - o)),
    "log": (lambda x: math.log(x) if x > 0.0 else math.nan, lambda x, o: 1.0 / x),
    "-x": (lambda x: -x, lambda x, o: -1.0),
}
_TWO: dict[str, tuple[Callable[[float, float], float], Callable[[float, float], list[float]]]] = {
    "a + b": (lambda a, b: a + b, lambda a, b: [1.0, 1.0]),
    "a * b": (lambda a, b: a * b, lambda a, b: [b, a]),
    "a - b": (lambda a, b: a - b, lambda a, b: [1.0, -1.0]),
    "a / b": (lambda a, b: a / b if b else math.nan, lambda a, b: [1.0 / b, -a / (b * b)]),
}
#: Those with a kink: where, and its one-sided slopes, between which a subgradient lies.
_KINKS = {"relu": (0.0, (0.0, 1.0))}


def _kink(op: str, xs: list[float], o: float) -> tuple[float, float] | None:
    """The one-sided slopes where a closure named as one of :data:`_KINKS` has the value
    that op has at its kink, of its one child there; else None."""
    found = _KINKS.get(op.lower())
    if found is None or xs != [found[0]] or _ONE[op.lower()][0](xs[0]) != o:
        return None
    return found[1]


#: What micrograd (and the lecture) name those ops.
_NAMES = {"relu": ("relu",), "-x": ("neg", "-"), "a + b": ("+",), "a * b": ("*",),
          "a - b": ("-",), "a / b": ("/",)}  # fmt: skip


def _known_slope(
    op: str, xs: list[float], o: float, local: Callable[[], list[float]], unset: bool
) -> str | None:
    """Where a closure's value ``o`` is one of the lecture's ops (:data:`_ONE`, :data:`_TWO`,
    ``**k`` by its name ``op``) of its children's ``xs``, and what its step adds (``local``)
    differs from that op's slopes: which op, and what it adds against what it should; ``""``
    where it adds them, None where no one op is told. ``unset``: its ``_backward`` is still
    micrograd's default."""
    found: list[tuple[str, list[float]]] = []
    if len(xs) == 1:
        x, ops = xs[0], dict(_ONE)
        with contextlib.suppress(ValueError):  # micrograd names x ** k "**k"
            k = float(op[2:]) if op.startswith("**") else math.nan
            if math.isfinite(k):
                ops[op] = (partial(_power, k), partial(_power_slope, k))
        for name, (f, slope) in ops.items():
            with contextlib.suppress(ArithmeticError, ValueError, TypeError):
                if abs(f(x) - o) <= MODEL_ROUNDOFF * abs(o) and _kink(name, [x], o) is None:
                    found.append((name, [slope(x, o)]))
    elif len(xs) == 2:
        for name, (g, slopes) in _TWO.items():
            with contextlib.suppress(ArithmeticError, ValueError, TypeError):
                if abs(g(*xs) - o) <= MODEL_ROUNDOFF * abs(o):
                    found.append((name, slopes(*xs)))
    named = [(n, s) for n, s in found if op.lower() in _NAMES.get(n, (n,))]
    if len({tuple(s) for _, s in found}) > 1 and len(named) == 1:
        found = named  # several (tanh and sigmoid at asinh(1)): its name tells them apart
    if len({tuple(s) for _, s in found}) != 1:
        return None  # no op, or several with other slopes: not told
    name, want = found[0]
    try:
        got = local()
    except Exception:  # the user's closure raised: misbehaviour says so
        return None
    off = [
        (i, a, w)
        for i, (a, w) in enumerate(zip(got, want, strict=True))
        if not abs(a - w) <= 1e-8 * max(abs(a), abs(w))
    ]
    if not off:
        return ""
    i, a, w = off[0]
    at = ", ".join(f"{x:.6g}" for x in xs)
    flipped = abs(a + w) <= 1e-8 * abs(w)
    return (
        f"its value is {name} of its children ({at}), whose slope by child {i} is {w:.6g}, "
        + (
            f"but it has no _backward: {_UNSET}"
            if unset
            else f"but its _backward adds {a:.6g} per unit of out.grad"
        )
        + (": its sign is flipped (-= for +=, or a minus lost)" if flipped else "")
    )


def _never(names: dict[str, None]) -> str:
    """Words for closures whose ``_backward`` is still micrograd's default, a no-op."""
    which = ", ".join(repr(name) for name in names)
    return (
        f"op {which} has no _backward: {_UNSET}"
        if len(names) == 1
        else (f"ops {which} have no _backward (`out._backward = _backward` never assigned)")
    )


#: What a closure whose ``_backward`` was never assigned does (micrograd's default step).
_UNSET = "`out._backward = _backward` was never assigned, so backward() passes nothing through it"


def _power(k: float, x: float) -> float:
    return float(x**k)


def _power_slope(k: float, x: float, o: float) -> float:
    return float(k * x ** (k - 1))


def _data(a: Value | float) -> float:
    return a.data if isinstance(a, Value) else a


def _shown(args: Sequence[Value | float]) -> str:
    return ", ".join(repr(_data(a)) for a in args)


def _strays(node: Value, rule: Closure) -> str:
    """Where a closure's step adds to the ``.grad`` of a Value its closure holds that is not
    one of its children (a loop's last Value, a child left out of ``Value(data, (a,), op)``),
    or to its own node's (a step assigned to a child): which, in words; else ``""``. Run with
    ``out.grad = 1`` and 1 in each such Value's ``.grad`` (a loop's last ``out`` is read);
    one the step only reads (a side graph's value, a constant) is no stray."""
    kids = {id(c) for c in node._a}
    code, cells = getattr(rule.step, "__code__", None), getattr(rule.step, "__closure__", None)
    held = {
        id(cell.cell_contents): (name, cell.cell_contents)
        for name, cell in zip(code.co_freevars if code else (), cells or (), strict=False)
        if _value_in(cell) and id(cell.cell_contents) not in kids
    }
    held.setdefault(id(node), ("itself", node))
    saved = [(v, v._grad) for _, v in held.values()]
    try:
        for v, _ in saved:
            v._grad = 1.0
        rule.step()
        moved = [name for name, v in held.values() if v._grad != 1.0]
    finally:
        for v, g in saved:
            v._grad = g
    if not moved:
        return ""
    return (
        f"its _backward adds to the .grad of {', '.join(moved[:3])}, not among its "
        "children: backward() runs a node's step for its children alone, so every Value the "
        "step adds to must be one (Value(data, (a, b), op)); a _backward made in a loop must "
        "bind the loop's Values (def _backward(a=a, b=b)), and it is assigned to out, not a child"
    )


def _value_in(cell: object) -> bool:
    """Whether a closure cell holds a Value (an empty cell holds nothing)."""
    try:
        return isinstance(cell.cell_contents, Value)  # type: ignore[attr-defined]
    except ValueError:
        return False


def _labelled(node: Value) -> str:
    return f" (label {node.label!r})" if node.label else ""


def _check_rule(
    rule: Rule, args: tuple[Value | float, ...], k: int, run: RunCheck
) -> Report | None:
    """Check one rule up to order k at the node's recorded arguments."""
    places = [i for i, a in enumerate(args) if isinstance(a, Value)]
    if not places:
        return None
    fixed = [_data(a) for a in args]

    def local(*vs: Value) -> Value:
        full: list[Value | float] = list(fixed)
        for i, v in zip(places, vs, strict=True):
            full[i] = v
        return rule(*full)

    return run(local, [Value(fixed[i]) for i in places], k)


def _describe(node: Value, rule: Rule, args: tuple[Value | float, ...], report: Report) -> str:
    shown = _shown(args)
    label = _labelled(node)
    places = [i for i, a in enumerate(args) if isinstance(a, Value)]
    worst = report.failures[0]
    if worst.note:
        return f"op {rule.name!r}{label} at ({shown}): {worst.note}"
    wrt = ", ".join(f"arg {places[i]}" for i in (*worst.path, worst.wrt))
    by_rule, by_forward = apart(worst.analytic, worst.numerical)
    return (
        f"op {rule.name!r}{label} at ({shown}): its order-{worst.order} derivative with "
        f"respect to {wrt} is {by_rule} by its rule but {by_forward} "
        "by a numerical derivative of its forward"
    )
