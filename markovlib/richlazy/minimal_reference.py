"""Part II: independent references for the single neuron f(x) = a w^T x (the book's chapters grq_minimal_model and
grq_exact_dynamics).

Kunin et al. (NeurIPS 2024), Sec. 3 and App. A. Every function here re-derives a quantity without the markovlib
functions it is compared with (``minimal_model``, ``minimal_exact``, ``minimal_limits``): scipy's DOP853 on the
flow written out, torch autograd for gradients and Jacobians, a scalar root search for Thm 3.1's limit, and the
threshold cosine of the zero crossing written out. A chapter's check through these functions alone is
``kind="independent"``.
"""
from __future__ import annotations

import numpy as np
import torch
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, minimize

from ..numerics import checks


def _initial(a0, W0):
    a0 = checks.finite_array("a0", a0, ndim=1)
    W0 = checks.finite_array("W0", W0, ndim=2)
    if W0.shape[0] != a0.size:
        raise ValueError(f"W0 must have one row per entry of a0 ({a0.size}), got shape {W0.shape}")
    return a0, W0


def neuron_flows(a0, W0, C, c, T, n_eval=2001, rtol=1e-10, atol=None, count_crossings=False, dense=False):
    """Independent reference: the gradient flow of N single neurons at once, da/dt = -w^T g, dw/dt = -a g with
    g = C (a w) - c (App. A.1 at eta_a = eta_w = 1; L = beta^T C beta / 2 - c^T beta + const), by scipy's DOP853.

    a0 (N,), W0 (N, d); C (d, d) shared or (N, d, d) per neuron, c (d,) or (N, d); atol defaults to rtol / 100.
    Returns a (N, n_eval) and W (N, d, n_eval) on n_eval equally spaced times of [0, T]; with ``count_crossings``
    also the number of zero crossings of each a (events), and with ``dense`` the solver's solution object last."""
    a0, W0 = _initial(a0, W0)
    N, d = W0.shape
    C, c = checks.finite_array("C", C), checks.finite_array("c", c)
    if C.shape not in ((d, d), (N, d, d)) or c.shape not in ((d,), (N, d)):
        raise ValueError(f"C must be ({d}, {d}) or ({N}, {d}, {d}) and c ({d},) or ({N}, {d}), got {C.shape}, "
                         f"{c.shape}")
    T = checks.positive_real("T", T)
    n_eval = checks.positive_int("n_eval", n_eval)
    rtol = checks.positive_real("rtol", rtol)
    atol = rtol / 100 if atol is None else checks.positive_real("atol", atol)

    def rhs(_, y):
        a_, W_ = y[:N], y[N:].reshape(N, d)
        beta = a_[:, None] * W_
        r_ = (beta @ C.T if C.ndim == 2 else np.einsum("nij,nj->ni", C, beta)) - c
        return np.concatenate([-np.sum(r_ * W_, axis=1), (-a_[:, None] * r_).ravel()])

    events = [lambda _, z, i=i: z[i] for i in range(N)] if count_crossings else None
    sol = solve_ivp(rhs, (0.0, T), np.concatenate([a0, W0.ravel()]), method="DOP853", rtol=rtol, atol=atol,
                    t_eval=np.linspace(0.0, T, n_eval), events=events, dense_output=dense)
    if not sol.success:
        raise RuntimeError(f"the reference integration failed: {sol.message}")
    out = [sol.y[:N], sol.y[N:].reshape(N, d, -1)]
    if count_crossings:
        out.append(np.array([te.size for te in sol.t_events]))
    if dense:
        out.append(sol)
    return tuple(out)


def torch_rk4_delta_drift(X, y, a0, W0, T, step, eta_a=1.0, eta_w=1.0):
    """Independent reference: a fixed-step RK4 on the rate-scaled torch-autograd gradient of
    L = ||X (a w) - y||^2 / (2n) for N neurons at once (App. A.1). Returns (the largest drift of
    delta = eta_w a^2 - eta_a ||w||^2 over the steps and neurons, the end points (N, 1 + d) as [a, w])."""
    a0, W0 = _initial(a0, W0)
    X, y = checks.finite_array("X", X, ndim=2), checks.finite_array("y", y, ndim=1)
    if X.shape != (y.size, W0.shape[1]):
        raise ValueError(f"X must be ({y.size}, {W0.shape[1]}), got {X.shape}")
    T, step = checks.positive_real("T", T), checks.positive_real("step", step)
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    Xt, yt = torch.tensor(X), torch.tensor(y)
    rates = torch.tensor([eta_a] + [eta_w] * W0.shape[1], dtype=torch.float64)

    def field(theta):
        theta = theta.detach().requires_grad_(True)
        loss = ((((theta[:, 1:] * theta[:, :1]) @ Xt.T) - yt) ** 2).sum() / (2 * len(y))  # independent problems
        (grad,) = torch.autograd.grad(loss, theta)
        return -rates * grad

    def delta(theta):
        return eta_w * theta[:, 0] ** 2 - eta_a * (theta[:, 1:] ** 2).sum(1)

    theta = torch.tensor(np.column_stack([a0, W0]))
    steps = int(np.ceil(T / step))
    h = T / steps
    delta0, drift = delta(theta), 0.0
    for _ in range(steps):
        k1 = field(theta)
        k2 = field(theta + h / 2 * k1)
        k3 = field(theta + h / 2 * k2)
        k4 = field(theta + h * k3)
        theta = (theta + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)).detach()
        drift = max(drift, float((delta(theta) - delta0).abs().max()))
    return drift, theta.numpy()


def reduced_field_autograd(X, y, beta_star, a, w):
    """Independent reference: (d mu / dt, d phi / dt) at (a, w) by the chain rule, grad mu . theta_dot and
    grad phi . theta_dot with theta_dot = -grad L, every gradient by torch autograd (eq. (2) of the chapter,
    mu = a ||w||, phi = cos(w, beta*))."""
    Xt, yt, bst = torch.tensor(np.asarray(X, float)), torch.tensor(np.asarray(y, float)), torch.tensor(
        np.asarray(beta_star, float))
    th = torch.tensor(np.concatenate(([float(a)], np.asarray(w, float))), requires_grad=True)
    loss = ((Xt @ (th[0] * th[1:]) - yt) ** 2).sum() / (2 * len(yt))
    (g,) = torch.autograd.grad(loss, th)
    th2 = th.detach().clone().requires_grad_(True)
    (gmu,) = torch.autograd.grad(th2[0] * th2[1:].norm(), th2)
    (gphi,) = torch.autograd.grad((th2[1:] @ bst) / (th2[1:].norm() * bst.norm()), th2)
    return float(gmu @ -g), float(gphi @ -g)


def function_space_autograd(X, y, a, w):
    """Independent reference: (J J^T, d beta / dt) for beta = a w, J the autograd Jacobian of beta in (a, w) and
    d beta / dt = J theta_dot with theta_dot = -grad L from autograd (eq. (4): d beta / dt = -M grad_beta L,
    M = J J^T at eta_a = eta_w = 1)."""
    Xt, yt = torch.tensor(np.asarray(X, float)), torch.tensor(np.asarray(y, float))
    th = torch.tensor(np.concatenate(([float(a)], np.asarray(w, float))))
    J = torch.autograd.functional.jacobian(lambda p: p[0] * p[1:], th).numpy()
    th2 = th.clone().requires_grad_(True)
    loss = ((Xt @ (th2[0] * th2[1:]) - yt) ** 2).sum() / (2 * len(yt))
    (gth,) = torch.autograd.grad(loss, th2)
    return J @ J.T, J @ (-gth.numpy())


def psi_null_root(x, y, beta0, delta, z_max=20.0):
    """Independent reference: Thm 3.1's limit for one sample x in d = 2, by brentq on d/dz Psi_delta(beta_p + z n)
    = q'(|beta|) n . beta / |beta| - q'(|beta0|) n . beta0 / |beta0| along the line of interpolants
    beta_p + z n (beta_p = y x / |x|^2, n the unit normal of x), with q'(r) = (3/2) sqrt(sqrt(r^2 + delta^2/4)
    - delta/2) written out."""
    x, beta0 = checks.finite_array("x", x, ndim=1), checks.finite_array("beta0", beta0, ndim=1)
    if x.shape != (2,) or beta0.shape != (2,) or not np.any(x) or not np.any(beta0):
        raise ValueError(f"x and beta0 must be nonzero vectors of length 2, got {x!r}, {beta0!r}")
    n = np.array([-x[1], x[0]]) / np.linalg.norm(x)
    beta_p = float(y) * x / (x @ x)

    def qp(r):
        return 1.5 * np.sqrt(np.sqrt(r**2 + delta**2 / 4) - delta / 2)

    def dpsi(z):
        beta = beta_p + z * n
        r = np.linalg.norm(beta)
        return qp(r) * (beta @ n) / r - qp(np.linalg.norm(beta0)) * (beta0 @ n) / np.linalg.norm(beta0)

    return beta_p + brentq(dpsi, -z_max, z_max, xtol=1e-14, rtol=1e-15) * n


def crossing_cosine_reference(delta, beta0_norm=1.0, beta_star_norm=1.0):
    """Independent reference: cos_c(delta) = -A(delta, |beta0|) A(delta, |beta*|) / (|beta*| |beta0|),
    A(delta, r) = (delta + sqrt(delta^2 + 4 r^2)) / 2, written out (the chapter's eq. grq-eq-cos-c)."""
    def A(r):
        return (delta + np.sqrt(delta**2 + 4 * r**2)) / 2

    return -A(beta0_norm) * A(beta_star_norm) / (beta_star_norm * beta0_norm)


def crossing_flow(a0, W0, Cs, cs, T, n_eval=2001, rtol=1e-11, atol=1e-13, dense=False):
    """Independent reference: :func:`neuron_flows` with a matrix C (N, d, d) and vector c (N, d) per neuron and the
    zero crossings of each a counted by events, in the form ``minimal_crossing.draw_family`` takes a flow:
    (solution, a (N, n_eval), W (N, d, n_eval), crossings (N,)); the solution has dense output if ``dense``."""
    out = neuron_flows(a0, W0, Cs, cs, T, n_eval, rtol=rtol, atol=atol, count_crossings=True, dense=dense)
    return (out[3] if dense else None), out[0], out[1], out[2]


def a44_closed_form(x, y, beta0, delta):
    """Independent reference: App. A.4.4's closed form of Thm 3.1 for one sample x in d = 2, beta* + alpha v with
    beta* = y x / |x|^2, v = sign(y) x_perp / |x|, alpha = k |a_inf|, k = ||w0|| beta0_hat . v,
    ||w0||^2 = (sqrt(delta^2 + 4 |beta0|^2) - delta) / 2, a_inf^2 = kappa + sqrt(kappa^2 + |beta*|^2),
    kappa = (k^2 + delta) / 2 (the expression of the authors' code)."""
    x, beta0 = checks.finite_array("x", x, ndim=1), checks.finite_array("beta0", beta0, ndim=1)
    if x.shape != (2,) or beta0.shape != (2,) or not np.any(x) or not np.any(beta0):
        raise ValueError(f"x and beta0 must be nonzero vectors of length 2, got {x!r}, {beta0!r}")
    bstar = float(y) * x / (x @ x)
    v = np.sign(float(y)) * np.array([-x[1], x[0]]) / np.linalg.norm(x)
    r0 = np.linalg.norm(beta0)
    k = np.sqrt((np.hypot(delta, 2 * r0) - delta) / 2) * (beta0 @ v) / r0
    kappa = (k**2 + delta) / 2
    return bstar + k * np.sqrt(kappa + np.hypot(kappa, np.linalg.norm(bstar))) * v


def q_azulay(x, delta):
    """Independent reference: Azulay et al.'s potential (their Thm 2, the paper's Thm A.2),
    q^A(x) = (x^2 - delta/2 (delta/2 + s)) sqrt(s - delta/2) / x, s = sqrt(x^2 + delta^2/4), for x > 0;
    sqrt(s - delta/2) is evaluated as x / sqrt(s + delta/2) when delta >= 0 (no cancellation)."""
    s = np.sqrt(x**2 + delta**2 / 4)
    root = x / np.sqrt(s + delta / 2) if delta >= 0 else np.sqrt(s - delta / 2)
    return (x**2 - delta / 2 * (delta / 2 + s)) * root / x


def azulay_argmin(beta_ls, N, beta0, delta):
    """Independent reference: the minimizer of Azulay et al.'s objective q^A(|beta|) + z . beta over the
    interpolants beta_ls + N u (N an orthonormal null-space basis), z = -(3/2) sqrt((sqrt(delta^2 + 4 |beta0|^2)
    - delta) / 2) beta0_hat, by BFGS over u from N^T beta0 (3-point gradients, gtol 1e-11)."""
    beta_ls, N, beta0 = np.asarray(beta_ls, float), np.asarray(N, float), np.asarray(beta0, float)
    z = -1.5 * np.sqrt((np.hypot(delta, 2 * np.linalg.norm(beta0)) - delta) / 2) * beta0 / np.linalg.norm(beta0)
    res = minimize(lambda u: q_azulay(np.linalg.norm(beta_ls + N @ u), delta) + z @ (beta_ls + N @ u), N.T @ beta0,
                   method="BFGS", jac="3-point", options={"gtol": 1e-11})
    return beta_ls + N @ res.x


def fd_M_derivative(path, t, h):
    """Independent reference: fourth-order central differences (-M(t+2h) + 8 M(t+h) - 8 M(t-h) + M(t-2h)) / (12 h)
    of M(t) = a^2 I + w w^T along ``path`` (a callable t -> rows [a, w] for an array of times, e.g. a dense
    solution's ``sol``), at the times t. Returns (len(t), d, d)."""
    h = checks.positive_real("h", h)
    t = np.asarray(t, dtype=float)
    Ms = {}
    for k in (-2, -1, 1, 2):
        Z = path(t + k * h)
        Ms[k] = Z[0][:, None, None] ** 2 * np.eye(Z.shape[0] - 1) + np.einsum("it,jt->tij", Z[1:], Z[1:])
    return (-Ms[2] + 8 * Ms[1] - 8 * Ms[-1] + Ms[-2]) / (12 * h)
