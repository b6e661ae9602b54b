"""minigrad's hypothesis plugin: ``st.from_type(Value)`` draws the Values checkers judge.

Hypothesis runs :func:`_hypothesis_setup_hook` through the entry point of
``pyproject.toml`` (``[project.entry-points.hypothesis]``, which names it in
:mod:`minigrad.testing`). Hypothesis is imported inside the hook, so importing
this module needs none. Why these magnitudes: :mod:`minigrad.checking.strategies`.

Example:
    >>> _power_of_ten(-9.0), _power_of_ten(2.0)
    (1e-08, 100.0)
"""

from __future__ import annotations

import math
import operator

from minigrad.core.value import Value

__all__: list[str] = []


def _hypothesis_setup_hook() -> None:
    """Register minigrad's strategies with hypothesis (run by its plugin entry point).

    Afterwards ``st.from_type(Value)`` draws fresh leaf Values whose data is 0
    or has a magnitude in [1e-8, 1e8] (:mod:`minigrad.checking.strategies` says why).
    """
    from hypothesis import strategies as st

    # Magnitudes log-uniform, so each decade is drawn as often as any other;
    # plain st.floats(-1e8, 1e8) puts most draws near 1e8 and few near 1.
    magnitude = st.floats(-_DECADES, _DECADES).map(_power_of_ten)
    data = st.one_of(st.just(0.0), magnitude, magnitude.map(operator.neg))
    st.register_type_strategy(Value, data.map(_leaf))


#: ``st.from_type(Value)`` draws 0 or magnitudes in [1e-8, 1e8].
_DECADES = 8.0
_TINY, _HUGE = 1e-8, 1e8


def _power_of_ten(e: float) -> float:
    # The clamp keeps pow's last-bit rounding from stepping past either end.
    return min(max(math.pow(10.0, e), _TINY), _HUGE)


def _leaf(x: float) -> Value:
    return Value(x)
