"""How integrators and optimizers keep or break the neuron balances c_k = ||w_k||^2 - ||a_k||^2 of a shallow ReLU
network f(x) = a . relu(W1 x) (Nurisso et al., NeurIPS 2024, Eq. (10)-(12) and Sec. 8), in numpy.

* :func:`teacher` and :func:`problem` -- the test problem of the chapter ``topo_balances``: Gaussian inputs, a
  fixed ReLU teacher, weights U(-1, 1);
* :func:`rk4_path` -- the classical fixed-step RK4 of any vector field on rows of parameters (an independent
  integrator of a flow, also the closing chapter's for the ReLU network);
* :func:`rk4_balances` -- the gradient flow theta' = -grad L(theta) - lambda theta integrated by the classical
  fixed-step RK4 (the vector field jumps at the ReLU kinks, so no adaptive step), with the balances after every
  step. The exact flow keeps c_k (lambda = 0) or gives c_k(t) = c_k(0) exp(-2 lambda t);
* :func:`optimizer_drift` -- one run of GD, SGD or Adam over a fixed time t = n h: the drift max_k |c_k(t) -
  c_k(0)| and, for GD and SGD, the largest deviation from the one-step identity
  c_k' - c_k = h^2 (||g_w||^2 - ||g_a||^2) (expanding the squares; the first-order term is the one the flow
  cancels).

Every public function validates its arguments and raises ValueError naming the argument.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..numerics import checks
from . import invariant_set, shallow_relu

__all__ = ["teacher", "problem", "rk4_path", "rk4_balances", "optimizer_drift", "OPTIMIZERS"]

OPTIMIZERS = ("gd", "sgd", "adam")


def _int(name, value, minimum):
    return checks.positive_int(name, value) if minimum == 1 else checks.nonnegative_int(name, value)


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite real > 0, got {value!r}")
    return checks.positive_real(name, value)


def teacher(X) -> np.ndarray:
    """The fixed ReLU teacher y = -relu(x_1) + relu(x_d) - relu(x_1 + ... + x_d) / 2 of each row of X (n, d)."""
    X = checks.finite_array("X", X, ndim=(2,))
    if X.shape[1] < 1:
        raise ValueError(f"X must have at least one column, got shape {X.shape}")
    return -np.maximum(X[:, 0], 0) + np.maximum(X[:, -1], 0) - 0.5 * np.maximum(X.sum(1), 0)


def problem(rng, d, width, n_data):
    """(X, y, W1, a) drawn from ``rng`` in this order: X (n_data, d) standard Gaussian, y = teacher(X), W1
    (width, d) and a (width,) uniform on (-1, 1). The generator is advanced, so later draws continue it."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    d, width, n_data = _int("d", d, 1), _int("width", width, 1), _int("n_data", n_data, 1)
    X = rng.normal(size=(n_data, d))
    return X, teacher(X), rng.uniform(-1, 1, size=(width, d)), rng.uniform(-1, 1, size=width)


def rk4_path(field, theta0, t_end, dt) -> np.ndarray:
    """Independent reference: the classical fixed-step RK4 of theta' = field(theta) from ``theta0`` (rows are
    initializations) to ``t_end`` in round(t_end / dt) equal steps (at least one); every iterate, shape
    (steps + 1, rows, dim). No adaptive step: a ReLU network's field jumps at the kinks, where adaptive solvers
    stall."""
    t_end, dt = _positive("t_end", t_end), _positive("dt", dt)
    n = max(1, int(round(t_end / dt)))
    dt = t_end / n
    y = np.atleast_2d(checks.finite_array("theta0", theta0)).astype(float).copy()
    out = [y.copy()]
    for _ in range(n):
        k1 = field(y)
        k2 = field(y + dt / 2 * k1)
        k3 = field(y + dt / 2 * k2)
        k4 = field(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(y.copy())
    return np.stack(out)


def rk4_balances(W1, a, X, y, t, n_steps, weight_decay=0.0) -> np.ndarray:
    """The balances c_k = ||w_k||^2 - a_k^2 after each of ``n_steps`` classical RK4 steps of size t / n_steps of
    the flow theta' = -grad L(theta) - weight_decay theta, L the MSE of :mod:`shallow_relu`; shape
    (n_steps, width). Away from the kinks the drift of c_k is O(dt^4), across one O(dt)."""
    W1 = checks.finite_array("W1", W1, ndim=(2,))
    a = checks.finite_array("a", a, ndim=(1,))
    if a.shape[0] != W1.shape[0]:
        raise ValueError(f"a must have one entry per row of W1 ({W1.shape[0]}), got {a.shape[0]}")
    t, n_steps = _positive("t", t), _int("n_steps", n_steps, 1)
    if isinstance(weight_decay, bool) or not np.isfinite(weight_decay) or weight_decay < 0:
        raise ValueError(f"weight_decay must be a finite real >= 0, got {weight_decay!r}")
    width, d = W1.shape

    def rhs(th):
        _, gW, gA = shallow_relu.loss_grad(th[: width * d].reshape(width, d), th[width * d:], X, y)
        flow = -np.concatenate([gW.ravel(), gA])
        return flow - weight_decay * th if weight_decay else flow

    path = rk4_path(lambda th: rhs(th[0])[None], np.concatenate([W1.ravel(), a]), t, t / n_steps)[1:, 0]
    return (path[:, : width * d].reshape(n_steps, width, d) ** 2).sum(2) - path[:, width * d:] ** 2


def optimizer_drift(W1, a, X, y, *, h, t, kind, rng=None, batch=None) -> tuple[float, float]:
    """Run ``kind`` ("gd", "sgd" or "adam") with step ``h`` for round(t / h) steps on the MSE of f(x) = a . relu(W1 x)
    and return (max_k |c_k(t) - c_k(0)|, the largest deviation of a GD/SGD step from c_k' - c_k = h^2 (||g_w||^2 -
    ||g_a||^2); 0 for Adam). SGD draws ``batch`` points without replacement from ``rng`` at each step; Adam is the
    standard one (beta = (0.9, 0.999), eps = 1e-8, bias-corrected) on the full batch."""
    W1 = checks.finite_array("W1", W1, ndim=(2,))
    a = checks.finite_array("a", a, ndim=(1,))
    h, t = _positive("h", h), _positive("t", t)
    if kind not in OPTIMIZERS:
        raise ValueError(f"kind must be one of {list(OPTIMIZERS)}, got {kind!r}")
    if kind == "sgd":
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator for SGD, got {type(rng).__name__}")
        batch = _int("batch", batch, 1)
        if batch > len(y):
            raise ValueError(f"batch must be at most the number of points {len(y)}, got {batch}")
    n = int(round(t / h))
    c0 = invariant_set.neuron_balances(W1, a)
    m, v = np.zeros(W1.size + a.size), np.zeros(W1.size + a.size)
    ident = 0.0
    for i in range(n):
        idx = rng.choice(len(y), batch, replace=False) if kind == "sgd" else slice(None)
        _, gW, gA = shallow_relu.loss_grad(W1, a, X[idx], y[idx])
        if kind == "adam":
            g = np.concatenate([gW.ravel(), gA])
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g**2
            step = (m / (1 - 0.9 ** (i + 1))) / (np.sqrt(v / (1 - 0.999 ** (i + 1))) + 1e-8)
            gW, gA = step[: W1.size].reshape(W1.shape), step[W1.size:]
        c_before = invariant_set.neuron_balances(W1, a)
        W1, a = W1 - h * gW, a - h * gA
        if kind in ("gd", "sgd"):
            pred = h**2 * ((gW**2).sum(1) - gA**2)
            ident = max(ident, np.abs(invariant_set.neuron_balances(W1, a) - c_before - pred).max())
    return float(np.abs(invariant_set.neuron_balances(W1, a) - c0).max()), float(ident)
