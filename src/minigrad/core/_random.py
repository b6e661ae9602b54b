"""Seedable randomness: every random choice minigrad makes comes from a caller's generator."""

from __future__ import annotations

import random


def check_rng(rng: object, who: str) -> random.Random:
    """``rng`` itself, or a fresh generator for None; never the global one.

    Example:
        >>> check_rng(random.Random(0), "MLP").random() == random.Random(0).random()
        True
    """
    if rng is None:
        return random.Random()
    if not isinstance(rng, random.Random):
        raise TypeError(
            f"{who}: rng must be a random.Random such as random.Random(0), "
            f"got {type(rng).__name__} {rng!r}"
        )
    return rng
