"""The beyond chapter's explorer, headless: the symmetric K-state chain at (K, p).

:func:`draw_kstate` draws, over the switching probability, the two yardsticks of the symmetric chain (the entropy
rate h(p) + p log(K - 1), the bigram loss, and log K, the unigram loss), the ladder L_m between them
(``multistate.lumped_loss``: the best loss that resolves m of the K states) and the point p* = (K - 1)/K where they
meet; it marks the chosen p and reports the sign of the second derivative Q of the loss along the embedding at the
zero-embedding critical set, computed by ``multistate.zero_embedding_hessian`` (chapter eq. beyond-hessian) for a
small standard initialization (std 0.02) and a random centred embedding direction. For small weights
Q ~ -(2 lambda / K) |Pi E0|^2 (chapter beyond-cor-small-init), so Q > 0 (E = 0 traps) for lambda < 0, i.e. p > p*;
within about 0.1 of lambda = 0 a positive term of order std^2 decides instead. The function returns what it
displays, so tests and the rendered book's static explorer can read it.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from ..numerics import checks
from . import multistate as ms

SMALL_STD = 0.02  # the standard initialization's scale (the paper's)
HESSIAN_LENGTH = 4  # sequence length of the population loss behind Q (K^3 contexts are enumerated)


def small_weight_hessian(n_states, p, *, d=8, seed=0) -> float:
    """Q(E0) at the zero-embedding critical set of a K-state model with standard weights of scale 0.02 (``seed``),
    softmax(b) = pi, along a random embedding direction E0 centred over the states (rows sum to zero)."""
    k = checks.positive_int("n_states", n_states)
    if k < 2:
        raise ValueError(f"n_states must be an integer >= 2, got {n_states!r}")
    p = checks.probability("p", p)
    d = checks.positive_int("d", d)
    seed = checks.nonnegative_int("seed", seed)
    chain = ms.symmetric_chain(k, p)
    model = ms.zero_embedding_model(chain, d=d, max_len=HESSIAN_LENGTH - 1, std=SMALL_STD, seed=seed)
    rng = np.random.default_rng([seed, k])
    e0 = rng.standard_normal((k, d))
    e0 -= e0.mean(axis=0)  # centred: (I - 11^T / K) E0, the directions that change the prediction
    return ms.zero_embedding_hessian(model, chain, HESSIAN_LENGTH, e0)


def draw_kstate(K, p, ax=None, seed=0) -> dict:
    """Draw the yardsticks, the ladder and p* of the symmetric K-state chain over p, with the chosen p marked.

    Returns {"lambda": the eigenvalue 1 - K p / (K - 1), "p_star", "ladder": [L_0, ..., L_{K-1}] at p, "Q": the
    small-weight second derivative (:func:`small_weight_hessian`), "trap": Q > 0}.
    """
    import matplotlib.pyplot as plt

    k = checks.positive_int("K", K)
    if not 2 <= k <= 12:
        raise ValueError(f"K must be an integer in [2, 12], got {K!r}")
    p = checks.probability("p", p)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    grid = np.linspace(0.005, 0.995, 199)
    rate = np.array([ms.symmetric_entropy_rate(k, v) for v in grid])
    for m in range(1, k - 1):
        ax.plot(grid, [ms.lumped_loss(k, v, m) for v in grid], color=plotting.NEUTRAL, lw=0.6, alpha=0.6,
                label="ladder $L_m$" if m == 1 else None)
    ax.plot(grid, rate, color=plotting.GLOBAL, lw=2, label="entropy rate (bigram)")
    ax.axhline(ms.symmetric_marginal_entropy(k), color=plotting.LOCAL, ls=":", lw=1.6, label=r"$\log K$ (unigram)")
    p_star = ms.iid_point(k)
    ax.axvline(p_star, color=plotting.SADDLE, ls="--", lw=1.2, label=f"$p^* = {p_star:.3f}$")
    ladder = [ms.lumped_loss(k, p, m) for m in range(k)]
    ax.plot([p] * k, ladder, "o", color="k", ms=4, zorder=5)
    ax.axvline(p, color="k", lw=0.8)
    lam = ms.symmetric_eigenvalue(k, p)
    q_value = small_weight_hessian(k, p, seed=seed)
    trap = q_value > 0
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05 * max(np.log(k), rate.max()))
    ax.set_xlabel("switching probability p")
    ax.set_ylabel("loss (nats)")
    ax.set_title(f"K = {k}, p = {p:.3g}: lambda = {lam:+.3f}; small weights: Q {'>' if trap else '<'} 0 "
                 f"({'E = 0 traps' if trap else 'E = 0 is left'})", fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    return {"lambda": lam, "p_star": p_star, "ladder": ladder, "Q": q_value, "trap": bool(trap)}
