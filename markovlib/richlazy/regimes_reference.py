"""Part II, Sec. 4 and App. B.1 of "Get rich quick" (Kunin et al., NeurIPS 2024): independent references for the
chapter ``grq_regimes``, written without the markovlib functions they check.

Independent reference: each function integrates or evaluates a quantity of :mod:`markovlib.richlazy.linear_regimes`
by another route (scipy's DOP853 on a vector field written out here, where markovlib's flows use LSODA; a closed form
derived in the chapter), so that a check comparing the two has no markovlib code under test on the reference's path.

- :func:`raw_fit`: the flow of L = ||X beta^T - Y||_F^2 / (2n), beta = AW, on the raw parameters until the loss is
  ``fit_eps`` of its start (an integrator event);
- :func:`linear_ntk_distance`: the NTK K = X W^T W X^T (x) I_c + X X^T (x) A A^T (Thm 4.1) and the kernel distance
  S = 1 - <K0, K1>_F / (|K0|_F |K1|_F);
- :func:`raw_flow`: the same flow at rates (eta_a, eta_w), sampled at given times;
- :func:`nu_c_flow`: the coupled Riccati-Bernoulli system (App. B.1.1) for (nu, C), or a wrong version of it;
- :func:`bernoulli_closed`: the closed form c_i(t) of eq. grq-eq-b-scalar-bernoulli in the shared eigenspace.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from ..numerics import checks

CONTROLS = ("delta sign flipped", "nu^T C dropped")  # the wrong Bernoulli equations (negative controls)


def _params(A0, W0, X, Y):
    A0, W0 = checks.finite_array("A0", A0, ndim=2), checks.finite_array("W0", W0, ndim=2)
    X, Y = checks.finite_array("X", X, ndim=2), checks.finite_array("Y", Y, ndim=2)
    if A0.shape[1] != W0.shape[0] or X.shape[1] != W0.shape[1] or Y.shape != (X.shape[0], A0.shape[0]):
        raise ValueError(f"A0 must be (c, h), W0 (h, d), X (n, d) and Y (n, c), got {A0.shape}, {W0.shape}, "
                         f"{X.shape}, {Y.shape}")
    return A0, W0, X, Y


def raw_fit(A0, W0, X, Y, fit_eps, t_max):
    """Independent reference (no markovlib): the flow on the raw parameters (rates 1) by DOP853 (rtol 1e-10, atol
    1e-13) until the loss is ``fit_eps`` of its start (a realizable teacher: the least-squares loss is 0); returns
    (t_fit, A, W) there."""
    A0, W0, X, Y = _params(A0, W0, X, Y)
    if not 0 < fit_eps < 1 or not t_max > 0:
        raise ValueError(f"fit_eps must lie in (0, 1) and t_max be positive, got {fit_eps!r}, {t_max!r}")
    c_, h_ = A0.shape
    n_ = X.shape[0]
    split = lambda z: (z[: c_ * h_].reshape(c_, h_), z[c_ * h_:].reshape(h_, W0.shape[1]))
    loss = lambda z: np.sum((X @ (split(z)[0] @ split(z)[1]).T - Y) ** 2) / (2 * n_)

    def rhs(_, z):
        a, w = split(z)
        G = (X @ (a @ w).T - Y).T @ X / n_
        return np.concatenate([(-G @ w.T).ravel(), (-a.T @ G).ravel()])

    z0 = np.concatenate([A0.ravel(), W0.ravel()])
    L_end = loss(z0) * fit_eps
    ev = lambda _, z: loss(z) - L_end
    ev.terminal, ev.direction = True, -1
    sol = solve_ivp(rhs, (0, t_max), z0, method="DOP853", events=ev, rtol=1e-10, atol=1e-13)
    if not sol.t_events[0].size:
        raise ValueError(f"the flow did not fit to fit_eps = {fit_eps:g} by t_max = {t_max:g}")
    return (sol.t_events[0][0], *split(sol.y_events[0][0]))


def linear_ntk_distance(X, A0, W0, A1, W1) -> float:
    """Independent reference: S = 1 - <K0, K1>_F / (|K0|_F |K1|_F) for the NTK of f(x) = AWx on the training inputs,
    K = X W^T W X^T (x) I_c + X X^T (x) A A^T, at (A0, W0) and (A1, W1)."""
    K0, K1 = ((np.kron(X @ W.T @ W @ X.T, np.eye(A.shape[0])) + np.kron(X @ X.T, A @ A.T)) for A, W in
              ((A0, W0), (A1, W1)))
    return float(1 - np.sum(K0 * K1) / (np.linalg.norm(K0) * np.linalg.norm(K1)))


def raw_flow(A0, W0, X, Y, t, rtol, ea=1.0, ew=1.0):
    """Independent reference (no markovlib): the gradient flow of L = |X beta^T - Y|^2 / (2n) on the raw parameters
    (A, W) at rates (ea, ew), by DOP853 at tolerance ``rtol`` (relative and absolute), sampled at ``t``; returns the
    samples A (T, c, h) and W (T, h, d)."""
    A0, W0, X, Y = _params(A0, W0, X, Y)
    if not rtol > 0:
        raise ValueError(f"rtol must be positive, got {rtol!r}")
    c_, h_ = A0.shape
    d_ = W0.shape[1]
    XtX, YtX = X.T @ X / X.shape[0], Y.T @ X / X.shape[0]

    def rhs(_, z):
        a, w = z[: c_ * h_].reshape(c_, h_), z[c_ * h_:].reshape(h_, d_)
        G = a @ w @ XtX - YtX
        return np.concatenate([(-ea * G @ w.T).ravel(), (-ew * a.T @ G).ravel()])

    sol = solve_ivp(rhs, (0, t[-1]), np.concatenate([A0.ravel(), W0.ravel()]), method="DOP853", t_eval=t,
                    rtol=rtol, atol=rtol)
    z = sol.y.T
    return z[:, : c_ * h_].reshape(-1, c_, h_), z[:, c_ * h_:].reshape(-1, h_, d_)


def nu_c_flow(nu0, C0, Qs, dl, t, rtol, control=None):
    """Independent reference (no markovlib): the coupled system nu' = Qs - delta nu - nu^2 (eq. grq-eq-b-riccati),
    C' = C nu + nu^T C + 2 delta C - 2 C^2 (eq. grq-eq-b-bernoulli), Qs = beta*^T beta*, integrated on its own from
    (nu(0), C(0)) by DOP853 and sampled at ``t``; ``control`` (one of :data:`CONTROLS`) integrates a wrong Bernoulli
    equation. Returns C (T, c, c), NaN after a blow-up (a wrong equation may blow up)."""
    if control not in (None, *CONTROLS):
        raise ValueError(f"control must be None or one of {CONTROLS}, got {control!r}")
    nu0, C0 = checks.finite_array("nu0", nu0, ndim=2), checks.finite_array("C0", C0, ndim=2)
    c_ = nu0.shape[0]

    def rhs(_, z):
        nu, C = z[: c_ * c_].reshape(c_, c_), z[c_ * c_:].reshape(c_, c_)
        dl_c = -dl if control == "delta sign flipped" else dl
        nuTC = 0 * C if control == "nu^T C dropped" else nu.T @ C
        dC = C @ nu + nuTC + 2 * dl_c * C - 2 * C @ C
        return np.concatenate([(Qs - dl * nu - nu @ nu).ravel(), dC.ravel()])

    sol = solve_ivp(rhs, (0, t[-1]), np.concatenate([nu0.ravel(), C0.ravel()]), method="DOP853", t_eval=t,
                    rtol=rtol, atol=rtol)
    out = np.full((len(t), c_, c_), np.nan)
    out[: sol.y.shape[1]] = sol.y.T[:, c_ * c_:].reshape(-1, c_, c_)
    return out


def bernoulli_closed(c0, n0, s2, dl, t):
    """Independent reference: c_i(t) in the shared eigenspace, eq. grq-eq-b-scalar-bernoulli (derived in the chapter):
    c_i = mu_i / (1/c_i(0) + 2 int_0^t mu_i), mu_i = z_i^2 e^{2 delta t}, z_i = (a_i e^{n_+ t} - b_i e^{n_- t}) / D.
    ``c0``, ``n0``, ``s2`` hold c_i(0), n_i(0), s_i^2; returns (T, len(c0))."""
    if dl == 0:
        raise ValueError("dl (delta) must be non-zero")
    D = np.sqrt(dl**2 + 4 * np.asarray(s2))
    n_p, n_m = (-dl + D) / 2, (-dl - D) / 2
    a, b = n0 - n_m, n0 - n_p
    t = np.asarray(t)[:, None]
    z = (a * np.exp(n_p * t) - b * np.exp(n_m * t)) / D  # z_i, with n_i = z_i' / z_i
    E_up, E_mid, E_down = (np.expm1(k * t) / k for k in (dl + D, dl, dl - D))  # E_k(t) = (e^{kt} - 1) / k
    integral = (a**2 * E_up - 2 * a * b * E_mid + b**2 * E_down) / D**2
    return z**2 * np.exp(2 * dl * t) / (1 / c0 + 2 * integral)
