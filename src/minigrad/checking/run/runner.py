"""One check: its orders one by one, its report, and where a wrong rule is.

:func:`run_check` runs one check for the public checkers (:mod:`minigrad.checking.gradcheck`)
under one :class:`~minigrad.checking.run.settings.Settings`: it validates the inputs, compares
the levels of orders 1 to n (:mod:`minigrad.checking.run.levels`) in every mode asked for, in
fast mode first when asked (:mod:`minigrad.checking.run.fast`), else entry by entry
(:mod:`minigrad.checking.run.compare`: the estimator's estimate and one decision per entry),
concludes pass or fail (:func:`~minigrad.checking.verdicts.decide.passes`), and puts every
input back bit for bit.

A failure is then explained (:mod:`minigrad.checking.run.fault`): the op whose own rule
disagrees with its forward, and where (:mod:`minigrad.checking.run.locate`). Those per-op
checks decide one thing first: whether an overflowing analytic pass is a rule's doing.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Sequence

from minigrad.checking.numeric.estimate import Point, Unresolved, Why
from minigrad.checking.numeric.ladder import ladder
from minigrad.checking.run.compare import Comparison, LevelFindings, broken, entry_of
from minigrad.checking.run.determinism import NondeterministicError
from minigrad.checking.run.engines import ForeignLevels, as_values, prepare_inputs, refuse_foreign
from minigrad.checking.run.fast import fast
from minigrad.checking.run.fault import faulty_node, foreign_fault
from minigrad.checking.run.levels import DerivativeError, Func, Levels
from minigrad.checking.run.locate import narrow
from minigrad.checking.run.report import Entry, Report
from minigrad.checking.run.settings import Settings, callable_with
from minigrad.checking.run.table import modes_in_words, where
from minigrad.checking.verdicts.decide import AGREES, MIN_DIGITS, WRONG, Cause, decide, passes
from minigrad.core._validate import as_int
from minigrad.core.closure import Closure, ClosureOpError
from minigrad.core.inputs import weights
from minigrad.core.value import Value, _args, toposort
from minigrad.core.value import _lock as _engine_lock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.checking.run.engines import Inputs

__all__ = ["MAX_ORDER", "run_check"]

_BEYOND = 1e300  #: A rate of change beyond this is taken as beyond float64's range.
#: How many times the entry's own bound a rule whose mixed derivatives differ is to be off
#: beside the point, nearer moves after farther (:meth:`_Checker._schwarz`): far beyond the
#: bound (at 1e2 its noise is a per cent of the gap times the move), near enough for the
#: move's second-order terms to fall below the first (1 to 2 decades nearer); down to 1, as
#: the moved check (its top order) proves more than that bound: a proven failure convicts.
_BESIDE = (1e4, 1e3, 1e2, 1e1, 1.0)


class _Checker:
    """One check: the levels of ``func`` under one :class:`Settings`."""

    def __init__(self, levels: Levels, settings: Settings, *, localize: bool) -> None:
        self.levels = levels
        self.settings = settings
        self.localize = localize
        self.comparing = Comparison(levels, settings)
        # Whether fast mode sent an order on to every entry (the report says so).
        self.fell_back = False

    def run(self, order: int) -> Report:
        s = self.settings
        whole = LevelFindings()
        for k in range(1, order + 1):
            # Below the top order, the next level's derivative (partials on Values) must equal
            # this one's (on floats). Fault localisation's single-rule checks always compare.
            both = (k < order or not self.localize) and not isinstance(self.levels, ForeignLevels)
            self.comparing.settings = here = s if k == order else s.bounds_only()
            try:
                direction = fast(self.levels, k, here, both) if s.fast_mode else None
                whole.compared += len(direction.entries) if direction else s.fast_mode
                self.fell_back = self.fell_back or (s.fast_mode and direction is None)
                if direction is not None:
                    whole.entries.extend(direction.entries)
                    if not direction.rest:
                        continue
                # Every entry, or those of the inputs the direction does not prove.
                only = direction.rest if direction is not None else None
                found = self.comparing.compare(k, both, only=only)
            except DerivativeError as exc:
                beyond = _at_edge(exc) or _op_beyond(exc, s) or self._overflows(k, exc)
                if beyond and isinstance(exc.exc, OverflowError) and not self._rules_hold(k):
                    beyond = ""  # an op's own rule is wrong: the overflow may be its doing
                if beyond:  # not the rule's fault: the derivatives are not floats here
                    words = (
                        f"the order-{k} derivatives cannot be checked here: {beyond}, "
                        f"and the analytic pass failed too ({exc})"
                    )
                    f = decide(math.inf, 0.0, Unresolved(Why.RANGE, words))
                    whole.compared += 1
                    entry = entry_of(k, (0, ()), 0, s.modes[0], math.inf, f, s)
                    whole.add(entry, self.levels.names)
                    return self._report(k, whole)
                note = f"the order-{k} derivatives could not be computed: {exc}"
                # Building a level is reverse mode's work, which forward over reverse needs too.
                mode = exc.mode if exc.mode in s.modes else s.modes[0]
                whole.compared += 1
                entry = broken(k, (0, ()), 0, mode, note, Cause.NOT_COMPUTED, s)
                whole.add(entry, self.levels.names)
                return self._report(k, whole)
            whole.extend(found)
            if not passes(e.verdict for e in found.entries):
                return self._report(k, whole)
            beside = self._schwarz(k, found, whole)
            if beside is not None:
                return beside
            dropped = self.comparing.dropped
            if dropped is not None and k < order:
                if isinstance(dropped, ClosureOpError):
                    raise dropped  # (a wrong closure fails order 1 first, named as above)
                if not isinstance(dropped.exc, ArithmeticError):  # (else: beyond float64?)
                    return self._dropped(k, whole, dropped)
        return self._report(order, whole)

    def _schwarz(self, k: int, found: LevelFindings, whole: LevelFindings) -> Report | None:
        """Level ``k``'s derivatives by the same inputs in two orders (d/dy of df/dx, d/dx of
        df/dy) where their estimates differ beyond their two bounds: a report that fails where
        the order-``k - 1`` check fails beside the point, else None (then a caution).

        Where a function's order-k derivatives are continuous they are one number in every
        order (Schwarz). Each entry agrees with its own estimate, so the order-(k-1)
        derivatives are no function's derivatives near the point: a rule right at the point
        alone (``b`` left out where ``b = 1``). That proves no rule wrong (``x y (x**2 -
        y**2) / (x**2 + y**2)`` has unequal ones at 0, rightly): the order-(k-1) check at the
        last input moved by ``delta`` does, where such a rule is off by the gap times
        ``delta`` to first order, :data:`_BESIDE` times that entry's own bound. Only that
        entry counts, and only off by that much within a factor of 2 (else a nearer move)."""
        s, levels = self.settings, self.levels
        if k < 2 or isinstance(levels, ForeignLevels):  # (fast mode's entries: wrt -1)
            return None
        groups: dict[tuple[str, int, tuple[int, ...]], list[Entry]] = {}
        for e in found.entries:
            if e.verdict == AGREES and math.isfinite(e.error) and e.wrt >= 0:
                key = (e.mode, e.output, tuple(sorted((*e.path, e.wrt))))
                groups.setdefault(key, []).append(e)
        worst, pair = 1.0, None
        for same in groups.values():
            for a, b in itertools.combinations(same, 2):
                gap = abs(a.numerical - b.numerical)
                if gap > worst * (a.error + b.error):
                    worst, pair = gap / (a.error + b.error), (a, b)
        if pair is None:
            return None
        a, b = pair
        gap, names = abs(a.numerical - b.numerical), levels.names
        shown = (
            f"{where(a, names)} is {a.numerical:.9g} +- {a.error:.2g} and {where(b, names)} "
            f"{b.numerical:.9g} +- {b.error:.2g}, the same derivative in another order"
        )
        tried, every, below_entries = [], s.exhaustive(), whole.entries
        if s.fast_mode:  # the orders below were proved along directions: each entry's bound
            at = [Value(x.data) for x in levels.inputs]
            below_entries = run_check(levels.func, at, k - 1, levels.weights, every).entries
        for e in (a, b):
            j, i = e.wrt, e.path[-1]

            def below(f: Entry, e: Entry = e, i: int = i) -> float:
                """The weight of entry ``f`` in ``e``'s order-(k-1) derivative (0: none):
                1 for its own, ``v_o`` for output o's in the weighted sum at order 1."""
                if (f.order, f.path, f.wrt) != (k - 1, e.path[:-1], i):
                    return 0.0
                if f.output == e.output:
                    return 1.0
                if e.output >= 0 or f.output < 0 or levels.weights is None:
                    return 0.0
                w = levels.weights[f.output]
                return w.data if isinstance(w, Value) else w

            weights = ((f.allowed, abs(below(f))) for f in below_entries if f.mode == e.mode)
            bound = sum(a * w for a, w in weights if w)  # (an unbounded entry of weight 0: none)
            if j >= len(levels.inputs) or not 0.0 < bound < math.inf:
                continue
            for delta in (m * bound / gap for m in _BESIDE):
                beside, d = None, 0.0
                for d in (delta, -delta):
                    moved = [Value(x.data) for x in levels.inputs]
                    moved[j] = Value(levels.inputs[j].data + d)
                    try:
                        beside = run_check(levels.func, moved, k - 1, levels.weights, every)
                    except Exception:  # off the domain there, or refused: the other side
                        continue
                    break
                if beside is None:
                    continue  # refused on both sides: a nearer move may be inside
                # Off by the gap times the move, to first order; by another size, a nearer move.
                off = [f for f in beside.failures if below(f)]
                size = abs(sum((f.analytic - f.numerical) * below(f) for f in off))
                by = f"off by {size:.2g}, not {gap * abs(d):.2g}" if off else "not off"
                tried.append(f"{names[j]} = {moved[j].data!r} ({by})")
                if not off:
                    break  # not off at all: nearer, less so
                if not 0.5 <= size / (gap * abs(d)) <= 2.0:
                    continue
                there = f"at {names[j]} = {moved[j].data!r} ({names[j]} moved by {d:.3g})"
                for f in off:
                    f.reason = f"{there}: {f.reason}"
                    whole.add(f, names)
                whole.compared += beside.checked
                report = self._report(k, whole, localize=False)
                report.fault = (
                    f"{shown}: the order-{k - 1} derivatives are no function's near the point, "
                    f"and {there} the order-{k - 1} check fails"
                    + (f": {beside.fault}" if beside.fault else "")
                )
                return report
        checked = f"; the derivatives below at {', '.join(tried)}" if tried else ""
        whole.cautions.append(
            f"{shown}{checked}: the order-{k} derivatives are not continuous here, or a "
            f"rule of order {k - 1} is wrong beside the point by less than the numbers resolve"
        )
        return None

    def _dropped(self, k: int, whole: LevelFindings, exc: DerivativeError) -> Report:
        """Order ``k`` passed on floats, but a partial drops the graph: order ``k + 1``
        cannot be checked, and the report says which partial, not that a rule is wrong."""
        s = self.settings
        note = (
            f"order {k + 1} cannot be checked, and order {k} passed on floats: a partial "
            f"computes on floats only, which drops the graph the order-{k + 1} derivatives "
            f"are built from: {exc}"
        )
        mode = exc.mode if exc.mode in s.modes else s.modes[0]
        entry = broken(k + 1, (0, ()), 0, mode, note, Cause.GRAPH_DROPPED, s)
        whole.compared += 1
        whole.add(entry, self.levels.names)
        report = self._report(k + 1, whole, localize=False)
        report.fault = note
        return report

    def _rules_hold(self, k: int) -> bool:
        """Whether every op is a Rule whose own order-k check passes at its point (one op's
        own check: _op_beyond read it): an overflow on the way is then float64's, not a
        rule's (a partial 6e305 too steep overflowed a right ``*`` after it)."""
        if not self.localize:
            return True
        outputs = self.levels.outputs()
        if any(type(n.rule) is Closure for n in toposort(outputs)):
            return False  # a closure's partial cannot be checked on its own
        local = _Checker(self.levels, self.settings, localize=False)
        return faulty_node(outputs, k, local._check_rule)[1] is None

    def _overflows(self, k: int, exc: DerivativeError) -> str:
        """Where level ``k``'s derivatives are beyond float64, in words ("" if not so): at
        order 1 the estimator must find one so for some input (``1 / x`` at 1e-300, whose
        slope is -1e600); above it, where the order-(k-1) derivatives change faster than
        1e300 (``x / y`` at y = 1e-150 has the second derivative 6e450)."""
        levels, s = self.levels, self.settings
        if k == 1:
            # A partial that failed where the function's own derivative is beyond float64
            # (log at 5e-324) or does not exist (sqrt at 0): only a resolved one convicts.
            here = levels.values(1)
            for i, x in enumerate(levels.xs):
                at = x.data
                point = Point(levels.evaluator(1, i), at, here, s.step(at))
                for r in range(len(here)):
                    found = ladder(point, [r])[r]
                    if isinstance(found, Unresolved):
                        return f"by {levels.names[i]}, {found.words}"
                    # A slope of 0 +- 1e-14 of a function of size 1 is resolved (an input it
                    # does not depend on): digits count against its size, as decide counts.
                    if not found.error < max(abs(found.value), point.sizes()[r]):
                        return (
                            f"by {levels.names[i]}, the numbers resolve no digit of the "
                            f"derivative ({found.value:.3g} +- {found.error:.3g})"
                        )
                    if abs(found.value) * 2.0 > sys.float_info.max:  # the weights are below 2
                        return (
                            f"by {levels.names[i]}, the derivative is {found.value:.6g}, where "
                            "the check's weighted passes (weights up to 2) overflow"
                        )
            return ""
        worst, where = 0.0, -1
        for i, x in enumerate(levels.xs):
            at = x.data
            h = max(abs(at) * 1e-6, 2.0**-1070) if at != 0.0 else s.step(at)  # 16 ulps at least
            sides = Point(levels.evaluator(k, i), at, [], h).sides(h)
            if sides is None:
                continue
            up, down, half = sides
            for u, d in zip(up, down, strict=True):
                try:
                    q = (u - d) / (2.0 * half)
                except (ArithmeticError, ValueError):
                    q = math.inf
                if not abs(q) <= abs(worst):
                    worst, where = q, i
        if abs(worst) <= _BEYOND:
            return ""
        name = levels.names[where]
        return (
            f"the order-{k - 1} derivative changes with {name} at a rate of {worst:.3g}, "
            "beyond the range of float64"
        )

    def _report(self, k: int, whole: LevelFindings, *, localize: bool = True) -> Report:
        s = self.settings
        failed = not passes(e.verdict for e in whole.entries)
        whole.failures = sorted(whole.failures, key=_severity)
        fault = ""
        narrowing: Value | None = None
        if not localize:
            pass
        elif failed and isinstance(self.levels, ForeignLevels) and whole.failures:
            fault = foreign_fault(self.levels, whole.failures)
        elif failed and s.exact_step and all(e.digits >= MIN_DIGITS for e in whole.failures):
            fault = (
                "every failing entry agrees with the extrapolated derivative: the central "
                f"difference at eps={s.eps:g} is off by its own truncation or round-off, not "
                "the rule; another eps, or the default verdicts (no atol, rtol), pass it"
            )
        elif failed and self.localize and whole.failures:
            # Each op's own rule is checked in the modes that disagreed here.
            modes = tuple(m for m in s.modes if any(e.mode == m for e in whole.failures))
            local = _Checker(self.levels, s.with_modes(modes or s.modes), localize=False)
            fault, node = faulty_node(self.levels.outputs(), k, local._check_rule, whole.failures)
            if s.modes != ("rev",):
                fault = f"in {modes_in_words(modes)}, {fault}"
            narrowing = node
        report = Report(
            ok=not failed,
            order=k,
            checked=whole.compared,
            failures=whole.failures if failed else [],
            names=self.levels.names,
            fault=fault,
            fast=s.fast_mode,
            fell_back=self.fell_back,
            kinks=whole.kinks,
            cautions=whole.cautions,
            modes=s.modes,
            entries=whole.entries,
            tolerances=(s.atol, s.rtol) if s.classic else None,
            remarks=whole.remarks,
            seed=s.seed,
        )
        if narrowing is not None and narrowing.rule is not None:
            rule, args = narrowing.rule, narrowing.args
            quick = _Checker(self.levels, s, localize=False)
            report.remark_later(lambda: narrow(rule, args, k, quick._check_rule))
        return report

    def _check_rule(self, func: Callable[..., Value], inputs: list[Value], k: int) -> Report:
        levels = Levels(func, inputs, None, self.settings.where)
        return _Checker(levels, self.settings, localize=False).run(k)


def _severity(e: Entry) -> tuple[bool, float]:
    """Wrong entries first, then by how far apart relatively (lab 03's rel diff)."""
    return e.verdict != WRONG, -e.rel if e.rel == e.rel else 0.0


# Argument checking: the package's one wording (minigrad.core._validate).
#: The highest order a check takes. Level k holds (inputs ** (k - 1)) functions per output,
#: each a graph larger than the last: a two-input check of order 8 takes about a second.
MAX_ORDER = 8
_MAX_ORDER_WHY = (
    f": a check of order k compares about inputs ** k derivatives, each a graph larger "
    f"than the last, so the time grows about fivefold per order above {MAX_ORDER}"
)


def _moves(levels: Levels, eps: float, where: str) -> None:
    """Refuse an ``eps`` that does not move an input: ``x + eps == x`` in float64."""
    for name, x in zip(levels.names, levels.xs, strict=True):
        at = float(x.data)
        if at + eps == at or at - eps == at:
            raise ValueError(
                f"{where}: eps={eps!r} does not move {name} ({at!r}): x + eps and x - eps "
                "are x itself in float64, so the central difference at eps is 0 / 0; give "
                f"an eps of at least {math.ulp(at):.3g} (an ulp of x), or none (the checker "
                "then chooses the steps)"
            )


def _weights(grad_outputs: object, where: str) -> list[float | Value] | None:
    if grad_outputs is None:
        return None
    if isinstance(grad_outputs, Value | int | float):
        grad_outputs = [grad_outputs]  # one output's weight, as PyTorch accepts
    # The count is checked against the outputs where they are made (Levels.level).
    return weights(grad_outputs, None, f"{where}: grad_outputs")


def run_check(
    func: Func,
    inputs: Inputs,
    order: int,
    grad_outputs: Sequence[float | Value] | None,
    settings: Settings,
) -> Report:
    """Validate, check, and put every input back bit for bit."""
    where = settings.where
    # Numbers become fresh Values; a foreign engine's nodes are checked by
    # its own backward() (minigrad.checking.run.engines).
    xs, engine = prepare_inputs(inputs, where)
    as_int(order, f"{where}: order", least=1, most=MAX_ORDER, why=_MAX_ORDER_WHY)
    callable_with(func, len(xs), where)
    levels: Levels
    if engine is None:
        levels = Levels(func, as_values(xs), _weights(grad_outputs, where), where)
    else:
        refuse_foreign(engine, order, settings)
        weights = _weights(grad_outputs, where)
        levels = ForeignLevels(func, xs, weights, where, engine, settings.nondet_tol > 0)
    if settings.exact_step:  # PyTorch's form: the step is eps itself, at every input
        _moves(levels, settings.eps, where)
    # A check moves its inputs' .data: another thread's check, backward or grad
    # on a graph that shares them must not see them moved, so the whole check
    # holds the engine's (reentrant) lock, as backward does for its pass.
    with _engine_lock:
        saved = [(x, x.data, x.grad, getattr(x, "label", None)) for x in levels.xs]
        given = [data for _, data, _, _ in saved]
        try:
            _untouched(levels, given, "func")
            return _Checker(levels, settings, localize=engine is None).run(order)
        except NondeterministicError:
            _untouched(levels, given, "a backward pass (an update step inside _backward?)")
            raise
        finally:
            # Bit-exact: the very float objects the inputs held are put back, and the
            # labels func or a closure may rename (a foreign engine's node may have none).
            for x, data, g, label in saved:
                x.data, x.grad = data, g
                if label is not None:
                    x.label = label


def _untouched(levels: Levels, given: list[float], who: str) -> None:
    """``func`` at the inputs (or what ran before) leaves their ``.data`` as given, or a
    ValueError names the one changed (another point would be checked, the input lost)."""
    _ = levels.outputs() if isinstance(levels, ForeignLevels) else levels.level(1)
    for x, name, data in zip(levels.xs, levels.names, given, strict=False):
        if x.data != data:
            raise ValueError(
                f"{levels.where}: {who} changed the .data of the input {name} from {data!r} to "
                f"{x.data!r}: what is checked must leave its inputs as they are (an op that sets "
                "x.data = ... moves the point; a forward returns a new Value instead)"
            )


def _op_beyond(exc: DerivativeError, s: Settings) -> str:
    """Where a Rule's partial failed and its forward's own slope there is beyond float64 as
    well, in words ("" if not so): hypot's second derivative at subnormals is 3e319. A
    partial that fails where that slope is a float stays *wrong*; an overflow (of the
    partial, or of it ``times`` the gradient or tangent it scales) only where that slope is
    resolved and the product a float: a right chain may pass beyond float64 on its way to a
    finite derivative (``x log x``'s second: log's partial 1e160 times a tangent 1e160)."""
    err = exc.exc
    node, i, times = (getattr(err, name, None) for name in ("node", "partial", "times"))
    overflow, rule = isinstance(err, OverflowError), getattr(node, "_rule", None)
    if not isinstance(node, Value) or not isinstance(i, int) or hasattr(rule, "step") or not rule:
        return ""
    args = [a._data if isinstance(a, Value) else a for a in _args(node)]

    def evaluate(t: float) -> list[float] | None:
        try:
            out = float(rule.forward(*args[:i], t, *args[i + 1 :]))
        except (ArithmeticError, ValueError):
            return None
        return [out] if math.isfinite(out) else None

    here = evaluate(args[i])
    if here is None:
        return ""
    found = ladder(Point(evaluate, args[i], here, s.step(args[i])), [0])[0]
    at = f"op {rule.name!r}'s slope by argument {i} at {args[i]!r}"
    if isinstance(found, Unresolved):
        return f"{at}: {found.words}" if found.why is Why.RANGE or overflow else ""
    scale = abs(times) if isinstance(times, float) else max(1.0, abs(node._grad))
    big = abs(found.value) * scale > sys.float_info.max
    return f"{at} is {found.value:.3g}" if big else ""


def _at_edge(exc: DerivativeError) -> str:
    """Where a partial failed (an arithmetic or domain error) at an argument on the edge
    of its op's declared domain or at a point it avoids, in words ("" if not so):
    the op has no derivative there, though the function may (``sqrt(x * x + y * y)``
    at 1e-310, where ``x * x`` underflows to 0), so the numbers decide nothing."""
    node = getattr(exc.exc, "node", None)
    rule = getattr(node, "_rule", None)
    if not isinstance(exc.exc, ArithmeticError | ValueError) or node is None or rule is None:
        return ""
    for j, a in enumerate(_args(node)):
        u = a._data if isinstance(a, Value) else a
        lo, hi = rule.domain[j] if j < len(rule.domain) else (-math.inf, math.inf)
        if u in (lo, hi) or u in rule.avoid:
            return (
                f"op {rule.name!r} is evaluated at {u!r} (argument {j}), "
                f"{'a point its rule avoids' if u in rule.avoid else 'the edge of its domain'}, "
                "where it has no derivative"
            )
    return ""
