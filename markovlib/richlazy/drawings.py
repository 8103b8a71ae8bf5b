"""Part II's explorer, headless: the minimal model a w^T x at (delta, angle) (Kunin et al., NeurIPS 2024, Sec. 3).

:func:`draw_minimal` sets up the paper's whitened problem in d = 2 (Figs. 2 and 3: X^T X / n = I, beta* = b e_2,
eta_a = eta_w = 1) with beta_0 of norm r_0 at the chosen angle to beta*, initializes as the authors do (a_0 > 0,
a_0 w_0 = beta_0, a_0^2 - ||w_0||^2 = delta), integrates the gradient flow (``minimal_model.single_neuron_flow``) and
draws, in one figure: the trajectory (a, w_1, w_2) on its sheet of the hyperboloid a^2 - ||w||^2 = delta (Fig. 2:
two sheets for delta > 0, the double cone for delta = 0, one sheet for delta < 0); mu(t) = a ||w||,
phi(t) = cos(w, beta*) and the kernel distance S(0, t) (Fig. 3), each from the closed form of App. A.2
(``minimal_exact.exact_parameters``) as a line over the flow's markers. It returns what it displays: the sheet, the
regime that delta fixes at initialization (Sec. 3: upstream lazy, balanced rich, downstream delayed rich), the branch
a > 0 or a < 0 of the minima where the flow ends (App. A.2.5: a crosses zero exactly when c_1 a_0 < 0), S(0, T) and
the largest gap between the closed form and the flow.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from ..numerics import checks
from .minimal_exact import basin_margin, exact_parameters
from .minimal_limits import init_from_product
from .minimal_model import kernel_distance, ntk, single_neuron_flow

DELTA_MAX = 8.0  # |delta| of the explorer's range (the chapter's exact-solution checks cover |delta| <= 8)
ANGLE_MAX = 175.0  # degrees; at 180 (beta_0 antiparallel to beta*) the balanced flow starts on the saddle's surface


def delta_colour(delta, scale):
    """The book's colour of a delta (Figs. 2 to 4): brown downstream, teal upstream (darker for larger |delta| /
    ``scale``, on matplotlib's BrBG map), black balanced."""
    import matplotlib.pyplot as plt

    scale = checks.positive_real("scale", scale)
    if delta == 0:
        return "k"
    return plt.get_cmap("BrBG")(0.5 + np.sign(delta) * (0.2 + 0.3 * abs(delta) / scale))


def sheet_name(delta) -> str:
    """The surface a^2 - ||w||^2 = delta (Fig. 2): "two sheets" (delta > 0), "double cone" (0), "one sheet" (< 0)."""
    return "two sheets" if delta > 0 else ("double cone" if delta == 0 else "one sheet")


def regime_name(delta) -> str:
    """The regime delta fixes at initialization (Sec. 3): upstream lazy, balanced rich, downstream delayed rich."""
    return "upstream, lazy" if delta > 0 else ("balanced, rich" if delta == 0 else "downstream, delayed rich")


def setup(delta, angle, beta_star_norm=1.0, beta0_norm=1.0):
    """(a_0, w_0, beta*) of the explorer: beta* = b e_2, beta_0 = r_0 (-sin angle, cos angle) (angle in degrees; 90
    is the paper's beta_0 = (-1, 0)), and the authors' initialization a_0 > 0, a_0 w_0 = beta_0 with conserved delta."""
    delta = checks.finite_array("delta", delta)
    if delta.size != 1 or not -DELTA_MAX <= float(delta.reshape(())) <= DELTA_MAX:
        raise ValueError(f"delta must be a number in [-{DELTA_MAX:g}, {DELTA_MAX:g}], got {delta!r}")
    angle = checks.finite_array("angle", angle)
    if angle.size != 1 or not 0.0 <= float(angle.reshape(())) <= ANGLE_MAX:
        raise ValueError(f"angle must be a number of degrees in [0, {ANGLE_MAX:g}], got {angle!r}")
    b = checks.positive_real("beta_star_norm", beta_star_norm)
    r0 = checks.positive_real("beta0_norm", beta0_norm)
    if not (0.25 <= b <= 4.0 and 0.25 <= r0 <= 4.0):
        raise ValueError(f"beta_star_norm and beta0_norm must lie in [0.25, 4], got {b!r} and {r0!r}")
    th = np.deg2rad(float(angle.reshape(())))
    beta0 = r0 * np.array([-np.sin(th), np.cos(th)])
    a0, w0 = init_from_product(beta0, float(delta.reshape(())))
    return a0, w0, np.array([0.0, b])


def _sheet(ax, delta, a_lim, r_lim):
    """A wireframe of the sheets of a^2 - ||w||^2 = delta within |a| <= a_lim, ||w|| <= r_lim."""
    th = np.linspace(0, 2 * np.pi, 17)
    if delta >= 0:  # a = +-sqrt(delta + r^2): the two sheets (the cone's two nappes at delta = 0)
        r = np.linspace(0, r_lim, 9)
        R, TH = np.meshgrid(r, th)
        for sgn in (1, -1):
            A = sgn * np.sqrt(delta + R**2)
            A = np.where(np.abs(A) <= a_lim, A, np.nan)
            ax.plot_wireframe(A, R * np.cos(TH), R * np.sin(TH), color="0.75", lw=0.4)
    else:  # ||w|| = sqrt(a^2 - delta): one sheet
        a = np.linspace(-a_lim, a_lim, 11)
        Aa, TH = np.meshgrid(a, th)
        R = np.sqrt(Aa**2 - delta)
        R = np.where(R <= r_lim, R, np.nan)
        ax.plot_wireframe(Aa, R * np.cos(TH), R * np.sin(TH), color="0.75", lw=0.4)


def draw_minimal(delta, angle, fig=None, *, beta_star_norm=1.0, beta0_norm=1.0, T=20.0, n_times=201) -> dict:
    """Draw the minimal model's trajectory on its hyperboloid and mu(t), phi(t), S(0, t) (closed form of App. A.2
    over the integrated flow) for conserved ``delta`` in [-8, 8] and ``angle`` (degrees, [0, 175]) between beta_0
    and beta*; horizon ``T`` in [1, 100] (the paper's 20), ``n_times`` >= 11 time points.

    Returns {"delta", "angle", "cos", "sheet", "regime", "branch": "a > 0" or "a < 0" (sign of the flow's a(T)),
    "crossed": a changed sign along the flow, "c1": the basin margin (App. A.2.5), "S_T": S(0, T) in closed form,
    "gap": max |closed form - flow| over mu, phi and S, "t", "mu", "phi", "S": the closed-form curves,
    "a", "w": the flow}.
    """
    import matplotlib.pyplot as plt

    a0, w0, bstar = setup(delta, angle, beta_star_norm, beta0_norm)
    delta, angle = float(np.asarray(delta, float).reshape(())), float(np.asarray(angle, float).reshape(()))
    T = checks.positive_real("T", T)
    if not 1.0 <= T <= 100.0:
        raise ValueError(f"T must lie in [1, 100], got {T!r}")
    n_times = checks.positive_int("n_times", n_times)
    if n_times < 11:
        raise ValueError(f"n_times must be at least 11, got {n_times!r}")
    b = float(bstar[1])
    t = np.linspace(0.0, T, n_times)
    # the flow: whitened data X = sqrt(2) I (X^T X / 2 = I), y = X beta*
    X = np.sqrt(2.0) * np.eye(2)
    a_f, w_f = single_neuron_flow(a0, w0, X, X @ bstar, t)
    wn_f = np.linalg.norm(w_f, axis=1)
    mu_f, phi_f = a_f * wn_f, w_f[:, 1] / np.where(wn_f > 0, wn_f, 1.0)
    K0 = ntk(X, a_f[0], w_f[0])
    S_f = np.array([kernel_distance(K0, ntk(X, ak, wk)) for ak, wk in zip(a_f, w_f)])
    # the closed form: w(t) = u(t) e_2 + s(t) v_hat with v the part of w_0 orthogonal to beta* (its direction is fixed)
    wn0 = float(np.linalg.norm(w0))
    a_c, u_c, s_c = exact_parameters(t, delta, b, a0 * wn0, w0[1] / wn0)
    v_hat = np.array([np.sign(w0[0]) if w0[0] != 0 else 1.0, 0.0])
    w_c = u_c[:, None] * np.array([0.0, 1.0]) + s_c[:, None] * v_hat
    wn_c = np.hypot(u_c, s_c)
    mu_c, phi_c = a_c * wn_c, u_c / np.where(wn_c > 0, wn_c, 1.0)
    M = a_c[:, None, None] ** 2 * np.eye(2) + w_c[:, :, None] * w_c[:, None, :]
    S_c = np.array([kernel_distance(M[0], Mk) for Mk in M])
    gap = float(max(np.abs(mu_c - mu_f).max(), np.abs(phi_c - phi_f).max(), np.abs(S_c - S_f).max(),
                    np.abs(a_c - a_f).max()))
    branch = "a > 0" if a_f[-1] > 0 else "a < 0"
    crossed = bool(np.any(np.sign(a_f) != np.sign(a_f[0])))
    c1 = float(basin_margin(a0, w0, bstar))

    if fig is None:
        fig = plt.figure(figsize=(9.6, 6.0))
    gs = fig.add_gridspec(2, 3, width_ratios=[1.4, 1, 1], left=0.0, right=0.98, top=0.88, bottom=0.1,
                          wspace=0.38, hspace=0.5)
    ax3 = fig.add_subplot(gs[:, 0], projection="3d")
    lim_a = 1.15 * max(np.abs(a_f).max(), np.sqrt(abs(delta)) + 0.3, 1.0)
    lim_r = 1.15 * max(wn_f.max(), np.sqrt(max(-delta, 0.0)) + 0.3, 1.0)
    _sheet(ax3, delta, lim_a, lim_r)
    col = plotting.GLOBAL if branch == "a > 0" else plotting.LOCAL
    ax3.plot(a_f, w_f[:, 0], w_f[:, 1], color=col, lw=2.2)
    ax3.plot(a_c, w_c[:, 0], w_c[:, 1], "--", color="k", lw=0.9)
    ax3.scatter([a0], [w0[0]], [w0[1]], color="0.3", s=18)
    ax3.scatter([a_f[-1]], [w_f[-1, 0]], [w_f[-1, 1]], color=col, s=30, marker="*")
    for axis, label in zip((ax3.xaxis, ax3.yaxis, ax3.zaxis), ("$a$", "$w_1$", "$w_2$")):
        axis.set_ticklabels([])  # the sheet's shape carries the picture; no tick text (smaller, faster frames)
        axis.set_label_text(label, fontsize=9)
        axis.labelpad = -12
    ax3.set_title(f"{sheet_name(delta)}: $a^2 - \\|w\\|^2 = {delta:g}$", fontsize=9)
    marks = slice(0, None, max(1, (n_times - 1) // 20))
    panels = [(gs[0, 1], mu_f, mu_c, "$\\mu = a\\,\\|w\\|$"), (gs[0, 2], phi_f, phi_c, "$\\phi = \\cos(w, \\beta^*)$"),
              (gs[1, 1:], S_f, S_c, "kernel distance $S(0, t)$")]
    for spec, flow_y, exact_y, label in panels:
        ax = fig.add_subplot(spec)
        ax.plot(t[marks], flow_y[marks], "o", color=col, ms=3.5, label="flow")
        ax.plot(t, exact_y, "-", color="k", lw=1, label="closed form (App. A.2)")
        ax.set_xlabel("$t$", fontsize=8)
        ax.set_ylabel(label, fontsize=8)
        ax.tick_params(labelsize=7)
    ax.set_ylim(-0.02, max(0.3, 1.1 * S_c.max()))
    ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"$\\delta = {delta:g}$, angle$(\\beta_0, \\beta^*) = {angle:g}°$: {regime_name(delta)}; ends on "
                 f"${branch}$" + (" (a crosses 0)" if crossed else "") + f"; $S(0, T) = {S_c[-1]:.2f}$", fontsize=10)
    return {"delta": delta, "angle": angle, "cos": float(np.cos(np.deg2rad(angle))), "sheet": sheet_name(delta),
            "regime": regime_name(delta), "branch": branch, "crossed": crossed, "c1": c1, "S_T": float(S_c[-1]),
            "gap": gap, "t": t, "mu": mu_c, "phi": phi_c, "S": S_c, "a": a_f, "w": w_f}
