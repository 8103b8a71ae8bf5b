"""Part II: the deep linear networks of the chapter grq_wide_deep, one call per step (Kunin et al., NeurIPS 2024,
App. B.2: Lemma B.8, the balanced preconditioner and Thm B.10).

For f(x) = a^T W_L ... W_1 x of width d, integrated by the independent references of
:mod:`markovlib.richlazy.linear_reference`: the draws (isotropic and balanced rank-one starts with their data), the
conserved matrices and Lemma B.8 along isotropic flows, the balanced flows run until they interpolate,
``deep_balanced_preconditioner`` against the autograd J J^T and the time-warped mirror flow, and the limits against
argmin Psi_L (``deep_rich_bias``) and the chapter's eq. grq-eq-deep-gap.
"""
from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import minimize

from ..book.formatting import bound, fixed
from ..numerics import checks
from .linear_checks import relative_error
from .linear_networks import deep_balanced_preconditioner, deep_rich_bias
from .linear_reference import deep_beta, deep_flow, deep_unpack, deep_velocity


def _unit(v):
    return v / np.linalg.norm(v)


def deep_draws(rng, depths, d, n_samples, sample_counts, scale):
    """The draws in one stream: per depth L an isotropic start (a0 ~ N(0, 0.25 I), L Haar rotations, Gaussian data
    (n_samples), a Gaussian probe point), then per sample count n a balanced rank-one start (layers
    scale v_{l+1} v_l^T, unit v_l) with Gaussian data (n x d). Returns (isotropic draws, balanced draws)."""
    d = checks.positive_int("d", d)
    iso, bal = [], []
    for L in depths:
        a0 = 0.5 * rng.standard_normal(d)
        Os = [np.linalg.qr(rng.standard_normal((d, d)))[0] for _ in range(L)]
        X, y = rng.standard_normal((n_samples, d)), rng.standard_normal(n_samples)
        iso.append((L, a0, Os, X, y, rng.standard_normal(d + L * d * d)))
        for n_ in sample_counts:
            v = [_unit(x) for x in rng.standard_normal((L + 1, d))]
            z0 = np.concatenate([scale * v[L]] + [(scale * np.outer(v[k + 1], v[k])).ravel() for k in range(L)])
            bal.append((L, n_, z0, rng.standard_normal((n_, d)), rng.standard_normal(n_)))
    return iso, bal


def isotropic_checks(iso_draws, d, delta):
    """Along each isotropic start with conserved delta (W_L = S O_L, W_l = O_{l+1}^T S O_l, S = sqrt(a a^T -
    delta I)) integrated to t = 2: the chain-rule gradient against torch autograd at the probe point, the largest
    drift of the conserved matrices W_{l+1}^T W_{l+1} - W_l W_l^T and a a^T - W_L W_L^T, and the largest relative
    error of Lemma B.8, ||beta||^2 = ||a||^2 (||a||^2 - delta)^L. Returns (drift, lemma error, gradient error)."""
    drift, lemma_err, grad_err = 0.0, 0.0, 0.0
    for L, a0, Os, X, y, probe in iso_draws:
        lam, U = np.linalg.eigh(np.outer(a0, a0) - delta * np.eye(d))
        Ssq = (U * np.sqrt(lam)) @ U.T
        Ws = [Os[k + 1].T @ Ssq @ Os[k] if k < L - 1 else Ssq @ Os[k] for k in range(L)]
        zt = torch.tensor(probe, requires_grad=True)
        (gt,) = torch.autograd.grad(((torch.tensor(X) @ deep_beta(zt, L, d) - torch.tensor(y)) ** 2).sum()
                                    / (2 * X.shape[0]), zt)
        grad_err = max(grad_err, relative_error(deep_velocity(zt.detach().numpy(), L, X, y), -gt.numpy()))
        C_ref = None
        for z in deep_flow(np.concatenate([a0] + [W.ravel() for W in Ws]), L, X, y, np.linspace(0.0, 2.0, 5)):
            a, Wt = deep_unpack(z, L, d)
            C = [Wt[k + 1].T @ Wt[k + 1] - Wt[k] @ Wt[k].T for k in range(L - 1)] + [np.outer(a, a) - Wt[-1] @ Wt[-1].T]
            C_ref = C if C_ref is None else C_ref
            drift = max(drift, max(float(np.max(np.abs(c - c0))) for c, c0 in zip(C, C_ref)))
            lemma_err = max(lemma_err, relative_error(np.sum(deep_beta(z, L, d) ** 2), (a @ a) * (a @ a - delta) ** L))
    return drift, lemma_err, grad_err


def balanced_runs(bal_draws, d, T, interp_tol=1e-11):
    """Each balanced draw integrated to T, four times longer (at most three times) until |X beta - y| < interp_tol
    (a slow approach near the saddle at beta = 0). Returns (L, n, z0, X, y, [z(0), z(T)]) per draw."""
    runs = []
    for L, n_, z0, X, y in bal_draws:
        T_ = checks.positive_real("T", T)
        for _ in range(4):
            Z = deep_flow(z0, L, X, y, np.array([0.0, T_]))
            if np.linalg.norm(X @ deep_beta(Z[-1], L, d) - y) < interp_tol:
                break
            T_ *= 4
        runs.append((L, n_, z0, X, y, Z))
    return runs


def balanced_M_and_warp(runs, d, fd_step):
    """Along the balanced runs: ``deep_balanced_preconditioner`` against the autograd J J^T at the start and the end
    (largest relative error), and the time-warped mirror flow d/dt grad ||beta||^q = -q ||beta||^(L/(L+1)) grad L,
    q = (L + 2)/(L + 1), by central differences (step fd_step) at t = 1. Returns (M error, warp error)."""
    M_err, warp_err = 0.0, 0.0
    for L, n_, z0, X, y, Z in runs:
        for z in Z:
            J = torch.autograd.functional.jacobian(lambda th, L=L: deep_beta(th, L, d), torch.tensor(z)).numpy()
            M_err = max(M_err, relative_error(deep_balanced_preconditioner(deep_beta(z, L, d), L), J @ J.T))
        q_ = (L + 2) / (L + 1)
        bc = [deep_beta(z, L, d) for z in deep_flow(z0, L, X, y, np.array([1.0 - fd_step, 1.0, 1.0 + fd_step]))]
        gradphi = [q_ * np.linalg.norm(b) ** (1 / (L + 1)) * _unit(b) for b in bc]
        xi = q_ * np.linalg.norm(bc[1]) ** (L / (L + 1))
        warp_err = max(warp_err, relative_error((gradphi[2] - gradphi[0]) / (2 * fd_step),
                                                -xi * X.T @ (X @ bc[1] - y) / n_))
    return M_err, warp_err


def balanced_limits(runs, d, interp_tol=1e-11, print_bias=5e-7) -> dict:
    """Thm B.10 on the balanced runs: each limit against argmin Psi_L on X beta = y (BFGS over the null-space
    coordinates, gtol 1e-12) and against eq. grq-eq-deep-gap, beta_inf - beta_p = (|beta_inf| / |beta_0|)^(L/(L+1))
    P_N beta_0 (inf where a run does not interpolate); the smallest distance to the minimum-norm interpolant
    beta_p and the null-space fraction |P_N beta_0| / |beta_0| there; a table (text)."""
    out = dict(bias_err=0.0, minnorm_gap=np.inf, gap_eq_err=0.0, null_frac=np.nan)
    lines = [f"{'L':>3} {'n':>3} {'|X b_inf - y|':>14} {'|b_inf - argmin Psi_L|':>23} {'|b_inf - min-norm|':>19}"]
    for L, n_, z0, X, y, Z in runs:
        b0, binf = deep_beta(Z[0], L, d), deep_beta(Z[-1], L, d)
        resid = float(np.linalg.norm(X @ binf - y))
        bp = np.linalg.lstsq(X, y, rcond=None)[0]
        N = np.linalg.svd(X)[2][n_:].T
        opt = minimize(lambda u, bp=bp, N=N, b0=b0, L=L: deep_rich_bias(bp + N @ u, b0, L), np.zeros(d - n_),
                       method="BFGS", jac="3-point", options={"gtol": 1e-12})
        e_b = float(np.max(np.abs(bp + N @ opt.x - binf)))
        gap = float(np.max(np.abs(bp - binf)))
        out["bias_err"] = max(out["bias_err"], e_b if resid < interp_tol else np.inf)
        gap_pred = (np.linalg.norm(binf) / np.linalg.norm(b0)) ** (L / (L + 1)) * (N @ (N.T @ b0))
        out["gap_eq_err"] = max(out["gap_eq_err"], float(np.max(np.abs((binf - bp) - gap_pred)))
                                if resid < interp_tol else np.inf)
        if gap < out["minnorm_gap"]:
            out["minnorm_gap"], out["null_frac"] = gap, float(np.linalg.norm(N.T @ b0) / np.linalg.norm(b0))
        lines.append(f"{L:>3} {n_:>3} {bound(resid, interp_tol):>14} {bound(e_b, print_bias):>23} {fixed(gap, 2):>19}")
    out["table"] = "\n".join(lines)
    return out
