"""Derivative checks: gradcheck, gradgradcheck and check_grads of any order.

One machinery serves every order (:mod:`minigrad.levels`): level 1 is
``func``'s outputs, level k + 1 every analytic derivative of level k. A check
of order n compares, for levels 1 to n, the analytic derivatives of the
level's values with numerical ones, so a second-order check also checks the
first derivative and sees the whole Hessian of each output.

The analytic side comes in the modes the check asks for (``modes``): reverse
mode (``"rev"``, one reverse pass per function of the level) and forward mode
(``"fwd"``, one jvp per input with the unit tangent; above level 1, the jvp of
the level's reverse-mode gradients: forward over reverse). Each mode is
compared with the same numerical derivatives, and every failing entry says
which mode it came from.

How an entry is judged (the numerics are in :mod:`minigrad.numeric`):

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

Failures are then explained (:mod:`minigrad.diagnose`): a kink or a jump is
named as such, and otherwise the op whose own rule disagrees with its forward.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence

from minigrad.checking.diagnose import find_fault, kink_note, looks_kinked
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
from minigrad.core._validate import as_int, non_negative, positive
from minigrad.core.grad import grad
from minigrad.core.inputs import value_list, weights
from minigrad.core.value import Value
from minigrad.core.value import _lock as _engine_lock

__all__ = [
    "Entry",
    "GradcheckError",
    "GradcheckWarning",
    "Report",
    "Settings",
    "check",
    "check_grads",
    "eps_curve",
    "gradcheck",
    "gradgradcheck",
]


class GradcheckWarning(UserWarning):
    """A check passed, but something deserves a look: a kink, a pass by atol only."""


class GradcheckError(AssertionError):
    """A derivative check failed; ``.report`` holds every failing entry.

    The message is the report: short in a terminal, complete under pytest.
    """

    def __init__(self, report: Report) -> None:
        super().__init__(report.text(full="PYTEST_CURRENT_TEST" in os.environ))
        self.report = report

    def _repr_html_(self) -> str:
        return self.report._repr_html_()


# Shown by its public name in tracebacks and doctests, not by the module it lives in.
GradcheckError.__module__ = "minigrad"


#: The keyword arguments of the public checkers that are settings.
_SETTINGS = ("eps", "atol", "rtol", "nondet_tol", "fast_mode", "method", "seed", "modes")
#: Settings already validated, by their arguments (see Settings.of).
_VALIDATED: dict[tuple[object, ...], Settings] = {}


class Settings:
    """A check's settings, validated once and handed down to every part of it.

    Args (keyword-only): as in :func:`check`; ``where`` names the public
    function in messages; ``modes`` the modes of the analytic side
    (``"rev"``, ``"fwd"``).

    Example:
        >>> s = Settings("check", eps=1e-6, atol=1e-5, rtol=1e-3)
        >>> s.allowed(100.0)
        0.10001
    """

    __slots__ = (
        "atol",
        "eps",
        "fast_mode",
        "method",
        "modes",
        "nondet_tol",
        "rtol",
        "seed",
        "where",
    )

    def __init__(
        self,
        where: str,
        *,
        eps: object = 1e-6,
        atol: object = 1e-5,
        rtol: object = 1e-3,
        nondet_tol: object = 0.0,
        fast_mode: object = False,
        method: object = "central",
        seed: object = 0,
        modes: object = ("rev",),
    ) -> None:
        # Every argument comes straight from a user: each is validated here.
        self.where = where
        self.eps = positive(eps, f"{where}: eps")
        self.atol = non_negative(atol, f"{where}: atol")
        self.rtol = non_negative(rtol, f"{where}: rtol")
        self.nondet_tol = non_negative(nondet_tol, f"{where}: nondet_tol")
        if method not in ("central", "richardson"):
            raise ValueError(f"{where}: method must be 'central' or 'richardson', got {method!r}")
        self.method = str(method)
        self.fast_mode = bool(fast_mode)
        self.seed = as_int(seed, f"{where}: seed")
        self.modes = _modes(modes, where)

    @classmethod
    def of(cls, where: str, given: dict[str, object], **changed: object) -> Settings:
        """The settings among a public checker's arguments (its ``locals()``).

        Each public checker keeps PyTorch's explicit signature and hands its
        arguments over in one line, so no keyword is forwarded twice.
        """
        picked = {name: given[name] for name in _SETTINGS if name in given}
        picked.update(changed)
        # Validating costs a tenth of a small check; the same arguments are
        # validated once. The key holds each value's type, so a bool never
        # passes for the int it equals.
        try:
            key = (where, tuple(picked.items()), tuple(map(type, picked.values())))
            settings = _VALIDATED.get(key)
        except TypeError:  # an unhashable argument (a list of modes): no cache
            return cls(where, **picked)
        if settings is None:
            settings = cls(where, **picked)
            if len(_VALIDATED) >= 64:
                _VALIDATED.clear()
            _VALIDATED[key] = settings
        return settings

    def with_modes(self, modes: tuple[str, ...]) -> Settings:
        """A copy that checks in ``modes`` (fault localisation checks the failing modes)."""
        copy = Settings.__new__(Settings)
        for name in Settings.__slots__:
            setattr(copy, name, getattr(self, name))
        copy.modes = modes
        return copy

    def allowed(self, numerical: float) -> float:
        """The tolerance of an entry: ``atol + rtol * |numerical|``."""
        return self.atol + self.rtol * abs(numerical)

    def close(self, analytic: float, numerical: float) -> bool:
        """Whether an entry passes (never when either side is not finite)."""
        if not (math.isfinite(analytic) and math.isfinite(numerical)):
            return False
        return abs(analytic - numerical) <= self.allowed(numerical)


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
            both = k < order or not self.localize
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


# Argument checking: the package's one wording (minigrad._validate).


def _inputs(inputs: object, where: str) -> list[Value]:
    return value_list(inputs, f"{where}: inputs", nonempty=True, finite=True, distinct=True)


#: The modes a check computes analytic derivatives in (JAX's names).
MODES = ("fwd", "rev")
#: A mode's pass, as notes name it.
_PASSES = {"rev": "backward", "fwd": "forward mode (jvp)"}


def _modes(modes: object, where: str) -> tuple[str, ...]:
    """``modes`` as a tuple of distinct modes, in the order given; one str is one mode."""
    if isinstance(modes, str):
        modes = (modes,)
    if not isinstance(modes, Sequence):
        raise TypeError(
            f"{where}: modes must be a sequence of 'fwd' and 'rev', "
            f"got {type(modes).__name__} {modes!r}"
        )
    found: list[str] = []
    for mode in modes:
        if mode not in MODES:
            raise ValueError(
                f"{where}: modes may hold 'fwd' (forward mode) and 'rev' (reverse mode), "
                f"got {mode!r} in {modes!r}"
            )
        if mode not in found:
            found.append(mode)
    if not found:
        raise ValueError(f"{where}: modes is empty; give 'fwd', 'rev' or both")
    return tuple(found)


def _flag(value: object, name: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{where}: {name} must be a bool, got {type(value).__name__} {value!r}")
    return value


_REVERSE_ONLY = ("rev",)


def _pick(where: str, **flags: object) -> tuple[str, ...]:
    """PyTorch's two mode flags as modes: reverse first, then forward."""
    (rev_name, rev), (fwd_name, fwd) = flags.items()
    if rev is True and fwd is False:
        return _REVERSE_ONLY  # PyTorch's defaults, every time but one
    modes = tuple(
        m
        for m, on in (("rev", _flag(rev, rev_name, where)), ("fwd", _flag(fwd, fwd_name, where)))
        if on
    )
    if not modes:
        raise ValueError(
            f"{where}: {rev_name} and {fwd_name} are both False: nothing would be checked; "
            "set at least one to True"
        )
    return modes


def _weights(grad_outputs: object, where: str) -> list[float | Value] | None:
    if grad_outputs is None:
        return None
    if isinstance(grad_outputs, Value | int | float):
        grad_outputs = [grad_outputs]  # one output's weight, as PyTorch accepts
    # The count is checked against the outputs where they are made (Levels.level).
    return weights(grad_outputs, None, f"{where}: grad_outputs")


def _run(
    func: Func,
    inputs: Sequence[Value],
    order: int,
    grad_outputs: Sequence[float | Value] | None,
    settings: Settings,
) -> Report:
    """Validate, check, and put every input back bit for bit."""
    where = settings.where
    xs = _inputs(inputs, where)
    as_int(order, f"{where}: order", least=1)
    if not callable(func):
        raise TypeError(f"{where}: func must be callable, got {type(func).__name__} {func!r}")
    levels = Levels(func, xs, _weights(grad_outputs, where), where)
    # A check moves its inputs' .data: another thread's check, backward or grad
    # on a graph that shares them must not see them moved, so the whole check
    # holds the engine's (reentrant) lock, as backward does for its pass.
    with _engine_lock:
        saved = [(x, x.data, x.grad) for x in levels.xs]
        try:
            return _Checker(levels, settings, localize=True).run(order)
        finally:
            # Bit-exact: the very float objects the inputs held are put back.
            for x, data, g in saved:
                x.data = data
                x.grad = g


def _conclude(report: Report, raise_exception: bool) -> bool:
    """True, or GradcheckError/False; warns of what a passing check noticed.

    Called straight from each public checker, so stacklevel 3 is its caller.
    """
    __tracebackhide__ = True
    if report.ok:
        for text in report.warnings:
            warnings.warn(f"gradcheck passed, but {text}", GradcheckWarning, stacklevel=3)
        return True
    if raise_exception:
        raise GradcheckError(report)
    return False


def check(
    func: Func,
    inputs: Sequence[Value],
    *,
    order: int = 1,
    grad_outputs: Sequence[float | Value] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    seed: int = 0,
    modes: Sequence[str] = ("rev",),
) -> Report:
    """Check every derivative of ``func`` up to ``order``; return the report.

    The engine behind :func:`gradcheck`, :func:`gradgradcheck` and
    :func:`check_grads`: it never raises on a mismatch, and the report shows
    itself as a table (HTML in a notebook). Inputs are restored bit for bit.

    Args:
        func: Takes the inputs, returns a Value or a tuple of Values.
        inputs: The Values to perturb (each exactly once).
        order: Check derivatives of orders 1 to ``order``.
        grad_outputs: Weights v: above order 1, the derivatives of
            sum_j v_j * out_j are checked; Value weights are checked as inputs.
        eps: The nominal step, scaled for |x| > 1: ``eps * max(1, sqrt(|x|))``.
        atol: Absolute tolerance (0 checks relative to each derivative's size).
        rtol: Relative tolerance (to the numerical value).
        nondet_tol: How far two passes (of each mode) over one graph may differ
            (the second runs only when the graph holds a rule that is not
            one of ``ops.TABLE`` as built: those are pure).
        fast_mode: Compare one random directional derivative per order first
            (3 evaluations of ``func``: at the point and two moved points,
            instead of 2N + 1); only if it fails, compare every entry.
        method: ``"central"`` or ``"richardson"`` (the nominal difference
            extrapolated from eps and eps/2: twice the evaluations).
        seed: Seed of fast mode's random directions.
        modes: How the analytic derivatives are computed, JAX's names:
            ``"rev"`` (reverse mode), ``"fwd"`` (forward mode: the jvp with
            each unit tangent; above order 1, forward over reverse), or both
            (each compared with the same numerical derivatives). A failing
            entry names its mode.

    Returns:
        The :class:`Report`.

    Example:
        >>> from minigrad import Value
        >>> x, y = Value(0.5), Value(2.0)
        >>> check(lambda a, b: (a * b).sin(), [x, y], order=2).ok
        True
        >>> print(check(lambda a, b: (a * b).sin(), [x, y], order=2, modes=("fwd", "rev")))
        gradcheck passed: orders 1-2, 12 comparisons (exhaustive; forward and reverse mode)
    """
    settings = Settings.of("check", locals())
    return _run(func, inputs, order, grad_outputs, settings)


def check_grads(
    func: Func,
    inputs: Sequence[Value],
    *,
    order: int = 1,
    grad_outputs: Sequence[float | Value] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    seed: int = 0,
    modes: Sequence[str] = ("rev",),
) -> bool:
    """Check every derivative of ``func`` up to ``order`` against numerical ones.

    Raises :class:`GradcheckError` on a mismatch (or returns False when
    ``raise_exception`` is False). Arguments as in :func:`check`; ``modes``
    is JAX's: ``("fwd", "rev")`` checks forward and reverse mode.

    Example:
        >>> from minigrad import Value
        >>> check_grads(lambda x: x.tanh() * x, [Value(0.3)], order=3)
        True
        >>> check_grads(lambda x: x.tanh() * x, [Value(0.3)], order=3, modes=("fwd", "rev"))
        True
    """
    __tracebackhide__ = True
    settings = Settings.of("check_grads", locals())
    return _conclude(_run(func, inputs, order, grad_outputs, settings), raise_exception)


def gradcheck(
    func: Func,
    inputs: Sequence[Value],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
) -> bool:
    """Check first derivatives: every output against every input.

    ``check_backward_ad`` checks reverse mode and ``check_forward_ad``
    forward mode (the jvp with each unit tangent), PyTorch's names; at
    least one must be True. Other arguments as in :func:`check`.

    Example:
        >>> from minigrad import Value
        >>> gradcheck(lambda a, b: a * b.exp(), [Value(1.5), Value(-0.5)])
        True
        >>> gradcheck(lambda a: a.sin(), [Value(0.5)], check_forward_ad=True)
        True
    """
    __tracebackhide__ = True
    modes = _pick(
        "gradcheck", check_backward_ad=check_backward_ad, check_forward_ad=check_forward_ad
    )
    settings = Settings.of("gradcheck", locals(), modes=modes)
    return _conclude(_run(func, inputs, 1, None, settings), raise_exception)


def gradgradcheck(
    func: Func,
    inputs: Sequence[Value],
    grad_outputs: Sequence[float | Value] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
) -> bool:
    """Check first and second derivatives (the whole Hessian of each output).

    With ``grad_outputs`` v, the second order checked is that of
    sum_j v_j * out_j, and Value weights are checked as inputs too.

    ``check_rev_over_rev`` checks the second derivatives by reverse mode
    over the reverse-mode gradient, ``check_fwd_over_rev`` by forward mode
    over it (the jvp of the gradient); the first derivatives are checked in
    the same modes (reverse, forward). PyTorch's names; at least one must
    be True.

    Example:
        >>> from minigrad import Value
        >>> gradgradcheck(lambda x, y: (x - y).exp(), [Value(0.2), Value(0.7)])
        True
        >>> gradgradcheck(lambda x: x.exp() * x, [Value(0.2)], check_fwd_over_rev=True)
        True
    """
    __tracebackhide__ = True
    modes = _pick(
        "gradgradcheck",
        check_rev_over_rev=check_rev_over_rev,
        check_fwd_over_rev=check_fwd_over_rev,
    )
    settings = Settings.of("gradgradcheck", locals(), modes=modes)
    return _conclude(_run(func, inputs, 2, grad_outputs, settings), raise_exception)


def eps_curve(
    func: Callable[[Value], Value], x: float, epsilons: Sequence[float] | None = None
) -> list[tuple[float, float]]:
    """The error of the central difference against the analytic derivative, per eps.

    Plotted on log axes it is U-shaped: round-off (about 1e-16 * |f| / h) on
    the left, truncation (about h**2 * |f'''| / 6) on the right. The step at
    each eps is the checker's: ``h = eps * max(1, sqrt(|x|))``, never so small that
    ``x + h == x``; an eps whose step leaves ``func``'s domain gives NaN.

    Args:
        func: A one-input function of a Value.
        x: The point.
        epsilons: The values of eps; by default 1e-1 down to 1e-13, two per decade.

    Returns:
        ``(eps, |central difference - analytic|)`` pairs, largest eps first.

    Example:
        >>> curve = eps_curve(lambda v: v.sin(), 1.0)
        >>> best = min(curve, key=lambda pair: pair[1])[0]
        >>> 1e-8 <= best <= 1e-3
        True
    """
    steps = list(epsilons) if epsilons is not None else [10 ** (-k / 2) for k in range(2, 27)]
    leaf = Value(x)
    (d,) = grad(func(leaf), [leaf])
    exact = d.data

    def evaluate(t: float) -> list[float] | None:
        try:
            return [func(Value(t)).data]
        except (ArithmeticError, ValueError):
            return None

    out = []
    for eps in steps:
        eps = positive(eps, "eps_curve: epsilons[i]")
        sides = central(evaluate, x, nominal_step(x, eps))
        if sides is None:
            out.append((eps, math.nan))
            continue
        up, down, half = sides
        out.append((eps, abs((up[0] - down[0]) / (2.0 * half) - exact)))
    return out
