"""The figures of the chapter markov_data, headless: each function draws one figure and returns it.

* :func:`loss_surface_figure`: the exact loss of bigram predictors (f0, f1) with the kernel and pi_1 marked.
* :func:`gap_figure`: H(pi) - entropy rate over (p, q), zero on the line p + q = 1.
* :func:`runs_figure`: measured run-length fractions against the geometric laws.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..numerics import checks
from .checks import geometric_bins
from .data_checks import expected_loss

__all__ = ["loss_surface_figure", "gap_figure", "runs_figure"]


def loss_surface_figure(p, q, n=397):
    """Contours of ``data_checks.expected_loss`` over predictors f0 = P^(1|0), f1 = P^(1|1) in [0.005, 0.995]^2,
    the constant predictors f0 = f1, the kernel (p, 1 - q) (entropy rate) and pi_1 (H(pi))."""
    p, q, n = checks.probability("p", p), checks.probability("q", q), checks.positive_int("n", n)
    f = np.linspace(0.005, 0.995, n)
    F0, F1 = np.meshgrid(f, f, indexing="ij")
    L = expected_loss(np.log(F0 / (1 - F0)), np.log(F1 / (1 - F1)), p, q)
    fig, ax = plt.subplots(figsize=(5.6, 4.6))
    cs = ax.contourf(f, f, L.T, levels=np.linspace(L.min(), L.min() + 1.0, 21), extend="max")
    fig.colorbar(cs, ax=ax, label="expected loss (nats)")
    ax.plot(f, f, color="w", lw=1, ls="--", label="constant predictors $f_0 = f_1$")
    ax.plot(p, 1 - q, "*", color=plotting.GLOBAL, mec="w", ms=16, label="kernel: entropy rate (bigram)")
    ax.plot(p / (p + q), p / (p + q), "o", color=plotting.LOCAL, mec="w", ms=9, label=r"$\pi_1$: $H(\pi)$ (unigram)")
    ax.set(xlabel=r"$f_0 = \hat P(1 \mid 0)$", ylabel=r"$f_1 = \hat P(1 \mid 1)$",
           title=f"Loss of bigram predictors, p={p}, q={q}")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(False)
    return fig


def gap_figure(grid, gap, p, q):
    """Contours of the yardstick gap ``gap`` over ``grid`` x ``grid`` (``data_checks.yardstick_gap``), the line
    p + q = 1 and the chain (p, q)."""
    grid, gap = np.asarray(grid, dtype=float), np.asarray(gap, dtype=float)
    if gap.shape != (grid.size, grid.size):
        raise ValueError(f"gap must have shape ({grid.size}, {grid.size}), got {gap.shape}")
    fig, ax = plt.subplots(figsize=(5.4, 4.4))
    im = ax.contourf(grid, grid, gap.T, levels=20)
    fig.colorbar(im, ax=ax, label=r"$H(\pi) - H(x_{n+1}\mid x_n)$ (nats)")
    ax.plot(grid, 1 - grid, color="w", ls="--", label="p + q = 1 (i.i.d.)")
    ax.plot(p, q, "*", color="w", ms=12, label=f"this chapter's chain ({p}, {q})")
    ax.set(xlabel="p = P(1 | 0)", ylabel="q = P(0 | 1)", title="What the unigram predictor gives up")
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(False)
    return fig


def runs_figure(runs, p, q, kmax):
    """The measured run-length fractions of ``data_checks.run_lengths`` (``runs``) against Geom(p) (runs of 0) and
    Geom(q) (runs of 1) on the bins 1..kmax, on a log scale."""
    ks = np.arange(1, checks.positive_int("kmax", kmax) + 1)
    fig, ax = plt.subplots()
    for state, r, color in ((0, p, plotting.MAXIMA), (1, q, plotting.LOCAL)):
        freq = np.asarray(runs.measured[state])
        if freq.shape != ks.shape:
            raise ValueError(f"runs must hold {kmax} bins per state, got {freq.shape}")
        ax.semilogy(ks[freq > 0], freq[freq > 0], "o", color=color,
                    label=f"runs of {state}: measured ({runs.n_runs[state]} runs)")
        ax.semilogy(ks, geometric_bins(r, kmax)[:-1], "-", color=color, alpha=0.6, label=f"Geom({r}) law")
    ax.set(xlabel="run length k", ylabel="fraction of runs", title="Run lengths are geometric")
    ax.legend()
    return fig
