"""The table of derivative rules: the public name of :mod:`minigrad.core.rules`.

Rule files for ``minigrad check FILE`` import built-in rules from here
(``from minigrad.ops import MUL``).

Example:
    >>> from minigrad import ops
    >>> ops.MUL.spelling, len(ops.TABLE) > 30
    ('x * y', True)
"""

from minigrad.core.rules import *  # noqa: F403 (the whole table, by its public names)
from minigrad.core.rules import __all__ as __all__
