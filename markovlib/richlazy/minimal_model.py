"""Part II: the minimal model of "Get rich quick" (Kunin et al., NeurIPS 2024, Sec. 3 and App. A).

f(x; a, w) = a w^T x with a in R and w in R^d, trained by gradient flow with layer-wise learning rates
eta_a, eta_w on the MSE L = ||X (a w) - y||^2 / (2n). The rescaling symmetry (a, w) -> (a / s, s w) gives the
conserved quantity delta = eta_w a^2 - eta_a ||w||^2 (Sec. 3), which fixes the regime at initialization:
delta > 0 upstream (lazy), delta = 0 balanced (rich), delta < 0 downstream (lazy, then delayed rich).
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks

# the closed forms (App. A.2, Thm 3.1) live in minimal_exact
from .minimal_exact import (
    orbit_squares,
)


def conserved_delta(a, w, eta_a=1.0, eta_w=1.0):
    """delta = eta_w a^2 - eta_a ||w||^2 (Sec. 3), broadcast over leading axes; ``w``'s last axis is the input
    dimension, so ``a`` has the shape of ``w`` without its last axis."""
    eta_a = checks.positive_real("eta_a", eta_a)
    eta_w = checks.positive_real("eta_w", eta_w)
    a = checks.finite_array("a", a)
    w = checks.finite_array("w", w)
    if w.ndim == 0:
        raise ValueError("w must have at least one axis (the input dimension)")
    try:
        return eta_w * a**2 - eta_a * np.sum(w**2, axis=-1)
    except ValueError:
        raise ValueError(f"a has shape {a.shape} but w has leading shape {w.shape[:-1]}; they must broadcast") from None


def kernel_distance(K1, K2) -> float:
    """S = 1 - <K1, K2>_F / (||K1||_F ||K2||_F) (Sec. 3, after Fort et al.): 0 when the kernel only rescales
    (lazy), up to 1 (rich). Two zero kernels are at distance 0; one zero kernel is at distance 1."""
    K1 = checks.finite_array("K1", K1)
    K2 = checks.finite_array("K2", K2)
    if K1.shape != K2.shape or K1.ndim != 2:
        raise ValueError(f"K1 and K2 must be matrices of one shape, got {K1.shape} and {K2.shape}")
    n1, n2 = np.linalg.norm(K1), np.linalg.norm(K2)
    if n1 == 0 and n2 == 0:
        return 0.0
    if n1 == 0 or n2 == 0:
        return 1.0
    # normalize first, so that huge or tiny kernels do not overflow the inner product
    return float(1.0 - np.sum((K1 / n1) * (K2 / n2)))


def _whitened_beta_star(X, y):
    """(C, c) = (X^T X / n, X^T y / n) after validating shapes (X is n x d, y has length n)."""
    X = checks.finite_array("X", X)
    y = checks.finite_array("y", y)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must be an n x d matrix with n, d >= 1, got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must be a vector of length n = {X.shape[0]} (the rows of X), got shape {y.shape}")
    n = X.shape[0]
    return X.T @ X / n, X.T @ y / n


def single_neuron_flow(a0, w0, X, y, t, eta_a=1.0, eta_w=1.0):
    """Gradient flow of f(x) = a w^T x on L = ||X (a w) - y||^2 / (2n) (Sec. 3, App. A eq. for da/dt, dw/dt):
    da/dt = -eta_a w^T g, dw/dt = -eta_w a g with g = (X^T X (a w) - X^T y) / n, integrated from t = 0 by
    scipy's DOP853 (rtol 1e-11, atol 1e-13). ``t``: nondecreasing times >= 0. Returns (a(t), w(t)) with shapes
    (len(t),) and (len(t), d)."""
    from scipy.integrate import solve_ivp

    eta_a = checks.positive_real("eta_a", eta_a)
    eta_w = checks.positive_real("eta_w", eta_w)
    C, c = _whitened_beta_star(X, y)
    a0 = float(checks.finite_array("a0", a0))
    w0 = checks.finite_array("w0", w0)
    if w0.shape != (C.shape[0],):
        raise ValueError(f"w0 must be a vector of length d = {C.shape[0]} (the columns of X), got shape {w0.shape}")
    t = checks.finite_array("t", t)
    if t.ndim != 1 or t.size == 0 or t[0] < 0 or np.any(np.diff(t) < 0):
        raise ValueError("t must be a non-empty 1-D array of nondecreasing times >= 0")

    def rhs(_, theta):
        a, w = theta[0], theta[1:]
        g = C @ (a * w) - c
        return np.concatenate(([-eta_a * (w @ g)], -eta_w * a * g))

    if t[-1] == 0:
        return np.full(t.shape, a0), np.tile(w0, (t.size, 1))
    sol = solve_ivp(rhs, (0.0, float(t[-1])), np.concatenate(([a0], w0)), method="DOP853", t_eval=t,
                    rtol=1e-11, atol=1e-13)
    if not sol.success:  # pragma: no cover - DOP853 on this smooth polynomial field does not fail in range
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    return sol.y[0].copy(), sol.y[1:].T.copy()


def reduced_vector_field(mu, phi, delta, beta_star_norm):
    """The reduced system of Sec. 3 (App. A.2.1) for whitened input and eta_a eta_w = 1, with S = sqrt(delta^2 +
    4 mu^2) = a^2 + ||w||^2:  dmu/dt = S (phi ||beta*|| - mu),  dphi/dt = ||beta*|| (1 - phi^2) mu / ||w||^2 with
    ||w||^2 = (S - delta)/2 (computed as 2 mu^2 / (S + delta) for delta > 0, no cancellation). Broadcasts.
    Undefined where w = 0 (mu = 0, delta >= 0); there dphi/dt is returned as 0."""
    mu = checks.finite_array("mu", mu)
    phi = checks.finite_array("phi", phi)
    delta = checks.finite_array("delta", delta)
    b = float(checks.finite_array("beta_star_norm", beta_star_norm))
    if b <= 0:
        raise ValueError(f"beta_star_norm must be > 0, got {beta_star_norm!r}")
    if np.any(np.abs(phi) > 1):
        raise ValueError("phi is a cosine and must lie in [-1, 1]")
    S = np.hypot(delta, 2 * mu)
    wn2 = np.where(delta > 0, 2 * mu**2 / np.where(S + delta > 0, S + delta, 1.0), (S - delta) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        dphi = np.where(wn2 > 0, b * (1 - phi**2) * mu / np.where(wn2 > 0, wn2, 1.0), 0.0)
    return S * (phi * b - mu), dphi


def ntk(X, a, w, eta_a=1.0, eta_w=1.0):
    """The NTK matrix of the single neuron, K = X M X^T with M = eta_w a^2 I + eta_a w w^T (Sec. 3, eq. (1)):
    K_ij = sum over parameters of eta * df(x_i)/dtheta * df(x_j)/dtheta. An n x n matrix."""
    eta_a = checks.positive_real("eta_a", eta_a)
    eta_w = checks.positive_real("eta_w", eta_w)
    X = checks.finite_array("X", X)
    a = float(checks.finite_array("a", a))
    w = checks.finite_array("w", w)
    if X.ndim != 2 or w.shape != (X.shape[1],):
        raise ValueError(f"X must be n x d and w a vector of length d, got shapes {X.shape} and {w.shape}")
    Xw = X @ w
    return eta_w * a**2 * (X @ X.T) + eta_a * np.outer(Xw, Xw)


def function_space_M(beta, delta):
    """M(beta, delta) = ((S + delta)/2) I + ((S - delta)/2) beta_hat beta_hat^T, S = sqrt(delta^2 + 4||beta||^2)
    (Sec. 3 eq. (4), eta_a = eta_w = 1): d beta/dt = -M grad_beta L. (S + delta)/2 = a^2 and (S - delta)/2 =
    ||w||^2, each computed without cancellation. For beta = 0 and delta < 0 M is not a function of beta (w has
    no direction), which raises ValueError."""
    beta = checks.finite_array("beta", beta)
    delta = float(checks.finite_array("delta", delta))
    if beta.ndim != 1 or beta.size == 0:
        raise ValueError(f"beta must be a non-empty vector, got shape {beta.shape}")
    r = float(np.linalg.norm(beta))
    d = beta.size
    if r == 0:
        if delta < 0:
            raise ValueError("beta must be nonzero when delta < 0 (M then depends on the direction of w)")
        return max(delta, 0.0) * np.eye(d)
    a2, wn2 = orbit_squares(r, delta)
    bh = beta / r
    return a2 * np.eye(d) + wn2 * np.outer(bh, bh)



def mdot_terms(a, w, delta, C, c):
    """The two terms of the kernel's own dynamics dM/dt (App. A.3.1, the book's eq. grq-eq-mdot; eta_a = eta_w = 1)
    at (a, w) on the loss with gradient g = C beta - c (C = X^T X / n, c = X^T y / n):
    (norm term, direction term) = ((2 r / kappa) (I + bh bh^T) dr/dt, ((kappa - delta) / 2) d(bh bh^T)/dt) with
    beta = a w, r = ||beta||, bh = beta / r, kappa = sqrt(delta^2 + 4 r^2), beta' = a' w + a w' from
    a' = -w^T g, w' = -a g. Their sum is dM/dt for M = a^2 I + w w^T. Needs beta != 0."""
    a = float(checks.finite_array("a", a))
    w = checks.finite_array("w", w, ndim=1)
    delta = float(checks.finite_array("delta", delta))
    C, c = checks.finite_array("C", C, ndim=2), checks.finite_array("c", c, ndim=1)
    if C.shape != (w.size, w.size) or c.shape != w.shape:
        raise ValueError(f"C must be d x d and c of length d = {w.size}, got shapes {C.shape} and {c.shape}")
    beta = a * w
    r = float(np.linalg.norm(beta))
    if r == 0:
        raise ValueError("a w must be nonzero (the direction of beta is undefined at beta = 0)")
    g = C @ beta - c
    a_dot, w_dot = -(w @ g), -a * g
    beta_dot = a_dot * w + a * w_dot
    bh = beta / r
    kap = np.hypot(delta, 2 * r)
    dr = bh @ beta_dot
    dbh = (beta_dot - bh * dr) / r
    return (2 * r / kap * (np.eye(w.size) + np.outer(bh, bh)) * dr,
            (kap - delta) / 2 * (np.outer(dbh, bh) + np.outer(bh, dbh)))
