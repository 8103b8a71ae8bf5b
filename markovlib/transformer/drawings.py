"""Drawings of Part I's trained weights (reference Sec. 5.1, Figs. 3, 6, 7), imported as ``transformer_drawings``.

- :func:`fraction_panel`: the top-component fraction s_1^2 / sum_i s_i^2 of every matrix along training (Fig. 3).
- :func:`weight_heatmaps`: heatmaps of W_V and W_1^T at snapshots beside the final embedding (Figs. 6, 7).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..book import plotting

FRACTION_MATRICES = ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "positional")
# no green or red: those colours mean minima in this book
_COLOURS = ("tab:blue", "tab:orange", "tab:purple", "tab:brown", "tab:cyan", "tab:pink")


def fraction_panel(ax, track, title, threshold):
    """Draw ``track[m]`` (the top fraction of matrix m) against ``track["step"]`` for the six layer matrices and the
    positional matrix on ``ax``, with the rank-one ``threshold`` as a dash-dotted line."""
    missing = {"step", *FRACTION_MATRICES} - set(track)
    if missing:
        raise ValueError(f"track must hold {sorted(missing)}")
    for k, style, color in zip(FRACTION_MATRICES[:-1], ["-", "--", "-", "--", "-", "--"], _COLOURS):
        ax.plot(track["step"], track[k], style, color=color, lw=1.4, label=k)
    ax.plot(track["step"], track["positional"], ":", color=plotting.NEUTRAL, lw=1.4, label="positional")
    ax.axhline(threshold, color=plotting.NEUTRAL, lw=0.6, ls="-.")
    ax.set_ylim(0, 1.03)
    ax.set_xlabel("iteration")
    ax.set_title(title)
    return ax


def weight_heatmaps(snaps, snap_at, final_step, title):
    """One row each for W_V and W_1^T: the final embedding e (rescaled to the colour range) and the matrix at each
    step of ``snap_at`` (``snaps[step][name]``, arrays). Returns the figure."""
    if final_step not in snaps or any(s not in snaps for s in snap_at):
        raise ValueError("snaps must hold final_step and every step of snap_at")
    fig, axes = plt.subplots(2, len(snap_at) + 1, figsize=(3.0 * (len(snap_at) + 1), 4.6),
                             gridspec_kw={"width_ratios": [0.25] + [1] * len(snap_at)})
    for row, (name, tf) in enumerate((("W_V", lambda W: W), ("W_1", lambda W: W.T))):
        e = snaps[final_step]["embedding"]
        axes[row, 0].imshow(e[:, None] / np.abs(e).max(), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        axes[row, 0].set_title("e (end)", fontsize=9)
        axes[row, 0].set_xticks([])
        axes[row, 0].set_ylabel(name + ("$^\\top$" if name == "W_1" else ""))
        for col, s in enumerate(snap_at, start=1):
            W = tf(snaps[s][name])
            lim = np.abs(W).max()
            axes[row, col].imshow(W, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
            axes[row, col].set_title(f"step {s}, |max| {lim:.1e}", fontsize=9)
            axes[row, col].set_xticks([])
            axes[row, col].set_yticks([])
            axes[row, col].grid(False)
        axes[row, 0].grid(False)
    fig.suptitle(title)
    return fig
