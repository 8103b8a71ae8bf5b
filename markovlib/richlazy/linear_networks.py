"""Part II: wide two-layer linear networks of "Get rich quick" (Kunin et al., NeurIPS 2024, Sec. 4, App. B.1).

f(x) = A W x with W in R^{h x d} (rows w_k), A in R^{c x h} (columns a_k), predictor beta = A W in R^{c x d},
MSE L = ||X beta^T - Y||_F^2 / (2n) for X in R^{n x d}, Y in R^{n x c}, gradient flow with layer-wise learning
rates dA/dt = -eta_a dL/dA, dW/dt = -eta_w dL/dW.

Vec convention (used throughout): vec stacks COLUMNS, vec(B) = B.reshape(-1, order="F"), so that
vec(P B Q) = (Q^T kron P) vec(B). With it, d vec(beta)/dt = -M vec(dL/dbeta) with (Thm 4.1)

    M = sum_k M_k,   M_k = eta_a (w_k w_k^T kron I_c) + eta_w (I_d kron a_k a_k^T),

and the NTK over (sample, output) pairs, ordered sample-major (index i c + j), is
K = (X kron I_c) M (X kron I_c)^T = eta_a (X W^T W X^T) kron I_c + eta_w (X X^T) kron (A A^T).
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import eigh

from ..numerics import checks

__all__ = ["check_network", "check_data", "flow_field",
           "vec", "unvec", "conserved_matrix", "neuron_deltas", "preconditioner", "preconditioner_from_beta",
           "isotropic_preconditioner", "beta_gradient", "gradient_flow", "ntk", "isotropic_init", "init_with_deltas",
           "singular_value_rates", "hyperbolic_entropy", "hyperbolic_entropy_grad", "deep_balanced_preconditioner",
           "deep_rich_bias"]


# ---------------------------------------------------------------------------------------------- validation
def check_network(A, W):
    """(A, W) as finite float matrices, A c x h and W h x d sharing h; ValueError naming the bad one."""
    A = checks.finite_array("A", A, 2)
    W = checks.finite_array("W", W, 2)
    if A.shape[1] != W.shape[0]:
        raise ValueError(f"A (c x h) and W (h x d) must share h, got shapes {A.shape} and {W.shape}")
    return A, W


def check_data(X, Y, d, c):
    """(X, Y) as finite float matrices, X n x d and Y n x c; ValueError naming the bad one."""
    X = checks.finite_array("X", X, 2)
    Y = checks.finite_array("Y", Y, 2)
    if X.shape[1] != d or Y.shape != (X.shape[0], c):
        raise ValueError(f"X must be n x {d} and Y n x {c}, got shapes {X.shape} and {Y.shape}")
    return X, Y


def vec(B) -> np.ndarray:
    """Columns stacked: vec(B)[j * rows + i] = B[i, j]."""
    return np.asarray(B).reshape(-1, order="F")


def unvec(v, rows: int, cols: int) -> np.ndarray:
    """Inverse of :func:`vec` for a rows x cols matrix."""
    return np.asarray(v).reshape(rows, cols, order="F")


# ---------------------------------------------------------------------------------------------- conserved
def conserved_matrix(A, W, eta_a=1.0, eta_w=1.0) -> np.ndarray:
    """The h x h matrix eta_w A^T A - eta_a W W^T, conserved by gradient flow (Sec. 4; the GL(h) symmetry
    (A, W) -> (A G^{-1}, G W))."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    A, W = check_network(A, W)
    return eta_w * A.T @ A - eta_a * W @ W.T


def neuron_deltas(A, W, eta_a=1.0, eta_w=1.0) -> np.ndarray:
    """delta_k = eta_w ||a_k||^2 - eta_a ||w_k||^2, the diagonal of :func:`conserved_matrix` (Sec. 4)."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    A, W = check_network(A, W)
    return eta_w * np.sum(A**2, axis=0) - eta_a * np.sum(W**2, axis=1)


# ---------------------------------------------------------------------------------------------- M (Thm 4.1, 4.2)
def preconditioner(A, W, eta_a=1.0, eta_w=1.0) -> np.ndarray:
    """M = sum_k eta_a (w_k w_k^T kron I_c) + eta_w (I_d kron a_k a_k^T) = eta_a W^T W kron I_c +
    eta_w I_d kron A A^T (Thm 4.1, Eq. 7), a (d c) x (d c) matrix in the column-stacking vec convention."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    A, W = check_network(A, W)
    c, d = A.shape[0], W.shape[1]
    return eta_a * np.kron(W.T @ W, np.eye(c)) + eta_w * np.kron(np.eye(d), A @ A.T)


def preconditioner_from_beta(betas, deltas, eta_a=1.0, eta_w=1.0) -> np.ndarray:
    """M of Thm 4.1 through the neurons' beta_k = a_k w_k^T (shape h x c x d) and delta_k alone:

        M_k = (S_k - delta_k)/2 (bhat_k^T bhat_k kron I_c) + (S_k + delta_k)/2 (I_d kron bhat_k bhat_k^T),
        S_k = sqrt(delta_k^2 + 4 eta_a eta_w ||beta_k||_F^2),  bhat_k = beta_k / ||beta_k||_F,

    from eta_w ||a_k||^2 = (S_k + delta_k)/2, eta_a ||w_k||^2 = (S_k - delta_k)/2. Requires beta_k != 0 (a zero
    beta_k does not determine its neuron's M_k). The smaller of (S_k -+ delta_k)/2 is computed as
    2 eta_a eta_w ||beta_k||^2 / (S_k + |delta_k|), without cancellation at large |delta_k|."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    betas = checks.finite_array("betas", betas, 3)
    deltas = checks.finite_array("deltas", deltas, 1)
    if deltas.shape[0] != betas.shape[0]:
        raise ValueError(f"deltas must have one entry per neuron ({betas.shape[0]}), got {deltas.shape[0]}")
    norms = np.sqrt(np.sum(betas**2, axis=(1, 2)))
    if np.any(norms == 0):
        raise ValueError("betas: every beta_k must be nonzero (Thm 4.1 needs beta_k != 0)")
    kappa = eta_a * eta_w
    S = np.hypot(deltas, 2 * np.sqrt(kappa) * norms)
    small = 2 * kappa * norms**2 / (S + np.abs(deltas))
    big = (S + np.abs(deltas)) / 2
    coef_w = np.where(deltas >= 0, small, big)  # eta_a ||w_k||^2
    coef_a = np.where(deltas >= 0, big, small)  # eta_w ||a_k||^2
    bh = betas / norms[:, None, None]
    _, c, d = betas.shape
    P = np.einsum("k,kid,kie->de", coef_w, bh, bh)  # sum_k coef_w bhat^T bhat (d x d)
    Q = np.einsum("k,kid,kjd->ij", coef_a, bh, bh)  # sum_k coef_a bhat bhat^T (c x c)
    return np.kron(P, np.eye(c)) + np.kron(np.eye(d), Q)


def _psd_sqrt_shift(G, shift):
    """sqrt(G + shift^2 I) for symmetric PSD G, by an eigendecomposition."""
    lam, U = eigh((G + G.T) / 2)
    return (U * np.sqrt(np.maximum(lam, 0.0) + shift**2)) @ U.T


def isotropic_preconditioner(beta, delta, eta_a=1.0, eta_w=1.0) -> np.ndarray:
    """M of Thm 4.2 for an isotropic conserved matrix eta_w A^T A - eta_a W W^T = delta I_h (with h = d if
    delta < 0, h = c if delta > 0), a function of beta (c x d) alone:

        M = P kron I_c + I_d kron Q,   P = sqrt(eta_a eta_w beta^T beta + delta^2/4 I_d) - delta/2 I_d  (= eta_a W^T W),
                                        Q = sqrt(eta_a eta_w beta beta^T + delta^2/4 I_c) + delta/2 I_c
                                        (= eta_w A A^T).
    """
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    beta = checks.finite_array("beta", beta, 2)
    delta = float(checks.finite_array("delta", delta, 0))
    c, d = beta.shape
    kappa = eta_a * eta_w
    P = _psd_sqrt_shift(kappa * beta.T @ beta, delta / 2) - delta / 2 * np.eye(d)
    Q = _psd_sqrt_shift(kappa * beta @ beta.T, delta / 2) + delta / 2 * np.eye(c)
    return np.kron(P, np.eye(c)) + np.kron(np.eye(d), Q)


# ---------------------------------------------------------------------------------------------- flow and NTK
def beta_gradient(X, Y, beta) -> np.ndarray:
    """dL/dbeta = (X beta^T - Y)^T X / n (c x d) for L = ||X beta^T - Y||_F^2 / (2n)."""
    beta = checks.finite_array("beta", beta, 2)
    X, Y = check_data(X, Y, beta.shape[1], beta.shape[0])
    return (X @ beta.T - Y).T @ X / X.shape[0]


def flow_field(XtX, YtX, c, h, d, eta_a, eta_w):
    """The flow's vector field on z = (vec A, vec W): dA/dt = -eta_a G W^T, dW/dt = -eta_w A^T G with
    G = A W X^T X / n - Y^T X / n (Sec. 4), for solve_ivp."""
    def rhs(_, z):
        A = z[: c * h].reshape(c, h)
        W = z[c * h:].reshape(h, d)
        G = A @ W @ XtX - YtX
        return np.concatenate([(-eta_a * G @ W.T).ravel(), (-eta_w * A.T @ G).ravel()])
    return rhs


def gradient_flow(A0, W0, X, Y, t, eta_a=1.0, eta_w=1.0, rtol=1e-12, atol=1e-12):
    """(A(t), W(t)) at the times t (shapes (len(t), c, h), (len(t), h, d)) under dA/dt = -eta_a G W^T,
    dW/dt = -eta_w A^T G, G = dL/dbeta, integrated by scipy's DOP853 at tolerances rtol, atol."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    A0, W0 = check_network(A0, W0)
    (c, h), d = A0.shape, W0.shape[1]
    X, Y = check_data(X, Y, d, c)
    t = checks.finite_array("t", t, 1)
    if t.size == 0 or t[0] < 0 or np.any(np.diff(t) <= 0):
        raise ValueError("t must be a non-empty increasing array of times >= 0")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not (np.isfinite(tol) and 0 < tol < 1):
            raise ValueError(f"{name} must be in (0, 1), got {tol!r}")
    n = X.shape[0]
    XtX, YtX = X.T @ X / n, Y.T @ X / n

    rhs = flow_field(XtX, YtX, c, h, d, eta_a, eta_w)
    z0 = np.concatenate([A0.ravel(), W0.ravel()])
    sol = solve_ivp(rhs, (0.0, float(t[-1])), z0, method="DOP853", t_eval=t, rtol=rtol, atol=atol)
    if not sol.success:  # pragma: no cover - DOP853 on a polynomial vector field
        raise RuntimeError(f"gradient_flow: solve_ivp failed: {sol.message}")
    z = sol.y.T
    return z[:, : c * h].reshape(-1, c, h), z[:, c * h:].reshape(-1, h, d)


def ntk(X, A, W, eta_a=1.0, eta_w=1.0) -> np.ndarray:
    """K = (X kron I_c) M (X kron I_c)^T = eta_a (X W^T W X^T) kron I_c + eta_w (X X^T) kron (A A^T), the (n c) x
    (n c) NTK matrix over (sample, output) pairs, sample-major."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    A, W = check_network(A, W)
    X = checks.finite_array("X", X, 2)
    if X.shape[1] != W.shape[1]:
        raise ValueError(f"X must have d = {W.shape[1]} columns, got shape {X.shape}")
    XW = X @ W.T
    return eta_a * np.kron(XW @ XW.T, np.eye(A.shape[0])) + eta_w * np.kron(X @ X.T, A @ A.T)


# ---------------------------------------------------------------------------------------------- initializations
def _orthonormal(rng, rows, cols):
    """rows x cols with orthonormal columns (rows >= cols) or rows (rows < cols), Haar-distributed."""
    q, r = np.linalg.qr(rng.standard_normal((max(rows, cols), min(rows, cols))))
    q = q * np.sign(np.diag(r))
    return q if rows >= cols else q.T


def isotropic_init(d, h, c, delta, scale=1.0, seed=0, eta_a=1.0, eta_w=1.0):
    """(A, W) with eta_w A^T A - eta_a W W^T = delta I_h exactly (Assumption B.2, Thm 4.2).

    delta >= 0 (needs h <= c): W has i.i.d. N(0, scale^2) entries and A = O sqrt(eta_a W W^T + delta I) / sqrt(eta_w),
    O (c x h) with random orthonormal columns. delta < 0 (needs h <= d): A is Gaussian and
    W = sqrt(eta_w A^T A - delta I) O / sqrt(eta_a), O (h x d) with random orthonormal rows."""
    d, h, c = checks.positive_int("d", d), checks.positive_int("h", h), checks.positive_int("c", c)
    delta = float(checks.finite_array("delta", delta, 0))
    scale = float(checks.finite_array("scale", scale, 0))
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    rng = np.random.default_rng(seed)
    if delta >= 0:
        if h > c:
            raise ValueError(f"h must be <= c for an isotropic init with delta >= 0, got h = {h}, c = {c}")
        W = scale * rng.standard_normal((h, d))
        A = _orthonormal(rng, c, h) @ _psd_sqrt_shift(eta_a * W @ W.T, np.sqrt(delta)) / np.sqrt(eta_w)
    else:
        if h > d:
            raise ValueError(f"h must be <= d for an isotropic init with delta < 0, got h = {h}, d = {d}")
        A = scale * rng.standard_normal((c, h))
        W = _psd_sqrt_shift(eta_w * A.T @ A, np.sqrt(-delta)) @ _orthonormal(rng, h, d) / np.sqrt(eta_a)
    return A, W


def init_with_deltas(d, c, deltas, products, seed=0, eta_a=1.0, eta_w=1.0):
    """(A, W) with random directions a_k / ||a_k||, w_k / ||w_k|| (Haar on the spheres) and prescribed
    ||beta_k||_F = ||a_k|| ||w_k|| = products[k] and delta_k = deltas[k]: eta_w ||a_k||^2 = (S_k + delta_k)/2,
    eta_a ||w_k||^2 = (S_k - delta_k)/2, S_k = sqrt(delta_k^2 + 4 eta_a eta_w products_k^2). The directions depend
    on (d, c, h, seed) only, so a sweep over delta at fixed products keeps beta_k (hence beta) fixed."""
    d, c = checks.positive_int("d", d), checks.positive_int("c", c)
    deltas = checks.finite_array("deltas", deltas, 1)
    products = checks.finite_array("products", products, 1)
    if products.shape != deltas.shape or deltas.size == 0:
        raise ValueError(f"deltas and products must be non-empty and of one length, got {deltas.size}, {products.size}")
    if np.any(products <= 0):
        raise ValueError("products must be > 0")
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    rng = np.random.default_rng(seed)
    h = deltas.size
    ua = rng.standard_normal((c, h))
    uw = rng.standard_normal((h, d))
    ua /= np.linalg.norm(ua, axis=0)
    uw /= np.linalg.norm(uw, axis=1)[:, None]
    kappa = eta_a * eta_w
    S = np.hypot(deltas, 2 * np.sqrt(kappa) * products)
    small = 2 * kappa * products**2 / (S + np.abs(deltas))
    big = (S + np.abs(deltas)) / 2
    a2 = np.where(deltas >= 0, big, small) / eta_w
    w2 = np.where(deltas >= 0, small, big) / eta_a
    return ua * np.sqrt(a2), uw * np.sqrt(w2)[:, None]


# ---------------------------------------------------------------------------------------------- singular values
def singular_value_rates(beta, G, delta, eta_a=1.0, eta_w=1.0) -> np.ndarray:
    """d sigma_i/dt = -sqrt(delta^2 + 4 eta_a eta_w sigma_i^2) u_i^T G v_i (Thm B.6, derived in the chapter) for the
    isotropic flow d beta/dt = -(Q G + G P), G = dL/dbeta; the singular values of beta in decreasing order
    (simple singular values assumed)."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    beta = checks.finite_array("beta", beta, 2)
    G = checks.finite_array("G", G, 2)
    if G.shape != beta.shape:
        raise ValueError(f"G must have beta's shape {beta.shape}, got {G.shape}")
    delta = float(checks.finite_array("delta", delta, 0))
    U, s, Vt = np.linalg.svd(beta, full_matrices=False)
    proj = np.einsum("ir,ij,rj->r", U, G, Vt)
    return -np.sqrt(delta**2 + 4 * eta_a * eta_w * s**2) * proj


def _entropy_args(sigma, delta, eta_a, eta_w):
    """(sigma, |delta| / (2 sqrt(k)), sqrt(k)) with k = eta_a eta_w, validated; the potential needs delta != 0."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    sigma = checks.finite_array("sigma", sigma)
    delta = float(checks.finite_array("delta", delta, 0))
    if delta == 0:
        raise ValueError("delta must be nonzero (the potential is singular at delta = 0)")
    rk = np.sqrt(eta_a * eta_w)
    return sigma, abs(delta) / (2 * rk), rk


def hyperbolic_entropy_grad(sigma, delta, eta_a=1.0, eta_w=1.0) -> np.ndarray:
    """grad Phi_delta(sigma)_i = arcsinh(2 sqrt(k) sigma_i / |delta|) / (2 sqrt(k)), k = eta_a eta_w (delta != 0)."""
    sigma, b, rk = _entropy_args(sigma, delta, eta_a, eta_w)
    return np.arcsinh(sigma / b) / (2 * rk)


def hyperbolic_entropy(sigma, delta, eta_a=1.0, eta_w=1.0) -> float:
    """Phi_delta(sigma) = sum_i [sigma_i arcsinh(sigma_i / b) - sqrt(sigma_i^2 + b^2) + b] / (2 sqrt(k)),
    b = |delta| / (2 sqrt(k)), k = eta_a eta_w: the hyperbolic-entropy potential whose Hessian is
    diag(1 / sqrt(delta^2 + 4 k sigma_i^2)) (Thm B.6; Woodworth et al.'s potential)."""
    sigma, b, rk = _entropy_args(sigma, delta, eta_a, eta_w)
    return float(np.sum(sigma * np.arcsinh(sigma / b) - np.hypot(sigma, b) + b) / (2 * rk))


# ---------------------------------------------------------------------------------------------- deep (App. B.2)
def _depth(L) -> int:
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ValueError(f"L must be an integer >= 1 (hidden layers), got {L!r}")
    return int(L)


def deep_balanced_preconditioner(beta, L) -> np.ndarray:
    """M = ||beta||^(2L/(L+1)) (I + L bhat bhat^T) of a depth-(L+1) single-output linear network
    f(x) = a^T W_L ... W_1 x from a balanced start (a a^T = W_L W_L^T, W_{l+1}^T W_{l+1} = W_l W_l^T; the
    delta -> 0 case of Def. B.7), equal learning rates 1: d beta/dt = -M grad L (Lemma B.9, Thm B.10)."""
    L = _depth(L)
    beta = checks.finite_array("beta", beta, 1)
    r = float(np.linalg.norm(beta))
    if r == 0:
        return np.zeros((beta.size, beta.size))
    bh = beta / r
    return r ** (2 * L / (L + 1)) * (np.eye(beta.size) + L * np.outer(bh, bh))


def deep_rich_bias(beta, beta0, L) -> float:
    """Psi(beta) = ||beta||^((L+2)/(L+1)) - (L+2)/(L+1) ||beta0||^(-L/(L+1)) beta0^T beta (Thm B.10, derived in
    the chapter): the flow from a balanced start beta0 != 0 that interpolates X beta = y ends at argmin Psi there."""
    L = _depth(L)
    beta = checks.finite_array("beta", beta, 1)
    beta0 = checks.finite_array("beta0", beta0, 1)
    if beta0.shape != beta.shape:
        raise ValueError(f"beta0 must have beta's shape {beta.shape}, got {beta0.shape}")
    r0 = float(np.linalg.norm(beta0))
    if r0 == 0:
        raise ValueError("beta0 must be nonzero")
    q = (L + 2) / (L + 1)
    return float(np.linalg.norm(beta) ** q - q * r0 ** (-L / (L + 1)) * beta0 @ beta)
