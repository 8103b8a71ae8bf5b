"""The conserved energy of gradient flow and the basins it decides (Sec. 4, App. F; App. G for a).

Along the gradient flow of L = g(c(e, w)), theta' = -g'(c) grad c, so any E with grad E . grad c = 0 is
constant (Lemma 1/9). With c = e^2 (1 + 2w|w|): dw/de = 2e|w| / (1 + 2w|w|) separates into
d(e^2) = (1/(2|w|) + 2 w sign(w) ... ) dw, giving

    E(e, w) = e^2 - w^2 - sign(w) log|w|,          w != 0,
    E(e, w, a) = e^2 - 2a^2 - w^2 - sign(w) log|w|  (with the attention scalar, App. G).

The flow never crosses w = 0 (E -> +inf as w -> 0+, -inf as w -> 0-). On the w-axis E(0, w) peaks over w < 0 at the
saddle, E_sad = E(0, -1/sqrt 2) = -(1 + log 2)/2 (Lemma 12). Thm 2 (p + q > 1) and Thm 8 (p + q < 1) read off the
limit of the flow from (w0, E(theta0)); ``predict_limit`` computes it by following the energy contour.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..numerics import checks
from ..numerics.bisection import sign_change_root
from .canonical import c_star_unchecked, classify_unchecked, coefficient_unchecked, feed_forward_factor

SADDLE_ENERGY = -(1.0 + np.log(2.0)) / 2.0  # E(0, -1/sqrt 2), Lemma 12


def energy(e, w, a=None):
    """E(e, w) = e^2 - w^2 - sign(w) log|w| (Lemma 1); minus 2a^2 with the attention scalar (App. G).

    Undefined on the invariant line w = 0, where NaN is returned.
    """
    e, w = checks.finite_array("e", e), checks.finite_array("w", w)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = e * e - w * w - np.sign(w) * np.log(np.abs(w))
    out = np.where(w == 0, np.nan, out)
    if a is not None:
        a = checks.finite_array("a", a)
        out = out - 2 * a * a
    return out[()] if np.ndim(out) == 0 else out


class Limit(NamedTuple):
    """Outcome of the flow ("global_min", "local_min", "local_max", "saddle") and its limit point (e, w)."""

    outcome: object
    e: object
    w: object


def _axis_roots(E0, sign_w):
    """Where the contour {E = E0} meets the w-axis, in u = log|w|: the roots of F(u) = E0 + e^{2u} + sw u.

    Returns (u_low, u_high): for w > 0 the single root in both; for w < 0 the roots on either side of the minimum
    u_m = -log(2)/2 (NaN where E0 < ... has no root, i.e. E0 > E_sad).
    """
    E0 = np.asarray(E0, dtype=float)
    big = np.abs(E0) + 50.0
    F = lambda u: E0 + np.exp(np.minimum(2 * u, 700.0)) + sign_w * u  # noqa: E731
    if sign_w > 0:  # F increasing in u
        r = sign_change_root(F, -big, np.full_like(E0, 0.5 * np.log(big) + 5))
        return r, r
    u_m = np.full_like(E0, -0.5 * np.log(2.0))
    low = sign_change_root(F, -big, u_m)  # F decreasing on (-inf, u_m]: the root nearer w = 0, i.e. w_b
    high = sign_change_root(F, u_m, np.full_like(E0, 0.5 * np.log(big) + 5))  # the root beyond -1/sqrt 2, i.e. w_a
    return low, high


def predict_limit(e0, w0, p, q, tol=1e-12):
    """The limit of gradient flow from (e0, w0) read off the energy (Thm 2 for p + q > 1, Thm 8 for p + q < 1).

    The trajectory stays on its contour {E = E0} with e^2 = F(w) := E0 + w^2 + sign(w) log|w|, in the half plane of
    sign(w) and sign(e). Along a branch of the contour c(w) = F(w)(1 + 2w|w|) is strictly increasing in w
    (dc/dw = F'(w) m + 4|w| F > 0 where F > 0), and the flow moves c monotonically towards c*. So the limit is the
    unique point of the branch with c = c* (a global minimum) when c* lies between c0 and the branch end, and the
    branch end on the w-axis (e = 0, loss H(pi)) otherwise. p + q = 1 (c* = 0) is handled: every limit is global.
    Broadcasts; returns Limit(outcome, e, w) with str / arrays.
    """
    p, q = checks.probability("p", p), checks.probability("q", q)
    e0, w0 = np.broadcast_arrays(checks.finite_array("e0", e0), checks.finite_array("w0", w0))
    shape = e0.shape
    e0, w0 = e0.astype(float).ravel(), w0.astype(float).ravel()
    cs = c_star_unchecked(p, q)
    e_lim, w_lim = np.full(e0.shape, np.nan), np.full(e0.shape, np.nan)

    # Invariant lines: e0 = 0 is critical (stays put); w0 = 0 flows along the e-axis towards e^2 = max(c*, 0).
    fixed = e0 == 0
    e_lim[fixed], w_lim[fixed] = 0.0, w0[fixed]
    on_e_axis = (w0 == 0) & ~fixed
    e_lim[on_e_axis] = np.sign(e0[on_e_axis]) * np.sqrt(max(cs, 0.0))
    w_lim[on_e_axis] = 0.0

    E0 = energy(e0, np.where(w0 == 0, 1.0, w0))
    c0 = coefficient_unchecked(e0, w0)
    for sw in (1.0, -1.0):
        sel = ~fixed & ~on_e_axis & (np.sign(w0) == sw)
        if not np.any(sel):
            continue
        E, c, u0, es = E0[sel], c0[sel], np.log(np.abs(w0[sel])), np.sign(e0[sel])
        F = lambda u, E=E: E + np.exp(np.minimum(2 * u, 700.0)) + sw * u  # noqa: E731
        cfun = lambda u, E=E: F(u, E) * feed_forward_factor(sw * np.exp(np.minimum(u, 350.0)))  # noqa: E731
        u_low, u_high = _axis_roots(E, sw)
        # Branch ends in u. w > 0: [u_low, +inf). w < 0: if E > E_sad the whole line; else (-inf, u_low] (w_b side,
        # near w = 0) or [u_high, +inf) (beyond -1/sqrt 2).
        lo_end = np.full(E.shape, -np.inf)
        hi_end = np.full(E.shape, np.inf)
        if sw > 0:
            lo_end = u_low
        else:
            # E <= E_sad: the contour splits at the w-axis; E = E_sad (within tol): both roots merge at the saddle
            on_sad = np.abs(E - SADDLE_ENERGY) <= tol
            u_low = np.where(on_sad, -0.5 * np.log(2.0), u_low)
            u_high = np.where(on_sad, -0.5 * np.log(2.0), u_high)
            split = (E < SADDLE_ENERGY) | on_sad
            near_zero = split & (u0 < -0.5 * np.log(2.0))
            hi_end = np.where(near_zero, u_low, hi_end)
            lo_end = np.where(split & ~near_zero, u_high, lo_end)
        # c increases with w; in u = log|w| it increases for w > 0 and decreases for w < 0.
        # The end reached when moving c towards c*: c decreasing <=> w decreasing.
        going_down_w = c > cs
        toward_small_u = going_down_w if sw > 0 else ~going_down_w
        end = np.where(toward_small_u, lo_end, hi_end)
        # c at that end: 0 on the w-axis (finite end), -inf/+inf at w -> -inf / w -> 0- / w -> +inf.
        c_end = np.where(np.isfinite(end), 0.0, np.where(going_down_w, -np.inf, np.inf))
        reaches = np.where(going_down_w, c_end < cs, c_end > cs)
        # Global: bisect c(u) - c* between u0 and a finite stand-in for the end.
        far = np.where(np.isfinite(end), end, np.where(toward_small_u, -np.abs(E) - 60.0, 60.0))
        g = lambda u: cfun(u) - cs  # noqa: E731
        root = sign_change_root(g, u0.copy(), far)
        u_lim = np.where(reaches, root, end)
        w_l = sw * np.exp(u_lim)
        e_l = np.where(reaches, es * np.sqrt(np.maximum(F(u_lim), 0.0)), 0.0)
        idx = np.flatnonzero(sel)
        e_lim[idx], w_lim[idx] = e_l, w_l
    outcome = np.asarray(classify_unchecked(e_lim, w_lim, p, q, 1e-9), dtype=object)
    # The global minima are found by root solving; mark them even where the bisection left |c - c*| ~ 1e-9.
    cl = coefficient_unchecked(e_lim, w_lim)
    glob = (np.abs(cl - cs) <= 1e-7 * max(1.0, abs(cs))) & (e_lim != 0)
    outcome[glob] = "global_min"
    outcome = outcome.astype(str)
    if shape == ():
        return Limit(str(outcome[0]), float(e_lim[0]), float(w_lim[0]))
    return Limit(outcome.reshape(shape), e_lim.reshape(shape), w_lim.reshape(shape))
