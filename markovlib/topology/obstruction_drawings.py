"""The figures of the chapter ``topo_obstruction`` (Nurisso et al., NeurIPS 2024, Fig. 3 and Fig. 5), each returning
its matplotlib figure.

* :func:`draw_toy` -- the Sec. 6 toy: each neuron's (||w_k||, a_k) path of seed 0 on its quadric, obstructed and
  unobstructed, and every run's loss against the bound 7/12 (the paper's Fig. 3);
* :func:`draw_fig5` -- App. F's probability of an obstruction against d, per width, with the Monte Carlo cells (the
  paper's Fig. 5).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..numerics import checks
from . import invariant_set

__all__ = ["draw_toy", "draw_fig5"]


def draw_toy(runs, *, c_abs, bound):
    """``runs`` from :func:`markovlib.topology.toy_checks.arm_runs` (seed 0 with its path saved), balances +-``c_abs``,
    the loss bound ``bound`` (0.5 mean F^2)."""
    c_abs = checks.positive_real("c_abs", c_abs)
    if set(runs) != {"obstructed", "unobstructed, paper's draw", "unobstructed, active start"}:
        raise ValueError(f"runs must hold the three arms, got {sorted(runs)}")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3), layout="constrained")
    ww = np.linspace(0, 2.0, 200)
    ww2 = ww[ww >= np.sqrt(c_abs)]
    show = {"obstructed": plotting.LOCAL, "unobstructed, active start": plotting.GLOBAL}
    for j, ax in enumerate(axes[:2]):
        for sgn in (1, -1):
            ax.plot(ww, sgn * np.sqrt(ww**2 + c_abs), color=plotting.NEUTRAL, lw=0.8,
                    label=f"quadric $c = -{c_abs:g}$" if sgn == 1 else None)
            ax.plot(ww2, sgn * np.sqrt(ww2**2 - c_abs), color=plotting.NEUTRAL, lw=0.8, ls="--",
                    label=f"quadric $c = +{c_abs:g}$" if sgn == 1 else None)
        for k, col in show.items():
            res = runs[k][0].res
            nw = np.linalg.norm(res.W1_path[:, j], axis=1)
            ax.plot(nw, res.W2_path[:, j], color=col, lw=2, label=f"{k} (seed 0)")
            ax.plot(nw[0], res.W2_path[0, j], "o", color=col)
        ax.axhline(0, color="k", lw=0.6)
        ax.set(xlabel=f"$\\|w_{j + 1}\\|$", ylabel=f"$a_{j + 1}$", title=f"neuron {j + 1}")
        ax.legend(fontsize=8)
    for k, col in (("obstructed", plotting.LOCAL), ("unobstructed, paper's draw", plotting.SADDLE),
                   ("unobstructed, active start", plotting.GLOBAL)):
        for i, r in enumerate(runs[k]):
            axes[2].semilogy(r.res.losses, color=col, alpha=0.5, label=k if i == 0 else None)
    axes[2].axhline(bound, color=plotting.NEUTRAL, ls=":", label="7/12 (bound for $a_k > 0$)")
    axes[2].set(xlabel="gradient step", ylabel="MSE", title=f"loss curves, {len(runs['obstructed'])} seeds per arm")
    axes[2].legend(fontsize=8)
    fig.suptitle("The Sec. 6 toy: trajectories on the quadrics and losses (the paper's Fig. 3)")
    return fig


def draw_fig5(mc, n_mc, dims, widths, max_dim=30):
    """P against d = 1..``max_dim`` for each l in ``widths`` (Kaiming and Xavier), and the Monte Carlo cells ``mc``
    ((scheme, d, l) -> (k, low, high, P) of :func:`markovlib.topology.width_checks.monte_carlo`, ``n_mc`` draws each)
    at d in ``dims`` as dots with their intervals (frequencies below 1e-4 drawn at 1e-4)."""
    max_dim, n_mc = checks.positive_int("max_dim", max_dim), checks.positive_int("n_mc", n_mc)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
    dd = np.arange(1, max_dim + 1)
    for ax, scheme in zip(axes, ("kaiming", "xavier")):
        for i, w in enumerate(widths):
            col = plt.cm.viridis(i / max(1, len(widths) - 1))
            ax.semilogy(dd, invariant_set.obstruction_probability(dd, w, scheme), color=col, label=f"l = {w} (formula)")
            pts = [mc[scheme, d, w] for d in dims]
            freq = [max(p[0] / n_mc, 1e-4) for p in pts]
            ax.errorbar(list(dims), freq, yerr=[[f - max(p[1], 1e-5) for f, p in zip(freq, pts)],
                                                [p[2] - f for f, p in zip(freq, pts)]], fmt="o", color=col, ms=4)
        ax.set(xlabel="input dimension d", ylabel="P[obstruction]",
               title=f"{scheme.capitalize()} normal: formula (lines), Monte Carlo (dots)")
        ax.legend()
    fig.suptitle("Probability of at least one pathological neuron at initialization (the paper's Fig. 5)")
    return fig
