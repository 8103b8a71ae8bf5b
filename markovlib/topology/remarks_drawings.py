"""The figures of the chapter ``topo_beyond_remarks`` (Nurisso et al., NeurIPS 2024, App. E, F and G), each returning
its matplotlib figure.

* :func:`draw_one_neuron` -- one neuron with one input and one output without the bias (two hyperbolas) and with it
  (Prop. 5: S^1 x R for c > 0, S^0 x R^2 for c < 0), the paper's Fig. 2a with and without biases;
* :func:`draw_width` -- App. F's P against the width with the Monte Carlo intervals, and the map of widths where P
  falls (Fig. 5 as curves in l);
* :func:`draw_outputs` -- App. G for several outputs: a_1 over time (e outputs, one output, gradient descent on a
  sample) and the output vectors around the ball ||a||^2 < -c.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..numerics import checks
from . import invariant_set

__all__ = ["draw_one_neuron", "draw_width", "draw_outputs"]


def draw_one_neuron(c_abs):
    """One neuron, d = e = 1, balance +-``c_abs``: (w, a) without the bias, and the surfaces in (w, b, a) with it."""
    c_abs = checks.positive_real("c_abs", c_abs)
    fig = plt.figure(figsize=(13, 4.4), layout="constrained")
    ax = fig.add_subplot(1, 3, 1)
    ww, aa = np.linspace(-2, 2, 401), np.linspace(-2, 2, 201)
    for sgn in (1, -1):
        ax.plot(sgn * np.sqrt(c_abs + aa**2), aa, color=plotting.GLOBAL, label="$c > 0$" if sgn == 1 else None)
        ax.plot(ww, sgn * np.sqrt(c_abs + ww**2), color=plotting.LOCAL, label="$c < 0$" if sgn == 1 else None)
    ax.set(xlabel="$w$", ylabel="$a$", title="no bias, d = e = 1: two pieces each")
    ax.legend()
    phi = np.linspace(0, 2 * np.pi, 61)
    ax = fig.add_subplot(1, 3, 2, projection="3d")
    A_, Phi = np.meshgrid(np.linspace(-1.5, 1.5, 31), phi)
    r = np.sqrt(c_abs + A_**2)
    ax.plot_surface(r * np.cos(Phi), r * np.sin(Phi), A_, color=plotting.GLOBAL, alpha=0.5, linewidth=0)
    ax.set(xlabel="$w$", ylabel="$b$", zlabel="$a$", title="bias, $c > 0$: one piece, $S^1\\times\\mathbb{R}$")
    ax = fig.add_subplot(1, 3, 3, projection="3d")
    Rr, Phi = np.meshgrid(np.linspace(0, 1.5, 21), phi)
    for sgn in (1, -1):
        ax.plot_surface(Rr * np.cos(Phi), Rr * np.sin(Phi), sgn * np.sqrt(c_abs + Rr**2), color=plotting.LOCAL,
                        alpha=0.5, linewidth=0)
    ax.set(xlabel="$w$", ylabel="$b$", zlabel="$a$", title="bias, $c < 0$: two pieces, $S^0\\times\\mathbb{R}^2$")
    fig.suptitle(f"One neuron with one input and one output, |c| = {c_abs}: the bias joins the input weights "
                 "(the paper's Fig. 2a, with and without biases)")
    return fig


def draw_width(mc, n_mc, falls, *, l_asym, l_grid_max):
    """Top: P against l (log axis to ``l_asym``) for d in 1, 2, 3, 5, 10, 20 (those in ``falls``), Kaiming and
    Xavier, with the Monte Carlo cells ``mc`` (k, low, high, P) of ``n_mc`` draws as dots with intervals. Bottom:
    the map ``falls`` ((scheme, d) -> P(l + 1) < P(l) for l <= ``l_grid_max``), green where P falls."""
    n_mc, l_grid_max = checks.positive_int("n_mc", n_mc), checks.positive_int("l_grid_max", l_grid_max)
    dims = sorted({d for _, d in falls})
    fig, axes = plt.subplots(2, 2, figsize=(13, 8.6), layout="constrained")
    l_plot = np.unique(np.round(np.logspace(0, np.log10(l_asym), 300)).astype(int))
    show = [d_ for d_ in (1, 2, 3, 5, 10, 20) if d_ <= dims[-1]]
    cmap = plt.get_cmap("viridis")
    for col, scheme in enumerate(("kaiming", "xavier")):
        ax = axes[0, col]
        for i, d_ in enumerate(show):
            colour = cmap(i / max(1, len(show) - 1))
            ax.semilogx(l_plot, invariant_set.obstruction_probability(d_, l_plot, scheme), color=colour,
                        label=f"d = {d_}")
            for (s_, dd, l_), (k, lo, hi, _) in mc.items():
                if s_ == scheme and dd == d_:
                    ax.errorbar([l_], [k / n_mc], yerr=[[k / n_mc - lo], [hi - k / n_mc]], fmt="o", color=colour, ms=5,
                                capsize=3)
        if scheme == "kaiming":
            ax.axhline(1 - np.exp(-1), color=plotting.NEUTRAL, ls="--", lw=1, label="$1 - 1/e$ (d = 2 limit)")
        ax.axhline(1.0, color=plotting.NEUTRAL, ls=":", lw=1)
        ax.set(xlabel="width l", ylabel="P[obstruction]",
               title=f"{scheme.capitalize()} normal: formula (lines), Monte Carlo (dots, family-wise intervals)")
        ax.legend(fontsize=8, ncol=2)
        ax = axes[1, col]
        ax.imshow(np.array([falls[scheme, d_] for d_ in dims]), aspect="auto", origin="lower", interpolation="nearest",
                  extent=(0.5, l_grid_max + 0.5, 0.5, dims[-1] + 0.5),
                  cmap=plt.matplotlib.colors.ListedColormap([plotting.LOCAL, plotting.GLOBAL]), vmin=0, vmax=1)
        ax.set_xscale("log")
        ax.set(xlabel="width l", ylabel="input dimension d",
               title=f"{scheme.capitalize()}: P falls from l to l + 1 (green) or rises (red)")
    fig.suptitle("Sec. 7 against App. F: the obstruction probability against the width (the paper's Fig. 5 as curves "
                 "in l)")
    return fig


def draw_outputs(runs, *, d, e, c, horizon, lr, show=6):
    """The first ``show`` runs of :func:`markovlib.topology.outputs_checks.flow_runs` (input dimension ``d``, ``e``
    outputs, balance ``c`` < 0, to ``horizon``, gradient-descent step ``lr``): a_1 against t, and (a_1, a_2)."""
    if not runs:
        raise ValueError("runs must be a non-empty list of flow runs")
    c, horizon, lr = float(c), checks.positive_real("horizon", horizon), checks.positive_real("lr", lr)
    if not c < 0:
        raise ValueError(f"c must be < 0 (a pathological neuron), got {c!r}")
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6), layout="constrained")
    rc = np.sqrt(-c)
    for i, r in enumerate(runs[:show]):
        first = i == 0
        axes[0].plot(r["tt"], r["Z"][d], color=plotting.GLOBAL, lw=1.4,
                     label=f"$a_1$, e = {e} (flow)" if first else None)
        axes[0].plot(r["tt"], r["Z1"][d], color=plotting.LOCAL, lw=1.4, label="$a_1$, e = 1 (flow)" if first else None)
        axes[0].plot(np.arange(r["a1_gd"].size) * 10 * lr, r["a1_gd"], ".", color=plotting.NEUTRAL, ms=2,
                     label=f"$a_1$, e = {e} (package GD on a sample)" if first else None)
        axes[0].plot(r["t_down"], np.zeros_like(r["t_down"]), "kx", ms=8, label="zero event" if first else None)
        axes[1].plot(r["Z"][d], r["Z"][d + 1], color=plotting.GLOBAL, lw=1.4)
        axes[1].plot(r["Z"][d, 0], r["Z"][d + 1, 0], "o", color=plotting.GLOBAL, ms=4)
    for s_ in (1, -1):
        axes[0].axhline(s_ * rc, color=plotting.NEUTRAL, ls=":", lw=1, label="$\\pm\\sqrt{-c}$" if s_ == 1 else None)
    axes[0].axhline(0, color="k", lw=0.6)
    axes[0].set_xscale("symlog", linthresh=1.0)
    axes[0].set(xlim=(0, horizon), xlabel="t (linear to 1, then logarithmic)", ylabel="first output weight $a_1$",
                title="one output: stuck above $\\sqrt{-c}$; several outputs: through 0")
    axes[0].legend(fontsize=8)
    phi = np.linspace(0, 2 * np.pi, 200)
    axes[1].fill(rc * np.cos(phi), rc * np.sin(phi), color=plotting.LOCAL, alpha=0.25,
                 label="$\\|a\\|^2 < -c$: never entered")
    axes[1].axvline(0, color="k", lw=0.6)
    axes[1].axhline(0, color="k", lw=0.6)
    axes[1].set_aspect("equal")
    axes[1].set(xlabel="$a_1$", ylabel="$a_2$", title=f"output vectors (first two of e = {e}) go around the ball")
    axes[1].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"App. G for several outputs: a pathological neuron (c = {c}) changes the sign of $a_1$")
    return fig
