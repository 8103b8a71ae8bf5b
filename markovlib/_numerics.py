"""The package's two iterative kernels, written once: an adaptive Dormand-Prince 5(4) step for many initial
values at once, and a vectorized bisection. Unchecked (callers validate their arguments).

Used by :func:`markovlib.flow.integrate_batch` (gradient flow), :func:`markovlib.attention.planar_label` (the
planar gradient lines of f(e, a)), :func:`markovlib.energy.predict_limit` and
:func:`markovlib.attention.basin_boundary` (roots on energy contours).
"""
from __future__ import annotations

import numpy as np

# Dormand-Prince 5(4) tableau (Dormand & Prince 1980): stages A, 5th-order weights B5 (= the last row of A, so
# the last stage is the field at the new point: "first same as last"), embedded 4th-order weights B4.
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_B5 = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0])
_B4 = np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])


def dopri54_step(field, y, h, k1, rtol, atol):
    """One attempted Dormand-Prince 5(4) step of size ``h`` (one per row) from the states ``y`` (n, dim), with
    ``k1 = field(y)``. Returns (y5, k7, err_norm, ok, factor): the 5th-order solution, the field at it (the next
    step's k1 when accepted), the RMS of the embedded error over atol + rtol max(|y|, |y5|), ``ok = err_norm <= 1``
    and the step-size factor 0.9 err_norm^(-1/5) clipped to [0.2, 5]."""
    k = [k1]
    for i in range(1, 7):
        yi = y + h[:, None] * sum(_A[i][j] * k[j] for j in range(i) if _A[i][j] != 0)
        k.append(field(yi))
    y5 = y + h[:, None] * sum(_B5[j] * k[j] for j in range(7) if _B5[j] != 0)
    err = h[:, None] * sum((_B5[j] - _B4[j]) * k[j] for j in range(7))
    scale = atol + rtol * np.maximum(np.abs(y), np.abs(y5))
    en = np.sqrt(np.mean((err / scale) ** 2, axis=1))
    ok = en <= 1.0
    factor = np.clip(0.9 * np.where(en > 0, en, 1e-10) ** -0.2, 0.2, 5.0)
    return y5, k[6], en, ok, factor


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
