"""Whether ``func`` is deterministic: the same value at the same point, the same draws.

A function whose value at the same inputs changes between calls (a random
mask, a counter) has no derivative a check could confirm: every checker
refuses it with :class:`NondeterministicError`, never "agrees".
"""

from __future__ import annotations

import _random
import os
import sys
from collections.abc import Callable

from minigrad.checking.run.levels import Levels
from minigrad.checking.run.settings import Settings

__all__ = ["NondeterministicError", "deterministic", "draws"]


class NondeterministicError(ValueError):
    """``func`` gave two values at the same point: no check can confirm a derivative.

    A ``ValueError`` (what was passed in is unfit for a check), raised by every checker.
    """


NondeterministicError.__module__ = "minigrad"


def deterministic(levels: Levels, k: int, here: list[float], s: Settings) -> None:
    """Level ``k``'s values at the unmoved inputs, three times more: a function whose
    value there changes between calls (a random mask, a counter) has no derivative a
    check could confirm, and is refused.

    Values alone catch a mask that keeps with probability ``p`` except one time
    in ``p**3`` (the moved points are replayed, not drawn again). So the first
    two looks also watch the draws (:func:`draws`): where the generators
    ``func`` draws from start from other states in the two calls, its random
    numbers differ between calls at the same point, whatever ``p``, and with
    ``nondet_tol`` 0 that is refused as well. A tolerance the user gave is a
    size of change allowed, which draws cannot measure: then values decide.
    """
    tol = s.nondet_tol
    seen = []
    for look in range(3):
        again, drawn = draws(lambda: levels.values(k)) if look < 2 else (levels.values(k), None)
        seen.append(drawn)
        for r, (a, b) in enumerate(zip(here, again, strict=True)):
            if not abs(a - b) <= tol and not (a == b) and not (a != a and b != b):
                raise NondeterministicError(
                    f"{s.where}: func is not deterministic: two evaluations at the same "
                    f"inputs gave {a!r} and {b!r} (value {r} of order {k}"
                    f"{'' if k == 1 else ' derivatives'}; nondet_tol={tol:g}): a check needs "
                    "the same value at the same point (fix the random mask or counter, or pass "
                    "nondet_tol)"
                )
        if look == 1 and tol == 0.0 and seen[0] is not None and seen[0] != seen[1]:
            source = (seen[0] or seen[1] or [("os.urandom", None)])[0][0]
            raise NondeterministicError(
                f"{s.where}: func is not deterministic: it draws random numbers ({source}) "
                "that differ between two evaluations at the same inputs (order "
                f"{k}): a check needs the same value at the same point (seed the generator "
                "inside func, or leave the random mask out of the check)"
            )


#: Where a generator's numbers come from: ``os.urandom`` gives other bytes every call.
_URANDOM = os.urandom
#: The methods that draw from a generator's state (in C; every other
#: method draws through them).
_DRAWS = frozenset({"random", "getrandbits"})


def draws(call: Callable[[], list[float]]) -> tuple[list[float], list[tuple[str, object]] | None]:
    """``call()``, and the draws it made: for each generator of ``random`` drawn
    from (the module's own functions included), in the order of first draw, its
    method, its state before that draw and its state after the call; a read of
    ``os.urandom`` is a state never seen again.

    A function that is deterministic makes the same list in every call: the same
    generators, drawn from in the same order, from the same states to the same
    states (seeded inside ``func``, or not drawn at all; the state after also
    shows a reseed from the system in between). Two lists that differ are proof
    that the random numbers it reads differ. The watch is a profile hook
    (``c_call`` events, the only way to see a draw from C) of this thread; where
    another profiler holds the hook, it steps aside (None) and the looks' values
    alone decide.
    """
    if sys.getprofile() is not None:
        return call(), None
    first: dict[int, tuple[str, object, _random.Random]] = {}
    urandom: list[tuple[str, object]] = []

    def hook(frame: object, event: str, arg: object) -> None:
        if event != "c_call":
            return
        gen = getattr(arg, "__self__", None)
        if isinstance(gen, _random.Random) and id(gen) not in first:
            draw = getattr(arg, "__name__", "")
            if draw in _DRAWS:  # not seed(), which every new generator calls
                first[id(gen)] = (f"{type(gen).__name__}.{draw}", gen.getstate(), gen)
        elif arg is _URANDOM:
            urandom.append(("os.urandom", object()))

    sys.setprofile(hook)
    try:
        found = call()
    finally:
        sys.setprofile(None)
    seen = [(name, (before, gen.getstate())) for name, before, gen in first.values()]
    return found, seen + urandom
