"""A check's settings: the :class:`Settings` object, validated once, and the modes.

Every public checker (:mod:`minigrad.checking.gradcheck`) bundles its
keyword arguments that are settings into one :class:`Settings` (as PyTorch's
``GradcheckInfo`` does) and hands it down to every part of the check
(:mod:`minigrad.checking.run.compare`). Its arguments are validated here, in the
package's one wording (``minigrad.core._validate``), and so are the modes of
the analytic side: JAX's names (``modes``) and PyTorch's two flags.

``atol`` and ``rtol`` both None (the default) ask for verdicts from the error
bound (:func:`~minigrad.checking.verdicts.decide.decide`); either one given asks
for the classic test, PyTorch's, with the other at PyTorch's default.

Where the caller fixed no weights, the reverse passes are weighted at random
(:meth:`Settings.weights`, seeded by ``seed``): no weight is 1 or near it, so a
``_backward`` closure that forgets ``* out.grad`` cannot come out right by
the accident of an upstream gradient of 1.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence

from minigrad.checking.numeric.estimate import Point, nominal_step
from minigrad.checking.verdicts.decide import CLASSIC_ATOL, CLASSIC_RTOL, Tolerance
from minigrad.core._validate import as_int, non_negative, positive

__all__ = ["MODES", "Settings", "modes_from_flags"]


#: The keyword arguments of the public checkers that are settings.
_SETTINGS = ("eps", "atol", "rtol", "nondet_tol", "fast_mode", "method", "seed", "modes")
#: Settings already validated, by their arguments (see Settings.of).
_VALIDATED: dict[tuple[object, ...], Settings] = {}


class Settings:
    """A check's settings, validated once and handed down to every part of it.

    Args (keyword-only): as in :func:`~minigrad.checking.gradcheck.check`;
    ``where`` names the public function in messages; ``modes`` the modes of
    the analytic side (``"rev"``, ``"fwd"``).

    Attributes (beyond the arguments): ``classic``, whether the caller gave
    ``atol`` or ``rtol`` (the classic test decides); ``exact_step``, whether
    ``eps`` was given too (the classic test then takes the central difference
    at step ``eps`` exactly, as PyTorch does); ``atol`` and ``rtol``
    are then the tolerances it uses, the one not given at PyTorch's default
    (and PyTorch's two when neither was: the classic test then judges only
    what the error bound leaves undecided).

    Example:
        >>> s = Settings("check", eps=1e-6, atol=1e-5, rtol=1e-3)
        >>> s.allowed(100.0), s.classic
        (0.10001, True)
        >>> Settings("check").classic, Settings("check", rtol=0.0).atol
        (False, 1e-05)
    """

    __slots__ = (
        "atol",
        "classic",
        "eps",
        "exact_step",
        "fast_mode",
        "method",
        "modes",
        "nondet_tol",
        "rtol",
        "seed",
        "tolerance",
        "where",
    )

    def __init__(
        self,
        where: str,
        *,
        eps: object = None,
        atol: object = None,
        rtol: object = None,
        nondet_tol: object = 0.0,
        fast_mode: object = False,
        method: object = "central",
        seed: object = 0,
        modes: object = ("rev",),
    ) -> None:
        # Every argument comes straight from a user: each is validated here.
        self.where = where
        # eps None: the checker's own step, PyTorch's 1e-6 scaled to the input.
        self.eps = 1e-6 if eps is None else positive(eps, f"{where}: eps")
        self.classic = atol is not None or rtol is not None
        # eps with atol or rtol: PyTorch's and lab 03's call form, whose
        # numerical derivative is the central difference at step eps exactly.
        self.exact_step = self.classic and eps is not None
        self.atol = CLASSIC_ATOL if atol is None else non_negative(atol, f"{where}: atol")
        self.rtol = CLASSIC_RTOL if rtol is None else non_negative(rtol, f"{where}: rtol")
        self.nondet_tol = non_negative(nondet_tol, f"{where}: nondet_tol")
        if method not in ("central", "richardson"):
            raise ValueError(f"{where}: method must be 'central' or 'richardson', got {method!r}")
        self.method = str(method)
        self.fast_mode = _flag(fast_mode, "fast_mode", where)
        self.seed = as_int(seed, f"{where}: seed")
        self.modes = _modes(modes, where)
        #: The classic test's tolerance, or None: the bounds decide.
        self.tolerance = Tolerance(self.atol, self.rtol) if self.classic else None

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
        return self._but(modes=modes)

    def bounds_only(self) -> Settings:
        """A copy whose bounds decide, with no tolerance: a classic check's orders below its
        top one (PyTorch's ``gradgradcheck`` holds order 2 alone to atol and rtol; a right
        ``x**3`` at ``eps=1e-3``, ``atol=1e-7`` is 1e-6 off at order 1 by truncation)."""
        return self._but(classic=False, exact_step=False, tolerance=None)

    def exhaustive(self) -> Settings:
        """A copy that compares every entry (the mixed entries' check beside the point)."""
        return self._but(fast_mode=False)

    def _but(self, **changed: object) -> Settings:
        copy = Settings.__new__(Settings)
        for name in Settings.__slots__:
            setattr(copy, name, changed.get(name, getattr(self, name)))
        return copy

    def weights(self, n: int) -> list[float]:
        """Random weights of the reverse passes of ``n`` outputs, from ``seed``.

        Each is 1.1 to 1.9 in size, of either sign: never 1, and never the
        inverse of an output's scale by design (1/8 for ``f(x) * 8`` is outside
        them), so a missing factor of ``out.grad`` cannot cancel out.

        Example:
            >>> w = Settings("check").weights(3)
            >>> all(1.1 <= abs(x) <= 1.9 for x in w), w == Settings("check").weights(3)
            (True, True)
        """
        import random  # an import paid only where weights are drawn

        rng = random.Random(self.seed * 1_000_003 + n)
        return [rng.choice((-1.0, 1.0)) * rng.uniform(1.1, 1.9) for _ in range(n)]

    def step(self, x: float) -> float:
        """The nominal step at ``x``: ``eps`` itself in the classic call form with
        ``eps`` given (PyTorch's), else ``eps`` scaled to ``x``
        (:func:`~minigrad.checking.numeric.estimate.nominal_step`).

        Example:
            >>> Settings("check", eps=1e-2, atol=1e-4).step(100.0)
            0.01
            >>> Settings("check", eps=1e-2).step(100.0)
            0.1
        """
        return self.eps if self.exact_step else nominal_step(x, self.eps)

    def exact(self, point: Point, eps: float | None = None) -> list[float] | None:
        """The central difference at step ``eps`` exactly (this one's, or the one given:
        a direction's, per unit of its length), per value, as PyTorch takes it: ``(f(x +
        eps) - f(x - eps)) / (2 eps)`` (with ``method="richardson"``, extrapolated from
        ``eps`` and ``eps / 2``), or None off the domain."""
        eps = self.eps if eps is None else eps

        def quotient(eps: float) -> list[float] | None:
            up, down = point.at(point.x + eps), point.at(point.x - eps)
            if up is None or down is None:
                return None
            return [(u - d) / (2.0 * eps) for u, d in zip(up, down, strict=True)]

        values = quotient(eps)
        if values is None or self.method != "richardson":
            return values
        halved = quotient(eps / 2.0)
        if halved is None:
            return None
        return [(4.0 * f - c) / 3.0 for c, f in zip(values, halved, strict=True)]

    def allowed(self, numerical: float) -> float:
        """The tolerance of an entry: ``atol + rtol * |numerical|``."""
        return self.atol + self.rtol * abs(numerical)

    def close(self, analytic: float, numerical: float) -> bool:
        """Whether an entry passes (never when either side is not finite)."""
        if not (math.isfinite(analytic) and math.isfinite(numerical)):
            return False
        return abs(analytic - numerical) <= self.allowed(numerical)


# The modes, from JAX's names or PyTorch's two flags; argument checking in the
# package's one wording (minigrad.core._validate).


#: The modes a check computes analytic derivatives in (JAX's names).
MODES = ("fwd", "rev")


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


def modes_from_flags(where: str, **flags: object) -> tuple[str, ...]:
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


def callable_with(func: object, n: int, where: str) -> None:
    """A TypeError naming ``func`` unless it can be called with ``n`` inputs (``func(*inputs)``),
    as far as its signature tells (a builtin may have none: then its first call tells)."""
    if not callable(func):
        raise TypeError(f"{where}: func must be callable, got {type(func).__name__} {func!r}")
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*range(n))
    except TypeError as exc:
        raise TypeError(
            f"{where}: func is called with the {n} input{'s' * (n != 1)} as its arguments, "
            f"func(*inputs), and {func!r} cannot take them: {exc}"
        ) from None
