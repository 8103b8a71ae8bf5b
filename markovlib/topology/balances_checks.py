"""The steps of the chapter ``topo_balances`` (Nurisso et al., NeurIPS 2024, Eq. (10)-(12) and Sec. 8), one call
each, over the chapter's networks (each drawn by ``balance_drift.problem`` from its own generator [seed, d, s]):

* :func:`autograd_mse_grads` -- independent reference: torch autograd of the MSE of f(x) = a . relu(W1 x);
* :func:`symmetry_checks` -- rescalings and permutations keep f, <grad c_k, grad L> = 0 (Eq. topo-eq-noether) and
  ``shallow_relu.loss_grad`` against autograd;
* :func:`flow_drifts` -- the largest drift of c_k along the fixed-step RK4 flow at each step count;
* :func:`optimizer_drifts` -- the drift of c_k over a fixed time under GD, SGD and Adam at each step size, and the
  largest deviation of a GD/SGD step from c_k' - c_k = h^2 (||g_w||^2 - ||g_a||^2);
* :func:`slope_stats` -- per-network log-log slopes of those drifts and their summaries;
* :func:`decay_check` -- the RK4 flow with weight decay against c_k(0) exp(-2 lambda t).
"""
from __future__ import annotations

import numpy as np
import torch

from ..numerics import checks
from . import balance_drift, shallow_relu


def _networks(networks):
    networks = [(checks.positive_int("d", d), checks.nonnegative_int("s", s)) for d, s in networks]
    if not networks:
        raise ValueError("networks must be a non-empty list of (d, s)")
    return networks


def autograd_mse_grads(X, y, W1, a):
    """Independent reference: (grad_W1 L, grad_a L) of L = mean_i (a . relu(W1 x_i) - y_i)^2 / 2 by torch autograd."""
    t1, ta = torch.tensor(np.asarray(W1, dtype=float), requires_grad=True), torch.tensor(np.asarray(a, dtype=float),
                                                                                       requires_grad=True)
    L = 0.5 * ((torch.relu(torch.tensor(np.asarray(X, dtype=float)) @ t1.T) @ ta - torch.tensor(y)) ** 2).mean()
    return tuple(g.numpy() for g in torch.autograd.grad(L, (t1, ta)))


def symmetry_checks(networks, seed, width, n_data):
    """Over the networks (d, s): (largest relative change of f under a random rescaling s_k in [e^-2, e^2] and a
    random permutation of the neurons (drawn after the network from its generator), the largest
    |w_k . grad_w L - a_k . grad_a L| by autograd, the largest |shallow_relu gradient - autograd|)."""
    sym_err, noether, grad_err = 0.0, 0.0, 0.0
    for d, s in _networks(networks):
        r_ = np.random.default_rng([seed, d, s])
        X, y, W1, a = balance_drift.problem(r_, d, width, n_data)
        f0 = np.maximum(X @ W1.T, 0) @ a
        sc = np.exp(r_.uniform(-2, 2, size=width))
        perm = r_.permutation(width)
        f1 = np.maximum(X @ (W1 * sc[:, None])[perm].T, 0) @ (a / sc)[perm]
        sym_err = max(sym_err, np.abs(f1 - f0).max() / np.abs(f0).max())
        g1, ga = autograd_mse_grads(X, y, W1, a)
        noether = max(noether, np.abs((W1 * g1).sum(1) - a * ga).max())
        _, n1, na = shallow_relu.loss_grad(W1, a, X, y)
        grad_err = max(grad_err, np.abs(n1 - g1).max(), np.abs(na - ga).max())
    return float(sym_err), float(noether), float(grad_err)


def flow_drifts(networks, seed, width, n_data, t, flow_steps) -> np.ndarray:
    """Per step count of ``flow_steps``: the largest |c_k(t) - c_k(0)| over every neuron of every network along
    ``balance_drift.rk4_balances`` over time ``t``."""
    out = np.zeros(len(flow_steps))
    for d, s in _networks(networks):
        X, y, W1, a = balance_drift.problem(np.random.default_rng([seed, d, s]), d, width, n_data)
        c0 = (W1**2).sum(1) - a**2
        for i, n_steps in enumerate(flow_steps):
            out[i] = max(out[i], np.abs(balance_drift.rk4_balances(W1, a, X, y, t, n_steps) - c0).max())
    return out


def optimizer_drifts(networks, seed, width, n_data, lrs, t, batch):
    """(optimizer -> drift array (len(lrs), len(networks)) of ``balance_drift.optimizer_drift`` over time ``t``, the
    largest deviation of a GD/SGD step from the one-step identity). SGD's minibatches come from the generator
    [seed, d, s, 7], the same for every step size."""
    networks = _networks(networks)
    drifts = {k: np.zeros((len(lrs), len(networks))) for k in balance_drift.OPTIMIZERS}
    ident = 0.0
    for j, (d, s) in enumerate(networks):
        X, y, W1, a = balance_drift.problem(np.random.default_rng([seed, d, s]), d, width, n_data)
        for i, h in enumerate(lrs):
            for kind in drifts:
                dr, idt = balance_drift.optimizer_drift(W1, a, X, y, h=h, t=t, kind=kind, batch=batch,
                                                        rng=np.random.default_rng([seed, d, s, 7]))
                drifts[kind][i, j] = dr
                ident = max(ident, idt)
    return drifts, float(ident)


def slope_stats(drifts, lrs) -> dict:
    """Per optimizer the per-network slopes of log drift against log h (``slopes``); GD's smallest and largest
    (``gd_lo``, ``gd_hi``), SGD's mean with the half width of its 95 % t interval (``sgd_mean``, ``sgd_half``), the
    smallest Adam / GD drift ratio over networks and step sizes (``adam_ratio``), Adam's mean slope, and the printed
    ``text``."""
    from scipy import stats

    if len(lrs) < 2:
        raise ValueError(f"lrs must hold at least two step sizes, got {lrs!r}")
    from ..book.formatting import fixed

    slopes = {k: np.polyfit(np.log(lrs), np.log(v), 1)[0] for k, v in drifts.items()}
    n = len(slopes["sgd"])
    out = dict(slopes=slopes, gd_lo=float(slopes["gd"].min()), gd_hi=float(slopes["gd"].max()),
               sgd_mean=float(slopes["sgd"].mean()),
               sgd_half=float(stats.t.ppf(0.975, n - 1) * slopes["sgd"].std(ddof=1) / np.sqrt(n)),
               adam_ratio=float(np.min(drifts["adam"] / drifts["gd"])), adam_mean=float(slopes["adam"].mean()))
    m, hw = out["sgd_mean"], out["sgd_half"]
    out["text"] = (f"  GD: per-network slopes of log drift vs log h from {fixed(out['gd_lo'], 2)} to "
                   f"{fixed(out['gd_hi'], 2)}\n SGD: mean slope {fixed(m, 2)}, 95 % t interval [{fixed(m - hw, 2)}, "
                   f"{fixed(m + hw, 2)}] (per network from {fixed(slopes['sgd'].min(), 2)} to "
                   f"{fixed(slopes['sgd'].max(), 2)})\nAdam: drift / GD drift at least "
                   f"{fixed(np.floor(out['adam_ratio']), 0)} (every network, every h); mean slope "
                   f"{fixed(out['adam_mean'], 2)}")
    return out


def decay_check(seed, d, width, n_data, t, n_steps, weight_decay):
    """The first network of dimension ``d`` (generator [seed, d, 0]) under the RK4 flow with weight decay: (times,
    c_k at every step including t = 0, largest |c_k(t) - c_k(0) exp(-2 lambda t)|)."""
    X, y, W1, a = balance_drift.problem(np.random.default_rng([seed, d, 0]), d, width, n_data)
    c_wd = np.vstack([(W1**2).sum(1) - a**2,
                      balance_drift.rk4_balances(W1, a, X, y, t, n_steps, weight_decay=weight_decay)])
    ts = np.linspace(0, t, n_steps + 1)
    return ts, c_wd, float(np.abs(c_wd - c_wd[:1] * np.exp(-2 * weight_decay * ts)[:, None]).max())

