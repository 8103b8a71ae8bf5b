"""Part II: independent references for wide and deep linear networks (the book's chapter grq_wide_deep).

Kunin et al. (NeurIPS 2024), Sec. 4 and App. B. Every function here re-derives a quantity without the markovlib
functions it is compared with (``linear_networks``): the gradient flow of f(x) = A W x from the torch-autograd
gradient integrated by scipy's DOP853, the preconditioner M = J diag(eta) J^T from the autograd Jacobian, the
decoupled singular-value equations of the task-aligned case, and the deep linear network
f(x) = a^T W_L ... W_1 x with its chain-rule gradient and flow. A chapter's check through these functions alone
is ``kind="independent"``.
"""
from __future__ import annotations

import numpy as np
import torch
from scipy.integrate import solve_ivp

from ..numerics import checks


def _layers(A, W):
    A, W = checks.finite_array("A", A, ndim=2), checks.finite_array("W", W, ndim=2)
    if A.shape[1] != W.shape[0]:
        raise ValueError(f"A (c x h) and W (h x d) must share h, got {A.shape} and {W.shape}")
    return A, W


def torch_flow(A0, W0, X, Y, t, eta_a=1.0, eta_w=1.0, rtol=1e-12, atol=1e-12):
    """Independent reference: (A(t), W(t)) on the times t of the gradient flow dA/dt = -eta_a grad_A L,
    dW/dt = -eta_w grad_W L of L = ||X (A W)^T - Y||^2 / (2n), the gradient from torch autograd, by DOP853."""
    A0, W0 = _layers(A0, W0)
    c_, h_ = A0.shape
    d_ = W0.shape[1]
    Xt, Yt = torch.tensor(X), torch.tensor(Y)
    lr = torch.cat([torch.full((c_ * h_,), float(eta_a), dtype=torch.float64),
                    torch.full((h_ * d_,), float(eta_w), dtype=torch.float64)])

    def rhs(_, z):
        th = torch.tensor(z, requires_grad=True)
        a, w = th[: c_ * h_].reshape(c_, h_), th[c_ * h_:].reshape(h_, d_)
        loss = ((Xt @ (a @ w).T - Yt) ** 2).sum() / (2 * X.shape[0])
        (g,) = torch.autograd.grad(loss, th)
        return (-lr * g).numpy()

    sol = solve_ivp(rhs, (0.0, t[-1]), np.concatenate([A0.ravel(), W0.ravel()]), method="DOP853", t_eval=t,
                    rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"the reference integration failed: {sol.message}")
    z = sol.y.T
    return z[:, : c_ * h_].reshape(-1, c_, h_), z[:, c_ * h_:].reshape(-1, h_, d_)


def autograd_M_and_velocity(A, W, X, Y, eta_a=1.0, eta_w=1.0):
    """Independent reference: (M = J diag(eta) J^T, d vec(beta)/dt = J (-eta grad_theta L), vec-free
    grad_beta L (c x d)) at (A, W), with J the torch-autograd Jacobian of vec(beta) = vec(A W) (columns stacked)."""
    A, W = _layers(A, W)
    c_, h_ = A.shape
    d_ = W.shape[1]
    th = torch.tensor(np.concatenate([A.ravel(), W.ravel()]), requires_grad=True)

    def beta_vec(z):
        return (z[: c_ * h_].reshape(c_, h_) @ z[c_ * h_:].reshape(h_, d_)).T.reshape(-1)  # column stacking

    J = torch.autograd.functional.jacobian(beta_vec, th.detach()).numpy()
    eta = np.concatenate([np.full(c_ * h_, float(eta_a)), np.full(h_ * d_, float(eta_w))])
    b = beta_vec(th).reshape(d_, c_).T
    loss = ((torch.tensor(X) @ b.T - torch.tensor(Y)) ** 2).sum() / (2 * X.shape[0])
    (g,) = torch.autograd.grad(loss, th)
    bt = torch.tensor(A @ W, requires_grad=True)
    lb = ((torch.tensor(X) @ bt.T - torch.tensor(Y)) ** 2).sum() / (2 * X.shape[0])
    (gb,) = torch.autograd.grad(lb, bt)
    return (J * eta) @ J.T, J @ (-eta * g.numpy()), gb.numpy()


def autograd_M(A, W, eta_a=1.0, eta_w=1.0):
    """Independent reference: M = J diag(eta) J^T at (A, W) (:func:`autograd_M_and_velocity` without data)."""
    A, W = _layers(A, W)
    return autograd_M_and_velocity(A, W, np.zeros((1, W.shape[1])), np.zeros((1, A.shape[0])), eta_a, eta_w)[0]


def aligned_singular_values(delta, s_star, s0, t, eta_a=1.0, eta_w=1.0):
    """Independent reference: the decoupled singular values of the task-aligned whitened case,
    sigma_i' = -sqrt(delta^2 + 4 eta_a eta_w sigma_i^2) (sigma_i - sigma_i*), from sigma_i(0) = s0, by DOP853
    (rtol 1e-12); returns (len(t), len(s_star))."""
    s_star = checks.finite_array("s_star", s_star, ndim=1)
    return solve_ivp(lambda _, s: -np.sqrt(delta**2 + 4 * eta_a * eta_w * s**2) * (s - s_star), (0, t[-1]),
                     np.full(s_star.size, float(s0)), method="DOP853", t_eval=t, rtol=1e-12, atol=1e-14).y.T


def deep_unpack(z, L, d):
    """(a, [W_1, ..., W_L]) from the flat parameters z = [a, vec W_1, ..., vec W_L] of a deep network of width d."""
    return z[:d], [z[d + k * d * d: d + (k + 1) * d * d].reshape(d, d) for k in range(L)]


def deep_beta(z, L, d):
    """Independent reference: beta = W_1^T ... W_L^T a of the deep linear network f(x) = a^T W_L ... W_1 x (numpy
    or torch z)."""
    a, Ws = deep_unpack(z, L, d)
    b = a
    for W in reversed(Ws):
        b = W.T @ b
    return b


def deep_velocity(z, L, X, y):
    """Independent reference: -grad L of L = ||X beta - y||^2 / (2n) by the chain rule: with g = grad_beta L,
    P_l = a^T W_L ... W_{l+1}, R_l = W_{l-1} ... W_1, grad_{W_l} L = P_l^T g^T R_l^T and grad_a L = W_L ... W_1 g."""
    d_, n_ = X.shape[1], X.shape[0]
    a, Ws = deep_unpack(z, L, d_)
    R = [np.eye(d_)]
    for W in Ws:
        R.append(W @ R[-1])  # R[l] = W_l ... W_1 (R[0] = I)
    g = X.T @ (X @ (R[-1].T @ a) - y) / n_
    grads, P = [None] * L, a.copy()  # P = (a^T W_L ... W_{l+1})^T, built from the top
    for k in reversed(range(L)):
        grads[k] = -np.outer(P, R[k] @ g)
        P = Ws[k].T @ P
    return np.concatenate([-(R[-1] @ g)] + [G.ravel() for G in grads])


def deep_flow(z0, L, X, y, t):
    """Independent reference: the gradient flow of the deep network from z0 on the times t (DOP853, rtol 1e-11,
    atol 1e-13, the field :func:`deep_velocity`); rows are the flat parameters."""
    sol = solve_ivp(lambda _, z: deep_velocity(z, L, X, y), (0.0, t[-1]), z0, method="DOP853", t_eval=t,
                    rtol=1e-11, atol=1e-13)
    if not sol.success:
        raise RuntimeError(f"the reference integration failed: {sol.message}")
    return sol.y.T
