"""Part II: the regimes of two-layer linear networks between min(d, c) and max(d, c) ("Get rich quick", Kunin et al.,
NeurIPS 2024, Sec. 4 and App. B.1.1, B.1.4, B.1.5).

Conventions are those of :mod:`markovlib.richlazy.linear_networks`: f(x) = A W x, A (c x h), W (h x d), beta = A W
(c x d), L = ||X beta^T - Y||_F^2 / (2n). The paper writes f(x) = A_p^T W x with A_p = A^T (h x c) and
beta_p = W^T A_p = beta^T (d x c); its conserved Delta = A_p A_p^T - W W^T is our A^T A - W W^T (eta_a = eta_w = 1).

- :func:`flow_to_fit`: gradient flow until the excess loss falls to a fraction eps of its initial value (the
  "time to fit" of the delayed-rich regime, Sec. 4 and App. B.1.5).
- :func:`riccati_nu`, :func:`riccati_linearized`, :func:`scalar_riccati`, :func:`shared_eigenspace_init`: App. B.1.1
  for c = h, Delta = delta I, whitened input: nu = A_p^{-1} W beta*_p obeys the matrix Riccati equation
  d nu/dt = beta*_p^T beta*_p - delta nu - nu^2 (derived in the chapter grq_regimes).
- :func:`single_neuron_time`: App. B.1.4 for h = d = c = 1, M = sqrt(delta^2 + 4 eta_a eta_w beta^2), the flow
  d beta/dt = -s M (beta - beta*) solved for the time t(beta) in closed form.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import eigh, expm, lstsq

from ..numerics import checks
from .linear_networks import check_data, check_network, flow_field

__all__ = ["flow_to_fit", "riccati_nu", "riccati_linearized", "scalar_riccati", "shared_eigenspace_init",
           "single_neuron_time"]


def _tol(name, value):
    value = float(value)
    if not (np.isfinite(value) and 0 < value < 1):
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return value


# ---------------------------------------------------------------------------------------------- time to fit
def flow_to_fit(A0, W0, X, Y, eps, t_max, eta_a=1.0, eta_w=1.0, rtol=1e-10, atol=1e-12):
    """Integrate dA/dt = -eta_a G W^T, dW/dt = -eta_w A^T G (G = dL/dbeta) by scipy's LSODA until the excess loss
    L - L_min (L_min the least-squares minimum over beta) first falls to eps (L(0) - L_min).

    Returns (t_fit, A, W) at that time (an event of the integrator, located to the integrator's tolerance). Raises
    RuntimeError if the flow has not fitted by t_max. This is the time to fit of Sec. 4: short (of order 1/|delta|)
    in the lazy regime, growing with |delta| in the delayed-rich one (App. B.1.5). LSODA, not an explicit method:
    after the lazy phase the fast modes (rate ~|delta|) have decayed and the slow turn of a layer takes a time
    ~|delta|, a stiff problem on which DOP853 needs some 30 times more evaluations."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    A0, W0 = check_network(A0, W0)
    (c, h), d = A0.shape, W0.shape[1]
    X, Y = check_data(X, Y, d, c)
    eps = _tol("eps", eps)
    t_max = checks.positive_real("t_max", t_max)
    rtol, atol = _tol("rtol", rtol), _tol("atol", atol)
    n = X.shape[0]
    XtX, YtX = X.T @ X / n, Y.T @ X / n
    beta_ls = lstsq(X, Y)[0].T
    L_min = np.sum((X @ beta_ls.T - Y) ** 2) / (2 * n)

    def loss(z):
        return np.sum((X @ (z[: c * h].reshape(c, h) @ z[c * h:].reshape(h, d)).T - Y) ** 2) / (2 * n)

    rhs = flow_field(XtX, YtX, c, h, d, eta_a, eta_w)
    z0 = np.concatenate([A0.ravel(), W0.ravel()])
    target = L_min + eps * (loss(z0) - L_min)

    def fitted(_, z):
        return loss(z) - target

    fitted.terminal = True
    fitted.direction = -1
    sol = solve_ivp(rhs, (0.0, t_max), z0, method="LSODA", events=fitted, rtol=rtol, atol=atol)
    if not sol.success:  # pragma: no cover - LSODA on a polynomial vector field
        raise RuntimeError(f"flow_to_fit: solve_ivp failed: {sol.message}")
    if sol.t_events[0].size == 0:
        raise RuntimeError(f"flow_to_fit: the excess loss did not reach eps = {eps:g} of its start by "
                           f"t_max = {t_max:g}")
    z = sol.y_events[0][0]
    return float(sol.t_events[0][0]), z[: c * h].reshape(c, h), z[c * h:].reshape(h, d)


# ---------------------------------------------------------------------------------------------- App. B.1.1
def riccati_nu(A, W, beta_star) -> np.ndarray:
    """nu = A_p^{-1} W beta*_p = A^{-T} W beta*^T (c x c) of App. B.1.1 (needs h = c and A invertible; beta* is
    c x d in this module's convention)."""
    A, W = check_network(A, W)
    beta_star = checks.finite_array("beta_star", beta_star, 2)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"App. B.1.1 needs c = h (A square), got A of shape {A.shape}")
    if beta_star.shape != (A.shape[0], W.shape[1]):
        raise ValueError(f"beta_star must be c x d = {(A.shape[0], W.shape[1])}, got {beta_star.shape}")
    return np.linalg.solve(A.T, W @ beta_star.T)


def _riccati_args(delta, t):
    delta = float(checks.finite_array("delta", delta, 0))
    t = checks.finite_array("t", t, 1)
    if np.any(t < 0):
        raise ValueError("t must be >= 0")
    return delta, t


def riccati_linearized(nu0, Q, delta, t) -> np.ndarray:
    """Solution nu(t) (shape (len(t), c, c)) of the matrix Riccati equation d nu/dt = Q - delta nu - nu^2 of
    App. B.1.1 for any nu0, by its linearization: nu = Z' Z^{-1} with Z'' + delta Z' - Q Z = 0, Z(0) = I,
    Z'(0) = nu0, i.e. (Z, Z') = expm(t [[0, I], [Q, -delta I]]) (I, nu0).

    Propagated stepwise (the equation is autonomous, so restarting at Z = I, Z' = nu(t_i) is exact): in one shot
    both columns of Z align with the dominant mode (growth e^{D t}) and Z becomes numerically singular long before
    the Riccati solution does. Steps are cut to length at most 1 / ||H||_2 between the sorted sample times, so every
    Z of a step has a condition number of at most about e^2. Valid while the Riccati solution stays finite (where it
    blows up Z is singular and a LinAlgError is raised)."""
    nu0 = checks.finite_array("nu0", nu0, 2)
    Q = checks.finite_array("Q", Q, 2)
    c = nu0.shape[0]
    if nu0.shape != (c, c) or Q.shape != (c, c):
        raise ValueError(f"nu0 and Q must be square of one size, got {nu0.shape} and {Q.shape}")
    delta, t = _riccati_args(delta, t)
    H = np.block([[np.zeros((c, c)), np.eye(c)], [Q, -delta * np.eye(c)]])
    h_max = 1.0 / max(np.linalg.norm(H, 2), 1e-300)
    out = np.empty((t.size, c, c))
    nu, t_now = nu0.copy(), 0.0
    for i in np.argsort(t, kind="stable"):
        gap = t[i] - t_now
        if gap > 0:
            n_sub = int(np.ceil(gap / h_max))
            step = expm((gap / n_sub) * H)
            for _ in range(n_sub):
                ZZ = step @ np.vstack([np.eye(c), nu])
                nu = np.linalg.solve(ZZ[:c].T, ZZ[c:].T).T  # Z' Z^{-1}
            t_now = t[i]
        out[i] = nu
    return out


def scalar_riccati(n0, s2, delta, t) -> np.ndarray:
    """n(t) of the scalar Riccati equation dn/dt = s2 - delta n - n^2 (App. B.1.1 when nu and beta*_p^T beta*_p
    share an eigenspace: one equation per eigenvalue s2 >= 0 of beta*_p^T beta*_p). With the roots
    n_pm = (-delta pm D)/2, D = sqrt(delta^2 + 4 s2) > 0,

        n(t) = (n_+ - n_- C e^{-D t}) / (1 - C e^{-D t}),   C = (n0 - n_+) / (n0 - n_-),

    written as n_+ + D (n0 - n_+) e^{-Dt} / ((n0 - n_-) - (n0 - n_+) e^{-Dt}) (no cancellation near n_+). Needs
    n0 > n_- (below it the solution blows up in finite time); n0, s2 broadcast, the result has shape
    (len(t),) + their broadcast shape."""
    n0 = checks.finite_array("n0", n0)
    s2 = checks.finite_array("s2", s2)
    delta, t = _riccati_args(delta, t)
    if np.any(s2 < 0):
        raise ValueError("s2 must be >= 0 (eigenvalues of beta*^T beta*)")
    D = np.sqrt(delta**2 + 4 * s2)
    if np.any(D == 0):
        raise ValueError("delta and s2 must not both be 0 (a double root)")
    n_plus, n_minus = (-delta + D) / 2, (-delta - D) / 2
    if np.any(n0 <= n_minus):
        raise ValueError("n0 must exceed the lower root n_- = (-delta - sqrt(delta^2 + 4 s2)) / 2")
    e = np.exp(-np.multiply.outer(t, D))
    return n_plus + D * (n0 - n_plus) * e / ((n0 - n_minus) - (n0 - n_plus) * e)


def shared_eigenspace_init(beta_star, delta, n0, rest_scale=0.3, seed=0):
    """(A, W) with c = h, A^T A - W W^T = delta I_c exactly and nu(0) = A^{-T} W beta*^T = V diag(n0) V^T, where
    beta* beta*^T = V diag(s^2) V^T (so nu(0) shares the eigenspace of beta*_p^T beta*_p, App. B.1.1).

    beta* is c x d with d >= c and full rank c (distinct singular values s). Construction: with beta*^T = U S V^T
    and U_perp (d x (d - c)) completing U, W = A^T V diag(n0 / s) U^T + R U_perp^T (R Gaussian c x (d - c), entries
    of std rest_scale) and A = V |diag(m)|^{-1/2} O^T |delta I + R R^T|^{1/2}, m = 1 - n0^2 / s^2, O a random
    rotation. This needs sign(m_i) = sign(delta) for every i (|n0_i| < s_i if delta > 0, |n0_i| > s_i if delta < 0)
    and, for delta < 0, ||R||^2 < |delta| (R is rescaled to ||R||^2 = |delta| / 2 if larger)."""
    beta_star = checks.finite_array("beta_star", beta_star, 2)
    c, d = beta_star.shape
    if d < c:
        raise ValueError(f"beta_star must be c x d with d >= c, got shape {beta_star.shape}")
    delta = float(checks.finite_array("delta", delta, 0))
    if delta == 0:
        raise ValueError("delta must be nonzero")
    n0 = checks.finite_array("n0", n0, 1)
    if n0.shape != (c,):
        raise ValueError(f"n0 must hold c = {c} eigenvalues, got shape {n0.shape}")
    rest_scale = float(checks.finite_array("rest_scale", rest_scale, 0))
    if rest_scale < 0:
        raise ValueError(f"rest_scale must be >= 0, got {rest_scale!r}")
    U_full, s, Vt = np.linalg.svd(beta_star.T, full_matrices=True)  # beta*^T = U S V^T, U_full d x d
    if s[-1] <= 1e-12 * s[0] or np.any(np.diff(s) >= -1e-12 * s[0]):
        raise ValueError("beta_star must have full rank c and distinct singular values")
    U, U_perp, V = U_full[:, :c], U_full[:, c:], Vt.T
    m = 1 - (n0 / s) ** 2
    if np.any(np.sign(m) != np.sign(delta)):
        raise ValueError("n0 must satisfy |n0_i| < s_i for delta > 0 and |n0_i| > s_i for delta < 0 (s the singular "
                         f"values of beta_star, {s})")
    rng = np.random.default_rng(seed)
    R = rest_scale * rng.standard_normal((c, d - c))
    if delta < 0 and np.linalg.norm(R, 2) ** 2 >= -delta:
        R *= np.sqrt(-delta / 2) / np.linalg.norm(R, 2)
    lam, E = eigh(delta * np.eye(c) + R @ R.T)
    root = (E * np.sqrt(np.abs(lam))) @ E.T
    q, r = np.linalg.qr(rng.standard_normal((c, c)))
    rot = q * np.sign(np.diag(r))
    A = (V / np.sqrt(np.abs(m))) @ rot.T @ root
    W = A.T @ (V * (n0 / s)) @ U.T + R @ U_perp.T
    return A, W


# ---------------------------------------------------------------------------------------------- App. B.1.4
def single_neuron_time(beta, beta0, beta_star, delta, s=1.0, eta_a=1.0, eta_w=1.0) -> np.ndarray:
    """Time t at which the flow d beta/dt = -s M (beta - beta*), M = sqrt(delta^2 + 4 eta_a eta_w beta^2) (App.
    B.1.4, h = d = c = 1; s = mean x^2) started at beta0 reaches beta (between beta0 and beta*), in closed form:

        t(beta) = [ln E(beta) - ln E(beta0)] / (s D*),   E(b) = (delta^2 + 4 k beta* b + D* M(b)) / |b - beta*|,

    k = eta_a eta_w, D* = M(beta*). The numerator is > 0 for delta != 0 (Cauchy-Schwarz), so delta != 0 is required;
    beta and beta0 must differ from beta*. Where beta* b < 0 the numerator is evaluated without cancellation
    (delta^2 + (delta^4 + 4 k delta^2 (beta*^2 + b^2)) / (D* M + 4 k |beta* b|)), so t(beta) keeps its relative
    accuracy for small |delta| (tested against 50-digit arithmetic at delta = 1e-6)."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    s = checks.positive_real("s", s)
    beta = checks.finite_array("beta", beta)
    b0 = float(checks.finite_array("beta0", beta0, 0))
    bs = float(checks.finite_array("beta_star", beta_star, 0))
    delta = float(checks.finite_array("delta", delta, 0))
    if delta == 0:
        raise ValueError("delta must be nonzero")
    if b0 == bs or np.any(beta == bs):
        raise ValueError("beta and beta0 must differ from beta_star")
    if np.any((beta - bs) * (b0 - bs) < 0):
        raise ValueError("beta must lie on beta0's side of beta_star (the flow does not cross beta*)")
    k = eta_a * eta_w
    D = np.sqrt(delta**2 + 4 * k * bs**2)

    def lnE(b):
        b = np.asarray(b, dtype=float)
        M = np.sqrt(delta**2 + 4 * k * b**2)
        cross = 4 * k * np.abs(bs * b)
        # N = delta^2 + 4 k beta* b + D* M. Where beta* b < 0, D* M - 4 k |beta* b| cancels (N -> 2 delta^2 at
        # b = -beta*); there D* M - 4 k |beta* b| = (D*^2 M^2 - 16 k^2 beta*^2 b^2) / (D* M + 4 k |beta* b|), whose
        # numerator is delta^4 + 4 k delta^2 (beta*^2 + b^2) exactly: no cancellation.
        N = np.where(bs * b >= 0, delta**2 + cross + D * M,
                     delta**2 + delta**2 * (delta**2 + 4 * k * (bs**2 + b**2)) / (D * M + cross))
        return np.log(N) - np.log(np.abs(b - bs))

    return (lnE(beta) - lnE(b0)) / (s * D)
