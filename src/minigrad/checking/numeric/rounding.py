"""How much round-off a computed value and its computed gradient can hold, read off the graph.

A check compares two computed numbers, and each carries the round-off of the
floats it was made from. :mod:`minigrad.checking.numeric.steps` models the
numerical side's share as a few dozen ulps of the function's value, which is
right for most functions and far too small where large intermediates cancel:
``(x + 1e10) - 1e10`` is about ``x`` but off by up to an ulp of 1e10 (2e-6),
and so is ``log1p(exp(x)) - x`` at 15 by an ulp of 15. The analytic side has
the same problem where the paths of the chain rule cancel.

One walk backwards over the graph of a value ``f`` (a reverse pass with the
absolute values of the partials) gives both, by first-order error analysis:

- each node's result is rounded once, by up to an ulp of its value, and that
  error reaches ``f`` scaled by ``|d f / d node|``: the value's round-off is
  at most ``sum over nodes of ulp(node) * |adjoint|`` (an ulp of 1e10 times 1
  in the example above);
- each input's gradient is a sum over paths of products of partials, each
  product rounded at every step: its round-off is a small multiple of the
  unit round-off times ``sum over paths of |product|`` (the "absolute
  gradient").

It costs one float pass over the graph per value, and a check makes it only
for the values whose comparison is not settled without it.

Example:
    >>> from minigrad import Value
    >>> x = Value(0.3)
    >>> noise, (spread,) = read_roundoff((x + 1e10) - 1e10, [x])
    >>> 1e-6 < noise < 1e-4, spread == 1.0
    (True, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from minigrad.core.rules.trig import COS, SIN, TAN
from minigrad.core.value import Value, toposort

__all__ = ["ANALYTIC_ULPS", "GraphRoundoff", "analytic_roundoff", "read_roundoff", "turn_scale"]

#: The periodic ops: over a step that turns their argument by more than a
#: radian, a difference sees the average slope over periods, not the slope.
_PERIODIC = (SIN, COS, TAN)

#: Relative round-off of one rounded result: an ulp (twice the unit round-off,
#: which also covers library functions good to one ulp).
_ULP = 2.0**-52
#: The least round-off of a result: a subnormal quantum.
_QUANTUM = 2.0**-1074
#: How many ulps of the absolute gradient the analytic side may be off: each
#: path is a product of a few partials, each partial good to an ulp or two,
#: and the sums add one rounding each. Tuned on the checks of the test suite
#: (products of a dozen ops, sums of a few hundred paths).
ANALYTIC_ULPS = 32.0


def read_roundoff(f: Value, xs: Sequence[Value]) -> tuple[float, list[float]]:
    """The round-off ``f``'s computed value may hold, and per input its absolute gradient.

    Args:
        f: A computed value (its graph is walked, nothing is changed).
        xs: The inputs.

    Returns:
        ``(noise, spread)``: an absolute bound on the round-off of ``f.data``
        (first order, inf when a partial could not be computed) and, per
        input, ``sum over paths of |product of partials|``, or -1 when no
        path leads from the input to ``f``.
    """
    if not isinstance(f, Value):
        return math.inf, [math.inf] * len(xs)
    adjoint: dict[int, float] = {id(f): 1.0}
    noise = 0.0
    for node in toposort([f]):
        weight = adjoint.get(id(node), 0.0)
        rule = node.rule
        if rule is None:
            continue
        if weight == 0.0:
            # A partial of 0 on the way (tanh far out): the inputs beyond are
            # still reached, with an absolute gradient of 0 but not "no path".
            for arg in node.args:
                if isinstance(arg, Value):
                    adjoint.setdefault(id(arg), 0.0)
            continue
        out = node._data
        noise += weight * max(abs(out) * _ULP, _QUANTUM)
        args = node.args
        floats = [a._data if isinstance(a, Value) else a for a in args]
        for j, arg in enumerate(args):
            if not isinstance(arg, Value):
                continue
            partial = rule.partials[j]
            try:
                slope = partial if isinstance(partial, float) else partial(*floats, out)
                slope = slope._data if isinstance(slope, Value) else float(slope)
            except (ArithmeticError, ValueError, TypeError):
                return math.inf, [math.inf] * len(xs)
            adjoint[id(arg)] = adjoint.get(id(arg), 0.0) + weight * abs(slope)
    if not math.isfinite(noise):
        noise = math.inf
    # -1: no path from the input to f at all.
    return noise, [adjoint.get(id(x), -1.0) for x in xs]


def analytic_roundoff(spread: float, analytic: float) -> float:
    """How far round-off alone can move an analytic derivative with this absolute gradient.

    Example:
        >>> analytic_roundoff(2.0, 1e-7) > 2.0 * 2.0**-52
        True
    """
    return ANALYTIC_ULPS * _ULP * max(spread, abs(analytic), 0.0) + _QUANTUM


def turn_scale(f: Value, x: Value) -> float:
    """The step of ``x`` that turns the argument of a periodic op of ``f`` by a radian.

    Steps larger than that see ``sin``'s average over its periods, not its
    slope: ``t * t + sin(t)`` at 3e7 has central differences at steps of 279
    and 2790 that agree on ``2 t`` and miss ``cos(t)``. A forward pass with
    the absolute values of the partials bounds how fast each op's argument
    moves with ``x``. inf when the graph holds no periodic op that ``x``
    reaches (or when a partial cannot be computed: the numbers decide alone).

    Example:
        >>> from minigrad import Value, sin
        >>> t = Value(3e7)
        >>> turn_scale(t * t + sin(t), t), turn_scale(t * t, t)
        (1.0, inf)
        >>> round(turn_scale(sin(1e3 * t), t), 12)
        0.001
    """
    if not isinstance(f, Value):
        return math.inf
    speed: dict[int, float] = {id(x): 1.0}
    smallest = math.inf
    for node in reversed(toposort([f])):
        rule = node.rule
        if rule is None:
            continue
        args = node.args
        moved = [speed.get(id(a), 0.0) if isinstance(a, Value) else 0.0 for a in args]
        if not any(moved):
            continue
        if rule in _PERIODIC and moved[0] > 0.0:
            smallest = min(smallest, 1.0 / moved[0])
        floats = [a._data if isinstance(a, Value) else a for a in args]
        total = 0.0
        for j, m in enumerate(moved):
            if m == 0.0:
                continue
            partial = rule.partials[j]
            try:
                slope = partial if isinstance(partial, float) else partial(*floats, node._data)
                slope = slope._data if isinstance(slope, Value) else float(slope)
            except (ArithmeticError, ValueError, TypeError):
                return math.inf
            total += abs(slope) * m
        speed[id(node)] = total
    return smallest


class GraphRoundoff:
    """The round-off a level's values and their gradients hold, read off the graph on demand
    (:func:`read_roundoff` once per value, :func:`turn_scale` once per value and input).

    Args:
        fs: The level's values (Values; anything else holds an unknown round-off).
        xs: The inputs.
    """

    def __init__(self, fs: Sequence[Value], xs: Sequence[Value]) -> None:
        self.fs = fs
        self.xs = xs
        self._read: dict[int, tuple[float, list[float]]] = {}
        self._turns: dict[tuple[int, int], float] = {}

    def _of(self, r: int) -> tuple[float, list[float]]:
        found = self._read.get(r)
        if found is None:
            found = self._read[r] = read_roundoff(self.fs[r], self.xs)
        return found

    def noise(self, r: int) -> float:
        """The absolute round-off of value ``r`` (0 where the graph cannot tell: a
        value that is not a minigrad Value, a partial that fails on floats; the
        model of :func:`~minigrad.checking.numeric.steps.roundoff` then applies)."""
        noise = self._of(r)[0]
        return noise if math.isfinite(noise) else 0.0

    def spread(self, r: int, i: int) -> float:
        """The absolute gradient of value ``r`` by input ``i`` (-1: no path in the
        graph; inf: the graph cannot tell)."""
        return self._of(r)[1][i]

    def turn(self, r: int, i: int) -> float:
        """The largest step of input ``i`` whose difference of value ``r`` sees slopes,
        not averages over the periods of a periodic op (inf: no such op)."""
        found = self._turns.get((r, i))
        if found is None:
            found = self._turns[(r, i)] = turn_scale(self.fs[r], self.xs[i])
        return found

    def analytic(self, r: int, i: int, a: float) -> float:
        """The round-off of the analytic derivative of value ``r`` by input ``i``."""
        spread = self._of(r)[1][i]
        if not math.isfinite(spread):
            return ANALYTIC_ULPS * _ULP * abs(a) + _QUANTUM
        return analytic_roundoff(spread, a)
