"""Drawings of the chapter low_rank (reference Sec. 5.1, Figs. 3, 6, 7): each function returns its figure.

- :func:`fraction_figure`: panels of the top-component fraction of every matrix along training (Figs. 3, 7), from
  live tracks or from the stored curves (:func:`stored_track`).
- :func:`embedding_figure`: the trained token embedding sqrt(d) e / |e| under SGD and AdamW (the hypercube).
- :func:`s2s1_figure`: s_2 / s_1 of W_V, W_O, W_1, W_2 along training for every seed, and the threshold sweep.
- :func:`seeds_figure`: the final fractions of every seed and matrix, and each claim's count with its interval.
- :func:`stable_rank_figure`: the stable rank minus 1, 1/f - 1, along training from stored curves, every seed.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..book.inference import wilson_interval
from . import drawings

MATRICES = drawings.FRACTION_MATRICES
FOUR = {"W_V": "tab:blue", "W_O": "tab:purple", "W_1": "tab:orange", "W_2": "tab:brown"}
SEVEN = dict(zip(MATRICES, ["tab:blue", "tab:orange", "tab:purple", "tab:brown", "tab:cyan", "tab:pink",
                            plotting.NEUTRAL]))


def stored_track(curves, init, optimizer, seed) -> dict:
    """The stored curve of one run as a track for :func:`fraction_figure`: "step" and the fraction of every matrix."""
    c = curves[(curves["init"] == init) & (curves["optimizer"] == optimizer) & (curves["seed"] == seed)]
    if c.empty:
        raise ValueError(f"no stored curve for ({init}, {optimizer}, seed {seed})")
    return {"step": c["step"].to_numpy(), **{m: c[f"top_fraction_{m}"].to_numpy() for m in MATRICES}}


def fraction_figure(panels, threshold, title, ylabel=r"$s_1^2/\sum_i s_i^2$"):
    """One panel per (track, panel title) of ``panels`` (:func:`drawings.fraction_panel`), sharing the y axis, with
    the rank-one ``threshold``; the legend in the last panel."""
    if not panels:
        raise ValueError("panels must hold at least one (track, title)")
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 0.5, 3.8), sharey=True, squeeze=False)
    for ax, (track, name) in zip(axes[0], panels):
        drawings.fraction_panel(ax, track, name, threshold)
    axes[0, 0].set_ylabel(ylabel)
    axes[0, -1].legend(loc="lower right", ncol=2, fontsize=7)
    fig.suptitle(title)
    return fig


def embedding_figure(embeddings, seed):
    """Bars of sqrt(d) e / |e| per coordinate for each (optimizer name, e) of ``embeddings`` (at most two), with the
    hypercube's +-1 dotted."""
    if not 1 <= len(embeddings) <= 2:
        raise ValueError("embeddings must hold one or two (name, e)")
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for off, (name, e), color in zip((-0.2, 0.2), embeddings, (plotting.MAXIMA, plotting.NEUTRAL)):
        e = np.asarray(e, dtype=float)
        ax.bar(np.arange(e.size) + off, e * np.sqrt(e.size) / np.linalg.norm(e), width=0.4, color=color,
               label=f"{name}: $\\sqrt{{d}}\\, e/\\|e\\|$")
    for y in (1, -1):
        ax.axhline(y, color=plotting.NEUTRAL, lw=0.8, ls=":")
    ax.set(xlabel="coordinate i", ylabel="normalized entry",
           title=f"Trained token embedding (seed {seed}): the hypercube appears under AdamW only")
    ax.legend()
    return fig


def s2s1_figure(groups, sweep, thresholds, length):
    """Left panels: s_2 / s_1 of W_V, W_O, W_1, W_2 along training, every run of each (title, runs) of ``groups``
    (runs with a "track"); right: the fraction of seeds above each threshold, from ``sweep`` (counts per matrix)."""
    n = len(groups[-1][1])
    fig, axes = plt.subplots(1, len(groups) + 1, figsize=(17, 4.0), layout="constrained",
                             gridspec_kw={"width_ratios": [1] * len(groups) + [0.9]})
    for ax, (name, runs) in zip(axes, groups):
        for m, color in FOUR.items():
            for j, r in enumerate(runs):
                ax.plot(r["track"]["step"], r["track"][m + "/s2s1"], color=color, lw=0.8, alpha=0.6,
                        label=m if j == 0 else None)
        ax.set(yscale="log", xlabel="iteration")
        ax.set_title(f"{name}: $s_2/s_1$ along training, {len(runs)} seeds", fontsize=10)
    axes[0].set_ylabel(r"$s_2 / s_1$")
    axes[len(groups) - 1].legend(loc="lower left")
    cx = axes[-1]
    for m, color in FOUR.items():
        cx.plot(range(len(thresholds)), np.asarray(sweep[m]) / n, "o-", color=color, label=f"{m} (context {length})")
    cx.set_xticks(range(len(thresholds)), [f"{t:g}" for t in thresholds])
    cx.set(xlabel=r"threshold on $s_1^2/\sum_i s_i^2$", ylabel="fraction of seeds above it", ylim=(-0.03, 1.03))
    cx.set_title("AdamW: threshold sweep of the final fractions", fontsize=10)
    cx.legend(loc="lower left", fontsize=8)
    return fig


def seeds_figure(fractions, threshold, counts, rate):
    """Left: the final top fraction of every seed and matrix for each (name, {matrix: array}) of ``fractions``; right:
    for each (claim, k, n) of ``counts`` the fraction of seeds in which it held with its 95 % Wilson interval, and
    ``rate`` dashed."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13.5, 4.4), gridspec_kw={"width_ratios": [1.1, 1]},
                                 layout="constrained")
    colors = (plotting.MAXIMA, plotting.SADDLE, plotting.NEUTRAL)
    for (name, fr), color, off in zip(fractions, colors, (-0.22, 0, 0.22)):
        for i, m in enumerate(MATRICES):
            ax.scatter(np.full(len(fr[m]), i + off), fr[m], s=14, color=color, label=name if i == 0 else None)
    ax.axhline(threshold, color=plotting.NEUTRAL, lw=0.8, ls="--")
    ax.set_xticks(range(len(MATRICES)), MATRICES)
    ax.set(ylim=(0, 1.03), ylabel=r"final $s_1^2/\sum_i s_i^2$",
           title=f"Final fractions, {len(fractions[0][1]['W_1'])} seeds per optimizer")
    ax.legend(loc="lower left")
    names = [c for c, _, _ in counts]
    k, n = np.array([c[1] for c in counts]), np.array([c[2] for c in counts])
    lo, hi = wilson_interval(k, n)
    held = k / n
    bx.errorbar(held, np.arange(len(names)), xerr=np.clip([held - lo, hi - held], 0, None), fmt="o",
                color=plotting.NEUTRAL, capsize=3)
    bx.axvline(rate, color=plotting.NEUTRAL, ls="--", lw=0.8)
    bx.set_yticks(range(len(names)), [c if len(c) < 44 else c[:42] + "..." for c in names], fontsize=7)
    bx.invert_yaxis()
    bx.set(xlim=(-0.02, 1.02), xlabel="fraction of seeds in which it held (95 % Wilson interval)",
           title="Claims over seeds")
    return fig


def stable_rank_figure(panels, matrices=tuple(FOUR)):
    """One panel per (curves, title) of ``panels`` (stored curves of one setting, every seed): 1/f - 1 of each of
    ``matrices`` along training, log scale."""
    fig, axes = plt.subplots(1, len(panels), figsize=(7.2 * len(panels), 3.9), sharey=True, squeeze=False,
                             layout="constrained")
    colors = FOUR if set(matrices) <= set(FOUR) else SEVEN
    for ax, (curves, title) in zip(axes[0], panels):
        for m in matrices:
            for j, (_, g) in enumerate(curves.groupby("seed")):
                ax.plot(g["step"], 1 / g[f"top_fraction_{m}"] - 1, color=colors[m], lw=0.8, alpha=0.6,
                        label=m if j == 0 else None)
        ax.set(yscale="log", xlabel="iteration")
        ax.set_title(title, fontsize=10)
    axes[0, 0].set_ylabel(r"stable rank $- 1$ $= \sum_{i \geq 2} s_i^2 / s_1^2$")
    axes[0, -1].legend(loc="upper right", ncol=2, fontsize=8)
    return fig
