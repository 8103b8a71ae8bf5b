"""Part II, Sec. 5 and App. C.2 of "Get rich quick" (Kunin et al., NeurIPS 2024): the dynamics of beta_k = a_k w_k.

For the two-layer network f(x) = sum_k a_k sigma(w_k^T x) of :mod:`markovlib.richlazy.relu_networks`, trained by
gradient flow on the book's loss L = (1/n) sum_i (f(x_i) - y_i)^2 with layer-wise rates eta_a, eta_w, each neuron's
contribution beta_k = a_k w_k obeys (Sec. 5, App. C.2)

    d beta_k / dt = -M_k xi_k,   M_k = eta_w a_k^2 I + eta_a w_k w_k^T,   xi_k = (2/n) sum_i c_ki r_i x_i,

with residuals r_i = f(x_i) - y_i and activations c_ki = sigma'(w_k^T x_i) (the paper's loss (1/2) sum_i r_i^2 has
xi_k = sum_i c_ki r_i x_i). With the conserved delta_k = eta_w a_k^2 - eta_a ||w_k||^2 and
S_k = sqrt(delta_k^2 + 4 eta_a eta_w ||beta_k||^2) one has eta_w a_k^2 = (S_k + delta_k) / 2 and
eta_a ||w_k||^2 = (S_k - delta_k) / 2, so M_k = ((S_k + delta_k) / 2) I + ((S_k - delta_k) / 2) bhat bhat^T is a
function of (beta_k, delta_k) alone. In the signed spherical coordinates bhat_k = sgn(a_k) beta_k / ||beta_k|| =
w_k / ||w_k||, mu_k = sgn(a_k) ||beta_k|| = a_k ||w_k|| (App. C.2):

    d bhat_k / dt = -((S_k + delta_k) / (2 mu_k)) (I - bhat_k bhat_k^T) xi_k,   d mu_k / dt = -S_k bhat_k^T xi_k.

The regimes of Sec. 5 are the limits delta_k >> 0 (upstream), delta_k = 0 (balanced), delta_k << 0 (downstream),
:func:`regime_velocity`. The chapter ``grq_relu_dynamics`` derives all of this and checks it against autograd.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from .minimal_model import conserved_delta
from .relu_networks import check_gamma, check_params, layer_scales

REGIMES = ("upstream", "balanced", "downstream")


def _rates(eta_a, eta_w):
    return checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)


def _sphere(bhat, mu, delta, xi):
    bhat = checks.finite_array("bhat", bhat)
    mu = checks.finite_array("mu", mu)
    delta = checks.finite_array("delta", delta)
    xi = checks.finite_array("xi", xi)
    if bhat.ndim < 1 or xi.shape != bhat.shape or mu.shape != bhat.shape[:-1]:
        raise ValueError(f"bhat and xi must have shape (..., d) and mu shape (...), got {bhat.shape}, {xi.shape} "
                         f"and {mu.shape}")
    if np.any(np.abs(np.linalg.norm(bhat, axis=-1) - 1.0) > 1e-8):
        raise ValueError("bhat must hold unit vectors (to 1e-8)")
    if np.any(mu == 0):
        raise ValueError("mu must be non-zero (the direction bhat is defined only for beta_k != 0)")
    try:
        delta = np.broadcast_to(delta, mu.shape)
    except ValueError:
        raise ValueError(f"delta (shape {delta.shape}) must broadcast to mu's shape {mu.shape}") from None
    return bhat, mu, delta, xi


def spherical_coordinates(a, W):
    """(bhat, mu): bhat_k = sgn(a_k) beta_k / ||beta_k|| = w_k / ||w_k|| (shape (..., h, d)) and mu_k = sgn(a_k)
    ||beta_k|| = a_k ||w_k|| (shape (..., h)), App. C.2. Needs a_k != 0 and w_k != 0."""
    a, W = check_params(a, W)
    norm = np.linalg.norm(W, axis=-1)
    if np.any(norm == 0) or np.any(a == 0):
        raise ValueError("every a_k and w_k must be non-zero (beta_k = 0 has no direction)")
    return W / norm[..., None], a * norm


def driving_vector(X, y, a, W, gamma=0.0):
    """xi_k = (2/n) sum_i c_ki r_i x_i with c_ki = sigma'(w_k^T x_i) and r = f - y (Sec. 5, for the loss
    (1/n) sum_i r_i^2), shape (..., h, d). Then dL/da_k = w_k^T xi_k and grad_{w_k} L = a_k xi_k."""
    a, W, X = check_params(a, W, X)
    y = checks.finite_array("y", y)
    g = check_gamma(gamma)
    if y.shape[-1:] != X.shape[-2:-1]:
        raise ValueError(f"y must have shape (..., n) with n = {X.shape[-2]}, got {y.shape}")
    Z = X @ np.swapaxes(W, -1, -2)                         # (..., n, h)
    r = (np.maximum(Z, g * Z) @ a[..., None])[..., 0] - y  # (..., n)
    C = np.where(Z > 0, 1.0, g)
    return (2.0 / X.shape[-2]) * (np.swapaxes(C * r[..., None], -1, -2) @ X)


def preconditioner(beta, delta, eta_a=1.0, eta_w=1.0):
    """M_k = ((S_k + delta_k) / 2) I + ((S_k - delta_k) / 2) bhat bhat^T with S_k = sqrt(delta_k^2 + 4 eta_a eta_w
    ||beta_k||^2) (Sec. 5; the formula of App. A.3 per neuron), shape (..., d, d); ``beta`` (..., d), ``delta``
    broadcasting to (...). At beta_k = 0 the second term needs S_k = delta_k, i.e. delta_k >= 0 (else raises)."""
    beta = checks.finite_array("beta", beta)
    delta = checks.finite_array("delta", delta)
    eta_a, eta_w = _rates(eta_a, eta_w)
    if beta.ndim < 1:
        raise ValueError(f"beta must have shape (..., d), got {beta.shape}")
    r = np.linalg.norm(beta, axis=-1)
    try:
        delta = np.broadcast_to(delta, r.shape)
    except ValueError:
        raise ValueError(f"delta (shape {delta.shape}) must broadcast to beta's leading shape {r.shape}") from None
    if np.any((r == 0) & (delta < 0)):
        raise ValueError("beta_k = 0 with delta_k < 0 has no preconditioner in terms of beta (w_k is not determined)")
    S = np.hypot(delta, 2.0 * np.sqrt(eta_a * eta_w) * r)
    bhat = np.where(r[..., None] > 0, beta / np.where(r > 0, r, 1.0)[..., None], 0.0)
    eye = np.eye(beta.shape[-1])
    return ((S + delta) / 2)[..., None, None] * eye + ((S - delta) / 2)[..., None, None] * (
        bhat[..., :, None] * bhat[..., None, :])


def spherical_velocity(bhat, mu, delta, xi, eta_a=1.0, eta_w=1.0):
    """(d bhat / dt, d mu / dt) of App. C.2, exact: -((S + delta) / (2 mu)) (I - bhat bhat^T) xi and -S bhat^T xi
    with S = sqrt(delta^2 + 4 eta_a eta_w mu^2). Shapes (..., d) and (...). (S + delta) / 2 is evaluated as
    2 eta_a eta_w mu^2 / (S - delta) for delta < 0, without cancellation."""
    bhat, mu, delta, xi = _sphere(bhat, mu, delta, xi)
    eta_a, eta_w = _rates(eta_a, eta_w)
    S = np.hypot(delta, 2.0 * np.sqrt(eta_a * eta_w) * mu)
    half_plus = np.where(delta >= 0, (S + delta) / 2, 2 * eta_a * eta_w * mu**2 / (S - np.minimum(delta, 0.0)))
    along = np.sum(bhat * xi, axis=-1)
    perp = xi - along[..., None] * bhat
    return -(half_plus / mu)[..., None] * perp, -S * along


def flow_velocities(X, y, a, W, gamma=0.0, eta_a=1.0, eta_w=1.0):
    """The derived right-hand sides of App. C.2 for a network (a, W) on data (X, y): (d bhat/dt, d mu/dt,
    d beta/dt) with d beta_k/dt = -M_k xi_k (:func:`preconditioner`, :func:`driving_vector`) and the spherical
    velocities of :func:`spherical_velocity`, at the conserved delta_k = eta_w a_k^2 - eta_a ||w_k||^2."""
    bhat, mu = spherical_coordinates(a, W)
    delta = conserved_delta(a, W, eta_a, eta_w)
    xi = driving_vector(X, y, a, W, gamma)
    dbhat, dmu = spherical_velocity(bhat, mu, delta, xi, eta_a, eta_w)
    beta = np.asarray(a, dtype=float)[..., None] * np.asarray(W, dtype=float)
    dbeta = -(preconditioner(beta, delta, eta_a, eta_w) @ xi[..., None])[..., 0]
    return dbhat, dmu, dbeta


def regime_velocity(bhat, mu, delta, xi, regime, eta_a=1.0, eta_w=1.0):
    """The approximate (d bhat / dt, d mu / dt) of Sec. 5 in one regime:

    - ``"upstream"`` (delta >> 0, M ~ delta I): -(delta / mu) (I - bhat bhat^T) xi and -delta bhat^T xi;
    - ``"balanced"`` (delta = 0, exact there): -sqrt(eta_a eta_w) sgn(mu) (I - bhat bhat^T) xi and
      -2 sqrt(eta_a eta_w) |mu| bhat^T xi;
    - ``"downstream"`` (delta << 0, M ~ |delta| bhat bhat^T): 0 and -|delta| bhat^T xi.
    """
    bhat, mu, delta, xi = _sphere(bhat, mu, delta, xi)
    eta_a, eta_w = _rates(eta_a, eta_w)
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}, got {regime!r}")
    along = np.sum(bhat * xi, axis=-1)
    perp = xi - along[..., None] * bhat
    if regime == "upstream":
        return -(delta / mu)[..., None] * perp, -delta * along
    if regime == "balanced":
        s = np.sqrt(eta_a * eta_w)
        return -s * np.sign(mu)[..., None] * perp, -2 * s * np.abs(mu) * along
    return np.zeros_like(perp), -np.abs(delta) * along


def readout_size(mu, delta, eta_a=1.0, eta_w=1.0):
    """|a_k| = sqrt((S_k + delta_k) / (2 eta_w)) from (mu_k, delta_k) alone (Sec. 5: eta_w a_k^2 = (S_k + delta_k)
    / 2), without cancellation for delta_k < 0. For delta_k > 0 this is at least sqrt(delta_k / eta_w), and
    |a_k(t)|^2 / |a_k(0)|^2 - 1 lies within eta_a eta_w max(mu_k(0)^2, mu_k(t)^2) / delta_k^2 in absolute value
    (derived in the chapter): an upstream readout stays about constant while |mu_k| << delta_k."""
    mu = checks.finite_array("mu", mu)
    delta = checks.finite_array("delta", delta)
    eta_a, eta_w = _rates(eta_a, eta_w)
    S = np.hypot(delta, 2.0 * np.sqrt(eta_a * eta_w) * mu)
    half_plus = np.where(delta >= 0, (S + delta) / 2, 2 * eta_a * eta_w * mu**2 / (S - np.minimum(delta, 0.0)))
    return np.sqrt(half_plus / eta_w)


def xor_task(n, jitter, seed):
    """An XOR-like task in d = 2 (Fig. 5a): n inputs on the unit circle near the four diagonals, at angles
    pi/4 + j pi/2 plus a uniform jitter in [-jitter, jitter] (radians, < pi/4), with labels y = +1 in the first and
    third quadrants and -1 in the second and fourth (the sign of x_1 x_2). Returns X (n, 2), y (n,)."""
    n = checks.positive_int("n", n)
    jitter = float(checks.finite_array("jitter", jitter, ndim=0))
    if not 0 <= jitter < np.pi / 4:
        raise ValueError(f"jitter must lie in [0, pi/4) (points stay in their quadrant), got {jitter!r}")
    rng = np.random.default_rng(checks.nonnegative_int("seed", seed))
    quadrant = np.arange(n) % 4
    theta = np.pi / 4 + quadrant * np.pi / 2 + rng.uniform(-jitter, jitter, n)
    X = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    return X, np.where(quadrant % 2 == 0, 1.0, -1.0)


def circle_points(m):
    """m points on the unit circle at angles 2 pi (j + 1/2) / m (shape (m, 2)). For a network without biases the
    activation regions are cones, so their pattern on the circle is the whole partition map."""
    m = checks.positive_int("m", m)
    theta = 2 * np.pi * (np.arange(m) + 0.5) / m
    return np.stack([np.cos(theta), np.sin(theta)], axis=1)


def small_init(d, h, tau, delta, seed):
    """A small unpaired initialization (Fig. 5a, "f(x; theta_0) ~ 0"): h independent unit directions u_k and signs
    s_k, w_k = ||w|| u_k and a_k = s_k |a| with (|a|, ||w||) of
    :func:`markovlib.richlazy.relu_networks.layer_scales` (|a| ||w|| = tau^2, a_k^2 - ||w_k||^2 = delta), so
    |f(x)| <= h tau^2 ||x||. Unlike the symmetric student of Fig. 1 no two neurons share a boundary, so the
    partition is generic from the start (Prop. C.2). ``tau`` and ``delta`` broadcast to a grid shape G; returns
    a (*G, h), W (*G, h, d)."""
    d = checks.positive_int("d", d)
    h = checks.positive_int("h", h)
    a_norm, w_norm = layer_scales(delta, tau)
    rng = np.random.default_rng(checks.nonnegative_int("seed", seed))
    U = rng.standard_normal((h, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    s = np.where(rng.standard_normal(h) >= 0, 1.0, -1.0)
    return a_norm[..., None] * s, w_norm[..., None, None] * U
