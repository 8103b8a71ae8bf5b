"""Part II: the figures of the chapter grq_minimal_model (Kunin et al., NeurIPS 2024, Figs. 2, 3, 4 and 7).

Each function draws one of the paper's figures from the results of :mod:`markovlib.richlazy.minimal_steps` and
:mod:`markovlib.richlazy.minimal_bias` and returns the matplotlib figure (the chapter shows it). Colours: GLOBAL
green for the minima and the targets, the diverging delta colours of :func:`markovlib.richlazy.drawings.delta_colour`,
blue (MAXIMA) / red (LOCAL) for the branches a > 0 / a < 0 of the minima.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from .drawings import delta_colour, regime_name
from .minimal_exact import basin_margin, separating_surface


def _unit(beta_star):
    bstar = np.asarray(beta_star, dtype=float)
    if bstar.shape != (2,) or not np.any(bstar):
        raise ValueError(f"beta_star must be a nonzero vector of length 2, got {beta_star!r}")
    e = bstar / np.linalg.norm(bstar)
    return bstar, e, np.array([-e[1], e[0]])


def _labels(ax, *names):
    for setter, name in zip((ax.set_xlabel, ax.set_ylabel, getattr(ax, "set_zlabel", None)), names):
        setter(name)


def draw_sheets(runs, beta_star, delta_scale):
    """The paper's Fig. 2: for each delta of ``runs`` ({delta: (a0, w0, a(t), w(t))}, positive, 0, negative) the
    surface a^2 - ||w||^2 = delta in (w1, w2, a), the hyperbola of minima a w = beta*, the flow and its limit."""
    import matplotlib.pyplot as plt

    bstar, _, _ = _unit(beta_star)
    fig = plt.figure(figsize=(15, 5.2))
    th = np.linspace(0, 2 * np.pi, 61)
    a_line = np.concatenate([np.linspace(-2.5, -0.35, 60), np.linspace(0.35, 2.5, 60)])
    wmin = bstar[None, :] / a_line[:, None]
    keep = np.linalg.norm(wmin, axis=1) < 2.8
    for k, (delta, (a0, w0, a_, w_)) in enumerate(runs.items()):
        ax = fig.add_subplot(1, len(runs), k + 1, projection="3d", computed_zorder=False)
        if delta > 0:
            RR, TH = np.meshgrid(np.linspace(0, 2.2, 25), th)
            for sgn in (1, -1):
                ax.plot_surface(RR * np.cos(TH), RR * np.sin(TH), sgn * np.sqrt(delta + RR**2), color="0.8",
                                alpha=0.35, linewidth=0)
        else:
            AA, TH = np.meshgrid(np.linspace(-2.5, 2.5, 41), th)
            rad = np.sqrt(AA**2 - delta)
            ax.plot_surface(rad * np.cos(TH), rad * np.sin(TH), AA, color="0.8", alpha=0.35, linewidth=0)
        for part in (a_line < 0, a_line > 0):
            sel = part & keep
            ax.plot(wmin[sel, 0], wmin[sel, 1], a_line[sel], color=plotting.GLOBAL, lw=2.5,
                    label="minima $a w = \\beta^*$" if part[-1] else None)
        col = delta_colour(delta, delta_scale)
        ax.plot(w_[:, 0], w_[:, 1], a_, color=col, lw=3, label="gradient flow")
        ax.scatter(*w0, a0, color=col, s=40, edgecolor="k", label="init ($a_0 w_0 = \\beta_0$)")
        ax.scatter(*w_[-1], a_[-1], color=plotting.GLOBAL, s=50, edgecolor="k", label="limit")
        ax.set_title(f"$\\delta = {delta:g}$ ({regime_name(delta).split(',')[0]})")
        _labels(ax, "$w_1$", "$w_2$", "$a$")
        ax.view_init(elev=18, azim=-60)
        if k == 0:
            ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("Paper's Fig. 2: the conserved $\\delta$ confines the flow to a hyperboloid "
                 "(two sheets, a double cone, one sheet)")
    return fig


def draw_separating_surface(basin, surface, beta_star, n_show=24):
    """The paper's Fig. 7 in (w1, w2, a): the separating surface c1 = 0 (``separating_surface``, delta in [-2, 0]),
    the two branches of minima, the saddle line, the first ``n_show`` Monte Carlo flows of ``basin``
    (:func:`~markovlib.richlazy.minimal_steps.basin_flows`) coloured by branch and the flows of ``surface``
    (:func:`~markovlib.richlazy.minimal_steps.surface_to_saddle`, dashed)."""
    import matplotlib.pyplot as plt

    bstar, e, e_perp = _unit(beta_star)
    fig = plt.figure(figsize=(8, 6))
    ax = fig.add_subplot(1, 1, 1, projection="3d", computed_zorder=False)
    DD, TT = np.meshgrid(np.linspace(-2.0, 0.0, 21), np.linspace(-1.4, 1.4, 29))
    a_S, u_S, s_S = separating_surface(DD, TT, float(np.linalg.norm(bstar)))
    for sgn in (1, -1):  # v = +-s: the two halves of the surface in the plane of w
        ax.plot_surface(u_S * e[0] + sgn * s_S * e_perp[0], u_S * e[1] + sgn * s_S * e_perp[1], a_S,
                        color=plotting.SADDLE, alpha=0.35, linewidth=0)
    a_line = np.concatenate([np.linspace(-2.5, -0.4, 50), np.linspace(0.4, 2.5, 50)])
    for part, col in ((a_line < 0, plotting.LOCAL), (a_line > 0, plotting.MAXIMA)):
        wm = bstar[None, :] / a_line[part, None]
        ax.plot(wm[:, 0], wm[:, 1], a_line[part], color=col, lw=3)
    sad = np.linspace(-2.2, 2.2, 2)[:, None] * e_perp
    ax.plot(sad[:, 0], sad[:, 1], [0, 0], color="k", lw=2, label="saddles $a = 0$, $w \\perp \\beta^*$")
    a_tr, W_tr = basin["a"], basin["W"]
    for i in range(min(n_show, basin["mc"].stop)):
        col = plotting.MAXIMA if basin["branch"][i] > 0 else plotting.LOCAL
        ax.plot(W_tr[i, 0], W_tr[i, 1], a_tr[i], color=col, lw=1)
        ax.scatter(W_tr[i, 0, 0], W_tr[i, 1, 0], a_tr[i, 0], color=col, s=10)
    for a_j, W_j in zip(surface["a"], surface["W"]):
        ax.plot(W_j[0], W_j[1], a_j, color="k", lw=2.5, ls="--")
    _labels(ax, "$w_1$", "$w_2$", "$a$")
    ax.view_init(elev=20, azim=-55)
    ax.set_title("Paper's Fig. 7: the separating surface (yellow); flows by branch (blue $a > 0$, red $a < 0$)")
    ax.legend(loc="upper left", fontsize=8)
    return fig


def draw_basin_planes(basin, beta_star, slice_s, margin_min):
    """The paper's Fig. 7 in two planes: left the plane s = slice_s, the branch reached by the grid's flows
    (colour) under the predicted surface c1 = 0 (black; crosses where they disagree outside the margin); right the
    plane s = 0 (the dynamics of d = 1) with the flows of ``basin["plane"]`` and the half-plane basins."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    bstar, e, e_perp = _unit(beta_star)
    b, grid_1d, sl_g = float(np.linalg.norm(bstar)), basin["grid_1d"], basin["grid"]
    fig, (ax2, ax1) = plt.subplots(1, 2, figsize=(12, 5.4), layout="constrained")
    reached = basin["branch"][sl_g].reshape(grid_1d.size, grid_1d.size)
    step = grid_1d[1] - grid_1d[0]
    ax2.imshow(reached, origin="lower", extent=[grid_1d[0] - step / 2, grid_1d[-1] + step / 2] * 2, aspect="auto",
               cmap=ListedColormap([plotting.LOCAL, plotting.MAXIMA]), vmin=-1, vmax=1, alpha=0.55)
    UF, AF = np.meshgrid(*[np.linspace(grid_1d[0], grid_1d[-1], 301)] * 2)
    ax2.contour(UF, AF, basin_margin(AF, UF[..., None] * e + slice_s * e_perp, bstar), levels=[0.0], colors="k",
                linewidths=2)
    m = basin["margin"][sl_g]
    wrong = (reached.ravel() != np.sign(m)) & (np.abs(m) >= margin_min)
    ax2.scatter(basin["U"].ravel()[wrong], basin["A"].ravel()[wrong], marker="x", color="k", s=30)
    ax2.plot([], [], color="k", lw=2, label="predicted surface $c_1 = 0$")
    _labels(ax2, "$u = w^\\top\\beta^*/\\|\\beta^*\\|$", "$a$")
    ax2.set_title(f"the plane $s = {slice_s:g}$: branch reached by the flow (colour)")
    ax2.legend(loc="upper left", fontsize=8)
    sl_p = basin["plane"]
    for a_i, W_i, br in zip(basin["a"][sl_p], basin["W"][sl_p], basin["branch"][sl_p]):
        ax1.plot(W_i.T @ e, a_i, color=plotting.MAXIMA if br > 0 else plotting.LOCAL, lw=1.5)
        ax1.scatter(W_i[:, 0] @ e, a_i[0], color="k", s=12, zorder=5)
    ax1.plot([-2.2, 2.2], [2.2, -2.2], color="k", lw=2, label="$\\Sigma$: $a = -u$ ($\\delta = 0$)")
    uu = np.linspace(0.35, 2.4, 60)
    ax1.plot(uu, b / uu, color=plotting.MAXIMA, lw=4, alpha=0.4, label="minima, $a > 0$")
    ax1.plot(-uu, -b / uu, color=plotting.LOCAL, lw=4, alpha=0.4, label="minima, $a < 0$")
    ax1.set_xlim(-2.4, 2.4)
    ax1.set_ylim(-2.4, 2.4)
    ax1.set_aspect("equal")
    _labels(ax1, "$u$ ($s = 0$: the dynamics of $d = 1$)", "$a$")
    ax1.set_title("$s = 0$: the basins are half-planes")
    ax1.legend(loc="lower left", fontsize=8)
    fig.suptitle("Paper's Fig. 7: the basins in two planes (blue: the branch $a > 0$, red: $a < 0$)")
    return fig


def draw_fig3(t, runs, S_flow, S_theory, delta_scale):
    """The paper's Fig. 3: mu(t), phi(t) and S(0, t) of the flows of ``runs`` (markers, colour by delta) over the
    closed forms (dashed)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3), layout="constrained")
    marks = slice(0, None, max(1, len(t) // 25))
    for delta, run in runs.items():
        col = delta_colour(delta, delta_scale)
        for ax, flow_y, th_y in zip(axes, (run["mu"], run["phi"], S_flow[delta]),
                                    (run["mu_e"], run["phi_e"], S_theory[delta])):
            ax.plot(t[marks], flow_y[marks], "o", color=col, ms=4, label=f"$\\delta = {delta:g}$")
            ax.plot(t, th_y, "--", color="k", lw=1)
    for ax, name in zip(axes, ("$\\mu = a\\,\\|w\\|$", "$\\phi = \\cos(w, \\beta^*)$", "kernel distance $S(0, t)$")):
        _labels(ax, "$t$", name)
    axes[2].plot([], [], "--", color="k", lw=1, label="exact solution")
    axes[2].legend(fontsize=8, ncol=2)
    fig.suptitle("Paper's Fig. 3: flow (markers, colour by $\\delta$) and the exact solutions (dashed)")
    return fig


def draw_fig4(runs, beta_theory, beta_star, beta0, lowrank, asym, beta0_lowrank, delta_scale):
    """The paper's Fig. 4: left the whitened problem, beta(t) = a w of ``runs`` (solid) over the closed form
    ``beta_theory`` (dashed); right the one-sample problem, the line of interpolants, the flows and predicted
    limits of ``lowrank`` (:func:`~markovlib.richlazy.minimal_bias.lowrank_limits`) and the two asymptotic limits
    of ``asym`` (:func:`~markovlib.richlazy.minimal_bias.asymptotes`)."""
    import matplotlib.pyplot as plt

    fig, (ax_l, ax_r) = plt.subplots(1, 2, figsize=(14, 6.5), layout="constrained")
    for delta, run in runs.items():
        beta_f = run["a"][:, None] * run["w"]
        ax_l.plot(beta_f[:, 0], beta_f[:, 1], color=delta_colour(delta, delta_scale), lw=3,
                  label=f"$\\delta = {delta:g}$")
        ax_l.plot(beta_theory[delta][:, 0], beta_theory[delta][:, 1], "--", color="k", lw=1)
    ax_l.scatter(*beta_star, color=plotting.GLOBAL, s=90, zorder=5, label="$\\beta^*$")
    ax_l.scatter(*beta0, color="0.5", s=90, zorder=5, label="$\\beta_0$")
    ax_l.set_title("whitened $X$: flow (solid), exact solution (dashed)")
    near, along, b0 = asym["near"], asym["along"], np.asarray(beta0_lowrank, dtype=float)
    line = asym["beta_p"][None, :] + np.linspace(-3.0, 3.0, 10)[:, None] * np.linalg.norm(near - along) * asym["n"]
    ax_r.plot(line[:, 0], line[:, 1], color=plotting.GLOBAL, lw=4, alpha=0.5, label="interpolants $x^\\top\\beta = y$")
    for delta, (beta_t, lim) in lowrank["runs"].items():
        ax_r.plot(beta_t[:, 0], beta_t[:, 1], color=delta_colour(delta, delta_scale), lw=3,
                  label=f"$\\delta = {delta:g}$")
        ax_r.scatter(*lim, color="k", s=30, zorder=6)
    for end in (near, along):
        ax_r.plot(*np.stack([b0, end]).T, ":", color="k")
    ax_r.scatter(*near, marker="s", color="k", s=50, zorder=6, label="$\\delta \\to +\\infty$: closest to $\\beta_0$")
    ax_r.scatter(*along, marker="^", color="k", s=60, zorder=6, label="$\\delta \\to -\\infty$: along $\\beta_0$")
    ax_r.scatter(*b0, color="0.5", s=90, zorder=5, label="$\\beta_0$")
    pts = np.stack([b0, near, along, asym["beta_p"]])
    pad = 0.15 * np.ptp(pts, axis=0).max()
    ax_r.set_xlim(pts[:, 0].min() - pad, pts[:, 0].max() + pad)
    ax_r.set_ylim(pts[:, 1].min() - pad, pts[:, 1].max() + pad)
    ax_r.set_title("one sample: flows and the limits of Thm 3.1 (black dots)")
    for ax in (ax_l, ax_r):
        _labels(ax, "$\\beta_1$", "$\\beta_2$")
        ax.set_aspect("equal")
        ax.legend(fontsize=8)
    fig.suptitle("Paper's Fig. 4: $\\delta$ shapes the trajectory (left) and the implicit bias (right)")
    return fig


def draw_fig4_sweep(asym, lowrank, delta_scale):
    """The paper's Fig. 4 (bottom): Thm 3.1's limit along the null space against sign(delta) log10(1 + |delta|),
    the curve of ``asym`` with the flow limits of ``lowrank`` (dots) and the two asymptotes (dashed, dotted)."""
    import matplotlib.pyplot as plt

    def warp(d):
        return np.sign(d) * np.log10(1 + np.abs(d))

    fig, ax = plt.subplots(figsize=(14, 4.5), layout="constrained")
    ax.plot(warp(asym["sweep"]), asym["z"], color="k", label="argmin $\\Psi_\\delta$")
    for delta, (beta_t, _) in lowrank["runs"].items():
        ax.scatter(warp(delta), (beta_t[-1] - asym["beta_p"]) @ asym["n"], color=delta_colour(delta, delta_scale),
                   s=60, edgecolor="k", zorder=5)
    ax.axhline((asym["near"] - asym["beta_p"]) @ asym["n"], ls="--", color="k", lw=1,
               label="closest to $\\beta_0$ ($\\delta \\to +\\infty$)")
    ax.axhline((asym["along"] - asym["beta_p"]) @ asym["n"], ls=":", color="k", lw=1,
               label="along $\\beta_0$ ($\\delta \\to -\\infty$)")
    _labels(ax, "$\\mathrm{sign}(\\delta)\\,\\log_{10}(1 + |\\delta|)$",
            "limit along the null space, $n^\\top(\\beta_\\infty - \\beta_p)$")
    ax.legend(fontsize=8)
    ax.set_title("flow limits (dots) on the curve of Thm 3.1")
    fig.suptitle("Paper's Fig. 4 (bottom): the limit along the null space against $\\delta$")
    return fig
