"""How SGD moves the conserved energy E(e, w) of Part I: the per-step drift law (book/_drafts/sgd_drift_law.md).

Gradient flow conserves E(e, w) = e^2 - w^2 - sign(w) log|w| (Lemma 1). A step theta' = theta - lr g_hat with a
minibatch gradient g_hat = g + xi (mean g = grad L, noise covariance Sigma) changes any smooth Phi by, in
expectation (Taylor to second order; :func:`taylor_drift`)

    E[Delta Phi] = -lr grad Phi . g  +  (lr^2/2) g^T H_Phi g  +  (lr^2/2) tr(H_Phi Sigma)  +  O(lr^3)
                   first order          deterministic part       batch-noise part

Heavy-ball momentum beta (torch's v <- beta v + g_hat, theta <- theta - lr v) takes, in a quasi-stationary state,
the step lr_eff = lr / (1 - beta) in every term, and its velocity lags the gradient, adding
-lr_eff^2 beta/(1 - beta) grad Phi^T H_L g. Gradient clipping at norm ``clip`` enters only through the steps with
|g_hat| > clip; Markov's inequality bounds their share by (|g|^2 + tr Sigma) / clip^2 (:func:`clip_share_bound`).

Two readings of this law are implemented.

* The canonical model (Sec. 3) in (e, w, b): :func:`canonical_batch_moments` gives the exact mean and covariance of
  the minibatch gradient (the loss depends on a batch only through its four transition counts, whose covariance
  under the chain is closed form), :func:`canonical_drift` the three terms for Phi = E. Every term carries a factor
  e^2: on the canonical manifold E moves only while e is away from 0.
* The full model near the unigram line (two time scales, :mod:`markovlib.transformer.plateau_drift`): the bias b and
  the embedding vector are fast (curvature J), everything else slow. The fast variables fluctuate around their fixed
  point with the stationary covariance C of :func:`floor_covariance` (the discrete Lyapunov equation of the
  linearized SGD or heavy-ball step), and the slow weights drift per step by -lr_eff grad_slow (1/2) tr(J C).
  :func:`steps_to_saddle` extrapolates the resulting drift of the projection w to the saddle's w = -1/sqrt 2.
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.linalg import solve_discrete_lyapunov

from ..markov.canonical import (
    check_pq,
    coefficient_unchecked,
    feed_forward_factor,
    hessian,
    optimal_beta_unchecked,
    sigmoid,
)
from ..numerics import checks

W_SADDLE = -1.0 / np.sqrt(2.0)
__all__ = ["DriftTerms", "taylor_drift", "clip_share_bound", "momentum_factor", "transition_count_moments",
           "canonical_batch_moments", "canonical_drift", "energy_gradient", "energy_hessian", "floor_covariance",
           "energy_rate", "steps_to_saddle", "W_SADDLE"]


class DriftTerms(NamedTuple):
    """Expected change of Phi in one step: first order in lr, the deterministic and the noise second-order parts."""

    first: float
    deterministic: float
    noise: float

    @property
    def total(self) -> float:
        return self.first + self.deterministic + self.noise


def momentum_factor(momentum) -> float:
    """1 / (1 - beta): the factor by which heavy-ball momentum beta in [0, 1) multiplies the step in the drift."""
    try:
        b = float(momentum)
    except (TypeError, ValueError):
        raise ValueError(f"momentum must be a real number in [0, 1), got {momentum!r}") from None
    if not np.isfinite(b) or not 0.0 <= b < 1.0:
        raise ValueError(f"momentum must be a real number in [0, 1), got {momentum!r}")
    return 1.0 / (1.0 - b)


def taylor_drift(grad_phi, hess_phi, mean_grad, noise_cov, lr, momentum=0.0, hess_loss=None) -> DriftTerms:
    """E[Phi(theta') - Phi(theta)] per step to second order in lr (module docstring).

    SGD: first = -lr grad_phi . g, deterministic = lr^2/2 g^T H_phi g, noise = lr^2/2 tr(H_phi Sigma).
    Momentum beta (quasi-stationary): lr -> lr_eff = lr/(1 - beta) everywhere, and the deterministic part gains the
    velocity's lag, -lr_eff^2 beta/(1 - beta) grad_phi^T H_L g (``hess_loss`` = H_L is then required). The noise
    part is exactly lr_eff^2/2 tr(H_phi Sigma) for independent noise: (1/2) lr^2 tr(H Sigma)/(1 - beta^2) from the
    step's own square plus lr^2 beta/((1 - beta)(1 - beta^2)) tr(H Sigma) from the correlation of the velocity with
    the displacement it has already caused.
    """
    lr = checks.positive_real("lr", lr)
    k = momentum_factor(momentum)
    beta = 1.0 - 1.0 / k
    gp = checks.finite_array("grad_phi", grad_phi, ndim=1)
    n = gp.size
    hp = checks.finite_array("hess_phi", hess_phi, ndim=2)
    g = checks.finite_array("mean_grad", mean_grad, ndim=1)
    S = checks.finite_array("noise_cov", noise_cov, ndim=2)
    if hp.shape != (n, n) or g.shape != (n,) or S.shape != (n, n):
        raise ValueError(f"grad_phi ({n},), hess_phi, mean_grad and noise_cov must agree in size, got {hp.shape}, "
                         f"{g.shape}, {S.shape}")
    le = lr * k
    det = 0.5 * le**2 * float(g @ hp @ g)
    if beta > 0:
        if hess_loss is None:
            raise ValueError("hess_loss (the loss Hessian H_L, n x n) is required when momentum > 0")
        hl = checks.finite_array("hess_loss", hess_loss, ndim=2)
        if hl.shape != (n, n):
            raise ValueError(f"hess_loss must have shape ({n}, {n}), got {hl.shape}")
        det -= le**2 * beta / (1 - beta) * float(gp @ hl @ g)
    return DriftTerms(-le * float(gp @ g), det, 0.5 * le**2 * float(np.sum(hp * S)))


def clip_share_bound(mean_grad, noise_cov, clip) -> float:
    """Markov's bound on P(|g_hat| > clip) = (|g|^2 + tr Sigma) / clip^2 (capped at 1): the share of steps that
    clipping rescales. Where it is small, clipping does not enter the law."""
    clip = checks.positive_real("clip", clip)
    g = checks.finite_array("mean_grad", mean_grad, ndim=1)
    S = checks.finite_array("noise_cov", noise_cov, ndim=2)
    return float(min(1.0, (g @ g + np.trace(S)) / clip**2))


# ---------------------------------------------------------------------------------------------------------------
# the canonical model
# ---------------------------------------------------------------------------------------------------------------
def transition_count_moments(p, q, length):
    """Mean (4,) and covariance (4, 4) of the counts n_ab of transitions (x_n, x_{n+1}) = (a, b), order 00, 01, 10,
    11, in one sequence of ``length`` transitions started from pi: E n_ab = length pi_a P_ab and
    Cov(n_ab, n_cd) = sum_{i,j} P(I_i^ab I_j^cd) - E E, with P(I_i^ab I_j^cd) = pi_a P_ab (P^{j-i-1})_bc P_cd for
    j > i and delta pi_a P_ab for j = i."""
    p, q = check_pq(p, q)
    mu, cov = _count_moments(p, q, checks.positive_int("length", length))
    return mu.copy(), cov.copy()


@lru_cache(maxsize=32)
def _count_moments(p, q, n):
    P = np.array([[1 - p, p], [q, 1 - q]])
    pi = np.array([q, p]) / (p + q)
    ab = [(0, 0), (0, 1), (1, 0), (1, 1)]
    mu = np.array([pi[a] * P[a, b] for a, b in ab])
    cov = n * (np.diag(mu) - np.outer(mu, mu))
    Pk = np.eye(2)  # P^(k-1)
    for k in range(1, n):
        joint = np.array([[pi[a] * P[a, b] * Pk[b, c] * P[c, d] for c, d in ab] for a, b in ab])
        cov += (n - k) * (joint + joint.T - 2 * np.outer(mu, mu))
        Pk = Pk @ P
    return n * mu, cov


def _canonical_scalars(e, w, b):
    e = float(checks.finite_array("e", e, ndim=0))
    w = float(checks.finite_array("w", w, ndim=0))
    if w == 0:
        raise ValueError("w must be nonzero (E is undefined on the invariant line w = 0)")
    b = None if b is None else float(checks.finite_array("b", b, ndim=0))
    return e, w, b


def canonical_batch_moments(e, w, p, q, *, b=None, batch=16, length=64):
    """Exact mean and covariance of the minibatch gradient of the canonical model in theta = (e, w, b).

    The loss of a batch of ``batch`` sequences of ``length`` transitions is (1/(batch length)) sum_ab n_ab
    l_ab(c, beta) (Lemma 2), so its gradient in (c, beta) is R^T n / (batch length) with rows
    R_ab = (a r_ab, r_ab), r_ab = sigma(c a + beta) - b, and the counts of independent sequences add: mean and
    covariance follow from :func:`transition_count_moments`. The chain rule with c = e^2(1 + 2w|w|),
    beta = b - e^2/2 maps them to (e, w, b). ``b=None`` uses the optimal bias b*(e, w) (Lemma 5).
    Returns (mean (3,), covariance (3, 3)).
    """
    e, w, b = _canonical_scalars(e, w, b)
    p, q = check_pq(p, q)
    B, n = checks.positive_int("batch", batch), checks.positive_int("length", length)
    c = float(coefficient_unchecked(e, w))
    beta = float(optimal_beta_unchecked(c, p, q)) if b is None else b - e * e / 2
    R = np.array([[a * (float(sigmoid(c * a + beta)) - t), float(sigmoid(c * a + beta)) - t]
                  for a, t in [(0, 0), (0, 1), (1, 0), (1, 1)]])
    mu, cov = transition_count_moments(p, q, n)
    mean_cb = R.T @ mu / n
    cov_cb = R.T @ cov @ R / (B * n * n)
    # d(c, beta)/d(e, w, b)
    jac = np.array([[2 * e * float(feed_forward_factor(w)), 4 * abs(w) * e * e, 0.0], [-e, 0.0, 1.0]])
    return jac.T @ mean_cb, jac.T @ cov_cb @ jac


def energy_gradient(e, w):
    """grad E in (e, w, b): (2e, -2w - 1/|w|, 0) (Lemma 1)."""
    return np.array([2 * e, -2 * w - 1 / abs(w), 0.0])


def energy_hessian(e, w):
    """Hessian of E in (e, w, b): diag(2, -2 + sign(w)/w^2, 0)."""
    return np.diag([2.0, -2.0 + np.sign(w) / w**2, 0.0])


def canonical_drift(e, w, p, q, lr, *, b=None, momentum=0.0, batch=16, length=64) -> DriftTerms:
    """Expected change of E(e, w) in one SGD (or heavy-ball) step of the canonical model in (e, w, b), from the
    exact minibatch moments (:func:`canonical_batch_moments`) and :func:`taylor_drift`.

    With the optimal bias (``b=None``) the first-order term is 0 (grad E . grad L = -2 e^2 dL/dbeta, Lemma 1 with the
    bias) and both second-order terms carry e^2: the canonical model moves E at order lr^2 e^2 (Proposition
    sgd-drift, (i)). Fit-free: it needs only the state, the chain and the optimizer's settings.
    """
    e, w, b = _canonical_scalars(e, w, b)
    p, q = check_pq(p, q)
    bb = b if b is not None else e * e / 2 + float(optimal_beta_unchecked(float(coefficient_unchecked(e, w)), p, q))
    g, S = canonical_batch_moments(e, w, p, q, b=bb, batch=batch, length=length)
    hl = hessian(e, w, p, q, b=bb) if momentum else None
    return taylor_drift(energy_gradient(e, w), energy_hessian(e, w), g, S, lr, momentum, hl)


# ---------------------------------------------------------------------------------------------------------------
# the full model near the unigram line: the fast variables' floor and the slow drift
# ---------------------------------------------------------------------------------------------------------------
def floor_covariance(J, Sigma, lr, momentum=0.0):
    """Stationary covariance C of the fast variables delta under the linearized step, the discrete Lyapunov equation

        SGD:        C = (I - lr J) C (I - lr J)^T + lr^2 Sigma
        heavy ball: the same for the state (delta, v), v' = beta v + J delta + xi, delta' = delta - lr v'.

    For small lr J this is C ~ lr_eff Sigma J^{-1} / 2 (J, Sigma commuting): the floor grows linearly in the step.
    ValueError unless the step is stable (spectral radius < 1: lr times J's largest eigenvalue below 2 for SGD,
    below 2(1 + beta) for heavy ball)."""
    J = checks.finite_array("J", J, ndim=2)
    S = checks.finite_array("Sigma", Sigma, ndim=2)
    n = J.shape[0]
    if J.shape != (n, n) or S.shape != (n, n):
        raise ValueError(f"J and Sigma must be square of one size, got {J.shape} and {S.shape}")
    lr = checks.positive_real("lr", lr)
    beta = 1.0 - 1.0 / momentum_factor(momentum)
    eye = np.eye(n)
    if beta == 0:
        A, G = eye - lr * J, -lr * eye
    else:
        A = np.block([[eye - lr * J, -lr * beta * eye], [J, beta * eye]])
        G = np.vstack([-lr * eye, eye])
    rho = float(np.max(np.abs(np.linalg.eigvals(A))))
    if rho >= 1:
        raise ValueError(f"lr = {lr:g} (momentum {beta:g}) makes the linearized step unstable (spectral radius "
                         f"{rho:.3f} >= 1): lr must keep lr x the largest eigenvalue of J below 2 (2(1 + beta))")
    C = solve_discrete_lyapunov(A, G @ S @ G.T)[:n, :n]
    return 0.5 * (C + C.T)


def energy_rate(w, dw):
    """dE per step from a drift dw per step of w with e at its floor: (dE/dw) dw = -(2w + 1/|w|) dw."""
    w = checks.finite_array("w", w)
    dw = checks.finite_array("dw", dw)
    if np.any(w == 0):
        raise ValueError("w must be nonzero (E is undefined on w = 0)")
    out = -(2 * w + 1 / np.abs(w)) * dw
    return out[()] if np.ndim(out) == 0 else out


def steps_to_saddle(w, drift):
    """Steps until w reaches the saddle's -1/sqrt 2 at a constant ``drift`` dw/step < 0: (w + 1/sqrt 2)/(-drift).

    With e at its floor (e^2 ~ 1e-6), E(e, w) <= E(0, w) + e^2 and E(0, .) peaks at E_sad exactly at w = -1/sqrt 2
    (Lemma 12), so this is the step at which E first reaches E_sad. It is the frozen-weight extrapolation: the
    drift is taken at its present value (Proposition sgd-drift, (iii)). inf where drift >= 0; 0 where
    w <= -1/sqrt 2 already. Broadcasts."""
    w = checks.finite_array("w", w)
    drift = checks.finite_array("drift", drift)
    gap = w - W_SADDLE
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(gap <= 0, 0.0, np.where(drift < 0, gap / np.where(drift < 0, -drift, 1.0), np.inf))
    return out[()] if out.ndim == 0 else out
