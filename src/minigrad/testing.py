"""Hypothesis strategies for minigrad ops: the public name of :mod:`minigrad.checking.strategies`.

Example:
    >>> from minigrad import ops, testing
    >>> testing.safe_intervals(ops.LOG, 0)
    ((0.060000000000000005, 7.99),)
"""

from minigrad.checking.strategies import (
    DEFAULT_MARGIN,
    Expression,
    Node,
    _hypothesis_setup_hook,
    expressions,
    points,
    safe_intervals,
    values,
)

__all__ = [
    "DEFAULT_MARGIN",
    "Expression",
    "Node",
    "_hypothesis_setup_hook",
    "expressions",
    "points",
    "safe_intervals",
    "values",
]
