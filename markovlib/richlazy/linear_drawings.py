"""Part II: the figures of the chapter grq_wide_deep (Kunin et al., NeurIPS 2024, Sec. 4, Thm B.6, App. B.1): the
singular values of the task-aligned case and the lazy-limit sweep. Each function returns the matplotlib figure.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting


def draw_singular_values(aligned, sv_deltas):
    """Thm B.6, task-aligned case: per delta the singular values of beta(t) from the full flow (circles) over the
    decoupled scalar equations (lines), from :func:`~markovlib.richlazy.linear_steps.aligned_case`."""
    import matplotlib.pyplot as plt

    ts, s_star = aligned["ts"], aligned["s_star"]
    fig, axes = plt.subplots(1, len(sv_deltas), figsize=(4.2 * len(sv_deltas), 3.6), layout="constrained", sharey=True)
    axes = np.atleast_1d(axes)
    colors = plt.cm.viridis(np.linspace(0.1, 0.8, s_star.size))
    for ax, dl in zip(axes, sv_deltas):
        s_flow, ode = aligned["curves"][dl]
        for i in range(s_star.size):
            ax.plot(ts, ode[:, i], color=colors[i], lw=1.5, label=f"theory, $\\sigma^*$ = {s_star[i]:g}")
            ax.plot(ts[::4], s_flow[::4, i], "o", color=colors[i], ms=3.5, mfc="none")
            ax.axhline(s_star[i], color=plotting.NEUTRAL, lw=0.6, ls=":")
        regime = "balanced (rich)" if dl == 0 else ("upstream" if dl > 0 else "downstream")
        ax.set(title=f"$\\delta$ = {dl:g}: {regime}", xlabel="time t")
    axes[0].set_ylabel("singular values $\\sigma_i(\\beta(t))$")
    axes[0].legend(loc="lower right")
    fig.suptitle("Singular values of $\\beta$: decoupled mirror-flow equations (lines) over the full flow (circles)")
    return fig


def draw_lazy_sweep(deltas, sweep, lazy_dims):
    """App. B.1's lazy limits: left S(0, T) over the swept delta (symlog) with |delta|^-4 guides from each end;
    right the kernel distance of K(T) to the two frozen kernels, from ``linear_lazy.lazy_sweep``."""
    import matplotlib.pyplot as plt

    dl_arr, S_T = np.asarray(deltas, dtype=float), np.asarray(sweep["S"])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
    ax.plot(dl_arr, S_T, "o-", color=plotting.NEUTRAL, label="$S(0, T)$, flow at convergence")
    for sgn, col in ((1, plotting.GLOBAL), (-1, plotting.LOCAL)):
        ref = S_T[-1] if sgn > 0 else S_T[0]
        dd = np.geomspace(10, abs(dl_arr[-1] if sgn > 0 else dl_arr[0]), 20)
        ax.plot(sgn * dd, ref * (dd / dd[-1]) ** -4, "--", color=col, lw=1,
                label=f"$|\\delta|^{{-4}}$ ({'upstream' if sgn > 0 else 'downstream'})")
    ax.set(yscale="log", xlabel="$\\delta$ (all neurons)", ylabel="kernel distance $S(0, T)$",
           title=f"Lazy at both ends, rich in between ($d, h, c$ = {', '.join(str(v) for v in lazy_dims)})")
    ax2.plot(dl_arr, np.maximum(sweep["to_plus"], 1e-17), "o-", color=plotting.GLOBAL,
             label="to $\\eta_w XX^\\top \\otimes A_0A_0^\\top$ (upstream limit)")
    ax2.plot(dl_arr, np.maximum(sweep["to_minus"], 1e-17), "s-", color=plotting.LOCAL,
             label="to $\\eta_a XW_0^\\top W_0X^\\top \\otimes I_c$ (downstream limit)")
    ax2.set(yscale="log", xlabel="$\\delta$ (all neurons)", ylabel="kernel distance of $K(T)$",
            title="Which kernel each limit freezes")
    for a in (ax, ax2):
        a.set_xscale("symlog", linthresh=0.1)
        a.legend()
    return fig
