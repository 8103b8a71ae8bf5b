"""The closing chapter's static figures (``book/closing``), each a function returning the figure: the three invariant
sets with the drawn flows (:func:`invariant_sets`), the drift study (:func:`drift_study_figure`) and the prediction
study (:func:`prediction_figure`). The explorer's figure is :mod:`markovlib.beyond.drift_drawings`.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..book.inference import wilson_interval
from ..markov import drawings as markov_drawings
from ..richlazy import minimal_model
from ..topology import invariant_set
from .drift_checks import KINDS

COLOURS = {"gd": plotting.GLOBAL, "sgd": plotting.SADDLE, "adam": plotting.LOCAL, "gd+wd": plotting.NEUTRAL}


def invariant_sets(two, three, flows, p, q):
    """Left: Part I's energy contours (Lemma 1) with the critical loci of Thm 1 and the drawn flows (``flows``:
    ``drift_checks.drawn_flows``; ends as stars, green global, red unigram). Middle: Part II's hyperboloids
    a^2 - |w|^2 = delta in the plane (|w|, a) with its flows. Right: Part III's quadrics |w_k|^2 - a_k^2 = c_k of one
    neuron with the network's flow (pathological neurons red). Dashed: the level sets of the flows' starts."""
    missing = {"paths1", "ends1", "paths2", "path3"} - set(flows)
    if missing:
        raise ValueError(f"flows must come from drift_checks.drawn_flows; missing {sorted(missing)}")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), layout="constrained")
    ax = axes[0]
    markov_drawings.energy_contours(ax, p, q, e_lim=2.0, w_lim=(-2.0, 2.0), arrows=False)
    markov_drawings.critical_points(ax, p, q, e_lim=2.0, w_lim=(-2.0, 2.0), legend=False)
    for P, outc in zip(flows["paths1"], flows["ends1"]):
        ax.plot(P[:, 0], P[:, 1], color="k", lw=1.6)
        ax.plot(P[0, 0], P[0, 1], "o", color="k", ms=5)
        ax.plot(P[-1, 0], P[-1, 1], "*", ms=12, color=plotting.GLOBAL if outc == "global_min" else plotting.LOCAL)
    ax.set(xlabel="e", ylabel="w", title=f"Part I: contours of E(e, w), p = {p}, q = {q}")
    r_g, a_g = np.meshgrid(np.linspace(0, 2, 201), np.linspace(-2, 2, 201))
    levels = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0]
    level_colours = ["tab:brown" if v < 0 else ("k" if v == 0 else "tab:blue") for v in levels]
    D = minimal_model.conserved_delta(a_g.ravel(), r_g.ravel()[:, None] * np.eye(1, two.d), 1.0, 1.0).reshape(r_g.shape)
    Cg = invariant_set.neuron_balances(r_g.ravel()[:, None] * np.eye(1, three.d), a_g.ravel()).reshape(r_g.shape)
    path3 = flows["path3"]
    own_levels = (sorted(set(np.round(two.quantity(np.array([P[0] for P in flows["paths2"]])), 12))),
                  sorted(set(three.quantity(path3[:1])[0])))
    for ax, grid, own in zip(axes[1:], (D, Cg), own_levels):
        ax.clabel(ax.contour(r_g, a_g, grid, levels=levels, colors=level_colours, linewidths=0.9), fontsize=8)
        ax.contour(r_g, a_g, grid, levels=own, colors="0.4", linestyles="--", linewidths=0.8)
    for P in flows["paths2"]:
        axes[1].plot(np.linalg.norm(P[:, 1:], axis=1), P[:, 0], color="k", lw=1.6)
        axes[1].plot(np.linalg.norm(P[0, 1:]), P[0, 0], "o", color="k", ms=5)
    axes[1].set(xlabel="|w|", ylabel="a", title="Part II: hyperboloids a^2 - |w|^2 = delta")
    W_p, a_p = three.unpack(path3)
    c_net = three.quantity(path3[:1])[0]
    for k in range(three.width):
        col = plotting.LOCAL if c_net[k] < 0 else "k"
        axes[2].plot(np.linalg.norm(W_p[:, k], axis=1), a_p[:, k], color=col, lw=1.6,
                     label="pathological neuron (c_k < 0)" if c_net[k] < 0 and k == int(np.argmin(c_net)) else None)
        axes[2].plot(np.linalg.norm(W_p[0, k]), a_p[0, k], "o", color=col, ms=5)
    axes[2].set(xlabel="|w_k|", ylabel="a_k", title="Part III: quadrics |w_k|^2 - a_k^2 = c_k")
    if np.any(c_net < 0):
        axes[2].legend(loc="lower right")
    return fig


def drift_study_figure(drift, lrs, weight_decay, t_drift):
    """Per law the median drift against h for each optimizer (``drift``: ``drift_checks.drift_runs``), GD with decay
    against the decayed flow, and a dotted line of slope 1 through GD's drift at the smallest step."""
    if not drift:
        raise ValueError("drift must hold at least one law")
    fig, axes = plt.subplots(1, len(drift), figsize=(15, 4.4), layout="constrained", sharey=True)
    for ax, law in zip(np.atleast_1d(axes), drift):
        for k in KINDS:
            ax.loglog(lrs, drift[law][k], "o-", color=COLOURS[k],
                      label=k.upper() if k != "gd+wd" else f"GD, decay {weight_decay}")
        ax.loglog(lrs, drift[law]["wd_vs_flow"], "s--", color=COLOURS["gd+wd"], label="GD + decay vs decayed flow")
        ax.loglog(lrs, drift[law]["gd"][-1] * np.array(lrs) / lrs[-1], ":", color="0.5", label="slope 1")
        ax.set(xlabel="step size h", title=law)
    np.atleast_1d(axes)[0].set_ylabel(f"median max |Q(T) - Q(0)|, T = {t_drift}")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    return fig


def prediction_figure(count, pred_lrs, decays, n, agree_rate, h0):
    """Per law the fraction of the ``n`` initializations that end where predicted against the step size, per optimizer
    with 95 % Wilson bands (``count``: ``drift_checks.prediction_runs``), and on the right GD at ``h0`` against the
    weight decay."""
    laws = list(count)
    fig, axes = plt.subplots(1, len(laws) + 1, figsize=(18, 4.2), layout="constrained")
    for ax, law in zip(axes, laws):
        for k in ("gd", "sgd", "adam"):
            ks = np.array([count[law][(k, h, 0.0)] for h in pred_lrs])
            lo, hi = wilson_interval(ks, np.full(len(ks), n))
            ax.semilogx(pred_lrs, ks / n, "o-", color=COLOURS[k], label=k.upper())
            ax.fill_between(pred_lrs, lo, hi, color=COLOURS[k], alpha=0.15)
        ax.axhline(agree_rate, color="0.5", ls=":", label=f"agree_rate {agree_rate:g}")
        ax.set(ylim=(-0.03, 1.03), xlabel="step size h", title=law)
    axes[0].set_ylabel("fraction ending where predicted (95% Wilson band)")
    axes[0].legend(fontsize=8)
    for law, col in zip(laws, (plotting.GLOBAL, plotting.SADDLE, plotting.LOCAL)):
        ks = np.array([count[law][("gd", h0, lam)] for lam in decays])
        axes[-1].semilogx(decays, ks / n, "o-", color=col, label=law)
    axes[-1].axhline(agree_rate, color="0.5", ls=":")
    axes[-1].set(ylim=(-0.03, 1.03), xlabel="weight decay lambda", title=f"GD at h = {h0} with weight decay")
    axes[-1].legend(fontsize=8)
    return fig
