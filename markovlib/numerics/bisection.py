"""Vectorized bisection, written once (unchecked: callers validate their arguments).

Used by :func:`markovlib.markov.energy.predict_limit` and :func:`markovlib.markov.attention.basin_boundary`
(roots on energy contours).
"""
from __future__ import annotations

import numpy as np


def bisect(root_is_right, lo, hi, *, iters=200, xtol=None):
    """Vectorized bisection of the brackets [lo, hi] (arrays; ``hi < lo`` allowed): each halving keeps the half
    that holds the root, ``root_is_right(mid)`` (a boolean array) saying whether it lies on the side of ``hi``.
    Stops after ``iters`` halvings, or once every bracket is shorter than ``xtol`` max(1, |lo|) (``xtol=None``:
    always ``iters``). Returns the midpoints. The caller's predicate fixes what a tie (fun(mid) = 0 to rounding)
    does, which matters where the function is flat near its root."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        right = root_is_right(mid)
        lo = np.where(right, mid, lo)
        hi = np.where(right, hi, mid)
        if xtol is not None and np.all(np.abs(hi - lo) <= xtol * np.maximum(1.0, np.abs(lo))):
            break
    return 0.5 * (lo + hi)


def sign_change_root(fun, lo, hi, *, iters=200, xtol=1e-15):
    """:func:`bisect` for a root of ``fun`` where fun(lo) and fun(hi) differ in sign: the root is right of mid
    where sign(fun(mid)) is the sign of fun(lo)."""
    flo = np.sign(fun(lo))
    return bisect(lambda mid: np.sign(fun(mid)) == flo, lo, hi, iters=iters, xtol=xtol)
