"""Multi-start root searches for critical points (grad L = 0), used by the chapters on Thms 1, 9 and 10.

A root search is an independent check of a classification of critical points: it does not assume where the
critical points are, it finds zeros of the gradient from random starts and reports where they landed.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import root


def find_root(fun, x0, jac=None, tol: float = 1e-10):
    """A zero of the vector field ``fun`` near ``x0``: Powell's hybrid method (with the Jacobian ``jac`` when
    given), then Levenberg-Marquardt from where it stopped if it stalled. Returns the point (an array), or
    None where no point with ||fun|| <= ``tol`` was reached (or the iterates left the domain: a ValueError or a
    non-finite value inside ``fun``)."""
    x0 = np.asarray(x0, dtype=float)
    if not np.all(np.isfinite(x0)):
        raise ValueError(f"x0 must be finite, got {x0!r}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite real number > 0, got {tol!r}")

    def norm(x):
        v = np.asarray(fun(x), dtype=float)
        return float(np.linalg.norm(v)) if np.all(np.isfinite(v)) else np.inf

    try:
        with np.errstate(all="ignore"):
            sol = root(fun, x0, jac=jac, method="hybr", options={"xtol": 1e-14})
            x = sol.x
            if not norm(x) <= tol:
                sol = root(fun, x, jac=jac, method="lm", options={"xtol": 1e-15, "ftol": 1e-15})
                x = sol.x
            ok = norm(x) <= tol
    except (ValueError, FloatingPointError, OverflowError):
        return None
    return x if ok and np.all(np.isfinite(x)) else None


def multistart_roots(fun, starts, jac=None, tol: float = 1e-10):
    """:func:`find_root` from every row of ``starts`` (n, k). Returns (roots, found): an (n, k) array with NaN
    rows where no root was reached, and the boolean mask of the rows that found one."""
    starts = np.atleast_2d(np.asarray(starts, dtype=float))
    out = np.full_like(starts, np.nan)
    for i, x0 in enumerate(starts):
        x = find_root(fun, x0, jac=jac, tol=tol)
        if x is not None:
            out[i] = x
    return out, ~np.isnan(out).any(axis=1)
