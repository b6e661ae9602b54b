"""Hypothesis strategies for minigrad ops and for a student's engine: the public names.

:mod:`minigrad.checking.strategies` (minigrad's own rules) and
:mod:`minigrad.checking.lab.engine_strategies` (a micrograd-style engine,
compared with minigrad as the second oracle), under the name users import.

Example:
    >>> from minigrad import ops, testing
    >>> testing.safe_intervals(ops.LOG, 0)
    ((0.060000000000000005, 7.99),)
"""

from minigrad.checking.lab.engine_strategies import (
    EngineMismatchError,
    assert_same_gradients,
    engine_expressions,
    engine_rules,
    engine_values,
)
from minigrad.checking.plugin import _hypothesis_setup_hook
from minigrad.checking.strategies import (
    DEFAULT_MARGIN,
    Expression,
    Node,
    expressions,
    points,
    safe_intervals,
    values,
)

__all__ = [
    "DEFAULT_MARGIN",
    "EngineMismatchError",
    "Expression",
    "Node",
    "_hypothesis_setup_hook",
    "assert_same_gradients",
    "engine_expressions",
    "engine_rules",
    "engine_values",
    "expressions",
    "points",
    "safe_intervals",
    "values",
]
