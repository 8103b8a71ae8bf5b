"""Part I's drawings: the critical points of L(e, w) and the explorers of the chapters loss_landscape,
gradient_flow_energy and attention, headless.

Each explorer is a plain function ``draw_*(..., ax=None) -> dict`` that draws one static figure for given slider
values and returns the outcome it displays (so tests can call it with values); :func:`markovlib.book.widgets.explorer`
wraps it in sliders when the notebook runs live. The building blocks (``loss_contours``, ``energy_contours``,
``attention_critical_sets``, ``saddle_asymptotes``) are also used directly by the chapters.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from .canonical import is_iid


def critical_points(ax, p, q, e_lim=2.0, w_lim=(-2.0, 2.0), n=801, legend=True):
    """Draw the critical points of L(e, w) (Thm 1): Gamma*, the w-axis split into minima/maxima, the saddle."""
    from .canonical import W_SADDLE, critical_sets

    cs = critical_sets(p, q)
    w = np.linspace(*w_lim, n)
    e = cs.global_min_e(w)
    e = np.where(e <= e_lim, e, np.nan)
    ax.plot(e, w, color=plotting.GLOBAL, lw=2.2, label=r"global minima $\Gamma^*$")
    ax.plot(-e, w, color=plotting.GLOBAL, lw=2.2)
    if cs.saddle is None:  # p + q = 1: c* = 0, every critical point ({e = 0} and {w = -1/sqrt 2}) is global
        ax.plot([0, 0], list(w_lim), color=plotting.GLOBAL, lw=3, solid_capstyle="butt")
        ax.axhline(W_SADDLE, color=plotting.GLOBAL, lw=2.2)
    else:
        loci = ((cs.local_min_w, plotting.LOCAL, "local minima"), (cs.local_max_w, plotting.MAXIMA, "local maxima"))
        for (lo, hi), color, name in loci:
            lo, hi = max(lo, w_lim[0]), min(hi, w_lim[1])
            ax.plot([0, 0], [lo, hi], color=color, lw=3, solid_capstyle="butt", label=f"{name} (e = 0)")
        ax.plot([0], [W_SADDLE], "o", color=plotting.SADDLE, mec="k", ms=7, label="saddle", zorder=5)
    ax.set_xlabel("e (embedding scale)")
    ax.set_ylabel("w (feed-forward scale)")
    ax.set_xlim(-e_lim, e_lim)
    ax.set_ylim(*w_lim)
    if legend:
        ax.legend(loc="lower right")


# --- Loss landscape and energy explorers (chapters loss_landscape and gradient_flow_energy) ---

OUTCOME_NAMES = ("global_min", "local_min", "local_max", "saddle", "undecided")


def _outcome_colour(outcome):
    return {"global_min": plotting.GLOBAL, "local_min": plotting.LOCAL, "local_max": plotting.MAXIMA,
            "saddle": plotting.SADDLE}.get(outcome, plotting.NEUTRAL)


def flow_outcomes(p, q, e0, w0, t_max=2e4):
    """Predicted and reached limit of gradient flow from (e0, w0).

    Returns (predicted, trajectory, reached): ``predicted`` is ``energy.predict_limit`` (Thm 2 / Thm 8 read off the
    energy); ``trajectory`` is ``flow.integrate`` up to ``t_max``; ``reached`` names its end point exactly as
    ``flow.integrate_batch`` does (``canonical.classify`` at tolerance 1e-6, or "global_min" when the loss is within
    1e-8 of the entropy rate, which covers the algebraically slow flows of p + q = 1; "undecided" otherwise).
    """
    from .energy import predict_limit
    from .flow import classify_end, integrate

    predicted = predict_limit(e0, w0, p, q)
    tr = integrate(e0, w0, p, q, t_max=t_max)
    reached = classify_end(tr.e[-1], tr.w[-1], None, p, q)
    return predicted, tr, reached


def _view(tr, predicted, e_lim=2.0, w_lim=2.0):
    """Square-ish view (e_lim, (w_lo, w_hi)) holding the default box, the trajectory and the predicted limit."""
    e_max = max(e_lim, 1.1 * float(np.max(np.abs(tr.e))), 1.1 * abs(predicted.e))
    w_lo = min(-w_lim, 1.1 * float(np.min(tr.w)), 1.1 * predicted.w)
    w_hi = max(w_lim, 1.1 * float(np.max(tr.w)), 1.1 * predicted.w)
    return e_max, (w_lo, w_hi)


def loss_contours(ax, p, q, e_lim=2.0, w_lim=(-2.0, 2.0), n=161, colorbar=True):
    """Filled contours of the reduced loss L(e, w) = g(c(e, w)) from the entropy rate upwards, with the level
    L = H(pi) of the critical w-axis dashed in red."""
    from .canonical import loss
    from .chain import MarkovChain

    chain = MarkovChain(p, q)
    lo, hi = chain.entropy_rate, chain.marginal_entropy
    top = lo + max(2.0 * (hi - lo), 0.1)
    e, w = np.linspace(-e_lim, e_lim, n), np.linspace(w_lim[0], w_lim[1], n)
    E, W = np.meshgrid(e, w, indexing="ij")
    L = loss(E, W, p, q)
    cf = ax.contourf(e, w, np.minimum(L, top).T, levels=np.linspace(lo, top, 17), cmap="Greys_r", alpha=0.55,
                     extend="max")
    if hi - lo > 1e-9:
        ax.contour(e, w, L.T, levels=[hi], colors=[plotting.LOCAL], linestyles="--", linewidths=0.9)
        ax.plot([], [], color=plotting.LOCAL, ls="--", lw=0.9, label=r"level $L = H(\pi)$")
    if colorbar:
        ax.figure.colorbar(cf, ax=ax, label="loss L(e, w) (nats)", format="%.2f")
    ax.grid(False)
    return cf


def saddle_asymptotes(w):
    """The saddle asymptotes {E = E_sad} (w < 0) as e = +-sqrt(R(w)), R(w) = E_sad + w^2 - log|w| >= 0, which
    vanishes only at the saddle w = -1/sqrt 2 (Lemma 12). Returns the e >= 0 branch (NaN for w >= 0)."""
    from .energy import SADDLE_ENERGY

    w = np.asarray(w, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = SADDLE_ENERGY + w * w - np.log(np.abs(w))
        return np.where(w < 0, np.sqrt(np.maximum(r, 0.0)), np.nan)


def energy_contours(ax, p, q, e_lim=2.0, w_lim=(-2.0, 2.0), n=241, levels=None, arrows=True, n_arrows=21):
    """Energy contour lines E(e, w) = e^2 - w^2 - sign(w) log|w| (Lemma 1), the saddle asymptotes {E = E_sad} in
    yellow and, with ``arrows``, the gradient-flow field -grad L normalized to unit length (Fig. 1 (a), (c)).

    E jumps from +inf to -inf across the invariant line w = 0, so each half plane is contoured separately.
    """
    from .canonical import grad
    from .energy import SADDLE_ENERGY, energy

    if levels is None:
        levels = np.arange(-6.0, 6.01, 0.5) + (SADDLE_ENERGY % 0.5) + 0.25  # levels offset from E_sad
    e = np.linspace(-e_lim, e_lim, n)
    tiny = 1e-3 * (w_lim[1] - w_lim[0])
    for lo, hi in ((w_lim[0], -tiny), (tiny, w_lim[1])):
        if hi <= lo:
            continue
        w = np.linspace(lo, hi, n)
        E, W = np.meshgrid(e, w, indexing="ij")
        ax.contour(e, w, energy(E, W).T, levels=levels, colors=[plotting.NEUTRAL], linewidths=0.6, alpha=0.6,
                   linestyles="solid")
    ax.plot([], [], color=plotting.NEUTRAL, lw=0.6, label="energy contours")
    ws = np.linspace(min(w_lim[0], -1e-9), -1e-9, 4 * n)
    ea = saddle_asymptotes(ws)
    ax.plot(ea, ws, color=plotting.SADDLE, lw=2.0, label=r"saddle asymptotes $E = E_{sad}$")
    ax.plot(-ea, ws, color=plotting.SADDLE, lw=2.0)
    if arrows:
        ea = np.linspace(-e_lim, e_lim, n_arrows)
        wa = np.linspace(w_lim[0], w_lim[1], n_arrows + 1)
        EA, WA = np.meshgrid(ea, wa, indexing="ij")
        ge, gw = grad(EA, WA, p, q)
        norm = np.hypot(ge, gw)
        safe = np.where(norm > 1e-14, norm, 1.0)
        u, v = np.where(norm > 1e-14, -ge / safe, 0.0), np.where(norm > 1e-14, -gw / safe, 0.0)
        ax.quiver(EA, WA, u, v, color="0.35", alpha=0.7, angles="xy", scale=n_arrows * 1.6, width=0.0025)
    ax.set_xlim(-e_lim, e_lim)
    ax.set_ylim(*w_lim)
    ax.grid(False)


def _draw_flow(ax, tr, predicted, reached):
    ax.plot(tr.e, tr.w, color="k", lw=1.6, label="gradient flow (solve_ivp)", zorder=6)
    ax.plot(tr.e[0], tr.w[0], "o", color="k", ms=6, label=r"start $(e_0, w_0)$", zorder=7)
    ax.plot(predicted.e, predicted.w, "*", color=_outcome_colour(predicted.outcome), mec="k", ms=16,
            label=f"predicted limit: {predicted.outcome}", zorder=8)
    ax.plot(tr.e[-1], tr.w[-1], "x", color="k", ms=9, mew=2, label=f"reached: {reached}", zorder=9)


def draw_landscape(p, q, e0, w0, ax=None, t_max=2e4):
    """The loss landscape of Thm 1 with one gradient-flow trajectory (chapter loss_landscape).

    Draws the contours of L(e, w), the critical loci (global minima Gamma*, local minima / maxima on the w-axis,
    the saddle), the flow from (e0, w0) integrated with ``flow.integrate``, the limit predicted by
    ``energy.predict_limit`` and the point reached. Returns {"predicted", "reached", "limit", "reached_point",
    "energy_drift"}.
    """
    import matplotlib.pyplot as plt

    predicted, tr, reached = flow_outcomes(p, q, e0, w0, t_max=t_max)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 6.2))
    e_lim, w_lim = _view(tr, predicted)
    loss_contours(ax, p, q, e_lim=e_lim, w_lim=w_lim)
    critical_points(ax, p, q, e_lim=e_lim, w_lim=w_lim, legend=False)
    _draw_flow(ax, tr, predicted, reached)
    ax.set_title(f"Loss landscape (Thm 1), p={p:.2f}, q={q:.2f}, p+q={p + q:.2f}\n"
                 f"start ({e0:.2f}, {w0:.2f}): predicted {predicted.outcome}, reached {reached}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize=7.5)
    return {"predicted": predicted.outcome, "reached": reached, "limit": (predicted.e, predicted.w),
            "reached_point": (float(tr.e[-1]), float(tr.w[-1])), "energy_drift": tr.energy_drift}


def draw_energy(p, q, e0, w0, ax=None, t_max=None, arrows=True):
    """The conserved energy of Lemma 1 with one gradient-flow trajectory (chapter gradient_flow_energy).

    Draws the energy contours, the saddle asymptotes {E = E_sad}, the critical loci, the flow from (e0, w0), the
    predicted limit (Thm 2 / Thm 8) and the point reached. Returns {"predicted", "reached", "limit",
    "reached_point", "energy0", "energy_drift"} (energy0 and energy_drift are NaN on the invariant line w0 = 0).
    ``t_max=None``: the horizon ``flow.horizon(p, q)`` (2e4 for the chains of Fig. 1, longer for slow chains).
    """
    import matplotlib.pyplot as plt

    from .energy import SADDLE_ENERGY, energy
    from .flow import horizon

    predicted, tr, reached = flow_outcomes(p, q, e0, w0, t_max=horizon(p, q) if t_max is None else t_max)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 6.2))
    e_lim, w_lim = _view(tr, predicted)
    energy_contours(ax, p, q, e_lim=e_lim, w_lim=w_lim, arrows=arrows)
    critical_points(ax, p, q, e_lim=e_lim, w_lim=w_lim, legend=False)
    _draw_flow(ax, tr, predicted, reached)
    E0 = float(energy(e0, w0)) if w0 != 0 else float("nan")
    drift = tr.energy_drift if w0 != 0 else float("nan")
    rule = "p+q=1" if is_iid(p, q) else ("Thm 2" if p + q > 1 else "Thm 8")
    ax.set_title(f"Energy contours (Lemma 1; {rule}), p={p:.2f}, q={q:.2f}\n"
                 f"E0 = {E0:.3f} (E_sad = {SADDLE_ENERGY:.3f}): predicted {predicted.outcome}, reached {reached}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize=7.5)
    return {"predicted": predicted.outcome, "reached": reached, "limit": (predicted.e, predicted.w),
            "reached_point": (float(tr.e[-1]), float(tr.w[-1])), "energy0": E0, "energy_drift": drift}


# --- attention explorer (chapter attention; paper's Sec. 4.1, Figs. 2, 5) ---

def attention_critical_sets(ax, p, q, e_lim=(-2.0, 2.0), w_lim=(-2.0, 2.0), a_lim=(-2.0, 2.0), n=121,
                            n_mesh=7, legend_handles=True):
    """Draw the critical sets of L(e, w, a) (Thm 10) on a 3-D axes with axes (e, w, a).

    The plane e = 0 (loss H(pi)): red where it holds local minima, blue where local maxima (green for p + q = 1);
    the saddle line {e = 0, w = -1/sqrt 2} and the saddle curve Sigma = {w = -1/sqrt 2, a = -1/e^2} (yellow); the
    surface of global minima {c = c*} as green mesh lines of constant a (w = sign(t) sqrt(|t|/2), t = c*/f - 1).
    """
    from .canonical import W_SADDLE, c_star, pre_coefficient_unchecked

    iid = is_iid(p, q)
    lo_c, hi_c = (plotting.LOCAL, plotting.MAXIMA) if p + q > 1 else (plotting.MAXIMA, plotting.LOCAL)
    if iid:
        lo_c = hi_c = plotting.GLOBAL
    A_, W_ = np.meshgrid(np.linspace(*a_lim, 2), np.array([W_SADDLE, w_lim[1]]), indexing="ij")
    if w_lim[1] > W_SADDLE:
        ax.plot_surface(np.zeros_like(A_), W_, A_, color=lo_c, alpha=0.12, linewidth=0, shade=False)
    if w_lim[0] < W_SADDLE:
        W2 = np.array([w_lim[0], W_SADDLE])
        A2, W2 = np.meshgrid(np.linspace(*a_lim, 2), W2, indexing="ij")
        ax.plot_surface(np.zeros_like(A2), W2, A2, color=hi_c, alpha=0.12, linewidth=0, shade=False)
    ax.plot([0, 0], [W_SADDLE, W_SADDLE], list(a_lim), color=plotting.SADDLE, lw=2.2)
    e = np.linspace(*e_lim, 4 * n)
    with np.errstate(divide="ignore"):
        a_sig = np.where(np.abs(e) > 1e-9, -1.0 / (e * e), np.nan)
    a_sig = np.where((a_sig >= a_lim[0]) & (a_sig <= a_lim[1]), a_sig, np.nan)
    ax.plot(e, np.full_like(e, W_SADDLE), a_sig, color=plotting.SADDLE, lw=2.0, ls="--")
    cs = c_star(p, q)
    for a in np.linspace(*a_lim, n_mesh):
        f = pre_coefficient_unchecked(e, a)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = cs / f - 1.0
            w = np.sign(t) * np.sqrt(np.abs(t) / 2)
        w = np.where(np.isfinite(w) & (w >= w_lim[0]) & (w <= w_lim[1]) & (np.abs(f) > 1e-12), w, np.nan)
        ax.plot(e, w, np.full_like(e, a), color=plotting.GLOBAL, lw=0.9, alpha=0.7)
    ax.set_xlim(*e_lim)
    ax.set_ylim(*w_lim)
    ax.set_zlim(*a_lim)
    ax.set_xlabel("e (embedding)")
    ax.set_ylabel("w (feed-forward)")
    ax.set_zlabel("a (attention)")
    if legend_handles:
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        plane = ([Patch(color=plotting.GLOBAL, alpha=0.3, label="plane e = 0 (global minima, p + q = 1)")] if iid else
                 [Patch(color=plotting.LOCAL, alpha=0.3, label="plane e = 0: local minima"),
                  Patch(color=plotting.MAXIMA, alpha=0.3, label="plane e = 0: local maxima")])
        return [Line2D([], [], color=plotting.GLOBAL, lw=0.9, label=r"global minima $\{c = c^*\}$"), *plane,
                Line2D([], [], color=plotting.SADDLE, lw=2.2, label=r"saddle line $e = 0,\ w = -1/\sqrt{2}$"),
                Line2D([], [], color=plotting.SADDLE, lw=2.0, ls="--",
                       label=r"saddle curve $\Sigma$: $w = -1/\sqrt{2},\ a = -1/e^2$")]
    return []


def draw_attention(p, q, e0, w0, a0, ax=None, t_max=None):
    """Gradient flow of L(e, w, a) with the attention scalar, in 3-D (chapter attention; paper's Figs. 2, 5).

    Integrates the flow from (e0, w0, a0) with ``flow.integrate`` (LSODA), names its end point as
    ``flow.integrate_batch`` does ("global_min", "unigram" or "undecided"), and compares it with the outcome that
    ``attention.predict_outcome`` reads off the two invariants (the energy E and the planar label A). Draws the
    critical sets (``attention_critical_sets``) and the trajectory. ``ax`` must be a 3-D axes (created if None).
    ``t_max=None``: the horizon ``flow.horizon(p, q)`` (2e4 for p = q = 0.9, longer for slow chains).

    Returns {"predicted", "reached", "limit" (the reached point (e, w, a)), "predicted_limit" ((0, w_inf, A) for a
    unigram prediction, NaNs for a global one), "energy0", "energy_drift", "A", "reduced_energy"}.
    """
    import matplotlib.pyplot as plt

    from .attention import planar_label, predict_outcome
    from .energy import energy
    from .flow import classify_end, horizon, integrate

    if ax is None:
        fig = plt.figure(figsize=(7.2, 6.4))
        ax = fig.add_subplot(projection="3d")
    elif getattr(ax, "name", "") != "3d":
        raise ValueError("draw_attention needs a 3-D axes (fig.add_subplot(projection='3d')) or ax=None")
    lab = planar_label(e0, a0)
    pred = predict_outcome(e0, w0, a0, p, q, label=lab)
    tr = integrate(e0, w0, p, q, a0=a0, t_max=horizon(p, q) if t_max is None else t_max)
    end = (float(tr.e[-1]), float(tr.w[-1]), float(tr.a[-1]))
    reached = classify_end(*end, p, q)
    E0 = float(energy(e0, w0, a0)) if w0 != 0 else float("nan")
    drift = tr.energy_drift if w0 != 0 else float("nan")
    Et = E0 + 2 * lab.A ** 2 if lab.reaches_axis else float("nan")
    lims = []
    for x, lo in ((tr.e, 2.0), (tr.w, 2.0), (tr.a, 2.0)):
        m = max(lo, 1.1 * float(np.max(np.abs(x))))
        lims.append((-m, m))
    handles = attention_critical_sets(ax, p, q, *lims)
    colour = {"global_min": plotting.GLOBAL, "unigram": plotting.LOCAL}.get(reached, plotting.NEUTRAL)
    ax.plot(tr.e, tr.w, tr.a, color="k", lw=1.8, zorder=6)
    ax.scatter([e0], [w0], [a0], color="k", s=30, depthshade=False)
    ax.scatter([end[0]], [end[1]], [end[2]], color=colour, edgecolor="k", s=90, marker="*", depthshade=False)
    from matplotlib.lines import Line2D

    handles += [Line2D([], [], color="k", lw=1.8, marker="o", ms=4, label=r"flow from $(e_0, w_0, a_0)$"),
                Line2D([], [], color=colour, marker="*", mec="k", ms=11, ls="none", label=f"reached: {reached}")]
    ax.legend(handles=handles, loc="upper left", fontsize=7, bbox_to_anchor=(0.0, 1.0))
    side = "p+q=1" if is_iid(p, q) else ("p+q>1" if p + q > 1 else "p+q<1")
    ax.set_title(f"Flow with attention, p={p:.2f}, q={q:.2f} ({side})\n"
                 f"predicted {pred.outcome}, reached {reached}", fontsize=10)
    return {"predicted": pred.outcome, "reached": reached, "limit": end,
            "predicted_limit": (pred.e, pred.w, pred.a), "energy0": E0, "energy_drift": drift,
            "A": float(lab.A), "reduced_energy": float(Et)}


def frames_agree(results) -> tuple[int, int]:
    """``(agreeing, frames)`` of an explorer's precomputed frames: how many of the outputs of :func:`draw_landscape`,
    :func:`draw_energy` or :func:`draw_attention` (dicts with "reached" and "predicted") end where predicted."""
    results = list(results)
    if any(not isinstance(r, dict) or "reached" not in r or "predicted" not in r for r in results):
        raise ValueError("results must be the outputs of a drawing function, dicts with 'reached' and 'predicted'")
    return sum(r["reached"] == r["predicted"] for r in results), len(results)
