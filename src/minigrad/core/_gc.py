"""The cyclic garbage collector paused for a block: shared by the demo and the benchmarks.

minigrad's graphs hold no reference cycles, so reference counting frees them;
while a block builds graphs of tens of thousands of nodes, the collector would
only rescan them. This module is not imported by ``import minigrad``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Turn the cyclic collector off for the block, then back to how it was.

    The collector is turned back on only if it was on before, also when the
    block raises.

    Example:
        >>> import gc
        >>> with gc_paused():
        ...     gc.isenabled()
        False
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
