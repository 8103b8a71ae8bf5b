"""The chapter canonical_model's numerical checks of :mod:`markovlib.markov.canonical` (reference App. C; the
paper's Lemmas 5 and 6), each one step: the computation, a printed table and the largest errors.

Each function returns a dict with ``table`` (the printed text, stable digits only) and the measured quantities the
chapter records; the references it compares with are :mod:`markovlib.markov.canonical_reference`.

- :func:`lemma5_table`: optimal_beta against Brent's root of dL/dbeta, its residual, the curvature (Lemma 5).
- :func:`bias_numerics`: optimal_beta where the textbook form overflows (c_large) or cancels (c_negative).
- :func:`g_table`: g(c*) = entropy rate, g(0) = H(pi), convexity, g' and g'' against differences (Lemma 6).
- :func:`bfgs_table`: the minimum of Lemma 2's form, independently, lands on c* (sign of c*).
- :func:`surface_check`: the loss surface's grid minimum and its w-axis.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit as sigmoid

from ..book.formatting import bound, fixed
from ..numerics import checks
from . import canonical
from .canonical_reference import (
    bfgs_minimum,
    c_star_closed,
    dL_dbeta,
    entropy_rate_closed,
    marginal_entropy_closed,
    textbook_beta,
)


def _chains(chains):
    chains = [tuple(float(x) for x in pq) for pq in chains]
    if not chains or any(len(pq) != 2 for pq in chains):
        raise ValueError(f"chains must be a non-empty list of (p, q) pairs, got {chains!r}")
    for pq in chains:
        checks.probability("p", pq[0]), checks.probability("q", pq[1])
    return chains


def lemma5_table(chains, p, q) -> dict:
    """On ``chains`` and then (p, q) (the chapter's chain last), over c in [-15, 15] (31 values): the largest
    |optimal_beta - root of dL/dbeta| (``err``; Brent, xtol 1e-15), residual of q s(beta) + p s(c + beta) = p
    (``res``), smallest d2L/dbeta2 (``curv``); beta*(0) = log(p/q) and beta*(c*) = logit(p) (``special``); the root's
    resolution 8 eps / L'' (``root_res``)."""
    chains = _chains(list(chains) + [(p, q)])
    c_grid = np.linspace(-15, 15, 31)
    lines = [f"{'p':>5}{'q':>5}{'max|closed - root|':>20}{'max residual (eq-bias-stationary)':>36}"
             f"{'min d2L/dbeta2':>16}"]
    err_max, res_max, curv_min = 0.0, 0.0, np.inf
    for pp, qq in chains:
        closed = canonical.optimal_beta(c_grid, pp, qq)
        numeric = np.array([brentq(dL_dbeta, -60.0, 60.0, args=(c, pp, qq), xtol=1e-15,
                                   rtol=4 * np.finfo(float).eps, maxiter=500) for c in c_grid])
        resid = np.abs(qq * sigmoid(closed) + pp * sigmoid(c_grid + closed) - pp).max()
        curv = (qq * sigmoid(closed) * sigmoid(-closed)
                + pp * sigmoid(c_grid + closed) * sigmoid(-c_grid - closed)) / (pp + qq)
        err = np.abs(closed - numeric).max()
        err_max, res_max, curv_min = max(err_max, err), max(res_max, resid), min(curv_min, curv.min())
        lines.append(f"{pp:>5}{qq:>5}{bound(err, 1e-10):>20}{bound(resid, 1e-13):>36}{curv.min():>16.2e}")
    p, q = chains[-1]
    b00, bcs = float(canonical.optimal_beta(0.0, p, q)), float(canonical.optimal_beta(c_star_closed(p, q), p, q))
    special = max(abs(b00 - math.log(p / q)), abs(bcs - math.log(p / (1 - p))))
    lines.append(f"beta*(0) = {fixed(b00, 10)} vs log(p/q) = {fixed(math.log(p / q), 10)};  beta*(c*) = "
                 f"{fixed(bcs, 10)} vs logit(p) = {fixed(math.log(p / (1 - p)), 10)}; max difference "
                 f"{bound(special, 1e-13)}")
    return dict(table="\n".join(lines), err=err_max, res=res_max, curv=curv_min, special=special,
                root_res=8 * np.finfo(float).eps / curv_min, n_c=c_grid.size, n_chains=len(chains))


def bias_numerics(c_large, c_negative, p, q) -> dict:
    """optimal_beta against its asymptotes where the textbook form fails: c_large (e^c overflows; (p, q) and
    (0.8, 0.3), asymptote (log(p/q) - c)/2) and c_negative ((0.8, 0.3), asymptote log((p - q)/q) - c). ``ok``: the
    textbook value is infinite and markovlib's finite in every row; ``rel``, ``res``: largest relative error and
    relative residual; ``overflows``: e^c_large is infinite in float64."""
    c_large, c_negative = checks.finite_array("c_large", c_large, 0), checks.finite_array("c_negative", c_negative, 0)
    c_large, c_negative = float(c_large), float(c_negative)
    rows = [(c_large, p, q, 0.5 * (math.log(p / q) - c_large)),
            (c_large, 0.8, 0.3, 0.5 * (math.log(0.8 / 0.3) - c_large)),
            (c_negative, 0.8, 0.3, math.log((0.8 - 0.3) / 0.3) - c_negative)]
    lines = [f"{'c':>7}{'p':>5}{'q':>5}{'textbook':>11}{'markovlib':>14}{'asymptote':>14}{'rel. diff':>11}"
             f"{'residual (eq-bias-stationary)':>31}"]
    ok, rel_max, res_max = True, 0.0, 0.0
    for c, pp, qq, asym in rows:
        tb, mb = float(textbook_beta(c, pp, qq)), float(canonical.optimal_beta(c, pp, qq))
        resid = abs(qq * float(sigmoid(mb)) + pp * float(sigmoid(c + mb)) - pp) / pp
        rel = abs(mb - asym) / abs(asym)
        ok &= (not np.isfinite(tb)) and np.isfinite(mb)
        rel_max, res_max = max(rel_max, rel), max(res_max, resid)
        lines.append(f"{c:>7.0f}{pp:>5}{qq:>5}{tb:>11}{mb:>14.6f}{asym:>14.6f}{bound(rel, 1e-12):>11}"
                     f"{bound(resid, 1e-12):>31}")
    with np.errstate(over="ignore"):
        overflows = not np.isfinite(np.exp(c_large))
    return dict(table="\n".join(lines), ok=bool(ok), rel=rel_max, res=res_max, overflows=overflows, n=len(rows))


def g_table(chains, h1=1e-4, h2=1e-3) -> dict:
    """Per chain, on c in [-12, 12] (step 0.01): g(c*) - entropy rate and g(0) - H(pi) (``yard``), the smallest
    second difference of g and closed-form g'' (``second``, ``hess``), g' and g'' against central differences of
    steps h1, h2 (``g1``, ``g2``), g'(c*) (``gcs``), g'(0) - pi_0 pi_1 (p + q - 1) (``g0``), and the grid argmin's
    distance from c* in grid steps (``argmin_off``)."""
    chains = _chains(chains)
    h1, h2 = checks.positive_real("h1", h1), checks.positive_real("h2", h2)
    cc = np.linspace(-12, 12, 2401)
    header = [("p", 5), ("q", 5), ("c*", 9), ("g(c*) - H_rate", 16), ("g(0) - H(pi)", 14), ("min 2nd diff", 14),
              ("max|g'' - fd|", 15), ("max|g' - fd|", 14), ("g'(c*)", 10), ("g'(0) - formula", 17),
              ("grid argmin", 13)]
    lines = ["".join(name.rjust(width) for name, width in header)]
    r = dict(yard=0.0, second=np.inf, hess=np.inf, argmin_off=0.0, g1=0.0, g2=0.0, gcs=0.0, g0=0.0)
    g_, grad, hess = canonical.reduced_loss, canonical.reduced_loss_grad, canonical.reduced_loss_hess
    for pp, qq in chains:
        cs, a0, a1 = c_star_closed(pp, qq), qq / (pp + qq), pp / (pp + qq)
        g = g_(cc, pp, qq)
        second = g[2:] - 2 * g[1:-1] + g[:-2]
        fd1 = (g_(cc + h1, pp, qq) - g_(cc - h1, pp, qq)) / (2 * h1)
        fd2 = (g_(cc + h2, pp, qq) - 2 * g + g_(cc - h2, pp, qq)) / h2**2
        e1, e2 = np.abs(grad(cc, pp, qq) - fd1).max(), np.abs(hess(cc, pp, qq) - fd2).max()
        gcs = float(grad(cs, pp, qq))
        g0_form = float(grad(0.0, pp, qq)) - a0 * a1 * (pp + qq - 1)
        argmin = cc[np.argmin(g)]
        y1 = float(g_(cs, pp, qq)) - entropy_rate_closed(pp, qq)
        y0 = float(g_(0.0, pp, qq)) - marginal_entropy_closed(pp, qq)
        r["yard"] = max(r["yard"], abs(y1), abs(y0))
        r["second"], r["hess"] = min(r["second"], second.min()), min(r["hess"], hess(cc, pp, qq).min())
        r["g1"], r["g2"] = max(r["g1"], e1), max(r["g2"], e2)
        r["gcs"], r["g0"] = max(r["gcs"], abs(gcs)), max(r["g0"], abs(g0_form))
        r["argmin_off"] = max(r["argmin_off"], abs(argmin - cs) / (cc[1] - cc[0]))
        lines.append(f"{pp:>5}{qq:>5}{cs:>9.4f}{bound(y1, 1e-13):>16}{bound(y0, 1e-13):>14}{second.min():>14.1e}"
                     f"{bound(e2, 1e-6):>15}{bound(e1, 1e-8):>14}{bound(gcs, 1e-14):>10}{bound(g0_form, 1e-14):>17}"
                     f"{argmin:>13.2f}")
    r["table"] = "\n".join(lines)
    return r


def bfgs_table(chains) -> dict:
    """Independent of markovlib: per chain the BFGS argmin of Lemma 2's form (:func:`bfgs_minimum`) against c*
    written out (``c_err``), its minimum against the entropy rate (``val_err``), and ``n_sign`` chains on which
    c_min > 0 exactly when p + q < 1."""
    chains = _chains(chains)
    lines = [f"{'p':>5}{'q':>5}{'p+q':>6}{'argmin c (BFGS)':>17}{'c* (closed form)':>18}{'|difference|':>14}"
             f"{'min - entropy rate':>20}{'c > 0':>7}"]
    c_err, val_err, n_sign = 0.0, 0.0, 0
    for pp, qq in chains:
        c_min, fun = bfgs_minimum(pp, qq)
        cs, rate = c_star_closed(pp, qq), entropy_rate_closed(pp, qq)
        c_err, val_err = max(c_err, abs(c_min - cs)), max(val_err, abs(fun - rate))
        n_sign += (c_min > 0) == (pp + qq < 1)
        lines.append(f"{pp:>5}{qq:>5}{pp + qq:>6.2f}{fixed(c_min, 3):>17}{cs:>18.4f}{bound(c_min - cs, 1e-6):>14}"
                     f"{bound(fun - rate, 1e-12):>20}{'yes' if c_min > 0 else 'no':>7}")
    return dict(table="\n".join(lines), c_err=c_err, val_err=val_err, n_sign=n_sign)


def surface_check(p, q, e_ax, w_ax) -> dict:
    """canonical.loss on the grid e_ax x w_ax (w_ax must contain e = 0 at e_ax's middle index): the grid minimum
    minus the entropy rate (``excess``), its bound dc^2/16 + 1e-12 (``tol``; dc the grid's smallest distance from
    c* in c), and the largest |L - H(pi)| on the w-axis (``axis``)."""
    e_ax, w_ax = checks.finite_array("e_ax", e_ax, 1), checks.finite_array("w_ax", w_ax, 1)
    mid = e_ax.size // 2
    if e_ax[mid] != 0.0:
        raise ValueError(f"e_ax must hold e = 0 at its middle index, got {e_ax[mid]!r}")
    EE, WW = np.meshgrid(e_ax, w_ax, indexing="ij")
    L = canonical.loss(EE, WW, p, q)
    dc = float(np.abs(e_ax[:, None] ** 2 * (1 + 2 * w_ax * np.abs(w_ax)) - c_star_closed(p, q)).min())
    tol = dc**2 / 16 + 1e-12
    excess = float(L.min() - entropy_rate_closed(p, q))
    axis = float(np.abs(L[mid] - marginal_entropy_closed(p, q)).max())
    line = (f"p = {p}, q = {q}: min of L over the grid - entropy rate = {excess:.1e} (bound dc^2/16 = {tol:.1e}, "
            f"dc = {dc:.1e}); on the w-axis max |L - H(pi)| = {bound(axis, 1e-14)}")
    return dict(table=line, excess=excess, tol=tol, dc=dc, axis=axis)
