"""The figures of ``book/beyond_two_states`` drawn from its stored runs, each a function returning the figure: the
500-step grid (:func:`grid_figure`), the held-out curves of the re-executed slice (:func:`slice_figure`), the phase set
at step 5000 (:func:`phase_figure`) and its switching-side curves (:func:`switching_figure`), and the lag runs
(:func:`lag_figure`). Yardsticks in the book's colours (GLOBAL: entropy rate, LOCAL: H(pi), SADDLE: the ladder L_m).
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..book.formatting import fixed
from . import kstate_stored, multistate
from .kstate_phase import ARMS

INIT_STYLE = {"standard": dict(marker="o", color=plotting.NEUTRAL),
              "guideline_like": dict(marker="^", color=plotting.MAXIMA)}
ARM_STYLE = {"Adam, tied, standard": dict(marker="o", color=plotting.NEUTRAL),
             "Adam, tied, guideline-like": dict(marker="^", color=plotting.MAXIMA),
             "SGD, tied, standard": dict(marker="s", color=plotting.LOCAL),
             "SGD, tied, guideline-like": dict(marker="v", color=plotting.GLOBAL),
             "Adam, untied, standard": dict(marker="D", color=plotting.SADDLE)}


def _columns(frame, name, width, height):
    if frame is None or len(frame) == 0 or "K" not in frame:
        raise ValueError(f"{name} must be a non-empty table of stored runs with a column K")
    Ks = sorted(set(frame.K))
    fig, axes = plt.subplots(1, len(Ks), figsize=(width * len(Ks), height), sharey=True)
    return fig, np.atleast_1d(axes), Ks


def _yardstick_lines(ax, K):
    ax.axhline(0, color=plotting.GLOBAL, ls="--", lw=1.2, label="entropy rate (bigram)")
    ax.axhline(1, color=plotting.LOCAL, ls=":", lw=1.4, label="H(pi) = log K (unigram)")
    ax.axvline(multistate.iid_point(K), color="k", lw=0.8, alpha=0.5)
    ax.set_title(f"K = {K}, p* = {fixed(multistate.iid_point(K), 3)}")
    ax.set_xlabel("p (switching probability)")


def _finish(fig, axes, ylabel, loc, fontsize, title):
    axes[0].set_ylabel(ylabel)
    axes[0].legend(loc=loc, fontsize=fontsize)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def grid_figure(runs):
    """Per K: each run's normalized gap (loss at step 500 - entropy rate) / (log K - entropy rate) against p, per init
    (hollow: unresolved cell), with the plateaus L_m of each cell as ticks."""
    fig, axes, Ks = _columns(runs, "runs", 4.2, 3.8)
    for ax, K in zip(axes, Ks):
        g = runs[runs.K == K]
        for p in sorted(set(g.p)):
            L = kstate_stored.ladder(K, p)
            ax.hlines(((L - L[-1]) / (L[0] - L[-1]))[1:-1], p - 0.012, p + 0.012, color=plotting.SADDLE, lw=1.2)
        for j, (init, st) in enumerate(INIT_STYLE.items()):
            h = g[g.init == init]
            offs = (j - 0.5) * 0.01 + 0.002 * (h.seed - h.seed.mean())
            gap = (h.final_loss - h.entropy_rate) / (h.marginal_entropy - h.entropy_rate)
            ax.scatter(h.p + offs, gap, marker=st["marker"], facecolors=[st["color"] if r else "none"
                                                                         for r in h.resolvable],
                       edgecolors=st["color"], s=26, label=init.replace("_", "-") + " init")
        _yardstick_lines(ax, K)
    return _finish(fig, axes, "(loss at step 500 - entropy rate) / (log K - entropy rate)", "upper left", 7.5,
                   "K-state chains after 500 Adam steps (stored grid, 5 seeds per cell; yellow ticks: plateaus L_m; "
                   "hollow: unresolved cell)")


def slice_figure(curves, n_states, p):
    """The held-out loss of every stored seed of the cell (``n_states``, ``p``) per init, with the yardsticks and the
    plateaus L_1 .. L_{K-2}."""
    K = multistate.n_states_of(n_states)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    cell = curves[(curves.K == K) & np.isclose(curves.p, p)]
    if cell.empty:
        raise ValueError(f"no stored curves at K = {K}, p = {p}")
    for init, st in INIT_STYLE.items():
        for s_, h in cell[cell.init == init].groupby("seed"):
            ax.plot(h.step, h.loss, color=st["color"], lw=1, alpha=0.8,
                    label=init.replace("_", "-") + " init (stored seeds)" if s_ == min(curves.seed) else None)
    plotting.yardsticks(ax, multistate.symmetric_entropy_rate(K, p), multistate.symmetric_marginal_entropy(K))
    L = kstate_stored.ladder(K, p)
    for m in range(1, K - 1):
        ax.axhline(L[m], color=plotting.SADDLE, lw=1, label=f"plateau L_{m}" if m == 1 else None)
    ax.set(xlabel="Adam step", ylabel="held-out loss (nats)",
           title=f"K = {K}, p = {p}: held-out loss of the stored runs")
    ax.legend(loc="upper right")
    return fig


def phase_figure(phase, steps, n_seeds):
    """Per K: each phase run's normalized gap at step ``steps`` against p, per arm (hollow: unresolved cell)."""
    fig, axes, Ks = _columns(phase, "phase", 4.4, 4.0)
    for ax, K in zip(axes, Ks):
        g = phase[phase.K == K]
        width = 0.007 * (max(g.p) - min(g.p)) / 0.87
        for j, (arm, st) in enumerate(ARM_STYLE.items()):
            h = g[g.arm == arm]
            offs = (j - 2) * width + 0.15 * width * (h.seed - h.seed.mean()) / max(1.0, h.seed.std())
            ax.scatter(h.p + offs, h.gap, marker=st["marker"], facecolors=[st["color"] if r else "none"
                                                                           for r in h.resolvable],
                       edgecolors=st["color"], s=18, lw=0.8, label=arm)
        _yardstick_lines(ax, K)
    return _finish(fig, axes, f"(loss at step {steps} - entropy rate) / (log K - entropy rate)", "center left", 7,
                   f"K-state chains after {steps} steps: five arms, {n_seeds} seeds per cell (hollow: unresolved cell)")


def switching_figure(phase, curves, steps):
    """For each K the switching cell with the largest p: the median and range over the seeds of each arm of the
    normalized gap along training, with the plateaus L_m (y clipped at 1.25)."""
    cells = [(K, max(p for p in set(phase.p[phase.K == K]) if p > multistate.iid_point(K)))
             for K in sorted(set(phase.K))]
    fig, axes = plt.subplots(1, len(cells), figsize=(4.4 * len(cells), 3.8), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (K, p) in zip(axes, cells):
        c = curves[(curves.K == K) & np.isclose(curves.p, p)].copy()
        rate, marg = multistate.symmetric_entropy_rate(K, p), multistate.symmetric_marginal_entropy(K)
        c["gap"] = (c.loss - rate) / (marg - rate)
        c["arm"] = [ARMS[(o, int(t), i)] for o, t, i in zip(c.optimizer, c.tied, c.init)]
        for arm, st in ARM_STYLE.items():
            q = c[c.arm == arm].groupby("step").gap.quantile([0.0, 0.5, 1.0]).unstack()
            ax.plot(q.index, q[0.5], color=st["color"], marker=st["marker"], ms=3, lw=1.2, label=f"{arm} (median)")
            ax.fill_between(q.index, q[0.0], q[1.0], color=st["color"], alpha=0.15, lw=0)
        L = kstate_stored.ladder(K, p)
        ax.hlines(((L - L[-1]) / (L[0] - L[-1]))[1:-1], 0, steps, color=plotting.SADDLE, lw=0.8, ls="-.")
        ax.axhline(0, color=plotting.GLOBAL, ls="--", lw=1.0)
        ax.axhline(1, color=plotting.LOCAL, ls=":", lw=1.2)
        ax.set_ylim(-0.1, 1.25)  # the guideline-like init starts far above H(pi) at K = 10 (gap up to ~9 at step 0)
        ax.set(title=f"K = {K}, p = {p:g} (p > p*)", xlabel="step")
    return _finish(fig, axes, "normalized gap (0: entropy rate, 1: H(pi))", "center right", 7,
                   "The switching side: median and range over the seeds of each arm (dash-dot: the plateaus L_m; "
                   "y clipped at 1.25)")


def lag_figure(lag):
    """The stored lag runs' final losses against the lag k (per init), the best per lag, and the closed forms: the
    entropy rate (every k), the bigram predictor and log K (``lag``: :func:`kstate_grid.lag_table`)."""
    K, p, best, runs = lag["K"], lag["p"], lag["best"], lag["runs"]
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    ks = sorted(best)
    for init, st in INIT_STYLE.items():
        h = runs[runs.init == init]
        ax.scatter(h.lag + (0.08 if init == "standard" else -0.08), h.final_loss, marker=st["marker"],
                   color=st["color"], s=24, label=init.replace("_", "-") + " init")
    ax.plot(ks, [best[k] for k in ks], color="k", lw=1, label="best single-layer loss (measured)")
    ax.axhline(lag["rate"], color=plotting.GLOBAL, ls="--", lw=1.2, label="entropy rate (every k)")
    ax.plot(ks, [multistate.lag_switching_yardsticks(K, p, k)["bigram"] for k in ks], color=plotting.SADDLE, lw=1.5,
            ls="-.", label="bigram (order-1) predictor")
    ax.axhline(math.log(K), color=plotting.LOCAL, ls=":", lw=1.4, label="unigram log K")
    ax.set(xlabel="lag k", ylabel="loss (nats)", title=f"Lag-k switching chains, K = {K}, p = {p}: stored runs")
    ax.legend(loc="center right", fontsize=7.5)
    return fig
