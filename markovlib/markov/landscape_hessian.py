"""The Hessian checks of the chapter loss_landscape (Lemmas 4 and 8): ``canonical.hessian`` against torch autograd of
``reference``'s losses and against the closed forms derived in the chapter. Each function returns its measurements
with the text it prints (``.text``) as a ``types.SimpleNamespace``; the chapter records the claims.

* :func:`hessians_autograd`: the 2x2 and 3x3 Hessians at random points, and Lemma 8's Schur complement.
* :func:`gamma_hessian`: on Gamma*, rank one with eigenvalue g''(c*)|grad c|^2, zero along the curve.
* :func:`axis_hessian`: on the w-axis, diag(2 g'(0)(1 + 2w|w|), 0), zero at the saddle.
* :func:`lemma4_sets`: Lemma 4 on the lifted axis and the eigenvalue signs on Gamma*_b and the lifted axis sets.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import torch

from ..book.formatting import bound, fixed, yes_no
from ..numerics import checks
from . import canonical, reference
from .energy_checks import chains

__all__ = ["torch_hessian", "hessians_autograd", "gamma_points", "gamma_hessian", "axis_hessian", "lemma4_sets"]


def torch_hessian(x, p, q):
    """The Hessians of ``reference.reduced_loss`` (rows (e, w)) or ``reference.loss_with_bias`` (rows (e, w, b)) at
    the numpy points ``x`` by ``torch.func.hessian``: an (n, k, k) array."""
    x = np.atleast_2d(checks.finite_array("x", x))
    if x.ndim != 2 or x.shape[1] not in (2, 3):
        raise ValueError(f"x must hold points (e, w) or (e, w, b) in rows, got shape {x.shape}")
    loss = reference.reduced_loss if x.shape[1] == 2 else reference.loss_with_bias
    return torch.func.vmap(torch.func.hessian(lambda z: loss(z, p, q)))(torch.tensor(x)).numpy()


def hessians_autograd(points):
    """At the random points ``points[(p, q)]`` = (theta, b) of ``landscape_checks.autograd_gradients``: the largest
    error of ``canonical.hessian`` relative to its largest entry, without bias (``err["red"]``) and with it
    (``err["bias"]``), against ``torch_hessian``; and Lemma 8, the Schur complement of the 3x3 Hessian at b* against
    the 2x2 Hessian (``err["schur"]``)."""
    err = dict(red=0.0, bias=0.0, schur=0.0)
    for (p, q), (th, b) in points.items():
        e, w = th[:, 0], th[:, 1]
        H_lib = canonical.hessian(e, w, p, q)
        err["red"] = max(err["red"], np.abs(torch_hessian(th, p, q) - H_lib).max() / np.abs(H_lib).max())
        H3_lib = canonical.hessian(e, w, p, q, b=b)
        H3_auto = torch_hessian(np.column_stack([th, b]), p, q)
        err["bias"] = max(err["bias"], np.abs(H3_auto - H3_lib).max() / np.abs(H3_lib).max())
        Hs = canonical.hessian(e, w, p, q, b=canonical.optimal_bias(e, w, p, q))
        schur = Hs[:, :2, :2] - Hs[:, :2, 2:] @ Hs[:, 2:, :2] / Hs[:, 2:, 2:]
        err["schur"] = max(err["schur"], np.abs(schur - H_lib).max() / np.abs(H_lib).max())
    text = (f"2x2 Hessian (no bias) vs torch.func.hessian: max rel. error {bound(err['red'], 1e-12)}\n"
            f"3x3 Hessian (bias)    vs torch.func.hessian: max rel. error {bound(err['bias'], 1e-12)}\n"
            f"Lemma 8: Schur complement of the 3x3 Hessian at b* vs 2x2 Hessian: max rel. error "
            f"{bound(err['schur'], 1e-12)}")
    return SimpleNamespace(err=err, text=text)


def gamma_points(p, q, n):
    """``n`` values of w on Gamma*'s side of -1/sqrt2 (at least 0.05 from it, |w| <= 2.4) and e >= 0 on Gamma*."""
    w_sad = canonical.W_SADDLE
    side = np.linspace(-2.4, w_sad - 0.05, n) if p + q > 1 else np.linspace(w_sad + 0.05, 2.4, n)
    return canonical.critical_sets(p, q).global_min_e(side), side


def gamma_hessian(pq, n_gamma, rng, rtol):
    """Lemma 8 on Gamma* at ``n_gamma`` points per chain (random sign of e): the top eigenvalue of
    ``canonical.hessian`` against g''(c*)|grad c|^2, the bottom one and H t (t tangent to Gamma*) against 0, relative
    to the top (``worst``); and the Hessian against ``torch_hessian`` (relative ``rtol``). ``ok``: 1e-8 and rtol."""
    pq, n_gamma = chains("pq", pq), checks.positive_int("n_gamma", n_gamma)
    rows = [f"{'p':>5}{'q':>5}{'lambda_max / (g2(c*)|grad c|^2) - 1':>36}{'|lambda_min| / lambda_max':>27}"
            f"{'|H t| / (lambda_max |t|)':>26}{'autograd err':>14}"]
    ok, worst = True, 0.0
    for p, q in pq:
        e_g, side = gamma_points(p, q, n_gamma)
        e_g = e_g * rng.choice([-1, 1], n_gamma)  # both branches e > 0 and e < 0
        H = canonical.hessian(e_g, side, p, q)
        lam = np.linalg.eigvalsh(H)  # ascending
        m = 1 + 2 * side * np.abs(side)
        grad_c = np.stack([2 * e_g * m, 4 * e_g ** 2 * np.abs(side)], -1)
        predicted = canonical.reduced_loss_hess(canonical.c_star(p, q), p, q) * (grad_c ** 2).sum(-1)
        tangent = np.stack([-e_g * 4 * np.abs(side) / (2 * m), np.ones_like(side)], -1)  # d/dw of (e(w), w)
        rel_top = np.abs(lam[:, 1] / predicted - 1).max()
        rel_zero = (np.abs(lam[:, 0]) / lam[:, 1]).max()
        Ht = np.einsum("nij,nj->ni", H, tangent)
        rel_tangent = (np.linalg.norm(Ht, axis=1) / (lam[:, 1] * np.linalg.norm(tangent, axis=1))).max()
        auto_err = np.abs(torch_hessian(np.column_stack([e_g, side]), p, q) - H).max() / np.abs(H).max()
        ok &= max(rel_top, rel_zero, rel_tangent) < 1e-8 and auto_err < rtol
        worst = max(worst, rel_top, rel_zero, rel_tangent)
        rows.append(f"{p:>5.2f}{q:>5.2f}{bound(rel_top, 1e-10):>36}{bound(rel_zero, 1e-10):>27}"
                    f"{bound(rel_tangent, 1e-10):>26}{bound(auto_err, 1e-12):>14}")
    return SimpleNamespace(ok=bool(ok), worst=float(worst), text="\n".join(rows))


def axis_hessian(pq, w_axis=np.linspace(-3, 3, 601)):
    """Lemma 8 on the w-axis: the closed form diag(2 g'(0)(1 + 2w|w|), 0) against ``canonical.hessian`` and
    ``torch_hessian`` at ``w_axis`` (``err``, relative to max(1, largest entry)); ``saddle`` = the largest |entry| at
    (0, -1/sqrt2)."""
    pq, w_axis = chains("pq", pq), checks.finite_array("w_axis", w_axis, ndim=1)
    err = 0.0
    for p, q in pq:
        H = canonical.hessian(np.zeros_like(w_axis), w_axis, p, q)
        diag = np.zeros_like(H)
        diag[:, 0, 0] = 2 * p * q * (p + q - 1) / (p + q) ** 2 * (1 + 2 * w_axis * np.abs(w_axis))
        H_auto = torch_hessian(np.column_stack([np.zeros_like(w_axis), w_axis]), p, q)
        scale = max(1.0, float(np.abs(diag).max()))  # entries up to 2 g'(0) 19 at |w| = 3: rounding is relative
        err = max(err, float(np.abs(H - diag).max()) / scale, float(np.abs(H_auto - diag).max()) / scale)
    saddle = max(float(np.abs(canonical.hessian(0.0, canonical.W_SADDLE, p, q)).max()) for p, q in pq)
    text = (f"axis Hessian = diag(2 g'(0)(1 + 2w|w|), 0) on {w_axis.size} points x {len(pq)} chains "
            f"(closed form, markovlib, autograd): max relative error {bound(err, 1e-12)}\n"
            f"Hessian at the saddle (0, -1/sqrt 2), {len(pq)} chains: max |entry| = {bound(saddle, 1e-13)}")
    return SimpleNamespace(err=err, saddle=saddle, n_w=w_axis.size, text=text)


def lemma4_sets(pq, n_gamma, w_axis=np.linspace(-3, 3, 601)):
    """Lemma 4 at (0, w, log(p/q)), in the order (b, e, w): (pq/(p+q)^2) diag(1, 2(p+q-1)(1+2w|w|), 0) against
    ``canonical.hessian`` and ``torch_hessian`` (``err``); and the eigenvalue signs (relative 1e-12): positive
    semidefinite of rank two on Gamma*_b, positive semidefinite on the lifted minima, one negative eigenvalue and a
    positive one on the lifted maxima (``n_ok`` of ``n_sets`` sets as stated)."""
    pq, n_gamma = chains("pq", pq), checks.positive_int("n_gamma", n_gamma)
    w_axis = checks.finite_array("w_axis", w_axis, ndim=1)
    rows = [f"{'p':>5}{'q':>5}{'set':>22}{'points':>8}{'min eig / max eig':>19}{'#neg':>6}{'#zero':>7}  verdict"]
    err, n_sets, n_ok = 0.0, 0, 0
    for p, q in pq:
        k, b0 = p * q / (p + q) ** 2, math.log(p / q)
        H3 = canonical.hessian(np.zeros_like(w_axis), w_axis, p, q, b=b0)
        H3_bew = H3[:, [2, 0, 1]][:, :, [2, 0, 1]]  # order (b, e, w) <- (e, w, b)
        lemma4 = np.zeros_like(H3_bew)
        lemma4[:, 0, 0] = k
        lemma4[:, 1, 1] = k * 2 * (p + q - 1) * (1 + 2 * w_axis * np.abs(w_axis))
        H3_auto = torch_hessian(np.column_stack([np.zeros_like(w_axis), w_axis, np.full_like(w_axis, b0)]), p, q)
        err = max(err, float(np.abs(H3_bew - lemma4).max()), float(np.abs(H3_auto - H3).max()))
        lam = np.linalg.eigvalsh(H3)
        side = (p + q - 1) * (w_axis - canonical.W_SADDLE)
        e_g, w_g = gamma_points(p, q, n_gamma)
        lam_g = np.linalg.eigvalsh(canonical.hessian(e_g, w_g, p, q, b=canonical.optimal_bias(e_g, w_g, p, q)))
        for name, L_, expect in (("Gamma*_b", lam_g, "psd rank 2"), ("Gamma_min,b (axis)", lam[side > 0], "psd"),
                                 ("Gamma_sad,b (axis)", lam[side < 0], "indefinite")):
            scale = np.abs(L_).max(axis=1)
            neg = (L_ < -1e-12 * scale[:, None]).sum(axis=1)
            zero = (np.abs(L_) <= 1e-12 * scale[:, None]).sum(axis=1)
            verdict = {"psd rank 2": bool(np.all(neg == 0) and np.all(zero == 1)), "psd": bool(np.all(neg == 0)),
                       "indefinite": bool(np.all((neg == 1) & (L_[:, -1] > 0)))}[expect]
            n_sets, n_ok = n_sets + 1, n_ok + verdict
            rows.append(f"{p:>5.2f}{q:>5.2f}{name:>22}{len(L_):>8}{fixed((L_[:, 0] / L_[:, -1]).min(), 3):>19}"
                        f"{neg.max():>6}{zero.max():>7}  {expect}: {yes_no(verdict)}")
    return SimpleNamespace(ok=n_ok == n_sets, err=err, n_sets=n_sets, n_ok=n_ok, n_w=w_axis.size,
                           text="\n".join(rows))
