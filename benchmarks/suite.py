"""What every section of the report gets, and what a section is: ``Bench`` and ``Section``.

``sections.py`` holds the table of sections, SECTIONS; the sections themselves
live in ``sections.py`` ((a) to (c)), ``footprint.py`` ((d) to (f)),
``checkers.py`` ((g)), ``bounds.py`` ((h)) and ``sensitivity.py`` ((i)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engines import Engine
from harness import Measurements, Target

Prepare = Callable[[], Callable[[], object]]


@dataclass
class Bench:
    """What every section gets: the engines, the runs per median, where its numbers go."""

    engines: list[Engine]
    reps: int
    found: Measurements

    def has(self, name: str) -> bool:
        return any(e.name == name for e in self.engines)


def no_setup(run: Callable[[], object]) -> Prepare:
    """A case whose run needs nothing prepared."""
    return lambda: run


@dataclass(frozen=True)
class Section:
    """One section of the report: its letter for ``--only``, and what it runs."""

    letter: str
    title: str
    run: Callable[[Bench, Sequence[int]], None]
    #: The sizes ``run`` gets with ``--quick``, and without.
    quick: tuple[int, ...]
    full: tuple[int, ...]
    #: The targets that read this section's numbers, in the order of the targets table.
    targets: tuple[Target, ...] = ()
    #: False for a section that times nothing (its figures do not depend on the
    #: machine's load): ``run.py --only ... --readme`` may publish it alone.
    timed: bool = True
