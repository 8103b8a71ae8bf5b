"""Independent references of the closing chapter (``book/closing``): the quantities its checks compare the package's
problems (:mod:`markovlib.beyond.drift_problems`) and optimizers with, written out by a route that calls none of the
functions they check: the energy E(e, w) of Lemma 1 ("Local to Global") in numpy and in torch, the three losses
written out (finite differences of them check the package's gradients), and scipy's DOP853 on a gradient field with
optional weight decay. The fixed-step RK4 of the ReLU network's flow is ``topology.balance_drift.rk4_path``.
"""
from __future__ import annotations

import numpy as np
import torch

from ..numerics import checks


def energy(th):
    """Independent reference: E(e, w) = e^2 - w^2 - sign(w) log|w| of Lemma 1, per row (e, w) of ``th``."""
    th = np.atleast_2d(checks.finite_array("th", th))
    if th.shape[1] != 2:
        raise ValueError(f"th must have rows (e, w), got shape {th.shape}")
    e, w = th[:, 0], th[:, 1]
    with np.errstate(divide="ignore"):
        return e**2 - w**2 - np.sign(w) * np.log(np.abs(w))


def energy_torch(t):
    """Independent reference: E(e, w) of Lemma 1 in torch, for autograd (``t`` a tensor (e, w))."""
    if not isinstance(t, torch.Tensor) or t.shape != (2,):
        raise ValueError("t must be a torch tensor (e, w)")
    return t[0] ** 2 - t[1] ** 2 - torch.sign(t[1]) * torch.log(torch.abs(t[1]))


def loss(problem, t):
    """Independent reference: the loss of one of the closing chapter's problems at the parameter vector ``t``, written
    out: Part I the reduced loss of ``markov.canonical`` on the problem's chain, Part II |X a w - y|^2 / 2n, Part III
    the mean of (a . relu(W x) - y)^2 / 2."""
    from ..markov import canonical

    t = checks.finite_array("t", t, ndim=(1,))
    law = getattr(problem, "law", None)
    if law == "I":
        return float(canonical.loss(t[0], t[1], problem.p, problem.q))
    if law == "II":
        return 0.5 * np.mean((problem.X @ (t[0] * t[1:]) - problem.y) ** 2)
    if law == "III":
        W, a = problem.unpack(t[None, :])
        return 0.5 * np.mean((np.maximum(problem.X @ W[0].T, 0) @ a[0] - problem.y) ** 2)
    raise ValueError(f"problem must be one of drift_problems' three problems, got {problem!r}")


def integrate(gradf, th0, t_end, lam=0.0, t_eval=None):
    """Independent reference: scipy's DOP853 (rtol 1e-12, atol 1e-14) on theta' = -grad L(theta) - lam theta from
    the row ``th0`` to ``t_end`` (dense output unless ``t_eval`` is given); ``gradf`` takes rows."""
    from scipy.integrate import solve_ivp

    t_end = checks.positive_real("t_end", t_end)
    th0 = checks.finite_array("th0", th0, ndim=(1,))
    return solve_ivp(lambda t, y: -gradf(y[None, :])[0] - lam * y, (0.0, t_end), th0, method="DOP853", rtol=1e-12,
                     atol=1e-14, t_eval=t_eval, dense_output=t_eval is None)
