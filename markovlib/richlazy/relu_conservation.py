"""Part II, Sec. 5 of "Get rich quick" (Kunin et al., NeurIPS 2024): the checks of the conserved delta_k and of the
NTK of a two-layer piecewise-linear network, as the chapter ``grq_relu_rich`` runs them (Sec. 1 there).

- :func:`random_problems`: random problems (gamma, X, y, a, W), a few per leaky slope;
- :func:`autograd_errors`: the loss, gradients (eq. grq-eq-relu-grad) and NTK (Prop. grq-prop-5-ntk) of
  :mod:`markovlib.richlazy.relu_networks` against torch autograd and ``torch.func.jacrev``;
- :func:`step_errors`: the first-order identity a_k dL/da_k = w_k . grad_wk L and the one-step change of delta_k,
  lr^2 (eta_w eta_a^2 g_k^2 - eta_a eta_w^2 ||G_k||^2) (Prop. grq-prop-5-gd);
- :func:`gd_drift`: the drift of delta_k over a fixed time for halving step sizes (O(lr));
- :func:`flow_drift`: the drift of delta_k along the gradient flow by RK4 (Prop. grq-prop-5-delta).
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from . import relu_networks, relu_reference
from .minimal_model import conserved_delta

RATES = ((1.0, 1.0), (2.0, 0.5))  # the two (eta_a, eta_w) pairs of the checks


def random_problems(rng, gammas, n, d, h, per_gamma=3):
    """``per_gamma`` random problems per leaky slope in ``gammas``: X (n, d), y (n,), a (h,), W (h, d) standard
    normal, drawn from ``rng`` in that order. Returns a list of (gamma, X, y, a, W)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    n, d, h, per_gamma = (checks.positive_int(k, v)
                          for k, v in (("n", n), ("d", d), ("h", h), ("per_gamma", per_gamma)))
    gammas = [relu_networks.check_gamma(g) for g in gammas]
    out = []
    for gamma in gammas:
        for _ in range(per_gamma):
            X = rng.standard_normal((n, d))
            y = rng.standard_normal(n)
            a = rng.standard_normal(h)
            W = rng.standard_normal((h, d))
            out.append((gamma, X, y, a, W))
    return out


def autograd_errors(problems):
    """(largest relative error of the loss and gradients, largest relative error of the NTK) of ``relu_networks``
    against :func:`relu_reference.torch_loss_and_grads` and :func:`relu_reference.torch_ntk`, over ``problems`` and
    the learning-rate pairs :data:`RATES`."""
    if not problems:
        raise ValueError("problems must be a non-empty list of (gamma, X, y, a, W)")
    grad_err, ntk_err = 0.0, 0.0
    for gamma, X, y, a, W in problems:
        loss_ref, ga_ref, gW_ref = relu_reference.torch_loss_and_grads(X, y, a, W, gamma)
        ga, gW, _ = relu_networks.gradients(X, y, a, W, gamma)
        scale = 1.0 + max(np.max(np.abs(ga_ref)), np.max(np.abs(gW_ref)))
        grad_err = max(grad_err, abs(float(relu_networks.mse(X, y, a, W, gamma)) - loss_ref) / (1 + loss_ref),
                       np.max(np.abs(ga - ga_ref)) / scale, np.max(np.abs(gW - gW_ref)) / scale)
        for eta_a, eta_w in RATES:
            K_ref = relu_reference.torch_ntk(X, a, W, gamma, eta_a, eta_w)
            K = relu_networks.ntk(X, a, W, gamma, eta_a, eta_w)
            ntk_err = max(ntk_err, np.max(np.abs(K - K_ref)) / np.max(np.abs(K_ref)))
    return float(grad_err), float(ntk_err)


def step_errors(problems, lr=0.05):
    """(first, step): the largest relative |a_k dL/da_k - w_k . grad_wk L| (autograd gradients; it vanishes by the
    homogeneity sigma(z) = sigma'(z) z), and the largest relative error of the change of delta_k over one GD step of
    ``relu_networks.gradient_descent`` (and of ``relu_networks.delta_step_change``) against the formula of
    Prop. grq-prop-5-gd, over ``problems`` and :data:`RATES`."""
    if not problems or not lr > 0:
        raise ValueError(f"problems must be non-empty and lr positive, got {len(problems)} problems and lr {lr!r}")
    first_order, step_err = 0.0, 0.0
    for gamma, X, y, a, W in problems:
        ga_ref, gW_ref = relu_reference.torch_loss_and_grads(X, y, a, W, gamma)[1:]
        terms = np.stack([a * ga_ref, np.sum(W * gW_ref, axis=1)])
        first_order = max(first_order, np.max(np.abs(terms[0] - terms[1]) / (np.abs(terms).sum(0) + 1e-300)))
        for eta_a, eta_w in RATES:
            out = relu_networks.gradient_descent(X, y, a, W, lr, [0, 1], gamma=gamma, eta_a=eta_a, eta_w=eta_w)
            change = conserved_delta(out["a"][1], out["W"][1], eta_a, eta_w) - conserved_delta(a, W, eta_a, eta_w)
            pred = lr**2 * (eta_w * eta_a**2 * ga_ref**2 - eta_a * eta_w**2 * np.sum(gW_ref**2, axis=1))
            scale = np.max(np.abs(conserved_delta(a, W, eta_a, eta_w))) + np.max(np.abs(pred))
            step_err = max(step_err, np.max(np.abs(change - pred)) / np.max(np.abs(pred)),
                           np.max(np.abs(relu_networks.delta_step_change(X, y, a, W, lr, gamma, eta_a, eta_w) - pred))
                           / scale)
    return float(first_order), float(step_err)


def gd_drift(problems, lrs, time, shrink=0.5):
    """The drift max_k |delta_k(T) - delta_k(0)| of gradient descent over the time ``time`` (round(time / lr) steps)
    for each step size in ``lrs``, from the problems' (a, W) scaled by ``shrink`` (a rich start). Returns
    (rows [(gamma, [drift per lr])], ratios of successive drifts)."""
    lrs = checks.finite_array("lrs", lrs, ndim=1)
    if lrs.size < 2 or np.any(lrs <= 0) or not time > 0:
        raise ValueError(f"lrs must hold at least two positive steps and time be positive, got {lrs.tolist()}, "
                         f"{time!r}")
    rows, ratios = [], []
    for gamma, X, y, a, W in problems:
        a_s, W_s = shrink * a, shrink * W
        drifts = []
        for lr in lrs:
            out = relu_networks.gradient_descent(X, y, a_s, W_s, float(lr), [int(round(time / lr))], gamma=gamma)
            change = conserved_delta(out["a"][-1], out["W"][-1]) - conserved_delta(a_s, W_s)
            drifts.append(float(np.max(np.abs(change))))
        ratios += [d1 / d2 for d1, d2 in zip(drifts, drifts[1:])]
        rows.append((gamma, drifts))
    return rows, ratios


def flow_drift(problems, time, m, shrink=0.5):
    """The drift of delta_k along the gradient flow (:func:`relu_reference.rk4`, ``m`` and ``4 m`` steps to
    ``time``) from the problems' (a, W) scaled by ``shrink``. Returns (largest drift at 4 m steps, whether 4 times
    the steps divide each drift by more than 3 or leave it below 1e-10, the smallest such factor)."""
    m = checks.positive_int("m", m)
    drift, converges, factors = 0.0, True, []
    for gamma, X, y, a, W in problems:
        a_s, W_s = shrink * a, shrink * W
        drift_m = []
        for steps in (m, 4 * m):
            th = relu_reference.rk4(np.concatenate([a_s, W_s.ravel()]), X, y, gamma, time, steps)
            drift_m.append(np.max(np.abs(conserved_delta(th[:a.size], th[a.size:].reshape(W.shape))
                                         - conserved_delta(a_s, W_s))))
        converges &= bool(drift_m[1] < drift_m[0] / 3 or drift_m[1] < 1e-10)
        factors.append(drift_m[0] / max(drift_m[1], 1e-300))
        drift = max(drift, drift_m[1])
    return float(drift), converges, float(min(factors))
