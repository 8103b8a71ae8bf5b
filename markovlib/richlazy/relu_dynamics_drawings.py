"""Part II, Sec. 5 of "Get rich quick" (Kunin et al., NeurIPS 2024): the Fig. 5(a) figures of the chapter
``grq_relu_dynamics``, each returning its figure.

- :func:`fig5a_figure`: the surfaces f(x) of the first seed's XOR runs (``relu_dynamics_steps.xor_runs``) at chosen
  times, coloured by the parity of the active neurons (App. C.1's two-colouring), with the data;
- :func:`partition_curves`: the Hamming distance of the partition and max |f| on the unit circle over time.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from . import relu_networks

NAMES = ("upstream", "balanced", "downstream")


def fig5a_figure(xor, times_shown, title, box=1.0, grid=41):
    """Paper's Fig. 5(a): a 3 x len(times_shown) grid of surfaces f(x) on [-box, box]^2 of the first seed's upstream,
    balanced and downstream runs of ``xor`` at the snapshots closest to ``times_shown``, coloured by the parity of the
    active neurons; the data as dots (blue +1, red -1). Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    times = np.asarray(xor["times"])
    if not len(times_shown) or not box > 0:
        raise ValueError("times_shown must be non-empty and box positive")
    cmap = ListedColormap(["#f0e6d2", "#5b7fa6"])  # even, odd number of active neurons
    shown = [int(np.argmin(np.abs(times - t_))) for t_ in times_shown]
    g1 = np.linspace(-box, box, grid)
    GX, GY = np.meshgrid(g1, g1)
    pts = np.stack([GX.ravel(), GY.ravel()], axis=1)
    xs, ys = xor["tasks"][0]
    fig = plt.figure(figsize=(16, 10))
    for j, nm in enumerate(NAMES):
        for c, ti in enumerate(shown):
            a_, W_ = xor["run"]["a"][ti, 0, j], xor["run"]["W"][ti, 0, j]
            fz = relu_networks.forward(pts, a_, W_).reshape(GX.shape)
            par = (np.sum(relu_networks.activation_pattern(pts, W_), axis=-1) % 2).reshape(GX.shape)
            ax = fig.add_subplot(3, len(shown), len(shown) * j + c + 1, projection="3d", computed_zorder=False)
            ax.plot_surface(GX, GY, fz, facecolors=cmap(par), rstride=1, cstride=1, linewidth=0, antialiased=False,
                            shade=False)
            ax.scatter(xs[:, 0], xs[:, 1], ys, c=np.where(ys > 0, plotting.MAXIMA, plotting.LOCAL), s=8)
            ax.set(zlim=(-1.5, 1.5), xlabel="$x_1$", ylabel="$x_2$", zlabel="$f(x)$")
            ax.view_init(elev=25, azim=-60)
            ax.set_title(f"{nm}, t = {times[ti]:.3f}", fontsize=9)
    fig.suptitle(title)
    return fig


def partition_curves(times, ham, fmax):
    """The Hamming distance of the partition to t = 0 (left) and max |f| on the unit circle (right) over time, every
    seed; ``ham`` and ``fmax`` are (T, S, 3) (upstream, balanced, downstream). Returns the figure."""
    import matplotlib.pyplot as plt

    ham, fmax = np.asarray(ham, dtype=float), np.asarray(fmax, dtype=float)
    if ham.shape != fmax.shape or ham.ndim != 3 or ham.shape[0] != len(times) or ham.shape[2] != 3:
        raise ValueError(f"ham and fmax must be (T, S, 3) with T = len(times), got {ham.shape}, {fmax.shape}")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    cols = [plotting.GLOBAL, plotting.SADDLE, plotting.LOCAL]
    for j, nm in enumerate(NAMES):
        for s_ in range(ham.shape[1]):
            for ax, v in zip(axes, (ham, fmax)):
                ax.plot(times[1:], v[1:, s_, j], color=cols[j], lw=0.8, alpha=0.7, label=nm if s_ == 0 else None)
    for ax, ylab, title in zip(axes, ("Hamming distance to t = 0 (circle)", "max |f| on the unit circle"),
                               ("the partition moves early for rich runs", "the output grows later")):
        ax.set(xscale="log", xlabel="time t (sum of the step sizes)", ylabel=ylab, title=title)
        ax.legend()
    return fig
