"""Central finite differences: the independent reference that Hessians and gradients are checked against.

These are deliberately naive (no markovlib algebra): they only evaluate the function they are given, so a check
against them does not go through the derivative code under test.
"""
from __future__ import annotations

import numpy as np


def fd_gradient(fun, x, h: float = 1e-6) -> np.ndarray:
    """Central differences (f(x + h e_i) - f(x - h e_i)) / 2h of a scalar function at the point ``x``."""
    x0 = np.asarray(x, dtype=float).ravel()
    if not np.all(np.isfinite(x0)):
        raise ValueError(f"x must be finite, got {x!r}")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h must be a finite step > 0, got {h!r}")
    g = np.zeros_like(x0)
    for i in range(x0.size):
        xp, xm = x0.copy(), x0.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (float(fun(xp)) - float(fun(xm))) / (2 * h)
    return g


def fd_hessian(fun, x, h: float = 1e-4) -> np.ndarray:
    """Central differences of a scalar function: H_ij = (f(++) - f(+-) - f(-+) + f(--)) / 4h^2, symmetric
    by construction. Error O(h^2) in the fourth derivatives plus O(eps / h^2) rounding."""
    x0 = np.asarray(x, dtype=float).ravel()
    if not np.all(np.isfinite(x0)):
        raise ValueError(f"x must be finite, got {x!r}")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h must be a finite step > 0, got {h!r}")
    n = x0.size
    H = np.zeros((n, n))

    def f(i, si, j, sj):
        y = x0.copy()
        y[i] += si * h
        y[j] += sj * h
        return float(fun(y))

    for i in range(n):
        for j in range(i, n):
            H[i, j] = H[j, i] = (f(i, 1, j, 1) - f(i, 1, j, -1) - f(i, -1, j, 1) + f(i, -1, j, -1)) / (4 * h * h)
    return H
