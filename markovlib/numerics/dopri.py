"""The adaptive Dormand-Prince 5(4) step, written once for many initial values at once (unchecked: callers
validate their arguments).

Used by :func:`markovlib.markov.flow.integrate_batch` (gradient flow) and
:func:`markovlib.markov.attention.planar_label` (the planar gradient lines of f(e, a)).
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
    and the step-size factor 0.9 err_norm^(-1/5) clipped to [0.2, 5] (0.2 where a stage overflowed, e.g. a first
    step far too long for a very stiff start)."""
    k = [k1]
    for i in range(1, 7):
        yi = y + h[:, None] * sum(_A[i][j] * k[j] for j in range(i) if _A[i][j] != 0)
        k.append(field(yi))
    y5 = y + h[:, None] * sum(_B5[j] * k[j] for j in range(7) if _B5[j] != 0)
    err = h[:, None] * sum((_B5[j] - _B4[j]) * k[j] for j in range(7))
    scale = atol + rtol * np.maximum(np.abs(y), np.abs(y5))
    with np.errstate(over="ignore", invalid="ignore"):
        en = np.sqrt(np.mean((err / scale) ** 2, axis=1))
    ok = en <= 1.0  # False where a stage overflowed (en is inf or NaN): the step is rejected
    factor = np.clip(0.9 * np.where(en > 0, en, 1e-10) ** -0.2, 0.2, 5.0)
    factor = np.where(np.isfinite(en), factor, 0.2)  # and retried 5 times shorter, never with a NaN step size
    return y5, k[6], en, ok, factor
