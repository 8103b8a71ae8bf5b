"""The second invariant of the attention flow (beyond the paper; the chapter ``attention``, Sec. 4): the (e, a)
projection of every trajectory stays on one gradient line of f(e, a) = e^2 (1 + a e^2), i.e. u = e^2 solves
du/da = 4/u + 8a along it, and its label (``attention.planar_label``: the axis point A, or a_Gamma beyond the
separatrix S) is constant. These are the chapter's checks of it along integrated flows.

* :func:`labels_at`: ``planar_label`` at (sqrt(u), a) at relative tolerance rtol.
* :func:`line_check`: the distance of each point of a flow from the line through its start (integrated here with
  DOP853, independent of markovlib), the squeeze J (d log J/da = -4/u^2), and whether the start's label is
  bracketed by the labels of the lines displaced by 10x the allowance (eq-att-squeeze).
* :func:`order_below`: a positive x printed as a bound a power of ten at least 100x above it.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

from ..book.formatting import bound
from ..numerics import checks
from . import attention

__all__ = ["labels_at", "line_check", "order_below"]


def labels_at(u, a, rtol):
    """planar_label at (sqrt(u), a) at relative tolerance rtol."""
    return attention.planar_label(np.sqrt(u), a, rtol=rtol, atol=rtol / 10)


def line_check(tr, line_tol):
    """The checks of the second invariant along a trajectory (arrays tr.e, tr.a): the distance of each point from the
    line through the start (independent of markovlib, in units of its allowance), the squeeze J, and whether the
    start's label is bracketed by the labels of the lines displaced by 10x the allowance, widened by the labels' own
    error, one-sided where a displaced line lies across S (eq-att-squeeze). ``line_tol`` is the allowed distance (in
    e^2 at equal a, times (1 + e^2) max(1, J)); ``tr`` has arrays ``e`` and ``a`` (a ``flow.Trajectory``)."""
    line_tol = checks.positive_real("line_tol", line_tol)
    e0, a0 = float(tr.e[0]), float(tr.a[0])
    u_t, a_t = tr.e**2, tr.a
    # away from the axis, where a is a good coordinate along the line; e0^2 / 4 (not e0^2) so that a flow that starts
    # below 1e-2 and heads to the axis is checked at later points too, not only at its start
    sel = u_t >= min(1e-2, e0**2 / 4)
    u_t, a_t = u_t[sel], a_t[sel]
    rhs = lambda s, y: [4 / y[0] + 8 * s, -4 / y[0] ** 2]  # noqa: E731  (du/da, d log J/da)
    u_ref, log_j = np.empty_like(u_t), np.empty_like(u_t)
    for part in (a_t >= a0, a_t < a0):
        if part.any():
            end = a_t[part].max() if a_t[part].max() > a0 else a_t[part].min()
            sol = solve_ivp(rhs, (a0, end), [e0**2, 0.0], method="DOP853", rtol=1e-13, atol=1e-15, dense_output=True)
            u_ref[part], log_j[part] = sol.sol(a_t[part])
    J = np.exp(log_j)
    eta = line_tol * (1 + u_t) * np.maximum(1.0, J)
    ratio = float(np.max(np.abs(u_ref - u_t) / eta))
    # the label check: lines displaced by 10x the allowance must bracket the start's label, up to the labels' own
    # error r: 10x the change of the start's label from rtol 1e-12 to 1e-13, at least 1e-13 (1 + |l|)
    eta_b = 10 * eta
    lab0, lab0_c = labels_at(e0**2, a0, 1e-13), labels_at(e0**2, a0, 1e-12)
    inside = bool(lab0.reaches_axis)
    pick = ((lambda lab: np.asarray(lab.A, dtype=float)) if inside
            else (lambda lab: np.asarray(lab.a_gamma, dtype=float)))
    l0 = float(pick(lab0))
    r = max(1e-13 * (1 + abs(l0)), 10 * abs(l0 - float(pick(lab0_c))))
    side = []  # the labels of the displaced lines on the start's side of S (NaN across S)
    for s in (-1, 1):
        lab = labels_at(u_t + s * eta_b, a_t, 1e-13)
        side.append(np.where(np.asarray(lab.reaches_axis) == inside, pick(lab), np.nan))
    lm, lp = side
    two = np.isfinite(lm) & np.isfinite(lp)
    one = np.isfinite(lm) ^ np.isfinite(lp)
    ok = np.where(two, (np.fmin(lm, lp) - r <= l0) & (l0 <= np.fmax(lm, lp) + r),
                  np.where(one, l0 <= np.fmax(lm, lp) + r, False))
    return {"inside": inside, "label": l0, "ratio": ratio, "J_min": float(J.min()), "bracketed": bool(ok.all()),
            "n_points": int(ok.size), "n_out": int((~ok).sum()), "n_one_sided": int(one.sum()),
            "width": float(np.nanmax(np.where(two, np.abs(lp - lm), np.nan), initial=0.0))}


def order_below(x):
    """A bound on a positive x at least 100x above it, printed as a power of ten (stable across machines)."""
    x = checks.positive_real("x", x)
    return bound(x, 10.0 ** (math.floor(math.log10(x)) + 3))
