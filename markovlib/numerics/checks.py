"""Argument checks shared by the package: every bad input becomes a ValueError that names the argument
and the allowed range."""
from __future__ import annotations

import numbers

import numpy as np


def probability(name: str, value) -> float:
    """A transition probability strictly inside (0, 1) (the chain must be ergodic and non-degenerate)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number in the open interval (0, 1), got {value!r}") from None
    if not np.isfinite(x) or not 0.0 < x < 1.0:
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value!r}")
    return x


def positive_int(name: str, value) -> int:
    """A strictly positive integer (sizes, lengths, counts)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{name} must be a positive integer (>= 1), got {value!r}")
    return int(value)


def nonnegative_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer (>= 0), got {value!r}")
    return int(value)


def positive_real(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite real number > 0, got {value!r}") from None
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a finite real number > 0, got {value!r}")
    return x


def finite_array(name: str, value, ndim=None) -> np.ndarray:
    """A real array (or scalar) with only finite entries; ``ndim`` (an int or a tuple of ints), when given, is the
    allowed number of axes."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite real number or array, got {value!r}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, numbers.Integral) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} axes, got shape {arr.shape}")
    bad = arr.size - int(np.count_nonzero(np.isfinite(arr)))
    if bad:
        raise ValueError(f"{name} must be finite (no NaN or inf), got {bad} non-finite of {arr.size} entries")
    return arr


def choice(name: str, value, allowed) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {sorted(allowed)}, got {value!r}")
    return value
