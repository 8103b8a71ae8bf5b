"""Part II: the figures of the chapter grq_exact_dynamics (Kunin et al., NeurIPS 2024, Fig. 4 from -beta0, the two
terms of dM/dt of App. A.3.1, and Fig. 8).

Each function draws from the results of :mod:`markovlib.richlazy.minimal_beyond` and returns the matplotlib figure.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from ..book.formatting import fixed
from .minimal_crossing import max_error


def draw_mirror(fig4, x, y, beta0, deltas, rows):
    """Thm 3.1 through a zero crossing: left the Fig. 4 problem (one sample x, label y) from beta0 with the flows
    of ``fig4`` (:func:`~markovlib.richlazy.minimal_beyond.fig4_mirror`), App. A.4.4's closed form (open circles)
    and the limit predicted for each side (filled); right every random draw of ``rows`` placed by its distance to
    argmin Psi_delta at beta0 and at -beta0, coloured by whether a crosses zero."""
    import matplotlib.pyplot as plt

    x, beta0 = np.asarray(x, dtype=float), np.asarray(beta0, dtype=float)
    bstar = float(y) * x / (x @ x)
    v = np.sign(float(y)) * np.array([-x[1], x[0]]) / np.linalg.norm(x)
    fig, (ax_l, ax_r) = plt.subplots(1, 2, figsize=(14, 6), layout="constrained")
    cmap = plt.get_cmap("BrBG")
    line = bstar[None, :] + np.linspace(-3.5, 3.5, 2)[:, None] * v[None, :]
    ax_l.plot(line[:, 0], line[:, 1], color=plotting.GLOBAL, lw=4, alpha=0.5, label="interpolants $x^\\top\\beta = y$")
    for j, dl in enumerate(deltas):
        col = cmap(0.35 - 0.3 * abs(dl) / max(abs(min(deltas)), 1e-8))
        ax_l.plot(fig4["beta"][j, 0], fig4["beta"][j, 1], color=col, lw=2.5, label=f"flow, $\\delta = {dl:g}$"
                  + (" (a crosses 0)" if fig4["cross"][j] else ""))
        ax_l.scatter(*fig4["forms"][j], s=90, facecolor="none", edgecolor=col, lw=2, zorder=5)
        ax_l.scatter(*(fig4["flips"][j] if fig4["cross"][j] else fig4["forms"][j]), s=40, color=col, edgecolor="k",
                     zorder=6)
    ax_l.scatter(*beta0, color="0.5", s=80, zorder=6, label="$\\beta_0$")
    ax_l.scatter([0], [0], marker="+", color="k", s=120, zorder=6, label="origin ($a = 0$)")
    ax_l.scatter([], [], s=90, facecolor="none", edgecolor="k", label="A.4.4 closed form (Thm 3.1)")
    ax_l.scatter([], [], s=40, color="k", label="corrected: $\\Psi_\\delta$ with $-\\beta_0$")
    ax_l.set_xlabel("$\\beta_1$")
    ax_l.set_ylabel("$\\beta_2$")
    ax_l.set_aspect("equal")
    ax_l.set_title("Fig. 4 problem from $-\\beta_0$: flows through the origin")
    ax_l.legend(fontsize=8, loc="lower left")
    for r in rows:
        e1 = max(max_error(r["beta_T"], r["psi"]), 1e-13)
        e2 = max(max_error(r["beta_T"], r["psi_flip"]), 1e-13)
        ax_r.scatter(e1, e2, color=plotting.LOCAL if r["crossings"] else plotting.MAXIMA, s=25, alpha=0.8)
    ax_r.scatter([], [], color=plotting.LOCAL, label="a crosses zero")
    ax_r.scatter([], [], color=plotting.MAXIMA, label="a keeps its sign")
    ax_r.set_xscale("log")
    ax_r.set_yscale("log")
    ax_r.set_xlabel("|flow limit - argmin $\\Psi_\\delta(\\cdot\\,; \\beta_0)$| (Thm 3.1 as stated)")
    ax_r.set_ylabel("|flow limit - argmin $\\Psi_\\delta(\\cdot\\,; -\\beta_0)$| (corrected)")
    ax_r.set_title(f"{len(rows)} random draws, {len({r['family'] for r in rows})} data families")
    ax_r.legend(fontsize=9)
    fig.suptitle("Thm 3.1 through a zero crossing of $a$: the flow ends at the minimizer for $-\\beta_0$")
    return fig


def draw_mdot_terms(kernel, names=("downstream", "balanced", "upstream")):
    """App. A.3.1: the norms of the two terms of dM/dt relative to |M(0)| along the flows of ``kernel``
    (:func:`~markovlib.richlazy.minimal_beyond.kernel_dynamics`), one panel per delta, log scale."""
    import matplotlib.pyplot as plt

    deltas = list(kernel["curves"])
    fig, axes = plt.subplots(1, len(deltas), figsize=(15, 4.2), layout="constrained", sharey=True)
    for ax, dl, name in zip(np.atleast_1d(axes), deltas, names):
        T1, T2 = kernel["curves"][dl]
        ax.plot(kernel["t"], T1, color=plotting.LOCAL,
                label="norm term $\\frac{2\\|\\beta\\|}{\\kappa}(I + \\hat\\beta\\hat\\beta^\\top)"
                      "\\partial_t\\|\\beta\\|$")
        ax.plot(kernel["t"], T2, color=plotting.MAXIMA,
                label="direction term $\\frac{\\kappa - \\delta}{2}\\partial_t(\\hat\\beta\\hat\\beta^\\top)$")
        ax.set_yscale("log")
        ax.set_ylim(1e-8, 10)
        ax.set_xlabel("$t$")
        ax.set_title(f"$\\delta = {dl:g}$ ({name}): share of the direction term {fixed(kernel['shares'][dl], 2)}")
    axes[0].set_ylabel("$\\|\\mathrm{term}\\|_F / \\|M(0)\\|_F$")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle("App. A.3.1: the two terms of $\\dot M$ along the flow")
    return fig


def draw_fig8(fig8, angles, deltas, beta_star):
    """The paper's Fig. 8: a(t), w1(t), w2(t) from the closed form (dashed) over the independent integration
    (markers) of ``fig8`` (:func:`~markovlib.richlazy.minimal_beyond.fig8_runs`), one row per angle of beta0."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(angles), 3, figsize=(14, 3.4 * len(angles)), layout="constrained", sharex=True)
    axes = np.atleast_2d(axes)
    cmap = plt.get_cmap("BrBG")
    dscale, t8 = max(abs(dl) for dl in deltas), fig8["t"]
    for row, dl, a_c, w_c, a_fl, W_fl, crossed in fig8["runs"]:
        col = "k" if dl == 0 else cmap(0.5 + np.sign(dl) * (0.2 + 0.3 * abs(dl) / dscale))
        for ax, th, fl in zip(axes[row], (a_c, w_c[:, 0], w_c[:, 1]), (a_fl, W_fl[0], W_fl[1])):
            ax.plot(t8, th, "--", color="k", lw=1)
            ax.plot(t8[::16], fl[::16], "o", color=col, ms=4,
                    label=f"$\\delta = {dl:g}$" + (" (a crosses 0)" if crossed else ""))
    for row in range(len(angles)):
        axes[row, 0].set_ylabel(f"$\\beta_0$ at ${angles[row]:g}\\pi$")
        axes[row, 0].axhline(0, color="0.6", lw=0.8)
        axes[row, 0].legend(fontsize=7, ncol=2)
    for ax, name in zip(axes[0], ["$a(t)$", "$w_1(t)$", "$w_2(t)$"]):
        ax.set_title(name)
    for ax in axes[-1]:
        ax.set_xlabel("$t$")
    fig.suptitle("Paper's Fig. 8: exact solution (dashed) over an independent integration (markers), "
                 f"$\\beta^* = ({beta_star[0]:g}, {beta_star[1]:g})$")
    return fig
