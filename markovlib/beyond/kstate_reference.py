"""Independent references of ``book/beyond_two_states``: the quantities that the chapter's checks compare the
package's K-state code with, each computed by a route that calls none of the markovlib functions it checks
(numpy's eigenvectors, autograd along a line, the conserved quantities written out, torch autograd of the canonical
model's c(e, w) and energy, the centred log-kernel built by hand, the chain's law on a regenerated held-out batch).
"""
from __future__ import annotations

import numpy as np
import torch

from ..numerics import checks


def eig_yardsticks(kernel):
    """Independent reference: (entropy rate, marginal entropy H(pi), sorted eigenvalues) of a transition matrix, with
    pi from numpy's left eigenvector for the eigenvalue 1 and the row entropies summed by hand (chapter Sec. 1,
    Prop. beyond-prop-yardsticks)."""
    P = checks.finite_array("kernel", kernel)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.min() <= 0 or not np.allclose(P.sum(axis=1), 1):
        raise ValueError(f"kernel must be a square stochastic matrix with positive entries, got shape {P.shape}")
    vals, vecs = np.linalg.eig(P.T)
    v = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
    pi = v / v.sum()
    rows = -(P * np.log(P)).sum(axis=1)
    return float(pi @ rows), float(-(pi * np.log(pi)).sum()), np.sort(np.real(vals))


def loss_along(model, chain, length, E0, t):
    """Independent reference: the exact population loss with the embedding replaced by t E0, so that autograd
    differentiates along that line (chapter eq. beyond-hessian is checked against its second derivative in t)."""
    from ..transformer.exact import exact_loss

    if not isinstance(E0, torch.Tensor) or tuple(E0.shape) != tuple(model.embedding.shape):
        raise ValueError(f"E0 must be a tensor of the embedding's shape {tuple(model.embedding.shape)}")
    saved = model.embedding
    del model.embedding
    model.embedding = t * E0
    try:
        return exact_loss(model, chain, checks.positive_int("length", length))
    finally:
        del model.embedding
        model.embedding = saved


def conserved_quantities(params: dict) -> dict:
    """Independent reference: the neuron balances ||W_1[k,:]||^2 - ||W_2[:,k]||^2, W_Q W_Q^T - W_K W_K^T,
    W_V W_V^T - W_O^T W_O (Prop. beyond-prop-conserved) and |E|^2, written out from a dict of named tensors."""
    missing = {"W_1", "W_2", "W_Q", "W_K", "W_V", "W_O", "embedding"} - set(params)
    if missing:
        raise ValueError(f"params must hold the model's named weights; missing {sorted(missing)}")
    W1, W2, Wq, Wk, Wv, Wo, E = (params[n] for n in ("W_1", "W_2", "W_Q", "W_K", "W_V", "W_O", "embedding"))
    return {"neuron_balance": (W1**2).sum(1) - (W2**2).sum(0), "query_key": Wq @ Wq.T - Wk @ Wk.T,
            "value_output": Wv @ Wv.T - Wo.T @ Wo, "embedding_norm": (E**2).sum()}


def energy_cosines(ew):
    """Independent reference: |cos(grad E, grad c)| at the points ``ew`` (shape (2, n), rows e and w, w != 0) by torch
    autograd of c(e, w) = e^2 (1 + 2 w|w|) and of E = e^2 - w^2 - sign(w) log|w| (chapter eq. beyond-energy), and the
    same for the one-branch form e^2 - w^2 + log|w|. Returns (cosines of E, cosines of the one-branch form, E)."""
    ew = torch.as_tensor(np.asarray(ew, dtype=float)).clone()
    if ew.ndim != 2 or ew.shape[0] != 2 or bool((ew[1] == 0).any()):
        raise ValueError("ew must have shape (2, n) with w != 0 (the invariant line w = 0 is excluded)")
    ew.requires_grad_(True)
    e_, w_ = ew
    c = e_**2 * (1 + 2 * w_ * torch.abs(w_))
    energy = e_**2 - w_**2 - torch.sign(w_) * torch.log(torch.abs(w_))
    (gc,) = torch.autograd.grad(c.sum(), ew, retain_graph=True)
    (gE,) = torch.autograd.grad(energy.sum(), ew, retain_graph=True)
    (gE1,) = torch.autograd.grad((e_**2 - w_**2 + torch.log(w_.abs())).sum(), ew)
    cos = lambda g: ((g * gc).sum(0).abs() / (g.norm(dim=0) * gc.norm(dim=0))).detach().numpy()
    return cos(gE), cos(gE1), energy.detach().numpy()


def centred_log_kernel_rank(n_states, p, cut=1e-9) -> int:
    """Independent reference: the rank of log P with its rows centred, for the symmetric chain built by hand (singular
    values above ``cut`` times the largest); K - 1 when lambda != 0 (Prop. beyond-prop-capacity)."""
    K = checks.positive_int("n_states", n_states)
    p = checks.probability("p", p)
    logP = np.log(np.where(np.eye(K, dtype=bool), 1 - p, p / (K - 1)))
    sv = np.linalg.svd(logP - logP.mean(axis=1, keepdims=True), compute_uv=False)
    return int((sv > checks.positive_real("cut", cut) * sv[0]).sum())


def batch_chain_score(n_states, p, run_seed, eval_batch, length) -> float:
    """Independent reference: the chain's own law scored on a run's held-out batch, regenerated (``eval_batch``
    sequences of ``length`` + 1 symbols from the seed that numpy's SeedSequence derives from (run_seed, 0, 1), as in
    ``kstate_training.train_kstate``): the mean of -log P(x_{n+1} | x_n), log P built by hand."""
    from .multistate import symmetric_chain

    K = checks.positive_int("n_states", n_states)
    eval_seed = int(np.random.SeedSequence([checks.nonnegative_int("run_seed", run_seed), 0, 1]).generate_state(1)[0])
    x = symmetric_chain(K, float(p)).sample(checks.positive_int("eval_batch", eval_batch),
                                            checks.positive_int("length", length) + 1, seed=eval_seed,
                                            backend="torch").numpy()
    log_kernel = np.log(np.where(np.eye(K, dtype=bool), 1 - p, p / (K - 1)))
    return float(-log_kernel[x[:, :-1], x[:, 1:]].mean())
