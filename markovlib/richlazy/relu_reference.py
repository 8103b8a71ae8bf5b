"""Part II, Sec. 5 and App. C.1 of "Get rich quick" (Kunin et al., NeurIPS 2024): independent references for the
chapter ``grq_relu_rich``, written without any markovlib function they check.

Independent reference: each function re-derives a quantity of :mod:`markovlib.richlazy.relu_networks` or
:mod:`markovlib.richlazy.relu_surface` by another route (torch autograd, ``torch.func.jacrev``, a fixed-step RK4 on
a right-hand side written out again), so that a check comparing the two has no markovlib code under test on the
reference's path.

- :func:`torch_loss_and_grads`: the loss L = (1/n) sum_i (f(x_i) - y_i)^2 of f(x) = sum_k a_k sigma(w_k^T x),
  sigma(z) = max(z, gamma z), and its gradients by autograd (eq. grq-eq-relu-grad);
- :func:`torch_ntk`: the NTK K = J diag(eta) J^T (Prop. grq-prop-5-ntk) with J by ``torch.func.jacrev``;
- :func:`flow_rhs`, :func:`rk4`: the gradient flow of the same loss, integrated by m fixed RK4 steps;
- :func:`torch_mlp`: a deep ReLU network's output and input gradient by autograd (App. C.1);
- :func:`torch_velocities`: d/dt of (bhat_k, mu_k, beta_k) along the flow (App. C.2), for ``grq_relu_dynamics``.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks


def _problem(X, y, a, W, gamma):
    X = checks.finite_array("X", X, ndim=2)
    a, W = checks.finite_array("a", a, ndim=1), checks.finite_array("W", W, ndim=2)
    if W.shape != (a.size, X.shape[1]) or (y is not None and np.shape(y) != (X.shape[0],)):
        raise ValueError(f"X must be (n, d), y (n,), a (h,) and W (h, d), got {X.shape}, {np.shape(y)}, {a.shape}, "
                         f"{W.shape}")
    if not 0.0 <= float(gamma) <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma!r}")
    return X, a, W, float(gamma)


def torch_loss_and_grads(X, y, a, W, gamma):
    """Independent reference (torch autograd, no markovlib): the loss (1/n) sum_i (f(x_i) - y_i)^2 with
    f(x) = sum_k a_k max(w_k^T x, gamma w_k^T x), and its gradients (dL/da (h,), dL/dW (h, d)); float64."""
    import torch

    X, a, W, gamma = _problem(X, y, a, W, gamma)
    Xt, yt = torch.tensor(X, dtype=torch.float64), torch.tensor(np.asarray(y, dtype=float), dtype=torch.float64)
    at = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    Wt = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    z = Xt @ Wt.T
    loss = torch.mean((torch.maximum(z, gamma * z) @ at - yt) ** 2)
    ga, gW = torch.autograd.grad(loss, (at, Wt))
    return loss.item(), ga.numpy(), gW.numpy()


def torch_ntk(X, a, W, gamma, eta_a, eta_w):
    """Independent reference: the NTK as the Jacobian Gram matrix J diag(eta) J^T (Prop. grq-prop-5-ntk), J the
    Jacobian of the outputs (f(x_i))_i in (a, W) by ``torch.func.jacrev``; returns the (n, n) kernel."""
    import torch

    X, a, W, gamma = _problem(X, None, a, W, gamma)
    Xt = torch.tensor(X, dtype=torch.float64)

    def f(at, Wt):
        z = Xt @ Wt.T
        return torch.maximum(z, gamma * z) @ at

    Ja, JW = torch.func.jacrev(f, argnums=(0, 1))(torch.tensor(a, dtype=torch.float64),
                                                  torch.tensor(W, dtype=torch.float64))
    Ja, JW = Ja.numpy(), JW.numpy().reshape(X.shape[0], -1)
    return eta_a * Ja @ Ja.T + eta_w * JW @ JW.T


def flow_rhs(theta, X, y, gamma):
    """Independent reference (no markovlib): the gradient-flow right-hand side -grad L in theta = (a, vec W)."""
    hh = theta.size // (X.shape[1] + 1)
    aa, WW = theta[:hh], theta[hh:].reshape(hh, X.shape[1])
    Z = X @ WW.T
    S, Sp = np.where(Z > 0, Z, gamma * Z), np.where(Z > 0, 1.0, gamma)
    r = S @ aa - y
    return -np.concatenate([2 * S.T @ r / len(y), (2 * ((r[:, None] * Sp) * aa).T @ X / len(y)).ravel()])


def rk4(theta, X, y, gamma, t_end, m):
    """Independent reference: m fixed RK4 steps of the flow :func:`flow_rhs` from theta = (a, vec W) to time
    ``t_end``; returns theta at ``t_end``."""
    theta = checks.finite_array("theta", theta, ndim=1)
    m = checks.positive_int("m", m)
    if not t_end > 0:
        raise ValueError(f"t_end must be positive, got {t_end!r}")
    hs = t_end / m
    for _ in range(m):
        k1 = flow_rhs(theta, X, y, gamma)
        k2 = flow_rhs(theta + hs / 2 * k1, X, y, gamma)
        k3 = flow_rhs(theta + hs / 2 * k2, X, y, gamma)
        k4 = flow_rhs(theta + hs * k3, X, y, gamma)
        theta = theta + hs / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return theta


def torch_mlp(X, layers):
    """Independent reference (torch): a deep ReLU network's output f(X) and its input gradient by autograd, for the
    layers [(W_1, c_1), ..., (W_{L+1}, c_{L+1})] of App. C.1; ``X`` is (m, d). Returns (f (m,), grad (m, d))."""
    import torch

    X = checks.finite_array("X", X, ndim=2)
    if not layers or X.shape[1] != np.shape(layers[0][0])[1]:
        raise ValueError(f"layers must be a non-empty list of (W, c) whose first W has {X.shape[1]} columns")
    xt = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    z = xt
    for W_, c_ in layers[:-1]:
        z = torch.relu(z @ torch.tensor(W_, dtype=torch.float64).T + torch.tensor(c_, dtype=torch.float64))
    W_, c_ = layers[-1]
    out = (z @ torch.tensor(W_, dtype=torch.float64).T + torch.tensor(c_, dtype=torch.float64))[:, 0]
    (grad,) = torch.autograd.grad(out.sum(), xt)
    return out.detach().numpy(), grad.numpy()


def torch_velocities(X, y, a, W, gamma, eta_a, eta_w):
    """Independent reference (no markovlib): d/dt of (bhat_k = w_k / ||w_k||, mu_k = a_k ||w_k||, beta_k = a_k w_k)
    along the gradient flow a' = -eta_a dL/da, W' = -eta_w dL/dW of L = (1/n) sum_i (f(x_i) - y_i)^2 (App. C.2), by
    torch autograd of its own loss and a Jacobian-vector product of the parameter velocity. Returns [(h, d), (h,),
    (h, d)]."""
    import torch

    X, a, W, gamma = _problem(X, y, a, W, gamma)
    if not (eta_a > 0 and eta_w > 0):
        raise ValueError(f"eta_a and eta_w must be positive, got {eta_a!r}, {eta_w!r}")
    Xt, yt = torch.tensor(X, dtype=torch.float64), torch.tensor(np.asarray(y, dtype=float), dtype=torch.float64)
    at = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    Wt = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    Z = Xt @ Wt.T
    loss = torch.mean((torch.where(Z > 0, Z, gamma * Z) @ at - yt) ** 2)
    ga, gW = torch.autograd.grad(loss, (at, Wt))

    def coords(a_, W_):
        nw = torch.linalg.norm(W_, dim=1)
        return W_ / nw[:, None], a_ * nw, a_[:, None] * W_

    _, tangents = torch.func.jvp(coords, (at.detach(), Wt.detach()), (-eta_a * ga, -eta_w * gW))
    return [t.numpy() for t in tangents]
