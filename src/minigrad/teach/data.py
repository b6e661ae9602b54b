"""Toy two-class datasets in pure Python: two moons and two circles.

The same shapes as scikit-learn's ``make_moons`` and ``make_circles``, with no
numpy or scikit-learn. Points are ``(x1, x2)`` float tuples. Labels are the
ints ``-1`` and ``+1``, ready for a max-margin (hinge) loss
``relu(1 - y * score)``; scikit-learn's 0/1 labels are ``(y + 1) // 2``.

Every random number comes from the ``rng`` passed in, never from the global
generator, so a dataset is reproducible from its seed.

Example:
    >>> import random
    >>> points, labels = make_moons(6, noise=0.0, rng=random.Random(0))
    >>> len(points), sorted(labels)
    (6, [-1, -1, -1, 1, 1, 1])
"""

from __future__ import annotations

import math
import random
from typing import NamedTuple

from minigrad.core._random import check_rng
from minigrad.core._validate import as_float, as_int

__all__ = ["Dataset", "make_circles", "make_moons"]


class Dataset(NamedTuple):
    """Points and their labels; unpacks as ``points, labels = dataset``.

    Example:
        >>> d = Dataset(points=[(0.0, 1.0)], labels=[1])
        >>> points, labels = d
        >>> labels
        [1]
    """

    #: The inputs, one ``(x1, x2)`` tuple per sample.
    points: list[tuple[float, float]]
    #: One label per point: ``-1`` or ``+1``.
    labels: list[int]


def make_moons(
    n: int = 100,
    *,
    noise: float = 0.1,
    shuffle: bool = True,
    rng: random.Random | None = None,
) -> Dataset:
    """Two interleaving half circles.

    The upper moon (centre (0, 0), radius 1) is labelled ``-1``; the lower
    one (centre (1, 0.5)) is labelled ``+1``. With ``n`` odd the lower moon
    gets the extra point, as in scikit-learn.

    Args:
        n: How many points in all (at least 2, so each class has one).
        noise: Standard deviation of Gaussian noise added to each coordinate.
        shuffle: Shuffle the samples (otherwise all ``-1`` come first).
        rng: Where the noise and the shuffle come from; pass
            ``random.Random(seed)`` for a reproducible dataset. None uses a
            fresh, unseeded ``random.Random()`` (never the global generator).

    Returns:
        The points and their labels.

    Raises:
        TypeError: An argument has the wrong type.
        ValueError: ``n`` < 2 or ``noise`` is negative or not finite.

    Example:
        >>> import random
        >>> points, labels = make_moons(4, noise=0.0, shuffle=False, rng=random.Random(0))
        >>> [(round(a, 3), round(b, 3)) for a, b in points]
        [(1.0, 0.0), (-1.0, 0.0), (0.0, 0.5), (2.0, 0.5)]
        >>> labels
        [-1, -1, 1, 1]
    """
    rng = _check(n, noise, shuffle, rng, "make_moons")
    n_upper = n // 2
    n_lower = n - n_upper
    points = [(math.cos(t), math.sin(t)) for t in _linspace(0.0, math.pi, n_upper, endpoint=True)]
    points += [
        (1.0 - math.cos(t), 0.5 - math.sin(t))
        for t in _linspace(0.0, math.pi, n_lower, endpoint=True)
    ]
    labels = [-1] * n_upper + [1] * n_lower
    return _finish(points, labels, noise, shuffle, rng)


def make_circles(
    n: int = 100,
    *,
    noise: float = 0.0,
    factor: float = 0.8,
    shuffle: bool = True,
    rng: random.Random | None = None,
) -> Dataset:
    """A small circle inside a large one.

    The outer circle (radius 1) is labelled ``-1``; the inner one (radius
    ``factor``) is labelled ``+1``. With ``n`` odd the inner circle gets the
    extra point, as in scikit-learn.

    Args:
        n: How many points in all (at least 2, so each class has one).
        noise: Standard deviation of Gaussian noise added to each coordinate.
        factor: Radius of the inner circle relative to the outer one, in [0, 1).
        shuffle: Shuffle the samples (otherwise all ``-1`` come first).
        rng: Where the noise and the shuffle come from (see :func:`make_moons`).

    Returns:
        The points and their labels.

    Raises:
        TypeError: An argument has the wrong type.
        ValueError: ``n`` < 2, ``noise`` negative or not finite, or ``factor``
            outside [0, 1).

    Example:
        >>> import random
        >>> points, labels = make_circles(4, factor=0.5, shuffle=False, rng=random.Random(0))
        >>> [(round(a, 3), round(b, 3)) for a, b in points]
        [(1.0, 0.0), (-1.0, 0.0), (0.5, 0.0), (-0.5, 0.0)]
        >>> labels
        [-1, -1, 1, 1]
    """
    rng = _check(n, noise, shuffle, rng, "make_circles")
    factor = as_float(factor, "make_circles: factor")
    if not 0.0 <= factor < 1.0:
        raise ValueError(f"make_circles: factor must be in [0, 1), got {factor!r}")
    n_outer = n // 2
    n_inner = n - n_outer
    points = [(math.cos(t), math.sin(t)) for t in _linspace(0.0, 2 * math.pi, n_outer)]
    points += [
        (factor * math.cos(t), factor * math.sin(t)) for t in _linspace(0.0, 2 * math.pi, n_inner)
    ]
    labels = [-1] * n_outer + [1] * n_inner
    return _finish(points, labels, noise, shuffle, rng)


def _linspace(start: float, stop: float, num: int, *, endpoint: bool = False) -> list[float]:
    """``num`` evenly spaced numbers from ``start``, as numpy.linspace."""
    if num == 1:
        return [start]
    steps = num - 1 if endpoint else num
    width = (stop - start) / steps
    return [start + i * width for i in range(num)]


def _finish(
    points: list[tuple[float, float]],
    labels: list[int],
    noise: float,
    shuffle: bool,
    rng: random.Random,
) -> Dataset:
    """Add the noise, then shuffle points and labels together."""
    if noise:
        points = [(a + rng.gauss(0.0, noise), b + rng.gauss(0.0, noise)) for a, b in points]
    if shuffle:
        order = list(range(len(points)))
        rng.shuffle(order)
        points = [points[i] for i in order]
        labels = [labels[i] for i in order]
    return Dataset(points, labels)


def _check(n: object, noise: object, shuffle: object, rng: object, who: str) -> random.Random:
    """Validate the shared arguments; return the generator to draw from."""
    n = as_int(n, f"{who}: n")
    if n < 2:
        raise ValueError(f"{who}: n must be >= 2 (one point per class at least), got {n!r}")
    noise = as_float(noise, f"{who}: noise")
    if not 0.0 <= noise < math.inf:
        raise ValueError(f"{who}: noise must be a finite number >= 0, got {noise!r}")
    if not isinstance(shuffle, bool):
        raise TypeError(f"{who}: shuffle must be a bool, got {type(shuffle).__name__} {shuffle!r}")
    return check_rng(rng, who)
