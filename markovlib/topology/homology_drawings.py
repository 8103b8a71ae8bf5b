"""The figures of the chapter ``topo_homology`` (Nurisso et al., NeurIPS 2024), each returning its matplotlib figure.

* :func:`draw_quadrics` -- the quadric of one neuron at d = 2, e = 1 for c > 0, c = 0 and c < 0 (Fig. 2a, and the
  cone);
* :func:`draw_prop3` -- the output weights of one Prop. 3 run (pathological ones stay positive) and every run's loss;
* :func:`draw_component_counts` -- connected components 2^(l_-) (Cor. 2) against effective components l_- + 1
  (Cor. 3), with the enumerated counts (Fig. 2b, counted).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting
from ..numerics import checks
from . import invariant_set

__all__ = ["draw_quadrics", "draw_prop3", "draw_component_counts"]


def draw_quadrics(rho):
    """Q(c) = {||w||^2 - a^2 = c} in (w_1, w_2, a) for c = rho^2, 0, -rho^2, drawn to radius 1.2 rho."""
    rho = checks.positive_real("rho", rho)
    fig = plt.figure(figsize=(15, 4.6), layout="constrained")
    panels = ((rho**2, "$c > 0$: one component, one loop ($S^1\\times\\mathbb{R}$)", plotting.GLOBAL),
              (0.0, "$c = 0$: the cone, contractible", plotting.SADDLE),
              (-(rho**2), "$c < 0$: two components ($S^0\\times\\mathbb{R}^2$)", plotting.LOCAL))
    phi = np.linspace(0, 2 * np.pi, 61)
    for j, (cc, title, col) in enumerate(panels):
        ax = fig.add_subplot(1, 3, j + 1, projection="3d")
        if cc > 0:
            A_, Phi = np.meshgrid(np.linspace(-1.2 * rho, 1.2 * rho, 41), phi)
            r = np.sqrt(cc + A_**2)
            ax.plot_surface(r * np.cos(Phi), r * np.sin(Phi), A_, color=col, alpha=0.5, linewidth=0)
        else:
            Rr, Phi = np.meshgrid(np.linspace(0, 1.2 * rho, 25), phi)
            for sign in (1, -1):
                ax.plot_surface(Rr * np.cos(Phi), Rr * np.sin(Phi), sign * np.sqrt(-cc + Rr**2), color=col, alpha=0.5,
                                linewidth=0)
        ax.set(xlabel="$w_1$", ylabel="$w_2$", zlabel="$a$", title=title)
    fig.suptitle(f"The quadric of one neuron, d = 2, e = 1, |c| = {rho**2:.2f} (the paper's Fig. 2a, and the cone)")
    return fig


def draw_prop3(runs, show, *, n_patho, c_train):
    """Left: the output weights of run ``show`` of :func:`markovlib.topology.homology_checks.prop3_runs` (the first
    ``n_patho`` pathological, in red) with the bound sqrt(c_train); right: the loss of every run."""
    if show not in runs:
        raise ValueError(f"show must be a key of runs, got {show!r}")
    n_patho, c_train = checks.positive_int("n_patho", n_patho), checks.positive_real("c_train", c_train)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
    a = runs[show]["a"]
    for k in range(a.shape[1]):
        axes[0].plot(np.arange(a.shape[0]), a[:, k], color=plotting.LOCAL if k < n_patho else plotting.GLOBAL,
                     label=("pathological ($c_k<0$)" if k == 0 else "non-pathological ($c_k>0$)" if k == n_patho
                            else None))
    axes[0].axhline(np.sqrt(c_train), color=plotting.NEUTRAL, ls=":", label="$\\sqrt{-c_k}$: Prop. 3 bound")
    axes[0].axhline(0, color="k", lw=0.8)
    axes[0].set(xlabel="gradient step", ylabel="output weight $a_k$",
                title=f"d = {show[0]}, seed {show[1]}: red weights stay positive")
    axes[0].legend()
    for v in runs.values():
        axes[1].semilogy(v["loss"], color=plotting.NEUTRAL, alpha=0.4)
    axes[1].set(xlabel="gradient step", ylabel="training MSE", title=f"all {len(runs)} runs")
    return fig


def draw_component_counts(enumerated, max_lm=10):
    """2^(l_-) and l_- + 1 against l_- = 1..``max_lm`` (e = 1, d > 1), and the pairs (l_-, classes) ``enumerated``."""
    max_lm = checks.positive_int("max_lm", max_lm)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    lms = np.arange(1, max_lm + 1)
    ax.semilogy(lms, [invariant_set.n_components(2, 1, [-1.0] * k) for k in lms], "o-", color=plotting.LOCAL,
                label="connected components $2^{l_-}$ (Cor. 2)")
    ax.semilogy(lms, [invariant_set.n_effective_components(2, 1, [-1.0] * k) for k in lms], "s-", color=plotting.GLOBAL,
                label="effective components $l_- + 1$ (Cor. 3)")
    done = sorted(set(enumerated))
    ax.plot([x for x, _ in done], [y for _, y in done], "kx", ms=9, label="enumerated (this chapter)")
    ax.set(xlabel="pathological neurons $l_-$ (e = 1, d > 1)", ylabel="count",
           title="Components vs effective components (the paper's Fig. 2b, counted)")
    ax.legend()
    return fig
