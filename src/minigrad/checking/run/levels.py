"""The functions a check compares, level by level, and their values at moved inputs.

Level 1 is ``func``'s outputs; level k + 1 is every analytic derivative of every level-k
function by every input, built with ``grad(..., create_graph=True)`` (above level 1 with
``grad_outputs`` v, ``sum_j v_j * out_j`` stands for the outputs). A check of order n
compares, at each level up to n, the analytic side with a numerical derivative of the
level's values (:meth:`Levels.evaluator`: as a function of one input's ``.data``).

The analytic side comes in two modes: reverse (``"rev"``, :func:`derivatives`: a pass per
function of the level) and forward (``"fwd"``, :func:`forward_jacobian`: a pass per input,
the jvp with the unit tangent). Levels are built by reverse mode, so forward mode at level
k + 1 is forward over reverse: the jvp of the level-k gradients (``check_fwd_over_rev``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

from minigrad.checking.numeric.estimate import Evaluate
from minigrad.checking.numeric.rounding import hidden
from minigrad.checking.run.tape import Tape, has_closure, recording, shows
from minigrad.core import closure
from minigrad.core._validate import compiled_refusal
from minigrad.core.forward import Tangents
from minigrad.core.grad import grad
from minigrad.core.rule import OWN, Rule
from minigrad.core.value import Value, toposort

# typing costs an import and is needed only by mypy (see core/value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = [
    "DerivativeError",
    "Func",
    "Levels",
    "OutputCountError",
    "derivatives",
    "forward_directional",
    "forward_jacobian",
]

#: What a checked function may return: a Value or a sequence of Values.
Func = Callable[..., "Value | Sequence[Value]"]

#: Which function of a level an entry is: (output index or -1, the inputs
#: already differentiated by).
Key = tuple[int, tuple[int, ...]]

# Errors that mean "outside the domain" at a moved input (log of a negative, 0 ** -1, overflow).
DOMAIN_ERRORS = (ArithmeticError, ValueError)


class OutputCountError(ValueError):
    """``func`` returned a different number of outputs at a moved input.

    Attributes:
        before: How many values the level has at the inputs.
        after: How many at the moved input.
    """

    def __init__(
        self, where: str, before: int, after: int, name: str, orig: float, moved: float
    ) -> None:
        at = (
            f"with input {name} moved by {moved - orig:+.3g} (to {moved!r})"
            if name != "every input"
            else "with every input moved at once"
        )
        super().__init__(
            f"{where}: the number of outputs changed from {before} to {after} {at}: func "
            "must return as many outputs at every point near the inputs"
        )
        self.before = before
        self.after = after


def _raise_at_moved_point(
    exc: BaseException, where: str, name: str, orig: float, moved: float, at: str = ""
) -> NoReturn:
    """Raise the user's exception again, of its own type, saying at which moved point
    (and which op, from the notes): the original is chained as ``__cause__``, its
    fields copied; a type not made from a message alone gets a note, raised itself."""
    at = at or (
        f"input {name} moved by {moved - orig:+.3g} (to {moved!r}, from {orig!r})"
        if name != "every input"
        else "every input moved at once along a random direction (fast mode)"
    )
    notes = "".join(f" ({note})" for note in getattr(exc, "__notes__", ()))  # the op's name
    message = (
        f"{where}: func raised {type(exc).__name__}: {exc}{notes} at a moved point: {at}; the "
        "check moves each input by a small step, so func must be defined around the inputs"
    )
    try:
        made = type(exc)(message)
    except Exception:  # a constructor that wants more than a message
        made = None
    if made is None or message not in str(made):
        exc.add_note(message)
        raise exc
    made.__dict__.update(getattr(exc, "__dict__", {}))
    raise made from exc


class DerivativeError(Exception):
    """Building a derivative raised: a partial failed (on floats or Values) or gave NaN.

    ``mode`` says which mode was computing it: ``"rev"`` or ``"fwd"``.
    """

    def __init__(self, exc: Exception, mode: str = "rev") -> None:
        super().__init__(str(exc))
        self.exc = exc
        self.mode = mode


def derivatives(
    f: Value, xs: Sequence[Value], create_graph: bool, weight: float = 1.0
) -> tuple[Value, ...]:
    """``grad(f, xs)``, a failing partial turned into :class:`DerivativeError`. Through a
    ``_backward`` closure (first order only) the pass is seeded with ``weight`` (random, never
    1) and divided by it again: one that forgets ``* out.grad`` is right under a gradient of 1,
    as ``func = my_op(x)`` gives it, not under a weight."""
    try:
        if not create_graph and weight != 1.0 and has_closure([f]):
            scaled = grad(f, xs, [weight])
            return tuple(Value(g._data / weight) for g in scaled)
        return grad(f, xs, create_graph=create_graph)
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise DerivativeError(exc) from exc


def forward_jacobian(
    fs: Sequence[Value], xs: Sequence[Value], create_graph: bool
) -> list[list[float]]:
    """``rows[r][i] = d fs[r] / d xs[i]`` by forward mode (column i: the jvp along e_i), with
    ``create_graph`` on Values (their data); a failing partial becomes :class:`DerivativeError`."""
    try:
        push = Tangents(fs, xs)
        unit = [0.0] * len(xs)
        columns: list[list[float]] = []
        for i in range(len(xs)):
            unit[i] = 1.0
            columns.append([_number(t) for t in push(unit, create_graph=create_graph)])
            unit[i] = 0.0
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise DerivativeError(exc, "fwd") from exc
    return [[column[r] for column in columns] for r in range(len(fs))]


def forward_directional(
    fs: Sequence[Value], xs: Sequence[Value], u: Sequence[float], create_graph: bool
) -> list[float]:
    """The jvp of ``fs`` along ``u`` (one float per input), as :func:`forward_jacobian`."""
    try:
        return [_number(t) for t in Tangents(fs, xs)(u, create_graph=create_graph)]
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise DerivativeError(exc, "fwd") from exc


def _number(t: float | Value) -> float:
    return t.data if isinstance(t, Value) else t


def as_outputs(out: object, where: str) -> list[Value]:
    """``func``'s result as a list of Values, or a TypeError saying what it was."""
    if isinstance(out, Value):  # a subclass too: func may return an input
        return [out]  # (a compiled loss among them is refused by survey)
    if isinstance(out, tuple | list) and out and all(isinstance(y, Value) for y in out):
        return list(out)
    shown = f"{type(out).__name__} {out!r}"
    if isinstance(out, tuple | list):  # which one, among many
        shown = next((f"{shown}: out[{j}] is {type(y).__name__} {y!r}" for j, y in
                      enumerate(out) if not isinstance(y, Value)), shown)  # fmt: skip
    raise TypeError(f"{where}: func must return a Value or a tuple of Values, got {shown}")


class Levels:
    """``func`` at its inputs, as the functions of each level of a check.

    Args:
        func: The checked function.
        inputs: Its inputs.
        weights: ``grad_outputs`` (floats or Values) or None; Value weights are
            inputs of every level above the first.
        where: The public function's name, for messages.
    """

    def __init__(
        self,
        func: Func,
        inputs: list[Value],
        weights: list[float | Value] | None,
        where: str,
    ) -> None:
        self.func = func
        self.inputs = inputs
        self.weights = weights
        self.where = where
        # Value weights are inputs of every level above the first.
        extra = [w for w in weights or () if isinstance(w, Value)]
        self.xs = inputs + extra
        if len({id(x) for x in self.xs}) < len(self.xs):  # d/dv would be d/dx as well
            raise ValueError(f"{where}: a Value in grad_outputs is an input or another weight")
        self.names = [_name("x", i, x) for i, x in enumerate(inputs)] + [
            _name("v", i, w) for i, w in enumerate(weights or ()) if isinstance(w, Value)
        ]
        #: Whether the last level surveyed holds a closure's or a user rule's forward (survey).
        self.opaque = False
        # Custom rules with a declared domain that the point lies inside:
        # moved inputs must keep them inside (see survey()).
        self.fences: dict[Rule, tuple[tuple[float, float], ...]] = {}
        # Per level (see level()): how many values it has at the unmoved inputs; those values,
        # built once; its graph, where it can be replayed; whether it is not all of it (shows).
        self.counts: dict[int, int] = {}
        self.built: dict[int, tuple[list[Value], list[Key]]] = {}
        self.tapes: dict[int, Tape | list[Value] | None] = {}
        self.read, self.shown = dict[int, bool](), dict[int, bool]()

    def outputs(self) -> list[Value]:
        """``func``'s outputs at the inputs' current data."""
        return as_outputs(self.func(*self.inputs), self.where)

    def level(self, k: int) -> tuple[list[Value], list[Key]]:
        """The level-k functions at the unmoved inputs, and their keys: built once.

        Level k is built from level k - 1 where that is built already. The
        build records how many values the level has (a moved input must give
        as many) and, where its graph can be replayed, keeps it for
        :meth:`evaluator` (see :mod:`.tape`).
        """
        built = self.built.get(k)
        if built is not None:
            return built
        below = self.built.get(k - 1)
        with recording() as seen:
            built = self._level(k, below)
        # Replayable with every level below it (the tape runs their ops too).
        if k == 1:
            _no_nan(built[0], self.where)
        replayable = seen.replayable(built[0]) and (k == 1 or self.tapes.get(k - 1) is not None)
        self.tapes[k] = built[0] if replayable else None
        self.built[k] = built
        self.read[k] = seen.read
        self.counts[k] = len(built[0])
        return built

    def lifted(self, k: int) -> list[list[float]] | None:
        """Each level-k function's derivatives on Values (create_graph), where level
        k + 1 is exactly those: its values, grouped per function; else None."""
        if k == 1 and self.weights is not None:
            return None  # level 2 differentiates the weighted sum of the outputs
        values = [f.data for f in self.level(k + 1)[0]]
        n = len(self.xs)
        return [values[r : r + n] for r in range(0, len(values), n)]

    def _tape(self, k: int) -> Tape | None:
        """Level k's recorded graph as a :class:`~.tape.Tape`, if it can stand for ``func``."""
        made = self.tapes.get(k)
        if made is None or self.fences:
            return None
        if not isinstance(made, Tape):
            made = Tape(made, self.xs, [f for j in range(1, k) for f in self.built[j][0]])
            eager = functools.partial(self._eager, k)
            self.tapes[k] = made = made if made.stands(eager, [x._data for x in self.xs]) else None
        return made

    def _level(
        self, k: int, below: tuple[list[Value], list[Key]] | None = None
    ) -> tuple[list[Value], list[Key]]:
        """Level k at the inputs' current data, from level k - 1 (``below``) if given."""
        if below is not None:
            fs, keys = below
            start = k - 1
        else:
            ys = self.outputs()
            fs = ys
            keys = [(j, ()) for j in range(len(ys))]
            if self.weights is not None and len(self.weights) != len(ys):
                # Checked at every level, order 1 too: a mistake is a mistake.
                raise ValueError(
                    f"{self.where}: grad_outputs has {len(self.weights)} entries "
                    f"for {len(ys)} output(s)"
                )
            start = 1
        if k == 1:
            return fs, keys
        if start == 1 and self.weights is not None:
            # The weighted gradient in one pass, as PyTorch's vjp: sum_j v_j f_j is never
            # formed (1e9 * (sin(x) + 1e300) overflows; its gradient is 8.8e8). By v_j: f_j.
            try:
                by_x = grad(fs, self.inputs, self.weights, create_graph=True)
            except (ArithmeticError, ValueError, TypeError) as exc:
                raise DerivativeError(exc) from exc
            by_v = [y for w, y in zip(self.weights, fs, strict=True) if isinstance(w, Value)]
            fs, keys, start = [*by_x, *by_v], [(-1, (i,)) for i in range(len(self.xs))], 2
        for _ in range(k - start):
            new: list[Value] = []
            new_keys: list[Key] = []
            for f, (out, path) in zip(fs, keys, strict=True):
                new.extend(derivatives(f, self.xs, True))
                new_keys.extend((out, (*path, i)) for i in range(len(self.xs)))
            fs, keys = new, new_keys
        return fs, keys

    def values(self, k: int) -> list[float]:
        """The level-k values at the inputs' current data."""
        if k == 1 and not self.fences:
            # The 2N evaluations of a first-order check come through here:
            # the common case (one output) takes no further call.
            out = self.func(*self.inputs)
            if type(out) is Value:
                return [out.data]
            return [f.data for f in as_outputs(out, self.where)]
        fs = self._level(k)[0]
        if self.fences and not self._inside(fs):
            raise ValueError("a declared domain was left")
        return [f.data for f in fs]

    def survey(self, fs: Sequence[Value], *, fence: bool) -> bool:
        """Whether the graph of ``fs`` holds a rule other than minigrad's own ones
        with their own partials (those are pure functions of their floats, so
        a second reverse pass through them alone cannot differ); with
        ``fence``, also set the declared domains moved inputs must keep to.

        Built-in rules need no fence: their forwards raise off their domains.
        A custom rule's ``domain`` is a promise about where it is smooth; where
        the point itself is outside it, the user has chosen to go there, and
        nothing is fenced. ``opaque`` says whether a forward in the graph is
        one the graph does not show (a closure's, a user's rule's), whose
        round-off the graph cannot read. One walk over the graph does it all.
        """
        beyond = False
        self.opaque = False
        fences: dict[Rule, tuple[tuple[float, float], ...]] = {}
        outside: set[Rule] = set()
        for node in toposort(fs):
            rule = node._rule  # the slot: this walk runs once per level of every check
            if rule is None and getattr(node, "_compiled", False):  # a leaf to grad, losing all
                what = "func's output" if any(node is f for f in fs) else "a value of func's graph"
                raise TypeError(compiled_refusal(f"{self.where}: {what}", node))
            if rule is None or _PARTIALS_AS_BUILT.get(rule) is rule.partials:
                continue
            beyond = True
            if not self.opaque:
                self.opaque = _opaque(rule)
            if not fence or rule in _PARTIALS_AS_BUILT or _unbounded(rule.domain):
                continue
            if _within(node, rule.domain):
                fences[rule] = rule.domain
            else:
                outside.add(rule)
        if fence:
            self.fences = {r: d for r, d in fences.items() if r not in outside}
        return beyond

    def opaque_rows(self, fs: Sequence[Value]) -> list[bool]:
        """Per value, whether its own graph holds a forward the graph does not show
        (one walk each, only where :meth:`survey` found such a forward at all)."""
        if not self.opaque:
            return [False] * len(fs)
        return [any(_opaque(node._rule) for node in toposort([f])) for f in fs]

    def _inside(self, fs: Sequence[Value]) -> bool:
        for node in toposort(fs):
            domain = self.fences.get(node.rule) if node.rule is not None else None
            if domain is not None and not _within(node, domain):
                return False
        return True

    def evaluator(self, k: int, i: int) -> Evaluate:
        """Level-k values as a function of input i's data (None off the domain).

        The input's data is put back after every call, whatever happens.
        """
        x = self.xs[i]
        orig = x.data  # every call puts it back, so it is the same at every call
        values = self.values
        caught = (*DOMAIN_ERRORS, DerivativeError)
        count = self.counts.get(k)

        def evaluate(t: float) -> list[float] | None:
            # The slot, not the property: t and orig are floats already, and
            # this runs 2N times in a check (the setter's check costs 10x).
            try:
                x._data = t
                found = values(k)
            except Exception as exc:
                # A domain error marks the domain's edge (the estimator takes smaller
                # steps or one side); any other is the user's, and says where it happened.
                if isinstance(exc, caught):
                    return None
                _raise_at_moved_point(exc, self.where, self.names[i], orig, t)
            finally:
                x._data = orig
            if count is not None and len(found) != count:
                raise OutputCountError(self.where, count, len(found), self.names[i], orig, t)
            return found

        tape = self._tape(k)
        if tape is None:
            return evaluate
        replay = tape.along(i)

        def replayed(t: float) -> list[float] | None:
            found = replay(t)
            return found if found is not None else evaluate(t)

        return replayed

    def whole(self, k: int) -> bool:
        """Whether level k's graph is all of the function (:func:`.tape.shows`), asked once."""
        if k not in self.shown:
            lower = [f for j in range(1, k) for f in self.built[j][0]]
            probe, fs = functools.partial(self._probe, k), self.level(k)[0]
            self.shown[k] = not self.read[k] or shows(fs, self.xs, lower, probe, self.fences)
        return self.shown[k]

    def _probe(self, k: int, step: Sequence[float]) -> list[float] | None:  # raising as moved
        try:
            return self._eager(k, step)
        except Exception as exc:
            at = f"every input ({', '.join(self.names)}) moved by {step[0]:+.3g} or a like part"
            _raise_at_moved_point(exc, self.where, "", 0.0, 0.0, f"{at} of itself (graph test)")

    def _eager(self, k: int, step: Sequence[float]) -> list[float] | None:
        """Level-k values from ``func``, every input moved by ``step`` (and put back after)."""
        saved = [x.data for x in self.xs]
        try:
            for x, orig, s in zip(self.xs, saved, step, strict=True):
                x.data = orig + s
            return self.values(k)
        except (*DOMAIN_ERRORS, DerivativeError):
            return None
        finally:
            for x, orig in zip(self.xs, saved, strict=True):
                x.data = orig

    def moved(self, k: int, step: Sequence[float]) -> list[float] | None:
        """Level-k values with every input moved by ``step`` (None off the domain)."""
        tape = self._tape(k)
        found = tape.moved(step) if tape is not None else None
        try:
            found = self._eager(k, step) if found is None else found
        except Exception as exc:
            _raise_at_moved_point(exc, self.where, "every input", 0.0, 0.0)
        count = self.counts.get(k)
        if found is not None and count is not None and len(found) != count:
            raise OutputCountError(self.where, count, len(found), "every input", 0.0, 0.0)
        return found


_PARTIALS_AS_BUILT = OWN  # minigrad's own rules with the partials they were made with


def _no_nan(fs: Sequence[Value], where: str) -> None:
    """Raise a ValueError naming the op that made NaN, where one of ``fs`` is NaN (a
    closure's forward may: a Rule's refuses to)."""
    for j, f in enumerate(fs):
        if f.data == f.data:
            continue
        made = ""
        for node in reversed(toposort([f])):  # each node after its arguments
            args = [a if isinstance(a, float) else a.data for a in node.args]
            if node.data != node.data and all(a == a for a in args):
                name = node.rule.name if node.rule is not None else "a leaf"
                made = f": op {name!r} made it from {args}" if args else f": {name} holds it"
                break
        raise ValueError(
            f"{where}: func's output {j} is NaN at the inputs{made}; a check needs a number there"
        )


def _opaque(rule: Rule | None) -> bool:
    """Whether ``rule``'s forward is one the graph does not show: a closure's, or one
    written outside minigrad (its round-off, a grid it rounds to, are hidden)."""
    if rule is None or _PARTIALS_AS_BUILT.get(rule) is rule.partials:
        return False
    # A library function (math.sin) is one rounding, minigrad's own rules hide nothing.
    return isinstance(rule, closure.Closure) or hidden(rule)


def _unbounded(domain: tuple[tuple[float, float], ...]) -> bool:
    return all(lo == -math.inf and hi == math.inf for lo, hi in domain)


def _within(node: Value, domain: tuple[tuple[float, float], ...]) -> bool:
    for a, (lo, hi) in zip(node.args, domain, strict=False):
        x = a.data if isinstance(a, Value) else a
        if not lo < x < hi:
            return False
    return True


def _name(prefix: str, i: int, x: float | Value) -> str:
    label = x.label if isinstance(x, Value) else ""
    return f"{prefix}[{i}] {label!r}" if label else f"{prefix}[{i}]"
