"""Drawings of the chapter canonical_model (the paper's Lemma 6 and Fig. 3's surfaces): each function draws one
figure and returns it.

- :func:`reduced_loss_panels`: g(c) on each chain with its two yardsticks, c* and c = 0 (Lemma 6).
- :func:`loss_surfaces`: L(e, w) = g(c(e, w)) on two chains, with the H(pi) contour and the critical points.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from . import canonical
from .chain import MarkovChain
from .drawings import critical_points


def reduced_loss_panels(chains, c_range=(-8.0, 8.0)):
    """One panel per chain of ``chains`` (four, in a 2 x 2 grid): g(c) over ``c_range`` with the entropy rate and
    H(pi), the global minimum c* (star) and c = 0 (dot)."""
    import matplotlib.pyplot as plt

    chains = [tuple(pq) for pq in chains]
    if len(chains) != 4:
        raise ValueError(f"chains must hold four (p, q) pairs, got {len(chains)}")
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    cplot = np.linspace(c_range[0], c_range[1], 801)
    for ax, (pp, qq) in zip(axes.ravel(), chains):
        ch = MarkovChain(pp, qq)
        cs = canonical.c_star(pp, qq)
        ax.plot(cplot, canonical.reduced_loss(cplot, pp, qq), color=plotting.NEUTRAL, lw=2, label="g(c)")
        plotting.yardsticks(ax, ch.entropy_rate, ch.marginal_entropy)
        ax.plot([cs], [float(canonical.reduced_loss(cs, pp, qq))], "*", color=plotting.GLOBAL, ms=14,
                label=f"c* = {cs:.2f}")
        ax.plot([0], [float(canonical.reduced_loss(0.0, pp, qq))], "o", color=plotting.LOCAL, ms=7, label="c = 0")
        ax.set_title(f"p = {pp}, q = {qq} (p + q {'>' if pp + qq > 1 else '<'} 1)")
        ax.set_ylim(ch.entropy_rate - 0.05, ch.marginal_entropy + 0.35)
        ax.set_ylabel("reduced loss g(c) (nats)")
        ax.legend(loc="best", fontsize=7.5)
    for ax in axes[1]:
        ax.set_xlabel(r"coefficient $c = e^2(1 + 2w|w|)$")
    fig.suptitle("The reduced loss g(c) and its two yardsticks (Lemma 6)")
    fig.tight_layout()
    return fig


def loss_surfaces(chains, e_ax, w_ax):
    """One panel per chain of ``chains``: filled contours of canonical.loss on e_ax x w_ax from the entropy rate to
    H(pi) + 0.3, the H(pi) contour in white, and the critical points (``markov_drawings.critical_points``)."""
    import matplotlib.pyplot as plt

    e_ax, w_ax = np.asarray(e_ax, dtype=float), np.asarray(w_ax, dtype=float)
    EE, WW = np.meshgrid(e_ax, w_ax, indexing="ij")
    fig, axes = plt.subplots(1, len(chains), figsize=(5.5 * len(chains), 4.6))
    for ax, (pp, qq) in zip(np.atleast_1d(axes), chains):
        ch = MarkovChain(pp, qq)
        L = canonical.loss(EE, WW, pp, qq)
        levels = np.linspace(ch.entropy_rate, ch.marginal_entropy + 0.3, 21)
        cf = ax.contourf(e_ax, w_ax, L.T, levels=levels, extend="max")
        ax.contour(e_ax, w_ax, L.T, levels=[ch.marginal_entropy], colors="w", linewidths=0.8)
        fig.colorbar(cf, ax=ax, label="L(e, w) (nats)", format="%.2f")
        critical_points(ax, pp, qq, e_lim=float(e_ax.max()), w_lim=(float(w_ax.min()), float(w_ax.max())))
        ax.set_title(f"L(e, w) = g(c(e, w)), p = {pp}, q = {qq}")
        ax.grid(False)
    fig.tight_layout()
    return fig
