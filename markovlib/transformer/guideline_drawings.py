"""Drawings of the chapter init_guideline (reference Sec. 5.2, Fig. 4, and beyond the paper): each function draws
one figure from the chapter's results and returns it.

- :func:`ratio_levels`: the bigram (c-hat / c* = 1), unigram (0) and threshold lines of a c-hat / c* panel.
- :func:`fig4`: held-out loss and c-hat / c* of the standard and guideline runs (the paper's Fig. 4).
- :func:`plateau`: the stored AdamW and SGD runs on the plateau chain, and the fraction that left the plateau.
- :func:`phase_diagram`: steps to the bigram predictor over the grid's chains, and every per-chain count.
- :func:`trap_probability`: the trap probability against the initialization scale, full model and canonical.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import inference, plotting


def ratio_levels(ax, level):
    """Draw the bigram (1), unigram (0) and ``level`` lines of a c-hat / c* panel on ``ax``."""
    ax.axhline(1, color=plotting.GLOBAL, ls="--", lw=1.2, label="bigram (global minimum)")
    ax.axhline(0, color=plotting.LOCAL, ls=":", lw=1.4, label="unigram (bad local minimum)")
    ax.axhline(level, color=plotting.NEUTRAL, ls="-.", lw=0.7)
    ax.set_ylabel(r"$\hat c / c^*$")


def fig4(curves, chain, *, window, level, labels, title):
    """Left: held-out loss of every run (thin), mean and standard deviation per initialization, with the chain's
    yardsticks; right: c-hat / c* of the same runs. ``curves`` from ``guideline_claims.fig4_curves``; ``labels``
    the legend text per initialization; ``window`` (start, end) shaded."""
    if set(labels) != set(curves["loss"]):
        raise ValueError(f"labels must name every initialization of curves, {sorted(curves['loss'])}")
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.2))
    for (init, label), color in zip(labels.items(), ("tab:blue", "tab:purple")):
        x, L = curves["loss"][init]
        m, s = L.mean(axis=0), L.std(axis=0)
        for row, rrow in zip(L, curves["ratio"][init]):
            ax.plot(x, row, color=color, lw=0.5, alpha=0.5)
            bx.plot(x, rrow, color=color, lw=0.7, alpha=0.7)
        ax.plot(x, m, color=color, lw=1.8, label=label)
        ax.fill_between(x, m - s, m + s, color=color, alpha=0.25, lw=0)
    plotting.yardsticks(ax, chain.entropy_rate, chain.marginal_entropy)
    for a in (ax, bx):
        a.axvspan(*window, color=plotting.NEUTRAL, alpha=0.06, lw=0)
        a.set_xlabel("iteration")
    ax.set_ylim(chain.entropy_rate - 0.03, chain.marginal_entropy + 0.06)
    ax.set_ylabel("held-out loss (nats)")
    ax.set_title(title)
    ax.legend(loc="upper right")
    ratio_levels(bx, level)
    bx.set_title("The same runs: where they are")
    bx.legend(loc="center right", fontsize=8)
    return fig


def plateau(groups, escape, steps, eval_every, *, level, title):
    """Left: c-hat / c* of every stored run, one colour per group (``groups``: {legend name: (colour, curves)}, each
    curve (steps, c-hat / c*, loss)); right: the fraction of runs that left the plateau by each step (``escape``:
    the AdamW runs' escape steps, inf if never) with its 95 % Wilson band."""
    escape = np.asarray(escape, dtype=float)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12.5, 3.9), gridspec_kw={"width_ratios": [1.4, 1]})
    for name, (color, runs) in groups.items():
        for k, (x, r, _) in enumerate(runs):
            ax.plot(x, r, color=color, lw=0.9, alpha=0.7, label=f"{name} ({len(runs)} stored runs)" if k == 0 else None)
    ratio_levels(ax, level)
    ax.set_xlabel("iteration")
    ax.set_title(title)
    ax.legend(loc="center right", fontsize=8)
    t_grid = np.arange(0, steps + 1, eval_every)
    n_left = np.array([(escape <= t).sum() for t in t_grid])
    lo, hi = inference.wilson_interval(n_left, np.full(n_left.shape, escape.size))
    bx.step(t_grid, n_left / escape.size, where="post", color="tab:blue", label="AdamW: fraction at the bigram")
    bx.fill_between(t_grid, lo, hi, step="post", color="tab:blue", alpha=0.2, lw=0, label="95 % Wilson interval")
    bx.set_ylim(-0.02, 1.02)
    bx.set_xlabel("iteration")
    bx.set_ylabel("fraction of runs that left the plateau")
    bx.set_title("Escape time varies by seed (stored runs)")
    bx.legend(loc="upper left", fontsize=8)
    return fig


def _grid_panel(ax, times, cells, values, grid_steps, fast_steps):
    n_vals = len(values)
    M = np.full((n_vals, n_vals), np.nan)
    for c, (pp, qq) in enumerate(cells):
        M[values.index(pp), values.index(qq)] = np.median(np.minimum(times[c], grid_steps))
    im = ax.imshow(M, origin="lower", cmap="viridis_r", vmin=0, vmax=grid_steps,
                   extent=[-0.5, n_vals - 0.5, -0.5, n_vals - 0.5])
    for i in range(n_vals):
        for j in range(n_vals):
            if np.isnan(M[i, j]):
                ax.text(j, i, "near\np+q=1", ha="center", va="center", fontsize=7)
                continue
            t = times[cells.index((values[i], values[j]))]
            txt = (f"median {np.median(np.minimum(t, grid_steps)):.0f}\n"
                   f"by {fast_steps}: {int(np.sum(t <= fast_steps))}/{t.size}\n"
                   f"within {grid_steps}: {int(np.sum(np.isfinite(t)))}/{t.size}")
            ax.text(j, i, txt, ha="center", va="center", fontsize=7, color="k" if M[i, j] < 0.6 * grid_steps else "w")
    ax.plot([-0.5, n_vals - 0.5], [n_vals - 0.5, -0.5], color=plotting.NEUTRAL, ls="--", lw=1)
    ax.set_xticks(range(n_vals), [f"{v:g}" for v in values])
    ax.set_yticks(range(n_vals), [f"{v:g}" for v in values])
    ax.set_xlabel("q = P(0 | 1)")
    ax.set_ylabel("p = P(1 | 0)")
    ax.grid(False)
    return im


def phase_diagram(times, cells, values, cell_counts, *, grid_steps, fast_steps, level, rate, short):
    """Two heat maps (standard and guideline init) of the median steps to the bigram predictor over the chains
    ``cells`` of the grid ``values`` x ``values`` (``times`` from ``guideline_claims.grid_times``), and every
    per-chain count of ``cell_counts`` ({(claim name, chain): (k, n, family)}, labelled by ``short[claim name]``)
    with its Wilson interval (Bonferroni over the claim's chains) against ``rate``."""
    cells, values = [tuple(c) for c in cells], [float(v) for v in values]
    if set(short) < {name for name, _ in cell_counts}:
        raise ValueError("short must label every claim of cell_counts")
    fig, axes = plt.subplots(1, 3, figsize=(15.5, 4.6), gridspec_kw={"width_ratios": [1, 1, 1.15]},
                             layout="constrained")
    for ax, init in zip(axes[:2], ("standard", "guideline")):
        im = _grid_panel(ax, times[init], cells, values, grid_steps, fast_steps)
        ax.set_title(f"{init} init: steps to bigram ({times[init].shape[1]} stored runs per chain)", fontsize=10)
    fig.colorbar(im, ax=axes[1], label=f"median steps until c-hat/c* > {level:g} for good", shrink=0.9)
    rows = list(cell_counts)
    k_arr, n_arr, fam = (np.array([cell_counts[r][i] for r in rows]) for i in range(3))
    lo, hi = np.array([inference.wilson_interval(k, n, inference.wilson_lower_z(0.05, int(f)))
                       for k, n, f in zip(k_arr, n_arr, fam)]).T
    bx, frac = axes[2], k_arr / n_arr
    bx.errorbar(frac, np.arange(len(rows)), xerr=np.clip([frac - lo, hi - frac], 0, None), fmt="o",
                color=plotting.NEUTRAL, capsize=3)
    bx.axvline(rate, color=plotting.NEUTRAL, ls="--", lw=0.8)
    bx.set_yticks(range(len(rows)), [f"{short[name]} ({c[0]:g}, {c[1]:g}): {k}/{n}"
                                     for (name, c), k, n in zip(rows, k_arr, n_arr)], fontsize=7)
    bx.invert_yaxis()
    bx.set_xlim(-0.02, 1.02)
    bx.set_xlabel("fraction of runs (Wilson interval, Bonferroni per claim)")
    bx.set_title("One count per chain and claim")
    fig.suptitle("How long training takes to reach the bigram predictor, over chains (stored runs; beyond the paper)")
    return fig


def trap_probability(sigmas, trapped, canon, fine, *, title):
    """The full model's trapped fraction per sigma (``trapped``: booleans, sigma x seeds) with 95 % Wilson bars,
    the canonical energy rule's curves over the scales ``fine`` and the integrated trapped fractions (``canon``
    from ``guideline_canonical.canonical_trap`` with ``fine``), and the bound Pr(w0 > 0) = 1/2."""
    trapped = np.asarray(trapped, dtype=bool)
    if trapped.shape[0] != len(sigmas):
        raise ValueError(f"trapped must have one row per sigma, got shape {trapped.shape}")
    fig, ax = plt.subplots(figsize=(6.6, 4.2))
    k_s, n = trapped.sum(axis=1), trapped.shape[1]
    lo, hi = inference.wilson_interval(k_s, np.full(len(sigmas), n))
    frac_s = k_s / n
    ax.errorbar(sigmas, frac_s, yerr=np.clip([frac_s - lo, hi - frac_s], 0, None), fmt="o", color=plotting.NEUTRAL,
                capsize=3, label=f"full model, SGD ({n} seeds per sigma, 95 % Wilson)")
    for j, (k, ls) in enumerate((("same", "-"), ("norm-matched", "--"))):
        ax.plot(fine, canon["fine_trap"][k], color=plotting.LOCAL, lw=1.6, ls=ls,
                label=r"canonical, $(e_0, w_0) \sim N(0, \sigma^2)$ (energy rule)" if k == "same"
                else "canonical, norm-matched (energy rule)")
        ax.plot(sigmas, canon["trap"][j], "x", color=plotting.LOCAL, ms=7,
                label="canonical, integrated" if j == 0 else None)
    ax.axhline(0.5, color=plotting.SADDLE, lw=1, ls=":", label=r"$\Pr(w_0 > 0) = 1/2$")
    ax.set_xscale("log")
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel(r"initialization scale $\sigma$")
    ax.set_ylabel("probability of the unigram trap")
    ax.set_title(title)
    ax.legend(loc="lower left", fontsize=8)
    return fig
