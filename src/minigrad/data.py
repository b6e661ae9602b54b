"""Toy data sets for the classroom: the public name of :mod:`minigrad.teach.data`.

Example:
    >>> from minigrad.data import make_moons
    >>> len(make_moons(10).points)
    10
"""

from minigrad.teach.data import Dataset, make_circles, make_moons

__all__ = ["Dataset", "make_circles", "make_moons"]
