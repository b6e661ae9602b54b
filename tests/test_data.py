"""Tests for minigrad.data: shapes on the curves, labels, seeding, noise, errors."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minigrad.teach.data import Dataset, make_circles, make_moons


def _moon_of(point: tuple[float, float]) -> int:
    """The label a noise-free point must have: which moon's circle it lies on."""
    x, y = point
    if math.isclose(math.hypot(x, y), 1.0, abs_tol=1e-9) and y >= -1e-12:
        return -1
    if math.isclose(math.hypot(x - 1.0, y - 0.5), 1.0, abs_tol=1e-9) and y <= 0.5 + 1e-12:
        return 1
    raise AssertionError(f"{point} lies on neither moon")


@given(st.integers(2, 60), st.booleans())
def test_moons_lie_on_their_half_circles_with_matching_labels(n: int, shuffle: bool) -> None:
    points, labels = make_moons(n, noise=0.0, shuffle=shuffle, rng=random.Random(0))
    assert len(points) == len(labels) == n
    # Shuffling keeps each point with its own label.
    assert [_moon_of(p) for p in points] == labels
    # The lower moon (+1) takes the odd point, as in scikit-learn.
    assert labels.count(-1) == n // 2
    assert labels.count(1) == n - n // 2


@given(st.integers(2, 60), st.floats(0.0, 0.9))
def test_circles_lie_on_their_circles_with_matching_labels(n: int, factor: float) -> None:
    points, labels = make_circles(n, factor=factor, rng=random.Random(1))
    assert len(points) == len(labels) == n
    for (x, y), label in zip(points, labels, strict=True):
        radius = 1.0 if label == -1 else factor
        assert math.hypot(x, y) == pytest.approx(radius, abs=1e-12)
    assert labels.count(-1) == n // 2
    assert labels.count(1) == n - n // 2


def test_unshuffled_moons_run_along_each_moon_from_its_end() -> None:
    points, labels = make_moons(6, noise=0.0, shuffle=False, rng=random.Random(0))
    assert labels == [-1, -1, -1, 1, 1, 1]
    assert points[0] == pytest.approx((1.0, 0.0))
    assert points[1] == pytest.approx((0.0, 1.0))
    assert points[2] == pytest.approx((-1.0, 0.0))
    assert points[3] == pytest.approx((0.0, 0.5))
    assert points[4] == pytest.approx((1.0, -0.5))
    assert points[5] == pytest.approx((2.0, 0.5))


def test_unshuffled_circles_space_points_evenly_without_repeating_the_start() -> None:
    points, labels = make_circles(8, factor=0.5, shuffle=False, rng=random.Random(0))
    assert labels == [-1] * 4 + [1] * 4
    flat = [c for p in points for c in p]
    assert flat[:8] == pytest.approx([1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, -1.0], abs=1e-12)
    assert flat[8:] == pytest.approx([0.5, 0.0, 0.0, 0.5, -0.5, 0.0, 0.0, -0.5], abs=1e-12)


def test_shuffle_mixes_the_classes() -> None:
    _, labels = make_moons(100, noise=0.0, rng=random.Random(0))
    assert labels != sorted(labels)


def test_noise_has_the_standard_deviation_asked_for() -> None:
    clean, _ = make_circles(4000, noise=0.0, shuffle=False, rng=random.Random(0))
    noisy, _ = make_circles(4000, noise=0.1, shuffle=False, rng=random.Random(0))
    offsets = [a - b for p, q in zip(noisy, clean, strict=True) for a, b in zip(p, q, strict=True)]
    assert statistics.fmean(offsets) == pytest.approx(0.0, abs=0.01)
    assert statistics.stdev(offsets) == pytest.approx(0.1, rel=0.05)


def test_same_seed_same_data_and_different_seeds_differ() -> None:
    assert make_moons(50, rng=random.Random(7)) == make_moons(50, rng=random.Random(7))
    assert make_moons(50, rng=random.Random(7)) != make_moons(50, rng=random.Random(8))
    assert make_circles(50, noise=0.05, rng=random.Random(7)) == make_circles(
        50, noise=0.05, rng=random.Random(7)
    )


def test_the_global_random_generator_is_left_alone() -> None:
    state = random.getstate()
    make_moons(20, rng=random.Random(0))
    make_moons(20)  # rng=None: a fresh generator of its own
    make_circles(20, noise=0.1)
    assert random.getstate() == state


def test_the_result_is_a_named_tuple_of_lists() -> None:
    data = make_moons(4, rng=random.Random(0))
    assert isinstance(data, Dataset)
    assert data.points is data[0]
    assert data.labels is data[1]
    assert all(isinstance(p, tuple) and len(p) == 2 for p in data.points)
    assert all(isinstance(c, float) for p in data.points for c in p)
    assert set(data.labels) == {-1, 1}


@pytest.mark.parametrize("make", [make_moons, make_circles])
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"n": 1}, ValueError, r"n must be >= 2 \(one point per class at least\), got 1"),
        ({"n": 10.0}, TypeError, "n must be an int, got float 10.0"),
        ({"n": True}, TypeError, "n must be an int, got bool True"),
        ({"noise": -0.1}, ValueError, "noise must be a finite number >= 0, got -0.1"),
        ({"noise": math.inf}, ValueError, "noise must be a finite number >= 0, got inf"),
        ({"noise": math.nan}, ValueError, "noise must be a finite number >= 0, got nan"),
        ({"noise": "0.1"}, TypeError, "noise must be an int or float, got str '0.1'"),
        ({"shuffle": 1}, TypeError, "shuffle must be a bool, got int 1"),
        ({"rng": 0}, TypeError, "rng must be a random.Random such as random.Random.0., got int 0"),
    ],
)
def test_bad_arguments_name_the_argument_and_value(
    make: Callable[..., Dataset], kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"{make.__name__}: {message}"):
        make(**kwargs)


@pytest.mark.parametrize("factor", [1.0, -0.1, 2])
def test_circles_factor_must_be_in_zero_one(factor: float) -> None:
    with pytest.raises(
        ValueError, match=rf"make_circles: factor must be in \[0, 1\), got {factor}"
    ):
        make_circles(10, factor=factor)


def test_circles_factor_must_be_a_number() -> None:
    with pytest.raises(TypeError, match="make_circles: factor must be an int or float, got str"):
        make_circles(10, factor="0.5")  # type: ignore[arg-type]
