"""The figures of the chapters gradient_flow_energy and loss_landscape, headless: each function draws one figure
from the results of ``energy_basins``, ``energy_small`` and ``energy_bias`` and returns it (the chapter shows it).

* :func:`basin_panel`: one basin map (green: global minimum, red: local, grey: other) with the saddle asymptotes.
* :func:`fig1`: the paper's Fig. 1, energy contours (a, c) and integrated basins (b, d).
* :func:`free_bias_maps`: the free-bias basins with the disagreements with the reduced theorems.
* :func:`small_init_figure`, :func:`loglog_figure`: eq-p-local against the integrated flows; a log-log comparison of
  a measurement with a law (the drift of gradient descent, the i.i.d. flow).
* :func:`energy_panels`: the explorer's static panels, one start under several chains.
* :func:`flow_explorer`: the rendered book's precomputed explorer of a flow drawing (``draw_energy``,
  ``draw_landscape``) on the chapters' slider grid, with the count of frames that end where predicted.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import explorers, plotting
from ..book.formatting import fixed
from . import drawings
from .canonical import W_SADDLE

__all__ = ["basin_panel", "fig1", "free_bias_maps", "small_init_figure", "loglog_figure", "energy_panels",
           "flow_explorer", "STATIC_GRID"]

_CMAP = plt.matplotlib.colors.ListedColormap([plotting.GLOBAL, plotting.LOCAL, plotting.NEUTRAL])


def basin_panel(ax, grid, outcome, grid_box, lw=2.0):
    """Draw the outcomes (an array over ``grid`` x ``grid``, e0 on the first axis) of flows as a basin map on ``ax``,
    with the saddle asymptotes {E = E_sad} (Lemma 12) in yellow."""
    grid, outcome = np.asarray(grid, dtype=float), np.asarray(outcome)
    if outcome.shape != (grid.size, grid.size):
        raise ValueError(f"outcome must have shape ({grid.size}, {grid.size}), got {outcome.shape}")
    if not grid_box > 0:
        raise ValueError(f"grid_box must be > 0, got {grid_box!r}")
    code = np.select([outcome == "global_min", outcome == "local_min"], [0, 1], 2)
    ax.pcolormesh(grid, grid, code.T, cmap=_CMAP, vmin=-0.5, vmax=2.5, alpha=0.45, shading="nearest")
    ws = np.linspace(-grid_box, -1e-9, 2000)
    ea = drawings.saddle_asymptotes(ws)
    ax.plot(ea, ws, color=plotting.SADDLE, lw=lw, label=r"saddle asymptotes $E = E_{sad}$")
    ax.plot(-ea, ws, color=plotting.SADDLE, lw=lw)
    return ax


def fig1(pq, grid, basins, grid_box):
    """The paper's Fig. 1 for the two chains ``pq``: energy contours with the flow and the critical loci (a, c), and
    the basins ``basins[(p, q)][0].outcome`` of integrated flows on ``grid`` (b, d)."""
    if len(pq) != 2:
        raise ValueError(f"pq must hold the two chains of Fig. 1, got {pq!r}")
    fig, axes = plt.subplots(2, 2, figsize=(11, 10.5), layout="constrained")
    for row, (p, q) in enumerate(pq):
        tag, ax = "ab" if row == 0 else "cd", axes[row, 0]
        drawings.energy_contours(ax, p, q, e_lim=grid_box, w_lim=(-grid_box, grid_box))
        drawings.critical_points(ax, p, q, e_lim=grid_box, w_lim=(-grid_box, grid_box), legend=False)
        ax.set_title(f"({tag[0]}) energy contours and flow, p = {p}, q = {q}")
        ax.legend(loc="lower right", fontsize=7, frameon=True, framealpha=0.85)
        ax, res = axes[row, 1], basins[(p, q)][0]
        basin_panel(ax, grid, res.outcome, grid_box, lw=2.2)
        ax.axhline(0, color="k", lw=0.8, ls=":", label="w = 0 (energy barrier)")
        ax.plot(0, W_SADDLE, "o", color=plotting.SADDLE, mec="k", ms=7, label="saddle")
        for name, colour in (("I* (to a global minimum)", plotting.GLOBAL),
                             ("I_min (to a local minimum)", plotting.LOCAL)):
            ax.fill_between([], [], color=colour, alpha=0.45, label=name)
        ax.set(xlim=(-grid_box, grid_box), ylim=(-grid_box, grid_box), xlabel="e (embedding scale)",
               ylabel="w (feed-forward scale)", title=f"({tag[1]}) basins of {res.outcome.size} integrated flows, "
               f"p = {p}, q = {q}")
        ax.legend(loc="lower right", fontsize=7, frameon=True, framealpha=0.85)
        ax.grid(False)
    fig.suptitle("Fig. 1 of Makkuva et al. (2024), reproduced")
    return fig


def free_bias_maps(pq, grid, free, grid_box):
    """Free-bias basins (``energy_bias.free_bias_grids``'s ``free``) for the chains ``pq`` and both initial biases,
    with crosses where the flow differs from the reduced theorems read off at t = 0."""
    fig, axes = plt.subplots(len(pq), 2, figsize=(10, 4.75 * len(pq)), layout="constrained", sharex=True,
                             sharey=True, squeeze=False)
    E0, W0 = np.meshgrid(grid, grid, indexing="ij")
    for row, (p, q) in enumerate(pq):
        for col, name in enumerate(("b*", "0")):
            ax = axes[row, col]
            r, _, agree, _ = free[(p, q, name)]
            basin_panel(ax, grid, r.outcome, grid_box)
            ax.plot(E0[~agree], W0[~agree], "x", color="k", ms=6, label="differs from Thms 2/8")
            ax.set(title=f"p = {p}, q = {q}, b0 = {name}: free-bias flows", xlabel="e0", ylabel="w0")
            ax.legend(loc="lower right", fontsize=7)
    fig.suptitle(f"Gradient flow in (e, w, b) on a {grid.size} x {grid.size} grid: basins vs the b*-reduced theorems")
    return fig


def small_init_figure(sigmas, pq, mc, exact):
    """eq-p-local (``exact(sigma, above_one)``) against the integrated flows ``mc[(sigma, p, q)]`` = (exact,
    criterion, share, lo, hi) of ``energy_small.small_init``, with their Wilson intervals."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    sg = np.geomspace(0.02, 10, 80)
    for above, colour, name in ((True, plotting.LOCAL, "p + q > 1"), (False, plotting.GLOBAL, "p + q < 1")):
        ax.plot(sg, [exact(s, above) for s in sg], color=colour, lw=1.8, label=f"energy criterion (eq-p-local), {name}")
    for j, (p, q) in enumerate(pq):
        cells = np.array([mc[(s, p, q)] for s in sigmas])
        err = np.clip(np.stack([cells[:, 2] - cells[:, 3], cells[:, 4] - cells[:, 2]]), 0.0, None)  # k = 0 or n
        ax.errorbar(np.array(sigmas) * (1 + 0.04 * (j - 1.5)), cells[:, 2], yerr=err, fmt="os^D"[j % 4], ms=4.5,
                    color="k", mfc="white" if p + q < 1 else "k", capsize=2, lw=0.8,
                    label=f"integrated flows, p = {p}, q = {q} (p + q = {p + q:.1f})")
    ax.set(xscale="log", xlabel=r"initialization scale $\sigma$ of $(e_0, w_0) \sim N(0, \sigma^2 I)$",
           ylabel="P(flow ends in a bad local minimum)",
           title="Small initialization: bad minimum for p + q > 1, global for p + q < 1")
    ax.legend(fontsize=7.5, loc="center left")
    return fig


def loglog_figure(x, measured, law, *, labels, xlabel, ylabel, title, marker="o"):
    """A measurement (``marker``, black) against a law (a line) on log-log axes; ``labels`` = (measured, law)."""
    x, measured, law = (np.abs(np.asarray(a, dtype=float)) for a in (x, measured, law))
    if not x.shape == measured.shape == law.shape:
        raise ValueError(f"x, measured and law must have one shape, got {x.shape}, {measured.shape}, {law.shape}")
    fig, ax = plt.subplots(figsize=(5.6, 4))
    ax.loglog(x, measured, marker, color="k", label=labels[0])
    ax.loglog(x, law, "-" if marker == "o" else "--", color=plotting.NEUTRAL if marker == "o" else plotting.GLOBAL,
              label=labels[1])
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend()
    return fig


def energy_panels(pq, init):
    """The explorer's static panels: ``drawings.draw_energy`` for each chain of ``pq`` from the same start ``init``,
    side by side. Returns ``(figure, outputs, text)``: the outputs of ``draw_energy`` and a line per panel naming the
    start's energy, the predicted limit and the point reached."""
    pq = [(float(p), float(q)) for p, q in pq]
    if not pq or len(init) != 2:
        raise ValueError(f"pq must hold at least one chain and init must be a pair (e0, w0), got {pq!r}, {init!r}")
    fig, axes = plt.subplots(1, len(pq), figsize=(6.5 * len(pq), 6.2), layout="constrained", squeeze=False)
    outs = [drawings.draw_energy(p, q, *init, ax=ax) for ax, (p, q) in zip(axes[0], pq)]
    text = "\n".join(f"p = {p}, q = {q}: E0 = {fixed(o['energy0'], 4)}; predicted {o['predicted']} at "
                     f"({fixed(o['limit'][0], 3)}, {fixed(o['limit'][1], 3)}), reached {o['reached']} at "
                     f"({fixed(o['reached_point'][0], 3)}, {fixed(o['reached_point'][1], 3)})"
                     for (p, q), o in zip(pq, outs))
    return fig, outs, text


STATIC_GRID = {"p": [0.2, 0.9], "q": [0.3, 0.9], "e0": [0.25, 0.75, 1.25], "w0": [-1.5, -0.75, 0.0, 0.75]}


def flow_explorer(draw, name, title):
    """The rendered book's explorer of ``draw`` (``drawings.draw_energy`` or ``draw_landscape``): 48 frames of 480 x
    330 pixels on ``STATIC_GRID`` (chains on both sides of p + q = 1, starts with e0 > 0: e -> -e mirrors the
    picture), each naming where its flow ended. Returns ``(explorer, agreeing, frames)``, the frames whose flow
    ended where the energy predicts."""
    static = explorers.static_explorer(
        draw, STATIC_GRID, name=name, title=title, value=lambda out: f"reached {out['reached']} (predicted "
        f"{out['predicted']})", initial={"p": 0.9, "q": 0.9, "e0": 0.75, "w0": -0.75}, progress=False)
    return (static, *drawings.frames_agree(static.results))
