"""The figures of the chapter loss_landscape, headless: each function draws one figure and returns it.

* :func:`reduced_loss_figure`: g(c) with its minimum c* (the entropy rate) and c = 0 (H(pi)), one panel per chain.
* :func:`critical_loci_figure`: the critical points of Thm 1 on the loss contours (the loci of the paper's Fig. 1).
* :func:`axis_slices_figure`: slices of L - H(pi) across the w-axis at a local minimum, a maximum and the saddle.
* :func:`landscape_panels`: the explorer's static panels (``drawings.draw_landscape``) from several starts.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..book.formatting import fixed
from . import canonical, drawings
from .chain import MarkovChain

__all__ = ["reduced_loss_figure", "critical_loci_figure", "axis_slices_figure", "landscape_panels"]


def _pairs(pq):
    pq = [(float(p), float(q)) for p, q in pq]
    if not pq or any(not (0 < x < 1) for c in pq for x in c):
        raise ValueError(f"pq must hold chains (p, q) in (0, 1)^2, got {pq!r}")
    return pq


def _side(p, q):
    return f"p = {p}, q = {q}: p + q {'>' if p + q > 1 else '<'} 1"


def reduced_loss_figure(pq, c_lim=9.0):
    """g(c) on [-c_lim, c_lim] for each chain, with the yardsticks, c* (entropy rate) and c = 0 (H(pi))."""
    pq = _pairs(pq)
    fig, axes = plt.subplots(1, len(pq), figsize=(5 * len(pq), 3.6), sharey=True, squeeze=False)
    cgrid = np.linspace(-c_lim, c_lim, 721)
    for ax, (p, q) in zip(axes[0], pq):
        chain, cs = MarkovChain(p, q), canonical.c_star(p, q)
        ax.plot(cgrid, canonical.reduced_loss(cgrid, p, q), color="k", lw=1.6, label="g(c)")
        plotting.yardsticks(ax, chain.entropy_rate, chain.marginal_entropy)
        ax.plot(cs, chain.entropy_rate, "*", color=plotting.GLOBAL, ms=14, mec="k", label=f"c* = {fixed(cs, 3)}")
        ax.plot(0, chain.marginal_entropy, "o", color=plotting.LOCAL, ms=8, mec="k", label="c = 0 (the w-axis)")
        ax.set(xlabel="coefficient c", title=f"p = {p}, q = {q} (p + q {'>' if p + q > 1 else '<'} 1)")
        ax.legend(loc="upper center")
    axes[0, 0].set_ylabel("reduced loss g(c) (nats)")
    fig.suptitle("The reduced loss is convex in c: minimum at c*, value H(pi) at c = 0")
    return fig


def critical_loci_figure(pq):
    """The critical loci of Thm 1 (``drawings.critical_points``) on the loss contours, one panel per chain."""
    pq = _pairs(pq)
    fig, axes = plt.subplots(1, len(pq), figsize=(5.75 * len(pq), 4.8), squeeze=False)
    for ax, (p, q) in zip(axes[0], pq):
        drawings.loss_contours(ax, p, q, colorbar=ax is axes[0, -1])
        drawings.critical_points(ax, p, q, legend=False)
        ax.set_title(_side(p, q))
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, bbox_to_anchor=(0.45, -0.06))
    fig.suptitle("Critical points of L(e, w) (Thm 1; the loci of the paper's Fig. 1 (a), (c))")
    return fig


def axis_slices_figure(pq, e_lim=0.6):
    """Slices e -> L(e, w) - H(pi) at w = 0, -1.2, the saddle and the saddle +- 0.1, coloured by
    ``canonical.classify`` of (0, w), one panel per chain."""
    pq = _pairs(pq)
    w_sad = canonical.W_SADDLE
    fig, axes = plt.subplots(1, len(pq), figsize=(5 * len(pq), 3.6), sharey=True, squeeze=False)
    es = np.linspace(-e_lim, e_lim, 241)
    colours = {"local_min": plotting.LOCAL, "local_max": plotting.MAXIMA, "saddle": plotting.SADDLE}
    for ax, (p, q) in zip(axes[0], pq):
        H_pi = MarkovChain(p, q).marginal_entropy
        for w0, ls in ((0.0, "-"), (-1.2, "--"), (w_sad, ":"), (w_sad + 0.1, "-."), (w_sad - 0.1, (0, (1, 3)))):
            kind = canonical.classify(0.0, w0, p, q)
            label = f"w = {w0:.3f} ({kind.replace('_', ' ')})" if abs(w0 - w_sad) > 0.01 or kind == "saddle" else None
            if abs(abs(w0 - w_sad) - 0.1) < 1e-9:
                label = f"w = w_sad {'+' if w0 > w_sad else '-'} 0.1 ({kind.replace('_', ' ')})"
            ax.plot(es, canonical.loss(es, w0, p, q) - H_pi, color=colours[kind], ls=ls, lw=1.6, label=label)
        ax.axhline(0, color="k", lw=0.6)
        ax.set(xlabel="e (w fixed)", title=_side(p, q))
        ax.legend(fontsize=7.5)
    axes[0, 0].set_ylabel("L(e, w) - H(pi) (nats)")
    fig.suptitle("Across the w-axis: minima, maxima and the saddle (Thm 1)")
    return fig


def landscape_panels(p, q, inits):
    """``drawings.draw_landscape`` for the chain (p, q) from each start of ``inits``, side by side. Returns
    ``(figure, outputs, text)``: the outputs of ``draw_landscape`` and a line per panel with the predicted limit and
    the point reached."""
    (p, q), = _pairs([(p, q)])
    inits = [(float(e0), float(w0)) for e0, w0 in inits]
    if not inits:
        raise ValueError("inits must hold at least one start (e0, w0)")
    fig, axes = plt.subplots(1, len(inits), figsize=(6.5 * len(inits), 6.0), layout="constrained", squeeze=False)
    outs = [drawings.draw_landscape(p, q, e0, w0, ax=ax) for ax, (e0, w0) in zip(axes[0], inits)]
    text = "\n".join(f"p = {p}, q = {q}, start ({e0:g}, {w0:g}): predicted {o['predicted']} at "
                     f"({fixed(o['limit'][0], 3)}, {fixed(o['limit'][1], 3)}), reached {o['reached']} at "
                     f"({fixed(o['reached_point'][0], 3)}, {fixed(o['reached_point'][1], 3)})"
                     for (e0, w0), o in zip(inits, outs))
    return fig, outs, text
