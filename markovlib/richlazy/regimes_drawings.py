"""Part II, Sec. 4 and App. B.1 of "Get rich quick" (Kunin et al., NeurIPS 2024): the figures of the chapter
``grq_regimes``, each returning its figure.

- :func:`sweep_figure`: time to fit and kernel distance over delta, every draw and each cell's median (Sec. 4);
- :func:`plateau_figure`: the loss curves of the narrowing network for delta < 0 (App. B.1.5's plateau);
- :func:`riccati_figure`: the Riccati closed forms against the flow (App. B.1.1, Prop. grq-prop-b-riccati);
- :func:`bernoulli_figure`: the Bernoulli closed form and the (nu, C) system against the flow (Prop.
  grq-prop-b-bernoulli);
- :func:`b14_figure`: App. B.1.4's closed-form t(beta) against the flow.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from . import linear_networks, linear_regimes, regimes_checks, regimes_reference
from .regimes_steps import LABEL


def sweep_figure(results, abs_deltas):
    """The time to fit (left) and the kernel distance at the fit (right) over delta for every cell of
    :func:`regimes_steps.sweep`: each draw thin, the median thick; lazy green, delayed rich red."""
    import matplotlib.pyplot as plt

    if not results or len(abs_deltas) < 2:
        raise ValueError("results must be non-empty and abs_deltas hold at least two values")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
    colors = {"lazy": plotting.GLOBAL, "rich": plotting.LOCAL}
    for ax, key, ylab in ((axes[0], "T", "time to fit $t_\\mathrm{fit}$"),
                          (axes[1], "S", "kernel distance $S(0, t_\\mathrm{fit})$")):
        for name, r in results.items():
            col = colors["lazy" if name.endswith("lazy") else "rich"]
            x = r["sgn"] * np.array(abs_deltas)
            for row in r[key]:
                ax.plot(x, row, "-", color=col, lw=0.5, alpha=0.35)
            ax.plot(x, np.median(r[key], axis=0), ("o" if name.startswith("narrow") else "s") + "-", color=col, lw=2,
                    label=f"{LABEL[name][0]} {tuple(r['shape'])}, {LABEL[name][1]}")
        ax.set(yscale="log", xlabel="$\\delta$ (every neuron)", ylabel=ylab)
        ax.set_xscale("symlog", linthresh=1.0)
    axes[0].legend(fontsize=8)
    axes[0].set_title("Time to fit: falls with $|\\delta|$ when lazy, grows when delayed rich")
    axes[1].set_title("Kernel distance at the fit: to 0 when lazy, levels off when delayed rich")
    return fig


def plateau_figure(shape, t_end, abs_deltas, seed, init_scale, fit_eps):
    """Loss / initial loss of the first draw of the narrowing ``shape`` at delta = -|delta| for each of
    ``abs_deltas`` (``linear_networks.gradient_flow`` to ``t_end``), with the fit threshold ``fit_eps``."""
    import matplotlib.pyplot as plt

    if not t_end > 0:
        raise ValueError(f"t_end must be positive, got {t_end!r}")
    X, Y, init_seed = regimes_checks.draw_problem(shape, seed, 0)
    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    t_grid = np.linspace(0, t_end, 400)
    for m, col in zip(abs_deltas, plt.cm.Reds(np.linspace(0.45, 0.95, len(abs_deltas)))):
        A0, W0, _ = regimes_checks.regime_start(shape, -m, init_seed, init_scale)
        At, Wt = linear_networks.gradient_flow(A0, W0, X, Y, t_grid, rtol=1e-9, atol=1e-12)
        loss = np.array([np.sum((X @ (a @ w).T - Y) ** 2) for a, w in zip(At, Wt)]) / (2 * X.shape[0])
        ax.plot(t_grid, loss / loss[0], color=col, label=f"$\\delta = {-m:g}$")
    ax.axhline(fit_eps, color=plotting.NEUTRAL, ls=":", lw=0.8, label="fit threshold")
    ax.set(yscale="log", xlabel="time $t$", ylabel="loss / initial loss",
           title=f"Narrowing {tuple(shape)}, $\\delta < 0$: the plateau grows with $|\\delta|$")
    ax.legend()
    return fig


def _two_panels(titles, ylabels):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
    for ax, title, ylab in zip(axes, titles, ylabels):
        ax.set(title=title, xlabel="time $t$", ylabel=ylab)
    return fig, axes


def _eigen_lines(ax, tt, dense, t, samples, V, colour, dl, symbol):
    """Two eigenvalue curves (solid, dashed) and their samples along the flow (dots) in the basis V."""
    for j in range(2):
        ax.plot(tt, dense[:, j], color=colour, ls="-" if j == 0 else "--",
                label=f"$\\delta = {dl:g}$, ${symbol}_{j + 1}$")
        ax.plot(t, [V[:, j] @ S @ V[:, j] for S in samples], "o", color=colour, ms=4)


def _entry_lines(ax, t_dense, dense, t, samples, entries, dl, symbol):
    """Entries of a matrix curve (lines) and its samples along the flow (dots)."""
    import matplotlib.pyplot as plt

    for j, (p, q) in enumerate(entries):
        col = plt.cm.plasma(0.2 + 0.3 * j)
        ax.plot(t, samples[:, p, q], "o", ms=4, color=col)
        ax.plot(t_dense, dense[:, p, q], color=col, ls="-" if dl > 0 else "--",
                label=f"$\\delta = {dl:g}$, ${symbol}_{{{p + 1}{q + 1}}}$")


def riccati_figure(ric, P, t, horizon):
    """Left: the eigenvalues n_i(t) of nu for the shared starts of :func:`regimes_steps.riccati_flows`
    (``scalar_riccati``, lines) and the flow (dots); right: entries of nu(t) for the general starts
    (``riccati_linearized``)."""
    import matplotlib.pyplot as plt

    fig, axes = _two_panels(["Shared eigenspace: scalar Riccati closed forms (lines) and the flow (dots)",
                             "General start: the linearization $\\nu = \\dot Z Z^{-1}$ (lines) and the flow (dots)"],
                            ["eigenvalue $n_i(t)$ of $\\nu$", "entries of $\\nu(t)$"])
    tt = np.linspace(0.0, horizon, 200)
    for i, (kind, dl, *_, nus) in enumerate(ric["flows"]):
        if kind == "shared":
            dense = linear_regimes.scalar_riccati(np.diag(P["V"].T @ nus[0] @ P["V"]), P["ev"], dl, tt)
            _eigen_lines(axes[0], tt, dense, t, nus, P["V"], plt.cm.viridis(i / len(ric["flows"])), dl, "n")
        else:
            dense = linear_regimes.riccati_linearized(nus[0], P["Qs"], dl, tt)
            _entry_lines(axes[1], tt, dense, t, nus, ((0, 0), (0, 1), (1, 0)), dl, "\\nu")
    for ax in axes:
        ax.legend(fontsize=7)
    return fig


def bernoulli_figure(shared, along, Qs, t, horizon):
    """Left: the closed-form c_i(t) (:func:`regimes_reference.bernoulli_closed`, lines) for the shared starts of
    :func:`regimes_steps.bernoulli_shared` and the flow (dots); right: the (nu, C) system integrated alone for the
    general flows of :func:`regimes_steps.bernoulli_along`."""
    import matplotlib.pyplot as plt

    fig, axes = _two_panels(["Shared eigenspace: closed-form $c_i(t)$ (lines) and the flow (dots)",
                             "Any start: the $(\\nu, C)$ system integrated alone (lines) and the flow (dots)"],
                            ["eigenvalue $c_i(t)$ of $C = A_p^\\top A_p$", "entries of $C(t)$"])
    tt = np.linspace(0.0, horizon, 200)
    for i, (dl, Cs, c0, n0) in enumerate(shared["shared"]):
        dense = regimes_reference.bernoulli_closed(c0, n0, shared["s_b"] ** 2, dl, tt)
        _eigen_lines(axes[0], tt, dense, t, Cs, shared["V_b"], plt.cm.viridis(i / len(shared["shared"])), dl, "c")
    for dl, tk, Cs, nu0 in along["general"]:
        t_dense = np.linspace(0.0, tk[-1], 100)
        dense = regimes_reference.nu_c_flow(nu0, Cs[0], Qs, dl, t_dense, 1e-12)
        _entry_lines(axes[1], t_dense, dense, tk, Cs, ((0, 0), (0, 1), (1, 1)), dl, "C")
    for ax in axes:
        ax.legend(fontsize=7)
    return fig


def b14_figure(b14, eta_a, eta_w, horizon):
    """App. B.1.4: beta(t) of each run of :func:`regimes_steps.b14_check` (dots) and the closed-form t(beta)
    (``linear_regimes.single_neuron_time``, lines)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    for i, (dl, bs, b0, t_k, beta_k) in enumerate(b14["runs"]):
        col = plt.cm.viridis(i / len(b14["runs"]))
        ax.plot(t_k, beta_k, "o", ms=3, color=col)
        bb = np.linspace(b0, bs - 1e-4 * (bs - b0), 300)
        ax.plot(linear_regimes.single_neuron_time(bb[1:], b0, bs, dl, b14["s_x"], eta_a, eta_w), bb[1:], color=col,
                label=f"$\\delta = {dl:g}$, $\\beta^* = {bs:g}$")
    ax.set(xlim=(0, horizon), xlabel="time $t$", ylabel="$\\beta(t)$",
           title="App. B.1.4, $h = d = c = 1$: closed-form $t(\\beta)$ (lines) and the flow (dots)")
    ax.legend(fontsize=8)
    return fig
