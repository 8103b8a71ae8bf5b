"""The figures of the chapter ``attention`` (the attention scalar; Makkuva et al., Sec. 4.1, App. G, Figs. 2 and 5),
each a function returning the figure (and what it counted).

* :func:`gradient_lines`: the gradient lines of f = e^2 (1 + a e^2) in (e, a), coloured by the label A, with
  Gamma_1/2, f = 0 and the separatrix S.
* :func:`basin_slices`: integrated outcomes on grids (e0, w0) at fixed a0, with S, {E~ = E_sad} and {E = E_sad}.
* :func:`basin_surfaces`: the surfaces w = w+(e, a) and w = w-(e, a) bounding the unigram basins (3-D).
* :func:`escape_figure`: the flows near S and the growth of |A|^3 (the exception to Lemma 15).
* :func:`flow_figure`: trajectories in (e, w, a) with the critical sets (the paper's Figs. 2 and 5).
* :func:`thm11_figure`: P(unigram) against sigma, the rule and the integrated flows (Thm 11).
* :func:`static_explorer`: the rendered book's precomputed frames of ``drawings.draw_attention``.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from ..book import explorers, plotting
from ..book.inference import wilson_interval
from ..numerics import checks
from . import attention, attention_basins, canonical
from . import drawings as markov_drawings
from .energy import SADDLE_ENERGY, energy
from .flow import horizon, integrate

__all__ = ["gradient_lines", "basin_slices", "basin_surfaces", "escape_figure", "flow_figure", "thm11_figure",
           "static_explorer"]

W_SAD = canonical.W_SADDLE


def gradient_lines(lim=2.5, n=71):
    """The (e, a) shadow of every flow: descending gradient lines of f = e^2 (1 + a e^2) (streamlines of -grad f),
    coloured by the axis end A of ``attention.planar_label`` (region R_0), with Gamma_1/2 = {1 + 2ae^2 = 0},
    {f = 0} (contains Sigma) and the separatrix S, on [-lim, lim]^2."""
    lim = checks.positive_real("lim", lim)
    e_g = a_g = np.linspace(-lim, lim, checks.positive_int("n", n))
    EE, AA = np.meshgrid(e_g, a_g, indexing="ij")
    a_line = np.linspace(-lim, lim, 401)
    eS = attention.separatrix(a_line)
    fig, ax = plt.subplots(figsize=(7.0, 5.6))
    cf = ax.contourf(e_g, a_g, attention.planar_label(EE, AA).A.T, levels=np.linspace(-2.5, 2.5, 21), cmap="viridis",
                     extend="both")
    fig.colorbar(cf, ax=ax, label="A: where the line reaches e = 0 (region $R_0$)")
    fe, fa = 2 * EE + 4 * AA * EE**3, EE**4
    nrm = np.hypot(fe, fa) + 1e-12
    ax.streamplot(e_g, a_g, (-fe / nrm).T, (-fa / nrm).T, color="0.25", density=1.1, linewidth=0.6, arrowsize=0.7)
    for s in (1, -1):
        ee = np.linspace(0.05, lim, 300) * s
        ax.plot(ee, -1 / (2 * ee**2), color=plotting.NEUTRAL, ls="--", lw=1.2,
                label=r"$\Gamma_{1/2}$: $1 + 2ae^2 = 0$ ($|e|$ turns)" if s > 0 else None)
        ax.plot(ee, -1 / ee**2, color=plotting.LOCAL, ls=":", lw=1.4,
                label=r"$f = 0$: $1 + ae^2 = 0$ (contains $\Sigma$)" if s > 0 else None)
    ax.plot(eS, a_line, color="k", lw=2.4, label="separatrix S")
    ax.plot(-eS, a_line, color="k", lw=2.4)
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), xlabel="e (embedding)", ylabel="a (attention)",
           title="Gradient lines of f = e²(1 + a e²), descending: the (e, a) shadow of every flow")
    ax.legend(loc="lower center", fontsize=7.5, framealpha=0.9, frameon=True)
    ax.grid(False)
    return fig


def basin_slices(pairs, slice_a0, grid_n, t_eff, max_steps):
    """One row per chain of ``pairs``, one panel per a0 of ``slice_a0``: the integrated outcomes on a grid_n x grid_n
    grid (``attention_basins.slice_outcomes``), the separatrix |e0| = e_S(a0), the 3-D saddle asymptotes
    {E~ = E_sad} (E~ = E + 2A^2) and {E = E_sad} with the 3-D energy. Returns (figure, disagreements with the rule)."""
    slice_a0 = list(checks.finite_array("slice_a0", slice_a0, ndim=1))
    e_fine, w_fine = np.linspace(-2.5, 2.5, 501), np.linspace(-2.0, -1e-3, 400)
    EF, WF = np.meshgrid(e_fine, w_fine, indexing="ij")
    fig, axes = plt.subplots(len(pairs), len(slice_a0), figsize=(4.2 * len(slice_a0), 8.2), sharex=True, sharey=True,
                             squeeze=False)
    n_bad = 0
    for row, (p_, q_) in enumerate(pairs):
        for col, a0_ in enumerate(slice_a0):
            ax = axes[row, col]
            EG, WG, outcome, bad = attention_basins.slice_outcomes(p_, q_, a0_, grid_n, t_eff, max_steps)
            n_bad += bad
            for name, colour in (("global_min", plotting.GLOBAL), ("unigram", plotting.LOCAL),
                                 ("undecided", plotting.NEUTRAL)):
                sel = outcome == name
                if sel.any():
                    label = {"global_min": "global minimum (flow)", "unigram": "unigram (flow)"}.get(name, name)
                    ax.scatter(EG[sel], WG[sel], s=9, color=colour, marker="s", alpha=0.65, lw=0, label=label)
            A_f = attention.planar_label(e_fine, np.full_like(e_fine, a0_)).A
            ax.contour(e_fine, w_fine, (energy(EF, WF, a0_) + 2 * A_f[:, None] ** 2).T, levels=[SADDLE_ENERGY],
                       colors=[plotting.SADDLE], linewidths=2.2)
            ax.contour(e_fine, w_fine, energy(EF, WF, a0_).T, levels=[SADDLE_ENERGY], colors=["0.45"], linewidths=1.2,
                       linestyles=":")
            for s in (1, -1):
                ax.axvline(s * float(attention.separatrix(a0_)), color="k", lw=1.8)
            ax.axhline(W_SAD, color="0.5", lw=0.8, ls="--")
            ax.set_title(f"p={p_}, q={q_} (p+q{'>' if p_ + q_ > 1 else '<'}1), a0 = {a0_:+.1f}")
            ax.set(xlabel="e0" if row == len(pairs) - 1 else "", ylabel="w0" if col == 0 else "",
                   xlim=(-2.5, 2.5), ylim=(-2.0, 2.0))
            ax.grid(False)
    handles = axes[0, 0].get_legend_handles_labels()[0]
    handles += [Line2D([], [], color=plotting.SADDLE, lw=2.2, label=r"$\tilde E = E_{sad}$ (3-D saddle asymptotes)"),
                Line2D([], [], color="0.45", lw=1.2, ls=":", label=r"$E = E_{sad}$ (2-D rule, 3-D energy)"),
                Line2D([], [], color="k", lw=1.8, label=r"separatrix $|e_0| = e_S(a_0)$"),
                Line2D([], [], color="0.5", lw=0.8, ls="--", label=r"$w_0 = -1/\sqrt{2}$")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle("Basins of the 3-D flow at fixed attention scalar a0 (integrated outcomes)", y=0.995)
    fig.tight_layout(rect=(0, 0.07, 1, 0.98))
    return fig, n_bad


def basin_surfaces(n=31):
    """Over R_0 (a in [-2, 2], e = s e_S(a), |s| <= 0.98) the surfaces w = w+(e, a) and w = w-(e, a)
    (``attention.basin_boundary``), with the saddle line {e = 0, w = -1/sqrt2} and S at w = 0."""
    a_s = np.linspace(-2.0, 2.0, checks.positive_int("n", n))
    SS, AS = np.meshgrid(np.linspace(-0.98, 0.98, n), a_s, indexing="ij")
    eS = attention.separatrix(a_s)
    ES = SS * eS[None, :]
    w_minus, w_plus = attention.basin_boundary(ES, AS)
    fig = plt.figure(figsize=(11.5, 5.0))
    for i, (wsurf, title) in enumerate(((w_plus, "p + q > 1: unigram basin is above w = w+(e, a)"),
                                        (w_minus, "p + q < 1: unigram basin is below w = w-(e, a)"))):
        ax = fig.add_subplot(1, 2, i + 1, projection="3d")
        ax.plot_surface(ES, np.clip(wsurf, -3.0, 0.0), AS, color=plotting.SADDLE, alpha=0.55, linewidth=0.2,
                        edgecolor="0.4", shade=True)
        ax.plot(np.zeros_like(a_s), np.full_like(a_s, W_SAD), a_s, color="k", lw=2.0)
        for s in (1, -1):
            ax.plot(s * eS, np.zeros_like(a_s), a_s, color="k", lw=1.2, ls="--")
        ax.set(xlabel="e", ylabel="w", zlabel="a", ylim=(-3.0, 1.0))
        ax.set_title(title, fontsize=9.5)
        ax.legend(handles=[Line2D([], [], color=plotting.SADDLE, lw=6, alpha=0.6, label=r"$\{\tilde E = E_{sad}\}$"),
                           Line2D([], [], color="k", lw=2.0, label="saddle line e = 0, w = -1/sqrt2"),
                           Line2D([], [], color="k", lw=1.2, ls="--", label="separatrix S (at w = 0)")],
                  loc="upper left", fontsize=7.5)
    return fig


def escape_figure(esc, p, q):
    """Left: a(t) of the flows of ``esc`` (``attention_basins.separatrix_escape(p, q, ...)``) just inside (unigram)
    and just outside (global) S; right: |A|^3 of the inner starts against log(1/delta), with the fitted line."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, (dl, tr_in, tr_out, *_rest) in enumerate(esc.flows):
        ax1.semilogx(tr_in.t[1:], tr_in.a[1:], color=plotting.LOCAL, alpha=0.4 + 0.15 * i,
                     label=f"inside, delta = {dl:.0e}")
        ax1.semilogx(tr_out.t[1:], tr_out.a[1:], color=plotting.GLOBAL, alpha=0.4 + 0.15 * i, ls="--",
                     label=f"outside, delta = {dl:.0e}")
    ax1.set(xlabel="time t", ylabel="a(t)", title=f"Flows from e0 = e_S(0)(1 -+ delta), w0 = 1, a0 = 0 (p={p}, q={q})")
    ax1.legend(fontsize=7, ncol=2)
    x = np.log(1 / esc.deltas)
    ax2.plot(x, np.abs(esc.A) ** 3, "o", color=plotting.LOCAL, label="|A|^3 of the inner starts")
    ax2.plot(x, np.polyval(esc.fit, x), color="k", lw=1,
             label=f"line through the last 4 points: slope {esc.fit[0]:.3f}")
    ax2.set(xlabel="log(1/delta)", ylabel="|A|^3", title="The axis end A runs off to -infinity as the start nears S")
    ax2.legend()
    return fig


def _flow_panel(ax, p, q, sigma, box, n_traj, t_eff, rng):
    th = rng.normal(0, sigma, (3, n_traj))
    counts = {"global_min": 0, "unigram": 0}
    for i in range(n_traj):
        tr = integrate(*th[:2, i], p, q, a0=th[2, i], t_max=horizon(p, q, t_eff), n_points=200)
        kind = attention.classify(tr.e[-1], tr.w[-1], tr.a[-1], p, q, atol=1e-6)
        kind = {"global_min": "global_min", "regular": "undecided"}.get(kind, "unigram")
        counts[kind] = counts.get(kind, 0) + 1
        inside = (np.abs(tr.e) <= box[0]) & (np.abs(tr.w) <= box[1]) & (np.abs(tr.a) <= box[2])
        cut = np.argmin(inside) if not inside.all() else tr.e.size
        ax.plot(tr.e[:cut], tr.w[:cut], tr.a[:cut], color=plotting.GLOBAL if kind == "global_min" else plotting.LOCAL,
                lw=1.1, alpha=0.85)
        ax.scatter([th[0, i]], [th[1, i]], [th[2, i]], color="k", s=6, depthshade=False)
    handles = markov_drawings.attention_critical_sets(ax, p, q, (-box[0], box[0]), (-box[1], box[1]),
                                                      (-box[2], box[2]), n_mesh=5)
    handles += [Line2D([], [], color=plotting.GLOBAL, lw=1.1, label="flow to a global minimum"),
                Line2D([], [], color=plotting.LOCAL, lw=1.1, label="flow to the unigram plane e = 0")]
    ax.set_title(f"p={p}, q={q} (p+q{'>' if p + q > 1 else '<'}1), init N(0, {sigma}^2 I)\n"
                 f"{counts['global_min']} global, {counts['unigram']} unigram"
                 + (f", {counts['undecided']} undecided" if counts.get("undecided") else ""), fontsize=9.5)
    return handles, counts


def flow_figure(pairs, sigma, box, n_traj, t_eff, rng, title):
    """One 3-D panel per chain of ``pairs``: ``n_traj`` flows from N(0, sigma^2 I_3) starts (``rng``), clipped to the
    box |e|, |w|, |a| <= ``box``, coloured by where they end, with the critical sets of Thm 10. Returns (figure,
    [counts per chain: {'global_min', 'unigram', maybe 'undecided'}])."""
    sigma, n_traj = checks.positive_real("sigma", sigma), checks.positive_int("n_traj", n_traj)
    fig = plt.figure(figsize=(12, 5.6))
    all_counts = []
    for i, (p_, q_) in enumerate(pairs):
        ax = fig.add_subplot(1, len(pairs), i + 1, projection="3d")
        handles, counts = _flow_panel(ax, p_, q_, sigma, box, n_traj, t_eff, rng)
        all_counts.append(counts)
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=7.5)
    fig.suptitle(title)
    return fig, all_counts


def thm11_figure(mc, pairs, rng, reference=(169, 200)):
    """P(flow ends at the unigram minimum) against sigma: the rule from 2000 draws per sigma on 12 scales in
    [0.05, 3] (``rng``), the integrated fractions of ``mc`` (``attention_basins.thm11_monte_carlo``) with Wilson
    intervals, and the reference notes' spot check ``reference`` = (local, n) at sigma = 0.5 for p = q = 0.9."""
    fig, ax = plt.subplots(figsize=(6.6, 4.4))
    sig_fine = np.geomspace(0.05, 3.0, 12)
    samples = []
    for s in sig_fine:
        th = rng.normal(0, s, (3, 2000))
        samples.append((th, attention.planar_label(th[0], th[2])))
    for (p_, q_), colour in zip(pairs, (plotting.LOCAL, plotting.GLOBAL)):
        curve = [np.mean(attention.predict_outcome(*th, p_, q_, label=lab).outcome == "unigram") for th, lab in samples]
        side = p_ + q_ > 1
        ax.semilogx(sig_fine, curve, color=colour, lw=1.6, label=f"rule, p+q{'>' if side else '<'}1 (2000 per sigma)")
        pts = mc.side(side)
        ax.errorbar([r[0] for r in pts], [r[2] / mc.n for r in pts], fmt="o", color=colour, capsize=3,
                    yerr=[[r[2] / mc.n - r[3] for r in pts], [r[4] - r[2] / mc.n for r in pts]],
                    label=f"integrated flows, p={p_}, q={q_} (Wilson 95%)")
    k, n = reference
    lo, hi = wilson_interval(k, n)
    ax.errorbar([0.5], [k / n], yerr=[[k / n - lo], [hi - k / n]], fmt="D", color="k", mfc="w", capsize=3,
                label="reference spot check (p=q=0.9)")
    ax.set(xlabel="initialization scale sigma", ylabel="P(flow ends at the unigram minimum)",
           title="Thm 11: standard initialization and the local minimum")
    ax.legend(fontsize=7.5)
    return fig


def static_explorer(grid, initial):
    """The rendered book's explorer of the chapter: ``drawings.draw_attention`` precomputed on ``grid`` (slider name
    -> values of p, q, e0, w0, a0), the frame ``initial`` shown first (``book.explorers.static_explorer``). Returns
    the explorer and ``drawings.frames_agree`` of its frames: (explorer, frames ending as predicted, frames)."""
    static = explorers.static_explorer(
        lambda p, q, e0, w0, a0, fig: markov_drawings.draw_attention(p, q, e0, w0, a0,
                                                                     ax=fig.add_subplot(projection="3d")),
        grid, name="attention", title="gradient flow on L(e, w, a)",
        value=lambda out: f"reached {out['reached']} (predicted {out['predicted']})", initial=initial, progress=False)
    return (static, *markov_drawings.frames_agree(static.results))
