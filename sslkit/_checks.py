"""Input validation shared by the public API (clear errors at the boundary, never silent wrong answers)."""

from __future__ import annotations

import numbers

import numpy as np


def check_seed(seed, name: str = "seed") -> int:
    """Return ``seed`` as a Python int; raise ``TypeError`` if it is not an integer (bools are refused)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {seed!r} of type {type(seed).__name__}")
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {seed}")
    return seed


def check_count(value, name: str, *, allow_zero: bool = True) -> int:
    """Return ``value`` as a non-negative (or positive) int, with an error naming ``name`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value
