"""The full binary model on the unigram plateau: fast and slow variables, and the drift SGD gives the slow ones
(book/_drafts/sgd_drift_law.md, Proposition sgd-drift (ii); numpy side in :mod:`markovlib.transformer.sgd_drift`).

With weight tying the readout is the embedding vector e_vec, so at e_vec = 0 every logit equals the bias b and the
gradient of every other weight vanishes. The point phi* = (b*, e_vec = 0), b* = log(pi1/pi0), is a fixed point of the
mean dynamics of the fast variables phi = (b, e_vec) whatever the other ("slow") weights are. Around it, exactly:

    J = pi0 pi1 <(1, z_n)(1, z_n)^T>_n  +  [0 ; S + S^T],   S = <sum_{i<=n} E[r_n x_i] A_{n,i}>_n,
    Sigma_B = pi0 pi1 / (B N^2) sum_{n,n'} lam^{|n - n'|} (1, z_n)(1, z_n')^T,

where z_n is the output stream at e_vec = 0 (positional only), A_{n,i} = dz_n/de_vec for the input with x_i = 1
alone (dz_n/de_vec is linear in the symbols at e_vec = 0), E[r_n x_i] = -pi0 pi1 lam^{n+1-i}, lam = 1 - p - q, and
<.>_n the mean over the N predicted positions. (For the canonical model J_ee = 2 g'(0)(1 + 2w|w|): the curvature that
keeps e at 0 is what the saddle's w = -1/sqrt 2 switches off.)

The fast variables fluctuate with the covariance C of :func:`markovlib.transformer.sgd_drift.floor_covariance`; a
slow weight theta_k moves on average by  -lr_eff (1/2) sum_ab C_ab d^2 g_k / dphi_a dphi_b = -lr_eff d/dtheta_k
(1/2) tr(J C)  per step (C held fixed; the first-order terms vanish because phi* is a fixed point for every theta).
:func:`slow_velocity` computes it by one backward pass through J; :func:`integrate_plateau` follows the averaged slow
flow until the fast fixed point loses its stability (the escape).
"""
from __future__ import annotations

import copy
import math

import numpy as np
import torch
from torch.func import functional_call, jacfwd

from ..markov.energy import energy
from ..numerics import checks
from .sgd_drift import floor_covariance, momentum_factor

FAST = ("bias", "embedding")
__all__ = ["float64_copy", "fast_point", "fast_coefficients", "projection_w", "slow_velocity", "integrate_plateau"]


def float64_copy(model):
    """A float64 deep copy of a binary :class:`~markovlib.transformer.model.MarkovTransformer` using the reference
    attention (torch's fused softmax attention has no forward-mode derivative)."""
    if not getattr(model, "binary", False):
        raise ValueError("model must be the binary MarkovTransformer (n_states=None)")
    m = copy.deepcopy(model).to(torch.float64)
    m.reference_impl = True
    return m


def fast_point(p, q, d):
    """phi* = (b*, 0, ..., 0) with b* = log(pi1/pi0) = log(p/q): the fast fixed point."""
    p, q = checks.probability("p", p), checks.probability("q", q)
    return torch.cat([torch.tensor([math.log(p / q)], dtype=torch.float64), torch.zeros(d, dtype=torch.float64)])


def _slow(model):
    return {k: v.detach().clone() for k, v in model.named_parameters() if k not in FAST}


def fast_coefficients(model, p, q, *, batch=16, slow=None):
    """(J, Sigma_B), 9 x 9 for d = 8, of the fast variables (b, e_vec) at phi* (module docstring); exact, no
    sampling; differentiable in the slow weights ``slow`` (a dict name -> tensor, default the model's own).
    ``model`` from :func:`float64_copy`; N = model.max_len predicted positions per sequence of N + 1 symbols."""
    p, q = checks.probability("p", p), checks.probability("q", q)
    B = checks.positive_int("batch", batch)
    slow = _slow(model) if slow is None else slow
    N, d = model.max_len, model.d
    v, lam = p * q / (p + q) ** 2, 1.0 - p - q
    X1 = torch.eye(N, dtype=torch.long)  # row i: the input with x_i = 1 alone

    def z_of(e):
        pr = dict(slow)
        pr["embedding"], pr["bias"] = e, torch.zeros((), dtype=torch.float64)
        return functional_call(model, pr, (X1,), {"return_hidden": True})[1]["z"]

    e0 = torch.zeros(d, dtype=torch.float64)
    z0 = z_of(e0)[0]  # (N, d): x-independent at e_vec = 0
    A = jacfwd(z_of)(e0)  # (i, n, d, d)
    k = torch.arange(N, dtype=torch.float64)
    gap = k[None, :] + 1 - k[:, None]  # n + 1 - i, indexed (i, n)
    weight = torch.where(gap >= 1, -v * lam ** gap.clamp(min=1), torch.zeros_like(gap))
    S = torch.einsum("in,inab->ab", weight, A) / N
    Z = torch.cat([torch.ones(N, 1, dtype=torch.float64), z0], dim=1)
    pad = torch.zeros(d + 1, d + 1, dtype=torch.float64)
    pad[1:, 1:] = S + S.T
    J = v * Z.T @ Z / N + pad
    R = lam ** (k[:, None] - k[None, :]).abs()
    Sigma = v * Z.T @ R @ Z / (B * N * N)
    return J, Sigma


def projection_w(W1, W2):
    """The projection w of :func:`~markovlib.transformer.readout.canonical_scalars` (w = alpha^T W_2 u / 4 with
    alpha, u/2 the top singular pair of W_1, u summing positive), differentiable."""
    U, _, Vh = torch.linalg.svd(W1, full_matrices=False)
    s = torch.sign(U[:, 0].sum()).detach()
    return (s * Vh[0]) @ W2 @ (2 * s * U[:, 0]) / 4


def slow_velocity(model, p, q, lr, *, momentum=0.0, batch=16, slow=None):
    """The mean change per step of every slow weight, -lr_eff grad_slow (1/2) tr(J C) with C =
    floor_covariance(J, Sigma, lr, momentum) held fixed, and what it does to the projection.

    Returns a dict: ``velocity`` (name -> tensor), ``J``, ``Sigma``, ``C`` (numpy), ``w`` and ``dw`` (the projection
    and its drift per step), ``lam_min`` (smallest eigenvalue of J: the fast point's stability margin) and
    ``e2`` (the floor of the projection's e, alpha^T C_ee alpha)."""
    k = momentum_factor(momentum)
    slow = _slow(model) if slow is None else slow
    J, Sigma = fast_coefficients(model, p, q, batch=batch, slow=slow)
    C = floor_covariance(J.numpy(), Sigma.numpy(), lr, momentum)
    Ct = torch.as_tensor(C)
    names = list(slow)
    leaves = {n: slow[n].detach().clone().requires_grad_(True) for n in names}
    obj = 0.5 * torch.trace(fast_coefficients(model, p, q, batch=batch, slow=leaves)[0] @ Ct)
    grads = torch.autograd.grad(obj, [leaves[n] for n in names], allow_unused=True)
    vel = {n: (-lr * k * g if g is not None else torch.zeros_like(leaves[n])) for n, g in zip(names, grads)}
    W1 = leaves["W_1"].detach().clone().requires_grad_(True)
    W2 = leaves["W_2"].detach().clone().requires_grad_(True)
    w = projection_w(W1, W2)
    gw1, gw2 = torch.autograd.grad(w, [W1, W2])
    dw = float((gw1 * vel["W_1"]).sum() + (gw2 * vel["W_2"]).sum())
    U, _, Vh = torch.linalg.svd(leaves["W_1"].detach(), full_matrices=False)
    alpha = (torch.sign(U[:, 0].sum()) * Vh[0]).numpy()
    return {"velocity": vel, "J": J.detach().numpy(), "Sigma": Sigma.detach().numpy(), "C": C, "w": float(w.detach()),
            "dw": dw, "lam_min": float(np.linalg.eigvalsh(J.detach().numpy())[0]),
            "e2": float(alpha @ C[1:, 1:] @ alpha)}


def integrate_plateau(model, p, q, lr, *, momentum=0.0, batch=16, max_steps=1e9, max_rel=0.05, tol=0.2,
                      max_macro=400, margin=0.02):
    """Follow the averaged slow flow d theta/dt = slow_velocity(theta) (Heun's method in macro-steps of many SGD
    steps, with step control) from ``model``'s weights until the fast fixed point loses its stability: the smallest
    eigenvalue of J falls to ``margin`` times its start (the floor C ~ 1/lam_min has grown 1/margin-fold and e leaves
    phi*: the escape from the plateau); or ``max_steps`` SGD steps; or ``max_macro`` macro-steps.

    A macro-step h changes w by at most ``max_rel`` (|w| + 0.05) and lam_min by at most ``max_rel`` lam_min; it is
    halved while the velocity at its Euler end differs from the start by more than ``tol`` (relative norm over all
    slow weights: the averaged field has kinks where a ReLU of the positional stream switches).
    Returns a list of dicts (step, w, energy E(0, w), lam_min, dw, e2); the last row has ``escaped``. The step at
    which w crosses -1/sqrt 2 (E(0, w) = E_sad) can be read off the rows. Valid while the fast variables stay near
    phi*, i.e. before the escape."""
    max_steps = checks.positive_real("max_steps", max_steps)
    max_rel = checks.positive_real("max_rel", max_rel)
    tol = checks.positive_real("tol", tol)
    max_macro = checks.positive_int("max_macro", max_macro)
    margin = checks.positive_real("margin", margin)
    if margin >= 1:
        raise ValueError(f"margin must be in (0, 1), got {margin!r}")
    kw = dict(momentum=momentum, batch=batch)
    slow = _slow(model)
    norm = lambda v: math.sqrt(sum(float((x * x).sum()) for x in v.values()))  # noqa: E731
    r0 = slow_velocity(model, p, q, lr, slow=slow, **kw)
    t, dlam, rows = 0.0, 0.0, [_row(r0, 0.0)]
    stop = margin * r0["lam_min"]
    for _ in range(max_macro):
        if r0["lam_min"] <= stop or t >= max_steps:
            break
        h = max_rel * (abs(r0["w"]) + 0.05) / max(abs(r0["dw"]), 1e-300)
        if dlam < 0:
            h = min(h, max(max_rel * r0["lam_min"], 0.5 * (r0["lam_min"] - stop)) / -dlam)
        h = max(min(h, max_steps - t), 1.0)
        v0 = norm(r0["velocity"])
        while True:
            try:
                r1 = slow_velocity(model, p, q, lr, slow={n: slow[n] + h * r0["velocity"][n] for n in slow}, **kw)
                err = norm({n: r1["velocity"][n] - r0["velocity"][n] for n in slow}) / max(v0, 1e-300)
            except ValueError:  # the Euler end left the stable range of the linearized fast dynamics
                err = math.inf
            if err <= tol or h <= 1.0:
                break
            h = max(h / 2, 1.0)
        dlam = (r1["lam_min"] - r0["lam_min"]) / h if math.isfinite(err) else dlam
        slow = {n: slow[n] + 0.5 * h * (r0["velocity"][n] + r1["velocity"][n]) for n in slow}
        t += h
        r0 = slow_velocity(model, p, q, lr, slow=slow, **kw)
        rows.append(_row(r0, t))
    rows[-1]["escaped"] = rows[-1]["lam_min"] <= stop
    return rows


def _row(r, t):
    return {"step": t, "w": r["w"], "energy": float(energy(0.0, r["w"])) if r["w"] != 0 else float("nan"),
            "lam_min": r["lam_min"], "dw": r["dw"], "e2": r["e2"]}
