"""Part II: where the single-neuron flow ends, for general data, with or without a zero crossing of a.

Kunin et al. (NeurIPS 2024), Thm 3.1 and App. A.4.4, for f(x) = a w^T x on L = ||X (a w) - y||^2 / (2n) with
gradient flow da/dt = -eta_a dL/da, dw/dt = -eta_w grad_w L. Thm 3.1 assumes beta(t) = a w != 0 for all t; the
paper remarks (App. A.4.4, one-dimensional null space) that "it appears that beta = beta* - alpha v also works" for
trajectories through the origin, the mirror image of Thm 3.1's beta* + alpha v. This module holds that the limit is
the minimizer of Psi_delta with beta0 replaced by -beta0 (the paper's mirror point when the null space is
one-dimensional), for any X; the reasons, derived in the book's chapter grq_exact_dynamics (eta_a = eta_w = 1;
unequal rates reduce to it, see :func:`flow_limit`):

* w - w0 stays in the row space of X (dw/dt = -a X^T r / n), so P_N w = P_N w0 for the projector P_N onto the null
  space of X; then delta_R = a^2 - ||P_R w||^2 = delta + ||P_N w0||^2 is conserved too.
* At a least-squares limit, P_R beta = beta_ls (the minimum-norm least-squares solution) and P_N beta = a P_N w0, so
  beta(inf) = beta_ls + a_inf P_N w0 with a_inf^2 = (delta_R + sqrt(delta_R^2 + 4 ||beta_ls||^2)) / 2: everything
  but the sign of a_inf is decided. grad q_delta(||beta||) = (3/2) sign(a) w, so Thm 3.1's optimality condition
  P_N (sign(a_inf) w_inf - sign(a0) w0) = 0 holds iff a does not change sign; with a sign change it is the condition
  of Psi_delta with -beta0.
* a = 0 forces beta = 0 and L = L(0) = ||y||^2 / (2n); L decreases along the flow, so a crosses zero at most once,
  never after L < L(0), and only if L(beta0) > L(0) (the book's generalization of Lemma A.1 to any X).

The sign of a_inf is decided by theory when a0 != 0 and L(beta0) < L(0) (no crossing), when delta_R >= 0 (the
row-space problem keeps the sign of a), or when X^T X / n is isotropic on its row space (whitened data, one
sample): then the row-space problem is the whitened one, and its basin margin c1 (App. A.2.5,
:func:`markovlib.richlazy.minimal_exact.basin_margin`) gives the sign. Otherwise (delta_R < 0, anisotropic X^T X,
L(beta0) >= L(0)) no theory here decides whether a crosses zero; the flow is integrated only until L < L(0) (with a
margin for the solver), after which the sign of a cannot change, and the closed form gives the limit.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from .minimal_exact import basin_margin, orbit_squares

_RTOL, _ATOL = 1e-10, 1e-13  # the integration that settles the sign of a (DOP853)


def _inputs(X, y, a0, w0, delta, eta_a, eta_w):
    X = checks.finite_array("X", X)
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must be an n x d matrix with n, d >= 1 (or one sample of length d), got shape {X.shape}")
    y = np.atleast_1d(checks.finite_array("y", y))
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must be a vector of length n = {X.shape[0]} (the rows of X), got shape {y.shape}")
    a0 = checks.finite_array("a0", a0)
    if a0.size != 1:
        raise ValueError(f"a0 must be a scalar, got shape {a0.shape}")
    a0 = float(a0.reshape(()))
    w0 = checks.finite_array("w0", w0)
    if w0.shape != (X.shape[1],):
        raise ValueError(f"w0 must be a vector of length d = {X.shape[1]} (the columns of X), got shape {w0.shape}")
    eta_a = checks.positive_real("eta_a", eta_a)
    eta_w = checks.positive_real("eta_w", eta_w)
    if max(np.abs(X).max(), np.abs(y).max(), abs(a0), np.abs(w0).max()) > 1e100:
        raise ValueError("X, y, a0 and w0 must have entries of size at most 1e100 (their squares enter delta and L)")
    if delta is not None:
        delta = checks.finite_array("delta", delta)
        if delta.size != 1:
            raise ValueError(f"delta must be a scalar or None, got shape {delta.shape}")
        delta = float(delta.reshape(()))
        if a0 == 0.0 or not np.any(w0):
            own = eta_w * a0**2 - eta_a * float(w0 @ w0)
            if abs(delta - own) > 1e-12 * max(1.0, abs(own)):
                raise ValueError(f"delta can only be chosen when a0 w0 != 0 (the rescaling orbit of (a0, w0) is a "
                                 f"point, with delta {own!r}), got delta = {delta!r}")
        else:  # (a0, w0) -> (a0 / s, s w0), s > 0, in the eta = 1 variables below, where delta / (eta_a eta_w) holds
            a_, w_ = init_from_product(a0 * w0 / np.sqrt(eta_a * eta_w), delta / (eta_a * eta_w), np.sign(a0))
            a0, w0 = a_ * np.sqrt(eta_a), w_ * np.sqrt(eta_w)
    # unequal rates: a~ = a / sqrt(eta_a), w~ = w / sqrt(eta_w) follow the eta = 1 flow on the data (k X, y),
    # k = sqrt(eta_a eta_w), and beta = k a~ w~
    k = float(np.sqrt(eta_a * eta_w))
    return k * X, y, a0 / np.sqrt(eta_a), w0 / np.sqrt(eta_w), k


def init_from_product(beta0, delta, sign=1.0):
    """(a0, w0) with a0 w0 = beta0, a0^2 - ||w0||^2 = delta and the sign of a0 given (eta_a = eta_w = 1; the point of
    the rescaling orbit of beta0 with that conserved delta, Thm 3.1's parametrization): a0^2 = (delta + sqrt(delta^2
    + 4 ||beta0||^2)) / 2, evaluated without cancellation. ``beta0``: a nonzero vector; ``sign``: +1 or -1."""
    beta0 = checks.finite_array("beta0", beta0, ndim=1)
    if beta0.size == 0 or not np.any(beta0):
        raise ValueError(f"beta0 must be a nonzero vector, got {beta0!r}")
    delta = checks.finite_array("delta", delta)
    if delta.size != 1:
        raise ValueError(f"delta must be a scalar, got shape {delta.shape}")
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, got {sign!r}")
    a2, _ = orbit_squares(float(np.linalg.norm(beta0)), float(delta.reshape(())))
    if not a2 > 0:
        raise ValueError(f"beta0 is too small for delta = {float(delta.reshape(()))!r}: a0^2 underflows to 0")
    a0 = float(sign) * float(np.sqrt(a2))
    return a0, beta0 / a0


def _split(X, y):
    """(C, c, beta_ls, P_R, isotropic) with C = X^T X / n, c = X^T y / n, beta_ls = C^+ c, P_R the projector onto
    the row space of X, and whether C is a multiple of P_R (one distinct nonzero eigenvalue)."""
    n = X.shape[0]
    U, sv, Vt = np.linalg.svd(X, full_matrices=True)
    tol = sv.max() * max(X.shape) * np.finfo(float).eps if sv.size else 0.0
    rank = int(np.sum(sv > tol))
    if rank == 0:
        raise ValueError("X must be nonzero")
    V_R = Vt[:rank].T
    beta_ls = V_R @ ((U[:, :rank].T @ y) / sv[:rank])
    if not np.any(beta_ls):
        raise ValueError("X^T y must be nonzero (y must have a nonzero least-squares fit; otherwise beta = 0 is a "
                         "least-squares solution and a saddle)")
    lam = sv[:rank] ** 2 / n
    isotropic = bool(lam.max() - lam.min() <= 1e-10 * lam.max())
    return X.T @ X / n, X.T @ y / n, beta_ls, V_R @ V_R.T, isotropic


def _integrate_until_settled(a0, w0, C, c, gap, floor):
    """Integrate the eta = 1 flow until Delta L = L(beta) - L(0) = beta^T (C beta / 2 - c) < -margin (then a can no
    longer cross zero) and return the sign of a there. margin = 1e-6 gap (gap = L(0) - min L), raised to ``floor``
    (the solver's error in Delta L for a large beta0), at most gap / 2."""
    from scipy.integrate import solve_ivp

    margin = min(max(1e-6 * gap, floor), gap / 2)

    def rhs(_, th):
        a, w = th[0], th[1:]
        g = C @ (a * w) - c
        return np.concatenate(([-(w @ g)], -a * g))

    def below(_, th):
        beta = th[0] * th[1:]
        return float(beta @ (C @ beta / 2 - c)) + margin

    below.terminal, below.direction = True, -1
    scale = max(float(np.linalg.eigvalsh(C).max()) * (a0**2 + float(w0 @ w0) + np.sqrt(float(c @ c))), 1e-300)
    y0, t_chunk = np.concatenate(([a0], w0)), 50.0 / scale
    for _ in range(400):  # a horizon of 2e4 / scale in all
        if below(0.0, y0) < 0:
            return float(np.sign(y0[0]))
        sol = solve_ivp(rhs, (0.0, t_chunk), y0, method="DOP853", rtol=_RTOL, atol=_ATOL * np.sqrt(1 + y0 @ y0),
                        events=below)
        if not sol.success:  # pragma: no cover - DOP853 on this polynomial field does not fail in range
            raise RuntimeError(f"solve_ivp failed: {sol.message}")
        y0 = sol.y_events[0][0] if sol.status == 1 else sol.y[:, -1]
        if sol.status == 1:
            return float(np.sign(y0[0]))
    raise RuntimeError("the flow did not leave the level L(0) of the origin: the initialization is on or next to "
                       "the stable manifold of a saddle, where a -> 0 and beta -> 0")


def limit_sign(X, y, a0, w0, delta=None, *, eta_a=1.0, eta_w=1.0):
    """(sign of a(t) as t -> inf, how it was decided) for the flow of :func:`flow_limit` (same arguments). ``how``
    is one of "energy" (a0 != 0 and L(beta0) < L(0): no crossing), "row-space delta" (delta_R >= 0: no crossing),
    "basin" (X^T X / n isotropic on its row space: the sign of the basin margin c1 of App. A.2.5), "integration"
    (integrated until L < L(0); theory does not decide a crossing for an anisotropic X^T X with delta_R < 0) or
    "saddle" (sign 0: the flow ends at a saddle with beta = 0: a0 = 0 with P_R w0 = 0, or a point of the basin
    surface c1 = 0)."""
    X, y, a0, w0, _ = _inputs(X, y, a0, w0, delta, eta_a, eta_w)
    return _sign(X, y, a0, w0)


def _sign(X, y, a0, w0):
    C, c, beta_ls, P_R, isotropic = _split(X, y)
    w_R = P_R @ w0
    beta0 = a0 * w0
    dL, dL_scale = float(beta0 @ (C @ beta0 / 2 - c)), float(abs(beta0 @ C @ beta0) / 2 + abs(beta0 @ c))
    if a0 != 0.0 and dL < -1e-12 * dL_scale:
        return float(np.sign(a0)), "energy"
    delta_R = a0**2 - float(w_R @ w_R)
    if a0 != 0.0 and delta_R > 1e-12 * (a0**2 + float(w_R @ w_R)):
        return float(np.sign(a0)), "row-space delta"
    if a0 == 0.0 and float(w_R @ c) == 0.0:
        return 0.0, "saddle"
    if isotropic:  # C = lam P_R: (a, P_R w) follow the whitened flow with beta* = beta_ls, time scaled by lam
        m = float(basin_margin(a0, w_R, beta_ls))
        return float(np.sign(m)), ("basin" if m != 0.0 else "saddle")
    gap = float(c @ beta_ls) / 2  # L(0) - min L
    return _integrate_until_settled(a0, w0, C, c, gap, 1e-8 * dL_scale), "integration"


def flow_limit(X, y, a0, w0, delta=None, *, eta_a=1.0, eta_w=1.0):
    """The limit beta(inf) = lim a(t) w(t) of the gradient flow of f(x) = a w^T x on L = ||X (a w) - y||^2 / (2n)
    from (a0, w0), for any data X (n x d; a 1-D X is one sample) with X^T y != 0, whether or not a crosses zero
    (Kunin et al., Thm 3.1 and App. A.4.4; the crossing case: the paper's mirror point, for any X, module docstring).

    ``delta``: None (the flow from (a0, w0) itself), or a conserved value eta_w a^2 - eta_a ||w||^2 to start from
    instead: (a0, w0) is first moved along its rescaling orbit (a0 / s, s w0), s > 0, to that delta (same beta0 =
    a0 w0 and sign of a0; Thm 3.1's parametrization by (beta0, delta)); needs a0 w0 != 0 unless it equals the
    conserved value of (a0, w0). ``eta_a``, ``eta_w``: the layer-wise rates (reduced to eta = 1 by rescaling a, w
    and X).

    Returns beta_ls + sigma |a_inf| P_N w0 (in the eta = 1 variables), a vector of length d, with sigma the sign of
    a at the end from :func:`limit_sign`: decided by theory when the energy, the row-space delta or an isotropic
    X^T X settle it, and otherwise by integrating the flow only until L < L(0) (whether a crosses zero for an
    anisotropic X^T X with delta_R < 0 is not decided by theory). For sigma = 0 (the flow ends at a saddle) the
    zero vector. Equals argmin Psi_delta of Thm 3.1 (:func:`markovlib.richlazy.minimal_exact.implicit_bias_limit`)
    when a keeps its sign, and argmin Psi_delta with -beta0 when a crosses zero. ValueError names a bad argument;
    RuntimeError if the flow stays at the level of a saddle for the whole integration horizon."""
    X, y, a0, w0, k = _inputs(X, y, a0, w0, delta, eta_a, eta_w)
    sigma, _ = _sign(X, y, a0, w0)
    _, _, beta_ls, P_R, _ = _split(X, y)
    if sigma == 0.0:
        return np.zeros(X.shape[1])
    w_N = w0 - P_R @ w0
    delta_R = a0**2 - float((P_R @ w0) @ (P_R @ w0))
    a2, _ = orbit_squares(np.linalg.norm(beta_ls), delta_R)
    return k * (beta_ls + sigma * float(np.sqrt(a2)) * w_N)
