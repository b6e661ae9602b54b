"""One check: the analytic side against the numerical side, entry by entry.

:func:`run_check` runs one check for the public checkers
(:mod:`minigrad.checking.gradcheck`) under one
:class:`~minigrad.checking.settings.Settings`, handed down to every part of
it: it validates the inputs, compares the levels of orders 1 to n
(:mod:`minigrad.checking.levels`) in every mode asked for, and puts every
input back bit for bit.

How an entry is judged (the numerics are in :mod:`minigrad.checking.numeric`):

1. The central difference at the nominal step ``eps * max(1, sqrt(|x|))``, divided
   by the step actually taken. It agrees (``|a - n| <= atol + rtol * |n|``):
   the entry passes; this is all a passing check costs.
2. It disagrees, or a side left the domain: Ridders' extrapolation estimates
   the derivative with an error bound, from steps that stay in the domain. The
   entry fails only when the estimate and its bound still disagree with the
   analytic value; the report shows the estimate, the bound and the step.
3. It agreed by ``atol`` alone while the two differ by more than ``rtol``
   relatively, and the estimate is sharp enough to say so: the check passes
   with a warning ("passed by atol only"). ``atol=0`` checks relative to the
   derivative's own scale.

Failures are then explained (:mod:`minigrad.checking.diagnose`): a kink or a
jump is named as such, and otherwise the op whose own rule disagrees with its
forward.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import cast

from minigrad.checking.diagnose import find_fault, kink_note, looks_kinked
from minigrad.checking.engines import ForeignLevels, prepare_inputs, refuse_foreign
from minigrad.checking.levels import (
    DerivativeError,
    Func,
    Key,
    Levels,
    derivatives,
    forward_directional,
    forward_jacobian,
)
from minigrad.checking.numeric import Estimate, central, extrapolate, nominal_step
from minigrad.checking.report import Entry, Report, modes_in_words, where
from minigrad.checking.settings import Settings
from minigrad.core._validate import as_int
from minigrad.core.inputs import weights
from minigrad.core.value import Value
from minigrad.core.value import _lock as _engine_lock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.checking.engines import Inputs

__all__ = ["run_check"]


#: A mode's pass, as notes name it.
_PASSES = {"rev": "backward", "fwd": "forward mode (jvp)"}


class _Level:
    """What comparing one level found."""

    def __init__(self) -> None:
        self.compared = 0
        self.failures: list[Entry] = []
        self.kinks: list[str] = []
        self.cautions: list[str] = []


class _Checker:
    """One check: the levels of ``func`` under one :class:`Settings`."""

    def __init__(self, levels: Levels, settings: Settings, *, localize: bool) -> None:
        self.levels = levels
        self.settings = settings
        self.localize = localize

    def run(self, order: int) -> Report:
        levels, s = self.levels, self.settings
        checked = 0
        kinks: list[str] = []
        cautions: list[str] = []
        for k in range(1, order + 1):
            # Below the top order, the derivative the next level is built from
            # (create_graph, partials applied to Values) must equal the one
            # checked here (partials applied to floats). Fault localisation's
            # single-rule checks always compare the two: they are small.
            both = (k < order or not self.localize) and not isinstance(levels, ForeignLevels)
            try:
                if s.fast_mode:
                    checked += 1
                    if self.fast(k, both):
                        continue
                found = self.compare(k, both)
            except DerivativeError as exc:
                note = f"the order-{k} derivatives could not be computed: {exc}"
                # Building a level is reverse mode's work, which forward over
                # reverse needs too: a check in forward mode alone owns it.
                mode = exc.mode if exc.mode in s.modes else s.modes[0]
                failed = Entry(k, 0, (), 0, math.nan, math.nan, s.atol, False, note, mode=mode)
                return self._failed(k, checked + 1, [failed], kinks, cautions)
            checked += found.compared
            kinks.extend(found.kinks)
            cautions.extend(found.cautions)
            if found.failures:
                found.failures.sort(key=lambda e: -e.diff / max(e.allowed, 1e-300))
                return self._failed(k, checked, found.failures, kinks, cautions)
        return Report(
            True, order, checked, [], levels.names, "", s.fast_mode, kinks, cautions, s.modes
        )

    def _failed(
        self, k: int, checked: int, failures: list[Entry], kinks: list[str], cautions: list[str]
    ) -> Report:
        s = self.settings
        fault = ""
        if self.localize:
            # Each op's own rule is checked in the modes that disagreed here.
            failed = tuple(m for m in s.modes if any(e.mode == m for e in failures))
            local = _Checker(self.levels, s.with_modes(failed), localize=False)
            fault = find_fault(self.levels.outputs(), k, local._check_rule)
            if s.modes != ("rev",):
                fault = f"in {modes_in_words(failed)}, {fault}"
        return Report(
            False,
            k,
            checked,
            failures,
            self.levels.names,
            fault,
            s.fast_mode,
            kinks,
            cautions,
            s.modes,
        )

    def _check_rule(self, func: Callable[..., Value], inputs: list[Value], k: int) -> Report:
        levels = Levels(func, inputs, None, self.settings.where)
        return _Checker(levels, self.settings, localize=False).run(k)

    def _analytic(
        self, mode: str, fs: list[Value], both: bool, twice: bool
    ) -> tuple[list[list[float]], list[list[float]], list[list[float]] | None]:
        """Level k's Jacobian in ``mode``: on floats, again (``twice``), on Values (``both``)."""
        xs = self.levels.xs
        if isinstance(self.levels, ForeignLevels):  # backward() on a fresh graph per pass
            analytic = self.levels.jacobian(fs)
            return (
                analytic,
                self.levels.jacobian(self.levels.outputs()) if twice else analytic,
                None,
            )
        if mode == "fwd":
            # One forward pass per input: column i is the jvp along e_i.
            analytic = forward_jacobian(fs, xs, False)
            again = forward_jacobian(fs, xs, False) if twice else analytic
            lifted = forward_jacobian(fs, xs, True) if both else None
            return analytic, again, lifted
        analytic = [[g.data for g in derivatives(f, xs, False)] for f in fs]
        again = [[g.data for g in derivatives(f, xs, False)] for f in fs] if twice else analytic
        lifted = [[g.data for g in derivatives(f, xs, True)] for f in fs] if both else None
        return analytic, again, lifted

    def compare(self, k: int, both: bool) -> _Level:
        """Compare every entry of level k in every mode (with ``both``, create_graph too).

        The numerical side (the central differences) is computed once per
        input and shared by the modes.
        """
        levels, s = self.levels, self.settings
        xs = levels.xs
        fs, keys = levels.level(k)
        here = [f.data for f in fs]
        # The determinism check (nondet_tol) runs every pass twice, as
        # PyTorch does; through the built-in rules alone it cannot differ.
        twice = levels.survey(fs, fence=k == 1)
        sides = [(mode, *self._analytic(mode, fs, both, twice)) for mode in s.modes]
        found = _Level()
        found.compared = len(keys) * len(xs) * len(sides)
        for i, x in enumerate(xs):
            evaluate = levels.evaluator(k, i)
            at = x.data
            h = nominal_step(at, s.eps)
            nominal = self._nominal(evaluate, at, h)
            for m, (mode, analytic, again, lifted) in enumerate(sides):
                refine: list[int] = []  # the nominal difference disagrees or left the domain
                by_atol: list[int] = []  # agreed by atol alone
                kinked: list[int] = []  # passed, but the one-sided slopes differ
                for r, (out, path) in enumerate(keys):
                    a = analytic[r][i]
                    note = ""
                    if not math.isfinite(a):
                        note = "a derivative is not finite (NaN or inf never passes)"
                    elif abs(again[r][i] - a) > s.nondet_tol:
                        note = (
                            f"{_PASSES[mode]} is not deterministic: two passes gave {a!r} and "
                            f"{again[r][i]!r} (nondet_tol={s.nondet_tol})"
                        )
                    elif lifted is not None and not s.close(lifted[r][i], a):
                        note = (
                            f"a partial gives {a!r} on floats ({_PASSES[mode]}) but "
                            f"{lifted[r][i]!r} on Values (create_graph): it must compute the "
                            "same on both"
                        )
                    n = nominal[0][r] if nominal is not None else math.nan
                    if note:
                        found.failures.append(
                            Entry(k, out, path, i, a, n, s.allowed(n), False, note, mode=mode)
                        )
                    elif nominal is None or not s.close(a, n):
                        refine.append(r)
                    elif abs(a - n) > s.rtol * abs(n):
                        by_atol.append(r)
                    elif m == 0:  # a kink is the function's, not a mode's: looked for once
                        _, up, down, left, right = nominal
                        if looks_kinked((here[r] - down[r]) / left, (up[r] - here[r]) / right):
                            kinked.append(r)
                if refine or by_atol:
                    self._refine(
                        found, k, i, evaluate, h, here, analytic, keys, refine, by_atol, mode
                    )
                for r in kinked:
                    note = kink_note(evaluate, at, here, r, h, k)
                    if note:
                        entry = Entry(k, *keys[r], i, analytic[r][i], math.nan, 0.0, True)
                        found.kinks.append(f"{where(entry, levels.names)}: {note}")
        return found

    def _nominal(
        self, evaluate: Callable[[float], list[float] | None], at: float, h: float
    ) -> tuple[list[float], list[float], list[float], float, float] | None:
        """The central difference at the nominal step, the values it came from and
        the one-sided steps (None when a side left the domain)."""
        sides = central(evaluate, at, h)
        if sides is None:
            return None
        up, down, half = sides
        values = [(u - d) / (2.0 * half) for u, d in zip(up, down, strict=True)]
        if self.settings.method == "richardson":
            # Differences at h and h/2 cancel the h**2 error term.
            finer = central(evaluate, at, h / 2.0)
            if finer is None:
                return None
            up2, down2, half2 = finer
            fine = [(u - d) / (2.0 * half2) for u, d in zip(up2, down2, strict=True)]
            values = [(4.0 * f - c) / 3.0 for c, f in zip(values, fine, strict=True)]
        return values, up, down, at - (at - h), (at + h) - at

    def _refine(
        self,
        found: _Level,
        k: int,
        i: int,
        evaluate: Callable[[float], list[float] | None],
        h: float,
        here: list[float],
        analytic: list[list[float]],
        keys: list[Key],
        refine: list[int],
        by_atol: list[int],
        mode: str,
    ) -> None:
        """Decide the entries the nominal difference could not, by extrapolation.

        ``refine``: entries whose nominal difference disagreed (or left the
        domain): do they pass within ``atol + rtol * |n|``? ``by_atol``:
        entries that agreed by atol alone: do they also agree within rtol?
        Agreement is believed from one sharp estimate. A disagreement only
        when two scales of step resolve it and agree on it, far better than
        with the analytic value: the nominal scale and the next smaller one,
        or else the two smallest scales that resolve it (a larger step that
        straddles a kink or a pole can give a steady-looking wrong estimate).
        """
        s = self.settings
        at = self.levels.xs[i].data
        judged = set(refine)

        def tol(r: int, n: float) -> float:
            return s.allowed(n) if r in judged else s.rtol * abs(n)

        def agrees(r: int, e: Estimate) -> bool:
            t = tol(r, e.value)
            return abs(analytic[r][i] - e.value) <= t + e.error and e.error <= 0.5 * t

        def differs(r: int, e: Estimate) -> bool:
            d = abs(analytic[r][i] - e.value)
            return d > tol(r, e.value) + e.error and e.error <= 0.25 * d

        def pair(r: int, one: Estimate, two: Estimate) -> bool:
            # Two scales that agree with each other far better than with the
            # analytic value: within their bounds and within a tenth of the gap.
            if not (differs(r, one) and differs(r, two)):
                return False
            gap = abs(analytic[r][i] - two.value)
            return abs(one.value - two.value) <= min(one.error + two.error, 0.1 * gap)

        def decided(r: int, ests: list[Estimate]) -> bool:
            if agrees(r, ests[-1]) if ests else False:
                return True
            # Early, only from the nominal scale and the next smaller one.
            small = [e for e in ests[:2] if e.step <= h]
            return len(small) == 2 and pair(r, *small)

        def confirming(r: int, ests: list[Estimate]) -> list[Estimate]:
            """The two smallest scales that resolve the gap, if they agree on it; else []."""
            sharp = sorted((e for e in ests if differs(r, e)), key=lambda e: e.step)[:2]
            return sharp if len(sharp) == 2 and pair(r, *sharp) else []

        estimates = extrapolate(evaluate, at, h, refine + by_atol, decided)
        names = self.levels.names
        for r in refine:
            a = analytic[r][i]
            out, path = keys[r]
            ests = estimates[r]
            if not ests:
                note = (
                    "no central difference fits in the domain at this point (it sits on "
                    "the domain's edge), so the derivative cannot be checked here"
                )
                entry = Entry(k, out, path, i, a, math.nan, s.atol, False, note, mode=mode)
                found.failures.append(entry)
                continue
            if any(agrees(r, e) for e in ests):
                continue
            sure = confirming(r, ests)
            best = min(sure or ests, key=lambda e: e.error)
            n, bound = best.value, best.error
            entry = Entry(k, out, path, i, a, n, s.allowed(n), False, "", bound, best.step, mode)
            note = kink_note(evaluate, at, here, r, h, k)
            if sure or note:
                found.failures.append(entry.replace(note=note))
            else:
                found.cautions.append(
                    f"{where(entry, names)}: the numerical derivative is uncertain here: "
                    f"estimates from steps of different sizes disagree (best {n:.9g} +- "
                    f"{bound:.3g} at step {best.step:.3g}), so the analytic {a:.9g} could "
                    "be neither confirmed nor refuted"
                )
        for r in by_atol:
            ests = estimates[r]
            sure = confirming(r, ests)
            if sure:
                best = min(sure, key=lambda e: e.error)
                a, n, bound = analytic[r][i], best.value, best.error
                entry = Entry(k, *keys[r], i, a, n, s.allowed(n), True, mode=mode)
                found.cautions.append(
                    f"{where(entry, names)}: passed by atol only: analytic {a:.9g} and "
                    f"numerical {n:.9g} (+- {bound:.3g}) differ by "
                    f"{abs(a - n) / max(abs(n), abs(a)):.3g} relatively, more than "
                    f"rtol={s.rtol:g}, but by less than atol={s.atol:g}; pass atol=0 to "
                    "check relative to the derivative's own size"
                )

    def fast(self, k: int, both: bool) -> bool:
        """One random direction u over the inputs, one weighting w of the level.

        Reverse mode computes ``w . J`` (one pass) and projects it on u;
        forward mode computes ``J . u`` (one pass) and weights it with w.
        """
        import random  # only fast mode needs it; it costs an import

        levels, s = self.levels, self.settings
        xs = levels.xs
        rng = random.Random(s.seed * 1_000_003 + k)
        u = _unit([rng.gauss(0.0, 1.0) for _ in xs])
        fs, _ = levels.level(k)
        if k == 1:
            levels.survey(fs, fence=True)
        w = _unit([rng.gauss(0.0, 1.0) for _ in fs])
        h = max(nominal_step(x.data, s.eps) for x in xs)
        step = [h * ui for ui in u]
        # The displacement actually taken by each input, after rounding.
        taken = [(x.data + si) - (x.data - si) for x, si in zip(xs, step, strict=True)]
        analytic: list[float] = []
        for mode in s.modes:
            if mode == "fwd":
                if both:
                    on_floats = forward_directional(fs, xs, u, False)
                    on_values = forward_directional(fs, xs, u, True)
                    projected = math.fsum(wf * t for wf, t in zip(w, on_values, strict=True))
                    value = math.fsum(wf * t for wf, t in zip(w, on_floats, strict=True))
                    if not s.close(projected, value):
                        return False
                tangent = forward_directional(fs, xs, taken, False)
                projected = math.fsum(wf * t for wf, t in zip(w, tangent, strict=True))
                analytic.append(projected / (2.0 * h))
                continue
            if isinstance(levels, ForeignLevels):
                g = levels.weighted(fs, w)
                analytic.append(
                    math.fsum(gi * ti for gi, ti in zip(g, taken, strict=True)) / (2 * h)
                )
                continue
            total = w[0] * fs[0]
            for wf, f in zip(w[1:], fs[1:], strict=True):
                total = total + wf * f
            g = [d.data for d in derivatives(total, xs, False)]
            if both:
                lifted = derivatives(total, xs, True)
                projected = math.fsum(ui * d.data for ui, d in zip(u, lifted, strict=True))
                value = math.fsum(ui * gi for ui, gi in zip(u, g, strict=True))
                if not s.close(projected, value):
                    return False
            analytic.append(math.fsum(gi * ti for gi, ti in zip(g, taken, strict=True)) / (2.0 * h))
        up = levels.moved(k, step)
        down = levels.moved(k, [-si for si in step])
        if up is None or down is None:
            return False  # the exhaustive check finds steps that fit
        numeric = math.fsum(wf * (a - b) for wf, a, b in zip(w, up, down, strict=True)) / (2.0 * h)
        return all(s.close(a, numeric) for a in analytic)


def _unit(v: list[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


# Argument checking: the package's one wording (minigrad.core._validate).

#: The highest order a check takes. Level k holds (inputs ** (k - 1)) functions
#: per output, each a graph larger than the last: a two-input check of order 8
#: takes about a second, and each order above multiplies that by about 5.
MAX_ORDER = 8
_MAX_ORDER_WHY = (
    f": a check of order k compares about inputs ** k derivatives, each a graph larger "
    f"than the last, so the time grows about fivefold per order above {MAX_ORDER}"
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
    # its own backward() (minigrad.checking.engines).
    xs, engine = prepare_inputs(inputs, where)
    as_int(order, f"{where}: order", least=1, most=MAX_ORDER, why=_MAX_ORDER_WHY)
    if not callable(func):
        raise TypeError(f"{where}: func must be callable, got {type(func).__name__} {func!r}")
    levels: Levels
    if engine is None:
        levels = Levels(func, cast("list[Value]", xs), _weights(grad_outputs, where), where)
    else:
        refuse_foreign(engine, order, settings)
        weights = _weights(grad_outputs, where)
        levels = ForeignLevels(func, xs, weights, where, engine, settings.nondet_tol > 0)
    # A check moves its inputs' .data: another thread's check, backward or grad
    # on a graph that shares them must not see them moved, so the whole check
    # holds the engine's (reentrant) lock, as backward does for its pass.
    with _engine_lock:
        saved = [(x, x.data, x.grad) for x in levels.xs]
        try:
            return _Checker(levels, settings, localize=engine is None).run(order)
        finally:
            # Bit-exact: the very float objects the inputs held are put back.
            for x, data, g in saved:
                x.data = data
                x.grad = g
